#include "app/examples.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <functional>

namespace attnviz {

uint64_t NewMapVersion() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

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

// Deterministic pseudo-random numbers for the generated examples (splitmix64).
struct SplitMix {
  uint64_t state;
  float Uniform() {  // [-1, 1)
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (float)((z >> 40) * (1.0 / (1ull << 24))) * 2.0f - 1.0f;
  }
};

MatrixRM RandomMatrix(int rows, int cols, float scale, SplitMix* rng) {
  MatrixRM m(rows, cols);
  for (int i = 0; i < m.size(); ++i) m.data()[i] = scale * rng->Uniform();
  return m;
}

std::vector<std::string> NumberedTokens(const char* prefix, int n) {
  std::vector<std::string> t(n);
  for (int i = 0; i < n; ++i) t[i] = prefix + std::to_string(i);
  return t;
}

// Two layers of 4-head self-attention over a sentence, torch nn.MultiheadAttention layout,
// deterministic weights: the grid view's example.
Status BuildMultiHead(Example* ex) {
  const std::vector<std::string> words = {"the", "cat", "sat", "on", "the", "mat", "because", "it", "was", "warm", "."};
  const int n = (int)words.size(), e = 16, heads = 4, layers = 2;
  SplitMix rng{2024};
  MatrixRM x(n, e);
  for (int i = 0; i < n; ++i)
    for (int c = 0; c < e; ++c)
      x(i, c) = std::sin(0.37f * (float)((std::hash<std::string>{}(words[i]) % 97) + 1) * (c + 1)) +
                0.5f * std::cos(0.5f * i * (c % 4 + 1));
  ex->layers = layers;
  ex->heads = heads;
  ex->maps.clear();
  for (int l = 0; l < layers; ++l) {
    MultiHeadParams p;
    p.num_heads = heads;
    p.in_proj_weight = RandomMatrix(3 * e, e, 0.9f, &rng);
    p.out_proj_weight = RandomMatrix(e, e, 0.3f, &rng);
    // Make some heads positional: a head that looks one word back, one that looks at the first word.
    p.mask.causal = (l == 1);
    MultiHeadResult r;
    Status st = MultiHeadAttention(x, x, x, p, &r);
    if (!st) return st;
    for (int h = 0; h < heads; ++h) {
      AttentionMap m;
      m.name =
          "layer " + std::to_string(l) + " / head " + std::to_string(h);  // 0-based, as the sliders, the grid and files
      m.source_tokens = words;
      m.target_tokens = words;
      m.weights = r.head_weights[h];
      ex->maps.push_back(std::move(m));
    }
    x = x + r.output;
  }
  return Status::Ok();
}

// Random scaled-dot attention over n tokens (d = 64), for the performance examples.
Status RandomAttention(int n, int maps_count, int layers, int heads, uint64_t seed, Example* ex) {
  SplitMix rng{seed};
  ex->layers = layers;
  ex->heads = heads;
  ex->maps.clear();
  const std::vector<std::string> tokens = NumberedTokens("t", n);
  for (int i = 0; i < maps_count; ++i) {
    // Random keys, queries near some keys: rows have a few clear peaks, like real heads.
    MatrixRM k = RandomMatrix(n, 64, 1.0f, &rng);
    MatrixRM q = RandomMatrix(n, 64, 0.3f, &rng);
    const int offset = (i * 7) % 5 - 2;
    for (int r = 0; r < n; ++r) q.row(r) += k.row(std::clamp(r + offset, 0, n - 1)) * (4.0f + 1.0f * (i % 5));
    AttentionParams p;
    p.score = ScoreFunction::ScaledDot;
    AttentionResult res;
    Status st = Attend(q, k, k, p, &res);
    if (!st) return st;
    AttentionMap m;
    m.name = "layer " + std::to_string(i / heads) + " / head " + std::to_string(i % heads);
    m.source_tokens = tokens;
    m.target_tokens = tokens;
    m.weights = std::move(res.weights);
    ex->maps.push_back(std::move(m));
  }
  return Status::Ok();
}

Status BuildBig4096(Example* ex) {
  return RandomAttention(4096, 1, 1, 1, 4096, ex);
}
Status BuildGrid144(Example* ex) {
  return RandomAttention(256, 144, 12, 12, 144, ex);
}

Example Lazy(const char* id, const char* title, const char* description, Status (*builder)(Example*)) {
  Example ex;
  ex.id = id;
  ex.title = title;
  ex.description = description;
  ex.builder = builder;
  return ex;
}

}  // namespace

