#include "app/heatmap_widget.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "imgui.h"
#include "imgui_internal.h"

namespace attnviz {
namespace {

void HeatmapDrawCallback(const ImDrawList*, const ImDrawCmd* cmd) {
  auto* cb = static_cast<HeatmapCallbackData*>(cmd->UserCallbackData);
  const ImDrawData* dd = ImGui::GetDrawData();
  if (!cb || !dd) return;
  const ImVec2 sc = dd->FramebufferScale;
  const ImVec2 off = dd->DisplayPos;
  const int fb_w = (int)(dd->DisplaySize.x * sc.x), fb_h = (int)(dd->DisplaySize.y * sc.y);
  HeatmapDraw d = cb->draw;
  d.rect[0] = (cb->rect_imgui[0] - off.x) * sc.x;
  d.rect[1] = (cb->rect_imgui[1] - off.y) * sc.y;
  d.rect[2] = (cb->rect_imgui[2] - off.x) * sc.x;
  d.rect[3] = (cb->rect_imgui[3] - off.y) * sc.y;
  d.clip[0] = std::max((cmd->ClipRect.x - off.x) * sc.x, d.rect[0]);
  d.clip[1] = std::max((cmd->ClipRect.y - off.y) * sc.y, d.rect[1]);
  d.clip[2] = std::min((cmd->ClipRect.z - off.x) * sc.x, d.rect[2]);
  d.clip[3] = std::min((cmd->ClipRect.w - off.y) * sc.y, d.rect[3]);
  cb->renderer->Draw(d, fb_w, fb_h);
}

void EnsureTexture(const HeatmapEnv& env, const AttentionMap& map, HeatmapTexture* tex, const void** owner,
                   uint64_t* version) {
  if (!env.renderer) return;  // headless
  if (*owner == &map && *version == map.version && tex->weights) return;
  env.renderer->Upload(tex, map.weights.data(), (int)map.weights.rows(), (int)map.weights.cols());
  *owner = &map;
  *version = map.version;
}

void EnsureLabelExtents(const AttentionMap& map, HeatmapViewState* st) {
  if (st->labels_owner == &map && st->labels_version == map.version) return;
  st->max_source_label_w = 0;
  st->max_target_label_w = 0;
  for (const auto& s : map.source_tokens) st->max_source_label_w = std::max(st->max_source_label_w, ImGui::CalcTextSize(s.c_str()).x);
  for (const auto& s : map.target_tokens) st->max_target_label_w = std::max(st->max_target_label_w, ImGui::CalcTextSize(s.c_str()).x);
  st->labels_owner = &map;
  st->labels_version = map.version;
}

const char* TokenOr(const std::vector<std::string>& tokens, int i, char* buf, size_t n) {
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

float HeatmapT(const HeatmapStyle& style, float w, float row_max) {
  float t;
  if (style.scale == ScaleMode::PerRow) {
    t = row_max > 0 ? w / row_max : 0.0f;
  } else if (style.scale == ScaleMode::Log) {
    const float lo = std::log(std::max(style.vmin, 1e-12f)), hi = std::log(std::max(style.vmax, 1e-12f));
    t = (std::log(std::max(w, 1e-12f)) - lo) / std::max(hi - lo, 1e-12f);
  } else {
    t = (w - style.vmin) / std::max(style.vmax - style.vmin, 1e-12f);
  }
  return std::clamp(t, 0.0f, 1.0f);
}

void AddTextVertical(void* draw_list, const ImVec2& bottom_left, unsigned int color, const char* text) {
  ImDrawList* dl = static_cast<ImDrawList*>(draw_list);
  const int vtx_begin = dl->VtxBuffer.Size;
  dl->AddText(bottom_left, color, text);
  // Rotate the glyph quads just added by -90 degrees around bottom_left: (x, y) -> (x0 + (y - y0), y0 - (x - x0)).
  const float line_h = ImGui::GetTextLineHeight();
  for (int i = vtx_begin; i < dl->VtxBuffer.Size; ++i) {
    ImDrawVert& v = dl->VtxBuffer[i];
    const float dx = v.pos.x - bottom_left.x, dy = v.pos.y - bottom_left.y;
    v.pos.x = bottom_left.x + dy - line_h;
    v.pos.y = bottom_left.y - dx;
  }
}

bool AddHeatmapDrawCallback(const HeatmapEnv& env, const HeatmapDraw& draw, const float rect[4]) {
  if (!env.renderer || !env.pool || env.pool->size() >= env.pool->capacity()) return false;  // never reallocate mid-frame
  env.pool->push_back(HeatmapCallbackData{});
  HeatmapCallbackData& cb = env.pool->back();
  cb.renderer = env.renderer;
  cb.draw = draw;
  for (int i = 0; i < 4; ++i) cb.rect_imgui[i] = rect[i];
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddCallback(HeatmapDrawCallback, &cb);
  dl->AddCallback(ImDrawCallback_ResetRenderState, nullptr);
  return true;
}

bool HeatmapWidget(const char* id, const AttentionMap& map, const HeatmapStyle& style, HeatmapViewState* st,
                   const HeatmapEnv& env, const ImVec2& size) {
  ImGui::PushID(id);
  const int rows = (int)map.weights.rows(), cols = (int)map.weights.cols();
  st->geom.valid = false;
  st->hover_row = st->hover_col = -1;
  if (rows == 0 || cols == 0) {
    ImGui::TextDisabled("(empty matrix)");
    ImGui::PopID();
    return false;
  }
  EnsureTexture(env, map, &st->tex, &st->tex_owner, &st->tex_version);
  if (st->next) EnsureTexture(env, *st->next, &st->tex_next, &st->tex_next_owner, &st->tex_next_version);
  EnsureLabelExtents(map, st);
  ClampView(st, rows, cols);

  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float line_h = ImGui::GetTextLineHeight();
  const float pad = 6.0f;
  const bool labels = style.show_labels;

  // Layout: target labels down the left, source labels along the top (vertical when crowded).
  const float left = labels ? std::min(st->max_target_label_w, size.x * 0.3f) + pad * 2 : 0.0f;
  const float avail_w = std::max(10.0f, size.x - left - pad);
  float cell = avail_w / (cols / st->zoom);
  const float top_h_horizontal = line_h + pad * 2;
  const float top_h_vertical = std::min(st->max_source_label_w, size.y * 0.3f) + pad * 2;
  // Decide orientation from the cell width the matrix would get with horizontal labels.
  float avail_h = std::max(10.0f, size.y - (labels ? top_h_horizontal : 0) - pad);
  cell = std::min({cell, avail_h / (rows / st->zoom), 96.0f});
  const bool vertical = labels && st->max_source_label_w + 4 > cell;
  const float top = labels ? (vertical ? top_h_vertical : top_h_horizontal) : 0.0f;
  avail_h = std::max(10.0f, size.y - top - pad);
  cell = std::min({avail_w / (cols / st->zoom), avail_h / (rows / st->zoom), 96.0f});
  const float vis_c = cols / st->zoom, vis_r = rows / st->zoom;
  const ImVec2 m0(std::floor(origin.x + left), std::floor(origin.y + top));
  const ImVec2 m1(m0.x + std::floor(vis_c * cell), m0.y + std::floor(vis_r * cell));
  const float cell_x = (m1.x - m0.x) / vis_c, cell_y = (m1.y - m0.y) / vis_r;

  // Interaction: the whole box is one item; wheel zooms around the cursor, drag pans.
  ImGui::InvisibleButton("##heatmap", size, ImGuiButtonFlags_MouseButtonLeft | ImGuiButtonFlags_MouseButtonMiddle);
  const bool item_hovered = ImGui::IsItemHovered();
  ImGuiIO& io = ImGui::GetIO();
  if (item_hovered && io.MouseWheel != 0.0f) {
    const float mc = st->pan_col + (io.MousePos.x - m0.x) / cell_x;
    const float mr = st->pan_row + (io.MousePos.y - m0.y) / cell_y;
    const float old_zoom = st->zoom;
    st->zoom *= std::pow(1.2f, io.MouseWheel);
    ClampView(st, rows, cols);
    const float k = old_zoom / st->zoom;
    st->pan_col = mc - (mc - st->pan_col) * k;
    st->pan_row = mr - (mr - st->pan_row) * k;
    ClampView(st, rows, cols);
  }
  if (ImGui::IsItemActive() && ImGui::IsMouseDragging(ImGuiMouseButton_Left, 2.0f) && st->zoom > 1.0f) {
    st->pan_col -= io.MouseDelta.x / cell_x;
    st->pan_row -= io.MouseDelta.y / cell_y;
    ClampView(st, rows, cols);
  }
  if (item_hovered && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) {
    st->zoom = 1.0f;
    st->pan_col = st->pan_row = 0.0f;
  }

  const float view[4] = {st->pan_col, st->pan_row, st->pan_col + vis_c, st->pan_row + vis_r};
  HeatmapDraw draw;
  draw.tex = &st->tex;
  draw.tex_b = st->next ? &st->tex_next : nullptr;
  draw.frame_mix = st->frame_mix;
  for (int i = 0; i < 4; ++i) draw.view[i] = view[i];
  draw.vmin = style.vmin;
  draw.vmax = style.vmax;
  draw.scale = style.scale;
  draw.colormap = style.colormap;
  draw.rows_shown = std::clamp(st->rows_shown, 0, rows);
  if (!style.show_grid) draw.grid_rgba[3] = 0.0f;
  const float rect[4] = {m0.x, m0.y, m1.x, m1.y};
  AddHeatmapDrawCallback(env, draw, rect);

  st->geom.valid = true;
  for (int i = 0; i < 4; ++i) {
    st->geom.rect[i] = rect[i];
    st->geom.view[i] = view[i];
  }
  st->geom.rows = rows;
  st->geom.cols = cols;
  st->geom.rows_shown = draw.rows_shown;

  // Visible cell range.
  const int c_begin = std::max(0, (int)std::floor(view[0])), c_end = std::min(cols, (int)std::ceil(view[2]));
  const int r_begin = std::max(0, (int)std::floor(view[1])), r_end = std::min(rows, (int)std::ceil(view[3]));
  auto cell_x0 = [&](int c) { return m0.x + (c - view[0]) * cell_x; };
  auto cell_y0 = [&](int r) { return m0.y + (r - view[1]) * cell_y; };

  // Hover.
  if (item_hovered && io.MousePos.x >= m0.x && io.MousePos.x < m1.x && io.MousePos.y >= m0.y && io.MousePos.y < m1.y) {
    st->hover_col = std::clamp((int)std::floor(view[0] + (io.MousePos.x - m0.x) / cell_x), 0, cols - 1);
    st->hover_row = std::clamp((int)std::floor(view[1] + (io.MousePos.y - m0.y) / cell_y), 0, rows - 1);
    if (st->hover_row >= draw.rows_shown) st->hover_row = st->hover_col = -1;
  }
  const int hl_row = st->hover_row >= 0 ? st->hover_row : st->highlight_row;
  const int hl_col = st->hover_row >= 0 ? st->hover_col : st->highlight_col;

  dl->PushClipRect(m0, m1, true);
  // Numbers in cells, in a colour that contrasts with the cell.
  if (style.show_numbers && cell_x >= 30.0f && cell_y >= line_h + 2) {
    char buf[32];
    for (int r = r_begin; r < std::min(r_end, draw.rows_shown); ++r) {
      const float row_max = map.weights.row(r).maxCoeff();
      for (int c = c_begin; c < c_end; ++c) {
        const float w = map.weights(r, c);
        uint8_t rgb[3];
        ColormapSample(style.colormap, HeatmapT(style, w, row_max), rgb);
        std::snprintf(buf, sizeof(buf), cell_x >= 44.0f ? "%.3f" : "%.2f", w);
        const ImVec2 ts = ImGui::CalcTextSize(buf);
        const ImVec2 p(cell_x0(c) + (cell_x - ts.x) * 0.5f, cell_y0(r) + (cell_y - ts.y) * 0.5f);
        dl->AddText(p, ContrastingTextColor(rgb), buf);
      }
    }
  }
  // Row and column highlight.
  const ImU32 hl = IM_COL32(255, 196, 0, 255);
  if (hl_row >= 0 && hl_row < rows) dl->AddRect(ImVec2(m0.x, cell_y0(hl_row)), ImVec2(m1.x, cell_y0(hl_row) + cell_y), hl, 0, 0, 1.5f);
  if (hl_col >= 0 && hl_col < cols) dl->AddRect(ImVec2(cell_x0(hl_col), m0.y), ImVec2(cell_x0(hl_col) + cell_x, m1.y), hl, 0, 0, 1.5f);
  if (st->current_row >= 0 && st->current_row < rows)
    dl->AddRect(ImVec2(m0.x, cell_y0(st->current_row)), ImVec2(m1.x, cell_y0(st->current_row) + cell_y),
                IM_COL32(80, 200, 255, 255), 0, 0, 2.0f);
  dl->PopClipRect();
  dl->AddRect(ImVec2(m0.x - 1, m0.y - 1), ImVec2(m1.x + 1, m1.y + 1), IM_COL32(110, 110, 120, 255));

  // Axis labels: only visible ones, thinned so they never overlap; readable at every zoom.
  if (labels) {
    const ImU32 text_col = ImGui::GetColorU32(ImGuiCol_Text);
    char buf[32];
    const int row_stride = std::max(1, (int)std::ceil(line_h / cell_y));
    dl->PushClipRect(ImVec2(origin.x, m0.y), ImVec2(m0.x, m1.y), true);
    for (int r = r_begin; r < std::min(r_end, draw.rows_shown); ++r) {
      if (r % row_stride != 0 && r != hl_row) continue;
      const char* t = TokenOr(map.target_tokens, r, buf, sizeof(buf));
      const ImVec2 ts = ImGui::CalcTextSize(t);
      const ImVec2 p(m0.x - pad - ts.x, cell_y0(r) + (cell_y - ts.y) * 0.5f);
      dl->AddText(p, r == hl_row ? hl : text_col, t);
    }
    dl->PopClipRect();
    dl->PushClipRect(ImVec2(m0.x, origin.y), ImVec2(m1.x, m0.y), true);
    if (vertical) {
      const int col_stride = std::max(1, (int)std::ceil(line_h / cell_x));
      for (int c = c_begin; c < c_end; ++c) {
        if (c % col_stride != 0 && c != hl_col) continue;
        const char* t = TokenOr(map.source_tokens, c, buf, sizeof(buf));
        const ImVec2 p(cell_x0(c) + (cell_x + line_h) * 0.5f, m0.y - pad);
        AddTextVertical(dl, p, c == hl_col ? hl : text_col, t);
      }
    } else {
      for (int c = c_begin; c < c_end; ++c) {
        const char* t = TokenOr(map.source_tokens, c, buf, sizeof(buf));
        const ImVec2 ts = ImGui::CalcTextSize(t);
        const ImVec2 p(cell_x0(c) + (cell_x - ts.x) * 0.5f, m0.y - pad - ts.y);
        dl->AddText(p, c == hl_col ? hl : text_col, t);
      }
    }
    dl->PopClipRect();
  }

  // Tooltip: both tokens, the weight, its rank in the row and the cell's arithmetic.
  if (st->hover_row >= 0) {
    const int r = st->hover_row, c = st->hover_col;
    const float w = map.weights(r, c);
    int rank = 1;
    for (int j = 0; j < cols; ++j) rank += map.weights(r, j) > w ? 1 : 0;
    char b1[32], b2[32];
    ImGui::BeginTooltip();
    ImGui::Text("%s  \xe2\x86\x92  %s", TokenOr(map.target_tokens, r, b1, sizeof(b1)), TokenOr(map.source_tokens, c, b2, sizeof(b2)));
    ImGui::Separator();
    ImGui::Text("weight  %.6f", w);
    ImGui::Text("rank    %d of %d in its row", rank, cols);
    if (map.has_steps && map.steps.raw_scores.rows() == rows && map.steps.raw_scores.cols() == cols) {
      const AttentionSteps& s = map.steps;
      ImGui::Separator();
      ImGui::Text("score    %.4f", s.raw_scores(r, c));
      ImGui::Text("scaled   %.4f", s.scaled(r, c));
      if (std::isinf(s.masked(r, c)))
        ImGui::Text("masked   -inf");
      ImGui::Text("exp(s - max)  %.6g", s.exp(r, c));
      ImGui::Text("row sum       %.6g", s.row_sum.size() > r ? s.row_sum[r] : 0.0f);
      ImGui::TextDisabled("weight = exp / row sum");
    }
    ImGui::EndTooltip();
  }
  ImGui::PopID();
  return st->hover_row >= 0;
}

bool HeatmapThumbnail(const char* id, const AttentionMap& map, const HeatmapStyle& style, HeatmapViewState* st,
                      const HeatmapEnv& env, const ImVec2& size) {
  ImGui::PushID(id);
  const int rows = (int)map.weights.rows(), cols = (int)map.weights.cols();
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const bool clicked = ImGui::InvisibleButton("##thumb", size);
  if (rows > 0 && cols > 0) {
    EnsureTexture(env, map, &st->tex, &st->tex_owner, &st->tex_version);
    HeatmapDraw draw;
    draw.tex = &st->tex;
    draw.view[2] = (float)cols;
    draw.view[3] = (float)rows;
    draw.vmin = style.vmin;
    draw.vmax = style.vmax;
    draw.scale = style.scale;
    draw.colormap = style.colormap;
    draw.grid_rgba[3] = 0.0f;
    const float rect[4] = {p.x, p.y, p.x + size.x, p.y + size.y};
    AddHeatmapDrawCallback(env, draw, rect);
    st->geom.valid = true;
    for (int i = 0; i < 4; ++i) st->geom.rect[i] = rect[i], st->geom.view[i] = draw.view[i];
    st->geom.rows = rows;
    st->geom.cols = cols;
    st->geom.rows_shown = rows;
  }
  const ImU32 border = ImGui::IsItemHovered() ? IM_COL32(255, 196, 0, 255) : IM_COL32(90, 90, 100, 255);
  ImGui::GetWindowDrawList()->AddRect(ImVec2(p.x - 1, p.y - 1), ImVec2(p.x + size.x + 1, p.y + size.y + 1), border);
  ImGui::PopID();
  return clicked;
}

}  // namespace attnviz
