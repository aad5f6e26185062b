#include "app/examples.h"

#include <cmath>

namespace attnviz {
namespace {

MatrixRM Rows(std::initializer_list<std::initializer_list<float>> rows) {
  MatrixRM m((int)rows.size(), (int)rows.begin()->size());
  int i = 0;
  for (const auto& r : rows) {
    int j = 0;
    for (float x : r) m(i, j++) = x;
    ++i;
  }
  return m;
}

// Seed 002: one decoder hidden state scored (plain dot) against four encoder annotations.
Example Seed002() {
  Example ex;
  ex.id = "seed002";
  ex.title = "Seed 002: decoder state vs 4 annotations (dot)";
  ex.description =
      "The decoder hidden state [5, 1, 20] is scored against four encoder annotations with a plain "
      "dot product: 927, 397, 148 and 929. Softmax turns the two close winners into 0.12 and 0.88; "
      "the context vector is the weighted sum of the annotations.";
  ex.has_inputs = true;
  ex.inputs.q = Rows({{5, 1, 20}});
  ex.inputs.k = Rows({{3, 12, 45}, {59, 2, 5}, {1, 43, 5}, {4, 3, 45.3f}});
  ex.inputs.v = ex.inputs.k;
  ex.inputs.params.score = ScoreFunction::Dot;
  ex.inputs.query_labels = {"decoder state"};
  ex.inputs.key_labels = {"annotation 1", "annotation 2", "annotation 3", "annotation 4"};
  return ex;
}

// Seed 004: four words, W_Q, W_K, W_V drawn by numpy's random.seed(42); randint(3, size=(3, 3)).
Example Seed004() {
  Example ex;
  ex.id = "seed004";
  ex.title = "Seed 004: self-attention of 4 words (scaled dot)";
  ex.description =
      "Four one-hot-like word vectors are projected by W_Q, W_K and W_V (numpy seed 42) and attend "
      "to each other with scaled dot-product attention: softmax(Q K^T / sqrt(3)) V.";
  const MatrixRM words = Rows({{1, 0, 0}, {0, 1, 0}, {1, 1, 0}, {0, 0, 1}});
  const MatrixRM w_q = Rows({{2, 0, 2}, {2, 0, 0}, {2, 1, 2}});
  const MatrixRM w_k = Rows({{2, 2, 2}, {0, 2, 1}, {0, 1, 1}});
  const MatrixRM w_v = Rows({{1, 1, 0}, {0, 1, 1}, {0, 0, 0}});
  ex.has_inputs = true;
  ex.inputs.q = words * w_q;
  ex.inputs.k = words * w_k;
  ex.inputs.v = words * w_v;
  ex.inputs.params.score = ScoreFunction::ScaledDot;
  ex.inputs.query_labels = {"word_1", "word_2", "word_3", "word_4"};
  ex.inputs.key_labels = ex.inputs.query_labels;
  return ex;
}

// Seed 000: Mathematica's SequenceAttentionLayer shapes: 3 inputs (d=2), 4 queries (d=2) -> 4x2.
// Its ScoringNet is randomly initialised, so we use a fixed additive scoring net of the same shape.
Example Seed000() {
  Example ex;
  ex.id = "seed000";
  ex.title = "Seed 000: 3 inputs, 4 queries (additive)";
  ex.description =
      "SequenceAttentionLayer's example: inputs {1,2},{3,4},{5,6} and queries {1,0},{0,1},{0,0},{1,1}. "
      "Each query gets 3 weights (one per input), so the weights are 4x3 and the output is 4x2. "
      "Mathematica's ScoringNet is randomly initialised; here it is a fixed additive net v.tanh(Wq q + Wk k).";
  ex.has_inputs = true;
  ex.inputs.q = Rows({{1, 0}, {0, 1}, {0, 0}, {1, 1}});
  ex.inputs.k = Rows({{1, 2}, {3, 4}, {5, 6}});
  ex.inputs.v = ex.inputs.k;
  ex.inputs.params.score = ScoreFunction::Additive;
  ex.inputs.params.W_q = Rows({{0.8f, -0.5f}, {-0.3f, 0.9f}, {0.4f, 0.4f}});
  ex.inputs.params.W_k = Rows({{0.2f, 0.1f}, {0.3f, -0.2f}, {-0.1f, 0.25f}});
  ex.inputs.params.v.resize(3);
  ex.inputs.params.v << 1.0f, -0.7f, 1.2f;
  ex.inputs.query_labels = {"{1,0}", "{0,1}", "{0,0}", "{1,1}"};
  ex.inputs.key_labels = {"{1,2}", "{3,4}", "{5,6}"};
  return ex;
}

// A translation figure from hand-set embeddings: each English word gets a direction in R^d;
// each French word's query points at the English words it translates (one-to-many allowed).
Example Translation() {
  Example ex;
  ex.id = "translation";
  ex.title = "Translation: the European economic area";
  ex.description =
      "English -> French, as in the figures of Bahdanau et al.: the adjectives swap places "
      "(European economic -> économique européenne shows as an anti-diagonal) and the end token "
      "aligns with the end token. Computed by scaled dot attention from small hand-set embeddings "
      "until the trained model replaces it.";
  const std::vector<std::string> src = {"the", "European", "economic", "area", "<end>"};
  const std::vector<std::string> tgt = {"la", "zone", "économique", "européenne", "<end>"};
  // gold[t] = source words target t attends to, with their strengths
  const std::vector<std::vector<std::pair<int, float>>> gold = {
      {{0, 1.0f}, {3, 0.35f}}, {{3, 1.0f}}, {{2, 1.0f}}, {{1, 1.0f}}, {{4, 1.0f}}};
  const int d = 8;
  MatrixRM k = MatrixRM::Zero((int)src.size(), d);
  for (int j = 0; j < (int)src.size(); ++j) {
    k(j, j) = 1.0f;
    k(j, 7) = 0.2f;  // a shared component blurs the alignment slightly, as real models do
  }
  MatrixRM q = MatrixRM::Zero((int)tgt.size(), d);
  for (int i = 0; i < (int)tgt.size(); ++i)
    for (auto [j, s] : gold[i]) q.row(i) += 9.0f * s * k.row(j);
  ex.has_inputs = true;
  ex.inputs.q = q;
  ex.inputs.k = k;
  ex.inputs.v = k;
  ex.inputs.params.score = ScoreFunction::ScaledDot;
  ex.inputs.query_labels = tgt;
  ex.inputs.key_labels = src;
  return ex;
}

// Causal self-attention: each word sees itself and earlier words only.
Example CausalSelfAttention() {
  Example ex;
  ex.id = "causal";
  ex.title = "Causal self-attention: the cat sat on the mat";
  ex.description =
      "Decoder-style self-attention with a causal mask: word i may only attend to words 0..i, so "
      "the upper triangle is masked (-inf before the softmax) and each row sums to 1 over its prefix.";
  const std::vector<std::string> words = {"the", "cat", "sat", "on", "the", "mat", "."};
  const int n = (int)words.size(), d = 6;
  MatrixRM x(n, d);
  for (int i = 0; i < n; ++i)
    for (int c = 0; c < d; ++c) x(i, c) = std::sin(0.9f * (i + 1) * (c + 1)) + (words[i] == "the" ? 0.8f : 0.0f);
  ex.has_inputs = true;
  ex.inputs.q = x;
  ex.inputs.k = x;
  ex.inputs.v = x;
  ex.inputs.params.score = ScoreFunction::ScaledDot;
  ex.inputs.params.mask.causal = true;
  ex.inputs.query_labels = words;
  ex.inputs.key_labels = words;
  return ex;
}

}  // namespace

Status RecomputeExample(Example* ex) {
  if (!ex->has_inputs) return Status::Ok();
  AttentionParams params = ex->inputs.params;
  params.keep_intermediates = true;
  AttentionResult res;
  Status st = Attend(ex->inputs.q, ex->inputs.k, ex->inputs.v, params, &res);
  if (!st) return Status::Error(ex->title + ": " + st.message);
  if (ex->maps.empty()) ex->maps.resize(1);
  AttentionMap& m = ex->maps[0];
  m.name = ScoreFunctionName(params.score);
  m.source_tokens = ex->inputs.key_labels;
  m.target_tokens = ex->inputs.query_labels;
  m.weights = res.weights;
  m.steps = res.steps;
  m.has_steps = true;
  m.version++;
  return Status::Ok();
}

Status BuildExamples(std::vector<Example>* out) {
  out->clear();
  out->push_back(Seed002());
  out->push_back(Seed004());
  out->push_back(Seed000());
  out->push_back(Translation());
  out->push_back(CausalSelfAttention());
  for (Example& ex : *out) {
    Status st = RecomputeExample(&ex);
    if (!st) return st;
  }
  return Status::Ok();
}

}  // namespace attnviz
