// Native labels: fontconfig picks, for each character, the first font of the "DejaVu Sans,
// sans-serif" fallback list that has it (Debian's Noto fonts cover CJK, emoji, Arabic, Hebrew,
// Devanagari, Thai); HarfBuzz shapes each run of one font and one direction; FreeType draws the
// glyphs (colour emoji from their bitmap strikes, scaled). Bidi is simplified: runs keep their
// logical order unless the label starts with right-to-left text, then their order is reversed.
#include <fontconfig/fontconfig.h>
#include <ft2build.h>
#include FT_FREETYPE_H
#include <hb-ft.h>
#include <hb.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "platform/label_raster.h"

namespace attnviz {
namespace {

struct FallbackFont {
  std::string file;
  int index = 0;
  FcCharSet* charset = nullptr;  // owned (a copy)
  FT_Face face = nullptr;        // opened on first use
  hb_font_t* hb = nullptr;
  bool failed = false;  // could not be opened: skipped
  float strike_px = 0;  // bitmap-only fonts (colour emoji): the selected strike's size
  float set_px = 0;     // scalable fonts: the size last set
};

struct Run {
  int font = -1;
  bool rtl = false;
  std::vector<uint32_t> cps;
};

struct ShapedGlyph {
  int font;
  unsigned gid;
  float x, y;  // pen position of the glyph origin, pixels (y up)
};

uint32_t NextCodepoint(const std::string& s, size_t* i) {
  const unsigned char c = (unsigned char)s[*i];
  int n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
  if (n == 0 || *i + n > s.size()) {
    ++*i;
    return 0xFFFD;
  }
  uint32_t cp = n == 1 ? c : c & (0x7F >> n);
  for (int k = 1; k < n; ++k) cp = (cp << 6) | ((unsigned char)s[*i + k] & 0x3F);
  *i += n;
  return cp;
}

class FreeTypeLabelRasterizer : public LabelRasterizer {
 public:
  ~FreeTypeLabelRasterizer() override {
    for (FallbackFont& f : fonts_) {
      if (f.hb) hb_font_destroy(f.hb);
      if (f.face) FT_Done_Face(f.face);
      if (f.charset) FcCharSetDestroy(f.charset);
    }
    if (lib_) FT_Done_FreeType(lib_);
  }

  bool Init() {
    if (FT_Init_FreeType(&lib_) != 0 || !FcInit()) return false;
    FcPattern* pat = FcNameParse((const FcChar8*)"DejaVu Sans,sans-serif");
    FcConfigSubstitute(nullptr, pat, FcMatchPattern);
    FcDefaultSubstitute(pat);
    FcResult result;
    FcFontSet* set = FcFontSort(nullptr, pat, FcTrue, nullptr, &result);
    FcPatternDestroy(pat);
    if (!set) return false;
    for (int i = 0; i < set->nfont && fonts_.size() < 512; ++i) AddFont(set->fonts[i]);
    FcFontSetDestroy(set);
    // Colour emoji: make sure the emoji font is in the list even when another covered its characters.
    FcPattern* emoji = FcNameParse((const FcChar8*)"Noto Color Emoji");
    FcConfigSubstitute(nullptr, emoji, FcMatchPattern);
    FcDefaultSubstitute(emoji);
    if (FcPattern* m = FcFontMatch(nullptr, emoji, &result)) {
      FcChar8* fam = nullptr;
      if (FcPatternGetString(m, FC_FAMILY, 0, &fam) == FcResultMatch &&
          std::string((const char*)fam) == "Noto Color Emoji")
        emoji_font_ = AddFont(m);
      FcPatternDestroy(m);
    }
    FcPatternDestroy(emoji);
    return !fonts_.empty();
  }

