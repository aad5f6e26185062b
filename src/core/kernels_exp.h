// attnviz core: the constants of the vectorized exp (kernels.h, Exp), shared by the translation
// units that compile it (kernels.cpp for SIMD128 / SSE2, kernels_tiles_avx2/avx512.cpp).
#pragma once

namespace attnviz {
namespace kernels {
namespace exp_constants {

// Lower clamp: at x = -88, n = round(x log2e) = -127 and the exponent field of 2^n is 0, so
// the result is exactly +0 with no select; every x <= -87.68 (n = -127), -inf included, gives 0.
constexpr float kExpLo = -88.0f;
constexpr float kExpHi = 88.0f;  // clamp: keeps 2^n inside the float exponent range
// The AVX-512 softmax's exp (kernels_vec_native.h) returns 0 below this: e^-87 = 1.6e-38 is a
// normal float, so its results are never denormal.
constexpr float kExpFlushBelow = -87.0f;
constexpr float kLog2e = 1.44269504088896341f;
constexpr float kLn2Hi = 0.693359375f;      // ln2 split (Cody-Waite): exact in 9 bits
constexpr float kLn2Lo = -2.12194440e-4f;   // ln2 - kLn2Hi
constexpr float kRoundMagic = 12582912.0f;  // 1.5 * 2^23: (x + M) - M rounds to nearest even
// e^r ~ 1 + r + r^2 * P(r), |r| <= ln2/2, P of degree 4: a relative-error weighted
// least-squares fit on Chebyshev nodes (the numpy snippet is in docs/PERFORMANCE.md).
// Polynomial error 3.8e-9 in exact arithmetic, so the float32 evaluation (~1e-7) dominates;
// one term shorter than Cephes expf for the same accuracy.
constexpr float kP1 = 1.375138876e-03f;
constexpr float kP2 = 8.368922397e-03f;
constexpr float kP3 = 4.166953266e-02f;
constexpr float kP4 = 1.666651815e-01f;
constexpr float kP5 = 4.999998808e-01f;

// The softmax's exp, in every build (ExpV<true>: x <= 0 only, its results are divided by a row
// sum >= 1): the same reduction, e^r ~ 1 + r + r^2 Q(r) with Q of degree 3 (relative-error
// weighted least squares on 2000 Chebyshev nodes, the script in docs/PERFORMANCE.md): 1.2e-7 in
// exact arithmetic, one multiply-add shorter. Bound: kSoftmaxMaxRelError (kernels.h), checked by
// tests/core/kernels_test.cpp. (A one-constant reduction r = x - n ln2 would save another, but
// the product n ln2 rounds to half an ulp of |x|: 1.1e-6 relative at x = -12.)
constexpr float kQ0 = 4.999914169e-01f;
constexpr float kQ1 = 1.666688621e-01f;
constexpr float kQ2 = 4.189857841e-02f;
constexpr float kQ3 = 8.333837613e-03f;

// The softmax over scores in log2 units (SoftmaxRowsLog2; AttentionForward folds log2e into the
// Q K^T scale): 2^x for x <= 0. r = x - round(x) is exact (both are multiples of ulp(x)), so no
// ln2 split; 2^r ~ 1 + r (E1 + r (E2 + r (E3 + r (E4 + r E5)))), |r| <= 1/2, by Horner: a
// relative-error least-squares fit on 2000 Chebyshev nodes (docs/PERFORMANCE.md), 1.0e-7 in exact
// arithmetic, 1.8e-7 evaluated in float32. 16 vector operations instead of the exp's 21.
// x <= -127 (and -inf) gives exactly 0 (2^n with n = -127 has exponent field 0).
constexpr float kExp2Lo = -127.0f;
constexpr float kExp2FlushBelow = -125.0f;  // AVX-512 returns 0 below: 2^-125 * 2^-0.5 stays normal
constexpr float kE1 = 6.931468844e-01f;
constexpr float kE2 = 2.402223796e-01f;
constexpr float kE3 = 5.550893024e-02f;
constexpr float kE4 = 9.671698324e-03f;
constexpr float kE5 = 1.321867225e-03f;

}  // namespace exp_constants
}  // namespace kernels
}  // namespace attnviz
