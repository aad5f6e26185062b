#include "app/views/grid.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "app/app_state.h"
#include "app/lazy_maps.h"
#include "imgui.h"
#include "io/json.h"
#include "io/lazy_attention.h"
#include "io/memory_budget.h"

namespace attnviz {

const char* GridSortName(GridSort k) {
  switch (k) {
    case GridSort::Layer:
      return "layer";
    case GridSort::Entropy:
      return "entropy";
    case GridSort::MaxWeight:
      return "max_weight";
    case GridSort::FirstToken:
      return "first_token";
    case GridSort::Diagonality:
      return "diagonality";
    default:
      return "?";
  }
}

bool ParseGridSort(const std::string& name, GridSort* out) {
  for (int i = 0; i < (int)GridSort::Count; ++i) {
    if (name == GridSortName((GridSort)i)) {
      *out = (GridSort)i;
      return true;
    }
  }
  return false;
}

namespace {

// An eager file's grid: the time for overviews, uploads and statistics in a frame (a frame's first
// upload always goes): a fifth of the frame interval, 10 to 30 ms. A frame of a 60 Hz display keeps
// 10 ms. A software renderer (a 144-head grid: ~110 ms frames, the page's thread blocked in GL most
// of them) gets up to 22-30 ms, so the grid does not take 3x as long to fill as the renderer's frames
// allow. Before stop 24 it was a quarter of the frame, up to 50 ms, plus 16 MB of uploads: 160-230 ms
// of the page's time a frame on that renderer.
std::chrono::microseconds GridSlice() {
  const double ms = std::clamp(200.0 * (double)ImGui::GetIO().DeltaTime, 10.0, 30.0);
  return std::chrono::microseconds((int64_t)(ms * 1000.0));
}

void SizeStats(int n, GridViewState* g) {
  if (g->stats.size() == (size_t)n) return;  // OnExampleChanged cleared them
  g->stats.assign((size_t)n, HeadStats{});
  g->stats_ok.assign((size_t)n, 0);
  g->stats_version.assign((size_t)n, ~0ull);
}

// Statistics of the maps whose version changed, a few rows at a time for a few ms a frame: the rest
// show as pending until a later frame, and a big head is computed over several frames instead of in
// one long one. Overviews, uploads and statistics share one deadline (AppState::upload_deadline: 6 ms
// into the frame for a lazily read file, whose overviews stream in while the grid scrolls; for an
// eager file, GridSlice from the grid's start), and statistics, computed after the thumbnails, get
// what is left of it: 0.5 to 4 ms (lazy), at least 2 ms. A grid of 144 heads of 512 x 512 takes
// ~0.3 s of statistics in WASM; the browser's idle time between frames does them too (Idle). Maps
// without weights (lazily read heads not in memory) have none.
// in_frame false: the page's idle time, up to the deadline exactly.
void UpdateStats(const Example& ex, GridViewState* g, std::chrono::steady_clock::time_point deadline,
                 bool in_frame = true) {
  const double left = std::chrono::duration<double, std::milli>(deadline - std::chrono::steady_clock::now()).count();
  const double budget_ms = !in_frame ? std::max(0.0, left)
                           : ex.lazy ? std::clamp(left, 0.5, 4.0)
                                     : std::clamp(left, 2.0, 30.0);
  const size_t n = ex.maps.size();
  SizeStats((int)n, g);
  if (ex.lazy && g->sort != GridSort::Layer) ex.lazy->PoolWithStats(ex.lazy_set);  // heads pooled bring theirs
  const auto start = std::chrono::steady_clock::now();
  auto spent_ms = [&] {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  };
  g->stats_pending = 0;
  for (size_t i = 0; i < n; ++i) {
    const AttentionMap& m = ex.maps[i];
    if (g->stats_version[i] == m.version) continue;
    // A lazily read head's statistics known without its weights (stored in the file, or computed as
    // it was pooled): a grid of 1024 heads sorts before they are read, and no head is computed twice.
    if (const HeadStats* known = ex.lazy ? ex.lazy->HeadStatsOf(ex.lazy_set, (int)i) : nullptr) {
      g->stats[i] = *known;
      g->stats_ok[i] = 1;
      g->stats_version[i] = m.version;
      g->order_stale = true;
      continue;
    }
    if (m.weights.size() == 0 || !m.Complete() || spent_ms() > budget_ms) {
      ++g->stats_pending;
      continue;
    }
    const int rows = (int)m.weights.rows(), cols = (int)m.weights.cols();
    if (g->partial_map != (int)i || g->partial_version != m.version) {
      g->partial.Begin(rows, cols);
      g->partial_map = (int)i;
      g->partial_version = m.version;
    }
    const int block = std::max(1, (1 << 14) / std::max(1, cols));  // ~16 Ki weights between time checks
    Status st;
    do {
      const int r0 = g->partial.rows_added();
      st = g->partial.AddRows(m.weights, r0, std::min(rows, r0 + block));
    } while (st && g->partial.rows_added() < rows && spent_ms() <= budget_ms);
    if (st && g->partial.rows_added() < rows) {  // the rest in the next frames
      ++g->stats_pending;
      continue;
    }
    g->stats_ok[i] = st && g->partial.Finish(&g->stats[i]) ? 1 : 0;
    g->stats_version[i] = m.version;
    g->order_stale = true;
    g->partial_map = -1;
  }
  g->stats_ms = (float)spent_ms();
}

float SortKey(const HeadStats& h, GridSort k) {
  switch (k) {
    case GridSort::Entropy:
      return h.entropy;  // low entropy (focused) first
    case GridSort::MaxWeight:
      return -h.max_weight;  // the rest: high first
    case GridSort::FirstToken:
      return -h.first_token;
    case GridSort::Diagonality:
      return -h.diagonality;
    default:
      return 0.0f;
  }
}

// Heads without statistics (a lazily read head never in memory, one not computed yet, one whose
// weights are not finite) follow those with, in layer order: sorted by their empty statistics they
// came first, as if they were the most focused heads.
void UpdateOrder(GridViewState* g) {
  g->order_stale = false;
  const int n = (int)g->stats.size();
  g->order.resize((size_t)n);  // no reallocation once the largest example was seen
  std::iota(g->order.begin(), g->order.end(), 0);
  auto known = [&](int i) {  // a head whose every row is zero (masked, or a hole in a file) has none either
    return g->stats_version[(size_t)i] != ~0ull && g->stats_ok[(size_t)i] && g->stats[(size_t)i].rows_counted > 0;
  };
  g->stats_known = 0;
  for (int i = 0; i < n; ++i) g->stats_known += known(i);
  if (g->sort == GridSort::Layer) return;
  const GridSort k = g->sort;
  const std::vector<HeadStats>& st = g->stats;
  std::stable_sort(g->order.begin(), g->order.end(), [&](int a, int b) {
    if (known(a) != known(b)) return known(a);
    return known(a) && SortKey(st[a], k) < SortKey(st[b], k);
  });
}

void StatsTooltip(const Example& ex, int i, const GridViewState& g) {
  int layer, head;
  ex.LayerHeadOf(i, &layer, &head);
  const HeadStats& h = g.stats[(size_t)i];
  ImGui::BeginTooltip();
  if (!ex.maps[i].name.empty()) ImGui::Text("%s", ex.maps[i].name.c_str());
  ImGui::TextDisabled("layer %d, head %d  (map %d)", layer, head, i);
  ImGui::Separator();
  bool from_file = false;
  const bool known = ex.lazy && ex.lazy->HeadStatsOf(ex.lazy_set, i, &from_file);
  if (!known && (!ex.maps[i].Complete() || g.stats_version[(size_t)i] != ex.maps[i].version)) {  // lazy, or pending
    ImGui::TextDisabled(ex.lazy ? "the head is not in memory: the thumbnail is its overview (the largest weight\n"
                                  "of each block); its statistics come once it is read (click to open it)"
                                : "statistics are being computed");
    ImGui::EndTooltip();
    return;
  }
  if (!g.stats_ok[(size_t)i])
    ImGui::TextColored(ImVec4(1.0f, 0.45f, 0.4f, 1), "no statistics: the weights are empty or not finite");
  else if (h.rows_counted == 0)
    ImGui::TextColored(ImVec4(1.0f, 0.45f, 0.4f, 1), "no statistics: every row is zero (sorted last)");
  ImGui::Text("entropy      %.3f nats  (%.0f%% of uniform)", h.entropy, 100.0f * h.entropy_normalized);
  ImGui::Text("max weight   %.3f  (mean row maximum)", h.max_weight);
  ImGui::Text("first token  %.3f  (mean weight on column 0)", h.first_token);
  ImGui::Text("diagonality  %.3f  (mass within |i - j| <= 1)", h.diagonality);
  ImGui::Text("strongest diagonal  i - j = %+d  (%.3f)", h.dominant_offset, h.dominant_offset_mass);
  const AttentionMap& m = ex.maps[i];
  if (m.weights.rows() > kOverviewSide || m.weights.cols() > kOverviewSide)
    ImGui::TextDisabled(
        "the thumbnail shows the largest weight of each block (%d x %d);\n"
        "the heatmap view shows every cell",
        OverviewSide(m.weights.rows()), OverviewSide(m.weights.cols()));
  if (known)
    ImGui::TextDisabled(from_file ? "statistics stored in the file by its writer (attnviz.save, attnviz-cli convert)"
                                  : "statistics computed as the head was read for its thumbnail");
  ImGui::TextDisabled("click to open in the heatmap view");
  ImGui::EndTooltip();
}

// The statistic the grid is sorted by (entropy in layer order): its short name and head i's value.
const char* SortedStat(GridSort sort, const HeadStats& h, float* value) {
  switch (sort) {
    case GridSort::MaxWeight:
      return *value = h.max_weight, "max";
    case GridSort::FirstToken:
      return *value = h.first_token, "1st";
    case GridSort::Diagonality:
      return *value = h.diagonality, "diag";
    default:
      return *value = h.entropy, "ent";
  }
}

// A thumbnail's caption: the statistic the grid is sorted by (entropy in layer order), after the head
// when the grid is sorted (in layer order the row and column headers say it).
// level 0 says it all; 1 drops the statistic's name; 2, for cells too narrow for the whole caption,
// puts the value under the head (sorted: two lines, CaptionLines) or drops a digit of it (in layer
// order). A 32-head layer's thumbnails are ~40 px wide: a cut "L26H19 ent 3.21" read "L26H1", and a
// sorted grid that dropped the value hid what it was sorted by. i < 0: the widest caption at that level.
void Caption(char* buf, size_t n, const Example& ex, int i, const GridViewState& g, bool with_head, int level) {
  int layer = 0, head = 0;
  float value = 0;
  const char* name = SortedStat(g.sort, HeadStats{}, &value);
  if (i < 0) {  // the last layer, the most heads (digits are as wide as each other)
    ex.LayerHeadOf((int)ex.maps.size() - 1, &layer, &head);
    head = std::max(head, ex.heads - 1);
    value = 88.88f;  // as wide as any value shown
  } else {
    ex.LayerHeadOf(i, &layer, &head);
    if (g.stats_version[(size_t)i] != ex.maps[(size_t)i].version) {  // not computed yet (or not in memory)
      // A lazily read head not in memory has none to come: the layer and head say enough.
      const char* pending = ex.lazy || level > 0 ? "" : " ...";
      if (with_head)
        std::snprintf(buf, n, "L%dH%d%s", layer, head, pending);
      else
        std::snprintf(buf, n, "%s", pending + (*pending ? 1 : 0));
      return;
    }
    name = SortedStat(g.sort, g.stats[(size_t)i], &value);
  }
  if (with_head && level >= 2)
    std::snprintf(buf, n, "L%dH%d\n%.2f", layer, head, value);
  else if (with_head && level == 1)
    std::snprintf(buf, n, "L%dH%d %.2f", layer, head, value);
  else if (with_head)
    std::snprintf(buf, n, "L%dH%d %s %.2f", layer, head, name, value);
  else if (level >= 2)
    std::snprintf(buf, n, "%.1f", value);
  else if (level == 1)
    std::snprintf(buf, n, "%.2f", value);
  else
    std::snprintf(buf, n, "%s %.2f", name, value);
}

// Caption lines at a level: a sorted grid's narrowest captions take two (the head, then the value).
int CaptionLines(bool with_head, int level) {
  return with_head && level >= 2 ? 2 : 1;
}

// How the grid's captions fit cells `cell` wide, all alike: the first level at which the widest caption
// fits in a font down to 80 % (a caption a little too wide is drawn a little smaller rather than lose a
// part), at the last level down to 70 % (what is still too wide is clipped).
void FitCaptions(const Example& ex, GridViewState* g, bool with_head, float cell) {
  char buf[64];
  float w = 0;
  int level = 0;
  for (; level < 2; ++level) {
    Caption(buf, sizeof(buf), ex, -1, *g, with_head, level);
    if ((w = ImGui::CalcTextSize(buf).x) * 0.8f <= cell) break;
  }
  if (level == 2) Caption(buf, sizeof(buf), ex, -1, *g, with_head, 2), w = ImGui::CalcTextSize(buf).x;
  g->caption_level = level;
  g->caption_scale = w > cell ? std::max(0.7f, cell / w) : 1.0f;
  g->captions_cut = w * g->caption_scale > cell + 0.5f;
}

void OpenMap(AppState* s, GridViewState* g, int i) {
  s->current_map = i;
  g->clicked = i;
  (void)SelectView(s, "heatmap");  // the registry always has it
}

void StatsTable(const HeadStats& h) {
  if (!ImGui::BeginTable("stats", 2, ImGuiTableFlags_BordersInnerH | ImGuiTableFlags_SizingFixedFit)) return;
  char buf[48];
  auto row = [&](const char* name, const char* value) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(name);
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(value);
  };
  std::snprintf(buf, sizeof(buf), "%.4f nats (%.0f%% of uniform)", h.entropy, 100.0f * h.entropy_normalized);
  row("entropy", buf);
  std::snprintf(buf, sizeof(buf), "%.4f", h.max_weight);
  row("max weight (row mean)", buf);
  std::snprintf(buf, sizeof(buf), "%.4f", h.first_token);
  row("weight on first token", buf);
  std::snprintf(buf, sizeof(buf), "%.4f", h.diagonality);
  row("diagonality (|i - j| <= 1)", buf);
  std::snprintf(buf, sizeof(buf), "i - j = %+d  (%.4f)", h.dominant_offset, h.dominant_offset_mass);
  row("strongest diagonal", buf);
  ImGui::EndTable();
}

// Row and column headers (L0, L1, ... / H0, H1, ...) in layer order; every k-th where thumbnails
// are narrower than their headers (a PNG of 32 x 32 heads).
void DrawHeaders(ImDrawList* dl, const ImVec2& origin, float left, float head_h, float cell, float cap_h, float gap,
                 int heads, int grid_rows) {
  const ImU32 dim_col = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  const float line_h = ImGui::GetTextLineHeight();
  const int head_stride = std::max(1, (int)std::ceil((ImGui::CalcTextSize("H00").x + 2) / (cell + gap)));
  const int layer_stride = std::max(1, (int)std::ceil(line_h / (cell + cap_h + gap)));
  char buf[16];
  for (int h = 0; h < heads; h += head_stride) {
    std::snprintf(buf, sizeof(buf), "H%d", h);
    const float x = origin.x + left + h * (cell + gap) + (cell - ImGui::CalcTextSize(buf).x) * 0.5f;
    dl->AddText(ImVec2(x, origin.y), dim_col, buf);
  }
  for (int l = 0; l < grid_rows; l += layer_stride) {
    std::snprintf(buf, sizeof(buf), "L%d", l);
    dl->AddText(ImVec2(origin.x, origin.y + head_h + l * (cell + cap_h + gap) + (cell - line_h) * 0.5f), dim_col, buf);
  }
}

}  // namespace

