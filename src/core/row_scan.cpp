#include "core/row_scan.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace attnviz {

namespace {

// One row: the maximum of the bits of the weights that are finite (at least 0: bits of +0.0), and
// how many are not. No branch per weight, so it vectorizes (SSE/AVX natively, WASM SIMD on the web).
inline int32_t RowMaxBits(const float* p, int cols, int32_t* bad) {
  int32_t mx = 0, nonfinite = 0;
  for (int c = 0; c < cols; ++c) {
    int32_t b;
    std::memcpy(&b, p + c, 4);
    const int32_t inf = (b & 0x7f800000) == 0x7f800000;  // NaN or infinity, either sign
    nonfinite += inf;
    mx = std::max(mx, inf ? 0 : b);
  }
  *bad |= nonfinite != 0;
  return mx;
}

}  // namespace

bool ScanRows(const float* data, int rows, int cols, float* row_max) {
  int32_t bad = 0;
  for (int r = 0; r < rows; ++r) {
    const int32_t bits = RowMaxBits(data + (size_t)r * (size_t)cols, cols, &bad);
    std::memcpy(&row_max[r], &bits, 4);
  }
  return bad == 0;
}

bool FiniteRange(const float* data, size_t n, float* lo, float* hi) {
  float a = INFINITY, b = -INFINITY;
  for (size_t i = 0; i < n; ++i)
    if (std::isfinite(data[i])) a = std::min(a, data[i]), b = std::max(b, data[i]);
  if (!(a <= b)) return false;
  *lo = a, *hi = b;
  return true;
}

}  // namespace attnviz
