// attnviz figure: animated GIF through Debian's giflib (native builds only).
//
//   EncodeGif     RGBA frames of one size -> an endlessly looping GIF: one 256-colour palette for
//                 all frames (the most frequent colours: cells, which take LUT colours, stay
//                 exact; anti-aliased text takes the nearest), LZW by giflib
//   ReadGifInfo   size, frame count and per-frame delays of a GIF (tests), and the frames' pixels
#pragma once
#include <cstdint>
#include <vector>

#include "core/status.h"
#include "figure/figure_image.h"

namespace attnviz {

Status EncodeGif(const std::vector<RgbaImage>& frames, const std::vector<int>& delays_cs, std::vector<uint8_t>* out);

struct GifInfo {
  int width = 0, height = 0;      // logical screen
  int frames = 0;                 // images in the file
  std::vector<int> delays_cs;     // per frame, hundredths of a second (0 when absent)
  std::vector<RgbaImage> images;  // each frame as RGBA (frames are full-size here)
};
Status ReadGifInfo(const uint8_t* data, size_t size, GifInfo* out);

}  // namespace attnviz