void GridView::OnExampleChanged(AppState* s) {
  state.stats.clear();
  state.stats_ok.clear();
  state.stats_version.clear();
  state.order.clear();
  state.thumbs.assign(s->Current().maps.size(), HeatmapViewState{});
  state.pooled.clear();
  state.pooled_of.clear();
  state.clicked = -1;
}

namespace {

// The map a thumbnail shows. A map bigger than an overview (256) on a side shows its max-pooled
// overview, as a lazily read head does: a 512 x 512 head uploads 256 KB instead of 1 MB (5-11 ms
// each on a software renderer, 16 a frame: 160-230 ms frames while a 144-head grid filled in), and
// a peak narrower than a thumbnail's pixel still shows. Overviews are pooled until the deadline (at
// least one a frame); the rest show a placeholder until a later frame. A lazily read head shows its
// file's thumbnail in a cell up to 64 device pixels (8 KiB a head of F16 to read instead of the
// overview's 128 KiB: a 1024-head grid's first screen of 40 px cells kept a Range worker busy at
// 20-36 % of a core for 3 s, stop 61), else its overview; `size` is the cell's in ImGui units.
const AttentionMap* ThumbnailMap(AppState* s, GridViewState* g, int i, ImVec2 size) {
  static const AttentionMap kPlaceholder;
  const Example& ex = s->Current();
  const AttentionMap& m = ex.maps[(size_t)i];
  if (ex.lazy) {
    const ImVec2 fb = ImGui::GetIO().DisplayFramebufferScale;
    bool thumb = false;
    const AttentionMap* o = LazyThumbnail(s, i, std::max(size.x * fb.x, size.y * fb.y), &thumb);
    g->overviews_shown += o != nullptr;
    g->thumbs_wanted += thumb;
    return o ? o : &m;
  }
  const int64_t rows = m.weights.rows(), cols = m.weights.cols();
  if (rows <= kOverviewSide && cols <= kOverviewSide) return &m;
  if (g->pooled.size() != ex.maps.size()) {
    g->pooled.assign(ex.maps.size(), AttentionMap{});
    g->pooled_of.assign(ex.maps.size(), ~0ull);
  }
  AttentionMap& p = g->pooled[(size_t)i];
  if (g->pooled_of[(size_t)i] == m.version) return &p;
  if (g->pooled_now > 0 && std::chrono::steady_clock::now() > s->upload_deadline) return &kPlaceholder;
  const int pr = OverviewSide(rows), pc = OverviewSide(cols);
  if (p.weights.rows() != pr || p.weights.cols() != pc) {
    if (!TryAllocate((size_t)pr * (size_t)pc * sizeof(float))) return &kPlaceholder;
    p.weights.resize(pr, pc);
  }
  const auto t0 = std::chrono::steady_clock::now();
  MaxPoolOverview(m.weights.data(), rows, cols, pr, pc, p.weights.data());
  g->pool_ms += std::chrono::duration<float, std::milli>(std::chrono::steady_clock::now() - t0).count();
  p.Touch();
  g->pooled_of[(size_t)i] = m.version;
  ++g->pooled_now;
  return &p;
}

}  // namespace

