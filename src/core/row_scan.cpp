#include "core/row_scan.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "core/half.h"

namespace attnviz {

namespace {

// One row: the maximum of the bits of the weights that are finite (at least 0: bits of +0.0), and
// how many are not; *abs_bits gets the largest bits of a finite |w|. No branch per weight, so it
// vectorizes (SSE/AVX natively, WASM SIMD on the web).
inline int32_t RowMaxBits(const float* p, int cols, int32_t* bad, int32_t* abs_bits) {
  int32_t mx = 0, amx = 0, nonfinite = 0;
  for (int c = 0; c < cols; ++c) {
    int32_t b;
    std::memcpy(&b, p + c, 4);
    const int32_t inf = (b & 0x7f800000) == 0x7f800000;  // NaN or infinity, either sign
    nonfinite += inf;
    mx = std::max(mx, inf ? 0 : b);
    amx = std::max(amx, inf ? 0 : b & 0x7fffffff);
  }
  *bad |= nonfinite != 0;
  *abs_bits = amx;
  return mx;
}

}  // namespace

bool ScanRows(const float* data, int rows, int cols, float* row_max) {
  int32_t bad = 0;
  for (int r = 0; r < rows; ++r) {
    int32_t abs_bits;
    const int32_t bits = RowMaxBits(data + (size_t)r * (size_t)cols, cols, &bad, &abs_bits);
    std::memcpy(&row_max[r], &bits, 4);
  }
  return bad == 0;
}

bool RowsToHalves(const float* data, int rows, int cols, float* rows_out, uint16_t* dst) {
  int32_t bad = 0;
  for (int r = 0; r < rows; ++r) {
    const float* row = data + (size_t)r * (size_t)cols;
    int32_t abs_bits = 0;
    const int32_t bits = RowMaxBits(row, cols, &bad, &abs_bits);
    float abs_max;
    std::memcpy(&rows_out[2 * (size_t)r], &bits, 4);
    std::memcpy(&abs_max, &abs_bits, 4);
    const float scale = PowerOfTwoAtLeast(abs_max);
    rows_out[2 * (size_t)r + 1] = scale;
    FloatsToHalves(row, (size_t)cols, 1.0f / scale, dst + (size_t)r * (size_t)cols);  // exact: a power of two
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
