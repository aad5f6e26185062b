// attnviz io: a standalone SVG heatmap of one attention matrix ("save an SVG for a paper").
// Source tokens (keys, columns) along the top, rotated when crowded; target tokens (queries,
// rows) down the left; optional cell values and a colour bar. Text is XML-escaped UTF-8.
#pragma once
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/attention.h"
#include "core/colour_scale.h"
#include "core/status.h"

namespace attnviz {

struct SvgHeatmapOptions {
  float cell_size = 24.0f;                  // px per cell
  float font_size = 12.0f;                  // px, labels
  float vmin = 0.0f;                        // value drawn with the colormap's t = 0
  float vmax = NAN;                         // value drawn with t = 1; NaN = the matrix maximum (> 0)
  bool show_values = false;                 // print each weight in its cell (contrasting colour); cells grow to fit
  int decimals = 2;                         // digits after the point of the printed weights (0..8)
  bool colorbar = true;                     // colour bar on the right, marked with round numbers (core/colour_scale.h)
  ColourScale scale = ColourScale::Linear;  // linear between vmin and vmax, per row, or log (as the app's)
  std::string title;                        // optional caption above the heatmap
  size_t max_label_chars = 24;              // longer tokens are cut and end in an ellipsis
  int64_t max_cells = 1 << 20;              // refuse larger matrices (~90 bytes of SVG per cell, more with values)
};

// Ok, or why a rows x cols map is not written as SVG: over options.max_cells (the error names the
// map, the limit and the SVG's size; callers add their own advice: --max-cells, save-png).
Status CheckSvgHeatmapSize(int64_t rows, int64_t cols, const SvgHeatmapOptions& options);

// Receives the SVG text piece by piece (64 KiB at a time); returns false on a write error.
using SvgSink = std::function<bool(const char* data, size_t size)>;

// w: [n_q, n_k]; target_tokens [n_q] label the rows, source_tokens [n_k] the columns. Missing
// or surplus labels are tolerated (indices are used). Unknown colormap names draw in greys.
// Streams the SVG into `sink` with a buffer of 64 KiB, so memory does not grow with the map;
// refuses maps above options.max_cells (CheckSvgHeatmapSize) before writing anything.
Status WriteHeatmapSvg(const MatrixRM& w, const std::vector<std::string>& source_tokens,
                       const std::vector<std::string>& target_tokens, const std::string& colormap,
                       const SvgHeatmapOptions& options, const SvgSink& sink);
// The same SVG into *out (the app's download). Fails like WriteHeatmapSvg.
Status HeatmapSvgString(const MatrixRM& w, const std::vector<std::string>& source_tokens,
                        const std::vector<std::string>& target_tokens, const std::string& colormap,
                        const SvgHeatmapOptions& options, std::string* out);
// Kept for existing callers: the SVG, or "" when HeatmapSvgString fails (prefer that, it says why).
std::string HeatmapSvg(const MatrixRM& w, const std::vector<std::string>& source_tokens,
                       const std::vector<std::string>& target_tokens, const std::string& colormap,
                       const SvgHeatmapOptions& options = SvgHeatmapOptions());

std::string XmlEscape(const std::string& s);  // & < > " ' escaped; invalid UTF-8 / control chars -> U+FFFD

}  // namespace attnviz