// An eager file's grid keeps drawing while statistics or thumbnails are still to come: an idle
// viewer draws no frames, and before stop 24 a 144-head grid stopped filling in after a few frames
// until the mouse moved. (A lazily read file's frames follow its reads.)
bool GridView::Animating(const AppState* s) const {
  if (&s->ActiveView() != this) return false;
  // Statistics installed after this frame's order (a lazily read file's stored ones arrive with no
  // read to follow): one more frame sorts them. Without it a 1024-head grid stayed unsorted.
  if (state.order_stale) return true;
  // Thumbnails whose maps are in memory but were left as placeholders (the frame's upload budget ran
  // out): a lazily read file's frames follow its reads, and after the last read none came, so a grid
  // of 512 thumbnails in view stopped at the 25 uploaded in the last read's frame.
  if (state.deferred > 0) return true;
  if (s->examples[(size_t)s->current].lazy) return false;
  return state.stats_pending > 0 || state.waiting > 0;
}

// Statistics in the page's idle time too: 144 heads of 512 x 512 take ~0.3 s, which a frame's share
// (what GridSlice leaves after the thumbnails) spread over seconds with a slow renderer.
bool GridView::Idle(AppState* s, std::chrono::steady_clock::time_point deadline) {
  const Example& ex = s->Current();
  if (ex.lazy || state.stats.size() != ex.maps.size() || state.stats_pending == 0) return false;
  const int pending = state.stats_pending, rows = state.partial.rows_added(), map = state.partial_map;
  UpdateStats(ex, &state, deadline, false);
  return state.stats_pending < pending || state.partial_map != map || state.partial.rows_added() != rows;
}

