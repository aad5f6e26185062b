#include "app/heatmap_widget.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "app/colour_bar.h"
#include "imgui.h"
#include "imgui_internal.h"
#include "io/json.h"
#include "io/lazy_attention.h"
#include "io/memory_budget.h"

namespace attnviz {
namespace {

// cb's draw in framebuffer pixels, clipped to clip (UI px) and to its own rectangle.
HeatmapDraw InFramebuffer(const HeatmapCallbackData& cb, const ImVec4& clip, const ImDrawData* dd) {
  const ImVec2 sc = dd->FramebufferScale;
  const ImVec2 off = dd->DisplayPos;
  HeatmapDraw d = cb.draw;
  const float c[4] = {clip.x, clip.y, clip.z, clip.w};
  for (int i = 0; i < 4; ++i) {  // x0, y0, x1, y1
    const float o = i % 2 ? off.y : off.x, k = i % 2 ? sc.y : sc.x;
    d.rect[i] = (cb.rect_imgui[i] - o) * k;
    d.clip[i] = i < 2 ? std::max((c[i] - o) * k, d.rect[i]) : std::min((c[i] - o) * k, d.rect[i]);
  }
  return d;
}

void FramebufferSize(const ImDrawData* dd, int* w, int* h) {
  *w = (int)(dd->DisplaySize.x * dd->FramebufferScale.x);
  *h = (int)(dd->DisplaySize.y * dd->FramebufferScale.y);
}

// A batch: its entries follow the first in the pool (BeginHeatmapBatch), each clipped to its own
// clip rectangle and the command's. A heatmap drawn on its own is a batch of one.
void HeatmapBatchCallback(const ImDrawList*, const ImDrawCmd* cmd) {
  auto* first = static_cast<HeatmapCallbackData*>(cmd->UserCallbackData);
  const ImDrawData* dd = ImGui::GetDrawData();
  if (!first || !dd) return;
  int fb_w = 0, fb_h = 0;
  FramebufferSize(dd, &fb_w, &fb_h);
  static std::vector<HeatmapDraw> draws;  // the render thread's (the UI thread's); reserved by the first batch
  draws.clear();
  if (draws.capacity() < (size_t)first->batch) draws.reserve(std::max<size_t>(1024, (size_t)first->batch));
  for (int k = 0; k < first->batch; ++k) {
    const HeatmapCallbackData& cb = first[k];
    const ImVec4 clip(std::max(cb.clip_imgui[0], cmd->ClipRect.x), std::max(cb.clip_imgui[1], cmd->ClipRect.y),
                      std::min(cb.clip_imgui[2], cmd->ClipRect.z), std::min(cb.clip_imgui[3], cmd->ClipRect.w));
    draws.push_back(InFramebuffer(cb, clip, dd));
  }
  first->renderer->DrawBatch(draws.data(), (int)draws.size(), fb_w, fb_h);
}

}  // namespace

void UploadSpeed::BeginFrame() {
  const int n = count;
  if (n == 0) return;
  float sorted[kSamples];
  std::copy(recent, recent + n, sorted);
  std::nth_element(sorted, sorted + n / 2, sorted + n);
  ms_per_mib = sorted[n / 2];
}

void UploadSpeed::Add(float per) {
  recent[next] = per;
  next = (next + 1) % kSamples;
  count = std::min(count + 1, kSamples);
  ms_per_mib = ms_per_mib > 0 && per < ms_per_mib ? 0.8f * ms_per_mib + 0.2f * per : per;
}

// False when an upload of `bytes` would end past the frame's deadline at the speed seen so far (the
// frame's first upload always goes, so the textures keep coming however slow the renderer is).
bool UploadFits(const HeatmapEnv& env, int64_t bytes) {
  if (!env.upload_deadline || !env.upload_speed || !env.uploads || *env.uploads == 0) return true;
  const double ms = (double)env.upload_speed->ms_per_mib * (double)bytes / (1 << 20);
  return std::chrono::steady_clock::now() + std::chrono::microseconds((int64_t)(ms * 1000.0)) <= *env.upload_deadline;
}

// ThumbnailSide: n when there are at most 1.5 as many cells as pixels (the shader takes the maximum of up to 2 x 2
// a pixel), else about px, max-pooled (a software renderer fetched up to 8 x 8 texels for each pixel
// of each thumbnail: 356 ms of GPU-process time per frame of a 1024-head grid of 256 x 256
// overviews). A pooled size is kept while it stays within 0.75-1.5 of px, so resizing the window
// does not pool and upload every thumbnail again each frame.
int ThumbnailSide(int n, float px, int current) {
  if ((float)n <= 1.5f * px) return 0;
  if (current > 0 && current < n && (float)current >= 0.75f * px && (float)current <= 1.5f * px) return current;
  return std::max(1, (int)std::floor(px));
}

// After an upload of `bytes` that took t0..t1: the frame's time, count and budget, the running speed.
void CountUpload(const HeatmapEnv& env, int64_t bytes, std::chrono::steady_clock::time_point t0,
                 std::chrono::steady_clock::time_point t1) {
  const float ms = std::chrono::duration<float, std::milli>(t1 - t0).count();
  if (env.upload_ms) *env.upload_ms += ms;
  if (env.upload_max_ms) *env.upload_max_ms = std::max(*env.upload_max_ms, ms);
  if (env.uploads) ++*env.uploads;
  if (env.upload_speed && bytes >= (64 << 10))
    env.upload_speed->Add(ms * (float)(1 << 20) / (float)bytes);  // small ones are mostly call overhead
  if (env.upload_budget) *env.upload_budget -= bytes;
  if (env.upload_budget && env.upload_deadline && t1 > *env.upload_deadline) *env.upload_budget = 0;
}

// The same buffer is not enough: a head whose read was cancelled frees its buffer, and the allocator
// hands the same block to the next head of the same size (a .npy opened on head 0, then head 29 asked
// for at once, read whole through File.slice() before a frame saw it arrive): its first rows would be
// drawn from head 0's. So the read's key must match too.
bool ArrivedRowsAreThisMaps(const HeatmapViewState& st, const AttentionMap& map, int tex_rows) {
  const int rows = map.Rows();
  return st.tex_arrive_data && st.tex_arrive_data == map.weights.data() && st.tex_arrive_key != 0 &&
         st.tex_arrive_key == st.installed_key && map.row_offset == 0 && (int)map.weights.rows() == rows &&
         tex_rows == rows && rows - st.tex_arrive_rows <= 3 * kArriveBandRows;
}

namespace {

// Uploads the map once per version. A failed upload is not retried until the map changes; the
// error is kept for the widget to show. False when the frame's upload budget is spent: the widget
// draws a placeholder and the upload happens in a later frame (a grid of 144 maps fills in over a
// few frames instead of stalling one).
bool EnsureTexture(const HeatmapEnv& env, const AttentionMap& map, HeatmapTexture* tex, const void** owner,
                   uint64_t* version, std::string* error) {
  if (!env.renderer) return true;  // headless
  if (*owner == &map && *version == map.version) return true;
  const int64_t bytes = (int64_t)map.weights.size() * kTexelBytes;
  if (env.upload_budget && *env.upload_budget <= 0) return false;
  if (!UploadFits(env, bytes)) return false;
  const auto t0 = std::chrono::steady_clock::now();
  const Status st = env.renderer->Upload(tex, map.weights.data(), (int)map.weights.rows(), (int)map.weights.cols());
  CountUpload(env, bytes, t0, std::chrono::steady_clock::now());
  *error = st ? "" : st.message;
  *owner = &map;
  *version = map.version;
  return true;
}

enum class ThumbTexture { Missing, Ready, Stale };  // Stale: another size of this map, drawn meanwhile

// Whether what st's thumbnail texture holds can be drawn: its layer is still its own (marked used
// this frame), or its own texture, unless it would fit a layer and the layers grew since it found none.
bool ThumbnailHeld(const HeatmapEnv& env, HeatmapViewState* st) {
  HeatmapRenderer* gl = env.renderer;
  if (st->thumb_in_layer) return gl->ThumbLayerHeld(st, st->thumb_layer, st->thumb_layer_gen);
  const bool fits = std::max(st->thumb_rows, st->thumb_cols) <= kThumbLayerMaxSide;
  return st->tex.weights != 0 && (!fits || st->thumb_layer_gen == gl->ThumbLayerGeneration());
}

// data [r, c] into a thumbnail layer when one is to be had (st then lets its own texture go), else
// into its own texture (until the layers grow: thumb_layer_gen keeps the generation that had none).
Status SendThumbnail(const HeatmapEnv& env, HeatmapViewState* st, const float* data, int r, int c) {
  HeatmapRenderer* gl = env.renderer;
  st->thumb_in_layer = gl->AcquireThumbLayer(st, r, c, &st->thumb_layer, &st->thumb_layer_gen);
  st->thumb_rows = r, st->thumb_cols = c;
  if (!st->thumb_in_layer) {
    st->thumb_layer_gen = gl->ThumbLayerGeneration();
    return gl->Upload(&st->tex, data, r, c);
  }
  gl->UploadThumbLayer(st->thumb_layer, data, r, c);
  if (st->tex.weights) gl->Release(&st->tex);
  return Status::Ok();
}

// A thumbnail's texture: map pooled to [pr, pc] (0: that side whole; MaxPoolOverview, the grid's
// overviews' own pooling) in a scratch buffer and uploaded, once per map version and size, into a
// thumbnail layer or its own texture (SendThumbnail). The pooling counts as the upload's time.
// Missing when the frame's upload budget is spent (like EnsureTexture), Stale when the texture holds
// this map at another size meanwhile (a resize), drawn until a later frame uploads the new one.
ThumbTexture EnsureThumbnailTexture(const HeatmapEnv& env, const AttentionMap& map, HeatmapViewState* st, int pr,
                                    int pc) {
  if (!env.renderer) return ThumbTexture::Ready;  // headless
  const bool same_map = st->tex_owner == &map && st->tex_version == map.version;
  const bool held = same_map && ThumbnailHeld(env, st);
  const bool failed = same_map && !st->upload_error.empty();  // not retried until the map changes
  if ((held || failed) && st->tex_pooled_rows == pr && st->tex_pooled_cols == pc) return ThumbTexture::Ready;
  const int rows = (int)map.weights.rows(), cols = (int)map.weights.cols();
  const int r = pr > 0 ? pr : rows, c = pc > 0 ? pc : cols;
  static std::vector<float> scratch;  // the UI thread's; as big as the largest pooled thumbnail
  const bool pool =
      (pr > 0 || pc > 0) && (scratch.size() >= (size_t)r * c || TryAllocate((size_t)r * c * sizeof(float)));
  if (!pool) pr = pc = 0;  // no room to pool: the map as it is (the shader takes the maxima)
  const int64_t bytes = (int64_t)(pool ? (size_t)r * c : map.weights.size()) * kTexelBytes;
  if ((env.upload_budget && *env.upload_budget <= 0) || !UploadFits(env, bytes))
    return held && !failed ? ThumbTexture::Stale : ThumbTexture::Missing;
  const auto t0 = std::chrono::steady_clock::now();
  if (pool) {
    if (scratch.size() < (size_t)r * c) scratch.resize((size_t)r * c);
    MaxPoolOverview(map.weights.data(), rows, cols, r, c, scratch.data());
  }
  const Status up =
      pool ? SendThumbnail(env, st, scratch.data(), r, c) : SendThumbnail(env, st, map.weights.data(), rows, cols);
  CountUpload(env, bytes, t0, std::chrono::steady_clock::now());
  st->upload_error = up ? "" : up.message;
  st->tex_owner = &map;
  st->tex_version = map.version;
  st->tex_pooled_rows = pr;
  st->tex_pooled_cols = pc;
  return ThumbTexture::Ready;
}

void UploadArriveBand(const HeatmapEnv& env, HeatmapViewState* st, const float* data, int row1) {
  const int row0 = st->tex_arrive_rows;
  if (row1 <= row0) return;
  const auto t0 = std::chrono::steady_clock::now();
  env.renderer->UploadRows(&st->tex_arrive, data + (size_t)row0 * st->tex_arrive.cols, row0, row1);
  CountUpload(env, (int64_t)(row1 - row0) * st->tex_arrive.cols * kTexelBytes, t0, std::chrono::steady_clock::now());
  st->tex_arrive_rows = row1;
}

// A lazily read head arriving whole: the rows decoded since the last frame go into tex_arrive in
// bands of kArriveBandRows while the frame's upload budget lasts (the last rows with the head). Headless, the
// rows count as uploaded. Returns the rows that can be drawn from tex_arrive, [0, n).
int UploadArrivingRows(const HeatmapEnv& env, const AttentionMap& map, HeatmapViewState* st) {
  if (!st->arriving || st->arriving_rows <= 0) return 0;
  if (st->tex_arrive_key != st->arriving_key || st->tex_arrive_data != st->arriving) {
    if (env.renderer && env.upload_budget && *env.upload_budget <= 0) return 0;
    if (env.renderer && !env.renderer->Allocate(&st->tex_arrive, map.Rows(), map.Cols())) return 0;
    st->tex_arrive_key = st->arriving_key;
    st->tex_arrive_data = st->arriving;
    st->tex_arrive_rows = 0;
  }
  const int rows = std::min(st->arriving_rows, map.Rows());
  if (!env.renderer) return st->tex_arrive_rows = rows;
  // Whole bands only (a part's worth): each upload costs a software renderer a frame's time.
  const int64_t band_bytes = (int64_t)kArriveBandRows * map.Cols() * kTexelBytes;
  while (st->tex_arrive_rows + kArriveBandRows <= rows && (!env.upload_budget || *env.upload_budget > 0) &&
         UploadFits(env, band_bytes))
    UploadArriveBand(env, st, st->arriving, st->tex_arrive_rows + kArriveBandRows);
  return st->tex_arrive_rows;
}

// The head was installed from the buffer its arriving rows were uploaded from: the rest of its rows
// (at most a part or two) are uploaded and tex_arrive becomes the map's texture, instead of the
// whole head being uploaded again. False when tex_arrive holds another buffer's rows.
bool AdoptArrivedTexture(const HeatmapEnv& env, const AttentionMap& map, HeatmapViewState* st) {
  if (!ArrivedRowsAreThisMaps(*st, map, env.renderer ? st->tex_arrive.rows : map.Rows())) return false;
  if (st->tex_owner == &map && st->tex_version == map.version) return false;
  const int rows = map.Rows();
  if (env.renderer) {
    UploadArriveBand(env, st, map.weights.data(), rows);
    std::swap(st->tex, st->tex_arrive);
  }
  st->tex_owner = &map;
  st->tex_version = map.version;
  st->upload_error.clear();
  st->tex_arrive_key = 0, st->tex_arrive_data = nullptr, st->tex_arrive_rows = 0;
  ++st->geom.adopted;
  return true;
}

// A map that is not on the GPU yet (or not in memory: a lazily read head): a dim box.
// A map not drawn yet: a box in the theme's tone (in the light theme a dark box read as a map of
// zeros, which most colour maps draw black), with a word in its middle when it fits.
void DrawPlaceholder(const ImVec2& p0, const ImVec2& p1, const char* text) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec4 bg = ImGui::GetStyleColorVec4(ImGuiCol_WindowBg);
  const bool light = bg.x + bg.y + bg.z > 1.5f;
  dl->AddRectFilled(p0, p1, light ? IM_COL32(212, 212, 218, 255) : IM_COL32(40, 40, 46, 255));
  if (!text || !*text) return;
  const ImVec2 ts = ImGui::CalcTextSize(text);
  if (ts.x + 4 > p1.x - p0.x || ts.y + 4 > p1.y - p0.y) return;
  dl->AddText(ImVec2((p0.x + p1.x - ts.x) * 0.5f, (p0.y + p1.y - ts.y) * 0.5f),
              light ? IM_COL32(100, 100, 110, 255) : IM_COL32(140, 140, 150, 255), text);
}

void EnsureLabelExtents(const AttentionMap& map, const LabelEnv& env, HeatmapViewState* st) {
  if (st->labels_owner == &map && st->labels_version == map.version) return;
  st->max_source_label_w = 0;
  st->max_target_label_w = 0;
  for (const auto& s : map.source_tokens)
    st->max_source_label_w = std::max(st->max_source_label_w, LabelLength(env, s));
  for (const auto& s : map.target_tokens)
    st->max_target_label_w = std::max(st->max_target_label_w, LabelLength(env, s));
  st->labels_owner = &map;
  st->labels_version = map.version;
}

const char* TokenOr(const TokenList& tokens, int i, char* buf, size_t n) {
  if (i >= 0 && i < (int)tokens.size()) return tokens[i].c_str();
  std::snprintf(buf, n, "#%d", i);
  return buf;
}

void ClampView(HeatmapViewState* st, int rows, int cols) {
  st->zoom = std::clamp(st->zoom, 1.0f, std::max(1.0f, (float)std::max(rows, cols) / 2.0f));
  const float vis_c = cols / st->zoom, vis_r = rows / st->zoom;
  st->pan_col = std::clamp(st->pan_col, 0.0f, cols - vis_c);
  st->pan_row = std::clamp(st->pan_row, 0.0f, rows - vis_r);
}

}  // namespace

