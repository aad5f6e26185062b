// attnviz core: per-head statistics (definitions in head_stats.h).
#include "core/head_stats.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace attnviz {

Status ComputeHeadStats(const MatrixRM& w, HeadStats* out) {
  *out = HeadStats{};
  if (w.rows() == 0 || w.cols() == 0) return Status::Error("head stats need a non-empty weights matrix");
  HeadStatsAccumulator acc;
  acc.Begin((int)w.rows(), (int)w.cols());
  const Status st = acc.AddRows(w, 0, (int)w.rows());
  return st ? acc.Finish(out) : st;
}

void HeadStatsAccumulator::Begin(int n_q, int n_k) {
  n_q_ = n_q, n_k_ = n_k, added_ = counted_ = 0;
  entropy_ = max_weight_ = first_ = diag_ = 0.0;
  offset_mass_.assign((size_t)std::max(0, n_q + n_k - 1), 0.0);
  block_mass_.assign(offset_mass_.size(), 0.0f);
  block_rows_ = 0, block_lo_ = (int)offset_mass_.size(), block_hi_ = 0;
}

namespace {

// Four floats as one value (GCC and clang vector extensions: SSE2 natively, SIMD128 in WASM).
typedef float F4 __attribute__((vector_size(16)));
typedef int32_t I4 __attribute__((vector_size(16)));

// ln x in four lanes, for normal floats x > 0, branch-free (Cephes logf: the mantissa in
// [sqrt(1/2), sqrt(2)), a degree-8 polynomial, ln 2 in two parts; ~1 ulp). std::log in double made
// the statistics 14 ns a weight in WASM: a grid of 144 heads of 512 x 512 took 0.5 s.
inline F4 LogPositive4(F4 x) {
  I4 b = (I4)x + (0x3f800000 - 0x3f3504f3);                   // the exponent of x / sqrt(1/2), rounded down
  const F4 e = __builtin_convertvector((b >> 23) - 127, F4);  // b > 0: the shift is logical
  b = (b & 0x007fffff) + 0x3f3504f3;                          // the mantissa, in [sqrt(1/2), sqrt(2))
  const F4 f = (F4)b - 1.0f, z = f * f;
  F4 y = 7.0376836292e-2f * f - 1.1514610310e-1f;
  y = y * f + 1.1676998740e-1f;
  y = y * f - 1.2420140846e-1f;
  y = y * f + 1.4249322787e-1f;
  y = y * f - 1.6668057665e-1f;
  y = y * f + 2.0000714765e-1f;
  y = y * f - 2.4999993993e-1f;
  y = y * f + 3.3333331174e-1f;
  y = y * f * z - 2.12194440e-4f * e - 0.5f * z;
  return f + y + 0.693359375f * e;
}

// The per-lane sums of RowSums over four lanes.
inline void AddLanes(F4 x, F4* h, F4* m, F4* a) {
  const I4 live = x > 1e-30f;                                             // weights below add nothing that shows
  const F4 safe = (F4)(((I4)x & live) | ((I4)(F4{1, 1, 1, 1}) & ~live));  // ln 1 = 0 where not live
  *h += (F4)((I4)x & live) * LogPositive4(safe);
  const I4 more = x > *m;
  *m = (F4)(((I4)x & more) | ((I4)*m & ~more));
  *a += (F4)((I4)x & 0x7fffffff);
}

// No NaN or infinity among n floats: an exponent of all ones, found four at a time (Eigen's
// allFinite, (x - x) == 0 a weight with a branch, took a fifth of the statistics' time natively).
bool AllFinite(const float* p, size_t n) {
  const I4 exponent = {0x7f800000, 0x7f800000, 0x7f800000, 0x7f800000};
  I4 any = {};
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    I4 b;
    std::memcpy(&b, p + i, sizeof(b));
    any |= (b & exponent) == exponent;
  }
  bool bad = any[0] | any[1] | any[2] | any[3];
  for (; i < n; ++i) bad |= !std::isfinite(p[i]);
  return !bad;
}

// One row's entropy -sum p ln p (over p > 0; weights below 1e-30 add nothing that shows), its
// largest weight and the sum of |p|, in eight float lanes (a row of 4096 loses ~1e-6 of its
// entropy). Written with vector types: GCC left the scalar lanes unvectorized (7.7 ns a weight, against
// ~1 here), so a native grid's statistics, and a pooled head's, cost 8x what they do in WASM.
void RowSums(const float* p, int n, double* entropy, float* mx, float* abs_total) {
  constexpr int kLanes = 8;
  F4 h0 = {}, h1 = {}, m0 = {}, m1 = {}, a0 = {}, a1 = {};
  int j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    F4 x0, x1;
    std::memcpy(&x0, p + j, sizeof(x0));
    std::memcpy(&x1, p + j + 4, sizeof(x1));
    AddLanes(x0, &h0, &m0, &a0);
    AddLanes(x1, &h1, &m1, &a1);
  }
  if (j < n) {  // the last n % 8 weights in lanes 0.., zeros after them (which add nothing: m >= 0)
    float tail[kLanes] = {};
    std::memcpy(tail, p + j, (size_t)(n - j) * sizeof(float));
    F4 x0, x1;
    std::memcpy(&x0, tail, sizeof(x0));
    std::memcpy(&x1, tail + 4, sizeof(x1));
    AddLanes(x0, &h0, &m0, &a0);
    AddLanes(x1, &h1, &m1, &a1);
  }
  float h[kLanes], m[kLanes], a[kLanes];
  std::memcpy(h, &h0, 16), std::memcpy(h + 4, &h1, 16);
  std::memcpy(m, &m0, 16), std::memcpy(m + 4, &m1, 16);
  std::memcpy(a, &a0, 16), std::memcpy(a + 4, &a1, 16);
  double hs = 0.0;
  float ms = 0.0f, as = 0.0f;
  for (int k = 0; k < kLanes; ++k) {
    hs += h[k];
    ms = std::max(ms, m[k]);
    as += a[k];
  }
  *entropy = -hs;
  *mx = ms;
  *abs_total = as;
}

}  // namespace

