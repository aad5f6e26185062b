// attnviz core: WASM SIMD128 register-tile variants (the web build's plain-SIMD kernels and the
// fallback when relaxed SIMD is missing). Panel 8 = two v128 per B row; A values come in with
// load32_splat. V8 on x86-64 allocates 16 xmm registers (one kept as scratch), so tiles above
// ~12 accumulators spill; which tile is fastest differs between CPUs, hence the probe.
#include "core/kernels_internal.h"

#ifndef __wasm_simd128__
namespace attnviz {
namespace kernels {
int AppendTileVariantsWasm(TileVariant*, int) {
  return 0;
}
}  // namespace kernels
}  // namespace attnviz
#else
#include <wasm_simd128.h>

namespace attnviz {
namespace kernels {
namespace {

constexpr int kPanel = 8;

// ROWS x (NP * 8) tile of C (+)= alpha * A[ROWS, kc] * B; panel q at bp + q * pstride.
template <int ROWS, int NP>
inline __attribute__((always_inline)) void WMicro(int kc, const float* a, int lda, const float* bp, int pstride,
                                                  float alpha, int accumulate, float* c, int ldc, int cols_valid) {
  constexpr int V = 2 * NP;
  v128_t acc[ROWS][V];
  const float* ar[ROWS];
  for (int r = 0; r < ROWS; ++r) {
    ar[r] = a + r * lda;
    for (int j = 0; j < V; ++j) acc[r][j] = wasm_f32x4_splat(0.0f);
  }
  for (int p = 0; p < kc; ++p) {
    v128_t b[V];
    for (int q = 0; q < NP; ++q) {
      b[2 * q] = wasm_v128_load(bp + q * pstride + p * kPanel);
      b[2 * q + 1] = wasm_v128_load(bp + q * pstride + p * kPanel + 4);
    }
    for (int r = 0; r < ROWS; ++r) {
      const v128_t x = wasm_v128_load32_splat(ar[r] + p);
      for (int j = 0; j < V; ++j) acc[r][j] = wasm_f32x4_add(acc[r][j], wasm_f32x4_mul(x, b[j]));
    }
  }
  const v128_t va = wasm_f32x4_splat(alpha);
  if (cols_valid == NP * kPanel) {
    for (int r = 0; r < ROWS; ++r)
      for (int j = 0; j < V; ++j) {
        float* dst = c + r * ldc + j * 4;
        v128_t o = wasm_f32x4_mul(va, acc[r][j]);
        if (accumulate) o = wasm_f32x4_add(o, wasm_v128_load(dst));
        wasm_v128_store(dst, o);
      }
    return;
  }
  for (int r = 0; r < ROWS; ++r) {
    float tile[V * 4];
    for (int j = 0; j < V; ++j) wasm_v128_store(tile + j * 4, acc[r][j]);
    for (int col = 0; col < cols_valid; ++col) {
      float* dst = c + r * ldc + col;
      *dst = accumulate ? *dst + alpha * tile[col] : alpha * tile[col];
    }
  }
}

// One k-block over m rows (see BlockKernelFn): tile pairs or single panels, ROWS-row tiles, then
// leftover rows by 4 and one at a time.
template <int ROWS, int NP>
void WBlock(int m, int n, int kc, float alpha, const float* a, int lda, const float* block, float* c, int ldc,
            int accumulate) {
  const int n_panels = (n + kPanel - 1) / kPanel;
  const int pstride = kc * kPanel;
  int p = 0;
  for (; p + NP <= n_panels; p += NP) {
    const float* bp = block + p * pstride;
    const int left = n - p * kPanel, valid = left < NP * kPanel ? left : NP * kPanel;
    float* cp = c + p * kPanel;
    int i = 0;
    for (; i + ROWS <= m; i += ROWS)
      WMicro<ROWS, NP>(kc, a + i * lda, lda, bp, pstride, alpha, accumulate, cp + i * ldc, ldc, valid);
    if (ROWS > 4)
      for (; i + 4 <= m; i += 4)
        WMicro<4, NP>(kc, a + i * lda, lda, bp, pstride, alpha, accumulate, cp + i * ldc, ldc, valid);
    for (; i < m; ++i) WMicro<1, NP>(kc, a + i * lda, lda, bp, pstride, alpha, accumulate, cp + i * ldc, ldc, valid);
  }
  for (; p < n_panels; ++p) {
    const float* bp = block + p * pstride;
    const int left = n - p * kPanel, valid = left < kPanel ? left : kPanel;
    float* cp = c + p * kPanel;
    int i = 0;
    for (; i + ROWS <= m; i += ROWS)
      WMicro<ROWS, 1>(kc, a + i * lda, lda, bp, pstride, alpha, accumulate, cp + i * ldc, ldc, valid);
    if (ROWS > 4)
      for (; i + 4 <= m; i += 4)
        WMicro<4, 1>(kc, a + i * lda, lda, bp, pstride, alpha, accumulate, cp + i * ldc, ldc, valid);
    for (; i < m; ++i) WMicro<1, 1>(kc, a + i * lda, lda, bp, pstride, alpha, accumulate, cp + i * ldc, ldc, valid);
  }
}

}  // namespace

int AppendTileVariantsWasm(TileVariant* out, int max) {
  const TileVariant all[] = {
      {"4x8", "wasm-simd128", 4, 8, &WBlock<4, 1>},  {"5x8", "wasm-simd128", 5, 8, &WBlock<5, 1>},
      {"6x8", "wasm-simd128", 6, 8, &WBlock<6, 1>},  {"3x16", "wasm-simd128", 3, 8, &WBlock<3, 2>},
      {"4x16", "wasm-simd128", 4, 8, &WBlock<4, 2>},
  };
  return CopyTileVariants(all, out, max);
}

}  // namespace kernels
}  // namespace attnviz
#endif
