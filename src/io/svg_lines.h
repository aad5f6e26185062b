// attnviz io: the lines view (BertViz style) as a standalone SVG: source tokens down the left,
// target tokens down the right (or the other way round, queries_left, as BertViz draws them), one line per (target,
// source) pair whose weight is at least the threshold, its opacity the weight over the row's maximum (or over the
// global range), coloured by the colormap. Rows from rows_shown on are not yet decoded: no lines, their labels dimmed.
#pragma once
#include <string>
#include <vector>

#include "core/attention.h"
#include "core/colormap.h"
#include "core/status.h"

namespace attnviz {

// One head of BertViz's head view: its weights (the shape of the main map) drawn in one colour.
struct SvgLinesHead {
  const MatrixRM* w = nullptr;
  int head = 0;         // written as data-head
  uint8_t rgb[3] = {};  // its colour; opacity and width still follow the weight
};

struct SvgLinesOptions {
  Colormap colormap = Colormap::Viridis;
  float threshold = 0.01f;     // weights below are not drawn
  bool row_normalised = true;  // opacity = w / row max; else (w - vmin) / (vmax - vmin)
  float vmin = 0, vmax = 1;    // the global range when not row-normalised
  int rows_shown = 1 << 30;    // decoding step: rows >= this have no lines
  int max_lines = 50000;       // refuse more lines than this (raise the threshold)
  float row_px = 22.0f, gap_px = 220.0f, font_px = 13.0f;
  bool queries_left = false;  // target (query) tokens down the left, as BertViz; else source (key) tokens
  std::string title;
  std::vector<SvgLinesHead> heads;  // when given, these heads' lines instead of w's (tokens still w's)
};

// w: [n_q, n_k]; source_tokens [n_k] on the left, target_tokens [n_q] on the right.
Status LinesSvgString(const MatrixRM& w, const std::vector<std::string>& source_tokens,
                      const std::vector<std::string>& target_tokens, const SvgLinesOptions& o, std::string* out);

}  // namespace attnviz