const char* RangeModeName(RangeMode m) {
  switch (m) {
    case RangeMode::Fixed:
      return "fixed";
    case RangeMode::P99:
      return "p99";
    case RangeMode::P999:
      return "p99.9";
    default:
      return "auto";
  }
}

bool ParseRangeMode(const std::string& s, RangeMode* out) {
  for (int i = 0; i < (int)RangeMode::Count; ++i) {
    if (s == RangeModeName((RangeMode)i)) {
      *out = (RangeMode)i;
      return true;
    }
  }
  return false;
}

namespace {

// The largest finite weight (0 if none is positive): eight running maxima, which the compiler keeps
// in vector registers (one running maximum with its NaN/inf test ran 2.3x slower in WASM).
float FiniteMax(const float* w, int64_t n) {
  constexpr float kBig = 3.4028234663852886e38f;  // FLT_MAX: +inf and NaN fail x <= kBig
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; ++j) {
      const float x = w[i + j];
      acc[j] = x > acc[j] && x <= kBig ? x : acc[j];
    }
  float top = 0.0f;
  for (; i < n; ++i) top = w[i] > top && w[i] <= kBig ? w[i] : top;
  for (float a : acc) top = std::max(top, a);
  return top;
}

// Max (of every weight), then percentiles and a 64-bin histogram over [0, max] from a sample of
// ~2^18 weights (every weight of a map up to 512 x 512), once per map version; non-finite weights
// are skipped. The sample is 4096 runs of 64 contiguous weights (one weight every stride missed the
// cache each time: ~15 ms on a 4096^2 head in WASM, runs ~7 ms), an odd number of weights apart, so
// a power-of-two row length does not sample the same columns in every row. The auto range needs only the max (a pass a
// grid of 144 maps can afford in one frame; a lazily read head brings its own, kept as it was decoded); the percentiles
// and the histogram are computed when a range mode or the low-contrast note asks for them (`full`).
const MapRangeStats& RangeStats(const AttentionMap& map, bool full) {
  MapRangeStats& st = map.range_stats;
  if (st.version == map.version && (st.full || !full)) return st;
  const float* w = map.weights.data();
  const int64_t n = (int64_t)map.weights.size();
  if (st.version != map.version) {
    st = MapRangeStats{};
    st.max = FiniteMax(w, n);
    st.version = map.version;
  }
  if (!full) return st;
  st.full = true;
  constexpr int64_t kSample = int64_t(1) << 18, kRun = 64;  // runs of 64 weights: 4 cache lines each
  const int64_t step = n > kSample ? ((n / (kSample / kRun)) | 1) : kRun;
  std::vector<float> sample;
  sample.reserve((size_t)std::min(n, kSample + kRun));
  const float scale = st.max > 0 ? 64.0f / st.max : 0.0f;
  for (int64_t i0 = 0; i0 < n; i0 += step)
    for (int64_t i = i0, end = std::min(n, i0 + kRun); i < end; ++i) {
      const float x = w[i];
      if (!std::isfinite(x)) continue;
      st.hist[std::clamp((int)(std::max(x, 0.0f) * scale), 0, 63)]++;
      st.count++;
      sample.push_back(x);
    }
  // The 99.9th percentile is searched for only above the 99th: after the first nth_element the
  // weights past it are the largest 1 % (one pass over the sample instead of two).
  size_t from = 0;
  auto percentile = [&](double q) {
    if (sample.empty()) return 0.0f;
    const size_t k = std::max(from, std::min(sample.size() - 1, (size_t)(q * (double)(sample.size() - 1) + 0.5)));
    std::nth_element(sample.begin() + (std::ptrdiff_t)from, sample.begin() + (std::ptrdiff_t)k, sample.end());
    from = k;
    return sample[k];
  };
  st.p99 = percentile(0.99);
  st.p999 = percentile(0.999);
  return st;
}

}  // namespace