  bool Rasterize(const std::string& utf8, float px, uint32_t rgba, LabelBitmap* out) override {
    if (!(px > 1 && px < 512)) return false;
    std::vector<Run> runs;
    Segment(utf8, &runs);
    if (runs.empty()) return false;
    if (runs.front().rtl) std::reverse(runs.begin(), runs.end());
    std::vector<ShapedGlyph> glyphs;
    float pen = 0;
    for (const Run& r : runs) Shape(r, px, &pen, &glyphs);
    if (glyphs.empty()) return false;
    // Draw on a generous canvas, then crop to the ink united with the nominal line box.
    const int origin_x = (int)std::ceil(px * 0.5f), base = (int)std::ceil(px * 1.35f);
    const int W = std::min(8192, (int)std::ceil(pen) + 2 * origin_x + 2), H = (int)std::ceil(px * 2.4f);
    canvas_.assign((size_t)W * H * 4, 0.0f);
    text_rgb_[0] = (rgba & 255) / 255.0f, text_rgb_[1] = ((rgba >> 8) & 255) / 255.0f;
    text_rgb_[2] = ((rgba >> 16) & 255) / 255.0f;
    for (const ShapedGlyph& g : glyphs) DrawGlyph(g, px, origin_x, base, W, H);
    Compose(W, H, origin_x, base, pen, px, rgba, out);
    return out->width > 0;
  }

  const char* Name() const override { return "freetype"; }

 private:
  int AddFont(FcPattern* p) {
    FcChar8* file = nullptr;
    FcCharSet* cs = nullptr;
    int index = 0;
    if (FcPatternGetString(p, FC_FILE, 0, &file) != FcResultMatch ||
        FcPatternGetCharSet(p, FC_CHARSET, 0, &cs) != FcResultMatch)
      return -1;
    FcPatternGetInteger(p, FC_INDEX, 0, &index);
    FallbackFont f;
    f.file = (const char*)file;
    f.index = index;
    f.charset = FcCharSetCopy(cs);
    fonts_.push_back(f);
    return (int)fonts_.size() - 1;
  }

  bool Open(FallbackFont& f) {
    if (f.face) return true;
    if (f.failed) return false;
    if (FT_New_Face(lib_, f.file.c_str(), f.index, &f.face) != 0) {
      f.failed = true;
      f.face = nullptr;
      return false;
    }
    if (!FT_IS_SCALABLE(f.face)) {
      if (f.face->num_fixed_sizes <= 0 || FT_Select_Size(f.face, 0) != 0) {
        FT_Done_Face(f.face);
        f.face = nullptr;
        f.failed = true;
        return false;
      }
      f.strike_px = f.face->size->metrics.y_ppem;
    }
    f.hb = hb_ft_font_create_referenced(f.face);
    return true;
  }

  // The font for a character: the emoji font for emoji-range characters when there is one, else
  // the first font of the list that has it (its first font when none does).
  int FontFor(uint32_t cp) {
    if (emoji_font_ >= 0 && cp >= 0x1F000 && FcCharSetHasChar(fonts_[emoji_font_].charset, cp) &&
        Open(fonts_[emoji_font_]))
      return emoji_font_;
    for (int i = 0; i < (int)fonts_.size(); ++i)
      if (FcCharSetHasChar(fonts_[i].charset, cp) && Open(fonts_[i])) return i;
    return Open(fonts_[0]) ? 0 : -1;
  }

  // Runs of one font and one direction. Marks, joiners and variation selectors stay in the run
  // before them (the cluster must be shaped by one font).
  void Segment(const std::string& s, std::vector<Run>* runs) {
    hb_unicode_funcs_t* uf = hb_unicode_funcs_get_default();
    for (size_t i = 0; i < s.size();) {
      const uint32_t cp = NextCodepoint(s, &i);
      const hb_unicode_general_category_t cat = hb_unicode_general_category(uf, cp);
      const bool joins =
          cat == HB_UNICODE_GENERAL_CATEGORY_NON_SPACING_MARK || cat == HB_UNICODE_GENERAL_CATEGORY_SPACING_MARK ||
          cat == HB_UNICODE_GENERAL_CATEGORY_ENCLOSING_MARK || cp == 0x200D || (cp >= 0xFE00 && cp <= 0xFE0F) ||
          (cp >= 0x1F3FB && cp <= 0x1F3FF) || (cp >= 0xE0020 && cp <= 0xE007F);
      const bool after_zwj = !runs->empty() && !runs->back().cps.empty() && runs->back().cps.back() == 0x200D;
      if ((joins || after_zwj) && !runs->empty()) {
        runs->back().cps.push_back(cp);
        continue;
      }
      const hb_script_t script = hb_unicode_script(uf, cp);
      const bool neutral = script == HB_SCRIPT_COMMON || script == HB_SCRIPT_INHERITED;
      const bool rtl = neutral ? (!runs->empty() && runs->back().rtl)
                               : hb_script_get_horizontal_direction(script) == HB_DIRECTION_RTL;
      const int font = FontFor(cp);
      if (font < 0) continue;
      if (runs->empty() || runs->back().font != font || runs->back().rtl != rtl) runs->push_back(Run{font, rtl, {}});
      runs->back().cps.push_back(cp);
    }
  }

