#include "app/views/heatmap.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "app/app_commands.h"
#include "app/app_files.h"
#include "app/app_state.h"
#include "app/lazy_maps.h"
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
      tl.Reset(TimelineMode::Decoding, s->CurrentMap().Rows());
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
  if (s->Current().lazy) {  // a lazily read file: one head at a time (playing them all would read them all)
    if (s->timeline.mode == TimelineMode::Frames) s->timeline.Reset(TimelineMode::Decoding, s->CurrentMap().Rows());
    DrawDecoding(s);
    return;
  }
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
  widget.colour_bar = s->style.show_colorbar;
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

// A lazily read map: the rows in view are asked for (all of them at full zoom-out; a band of the
// rows in view, with half a screen above and below, when zoomed in) and its screen copy (1024^2,
// files that store one) or else its overview stands in until they are in memory.
void WantLazyRows(AppState* s, const AttentionMap& map, HeatmapViewState* w) {
  const int rows = map.Rows();
  const bool complete = map.Complete();
  bool partial = false;  // a screen copy computed from the rows decoded so far
  // (A whole head keeps its screen copy too: zoomed out, it is drawn instead of the head.)
  const AttentionMap* screen = LazyScreen(s, s->current_map, &partial);
  w->underlay = screen ? screen : complete ? nullptr : LazyOverview(s, s->current_map);
  w->underlay_partial = screen && partial;
  // The head being read whole: the rows decoded so far are drawn at full resolution over the stand-in.
  const MatrixRM* head = nullptr;
  int64_t arrived = 0;
  uint64_t ticket = 0;
  const bool arriving =
      !complete && LazyArriving(s, s->current_map, &head, &arrived, &ticket) && head->rows() == rows && arrived > 0;
  w->arriving = arriving ? head->data() : nullptr;
  w->arriving_rows = arriving ? (int)arrived : 0;
  w->arriving_key = arriving ? ticket : 0;
  w->installed_key = complete ? LazyInstalledBy(s, s->current_map) : 0;
  const float visible = (float)rows / std::max(1.0f, w->zoom);
  int r0 = 0, r1 = rows;
  if (w->zoom > 1.01f && visible * 2.0f < 0.6f * (float)rows) {
    r0 = std::max(0, (int)std::floor(w->pan_row - visible * 0.5f));
    r1 = std::min(rows, (int)std::ceil(w->pan_row + visible * 1.5f));
  }
  // Rows already in memory that cover the view are kept; a band is not re-read for a small pan.
  const int held0 = map.row_offset, held1 = map.row_offset + (int)map.weights.rows();
  const int v0 = std::max(0, (int)std::floor(w->pan_row)), v1 = std::min(rows, (int)std::ceil(w->pan_row + visible));
  if (map.weights.size() && held0 <= v0 && v1 <= held1) r0 = held0, r1 = held1;
  // Stepping through heads: a head its stored screen copy already shows at the view's resolution is
  // read whole only once it has stayed in view LazyDwellMs(). A head left sooner costs no read (32 MiB
  // for a 4096^2 F16 head), whose bytes, cancelled or not, held up the next head's screen copy on a
  // 2-vCPU machine (bench/lazy_browser_bench.mjs, quick_switch_to_unvisited_head).
  const auto now = std::chrono::steady_clock::now();
  const bool held = map.weights.size() && held0 <= r0 && r1 <= held1;
  w->dwell_pending = w->geom.dwell = false;
  // (Before the heatmap's first frame its height is not known: the window's bounds it.)
  const float box = w->box_height > 0 ? w->box_height : ImGui::GetIO().DisplaySize.y;
  const bool fine = screen && !partial && StandInRowsFill(screen->Rows(), w->zoom, box);
  if (!held && fine && !LazyReading(s, s->current_map) && !LazyKept(s, s->current_map, r0, r1)) {
    if (w->dwell_map != &map) w->dwell_map = &map, w->dwell_since = now;
    const bool waiting = std::chrono::duration<double, std::milli>(now - w->dwell_since).count() < LazyDwellMs();
    // App::NeedsFrames: frames go on until the rows are asked for, and one more after that frame,
    // whose requests may bring them in at once (a head kept in 16 bits and widened, no read to wake it).
    w->dwell_pending = true;
    w->geom.dwell = waiting;
    if (waiting) return;
  } else if (!held) {
    w->dwell_map = nullptr;
  }
  LazyWantRows(s, map, r0, r1);
}

bool HeatmapView::WantLazyMaps(AppState* s) {
  if (!s->Current().lazy) return false;
  WantLazyRows(s, s->CurrentMap(), &widget);
  return true;
}

void HeatmapView::DrawDecoding(AppState* s) {
  Timeline& tl = s->timeline;
  const AttentionMap& map = s->CurrentMap();
  if (tl.mode != TimelineMode::Decoding || tl.count != map.Rows()) tl.Reset(TimelineMode::Decoding, map.Rows());
  if (s->Current().lazy)
    WantLazyRows(s, map, &widget);
  else
    widget.underlay = nullptr, widget.arriving = nullptr, widget.installed_key = 0;
  if (s->config.controls) DrawTimelineControls(&tl, StepNoun(s->Current()));
  LowContrastNote(&s->style, map);
  widget.rows_shown = tl.Step();
  widget.current_row = (tl.Step() < tl.count || tl.playing) ? tl.Step() - 1 : -1;
  widget.next = nullptr;
  widget.frame_mix = 0;
  widget.colour_bar = s->style.show_colorbar;
  HeatmapWidget("main", map, s->style, &widget, s->env, FillSize());
  HideOnRightClick(s, map, widget);
}

std::string HeatmapView::FigureSuffix(const AppState* s) const {
  return MapSuffix(s);
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

// zoom FACTOR [ROW [COL]]: the view FACTOR times closer (1 = the whole map), centred on a cell (the
// wheel and a drag do the same). A lazily read map then reads only the rows in view.
bool HeatmapView::RunCommand(AppState* s, const CommandArgs& c, Status* result) {
  if (c.verb != "zoom") return false;
  float z = 1;
  int row = -1, col = -1;
  const AttentionMap& m = s->CurrentMap();
  if (!c.Float(0, &z) || !(z >= 1) || (c.words.size() > 1 && !c.Int(1, &row)) ||
      (c.words.size() > 2 && !c.Int(2, &col))) {
    *result = Status::Error("zoom needs a factor >= 1, then optionally a row and a column to centre on");
    return true;
  }
  widget.zoom = z;
  const float vis_r = (float)m.Rows() / z, vis_c = (float)m.Cols() / z;
  widget.pan_row = std::clamp((row < 0 ? m.Rows() * 0.5f : row + 0.5f) - vis_r * 0.5f, 0.0f, m.Rows() - vis_r);
  widget.pan_col = std::clamp((col < 0 ? m.Cols() * 0.5f : col + 0.5f) - vis_c * 0.5f, 0.0f, m.Cols() - vis_c);
  *result = Status::Ok();
  return true;
}

void HeatmapView::ReleaseTextures(AppState* s) {
  s->ReleaseTextures(&widget);
}

}  // namespace attnviz
