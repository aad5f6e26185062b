// attnviz seq2seq: SIMD products for training (see gemm.h).
#include "core/seq2seq/gemm.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/kernels.h"

namespace attnviz {
namespace seq2seq {

namespace {

typedef float V4 __attribute__((vector_size(16)));  // f32x4 in WASM, an SSE register natively

inline V4 Load(const float* p) {
  V4 v;
  std::memcpy(&v, p, sizeof(v));  // unaligned load
  return v;
}
inline void Store(float* p, V4 v) {
  std::memcpy(p, &v, sizeof(v));
}

// Element (i, p) of the left operand: a[i * row_stride + p * col_stride] (A: lda, 1; A^T: 1, lda).
struct Left {
  const float* a;
  int row_stride, col_stride;
  float At(int i, int p) const { return a[i * row_stride + p * col_stride]; }
};

// ROWS x 8 tile of C at (i0, j0): the sums over p of A(i, p) B[p, j], then added to (or stored in) C.
template <int ROWS>
inline void Tile8(int k, const Left& A, int i0, const float* b, int ldb, float* c, int ldc, bool accumulate) {
  V4 lo[ROWS], hi[ROWS];
  for (int r = 0; r < ROWS; ++r) lo[r] = hi[r] = V4{0, 0, 0, 0};
  for (int p = 0; p < k; ++p) {
    const V4 b0 = Load(b + p * ldb), b1 = Load(b + p * ldb + 4);
    for (int r = 0; r < ROWS; ++r) {
      const float x = A.At(i0 + r, p);
      const V4 xv = V4{x, x, x, x};
      lo[r] += xv * b0;
      hi[r] += xv * b1;
    }
  }
  for (int r = 0; r < ROWS; ++r) {
    float* dst = c + r * ldc;
    if (accumulate) {
      lo[r] += Load(dst);
      hi[r] += Load(dst + 4);
    }
    Store(dst, lo[r]);
    Store(dst + 4, hi[r]);
  }
}

// The columns past the last full 8: one entry at a time, in the same order.
inline void TailColumns(int rows, int j0, int n, int k, const Left& A, int i0, const float* b, int ldb, float* c,
                        int ldc, bool accumulate) {
  for (int r = 0; r < rows; ++r)
    for (int j = j0; j < n; ++j) {
      float s = 0.0f;
      for (int p = 0; p < k; ++p) s += A.At(i0 + r, p) * b[p * ldb + j];
      c[r * ldc + j] = accumulate ? c[r * ldc + j] + s : s;
    }
}

template <int ROWS>
void RowBlock(int n, int k, const Left& A, int i0, const float* b, int ldb, float* c, int ldc, bool accumulate) {
  int j = 0;
  for (; j + 8 <= n; j += 8) Tile8<ROWS>(k, A, i0, b + j, ldb, c + j, ldc, accumulate);
  if (j < n) TailColumns(ROWS, j, n, k, A, i0, b, ldb, c, ldc, accumulate);
}

void Product(int m, int n, int k, const Left& A, const float* b, int ldb, float* c, int ldc, bool accumulate) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    if (!accumulate)
      for (int i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n, 0.0f);
    return;
  }
  int i = 0;
  for (; i + 4 <= m; i += 4) RowBlock<4>(n, k, A, i, b, ldb, c + i * ldc, ldc, accumulate);
  switch (m - i) {
    case 3:
      RowBlock<3>(n, k, A, i, b, ldb, c + i * ldc, ldc, accumulate);
      break;
    case 2:
      RowBlock<2>(n, k, A, i, b, ldb, c + i * ldc, ldc, accumulate);
      break;
    case 1:
      RowBlock<1>(n, k, A, i, b, ldb, c + i * ldc, ldc, accumulate);
      break;
    default:
      break;
  }
}

// C += A B^T, both operands read along their rows (no transposed copy of B: for a GRU step's
// [4, 192] x [192, 192]^T, copying B^T cost a quarter of the multiply-adds). Each entry is the same
// sum in every tile and call: lane partial sums over p = 4q + l, then (l0 + l1) + (l2 + l3), then
// the last k % 4 terms in order, then added to C.
inline float Hsum(V4 v) {
  return (v[0] + v[1]) + (v[2] + v[3]);
}

template <int R, int S>
inline void DotTile(int k, const float* a, int lda, const float* b, int ldb, float* c, int ldc) {
  V4 acc[R][S];
  for (int r = 0; r < R; ++r)
    for (int s = 0; s < S; ++s) acc[r][s] = V4{0, 0, 0, 0};
  const int k4 = k & ~3;
  for (int p = 0; p < k4; p += 4) {
    V4 av[R], bv[S];
    for (int r = 0; r < R; ++r) av[r] = Load(a + r * lda + p);
    for (int s = 0; s < S; ++s) bv[s] = Load(b + s * ldb + p);
    for (int r = 0; r < R; ++r)
      for (int s = 0; s < S; ++s) acc[r][s] += av[r] * bv[s];
  }
  for (int r = 0; r < R; ++r)
    for (int s = 0; s < S; ++s) {
      float t = Hsum(acc[r][s]);
      for (int p = k4; p < k; ++p) t += a[r * lda + p] * b[s * ldb + p];
      c[r * ldc + s] += t;
    }
}

template <int R>
void DotRows(int n, int k, const float* a, int lda, const float* b, int ldb, float* c, int ldc) {
  int j = 0;
  for (; j + 2 <= n; j += 2) DotTile<R, 2>(k, a, lda, b + j * ldb, ldb, c + j, ldc);
  if (j < n) DotTile<R, 1>(k, a, lda, b + j * ldb, ldb, c + j, ldc);
}

}  // namespace