HeatmapStyle ResolveStyle(const HeatmapStyle& style, const AttentionMap& map) {
  HeatmapStyle r = style;
  if (style.range == RangeMode::Fixed || style.scale == ScaleMode::PerRow) return r;
  const MapRangeStats& st = RangeStats(map, style.range == RangeMode::P99 || style.range == RangeMode::P999);
  float top = style.range == RangeMode::P99 ? st.p99 : (style.range == RangeMode::P999 ? st.p999 : st.max);
  if (!(top > 0)) top = st.max > 0 ? st.max : 1.0f;  // all zeros, or a percentile of 0
  r.vmax = top;
  if (style.scale == ScaleMode::Global)
    r.vmin = 0.0f;
  else
    r.vmin = std::min(style.vmin, top * 0.5f);  // log: the user's lower limit, below the top
  return r;
}

float LowContrastFraction(const HeatmapStyle& resolved, const AttentionMap& map) {
  if (resolved.scale != ScaleMode::Global) return 0.0f;
  const MapRangeStats& st = RangeStats(map, true);
  if (st.count == 0 || !(st.max > 0)) return 0.0f;
  const float threshold = resolved.vmin + 0.05f * (resolved.vmax - resolved.vmin);
  int64_t below = 0;
  for (int b = 0; b < 64; ++b)
    if ((b + 1) * st.max / 64.0f <= threshold) below += st.hist[b];  // whole bins under the threshold
  return (float)below / (float)st.count;
}

bool LowContrastNote(HeatmapStyle* style, const AttentionMap& map) {
  const float frac = LowContrastFraction(ResolveStyle(*style, map), map);
  if (frac < 0.9f) return false;
  ImGui::TextColored(ImVec4(1.0f, 0.75f, 0.3f, 1),
                     "%.0f%% of the weights are in the bottom 5%% of the colour range:", 100.0f * frac);
  ImGui::SameLine();
  if (ImGui::SmallButton("per row")) style->scale = ScaleMode::PerRow;
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Each row divided by its own maximum");
  ImGui::SameLine();
  if (ImGui::SmallButton("log")) style->scale = ScaleMode::Log, style->vmin = 1e-4f;
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("log10 of the weights, from 1e-4 to the largest weight");
  return true;
}