void GridView::ReleaseTextures(AppState* s) {
  for (HeatmapViewState& t : state.thumbs) s->ReleaseTextures(&t);
}

namespace {

// A lazily read file's thumbnails still to come (last frame's counts: the toolbar is drawn first).
void ThumbnailProgress(AppState* s, int shown, int waiting) {
  if (!s->Current().lazy || waiting <= 0) return;
  ImGui::SameLine();
  ImGui::TextDisabled("| thumbnails: %d of %d in view (?)", shown, shown + waiting);
  if (!ImGui::IsItemHovered()) return;
  if (LazyStoresOverviews(s)) {
    ImGui::SetTooltip(
        "Each thumbnail is the head's max-pooled copy, read from the file as it comes into view:\n"
        "64 x 64 in cells up to 64 pixels (when the file stores them), else its 256 x 256 overview.");
    return;
  }
  const Example& ex = s->Current();
  const LazySet& set = ex.lazy->file().index().sets[(size_t)ex.lazy_set];
  const uint64_t head = (uint64_t)set.n_q * (uint64_t)set.n_k * (uint64_t)StDTypeSize(set.layers[0].dtype);
  const uint64_t overview = (uint64_t)OverviewSide(set.n_q) * (uint64_t)OverviewSide(set.n_k) * 2;  // F16
  const uint64_t thumb = (uint64_t)OverviewSide(set.n_q, kThumbSide) * (uint64_t)OverviewSide(set.n_k, kThumbSide) * 2;
  ImGui::SetTooltip(
      "This file stores no max-pooled overviews, so the grid reads each head it shows whole\n"
      "(%s a head here) to make its thumbnail. 'attnviz-cli convert FILE out.safetensors'\n"
      "writes them once: the grid of the converted file reads %s a head (%s in small cells).",
      FormatApproxByteSize(head).c_str(), FormatApproxByteSize(overview).c_str(), FormatApproxByteSize(thumb).c_str());
}

// The sort order and the grid's size.
void DrawToolbar(GridViewState* g, int heads, int grid_rows) {
  int sort = (int)g->sort;
  const char* sorts[] = {"layer order", "entropy (low first)", "max weight (high first)", "first token (high first)",
                         "diagonality (high first)"};
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 13);
  if (ImGui::Combo("sort by", &sort, sorts, IM_ARRAYSIZE(sorts))) g->sort = (GridSort)sort;
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("Order the heads by a statistic, e.g. low entropy (focused heads) first");
  ImGui::SameLine();
  ImGui::TextDisabled("%d layer%s x %d head%s; click a map to open it", grid_rows, grid_rows == 1 ? "" : "s", heads,
                      heads == 1 ? "" : "s");
  if (g->sort == GridSort::Layer && g->caption_level > 0) {  // the captions too narrow to say "ent"
    ImGui::SameLine(0, 0);
    ImGui::TextDisabled("; numbers: each head's entropy");
  }
  const int n = (int)g->stats.size();
  if (g->sort == GridSort::Layer || g->stats_known >= n) return;
  ImGui::SameLine();
  ImGui::TextDisabled("| sorted: %d of %d (?)", g->stats_known, n);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "%d of the %d heads have statistics to sort by; the rest follow in layer order.\n"
        "A lazily read head gets its statistics once it has been in memory whole (open it);\n"
        "in a file without overviews, as its thumbnail is made while the grid is sorted (heads\n"
        "shown before are read again). An eager file's come within seconds. Files written by\n"
        "attnviz.save or attnviz-cli convert store every head's statistics: their grid sorts at\n"
        "once. Heads whose every row is zero have none.",
        g->stats_known, n);
}

}  // namespace

