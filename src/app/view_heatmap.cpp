// The heatmap view: one map, the timeline, and the decoding animation (rows appear as the
// decoder emits each target word, the current row outlined).
#include <algorithm>

#include "app/app_state.h"
#include "imgui.h"

namespace attnviz {

void DrawHeatmapView(AppState* s) {
  const AttentionMap& map = s->CurrentMap();
  Timeline& tl = s->timeline;
  if (tl.mode != TimelineMode::Decoding || tl.count != (int)map.weights.rows())
    tl.Reset(TimelineMode::Decoding, (int)map.weights.rows());
  DrawTimelineControls(&tl, "decoded");
  HeatmapViewState& v = s->main_view;
  v.rows_shown = tl.Step();
  v.current_row = (tl.Step() < tl.count || tl.playing) ? tl.Step() - 1 : -1;
  v.next = nullptr;
  v.frame_mix = 0;
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  HeatmapWidget("main", map, s->style, &v, s->env, ImVec2(avail.x, std::max(50.0f, avail.y)));
}

}  // namespace attnviz
