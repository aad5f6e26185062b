// attnviz core: how a weight becomes a colour position, and the numbers a colour bar marks. One
// rule for the GL heatmap (shaders/heatmap.frag does the same arithmetic), the ImGui cell text, the
// SVG export, the CLI's figures and every colour bar.
//
//   ColourScale   linear between vmin and vmax, each row divided by its largest weight, or log
//   ColourT       a weight's position t in [0, 1] on the colormap
//   ColourTicks   round numbers along a colour bar, as papers' colour bars mark them
//   RangeTicks    the range's two ends and its middle, as they are (the sidebar's bar states the range)
#pragma once

namespace attnviz {

enum class ColourScale { Linear = 0, PerRow = 1, Log = 2 };  // the values of render's ScaleMode

// Linear: (w - vmin) / (vmax - vmin). PerRow: w / row_max (0 when row_max <= 0). Log: ln w between
// ln vmin and ln vmax (both floored at 1e-12). Clamped to [0, 1]; NaN weights and ranges give 0.
float ColourT(ColourScale scale, float w, float vmin, float vmax, float row_max);

struct ColourTick {
  float t = 0;          // position along the bar: 0 = the low end, 1 = the high end
  char text[24] = {0};  // e.g. "0.2", "0.001", "row max"
};
constexpr int kMaxColourTicks = 8;

// At most max_ticks (clamped to 2..8), low to high: multiples of the finest round step (1, 2 or 5 x
// 10^k) that fits on the linear scale, powers of ten on the log scale (every k-th, counted from the
// top, when there are more), 0 / 0.5 / "row max" per row (0 / "row max" for two). A range with fewer
// than two round numbers in it (or none: vmax <= vmin) gets its two ends ("%.3g").
int ColourTicks(ColourScale scale, float vmin, float vmax, int max_ticks, ColourTick out[kMaxColourTicks]);

// Three ticks at t = 0, 0.5 and 1 ("%.3g"): vmin, the middle (the geometric one on the log scale) and
// vmax; per row 0, 0.5 and "row max".
void RangeTicks(ColourScale scale, float vmin, float vmax, ColourTick out[3]);

}  // namespace attnviz
