#include "app/labels.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "imgui_internal.h"
#include "render/label_cache.h"

namespace attnviz {
namespace {

constexpr const char* kSpaceMark = "\xc2\xb7";             // · (what DisplayTokens made of ▁ and Ġ)
constexpr const char* kContinuationMark = "\xe2\x80\x90";  // ‐ (drawn for WordPiece's ##)

// ImGui sizes a font by its line (ascent + descent); CSS and FreeType by its em. For DejaVu Sans,
// the UI font: 2048 units per em over 1901 + 483 units of line.
constexpr float kEmPerLine = 2048.0f / 2384.0f;

// Width of text in UI pixels without rasterising it: ImGui's advances where the font has the
// glyph, one em for wide scripts (CJK, Hangul, emoji), nothing for combining marks, 0.6 em else.
float EstimateWidth(const std::string& text) {
  ImFont* font = ImGui::GetFont();
  const float em = ImGui::GetFontSize();
  const float scale = em / font->FontSize;
  float w = 0;
  const char* s = text.c_str();
  const char* e = s + text.size();
  while (s < e) {
    unsigned int c = 0;
    const int n = ImTextCharFromUtf8(&c, s, e);
    if (n <= 0) break;
    s += n;
    const ImFontGlyph* g = c <= IM_UNICODE_CODEPOINT_MAX ? font->FindGlyphNoFallback((ImWchar)c) : nullptr;
    if (g)
      w += g->AdvanceX * scale;
    else if ((c >= 0x300 && c < 0x370) || (c >= 0x591 && c < 0x5C8) || (c >= 0x610 && c < 0x61B) ||
             (c >= 0x64B && c < 0x660) || (c >= 0x900 && c < 0x904) || (c >= 0x93A && c < 0x950) ||
             (c >= 0xE31 && c < 0xE3B) || (c >= 0xE47 && c < 0xE4F) || c == 0x200D || (c >= 0xFE00 && c < 0xFE10))
      continue;  // combining marks, joiners and variation selectors take no room of their own
    else if (c >= 0x1100 && ((c < 0x1200) || (c >= 0x2E80 && c < 0xA500) || (c >= 0xAC00 && c < 0xD7B0) ||
                             (c >= 0xF900 && c < 0xFB00) || (c >= 0xFF00 && c < 0xFF61) || c >= 0x1F000))
      w += em;
    else
      w += 0.6f * em;
  }
  return w;
}

// One piece of a label (the mark or the body) as it will be drawn.
struct Piece {
  const LabelTexture* tex = nullptr;  // null: ImGui's font draws it
  float along = 0, across = 0;        // UI pixels along and across the text direction
};

Piece MeasurePiece(const LabelEnv& env, const std::string& text, ImU32 col, bool vertical) {
  Piece p;
  if (text.empty()) return p;
  if (env.cache && (vertical || !FontCovers(text)))
    p.tex = env.cache->Get(text, ImGui::GetFontSize() * kEmPerLine * env.dpi_scale, col, vertical ? 1 : 0);
  if (p.tex) {
    const float w = p.tex->width / env.dpi_scale, h = p.tex->height / env.dpi_scale;
    p.along = vertical ? h : w;
    p.across = vertical ? w : h;
  } else {
    p.along = ImGui::CalcTextSize(text.c_str()).x;
    p.across = ImGui::GetTextLineHeight();
  }
  return p;
}

// Draws a measured piece with its box's top-left at (x, y); across_box is the label's thickness.
void DrawPiece(ImDrawList* dl, const LabelEnv& env, const Piece& p, float x, float y, float across_box, ImU32 col,
               const std::string& text, bool vertical) {
  if (text.empty()) return;
  if (p.tex) {
    // On whole device pixels: the texture's pixels land 1:1 on the screen's, unblurred.
    auto snap = [&](float v) { return std::round(v * env.dpi_scale) / env.dpi_scale; };
    const ImVec2 a = vertical ? ImVec2(snap(x + (across_box - p.across) * 0.5f), snap(y))
                              : ImVec2(snap(x), snap(y + (across_box - p.across) * 0.5f));
    const ImVec2 b = vertical ? ImVec2(a.x + p.across, a.y + p.along) : ImVec2(a.x + p.along, a.y + p.across);
    dl->AddImage((ImTextureID)(intptr_t)p.tex->tex, a, b);
    return;
  }
  const float line_h = ImGui::GetTextLineHeight();
  if (vertical)
    AddTextVertical(dl, ImVec2(x + (across_box + line_h) * 0.5f, y + p.along), col, text.c_str());
  else
    dl->AddText(ImVec2(x, y + (across_box - line_h) * 0.5f), col, text.c_str());
}

}  // namespace

TokenParts SplitToken(const std::string& token, bool markers) {
  TokenParts p;
  size_t n = 0;
  if (token.compare(0, 2, kSpaceMark) == 0) {
    p.mark = kSpaceMark;
    n = 2;
  } else if (token.compare(0, 2, "##") == 0) {
    p.mark = kContinuationMark;
    n = 2;
  }
  if (n == token.size()) {  // the token is only a marker: show it as it is
    p.mark = "";
    p.body = token;
    return p;
  }
  if (!markers) p.mark = "";
  p.body = token.substr(n);
  return p;
}

bool FontCovers(const std::string& text) {
  ImFont* font = ImGui::GetFont();
  const char* s = text.c_str();
  const char* e = s + text.size();
  while (s < e) {
    unsigned int c = 0;
    const int n = ImTextCharFromUtf8(&c, s, e);
    if (n <= 0) return false;
    s += n;
    if (c > IM_UNICODE_CODEPOINT_MAX || !font->FindGlyphNoFallback((ImWchar)c)) return false;
  }
  return true;
}

float LabelLength(const LabelEnv& env, const std::string& token) {
  const TokenParts parts = SplitToken(token, env.markers);
  return EstimateWidth(parts.mark) + EstimateWidth(parts.body);
}

ImVec4 DrawLabel(ImDrawList* dl, const LabelEnv& env, const ImVec2& pos, ImU32 col, const std::string& token,
                 bool vertical, float align_x) {
  const TokenParts parts = SplitToken(token, env.markers);
  const std::string mark(parts.mark);
  ImU32 mark_col = col;  // the mark at ~45% of the text's opacity
  mark_col = (mark_col & ~IM_COL32_A_MASK) | ((((col >> IM_COL32_A_SHIFT) & 0xFF) * 115 / 255) << IM_COL32_A_SHIFT);
  const Piece m = MeasurePiece(env, mark, mark_col, vertical);
  const Piece b = MeasurePiece(env, parts.body, col, vertical);
  const float along = m.along + b.along, across = std::max(m.across, b.across);
  if (!vertical) {
    const float x0 = pos.x - align_x * along, y0 = pos.y - across * 0.5f;
    DrawPiece(dl, env, m, x0, y0, across, mark_col, mark, false);
    DrawPiece(dl, env, b, x0 + m.along, y0, across, col, parts.body, false);
    return ImVec4(x0, y0, x0 + along, y0 + across);
  }
  // Bottom to top: the mark at the bottom (where the text starts), the body above it.
  const float x0 = pos.x - across * 0.5f, y0 = pos.y - along;
  DrawPiece(dl, env, b, x0, y0, across, col, parts.body, true);
  DrawPiece(dl, env, m, x0, y0 + b.along, across, mark_col, mark, true);
  return ImVec4(x0, y0, x0 + across, pos.y);
}

void LabelItem(const LabelEnv& env, const std::string& token, ImU32 col) {
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const float line_h = ImGui::GetTextLineHeight();
  const ImVec4 box = DrawLabel(ImGui::GetWindowDrawList(), env, ImVec2(p.x, p.y + line_h * 0.5f), col, token, false);
  ImGui::Dummy(ImVec2(box.z - box.x, line_h));
}

void AddTextVertical(ImDrawList* dl, const ImVec2& bottom_left, ImU32 color, const char* text) {
  const int vtx_begin = dl->VtxBuffer.Size;
  // Laid out unclipped: ImDrawList::AddText culls glyphs against the draw list's clip rect, which is
  // where the text lands after the turn, not before it (a column label near the matrix's right edge
  // lost its end). The clip rect still clips the turned text on the GPU.
  const ImVec4 unclipped(-1e9f, -1e9f, 1e9f, 1e9f);
  ImGui::GetFont()->RenderText(dl, ImGui::GetFontSize(), bottom_left, color, unclipped, text, nullptr, 0.0f, false);
  // Rotate the quads just added by -90 degrees: (x, y) -> (x0 + (y - y0) - line_h, y0 - (x - x0)).
  const float line_h = ImGui::GetTextLineHeight();
  for (int i = vtx_begin; i < dl->VtxBuffer.Size; ++i) {
    ImDrawVert& v = dl->VtxBuffer[i];
    const float dx = v.pos.x - bottom_left.x, dy = v.pos.y - bottom_left.y;
    v.pos.x = bottom_left.x + dy - line_h;
    v.pos.y = bottom_left.y - dx;
  }
}

}  // namespace attnviz
