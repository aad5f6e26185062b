// tests/core: every fast kernel against its reference twin on awkward shapes
// (n = 1, 3, 17, 255, 1000; d = 1, 5, 64, 129), and the vectorized exp's error bound.
// The same sources run natively (GCC vector extensions) and in WASM (SIMD128) via
// attnviz_add_test, so both fast paths are checked, on the same inputs (the project's Rng).
#include "core/kernels.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/attention.h"
#include "reference_reader.h"

namespace {

namespace k = attnviz::kernels;
using attnviz::MatrixRM;
using attnviz_test::AllClose;
using attnviz_test::RandomMatrix;
using attnviz_test::Rng;  // the project's generator: the same inputs natively and in WASM

const int kSizes[] = {1, 3, 17, 255, 1000};
const int kDims[] = {1, 5, 64, 129};

std::vector<float> Random(size_t n, Rng* rng, float lo = -1.0f, float hi = 1.0f) {
  return attnviz_test::RandomValues(n, rng, lo, hi);
}

MatrixRM AsMatrix(const std::vector<float>& v, int rows, int cols) {
  return Eigen::Map<const MatrixRM>(v.data(), rows, cols);
}

TEST(Kernels, ReportIsa) {
  std::printf("  fast kernels: %s, panel width %d\n", k::KernelIsa(), k::PanelWidth());
  EXPECT_GT(k::PanelWidth(), 0);
}

// C = alpha A B^T and C = alpha A B, fast vs reference (double accumulation).
void CheckGemm(int m, int n, int kk, Rng* rng, k::Workspace* ws, attnviz_test::ErrorLog* log) {
  const auto a = Random((size_t)m * kk, rng), bt = Random((size_t)n * kk, rng), b = Random((size_t)kk * n, rng);
  std::vector<float> c_fast((size_t)m * n, 7.0f), c_ref((size_t)m * n);
  const float alpha = 0.37f;
  // entries are sums of kk products of values in [-1, 1]: float error grows ~ kk * eps
  const double atol = 2e-7 * kk + 1e-7;
  const std::string shape = std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(kk);
  k::GemmNT(m, n, kk, alpha, a.data(), kk, bt.data(), kk, c_fast.data(), n, ws);
  k::GemmNTRef(m, n, kk, alpha, a.data(), kk, bt.data(), kk, c_ref.data(), n);
  EXPECT_TRUE(AllClose(AsMatrix(c_fast, m, n), AsMatrix(c_ref, m, n), atol, 1e-6, "GemmNT " + shape, log,
                       "GemmNT (C = alpha A B^T)"));
  k::GemmNN(m, n, kk, alpha, a.data(), kk, b.data(), n, c_fast.data(), n, ws);
  k::GemmNNRef(m, n, kk, alpha, a.data(), kk, b.data(), n, c_ref.data(), n);
  EXPECT_TRUE(AllClose(AsMatrix(c_fast, m, n), AsMatrix(c_ref, m, n), atol, 1e-6, "GemmNN " + shape, log,
                       "GemmNN (C = alpha A B)"));
}

TEST(Kernels, GemmFastMatchesReferenceOnAwkwardShapes) {
  Rng rng(7);
  k::Workspace ws;  // reused across every shape: grows, never shrinks
  attnviz_test::ErrorLog log;
  for (int n : kSizes)
    for (int d : kDims) CheckGemm(n, n, d, &rng, &ws, &log);
  // rectangular, and k beyond one k-block (accumulating blocks)
  CheckGemm(17, 255, 129, &rng, &ws, &log);
  CheckGemm(1000, 3, 64, &rng, &ws, &log);
  CheckGemm(3, 1000, 5, &rng, &ws, &log);
  CheckGemm(33, 45, 300, &rng, &ws, &log);
  CheckGemm(7, 9, 1000, &rng, &ws, &log);
  CheckGemm(5, 6, 0, &rng, &ws, &log);  // k = 0: C = 0
  log.Print("fast GEMM vs reference, n in {1,3,17,255,1000} x d in {1,5,64,129} + rectangular:");
}

// SoftmaxRowsLog2's reference: SoftmaxRowsRef's steps with 2^x for e^x, accumulated in double.
int SoftmaxRowsLog2Ref(float* x, int rows, int cols, float scale, float* row_max, float* row_sum) {
  int dead = 0;
  for (int i = 0; i < rows; ++i) {
    float* r = x + (size_t)i * cols;
    float m = -std::numeric_limits<float>::infinity();
    for (int j = 0; j < cols; ++j) m = std::max(m, scale * r[j]);
    if (m == -std::numeric_limits<float>::infinity()) {
      std::fill(r, r + cols, 0.0f);
      row_max[i] = row_sum[i] = 0.0f;
      ++dead;
      continue;
    }
    double sum = 0.0;
    std::vector<double> e(cols);
    for (int j = 0; j < cols; ++j) sum += e[j] = std::exp2((double)(scale * r[j] - m));
    for (int j = 0; j < cols; ++j) r[j] = (float)(e[j] / sum);
    row_max[i] = m;
    row_sum[i] = (float)sum;
  }
  return dead;
}

TEST(Kernels, SoftmaxFastMatchesReference) {
  Rng rng(11);
  const float ninf = -std::numeric_limits<float>::infinity();
  attnviz_test::ErrorLog log;
  for (int rows : {1, 3, 17, 255})
    for (int cols : kSizes)
      for (float scale : {1.0f, 0.37f}) {
        auto x = Random((size_t)rows * cols, &rng, -30.0f, 30.0f);
        for (float& v : x)
          if (rng.Chance(0.2f)) v = ninf;            // masked entries
        for (int j = 0; j < cols; ++j) x[j] = ninf;  // row 0 fully masked
        if (rows > 2) x[(size_t)2 * cols] = 1e4f;    // a huge score
        for (bool log2 : {false, true}) {            // SoftmaxRows, then SoftmaxRowsLog2 (scores in log2 units)
          std::vector<float> fast = x, ref = x, max_f(rows), sum_f(rows), max_r(rows), sum_r(rows);
          const int dead_f = log2 ? k::SoftmaxRowsLog2(fast.data(), rows, cols, cols, scale, max_f.data(), sum_f.data())
                                  : k::SoftmaxRows(fast.data(), rows, cols, cols, scale, max_f.data(), sum_f.data());
          const int dead_r = log2 ? SoftmaxRowsLog2Ref(ref.data(), rows, cols, scale, max_r.data(), sum_r.data())
                                  : k::SoftmaxRowsRef(ref.data(), rows, cols, cols, scale, max_r.data(), sum_r.data());
          EXPECT_EQ(dead_f, dead_r);
          EXPECT_GE(dead_f, 1);
          const std::string shape = std::to_string(rows) + "x" + std::to_string(cols) + " scale " +
                                    std::to_string(scale) + (log2 ? " log2" : "");
          EXPECT_TRUE(AllClose(AsMatrix(fast, rows, cols), AsMatrix(ref, rows, cols), 1e-7, 2e-6, "softmax " + shape,
                               &log, "softmax weights"));
          EXPECT_TRUE(AllClose(AsMatrix(sum_f, 1, rows), AsMatrix(sum_r, 1, rows), 1e-6, 2e-6,
                               "softmax row sums " + shape, &log, "softmax row sums"));
          EXPECT_TRUE(AllClose(AsMatrix(max_f, 1, rows), AsMatrix(max_r, 1, rows), 0, 0, "softmax row max " + shape,
                               &log, "softmax row max"));
          for (float v : fast) ASSERT_FALSE(std::isnan(v));
        }
      }
  log.Print("fast softmax (natural and log2) vs reference (rows {1,3,17,255} x cols {1,3,17,255,1000}, -inf entries):");
}

TEST(Kernels, SoftmaxWeightsErrorWithinDocumentedBound) {
  // Rows of 64: a 0 (the row max) and 63 scores swept down to weights of 1e-30 (natural units:
  // [-69, 0]; log2 units: [-99.6, 0]), 2^14 rows; each weight against exp / sum (exp2) in double,
  // for every tile variant (the AVX and relaxed-SIMD ones bring their own softmax, all on the
  // shorter exp and the 2^x of kernels_exp.h), SoftmaxRows and SoftmaxRowsLog2 both.
  const int cols = 64, rows = 1 << 14;
  for (bool log2 : {false, true}) {
    const double lowest = log2 ? -99.6 : -69.0;
    std::vector<float> x((size_t)rows * cols);
    std::vector<double> want(x.size());
    for (int i = 0; i < rows; ++i) {
      float* r = &x[(size_t)i * cols];
      r[0] = 0.0f;
      for (int j = 1; j < cols; ++j)
        r[j] = (float)(lowest * (double)((size_t)i * (cols - 1) + j - 1) / (double)((size_t)rows * (cols - 1)));
      double sum = 0.0;
      for (int j = 0; j < cols; ++j) sum += log2 ? std::exp2((double)r[j]) : std::exp((double)r[j]);
      for (int j = 0; j < cols; ++j)
        want[(size_t)i * cols + j] = (log2 ? std::exp2((double)r[j]) : std::exp((double)r[j])) / sum;
    }
    for (int v = 0; v < k::TileVariantCount(); ++v) {
      k::ForceTile(v);
      std::vector<float> w = x;
      if (log2)
        k::SoftmaxRowsLog2(w.data(), rows, cols, cols, 1.0f, nullptr, nullptr);
      else
        k::SoftmaxRows(w.data(), rows, cols, cols, 1.0f, nullptr, nullptr);
      double worst_rel = 0.0, worst_abs = 0.0;
      float worst_x = 0.0f;
      for (size_t e = 0; e < w.size(); ++e) {
        const double err = std::abs(w[e] - want[e]);
        worst_abs = std::max(worst_abs, err);
        if (err / want[e] > worst_rel) {
          worst_rel = err / want[e];
          worst_x = x[e];
        }
      }
      std::printf("  %s %s %s weights: max relative error %.3g at x = %.4f (bound %.1g), max absolute %.3g\n",
                  k::TileVariantAt(v).isa, k::TileVariantAt(v).tile, log2 ? "SoftmaxRowsLog2" : "SoftmaxRows",
                  worst_rel, worst_x, k::kSoftmaxMaxRelError, worst_abs);
      EXPECT_LE(worst_rel, k::kSoftmaxMaxRelError) << k::TileVariantAt(v).isa << " " << k::TileVariantAt(v).tile;
    }
  }
  k::ForceTile(-1);
}

// SoftmaxRowsLog2Unshifted: no max pass, scores anywhere in [-64, 64] (log2 units). Each row's top
// score t sweeps [-64, 64] and its other 63 sweep down from t by up to 99.6 (weights to 1e-30),
// never below -64; each weight against exp2 / sum in double, for every tile variant.
TEST(Kernels, UnshiftedSoftmaxWeightsErrorWithinDocumentedBound) {
  const int cols = 64, rows = 1 << 12;
  const double lim = k::kUnshiftedLog2Limit;
  std::vector<float> x((size_t)rows * cols);
  std::vector<double> want(x.size());
  for (int i = 0; i < rows; ++i) {
    float* r = &x[(size_t)i * cols];
    const double top = -lim + 2.0 * lim * i / (rows - 1);
    const double lowest = std::max(top - 99.6, -lim);
    r[0] = (float)top;
    for (int j = 1; j < cols; ++j) r[j] = (float)(top + (lowest - top) * (j - 1) / (cols - 2));
    double sum = 0.0;
    for (int j = 0; j < cols; ++j) sum += std::exp2((double)r[j]);
    for (int j = 0; j < cols; ++j) want[(size_t)i * cols + j] = std::exp2((double)r[j]) / sum;
  }
  for (int v = 0; v < k::TileVariantCount(); ++v) {
    k::ForceTile(v);
    std::vector<float> w = x, row_max(rows, 7.0f), row_sum(rows);
    EXPECT_EQ(k::SoftmaxRowsLog2Unshifted(w.data(), rows, cols, cols, 1.0f, row_max.data(), row_sum.data()), 0);
    double worst_rel = 0.0;
    for (size_t e = 0; e < w.size(); ++e) worst_rel = std::max(worst_rel, std::abs(w[e] - want[e]) / want[e]);
    std::printf("  %s %s SoftmaxRowsLog2Unshifted weights: max relative error %.3g (bound %.1g)\n",
                k::TileVariantAt(v).isa, k::TileVariantAt(v).tile, worst_rel, k::kSoftmaxMaxRelError);
    EXPECT_LE(worst_rel, k::kSoftmaxMaxRelError) << k::TileVariantAt(v).isa << " " << k::TileVariantAt(v).tile;
    for (int i = 0; i < rows; ++i) {
      ASSERT_EQ(row_max[i], 0.0f);  // the shift it used
      double sum = 0.0;
      for (int j = 0; j < cols; ++j) sum += std::exp2((double)x[(size_t)i * cols + j]);
      ASSERT_NEAR(row_sum[i], sum, 2e-6 * sum) << i;
    }
  }
  k::ForceTile(-1);
}

TEST(Kernels, ExpRelativeErrorWithinDocumentedBound) {
  // dense sweep of [-87.3, 88]; both the vector kernel and its scalar twin
  const int n = 1 << 21;
  std::vector<float> x(n), y(n);
  for (int i = 0; i < n; ++i) x[i] = -87.3f + (88.0f + 87.3f) * (float)i / (float)(n - 1);
  k::ExpFast(x.data(), y.data(), n);
  double worst = 0.0, worst_scalar = 0.0;
  float worst_x = 0.0f;
  for (int i = 0; i < n; ++i) {
    const double want = std::exp((double)x[i]);
    const double rel = std::abs(y[i] - want) / want;
    if (rel > worst) {
      worst = rel;
      worst_x = x[i];
    }
    worst_scalar = std::max(worst_scalar, std::abs(k::ExpScalar(x[i]) - want) / want);
  }
  std::printf("  ExpFast max relative error %.3g at x = %.4f (scalar twin %.3g), documented bound %.1g\n", worst,
              worst_x, worst_scalar, k::kExpMaxRelError);
  EXPECT_LE(worst, k::kExpMaxRelError);
  EXPECT_LE(worst_scalar, k::kExpMaxRelError);
  // the edges: -inf and deep underflow give exactly 0; 0 gives 1
  float edge[9] = {
      -std::numeric_limits<float>::infinity(), -1000.0f, -87.7f, 0.0f, -0.0f, 1.0f, -1e-30f, 88.0f, -87.5f};
  float out[9];
  k::ExpFast(edge, out, 9);
  EXPECT_EQ(out[0], 0.0f);
  EXPECT_EQ(out[1], 0.0f);
  EXPECT_EQ(out[2], 0.0f);
  EXPECT_LT(out[8], 1.2e-38f);  // below the smallest normal: tiny, never garbage
  EXPECT_GE(out[8], 0.0f);
  EXPECT_EQ(k::ExpScalar(-std::numeric_limits<float>::infinity()), 0.0f);
  EXPECT_TRUE(std::isnan(k::ExpScalar(std::nanf(""))));
  EXPECT_EQ(out[3], 1.0f);
  EXPECT_EQ(out[4], 1.0f);
  EXPECT_NEAR(out[5], std::exp(1.0), 3e-7 * std::exp(1.0));
  EXPECT_EQ(out[6], 1.0f);
  EXPECT_TRUE(std::isfinite(out[7]));
}

// Large scores that float32 holds exactly (seed 002's dot products 927, 397, 148, 929) keep the
// natural-base softmax, whose weights are then as exact as the reference's; small ones go through
// the base-2 one (AttentionForwardMatchesReference covers those).
TEST(Kernels, AttentionForwardKeepsLargeExactScoresExact) {
  const std::vector<float> q = {1.0f}, kk = {927.0f, 397.0f, 148.0f, 929.0f}, v = {1.0f, 2.0f, 3.0f, 4.0f};
  std::vector<float> w_fast(4), w_ref(4), o_fast(1), o_ref(1);
  k::Workspace ws;
  k::AttentionForward(q.data(), kk.data(), v.data(), 1, 4, 1, 1, 1.0f, w_fast.data(), o_fast.data(), &ws);
  k::AttentionForwardRef(q.data(), kk.data(), v.data(), 1, 4, 1, 1, 1.0f, w_ref.data(), o_ref.data());
  const double e2 = std::exp(-2.0), want_last = 1.0 / (1.0 + e2), want_first = e2 / (1.0 + e2);  // 0.88, 0.12
  for (int j = 0; j < 4; ++j) EXPECT_NEAR(w_fast[j], w_ref[j], 1e-7) << j;
  EXPECT_NEAR(w_fast[3], want_last, 2e-7);
  EXPECT_NEAR(w_fast[0], want_first, 2e-7);
  EXPECT_NEAR(o_fast[0], o_ref[0], 1e-6);
}

TEST(Kernels, AttentionForwardMatchesReference) {
  Rng rng(5);
  k::Workspace ws;
  attnviz_test::ErrorLog log;
  for (int n : kSizes)
    for (int d : kDims) {
      const auto q = Random((size_t)n * d, &rng), kk = Random((size_t)n * d, &rng), v = Random((size_t)n * d, &rng);
      std::vector<float> w_fast((size_t)n * n), o_fast((size_t)n * d), w_ref((size_t)n * n), o_ref((size_t)n * d);
      const float scale = 1.0f / std::sqrt((float)d);
      k::AttentionForward(q.data(), kk.data(), v.data(), n, n, d, d, scale, w_fast.data(), o_fast.data(), &ws);
      k::AttentionForwardRef(q.data(), kk.data(), v.data(), n, n, d, d, scale, w_ref.data(), o_ref.data());
      const std::string shape = "n=" + std::to_string(n) + " d=" + std::to_string(d);
      EXPECT_TRUE(AllClose(AsMatrix(w_fast, n, n), AsMatrix(w_ref, n, n), 1e-6, 1e-5, "attention weights " + shape,
                           &log, "weights"));
      EXPECT_TRUE(AllClose(AsMatrix(o_fast, n, d), AsMatrix(o_ref, n, d), 2e-6, 1e-5, "attention output " + shape, &log,
                           "output"));
      // the packed panels on cache lines, however often the workspace grew
      EXPECT_EQ(reinterpret_cast<uintptr_t>(ws.packed_b.data()) % 64, 0u) << shape;
      EXPECT_EQ(reinterpret_cast<uintptr_t>(ws.packed_v.data()) % 64, 0u) << shape;
    }
  // n_q != n_k, d_v != d, and no weights buffer (workspace scratch)
  const int n_q = 17, n_k = 255, d = 5, d_v = 129;
  const auto q = Random((size_t)n_q * d, &rng), kk = Random((size_t)n_k * d, &rng), v = Random((size_t)n_k * d_v, &rng);
  std::vector<float> o_fast((size_t)n_q * d_v), w_ref((size_t)n_q * n_k), o_ref((size_t)n_q * d_v);
  k::AttentionForward(q.data(), kk.data(), v.data(), n_q, n_k, d, d_v, 0.5f, nullptr, o_fast.data(), &ws);
  k::AttentionForwardRef(q.data(), kk.data(), v.data(), n_q, n_k, d, d_v, 0.5f, w_ref.data(), o_ref.data());
  EXPECT_TRUE(AllClose(AsMatrix(o_fast, n_q, d_v), AsMatrix(o_ref, n_q, d_v), 2e-6, 1e-5,
                       "attention 17x255, d=5, d_v=129", &log, "output"));
  log.Print("AttentionForward fast vs reference, n in {1,3,17,255,1000} x d in {1,5,64,129}:");
}

// One tile variant for a whole comparison: a re-probe in between (every 5 s, sooner under load) may
// pick another ISA, whose products round otherwise (SIMD128 mul + add against relaxed FMA).
struct SameTile {
  SameTile() { k::ForceTile(std::max(0, k::LastProbe().selected)); }
  ~SameTile() { k::ForceTile(-1); }
};

// A forced query-row block (bench/peers/row_block.mjs A/Bs them) gives the default's weights and
// output bit for bit: rows are independent, and here every block takes the same softmax path (the
// unshifted one: small scores; the path is chosen per block, from a bound on its rows).
TEST(Kernels, AttentionForwardIsTheSameForEveryRowBlock) {
  const SameTile same_tile;
  Rng rng(23);
  const int n_q = 300, n_k = 257, d = 64;
  const auto q = Random((size_t)n_q * d, &rng), kk = Random((size_t)n_k * d, &rng), v = Random((size_t)n_k * d, &rng);
  k::Workspace ws;
  std::vector<float> w0((size_t)n_q * n_k), o0((size_t)n_q * d);
  k::AttentionForward(q.data(), kk.data(), v.data(), n_q, n_k, d, d, 0.125f, w0.data(), o0.data(), &ws);
  for (int rows : {1, 7, 64, 128, 512}) {
    std::vector<float> w((size_t)n_q * n_k, -1.0f), o((size_t)n_q * d, -1.0f);
    k::SetAttentionBlockRows(rows);
    k::AttentionForward(q.data(), kk.data(), v.data(), n_q, n_k, d, d, 0.125f, w.data(), o.data(), &ws);
    k::SetAttentionBlockRows(0);
    EXPECT_TRUE(w == w0) << "weights, block of " << rows << " rows";
    EXPECT_TRUE(o == o0) << "output, block of " << rows << " rows";
  }
}

// The row block's chooser: the build's rule until one is timed, then the two alternately, kTrials
// timed calls each; the faster one is kept (untimed) until kRetimeSeconds later, then both again.
// The times are the caller's (no clock is read); kRetimeSeconds counts from the call that kept a rule.
TEST(Kernels, RowBlockChooserKeepsTheFasterRuleAndTimesAgainLater) {
  const double now = 100.0;
  for (int fallback : {0, 1}) {
    k::RowBlockChooser chooser(fallback);
    bool timed = false;
    EXPECT_EQ(chooser.Pick(5, now, &timed), fallback) << "the build's rule first";
    EXPECT_TRUE(timed);
    EXPECT_EQ(chooser.Chosen(5), -1);
    const double per_score[2] = {fallback == 0 ? 2e-9 : 1e-9, fallback == 0 ? 1e-9 : 2e-9};  // the other rule faster
    int used[2] = {0, 0};
    for (int call = 0; call < 2 * k::RowBlockChooser::kTrials; ++call) {
      const int rule = chooser.Pick(5, now + call, &timed);
      ASSERT_TRUE(timed) << "call " << call;
      ++used[rule];
      chooser.Record(5, rule, per_score[rule] * (call < 2 ? 3.0 : 1.0), now + call);  // first calls slow: best counts
    }
    const double kept_at = now + 2 * k::RowBlockChooser::kTrials - 1;  // the last Record's time
    EXPECT_EQ(used[0], k::RowBlockChooser::kTrials);
    EXPECT_EQ(used[1], k::RowBlockChooser::kTrials);
    EXPECT_EQ(chooser.Chosen(5), 1 - fallback) << "the faster rule";
    EXPECT_EQ(chooser.Chosen(6), -1) << "classes are apart";
    EXPECT_EQ(chooser.Pick(5, kept_at + k::RowBlockChooser::kRetimeSeconds - 0.01, &timed), 1 - fallback);
    EXPECT_FALSE(timed) << "kept, not timed";
    EXPECT_EQ(chooser.Pick(5, kept_at + k::RowBlockChooser::kRetimeSeconds, &timed), fallback);
    EXPECT_TRUE(timed) << "timed again after kRetimeSeconds";
    EXPECT_EQ(chooser.Chosen(5), -1);
  }
}

// AttentionForward times its row block on calls big enough: after a class's first 2 x kTrials such
// calls a rule is kept, and every call's weights and output are the same bit for bit.
TEST(Kernels, AttentionForwardChoosesItsRowBlockByTiming) {
  k::ProbeTiles(true);  // the clock's tick measured on the real clock (a test before may have left 100 us)
  const SameTile same_tile;
  Rng rng(29);
  const int n_q = 40, n_k = 3000, d = 64;  // 120000 scores: timed; rules of 10 and 256 rows
  const auto q = Random((size_t)n_q * d, &rng), kk = Random((size_t)n_k * d, &rng), v = Random((size_t)n_k * d, &rng);
  k::Workspace ws;
  std::vector<float> w0((size_t)n_q * n_k), o0((size_t)n_q * d);
  k::AttentionForwardRef(q.data(), kk.data(), v.data(), n_q, n_k, d, d, 0.125f, w0.data(), o0.data());
  std::vector<float> w1, o1;
  EXPECT_EQ(k::AttentionBlockRule(n_k), -1) << "no call of this class yet";
  for (int call = 0; call < 4 * k::RowBlockChooser::kTrials && k::AttentionBlockRule(n_k) < 0; ++call) {
    std::vector<float> w((size_t)n_q * n_k), o((size_t)n_q * d);
    k::AttentionForward(q.data(), kk.data(), v.data(), n_q, n_k, d, d, 0.125f, w.data(), o.data(), &ws);
    if (call == 0) w1 = w, o1 = o;
    EXPECT_TRUE(w == w1 && o == o1) << "call " << call << ": the same as the first, whichever block";
    float err = 0;
    for (size_t i = 0; i < o.size(); ++i) err = std::max(err, std::fabs(o[i] - o0[i]));
    EXPECT_LT(err, 1e-5f) << "call " << call;
  }
  EXPECT_GE(k::AttentionBlockRule(n_k), 0) << "a rule kept";
}

// AttentionForward drops the softmax's max pass when Cauchy-Schwarz bounds a block's scores within
// +-64 in log2 units. Small scores take that path (the weights then differ in their last bits from
// the shifted softmax's, both within the reference's tolerance); larger ones (scale 2: bounds past 64)
// keep the shifted path, bit for bit the same with the switch on or off.
TEST(Kernels, AttentionForwardUnshiftedSoftmaxWhenScoresAreBounded) {
  Rng rng(17);
  const int n = 1000, d = 64;
  const auto q = Random((size_t)n * d, &rng), kk = Random((size_t)n * d, &rng), v = Random((size_t)n * d, &rng);
  k::Workspace ws;
  for (float scale : {0.125f, 2.0f}) {
    std::vector<float> w_on((size_t)n * n), o_on((size_t)n * d), w_off((size_t)n * n), o_off((size_t)n * d);
    std::vector<float> w_ref((size_t)n * n), o_ref((size_t)n * d);
    k::SetUnshiftedSoftmax(true);
    k::AttentionForward(q.data(), kk.data(), v.data(), n, n, d, d, scale, w_on.data(), o_on.data(), &ws);
    k::SetUnshiftedSoftmax(false);
    k::AttentionForward(q.data(), kk.data(), v.data(), n, n, d, d, scale, w_off.data(), o_off.data(), &ws);
    k::SetUnshiftedSoftmax(true);
    k::AttentionForwardRef(q.data(), kk.data(), v.data(), n, n, d, d, scale, w_ref.data(), o_ref.data());
    const std::string tag = "scale " + std::to_string(scale);
    const double loose = scale < 1.0f ? 1.0 : 10.0;  // scores 16x larger: float rounds them 16x coarser
    for (const auto* w : {&w_on, &w_off})
      EXPECT_TRUE(AllClose(AsMatrix(*w, n, n), AsMatrix(w_ref, n, n), 1e-6 * loose, 1e-5, "weights " + tag));
    for (const auto* o : {&o_on, &o_off})
      EXPECT_TRUE(AllClose(AsMatrix(*o, n, d), AsMatrix(o_ref, n, d), 2e-6 * loose, 1e-5, "output " + tag));
    size_t differ = 0;
    for (size_t e = 0; e < w_on.size(); ++e) differ += w_on[e] != w_off[e];
    std::printf("  scale %g: %zu of %zu weights differ between the unshifted and shifted softmax\n", scale, differ,
                w_on.size());
    if (scale < 1.0f)
      EXPECT_GT(differ, w_on.size() / 10) << "the unshifted softmax was not taken";
    else
      EXPECT_EQ(differ, 0u) << "large scores must keep the shifted softmax";
  }
}

// Attend() takes the fast path for unmasked dot / scaled dot; with keep_intermediates it
// takes the step-by-step path. Both must agree.
TEST(Kernels, AttendFastPathAgreesWithStepPath) {
  Rng rng(13);
  const MatrixRM q = RandomMatrix(255, 64, &rng), kk = RandomMatrix(300, 64, &rng), v = RandomMatrix(300, 17, &rng);
  for (auto f : {attnviz::ScoreFunction::Dot, attnviz::ScoreFunction::ScaledDot}) {
    attnviz::AttentionParams p;
    p.score = f;
    p.temperature = 0.7f;
    attnviz::AttentionResult fast, steps;
    ASSERT_TRUE(attnviz::Attend(q, kk, v, p, &fast).ok);
    p.keep_intermediates = true;
    ASSERT_TRUE(attnviz::Attend(q, kk, v, p, &steps).ok);
    const std::string name = attnviz::ScoreFunctionName(f);
    EXPECT_TRUE(AllClose(fast.weights, steps.weights, 1e-6, 1e-4, "Attend fast vs steps weights " + name));
    EXPECT_TRUE(AllClose(fast.output, steps.output, 1e-5, 1e-4, "Attend fast vs steps output " + name));
  }
}

}  // namespace
