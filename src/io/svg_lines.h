// attnviz io: the lines view (BertViz style) as a standalone SVG: source tokens down the left,
// target tokens down the right (or the other way round, queries_left, as BertViz draws them), one line per (target,
// source) pair whose weight is at least the threshold, its opacity the weight over the row's maximum (or over the
// global range), coloured by the colormap. Rows from rows_shown on are not yet decoded: no lines, their labels dimmed.
#pragma once
#include <functional>
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

// Where the parts of the figure go, in px at scale 1 (the SVG's units; the PNG figure multiplies
// them by its scale), shared by LinesSvgString and RenderLinesFigure (figure/lines_figure.h).
struct LinesLayout {
  float width = 0, height = 0;             // the whole figure
  float title_y = 0;                       // the title's baseline
  float legend_y = 0, top = 0;             // the heads' legend (when several), the first row's top
  float x_source = 0, x_target = 0;        // label anchors: the left column's labels end there, the right's start
  float line_source = 0, line_target = 0;  // line ends at a source and at a target token
  bool source_left = true;                 // keys down the left (the default); false: queries_left
  float row_px = 0;
  float YOf(int i) const { return top + (i + 0.5f) * row_px; }  // a token's row centre
  float LegendX(int i, float font_px) const { return 8.0f + (float)i * font_px * 5.5f; }
};
// Checks w and o.heads (shapes, the max_lines limit) and lays the figure out. *maps: the maps whose
// lines are drawn (o.heads, or w alone); *shown: the rows that have lines.
Status LayOutLines(const MatrixRM& w, const SvgLinesOptions& o, LinesLayout* L, std::vector<SvgLinesHead>* maps,
                   int* shown);

struct LineStyle {
  uint8_t rgb[3] = {};  // on a white page
  float opacity = 1, width = 1;
};
// Every line of map h (rows < shown, weights >= the threshold), in drawing order, with its style:
// the colormap by weight (or h's colour when o.heads is given), opacity and width by weight.
void ForEachLine(const SvgLinesHead& h, int shown, const SvgLinesOptions& o,
                 const std::function<void(int row, int col, float weight, const LineStyle& style)>& f);
// A token's label as the figures print it (no word-start marks, printable, at most 24 characters).
std::string LinesLabel(const std::vector<std::string>& tokens, int i);

// w: [n_q, n_k]; source_tokens [n_k] on the left, target_tokens [n_q] on the right.
Status LinesSvgString(const MatrixRM& w, const std::vector<std::string>& source_tokens,
                      const std::vector<std::string>& target_tokens, const SvgLinesOptions& o, std::string* out);

}  // namespace attnviz
