// attnviz app: the colour bar, the key to a heatmap's colours.
//
//   ColourBarTickList    round numbers along it (the figure's bar)
//   ColourBarWidth       the room a vertical bar and its numbers take beside a matrix
//   DrawVerticalColourBar  the bar beside a matrix (high at the top), part of its PNG (figure box)
//
// The sidebar draws the same bar across (app_chrome.cpp); the Heatmap and Translate views draw it
// beside their matrix when the style's colour bar is on, so a PNG exported for a paper has its key.
#pragma once
#include "core/colour_scale.h"

struct ImDrawList;

namespace attnviz {

struct HeatmapStyle;

// The numbers the figure's colour bar marks (core/colour_scale.h, ColourTicks) for a resolved style.
int ColourBarTickList(const HeatmapStyle& resolved, int max_ticks, ColourTick out[kMaxColourTicks]);

float ColourBarWidth(const HeatmapStyle& resolved);  // gap + bar + ticks + the widest number (UI px)

// The bar from y0 (the high end) to y1 at x (the gap included, as ColourBarWidth counts it), its
// numbers in the text colour; grows figure (HeatmapEnv::figure_rect, may be null) to cover them.
// box (may be null) gets the bar's own x0, y0, x1, y1.
void DrawVerticalColourBar(ImDrawList* dl, const HeatmapStyle& resolved, float x, float y0, float y1, float* figure,
                           float box[4]);

}  // namespace attnviz
