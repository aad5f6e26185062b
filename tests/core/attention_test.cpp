// tests/core: Attend(), Scores(), SoftmaxRows() and MultiHeadAttention() against the worked
// examples of the seeds and numpy reference data (tests/reference/make_reference.py).
#include "core/attention.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

#include "reference_reader.h"

namespace {

using attnviz::AttentionParams;
using attnviz::AttentionResult;
using attnviz::MatrixRM;
using attnviz::ScoreFunction;
using attnviz::Status;
using attnviz::VectorF;
using attnviz_test::AllClose;
using attnviz_test::RandomMatrix;
using attnviz_test::RefCase;
using attnviz_test::Rng;
using attnviz_test::RowOf;

const float kInf = std::numeric_limits<float>::infinity();

const std::vector<RefCase>& Cases() {
  static std::vector<RefCase> cases = [] {
    std::string error;
    auto c = attnviz_test::LoadReferenceCases(attnviz_test::ReferencePath("attention_cases.txt"), &error);
    if (!error.empty()) std::printf("reference data: %s\n", error.c_str());
    return c;
  }();
  return cases;
}

const RefCase* FindCase(const std::string& name) {
  for (const RefCase& c : Cases())
    if (c.name == name) return &c;
  return nullptr;
}

VectorF Vec(const MatrixRM& row) {
  return Eigen::Map<const VectorF>(row.data(), row.size());
}

AttentionParams ParamsFrom(const RefCase& c) {
  AttentionParams p;
  EXPECT_TRUE(attnviz::ParseScoreFunction(c.P("score"), &p.score)) << c.name;
  p.temperature = std::stof(c.P("temperature", "1"));
  p.cosine_temperature = std::stof(c.P("cosine_temperature", "0.1"));
  if (c.Has("W")) p.W = c.T("W");
  if (c.Has("W_q")) p.W_q = c.T("W_q");
  if (c.Has("W_k")) p.W_k = c.T("W_k");
  if (c.Has("vvec")) p.v = Vec(c.T("vvec"));
  if (c.Has("b")) p.b = Vec(c.T("b"));
  if (c.Has("key_lengths"))
    for (Eigen::Index i = 0; i < c.T("key_lengths").size(); ++i)
      p.mask.key_lengths.push_back((int)c.T("key_lengths").data()[i]);
  if (c.Has("key_padding"))
    for (Eigen::Index i = 0; i < c.T("key_padding").size(); ++i)
      p.mask.key_padding.push_back(c.T("key_padding").data()[i] != 0);
  p.mask.causal = c.P("causal", "0") == "1";
  p.mask.causal_offset = std::stoi(c.P("causal_offset", "0"));
  p.mask.window = std::stoi(c.P("window", "-1"));
  if (c.Has("boolean")) p.mask.boolean = (c.T("boolean").array() != 0.0f).cast<uint8_t>();
  if (c.Has("additive")) p.mask.additive = c.T("additive");
  return p;
}

MatrixRM Flags(const std::vector<uint8_t>& f) {
  MatrixRM m(1, (int)f.size());
  for (size_t i = 0; i < f.size(); ++i) m(0, (int)i) = f[i];
  return m;
}

bool AnyNaN(const MatrixRM& m) {
  return m.size() > 0 && m.array().isNaN().any();
}

// ---------------------------------------------------------------------------
// Seed 002: decoder state [5,1,20] vs four annotations, plain dot scores.
// ---------------------------------------------------------------------------
TEST(Seed002, DotScoresWeightsAndContext) {
  const RefCase* c = FindCase("seed002");
  ASSERT_NE(c, nullptr) << "missing reference case seed002";
  AttentionParams p;
  p.score = ScoreFunction::Dot;
  for (bool keep : {false, true}) {  // fast kernel path, then the step-by-step path
    p.keep_intermediates = keep;
    AttentionResult r;
    ASSERT_TRUE(attnviz::Attend(c->T("q"), c->T("k"), c->T("v"), p, &r).ok);
    std::printf("  seed002 (%s): weights %.6f %.3g %.3g %.6f, context %.5f %.5f %.5f\n", keep ? "steps" : "fast",
                r.weights(0, 0), r.weights(0, 1), r.weights(0, 2), r.weights(0, 3), r.output(0, 0), r.output(0, 1),
                r.output(0, 2));
    EXPECT_FALSE(AnyNaN(r.weights));
    EXPECT_NEAR(r.weights(0, 0), 0.1192, 1e-4);  // 1 / (1 + e^2)
    EXPECT_NEAR(r.weights(0, 3), 0.8808, 1e-4);
    EXPECT_LT(r.weights(0, 1), 1e-30f);
    EXPECT_LT(r.weights(0, 2), 1e-30f);
    // float32 spacing at 929 is 6.1e-5, so the scores themselves carry ~3e-5 of rounding
    EXPECT_TRUE(AllClose(r.weights, c->T("expected_weights"), 1e-5, 1e-5, "seed002 weights"));
    EXPECT_TRUE(AllClose(r.output, c->T("expected_output"), 1e-5, 1e-5, "seed002 context"));
    if (keep) {
      const MatrixRM want = RowOf({927.0f, 397.0f, 148.0f, 929.0f});
      EXPECT_TRUE(AllClose(r.steps.raw_scores, want, 1e-3, 0.0, "seed002 raw scores 927 397 148 929"));
      EXPECT_NEAR(r.steps.row_max[0], 929.0f, 1e-3);
      EXPECT_NEAR(r.steps.row_sum[0], 1.0f + std::exp(-2.0f), 1e-4);
    }
  }
  MatrixRM s;
  ASSERT_TRUE(attnviz::Scores(c->T("q"), c->T("k"), p, &s).ok);
  EXPECT_TRUE(AllClose(s, c->T("expected_raw"), 1e-3, 0.0, "seed002 Scores()"));
}

// ---------------------------------------------------------------------------
// Seed 004: numpy random.seed(42) projections, scaled dot self-attention.
// ---------------------------------------------------------------------------
TEST(Seed004, ScaledDotMatchesNumpy) {
  const RefCase* c = FindCase("seed004");
  ASSERT_NE(c, nullptr) << "missing reference case seed004";
  const MatrixRM q = c->T("words") * c->T("W_Q");
  const MatrixRM k = c->T("words") * c->T("W_K");
  const MatrixRM v = c->T("words") * c->T("W_V");
  EXPECT_TRUE(AllClose(q, c->T("q"), 0, 0, "seed004 Q = words W_Q"));
  AttentionParams p;
  p.score = ScoreFunction::ScaledDot;
  AttentionResult r;
  ASSERT_TRUE(attnviz::Attend(q, k, v, p, &r).ok);
  ASSERT_EQ(r.output.rows(), 4);
  ASSERT_EQ(r.output.cols(), 3);
  EXPECT_TRUE(AllClose(r.weights, c->T("expected_weights"), 1e-6, 1e-5, "seed004 weights"));
  EXPECT_TRUE(AllClose(r.output, c->T("expected_output"), 1e-6, 1e-5, "seed004 attention [4x3]"));
}

// The app's preset (src/app/examples.cpp) must carry numpy's seed-42 matrices verbatim.
std::string MatrixLiteral(const MatrixRM& m) {
  std::ostringstream s;
  s << "{";
  for (int i = 0; i < m.rows(); ++i) {
    s << (i ? ", {" : "{");
    for (int j = 0; j < m.cols(); ++j) s << (j ? ", " : "") << (int)m(i, j);
    s << "}";
  }
  s << "}";
  return s.str();
}

TEST(Seed004, AppPresetHoldsNumpyMatrices) {
  const RefCase* c = FindCase("seed004");
  ASSERT_NE(c, nullptr);
  std::ifstream in(std::string(ATTNVIZ_SOURCE_DIR) + "/src/app/examples.cpp");
  ASSERT_TRUE(in.good()) << "src/app/examples.cpp not found";
  std::stringstream buf;
  buf << in.rdbuf();
  const std::string src = buf.str();
  const size_t at = src.find("seed004");
  ASSERT_NE(at, std::string::npos) << "no seed004 preset in src/app/examples.cpp";
  for (const char* name : {"W_Q", "W_K", "W_V"}) {
    const std::string lit = MatrixLiteral(c->T(name));
    std::printf("  preset %s = %s: %s\n", name, lit.c_str(),
                src.find(lit, at) != std::string::npos ? "found" : "MISSING");
    EXPECT_NE(src.find(lit, at), std::string::npos) << name << " " << lit << " missing from the seed004 preset";
  }
}

// ---------------------------------------------------------------------------
// Seed 000: 3 inputs of dim 2, 4 queries of dim 2 -> weights [4, 3], output [4, 2].
// ---------------------------------------------------------------------------
TEST(Seed000, ShapesAndRowSumsForEveryScoreFunction) {
  MatrixRM input(3, 2), query(4, 2);
  input << 1, 2, 3, 4, 5, 6;
  query << 1, 0, 0, 1, 0, 0, 1, 1;
  for (ScoreFunction f : {ScoreFunction::Dot, ScoreFunction::ScaledDot, ScoreFunction::General, ScoreFunction::Additive,
                          ScoreFunction::Cosine}) {
    AttentionParams p;
    p.score = f;
    p.W = MatrixRM::Identity(2, 2) * 0.5f;
    p.W_q = MatrixRM::Constant(3, 2, 0.3f);
    p.W_k = MatrixRM::Constant(3, 2, -0.2f);
    p.v = VectorF::Ones(3);
    AttentionResult r;
    const Status st = attnviz::Attend(query, input, input, p, &r);
    ASSERT_TRUE(st.ok) << attnviz::ScoreFunctionName(f) << ": " << st.message;
    EXPECT_EQ(r.weights.rows(), 4);
    EXPECT_EQ(r.weights.cols(), 3);
    EXPECT_EQ(r.output.rows(), 4);
    EXPECT_EQ(r.output.cols(), 2);
    const double sum_err = (r.weights.rowwise().sum().array() - 1.0f).abs().maxCoeff();
    std::printf("  seed000 %-10s max |row sum - 1| = %.3g\n", attnviz::ScoreFunctionName(f), sum_err);
    EXPECT_LE(sum_err, 1e-6);
    EXPECT_TRUE(AllClose(r.output, MatrixRM(r.weights * input), 1e-6, 1e-6, "seed000 output = weights * input"));
  }
  // The all-zero query {0,0} scores 0 against every input under dot: uniform weights, mean input.
  AttentionParams p;
  p.score = ScoreFunction::Dot;
  AttentionResult r;
  ASSERT_TRUE(attnviz::Attend(query, input, input, p, &r).ok);
  EXPECT_TRUE(AllClose(r.output.row(2), RowOf({3.0f, 4.0f}), 1e-6, 0, "seed000 zero query -> mean input"));
}

// ---------------------------------------------------------------------------
// Random single-head cases: every score function x mask kind x temperature.
// ---------------------------------------------------------------------------
TEST(Reference, AttendCasesMatchNumpy) {
  int n = 0;
  attnviz_test::ErrorLog log;
  for (const RefCase& c : Cases()) {
    if (c.P("kind") != "attend" || c.name.rfind("attend_", 0) != 0) continue;
    ++n;
    SCOPED_TRACE(c.name);
    AttentionParams p = ParamsFrom(c);
    for (bool keep : {false, true}) {
      p.keep_intermediates = keep;
      AttentionResult r;
      const Status st = attnviz::Attend(c.T("q"), c.T("k"), c.T("v"), p, &r);
      ASSERT_TRUE(st.ok) << st.message;
      EXPECT_FALSE(AnyNaN(r.weights));
      EXPECT_FALSE(AnyNaN(r.output));
      const std::string tag = c.name + (keep ? " (steps)" : "");
      EXPECT_TRUE(AllClose(r.weights, c.T("expected_weights"), 2e-6, 2e-5, tag + " weights", &log,
                           std::string(keep ? "steps path " : "fast path ") + "weights"));
      EXPECT_TRUE(AllClose(r.output, c.T("expected_output"), 5e-6, 2e-5, tag + " output", &log,
                           std::string(keep ? "steps path " : "fast path ") + "output"));
      EXPECT_TRUE(AllClose(Flags(r.row_fully_masked), c.T("expected_fully_masked"), 0, 0, tag + " fully masked", &log,
                           std::string(keep ? "steps path " : "fast path ") + "fully masked"));
      if (!keep) continue;
      EXPECT_TRUE(AllClose(r.steps.raw_scores, c.T("expected_raw"), 2e-6, 2e-5, tag + " raw", &log,
                           std::string(keep ? "steps path " : "fast path ") + "raw"));
      EXPECT_TRUE(AllClose(r.steps.scaled, c.T("expected_scaled"), 5e-6, 2e-5, tag + " scaled", &log,
                           std::string(keep ? "steps path " : "fast path ") + "scaled"));
      EXPECT_TRUE(AllClose(r.steps.masked, c.T("expected_masked"), 5e-6, 2e-5, tag + " masked", &log,
                           std::string(keep ? "steps path " : "fast path ") + "masked"));
      EXPECT_TRUE(AllClose(r.steps.exp, c.T("expected_exp"), 2e-6, 2e-5, tag + " exp", &log,
                           std::string(keep ? "steps path " : "fast path ") + "exp"));
      EXPECT_TRUE(AllClose(r.steps.row_max.transpose(), c.T("expected_row_max"), 5e-6, 2e-5, tag + " row max", &log,
                           std::string(keep ? "steps path " : "fast path ") + "row max"));
      EXPECT_TRUE(AllClose(r.steps.row_sum.transpose(), c.T("expected_row_sum"), 5e-6, 2e-5, tag + " row sum", &log,
                           std::string(keep ? "steps path " : "fast path ") + "row sum"));
    }
  }
  std::printf("  %d single-head reference cases (5 score functions x 8 mask kinds)\n", n);
  log.Print("largest errors vs numpy:");
  EXPECT_EQ(n, 40);
}

TEST(Reference, MultiHeadCasesMatchTorchSemantics) {
  int n = 0;
  attnviz_test::ErrorLog log;
  for (const RefCase& c : Cases()) {
    if (c.P("kind") != "mha") continue;
    ++n;
    SCOPED_TRACE(c.name);
    attnviz::MultiHeadParams p;
    p.num_heads = std::stoi(c.P("heads"));
    p.in_proj_weight = c.T("in_proj_weight");
    p.out_proj_weight = c.T("out_proj_weight");
    if (c.Has("in_proj_bias")) p.in_proj_bias = Vec(c.T("in_proj_bias"));
    if (c.Has("out_proj_bias")) p.out_proj_bias = Vec(c.T("out_proj_bias"));
    if (c.Has("key_padding"))
      for (Eigen::Index i = 0; i < c.T("key_padding").size(); ++i)
        p.mask.key_padding.push_back(c.T("key_padding").data()[i] != 0);
    if (c.Has("boolean")) p.mask.boolean = (c.T("boolean").array() != 0.0f).cast<uint8_t>();
    if (c.Has("additive")) p.mask.additive = c.T("additive");
    attnviz::MultiHeadResult r;
    const Status st = attnviz::MultiHeadAttention(c.T("query"), c.T("key"), c.T("value"), p, &r);
    ASSERT_TRUE(st.ok) << st.message;
    ASSERT_EQ((int)r.head_weights.size(), p.num_heads);
    for (int h = 0; h < p.num_heads; ++h)
      EXPECT_TRUE(AllClose(r.head_weights[h], c.T("expected_head" + std::to_string(h)), 2e-6, 2e-5,
                           c.name + " head " + std::to_string(h), &log, "per-head weights"));
    EXPECT_TRUE(AllClose(r.mean_weights, c.T("expected_mean_weights"), 2e-6, 2e-5, c.name + " mean weights", &log,
                         "mean weights"));
    EXPECT_TRUE(AllClose(r.output, c.T("expected_output"), 5e-6, 2e-5, c.name + " output", &log, "output"));
  }
  std::printf("  %d multi-head reference cases\n", n);
  log.Print("largest errors vs numpy (torch semantics):");
  EXPECT_EQ(n, 5);
}

// ---------------------------------------------------------------------------
// Masks, stability, temperature
// ---------------------------------------------------------------------------
TEST(Masks, FullyMaskedRowGivesZerosAndFlagNeverNaN) {
  Rng rng(21);
  MatrixRM q = RandomMatrix(3, 4, &rng), k = RandomMatrix(5, 4, &rng), v = RandomMatrix(5, 2, &rng);
  for (bool keep : {false, true}) {
    AttentionParams p;
    p.keep_intermediates = keep;
    p.mask.key_lengths = {5, 0, 2};  // query 1 sees no key
    AttentionResult r;
    ASSERT_TRUE(attnviz::Attend(q, k, v, p, &r).ok);
    EXPECT_FALSE(AnyNaN(r.weights));
    EXPECT_FALSE(AnyNaN(r.output));
    EXPECT_EQ(r.row_fully_masked, (std::vector<uint8_t>{0, 1, 0}));
    EXPECT_EQ(r.weights.row(1).cwiseAbs().sum(), 0.0f);
    EXPECT_EQ(r.output.row(1).cwiseAbs().sum(), 0.0f);
    EXPECT_EQ(r.weights(2, 2), 0.0f);
    EXPECT_NEAR(r.weights.row(2).sum(), 1.0f, 1e-6);
    if (keep) {
      EXPECT_EQ(r.steps.row_max[1], 0.0f);
      EXPECT_EQ(r.steps.row_sum[1], 0.0f);
      EXPECT_EQ(r.steps.masked(1, 0), -kInf);
    }
  }
  // every key padded, and an additive mask of -inf: all rows dead
  AttentionParams p;
  p.mask.additive = MatrixRM::Constant(3, 5, -kInf);
  AttentionResult r;
  ASSERT_TRUE(attnviz::Attend(q, k, v, p, &r).ok);
  EXPECT_EQ(r.row_fully_masked, (std::vector<uint8_t>{1, 1, 1}));
  EXPECT_FALSE(AnyNaN(r.output));
}

TEST(Masks, CausalOffsetWindowAndPadding) {
  Rng rng(22);
  MatrixRM q = RandomMatrix(4, 3, &rng), k = RandomMatrix(6, 3, &rng), v = RandomMatrix(6, 3, &rng);
  AttentionParams p;
  p.mask.causal = true;
  p.mask.causal_offset = 2;  // query i sees keys j <= i + 2
  p.mask.key_padding = {0, 0, 0, 0, 1, 0};
  AttentionResult r;
  ASSERT_TRUE(attnviz::Attend(q, k, v, p, &r).ok);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 6; ++j)
      if (j > i + 2 || j == 4) {
        EXPECT_EQ(r.weights(i, j), 0.0f) << i << "," << j;
      }
  p.mask = attnviz::AttentionMask{};
  p.mask.window = 0;  // only the diagonal
  ASSERT_TRUE(attnviz::Attend(q, k, v, p, &r).ok);
  for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(r.weights(i, i), 1.0f);
}

