// tests/core: per-head statistics on maps whose answers are known in closed form.
#include "core/head_stats.h"

#include <gtest/gtest.h>

#include <cmath>

namespace {

using attnviz::HeadStats;
using attnviz::HeadStatsAccumulator;
using attnviz::MatrixRM;

TEST(HeadStats, UniformRows) {
  const int n = 8;
  const MatrixRM w = MatrixRM::Constant(n, n, 1.0f / n);
  HeadStats s;
  ASSERT_TRUE(attnviz::ComputeHeadStats(w, &s).ok);
  std::printf("  uniform 8x8: entropy %.6f (ln 8 = %.6f), normalized %.6f\n", s.entropy, std::log(8.0),
              s.entropy_normalized);
  EXPECT_NEAR(s.entropy, std::log(8.0), 1e-6);
  EXPECT_NEAR(s.entropy_normalized, 1.0, 1e-6);
  EXPECT_NEAR(s.max_weight, 1.0 / n, 1e-7);
  EXPECT_NEAR(s.first_token, 1.0 / n, 1e-7);
  // rows 0 and n-1 have 2 entries within |i-j|<=1, the others 3: (2*2 + 6*3) / 8 / 8
  EXPECT_NEAR(s.diagonality, (2.0 * 2 + 6.0 * 3) / n / n, 1e-6);
  EXPECT_EQ(s.dominant_offset, 0);  // the main diagonal is the longest: ties go to offset 0
  EXPECT_EQ(s.rows_counted, n);
}

TEST(HeadStats, PreviousTokenHead) {
  const int n = 6;
  MatrixRM w = MatrixRM::Zero(n, n);
  w(0, 0) = 1.0f;
  for (int i = 1; i < n; ++i) w(i, i - 1) = 1.0f;  // each token looks at the previous one
  HeadStats s;
  ASSERT_TRUE(attnviz::ComputeHeadStats(w, &s).ok);
  EXPECT_NEAR(s.entropy, 0.0, 1e-7);
  EXPECT_NEAR(s.max_weight, 1.0, 1e-7);
  EXPECT_NEAR(s.diagonality, 1.0, 1e-7);
  EXPECT_NEAR(s.first_token, 2.0 / n, 1e-7);
  EXPECT_EQ(s.dominant_offset, 1);
  EXPECT_NEAR(s.dominant_offset_mass, 5.0 / 6.0, 1e-6);
}

TEST(HeadStats, FirstTokenSinkAndMaskedRows) {
  MatrixRM w = MatrixRM::Zero(4, 5);
  for (int i = 0; i < 3; ++i) {
    w(i, 0) = 0.75f;
    w(i, 4) = 0.25f;
  }
  // row 3 is all zero (fully masked): skipped
  HeadStats s;
  ASSERT_TRUE(attnviz::ComputeHeadStats(w, &s).ok);
  const double h = -(0.75 * std::log(0.75) + 0.25 * std::log(0.25));
  EXPECT_EQ(s.rows_counted, 3);
  EXPECT_NEAR(s.entropy, h, 1e-6);
  EXPECT_NEAR(s.entropy_normalized, h / std::log(5.0), 1e-6);
  EXPECT_NEAR(s.first_token, 0.75, 1e-7);
  EXPECT_NEAR(s.max_weight, 0.75, 1e-7);
  // diagonal mass: row 0 -> w(0,0) = .75, row 1 -> w(1,0) = .75, row 2 -> 0
  EXPECT_NEAR(s.diagonality, 1.5 / 3, 1e-6);
  HeadStats e;
  EXPECT_FALSE(attnviz::ComputeHeadStats(MatrixRM(0, 3), &e).ok);
}

}  // namespace

TEST(HeadStats, RowsAddedInPiecesGiveTheSameStatistics) {
  // What the grid does for a big head over several frames: blocks of rows in any order.
  MatrixRM w(37, 23);
  for (int i = 0; i < 37; ++i) {
    float sum = 0;
    for (int j = 0; j < 23; ++j) sum += w(i, j) = (float)std::exp(std::sin(0.7 * i + 1.3 * j));
    w.row(i) /= sum;
  }
  w.row(5).setZero();  // a masked row
  HeadStats whole, pieces;
  ASSERT_TRUE(ComputeHeadStats(w, &whole).ok);
  HeadStatsAccumulator acc;
  acc.Begin(37, 23);
  for (int r0 : {20, 0, 9, 30}) {
    const int r1 = r0 == 20 ? 30 : r0 == 0 ? 9 : r0 == 9 ? 20 : 37;
    ASSERT_TRUE(acc.AddRows(w, r0, r1).ok);
  }
  EXPECT_EQ(acc.rows_added(), 37);
  ASSERT_TRUE(acc.Finish(&pieces).ok);
  EXPECT_EQ(pieces.rows_counted, 36);
  EXPECT_NEAR(pieces.entropy, whole.entropy, 1e-6f);
  EXPECT_NEAR(pieces.max_weight, whole.max_weight, 1e-6f);
  EXPECT_NEAR(pieces.first_token, whole.first_token, 1e-6f);
  EXPECT_NEAR(pieces.diagonality, whole.diagonality, 1e-6f);
  EXPECT_EQ(pieces.dominant_offset, whole.dominant_offset);
  EXPECT_NEAR(pieces.dominant_offset_mass, whole.dominant_offset_mass, 1e-6f);
  EXPECT_FALSE(acc.AddRows(w, 30, 38).ok);  // outside the head
  w(3, 3) = std::nanf("");
  EXPECT_FALSE(acc.AddRows(w, 0, 9).ok);
}

