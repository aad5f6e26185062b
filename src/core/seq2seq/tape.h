// attnviz seq2seq: a small reverse-mode autodiff tape over row-major float matrices.
//
// Index of this header
//   - Parameter      a trainable matrix with its gradient and Adam moments
//   - Tape           records operations (forward), then Backward() walks them in reverse
//   - Operations     generic (MatMul, AddBias, Add, Tanh, Relu, concat/slice/stack, Gather)
//                    and fused sequence-model kernels, each with a hand-written backward:
//                    Gru (masked GRU cell), AdditiveScores (Bahdanau), DotScores (Luong),
//                    MaskedSoftmax, Context, LayerNorm, MultiHeadAttention, CrossEntropy,
//                    AttentionSupervision (a loss on attention probabilities)
//
// Layouts: RNN encoder outputs are time-major, row t * B + b for time t and batch row b;
// Transformer activations are batch-major, row b * n + i. Every matrix is row-major float.
// The tape keeps its nodes between Clear() calls so buffers are reused across batches.
#pragma once
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "core/attention.h"

namespace attnviz {
namespace seq2seq {

// Scalar type of every seq2seq matrix. Float everywhere; the gradient-check test compiles the
// tape and the models a second time with ATTNVIZ_SEQ2SEQ_DOUBLE so finite differences are exact
// enough to check every backward pass tightly.
#ifdef ATTNVIZ_SEQ2SEQ_DOUBLE
using Real = double;
#else
using Real = float;
#endif
using Mat = Eigen::Matrix<Real, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;  // == MatrixRM for float
using RowVec = Eigen::Matrix<Real, 1, Eigen::Dynamic>;                             // one row

// One entry of a gold attention distribution: probabilities row `row`, column `col` should be p.
struct AttentionTarget {
  int row = 0;  // row of the probabilities: MultiHeadAttention (b * heads + h) * n_q + i; RNN steps t * B + b
  int col = 0;  // key position
  Real p = 0;   // gold probability (each supervised row's entries sum to 1)
};

struct Parameter {
  std::string name;  // e.g. "enc.fwd.W_x"; unique inside a model
  Mat value;         // the weights
  Mat grad;          // dLoss/dvalue, accumulated by Tape::Backward (zeroed by the trainer)
  Mat adam_m;        // Adam first moment (same shape)
  Mat adam_v;        // Adam second moment (same shape)
};

class Tape {
 public:
  using Id = int;  // a node of the tape

  void Clear();                        // forget all nodes (keeps their memory for reuse)
  int Size() const { return count_; }  // number of recorded nodes
  const Mat& Value(Id id) const;       // forward value of a node
  const Mat& Saved(
      Id id) const;        // MultiHeadAttention: probabilities [B*heads*n_q, n_k]; MaskedSoftmax/others: internal
  void Backward(Id loss);  // d(loss)/d(every node); adds parameter gradients into Parameter::grad
  // Parameter gradients go to (*grads)[i] for the parameter first + i (i < grads->size()) instead of
  // Parameter::grad: each thread of the data-parallel trainer has its own. nullptr: Parameter::grad.
  void SetGradientTarget(const Parameter* first, std::vector<Mat>* grads);
  // A weight's gradient from all its uses in one product at the end of Backward (the default), or
  // one product per use as they come (the tests compare the two).
  void SetDeferParamProducts(bool defer) { defer_ = defer; }

  // --- leaves ---
  Id Constant(const Mat& value);  // no gradient flows into it
  Id Param(const Parameter* p);   // a trainable matrix (not copied; grad sized at Backward)
  Id Gather(const Parameter* table, const std::vector<int>& rows);  // table rows -> [rows.size(), d] (embedding lookup)

  // --- generic ---
  Id MatMul(Id a, Id b);                              // a [m, k] * b [k, n] -> [m, n]
  Id AddBias(Id a, Id bias);                          // a [m, n] + bias [1, n] (broadcast over rows)
  Id Add(Id a, Id b);                                 // same shapes
  Id Tanh(Id a);                                      // elementwise
  Id Relu(Id a);                                      // elementwise
  Id ConcatCols(const std::vector<Id>& parts);        // [m, n1] | [m, n2] | ... -> [m, sum n]
  Id StackRows(const std::vector<Id>& parts);         // [m1, n] over [m2, n] ... -> [sum m, n]
  Id RowBlock(Id a, int row0, int rows);              // a[row0 : row0 + rows, :]
  Id SelectRows(Id a, const std::vector<int>& rows);  // a[rows[i], :] -> [rows.size(), n] (a row may repeat)

