// AppState's helpers and the two switches every view uses: the example and the view shown.
#include "app/app_state.h"

#include <algorithm>

#include "imgui.h"

namespace attnviz {

void FrameStats::BeginFrame(double now, bool waiting) {
  // (shown_at starts at -1: the first frame refreshes)
  refresh = refresh_asked || now - shown_at >= RefreshEvery(waiting);
  refresh_asked = false;
  if (refresh) shown_at = now, refreshed_at = std::chrono::steady_clock::now();
}

void FrameStats::Record(float ms) {
  cpu_ms = ms;
  ring[count++ % 120] = ms;
  const int n = std::min(count, 120);
  float sum = 0;
  for (int i = 0; i < n; ++i) sum += ring[i];
  cpu_ms_avg = sum / (float)n;
}

void FrameStats::Recent(float* median, float* longest) const {
  const int n = std::min(count, 120);
  *median = *longest = 0.0f;
  if (n == 0) return;
  float v[120] = {};
  std::copy(ring, ring + n, v);
  std::nth_element(v, v + n / 2, v + n);
  *median = v[n / 2];
  *longest = *std::max_element(v, v + n);
}

const AttentionMap& AppState::CurrentMap() {
  Example& ex = Current();
  return ex.maps[(size_t)std::clamp(current_map, 0, (int)ex.maps.size() - 1)];
}

const AttentionMap& AppState::ColouredMap(HeatmapStyle* resolved, std::string* name) {
  const AttentionMap* map = nullptr;
  HeatmapStyle shown = style;
  if (!ActiveView().ShownMap(this, &map, &shown, name) || !map) {
    map = &CurrentMap();
    shown = style;
    if (name) *name = Current().title + (map->name.empty() ? "" : " - " + map->name);
  }
  if (resolved) *resolved = ResolveStyle(shown, *map);
  return *map;
}

Timeline& AppState::ShownTimeline() {
  Timeline* own = ActiveView().OwnTimeline();
  return own ? *own : timeline;
}

void AppState::Notify(const std::string& text, bool error) {
  message = text;
  message_is_error = error;
  message_time = ImGui::GetCurrentContext() ? ImGui::GetTime() : 0.0;
}

void AppState::Emit(const char* type, std::string json) {
  if (events.size() >= 64) events.erase(events.begin());  // nobody is reading: keep the newest
  events.push_back({type, std::move(json)});
}

void AppState::ReleaseTextures(HeatmapViewState* v) {
  if (!env.renderer) return;  // headless: nothing was uploaded
  renderer.Release(&v->tex);
  renderer.Release(&v->tex_next);
  renderer.Release(&v->tex_under);
  renderer.Release(&v->tex_arrive);
  v->thumb_in_layer = false;  // its layer goes to the next thumbnail that needs one (least recently used)
  v->thumb_layer = -1;
}

namespace {

// The views forget what they cached of the current example's maps (they changed).
void RefreshViews(AppState* s) {
  for (auto& v : s->views) v->ReleaseTextures(s);
  s->current_map = std::clamp(s->current_map, 0, (int)s->Current().maps.size() - 1);
  s->timeline.Reset(TimelineMode::Decoding, s->CurrentMap().Rows());
  for (auto& v : s->views) v->OnExampleChanged(s);
}

}  // namespace

Status RefilterCurrent(AppState* s) {
  Example& ex = s->Current();
  if (ex.lazy) {  // its heads are read on demand: nothing to filter them from
    s->filter = TokenFilter{};
    return Status::Error("tokens cannot be hidden in a lazily read file (" + ex.title + ")");
  }
  if (ex.has_inputs) {
    s->filter = TokenFilter{};
    return Status::Error("tokens can be hidden in opened files and examples without q, k, v, not in " + ex.title);
  }
  const Status st = ApplyTokenFilter(&ex, s->filter);
  RefreshViews(s);
  return st;
}

Status SelectExample(AppState* s, int index) {
  if (index < 0 || index >= (int)s->examples.size()) return Status::Error("example index out of range");
  const Status st = EnsureExampleBuilt(&s->examples[(size_t)index]);
  if (!st) return st;
  if (s->examples[(size_t)index].maps.empty()) return Status::Error(s->examples[(size_t)index].title + " has no maps");
  // Free the GPU copies of the previous example before the views forget their widget states.
  for (auto& v : s->views) v->ReleaseTextures(s);
  s->current = index;
  s->current_map = 0;
  s->timeline.Reset(TimelineMode::Decoding, s->CurrentMap().Rows());
  for (auto& v : s->views) v->OnExampleChanged(s);
  Example& ex = s->Current();
  if (!ex.has_inputs && !ex.lazy && (s->filter.Active() || !ex.original_maps.empty())) {
    const Status st = ApplyTokenFilter(&ex, s->filter);  // the hidden tokens carry over to the next example
    if (!st) s->Notify(st.message + " in " + ex.title + ": showing every token", true);
    if (!st) (void)ApplyTokenFilter(&ex, TokenFilter{});
    RefreshViews(s);
  }
  return Status::Ok();
}

Status SelectExampleById(AppState* s, const std::string& id) {
  for (int i = 0; i < (int)s->examples.size(); ++i)
    if (s->examples[(size_t)i].id == id) return SelectExample(s, i);
  std::string ids;
  for (const Example& ex : s->examples) ids += (ids.empty() ? "" : ", ") + ex.id;
  return Status::Error("unknown example '" + id + "' (" + ids + ")");
}

bool IsOffered(const AppState* s, int view) {
  for (int v : s->offered)
    if (v == view) return true;
  return false;
}

Status SelectView(AppState* s, const std::string& name) {
  const int i = FindView(name);
  if (i < 0) return Status::Error("unknown view '" + name + "' (" + ViewNames() + ")");
  if (!IsOffered(s, i)) return Status::Error("this viewer does not offer the " + name + " view");
  s->view = i;
  return Status::Ok();
}

}  // namespace attnviz
