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
  struct Face {
    std::shared_ptr<const std::vector<uint8_t>> owned;  // null for the primary font
    stbtt_fontinfo info;
  };
  std::vector<Face> faces;  // [0] the primary font, then the fallbacks
};

FigureFont::FigureFont() : impl_(new Impl) {}
FigureFont::~FigureFont() = default;

namespace {

bool InitFace(const uint8_t* data, size_t size, int face_index, stbtt_fontinfo* info) {
  if (!data || size < 12 || face_index < 0) return false;
  const int offset = stbtt_GetFontOffsetForIndex(data, face_index);
  return offset >= 0 && (size_t)offset < size && stbtt_InitFont(info, data, offset);
}

// Format and invisible characters (zero-width spaces and joiners, direction marks, variation
// selectors, the BOM) take no room and draw nothing rather than a box.
bool IsDefaultIgnorable(uint32_t cp) {
  return cp == 0xAD || (cp >= 0x200B && cp <= 0x200F) || (cp >= 0x202A && cp <= 0x202E) ||
         (cp >= 0x2060 && cp <= 0x206F) || (cp >= 0xFE00 && cp <= 0xFE0F) || cp == 0xFEFF ||
         (cp >= 0xE0000 && cp <= 0xE0FFF);
}

}  // namespace

Status FigureFont::Init(const uint8_t* ttf, size_t size) {
  impl_->faces.clear();
  cache_.clear();
  if (!ttf || size < 12) return Status::Error("figure font: no font data");
  Impl::Face face;
  if (!InitFace(ttf, size, 0, &face.info)) return Status::Error("figure font: not a TrueType font");
  impl_->faces.push_back(std::move(face));
  return Status::Ok();
}

Status FigureFont::AddFallback(std::shared_ptr<const std::vector<uint8_t>> bytes, int face_index) {
  if (impl_->faces.empty()) return Status::Error("figure font: a fallback needs a primary font first");
  Impl::Face face;
  if (!bytes || !InitFace(bytes->data(), bytes->size(), face_index, &face.info))
    return Status::Error("figure font: fallback is not a TrueType font");
  face.owned = std::move(bytes);
  impl_->faces.push_back(std::move(face));
  cache_.clear();
  return Status::Ok();
}

int FigureFont::FallbackCount() const {
  return impl_->faces.empty() ? 0 : (int)impl_->faces.size() - 1;
}

int FigureFont::FaceFor(uint32_t cp) const {
  for (size_t k = 0; k < impl_->faces.size(); ++k)
    if (stbtt_FindGlyphIndex(&impl_->faces[k].info, (int)cp) != 0) return (int)k;
  return -1;
}

const FigureFont::Glyph& FigureFont::GetGlyph(uint32_t cp, float px) {
  const auto key = std::make_pair(cp, (int)std::lround(px * 16));
  auto it = cache_.find(key);
  if (it != cache_.end()) return it->second;
  Glyph& g = cache_[key];
  if (impl_->faces.empty() || IsDefaultIgnorable(cp)) return g;
  const stbtt_fontinfo* primary = &impl_->faces[0].info;
  float scale = stbtt_ScaleForPixelHeight(primary, px);
  const int k = FaceFor(cp);
  const stbtt_fontinfo* info = k > 0 ? &impl_->faces[(size_t)k].info : primary;
  if (k > 0)  // the same em size as the primary font, whatever the fallback's ascent and descent
    scale = stbtt_ScaleForMappingEmToPixels(info, scale / stbtt_ScaleForMappingEmToPixels(primary, 1.0f));
  const int index = k < 0 ? 0 : stbtt_FindGlyphIndex(info, (int)cp);
  int adv = 0, lsb = 0;
  stbtt_GetGlyphHMetrics(info, index, &adv, &lsb);
  g.advance = adv * scale;
  if (index == 0 && cp > 0x20) {  // drawn as a box the size of a capital letter, never as nothing
    g.missing = true;
    g.advance = std::max(g.advance, px * 0.6f);
    return g;
  }
  int x0, y0, x1, y1;
  stbtt_GetGlyphBitmapBox(info, index, scale, scale, &x0, &y0, &x1, &y1);
  g.w = std::max(0, x1 - x0), g.h = std::max(0, y1 - y0), g.xoff = x0, g.yoff = y0;
  if (g.w > 0 && g.h > 0 && g.w < 4096 && g.h < 4096) {
    g.bitmap.assign((size_t)g.w * (size_t)g.h, 0);
    stbtt_MakeGlyphBitmap(info, g.bitmap.data(), g.w, g.h, g.w, scale, scale, index);
  } else {
    g.w = g.h = 0;
  }
  return g;
}

float FigureFont::Ascent(float px) const {
  if (impl_->faces.empty()) return px;
  const stbtt_fontinfo* info = &impl_->faces[0].info;
  int ascent = 0, descent = 0, gap = 0;
  stbtt_GetFontVMetrics(info, &ascent, &descent, &gap);
  return ascent * stbtt_ScaleForPixelHeight(info, px);
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
