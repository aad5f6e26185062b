// attnviz core: the native vector operations of the softmax and exp in GCC vector extensions,
// KT_LANES floats wide (4 SSE2 in kernels.cpp, 8 AVX2 and 16 AVX-512 in kernels_tiles_*.cpp;
// also 4 relaxed-SIMD lanes in the separate WASM module kernels_fma.c).
// Include inside namespace attnviz::kernels::{anonymous}, after `using namespace exp_constants`
// and with KT_LANES defined; everything has internal linkage and calls no library inline
// function, so AVX copies never stand in for the SSE2 ones at link time.
// (The WASM build defines the same names with SIMD128 intrinsics in kernels.cpp.)
typedef float VN __attribute__((vector_size(KT_LANES * 4)));
typedef float VNu __attribute__((vector_size(KT_LANES * 4), aligned(4)));  // unaligned loads
typedef unsigned VU __attribute__((vector_size(KT_LANES * 4)));

using Vec = VN;
inline Vec VLoad(const float* p) {
  return *reinterpret_cast<const VNu*>(p);
}
inline void VStore(float* p, Vec v) {
  *reinterpret_cast<VNu*>(p) = v;
}
inline Vec VSplat(float x) {
  return x + VN{};
}
inline Vec VAdd(Vec a, Vec b) {
  return a + b;
}
inline Vec VSub(Vec a, Vec b) {
  return a - b;
}
inline Vec VMul(Vec a, Vec b) {
  return a * b;
}
inline Vec VMax(Vec a, Vec b) {
  return a > b ? a : b;
}

struct ExpConstants {};  // native: the compiler hoists vector constants itself
inline ExpConstants LoadExpConstants() {
  return {};
}

// a * b + c: fused in the AVX2 / AVX-512 translation units (compiled with -mfma), whose
// fp-contract is off for the softmax's scale * x - m, and relaxed_madd in the relaxed-SIMD module
// (kernels_fma.c: fused on CPUs with FMA); a multiply and an add in the SSE2 build.
inline Vec VFma(Vec a, Vec b, Vec c) {
#if KT_LANES == 4 && defined(__wasm_relaxed_simd__)
  return __builtin_wasm_relaxed_madd_f32x4(a, b, c);
#elif KT_LANES == 16 && defined(__AVX512F__)
  return (Vec)_mm512_fmadd_ps((__m512)a, (__m512)b, (__m512)c);
#elif KT_LANES == 8 && defined(__FMA__)
  return (Vec)_mm256_fmadd_ps((__m256)a, (__m256)b, (__m256)c);
#else
  return a * b + c;
#endif
}

// Same algorithm and constants as ExpScalar, KT_LANES at a time; the range reduction and the
// polynomial use VFma (fused: the error stays within kExpMaxRelError, see the tests).
// x < lo ? lo : x, a NaN x stays NaN, as one maxps / pmax (GCC compiles the select, in either
// operand order, to a compare and a blend). maxps(lo, x) = lo > x ? lo : x. (The masked form for
// AVX-512: the unmasked _mm512_max_ps trips GCC 12's -Wmaybe-uninitialized in its header.)
inline Vec VClampBelow(Vec x, float lo) {
#if KT_LANES == 4 && defined(__wasm_relaxed_simd__)
  return __builtin_wasm_pmax_f32x4(x, VSplat(lo));  // x < lo ? lo : x
#elif KT_LANES == 16 && defined(__AVX512F__)
  const __m512 l = (__m512)VSplat(lo);
  return (Vec)_mm512_mask_max_ps(l, (__mmask16)0xffff, l, (__m512)x);
#elif KT_LANES == 8 && defined(__AVX2__)
  return (Vec)_mm256_max_ps((__m256)VSplat(lo), (__m256)x);
#else
  return x < VSplat(lo) ? VSplat(lo) : x;
#endif
}