  void SetSize(FallbackFont& f, float px) {
    if (f.strike_px > 0 || f.set_px == px) return;
    FT_Set_Pixel_Sizes(f.face, 0, (FT_UInt)std::lround(px));
    hb_ft_font_changed(f.hb);
    f.set_px = px;
  }

  void Shape(const Run& r, float px, float* pen, std::vector<ShapedGlyph>* out) {
    FallbackFont& f = fonts_[r.font];
    SetSize(f, px);
    const float scale = f.strike_px > 0 ? px / f.strike_px : 1.0f;
    hb_buffer_t* buf = hb_buffer_create();
    hb_buffer_add_codepoints(buf, r.cps.data(), (int)r.cps.size(), 0, (int)r.cps.size());
    hb_buffer_guess_segment_properties(buf);
    hb_buffer_set_direction(buf, r.rtl ? HB_DIRECTION_RTL : HB_DIRECTION_LTR);
    hb_shape(f.hb, buf, nullptr, 0);
    unsigned n = 0;
    const hb_glyph_info_t* info = hb_buffer_get_glyph_infos(buf, &n);
    const hb_glyph_position_t* pos = hb_buffer_get_glyph_positions(buf, &n);
    for (unsigned i = 0; i < n && out->size() < 4096; ++i) {
      out->push_back(
          {r.font, info[i].codepoint, *pen + pos[i].x_offset / 64.0f * scale, pos[i].y_offset / 64.0f * scale});
      *pen += pos[i].x_advance / 64.0f * scale;
    }
    hb_buffer_destroy(buf);
  }

  // Composites one glyph into the premultiplied float canvas (coverage, or colour for emoji).
  void DrawGlyph(const ShapedGlyph& g, float px, int origin_x, int base, int W, int H) {
    FallbackFont& f = fonts_[g.font];
    SetSize(f, px);
    const bool colour = FT_HAS_COLOR(f.face);
    if (FT_Load_Glyph(f.face, g.gid, FT_LOAD_RENDER | (colour ? FT_LOAD_COLOR : 0)) != 0) return;
    const FT_GlyphSlot slot = f.face->glyph;
    const FT_Bitmap& bm = slot->bitmap;
    const float scale = f.strike_px > 0 ? px / f.strike_px : 1.0f;
    const float x0 = origin_x + g.x + slot->bitmap_left * scale, y0 = base - g.y - slot->bitmap_top * scale;
    const int dw = (int)std::ceil(bm.width * scale), dh = (int)std::ceil(bm.rows * scale);
    const int ix0 = (int)std::floor(x0), iy0 = (int)std::floor(y0);
    for (int dy = 0; dy < dh; ++dy) {
      for (int dx = 0; dx < dw; ++dx) {
        const int X = ix0 + dx, Y = iy0 + dy;
        if (X < 0 || Y < 0 || X >= W || Y >= H) continue;
        float src[4] = {0, 0, 0, 0};  // premultiplied; src[3] = coverage
        SampleBox(bm, dx / scale, dy / scale, (dx + 1) / scale, (dy + 1) / scale, src);
        float* d = &canvas_[((size_t)Y * W + X) * 4];
        if (bm.pixel_mode != FT_PIXEL_MODE_BGRA)
          for (int k = 0; k < 3; ++k) src[k] = text_rgb_[k] * src[3];
        Over(d, src);
      }
    }
  }

