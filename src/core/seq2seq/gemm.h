// attnviz seq2seq: the training products of the tape (float only), SIMD in both builds.
//
// Index of this header
//   - MatMulNN   C [m, n] (+)= A [m, k] B [k, n]        (forward of Tape::MatMul)
//   - MatMulTN   C [m, n] += A^T B, A [k, m], B [k, n]  (dLoss/dB of Tape::MatMul)
//   - MatMulNT   C [m, n] += A B^T, A [m, k], B [n, k]  (dLoss/dA of Tape::MatMul; dot products along rows)
//   - *Ref       plain loops, the tests' reference
//   - TanhInPlace  vectorized tanh (the GRU gates and Bahdanau's additive scores)
//
// Why not Eigen: Eigen 3.4 has no WebAssembly SIMD path, so its products run scalar in the
// browser's training worker, and the seq2seq products are small (m = 4..200 rows, k, n = 32..600).
// These use GCC/clang vector extensions (4 floats: SIMD128 in WASM, SSE2 natively) with a 4 x 8
// register tile (NN, TN) or 4 x 2 dot products (NT), and no packing.
// Every C entry is summed the same way wherever it falls (NN, TN: over p = 0..k-1 in order from 0;
// NT: four lane sums, then the k % 4 last terms), then added to C: the result does not depend on the
// tile an entry falls in, so it is the same for every thread count and every call site (the
// data-parallel trainer relies on this only through call-for-call equality).
// All matrices are row-major with a leading dimension (ld = row stride in floats); C may not alias A or B.
#pragma once
#include <vector>

namespace attnviz {
namespace seq2seq {

void MatMulNN(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c, int ldc,
              bool accumulate);  // accumulate = false overwrites C
void MatMulTN(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c, int ldc);
void MatMulNT(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c, int ldc);

// x[i] = tanh(x[i]) for n values, through kernels::ExpFast: (e - 1) / (e + 1) with e = exp(2x),
// x clamped to [-9, 9] (tanh(9) rounds to 1 in float); an odd polynomial below |x| = 0.02 where
// e - 1 would cancel. Relative error <= 4e-6 (tests/seq2seq/gemm_test.cpp), libm's tanhf runs
// scalar in WASM and is the largest cost of the attention and the GRU gates there.
void TanhInPlace(float* x, int n);

void MatMulNNRef(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c, int ldc,
                 bool accumulate);
void MatMulTNRef(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c, int ldc);
void MatMulNTRef(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c, int ldc);

}  // namespace seq2seq
}  // namespace attnviz
