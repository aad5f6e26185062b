#include "app/colour_bar.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "app/heatmap_widget.h"
#include "core/colormap.h"
#include "imgui.h"

namespace attnviz {
namespace {

constexpr float kGap = 10.0f, kBar = 12.0f, kTick = 4.0f, kTextGap = 3.0f, kRightPad = 4.0f;

}  // namespace

ColourBarTicks MakeColourBarTicks(const HeatmapStyle& r) {
  ColourBarTicks t;
  const bool row = r.scale == ScaleMode::PerRow, log = r.scale == ScaleMode::Log;
  std::snprintf(t.lo, sizeof(t.lo), "%.3g", row ? 0.0 : (double)r.vmin);
  std::snprintf(t.mid, sizeof(t.mid), "%.3g",
                row   ? 0.5
                : log ? std::sqrt((double)std::max(r.vmin, 1e-12f) * r.vmax)
                      : 0.5 * (r.vmin + r.vmax));
  if (row)
    std::snprintf(t.hi, sizeof(t.hi), "row max");
  else
    std::snprintf(t.hi, sizeof(t.hi), "%.3g", (double)r.vmax);
  return t;
}

namespace {

int EndTicks(const HeatmapStyle& r, ColourBarTick out[]) {
  const ColourBarTicks e = MakeColourBarTicks(r);
  out[0].t = 0, out[1].t = 1;
  std::snprintf(out[0].text, sizeof(out[0].text), "%s", e.lo);
  std::snprintf(out[1].text, sizeof(out[1].text), "%s", e.hi);
  return 2;
}

// Multiples of the finest round step (1, 2 or 5 x 10^k) of which [lo, hi] holds at most max_ticks.
int LinearTicks(double lo, double hi, int max_ticks, ColourBarTick out[]) {
  const double span = hi - lo;
  double step = std::pow(10.0, std::floor(std::log10(span / max_ticks)));
  for (int i = 0; i < 12; ++i) {  // 1, 2, 5, 10, 20, ...: a count <= max_ticks comes within three
    const double unit = std::pow(10.0, std::floor(std::log10(step) + 1e-9));
    if (std::floor(hi / step + 1e-9) - std::ceil(lo / step - 1e-9) + 1 <= max_ticks) break;
    const double m = step / unit;
    step = (m < 1.5 ? 2 : m < 3.5 ? 5 : 10) * unit;
  }
  int n = 0;
  for (double k = std::ceil(lo / step - 1e-9); n < max_ticks && k * step <= hi + step * 1e-9; k += 1) {
    const double v = k * step;
    out[n].t = (float)std::clamp((v - lo) / span, 0.0, 1.0);
    std::snprintf(out[n].text, sizeof(out[n].text), "%.4g", std::fabs(v) < step * 1e-6 ? 0.0 : v);
    ++n;
  }
  return n;
}

// Powers of ten in [lo, hi]: from the highest down, every k-th when there are more than max_ticks.
int DecadeTicks(double lo, double hi, int max_ticks, ColourBarTick out[]) {
  const double a = std::log10(lo), b = std::log10(hi);
  const int d0 = (int)std::ceil(a - 1e-9), d1 = (int)std::floor(b + 1e-9);
  if (d1 < d0) return 0;
  const int stride = std::max(1, (d1 - d0 + max_ticks - 2) / (max_ticks - 1));
  int n = 0;
  for (int d = d1 - ((d1 - d0) / stride) * stride; d <= d1 && n < max_ticks; d += stride) {
    out[n].t = (float)std::clamp((d - a) / (b - a), 0.0, 1.0);
    std::snprintf(out[n].text, sizeof(out[n].text), "%g", std::pow(10.0, d));
    ++n;
  }
  return n;
}

}  // namespace

int ColourBarTickList(const HeatmapStyle& r, int max_ticks, ColourBarTick out[kMaxColourBarTicks]) {
  max_ticks = std::clamp(max_ticks, 2, kMaxColourBarTicks);
  if (r.scale == ScaleMode::PerRow) {
    const int n = EndTicks(r, out);
    if (max_ticks < 3) return n;
    out[2] = out[1];
    out[1].t = 0.5f;
    std::snprintf(out[1].text, sizeof(out[1].text), "0.5");
    return 3;
  }
  const double lo = r.scale == ScaleMode::Log ? std::max(r.vmin, 1e-12f) : r.vmin, hi = r.vmax;
  if (!(hi > lo) || !std::isfinite(lo) || !std::isfinite(hi)) return EndTicks(r, out);
  const int n = r.scale == ScaleMode::Log ? DecadeTicks(lo, hi, max_ticks, out) : LinearTicks(lo, hi, max_ticks, out);
  return n >= 2 ? n : EndTicks(r, out);  // a range without two round numbers in it: its ends
}

float ColourBarWidth(const HeatmapStyle& resolved) {
  ColourBarTick ticks[kMaxColourBarTicks];
  const int n = ColourBarTickList(resolved, kMaxColourBarTicks, ticks);
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
  ColourBarTick ticks[kMaxColourBarTicks];
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