void MatMulNN(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c, int ldc,
              bool accumulate) {
  Product(m, n, k, Left{a, lda, 1}, b, ldb, c, ldc, accumulate);
}

void MatMulTN(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c, int ldc) {
  Product(m, n, k, Left{a, 1, lda}, b, ldb, c, ldc, true);
}

void MatMulNT(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c, int ldc) {
  if (m <= 0 || n <= 0 || k <= 0) return;
  int i = 0;
  for (; i + 4 <= m; i += 4) DotRows<4>(n, k, a + i * lda, lda, b, ldb, c + i * ldc, ldc);
  switch (m - i) {
    case 3:
      DotRows<3>(n, k, a + i * lda, lda, b, ldb, c + i * ldc, ldc);
      break;
    case 2:
      DotRows<2>(n, k, a + i * lda, lda, b, ldb, c + i * ldc, ldc);
      break;
    case 1:
      DotRows<1>(n, k, a + i * lda, lda, b, ldb, c + i * ldc, ldc);
      break;
    default:
      break;
  }
}

void TanhInPlace(float* x, int n) {
  constexpr int kChunk = 64;
  float e[kChunk];
  for (int i0 = 0; i0 < n; i0 += kChunk) {
    const int m = std::min(kChunk, n - i0);
    float* xs = x + i0;
    for (int j = 0; j < m; ++j) e[j] = 2.0f * std::min(9.0f, std::max(-9.0f, xs[j]));
    kernels::ExpFast(e, e, m);
    for (int j = 0; j < m; ++j) {
      const float v = xs[j], v2 = v * v;
      const float small = v * (1.0f + v2 * (-1.0f / 3.0f + v2 * (2.0f / 15.0f)));  // tanh's series to x^5
      const float t = (e[j] - 1.0f) / (e[j] + 1.0f);
      xs[j] = std::fabs(v) < 0.02f ? small : t;
    }
  }
}

void MatMulNNRef(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c, int ldc,
                 bool accumulate) {
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double s = 0.0;
      for (int p = 0; p < k; ++p) s += static_cast<double>(a[i * lda + p]) * b[p * ldb + j];
      c[i * ldc + j] = static_cast<float>(accumulate ? c[i * ldc + j] + s : s);
    }
}

void MatMulTNRef(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c, int ldc) {
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double s = 0.0;
      for (int p = 0; p < k; ++p) s += static_cast<double>(a[p * lda + i]) * b[p * ldb + j];
      c[i * ldc + j] = static_cast<float>(c[i * ldc + j] + s);
    }
}

void MatMulNTRef(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c, int ldc) {
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double s = 0.0;
      for (int p = 0; p < k; ++p) s += static_cast<double>(a[i * lda + p]) * b[j * ldb + p];
      c[i * ldc + j] = static_cast<float>(c[i * ldc + j] + s);
    }
}

}  // namespace seq2seq
}  // namespace attnviz
