// attnviz figure: text for CPU figures, rasterised with stb_truetype (the copy inside Dear
// ImGui's source tree) from a TrueType font in memory (the CLI passes the embedded UI font).
//
//   FigureFont::Init     parses the font; the bytes must outlive the object
//   FigureFont::Measure  advance width of a UTF-8 string at a pixel height
//   FigureFont::Draw     horizontal text, baseline at (x, y)
//   FigureFont::DrawUp   text rotated 90 degrees counter-clockwise (reads bottom to top); each
//                        glyph bitmap is transposed, not resampled, so rotated labels stay crisp
//   FigureFont::AddFallback  a further face for codepoints the primary font lacks; the first
//                        face (primary, then fallbacks in order) with a glyph draws it, scaled
//                        to the primary font's em size (AddSystemFallbacks in
//                        system_fallback_fonts.h finds them with fontconfig)
// Glyphs are cached per (codepoint, pixel height). Codepoints no face has draw a box: never
// nothing. No shaping: one glyph per codepoint, in logical order.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "figure/figure_image.h"

namespace attnviz {

class FigureFont {
 public:
  FigureFont();
  ~FigureFont();
  Status Init(const uint8_t* ttf, size_t size);  // the bytes are not copied
  // Takes the bytes; face_index picks the face of a TrueType collection (.ttc).
  Status AddFallback(std::shared_ptr<const std::vector<uint8_t>> bytes, int face_index);
  int FaceFor(uint32_t cp) const;  // 0 the primary font, k the k-th fallback, -1 none has it
  int FallbackCount() const;
  float Measure(const std::string& utf8, float px);  // advance width in pixels
  float Ascent(float px) const;                      // baseline - top of the tallest glyph
  void Draw(RgbaImage* img, float x, float y, const std::string& utf8, float px, Rgb8 color);
  void DrawUp(RgbaImage* img, float x, float y, const std::string& utf8, float px,
              Rgb8 color);  // baseline x, text starts at y

 private:
  struct Glyph {
    int w = 0, h = 0, xoff = 0, yoff = 0;  // bitmap size and offset from the pen on the baseline
    float advance = 0;                     // pixels
    bool missing = false;                  // no face has the glyph: drawn as an outlined box
    std::vector<uint8_t> bitmap;           // [h, w] coverage
  };
  const Glyph& GetGlyph(uint32_t cp, float px);
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::map<std::pair<uint32_t, int>, Glyph> cache_;  // (codepoint, px * 16)
};

}  // namespace attnviz
