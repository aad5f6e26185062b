#include "render/heatmap_renderer.h"

#include <algorithm>
#include <cmath>

#include "core/row_scan.h"
#include "embedded_shaders.h"
#include "render/gl.h"

namespace attnviz {
namespace {

constexpr int kThumbFloats = 14;  // per thumbnail instance: quad 4, its cells 4, range 2, size 2, layer, mode

const char* kShaderPrelude =
    "#version 300 es\nprecision highp float;\nprecision highp int;\nprecision highp sampler2D;\n";

// Compiles one stage into *shader (0 on failure), lib (another embedded file) before it when given.
Status CompileStage(GLenum type, const char* name, GLuint* shader, const char* lib = nullptr) {
  *shader = 0;
  const EmbeddedFile* f = attnviz_embedded_shaders_find(name);
  const EmbeddedFile* l = lib ? attnviz_embedded_shaders_find(lib) : nullptr;
  if (!f || (lib && !l)) return Status::Error(std::string("shader not embedded: ") + (f ? lib : name));
  const char* sources[3] = {kShaderPrelude, reinterpret_cast<const char*>(f->data), nullptr};
  GLint lengths[3] = {(GLint)std::char_traits<char>::length(kShaderPrelude), (GLint)f->size, 0};
  if (l) {
    sources[2] = sources[1], lengths[2] = lengths[1];
    sources[1] = reinterpret_cast<const char*>(l->data), lengths[1] = (GLint)l->size;
  }
  GLuint s = glCreateShader(type);
  glShaderSource(s, l ? 3 : 2, sources, lengths);
  glCompileShader(s);
  GLint ok = 0;
  glGetShaderiv(s, GL_COMPILE_STATUS, &ok);
  if (!ok) {
    char log[2048] = {};
    glGetShaderInfoLog(s, sizeof(log), nullptr, log);
    glDeleteShader(s);
    return Status::Error(std::string("compiling ") + name + ": " + log);
  }
  *shader = s;
  return Status::Ok();
}

}  // namespace

Status CompileEmbeddedProgram(const char* vert_name, const char* frag_name, unsigned int* program,
                              const char* frag_lib) {
  *program = 0;
  GLuint vs = 0, fs = 0;
  Status st = CompileStage(GL_VERTEX_SHADER, vert_name, &vs);
  if (!st) return st;
  st = CompileStage(GL_FRAGMENT_SHADER, frag_name, &fs, frag_lib);
  if (!st) {
    glDeleteShader(vs);
    return st;
  }
  GLuint p = glCreateProgram();
  glAttachShader(p, vs);
  glAttachShader(p, fs);
  glLinkProgram(p);
  glDeleteShader(vs);
  glDeleteShader(fs);
  GLint ok = 0;
  glGetProgramiv(p, GL_LINK_STATUS, &ok);
  if (!ok) {
    char log[2048] = {};
    glGetProgramInfoLog(p, sizeof(log), nullptr, log);
    glDeleteProgram(p);
    return Status::Error(std::string("linking ") + vert_name + " + " + frag_name + ": " + log);
  }
  *program = p;
  return Status::Ok();
}

Status HeatmapRenderer::Init() {
  Status st = CompileEmbeddedProgram("heatmap.vert", "heatmap.frag", &program_, "colour.glsl");
  if (!st) return st;
  loc_rect_ = glGetUniformLocation(program_, "u_rect_ndc");
  loc_view_ = glGetUniformLocation(program_, "u_view");
  loc_a_ = glGetUniformLocation(program_, "u_weights_a");
  loc_b_ = glGetUniformLocation(program_, "u_weights_b");
  loc_rows_a_ = glGetUniformLocation(program_, "u_rows_a");
  loc_lut_ = glGetUniformLocation(program_, "u_lut");
  loc_mix_ = glGetUniformLocation(program_, "u_frame_mix");
  loc_rows_b_ = glGetUniformLocation(program_, "u_rows_b");
  loc_range_ = glGetUniformLocation(program_, "u_range");
  loc_mode_ = glGetUniformLocation(program_, "u_scale_mode");
  loc_rows_shown_ = glGetUniformLocation(program_, "u_rows_shown");
  loc_size_ = glGetUniformLocation(program_, "u_size");
  loc_empty_ = glGetUniformLocation(program_, "u_empty_color");
  loc_grid_ = glGetUniformLocation(program_, "u_grid_color");
  loc_cell_px_ = glGetUniformLocation(program_, "u_cell_px");
  loc_cells_per_px_ = glGetUniformLocation(program_, "u_cells_per_px");

  const float quad[] = {0, 0, 1, 0, 0, 1, 1, 1};
  glGenVertexArrays(1, &vao_);
  glGenBuffers(1, &vbo_);
  glBindVertexArray(vao_);
  glBindBuffer(GL_ARRAY_BUFFER, vbo_);
  glBufferData(GL_ARRAY_BUFFER, sizeof(quad), quad, GL_STATIC_DRAW);
  glEnableVertexAttribArray(0);
  glVertexAttribPointer(0, 2, GL_FLOAT, GL_FALSE, 0, nullptr);
  glBindVertexArray(0);

  glGenTextures((int)Colormap::Count, luts_);
  for (int c = 0; c < (int)Colormap::Count; ++c) {
    glBindTexture(GL_TEXTURE_2D, luts_[c]);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, kColormapLutSize, 1, 0, GL_RGBA, GL_UNSIGNED_BYTE,
                 ColormapLut((Colormap)c));
  }
  glGetIntegerv(GL_MAX_TEXTURE_SIZE, &max_texture_size_);
  return InitThumbLayers();
}

