// attnviz seq2seq: the Transformer's forward passes (see model.h). Backward passes live with the
// operations in tape.cpp.
//   encoder layer: x += SelfAttention(LN(x)); x += FFN(LN(x))        (pre-layer-norm)
//   decoder layer: x += CausalSelfAttention(LN(x)); x += CrossAttention(LN(x), memory); x += FFN(LN(x))
#include <algorithm>
#include <cmath>

#include "core/seq2seq/model_internal.h"

namespace attnviz {
namespace seq2seq {
namespace internal {

namespace {

// ---------------------------------------------------------------------------
// Transformer
// ---------------------------------------------------------------------------
struct Linear {
  const Parameter *W, *b;
};
struct Norm {
  const Parameter *g, *b;
};
struct AttentionP {
  Linear q, k, v, o;
};
struct TfLayer {
  Norm ln1, ln2, ln3;
  AttentionP self, cross;
  Linear ff1, ff2;
};
struct TfParams {
  const Parameter *src_emb, *tgt_emb;
  std::vector<TfLayer> enc, dec;
  Norm enc_ln, dec_ln;
  Linear out;
  explicit TfParams(const Model& m) {
    auto lin = [&](const std::string& p) { return Linear{m.Find(p + ".W"), m.Find(p + ".b")}; };
    auto norm = [&](const std::string& p) { return Norm{m.Find(p + ".g"), m.Find(p + ".b")}; };
    auto att = [&](const std::string& p) {
      return AttentionP{lin(p + ".q"), lin(p + ".k"), lin(p + ".v"), lin(p + ".o")};
    };
    src_emb = m.Find("src_emb"), tgt_emb = m.Find("tgt_emb");
    for (int l = 0; l < m.config.enc_layers; ++l) {
      const std::string p = "enc" + std::to_string(l);
      TfLayer L;
      L.ln1 = norm(p + ".ln1"), L.self = att(p + ".self"), L.ln2 = norm(p + ".ln2");
      L.ff1 = lin(p + ".ff1"), L.ff2 = lin(p + ".ff2");
      enc.push_back(L);
    }
    for (int l = 0; l < m.config.dec_layers; ++l) {
      const std::string p = "dec" + std::to_string(l);
      TfLayer L;
      L.ln1 = norm(p + ".ln1"), L.self = att(p + ".self"), L.ln2 = norm(p + ".ln2"), L.cross = att(p + ".cross");
      L.ln3 = norm(p + ".ln3"), L.ff1 = lin(p + ".ff1"), L.ff2 = lin(p + ".ff2");
      dec.push_back(L);
    }
    enc_ln = norm("enc.ln"), dec_ln = norm("dec.ln");
    out = lin("out");
  }
};

Tape::Id Dense(Tape* tape, const Linear& l, Tape::Id x) {
  return tape->AddBias(tape->MatMul(x, tape->Param(l.W)), tape->Param(l.b));
}
Tape::Id ApplyNorm(Tape* tape, const Norm& n, Tape::Id x) {
  return tape->LayerNorm(x, tape->Param(n.g), tape->Param(n.b));
}

// Sinusoidal positions tiled over the batch: [B * n, d], row b * n + i gets position i.
Mat Positions(int B, int n, int d) {
  Mat pe(B * n, d);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < d; ++j) {
      const double angle = i / std::pow(10000.0, (2 * (j / 2)) / static_cast<double>(d));
      pe(i, j) = static_cast<Real>(j % 2 == 0 ? std::sin(angle) : std::cos(angle));
    }
  for (int b = 1; b < B; ++b) pe.middleRows(b * n, n) = pe.topRows(n);
  return pe;
}

Tape::Id Embed(Tape* tape, const Parameter* table, const std::vector<std::vector<int>>& seqs, int n, int d) {
  const int B = static_cast<int>(seqs.size());
  std::vector<int> ids(B * n, kPad);
  for (int b = 0; b < B; ++b)
    for (int i = 0; i < static_cast<int>(seqs[b].size()) && i < n; ++i) ids[b * n + i] = seqs[b][i];
  return tape->Add(tape->Gather(table, ids), tape->Constant(Positions(B, n, d)));
}

Tape::Id AttentionBlock(Tape* tape, const AttentionP& a, Tape::Id x, Tape::Id memory, int B, int heads,
                        const std::vector<int>& key_lengths, bool causal, Tape::Id* probs_node) {
  const Tape::Id q = Dense(tape, a.q, x), k = Dense(tape, a.k, memory), v = Dense(tape, a.v, memory);
  const Tape::Id att = tape->MultiHeadAttention(q, k, v, B, heads, key_lengths, causal);
  if (probs_node) *probs_node = att;
  return Dense(tape, a.o, att);
}

Tape::Id FeedForward(Tape* tape, const TfLayer& L, Tape::Id x) {
  return Dense(tape, L.ff2, tape->Relu(Dense(tape, L.ff1, x)));
}

// Encoder: returns memory [B * n_s, d] (batch-major) and fills lengths.
Tape::Id TfEncode(const Model& m, const TfParams& P, Tape* tape, const std::vector<std::vector<int>>& source,
                  std::vector<int>* lengths, int* n_s) {
  const int B = static_cast<int>(source.size()), d = m.config.d_model;
  lengths->clear();
  *n_s = 0;
  for (const auto& s : source) lengths->push_back(static_cast<int>(s.size())), *n_s = std::max(*n_s, lengths->back());
  Tape::Id x = Embed(tape, P.src_emb, source, *n_s, d);
  for (const TfLayer& L : P.enc) {
    const Tape::Id h = ApplyNorm(tape, L.ln1, x);
    x = tape->Add(x, AttentionBlock(tape, L.self, h, h, B, m.config.heads, *lengths, false, nullptr));
    x = tape->Add(x, FeedForward(tape, L, ApplyNorm(tape, L.ln2, x)));
  }
  return ApplyNorm(tape, P.enc_ln, x);
}

// Decoder over inputs [B][n] (BOS-first prefixes, padded to n): features [B * n, d]; cross[l] = MHA node of layer l.
Tape::Id TfDecode(const Model& m, const TfParams& P, Tape* tape, Tape::Id memory, const std::vector<int>& src_lengths,
                  const std::vector<std::vector<int>>& inputs, int n, std::vector<Tape::Id>* cross) {
  const int B = static_cast<int>(inputs.size()), d = m.config.d_model;
  const std::vector<int> self_lengths(B, n);  // causal masking hides later (and padded) positions
  Tape::Id x = Embed(tape, P.tgt_emb, inputs, n, d);
  cross->clear();
  for (const TfLayer& L : P.dec) {
    const Tape::Id h = ApplyNorm(tape, L.ln1, x);
    x = tape->Add(x, AttentionBlock(tape, L.self, h, h, B, m.config.heads, self_lengths, true, nullptr));
    Tape::Id probs = -1;
    x = tape->Add(x, AttentionBlock(tape, L.cross, ApplyNorm(tape, L.ln2, x), memory, B, m.config.heads, src_lengths,
                                    false, &probs));
    cross->push_back(probs);
    x = tape->Add(x, FeedForward(tape, L, ApplyNorm(tape, L.ln3, x)));
  }
  return ApplyNorm(tape, P.dec_ln, x);
}

}  // namespace

Tape::Id TransformerTeacherForced(const Model& m, Tape* tape, const Batch& batch, BatchAttention* attention,
                                  float align_weight) {
  const TfParams P(m);
  std::vector<int> lengths;
  int n_s = 0;
  const Tape::Id memory = TfEncode(m, P, tape, batch.source, &lengths, &n_s);
  const int B = batch.size;
  int n = 0;
  for (const auto& t : batch.target) n = std::max(n, static_cast<int>(t.size()) + 1);
  std::vector<std::vector<int>> inputs(B);
  std::vector<int> targets(B * n, -1);
  for (int b = 0; b < B; ++b) {
    const auto& t = batch.target[b];
    inputs[b].push_back(kBos);
    inputs[b].insert(inputs[b].end(), t.begin(), t.end());
    for (int i = 0; i <= static_cast<int>(t.size()); ++i)
      targets[b * n + i] = i < static_cast<int>(t.size()) ? t[i] : kEos;
  }
  std::vector<Tape::Id> cross;
  const Tape::Id features = TfDecode(m, P, tape, memory, lengths, inputs, n, &cross);
  const Tape::Id logits = Dense(tape, P.out, features);
  if (attention) {
    const int H = m.config.heads;
    const Real w = 1.0f / static_cast<Real>(H * cross.size());
    attention->assign(B, Mat());
    for (int b = 0; b < B; ++b) {
      const int rows = static_cast<int>(batch.target[b].size()) + 1;
      Mat& a = (*attention)[b];
      a.setZero(rows, lengths[b]);
      for (Tape::Id c : cross)
        for (int h = 0; h < H; ++h) a += w * tape->Saved(c).block((b * H + h) * n, 0, rows, lengths[b]);
    }
  }
  const Tape::Id loss = tape->CrossEntropy(logits, targets);
  if (!(align_weight > 0.0f) || !HasSupervisedHead(m.config) || batch.links.empty()) return loss;
  int rows = 0;
  // the head's probabilities: row (b * heads + head) * n + i
  const std::vector<AttentionTarget> gold =
      GoldAttentionTargets(batch, m.config.heads * n, 1, m.config.align_head * n, &rows);
  if (rows == 0) return loss;
  return tape->Add(loss, tape->AttentionSupervision(cross[m.config.align_layer], gold,
                                                    static_cast<Real>(align_weight) / static_cast<Real>(rows)));
}

void TransformerGreedy(const Model& m, Tape* tape, const Batch& batch, int max_len,
                       std::vector<std::vector<int>>* out) {
  const TfParams P(m);
  tape->Clear();
  std::vector<int> lengths;
  int n_s = 0;
  const Mat memory = tape->Value(TfEncode(m, P, tape, batch.source, &lengths, &n_s));
  const int B = batch.size;
  std::vector<std::vector<int>> inputs(B, std::vector<int>{kBos});
  out->assign(B, {});
  std::vector<uint8_t> done(B, 0);
  std::vector<Tape::Id> cross;
  for (int t = 0; t < max_len; ++t) {
    tape->Clear();
    const int n = t + 1;
    const Tape::Id logits =
        Dense(tape, P.out, TfDecode(m, P, tape, tape->Constant(memory), lengths, inputs, n, &cross));
    int n_done = 0;
    for (int b = 0; b < B; ++b) {
      const int next = ArgMax(tape->Value(logits), b * n + t);
      inputs[b].push_back(next);
      if (!done[b]) {
        if (next == kEos)
          done[b] = 1;
        else
          (*out)[b].push_back(next);
      }
      n_done += done[b];
    }
    if (n_done == B) break;
  }
}

Mat TransformerEncode(const Model& m, const std::vector<int>& source_ids, Tape* tape) {
  const TfParams P(m);
  std::vector<int> lengths;
  int n_s = 0;
  return tape->Value(TfEncode(m, P, tape, {source_ids}, &lengths, &n_s));
}

void TransformerStep(const Model& m, const EncodedSource& enc, const DecoderState& state, Tape* tape, StepOutput* out) {
  const TfParams P(m);
  const int n = static_cast<int>(state.prefix.size()), H = m.config.heads;
  std::vector<Tape::Id> cross;
  const Tape::Id logits =
      Dense(tape, P.out, TfDecode(m, P, tape, tape->Constant(enc.memory), {enc.n_source}, {state.prefix}, n, &cross));
  LogSoftmaxRow(tape->Value(logits), n - 1, &out->log_probs);
  for (Tape::Id c : cross) {
    Mat rows(H, enc.n_source);
    for (int h = 0; h < H; ++h) rows.row(h) = tape->Saved(c).row(h * n + n - 1);
    out->attention.push_back(std::move(rows));
  }
}

}  // namespace internal
}  // namespace seq2seq
}  // namespace attnviz
