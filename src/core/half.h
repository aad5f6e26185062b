// attnviz core: IEEE half precision (binary16) conversions, one home for every user.
//
//   FloatToHalf      float -> half bits, round to nearest even; overflow -> inf, NaN stays NaN
//   HalfToFloat      half bits -> float, exact (subnormals, infinities, NaN)
//   FloatsToHalves   n floats times a scale -> halves for an R16F texture: branch-free (it
//                    vectorizes), non-finite -> 0, beyond the largest half -> +-65504
//
// The heatmap textures are R16F since stop 33 (render/heatmap_renderer.h): a weight w is stored as
// half(w / scale), scale a power of two, so each texel is rounded once (relative error <= 2^-11 for
// |w| / scale >= 2^-14; below that, steps of 2^-24 scale).
#pragma once
#include <cstddef>
#include <cstdint>

namespace attnviz {

uint16_t FloatToHalf(float f);  // IEEE half, round to nearest even; overflow -> inf, NaN kept (quiet)
float HalfToFloat(uint16_t h);  // exact

// dst[i] = half(src[i] * scale) for i < n, rounded to nearest even, with NaN and infinities in src as
// 0 and products beyond the half range as +-65504 (0x7bff). No branch per element.
void FloatsToHalves(const float* src, size_t n, float scale, uint16_t* dst);

// The smallest power of two >= |x|, within [2^-126, 2^127] (1 for x = 0 or not finite): the scale
// that puts every weight of magnitude <= |x| into [-1, 1] (into [-2, 2] above 2^127) with no
// rounding of its own; its inverse is a finite float too.
float PowerOfTwoAtLeast(float x);

}  // namespace attnviz
