// attnviz figure: PNG in and out through Debian's libpng (native builds only).
#pragma once
#include <cstdint>
#include <vector>

#include "core/status.h"
#include "figure/figure_image.h"

namespace attnviz {

// RGBA8 image -> PNG bytes; dpi > 0 writes a pHYs chunk (pixels per metre) so print tools size it.
Status EncodePng(const RgbaImage& img, float dpi, std::vector<uint8_t>* out);
// Same from raw RGBA rows (top row first), e.g. glReadPixels output flipped.
Status EncodePngRgba(const uint8_t* rgba, int width, int height, float dpi, std::vector<uint8_t>* out);
// PNG bytes -> RGBA8 (any PNG colour type is converted); refuses images above max_pixels.
Status DecodePng(const uint8_t* data, size_t size, RgbaImage* out, int64_t max_pixels = int64_t(1) << 28);

}  // namespace attnviz
