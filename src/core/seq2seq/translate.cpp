// attnviz seq2seq: greedy, beam and incremental decoding (see translate.h).
#include "core/seq2seq/translate.h"

#include <algorithm>
#include <cmath>

namespace attnviz {
namespace seq2seq {

namespace {

int DefaultMaxLength(int n_source) {
  return 2 * n_source + 6;
}

RowVec MeanRow(const std::vector<Mat>& layers) {
  RowVec mean = RowVec::Zero(layers[0].cols());
  int count = 0;
  for (const Mat& l : layers) mean += l.colwise().sum(), count += static_cast<int>(l.rows());
  return mean / static_cast<float>(std::max(1, count));
}

// Fills what a Translation says about the model: layer names, the supervised head.
void DescribeModel(const Model& m, Translation* t) {
  t->supervised_layer = HasSupervisedHead(m.config) ? m.config.align_layer : -1;
  t->supervised_head = HasSupervisedHead(m.config) ? m.config.align_head : -1;
}

std::vector<std::string> LayerNames(const Model& m) {
  if (m.config.kind != ModelKind::Transformer) return {"cross-attention"};
  std::vector<std::string> names;
  for (int l = 0; l < m.config.dec_layers; ++l) names.push_back("decoder layer " + std::to_string(l + 1));
  return names;
}

// Appends one step's attention (per layer [heads, n_s]) as a new row of out.
void AppendRows(const std::vector<Mat>& step, Translation* out) {
  if (out->layer_heads.empty()) {
    out->layer_heads.resize(step.size());
    for (size_t l = 0; l < step.size(); ++l) out->layer_heads[l].resize(step[l].rows());
  }
  for (size_t l = 0; l < step.size(); ++l)
    for (int h = 0; h < step[l].rows(); ++h) {
      Mat& m = out->layer_heads[l][h];
      m.conservativeResize(m.rows() + 1, step[l].cols());
      m.row(m.rows() - 1) = step[l].row(h);
    }
  out->attention.conservativeResize(out->attention.rows() + 1, step[0].cols());
  out->attention.row(out->attention.rows() - 1) = MeanRow(step);
}

struct Hypothesis {
  DecoderState state;
  std::vector<std::vector<Mat>> steps;  // per step, per layer [heads, n_s]
  float log_prob = 0;
  bool finished = false;
};

float Normalized(const Hypothesis& h, float alpha) {
  const float len = static_cast<float>(h.state.prefix.size() - 1);
  return h.log_prob / std::pow((5.0f + len) / 6.0f, alpha);
}

}  // namespace

Status TranslateTokens(const Model& m, const std::vector<std::string>& source_tokens, const TranslateOptions& options,
                       Translation* out) {
  if (source_tokens.empty()) return Status::Error("translate: the sentence is empty");
  if (options.beam_size < 1 || options.beam_size > 64) return Status::Error("translate: beam_size must be in [1, 64]");
  Translation t;
  t.source_tokens = source_tokens;
  t.unknown_positions = m.source_vocab.UnknownPositions(source_tokens);
  t.layer_names = LayerNames(m);
  DescribeModel(m, &t);
  Tape tape;
  EncodedSource enc;
  Status st = EncodeSource(m, m.source_vocab.Encode(source_tokens), &tape, &enc);
  if (!st) return st;
  const int max_len = options.max_length > 0 ? options.max_length : DefaultMaxLength(enc.n_source);
  const int K = options.beam_size;

  std::vector<Hypothesis> beam(1);
  beam[0].state = InitialDecoderState(m, enc);
  std::vector<Hypothesis> finished;
  StepOutput step;
  for (int len = 0; len <= max_len && !beam.empty(); ++len) {
    struct Candidate {
      int parent, token;
      float log_prob;
    };
    std::vector<Candidate> cands;
    std::vector<StepOutput> outputs(beam.size());
    for (size_t i = 0; i < beam.size(); ++i) {
      StepDecoder(m, enc, &beam[i].state, &tape, &outputs[i]);
      const RowVec& lp = outputs[i].log_probs;
      // the K best words of this hypothesis (kPad/kBos/kUnk are never emitted); at max_len only EOS
      std::vector<int> ids;
      for (int v = kNumSpecial - 1; v < lp.size(); ++v)
        if (v == kEos || (v >= kNumSpecial && len < max_len)) ids.push_back(v);
      const int keep = std::min<int>(K, static_cast<int>(ids.size()));
      std::partial_sort(ids.begin(), ids.begin() + keep, ids.end(), [&](int a, int b) { return lp[a] > lp[b]; });
      for (int k = 0; k < keep; ++k) cands.push_back({static_cast<int>(i), ids[k], beam[i].log_prob + lp[ids[k]]});
    }
    std::stable_sort(cands.begin(), cands.end(),
                     [](const Candidate& a, const Candidate& b) { return a.log_prob > b.log_prob; });
    std::vector<Hypothesis> next;
    for (const Candidate& c : cands) {
      if (static_cast<int>(next.size()) >= K) break;
      Hypothesis h = beam[c.parent];
      h.steps.push_back(outputs[c.parent].attention);
      h.log_prob = c.log_prob;
      h.state.prefix.push_back(c.token);
      if (c.token == kEos) {
        h.finished = true;
        if (static_cast<int>(finished.size()) < K) finished.push_back(std::move(h));
        if (K == 1) break;
      } else {
        next.push_back(std::move(h));
      }
    }
    if (static_cast<int>(finished.size()) >= K) break;
    beam = std::move(next);
  }
  if (finished.empty()) finished = std::move(beam);  // cut at max_len (cannot happen: EOS is forced)
  const auto best = std::max_element(finished.begin(), finished.end(), [&](const Hypothesis& a, const Hypothesis& b) {
    return Normalized(a, options.length_alpha) < Normalized(b, options.length_alpha);
  });
  for (size_t i = 1; i < best->state.prefix.size(); ++i) {
    const int id = best->state.prefix[i];
    if (id != kEos) t.target_ids.push_back(id), t.target_tokens.push_back(m.target_vocab.Token(id));
  }
  for (const auto& s : best->steps) AppendRows(s, &t);
  t.log_prob = best->log_prob;
  t.finished = best->finished;
  *out = std::move(t);
  return Status::Ok();
}

Status ForceDecode(const Model& m, const std::vector<std::string>& source_tokens,
                   const std::vector<std::string>& target_tokens, Translation* out) {
  if (source_tokens.empty()) return Status::Error("translate: the sentence is empty");
  Translation t;
  t.source_tokens = source_tokens;
  t.unknown_positions = m.source_vocab.UnknownPositions(source_tokens);
  t.layer_names = LayerNames(m);
  DescribeModel(m, &t);
  Tape tape;
  EncodedSource enc;
  Status st = EncodeSource(m, m.source_vocab.Encode(source_tokens), &tape, &enc);
  if (!st) return st;
  DecoderState state = InitialDecoderState(m, enc);
  StepOutput step;
  std::vector<int> ids = m.target_vocab.Encode(target_tokens);
  ids.push_back(kEos);
  for (int id : ids) {
    StepDecoder(m, enc, &state, &tape, &step);
    AppendRows(step.attention, &t);
    t.log_prob += step.log_probs[id];
    state.prefix.push_back(id);
    if (id != kEos) t.target_ids.push_back(id), t.target_tokens.push_back(m.target_vocab.Token(id));
  }
  t.finished = true;
  *out = std::move(t);
  return Status::Ok();
}

const Mat& AlignmentMatrix(const Translation& t) {
  const int l = t.supervised_layer, h = t.supervised_head;
  if (l >= 0 && h >= 0 && l < static_cast<int>(t.layer_heads.size()) && h < static_cast<int>(t.layer_heads[l].size()))
    return t.layer_heads[l][h];
  return t.attention;
}

std::string SupervisedHeadName(const Translation& t) {
  if (t.supervised_layer < 0 || t.supervised_head < 0) return "";
  return "decoder layer " + std::to_string(t.supervised_layer + 1) + ", head " + std::to_string(t.supervised_head + 1) +
         " (supervised)";
}

Status Translate(const Model& m, const std::string& sentence, const TranslateOptions& options, Translation* out) {
  return TranslateTokens(m, Tokenize(sentence), options, out);
}

Status IncrementalDecoder::Start(const Model& m, const std::string& sentence, int max_length) {
  done_ = true;
  model_ = &m;
  partial_ = Translation();
  partial_.source_tokens = Tokenize(sentence);
  if (partial_.source_tokens.empty()) return Status::Error("translate: the sentence is empty");
  partial_.unknown_positions = m.source_vocab.UnknownPositions(partial_.source_tokens);
  partial_.layer_names = LayerNames(m);
  DescribeModel(m, &partial_);
  Status st = EncodeSource(m, m.source_vocab.Encode(partial_.source_tokens), &tape_, &enc_);
  if (!st) return st;
  state_ = InitialDecoderState(m, enc_);
  max_length_ = max_length > 0 ? max_length : DefaultMaxLength(enc_.n_source);
  done_ = false;
  return Status::Ok();
}

Status IncrementalDecoder::DecodeStep(DecodedWord* out) {
  if (done_ || !model_) return Status::Error("decoder: nothing left to decode");
  StepOutput step;
  StepDecoder(*model_, enc_, &state_, &tape_, &step);
  const int index = static_cast<int>(state_.prefix.size()) - 1;
  int best = kEos;
  if (index < max_length_)
    for (int v = kNumSpecial; v < step.log_probs.size(); ++v)
      if (step.log_probs[v] > step.log_probs[best]) best = v;
  state_.prefix.push_back(best);
  AppendRows(step.attention, &partial_);
  partial_.log_prob += step.log_probs[best];
  DecodedWord w;
  w.index = index;
  w.id = best;
  w.token = model_->target_vocab.Token(best);
  w.log_prob = step.log_probs[best];
  w.attention = partial_.attention.row(partial_.attention.rows() - 1);
  w.layer_heads = step.attention;
  if (best == kEos) {
    done_ = true;
    partial_.finished = true;
  } else {
    partial_.target_ids.push_back(best);
    partial_.target_tokens.push_back(w.token);
  }
  *out = std::move(w);
  return Status::Ok();
}

}  // namespace seq2seq
}  // namespace attnviz
