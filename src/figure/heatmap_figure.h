// attnviz figure: one attention map as a raster figure (for `attnviz-cli render --out x.png|x.gif`),
// drawn on the CPU so it needs no GPU and no display.
//
//   FigureScale          where the colour range comes from: auto, fixed, row, log, p99, p99.9
//   FigureLabels         all, auto (thinned so they do not overlap), none
//   HeatmapFigureOptions what `render`'s flags choose
//   HeatmapFigureLayout  where the cells landed and the range they were drawn with (tests invert it)
//   RenderHeatmapFigure  w [n_q, n_k] -> RGBA image: column labels on top (rotated when crowded),
//                        row labels on the left, cells, optional values, a colour bar with numbers
//
// A cell's colour is ColormapSample(colormap, t) with t as in shaders/heatmap.frag, so a pixel
// inverts through the colormap's lookup table to the weight, as in the viewer.
#pragma once
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/attention.h"
#include "core/colormap.h"
#include "core/status.h"
#include "figure/figure_font.h"
#include "figure/figure_image.h"

namespace attnviz {

enum class FigureScale { Auto, Fixed, Row, Log, P99, P999 };
bool ParseFigureScale(const std::string& s, FigureScale* out);  // auto fixed row log p99 p99.9
const char* FigureScaleName(FigureScale s);
enum class FigureLabels { All, Auto, None };
bool ParseFigureLabels(const std::string& s, FigureLabels* out);  // all auto none

struct HeatmapFigureOptions {
  Colormap colormap = Colormap::Greys;
  FigureScale scale = FigureScale::Auto;
  float vmin = 0.0f, vmax = 1.0f;         // fixed: the range; log: vmin is the lower limit (1e-4 default)
  float scale_factor = 1.0f;              // pixels per CSS pixel (--dpi / 96)
  float cell_px = 24.0f;                  // cell size at scale 1 (shrunk for large maps, see max_matrix_px)
  float font_px = 13.0f;                  // label height at scale 1
  int max_matrix_px = 4096;               // the matrix area's longer side at most (cells shrink, down to 1 px)
  int64_t max_pixels = int64_t(1) << 26;  // refuse figures larger than this (64 Mpx = 256 MiB of RGBA)
  FigureLabels labels = FigureLabels::Auto;
  bool values = false;          // print weights in the cells; cells grow to fit them (up to max_matrix_px)
  int decimals = 2;             // digits after the point for cell values
  size_t max_label_chars = 24;  // longer tokens end in an ellipsis
  bool colorbar = true;
  std::string title;
  int rows_shown = 1 << 30;  // decoding animation: rows >= this are drawn empty
  int current_row = -1;      // row outlined (the word being emitted), -1 none
};

struct HeatmapFigureLayout {
  int x0 = 0, y0 = 0;            // top-left pixel of cell (0, 0)
  float cell_w = 0, cell_h = 0;  // cell size in pixels (cell (r, c) spans x0 + c * cell_w ...)
  int rows = 0, cols = 0;
  float vmin = 0, vmax = 1;  // the resolved range (row: 0..1 of each row's maximum)
  FigureScale scale = FigureScale::Auto;
  int label_step_rows = 1, label_step_cols = 1;  // every k-th label drawn (auto thinning)
  bool cols_rotated = false;                     // column labels drawn bottom to top
};

// Fills L's scale, vmin and vmax for w under o (auto: 0..max; p99: 0..the 99th percentile; ...).
void ResolveFigureRange(const MatrixRM& w, const HeatmapFigureOptions& o, HeatmapFigureLayout* L);
// t in [0, 1] of a weight under the resolved layout (row_max for the row scale): the shader's rule.
float FigureT(const HeatmapFigureLayout& L, float w, float row_max);

Status RenderHeatmapFigure(const MatrixRM& w, const std::vector<std::string>& source_tokens,
                           const std::vector<std::string>& target_tokens, const HeatmapFigureOptions& o,
                           FigureFont* font, RgbaImage* out, HeatmapFigureLayout* layout);

}  // namespace attnviz
