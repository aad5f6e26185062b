// attnviz core: per-head statistics (definitions in head_stats.h).
#include "core/head_stats.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
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
}

Status HeadStatsAccumulator::AddRows(const MatrixRM& w, int row0, int row1) {
  if (w.rows() != n_q_ || w.cols() != n_k_ || row0 < 0 || row1 > n_q_)
    return Status::Error("head stats: rows outside the head");
  if (!w.middleRows(row0, row1 - row0).allFinite()) return Status::Error("head stats: weights contain NaN or infinity");
  const int n_k = n_k_;
  for (int i = row0; i < row1; ++i) {
    double row_total = 0.0;
    for (int j = 0; j < n_k; ++j) row_total += std::abs(w(i, j));
    if (row_total == 0.0) continue;  // fully masked query
    ++counted_;
    double h = 0.0, mx = 0.0, near = 0.0;
    for (int j = 0; j < n_k; ++j) {
      const double p = w(i, j);
      if (p > 0.0) h -= p * std::log(p);
      if (p > mx) mx = p;
      if (std::abs(i - j) <= 1) near += p;
      offset_mass_[(size_t)(i - j + n_k - 1)] += p;
    }
    entropy_ += h;
    max_weight_ += mx;
    first_ += w(i, 0);
    diag_ += near;
  }
  added_ += row1 - row0;
  return Status::Ok();
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
    const double m = offset_mass_[(size_t)idx];
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

}  // namespace attnviz