Status HeadStatsAccumulator::AddRows(const MatrixRM& w, int row0, int row1) {
  if (w.rows() != n_q_ || w.cols() != n_k_ || row0 < 0 || row1 > n_q_)
    return Status::Error("head stats: rows outside the head");
  return AddRowData(w.data() + (size_t)std::max(0, row0) * (size_t)n_k_, row0, row1);
}

Status HeadStatsAccumulator::AddRowData(const float* rows, int row0, int row1) {
  if (row0 < 0 || row1 > n_q_ || row1 < row0) return Status::Error("head stats: rows outside the head");
  const int n_k = n_k_;
  const size_t count = (size_t)(row1 - row0) * (size_t)n_k;
  if (!AllFinite(rows, count)) return Status::Error("head stats: weights contain NaN or infinity");
  for (int i = row0; i < row1; ++i) {
    const float* p = rows + (size_t)(i - row0) * (size_t)n_k;
    double h;
    float mx, total;
    RowSums(p, n_k, &h, &mx, &total);
    if (total == 0.0f) continue;  // fully masked query
    ++counted_;
    // Offset i - j at index i - j + n_k - 1 = i + t for t = n_k - 1 - j: forward in the sums, the row read
    // backwards (3x faster natively than a double add per weight at a decreasing index).
    float* mass = block_mass_.data() + i;
    const float* back = p + (n_k - 1);
    for (int t = 0; t < n_k; ++t) mass[t] += back[-t];
    block_lo_ = std::min(block_lo_, i), block_hi_ = std::max(block_hi_, i + n_k);
    if (++block_rows_ == kBlockRows) FlushBlock();
    double near = 0.0;
    for (int j = std::max(0, i - 1); j <= std::min(n_k - 1, i + 1); ++j) near += p[j];
    entropy_ += h;
    max_weight_ += std::max(0.0f, mx);
    first_ += p[0];
    diag_ += near;
  }
  added_ += row1 - row0;
  return Status::Ok();
}

void HeadStatsAccumulator::FlushBlock() {
  for (int idx = block_lo_; idx < block_hi_; ++idx) {
    offset_mass_[(size_t)idx] += block_mass_[(size_t)idx];
    block_mass_[(size_t)idx] = 0.0f;
  }
  block_rows_ = 0, block_lo_ = (int)offset_mass_.size(), block_hi_ = 0;
}

Status HeadStatsAccumulator::Finish(HeadStats* out) const {
  *out = HeadStats{};
  if (n_q_ == 0 || n_k_ == 0) return Status::Error("head stats need a non-empty weights matrix");
  const int rows = counted_, n_k = n_k_;
  out->rows_counted = rows;
  if (rows == 0) return Status::Ok();
  out->entropy = (float)(entropy_ / rows);
  out->entropy_normalized = n_k > 1 ? (float)(entropy_ / rows / std::log((double)n_k)) : 0.0f;
  out->max_weight = (float)(max_weight_ / rows);
  out->first_token = (float)(first_ / rows);
  out->diagonality = (float)(diag_ / rows);
  int best = 0;
  double best_mass = -1.0;
  for (int idx = 0; idx < (int)offset_mass_.size(); ++idx) {
    const int o = idx - (n_k - 1);
    const double m = offset_mass_[(size_t)idx] + (double)block_mass_[(size_t)idx];  // with the rows not flushed
    const bool better =
        m > best_mass + 1e-12 || (std::abs(m - best_mass) <= 1e-12 &&
                                  (std::abs(o) < std::abs(best) || (std::abs(o) == std::abs(best) && o > best)));
    if (better) {
      best = o;
      best_mass = m;
    }
  }
  out->dominant_offset = best;
  out->dominant_offset_mass = (float)(best_mass / rows);
  return Status::Ok();
}

void HeadStatsToRow(const HeadStats& h, float* row) {
  const float v[kHeadStatsColumns] = {
      h.entropy,     h.entropy_normalized,     h.max_weight,           h.first_token,
      h.diagonality, (float)h.dominant_offset, h.dominant_offset_mass, (float)h.rows_counted};
  std::memcpy(row, v, sizeof(v));
}

bool HeadStatsFromRow(const float* row, int64_t n_q, int64_t n_k, HeadStats* out) {
  for (int c = 0; c < kHeadStatsColumns; ++c) {
    // Sums of weights >= 0 (the readers make the others 0) are >= 0; an entropy is < 0 for weights > 1.
    const bool signed_value = c == 0 || c == 1 || c == 5;
    if (!std::isfinite(row[c]) || (!signed_value && row[c] < 0.0f)) return false;
  }
  const float offset = row[5], rows = row[7];
  if (offset != std::floor(offset) || offset < -(float)(n_k - 1) || offset > (float)(n_q - 1)) return false;
  if (rows != std::floor(rows) || rows > (float)n_q) return false;
  HeadStats h;
  h.entropy = row[0];
  h.entropy_normalized = row[1];
  h.max_weight = row[2];
  h.first_token = row[3];
  h.diagonality = row[4];
  h.dominant_offset = (int)offset;
  h.dominant_offset_mass = row[6];
  h.rows_counted = (int)rows;
  *out = h;
  return true;
}

}  // namespace attnviz