void GridView::Draw(AppState* s) {
  GridViewState& g = state;
  Example& ex = s->Current();
  const int n = (int)ex.maps.size();
  const int shown_before = g.drawn, waiting_before = g.waiting;
  g.drawn = 0;
  g.waiting = 0;
  g.deferred = 0;
  g.overviews_shown = 0;
  g.thumbs_wanted = 0;
  g.pooled_now = 0;
  g.pool_ms = 0;
  g.slice_ms = 0;
  g.captions_cut = false;
  if (n == 0) {
    ImGui::TextDisabled("(no maps)");
    return;
  }
  if ((int)g.thumbs.size() < n) g.thumbs.resize((size_t)n);
  // (A PNG's frame uploads every thumbnail it shows: it is read back once, however long it takes.)
  if (!ex.lazy && !s->exports.capture_frame) {
    const std::chrono::microseconds slice = GridSlice();
    g.slice_ms = (float)slice.count() / 1000.0f;
    s->upload_deadline = std::min(s->upload_deadline, std::chrono::steady_clock::now() + slice);
  }
  SizeStats(n, &g);
  const int heads = std::max(1, std::min(ex.heads, n));
  const int grid_rows = (n + heads - 1) / heads;
  if (s->config.controls) {
    DrawToolbar(&g, heads, grid_rows);
    ThumbnailProgress(s, shown_before, waiting_before);
  }
  UpdateOrder(&g);
  LowContrastNote(&s->style, ex.maps[(size_t)std::clamp(s->current_map, 0, n - 1)]);
  if (n == 1)
    DrawSingle(s);
  else
    DrawThumbnails(s, heads, grid_rows);
  // After the thumbnails, with what the deadline left; the order follows next frame.
  UpdateStats(ex, &g, s->upload_deadline);
}