  // Average of the bitmap over [sx0, sx1) x [sy0, sy1) in bitmap pixels: premultiplied RGBA for
  // BGRA bitmaps, coverage in [3] for grey ones.
  static void SampleBox(const FT_Bitmap& bm, float sx0, float sy0, float sx1, float sy1, float* out) {
    const int x0 = std::max(0, (int)sx0), y0 = std::max(0, (int)sy0);
    const int x1 = std::min((int)bm.width, std::max(x0 + 1, (int)std::ceil(sx1)));
    const int y1 = std::min((int)bm.rows, std::max(y0 + 1, (int)std::ceil(sy1)));
    int n = 0;
    for (int y = y0; y < y1; ++y) {
      const unsigned char* row = bm.buffer + (ptrdiff_t)y * bm.pitch;
      for (int x = x0; x < x1; ++x, ++n) {
        if (bm.pixel_mode == FT_PIXEL_MODE_BGRA) {
          out[0] += row[x * 4 + 2] / 255.0f, out[1] += row[x * 4 + 1] / 255.0f;
          out[2] += row[x * 4 + 0] / 255.0f, out[3] += row[x * 4 + 3] / 255.0f;
        } else if (bm.pixel_mode == FT_PIXEL_MODE_MONO) {
          out[3] += (row[x >> 3] >> (7 - (x & 7))) & 1;
        } else {
          out[3] += row[x] / 255.0f;
        }
      }
    }
    if (n > 0)
      for (int k = 0; k < 4; ++k) out[k] /= n;
  }

  // Premultiplied "over".
  static void Over(float* d, const float* s) {
    const float a = std::min(1.0f, s[3]);
    for (int k = 0; k < 3; ++k) d[k] = s[k] + d[k] * (1 - a);
    d[3] = a + d[3] * (1 - a);
  }

  void Compose(int W, int H, int origin_x, int base, float pen, float px, uint32_t rgba, LabelBitmap* out) {
    // One line of the UI font (1.17 em) unless the ink is taller.
    int top = std::max(0, base - (int)std::ceil(px * 0.93f)),
        bottom = std::min(H - 1, base + (int)std::ceil(px * 0.24f) - 1);
    int left = std::max(0, origin_x - 1), right = std::min(W - 1, origin_x + (int)std::ceil(pen));
    for (int y = 0; y < H; ++y)
      for (int x = 0; x < W; ++x)
        if (canvas_[((size_t)y * W + x) * 4 + 3] > 1.0f / 255) {
          top = std::min(top, y), bottom = std::max(bottom, y);
          left = std::min(left, x), right = std::max(right, x);
        }
    const float ta = ((rgba >> 24) & 255) / 255.0f;
    out->width = right - left + 1;
    out->height = bottom - top + 1;
    out->baseline = (float)(base - top);
    out->rgba.assign((size_t)out->width * out->height * 4, 0);
    for (int y = 0; y < out->height; ++y) {
      for (int x = 0; x < out->width; ++x) {
        const float* c = &canvas_[((size_t)(y + top) * W + (x + left)) * 4];
        uint8_t* o = &out->rgba[((size_t)y * out->width + x) * 4];
        const float a = std::min(1.0f, c[3]);
        if (a <= 0) continue;
        const float r = c[0] / a, g = c[1] / a, b = c[2] / a;  // straight alpha for GL blending
        o[0] = (uint8_t)std::lround(std::min(1.0f, r) * 255);
        o[1] = (uint8_t)std::lround(std::min(1.0f, g) * 255);
        o[2] = (uint8_t)std::lround(std::min(1.0f, b) * 255);
        o[3] = (uint8_t)std::lround(a * ta * 255);
      }
    }
  }

  FT_Library lib_ = nullptr;
  std::vector<FallbackFont> fonts_;
  int emoji_font_ = -1;
  std::vector<float> canvas_;  // premultiplied RGBA, reused
  float text_rgb_[3] = {1, 1, 1};
};

}  // namespace

std::unique_ptr<LabelRasterizer> MakeLabelRasterizer() {
  std::unique_ptr<FreeTypeLabelRasterizer> r(new FreeTypeLabelRasterizer);
  if (!r->Init()) return nullptr;
  return r;
}

}  // namespace attnviz