float HeatmapT(const HeatmapStyle& style, float w, float row_max) {
  return ColourT((ColourScale)style.scale, w, style.vmin, style.vmax, row_max);
}

bool AddHeatmapDrawCallback(const HeatmapEnv& env, const HeatmapDraw& draw, const float rect[4]) {
  if (!env.renderer || !env.pool || env.pool->size() >= env.pool->capacity())
    return false;  // never reallocate mid-frame
  env.pool->push_back(HeatmapCallbackData{});
  HeatmapCallbackData& cb = env.pool->back();
  cb.renderer = env.renderer;
  cb.draw = draw;
  for (int i = 0; i < 4; ++i) cb.rect_imgui[i] = rect[i];
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 c0 = dl->GetClipRectMin(), c1 = dl->GetClipRectMax();
  cb.clip_imgui[0] = c0.x, cb.clip_imgui[1] = c0.y, cb.clip_imgui[2] = c1.x, cb.clip_imgui[3] = c1.y;
  if (env.batch_first && *env.batch_first >= 0) return true;  // drawn by EndHeatmapBatch's callback
  cb.batch = 1;
  dl->AddCallback(HeatmapBatchCallback, &cb);
  dl->AddCallback(ImDrawCallback_ResetRenderState, nullptr);
  return true;
}

void BeginHeatmapBatch(const HeatmapEnv& env) {
  if (env.batch_first && env.pool) *env.batch_first = (int)env.pool->size();
}

void EndHeatmapBatch(const HeatmapEnv& env) {
  if (!env.batch_first || *env.batch_first < 0 || !env.pool) return;
  const int first = *env.batch_first, n = (int)env.pool->size() - first;
  *env.batch_first = -1;
  if (n <= 0) return;
  HeatmapCallbackData& cb = (*env.pool)[(size_t)first];
  cb.batch = n;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  // The window's whole clip rectangle: each entry keeps its own.
  dl->PushClipRectFullScreen();
  dl->AddCallback(HeatmapBatchCallback, &cb);
  dl->AddCallback(ImDrawCallback_ResetRenderState, nullptr);
  dl->PopClipRect();
}

int RowRank(const float* row, int n, int c, int* ties) {
  *ties = 0;
  const float w = row[c];
  if (std::isnan(w)) return 0;
  int rank = 1;
  for (int j = 0; j < n; ++j) {
    rank += row[j] > w ? 1 : 0;
    *ties += (row[j] == w && j != c) ? 1 : 0;
  }
  return rank;
}