// The thumbnails' program and instanced quad; the layers themselves come with the first thumbnail.
Status HeatmapRenderer::InitThumbLayers() {
  Status st = CompileEmbeddedProgram("thumbs.vert", "thumbs.frag", &thumb_program_, "colour.glsl");
  if (!st) return st;
  glUseProgram(thumb_program_);
  glUniform1i(glGetUniformLocation(thumb_program_, "u_weights"), 0);
  glUniform1i(glGetUniformLocation(thumb_program_, "u_rows"), 1);
  glUniform1i(glGetUniformLocation(thumb_program_, "u_lut"), 2);
  loc_thumb_fb_ = glGetUniformLocation(thumb_program_, "u_fb");
  glUseProgram(0);
  glGetIntegerv(GL_MAX_ARRAY_TEXTURE_LAYERS, &max_layers_);
  max_layers_ = std::clamp(max_layers_, 1, kThumbLayerMaxCount);
  glGenVertexArrays(1, &thumb_vao_);
  glGenBuffers(1, &thumb_instances_);
  glBindVertexArray(thumb_vao_);
  glBindBuffer(GL_ARRAY_BUFFER, vbo_);
  glEnableVertexAttribArray(0);
  glVertexAttribPointer(0, 2, GL_FLOAT, GL_FALSE, 0, nullptr);
  glBindBuffer(GL_ARRAY_BUFFER, thumb_instances_);
  const int widths[4] = {4, 4, 4, 2};  // quad, its cells, range and size, layer and mode (kThumbFloats)
  for (int a = 0, off = 0; a < 4; off += widths[a++]) {
    glEnableVertexAttribArray(1 + a);
    glVertexAttribPointer(1 + a, widths[a], GL_FLOAT, GL_FALSE, kThumbFloats * sizeof(float),
                          reinterpret_cast<const void*>((uintptr_t)off * sizeof(float)));
    glVertexAttribDivisor(1 + a, 1);
  }
  glBindVertexArray(0);
  glBindBuffer(GL_ARRAY_BUFFER, 0);
  return Status::Ok();
}

void HeatmapRenderer::Shutdown() {
  if (thumb_program_) glDeleteProgram(thumb_program_);
  if (thumb_instances_) glDeleteBuffers(1, &thumb_instances_);
  if (thumb_vao_) glDeleteVertexArrays(1, &thumb_vao_);
  if (layers_) glDeleteTextures(1, &layers_);
  if (layer_rows_) glDeleteTextures(1, &layer_rows_);
  thumb_program_ = thumb_instances_ = thumb_vao_ = layers_ = layer_rows_ = 0;
  slots_.Reset(0);
  if (program_) glDeleteProgram(program_);
  if (vbo_) glDeleteBuffers(1, &vbo_);
  if (vao_) glDeleteVertexArrays(1, &vao_);
  glDeleteTextures((int)Colormap::Count, luts_);
  program_ = vao_ = vbo_ = 0;
}

