/* attnviz core: relaxed-SIMD (FMA) register-tile block kernels, built as a separate WASM module.
 *
 * Built by clang-16 + wasm-ld-16 (CMakeLists.txt, web build only), not by Emscripten: Debian's
 * Emscripten 3.1.6 (clang 14, binaryen 108) cannot emit or pass the standard relaxed-SIMD opcodes.
 * The module imports the main module's WebAssembly.Memory and works on its pointers; it has no
 * data segment and uses no stack (every tile lives in WASM locals), so it writes nothing but its
 * outputs (C of a block kernel; x, row_max and row_sum of the softmax).
 * The web glue (src/platform/kernels_fma_web.cpp) validates it with WebAssembly.validate,
 * instantiates it and registers each export as a tile variant (isa "wasm-relaxed-simd"); the
 * start-up probe then races them against the plain SIMD128 variants (kernels_tiles_wasm.cpp).
 *
 * Three tiles only (4x8, 5x8, 3x16): every loop is fully unrolled, so each export costs 8-17 KB
 * of the web bundle; 6x8 and 4x16 were the slowest relaxed tiles on the Xeon measured (and 6x8
 * the slowest SIMD128 tile on the EPYC of issue 14).
 *
 * Compiled as C++17 (-x c++; the .c name keeps it out of attnviz_core's glob of .cpp files), so
 * that the softmax is the one body every ISA shares: kernels_softmax_impl.h on the vector
 * operations of kernels_vec_native.h, 4 lanes, whose VFma is relaxed_madd here.
 * Export softmax_rows: the SoftmaxRows contract of kernels.h (the relaxed variants' softmax).
 *
 * Export block_RxC: the BlockKernelFn contract of kernels.h, C [m, n] (+)= alpha * A [m, kc] *
 * Bblock, Bblock = panels of [kc][8] floats; a ROWS x (8 * NP) tile keeps 2 * NP * ROWS
 * accumulators updated by f32x4.relaxed_madd (fused on x86 CPUs with FMA, else mul + add).
 */
typedef float f32x4 __attribute__((vector_size(16)));
typedef float f32x4u __attribute__((vector_size(16), aligned(4)));

#define PANEL 8
#define INLINE static inline __attribute__((always_inline))
#define UNROLL _Pragma("clang loop unroll(full)")
#define EXPORT(name) __attribute__((export_name(name)))

INLINE f32x4 Load(const float* p) {
  return *(const f32x4u*)p;
}
INLINE void Store(float* p, f32x4 v) {
  *(f32x4u*)p = v;
}
INLINE f32x4 Splat(float x) {
  const f32x4 v = {x, x, x, x};
  return v;
}

/* ROWS x (NP * 8) tile; panel q at bp + q * pstride. ROWS <= 6, NP <= 2 (constants after inlining). */
INLINE void Micro(const int ROWS, const int NP, int kc, const float* a, int lda, const float* bp, int pstride,
                  float alpha, int accumulate, float* c, int ldc, int cols_valid) {
  f32x4 acc[6][4];
  UNROLL
  for (int r = 0; r < ROWS; ++r) UNROLL
  for (int j = 0; j < 2 * NP; ++j) acc[r][j] = Splat(0.0f);
  for (int p = 0; p < kc; ++p) {
    f32x4 b[4];
    UNROLL
    for (int q = 0; q < NP; ++q) {
      b[2 * q] = Load(bp + q * pstride + p * PANEL);
      b[2 * q + 1] = Load(bp + q * pstride + p * PANEL + 4);
    }
    UNROLL
    for (int r = 0; r < ROWS; ++r) {
      const f32x4 x = Splat(a[r * lda + p]);
      UNROLL
      for (int j = 0; j < 2 * NP; ++j) acc[r][j] = __builtin_wasm_relaxed_madd_f32x4(x, b[j], acc[r][j]);
    }
  }
  const f32x4 va = Splat(alpha);
  if (cols_valid == NP * PANEL) {
    UNROLL
    for (int r = 0; r < ROWS; ++r) UNROLL
    for (int j = 0; j < 2 * NP; ++j) {
      float* dst = c + r * ldc + j * 4;
      f32x4 o = va * acc[r][j];
      if (accumulate) o += Load(dst);
      Store(dst, o);
    }
    return;
  }
  /* partial tile: lanes by constant index only, so nothing is spilled to (shared) memory */
  UNROLL
  for (int r = 0; r < ROWS; ++r) UNROLL
  for (int j = 0; j < 2 * NP; ++j) {
    const f32x4 o = va * acc[r][j];
    const float lanes[4] = {o[0], o[1], o[2], o[3]};
    UNROLL
    for (int l = 0; l < 4; ++l)
      if (j * 4 + l < cols_valid) {
        float* dst = c + r * ldc + j * 4 + l;
        *dst = accumulate ? *dst + lanes[l] : lanes[l];
      }
  }
}