  // --- fused sequence kernels ---
  // GRU cell (torch gate order r, z, n): gx = x W_x + b_x [B, 3H], gh = h W_h + b_h [B, 3H], h [B, H].
  //   r = sigmoid(gx_r + gh_r), z = sigmoid(gx_z + gh_z), n = tanh(gx_n + r * gh_n), h' = (1 - z) n + z h.
  // row_valid (optional, [B]): rows with 0 keep h' = h (padding steps leave the state untouched).
  Id Gru(Id gx, Id gh, Id h, const std::vector<int>* row_valid = nullptr);
  // Bahdanau scores: keys_proj [n_s * B, a] time-major, query_proj [B, a], v [1, a] -> [B, n_s]
  //   s[b, t] = v . tanh(keys_proj[t * B + b] + query_proj[b])
  Id AdditiveScores(Id keys_proj, Id query_proj, Id v);
  // Luong dot scores: keys [n_s * B, d] time-major, query [B, d] -> [B, n_s], s[b, t] = keys[t * B + b] . query[b]
  Id DotScores(Id keys, Id query);
  // Row softmax of scores [B, n_s] over t < lengths[b] (other entries are exactly 0).
  Id MaskedSoftmax(Id scores, const std::vector<int>& lengths);
  // Context vectors: weights [B, n_s], values [n_s * B, d] time-major -> [B, d], c[b] = sum_t w[b, t] values[t * B + b]
  Id Context(Id weights, Id values);
  // Layer norm over each row: x [m, d], gamma [1, d], beta [1, d], eps 1e-5.
  Id LayerNorm(Id x, Id gamma, Id beta);
  // Scaled dot-product attention with `heads` heads on projected inputs (batch-major):
  //   q [B * n_q, D], k [B * n_k, D], v [B * n_k, D], head h uses columns [h * D/heads, (h+1) * D/heads).
  //   Keys j >= key_lengths[b] are masked; causal also masks j > i. Output [B * n_q, D] (heads concatenated).
  //   Saved(id) keeps the probabilities [B * heads * n_q, n_k], row (b * heads + h) * n_q + i.
  Id MultiHeadAttention(Id q, Id k, Id v, int batch, int heads, const std::vector<int>& key_lengths, bool causal);
  // Mean cross entropy of softmax(logits [n, V]) against targets [n] (target < 0: row ignored) -> [1, 1]
  Id CrossEntropy(Id logits, const std::vector<int>& targets);
  // Alignment loss on attention probabilities P: -weight * sum over targets of p * log P[row, col]
  // -> [1, 1]. P is a MultiHeadAttention node's probabilities (Saved), or the value of any other
  // node (a MaskedSoftmax, or a StackRows of them: the RNN models). The gradient reaches the scores
  // as weight * (P - p) on each supervised row (through the softmax's own backward).
  Id AttentionSupervision(Id attention, const std::vector<AttentionTarget>& targets, Real weight);

 private:
  enum class Op {
    Constant,
    Param,
    Gather,
    MatMul,
    AddBias,
    Add,
    Tanh,
    Relu,
    ConcatCols,
    StackRows,
    RowBlock,
    SelectRows,
    Gru,
    AdditiveScores,
    DotScores,
    MaskedSoftmax,
    Context,
    LayerNorm,
    MultiHeadAttention,
    CrossEntropy,
    AttentionSupervision,
  };
  struct Node {
    Op op = Op::Constant;
    Id a = -1, b = -1, c = -1;
    int i0 = 0, i1 = 0, i2 = 0;  // op-specific integers (row0, batch, heads, causal, ...)
    Parameter* param = nullptr;  // Param, Gather
    std::vector<int> ints;       // op-specific (row ids, lengths, targets, input ids, row mask)
    Mat value, grad;             // forward value, gradient (unused for Param: see Parameter)
    Mat saved, saved2;           // op-specific forward intermediates for backward
    // MultiHeadAttention: saved2 holds dLoss/dP from AttentionSupervision (valid when has_extra)
    bool has_extra = false;
    std::vector<AttentionTarget> targets;  // AttentionSupervision
  };
  Id NewNode(Op op);
  Mat& G(Id id);                 // gradient buffer (the Parameter's for Param nodes)
  Mat& ParamGrad(Parameter* p);  // where p's gradient goes (SetGradientTarget)
  void MatMulBackward(Node& n);  // dA += dY B^T, dB += A^T dY (a Parameter's dB deferred, below)
  void BackwardNode(Node& n);
  void FlushParamProducts();  // each Parameter's deferred dB += A^T dY, as one product over all its uses

  std::deque<Node> nodes_;  // deque: references stay valid while nodes are added
  int count_ = 0;
  const Parameter* grad_first_ = nullptr;  // SetGradientTarget
  std::vector<Mat>* grad_target_ = nullptr;
  // A weight used at every step of a recurrence gets its gradient from every step: rather than one
  // product of k = 4 rows per step (reading and writing all of dB each time), the steps' rows are
  // stacked and multiplied once at the end of Backward.
  std::vector<std::pair<Parameter*, const Node*>> deferred_;  // (weight, MatMul node), in backward order
  std::vector<float> stack_a_, stack_dy_;                     // the stacked A and dY rows
  bool defer_ = true;
};

}  // namespace seq2seq
}  // namespace attnviz