// A 2D texture (or, target GL_TEXTURE_2D_ARRAY, the thumbnail layers) made if need be and bound.
static void SetupFloatTexture(unsigned int* name, GLenum target = GL_TEXTURE_2D) {
  if (!*name) glGenTextures(1, name);
  glBindTexture(target, *name);
  // Cells are drawn as squares: texelFetch, NEAREST.
  glTexParameteri(target, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
  glTexParameteri(target, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
  glTexParameteri(target, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  glTexParameteri(target, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
}

static Status CheckSize(int rows, int cols, int max_texture_size) {
  if (max_texture_size > 0 && std::max(rows, cols) > max_texture_size) {
    return Status::Error("matrix " + std::to_string(rows) + " x " + std::to_string(cols) +
                         " exceeds the GPU's texture size limit " + std::to_string(max_texture_size));
  }
  return Status::Ok();
}

// Rows [row0, row1) of data (rows of tex.cols, data at row row0) into tex's weights texture as
// half(w / s), s each row's scale (core/row_scan.h RowsToHalves), a band of at most kHalfBandCells at
// a time (a 4096^2 head: 64 calls of 512 KiB, instead of a 32 MiB copy held beside it); zeros when
// data is null. rows_ gets the rows' [maximum, scale] pairs from index 0, for the RG32F texture.
void HeatmapRenderer::SendHalfRows(const HeatmapTexture& tex, const float* data, int row0, int row1) {
  const int cols = tex.cols, rows = row1 - row0;
  const int band = std::max(1, (int)(kHalfBandCells / (size_t)cols));
  const size_t cap = (size_t)std::min(band, rows) * (size_t)cols;
  if (halves_.size() < cap) halves_.resize(cap);
  if (rows_.size() < 2 * (size_t)rows) rows_.resize(2 * (size_t)rows);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 2);
  glBindTexture(GL_TEXTURE_2D, tex.weights);
  for (int r = row0; r < row1; r += band) {
    const int n = std::min(band, row1 - r);
    float* pairs = rows_.data() + 2 * (size_t)(r - row0);
    if (data) {
      RowsToHalves(data + (size_t)(r - row0) * (size_t)cols, n, cols, pairs, halves_.data());
    } else {
      std::fill(halves_.begin(), halves_.begin() + (ptrdiff_t)n * cols, (uint16_t)0);
      for (int i = 0; i < n; ++i) pairs[2 * i] = 0.0f, pairs[2 * i + 1] = 1.0f;
    }
    glTexSubImage2D(GL_TEXTURE_2D, 0, 0, r, cols, n, GL_RED, GL_HALF_FLOAT, halves_.data());
  }
}

Status HeatmapRenderer::Upload(HeatmapTexture* tex, const float* data, int rows, int cols) {
  rows = std::max(rows, 1);
  cols = std::max(cols, 1);
  // The weights texture is [cols wide, rows high], the row maxima and scales [rows wide, 1 high].
  if (Status st = CheckSize(rows, cols, max_texture_size_); !st) return st;
  SetupFloatTexture(&tex->weights);
  glTexImage2D(GL_TEXTURE_2D, 0, GL_R16F, cols, rows, 0, GL_RED, GL_HALF_FLOAT, nullptr);
  tex->rows = rows;
  tex->cols = cols;
  SendHalfRows(*tex, data, 0, rows);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
  SetupFloatTexture(&tex->row_max);
  glTexImage2D(GL_TEXTURE_2D, 0, GL_RG32F, rows, 1, 0, GL_RG, GL_FLOAT, rows_.data());
  tex->version++;
  return Status::Ok();
}

Status HeatmapRenderer::Allocate(HeatmapTexture* tex, int rows, int cols) {
  rows = std::max(rows, 1);
  cols = std::max(cols, 1);
  if (Status st = CheckSize(rows, cols, max_texture_size_); !st) return st;
  // No pixels: WebGL2 zeroes them, GL ES leaves them undefined; the caller draws only rows uploaded.
  SetupFloatTexture(&tex->weights);
  glTexImage2D(GL_TEXTURE_2D, 0, GL_R16F, cols, rows, 0, GL_RED, GL_HALF_FLOAT, nullptr);
  if (rows_.size() < 2 * (size_t)rows) rows_.resize(2 * (size_t)rows);
  for (int r = 0; r < rows; ++r) rows_[2 * (size_t)r] = 0.0f, rows_[2 * (size_t)r + 1] = 1.0f;
  glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
  SetupFloatTexture(&tex->row_max);
  glTexImage2D(GL_TEXTURE_2D, 0, GL_RG32F, rows, 1, 0, GL_RG, GL_FLOAT, rows_.data());
  tex->rows = rows;
  tex->cols = cols;
  tex->version++;
  return Status::Ok();
}

void HeatmapRenderer::UploadRows(HeatmapTexture* tex, const float* data, int row0, int row1) {
  row0 = std::clamp(row0, 0, tex->rows);
  row1 = std::clamp(row1, row0, tex->rows);
  if (!tex->weights || row1 == row0) return;
  const int rows = row1 - row0;
  SendHalfRows(*tex, data, row0, row1);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
  glBindTexture(GL_TEXTURE_2D, tex->row_max);
  glTexSubImage2D(GL_TEXTURE_2D, 0, row0, 0, rows, 1, GL_RG, GL_FLOAT, rows_.data());
  tex->version++;
}

void HeatmapRenderer::Release(HeatmapTexture* tex) {
  if (tex->weights) glDeleteTextures(1, &tex->weights);
  if (tex->row_max) glDeleteTextures(1, &tex->row_max);
  *tex = HeatmapTexture{};
}

void HeatmapRenderer::Draw(const HeatmapDraw& d, int fb_w, int fb_h) {
  DrawBatch(&d, 1, fb_w, fb_h);
}

// The state every draw shares is set once: program, quad, blending, viewport, samplers; per draw,
// only what differs (a grid's thumbnails: a software renderer paid ~0.5 ms of GPU-process time per
// thumbnail drawn with its own setup and ImGui's state reset after it).
void HeatmapRenderer::DrawBatch(const HeatmapDraw* draws, int n, int fb_w, int fb_h) {
  if (!program_ || fb_w <= 0 || fb_h <= 0 || n <= 0) return;
  glUseProgram(program_);
  glBindVertexArray(vao_);
  glDisable(GL_BLEND);
  glEnable(GL_SCISSOR_TEST);
  glViewport(0, 0, fb_w, fb_h);
  glUniform1i(loc_a_, 0);
  glUniform1i(loc_b_, 1);
  glUniform1i(loc_rows_a_, 2);
  glUniform1i(loc_lut_, 3);
  glUniform1i(loc_rows_b_, 4);
  int lut = -1, layered = 0;
  for (int k = 0; k < n; ++k) {
    const HeatmapDraw& d = draws[k];
    if (d.layer >= 0) {
      ++layered;
      continue;
    }
    if (!d.tex || !d.tex->weights) continue;
    const HeatmapTexture* b =
        (d.tex_b && d.tex_b->weights && d.tex_b->rows == d.tex->rows && d.tex_b->cols == d.tex->cols) ? d.tex_b : d.tex;
    int sx0 = (int)std::floor(d.clip[0]), sy0 = (int)std::floor(d.clip[1]);
    int sx1 = (int)std::ceil(d.clip[2]), sy1 = (int)std::ceil(d.clip[3]);
    if (sx1 <= sx0 || sy1 <= sy0) continue;  // clipped away
    glScissor(sx0, fb_h - sy1, sx1 - sx0, sy1 - sy0);
    const float x0 = d.rect[0] / fb_w * 2 - 1, x1 = d.rect[2] / fb_w * 2 - 1;
    const float y0 = 1 - d.rect[1] / fb_h * 2, y1 = 1 - d.rect[3] / fb_h * 2;
    glUniform4f(loc_rect_, x0, y0, x1, y1);
    glUniform4f(loc_view_, d.view[0], d.view[1], d.view[2], d.view[3]);
    glActiveTexture(GL_TEXTURE0);
    glBindTexture(GL_TEXTURE_2D, d.tex->weights);
    glActiveTexture(GL_TEXTURE1);
    glBindTexture(GL_TEXTURE_2D, b->weights);
    glActiveTexture(GL_TEXTURE2);
    glBindTexture(GL_TEXTURE_2D, d.tex->row_max);
    if (lut != (int)d.colormap) {
      glActiveTexture(GL_TEXTURE3);
      glBindTexture(GL_TEXTURE_2D, luts_[(int)d.colormap]);
      lut = (int)d.colormap;
    }
    glActiveTexture(GL_TEXTURE4);
    glBindTexture(GL_TEXTURE_2D, b->row_max);
    glUniform1f(loc_mix_, b == d.tex ? 0.0f : d.frame_mix);
    glUniform2f(loc_range_, d.vmin, d.vmax);
    glUniform1i(loc_mode_, (int)d.scale);
    glUniform1i(loc_rows_shown_, d.rows_shown);
    glUniform2i(loc_size_, d.tex->cols, d.tex->rows);
    glUniform4fv(loc_empty_, 1, d.empty_rgba);
    glUniform4fv(loc_grid_, 1, d.grid_rgba);
    const float view_w = std::max(1e-6f, d.view[2] - d.view[0]);
    const float view_h = std::max(1e-6f, d.view[3] - d.view[1]);
    glUniform1f(loc_cell_px_, (d.rect[2] - d.rect[0]) / view_w);
    glUniform2f(loc_cells_per_px_, view_w / std::max(1e-6f, d.rect[2] - d.rect[0]),
                view_h / std::max(1e-6f, d.rect[3] - d.rect[1]));
    glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
  }
  if (layered > 0) DrawThumbLayers(draws, n, fb_w, fb_h);
  glBindVertexArray(0);
  glActiveTexture(GL_TEXTURE0);
}

// ---- thumbnail layers --------------------------------------------------------

void ThumbLayerSlots::Reset(int count) {
  owner_.assign((size_t)count, nullptr);
  used_.assign((size_t)count, 0);
  version_.assign((size_t)count, 0);
  ++generation_;
}

bool ThumbLayerSlots::Held(const void* owner, int layer, uint64_t generation) {
  if (generation != generation_ || layer < 0 || layer >= Count() || owner_[(size_t)layer] != owner) return false;
  used_[(size_t)layer] = frame_;
  return true;
}

int ThumbLayerSlots::Take(const void* owner) {
  int best = -1;
  uint64_t oldest = frame_;
  for (int i = 0; i < Count() && oldest > 0; ++i)
    if (used_[(size_t)i] < oldest) oldest = used_[(size_t)i], best = i;
  if (best < 0) return -1;
  owner_[(size_t)best] = owner;
  used_[(size_t)best] = frame_;
  return best;
}

// (Re)allocates the layers as count of [kThumbLayerMaxSide, kThumbLayerMaxSide] (within the GPU's
// limit and kThumbLayerMaxCount); every layer held so far is lost (a new generation).
void HeatmapRenderer::ResizeThumbLayers(int count) {
  const int side = kThumbLayerMaxSide;
  count = std::clamp(count, 1, max_layers_);  // (max_layers_ is at most kThumbLayerMaxCount)
  SetupFloatTexture(&layers_, GL_TEXTURE_2D_ARRAY);
  glTexImage3D(GL_TEXTURE_2D_ARRAY, 0, GL_R16F, side, side, count, 0, GL_RED, GL_HALF_FLOAT, nullptr);
  SetupFloatTexture(&layer_rows_, GL_TEXTURE_2D_ARRAY);
  glTexImage3D(GL_TEXTURE_2D_ARRAY, 0, GL_RG32F, side, 1, count, 0, GL_RG, GL_FLOAT, nullptr);
  glBindTexture(GL_TEXTURE_2D_ARRAY, 0);
  slots_.Reset(count);
}

void HeatmapRenderer::BeginFrame() {
  slots_.BeginFrame();
  if (thumb_program_ && want_count_ > ThumbLayerCount()) ResizeThumbLayers(want_count_);
  want_count_ = 0;
}

bool HeatmapRenderer::ThumbLayerHeld(const void* owner, int layer, uint64_t generation) {
  return slots_.Held(owner, layer, generation);
}

// The layers are kThumbLayerMaxSide on a side whatever the thumbnails' size (a PNG frame at 2x pools
// them to twice the pixels, in the same layers). The first thumbnail makes 256 of them; once a frame
// has used them all, the next has twice as many (a bigger array: every thumbnail uploaded again).
bool HeatmapRenderer::AcquireThumbLayer(const void* owner, int rows, int cols, int* layer, uint64_t* generation) {
  if (!thumb_program_ || rows < 1 || cols < 1 || std::max(rows, cols) > kThumbLayerMaxSide) return false;
  if (!layers_) ResizeThumbLayers(256);
  if (slots_.Held(owner, *layer, *generation)) return true;
  const int got = slots_.Take(owner);
  if (got < 0) {  // every layer drawn this frame
    want_count_ = std::max(want_count_, std::min(max_layers_, 2 * ThumbLayerCount()));
    return false;
  }
  *layer = got;
  *generation = slots_.Generation();
  return true;
}

void HeatmapRenderer::UploadThumbLayer(int layer, const float* data, int rows, int cols) {
  if (layer < 0 || layer >= ThumbLayerCount() || rows > kThumbLayerMaxSide || cols > kThumbLayerMaxSide) return;
  const size_t cells = (size_t)rows * (size_t)cols;
  if (halves_.size() < cells) halves_.resize(cells);
  if (rows_.size() < 2 * (size_t)rows) rows_.resize(2 * (size_t)rows);
  RowsToHalves(data, rows, cols, rows_.data(), halves_.data());
  glPixelStorei(GL_UNPACK_ALIGNMENT, 2);
  glBindTexture(GL_TEXTURE_2D_ARRAY, layers_);
  glTexSubImage3D(GL_TEXTURE_2D_ARRAY, 0, 0, 0, layer, cols, rows, 1, GL_RED, GL_HALF_FLOAT, halves_.data());
  glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
  glBindTexture(GL_TEXTURE_2D_ARRAY, layer_rows_);
  glTexSubImage3D(GL_TEXTURE_2D_ARRAY, 0, 0, 0, layer, rows, 1, 1, GL_RG, GL_FLOAT, rows_.data());
  glBindTexture(GL_TEXTURE_2D_ARRAY, 0);
  slots_.Stamp(layer);
}

// The draws with a layer, one instanced draw per colormap among them (a grid has one). Each quad
// is cut to its clip rectangle, so no scissor is needed between them.
void HeatmapRenderer::DrawThumbLayers(const HeatmapDraw* draws, int n, int fb_w, int fb_h) {
  if (!thumb_program_ || !layers_) return;
  glUseProgram(thumb_program_);
  glBindVertexArray(thumb_vao_);
  glDisable(GL_SCISSOR_TEST);
  glUniform2f(loc_thumb_fb_, (float)fb_w, (float)fb_h);
  glActiveTexture(GL_TEXTURE0);
  glBindTexture(GL_TEXTURE_2D_ARRAY, layers_);
  glActiveTexture(GL_TEXTURE1);
  glBindTexture(GL_TEXTURE_2D_ARRAY, layer_rows_);
  glActiveTexture(GL_TEXTURE2);
  glBindBuffer(GL_ARRAY_BUFFER, thumb_instances_);
  if (instances_.size() < (size_t)n * kThumbFloats) instances_.resize((size_t)n * kThumbFloats);
  unsigned done = 0;  // the colormaps drawn
  for (int k = 0; k < n; ++k) {
    const Colormap cm = draws[k].colormap;
    if (draws[k].layer < 0 || (done >> (int)cm & 1u)) continue;
    done |= 1u << (int)cm;
    int count = 0;
    for (int j = k; j < n; ++j) {
      const HeatmapDraw& d = draws[j];
      if (d.layer < 0 || d.layer >= ThumbLayerCount() || d.colormap != cm) continue;
      if (d.clip[2] <= d.clip[0] || d.clip[3] <= d.clip[1]) continue;  // clipped away
      // The quad is the part in view (clip is within rect), its corners' cells in proportion.
      float* f = instances_.data() + (size_t)count++ * kThumbFloats;
      const float rw = std::max(1e-6f, d.rect[2] - d.rect[0]), rh = std::max(1e-6f, d.rect[3] - d.rect[1]);
      f[0] = d.clip[0] / fb_w * 2 - 1, f[1] = 1 - d.clip[1] / fb_h * 2;
      f[2] = d.clip[2] / fb_w * 2 - 1, f[3] = 1 - d.clip[3] / fb_h * 2;
      f[4] = (d.clip[0] - d.rect[0]) / rw * d.layer_cols, f[5] = (d.clip[1] - d.rect[1]) / rh * d.layer_rows;
      f[6] = (d.clip[2] - d.rect[0]) / rw * d.layer_cols, f[7] = (d.clip[3] - d.rect[1]) / rh * d.layer_rows;
      f[8] = d.vmin, f[9] = d.vmax, f[10] = (float)d.layer_cols, f[11] = (float)d.layer_rows;
      f[12] = (float)d.layer, f[13] = (float)(int)d.scale;
    }
    if (count == 0) continue;
    glBindTexture(GL_TEXTURE_2D, luts_[(int)cm]);
    glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)((size_t)count * kThumbFloats * sizeof(float)), instances_.data(),
                 GL_STREAM_DRAW);
    glDrawArraysInstanced(GL_TRIANGLE_STRIP, 0, 4, count);
  }
  glBindBuffer(GL_ARRAY_BUFFER, 0);
  glEnable(GL_SCISSOR_TEST);
}

}  // namespace attnviz
