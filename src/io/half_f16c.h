// attnviz io: F16 weights converted by the CPU's own instruction (x86 F16C, vcvtph2ps), for
// DecodeHalfWeights (safetensors.cpp). half_f16c.cpp is compiled with -mf16c and used only when the
// CPU reports F16C and AVX; elsewhere (WebAssembly, other CPUs) it converts nothing.
#pragma once

#include <cstddef>
#include <cstdint>

namespace attnviz {

bool HalfF16cAvailable();  // decided once, at the first call

// DecodeHalfWeights' rule for the first n - n % 8 halves at src: NaN, infinities and negative
// numbers become 0 and are counted into *bad; *top becomes the largest kept half's bits if larger.
// Returns how many were converted (the caller converts the rest).
size_t DecodeHalfWeightsF16c(const uint8_t* src, size_t n, float* dst, int32_t* top, size_t* bad);

}  // namespace attnviz