namespace {

// Where a heatmap goes inside its box: label margins, the matrix rectangle and the visible window.
struct HeatmapLayout {
  ImVec2 origin;                                       // top-left of the widget's box
  ImVec2 m0, m1;                                       // the matrix area
  float cell_x = 1, cell_y = 1;                        // on-screen size of one cell
  float view[4] = {0, 0, 0, 0};                        // col0, row0, col1, row1 shown
  bool vertical = false;                               // source labels drawn rotated (crowded columns)
  float max_label_w = 0;                               // widest source label (horizontal thinning)
  int r_begin = 0, r_end = 0, c_begin = 0, c_end = 0;  // visible cell range
  float CellX0(int c) const { return m0.x + (c - view[0]) * cell_x; }
  float CellY0(int r) const { return m0.y + (r - view[1]) * cell_y; }
};

constexpr float kPad = 6.0f;

HeatmapLayout ComputeLayout(int rows, int cols, bool labels, const HeatmapViewState& st, const ImVec2& origin,
                            const ImVec2& size) {
  HeatmapLayout L;
  L.origin = origin;
  const float line_h = ImGui::GetTextLineHeight();
  // Target labels down the left, source labels along the top (vertical when crowded).
  const float left = labels ? std::min(st.max_target_label_w, size.x * 0.3f) + kPad * 2 : 0.0f;
  const float avail_w = std::max(10.0f, size.x - left - kPad);
  const float top_h_horizontal = line_h + kPad * 2;
  const float top_h_vertical = std::min(st.max_source_label_w, size.y * 0.3f) + kPad * 2;
  // Orientation from the cell width the matrix would get with horizontal labels.
  float avail_h = std::max(10.0f, size.y - (labels ? top_h_horizontal : 0) - kPad);
  float cell = std::min({avail_w / (cols / st.zoom), avail_h / (rows / st.zoom), 96.0f});
  L.vertical = labels && st.max_source_label_w + 4 > cell;
  L.max_label_w = st.max_source_label_w;
  const float top = labels ? (L.vertical ? top_h_vertical : top_h_horizontal) : 0.0f;
  avail_h = std::max(10.0f, size.y - top - kPad);
  cell = std::min({avail_w / (cols / st.zoom), avail_h / (rows / st.zoom), 96.0f});
  const float vis_c = cols / st.zoom, vis_r = rows / st.zoom;
  L.m0 = ImVec2(std::floor(origin.x + left), std::floor(origin.y + top));
  L.m1 = ImVec2(L.m0.x + std::floor(vis_c * cell), L.m0.y + std::floor(vis_r * cell));
  L.cell_x = (L.m1.x - L.m0.x) / vis_c;
  L.cell_y = (L.m1.y - L.m0.y) / vis_r;
  const float view[4] = {st.pan_col, st.pan_row, st.pan_col + vis_c, st.pan_row + vis_r};
  for (int i = 0; i < 4; ++i) L.view[i] = view[i];
  L.c_begin = std::max(0, (int)std::floor(view[0]));
  L.c_end = std::min(cols, (int)std::ceil(view[2]));
  L.r_begin = std::max(0, (int)std::floor(view[1]));
  L.r_end = std::min(rows, (int)std::ceil(view[3]));
  return L;
}

// Wheel zooms around the cursor, drag pans, double-click resets (the widget is the last item).
void HandleZoomPan(const HeatmapLayout& L, int rows, int cols, HeatmapViewState* st) {
  const bool item_hovered = ImGui::IsItemHovered();
  ImGuiIO& io = ImGui::GetIO();
  if (item_hovered && io.MouseWheel != 0.0f) {
    const float mc = st->pan_col + (io.MousePos.x - L.m0.x) / L.cell_x;
    const float mr = st->pan_row + (io.MousePos.y - L.m0.y) / L.cell_y;
    const float old_zoom = st->zoom;
    st->zoom *= std::pow(1.2f, io.MouseWheel);
    ClampView(st, rows, cols);
    const float k = old_zoom / st->zoom;
    st->pan_col = mc - (mc - st->pan_col) * k;
    st->pan_row = mr - (mr - st->pan_row) * k;
    ClampView(st, rows, cols);
  }
  if (ImGui::IsItemActive() && ImGui::IsMouseDragging(ImGuiMouseButton_Left, 2.0f) && st->zoom > 1.0f) {
    st->pan_col -= io.MouseDelta.x / L.cell_x;
    st->pan_row -= io.MouseDelta.y / L.cell_y;
    ClampView(st, rows, cols);
  }
  if (item_hovered && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) {
    st->zoom = 1.0f;
    st->pan_col = st->pan_row = 0.0f;
  }
}

// A lazily read head's screen copy (complete, smaller than the head) has at least one cell per
// pixel of the box at this zoom, both ways.
bool CoarseUnderlayShowsAll(const AttentionMap& map, const HeatmapViewState& st, const ImVec2& size) {
  const AttentionMap* u = st.underlay;
  if (!u || st.underlay_partial || u->weights.size() == 0 || u->weights.rows() >= map.Rows()) return false;
  return StandInRowsFill(u->weights.rows(), st.zoom, size.y) && StandInRowsFill(u->weights.cols(), st.zoom, size.x);
}

// Queues the shader draws of the cells and records the geometry for describe(). A lazily read map
// may hold only a band of rows (or none): its overview (the underlay) is drawn under the whole area
// first, then the rows of a whole-head read decoded so far (arrived, from tex_arrive), then the rows
// in memory, both at full resolution.
void QueueCells(const HeatmapEnv& env, const HeatmapStyle& style, const HeatmapLayout& L, const AttentionMap& map,
                bool draw_map, bool draw_underlay, bool coarse, int arrived, HeatmapViewState* st) {
  const int rows = map.Rows(), cols = map.Cols();
  HeatmapDraw draw;
  draw.vmin = style.vmin;
  draw.vmax = style.vmax;
  draw.scale = style.scale;
  draw.colormap = style.colormap;
  draw.rows_shown = std::clamp(st->rows_shown, 0, rows);
  if (!style.show_grid) draw.grid_rgba[3] = 0.0f;
  const float rect[4] = {L.m0.x, L.m0.y, L.m1.x, L.m1.y};
  if (draw_underlay) {  // the overview [R, C] stretched over the map's [rows, cols]
    HeatmapDraw under = draw;
    const float R = (float)st->underlay->weights.rows(), C = (float)st->underlay->weights.cols();
    under.tex = &st->tex_under;
    under.view[0] = L.view[0] * C / (float)cols;
    under.view[1] = L.view[1] * R / (float)rows;
    under.view[2] = L.view[2] * C / (float)cols;
    under.view[3] = L.view[3] * R / (float)rows;
    under.rows_shown = 1 << 30;
    under.grid_rgba[3] = 0.0f;
    AddHeatmapDrawCallback(env, under, rect);
  }
  if (arrived > 0) {  // rows [0, arrived) of a head being read whole, over the underlay
    const float v0 = L.view[1], v1 = std::min(L.view[3], (float)arrived);
    if (v1 > v0) {
      HeatmapDraw a = draw;
      a.tex = &st->tex_arrive;
      a.view[0] = L.view[0], a.view[1] = v0, a.view[2] = L.view[2], a.view[3] = v1;
      const float band[4] = {L.m0.x, L.m0.y, L.m1.x, L.m0.y + (v1 - L.view[1]) * L.cell_y};
      AddHeatmapDrawCallback(env, a, band);
    }
  }
  const int held0 = map.row_offset, held1 = map.row_offset + (int)map.weights.rows();
  if (draw_map) {  // the rows in memory that are in view
    const float v0 = std::max(L.view[1], (float)held0), v1 = std::min(L.view[3], (float)held1);
    if (v1 > v0) {
      draw.tex = &st->tex;
      draw.tex_b = st->next ? &st->tex_next : nullptr;
      draw.frame_mix = st->frame_mix;
      draw.view[0] = L.view[0];
      draw.view[1] = v0 - (float)held0;
      draw.view[2] = L.view[2];
      draw.view[3] = v1 - (float)held0;
      draw.rows_shown = std::clamp(st->rows_shown - held0, 0, held1 - held0);
      const float band[4] = {L.m0.x, L.m0.y + (v0 - L.view[1]) * L.cell_y, L.m1.x,
                             L.m0.y + (v1 - L.view[1]) * L.cell_y};
      AddHeatmapDrawCallback(env, draw, band);
    }
  }
  st->geom.valid = true;
  for (int i = 0; i < 4; ++i) {
    st->geom.rect[i] = rect[i];
    st->geom.view[i] = L.view[i];
  }
  st->geom.rows = rows;
  st->geom.cols = cols;
  st->geom.rows_shown = std::clamp(st->rows_shown, 0, rows);
  st->geom.held0 = draw_map || coarse ? held0 : 0;
  st->geom.held1 = draw_map || coarse ? held1 : 0;
  st->geom.coarse = coarse;
  st->geom.underlay = draw_underlay;
  st->geom.underlay_rows = draw_underlay ? (int)st->underlay->weights.rows() : 0;
  st->geom.underlay_partial = draw_underlay && st->underlay_partial;
  st->geom.arrived = arrived;
  const int h0 = st->geom.held0, h1 = st->geom.held1;  // arrived rows and held ones, counted once
  st->geom.rows_in = arrived + std::max(0, h1 - std::max(h0, arrived));
}

void UpdateHover(const HeatmapLayout& L, int rows, int cols, HeatmapViewState* st) {
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  if (!ImGui::IsItemHovered() || mouse.x < L.m0.x || mouse.x >= L.m1.x || mouse.y < L.m0.y || mouse.y >= L.m1.y) return;
  st->hover_col = std::clamp((int)std::floor(L.view[0] + (mouse.x - L.m0.x) / L.cell_x), 0, cols - 1);
  st->hover_row = std::clamp((int)std::floor(L.view[1] + (mouse.y - L.m0.y) / L.cell_y), 0, rows - 1);
  if (st->hover_row >= st->geom.rows_shown) st->hover_row = st->hover_col = -1;
}

// The weight as printed in a cell of room_px: 3 decimals in wide cells, else 2, else the paper
// style without the leading zero (".87", "-.05", "1.0"), where weights that round to 0 are left
// blank so the ones that matter stand out; false when nothing is printed.
bool CellNumberText(float w, float room_px, char* buf, size_t n, ImVec2* size) {
  std::snprintf(buf, n, room_px >= 40.0f ? "%.3f" : "%.2f", w);
  if ((*size = ImGui::CalcTextSize(buf)).x <= room_px) return true;
  if (std::fabs(w) < 0.005f) return false;
  if (std::fabs(w) >= 0.995f)
    std::snprintf(buf, n, "%.1f", w);
  else if (char* zero = std::strstr(buf, "0."))
    std::memmove(zero, zero + 1, std::strlen(zero));  // "0.87" -> ".87", "-0.05" -> "-.05"
  return (*size = ImGui::CalcTextSize(buf)).x <= room_px;
}

// Weights in cells, in a colour that contrasts with the cell, as far as they fit (1 px each side).
// Returns how many were drawn.
int DrawCellNumbers(ImDrawList* dl, const AttentionMap& map, const HeatmapStyle& style, const HeatmapLayout& L,
                    int rows_shown) {
  if (!style.show_numbers || L.cell_y < ImGui::GetTextLineHeight() + 2) return 0;
  const float room = L.cell_x - 2.0f;
  if (room < ImGui::CalcTextSize(".00").x) return 0;  // the shortest form fits nowhere
  char buf[32];
  ImVec2 ts;
  int drawn = 0;
  const int held0 = map.row_offset, held1 = map.row_offset + (int)map.weights.rows();  // rows in memory
  for (int r = std::max(L.r_begin, held0); r < std::min({L.r_end, rows_shown, held1}); ++r) {
    const float row_max = map.weights.row(r - held0).maxCoeff();
    for (int c = L.c_begin; c < L.c_end; ++c) {
      const float w = map.weights(r - held0, c);
      if (!CellNumberText(w, room, buf, sizeof(buf), &ts)) continue;
      uint8_t rgb[3];
      ColormapSample(style.colormap, HeatmapT(style, w, row_max), rgb);
      const ImVec2 p(L.CellX0(c) + (L.cell_x - ts.x) * 0.5f, L.CellY0(r) + (L.cell_y - ts.y) * 0.5f);
      dl->AddText(p, ContrastingTextColor(rgb), buf);
      ++drawn;
    }
  }
  return drawn;
}

constexpr ImU32 kHighlight = IM_COL32(255, 196, 0, 255);

void DrawHighlights(ImDrawList* dl, const HeatmapLayout& L, int rows, int cols, int hl_row, int hl_col,
                    int current_row) {
  if (hl_row >= 0 && hl_row < rows)
    dl->AddRect(ImVec2(L.m0.x, L.CellY0(hl_row)), ImVec2(L.m1.x, L.CellY0(hl_row) + L.cell_y), kHighlight, 0, 0, 1.5f);
  if (hl_col >= 0 && hl_col < cols)
    dl->AddRect(ImVec2(L.CellX0(hl_col), L.m0.y), ImVec2(L.CellX0(hl_col) + L.cell_x, L.m1.y), kHighlight, 0, 0, 1.5f);
  if (current_row >= 0 && current_row < rows)
    dl->AddRect(ImVec2(L.m0.x, L.CellY0(current_row)), ImVec2(L.m1.x, L.CellY0(current_row) + L.cell_y),
                IM_COL32(80, 200, 255, 255), 0, 0, 2.0f);
}

// Axis labels: only visible ones, thinned (core/label_layout.h) so that they do not overlap in
// auto mode; the highlighted row and column are always labelled. Boxes go to the geometry.
void DrawAxisLabels(ImDrawList* dl, const AttentionMap& map, const HeatmapLayout& L, const HeatmapEnv& env,
                    LabelMode mode, int rows_shown, int hl_row, int hl_col, HeatmapGeometry* geom) {
  const ImU32 text_col = ImGui::GetColorU32(ImGuiCol_Text);
  const float line_h = ImGui::GetTextLineHeight();
  char buf[32];
  std::string fallback;
  auto record = [&](int axis, int index, const ImVec4& box, bool vertical) {
    if (geom->labels.size() >= 1024) return;
    HeatmapGeometry::Label l;
    l.axis = axis;
    l.index = index;
    l.box[0] = box.x, l.box[1] = box.y, l.box[2] = box.z, l.box[3] = box.w;
    l.vertical = vertical;
    geom->labels.push_back(l);
  };
  auto token = [&](const TokenList& tokens, int i) -> const std::string& {
    if (i >= 0 && i < (int)tokens.size()) return tokens[i];
    fallback = TokenOr(tokens, i, buf, sizeof(buf));
    return fallback;
  };
  // A label is centred on its row (column). Where cells are thinner than a line, the first and last
  // of the axis would reach past the matrix's edge and be cut ("w0" half gone): those are moved
  // inwards, by less than half a line; in auto mode a label that would then touch the one before it
  // is left out. Labels still cut (a row scrolled partly out) are counted.
  const float half = line_h * 0.5f;
  auto inside = [&](float centre, float lo, float hi, float cell) {
    return cell >= line_h || centre < lo || centre > hi ? centre : std::clamp(centre, lo + half, hi - half);
  };
  auto crowds = [&](float centre, float* last_end, bool highlighted) {
    if (mode == LabelMode::Auto && !highlighted && centre - half < *last_end) return true;
    *last_end = centre + half;
    return false;
  };
  auto count_cut = [&](const ImVec4& box, const ImVec2& c0, const ImVec2& c1) {
    constexpr float kSlack = 0.5f;
    geom->labels_cut +=
        box.x < c0.x - kSlack || box.y < c0.y - kSlack || box.z > c1.x + kSlack || box.w > c1.y + kSlack;
    return box;
  };
  geom->row_stride = LabelStride(mode, L.cell_y, line_h);
  const ImVec2 r0(L.origin.x, L.m0.y), r1(L.m0.x, L.m1.y);
  dl->PushClipRect(r0, r1, true);
  float last_end = -FLT_MAX;
  for (int r = L.r_begin; r < std::min(L.r_end, rows_shown); ++r) {
    if (!LabelShown(r, geom->row_stride, hl_row)) continue;
    const ImVec2 anchor(L.m0.x - kPad, inside(L.CellY0(r) + L.cell_y * 0.5f, L.m0.y, L.m1.y, L.cell_y));
    if (crowds(anchor.y, &last_end, r == hl_row)) continue;
    const ImU32 col = r == hl_row ? kHighlight : text_col;
    record(0, r, count_cut(DrawLabel(dl, env.labels, anchor, col, token(map.target_tokens, r), false, 1.0f), r0, r1),
           false);
  }
  dl->PopClipRect();
  const ImVec2 c0(L.m0.x, L.origin.y), c1(L.m1.x, L.m0.y);
  dl->PushClipRect(c0, c1, true);
  // Rotated labels are a line tall across the column; horizontal ones are as wide as the widest label.
  last_end = -FLT_MAX;
  geom->col_stride = LabelStride(mode, L.cell_x, L.vertical ? line_h : L.max_label_w);
  for (int c = L.c_begin; c < L.c_end; ++c) {
    if (!LabelShown(c, geom->col_stride, hl_col)) continue;
    const ImU32 col = c == hl_col ? kHighlight : text_col;
    const std::string& t = token(map.source_tokens, c);
    const float cx = L.CellX0(c) + L.cell_x * 0.5f;
    if (L.vertical) {
      const float x = inside(cx, L.m0.x, L.m1.x, L.cell_x);
      if (!crowds(x, &last_end, c == hl_col))
        record(1, c, count_cut(DrawLabel(dl, env.labels, ImVec2(x, L.m0.y - kPad), col, t, true), c0, c1), true);
    } else
      record(
          1, c,
          count_cut(DrawLabel(dl, env.labels, ImVec2(cx, L.m0.y - kPad - line_h * 0.5f), col, t, false, 0.5f), c0, c1),
          false);
  }
  dl->PopClipRect();
}

// Both tokens, the weight, its rank in the row and the cell's arithmetic.
void CellTooltip(const AttentionMap& map, const LabelEnv& labels, int r, int c, bool dwell) {
  const int rows = map.Rows(), cols = map.Cols();
  char b1[32], b2[32];
  ImGui::BeginTooltip();
  const ImU32 text_col = ImGui::GetColorU32(ImGuiCol_Text);
  LabelItem(labels, TokenOr(map.target_tokens, r, b1, sizeof(b1)), text_col);
  ImGui::SameLine();
  ImGui::TextUnformatted(" \xe2\x86\x92 ");
  ImGui::SameLine();
  LabelItem(labels, TokenOr(map.source_tokens, c, b2, sizeof(b2)), text_col);
  ImGui::Separator();
  const int held = r - map.row_offset;
  if (held < 0 || held >= (int)map.weights.rows()) {  // a lazily read map: this row is not in memory
    if (dwell)  // views/heatmap.cpp: a head shown by its screen copy is read once it stays in view
      ImGui::TextDisabled("row %d is read if this head stays in view (the colours are a max-pooled copy's)", r);
    else
      ImGui::TextDisabled("row %d is being read (the colours are a max-pooled copy's)", r);
    ImGui::EndTooltip();
    return;
  }
  const float w = map.weights(held, c);
  int ties = 0;
  const int rank = RowRank(&map.weights(held, 0), (int)map.weights.cols(), c, &ties);
  ImGui::Text("weight  %.6f", w);
  if (rank == 0)
    ImGui::TextUnformatted("rank    none (not a number)");
  else if (ties > 0)  // a causal row's zeros, a uniform row: "rank 1" alone read as the row's peak
    ImGui::Text("rank    %d of %d in its row (tied with %d other%s)", rank, cols, ties, ties == 1 ? "" : "s");
  else
    ImGui::Text("rank    %d of %d in its row", rank, cols);
  if (map.has_steps && map.steps.raw_scores.rows() == rows && map.steps.raw_scores.cols() == cols) {
    const AttentionSteps& s = map.steps;
    ImGui::Separator();
    ImGui::Text("score    %.4f", s.raw_scores(r, c));
    ImGui::Text("scaled   %.4f", s.scaled(r, c));
    if (std::isinf(s.masked(r, c))) ImGui::Text("masked   -inf");
    ImGui::Text("exp(s - max)  %.6g", s.exp(r, c));
    ImGui::Text("row sum       %.6g", s.row_sum.size() > r ? s.row_sum[r] : 0.0f);
    ImGui::TextDisabled("weight = exp / row sum");
  }
  ImGui::EndTooltip();
}

// Adds the widget's labels' margins and matrix (with its border) to *figure (HeatmapEnv::figure_rect):
// the box stays the same while the decoding plays (the margins fit every label).
void AddToFigure(float* figure, const ImVec2& origin, const HeatmapLayout& L) {
  const float box[4] = {origin.x, origin.y, L.m1.x + kPad, L.m1.y + kPad};
  AddFigureBox(figure, box);
}

// The part of the widget's box its labels and matrix take: the colour bar, when asked for, takes its
// room from the right (not when the matrix would keep under half of the box).
ImVec2 MatrixBox(const HeatmapStyle& resolved, const HeatmapViewState& st, const ImVec2& size) {
  const float bar_w = st.colour_bar ? ColourBarWidth(resolved) : 0.0f;
  return bar_w > 0 && bar_w < 0.5f * size.x ? ImVec2(size.x - bar_w, size.y) : size;
}

// A lazily read map's part of DescribeHeatmap: the rows in memory, and whether its overview stood in.
void DescribeLazyGeometry(JsonWriter* w, const HeatmapGeometry& g) {
  w->Key("held");
  w->BeginArray(true);
  w->Number(g.held0);
  w->Number(g.held1);
  w->EndArray();
  w->Key("underlay");
  w->Bool(g.underlay);
  w->Key("underlay_rows");
  w->Number(g.underlay_rows);
  w->Key("underlay_partial");
  w->Bool(g.underlay_partial);
  w->Key("coarse");  // the whole head is in memory; its screen copy shows all this zoom can
  w->Bool(g.coarse);
  w->Key("arrived");  // rows [0, arrived) drawn from the parts of a head being read whole
  w->Number(g.arrived);
  w->Key("dwell");  // its screen copy shows it at the view's resolution; read whole once it stays in view
  w->Bool(g.dwell);
  w->Key("adopted");  // heads whose texture was their rows as they arrived, not uploaded again
  w->Number(g.adopted);
}

// What the widget draws over and around its matrix with ImGui: the cells' numbers, the highlights,
// the border, the token labels and the colour bar.
void DrawOverMatrix(const AttentionMap& map, const HeatmapStyle& style, const HeatmapLayout& L, const HeatmapEnv& env,
                    bool labels, bool colour_bar, HeatmapViewState* st) {
  const int rows = map.Rows(), cols = map.Cols();
  const int hl_row = st->hover_row >= 0 ? st->hover_row : st->highlight_row;
  const int hl_col = st->hover_row >= 0 ? st->hover_col : st->highlight_col;

  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->PushClipRect(L.m0, L.m1, true);
  st->geom.numbers = DrawCellNumbers(dl, map, style, L, st->geom.rows_shown);
  DrawHighlights(dl, L, rows, cols, hl_row, hl_col, st->current_row);
  dl->PopClipRect();
  dl->AddRect(ImVec2(L.m0.x - 1, L.m0.y - 1), ImVec2(L.m1.x + 1, L.m1.y + 1), IM_COL32(110, 110, 120, 255));
  st->geom.labels.clear();
  st->geom.row_stride = st->geom.col_stride = st->geom.labels_cut = 0;
  if (labels) DrawAxisLabels(dl, map, L, env, style.labels, st->geom.rows_shown, hl_row, hl_col, &st->geom);
  for (float& v : st->geom.colorbar) v = 0;
  if (colour_bar) DrawVerticalColourBar(dl, style, L.m1.x, L.m0.y, L.m1.y, env.figure_rect, st->geom.colorbar);
}

}  // namespace

