// The heatmap view: one map, the timeline, and two animations:
//   decoding  rows appear as the decoder emits each target word, the current row outlined
//   frames    an example with several maps (heads, layers, training snapshots) plays them in
//             turn, each blended smoothly into the next (HeatmapViewState::next + frame_mix)
#include <algorithm>

#include "app/app_state.h"
#include "imgui.h"

namespace attnviz {

void DrawHeatmapView(AppState* s) {
  Example& ex = s->Current();
  const int n_maps = (int)ex.maps.size();
  Timeline& tl = s->timeline;
  HeatmapViewState& v = s->main_view;
  if (n_maps >= 2) {
    bool frames = tl.mode == TimelineMode::Frames;
    if (ImGui::Checkbox("maps as frames", &frames)) {
      if (frames) {
        tl.Reset(TimelineMode::Frames, n_maps);
        tl.position = (float)std::clamp(s->current_map, 0, n_maps - 1);
      } else {
        tl.Reset(TimelineMode::Decoding, (int)s->CurrentMap().weights.rows());
      }
    }
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Play the example's maps (layer x head order) as an animation");
    ImGui::SameLine();
  }
  if (n_maps >= 2 && tl.mode == TimelineMode::Frames) {
    if (tl.count != n_maps) tl.Reset(TimelineMode::Frames, n_maps);
    // The sidebar's layer/head sliders or the "map" command moved current_map: follow it.
    if (!tl.playing && s->current_map != tl.Step()) tl.position = (float)std::clamp(s->current_map, 0, n_maps - 1);
    DrawTimelineControls(&tl, "frame");
    const int f = std::clamp(tl.Step(), 0, n_maps - 1);
    s->current_map = f;
    const AttentionMap& a = ex.maps[(size_t)f];
    const AttentionMap* b = f + 1 < n_maps ? &ex.maps[(size_t)f + 1] : nullptr;
    const bool blend = b && b->weights.rows() == a.weights.rows() && b->weights.cols() == a.weights.cols();
    v.next = blend ? b : nullptr;
    v.frame_mix = blend ? tl.Fraction() : 0.0f;
    v.rows_shown = 1 << 30;
    v.current_row = -1;
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    HeatmapWidget("main", a, s->style, &v, s->env, ImVec2(avail.x, std::max(50.0f, avail.y)));
    return;
  }
  const AttentionMap& map = s->CurrentMap();
  if (tl.mode != TimelineMode::Decoding || tl.count != (int)map.weights.rows())
    tl.Reset(TimelineMode::Decoding, (int)map.weights.rows());
  DrawTimelineControls(&tl, "decoded");
  v.rows_shown = tl.Step();
  v.current_row = (tl.Step() < tl.count || tl.playing) ? tl.Step() - 1 : -1;
  v.next = nullptr;
  v.frame_mix = 0;
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  HeatmapWidget("main", map, s->style, &v, s->env, ImVec2(avail.x, std::max(50.0f, avail.y)));
}

}  // namespace attnviz
