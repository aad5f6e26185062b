// attnviz seq2seq: parameters, initialization, batches and the forward passes of the three
// models (see model.h). Backward passes live with the operations in tape.cpp.
#include "core/seq2seq/model.h"

#include <algorithm>
#include <cmath>

#include "core/seq2seq/model_internal.h"
#include "core/seq2seq/rng.h"

namespace attnviz {
namespace seq2seq {

const char* ModelKindName(ModelKind k) {
  switch (k) {
    case ModelKind::Bahdanau:
      return "bahdanau";
    case ModelKind::Luong:
      return "luong";
    case ModelKind::Transformer:
      return "transformer";
  }
  return "?";
}

bool ParseModelKind(const std::string& name, ModelKind* out) {
  for (ModelKind k : {ModelKind::Bahdanau, ModelKind::Luong, ModelKind::Transformer})
    if (name == ModelKindName(k)) return *out = k, true;
  return false;
}

ModelConfig DefaultConfig(ModelKind kind, Task task) {
  ModelConfig c;
  c.kind = kind;
  c.task = task;
  // 2 * 32 == dec_hidden, so "dot" also fits. (48 / 96 learned no faster on en-fr: 67% vs 78% exact match at epoch 7.)
  if (kind == ModelKind::Luong) c.enc_hidden = 32;
  // Decoder layer 2, head 1 follows the gold alignment: the last layer's heads already lean towards
  // alignments without supervision (AER 7-12% against 28-56% in layer 1).
  if (kind == ModelKind::Transformer) c.align_layer = c.dec_layers - 1, c.align_head = 0;
  return c;
}

bool HasSupervisedHead(const ModelConfig& c) {
  return c.kind == ModelKind::Transformer && c.align_layer >= 0 && c.align_head >= 0;
}

Status ValidateConfig(const ModelConfig& c) {
  auto in = [](int v, int lo, int hi) { return v >= lo && v <= hi; };
  if (!in(static_cast<int>(c.kind), 0, 2)) return Status::Error("model: unknown kind");
  if (!in(static_cast<int>(c.task), 0, kNumTasks - 1)) return Status::Error("model: unknown task");
  if (!in(c.emb, 1, 1024) || !in(c.enc_hidden, 1, 1024) || !in(c.dec_hidden, 1, 1024) || !in(c.attn, 1, 1024))
    return Status::Error("model: RNN sizes must be in [1, 1024]");
  if (!in(static_cast<int>(c.luong_score), 0, 1)) return Status::Error("model: unknown Luong score");
  if (c.kind == ModelKind::Luong && c.luong_score == LuongScore::Dot && c.dec_hidden != 2 * c.enc_hidden)
    return Status::Error("model: Luong dot attention needs dec_hidden == 2 * enc_hidden");
  if (!in(c.d_model, 1, 1024) || !in(c.heads, 1, 64) || !in(c.ff, 1, 4096) || !in(c.enc_layers, 1, 12) ||
      !in(c.dec_layers, 1, 12))
    return Status::Error("model: Transformer sizes out of range");
  if (c.d_model % c.heads != 0) return Status::Error("model: heads must divide d_model");
  const bool none = c.align_layer == -1 && c.align_head == -1;
  if (!none &&
      !(c.kind == ModelKind::Transformer && in(c.align_layer, 0, c.dec_layers - 1) && in(c.align_head, 0, c.heads - 1)))
    return Status::Error("model: the supervised head must be a Transformer decoder layer's head (or -1, -1)");
  return Status::Ok();
}

const Parameter* Model::Find(const std::string& name) const {
  for (const Parameter& p : params)
    if (p.name == name) return &p;
  return nullptr;
}
Parameter* Model::Find(const std::string& name) {
  for (Parameter& p : params)
    if (p.name == name) return &p;
  return nullptr;
}
int64_t Model::NumWeights() const {
  int64_t n = 0;
  for (const Parameter& p : params) n += p.value.size();
  return n;
}

// ---------------------------------------------------------------------------
// Parameter layout (the order is part of the file format only through names)
// ---------------------------------------------------------------------------
namespace {

enum class Init { Xavier, Zero, One, Embedding };
struct Shape {
  std::string name;
  int rows, cols;
  Init init;
};

void AddGru(std::vector<Shape>* s, const std::string& p, int in, int h) {
  s->push_back({p + ".Wx", in, 3 * h, Init::Xavier});
  s->push_back({p + ".Wh", h, 3 * h, Init::Xavier});
  s->push_back({p + ".bx", 1, 3 * h, Init::Zero});
  s->push_back({p + ".bh", 1, 3 * h, Init::Zero});
}
void AddLinear(std::vector<Shape>* s, const std::string& p, int in, int out) {
  s->push_back({p + ".W", in, out, Init::Xavier});
  s->push_back({p + ".b", 1, out, Init::Zero});
}
void AddNorm(std::vector<Shape>* s, const std::string& p, int d) {
  s->push_back({p + ".g", 1, d, Init::One});
  s->push_back({p + ".b", 1, d, Init::Zero});
}
void AddAttention(std::vector<Shape>* s, const std::string& p, int d) {
  for (const char* w : {".q", ".k", ".v", ".o"}) AddLinear(s, p + w, d, d);
}

std::vector<Shape> Layout(const ModelConfig& c, int vs, int vt) {
  std::vector<Shape> s;
  if (c.kind == ModelKind::Transformer) {
    const int d = c.d_model;
    s.push_back({"src_emb", vs, d, Init::Embedding});
    s.push_back({"tgt_emb", vt, d, Init::Embedding});
    for (int l = 0; l < c.enc_layers; ++l) {
      const std::string p = "enc" + std::to_string(l);
      AddNorm(&s, p + ".ln1", d);
      AddAttention(&s, p + ".self", d);
      AddNorm(&s, p + ".ln2", d);
      AddLinear(&s, p + ".ff1", d, c.ff);
      AddLinear(&s, p + ".ff2", c.ff, d);
    }
    AddNorm(&s, "enc.ln", d);
    for (int l = 0; l < c.dec_layers; ++l) {
      const std::string p = "dec" + std::to_string(l);
      AddNorm(&s, p + ".ln1", d);
      AddAttention(&s, p + ".self", d);
      AddNorm(&s, p + ".ln2", d);
      AddAttention(&s, p + ".cross", d);
      AddNorm(&s, p + ".ln3", d);
      AddLinear(&s, p + ".ff1", d, c.ff);
      AddLinear(&s, p + ".ff2", c.ff, d);
    }
    AddNorm(&s, "dec.ln", d);
    AddLinear(&s, "out", d, vt);
    return s;
  }
  const int e2 = 2 * c.enc_hidden, dh = c.dec_hidden;
  s.push_back({"src_emb", vs, c.emb, Init::Xavier});
  s.push_back({"tgt_emb", vt, c.emb, Init::Xavier});
  AddGru(&s, "enc.fwd", c.emb, c.enc_hidden);
  AddGru(&s, "enc.bwd", c.emb, c.enc_hidden);
  AddLinear(&s, "init", e2, dh);
  if (c.kind == ModelKind::Bahdanau) {
    AddGru(&s, "dec", c.emb + e2, dh);
    s.push_back({"att.Wk", e2, c.attn, Init::Xavier});
    s.push_back({"att.Wq", dh, c.attn, Init::Xavier});
    s.push_back({"att.v", 1, c.attn, Init::Xavier});
    AddLinear(&s, "out", dh + e2 + c.emb, vt);
  } else {
    AddGru(&s, "dec", c.emb + dh, dh);
    if (c.luong_score == LuongScore::General) s.push_back({"att.Wa", e2, dh, Init::Xavier});
    AddLinear(&s, "comb", e2 + dh, dh);
    AddLinear(&s, "out", dh, vt);
  }
  return s;
}

}  // namespace

int64_t CountWeights(const ModelConfig& config, int source_vocab_size, int target_vocab_size) {
  int64_t n = 0;
  for (const Shape& s : Layout(config, source_vocab_size, target_vocab_size))
    n += static_cast<int64_t>(s.rows) * s.cols;
  return n;
}

Status InitModel(const ModelConfig& config, const Vocab& source_vocab, const Vocab& target_vocab, uint64_t seed,
                 Model* out) {
  Status st = ValidateConfig(config);
  if (!st) return st;
  Model m;
  m.config = config;
  m.source_vocab = source_vocab;
  m.target_vocab = target_vocab;
  Rng rng(seed);
  for (const Shape& s : Layout(config, source_vocab.Size(), target_vocab.Size())) {
    Parameter p;
    p.name = s.name;
    p.value.resize(s.rows, s.cols);
    const Real a = s.init == Init::Embedding ? 1.0f : std::sqrt(6.0f / static_cast<Real>(s.rows + s.cols));
    for (int i = 0; i < s.rows; ++i)
      for (int j = 0; j < s.cols; ++j)
        p.value(i, j) = s.init == Init::Zero ? 0.0f : s.init == Init::One ? 1.0f : rng.Symmetric(a);
    m.params.push_back(std::move(p));
  }
  *out = std::move(m);
  return Status::Ok();
}

Batch BuildBatch(const Model& m, const std::vector<const SentencePair*>& pairs) {
  Batch b;
  b.size = static_cast<int>(pairs.size());
  for (const SentencePair* p : pairs) {
    b.source.push_back(m.source_vocab.Encode(p->source));
    b.target.push_back(m.target_vocab.Encode(p->target));
    b.links.push_back(p->links);
  }
  return b;
}

// ---------------------------------------------------------------------------
// RNN models (Bahdanau, Luong)
// ---------------------------------------------------------------------------
namespace {

struct RnnParams {
  const Parameter *src_emb, *tgt_emb, *init_W, *init_b;
  const Parameter* enc[2][4];  // [fwd, bwd][Wx, Wh, bx, bh]
  const Parameter* dec[4];
  const Parameter *Wk = nullptr, *Wq = nullptr, *v = nullptr, *Wa = nullptr, *Wc = nullptr, *bc = nullptr;
  const Parameter *out_W, *out_b;
  explicit RnnParams(const Model& m) {
    src_emb = m.Find("src_emb"), tgt_emb = m.Find("tgt_emb");
    init_W = m.Find("init.W"), init_b = m.Find("init.b");
    const char* dirs[2] = {"enc.fwd", "enc.bwd"};
    const char* parts[4] = {".Wx", ".Wh", ".bx", ".bh"};
    for (int d = 0; d < 2; ++d)
      for (int k = 0; k < 4; ++k) enc[d][k] = m.Find(std::string(dirs[d]) + parts[k]);
    for (int k = 0; k < 4; ++k) dec[k] = m.Find(std::string("dec") + parts[k]);
    Wk = m.Find("att.Wk"), Wq = m.Find("att.Wq"), v = m.Find("att.v"), Wa = m.Find("att.Wa");
    Wc = m.Find("comb.W"), bc = m.Find("comb.b");
    out_W = m.Find("out.W"), out_b = m.Find("out.b");
  }
};

struct RnnEncoded {
  Tape::Id H = -1, keys = -1, s0 = -1;
  std::vector<int> lengths;
  int B = 0, T = 0;
};

RnnEncoded RnnEncode(const Model& m, const RnnParams& P, Tape* tape, const std::vector<std::vector<int>>& source) {
  RnnEncoded e;
  e.B = static_cast<int>(source.size());
  for (const auto& s : source) e.lengths.push_back(static_cast<int>(s.size())), e.T = std::max(e.T, e.lengths.back());
  const int B = e.B, T = e.T, E = m.config.enc_hidden;
  std::vector<int> ids(T * B, kPad);  // time-major
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < e.lengths[b]; ++t) ids[t * B + b] = source[b][t];
  const Tape::Id X = tape->Gather(P.src_emb, ids);  // [T * B, emb]
  std::vector<Tape::Id> states[2];
  Tape::Id last[2];
  for (int d = 0; d < 2; ++d) {
    const auto& W = P.enc[d];
    const Tape::Id GX = tape->AddBias(tape->MatMul(X, tape->Param(W[0])), tape->Param(W[2]));  // [T * B, 3E]
    const Tape::Id Wh = tape->Param(W[1]), bh = tape->Param(W[3]);
    Tape::Id h = tape->Constant(Mat::Zero(B, E));
    states[d].assign(T, -1);
    std::vector<int> valid(B);
    for (int k = 0; k < T; ++k) {
      const int t = d == 0 ? k : T - 1 - k;
      for (int b = 0; b < B; ++b) valid[b] = t < e.lengths[b] ? 1 : 0;
      const Tape::Id gh = tape->AddBias(tape->MatMul(h, Wh), bh);
      h = tape->Gru(tape->RowBlock(GX, t * B, B), gh, h, &valid);
      states[d][t] = h;
    }
    last[d] = h;  // fwd: state after each sentence's last word (padding steps are skipped); bwd: state at t = 0
  }
  std::vector<Tape::Id> rows(T);
  for (int t = 0; t < T; ++t) rows[t] = tape->ConcatCols({states[0][t], states[1][t]});
  e.H = tape->StackRows(rows);  // [T * B, 2E]
  e.s0 = tape->Tanh(
      tape->AddBias(tape->MatMul(tape->ConcatCols({last[0], last[1]}), tape->Param(P.init_W)), tape->Param(P.init_b)));
  if (m.config.kind == ModelKind::Bahdanau)
    e.keys = tape->MatMul(e.H, tape->Param(P.Wk));
  else
    e.keys = m.config.luong_score == LuongScore::General ? tape->MatMul(e.H, tape->Param(P.Wa)) : e.H;
  return e;
}

struct RnnStepResult {
  Tape::Id state, feed, features, alpha;
};

// One decoder step for B rows: prev [B] previous tokens; returns the new state and the features
// that the output layer maps to logits.
RnnStepResult RnnStep(const Model& m, const RnnParams& P, Tape* tape, Tape::Id H, Tape::Id keys,
                      const std::vector<int>& lengths, const std::vector<int>& prev, Tape::Id state, Tape::Id feed) {
  RnnStepResult r;
  const Tape::Id y = tape->Gather(P.tgt_emb, prev);  // [B, emb]
  auto gru = [&](Tape::Id x, Tape::Id h) {
    const Tape::Id gx = tape->AddBias(tape->MatMul(x, tape->Param(P.dec[0])), tape->Param(P.dec[2]));
    const Tape::Id gh = tape->AddBias(tape->MatMul(h, tape->Param(P.dec[1])), tape->Param(P.dec[3]));
    return tape->Gru(gx, gh, h);
  };
  if (m.config.kind == ModelKind::Bahdanau) {
    const Tape::Id qp = tape->MatMul(state, tape->Param(P.Wq));
    r.alpha = tape->MaskedSoftmax(tape->AdditiveScores(keys, qp, tape->Param(P.v)), lengths);
    const Tape::Id c = tape->Context(r.alpha, H);
    r.state = gru(tape->ConcatCols({y, c}), state);
    r.feed = -1;
    r.features = tape->ConcatCols({r.state, c, y});
  } else {
    r.state = gru(tape->ConcatCols({y, feed}), state);
    r.alpha = tape->MaskedSoftmax(tape->DotScores(keys, r.state), lengths);
    const Tape::Id c = tape->Context(r.alpha, H);
    r.feed =
        tape->Tanh(tape->AddBias(tape->MatMul(tape->ConcatCols({c, r.state}), tape->Param(P.Wc)), tape->Param(P.bc)));
    r.features = r.feed;
  }
  return r;
}

Tape::Id OutputLogits(Tape* tape, const Parameter* W, const Parameter* b, Tape::Id features) {
  return tape->AddBias(tape->MatMul(features, tape->Param(W)), tape->Param(b));
}

Tape::Id RnnTeacherForced(const Model& m, Tape* tape, const Batch& batch, BatchAttention* attention,
                          float align_weight) {
  const RnnParams P(m);
  const RnnEncoded e = RnnEncode(m, P, tape, batch.source);
  const int B = e.B;
  int Tt = 0;
  for (const auto& t : batch.target) Tt = std::max(Tt, static_cast<int>(t.size()) + 1);
  Tape::Id state = e.s0;
  Tape::Id feed = m.config.kind == ModelKind::Luong ? tape->Constant(Mat::Zero(B, m.config.dec_hidden)) : -1;
  std::vector<Tape::Id> features(Tt), alphas(Tt);
  std::vector<int> prev(B), targets(Tt * B, -1);
  for (int t = 0; t < Tt; ++t) {
    for (int b = 0; b < B; ++b) {
      const int len = static_cast<int>(batch.target[b].size());
      prev[b] = t == 0 ? kBos : (t - 1 < len ? batch.target[b][t - 1] : kPad);
      targets[t * B + b] = t < len ? batch.target[b][t] : (t == len ? kEos : -1);
    }
    const RnnStepResult r = RnnStep(m, P, tape, e.H, e.keys, e.lengths, prev, state, feed);
    state = r.state, feed = r.feed, features[t] = r.features, alphas[t] = r.alpha;
  }
  // The output layer (the largest product) only on the rows that have a target: padding rows
  // would be ignored by the loss anyway.
  Tape::Id stacked = tape->StackRows(features);  // [Tt * B, F]
  std::vector<int> rows_with_target;
  for (int i = 0; i < Tt * B; ++i)
    if (targets[i] >= 0) rows_with_target.push_back(i);
  if (static_cast<int>(rows_with_target.size()) < Tt * B) {
    stacked = tape->SelectRows(stacked, rows_with_target);
    std::vector<int> kept;
    for (int i : rows_with_target) kept.push_back(targets[i]);
    targets.swap(kept);
  }
  const Tape::Id logits = OutputLogits(tape, P.out_W, P.out_b, stacked);  // [rows with a target, V]
  if (attention) {
    attention->assign(B, Mat());
    for (int b = 0; b < B; ++b) {
      const int rows = static_cast<int>(batch.target[b].size()) + 1;
      (*attention)[b].resize(rows, e.lengths[b]);
      for (int t = 0; t < rows; ++t) (*attention)[b].row(t) = tape->Value(alphas[t]).row(b).head(e.lengths[b]);
    }
  }
  const Tape::Id loss = tape->CrossEntropy(logits, targets);
  if (!(align_weight > 0.0f) || batch.links.empty()) return loss;
  // Guided alignment: the attention of every step, stacked [Tt * B, n_s] (row t * B + b), is pulled
  // towards the gold links with the loss the Transformer's supervised head uses.
  int rows = 0;
  const std::vector<AttentionTarget> gold = internal::GoldAttentionTargets(batch, 1, B, 0, &rows);
  if (rows == 0) return loss;
  return tape->Add(loss, tape->AttentionSupervision(tape->StackRows(alphas), gold,
                                                    static_cast<Real>(align_weight) / static_cast<Real>(rows)));
}

void RnnGreedy(const Model& m, Tape* tape, const Batch& batch, int max_len, std::vector<std::vector<int>>* out) {
  const RnnParams P(m);
  tape->Clear();
  const RnnEncoded e = RnnEncode(m, P, tape, batch.source);
  const int B = e.B;
  Tape::Id state = e.s0;
  Tape::Id feed = m.config.kind == ModelKind::Luong ? tape->Constant(Mat::Zero(B, m.config.dec_hidden)) : -1;
  out->assign(B, {});
  std::vector<int> prev(B, kBos);
  std::vector<uint8_t> done(B, 0);
  for (int t = 0; t < max_len; ++t) {
    const RnnStepResult r = RnnStep(m, P, tape, e.H, e.keys, e.lengths, prev, state, feed);
    state = r.state, feed = r.feed;
    const Tape::Id logits = OutputLogits(tape, P.out_W, P.out_b, r.features);
    int n_done = 0;
    for (int b = 0; b < B; ++b) {
      prev[b] = internal::ArgMax(tape->Value(logits), b);
      if (!done[b]) {
        if (prev[b] == kEos)
          done[b] = 1;
        else
          (*out)[b].push_back(prev[b]);
      }
      n_done += done[b];
    }
    if (n_done == B) break;
  }
}

}  // namespace

namespace internal {

int ArgMax(const Mat& logits, int row) {
  int best = 0;
  logits.row(row).maxCoeff(&best);
  return best;
}

std::vector<AttentionTarget> GoldAttentionTargets(const Batch& batch, int batch_stride, int step_stride, int offset,
                                                  int* rows) {
  std::vector<AttentionTarget> out;
  *rows = 0;
  for (int b = 0; b < batch.size && b < static_cast<int>(batch.links.size()); ++b) {
    const int n_t = static_cast<int>(batch.target[b].size()), n_s = static_cast<int>(batch.source[b].size());
    std::vector<int> sure(n_t, 0);
    auto valid = [&](const Link& l) {
      return l.sure && l.target >= 0 && l.target < n_t && l.source >= 0 && l.source < n_s;
    };
    for (const Link& l : batch.links[b])
      if (valid(l)) ++sure[l.target];
    for (int i = 0; i < n_t; ++i) *rows += sure[i] > 0;
    for (const Link& l : batch.links[b])
      if (valid(l))
        out.push_back({b * batch_stride + l.target * step_stride + offset, l.source,
                       static_cast<Real>(1) / static_cast<Real>(sure[l.target])});
  }
  return out;
}

void LogSoftmaxRow(const Mat& logits, int row, RowVec* out) {
  const Real mx = logits.row(row).maxCoeff();
  const Real lse = mx + std::log((logits.row(row).array() - mx).exp().sum());
  *out = (logits.row(row).array() - lse).matrix();
}

}  // namespace internal

// ---------------------------------------------------------------------------
// dispatch
// ---------------------------------------------------------------------------
Tape::Id ForwardTeacherForced(const Model& m, Tape* tape, const Batch& batch, BatchAttention* attention,
                              float align_weight) {
  tape->Clear();
  return m.config.kind == ModelKind::Transformer
             ? internal::TransformerTeacherForced(m, tape, batch, attention, align_weight)
             : RnnTeacherForced(m, tape, batch, attention, align_weight);
}

void GreedyDecodeBatch(const Model& m, Tape* tape, const Batch& batch, int max_len,
                       std::vector<std::vector<int>>* out) {
  if (m.config.kind == ModelKind::Transformer)
    internal::TransformerGreedy(m, tape, batch, max_len, out);
  else
    RnnGreedy(m, tape, batch, max_len, out);
}

Status EncodeSource(const Model& m, const std::vector<int>& source_ids, Tape* tape, EncodedSource* out) {
  if (source_ids.empty()) return Status::Error("translate: empty source sentence");
  for (int id : source_ids)
    if (id < 0 || id >= m.source_vocab.Size()) return Status::Error("translate: source id out of range");
  tape->Clear();
  EncodedSource e;
  e.n_source = static_cast<int>(source_ids.size());
  if (m.config.kind == ModelKind::Transformer) {
    e.memory = internal::TransformerEncode(m, source_ids, tape);
  } else {
    const RnnParams P(m);
    const RnnEncoded r = RnnEncode(m, P, tape, {source_ids});
    e.memory = tape->Value(r.H);
    e.keys = tape->Value(r.keys);
    e.initial = tape->Value(r.s0);
  }
  *out = std::move(e);
  return Status::Ok();
}

DecoderState InitialDecoderState(const Model& m, const EncodedSource& enc) {
  DecoderState s;
  s.prefix = {kBos};
  if (m.config.kind != ModelKind::Transformer) {
    s.hidden = enc.initial;
    if (m.config.kind == ModelKind::Luong) s.feed = Mat::Zero(1, m.config.dec_hidden);
  }
  return s;
}

void StepDecoder(const Model& m, const EncodedSource& enc, DecoderState* state, Tape* tape, StepOutput* out) {
  tape->Clear();
  out->attention.clear();
  if (m.config.kind == ModelKind::Transformer) {
    internal::TransformerStep(m, enc, *state, tape, out);
    return;
  }
  const RnnParams P(m);
  const Tape::Id H = tape->Constant(enc.memory);
  const Tape::Id keys = tape->Constant(enc.keys);
  const Tape::Id feed = m.config.kind == ModelKind::Luong ? tape->Constant(state->feed) : -1;
  const RnnStepResult r =
      RnnStep(m, P, tape, H, keys, {enc.n_source}, {state->prefix.back()}, tape->Constant(state->hidden), feed);
  const Tape::Id logits = OutputLogits(tape, P.out_W, P.out_b, r.features);
  internal::LogSoftmaxRow(tape->Value(logits), 0, &out->log_probs);
  out->attention.push_back(tape->Value(r.alpha));
  state->hidden = tape->Value(r.state);
  if (r.feed >= 0) state->feed = tape->Value(r.feed);
}

}  // namespace seq2seq
}  // namespace attnviz
