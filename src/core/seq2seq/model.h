// attnviz seq2seq: the three translation models, their parameters and their forward passes.
//
// Index of this header
//   - ModelKind / ModelConfig   Bahdanau (RNNsearch), Luong, Transformer; sizes
//   - Model                     config + vocabularies + named parameters
//   - InitModel()               deterministic Xavier-uniform initialization from a seed
//   - Batch / BuildBatch()      padded id batches for training and evaluation
//   - ForwardTeacherForced()    loss (and cross-attention) of a batch with teacher forcing
//   - GreedyDecodeBatch()       batched greedy decoding (evaluation)
//   - EncodedSource / DecoderState / EncodeSource() / StepDecoder()
//                               one sentence, one decode step at a time (Translate, the UI)
//   - SaveModel() / LoadModel() compact validated binary
//
// Models (every forward has its backward in tape.cpp):
//   Bahdanau:    bidirectional GRU encoder H [n_s, 2E]; alpha_i = softmax_j(v . tanh(W_k h_j + W_q s_{i-1}));
//                c_i = sum_j alpha_ij h_j; s_i = GRU([emb(y_{i-1}); c_i], s_{i-1}); logits = [s_i; c_i; emb] W_o.
//   Luong:       the same encoder; h_i = GRU([emb(y_{i-1}); ~h_{i-1}], h_{i-1}) (input feeding);
//                score = h_i . h_j (dot) or h_i . (W_a h_j) (general); ~h_i = tanh([c_i; h_i] W_c); logits = ~h_i W_o.
//   Transformer: pre-layer-norm encoder-decoder, sinusoidal positions, multi-head self-attention
//                (causal in the decoder) and cross-attention, ReLU feed-forward.
// Attention rows: RNN models have one "layer" with one head; the Transformer records every
// decoder layer's cross-attention per head.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/seq2seq/corpus.h"
#include "core/seq2seq/tape.h"
#include "core/seq2seq/vocab.h"
#include "core/status.h"

