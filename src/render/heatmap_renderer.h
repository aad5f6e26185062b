// attnviz render: draws attention matrices with the project's GLSL ES 3.00 shaders.
//
//   HeatmapTexture   one matrix on the GPU (R16F weights / row scale + RG32F row maxima, scales); upload on change
//   HeatmapDraw      where and how to draw one texture this frame (screen rect, view, scale)
//   HeatmapRenderer  owns the shader program, the quad and the colormap lookup textures
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
};

// Compiles a program from two embedded shader files (names as in shaders/) into *program; on
// failure *program = 0 and the status carries the compile or link log. Prepends the GLSL ES 3.00
// version and precision lines.
Status CompileEmbeddedProgram(const char* vert_name, const char* frag_name, unsigned int* program);

}  // namespace attnviz