void GridView::DrawSingle(AppState* s) {
  GridViewState& g = state;
  Example& ex = s->Current();
  ImGui::TextDisabled("This example has a single attention map. The grid shows every layer x head when an example");
  ImGui::TextDisabled("or an opened file has several; the statistics below are what it sorts by.");
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float side = std::clamp(std::min(avail.x * 0.45f, avail.y - 8.0f), 48.0f, 360.0f);
  g.thumbs[0].geom.valid = false;
  if (HeatmapThumbnail("thumb0", *ThumbnailMap(s, &g, 0, ImVec2(side, side)), s->style, &g.thumbs[0], s->env,
                       ImVec2(side, side), ex.lazy ? nullptr : &ex.maps[0]))
    OpenMap(s, &g, 0);
  if (ImGui::IsItemHovered()) StatsTooltip(ex, 0, g);
  g.drawn = g.thumbs[0].geom.valid ? 1 : 0;
  ImGui::SameLine();
  ImGui::BeginGroup();
  ImGui::Text("%s", ex.maps[0].name.empty() ? "map 0" : ex.maps[0].name.c_str());
  StatsTable(g.stats[0]);
  if (ImGui::Button("Open in heatmap view")) OpenMap(s, &g, 0);
  ImGui::EndGroup();
}

namespace {

// Where the thumbnails go (UI px). On screen: as wide as the columns allow, shrunk to fit every row
// while thumbnails stay >= 96 px, the rest scrolled to. In a PNG (ExportState::capture_frame): every
// head, from the top-left whatever the scroll; thumbnails shrink to fit and lose their captions when
// they would be under 40 px. The scroll region stays the screen's, so the grid keeps its scroll.
struct GridLayout {
  ImVec2 origin, screen_origin;  // top-left of the headers (drawn) / of the grid as on screen
  float left = 0, head_h = 0, gap = 8.0f;
  float cell = 40, cap_h = 0;                // drawn
  float screen_cell = 40, screen_cap_h = 0;  // on screen (the scroll region)
};

GridLayout LayOutGrid(int heads, int grid_rows, bool layer_order, bool figure, int caption_lines) {
  GridLayout G;
  const float line_h = ImGui::GetTextLineHeight(), gap = G.gap;
  G.screen_cap_h = G.cap_h = line_h * (float)caption_lines + 4;
  G.left = layer_order ? ImGui::CalcTextSize("L00").x + gap : 0.0f;
  G.head_h = layer_order ? line_h + 4 : 0.0f;
  G.screen_origin = G.origin = ImGui::GetCursorScreenPos();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float fit_w = (avail.x - G.left) / heads - gap, fit_h = (avail.y - G.head_h) / grid_rows - G.cap_h - gap;
  G.screen_cell = G.cell = std::clamp(std::min(fit_w, std::max(fit_h, 96.0f)), 40.0f, 220.0f);
  if (!figure) return G;
  G.origin = ImVec2(G.screen_origin.x + ImGui::GetScrollX(), G.screen_origin.y + ImGui::GetScrollY());
  G.cell = std::min(fit_w, fit_h);
  if (G.cell < 40.0f) G.cap_h = 0, G.cell = std::min(fit_w, (avail.y - G.head_h) / grid_rows - gap);
  G.cell = std::clamp(G.cell, 4.0f, 220.0f);
  return G;
}

}  // namespace

