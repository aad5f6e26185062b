// attnviz core: which axis labels to draw when there are more than fit. Shared by the viewer's
// heatmaps (src/app/heatmap_widget.cpp) and any off-screen figure (attnviz-cli render), so a
// figure thins its labels the same way the screen does. No GL, no fonts: sizes come in as pixels.
//
//   LabelMode          all | auto | none
//   LabelStride()      draw every k-th label so that labels of a given extent never overlap
//   LabelShown()       whether label i is drawn under a stride (a highlighted one always is)
#pragma once
#include <string>

namespace attnviz {

enum class LabelMode {
  Auto,  // thin to every k-th label so that none overlap (the default)
  All,   // every label, overlapping or not
  None,  // no token labels
  Count
};
const char* LabelModeName(LabelMode m);                     // "auto", "all", "none"
bool ParseLabelMode(const std::string& s, LabelMode* out);  // inverse of LabelModeName

// Stride k >= 1 such that labels of label_extent pixels (along the axis, plus gap) placed at cells
// of cell_extent pixels do not overlap: k = ceil((label_extent + gap) / cell_extent). All gives 1;
// None gives 0 (draw nothing). Non-finite or non-positive extents give 1.
int LabelStride(LabelMode mode, float cell_extent, float label_extent, float gap = 2.0f);

// Label i is drawn under stride k when i is a multiple of k, or i is the highlighted index.
inline bool LabelShown(int i, int stride, int highlighted = -1) {
  return stride > 0 && (i % stride == 0 || i == highlighted);
}

}  // namespace attnviz