TEST(Stability, HugeScoresAndSmallTemperatures) {
  // scores near 1e5 (and 1e5 apart) must not overflow exp
  MatrixRM q(2, 2), k(3, 2), v = MatrixRM::Identity(3, 3);
  q << 300, 300, -300, 10;
  k << 100, 100, 101, 100, -200, 0;
  for (float t : {1.0f, 1e-3f, 50.0f}) {
    for (bool keep : {false, true}) {
      AttentionParams p;
      p.score = ScoreFunction::Dot;
      p.temperature = t;
      p.keep_intermediates = keep;
      AttentionResult r;
      ASSERT_TRUE(attnviz::Attend(q, k, v, p, &r).ok);
      EXPECT_FALSE(AnyNaN(r.weights)) << "T=" << t;
      EXPECT_NEAR(r.weights.row(0).sum(), 1.0f, 1e-6);
      EXPECT_NEAR(r.weights.row(1).sum(), 1.0f, 1e-6);
    }
  }
  MatrixRM x(1, 3);
  x << 927, 397, 929;
  attnviz::SoftmaxRows(&x, 2.0f);  // softmax([927, 397, 929] / 2)
  EXPECT_NEAR(x(0, 0), 1.0 / (1.0 + std::exp(1.0)), 1e-6);
  EXPECT_NEAR(x(0, 2), 1.0 / (1.0 + std::exp(-1.0)), 1e-6);
}

