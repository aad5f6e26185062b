// attnviz core: native register-tile GEMM block kernels in GCC vector extensions, written once
// and compiled once per ISA. Include this file from exactly one translation unit per ISA, after
// defining KT_LANES (floats per vector: 4 SSE2, 8 AVX2, 16 AVX-512) and KT_ISA (the isa name);
// the translation unit's compile flags (-mavx2 -mfma, -mavx512f) pick the instructions.
//
// Everything here has internal linkage and calls no inline function of a library header but the
// FMA intrinsics (gnu_inline, never emitted out of line), so no AVX-compiled copy of a shared
// inline function can be picked by the linker for the SSE2 path.
//
// Block kernel (BlockKernelFn in kernels.h): C [m, n] (+)= alpha * A [m, kc] * Bblock, Bblock =
// panels of [kc][P] floats, P = 2 * KT_LANES. A ROWS x (NP * P) register tile keeps 2 * NP * ROWS
// vector accumulators; each k step loads 2 * NP vectors of B and broadcasts ROWS values of A.
#include "core/kernels.h"

#if defined(__AVX512F__) || defined(__FMA__)
#include <immintrin.h>
#endif

namespace attnviz {
namespace kernels {
namespace {

typedef float KtVec __attribute__((vector_size(KT_LANES * 4)));
typedef float KtVecU __attribute__((vector_size(KT_LANES * 4), aligned(4)));  // unaligned access
constexpr int kKtPanel = 2 * KT_LANES;

inline KtVec KtLoad(const float* p) {
  return *reinterpret_cast<const KtVecU*>(p);
}
inline void KtStore(float* p, KtVec v) {
  *reinterpret_cast<KtVecU*>(p) = v;
}
// acc + x * b, fused by an explicit intrinsic where the ISA has FMA (not left to fp-contract:
// the softmax compiled later in the same translation unit turns contraction off, and GCC then
// emitted separate multiplies and adds for these templates as well, ~35 % slower).
inline KtVec KtMulAdd(float x, KtVec b, KtVec acc) {
#if KT_LANES == 16 && defined(__AVX512F__)
  return (KtVec)_mm512_fmadd_ps(_mm512_set1_ps(x), (__m512)b, (__m512)acc);
#elif KT_LANES == 8 && defined(__FMA__)
  return (KtVec)_mm256_fmadd_ps(_mm256_set1_ps(x), (__m256)b, (__m256)acc);
#else
  return acc + x * b;
#endif
}

// ROWS x (NP * kKtPanel) tile; panel q of the tile starts at bp + q * pstride.
template <int ROWS, int NP>
inline __attribute__((always_inline)) void KtMicro(int kc, const float* a, int lda, const float* bp, int pstride,
                                                   float alpha, int accumulate, float* c, int ldc, int cols_valid) {
  constexpr int V = 2 * NP;  // vectors per tile row
  KtVec acc[ROWS][V];
  for (int r = 0; r < ROWS; ++r)
    for (int j = 0; j < V; ++j) acc[r][j] = KtVec{};
  for (int p = 0; p < kc; ++p) {
    KtVec b[V];
    for (int q = 0; q < NP; ++q) {
      b[2 * q] = KtLoad(bp + q * pstride + p * kKtPanel);
      b[2 * q + 1] = KtLoad(bp + q * pstride + p * kKtPanel + KT_LANES);
    }
    for (int r = 0; r < ROWS; ++r) {
      const float x = a[r * lda + p];  // scalar * vector: one broadcast per row
      for (int j = 0; j < V; ++j) acc[r][j] = KtMulAdd(x, b[j], acc[r][j]);
    }
  }
  if (cols_valid == NP * kKtPanel) {
#pragma GCC unroll 12
    for (int r = 0; r < ROWS; ++r)
#pragma GCC unroll 4
      for (int j = 0; j < V; ++j) {
        float* dst = c + r * ldc + j * KT_LANES;
        KtVec o = alpha * acc[r][j];
        if (accumulate) o += KtLoad(dst);
        KtStore(dst, o);
      }
    return;
  }
  // a partial tile (the last columns): the accumulators go to memory by constant indices, then the
  // valid columns out (an acc index known only at run time put all of acc on the stack, for the full
  // tiles above too)
  float tile[ROWS][V * KT_LANES];
#pragma GCC unroll 12
  for (int r = 0; r < ROWS; ++r)
#pragma GCC unroll 4
    for (int j = 0; j < V; ++j) KtStore(&tile[r][j * KT_LANES], alpha * acc[r][j]);
  for (int r = 0; r < ROWS; ++r)
    for (int col = 0; col < cols_valid; ++col) {
      float* dst = c + r * ldc + col;
      *dst = accumulate ? *dst + tile[r][col] : tile[r][col];
    }
}

// TileVariant::peak_chunk: 12 chains a = c + 0.999 a, 2048 steps each (the FMA latency times the
// FMA ports is at most 8-10 vectors in flight on current x86 cores, so 12 keep every port busy).
__attribute__((noinline)) double KtPeakChunk(float* state) {
  constexpr int kSteps = 2048;
  const KtVec c = KtVec{} + 0.001f;
  KtVec a0 = KtLoad(state), a1 = KtLoad(state + KT_LANES), a2 = KtLoad(state + 2 * KT_LANES);
  KtVec a3 = KtLoad(state + 3 * KT_LANES), a4 = KtLoad(state + 4 * KT_LANES), a5 = KtLoad(state + 5 * KT_LANES);
  KtVec a6 = KtLoad(state + 6 * KT_LANES), a7 = KtLoad(state + 7 * KT_LANES), a8 = KtLoad(state + 8 * KT_LANES);
  KtVec a9 = KtLoad(state + 9 * KT_LANES), a10 = KtLoad(state + 10 * KT_LANES), a11 = KtLoad(state + 11 * KT_LANES);
  for (int it = 0; it < kSteps; ++it) {
    a0 = KtMulAdd(0.999f, a0, c), a1 = KtMulAdd(0.999f, a1, c), a2 = KtMulAdd(0.999f, a2, c);
    a3 = KtMulAdd(0.999f, a3, c), a4 = KtMulAdd(0.999f, a4, c), a5 = KtMulAdd(0.999f, a5, c);
    a6 = KtMulAdd(0.999f, a6, c), a7 = KtMulAdd(0.999f, a7, c), a8 = KtMulAdd(0.999f, a8, c);
    a9 = KtMulAdd(0.999f, a9, c), a10 = KtMulAdd(0.999f, a10, c), a11 = KtMulAdd(0.999f, a11, c);
  }
  KtStore(state, a0), KtStore(state + KT_LANES, a1), KtStore(state + 2 * KT_LANES, a2);
  KtStore(state + 3 * KT_LANES, a3), KtStore(state + 4 * KT_LANES, a4), KtStore(state + 5 * KT_LANES, a5);
  KtStore(state + 6 * KT_LANES, a6), KtStore(state + 7 * KT_LANES, a7), KtStore(state + 8 * KT_LANES, a8);
  KtStore(state + 9 * KT_LANES, a9), KtStore(state + 10 * KT_LANES, a10), KtStore(state + 11 * KT_LANES, a11);
  return 2.0 * KT_LANES * 12 * kSteps;
}

// One k-block of the GEMM over m rows: pairs (NP = 2) or single panels, row tiles of ROWS, then
// leftover rows by 8 (12-row tiles: 128 rows leave 8), by 4, then one at a time; a panel stays in L1 while the rows
// pass over it.
template <int ROWS, int NP>
void KtBlock(int m, int n, int kc, float alpha, const float* a, int lda, const float* block, float* c, int ldc,
             int accumulate) {
  const int n_panels = (n + kKtPanel - 1) / kKtPanel;
  const int pstride = kc * kKtPanel;
  int p = 0;
  for (; p + NP <= n_panels; p += NP) {
    const float* bp = block + p * pstride;
    const int left = n - p * kKtPanel;
    const int valid = left < NP * kKtPanel ? left : NP * kKtPanel;
    int i = 0;
    for (; i + ROWS <= m; i += ROWS)
      KtMicro<ROWS, NP>(kc, a + i * lda, lda, bp, pstride, alpha, accumulate, c + i * ldc + p * kKtPanel, ldc, valid);
    if (ROWS > 8)
      for (; i + 8 <= m; i += 8)
        KtMicro<8, NP>(kc, a + i * lda, lda, bp, pstride, alpha, accumulate, c + i * ldc + p * kKtPanel, ldc, valid);
    if (ROWS > 4)
      for (; i + 4 <= m; i += 4)
        KtMicro<4, NP>(kc, a + i * lda, lda, bp, pstride, alpha, accumulate, c + i * ldc + p * kKtPanel, ldc, valid);
    for (; i < m; ++i)
      KtMicro<1, NP>(kc, a + i * lda, lda, bp, pstride, alpha, accumulate, c + i * ldc + p * kKtPanel, ldc, valid);
  }
  for (; p < n_panels; ++p) {  // NP = 2: the odd last panel
    const float* bp = block + p * pstride;
    const int left = n - p * kKtPanel;
    const int valid = left < kKtPanel ? left : kKtPanel;
    int i = 0;
    for (; i + ROWS <= m; i += ROWS)
      KtMicro<ROWS, 1>(kc, a + i * lda, lda, bp, pstride, alpha, accumulate, c + i * ldc + p * kKtPanel, ldc, valid);
    if (ROWS > 8)
      for (; i + 8 <= m; i += 8)
        KtMicro<8, 1>(kc, a + i * lda, lda, bp, pstride, alpha, accumulate, c + i * ldc + p * kKtPanel, ldc, valid);
    if (ROWS > 4)
      for (; i + 4 <= m; i += 4)
        KtMicro<4, 1>(kc, a + i * lda, lda, bp, pstride, alpha, accumulate, c + i * ldc + p * kKtPanel, ldc, valid);
    for (; i < m; ++i)
      KtMicro<1, 1>(kc, a + i * lda, lda, bp, pstride, alpha, accumulate, c + i * ldc + p * kKtPanel, ldc, valid);
  }
}

}  // namespace
}  // namespace kernels
}  // namespace attnviz
