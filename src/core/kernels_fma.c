/* attnviz core: relaxed-SIMD (FMA) register-tile block kernels, built as a separate WASM module.
 *
 * Built by clang-16 + wasm-ld-16 (CMakeLists.txt, web build only), not by Emscripten: Debian's
 * Emscripten 3.1.6 (clang 14, binaryen 108) cannot emit or pass the standard relaxed-SIMD opcodes.
 * The module imports the main module's WebAssembly.Memory and works on its pointers; it has no
 * data segment and uses no stack (every tile lives in WASM locals), so it writes nothing but C.
 * The web glue (src/platform/kernels_fma_web.cpp) validates it with WebAssembly.validate,
 * instantiates it and registers each export as a tile variant (isa "wasm-relaxed-simd"); the
 * start-up probe then races them against the plain SIMD128 variants (kernels_tiles_wasm.cpp).
 *
 * Three tiles only (4x8, 5x8, 3x16): every loop is fully unrolled, so each export costs 8-17 KB
 * of the web bundle; 6x8 and 4x16 were the slowest relaxed tiles on the Xeon measured (and 6x8
 * the slowest SIMD128 tile on the EPYC of issue 14).
 *
 * Export softmax_rows: the SoftmaxRows contract of kernels.h (the relaxed variants' softmax), with
 * the exp's range reduction and polynomial on relaxed_madd; the constants are those of
 * kernels_exp.h (C here, so restated; the WASM tests compare both softmaxes with the reference).
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
  return (f32x4){x, x, x, x};
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
  EXPORT(#NAME)                                                                                                \
  void NAME(int m, int n, int kc, float alpha, const float* a, int lda, const float* block, float* c, int ldc, \
            int accumulate) {                                                                                  \
    Block(ROWS, NP, m, n, kc, alpha, a, lda, block, c, ldc, accumulate);                                       \
  }

DEFINE_BLOCK(4, 1, block_4x8)
DEFINE_BLOCK(5, 1, block_5x8)
DEFINE_BLOCK(3, 2, block_3x16)

/* ---- softmax ---- */
typedef int i32x4 __attribute__((vector_size(16)));

#define EXP_LO (-88.0f) /* kernels_exp.h: kExpLo (x <= -87.68, -inf included, gives exactly 0) */
#define LOG2E 1.44269504088896341f
#define LN2_HI 0.693359375f
#define LN2_LO (-2.12194440e-4f)
#define ROUND_MAGIC 12582912.0f /* 1.5 * 2^23 */
#define P1 1.375138876e-03f
#define P2 8.368922397e-03f
#define P3 4.166953266e-02f
#define P4 1.666651815e-01f
#define P5 4.999998808e-01f

INLINE f32x4 Madd(f32x4 a, f32x4 b, f32x4 c) { /* a * b + c, fused where the CPU has FMA */
  return __builtin_wasm_relaxed_madd_f32x4(a, b, c);
}
INLINE f32x4 PMax(f32x4 a, f32x4 b) { /* a < b ? b : a: one maxps; a NaN in a stays */
  return __builtin_wasm_pmax_f32x4(a, b);
}
/* exp(x) for x <= 0 or -inf (after subtracting the row max): kernels.h, Exp; 2^n from the bits
 * of t = x log2e + 1.5 * 2^23 (bits(t) = bits(M) + n). */
INLINE f32x4 ExpNonPositive(f32x4 x) {
  x = PMax(x, Splat(EXP_LO));
  const f32x4 t = Madd(x, Splat(LOG2E), Splat(ROUND_MAGIC));
  const f32x4 n = t - Splat(ROUND_MAGIC);
  f32x4 r = Madd(n, Splat(-LN2_HI), x);
  r = Madd(n, Splat(-LN2_LO), r);
  f32x4 p = Madd(Splat(P1), r, Splat(P2));
  p = Madd(p, r, Splat(P3));
  p = Madd(p, r, Splat(P4));
  p = Madd(p, r, Splat(P5));
  const f32x4 y = Madd(p, r * r, r) + Splat(1.0f);
  const i32x4 e = ((i32x4)t + 127) << 23;
  return y * (f32x4)e;
}
INLINE float HMax(f32x4 v) {
  v = PMax(v, __builtin_shufflevector(v, v, 2, 3, 0, 1));
  v = PMax(v, __builtin_shufflevector(v, v, 1, 0, 3, 2));
  return v[0];
}
INLINE float HSum(f32x4 v) {
  v += __builtin_shufflevector(v, v, 2, 3, 0, 1);
  v += __builtin_shufflevector(v, v, 1, 0, 3, 2);
  return v[0];
}