void GridView::DrawThumbnails(AppState* s, int heads, int grid_rows) {
  GridViewState& g = state;
  Example& ex = s->Current();
  const int n = (int)ex.maps.size();
  ImGui::BeginChild("grid_scroll", ImVec2(0, 0), false, ImGuiWindowFlags_HorizontalScrollbar);  // 32 heads may be wider
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const bool layer_order = g.sort == GridSort::Layer;
  const bool figure = s->exports.capture_frame;
  GridLayout G;
  auto lay_out = [&](int caption_lines) {
    G = LayOutGrid(heads, grid_rows, layer_order, figure, caption_lines);
    if (G.cap_h > 0) FitCaptions(ex, &g, !layer_order, G.cell);
    g.caption_lines = G.cap_h > 0 ? CaptionLines(!layer_order, g.caption_level) : 0;
  };
  lay_out(1);
  if (g.caption_lines > 1) lay_out(g.caption_lines);  // taller captions: the cells may be a little smaller
  const ImVec2 origin = G.origin;
  const float left = G.left, head_h = G.head_h, gap = G.gap, cell = G.cell, cap_h = G.cap_h;
  if (layer_order) DrawHeaders(dl, origin, left, head_h, cell, cap_h, gap, heads, grid_rows);
  const ImU32 text_col = ImGui::GetColorU32(ImGuiCol_Text);
  char buf[64];
  int hovered = -1;
  BeginHeatmapBatch(s->env);  // one GL setup for every thumbnail (they overlap nothing else drawn)
  for (int p = 0; p < n; ++p) {
    const int i = g.order[(size_t)p];
    HeatmapViewState& tv = g.thumbs[(size_t)i];
    tv.geom.valid = false;
    const AttentionMap& m = ex.maps[(size_t)i];
    const ImVec2 cell0(origin.x + left + (p % heads) * (cell + gap),
                       origin.y + head_h + (p / heads) * (cell + cap_h + gap));
    if (!ImGui::IsRectVisible(cell0, ImVec2(cell0.x + cell, cell0.y + cell + cap_h))) continue;
    // Keep the matrix's aspect inside the square cell.
    const float rows = (float)std::max(1, m.Rows()), cols = (float)std::max(1, m.Cols());
    const float tw = rows > cols ? cell * cols / rows : cell, th = rows > cols ? cell : cell * rows / cols;
    ImGui::SetCursorScreenPos(ImVec2(cell0.x + (cell - tw) * 0.5f, cell0.y + (cell - th) * 0.5f));
    ImGui::PushID(i);
    // The colours as the map's own (an eager map's overview keeps its range; a lazy head has only that).
    const AttentionMap& shown = *ThumbnailMap(s, &g, i, ImVec2(tw, th));
    if (HeatmapThumbnail("thumb", shown, s->style, &tv, s->env, ImVec2(tw, th), ex.lazy ? nullptr : &m))
      OpenMap(s, &g, i);
    if (ImGui::IsItemHovered()) hovered = i;
    ImGui::PopID();
    g.drawn += tv.geom.valid ? 1 : 0;
    const bool placeholder = !tv.geom.valid && tv.upload_error.empty();  // a placeholder until an upload
    g.waiting += placeholder;
    // Not waiting for a read, only for a frame: a placeholder, or a resized thumbnail drawn meanwhile.
    g.deferred += (placeholder && shown.weights.size() > 0) || (tv.geom.valid && tv.geom.resize_pending);
    if (i == s->current_map && !figure)
      dl->AddRect(ImVec2(cell0.x - 3, cell0.y - 3), ImVec2(cell0.x + cell + 3, cell0.y + cell + 3),
                  IM_COL32(80, 200, 255, 255), 0, 0, 1.5f);
    if (cap_h == 0) continue;
    Caption(buf, sizeof(buf), ex, i, g, !layer_order, g.caption_level);
    // Clipped to its cell on the CPU: a clip rectangle of its own made each caption its own draw
    // call, two a thumbnail, ~0.15 ms each to a software renderer (frame bench, VIEW=grid-lazy).
    const ImVec4 cap(cell0.x, cell0.y + cell, cell0.x + cell, cell0.y + cell + cap_h);
    dl->AddText(ImGui::GetFont(), ImGui::GetFontSize() * g.caption_scale, ImVec2(cell0.x, cell0.y + cell + 2),
                i == hovered ? IM_COL32(255, 196, 0, 255) : text_col, buf, nullptr, 0.0f, &cap);
  }
  EndHeatmapBatch(s->env);
  if (hovered >= 0) StatsTooltip(ex, hovered, g);
  ImGui::SetCursorScreenPos(G.screen_origin);  // extend the scroll region over the whole grid (as on screen)
  ImGui::Dummy(
      ImVec2(left + heads * (G.screen_cell + gap), head_h + grid_rows * (G.screen_cell + G.screen_cap_h + gap)));
  // As a figure (PNG, ViewModule::ExportsFigureOnly): the headers and thumbnails in view, with
  // room for the current map's outline, without the sort bar or the space beside.
  const ImVec2 wp = ImGui::GetWindowPos(), ws = ImGui::GetWindowSize();
  const float m = 4.0f;  // a margin (the spacing between the sort bar and the grid)
  const float box[4] = {std::max(origin.x, wp.x) - m, std::max(origin.y, wp.y) - m,
                        std::min(origin.x + left + std::min(heads, n) * (cell + gap), wp.x + ws.x) + m,
                        std::min(origin.y + head_h + grid_rows * (cell + cap_h + gap), wp.y + ws.y)};
  AddFigureBox(s->env.figure_rect, box);
  ImGui::EndChild();
}

