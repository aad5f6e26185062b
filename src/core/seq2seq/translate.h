// attnviz seq2seq: translating a sentence, all at once or one word at a time (the UI's API).
//
// Index of this header
//   - TranslateOptions    beam size, maximum length
//   - Translation         tokens, attention rows (mean and per layer/head), unknown words
//   - Translate()         tokenize + encode + greedy or beam decode
//   - IncrementalDecoder  Start(); DecodeStep() emits one word and its attention row (animation)
//
// Typical UI use:
//   IncrementalDecoder dec;
//   if (!dec.Start(model, "the european economic area")) show(dec.status().message);
//   each frame: if (!dec.Done()) { DecodedWord w; dec.DecodeStep(&w); add_row(w.token, w.attention); }
#pragma once
#include <string>
#include <vector>

#include "core/seq2seq/model.h"
#include "core/status.h"

namespace attnviz {
namespace seq2seq {

struct TranslateOptions {
  int beam_size = 1;          // 1 = greedy; > 1 = beam search
  int max_length = 0;         // maximum target words; 0 = 2 * n_source + 6
  float length_alpha = 0.6f;  // beam: score = log p / ((5 + len) / 6)^alpha (GNMT length normalization)
};

struct Translation {
  std::vector<std::string> source_tokens;  // tokenized input
  std::vector<int> unknown_positions;      // source positions not in the vocabulary (fed as <unk>)
  std::vector<std::string> target_tokens;  // output words (EOS not included)
  std::vector<int> target_ids;             // their ids
  Mat attention;  // [n_target + 1, n_source] (last row: the EOS step), mean over layers and heads
  std::vector<std::vector<Mat>> layer_heads;  // [layer][head] -> [n_target + 1, n_source]; RNN models: 1 x 1
  std::vector<std::string> layer_names;       // "cross-attention" (RNN) or "decoder layer 1", ...
  float log_prob = 0;                         // sum of the chosen words' log-probabilities (EOS included)
  bool finished = false;                      // EOS was produced (false: cut at max_length)
  int supervised_layer = -1;  // layer_heads[supervised_layer][supervised_head] was trained on gold alignments
  int supervised_head = -1;   // (Transformer with ModelConfig::align_layer / align_head); -1: none
};

// The matrix that shows the model's word alignment: the supervised head if the model has one,
// otherwise the mean attention. [n_target + 1, n_source].
const Mat& AlignmentMatrix(const Translation& t);
// "decoder layer 2, head 1 (supervised)" for the supervised head; "" if there is none.
std::string SupervisedHeadName(const Translation& t);

// Tokenizes sentence (Tokenize()), maps unknown words to <unk> (reported in unknown_positions)
// and decodes. Errors: empty sentence, beam_size < 1.
Status Translate(const Model& m, const std::string& sentence, const TranslateOptions& options, Translation* out);
Status TranslateTokens(const Model& m, const std::vector<std::string>& source_tokens, const TranslateOptions& options,
                       Translation* out);  // same, for already tokenized input

// Forced decoding: the attention the model pays while producing a given reference translation
// (teacher forcing, one step at a time, so every layer and head is recorded). log_prob is the
// reference's log-probability. Unknown target words are fed as <unk>.
Status ForceDecode(const Model& m, const std::vector<std::string>& source_tokens,
                   const std::vector<std::string>& target_tokens, Translation* out);

struct DecodedWord {
  int index = 0;                 // target position (0-based)
  int id = 0;                    // target id (kEos at the end)
  std::string token;             // target word ("</s>" at the end)
  float log_prob = 0;            // its log-probability
  RowVec attention;              // [n_source] mean attention row of this step
  std::vector<Mat> layer_heads;  // per layer: [heads, n_source]
};

// Greedy decoding one word per call; keeps everything it emitted in partial().
class IncrementalDecoder {
 public:
  Status Start(const Model& m, const std::string& sentence,
               int max_length = 0);                        // tokenize + encode (m must outlive the decoder)
  bool Done() const { return done_; }                      // EOS emitted or max length reached (or Start failed)
  Status DecodeStep(DecodedWord* out);                     // one word + its attention row; error if Done()
  const Translation& partial() const { return partial_; }  // everything so far (attention has one row per emitted word)

 private:
  const Model* model_ = nullptr;
  EncodedSource enc_;
  DecoderState state_;
  Tape tape_;
  Translation partial_;
  int max_length_ = 0;
  bool done_ = true;
};

}  // namespace seq2seq
}  // namespace attnviz
