// seq2seq: the training products (gemm.h) against their double-accumulating references, on the
// shapes the models use and on odd ones (row and column tails, k = 0, leading dimensions > cols).
#include "core/seq2seq/gemm.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "core/seq2seq/rng.h"

namespace attnviz {
namespace seq2seq {
namespace {

std::vector<float> Random(Rng* rng, int count) {
  std::vector<float> v(count);
  for (float& x : v) x = static_cast<float>(rng->Symmetric(1.0));
  return v;
}

// Largest |got - want| over sqrt(k), the typical size of the float rounding of a sum of k products
// of unit-range values (the references sum in double).
float LargestError(const std::vector<float>& got, const std::vector<float>& want, int k) {
  float worst = 0;
  for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::fabs(got[i] - want[i]));
  return worst / std::sqrt(static_cast<float>(std::max(1, k)));
}

struct Shape {
  int m, n, k;
};

TEST(Seq2SeqGemm, MatchesTheReferenceOnModelAndOddShapes) {
  // Output layer [T*B, 192] x [192, 594], GRU steps [4, 64] x [64, 192], tails of every kind.
  const Shape shapes[] = {{40, 594, 192}, {4, 192, 64}, {4, 144, 48}, {48, 144, 32}, {1, 1, 1},   {3, 7, 5},
                          {5, 9, 1},      {7, 17, 33},  {2, 8, 0},    {0, 5, 3},     {13, 3, 64}, {6, 16, 2}};
  Rng rng;
  rng.Seed(5);
  float worst = 0;
  for (const Shape& s : shapes) {
    const int pad = 3;  // leading dimensions larger than the logical widths
    const int lda = s.k + pad, ldb = s.n + pad, ldc = s.n + pad, ldt = s.m + pad, ldbt = s.k + pad;
    const std::vector<float> a = Random(&rng, std::max(1, s.m * lda)), b = Random(&rng, std::max(1, s.k * ldb));
    const std::vector<float> at = Random(&rng, std::max(1, s.k * ldt)), bt = Random(&rng, std::max(1, s.n * ldbt));
    const std::vector<float> c0 = Random(&rng, std::max(1, s.m * ldc));
    for (int accumulate = 0; accumulate < 2; ++accumulate) {
      std::vector<float> got = c0, want = c0;
      MatMulNN(s.m, s.n, s.k, a.data(), lda, b.data(), ldb, got.data(), ldc, accumulate != 0);
      MatMulNNRef(s.m, s.n, s.k, a.data(), lda, b.data(), ldb, want.data(), ldc, accumulate != 0);
      const float e = LargestError(got, want, s.k);
      EXPECT_LE(e, 4e-6f) << "NN m=" << s.m << " n=" << s.n << " k=" << s.k << " accumulate=" << accumulate;
      worst = std::max(worst, e);
    }
    std::vector<float> got = c0, want = c0;
    MatMulTN(s.m, s.n, s.k, at.data(), ldt, b.data(), ldb, got.data(), ldc);
    MatMulTNRef(s.m, s.n, s.k, at.data(), ldt, b.data(), ldb, want.data(), ldc);
    float e = LargestError(got, want, s.k);
    EXPECT_LE(e, 4e-6f) << "TN m=" << s.m << " n=" << s.n << " k=" << s.k;
    worst = std::max(worst, e);
    got = want = c0;
    MatMulNT(s.m, s.n, s.k, a.data(), lda, bt.data(), ldbt, got.data(), ldc);
    MatMulNTRef(s.m, s.n, s.k, a.data(), lda, bt.data(), ldbt, want.data(), ldc);
    e = LargestError(got, want, s.k);
    EXPECT_LE(e, 4e-6f) << "NT m=" << s.m << " n=" << s.n << " k=" << s.k;
    worst = std::max(worst, e);
    // Entries past each row's n columns (the leading-dimension padding) are never written.
    for (int i = 0; i < s.m; ++i)
      for (int j = s.n; j < ldc; ++j) ASSERT_EQ(got[i * ldc + j], c0[i * ldc + j]) << "padding written";
  }
  std::printf("largest error / sqrt(k) against the double references: %.2e (bound 4e-6)\n", worst);
}

TEST(Seq2SeqGemm, AnEntryDoesNotDependOnItsTile) {
  // The same row of A times the same B gives bitwise the same row of C whether it is computed in a
  // 4-row tile, alone, or among the column tail: each entry's sum over k runs the same way everywhere.
  Rng rng;
  rng.Seed(9);
  const int m = 7, n = 21, k = 37;
  const std::vector<float> a = Random(&rng, m * k), b = Random(&rng, k * n);
  std::vector<float> all(m * n);
  MatMulNN(m, n, k, a.data(), k, b.data(), n, all.data(), n, false);
  for (int i = 0; i < m; ++i) {
    std::vector<float> row(n), narrow(1);
    MatMulNN(1, n, k, a.data() + i * k, k, b.data(), n, row.data(), n, false);
    for (int j = 0; j < n; ++j) {
      ASSERT_EQ(row[j], all[i * n + j]) << "row " << i << " col " << j;
      MatMulNN(1, 1, k, a.data() + i * k, k, b.data() + j, n, narrow.data(), 1, false);
      ASSERT_EQ(narrow[0], all[i * n + j]) << "row " << i << " col " << j << " as a 1 x 1 product";
    }
  }
  // The same for C += A B^T (B [n, k]): a 4 x 2 dot-product tile, a row alone, an entry alone.
  const std::vector<float> bt = Random(&rng, n * k);
  std::vector<float> nt(m * n, 0.0f);
  MatMulNT(m, n, k, a.data(), k, bt.data(), k, nt.data(), n);
  for (int i = 0; i < m; ++i) {
    std::vector<float> row(n, 0.0f);
    MatMulNT(1, n, k, a.data() + i * k, k, bt.data(), k, row.data(), n);
    for (int j = 0; j < n; ++j) {
      ASSERT_EQ(row[j], nt[i * n + j]) << "A B^T row " << i << " col " << j;
      float one = 0.0f;
      MatMulNT(1, 1, k, a.data() + i * k, k, bt.data() + j * k, k, &one, 1);
      ASSERT_EQ(one, nt[i * n + j]) << "A B^T row " << i << " col " << j << " as a 1 x 1 product";
    }
  }
}

TEST(Seq2SeqGemm, TanhMatchesLibmWithinItsBound) {
  std::vector<float> x;
  for (float v = -12.0f; v <= 12.0f; v += 0.00137f) x.push_back(v);
  for (float v : {0.0f, -0.0f, 1e-30f, -1e-8f, 0.0199999f, 0.02f, -0.0200001f, 9.0f, 50.0f, -1e30f}) x.push_back(v);
  std::vector<float> y = x;
  TanhInPlace(y.data(), static_cast<int>(y.size()));
  double worst = 0;
  float worst_x = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double want = std::tanh(static_cast<double>(x[i]));
    const double err = std::fabs(y[i] - want) / std::max(std::fabs(want), 1e-30);
    if (err > worst) worst = err, worst_x = x[i];
    ASSERT_LE(std::fabs(y[i]), 1.0f) << x[i];
  }
  std::printf("tanh: largest relative error %.2e at x = %g over %zu values (bound 4e-6)\n", worst, worst_x, x.size());
  EXPECT_LE(worst, 4e-6);
}

}  // namespace
}  // namespace seq2seq
}  // namespace attnviz