void GridView::Describe(AppState* s, JsonWriter* w) {
  const GridViewState& g = state;
  w->Key("sort");
  w->String(GridSortName(g.sort));
  w->Key("clicked");
  w->Number(g.clicked);
  w->Key("drawn");
  w->Number(g.drawn);
  w->Key("waiting");  // thumbnails in view still drawn as a placeholder
  w->Number(g.waiting);
  w->Key("stats_known");  // heads with statistics to sort by (the rest follow in layer order)
  w->Number(g.stats_known);
  w->Key("stats_pending");
  w->Number(g.stats_pending);
  w->Key("stats_ms");  // spent computing them last frame
  w->NumberF(g.stats_ms);
  w->Key("pooled");  // an eager file's big maps pooled into thumbnails last frame, and the time it took
  w->Number(g.pooled_now);
  w->Key("pool_ms");
  w->NumberF(g.pool_ms);
  w->Key("slice_ms");  // an eager file's time for them, uploads and statistics (0: a lazy file's 6 ms deadline)
  w->NumberF(g.slice_ms);
  w->Key("caption_level");  // 0: captions say it all; 1: without the statistic's name; 2: value under the head
  w->Number(g.caption_level);
  w->Key("caption_lines");
  w->Number(g.caption_lines);
  w->Key("caption_first");  // the first thumbnail's caption, as drawn ("" without captions)
  char buf[64] = "";
  const Example& ex = s->Current();
  if (g.caption_lines > 0 && !g.order.empty() && g.order[0] < (int)ex.maps.size() &&
      g.stats_version.size() == ex.maps.size())
    Caption(buf, sizeof(buf), ex, g.order[0], g, g.sort != GridSort::Layer, g.caption_level);
  w->String(buf);
  w->Key("caption_scale");  // their font size (< 1: smaller, to fit)
  w->NumberF(g.caption_scale);
  w->Key("captions_cut");  // the widest caption does not fit even so (clipped)
  w->Bool(g.captions_cut);
  w->Key("overviews_shown");  // thumbnails drawn from a lazily read file's thumbnails or overviews
  w->Number(g.overviews_shown);
  w->Key("thumbs_wanted");  // ... of which a stored 64^2 thumbnail was wanted (small cells), not the overview
  w->Number(g.thumbs_wanted);
  w->Key("order");
  w->BeginArray(true);
  for (int i : g.order) w->Number(i);
  w->EndArray();
  w->Key("stats");
  w->BeginArray();
  for (size_t i = 0; i < g.stats.size(); ++i) {
    const HeadStats& h = g.stats[i];
    w->BeginObject();
    w->Key("entropy");
    w->NumberF(h.entropy);
    w->Key("entropy_normalized");
    w->NumberF(h.entropy_normalized);
    w->Key("max_weight");
    w->NumberF(h.max_weight);
    w->Key("first_token");
    w->NumberF(h.first_token);
    w->Key("diagonality");
    w->NumberF(h.diagonality);
    w->Key("dominant_offset");
    w->Number(h.dominant_offset);
    w->Key("dominant_offset_mass");
    w->NumberF(h.dominant_offset_mass);
    w->Key("ok");
    w->Bool(i < g.stats_ok.size() && g.stats_ok[i]);
    w->EndObject();
  }
  w->EndArray();
}

void GridView::DescribeHeatmaps(AppState* s, JsonWriter* w) {
  const Example& ex = s->Current();
  char id[32];
  for (size_t i = 0; i < state.thumbs.size() && i < ex.maps.size(); ++i) {
    std::snprintf(id, sizeof(id), "thumb%zu", i);
    DescribeHeatmap(w, id, state.thumbs[i].geom, &ex.maps[i]);
  }
}

bool GridView::RunCommand(AppState*, const CommandArgs& c, Status* result) {
  if (c.verb != "grid-sort") return false;
  if (ParseGridSort(c.Word(0), &state.sort))
    *result = Status::Ok();
  else
    *result = Status::Error("unknown sort '" + c.Word(0) + "' (layer, entropy, max_weight, first_token, diagonality)");
  return true;
}

}  // namespace attnviz
