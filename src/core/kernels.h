// attnviz core: the attention hot path (Q K^T, row softmax, P V), fast and reference twins.
//
// Index of this header
//   - Workspace          packed buffers, allocated once and reused (grow only)
//   - GEMM               C = alpha * A B (NN) and C = alpha * A B^T (NT), row-major
//   - Exp                vectorized exp (range-reduced polynomial) and its scalar twin
//   - Softmax            stable row softmax in place (subtract row max, guard zero sum)
//   - AttentionForward   fused single-head scaled-dot attention: scores -> softmax -> P V
//
// Every fast kernel has a plain reference twin (suffix Ref) that the tests compare it with.
// The fast kernels are hand-written WASM SIMD128 when __wasm_simd128__ is defined (the web
// build), and GCC vector-extension loops natively (SSE2 baseline, AVX when the build enables it).
// All matrices are row-major with an explicit leading dimension (ld = row stride in floats).
#pragma once
#include <vector>

namespace attnviz {
namespace kernels {

// ---------------------------------------------------------------------------
// Workspace
// ---------------------------------------------------------------------------
struct Workspace {
  std::vector<float> packed_b;  // B packed in column panels of PanelWidth() columns (K^T in AttentionForward)
  std::vector<float> packed_v;  // AttentionForward: V packed the same way
  std::vector<float> scores;    // [n_q, n_k] scratch for AttentionForward when weights are not kept
};

const char* KernelIsa();  // "wasm-simd128" or "native-autovec": which fast kernels were compiled
int PanelWidth();         // columns per packed B panel of the fast GEMM (8 for SIMD128/SSE2, 16 with AVX)

// ---------------------------------------------------------------------------
// GEMM (row-major). m, n, k >= 0; c may not alias a or b.
// ---------------------------------------------------------------------------
// C [m, n] = alpha * A [m, k] * B [k, n]
void GemmNN(int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb, float* c, int ldc,
            Workspace* ws);
void GemmNNRef(int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb, float* c, int ldc);
// C [m, n] = alpha * A [m, k] * B^T, B [n, k]   (scores: S = Q K^T)
void GemmNT(int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb, float* c, int ldc,
            Workspace* ws);
void GemmNTRef(int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb, float* c, int ldc);

// ---------------------------------------------------------------------------
// Exp
// ---------------------------------------------------------------------------
// y[i] = exp(x[i]) for n values (x may equal y). Range reduction x = n ln2 + r, |r| <= ln2/2
// (n = round(x log2e) by the 1.5 * 2^23 trick, Cody-Waite split of ln2), e^r = 1 + r + r^2 P(r)
// with P of degree 4 (least-squares fit on Chebyshev nodes, 3.8e-9 in exact arithmetic),
// 2^n built in the exponent bits. Domain: x <= -87.68 (including -inf) gives exactly 0
// (clamped to -88, where 2^n has exponent field 0), x > 88 is clamped to 88, NaN stays NaN.
// Max relative error on [-87.3, 88]:
// kExpMaxRelError (measured by tests/core/kernels_test.cpp over 2M points: 8e-8 native and WASM).
void ExpFast(const float* x, float* y, int n);
float ExpScalar(float x);                   // the same polynomial, one value (scalar twin)
constexpr float kExpMaxRelError = 2.0e-7f;  // documented bound, checked by the tests

// ---------------------------------------------------------------------------
// Softmax, in place, per row of x [rows, cols] (stride ld); scale > 0, entries finite or -inf:
//   x = exp(scale * x - m) / sum,  m = max_j scale * x_j
// A row whose every entry is -inf becomes all zeros, row_max 0 and row_sum 0 (never NaN).
// row_max / row_sum ([rows]) may be null. Returns the number of fully masked rows.
// ---------------------------------------------------------------------------
int SoftmaxRows(float* x, int rows, int cols, int ld, float scale, float* row_max, float* row_sum);
int SoftmaxRowsRef(float* x, int rows, int cols, int ld, float scale, float* row_max, float* row_sum);

// ---------------------------------------------------------------------------
// AttentionForward: single head, no mask. Packs K^T and V once, then runs the three passes
// per block of query rows (block * n_k * 4 bytes ~ 128 KB) so the scores stay in cache.
//   q [n_q, d], k [n_k, d], v [n_k, d_v]   (contiguous, row-major)
//   weights [n_q, n_k] = softmax(scale * q k^T)   (null: use ws->scores as scratch)
//   out [n_q, d_v] = weights v
// ---------------------------------------------------------------------------
void AttentionForward(const float* q, const float* k, const float* v, int n_q, int n_k, int d, int d_v, float scale,
                      float* weights, float* out, Workspace* ws);
void AttentionForwardRef(const float* q, const float* k, const float* v, int n_q, int n_k, int d, int d_v, float scale,
                         float* weights, float* out);

}  // namespace kernels
}  // namespace attnviz
