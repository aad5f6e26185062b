// Per-head statistics for the grid view: entropy, max weight, attention to the first token and
// diagonality. (Computed here until the core offers them; Eigen only, no ImGui.)
#include <algorithm>
#include <cmath>

#include "app/views_extra.h"

namespace attnviz {

const char* GridSortName(GridSort k) {
  switch (k) {
    case GridSort::Layer: return "layer";
    case GridSort::Entropy: return "entropy";
    case GridSort::MaxWeight: return "max_weight";
    case GridSort::FirstToken: return "first_token";
    case GridSort::Diagonality: return "diagonality";
    default: return "?";
  }
}

// weights: [n_q, n_k]. Rows whose weights sum to ~0 (fully masked) do not count.
HeadStats ComputeHeadStats(const MatrixRM& weights) {
  HeadStats hs;
  const int rows = (int)weights.rows(), cols = (int)weights.cols();
  if (rows == 0 || cols == 0) return hs;
  // Mass on each diagonal, offset o = col - row in [-(rows - 1), cols - 1]. Reused across calls
  // (stats are recomputed only when a map changes, never per frame).
  static std::vector<double> diag;
  diag.assign((size_t)(rows + cols - 1), 0.0);
  double entropy = 0, max_w = 0, first = 0;
  int used = 0;
  for (int i = 0; i < rows; ++i) {
    double sum = 0, h = 0, mx = 0;
    for (int j = 0; j < cols; ++j) {
      const double w = weights(i, j);
      if (!(w > 0)) continue;  // also skips NaN
      sum += w;
      h -= w * std::log(w);
      mx = std::max(mx, w);
      diag[(size_t)(j - i + rows - 1)] += w;
    }
    if (sum < 1e-6) continue;
    ++used;
    entropy += h;
    max_w += mx;
    first += std::max(0.0f, weights(i, 0));
  }
  if (used == 0) return hs;
  hs.entropy = (float)(entropy / used);
  hs.entropy_norm = cols > 1 ? (float)(entropy / used / std::log((double)cols)) : 0.0f;
  hs.max_weight = (float)(max_w / used);
  hs.first_token = (float)(first / used);
  int best = 0;
  for (int o = 1; o < (int)diag.size(); ++o)
    if (diag[(size_t)o] > diag[(size_t)best]) best = o;
  hs.diagonal_offset = best - (rows - 1);
  hs.diagonality = (float)(diag[(size_t)best] / used);
  return hs;
}

}  // namespace attnviz