TEST(Scores, ScalingConventions) {
  MatrixRM q(1, 4), k(2, 4);
  q << 1, 2, 3, 4;
  k << 1, 0, 0, 0, 0, 0, 0, 0;  // the zero key scores 0 under cosine
  AttentionParams p;
  p.temperature = 7.0f;  // Scores() ignores the softmax temperature
  MatrixRM s;
  p.score = ScoreFunction::ScaledDot;
  ASSERT_TRUE(attnviz::Scores(q, k, p, &s).ok);
  EXPECT_FLOAT_EQ(s(0, 0), 0.5f);  // 1 / sqrt(4)
  p.score = ScoreFunction::Cosine;
  p.cosine_temperature = 0.5f;
  ASSERT_TRUE(attnviz::Scores(q, k, p, &s).ok);
  EXPECT_NEAR(s(0, 0), 1.0 / std::sqrt(30.0) / 0.5, 1e-6);
  EXPECT_EQ(s(0, 1), 0.0f);
}

TEST(Names, ParseRoundTrip) {
  for (ScoreFunction f : {ScoreFunction::Dot, ScoreFunction::ScaledDot, ScoreFunction::General, ScoreFunction::Additive,
                          ScoreFunction::Cosine}) {
    ScoreFunction g = ScoreFunction::Dot;
    EXPECT_TRUE(attnviz::ParseScoreFunction(attnviz::ScoreFunctionName(f), &g));
    EXPECT_EQ(f, g);
  }
  ScoreFunction g;
  EXPECT_FALSE(attnviz::ParseScoreFunction("bilinear", &g));
}