void AddFigureBox(float* figure, const float box[4]) {
  if (!figure || !(box[2] > box[0] && box[3] > box[1])) return;
  const bool empty = !(figure[2] > figure[0]);
  for (int i = 0; i < 2; ++i) figure[i] = empty ? box[i] : std::min(figure[i], box[i]);
  for (int i = 2; i < 4; ++i) figure[i] = empty ? box[i] : std::max(figure[i], box[i]);
}

bool HeatmapWidget(const char* id, const AttentionMap& map, const HeatmapStyle& user_style, HeatmapViewState* st,
                   const HeatmapEnv& env, const ImVec2& size) {
  // A lazily read map without rows in memory is coloured by its overview's range meanwhile.
  const bool have = map.weights.size() > 0;
  // A whole head zoomed out so far that its screen copy (max-pooled) has a cell for every pixel
  // shows the same from it: a software renderer max-pools 4096^2 texels in 100-300 ms a frame.
  const bool coarse = have && map.Complete() && CoarseUnderlayShowsAll(map, *st, size);
  const bool want_under = st->underlay && st->underlay->weights.size() > 0 && (!map.Complete() || coarse);
  const HeatmapStyle style = ResolveStyle(user_style, have || !want_under ? map : *st->underlay);
  st->geom.vmin = style.vmin, st->geom.vmax = style.vmax;
  st->geom.colormap = style.colormap;
  ImGui::PushID(id);
  const int rows = map.Rows(), cols = map.Cols();
  st->geom.valid = false;
  st->hover_row = st->hover_col = -1;
  if (rows == 0 || cols == 0) {
    ImGui::TextDisabled("(empty matrix)");
    ImGui::PopID();
    return false;
  }
  bool ready = true;
  if (have && map.Complete()) AdoptArrivedTexture(env, map, st);
  if (have && !coarse) ready = EnsureTexture(env, map, &st->tex, &st->tex_owner, &st->tex_version, &st->upload_error);
  if (st->next)
    ready =
        EnsureTexture(env, *st->next, &st->tex_next, &st->tex_next_owner, &st->tex_next_version, &st->upload_error) &&
        ready;
  // The stand-in goes first (it covers the whole view); a screen copy computed from the rows read so
  // far is not uploaded again while those rows arrive at full resolution over it.
  const bool keep_under = want_under && st->underlay_partial && st->arriving && st->tex_under_owner == st->underlay;
  const bool under =
      want_under && (keep_under || EnsureTexture(env, *st->underlay, &st->tex_under, &st->tex_under_owner,
                                                 &st->tex_under_version, &st->upload_error));
  // Arriving rows add detail only where the stand-in is coarser than the view: not under a whole
  // 1024^2 screen copy at zoom 1 in a box under 1024 px high (uploading them would slow the head down).
  const bool fine_under = under && !st->underlay_partial && StandInRowsFill(st->underlay->Rows(), st->zoom, size.y);
  st->box_height = size.y;
  st->arrive_wanted = !map.Complete() && st->arriving && !fine_under;
  const int arrived = st->arrive_wanted ? UploadArrivingRows(env, map, st) : 0;
  if ((have && !ready) ||
      (!have && !under && !arrived)) {  // nothing to draw yet: this frame's uploads are spent, or rows on their way
    const ImVec2 p = ImGui::GetCursorScreenPos();
    DrawPlaceholder(p, ImVec2(p.x + size.x, p.y + size.y), have ? "..." : "reading...");
    ImGui::Dummy(size);
    ImGui::PopID();
    return false;
  }
  if (!st->upload_error.empty()) {
    ImGui::TextColored(ImVec4(1.0f, 0.45f, 0.4f, 1), "cannot draw this map: %s", st->upload_error.c_str());
    ImGui::PopID();
    return false;
  }
  EnsureLabelExtents(map, env.labels, st);
  const bool labels = style.labels != LabelMode::None;
  ClampView(st, rows, cols);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const ImVec2 matrix_box = MatrixBox(style, *st, size);
  HeatmapLayout L = ComputeLayout(rows, cols, labels, *st, origin, matrix_box);
  // The whole box is one item: it takes the wheel, drags and double-clicks.
  ImGui::InvisibleButton("##heatmap", size, ImGuiButtonFlags_MouseButtonLeft | ImGuiButtonFlags_MouseButtonMiddle);
  HandleZoomPan(L, rows, cols, st);
  L = ComputeLayout(rows, cols, labels, *st, origin, matrix_box);  // after this frame's zoom and pan
  QueueCells(env, style, L, map, have && !(coarse && under), under, coarse && under, arrived, st);
  AddToFigure(env.figure_rect, origin, L);
  UpdateHover(L, rows, cols, st);
  DrawOverMatrix(map, style, L, env, labels, matrix_box.x < size.x, st);
  if (st->hover_row >= 0) CellTooltip(map, env.labels, st->hover_row, st->hover_col, st->geom.dwell);
  ImGui::PopID();
  return st->hover_row >= 0;
}

