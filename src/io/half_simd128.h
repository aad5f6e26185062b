// attnviz io: F16 weights in WebAssembly SIMD lanes, for DecodeHalfWeights (safetensors.cpp), as
// half_f16c.h does natively on x86. Elsewhere it converts nothing.
#pragma once

#include <cstddef>
#include <cstdint>

namespace attnviz {

// DecodeHalfWeights' rule for the first n - n % 8 halves at src: NaN, infinities and negative
// numbers become 0 and are counted into *bad; *top becomes the largest kept half's bits if larger.
// Returns how many were converted (the caller converts the rest): 0 outside WebAssembly SIMD.
size_t DecodeHalfWeightsSimd128(const uint8_t* src, size_t n, float* dst, int32_t* top, size_t* bad);

}  // namespace attnviz
