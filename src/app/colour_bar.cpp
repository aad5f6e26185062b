#include "app/colour_bar.h"

#include <algorithm>

#include "app/heatmap_widget.h"
#include "core/colormap.h"
#include "imgui.h"

namespace attnviz {
namespace {

constexpr float kGap = 10.0f, kBar = 12.0f, kTick = 4.0f, kTextGap = 3.0f, kRightPad = 4.0f;

// The style's scale is handed to core/colour_scale as it is.
static_assert((int)ScaleMode::Global == (int)ColourScale::Linear &&
                  (int)ScaleMode::PerRow == (int)ColourScale::PerRow && (int)ScaleMode::Log == (int)ColourScale::Log,
              "ScaleMode and ColourScale number the scales alike");

}  // namespace

int ColourBarTickList(const HeatmapStyle& r, int max_ticks, ColourTick out[kMaxColourTicks]) {
  return ColourTicks((ColourScale)r.scale, r.vmin, r.vmax, max_ticks, out);
}

float ColourBarWidth(const HeatmapStyle& resolved) {
  ColourTick ticks[kMaxColourTicks];
  const int n = ColourBarTickList(resolved, kMaxColourTicks, ticks);
  float text = 0;
  for (int i = 0; i < n; ++i) text = std::max(text, ImGui::CalcTextSize(ticks[i].text).x);
  return kGap + kBar + kTick + kTextGap + text + kRightPad;
}

void DrawVerticalColourBar(ImDrawList* dl, const HeatmapStyle& resolved, float x, float y0, float y1, float* figure,
                           float box[4]) {
  const float bx0 = x + kGap, bx1 = bx0 + kBar, h = y1 - y0;
  if (!(h > 2)) return;
  // The LUT's entries in 64 bands, the highest at the top: what the shader shows for those weights.
  const uint8_t* lut = ColormapLut(resolved.colormap);
  for (int i = 0; i < 64; ++i) {
    const uint8_t* e = lut + ((63 - i) * (kColormapLutSize - 1) / 63) * 4;
    dl->AddRectFilled(ImVec2(bx0, y0 + h * i / 64), ImVec2(bx1, y0 + h * (i + 1) / 64 + (i < 63 ? 1 : 0)),
                      IM_COL32(e[0], e[1], e[2], 255));
  }
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text), edge = IM_COL32(110, 110, 120, 255);
  dl->AddRect(ImVec2(bx0 - 1, y0 - 1), ImVec2(bx1 + 1, y1 + 1), edge);
  // Round numbers along it, as many as fit a line and a half apart (the ends' numbers stay inside
  // the bar's height when it is at least two lines high).
  const float line = ImGui::GetTextLineHeight();
  ColourTick ticks[kMaxColourTicks];
  const int n = ColourBarTickList(resolved, (int)(h / (1.5f * line)) + 1, ticks);
  float right = bx1, top = y0, bottom = y1;
  for (int i = 0; i < n; ++i) {
    const float y = y1 - ticks[i].t * h;
    dl->AddLine(ImVec2(bx1, y), ImVec2(bx1 + kTick, y), edge);
    float ty = y - 0.5f * line;
    if (h >= 2.2f * line) ty = std::clamp(ty, y0, y1 - line);
    const ImVec2 p(bx1 + kTick + kTextGap, ty);
    dl->AddText(p, text, ticks[i].text);
    right = std::max(right, p.x + ImGui::CalcTextSize(ticks[i].text).x);
    top = std::min(top, ty), bottom = std::max(bottom, ty + line);
  }
  const float fig[4] = {bx0 - 1, top - 1, right + kRightPad, bottom + 1};
  AddFigureBox(figure, fig);
  if (box) box[0] = bx0, box[1] = y0, box[2] = bx1, box[3] = y1;
}

}  // namespace attnviz