Status EnsureExampleBuilt(Example* ex) {
  if (!ex->builder || !ex->maps.empty()) return Status::Ok();
  Status st = ex->builder(ex);
  if (!st) {
    ex->maps.clear();
    return Status::Error(ex->title + ": " + st.message);
  }
  return Status::Ok();
}

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
  m.Touch();
  return Status::Ok();
}

Status BuildExamples(std::vector<Example>* out) {
  out->clear();
  out->push_back(Seed002());
  out->push_back(Seed004());
  out->push_back(Seed000());
  out->push_back(Translation());
  out->push_back(CausalSelfAttention());
  out->push_back(Lazy("multihead", "Multi-head: 2 layers x 4 heads",
                      "Two layers of 4-head self-attention (torch nn.MultiheadAttention layout, fixed random weights; "
                      "layer 1 is causal). Open the grid to compare heads and sort them by entropy or diagonality.",
                      BuildMultiHead));
  out->push_back(Lazy("big4096", "Performance: one 4096 x 4096 map",
                      "Random scaled-dot attention over 4096 tokens (d = 64), 16.7 million cells: zoom with the wheel, "
                      "drag to pan, and watch the frame-time readout.",
                      BuildBig4096));
  out->push_back(Lazy("grid144", "Performance: 12 x 12 heads of 256 x 256",
                      "144 random attention maps of 256 x 256 (12 layers x 12 heads), for the grid view.",
                      BuildGrid144));
  for (Example& ex : *out) {
    Status st = RecomputeExample(&ex);
    if (!st) return st;
  }
  return Status::Ok();
}

void EnsureScoreParams(AttentionParams* p, const MatrixRM& q, const MatrixRM& k) {
  const int d_q = (int)q.cols(), d_k = (int)k.cols();
  // Identity-ish projections, scaled so tanh (additive) is not saturated by large inputs.
  const float sq = 1.0f / std::max(1.0f, q.size() ? q.cwiseAbs().maxCoeff() : 1.0f);
  const float sk = 1.0f / std::max(1.0f, k.size() ? k.cwiseAbs().maxCoeff() : 1.0f);
  if (p->score == ScoreFunction::General && (p->W.rows() != d_q || p->W.cols() != d_k))
    p->W = MatrixRM::Identity(d_q, d_k);
  if (p->score == ScoreFunction::Additive) {
    const int a = (int)p->W_q.rows();
    const bool ok = a > 0 && p->W_q.cols() == d_q && p->W_k.rows() == a && p->W_k.cols() == d_k && p->v.size() == a &&
                    (p->b.size() == 0 || p->b.size() == a);
    if (!ok) {
      const int n = std::max(d_q, d_k);
      p->W_q = MatrixRM::Identity(n, d_q) * sq;
      p->W_k = MatrixRM::Identity(n, d_k) * sk;
      p->v = VectorF::Ones(n);
      p->b.resize(0);
    }
  }
}

const std::vector<std::string>& TokenList::Empty() {
  static const std::vector<std::string> kEmpty;  // immutable, shared
  return kEmpty;
}

const char* StepNoun(const Example& ex) {
  return ex.kind == "self" ? "rows" : "decoded";
}

void Example::LayerHeadOf(int map, int* layer, int* head) const {
  if (layer_first_map.empty()) {
    *layer = map / std::max(1, heads);
    *head = map % std::max(1, heads);
    return;
  }
  const auto it = std::upper_bound(layer_first_map.begin(), layer_first_map.end(), map);
  *layer = std::max(0, (int)(it - layer_first_map.begin()) - 1);
  *head = map - layer_first_map[(size_t)*layer];
}

int Example::MapOf(int layer, int head) const {
  const int n = (int)maps.size();
  if (n == 0) return 0;
  if (layer_first_map.empty()) return std::clamp(layer * std::max(1, heads) + head, 0, n - 1);
  layer = std::clamp(layer, 0, (int)layer_first_map.size() - 1);
  const int first = layer_first_map[(size_t)layer];
  const int last = layer + 1 < (int)layer_first_map.size() ? layer_first_map[(size_t)layer + 1] - 1 : n - 1;
  return std::clamp(first + head, first, last);
}

}  // namespace attnviz
