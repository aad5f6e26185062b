// attnviz app: the heatmap widget, an ImGui item that draws one AttentionMap through the
// project's shaders (an ImDrawList callback into HeatmapRenderer) and its labels, numbers,
// hover tooltip and highlights with ImGui.
//
//   HeatmapStyle      colormap, scale, numbers, grid: what the user picks in the toolbar
//   HeatmapViewState  per-widget state: zoom/pan window, GPU texture, hover, last geometry
//   HeatmapEnv        what every widget shares this frame: renderer + per-frame draw pool
//   HeatmapWidget()   draws one map in a given size; returns true while a cell is hovered
//   DescribeHeatmap() what a widget drew, for describe()
#pragma once
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "app/examples.h"
#include "app/labels.h"
#include "core/label_layout.h"
#include "render/heatmap_renderer.h"

struct ImVec2;

namespace attnviz {

class JsonWriter;

// Where the colour range of the global and log scales comes from.
enum class RangeMode {
  Auto,   // [0, the map's largest weight]: long sequences (weights ~ 1/n) still show their structure
  Fixed,  // [vmin, vmax] as set by the user ([0, 1] by default)
  P99,    // [0, the 99th percentile]: a few strong cells (e.g. on [CLS]) do not wash out the rest
  P999,   // [0, the 99.9th percentile]
  Count
};
const char* RangeModeName(RangeMode m);                     // "auto", "fixed", "p99", "p99.9"
bool ParseRangeMode(const std::string& s, RangeMode* out);  // inverse of RangeModeName

struct HeatmapStyle {
  Colormap colormap = Colormap::Greys;  // greys as in the paper figures (white = high)
  ScaleMode scale = ScaleMode::Global;  // global, per row, log
  RangeMode range = RangeMode::Auto;    // where vmax (and vmin) come from, for global and log
  float vmin = 0.0f;                    // fixed range low end; the log scale's lower limit
  float vmax = 1.0f;                    // fixed range high end
  bool show_numbers = true;             // weights in cells when cells are big enough
  bool show_grid = true;                // thin cell borders when cells are big enough
  bool show_colorbar = true;            // the colour bar beside the matrix (views that draw one: Heatmap, Translate)
  LabelMode labels = LabelMode::Auto;   // token labels on both axes: thinned (auto), all or none
};

struct HeatmapGeometry {
  float rect[4] = {0, 0, 0, 0};         // x0, y0, x1, y1 of the matrix area, in ImGui (CSS) pixels
  float view[4] = {0, 0, 0, 0};         // col0, row0, col1, row1 shown
  int rows = 0, cols = 0;               // matrix shape
  int rows_shown = 0;                   // rows drawn (decoding animation)
  int held0 = 0, held1 = 0;             // rows in memory [held0, held1) (a lazily read map's band; else all)
  bool underlay = false;                // an overview stood in for rows not in memory
  int underlay_rows = 0;                // and its rows (256: an overview, 1024: a screen copy)
  bool underlay_partial = false;        // a screen copy computed from the rows read so far
  bool coarse = false;                  // a whole head in memory, zoomed out so far that its screen copy
                                        // (max-pooled, at least a cell per pixel) is drawn instead
  int arrived = 0;                      // rows [0, arrived) of a head being read whole, drawn from its parts
  bool dwell = false;                   // its rows wait until it has stayed in view (views/heatmap.cpp)
  int adopted = 0;                      // heads whose texture was taken over from their arrived rows (so far)
  int rows_in = 0;                      // rows drawn at full resolution (arrived and held ones; all when complete)
  float vmin = 0, vmax = 1;             // the resolved colour range it was drawn with
  Colormap colormap = Colormap::Greys;  // and its colormap
  bool valid = false;                   // drawn this frame
  int tex_rows = 0, tex_cols = 0;       // a thumbnail: the texture it was drawn from (pooled: smaller; 0 headless)
  int layer = -1;                       // and the thumbnail layer it was drawn from (-1: its own texture)
  bool resize_pending = false;          // drawn at its old size, the new one to upload in a later frame
  // Token labels drawn this frame: axis 0 = rows (target), 1 = columns (source); box in UI pixels.
  struct Label {
    int axis = 0, index = 0;
    float box[4] = {0, 0, 0, 0};
    bool vertical = false;
  };
  std::vector<Label> labels;           // keeps its capacity between frames
  int row_stride = 0, col_stride = 0;  // thinning: every k-th label drawn (0 = none)
  int labels_cut = 0;                  // labels drawn past their band's edge (rows scrolled partly out)
  int numbers = 0;                     // cell values printed this frame (numbers on, as far as they fit)
  float colorbar[4] = {0, 0, 0, 0};    // the colour bar beside the matrix (x0, y0, x1, y1), empty: none
};

// Rows a band upload of an arriving head takes (a 4 MiB F16 part of a 4096-wide head is 512 rows).
constexpr int kArriveBandRows = 512;

struct HeatmapViewState {
  float zoom = 1.0f;                   // >= 1; 1 shows the whole matrix
  float pan_col = 0, pan_row = 0;      // top-left visible cell when zoomed
  int rows_shown = 1 << 30;            // decoding animation: rows >= this are not yet emitted
  int current_row = -1;                // row to outline (the word being emitted), -1 none
  bool colour_bar = false;             // a colour bar beside the matrix, in the widget's box (app/colour_bar.h)
  float frame_mix = 0.0f;              // interpolation towards `next` (frames animation)
  const AttentionMap* next = nullptr;  // optional next frame for interpolation
  // A coarse stand-in drawn where a lazily read map has no rows in memory (its max-pooled overview).
  const AttentionMap* underlay = nullptr;
  bool underlay_partial = false;  // the underlay is a screen copy still filling in (app/lazy_maps.h)
  // A lazily read head arriving whole (app/lazy_maps.h, LazyArriving): rows [0, arriving_rows) of
  // arriving, a [rows, cols] buffer, are uploaded into tex_arrive in bands as they are decoded and
  // drawn over the underlay; when the head is installed from that same buffer, tex_arrive becomes tex.
  const float* arriving = nullptr;
  int arriving_rows = 0;
  uint64_t arriving_key = 0;   // the read (LazyMaps' key): another read starts the texture again
  uint64_t installed_key = 0;  // a complete map: the read its rows came from (LazyInstalledBy), 0 not read lazily
  HeatmapTexture tex_arrive;
  uint64_t tex_arrive_key = 0;
  const float* tex_arrive_data = nullptr;  // the buffer tex_arrive's rows came from
  int tex_arrive_rows = 0;                 // rows [0, n) of it uploaded
  bool arrive_wanted = false;              // last frame: the stand-in was coarser than the view, so they were drawn
  float box_height = 0;                    // last frame's height (a stand-in with as many rows in view is fine)
  // A lazily read head shown by such a stand-in is read whole only once it stays in view (WantLazyRows).
  const void* dwell_map = nullptr;                             // that head
  std::chrono::steady_clock::time_point dwell_since;           // shown so since
  bool dwell_pending = false;                                  // its rows are not asked for yet: frames until they are
  HeatmapTexture tex, tex_next, tex_under;                     // GPU copies of the map, the next frame, the underlay
  const void *tex_owner = nullptr, *tex_next_owner = nullptr;  // which map the textures hold
  const void* tex_under_owner = nullptr;
  uint64_t tex_version = ~0ull, tex_next_version = ~0ull;  // which version they hold
  uint64_t tex_under_version = ~0ull;
  // A thumbnail's tex holds its map max-pooled to about its size in pixels, [tex_pooled_rows,
  // tex_pooled_cols] (0: the map as it is). See HeatmapThumbnail.
  int tex_pooled_rows = 0, tex_pooled_cols = 0;
  // It lives in a thumbnail layer (HeatmapRenderer::AcquireThumbLayer: drawn with the others in one
  // instanced draw) while the renderer says it still holds it, as [thumb_rows, thumb_cols]; else in tex.
  bool thumb_in_layer = false;
  int thumb_layer = -1, thumb_rows = 0, thumb_cols = 0;
  uint64_t thumb_layer_gen = 0;
  std::string upload_error;                    // why the last upload failed (e.g. larger than the GPU's textures)
  int hover_row = -1, hover_col = -1;          // cell under the mouse, -1 none
  int highlight_row = -1, highlight_col = -1;  // externally requested highlight (e.g. from the lines view)
  HeatmapGeometry geom;                        // where the last frame drew it (for the JS test hook)
  // cached label extents, recomputed when the map changes
  float max_source_label_w = 0, max_target_label_w = 0;
  const void* labels_owner = nullptr;
  uint64_t labels_version = ~0ull;
};

struct HeatmapCallbackData {
  HeatmapRenderer* renderer = nullptr;
  HeatmapDraw draw;
  float rect_imgui[4] = {0, 0, 0, 0};  // converted to framebuffer pixels at render time
  // The draw list's clip rectangle when it was added. The first entry of a batch (BeginHeatmapBatch)
  // counts its draws (the callback draws them all), the others 0; a heatmap drawn alone has 1.
  float clip_imgui[4] = {0, 0, 0, 0};
  int batch = 0;
};

// The time texture uploads take per MiB. Within a frame the estimate goes up at once and down slowly
// (a software renderer's uploads slow down when its transfer buffer fills: with a plain running mean
// one frame of the lazy grid took 8 uploads, 14 ms, with 6 ms allowed; stop 25). Each frame starts
// from the median of the last kSamples: one slow upload (a descheduled thread) held the estimate
// high for as many frames as the decay took, one upload each, and under load a 32 GiB grid filled
// one thumbnail every 400 ms frame (stop 49).
struct UploadSpeed {
  static constexpr int kSamples = 15;
  float ms_per_mib = 0;         // this frame's estimate (0: none yet)
  float recent[kSamples] = {};  // the last samples, recent[next - 1] the newest
  int count = 0, next = 0;
  void BeginFrame();
  void Add(float ms_per_mib_of_one);
};

struct HeatmapEnv {
  HeatmapRenderer* renderer = nullptr;               // shared GL renderer
  LabelEnv labels;                                   // label textures for scripts the UI font lacks
  std::vector<HeatmapCallbackData>* pool = nullptr;  // reserved once; cleared each frame, never grows
  int* batch_first = nullptr;  // the pool index where an open batch starts (BeginHeatmapBatch), -1 none
  // Bytes of texture uploads left this frame (reset by App::Frame); a widget whose map needs an upload
  // when none is left shows a placeholder and uploads in a later frame. Null: no limit.
  int64_t* upload_budget = nullptr;
  // Past this time no more uploads this frame (set to 0 after the upload that passes it): many small
  // textures (a grid of overviews) cost a software renderer ~0.5 ms each. Null: no limit.
  const std::chrono::steady_clock::time_point* upload_deadline = nullptr;
  float* upload_ms = nullptr;      // adds the time of each upload (null: not measured)
  int* uploads = nullptr;          // and counts them (this frame's)
  float* upload_max_ms = nullptr;  // the longest of them (null: not kept)
  // How fast uploads go (UploadSpeed): an upload that would end past the deadline waits for the next
  // frame, unless it is the frame's first. Null: not predicted.
  UploadSpeed* upload_speed = nullptr;
  // x0, y0, x1, y1 (UI px): each widget adds the box of its labels and matrix (the box a PNG of the
  // view crops to, ViewModule::ExportsFigureOnly). Null: not collected.
  float* figure_rect = nullptr;
};

// False when an upload of `bytes` would end past env's deadline at the speed seen so far (the frame's
// first upload always goes). CountUpload records one that took t0..t1: the frame's time, count and
// byte budget (emptied past the deadline), and the running speed.
bool UploadFits(const HeatmapEnv& env, int64_t bytes);
// The cells a thumbnail's texture keeps of a map side of n cells drawn over px framebuffer pixels,
// given the side it keeps now (current, 0: none): 0 for all n, else the side to max-pool it to.
int ThumbnailSide(int n, float px, int current);
void CountUpload(const HeatmapEnv& env, int64_t bytes, std::chrono::steady_clock::time_point t0,
                 std::chrono::steady_clock::time_point t1);
// A complete map whose rows tex_arrive (tex_rows rows) already holds in part, so it becomes the map's
// texture with the rest of the rows uploaded: the same buffer, and the same read (installed_key).
bool ArrivedRowsAreThisMaps(const HeatmapViewState& st, const AttentionMap& map, int tex_rows);

// Draws map into a size.x * size.y box at the cursor. Returns true while a cell is hovered.
// Grows figure (HeatmapEnv::figure_rect: x0, y0, x1, y1; empty when x1 <= x0) to cover box. Null: nothing.
void AddFigureBox(float* figure, const float box[4]);

// A stand-in of `rows` rows has at least one row per pixel of a box `height` high at this zoom (the
// widget then draws no finer rows over it; views/heatmap.cpp then waits before reading the head).
inline bool StandInRowsFill(int64_t rows, float zoom, float height) {
  return height > 0 && (float)rows / zoom >= height;
}

bool HeatmapWidget(const char* id, const AttentionMap& map, const HeatmapStyle& style, HeatmapViewState* st,
                   const HeatmapEnv& env, const ImVec2& size);

// Appends {id, rect, view, rows, cols, rows_shown, vmin, vmax, colormap, labels (row_stride,
// col_stride, boxes: [axis, index, x0, y0, x1, y1, vertical]), weights (maps up to 4096
// cells; map may be null)} to an open
// JSON array, when g was drawn this frame (describe()'s "heatmaps").
void DescribeHeatmap(JsonWriter* w, const char* id, const HeatmapGeometry& g, const AttentionMap* map);

// The heatmaps added between these two (a grid's thumbnails) are drawn by one callback, with the GL
// state they share set once and ImGui's restored once, instead of once each. Nothing they draw may
// overlap the window's other drawing in between (it is drawn first). Batches do not nest.
void BeginHeatmapBatch(const HeatmapEnv& env);
void EndHeatmapBatch(const HeatmapEnv& env);

// Draws map as a small thumbnail (no labels, no interaction) filling size. Returns true if clicked.
// range_of: the map whose colour range the style resolves against (an overview standing in for its
// map keeps the map's colours); null: map itself.
bool HeatmapThumbnail(const char* id, const AttentionMap& map, const HeatmapStyle& style, HeatmapViewState* st,
                      const HeatmapEnv& env, const ImVec2& size, const AttentionMap* range_of = nullptr);

// Adds an ImDrawList callback that draws a texture in rect (ImGui coordinates). False if the pool is full.
bool AddHeatmapDrawCallback(const HeatmapEnv& env, const HeatmapDraw& draw, const float rect[4]);

// The style with vmin/vmax as they apply to map (RangeMode resolved from the map's statistics,
// cached per map version). Every drawing of a map goes through this.
HeatmapStyle ResolveStyle(const HeatmapStyle& style, const AttentionMap& map);
// Fraction of map's cells in the bottom 5% of a resolved style's range (0 for the per-row scale):
// above ~0.9 the map looks empty and the view suggests another range.
float LowContrastFraction(const HeatmapStyle& resolved, const AttentionMap& map);

// When most of map's cells fall in the bottom 5% of the colour range, a one-line warning with
// buttons that switch *style to the per-row or log scale. Returns true when it was shown.
bool LowContrastNote(HeatmapStyle* style, const AttentionMap& map);

// The rank of row[c] among row[0 .. n) (1 = the largest; equal weights share a rank) and how many
// other weights equal it (*ties). A NaN weight has rank 0 and no ties: it ranks nowhere.
int RowRank(const float* row, int n, int c, int* ties);

// Normalised colormap coordinate of a weight under a style (what the shader computes); row_max
// is used by the per-row scale.
float HeatmapT(const HeatmapStyle& style, float w, float row_max);

}  // namespace attnviz
