// attnviz figure: stb_truetype text (figure_font.h).
#include "figure/figure_font.h"

#include <algorithm>
#include <cmath>

#include "io/utf8.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#define STBTT_STATIC
#define STB_TRUETYPE_IMPLEMENTATION
#include "imstb_truetype.h"
#pragma GCC diagnostic pop

namespace attnviz {

struct FigureFont::Impl {
  stbtt_fontinfo info;
  bool ok = false;
};

FigureFont::FigureFont() : impl_(new Impl) {}
FigureFont::~FigureFont() = default;

Status FigureFont::Init(const uint8_t* ttf, size_t size) {
  impl_->ok = false;
  cache_.clear();
  if (!ttf || size < 12) return Status::Error("figure font: no font data");
  const int offset = stbtt_GetFontOffsetForIndex(ttf, 0);
  if (offset < 0 || !stbtt_InitFont(&impl_->info, ttf, offset))
    return Status::Error("figure font: not a TrueType font");
  impl_->ok = true;
  return Status::Ok();
}

const FigureFont::Glyph& FigureFont::GetGlyph(uint32_t cp, float px) {
  const auto key = std::make_pair(cp, (int)std::lround(px * 16));
  auto it = cache_.find(key);
  if (it != cache_.end()) return it->second;
  Glyph& g = cache_[key];
  if (!impl_->ok) return g;
  const float scale = stbtt_ScaleForPixelHeight(&impl_->info, px);
  const int index = stbtt_FindGlyphIndex(&impl_->info, (int)cp);  // 0 = .notdef, drawn as its box
  int adv = 0, lsb = 0;
  stbtt_GetGlyphHMetrics(&impl_->info, index, &adv, &lsb);
  g.advance = adv * scale;
  if (index == 0 && cp > 0x20) {  // drawn as a box the size of a capital letter, never as nothing
    g.missing = true;
    g.advance = std::max(g.advance, px * 0.6f);
    return g;
  }
  int x0, y0, x1, y1;
  stbtt_GetGlyphBitmapBox(&impl_->info, index, scale, scale, &x0, &y0, &x1, &y1);
  g.w = std::max(0, x1 - x0), g.h = std::max(0, y1 - y0), g.xoff = x0, g.yoff = y0;
  if (g.w > 0 && g.h > 0 && g.w < 4096 && g.h < 4096) {
    g.bitmap.assign((size_t)g.w * (size_t)g.h, 0);
    stbtt_MakeGlyphBitmap(&impl_->info, g.bitmap.data(), g.w, g.h, g.w, scale, scale, index);
  } else {
    g.w = g.h = 0;
  }
  return g;
}

float FigureFont::Ascent(float px) const {
  if (!impl_->ok) return px;
  int ascent = 0, descent = 0, gap = 0;
  stbtt_GetFontVMetrics(&impl_->info, &ascent, &descent, &gap);
  return ascent * stbtt_ScaleForPixelHeight(&impl_->info, px);
}

float FigureFont::Measure(const std::string& utf8, float px) {
  std::vector<uint32_t> cps;
  DecodeUtf8Lossy(utf8, &cps);
  float w = 0;
  for (uint32_t cp : cps) w += GetGlyph(cp, px).advance;
  return w;
}

void FigureFont::Draw(RgbaImage* img, float x, float y, const std::string& utf8, float px, Rgb8 color) {
  std::vector<uint32_t> cps;
  DecodeUtf8Lossy(utf8, &cps);
  float pen = x;
  const int base = (int)std::lround(y);
  for (uint32_t cp : cps) {
    const Glyph& g = GetGlyph(cp, px);
    const int gx = (int)std::lround(pen) + g.xoff, gy = base + g.yoff;
    if (g.missing)
      StrokeRect(img, (int)std::lround(pen + px * 0.08f), base - (int)std::lround(px * 0.7f),
                 (int)std::lround(pen + g.advance - px * 0.08f), base, 1, color);
    for (int j = 0; j < g.h; ++j)
      for (int i = 0; i < g.w; ++i) BlendPixel(img, gx + i, gy + j, color, g.bitmap[(size_t)j * g.w + i]);
    pen += g.advance;
  }
}

// Rotated by 90 degrees counter-clockwise: a glyph pixel (i, j) of the upright bitmap (i right,
// j down from its top-left at (xoff, yoff) from the pen) lands at (x + yoff + j, pen - xoff - i).
void FigureFont::DrawUp(RgbaImage* img, float x, float y, const std::string& utf8, float px, Rgb8 color) {
  std::vector<uint32_t> cps;
  DecodeUtf8Lossy(utf8, &cps);
  float pen = y;
  const int base = (int)std::lround(x);
  for (uint32_t cp : cps) {
    const Glyph& g = GetGlyph(cp, px);
    const int py = (int)std::lround(pen);
    if (g.missing)
      StrokeRect(img, base - (int)std::lround(px * 0.7f), (int)std::lround(pen - g.advance + px * 0.08f), base,
                 (int)std::lround(pen - px * 0.08f), 1, color);
    for (int j = 0; j < g.h; ++j)
      for (int i = 0; i < g.w; ++i)
        BlendPixel(img, base + g.yoff + j, py - g.xoff - i, color, g.bitmap[(size_t)j * g.w + i]);
    pen -= g.advance;
  }
}

}  // namespace attnviz
