// attnviz figure: the lines view (BertViz style) as a raster figure, for `attnviz-cli render --lines
// --out x.png`: the same figure as the SVG (io/svg_lines.h: layout, colours, opacity and width by
// weight), drawn on the CPU with anti-aliased lines and the figure font.
//
//   LinesFigureOptions  the SVG's options, the scale (--dpi / 96) and a size limit
//   RenderLinesFigure   w [n_q, n_k] -> RGBA image
//   DrawLineAA          one anti-aliased straight line of any width and opacity
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/attention.h"
#include "core/status.h"
#include "figure/figure_font.h"
#include "figure/figure_image.h"
#include "io/svg_lines.h"

namespace attnviz {

struct LinesFigureOptions {
  SvgLinesOptions lines;                  // what the SVG would draw, in px at scale 1
  float scale_factor = 1.0f;              // pixels per px of the layout (--dpi / 96)
  int64_t max_pixels = int64_t(1) << 26;  // refuse figures larger than this (64 Mpx = 256 MiB of RGBA)
};

// source_tokens [n_k], target_tokens [n_q]; *layout (optional) gets the layout at scale 1.
Status RenderLinesFigure(const MatrixRM& w, const std::vector<std::string>& source_tokens,
                         const std::vector<std::string>& target_tokens, const LinesFigureOptions& o, FigureFont* font,
                         RgbaImage* out, LinesLayout* layout = nullptr);

// A line from (x0, y0) to (x1, y1) (x0 != x1), `width` px wide with flat ends, blended over the
// image with `opacity`: each pixel covered by the fraction of its column the line crosses (a box filter).
void DrawLineAA(RgbaImage* img, float x0, float y0, float x1, float y1, float width, Rgb8 c, float opacity);

}  // namespace attnviz
