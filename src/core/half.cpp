#include "core/half.h"

#include <cmath>
#include <cstring>

namespace attnviz {

namespace {

inline uint32_t Bits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  return x;
}

inline float FromBits(uint32_t x) {
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

// |x| (as bits a, finite and below 65520) -> half bits, round to nearest even, without a branch.
// Normal halves (a >= 2^-14): drop 13 mantissa bits with the round-to-even bias, rebias 127 -> 15.
// Subnormal ones: adding 0.5f leaves a multiple of 2^-24 (0.5's ulp) rounded by the FPU to nearest
// even, whose low mantissa bits are the half's (1024 * 2^-24, the smallest normal, is encoded right).
// The choice is a mask on signed lanes (a < 2^31), not a ?: that GCC turned into a branch, which
// mispredicted on real weights (9 ns a weight natively) and kept SSE2 from vectorizing the loop.
inline uint32_t FiniteMagnitudeToHalf(uint32_t a) {
  const uint32_t normal = (a + 0xfffu + ((a >> 13) & 1u) - 0x38000000u) >> 13;
  const uint32_t subnormal = Bits(FromBits(a) + 0.5f) - 0x3f000000u;
  const uint32_t is_sub = (uint32_t) - (int32_t)((int32_t)a < 0x38800000);
  return (subnormal & is_sub) | (normal & ~is_sub);
}

}  // namespace

uint16_t FloatToHalf(float f) {
  const uint32_t x = Bits(f);
  const uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
  const uint32_t a = x & 0x7fffffffu;
  if (a > 0x7f800000u) return sign | 0x7e00 | (uint16_t)((a >> 13) & 0x3ff);  // NaN stays NaN (quiet)
  if (a >= 0x477ff000u) return sign | 0x7c00;                                 // rounds to infinity
  return sign | (uint16_t)FiniteMagnitudeToHalf(a);
}

float HalfToFloat(uint16_t h) {
  const uint32_t sign = (uint32_t)(h >> 15) << 31;
  const uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  if (exp == 0) {  // zero or subnormal: mant * 2^-24, exact in float
    const float f = (float)mant * 5.9604644775390625e-8f;
    return sign ? -f : f;
  }
  const uint32_t e = exp == 31 ? 0xffu : exp + 112u;  // infinities and NaN keep their mantissa
  return FromBits(sign | (e << 23) | (mant << 13));
}

void FloatsToHalves(const float* src, size_t n, float scale, uint16_t* dst) {
  for (size_t i = 0; i < n; ++i) {
    const uint32_t x = Bits(src[i]);
    const uint32_t finite = (uint32_t) - (int32_t)((int32_t)(x & 0x7f800000u) != 0x7f800000);
    const uint32_t y = Bits(src[i] * scale) & finite;  // NaN and infinities -> +0
    const uint32_t a = y & 0x7fffffffu;
    const uint32_t big = (uint32_t) - (int32_t)((int32_t)a >= 0x477ff000);   // would round to inf (or is NaN)
    const uint32_t h = (0x7bffu & big) | (FiniteMagnitudeToHalf(a) & ~big);  // saturate, not inf
    dst[i] = (uint16_t)(((y >> 16) & 0x8000u) | h);
  }
}

float PowerOfTwoAtLeast(float x) {
  const float a = std::fabs(x);
  if (!(a > 0.0f) || !std::isfinite(a)) return 1.0f;
  if (a > 0x1p127f) return 0x1p127f;
  if (a <= 0x1p-126f) return 0x1p-126f;  // its inverse, 2^126, is still a float (2^133 was inf)
  int e = 0;
  const float m = std::frexp(a, &e);  // a = m 2^e, m in [0.5, 1)
  return std::ldexp(1.0f, m == 0.5f ? e - 1 : e);
}

}  // namespace attnviz