/* One k-block over m rows: ROWS-row tiles, then leftover rows by 4 and one at a time. */
INLINE void Block(const int ROWS, const int NP, int m, int n, int kc, float alpha, const float* a, int lda,
                  const float* block, float* c, int ldc, int accumulate) {
  const int n_panels = (n + PANEL - 1) / PANEL;
  const int pstride = kc * PANEL;
  int p = 0;
  for (; p + NP <= n_panels; p += NP) {
    const float* bp = block + p * pstride;
    const int left = n - p * PANEL, valid = left < NP * PANEL ? left : NP * PANEL;
    float* cp = c + p * PANEL;
    int i = 0;
    for (; i + ROWS <= m; i += ROWS)
      Micro(ROWS, NP, kc, a + i * lda, lda, bp, pstride, alpha, accumulate, cp + i * ldc, ldc, valid);
    if (ROWS > 4)
      for (; i + 4 <= m; i += 4)
        Micro(4, NP, kc, a + i * lda, lda, bp, pstride, alpha, accumulate, cp + i * ldc, ldc, valid);
    for (; i < m; ++i) Micro(1, NP, kc, a + i * lda, lda, bp, pstride, alpha, accumulate, cp + i * ldc, ldc, valid);
  }
  for (; p < n_panels; ++p) {
    const float* bp = block + p * pstride;
    const int left = n - p * PANEL, valid = left < PANEL ? left : PANEL;
    float* cp = c + p * PANEL;
    int i = 0;
    for (; i + ROWS <= m; i += ROWS)
      Micro(ROWS, 1, kc, a + i * lda, lda, bp, pstride, alpha, accumulate, cp + i * ldc, ldc, valid);
    if (ROWS > 4)
      for (; i + 4 <= m; i += 4)
        Micro(4, 1, kc, a + i * lda, lda, bp, pstride, alpha, accumulate, cp + i * ldc, ldc, valid);
    for (; i < m; ++i) Micro(1, 1, kc, a + i * lda, lda, bp, pstride, alpha, accumulate, cp + i * ldc, ldc, valid);
  }
}

#define DEFINE_BLOCK(ROWS, NP, NAME)                                                                           \
  extern "C" EXPORT(#NAME) void NAME(int m, int n, int kc, float alpha, const float* a, int lda, const float* block, float* c, int ldc, \
            int accumulate) {                                                                                  \
    Block(ROWS, NP, m, n, kc, alpha, a, lda, block, c, ldc, accumulate);                                       \
  }

DEFINE_BLOCK(4, 1, block_4x8)
DEFINE_BLOCK(5, 1, block_5x8)
DEFINE_BLOCK(3, 2, block_3x16)

/* ---- softmax: the shared body (kernels_softmax_impl.h), 4 lanes, fused exp polynomial ---- */
#define KT_LANES 4
#include "core/kernels_exp.h"

namespace attnviz {
namespace kernels {
namespace {
using namespace exp_constants;  // NOLINT: the exp's constants, shared with kernels.cpp
constexpr int kLanes = KT_LANES;
#include "core/kernels_vec_native.h"
inline float ExpScalar(float x) {  // the softmax's tail: one lane of the vector exp
  return ExpV(VSplat(x), ExpConstants{})[0];
}
inline float Exp2Scalar(float x) {  // the same for the softmax over log2 scores
  return Exp2V(VSplat(x), ExpConstants{})[0];
}
}  // namespace
#include "core/kernels_softmax_impl.h"
}  // namespace kernels
}  // namespace attnviz

extern "C" EXPORT("softmax_rows") int softmax_rows(float* x, int rows, int cols, int ld, float scale, float* row_max,
                                                   float* row_sum, int log2) {
  return attnviz::kernels::SoftmaxRowsImpl(x, rows, cols, ld, scale, row_max, row_sum, log2);
}

/* The mul+add peak's relaxed twin: 12 chains of acc = relaxed_madd(acc, m, c), iters x 2048
 * steps; returns a lane so the work is observable. 2 FLOPs per lane per step. */
extern "C" EXPORT("madd_peak") float madd_peak(int iters) {
  f32x4 acc[12];
  const f32x4 m = Splat(0.999f), k = Splat(0.001f);
  for (int i = 0; i < 12; ++i) acc[i] = Splat(1.0f + 0.01f * i);
  for (int it = 0; it < iters * 2048; ++it)
    for (int i = 0; i < 12; ++i) acc[i] = __builtin_wasm_relaxed_madd_f32x4(acc[i], m, k);
  f32x4 s = acc[0];
  for (int i = 1; i < 12; ++i) s += acc[i];
  return s[0];
}
