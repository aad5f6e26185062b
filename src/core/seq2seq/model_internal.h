// attnviz seq2seq: helpers shared by model.cpp (RNN models, dispatch) and transformer.cpp.
// Not part of the public API.
#pragma once
#include <vector>

#include "core/seq2seq/model.h"

namespace attnviz {
namespace seq2seq {
namespace internal {

int ArgMax(const Mat& logits, int row);                       // index of the row's largest logit
void LogSoftmaxRow(const Mat& logits, int row, RowVec* out);  // stable log-softmax of one row

// Gold distributions for supervised attention: one entry per sure link, p = 1 / (sure links of its
// target word), at row b * batch_stride + i * step_stride + offset of the probabilities for batch
// row b and target word i. Target words without a sure link (punctuation) and the EOS row are not
// supervised. rows: the number of supervised rows.
std::vector<AttentionTarget> GoldAttentionTargets(const Batch& batch, int batch_stride, int step_stride, int offset,
                                                  int* rows);

// Transformer counterparts of ForwardTeacherForced / GreedyDecodeBatch / EncodeSource / StepDecoder.
Tape::Id TransformerTeacherForced(const Model& m, Tape* tape, const Batch& batch, BatchAttention* attention,
                                  float align_weight);
void TransformerGreedy(const Model& m, Tape* tape, const Batch& batch, int max_len, std::vector<std::vector<int>>* out);
Mat TransformerEncode(const Model& m, const std::vector<int>& source_ids, Tape* tape);  // memory [n_s, d_model]
void TransformerStep(const Model& m, const EncodedSource& enc, const DecoderState& state, Tape* tape,
                     StepOutput* out);  // recomputes the decoder over state.prefix; fills the last row

}  // namespace internal
}  // namespace seq2seq
}  // namespace attnviz
