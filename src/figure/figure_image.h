// attnviz figure: CPU images for exported figures (PNG and GIF without a GPU or a display).
//
//   RgbaImage     a width x height RGBA8 image, row-major, top row first
//   FillRect      an opaque rectangle, clipped to the image
//   BlendPixel    one pixel blended with a coverage in [0, 255] (text anti-aliasing)
//
// The figure folder is native only (the CLI and the desktop app's PNG export): it links Debian's
// libpng and giflib. The browser encodes with its canvas and npm's gifenc instead.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace attnviz {

struct Rgb8 {
  uint8_t r = 0, g = 0, b = 0;  // sRGB
};

struct RgbaImage {
  int width = 0, height = 0;                   // pixels
  std::vector<uint8_t> rgba;                   // [height, width, 4], top row first
  void Resize(int w, int h, Rgb8 background);  // every pixel = background, alpha 255
  uint8_t* At(int x, int y) { return &rgba[((size_t)y * (size_t)width + (size_t)x) * 4]; }
  const uint8_t* At(int x, int y) const { return &rgba[((size_t)y * (size_t)width + (size_t)x) * 4]; }
};

void FillRect(RgbaImage* img, int x0, int y0, int x1, int y1, Rgb8 c);               // [x0, x1) x [y0, y1), clipped
void StrokeRect(RgbaImage* img, int x0, int y0, int x1, int y1, int width, Rgb8 c);  // outline inside the box
void BlendPixel(RgbaImage* img, int x, int y, Rgb8 c, int coverage);  // coverage 0..255; outside: ignored

}  // namespace attnviz
