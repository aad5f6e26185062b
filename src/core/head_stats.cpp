// attnviz core: per-head statistics (definitions in head_stats.h).
#include "core/head_stats.h"

#include <cmath>
#include <cstdlib>
#include <vector>

namespace attnviz {

Status ComputeHeadStats(const MatrixRM& w, HeadStats* out) {
  *out = HeadStats{};
  const int n_q = (int)w.rows(), n_k = (int)w.cols();
  if (n_q == 0 || n_k == 0) return Status::Error("head stats need a non-empty weights matrix");
  if (!w.allFinite()) return Status::Error("head stats: weights contain NaN or infinity");
  // offset o = i - j ranges over [-(n_k - 1), n_q - 1]; index o + (n_k - 1)
  std::vector<double> offset_mass((size_t)n_q + n_k - 1, 0.0);
  double entropy = 0.0, max_weight = 0.0, first = 0.0, diag = 0.0;
  int rows = 0;
  for (int i = 0; i < n_q; ++i) {
    double row_total = 0.0;
    for (int j = 0; j < n_k; ++j) row_total += std::abs(w(i, j));
    if (row_total == 0.0) continue;  // fully masked query
    ++rows;
    double h = 0.0, mx = 0.0, near = 0.0;
    for (int j = 0; j < n_k; ++j) {
      const double p = w(i, j);
      if (p > 0.0) h -= p * std::log(p);
      if (p > mx) mx = p;
      if (std::abs(i - j) <= 1) near += p;
      offset_mass[(size_t)(i - j + n_k - 1)] += p;
    }
    entropy += h;
    max_weight += mx;
    first += w(i, 0);
    diag += near;
  }
  out->rows_counted = rows;
  if (rows == 0) return Status::Ok();
  out->entropy = (float)(entropy / rows);
  out->entropy_normalized = n_k > 1 ? (float)(entropy / rows / std::log((double)n_k)) : 0.0f;
  out->max_weight = (float)(max_weight / rows);
  out->first_token = (float)(first / rows);
  out->diagonality = (float)(diag / rows);
  int best = 0;
  double best_mass = -1.0;
  for (int idx = 0; idx < (int)offset_mass.size(); ++idx) {
    const int o = idx - (n_k - 1);
    const double m = offset_mass[(size_t)idx];
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
