// attnviz core: per-head statistics of an attention map, shown in the layers x heads grid view.
//
// For weights A [n_q, n_k] (rows are softmax distributions). Rows that are all zero (fully
// masked queries) are skipped by every mean; rows_counted says how many rows took part.
//   entropy             mean over rows of H_i = -sum_j A_ij ln A_ij (nats; 0 ln 0 = 0).
//                       0 = every row looks at one key; ln n_k = every row is uniform.
//   entropy_normalized  entropy / ln n_k in [0, 1] (0 when n_k == 1).
//   max_weight          mean over rows of max_j A_ij: how peaked ("how sure") the head is.
//   first_token         mean over rows of A_i0: attention parked on the first token (a "sink").
//   diagonality         mean over rows of sum_{|i-j|<=1} A_ij: mass on and next to the diagonal
//                       (1 for a head that looks at itself or its neighbours).
//   dominant_offset     argmax over o of M(o) = mean over rows of A_{i, i-o}: the diagonal
//                       i - j = o that carries the most mass (0 = self, 1 = previous token,
//                       -1 = next token). Ties go to the smallest |o|, then to the positive o.
//   dominant_offset_mass  M(dominant_offset), in [0, 1].
//
// Stored: a file in the attnviz safetensors layout may carry every head's statistics, written by
// the exporters as a row of kHeadStatsColumns floats (HeadStatsToRow), so a grid of 1024 heads
// sorts before any head is read (docs/FORMATS.md "stats.s.l").
#pragma once
#include <vector>

#include "core/attention.h"
#include "core/status.h"

namespace attnviz {

struct HeadStats {
  float entropy = 0.0f;               // mean row entropy, nats
  float entropy_normalized = 0.0f;    // entropy / ln n_k, in [0, 1]
  float max_weight = 0.0f;            // mean row max weight
  float first_token = 0.0f;           // mean weight on key 0
  float diagonality = 0.0f;           // mean mass within |i - j| <= 1
  int dominant_offset = 0;            // argmax_o of mean mass on the diagonal i - j = o
  float dominant_offset_mass = 0.0f;  // that mean mass
  int rows_counted = 0;               // rows that are not all zero
};

// Statistics of one head's weights [n_q, n_k]. Errors on an empty or non-finite matrix.
Status ComputeHeadStats(const MatrixRM& weights, HeadStats* out);

// The same, a few rows at a time (a 4096 x 4096 head takes tens of ms: a frame computes a part of
// it and the next frames the rest). Add every row once, in any order, then Finish.
class HeadStatsAccumulator {
 public:
  void Begin(int n_q, int n_k);                                 // forgets what was added
  Status AddRows(const MatrixRM& weights, int row0, int row1);  // rows [row0, row1) of the head
  // The same for rows [row0, row1) held on their own: rows points at row row0 ([row1 - row0, n_k]).
  Status AddRowData(const float* rows, int row0, int row1);
  Status Finish(HeadStats* out) const;       // after the last rows
  int rows_added() const { return added_; }  // rows added since Begin

 private:
  int n_q_ = 0, n_k_ = 0, added_ = 0, counted_ = 0;
  std::vector<double> offset_mass_;  // [n_q + n_k - 1] by offset o = i - j, index o + n_k - 1
  // The rows since the last flush, in float (a float add vectorizes 4 wide, a double one 2): added to
  // offset_mass_ every kBlockRows rows, over the indices they touched [block_lo_, block_hi_).
  std::vector<float> block_mass_;
  int block_rows_ = 0, block_lo_ = 0, block_hi_ = 0;
  static constexpr int kBlockRows = 64;
  void FlushBlock();
  double entropy_ = 0, max_weight_ = 0, first_ = 0, diag_ = 0;
};

// A head's statistics as stored: entropy, entropy_normalized, max_weight, first_token, diagonality,
// dominant_offset, dominant_offset_mass, rows_counted (the two counts as exact floats).
constexpr int kHeadStatsColumns = 8;
void HeadStatsToRow(const HeadStats& h, float* row);
// A stored row back, for a head [n_q, n_k]: false (and *out untouched) when it cannot be a head's
// statistics: a value not finite, a negative sum of weights, an offset or a row count not a whole number in
// range. A file from a stranger may hold anything there.
bool HeadStatsFromRow(const float* row, int64_t n_q, int64_t n_k, HeadStats* out);

}  // namespace attnviz
