// attnviz view "lines" (BertViz style): source tokens down the left, target tokens down the
// right (or, queries_left, the other way round as BertViz draws them), one line per (target, source) pair whose opacity
// and width show the weight. Hovering a token keeps only its lines. Follows the decoding timeline: rows >= the step are
// not yet emitted. "all heads" overlays every head of the layer, one colour each, as BertViz's head view does.
#pragma once
#include <cstdint>
#include <vector>

#include "app/view_module.h"

namespace attnviz {

struct AttentionMap;

// The lines of one map, rebuilt only when the map, the decoding step, the hovered token or the
// threshold change (a 4096 x 4096 map is scanned once, not every frame), and its row maxima.
struct LineCache {
  struct Line {
    int row, col;  // one (target, source) pair to draw
  };
  std::vector<Line> lines;      // at most the line budget
  const void* owner = nullptr;  // cache key: map, version, step, hovered token, threshold, budget
  uint64_t version = ~0ull;     // map version of the cached lines
  int rows_shown = -1, row = -2, col = -2, budget = 0;  // step, hovered target, hovered source
  float threshold = -1;                                 // the user's threshold they were built for
  float effective_threshold = 0.01f;                    // raised when the lines exceed the budget
  std::vector<float> row_max;                           // [n_q] row maxima of the map (per-row opacity)
  const void* row_max_owner = nullptr;                  // map the maxima belong to
  uint64_t row_max_version = ~0ull;                     // its version
};

struct LinesViewState {
  int drawn = 0;                      // lines drawn last frame (weight >= threshold)
  int hovered_source = -1;            // source token under the mouse, -1 none
  int hovered_target = -1;            // target token under the mouse, -1 none
  int rows_shown = 0;                 // target rows shown (decoding step)
  float threshold = 0.01f;            // lines below this weight are skipped
  bool use_colormap = true;           // colour lines by the colormap (else a fixed accent)
  bool row_normalised = true;         // opacity = weight / row max (else the sidebar's scale)
  bool queries_left = false;          // target (query) tokens down the left, as BertViz; else the source (key) tokens
  float effective_threshold = 0.01f;  // threshold used (raised when the lines exceed the budget)
  float rect[4] = {0, 0, 0, 0};       // x of the source dots, top, x of the target dots, bottom
  bool rect_valid = false;            // drawn this frame
  int partners = 0;                   // tokens highlighted as partners of the hovered one, last frame
  float token_y[4] = {0, 0, 0, 0};    // y of source token 0, source spacing, y of target token 0, spacing
  // BertViz's head view: every head of the current map's layer at once, one colour each.
  bool all_heads = false;
  std::vector<uint8_t> head_off;      // [head] 1 = unticked in all-heads mode (ticked by default)
  std::vector<int> heads_drawn;       // [head] lines drawn last frame (all-heads mode; -1 unticked)
  std::vector<int> shown_maps;        // the example's maps drawn in all-heads mode (ticked heads), else empty
  int layer = 0;                      // the layer shown in all-heads mode
  std::vector<float> partner_weight;  // hovered token's partners: largest weight over the heads drawn
  LineCache single;                   // the current map's lines
  std::vector<LineCache> heads;       // [head] in all-heads mode
  float source_label_w = 0, target_label_w = 0;  // cached label extents
  const void* labels_owner = nullptr;            // map the extents belong to
  uint64_t labels_version = ~0ull;               // its version
};

class LinesView : public ViewModule {
 public:
  void Draw(AppState* s) override;
  void Describe(AppState* s, JsonWriter* w) override;
  // lines-threshold X; lines-heads all|off|H [H ...]; lines-queries left|right
  bool RunCommand(AppState* s, const CommandArgs& c, Status* result) override;
  bool ExportSvg(AppState* s, std::string* svg, Status* error) override;  // lines_svg.cpp
  bool ExportsFigureOnly() const override { return true; }                // the canvas, not the toolbars
  std::string FigureSuffix(const AppState* s) const override;             // the head, or all heads' layer

  LinesViewState state;  // what it drew and the cached lines
};

}  // namespace attnviz