// The shared part of the exp: x = n ln2 + r, t = x log2e + 1.5 * 2^23 (bits(t) = bits(M) + n),
// and P(r) of e^r = 1 + r + r^2 P(r).
struct ExpParts {
  Vec t, n, r, p;
};
// kShort: the softmax's polynomial (Q, one degree less: kernels_exp.h).
template <bool kShort = false>
inline ExpParts ExpReduce(Vec x) {
  const Vec t = VFma(x, VSplat(kLog2e), VSplat(kRoundMagic));
  const Vec n = t - kRoundMagic;  // round(x log2e)
  Vec r = VFma(n, VSplat(-kLn2Hi), x);
  r = VFma(n, VSplat(-kLn2Lo), r);
  Vec p;
  if (kShort) {
    p = VFma(VSplat(kQ3), r, VSplat(kQ2));
    p = VFma(p, r, VSplat(kQ1));
    p = VFma(p, r, VSplat(kQ0));
  } else {
    p = VFma(VSplat(kP1), r, VSplat(kP2));
    p = VFma(p, r, VSplat(kP3));
    p = VFma(p, r, VSplat(kP4));
    p = VFma(p, r, VSplat(kP5));
  }
  return {t, n, r, p};
}
template <bool kNonPositive = false>
inline Vec ExpV(Vec x, const ExpConstants&) {
#if KT_LANES == 16 && defined(__AVX512F__)
  if (kNonPositive) {  // the softmax's exp: 11 instructions instead of 14, and no denormals
    // e^r by Horner on Q (kernels_exp.h), 2^n applied by vscalefps; inputs below -87 (and
    // -inf) give exactly 0 through the zero-mask (e^-87 = 1.6e-38 is the smallest result, a
    // normal float, so the P V pass never meets a denormal), a NaN stays NaN (unordered: kept).
    const __mmask16 keep = _mm512_cmp_ps_mask((__m512)x, _mm512_set1_ps(kExpFlushBelow), _CMP_NLT_UQ);
    const ExpParts e = ExpReduce<true>(x);
    const Vec p = VFma(VFma(e.p, e.r, VSplat(1.0f)), e.r, VSplat(1.0f));
    return (Vec)_mm512_maskz_scalef_ps(keep, (__m512)p, (__m512)e.n);
  }
#endif
  if (!kNonPositive) x = x > VSplat(kExpHi) ? VSplat(kExpHi) : x;
  x = VClampBelow(x, kExpLo);  // -inf -> -88 -> exactly 0; NaN stays NaN
  const ExpParts e = ExpReduce<kNonPositive>(x);
  const Vec y = VFma(e.p, e.r * e.r, e.r) + 1.0f;
  const VU bits = ((VU)e.t + 127u) << 23;  // exponent field of 2^n (same-size vector casts reinterpret bits)
  return y * (Vec)bits;
}

// 2^x for x <= 0 or -inf (SoftmaxRowsLog2): r = x - round(x) exactly, 2^r by Horner on
// kernels_exp.h's E, 2^n as in ExpV (AVX-512: vscalefps, zero below kExp2FlushBelow, so no
// denormal results).
inline Vec Exp2V(Vec x, const ExpConstants&) {
#if KT_LANES == 16 && defined(__AVX512F__)
  const __mmask16 keep = _mm512_cmp_ps_mask((__m512)x, _mm512_set1_ps(kExp2FlushBelow), _CMP_NLT_UQ);
  const Vec n = (Vec)_mm512_mask_roundscale_ps((__m512)x, (__mmask16)0xffff, (__m512)x,  // masked form: see VClampBelow
                                               _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
#else
  x = VClampBelow(x, kExp2Lo);  // -inf -> -127 -> exactly 0; NaN stays NaN
  const Vec t = x + kRoundMagic;
  const Vec n = t - kRoundMagic;
#endif
  const Vec r = x - n;
  Vec p = VFma(VSplat(kE5), r, VSplat(kE4));
  p = VFma(p, r, VSplat(kE3));
  p = VFma(p, r, VSplat(kE2));
  p = VFma(p, r, VSplat(kE1));
  const Vec y = VFma(p, r, VSplat(1.0f));
#if KT_LANES == 16 && defined(__AVX512F__)
  return (Vec)_mm512_maskz_scalef_ps(keep, (__m512)y, (__m512)n);
#else
  const VU bits = ((VU)t + 127u) << 23;
  return y * (Vec)bits;
#endif
}

// Log-step reductions: log2(KT_LANES) full-width shuffles (every lane ends with the result),
// not KT_LANES dependent scalar operations per row.
template <typename Op>
inline float HorizontalReduce(Vec v, Op op) {
#if KT_LANES == 16
  v = op(v, __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7));
  v = op(v, __builtin_shufflevector(v, v, 4, 5, 6, 7, 0, 1, 2, 3, 12, 13, 14, 15, 8, 9, 10, 11));
  v = op(v, __builtin_shufflevector(v, v, 2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13));
  v = op(v, __builtin_shufflevector(v, v, 1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14));
#elif KT_LANES == 8
  v = op(v, __builtin_shufflevector(v, v, 4, 5, 6, 7, 0, 1, 2, 3));
  v = op(v, __builtin_shufflevector(v, v, 2, 3, 0, 1, 6, 7, 4, 5));
  v = op(v, __builtin_shufflevector(v, v, 1, 0, 3, 2, 5, 4, 7, 6));
#else
  v = op(v, __builtin_shufflevector(v, v, 2, 3, 0, 1));
  v = op(v, __builtin_shufflevector(v, v, 1, 0, 3, 2));
#endif
  return v[0];
}
inline float HorizontalMax(Vec v) {
  return HorizontalReduce(v, [](Vec a, Vec b) { return a > b ? a : b; });
}
inline float HorizontalSum(Vec v) {
  return HorizontalReduce(v, [](Vec a, Vec b) { return a + b; });
}
