// attnviz render: draws attention matrices with the project's GLSL ES 3.00 shaders.
//
//   HeatmapTexture   one matrix on the GPU (R16F weights / row scale + RG32F row maxima, scales); upload on change
//   HeatmapDraw      where and how to draw one texture this frame (screen rect, view, scale)
//   HeatmapRenderer  owns the shader programs, the quad and the colormap lookup textures
//   thumbnail layers a grid's small thumbnails as layers of one texture array (kept by LRU), all
//                    drawn by one instanced draw (DrawBatch of draws with a layer)
//
// Colormaps (enum, names, lookup tables, sampling, text colour) live in core/colormap.h, included
// here: the lookup textures are uploaded from ColormapLut, so the GPU shows ColormapSample's colour.
// Fallible calls return a Status (core/status.h); the message names the shader or the limit.
//
// Coordinates: matrices are row-major [rows, cols] = [n_q, n_k]; texel x = column, y = row.
// The renderer knows GL only: no ImGui, no views, no files.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/colormap.h"
#include "core/status.h"

namespace attnviz {

// Weights travel and live as half floats (2 bytes a cell instead of 4: a 4096^2 head is 32 MiB on
// the GPU): texel = half(w / s), s = its row's scale, the smallest power of two >= the row's largest
// |w|, so each weight is rounded once, to 11 significant bits relative to w (steps of 2^-24 s below
// 2^-14 s), whatever the magnitudes of the other rows; the shader multiplies back.
constexpr int kTexelBytes = 2;  // bytes per cell of a weights texture (R16F)

struct HeatmapTexture {
  unsigned int weights = 0;  // GL texture name, R16F [rows, cols]: weight / its row's scale
  unsigned int row_max = 0;  // GL texture name, RG32F [rows]: the row's maximum (per-row colour), scale
  int rows = 0;              // n_q
  int cols = 0;              // n_k
  uint64_t version = 0;      // bumped on every upload
};

enum class ScaleMode { Global = 0, PerRow = 1, Log = 2 };

struct HeatmapDraw {
  const HeatmapTexture* tex = nullptr;                // frame a (required)
  const HeatmapTexture* tex_b = nullptr;              // frame b for interpolation (optional, same shape)
  float frame_mix = 0.0f;                             // 0 = a, 1 = b
  float rect[4] = {0, 0, 0, 0};                       // x0, y0, x1, y1 in framebuffer pixels, y down
  float view[4] = {0, 0, 0, 0};                       // col0, row0, col1, row1 visible, in cells
  float clip[4] = {0, 0, 0, 0};                       // scissor x0, y0, x1, y1 in framebuffer pixels, y down
  float vmin = 0.0f, vmax = 1.0f;                     // scale range (Global, Log)
  ScaleMode scale = ScaleMode::Global;                // how weights map to colour
  Colormap colormap = Colormap::Greys;                // which lookup table
  int rows_shown = 1 << 30;                           // rows >= this are drawn empty (decoding animation)
  float empty_rgba[4] = {0.16f, 0.16f, 0.18f, 1.0f};  // colour of rows not yet emitted
  float grid_rgba[4] = {0.5f, 0.5f, 0.5f, 0.35f};     // cell borders (alpha 0 = none)
  // >= 0: drawn from this thumbnail layer instead of tex (AcquireThumbLayer; the layer's [rows, cols]
  // cells, whole, no frames mixed, no rows hidden, no borders), by DrawBatch's instanced draw.
  int layer = -1;
  int layer_rows = 0, layer_cols = 0;
  uint64_t layer_version = 0;  // ThumbLayerVersion when drawn (what the frame's pixels depend on)
};

// The thumbnail layers' limits: a side of at most kThumbLayerMaxSide cells (bigger ones keep their
// own texture), at most kThumbLayerMaxCount layers, 32 MiB of weights (a grid scrolled over more in
// one frame draws the rest from their own textures that frame).
constexpr int kThumbLayerMaxSide = 128;
constexpr int kThumbLayerMaxCount = (32 << 20) / (kThumbLayerMaxSide * kThumbLayerMaxSide * kTexelBytes);  // 1024

// Which owner holds which thumbnail layer (no GL: tested on its own). A layer used this frame stays
// with its owner; a new owner gets the least recently used of the others.
class ThumbLayerSlots {
 public:
  void Reset(int count);  // count free layers of a new generation: every layer held so far is lost
  void BeginFrame() { ++frame_; }
  // True when owner still holds layer of this generation; marks it used this frame.
  bool Held(const void* owner, int layer, uint64_t generation);
  // The least recently used layer not used this frame, now owner's (marked used); -1 when none.
  int Take(const void* owner);
  void Stamp(int layer) { version_[(size_t)layer] = ++uploads_; }  // an upload into it
  uint64_t Version(int layer) const {  // changes with every upload into it, never the same twice
    return layer >= 0 && layer < Count() ? version_[(size_t)layer] : 0;
  }
  int Count() const { return (int)owner_.size(); }
  uint64_t Generation() const { return generation_; }