/* Stable softmax per row of x [rows, cols] (stride ld), in place: kernels.h, Softmax. */
EXPORT("softmax_rows")
int softmax_rows(float* x, int rows, int cols, int ld, float scale, float* row_max, float* row_sum) {
  int fully_masked = 0;
  const float neg_inf = -__builtin_inff();
  for (int i = 0; i < rows; ++i) {
    float* r = x + i * ld;
    /* pass 1: row max (scale > 0, so max(scale * x) = scale * max(x)) */
    f32x4 vm0 = Splat(neg_inf), vm1 = vm0;
    int j = 0;
    for (; j + 8 <= cols; j += 8) {
      vm0 = PMax(vm0, Load(r + j));
      vm1 = PMax(vm1, Load(r + j + 4));
    }
    float m = HMax(PMax(vm0, vm1));
    for (; j < cols; ++j) m = r[j] > m ? r[j] : m;
    m *= scale;
    if (m == neg_inf) { /* every key masked: zeros, never NaN */
      for (j = 0; j < cols; ++j) r[j] = 0.0f;
      if (row_max) row_max[i] = 0.0f;
      if (row_sum) row_sum[i] = 0.0f;
      ++fully_masked;
      continue;
    }
    /* pass 2: e = exp(scale * x - m) <= 1 (scale * x rounded before the subtraction, as the
     * reference does: exactly 0 at the maximum), summed */
    const f32x4 vs = Splat(scale), vmax = Splat(m);
    f32x4 acc0 = Splat(0.0f), acc1 = acc0;
    for (j = 0; j + 8 <= cols; j += 8) {
      const f32x4 x0 = scale == 1.0f ? Load(r + j) : vs * Load(r + j);
      const f32x4 x1 = scale == 1.0f ? Load(r + j + 4) : vs * Load(r + j + 4);
      const f32x4 e0 = ExpNonPositive(x0 - vmax), e1 = ExpNonPositive(x1 - vmax);
      Store(r + j, e0);
      Store(r + j + 4, e1);
      acc0 += e0;
      acc1 += e1;
    }
    float sum = HSum(acc0 + acc1);
    for (; j < cols; ++j) {
      const float e = ExpNonPositive(Splat(scale * r[j] - m))[0];
      r[j] = e;
      sum += e;
    }
    /* pass 3: normalise; sum >= 1 (the max entry gives exp(0) = 1), guarded anyway */
    const float inv = sum > 0.0f ? 1.0f / sum : 0.0f;
    const f32x4 vinv = Splat(inv);
    for (j = 0; j + 4 <= cols; j += 4) Store(r + j, Load(r + j) * vinv);
    for (; j < cols; ++j) r[j] *= inv;
    if (row_max) row_max[i] = m;
    if (row_sum) row_sum[i] = sum;
  }
  return fully_masked;
}

/* The mul+add peak's relaxed twin: 12 chains of acc = relaxed_madd(acc, m, c), iters x 2048
 * steps; returns a lane so the work is observable. 2 FLOPs per lane per step. */
EXPORT("madd_peak") float madd_peak(int iters) {
  f32x4 acc[12];
  const f32x4 m = Splat(0.999f), k = Splat(0.001f);
  for (int i = 0; i < 12; ++i) acc[i] = Splat(1.0f + 0.01f * i);
  for (int it = 0; it < iters * 2048; ++it)
    for (int i = 0; i < 12; ++i) acc[i] = __builtin_wasm_relaxed_madd_f32x4(acc[i], m, k);
  f32x4 s = acc[0];
  for (int i = 1; i < 12; ++i) s += acc[i];
  return s[0];
}