void DescribeHeatmap(JsonWriter* w, const char* id, const HeatmapGeometry& g, const AttentionMap* map) {
  if (!g.valid) return;
  w->BeginObject();
  w->Key("id");
  w->String(id);
  w->Key("rect");
  w->BeginArray(true);
  for (float x : g.rect) w->NumberF(x);
  w->EndArray();
  w->Key("view");
  w->BeginArray(true);
  for (float x : g.view) w->NumberF(x);
  w->EndArray();
  w->Key("rows");
  w->Number(g.rows);
  w->Key("cols");
  w->Number(g.cols);
  w->Key("rows_shown");
  w->Number(g.rows_shown);
  w->Key("rows_in");  // rows drawn at full resolution (a lazily read head: those in so far)
  w->Number(g.rows_in);
  w->Key("vmin");  // the resolved colour range it was drawn with
  w->NumberF(g.vmin);
  w->Key("vmax");
  w->NumberF(g.vmax);
  if (map && map->lazy_rows) DescribeLazyGeometry(w, g);
  if (g.tex_rows > 0) {  // a thumbnail's texture (max-pooled to about its pixels when the map is bigger)
    w->Key("texture");
    w->BeginArray(true);
    w->Number(g.tex_rows);
    w->Number(g.tex_cols);
    w->EndArray();
    w->Key("layer");  // the thumbnail layer it was drawn from, -1 its own texture
    w->Number(g.layer);
  }
  w->Key("colormap");
  w->String(ColormapName(g.colormap));
  w->Key("numbers");  // cell values printed (numbers on, as far as they fit their cells)
  w->Number(g.numbers);
  if (g.colorbar[2] > g.colorbar[0]) {  // the colour bar beside the matrix
    w->Key("colorbar");
    w->BeginArray(true);
    for (float x : g.colorbar) w->NumberF(x);
    w->EndArray();
  }
  w->Key("labels");
  w->BeginObject();
  w->Key("row_stride");
  w->Number(g.row_stride);
  w->Key("col_stride");
  w->Number(g.col_stride);
  w->Key("cut");  // labels drawn past their band's edge (only a row or column scrolled partly out)
  w->Number(g.labels_cut);
  w->Key("boxes");  // [axis (0 rows, 1 columns), index, x0, y0, x1, y1, vertical (0/1)]
  w->BeginArray();
  for (const HeatmapGeometry::Label& l : g.labels) {
    w->BeginArray(true);
    w->Number(l.axis);
    w->Number(l.index);
    for (float x : l.box) w->NumberF(x);
    w->Number(l.vertical ? 1 : 0);
    w->EndArray();
  }
  w->EndArray();
  w->EndObject();
  if (map && map->Complete() && map->weights.size() <= 4096) {  // small maps only: tests invert pixels against them
    w->Key("weights");
    w->BeginArray(true);
    for (Eigen::Index i = 0; i < map->weights.size(); ++i) w->NumberF(map->weights.data()[i]);
    w->EndArray();
  }
  w->EndObject();
}

