#include "render/heatmap_renderer.h"

#include <algorithm>
#include <cmath>

#include "core/row_scan.h"
#include "embedded_shaders.h"
#include "render/gl.h"

namespace attnviz {
namespace {

const char* kShaderPrelude =
    "#version 300 es\nprecision highp float;\nprecision highp int;\nprecision highp sampler2D;\n";

// Compiles one stage into *shader (0 on failure).
Status CompileStage(GLenum type, const char* name, GLuint* shader) {
  *shader = 0;
  const EmbeddedFile* f = attnviz_embedded_shaders_find(name);
  if (!f) return Status::Error(std::string("shader not embedded: ") + name);
  const char* sources[2] = {kShaderPrelude, reinterpret_cast<const char*>(f->data)};
  GLint lengths[2] = {(GLint)std::char_traits<char>::length(kShaderPrelude), (GLint)f->size};
  GLuint s = glCreateShader(type);
  glShaderSource(s, 2, sources, lengths);
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

Status CompileEmbeddedProgram(const char* vert_name, const char* frag_name, unsigned int* program) {
  *program = 0;
  GLuint vs = 0, fs = 0;
  Status st = CompileStage(GL_VERTEX_SHADER, vert_name, &vs);
  if (!st) return st;
  st = CompileStage(GL_FRAGMENT_SHADER, frag_name, &fs);
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
  Status st = CompileEmbeddedProgram("heatmap.vert", "heatmap.frag", &program_);
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
  return Status::Ok();
}

void HeatmapRenderer::Shutdown() {
  if (program_) glDeleteProgram(program_);
  if (vbo_) glDeleteBuffers(1, &vbo_);
  if (vao_) glDeleteVertexArrays(1, &vao_);
  glDeleteTextures((int)Colormap::Count, luts_);
  program_ = vao_ = vbo_ = 0;
}

static void SetupFloatTexture(unsigned int* name) {
  if (!*name) glGenTextures(1, name);
  glBindTexture(GL_TEXTURE_2D, *name);
  // Cells are drawn as squares: texelFetch, NEAREST.
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
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
  int lut = -1;
  for (int k = 0; k < n; ++k) {
    const HeatmapDraw& d = draws[k];
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
  glBindVertexArray(0);
  glActiveTexture(GL_TEXTURE0);
}

}  // namespace attnviz