namespace attnviz {
namespace seq2seq {

// ---------------------------------------------------------------------------
// ModelKind / ModelConfig
// ---------------------------------------------------------------------------
enum class ModelKind : int { Bahdanau = 0, Luong = 1, Transformer = 2 };
const char* ModelKindName(ModelKind k);                        // "bahdanau", "luong", "transformer"
bool ParseModelKind(const std::string& name, ModelKind* out);  // inverse of ModelKindName

enum class LuongScore : int { Dot = 0, General = 1 };

struct ModelConfig {
  ModelKind kind = ModelKind::Bahdanau;          // architecture
  Task task = Task::EnFr;                        // the corpus it translates (informational)
  int emb = 32;                                  // embedding size (RNN models)
  int enc_hidden = 48;                           // GRU size per encoder direction (encoder output is 2 * enc_hidden)
  int dec_hidden = 64;                           // decoder GRU size
  int attn = 64;                                 // Bahdanau: additive attention size
  LuongScore luong_score = LuongScore::General;  // Luong: Dot needs dec_hidden == 2 * enc_hidden
  int d_model = 64;                              // Transformer: model width (embeddings too)
  int heads = 4;                                 // Transformer: heads (must divide d_model)
  int ff = 128;                                  // Transformer: feed-forward width
  int enc_layers = 2;                            // Transformer: encoder layers
  int dec_layers = 2;                            // Transformer: decoder layers
  // Transformer: the cross-attention head trained to follow the gold alignment (Garg et al. 2019,
  // "Jointly Learning to Align and Translate with Transformer Models"); -1, -1: none.
  int align_layer = -1;  // decoder layer (0-based)
  int align_head = -1;   // head within that layer (0-based)
};
ModelConfig DefaultConfig(ModelKind kind, Task task);  // the sizes used by the pretrained models (the Transformer
                                                       // supervises decoder layer 2, head 1)
Status ValidateConfig(const ModelConfig& c);           // sizes in range, heads divide d_model, ...
bool HasSupervisedHead(const ModelConfig& c);          // a Transformer with align_layer / align_head set

// ---------------------------------------------------------------------------
// Model
// ---------------------------------------------------------------------------
struct Model {
  ModelConfig config;                                    // architecture and sizes
  Vocab source_vocab;                                    // source words (ids)
  Vocab target_vocab;                                    // target words (ids)
  std::vector<Parameter> params;                         // every trainable matrix, in a fixed order
  const Parameter* Find(const std::string& name) const;  // nullptr if absent
  Parameter* Find(const std::string& name);              // nullptr if absent
  int64_t NumWeights() const;                            // total number of floats
};

int64_t CountWeights(const ModelConfig& config, int source_vocab_size,
                     int target_vocab_size);  // floats InitModel would allocate

// Builds the parameter list for config and vocab sizes and fills it with Xavier-uniform
// weights drawn from Rng(seed) (biases 0, layer-norm gains 1).
Status InitModel(const ModelConfig& config, const Vocab& source_vocab, const Vocab& target_vocab, uint64_t seed,
                 Model* out);

// ---------------------------------------------------------------------------
// Batches
// ---------------------------------------------------------------------------
struct Batch {
  int size = 0;                          // B
  std::vector<std::vector<int>> source;  // B sentences of source ids (no BOS/EOS)
  std::vector<std::vector<int>> target;  // B sentences of target ids (no BOS/EOS); may be empty for decoding
  std::vector<std::vector<Link>> links;  // B gold alignments (empty: none; only a supervised head uses them)
};
Batch BuildBatch(const Model& m, const std::vector<const SentencePair*>& pairs);  // tokens -> ids, links

// Attention of a batch: attention[b] is [n_target_b + 1, n_source_b] (the last row is EOS),
// averaged over layers and heads for the Transformer.
using BatchAttention = std::vector<Mat>;

// Records the teacher-forced loss of batch on tape (mean cross entropy per target token, EOS
// included) and returns its node; call tape->Backward(id) for gradients. attention: optional.
// align_weight > 0 with a supervised head (HasSupervisedHead) and batch.links adds
// align_weight x the head's alignment loss: the mean over gold-aligned target words of the cross
// entropy between the head's attention row and the gold distribution (uniform over the word's
// sure links), as in Garg et al. (2019).
Tape::Id ForwardTeacherForced(const Model& m, Tape* tape, const Batch& batch, BatchAttention* attention = nullptr,
                              float align_weight = 0.0f);

// Greedy decoding of batch.source; out[b] = predicted ids without EOS (at most max_len).
void GreedyDecodeBatch(const Model& m, Tape* tape, const Batch& batch, int max_len, std::vector<std::vector<int>>* out);

// ---------------------------------------------------------------------------
// One sentence, one step at a time (copyable states, so beam search can branch)
// ---------------------------------------------------------------------------
struct EncodedSource {
  int n_source = 0;  // source length
  Mat memory;        // RNN: encoder outputs H [n_s, 2E]; Transformer: encoder output [n_s, d_model]
  Mat keys;          // RNN: projected keys (Bahdanau W_k H, Luong-general W_a H) [n_s, *]
  Mat initial;       // RNN: initial decoder state [1, dec_hidden]
};
struct DecoderState {
  Mat hidden;               // RNN decoder state [1, dec_hidden]
  Mat feed;                 // Luong input feeding ~h [1, dec_hidden]
  std::vector<int> prefix;  // tokens emitted so far, starting with kBos
};
struct StepOutput {
  RowVec log_probs;            // [V] log softmax over the target vocabulary
  std::vector<Mat> attention;  // per layer: [heads, n_s] attention row(s) of this step
};
Status EncodeSource(const Model& m, const std::vector<int>& source_ids, Tape* tape, EncodedSource* out);
DecoderState InitialDecoderState(const Model& m, const EncodedSource& enc);  // prefix = {kBos}
// Consumes state->prefix.back(), predicts the next word: fills out, advances state's hidden parts
// (the caller appends the chosen token to state->prefix).
void StepDecoder(const Model& m, const EncodedSource& enc, DecoderState* state, Tape* tape, StepOutput* out);

// ---------------------------------------------------------------------------
// Serialization: "AVS2" magic, version, config, both vocabularies, named float32/float16
// tensors, FNV-1a checksum. Loading checks every size against the config and every value for finiteness.
// ---------------------------------------------------------------------------
// half = true stores weights as IEEE float16 (half the size; inference is unaffected in practice).
Status SaveModel(const Model& m, std::vector<uint8_t>* out, bool half = false);  // serialize
Status LoadModel(const uint8_t* data, size_t size, Model* out);  // validate + deserialize (never crashes)
constexpr uint32_t kModelFormatVersion = 2;  // bumped on layout changes (2: the supervised head; 1 still loads)

}  // namespace seq2seq
}  // namespace attnviz
