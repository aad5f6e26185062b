// attnviz app: token labels in any script. Text the embedded UI font covers is drawn by ImGui as
// before; anything else (CJK, emoji, Arabic, Hebrew, Devanagari, Thai, combining marks), and every
// rotated label, is drawn from a texture that the platform rasterised whole (render/label_cache.h).
// Tokenizer markers (a leading "·" for SentencePiece's ▁ and GPT-2's Ġ, a leading "##" for
// WordPiece continuations) are drawn as a dim mark, or left out when markers are off.
//
//   LabelEnv     the cache, the DPI scale and the markers toggle, shared by every widget this frame
//   SplitToken   a token as (dim mark, body) for display
//   LabelLength  a label's length along its text, in UI pixels, estimated without rasterising
//   DrawLabel    draws a label at an anchor; returns the box it took
#pragma once
#include <string>

#include "imgui.h"

namespace attnviz {

class LabelCache;

struct LabelEnv {
  LabelCache* cache = nullptr;  // null when headless: ImGui's font only
  float dpi_scale = 1.0f;       // the cache rasterises at UI pixels * dpi_scale
  bool markers = true;          // draw tokenizer markers as dim marks (the "markers" command)
};

struct TokenParts {
  const char* mark = "";  // "·" (word start) or "‐" (continuation), "" for none
  std::string body;       // the rest, what is drawn in full colour
};
// Splits a display token: "·the" -> ("·", "the"), "##ing" -> ("‐", "ing"). With markers off the
// mark is dropped, unless the token is nothing but the mark (it would vanish).
TokenParts SplitToken(const std::string& token, bool markers);

// True when ImGui's font has every glyph of text (no '?' fallback would appear).
bool FontCovers(const std::string& text);

// Length along the text in UI pixels, for layout: ImGui's advances where its font has the glyphs,
// an em for wide scripts, nothing for combining marks. Nothing is rasterised.
float LabelLength(const LabelEnv& env, const std::string& token);

// Horizontal: the label's vertical centre is at pos.y, and pos.x is its left edge, centre or right
// edge for align_x 0, 0.5, 1. Vertical (rotated a quarter turn, reading bottom to top): pos is the
// bottom centre. Returns the box drawn, x0 y0 x1 y1, in UI pixels.
ImVec4 DrawLabel(ImDrawList* dl, const LabelEnv& env, const ImVec2& pos, ImU32 col, const std::string& token,
                 bool vertical, float align_x = 0.0f);

// A horizontal label as an ImGui item at the cursor (a tooltip line, a list): it takes its room
// in the layout like ImGui::TextUnformatted.
void LabelItem(const LabelEnv& env, const std::string& token, ImU32 col);

// ImGui text rotated a quarter turn counter-clockwise, its baseline's end at bottom_left: the
// fallback when no rasteriser is present. Glyphs are not clipped on the CPU (clipping before the
// rotation is what smeared rotated labels); the draw command's scissor clips them.
void AddTextVertical(ImDrawList* dl, const ImVec2& bottom_left, ImU32 color, const char* text);

}  // namespace attnviz