namespace {

// The entropy's float logarithm against a double one, on rows that span the float range: weights
// from 1e-38 up (below 1e-30 they add nothing), long rows (4096) and every residue of 8 columns.
TEST(HeadStats, EntropyMatchesDoubleReferenceOnWideRangesOfWeights) {
  for (int cols : {1, 7, 9, 513, 4096}) {
    const int rows = 6;
    MatrixRM w(rows, cols);
    uint32_t x = 12345u;
    for (int i = 0; i < rows; ++i) {
      for (int j = 0; j < cols; ++j) {
        x = x * 1664525u + 1013904223u;
        const double u = (x >> 8) / 16777216.0;                           // [0, 1)
        w(i, j) = (float)std::pow(10.0, -38.0 * u * u * (i + 1) / rows);  // 1e-38 .. 1, many magnitudes
      }
      if (i == 2) w.row(i) /= w.row(i).sum();  // one softmax-like row among raw ones
    }
    double ref = 0.0;
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j) {
        const double p = w(i, j);
        if (p > 0) ref -= p * std::log(p);
      }
    ref /= rows;
    HeadStats s;
    ASSERT_TRUE(attnviz::ComputeHeadStats(w, &s).ok);
    EXPECT_NEAR(s.entropy, ref, 2e-6 * std::max(1.0, std::abs(ref))) << "cols " << cols;
    EXPECT_GT(std::abs(ref), 0.0);
  }
}

// A head's statistics stored as a row of floats come back the same; a row that cannot be a head's
// statistics (from a file: anything may be there) is refused.
TEST(HeadStats, StoredRowsComeBackAndImpossibleOnesAreRefused) {
  HeadStats h;
  h.entropy = 1.25f, h.entropy_normalized = 0.5f, h.max_weight = 0.75f, h.first_token = 0.125f;
  h.diagonality = 0.375f, h.dominant_offset = -3, h.dominant_offset_mass = 0.25f, h.rows_counted = 9;
  float row[attnviz::kHeadStatsColumns];
  attnviz::HeadStatsToRow(h, row);
  HeadStats back;
  ASSERT_TRUE(attnviz::HeadStatsFromRow(row, 10, 4, &back));
  EXPECT_EQ(back.entropy, 1.25f);
  EXPECT_EQ(back.entropy_normalized, 0.5f);
  EXPECT_EQ(back.max_weight, 0.75f);
  EXPECT_EQ(back.first_token, 0.125f);
  EXPECT_EQ(back.diagonality, 0.375f);
  EXPECT_EQ(back.dominant_offset, -3);
  EXPECT_EQ(back.dominant_offset_mass, 0.25f);
  EXPECT_EQ(back.rows_counted, 9);
  auto refused = [&](int column, float value, int64_t n_q = 10, int64_t n_k = 4) {
    float bad[attnviz::kHeadStatsColumns];
    std::copy(row, row + attnviz::kHeadStatsColumns, bad);
    bad[column] = value;
    HeadStats out;
    out.rows_counted = -7;
    const bool ok = attnviz::HeadStatsFromRow(bad, n_q, n_k, &out);
    if (!ok) EXPECT_EQ(out.rows_counted, -7) << "written although refused";
    return !ok;
  };
  EXPECT_TRUE(refused(0, NAN));
  EXPECT_TRUE(refused(2, INFINITY));
  EXPECT_TRUE(refused(2, -0.5f));  // a mean of row maxima of weights >= 0
  EXPECT_TRUE(refused(6, -0.1f));  // a mass
  EXPECT_TRUE(refused(5, 1.5f));   // offsets are whole
  EXPECT_TRUE(refused(5, -4.0f));  // i - j >= -(n_k - 1)
  EXPECT_TRUE(refused(5, 10.0f));  // i - j <= n_q - 1
  EXPECT_TRUE(refused(7, 11.0f));  // more rows than the head has
  EXPECT_TRUE(refused(7, 2.5f));
  EXPECT_FALSE(refused(0, -0.5f));  // weights > 1 have a negative entropy
  EXPECT_FALSE(refused(5, 9.0f));
  EXPECT_FALSE(refused(5, -3.0f));
}

// A weight that is not finite, wherever it is (the check goes four weights at a time, then one by
// one): the rows are refused. Denormal and huge finite weights are not.
TEST(HeadStats, ANonFiniteWeightAnywhereIsRefused) {
  for (const float bad : {NAN, INFINITY, -INFINITY}) {
    for (int at : {0, 3, 4, 17, 34}) {  // 5 rows of 7: 35 weights, the last 3 past the groups of four
      MatrixRM w = MatrixRM::Constant(5, 7, 1.0f / 7);
      w.data()[at] = bad;
      HeadStats h;
      EXPECT_FALSE(attnviz::ComputeHeadStats(w, &h).ok) << bad << " at " << at;
      HeadStatsAccumulator acc;
      acc.Begin(5, 7);
      EXPECT_FALSE(acc.AddRowData(w.data() + at / 7 * 7, at / 7, at / 7 + 1).ok) << bad << " at " << at;
    }
  }
  MatrixRM w = MatrixRM::Constant(5, 7, 1.0f / 7);
  w(0, 0) = 1e-40f, w(4, 6) = 3e38f;
  HeadStats h;
  EXPECT_TRUE(attnviz::ComputeHeadStats(w, &h).ok);
}

}  // namespace
