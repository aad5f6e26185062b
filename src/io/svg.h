// attnviz io: a standalone SVG heatmap of one attention matrix ("save an SVG for a paper").
// Source tokens (keys, columns) along the top, rotated when crowded; target tokens (queries,
// rows) down the left; optional cell values and a colour bar. Text is XML-escaped UTF-8.
#pragma once
#include <cmath>
#include <string>
#include <vector>

#include "core/attention.h"

namespace attnviz {

struct SvgHeatmapOptions {
  float cell_size = 24.0f;      // px per cell
  float font_size = 12.0f;      // px, labels
  float vmin = 0.0f;            // value drawn with the colormap's t = 0
  float vmax = NAN;             // value drawn with t = 1; NaN = the matrix maximum (> 0)
  bool show_values = false;     // print each weight in its cell (contrasting colour)
  bool colorbar = true;         // colour bar with vmin / vmax labels on the right
  std::string title;            // optional caption above the heatmap
  size_t max_label_chars = 24;  // longer tokens are cut and end in an ellipsis
};

// w: [n_q, n_k]; target_tokens [n_q] label the rows, source_tokens [n_k] the columns. Missing
// or surplus labels are tolerated (indices are used). Unknown colormap names draw in greys.
std::string HeatmapSvg(const MatrixRM& w, const std::vector<std::string>& source_tokens,
                       const std::vector<std::string>& target_tokens, const std::string& colormap,
                       const SvgHeatmapOptions& options = SvgHeatmapOptions());

std::string XmlEscape(const std::string& s);  // & < > " ' escaped; invalid UTF-8 / control chars -> U+FFFD

}  // namespace attnviz