// ---------------------------------------------------------------------------
// Validation: clear Status errors, never a crash
// ---------------------------------------------------------------------------
::testing::AssertionResult FailsWith(const Status& st, const std::string& needle) {
  if (st.ok) return ::testing::AssertionFailure() << "expected an error containing '" << needle << "'";
  if (st.message.find(needle) == std::string::npos)
    return ::testing::AssertionFailure() << "message '" << st.message << "' lacks '" << needle << "'";
  return ::testing::AssertionSuccess();
}

TEST(Validation, ShapesValuesAndParameters) {
  const MatrixRM q3 = MatrixRM::Ones(2, 3), k4 = MatrixRM::Ones(5, 4), v = MatrixRM::Ones(5, 2);
  AttentionParams p;
  AttentionResult r;
  p.score = ScoreFunction::Dot;
  EXPECT_TRUE(
      FailsWith(attnviz::Attend(q3, k4, v, p, &r), "query has d=3 but key has d=4: dot scores need equal dims"));
  const MatrixRM k3 = MatrixRM::Ones(5, 3);
  EXPECT_TRUE(FailsWith(attnviz::Attend(q3, k3, MatrixRM::Ones(4, 2), p, &r), "value has n=4"));
  MatrixRM bad = q3;
  bad(1, 1) = std::nanf("");
  EXPECT_TRUE(FailsWith(attnviz::Attend(bad, k3, v, p, &r), "query contains NaN"));
  EXPECT_TRUE(FailsWith(attnviz::Attend(MatrixRM(0, 3), k3, v, p, &r), "query is empty"));
  for (float t : {0.0f, -1.0f, std::nanf(""), kInf}) {
    p.temperature = t;
    EXPECT_TRUE(FailsWith(attnviz::Attend(q3, k3, v, p, &r), "temperature must be a finite number > 0"));
  }
  p.temperature = 1.0f;
  p.score = ScoreFunction::General;
  p.W = MatrixRM::Ones(3, 3);
  EXPECT_TRUE(attnviz::Attend(q3, k3, v, p, &r).ok);
  EXPECT_TRUE(FailsWith(attnviz::Attend(q3, k4, v, p, &r), "W of shape [d_q, d_k] = [3, 4]"));
  p.score = ScoreFunction::Additive;
  EXPECT_TRUE(FailsWith(attnviz::Attend(q3, k3, v, p, &r), "W_q is empty"));
  p.W_q = MatrixRM::Ones(2, 3);
  p.W_k = MatrixRM::Ones(2, 3);
  p.v = VectorF::Ones(3);
  EXPECT_TRUE(FailsWith(attnviz::Attend(q3, k3, v, p, &r), "v of size a=2"));
  p.v = VectorF::Ones(2);
  EXPECT_TRUE(attnviz::Attend(q3, k3, v, p, &r).ok);
  p.score = ScoreFunction::Cosine;
  p.cosine_temperature = 0.0f;
  EXPECT_TRUE(FailsWith(attnviz::Attend(q3, k3, v, p, &r), "cosine_temperature"));
  p.cosine_temperature = 0.1f;
  p.mask.key_padding = {1, 0};
  EXPECT_TRUE(FailsWith(attnviz::Attend(q3, k3, v, p, &r), "key_padding has 2 entries"));
  p.mask = attnviz::AttentionMask{};
  p.mask.key_lengths = {1, 2, 3};
  EXPECT_TRUE(FailsWith(attnviz::Attend(q3, k3, v, p, &r), "key_lengths has 3 entries"));
  p.mask = attnviz::AttentionMask{};
  p.mask.boolean = attnviz::MaskRM::Zero(5, 2);
  EXPECT_TRUE(FailsWith(attnviz::Attend(q3, k3, v, p, &r), "boolean mask is [5, 2]"));
  p.mask = attnviz::AttentionMask{};
  p.mask.additive = MatrixRM::Constant(2, 5, kInf);
  EXPECT_TRUE(FailsWith(attnviz::Attend(q3, k3, v, p, &r), "+infinity"));
}