bool HeatmapThumbnail(const char* id, const AttentionMap& map, const HeatmapStyle& user_style, HeatmapViewState* st,
                      const HeatmapEnv& env, const ImVec2& size, const AttentionMap* range_of) {
  ImGui::PushID(id);
  const int rows = (int)map.weights.rows(), cols = (int)map.weights.cols();
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const bool clicked = ImGui::InvisibleButton("##thumb", size);
  const ImVec2 fb = ImGui::GetIO().DisplayFramebufferScale;  // a PNG's frame at 2x pools to 2x the pixels
  const ThumbTexture t =
      rows > 0 && cols > 0
          ? EnsureThumbnailTexture(env, map, st, ThumbnailSide(rows, size.y * fb.y, st->tex_pooled_rows),
                                   ThumbnailSide(cols, size.x * fb.x, st->tex_pooled_cols))
          : ThumbTexture::Missing;
  const bool ready = t != ThumbTexture::Missing;
  st->geom.resize_pending = t == ThumbTexture::Stale;
  if (!st->upload_error.empty() && ImGui::IsItemHovered())
    ImGui::SetTooltip("cannot draw: %s", st->upload_error.c_str());
  if (!ready) DrawPlaceholder(p, ImVec2(p.x + size.x, p.y + size.y), rows > 0 ? "" : "...");
  if (ready && st->upload_error.empty()) {
    // The colour range once there is something to draw (a grid's first frame computed every visible
    // map's range at once: ~40 ms for 84 heads of 512 x 512).
    const HeatmapStyle style = ResolveStyle(user_style, range_of ? *range_of : map);
    st->geom.vmin = style.vmin;
    st->geom.vmax = style.vmax;
    st->geom.colormap = style.colormap;
    HeatmapDraw draw;
    draw.tex = &st->tex;
    const bool layer = env.renderer && st->thumb_in_layer;
    draw.layer = layer ? st->thumb_layer : -1;
    draw.layer_rows = st->thumb_rows, draw.layer_cols = st->thumb_cols;
    draw.layer_version = layer ? env.renderer->ThumbLayerVersion(st->thumb_layer) : 0;
    draw.view[2] = env.renderer ? (float)st->thumb_cols : (float)cols;  // pooled: the texture's cells
    draw.view[3] = env.renderer ? (float)st->thumb_rows : (float)rows;
    draw.vmin = style.vmin;
    draw.vmax = style.vmax;
    draw.scale = style.scale;
    draw.colormap = style.colormap;
    draw.grid_rgba[3] = 0.0f;
    const float rect[4] = {p.x, p.y, p.x + size.x, p.y + size.y};
    AddHeatmapDrawCallback(env, draw, rect);
    st->geom.valid = true;
    const float view[4] = {0.0f, 0.0f, (float)cols, (float)rows};  // the map's cells, pooled or not
    for (int i = 0; i < 4; ++i) st->geom.rect[i] = rect[i], st->geom.view[i] = view[i];
    st->geom.rows = rows;
    st->geom.cols = cols;
    st->geom.rows_shown = rows;
    st->geom.rows_in = rows;
    st->geom.tex_rows = env.renderer ? st->thumb_rows : 0;
    st->geom.tex_cols = env.renderer ? st->thumb_cols : 0;
    st->geom.layer = layer ? st->thumb_layer : -1;
  }
  const ImU32 border = ImGui::IsItemHovered() ? IM_COL32(255, 196, 0, 255) : IM_COL32(90, 90, 100, 255);
  ImGui::GetWindowDrawList()->AddRect(ImVec2(p.x - 1, p.y - 1), ImVec2(p.x + size.x + 1, p.y + size.y + 1), border);
  ImGui::PopID();
  return clicked;
}

}  // namespace attnviz
