// The registry of views: one row per view, in tab order (keys 1..N). Adding a view is a new
// file pair src/app/views/<name>.{h,cpp} with a ViewModule subclass, and one row here.
#include "app/views/compare.h"
#include "app/views/grid.h"
#include "app/views/heatmap.h"
#include "app/views/lines.h"
#include "app/views/steps.h"
#include "app/views/train.h"
#include "app/views/translate.h"

namespace attnviz {
namespace {

const ViewInfo kViews[] = {
    {"heatmap", "Heatmap", "One map with labelled axes; the decoding animation fills it in row by row",
     MakeView<HeatmapView>},
    {"lines", "Lines", "Source and target tokens joined by lines whose width and opacity show the weight",
     MakeView<LinesView>},
    {"grid", "Grid", "Every layer x head as a thumbnail, sortable by head statistics", MakeView<GridView>},
    {"steps", "Step by step", "The arithmetic of one query row: scores, scaling, mask, softmax, context",
     MakeView<StepsView>},
    {"compare", "Compare", "Two score functions or two maps side by side, and their difference", MakeView<CompareView>},
    {"translate", "Translate", "Translate a sentence and watch the alignment matrix fill in word by word",
     MakeView<TranslateView>},
    {"train", "Train", "Train a fresh model here and watch its attention sharpen", MakeView<TrainView>},
};

}  // namespace

int ViewCount() {
  return (int)(sizeof(kViews) / sizeof(kViews[0]));
}

const ViewInfo& ViewInfoAt(int i) {
  return kViews[i];
}

int FindView(const std::string& name) {
  for (int i = 0; i < ViewCount(); ++i)
    if (name == kViews[i].name) return i;
  return -1;
}

std::string ViewNames() {
  std::string out;
  for (int i = 0; i < ViewCount(); ++i) out += (i ? ", " : "") + std::string(kViews[i].name);
  return out;
}

}  // namespace attnviz