 private:
  std::vector<const void*> owner_;
  std::vector<uint64_t> used_, version_;  // the frame each was last used in (0 never), its upload
  uint64_t frame_ = 1, generation_ = 1, uploads_ = 0;
};

class HeatmapRenderer {
 public:
  Status Init();    // compiles shaders, uploads the lookup textures; the error carries the GLSL log
  void Shutdown();  // frees every GL object it made
  // Uploads data [rows, cols] row-major (creates or resizes tex), as halves in bands of at most
  // kHalfBandCells (a fixed scratch, whatever the size). Non-finite values upload as 0.
  // Fails, leaving tex as it was, when rows or cols exceed MaxTextureSize() (known after Init).
  Status Upload(HeatmapTexture* tex, const float* data, int rows, int cols);
  // Allocates tex as [rows, cols] of zeros (a lazily read head whose rows arrive in bands), then
  // UploadRows replaces rows [row0, row1) with data [row1 - row0, cols] (glTexSubImage2D of the
  // band and of its rows' maxima and scales). Allocate fails like Upload; UploadRows needs tex allocated.
  Status Allocate(HeatmapTexture* tex, int rows, int cols);
  void UploadRows(HeatmapTexture* tex, const float* data, int row0, int row1);
  void Release(HeatmapTexture* tex);  // frees tex's GL objects
  // Draws into the current framebuffer of size fb_w x fb_h. Saves nothing: the caller restores state.
  void Draw(const HeatmapDraw& d, int fb_w, int fb_h);
  // The same for n draws in order, the state they share set once (a grid's thumbnails).
  void DrawBatch(const HeatmapDraw* draws, int n, int fb_w, int fb_h);
  int MaxTextureSize() const { return max_texture_size_; }  // GL_MAX_TEXTURE_SIZE

  // Thumbnail layers. BeginFrame starts a frame: a layer used in it is not taken from its owner
  // before the next (the draws come after every widget has asked), and the array grows (every
  // layer then lost: ThumbLayerHeld turns false) when the last frame wanted more layers.
  void BeginFrame();
  // True when owner (a stable pointer: the widget's state) still holds *layer of this generation;
  // marks it used this frame.
  bool ThumbLayerHeld(const void* owner, int layer, uint64_t generation);
  // A layer for a rows x cols thumbnail: owner's own if it still holds it, else the least recently
  // used one not used this frame. False when rows or cols is over kThumbLayerMaxSide, or every layer
  // was used this frame (asking for twice as many next frame): the caller uses its own texture.
  bool AcquireThumbLayer(const void* owner, int rows, int cols, int* layer, uint64_t* generation);
  // data [rows, cols] into a layer just acquired for that size (as halves, like Upload).
  void UploadThumbLayer(int layer, const float* data, int rows, int cols);
  // Changes with every upload into the layer (never the same twice, whichever the layer).
  uint64_t ThumbLayerVersion(int layer) const { return slots_.Version(layer); }
  uint64_t ThumbLayerGeneration() const { return slots_.Generation(); }  // changes when the array grows
  int ThumbLayerCount() const { return slots_.Count(); }

 private:
  unsigned int program_ = 0, vao_ = 0, vbo_ = 0;
  unsigned int luts_[(int)Colormap::Count] = {};
  int loc_rect_ = -1, loc_view_ = -1, loc_a_ = -1, loc_b_ = -1, loc_rows_a_ = -1, loc_lut_ = -1;
  int loc_mix_ = -1, loc_range_ = -1, loc_mode_ = -1, loc_rows_shown_ = -1, loc_size_ = -1;
  int loc_empty_ = -1, loc_grid_ = -1, loc_cell_px_ = -1, loc_cells_per_px_ = -1;
  int max_texture_size_ = 0;
  static constexpr size_t kHalfBandCells = 1 << 18;  // 512 KiB of halves per glTexSubImage2D
  // Rows [row0, row1) of data into tex band by band; rows_ gets their [maximum, scale] pairs.
  void SendHalfRows(const HeatmapTexture& tex, const float* data, int row0, int row1);
  std::vector<uint16_t> halves_;  // one band of converted weights, at most kHalfBandCells, never shrunk
  std::vector<float> rows_;       // the last upload's [row max, row scale] pairs, never shrunk
  int loc_rows_b_ = -1;           // u_rows_b: frame b's row maxima and scales
  // Thumbnail layers: R16F [128, 128, count] weights / row scale, RG32F [128, 1, count] row
  // maxima and scales; slots_, who holds which.
  unsigned int thumb_program_ = 0, thumb_vao_ = 0, thumb_instances_ = 0, layers_ = 0, layer_rows_ = 0;
  int loc_thumb_fb_ = -1;
  int max_layers_ = 256;
  int want_count_ = 0;  // the layers the last frame wanted, when it ran out
  ThumbLayerSlots slots_;
  std::vector<float> instances_;  // one instanced draw's per-thumbnail attributes, never shrunk
  Status InitThumbLayers();
  void ResizeThumbLayers(int count);
  void DrawThumbLayers(const HeatmapDraw* draws, int n, int fb_w, int fb_h);
};

// Compiles a program from two embedded shader files (names as in shaders/) into *program; on
// failure *program = 0 and the status carries the compile or link log. Prepends the GLSL ES 3.00
// version and precision lines, and to the fragment shader frag_lib when given (shared functions).
Status CompileEmbeddedProgram(const char* vert_name, const char* frag_name, unsigned int* program,
                              const char* frag_lib = nullptr);

}  // namespace attnviz
