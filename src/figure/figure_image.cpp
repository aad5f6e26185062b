// attnviz figure: CPU image primitives (figure_image.h).
#include "figure/figure_image.h"

#include <algorithm>

namespace attnviz {

void RgbaImage::Resize(int w, int h, Rgb8 background) {
  width = std::max(0, w);
  height = std::max(0, h);
  rgba.assign((size_t)width * (size_t)height * 4, 255);
  for (size_t i = 0; i < rgba.size(); i += 4) {
    rgba[i] = background.r;
    rgba[i + 1] = background.g;
    rgba[i + 2] = background.b;
  }
}

void FillRect(RgbaImage* img, int x0, int y0, int x1, int y1, Rgb8 c) {
  x0 = std::max(x0, 0), y0 = std::max(y0, 0);
  x1 = std::min(x1, img->width), y1 = std::min(y1, img->height);
  for (int y = y0; y < y1; ++y)
    for (int x = x0; x < x1; ++x) {
      uint8_t* p = img->At(x, y);
      p[0] = c.r, p[1] = c.g, p[2] = c.b, p[3] = 255;
    }
}

void StrokeRect(RgbaImage* img, int x0, int y0, int x1, int y1, int width, Rgb8 c) {
  FillRect(img, x0, y0, x1, y0 + width, c);
  FillRect(img, x0, y1 - width, x1, y1, c);
  FillRect(img, x0, y0, x0 + width, y1, c);
  FillRect(img, x1 - width, y0, x1, y1, c);
}

void BlendPixel(RgbaImage* img, int x, int y, Rgb8 c, int coverage) {
  if (x < 0 || y < 0 || x >= img->width || y >= img->height || coverage <= 0) return;
  coverage = std::min(coverage, 255);
  uint8_t* p = img->At(x, y);
  p[0] = (uint8_t)((p[0] * (255 - coverage) + c.r * coverage + 127) / 255);
  p[1] = (uint8_t)((p[1] * (255 - coverage) + c.g * coverage + 127) / 255);
  p[2] = (uint8_t)((p[2] * (255 - coverage) + c.b * coverage + 127) / 255);
}

}  // namespace attnviz
