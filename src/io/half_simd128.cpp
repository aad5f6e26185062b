// attnviz io: F16 weights in WebAssembly SIMD lanes (see half_simd128.h). Eight halves a step: the
// checks in 16-bit lanes (the same masks as half_f16c.cpp), then each four widened to 32 bits and
// converted without a float multiply on a subnormal: normals by moving the bits (exponent + 112),
// subnormals (below 2^-14) as the integer times 2^-24, both exact.
#include "io/half_simd128.h"

#if defined(__wasm_simd128__)
#include <wasm_simd128.h>

#include <algorithm>

namespace attnviz {

namespace {

inline v128_t HalfLanesToFloats(v128_t w) {  // four halves (>= 0, finite) in 32-bit lanes -> floats
  const v128_t normal = wasm_i32x4_add(wasm_i32x4_shl(w, 13), wasm_i32x4_splat(0x38000000));
  const v128_t sub = wasm_f32x4_mul(wasm_f32x4_convert_i32x4(w), wasm_f32x4_splat(0x1p-24f));
  return wasm_v128_bitselect(sub, normal, wasm_i32x4_lt(w, wasm_i32x4_splat(0x400)));
}

}  // namespace

size_t DecodeHalfWeightsSimd128(const uint8_t* src, size_t n, float* dst, int32_t* top, size_t* bad) {
  const v128_t magnitude = wasm_i16x8_splat(0x7fff), largest = wasm_i16x8_splat(0x7bff), zero = wasm_i16x8_splat(0);
  v128_t best = zero;
  size_t count = 0;
  const size_t whole = n - n % 8;
  for (size_t begin = 0; begin < whole; begin += 8 * 4096) {  // 16-bit counters: at most 4096 a lane
    const size_t end = std::min(whole, begin + 8 * 4096);
    v128_t counted = zero;
    for (size_t i = begin; i < end; i += 8) {
      const v128_t h = wasm_v128_load(src + 2 * i);
      const v128_t a = wasm_v128_and(h, magnitude);
      const v128_t negative = wasm_v128_andnot(wasm_i16x8_lt(h, zero), wasm_i16x8_eq(a, zero));
      const v128_t b = wasm_v128_or(wasm_i16x8_gt(a, largest), negative);  // all ones: bad
      const v128_t w = wasm_v128_andnot(a, b);
      counted = wasm_i16x8_sub(counted, b);
      best = wasm_i16x8_max(best, w);
      wasm_v128_store(dst + i, HalfLanesToFloats(wasm_u32x4_extend_low_u16x8(w)));
      wasm_v128_store(dst + i + 4, HalfLanesToFloats(wasm_u32x4_extend_high_u16x8(w)));
    }
    alignas(16) uint16_t lanes[8];
    wasm_v128_store(lanes, counted);
    for (uint16_t c : lanes) count += c;
  }
  alignas(16) int16_t lanes[8];
  wasm_v128_store(lanes, best);
  for (int16_t x : lanes) *top = std::max<int32_t>(*top, x);
  *bad += count;
  return whole;
}

}  // namespace attnviz

#else

namespace attnviz {

size_t DecodeHalfWeightsSimd128(const uint8_t*, size_t, float*, int32_t*, size_t*) {
  return 0;
}

}  // namespace attnviz

#endif