TEST(Validation, MultiHead) {
  attnviz::MultiHeadParams p;
  p.num_heads = 3;
  p.in_proj_weight = MatrixRM::Ones(24, 8);
  p.out_proj_weight = MatrixRM::Ones(8, 8);
  const MatrixRM x = MatrixRM::Ones(4, 8);
  attnviz::MultiHeadResult r;
  EXPECT_TRUE(FailsWith(attnviz::MultiHeadAttention(x, x, x, p, &r), "E=8 is not divisible by num_heads=3"));
  p.num_heads = 2;
  EXPECT_TRUE(attnviz::MultiHeadAttention(x, x, x, p, &r).ok);
  p.in_proj_weight = MatrixRM::Ones(8, 8);
  EXPECT_TRUE(FailsWith(attnviz::MultiHeadAttention(x, x, x, p, &r), "in_proj_weight must be [3E, E] = [24, 8]"));
  p.in_proj_weight = MatrixRM::Ones(24, 8);
  EXPECT_TRUE(FailsWith(attnviz::MultiHeadAttention(x, MatrixRM::Ones(4, 6), x, p, &r), "all need E columns"));
}

TEST(MultiHead, FullyMaskedRowAndAveraging) {
  const int E = 8;
  attnviz::MultiHeadParams p;
  p.num_heads = 4;
  Rng rng(23);
  p.in_proj_weight = RandomMatrix(3 * E, E, &rng);
  p.out_proj_weight = RandomMatrix(E, E, &rng);
  p.mask.boolean = attnviz::MaskRM::Zero(3, 5);
  p.mask.boolean.row(2).setOnes();  // torch would give NaN here; attnviz gives zeros + flag
  const MatrixRM q = RandomMatrix(3, E, &rng), kv = RandomMatrix(5, E, &rng);
  attnviz::MultiHeadResult r;
  ASSERT_TRUE(attnviz::MultiHeadAttention(q, kv, kv, p, &r).ok);
  EXPECT_EQ(r.row_fully_masked, (std::vector<uint8_t>{0, 0, 1}));
  EXPECT_FALSE(AnyNaN(r.output));
  MatrixRM mean = MatrixRM::Zero(3, 5);
  for (const MatrixRM& w : r.head_weights) mean += w / 4.0f;
  EXPECT_TRUE(AllClose(r.mean_weights, mean, 1e-7, 0, "mha mean of heads"));
}

}  // namespace
