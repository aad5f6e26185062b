#include "app/views/heatmap.h"

#include <algorithm>

#include "app/app_state.h"
#include "imgui.h"
#include "io/json.h"

namespace attnviz {
namespace {

// The "maps as frames" switch, shown for examples with several maps.
void DrawFramesToggle(AppState* s, int n_maps) {
  Timeline& tl = s->timeline;
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

ImVec2 FillSize() {
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  return ImVec2(avail.x, std::max(50.0f, avail.y));
}

}  // namespace

void HeatmapView::Draw(AppState* s) {
  const int n_maps = (int)s->Current().maps.size();
  if (n_maps >= 2 && s->config.controls) DrawFramesToggle(s, n_maps);
  if (n_maps >= 2 && s->timeline.mode == TimelineMode::Frames)
    DrawFrames(s);
  else
    DrawDecoding(s);
}

void HeatmapView::DrawFrames(AppState* s) {
  Example& ex = s->Current();
  Timeline& tl = s->timeline;
  const int n_maps = (int)ex.maps.size();
  if (tl.count != n_maps) tl.Reset(TimelineMode::Frames, n_maps);
  // The sidebar's layer/head sliders or the "map" command moved current_map: follow it.
  if (!tl.playing && s->current_map != tl.Step()) tl.position = (float)std::clamp(s->current_map, 0, n_maps - 1);
  if (s->config.controls) DrawTimelineControls(&tl, "frame");
  const int f = std::clamp(tl.Step(), 0, n_maps - 1);
  s->current_map = f;
  const AttentionMap& a = ex.maps[(size_t)f];
  const AttentionMap* b = f + 1 < n_maps ? &ex.maps[(size_t)f + 1] : nullptr;
  const bool blend = b && b->weights.rows() == a.weights.rows() && b->weights.cols() == a.weights.cols();
  LowContrastNote(&s->style, a);
  widget.next = blend ? b : nullptr;
  widget.frame_mix = blend ? tl.Fraction() : 0.0f;
  widget.rows_shown = 1 << 30;
  widget.current_row = -1;
  HeatmapWidget("main", a, s->style, &widget, s->env, FillSize());
}

namespace {

// Right-click a cell to hide its key token (opened files; the sidebar lists what is hidden).
void HideOnRightClick(AppState* s, const AttentionMap& map, const HeatmapViewState& w) {
  if (s->Current().has_inputs || w.hover_col < 0 || !ImGui::IsMouseClicked(ImGuiMouseButton_Right)) return;
  if ((size_t)w.hover_col >= map.source_tokens.size()) return;
  s->filter.tokens.push_back(map.source_tokens[(size_t)w.hover_col]);
  const Status st = RefilterCurrent(s);
  if (!st) s->filter.tokens.pop_back(), s->Notify(st.message, true), (void)RefilterCurrent(s);
}

}  // namespace

void HeatmapView::DrawDecoding(AppState* s) {
  Timeline& tl = s->timeline;
  const AttentionMap& map = s->CurrentMap();
  if (tl.mode != TimelineMode::Decoding || tl.count != (int)map.weights.rows())
    tl.Reset(TimelineMode::Decoding, (int)map.weights.rows());
  if (s->config.controls) DrawTimelineControls(&tl, "decoded");
  LowContrastNote(&s->style, map);
  widget.rows_shown = tl.Step();
  widget.current_row = (tl.Step() < tl.count || tl.playing) ? tl.Step() - 1 : -1;
  widget.next = nullptr;
  widget.frame_mix = 0;
  HeatmapWidget("main", map, s->style, &widget, s->env, FillSize());
  HideOnRightClick(s, map, widget);
}

void HeatmapView::Describe(AppState* s, JsonWriter* w) {
  const Example& ex = s->Current();
  int next = -1;
  for (size_t i = 0; widget.next && i < ex.maps.size(); ++i)
    if (&ex.maps[i] == widget.next) next = (int)i;
  w->Key("frames");
  w->BeginObject();
  w->Key("active");
  w->Bool(s->timeline.mode == TimelineMode::Frames);
  w->Key("maps");
  w->Number((double)ex.maps.size());
  w->Key("next");
  w->Number(next);
  w->Key("mix");
  w->NumberF(next >= 0 ? widget.frame_mix : 0.0f);
  w->EndObject();
  w->Key("rows_shown");
  w->Number(widget.geom.valid ? widget.geom.rows_shown : 0);
}

void HeatmapView::DescribeHeatmaps(AppState* s, JsonWriter* w) {
  const Example& ex = s->Current();
  const int f = std::clamp(s->current_map, 0, (int)ex.maps.size() - 1);
  DescribeHeatmap(w, "main", widget.geom, &ex.maps[(size_t)f]);
}

void HeatmapView::ReleaseTextures(AppState* s) {
  s->ReleaseTextures(&widget);
}

}  // namespace attnviz
