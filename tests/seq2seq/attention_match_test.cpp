// seq2seq: the tape's attention forward equals core Attend() (src/core/attention.h) on the same
// inputs, for every score the models use:
//   Bahdanau     additive      MatMul (keys, query projections) + AdditiveScores + MaskedSoftmax + Context
//   Luong        general, dot  [MatMul by W_a] + DotScores + MaskedSoftmax + Context
//   Transformer  scaled dot    MultiHeadAttention, head by head, with key padding and causal masks
// Inputs come from the project's Rng, so native and WASM check the same numbers. Padded keys are
// masked in the core by AttentionMask::key_lengths, so its masked path is compared too (and the
// fused kernel where nothing is masked). Each test prints its largest error.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "core/attention.h"
#include "core/seq2seq/rng.h"
#include "core/seq2seq/tape.h"

namespace attnviz {
namespace seq2seq {
namespace {

// Bounds on |tape - Attend|: both run a float softmax over O(1) scores (the core with its
// vectorized exp, relative error <= 2e-7) in a different order, so weights may differ by a few
// ulp of 1 (1.2e-7 each) and contexts, convex combinations of values in [-1, 1], likewise.
// Seen: at most 1.2e-7 for weights, 1.8e-7 for contexts.
constexpr double kWeightTol = 1e-6;
constexpr double kContextTol = 2e-6;

Mat RandomMat(int rows, int cols, Rng* rng, float scale = 1.0f) {
  Mat m(rows, cols);
  for (int i = 0; i < m.size(); ++i) m.data()[i] = rng->Symmetric(scale);
  return m;
}

double MaxAbsDiff(const MatrixRM& a, const MatrixRM& b) {
  EXPECT_EQ(a.rows(), b.rows());
  EXPECT_EQ(a.cols(), b.cols());
  if (a.rows() != b.rows() || a.cols() != b.cols()) return INFINITY;
  return a.size() ? (double)(a - b).cwiseAbs().maxCoeff() : 0.0;
}

struct MaxErrors {
  double weights = 0, context = 0;
  void Add(const MatrixRM& tape_w, const MatrixRM& core_w, const MatrixRM& tape_c, const MatrixRM& core_c) {
    weights = std::max(weights, MaxAbsDiff(tape_w, core_w));
    context = std::max(context, MaxAbsDiff(tape_c, core_c));
  }
  void ExpectWithinTolerance(const char* what) const {
    std::printf("  %-34s max |tape - Attend|: weights %.3g (tol %.0e), context %.3g (tol %.0e)\n", what, weights,
                kWeightTol, context, kContextTol);
    EXPECT_LT(weights, kWeightTol) << what;
    EXPECT_LT(context, kContextTol) << what;
  }
};

// The RNN models' encoder states for a batch: H [T * B, d] time-major (row t * B + b), with
// sentence b of length lengths[b] (later rows are padding the attention must ignore).
struct RnnBatch {
  int B = 0, T = 0;
  std::vector<int> lengths;
  Mat H;      // [T * B, d_enc] keys and values
  Mat state;  // [B, d_dec] decoder state (the query)
};

RnnBatch MakeRnnBatch(int d_enc, int d_dec, Rng* rng) {
  RnnBatch r;
  r.lengths = {7, 4, 1, 6};  // full, padded, a single key, padded
  r.B = (int)r.lengths.size();
  r.T = 7;
  r.H = RandomMat(r.T * r.B, d_enc, rng);
  r.state = RandomMat(r.B, d_dec, rng);
  return r;
}

// Keys and values of batch row b as the core sees them: [T, d] (padding rows included; masked).
MatrixRM KeysOf(const RnnBatch& r, int b) {
  MatrixRM k(r.T, r.H.cols());
  for (int t = 0; t < r.T; ++t) k.row(t) = r.H.row(t * r.B + b).cast<float>();
  return k;
}

// Runs core Attend for every batch row (padded keys masked by key_lengths) and compares its
// weights and context with the tape's alpha [B, T] and context [B, d_enc].
MaxErrors CompareRnnAttention(const RnnBatch& r, const AttentionParams& base, const Mat& alpha, const Mat& context) {
  MaxErrors e;
  for (int b = 0; b < r.B; ++b) {
    AttentionParams p = base;
    p.mask.key_lengths = {r.lengths[b]};
    const MatrixRM q = r.state.row(b).cast<float>(), k = KeysOf(r, b);
    AttentionResult out;
    const Status st = Attend(q, k, k, p, &out);
    EXPECT_TRUE(st.ok) << st.message;
    if (!st.ok) return {INFINITY, INFINITY};
    e.Add(alpha.row(b).cast<float>(), out.weights, context.row(b).cast<float>(), out.output);
  }
  return e;
}

TEST(Seq2SeqAttention, AdditiveBahdanauMatchesCoreAttend) {
  const int d_enc = 10, d_dec = 6, a = 5;
  Rng rng(101);
  const RnnBatch r = MakeRnnBatch(d_enc, d_dec, &rng);
  const Mat Wk = RandomMat(d_enc, a, &rng), Wq = RandomMat(d_dec, a, &rng), v = RandomMat(1, a, &rng, 2.0f);
  // tape, as model.cpp's RnnEncode / RnnStep: keys = H W_k, query = s W_q, s[b, t] = v . tanh(keys + query)
  Tape tape;
  const Tape::Id H = tape.Constant(r.H);
  const Tape::Id keys = tape.MatMul(H, tape.Constant(Wk));
  const Tape::Id query = tape.MatMul(tape.Constant(r.state), tape.Constant(Wq));
  const Tape::Id alpha = tape.MaskedSoftmax(tape.AdditiveScores(keys, query, tape.Constant(v)), r.lengths);
  const Tape::Id context = tape.Context(alpha, H);
  // core: s = v . tanh(W_q q + W_k k + b) with torch-layout W_q [a, d_dec], W_k [a, d_enc]
  AttentionParams p;
  p.score = ScoreFunction::Additive;
  p.W_q = Wq.transpose().cast<float>();
  p.W_k = Wk.transpose().cast<float>();
  p.v = v.row(0).transpose().cast<float>();
  CompareRnnAttention(r, p, tape.Value(alpha), tape.Value(context)).ExpectWithinTolerance("additive (Bahdanau)");
}

TEST(Seq2SeqAttention, GeneralLuongMatchesCoreAttend) {
  const int d_enc = 10, d_dec = 6;
  Rng rng(202);
  const RnnBatch r = MakeRnnBatch(d_enc, d_dec, &rng);
  const Mat Wa = RandomMat(d_enc, d_dec, &rng);
  // tape, as model.cpp: keys = H W_a [T * B, d_dec], s[b, t] = keys[t * B + b] . state[b]
  Tape tape;
  const Tape::Id H = tape.Constant(r.H);
  const Tape::Id keys = tape.MatMul(H, tape.Constant(Wa));
  const Tape::Id alpha = tape.MaskedSoftmax(tape.DotScores(keys, tape.Constant(r.state)), r.lengths);
  const Tape::Id context = tape.Context(alpha, H);
  // core: s = q^T W k with W [d_q, d_k] = W_a^T
  AttentionParams p;
  p.score = ScoreFunction::General;
  p.W = Wa.transpose().cast<float>();
  CompareRnnAttention(r, p, tape.Value(alpha), tape.Value(context)).ExpectWithinTolerance("general (Luong)");
}

TEST(Seq2SeqAttention, DotLuongMatchesCoreAttend) {
  const int d = 8;  // LuongScore::Dot needs dec_hidden == 2 * enc_hidden
  Rng rng(303);
  const RnnBatch r = MakeRnnBatch(d, d, &rng);
  Tape tape;
  const Tape::Id H = tape.Constant(r.H);
  const Tape::Id alpha = tape.MaskedSoftmax(tape.DotScores(H, tape.Constant(r.state)), r.lengths);
  const Tape::Id context = tape.Context(alpha, H);
  AttentionParams p;
  p.score = ScoreFunction::Dot;
  CompareRnnAttention(r, p, tape.Value(alpha), tape.Value(context)).ExpectWithinTolerance("dot (Luong)");
}

// Transformer: tape MultiHeadAttention on projected q [B * n_q, D], k, v [B * n_k, D] (batch-major),
// against core Attend(ScaledDot) on each head's columns [h * D/heads, (h + 1) * D/heads).
MaxErrors CompareMultiHead(int n_q, int n_k, int heads, const std::vector<int>& key_lengths, bool causal, Rng* rng) {
  const int B = (int)key_lengths.size(), D = 12, dh = D / heads;
  const Mat Q = RandomMat(B * n_q, D, rng, 2.0f), K = RandomMat(B * n_k, D, rng, 2.0f), V = RandomMat(B * n_k, D, rng);
  Tape tape;
  const Tape::Id att =
      tape.MultiHeadAttention(tape.Constant(Q), tape.Constant(K), tape.Constant(V), B, heads, key_lengths, causal);
  const Mat& probs = tape.Saved(att);   // [B * heads * n_q, n_k], row (b * heads + h) * n_q + i
  const Mat& output = tape.Value(att);  // [B * n_q, D]
  MaxErrors e;
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < heads; ++h) {
      AttentionParams p;
      p.score = ScoreFunction::ScaledDot;  // / sqrt(d_k), d_k = D / heads
      if (key_lengths[b] < n_k) p.mask.key_lengths = {key_lengths[b]};
      p.mask.causal = causal;
      const MatrixRM q = Q.block(b * n_q, h * dh, n_q, dh).cast<float>();
      const MatrixRM k = K.block(b * n_k, h * dh, n_k, dh).cast<float>();
      const MatrixRM v = V.block(b * n_k, h * dh, n_k, dh).cast<float>();
      AttentionResult out;
      const Status st = Attend(q, k, v, p, &out);
      EXPECT_TRUE(st.ok) << st.message;
      if (!st.ok) return {INFINITY, INFINITY};
      e.Add(probs.middleRows((b * heads + h) * n_q, n_q).cast<float>(), out.weights,
            output.block(b * n_q, h * dh, n_q, dh).cast<float>(), out.output);
    }
  return e;
}

TEST(Seq2SeqAttention, ScaledDotTransformerMatchesCoreAttend) {
  Rng rng(404);
  // encoder self-attention and cross-attention: padded source sentences (7 = no padding:
  // the core's unmasked fused kernel), then decoder self-attention: causal, no padding
  CompareMultiHead(7, 7, 4, {7, 5, 1}, false, &rng).ExpectWithinTolerance("scaled dot, encoder self (4 heads)");
  CompareMultiHead(5, 7, 4, {7, 3, 6}, false, &rng).ExpectWithinTolerance("scaled dot, cross (4 heads)");
  CompareMultiHead(6, 6, 3, {6, 6}, true, &rng).ExpectWithinTolerance("scaled dot, causal self (3 heads)");
  CompareMultiHead(4, 4, 1, {4}, false, &rng).ExpectWithinTolerance("scaled dot, one head, unmasked");
}

}  // namespace
}  // namespace seq2seq
}  // namespace attnviz
