// attnviz view "compare": two attention maps side by side on the same inputs, and their
// difference (right - left) in the diverging colormap, 0 at its centre. Either two score
// functions on the current example's q, k, v (computed with Attend and cached until something
// changes) or two maps (heads, frames) of the current example.
#pragma once
#include <cstdint>
#include <string>

#include "app/examples.h"
#include "app/heatmap_widget.h"
#include "app/view_module.h"

namespace attnviz {

enum class CompareMode { ScoreFunctions, Maps };

struct CompareViewState {
  CompareMode mode = CompareMode::ScoreFunctions;                           // what the two sides are
  ScoreFunction score[2] = {ScoreFunction::Dot, ScoreFunction::ScaledDot};  // left, right (ScoreFunctions)
  int map_index[2] = {0, 1};                                                // left, right (Maps)
  float diff_range = 1.0f;             // |difference| mapped to the diverging colormap's ends
  AttentionMap result[3];              // left, right (ScoreFunctions only), difference right - left
  std::string error[2];                // Attend() errors per side
  std::string diff_error;              // why there is no difference (shapes differ)
  float max_abs_diff = 0;              // max |right - left|
  int max_row = -1, max_col = -1;      // where it is (-1 when the maps are identical)
  int hover_row = -1, hover_col = -1;  // cell hovered in any panel last frame
  int recomputes = 0;                  // how many times the cache was refilled
  int panels_drawn = 0;                // heatmap panels drawn last frame (0 when nothing to compare)
  float summary_y = 0;                 // where the summary line under the panels began last frame (screen y)
  HeatmapViewState panels[3];          // widgets: left, right, difference
  // Cache key: recompute only when one of these changes.
  bool valid = false;                         // the cache holds a result
  uint64_t key_version = ~0ull;               // map version(s) the result was computed from
  int key_mode = -1, key_a = -1, key_b = -1;  // mode and the two choices
};

class CompareView : public ViewModule {
 public:
  void Draw(AppState* s) override;
  bool ExportsFigureOnly() const override { return true; }  // the three panels and their titles, not the toolbar
  void Describe(AppState* s, JsonWriter* w) override;
  // compare-scores NAME NAME | compare-maps I J | compare-range X
  bool RunCommand(AppState* s, const CommandArgs& c, Status* result) override;
  void OnExampleChanged(AppState*) override;
  void ReleaseTextures(AppState* s) override;
  // The left panel, with the colour range the left and right panels share (the sidebar's colour bar).
  bool ShownMap(AppState* s, const AttentionMap** map, HeatmapStyle* style, std::string* name) override;

  CompareViewState state;  // choices, cached results, panels

 private:
  void Panels(AppState* s, const AttentionMap* panels[3]) const;  // left, right, difference
  bool DrawControls(AppState* s);  // mode and the two choices; false when there is nothing to compare
  void UpdateResults(AppState* s);
  void DrawPanels(AppState* s, const AttentionMap* panels[3]);
  void DrawSummary(const AttentionMap* panels[3], const LabelEnv& labels);
};

}  // namespace attnviz
