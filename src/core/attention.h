// attnviz core: attention, the computation every view shows.
//
// Index of this header
//   - Matrix types            row-major float matrices used everywhere
//   - ScoreFunction           dot, scaled dot, general (Luong), additive (Bahdanau), cosine
//   - AttentionMask           key padding, causal, local window, boolean or additive masks
//   - AttentionParams         everything Attend() needs besides Q, K, V
//   - AttentionResult         weights, output and (on request) every intermediate
//   - Attend()                single-head attention
//   - MultiHeadAttention      torch nn.MultiheadAttention layout and semantics
//   - Softmax helpers         stable row softmax with temperature
//
// Shapes (all row-major):
//   queries Q [n_q, d_q], keys K [n_k, d_k], values V [n_k, d_v]
//   scores S  [n_q, n_k], weights A [n_q, n_k], output O = A V [n_q, d_v]
// Core code uses Eigen and std only: no files, no GL, no exceptions.
#pragma once
#include <Eigen/Core>
#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace attnviz {

// ---------------------------------------------------------------------------
// Matrix types
// ---------------------------------------------------------------------------
using MatrixRM = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;  // row-major float matrix
using VectorF = Eigen::VectorXf;                                                         // column float vector
using MaskRM = Eigen::Matrix<uint8_t, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;  // 1 = masked out (ignored)

// ---------------------------------------------------------------------------
// ScoreFunction
// ---------------------------------------------------------------------------
enum class ScoreFunction {
  Dot,        // s = q . k                                   (needs d_q == d_k)
  ScaledDot,  // s = q . k / sqrt(d_k)                       (needs d_q == d_k)
  General,    // s = q^T W k, W [d_q, d_k]                   (Luong "general", bilinear)
  Additive,   // s = v . tanh(W_q q + W_k k + b)             (Bahdanau "concat"; W_q [a, d_q], W_k [a, d_k], v [a], b
              // [a])
  Cosine,     // s = cos(q, k) / cosine_temperature          (0 for a zero vector)
};
const char* ScoreFunctionName(ScoreFunction f);  // "dot", "scaled_dot", "general", "additive", "cosine"
bool ParseScoreFunction(const std::string& name, ScoreFunction* out);  // inverse of ScoreFunctionName; false if unknown

// ---------------------------------------------------------------------------
// AttentionMask: all parts combine (a key is ignored if any part masks it).
// ---------------------------------------------------------------------------
struct AttentionMask {
  std::vector<int> key_lengths;  // optional: [n_q] or [1]; keys j >= key_lengths[i] are masked (key padding by lengths)
  std::vector<uint8_t> key_padding;  // optional: [n_k], 1 = ignore this key for every query (torch key_padding_mask)
  bool causal = false;               // mask keys j > i (+ causal_offset)
  int causal_offset = 0;             // lets query i see keys j <= i + causal_offset (for n_q != n_k)
  int window = -1;                   // local window: mask |i - j| > window when >= 0
  MaskRM boolean;                    // optional [n_q, n_k], 1 = masked (torch bool attn_mask semantics)
  MatrixRM additive;                 // optional [n_q, n_k], added to scores before softmax (-inf masks)
  bool Empty() const;                // true if nothing is masked by construction
};

// Largest [n_q, n_k] score matrix Attend() and MultiHeadAttention() (h x n_q x n_k) accept by
// default: 2^26 cells = 256 MiB of floats per matrix. Inputs come from files; a 1.6 KB .npz can
// declare 65536 queries and keys (2^32 cells), which is refused rather than allocated.
constexpr int64_t kMaxAttentionCells = int64_t(1) << 26;

// ---------------------------------------------------------------------------
// AttentionParams
// ---------------------------------------------------------------------------
struct AttentionParams {
  ScoreFunction score = ScoreFunction::ScaledDot;  // how q and k are compared
  float temperature = 1.0f;                        // softmax(s / temperature); must be > 0
  float cosine_temperature = 0.1f;                 // Cosine only: s = cos / cosine_temperature
  MatrixRM W;                                      // General: [d_q, d_k]
  MatrixRM W_q;                                    // Additive: [a, d_q] (torch Linear layout)
  MatrixRM W_k;                                    // Additive: [a, d_k]
  VectorF v;                                       // Additive: [a]
  VectorF b;                                       // Additive: [a], optional (empty = zeros)
  AttentionMask mask;                              // what to hide
  bool keep_intermediates = false;                 // fill AttentionResult::steps (for the step-by-step view)
  int64_t max_cells = kMaxAttentionCells;          // refuse n_q * n_k above this (an error, not an allocation)
};

