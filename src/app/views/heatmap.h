// attnviz view "heatmap": one map with labelled axes, as in the translation figures, and two
// animations:
//   decoding  rows appear as the decoder emits each target word, the current row outlined
//   frames    an example with several maps (heads, layers, snapshots) plays them in turn, each
//             blended smoothly into the next
#pragma once
#include "app/heatmap_widget.h"
#include "app/view_module.h"

namespace attnviz {

class HeatmapView : public ViewModule {
 public:
  void Draw(AppState* s) override;
  bool HoveredCell(int* row, int* col) const override {
    *row = widget.hover_row, *col = widget.hover_col;
    return *row >= 0;
  }
  void Describe(AppState* s, JsonWriter* w) override;
  void DescribeHeatmaps(AppState* s, JsonWriter* w) override;
  bool RunCommand(AppState* s, const CommandArgs& c, Status* result) override;  // zoom FACTOR [ROW [COL]]
  void OnExampleChanged(AppState*) override { widget = HeatmapViewState{}; }
  bool ExportsFigureOnly() const override { return true; }     // the figure, not the timeline
  std::string FigureSuffix(const AppState* s) const override;  // the head shown (MapSuffix)
  // A band (512 rows) of a head being read whole is decoded but not yet on the GPU (the upload budget ran out).
  // Or a lazily read head waits to be read whole until it has stayed in view (views/heatmap.cpp).
  bool Animating(const AppState*) const override {
    return (widget.arrive_wanted && widget.tex_arrive_rows + kArriveBandRows <= widget.arriving_rows) ||
           widget.dwell_pending;
  }
  bool DrawsLazyMaps() const override { return true; }  // asks for the rows in view, the overview meanwhile
  bool WantLazyMaps(AppState* s) override;
  void ReleaseTextures(AppState* s) override;

  HeatmapViewState widget;  // zoom, pan, textures, hover of the big heatmap

 private:
  void DrawFrames(AppState* s);    // the example's maps as an animation
  void DrawDecoding(AppState* s);  // one map, rows appearing step by step
};

}  // namespace attnviz
