// attnviz io: F16 weights through F16C (see half_f16c.h). Eight halves a step in SSE2 integer lanes
// (the same masks as the scalar rule), then one vcvtph2ps to eight floats: exact for every finite
// half, subnormals included.
#include "io/half_f16c.h"

#if defined(__wasm__) || !defined(__F16C__)
namespace attnviz {
bool HalfF16cAvailable() {
  return false;
}
size_t DecodeHalfWeightsF16c(const uint8_t*, size_t, float*, int32_t*, size_t*) {
  return 0;
}
}  // namespace attnviz
#else
#include <cpuid.h>
#include <immintrin.h>

#include <algorithm>

namespace attnviz {

// CPUID by hand: clang 14's __builtin_cpu_supports does not know "f16c".
bool HalfF16cAvailable() {
  static const bool yes = [] {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return false;
    if (!(c & bit_F16C) || !(c & bit_AVX) || !(c & bit_OSXSAVE)) return false;
    unsigned lo, hi;
    __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return (lo & 6u) == 6u;  // the system saves the XMM and YMM registers
  }();
  return yes;
}

size_t DecodeHalfWeightsF16c(const uint8_t* src, size_t n, float* dst, int32_t* top, size_t* bad) {
  const __m128i magnitude = _mm_set1_epi16(0x7fff), largest = _mm_set1_epi16(0x7bff), zero = _mm_setzero_si128();
  __m128i best = zero;
  size_t count = 0;
  const size_t whole = n - n % 8;
  for (size_t begin = 0; begin < whole; begin += 8 * 4096) {  // 16-bit counters: at most 4096 a lane
    const size_t end = std::min(whole, begin + 8 * 4096);
    __m128i counted = zero;
    for (size_t i = begin; i < end; i += 8) {
      const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 2 * i));
      const __m128i a = _mm_and_si128(h, magnitude);
      const __m128i negative = _mm_andnot_si128(_mm_cmpeq_epi16(a, zero), _mm_cmplt_epi16(h, zero));
      const __m128i b = _mm_or_si128(_mm_cmpgt_epi16(a, largest), negative);  // all ones: bad
      const __m128i w = _mm_andnot_si128(b, a);
      counted = _mm_sub_epi16(counted, b);
      best = _mm_max_epi16(best, w);
      _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(w));
    }
    alignas(16) uint16_t lanes[8];
    _mm_store_si128(reinterpret_cast<__m128i*>(lanes), counted);
    for (uint16_t c : lanes) count += c;
  }
  alignas(16) int16_t lanes[8];
  _mm_store_si128(reinterpret_cast<__m128i*>(lanes), best);
  for (int16_t x : lanes) *top = std::max<int32_t>(*top, x);
  *bad += count;
  return whole;
}

}  // namespace attnviz
#endif