// ---------------------------------------------------------------------------
// AttentionResult
// ---------------------------------------------------------------------------
struct AttentionSteps {
  MatrixRM raw_scores;  // [n_q, n_k] score function before scaling (q.k for dot-like scores)
  MatrixRM scaled;      // [n_q, n_k] after /sqrt(d_k) (ScaledDot), /cosine_temperature, and /temperature
  MatrixRM masked;      // [n_q, n_k] scaled + additive mask (-inf where masked)
  MatrixRM exp;         // [n_q, n_k] exp(masked - row max)
  VectorF row_max;      // [n_q] max of each masked row (0 for a fully masked row)
  VectorF row_sum;      // [n_q] sum of each exp row
};

struct AttentionResult {
  MatrixRM weights;                       // [n_q, n_k] softmax rows, each sums to 1 (or all 0 if fully masked)
  MatrixRM output;                        // [n_q, d_v] weights * V (the context vectors)
  std::vector<uint8_t> row_fully_masked;  // [n_q] 1 where every key was masked (row of zeros, never NaN)
  AttentionSteps steps;                   // filled only when params.keep_intermediates
};

// Single-head attention. Validates shapes and parameters; returns an error
// (never crashes) on mismatched shapes, non-finite inputs, temperature <= 0, n_q * n_k above
// params.max_cells, or when the allocator cannot provide the result's memory.
// Unmasked Dot / ScaledDot without keep_intermediates runs the fused SIMD kernel
// (core/kernels.h); everything else uses the fast GEMM and softmax pass by pass.
// Scratch buffers are per thread and reused across calls.
Status Attend(const MatrixRM& q, const MatrixRM& k, const MatrixRM& v, const AttentionParams& params,
              AttentionResult* out);

// Scores only: S [n_q, n_k] for the given score function, before any scaling by temperature.
// (ScaledDot includes its /sqrt(d_k); Cosine includes /cosine_temperature.)
Status Scores(const MatrixRM& q, const MatrixRM& k, const AttentionParams& params, MatrixRM* scores);

// ---------------------------------------------------------------------------
// Softmax helpers
// ---------------------------------------------------------------------------
// In place, per row: x = softmax(x / temperature); subtracts the row max, guards a zero sum
// (a row of -inf becomes zeros). Returns the number of fully masked rows.
int SoftmaxRows(MatrixRM* x, float temperature = 1.0f);

// ---------------------------------------------------------------------------
// MultiHeadAttention: torch.nn.MultiheadAttention layout (batch_first, no batch dim).
//   embed_dim E, num_heads h, head_dim = E / h
//   in_proj_weight [3E, E] (rows: W_q, W_k, W_v), in_proj_bias [3E]
//   out_proj_weight [E, E], out_proj_bias [E]
//   query [n_q, E], key [n_k, E], value [n_k, E]
//   key_padding_mask [n_k] (1 = ignore); attn_mask: bool [n_q, n_k] (1 = not allowed) or float (added)
// Each head: softmax(q_h k_h^T / sqrt(E / h) + mask) v_h, heads concatenated, then out_proj.
// One difference from torch: a query whose every key is masked gets a zero row (and its
// row_fully_masked flag) where torch returns NaN.
// ---------------------------------------------------------------------------
struct MultiHeadParams {
  int num_heads = 1;                       // h; must divide E
  MatrixRM in_proj_weight;                 // [3E, E]
  VectorF in_proj_bias;                    // [3E] (empty = zeros)
  MatrixRM out_proj_weight;                // [E, E]
  VectorF out_proj_bias;                   // [E] (empty = zeros)
  AttentionMask mask;                      // key_padding / boolean / additive / causal, applied to every head
  int64_t max_cells = kMaxAttentionCells;  // refuse num_heads * n_q * n_k above this
};

struct MultiHeadResult {
  MatrixRM output;                        // [n_q, E] after out_proj
  std::vector<MatrixRM> head_weights;     // h x [n_q, n_k]
  MatrixRM mean_weights;                  // [n_q, n_k] average over heads (torch average_attn_weights=True)
  std::vector<uint8_t> row_fully_masked;  // [n_q]
};

Status MultiHeadAttention(const MatrixRM& query, const MatrixRM& key, const MatrixRM& value,
                          const MultiHeadParams& params, MultiHeadResult* out);

}  // namespace attnviz
