#include "app/views/lines.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "app/app_chrome.h"
#include "app/app_files.h"
#include "app/app_state.h"
#include "imgui.h"
#include "io/json.h"

namespace attnviz {
namespace {

// Every line costs 4 vertices (texture-antialiased, integer width); ImGui's 16-bit indices allow
// 65536 per draw list, which the canvas child shares with its labels.
constexpr int kLineBudget = 12000;
constexpr int kVertexGuard = 50000;

struct Column {
  float x = 0;        // where lines end (the token's dot)
  float y0 = 0;       // centre of token 0
  float spacing = 0;  // between token centres
  int n = 0;          // tokens
  int stride = 1;     // label every stride-th token when crowded
  bool left = true;   // down the canvas's left side: labels left of the dots, right-aligned
  float Y(int i) const { return y0 + spacing * i; }
  // The mouse is over this column's labels or dots (never over the lines between the columns).
  bool OnLabelSide(float mouse_x) const { return left ? mouse_x <= x + 9.0f : mouse_x >= x - 9.0f; }
  ImVec2 LabelAt(float y, float pad) const { return ImVec2(left ? x - pad : x + pad, y); }
  float LabelAlign() const { return left ? 1.0f : 0.0f; }  // DrawLabel's horizontal alignment
  int Hit(float y) const {
    if (n == 0 || spacing <= 0) return -1;
    const int i = (int)std::floor((y - y0) / spacing + 0.5f);
    return (i >= 0 && i < n) ? i : -1;
  }
};

Column Layout(int n, float x, bool left, float top, float height, float line_h) {
  Column c;
  c.n = n;
  c.x = x;
  c.left = left;
  if (n <= 0) return c;
  c.spacing = std::min(height / n, line_h * 3.5f);
  c.y0 = top + (height - c.spacing * n) * 0.5f + c.spacing * 0.5f;
  c.stride = std::max(1, (int)std::ceil((line_h + 1.0f) / std::max(c.spacing, 1e-3f)));
  return c;
}

const char* Token(const TokenList& tokens, int i, char* buf, size_t n) {
  if (i >= 0 && i < (int)tokens.size()) return tokens[i].c_str();
  std::snprintf(buf, n, "#%d", i);
  return buf;
}

void EnsureLabelWidths(const AttentionMap& map, const LabelEnv& labels, LinesViewState* ls) {
  if (ls->labels_owner == &map && ls->labels_version == map.version) return;
  ls->source_label_w = ls->target_label_w = 0;
  for (const auto& t : map.source_tokens) ls->source_label_w = std::max(ls->source_label_w, LabelLength(labels, t));
  for (const auto& t : map.target_tokens) ls->target_label_w = std::max(ls->target_label_w, LabelLength(labels, t));
  ls->labels_owner = &map;
  ls->labels_version = map.version;
}

// The smallest threshold >= min_threshold that keeps at most budget lines among the rows and
// columns that would be drawn: one pass into log-spaced bins between min_threshold and 1.
float ThresholdForBudget(const MatrixRM& w, int rows_shown, int only_row, int only_col, float min_threshold,
                         int budget) {
  constexpr int kBins = 64;
  int bins[kBins + 1] = {};                              // bins[kBins]: weights >= 1
  const float lo = std::log(min_threshold), span = -lo;  // log(1) = 0
  const int r0 = only_row >= 0 ? only_row : 0, r1 = only_row >= 0 ? only_row + 1 : rows_shown;
  const int c0 = only_col >= 0 ? only_col : 0, c1 = only_col >= 0 ? only_col + 1 : (int)w.cols();
  int total = 0;
  for (int r = r0; r < r1; ++r) {
    for (int c = c0; c < c1; ++c) {
      const float x = w(r, c);
      if (!(x >= min_threshold)) continue;
      ++total;
      ++bins[std::clamp((int)((std::log(x) - lo) / span * kBins), 0, kBins)];
    }
  }
  if (total <= budget) return min_threshold;
  // Walk down from the strongest bin while the lines still fit.
  int kept = 0, b = kBins;
  while (b > 0 && kept + bins[b] <= budget) kept += bins[b--];
  return std::exp(lo + span * (b + 1) / kBins);  // lower edge of the last bin that fits
}

// Row maxima of the map, recomputed only when the map changes.
void EnsureRowMax(const AttentionMap& map, LineCache* lc) {
  if (lc->row_max_owner == &map && lc->row_max_version == map.version) return;
  lc->row_max.resize((size_t)map.weights.rows());
  for (int r = 0; r < map.weights.rows(); ++r) lc->row_max[(size_t)r] = map.weights.row(r).maxCoeff();
  lc->row_max_owner = &map;
  lc->row_max_version = map.version;
}

// The lines to draw, at most `budget`, rebuilt only when the map, the decoding step, the hovered
// token or the threshold change (a 4096 x 4096 map is scanned once, not every frame).
void EnsureLines(const AttentionMap& map, int rows_shown, int only_row, int only_col, float user_threshold, int budget,
                 LineCache* lc) {
  const bool same_map = lc->owner == &map && lc->version == map.version && lc->budget == budget;
  if (same_map && lc->rows_shown == rows_shown && lc->row == only_row && lc->col == only_col &&
      lc->threshold == user_threshold)
    return;
  const MatrixRM& w = map.weights;
  // The decoding animation only adds or removes whole rows: update incrementally while the
  // threshold was not raised for the budget (lines are stored in row order).
  const bool same_but_step = same_map && lc->row == only_row && lc->col == only_col &&
                             lc->threshold == user_threshold && only_row < 0 &&
                             lc->effective_threshold == user_threshold;
  if (same_but_step && rows_shown < lc->rows_shown) {
    while (!lc->lines.empty() && lc->lines.back().row >= rows_shown) lc->lines.pop_back();
    lc->rows_shown = rows_shown;
    return;
  }
  if (same_but_step && rows_shown > lc->rows_shown) {
    const int c0 = only_col >= 0 ? only_col : 0, c1 = only_col >= 0 ? only_col + 1 : (int)w.cols();
    int added = 0;
    for (int r = lc->rows_shown; r < rows_shown; ++r)
      for (int c = c0; c < c1; ++c) added += w(r, c) >= user_threshold ? 1 : 0;
    if ((int)lc->lines.size() + added <= budget) {
      for (int r = lc->rows_shown; r < rows_shown; ++r)
        for (int c = c0; c < c1; ++c)
          if (w(r, c) >= user_threshold) lc->lines.push_back({r, c});
      lc->rows_shown = rows_shown;
      return;
    }
  }
  const float threshold = ThresholdForBudget(w, rows_shown, only_row, only_col, user_threshold, budget);
  lc->effective_threshold = threshold;
  if (lc->lines.capacity() < (size_t)budget) lc->lines.reserve((size_t)budget);
  lc->lines.clear();
  const int r0 = only_row >= 0 ? only_row : 0, r1 = only_row >= 0 ? only_row + 1 : rows_shown;
  const int c0 = only_col >= 0 ? only_col : 0, c1 = only_col >= 0 ? only_col + 1 : (int)w.cols();
  for (int r = r0; r < r1; ++r)
    for (int c = c0; c < c1 && (int)lc->lines.size() < budget; ++c)
      if (w(r, c) >= threshold) lc->lines.push_back({r, c});
  lc->owner = &map;
  lc->version = map.version;
  lc->budget = budget;
  lc->rows_shown = rows_shown;
  lc->row = only_row;
  lc->col = only_col;
  lc->threshold = user_threshold;
}

// The maps of `layer`, in head order (a layer may have fewer heads than the example's most).
std::vector<int> LayerMaps(const Example& ex, int layer) {
  std::vector<int> maps;
  for (int h = 0; h < ex.heads; ++h) {
    const int m = ex.MapOf(layer, h);
    int l = -1, hh = -1;
    ex.LayerHeadOf(m, &l, &hh);
    if (l != layer || hh != h) break;
    maps.push_back(m);
  }
  return maps;
}

// All-heads mode is possible: several heads in the layer, all in memory and of one shape.
bool AllHeadsAvailable(const Example& ex, const std::vector<int>& maps) {
  if (ex.lazy || maps.size() < 2) return false;
  const AttentionMap& m0 = ex.maps[(size_t)maps[0]];
  for (int m : maps) {
    const AttentionMap& a = ex.maps[(size_t)m];
    if (!a.Complete() || a.weights.rows() != m0.weights.rows() || a.weights.cols() != m0.weights.cols()) return false;
  }
  return true;
}

// Head swatches of all-heads mode: a click hides or shows a head, a double-click shows it alone.
// The row is part of a PNG of the view (figure_rect): the legend of the lines' colours.
void DrawHeadSwatches(LinesViewState* ls, int heads, float* figure_rect) {
  ls->head_off.resize((size_t)heads, 0);
  const ImVec2 start = ImGui::GetCursorScreenPos();
  ImVec2 end = start;
  ImGui::AlignTextToFramePadding();
  ImGui::TextDisabled("layer %d, heads", ls->layer);
  ImGui::SameLine();
  for (int h = 0; h < heads; ++h) {
    uint8_t rgb[3];
    CategoryColour(h, rgb);
    const bool on = !ls->head_off[(size_t)h];
    ImGui::PushID(h);
    const float k = on ? 1.0f : 0.25f;  // an unticked head: its colour faded into the background
    const ImVec4 bg = ImGui::GetStyleColorVec4(ImGuiCol_WindowBg);
    const ImVec4 col(bg.x + (rgb[0] / 255.0f - bg.x) * k, bg.y + (rgb[1] / 255.0f - bg.y) * k,
                     bg.z + (rgb[2] / 255.0f - bg.z) * k, 1.0f);
    const float sz = ImGui::GetFrameHeight() * 0.7f;
    if (ImGui::ColorButton("##head", col, ImGuiColorEditFlags_NoTooltip, ImVec2(sz, sz)))
      ls->head_off[(size_t)h] = on ? 1 : 0;
    if (ImGui::IsItemHovered() && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left))
      for (int j = 0; j < heads; ++j) ls->head_off[(size_t)j] = j != h;
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("head %d: %d lines\nclick: hide or show it; double-click: show it alone", h,
                        h < (int)ls->heads_drawn.size() ? std::max(0, ls->heads_drawn[(size_t)h]) : 0);
    ImGui::SameLine(0, 2);
    ImGui::TextDisabled("%d", h);
    end = ImGui::GetItemRectMax();
    ImGui::PopID();
    ImGui::SameLine();
  }
  ImGui::NewLine();
  const float box[4] = {start.x - 4.0f, start.y, end.x + 4.0f, end.y + 2.0f};
  AddFigureBox(figure_rect, box);
}

// The controls above the canvas.
void DrawToolbar(LinesViewState* ls, int rows, int cols, bool heads_available) {
  ImGui::BeginDisabled(!heads_available);
  ImGui::Checkbox("all heads", &ls->all_heads);
  ImGui::EndDisabled();
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip(heads_available ? "Every head of this layer at once, one colour each (BertViz's head view)"
                                      : "Needs a layer of several heads held in memory");
  ImGui::SameLine();
  ImGui::BeginDisabled(ls->all_heads && heads_available);
  ImGui::Checkbox("colormap colours", &ls->use_colormap);
  ImGui::EndDisabled();
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "Colour lines by the sidebar's colormap and scale, or a fixed accent (in the light theme strong lines "
        "take the colormap's dark end)");
  ImGui::SameLine();
  ImGui::Checkbox("per target", &ls->row_normalised);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "Each target word's strongest line is fully opaque (long sequences spread their weight thin).\n"
        "Off: opacity follows the sidebar's colour scale.");
  ImGui::SameLine();
  ImGui::Checkbox("queries left", &ls->queries_left);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "The attending (target, query) tokens down the left and the attended (source, key) ones down the\n"
        "right, as BertViz draws them. Off: the source sentence on the left, as in alignment figures.");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 9);
  ImGui::SliderFloat("hide below", &ls->threshold, 0.001f, 0.5f, "%.3f", ImGuiSliderFlags_Logarithmic);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Lines for weights below this are not drawn");
  ImGui::SameLine();
  if (std::max(rows, cols) > 512)
    ImGui::TextDisabled("%d tokens: the lines overlap; hover a token, or use the heatmap view", std::max(rows, cols));
  else
    ImGui::TextDisabled("hover a token to keep only its lines");
}

// One frame's layout of the canvas and what the mouse is over.
struct LinesFrame {
  ImVec2 origin, size;
  Column src, tgt;
  float dot = 1;         // half-size of a token's dot
  int rows_shown = 0;    // emitted target rows
  int current_row = -1;  // the row being emitted, -1 none
  float threshold = 0;   // effective threshold of the lines drawn
  // All-heads mode, a token hovered: each partner token's largest weight over the heads drawn
  // (LinesViewState::partner_weight; null: the current map's weights decide).
  const std::vector<float>* partner = nullptr;
};

LinesFrame LayoutCanvas(const LinesViewState& ls, int rows, int cols) {
  LinesFrame F;
  F.origin = ImGui::GetCursorScreenPos();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  F.size = ImVec2(std::max(avail.x, 100.0f), std::max(avail.y, 60.0f));
  const float line_h = ImGui::GetTextLineHeight(), pad = 8.0f;
  const float src_w = std::min(ls.source_label_w, F.size.x * 0.3f),
              tgt_w = std::min(ls.target_label_w, F.size.x * 0.3f);
  const float top = F.origin.y + line_h + pad * 2, height = F.size.y - line_h - pad * 3;
  const float left_w = ls.queries_left ? tgt_w : src_w, right_w = ls.queries_left ? src_w : tgt_w;
  const float left_x = F.origin.x + pad + left_w + pad, right_x = F.origin.x + F.size.x - pad - right_w - pad;
  F.src = Layout(cols, ls.queries_left ? right_x : left_x, !ls.queries_left, top, height, line_h);
  F.tgt = Layout(rows, ls.queries_left ? left_x : right_x, ls.queries_left, top, height, line_h);
  F.dot = std::clamp(std::min(F.src.spacing, F.tgt.spacing) * 0.3f, 1.0f, 3.0f);
  return F;
}

// A token is picked over its label (or its dot), never from the middle of the lines.
void PickToken(const LinesFrame& F, bool hovered, LinesViewState* ls) {
  ls->hovered_source = ls->hovered_target = -1;
  if (!hovered) return;
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  if (F.src.OnLabelSide(mouse.x))
    ls->hovered_source = F.src.Hit(mouse.y);
  else if (F.tgt.OnLabelSide(mouse.x))
    ls->hovered_target = F.tgt.Hit(mouse.y);
  if (ls->hovered_target >= F.rows_shown) ls->hovered_target = -1;
}

// Opacity and width grow with the weight (relative to its row's maximum, or through the sidebar's
// scale); colours follow the colormap as LineColour puts it on the theme's background (in the light
// theme the greys' strongest lines were white on white).
// head_rgb: all-heads mode's colour of this map's head (else the colormap or the accent).
// Returns the lines drawn.
int DrawLineSet(ImDrawList* dl, const AttentionMap& map, const HeatmapStyle& style, const LinesFrame& F,
                const LinesViewState& ls, const LineCache& lc, const uint8_t* head_rgb) {
  const uint8_t accent[3] = {255, 160, 60};
  const HeatmapStyle resolved = ResolveStyle(style, map);
  const bool need_row_max = ls.row_normalised || style.scale == ScaleMode::PerRow;
  const bool light = LightStyle();
  int drawn = 0;
  for (const LineCache::Line& line : lc.lines) {
    if (dl->VtxBuffer.Size >= kVertexGuard) break;
    const float wt = map.weights(line.row, line.col);
    const float row_max = need_row_max ? lc.row_max[(size_t)line.row] : 1.0f;
    const float t = ls.row_normalised ? (row_max > 0 ? wt / row_max : 0.0f) : HeatmapT(resolved, wt, row_max);
    uint8_t rgb[3] = {accent[0], accent[1], accent[2]};
    if (head_rgb)
      rgb[0] = head_rgb[0], rgb[1] = head_rgb[1], rgb[2] = head_rgb[2];
    else if (ls.use_colormap)
      LineColour(style.colormap, t, light, rgb);
    const float alpha = std::clamp(0.08f + 0.92f * t, 0.0f, 1.0f);
    const float width = std::round(1.0f + 3.0f * t);
    dl->AddLine(ImVec2(F.src.x, F.src.Y(line.col)), ImVec2(F.tgt.x, F.tgt.Y(line.row)),
                IM_COL32(rgb[0], rgb[1], rgb[2], (int)(alpha * 255)), width);
    ++drawn;
  }
  return drawn;
}

constexpr ImU32 kHighlight = IM_COL32(255, 196, 0, 255);

// Source dots and labels down the left (the right when queries_left), thinned when crowded; the hovered token and its
// partners stand out. Returns the partner tokens of the hovered target.
int DrawSourceTokens(ImDrawList* dl, const AttentionMap& map, const LinesFrame& F, const LinesViewState& ls,
                     const LabelEnv& labels) {
  int partners = 0;
  const ImU32 text_col = ImGui::GetColorU32(ImGuiCol_Text), dim_col = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  const float line_h = ImGui::GetTextLineHeight(), pad = 8.0f;
  const int cols = F.src.n, only_row = ls.hovered_target;
  const bool dots = F.src.spacing >= 2.5f;  // crowded columns get a bar instead of one dot per token
  if (!dots) dl->AddRectFilled(ImVec2(F.src.x - 1, F.src.Y(0)), ImVec2(F.src.x + 1, F.src.Y(cols - 1)), dim_col);
  char buf[32];
  float last_y = -1e9f;  // labels never overlap: one is skipped when too close to the last
  for (int c = 0; c < cols; ++c) {
    const bool is_hl = c == ls.hovered_source;
    const float pw = !F.partner ? (only_row >= 0 ? map.weights(only_row, c) : 0.0f) : (*F.partner)[(size_t)c];
    const bool partner = only_row >= 0 && pw >= F.threshold;
    partners += partner;
    const ImU32 col = only_row >= 0 && !partner ? dim_col : (is_hl || partner ? kHighlight : text_col);
    const float y = F.src.Y(c);
    if (dots || is_hl || partner)
      dl->AddRectFilled(ImVec2(F.src.x - F.dot, y - F.dot), ImVec2(F.src.x + F.dot, y + F.dot), col);
    if (c % F.src.stride != 0 && !is_hl && !partner) continue;
    if (y - last_y < line_h && !is_hl) continue;
    last_y = y;
    DrawLabel(dl, labels, F.src.LabelAt(y, pad), col, Token(map.source_tokens, c, buf, sizeof(buf)), false,
              F.src.LabelAlign());
  }
  return partners;
}

// Target dots and labels down the right (the left when queries_left); rows not yet emitted are dimmed, the current one
// accented. Returns the partner tokens of the hovered source.
int DrawTargetTokens(ImDrawList* dl, const AttentionMap& map, const LinesFrame& F, const LinesViewState& ls,
                     const LabelEnv& labels) {
  int partners = 0;
  const ImU32 text_col = ImGui::GetColorU32(ImGuiCol_Text), dim_col = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  const ImU32 cur = IM_COL32(80, 200, 255, 255);
  const float line_h = ImGui::GetTextLineHeight(), pad = 8.0f;
  const int rows = F.tgt.n, only_col = ls.hovered_source;
  const bool dots = F.tgt.spacing >= 2.5f;
  if (!dots) dl->AddRectFilled(ImVec2(F.tgt.x - 1, F.tgt.Y(0)), ImVec2(F.tgt.x + 1, F.tgt.Y(rows - 1)), dim_col);
  char buf[32];
  float last_y = -1e9f;
  for (int r = 0; r < rows; ++r) {
    const bool emitted = r < F.rows_shown;
    const bool is_hl = r == ls.hovered_target;
    const float pw = !F.partner ? (only_col >= 0 ? map.weights(r, only_col) : 0.0f) : (*F.partner)[(size_t)r];
    const bool partner = only_col >= 0 && emitted && pw >= F.threshold;
    partners += partner;
    ImU32 col = !emitted ? dim_col : (is_hl || partner ? kHighlight : (r == F.current_row ? cur : text_col));
    if (only_col >= 0 && !partner) col = dim_col;
    const float y = F.tgt.Y(r);
    if (dots || is_hl || partner || r == F.current_row)
      dl->AddRectFilled(ImVec2(F.tgt.x - F.dot, y - F.dot), ImVec2(F.tgt.x + F.dot, y + F.dot), col);
    if (r % F.tgt.stride != 0 && !is_hl && !partner && r != F.current_row) continue;
    if (y - last_y < line_h && !is_hl) continue;
    last_y = y;
    DrawLabel(dl, labels, F.tgt.LabelAt(y, pad), col, Token(map.target_tokens, r, buf, sizeof(buf)), false,
              F.tgt.LabelAlign());
  }
  return partners;
}

// The hovered token's strongest partner.
// "caption token" on one line, the token drawn as a label (any script).
void CaptionedToken(const LabelEnv& labels, const char* caption, const char* token) {
  ImGui::TextUnformatted(caption);
  ImGui::SameLine();
  LabelItem(labels, token, ImGui::GetColorU32(ImGuiCol_Text));
}

// A head drawn this frame: its index in the layer and its map.
struct ShownHead {
  int head;
  const AttentionMap* map;
};

// The hovered token's strongest partner in map: its index, and its weight in *best_w.
int StrongestPartner(const AttentionMap& map, const LinesFrame& F, const LinesViewState& ls, float* best_w) {
  const MatrixRM& w = map.weights;
  int best = -1;
  *best_w = -1;
  if (ls.hovered_source >= 0) {
    for (int r = 0; r < F.rows_shown; ++r)
      if (w(r, ls.hovered_source) > *best_w) *best_w = w(r, ls.hovered_source), best = r;
  } else {
    for (int c = 0; c < (int)w.cols(); ++c)
      if (w(ls.hovered_target, c) > *best_w) *best_w = w(ls.hovered_target, c), best = c;
  }
  return best;
}

// All-heads mode: each head's strongest partner of the hovered token, in the head's colour.
void HeadPartners(const std::vector<ShownHead>& heads, const LinesFrame& F, const LinesViewState& ls,
                  const LabelEnv& labels) {
  char b[32];
  for (const ShownHead& h : heads) {
    float best_w;
    const int best = StrongestPartner(*h.map, F, ls, &best_w);
    if (best < 0) continue;
    uint8_t rgb[3];
    CategoryColour(h.head, rgb);
    ImGui::TextColored(ImVec4(rgb[0] / 255.0f, rgb[1] / 255.0f, rgb[2] / 255.0f, 1.0f), "head %d  %.3f", h.head,
                       best_w);
    ImGui::SameLine();
    const TokenList& toks = ls.hovered_source >= 0 ? h.map->target_tokens : h.map->source_tokens;
    LabelItem(labels, Token(toks, best, b, sizeof(b)), ImGui::GetColorU32(ImGuiCol_Text));
  }
}

void TokenTooltip(const AttentionMap& map, const LinesFrame& F, const LinesViewState& ls, const LabelEnv& labels,
                  const std::vector<ShownHead>& heads) {
  if (ls.hovered_source < 0 && ls.hovered_target < 0) return;
  if (heads.size() > 1) {
    char b[32];
    ImGui::BeginTooltip();
    CaptionedToken(labels, ls.hovered_source >= 0 ? "source " : "target ",
                   ls.hovered_source >= 0 ? Token(map.source_tokens, ls.hovered_source, b, sizeof(b))
                                          : Token(map.target_tokens, ls.hovered_target, b, sizeof(b)));
    ImGui::TextDisabled("strongest partner in each head:");
    HeadPartners(heads, F, ls, labels);
    ImGui::Text("%d lines >= %.3f", ls.drawn, F.threshold);
    ImGui::EndTooltip();
    return;
  }
  const MatrixRM& w = map.weights;
  char b1[32], b2[32];
  int best = -1;
  float best_w = -1;
  ImGui::BeginTooltip();
  if (ls.hovered_source >= 0) {
    for (int r = 0; r < F.rows_shown; ++r)
      if (w(r, ls.hovered_source) > best_w) best_w = w(r, ls.hovered_source), best = r;
    CaptionedToken(labels, "source ", Token(map.source_tokens, ls.hovered_source, b1, sizeof(b1)));
    if (best >= 0) CaptionedToken(labels, "strongest:", Token(map.target_tokens, best, b2, sizeof(b2)));
    if (best >= 0) ImGui::Text("weight  %.4f", best_w);
  } else {
    for (int c = 0; c < (int)w.cols(); ++c)
      if (w(ls.hovered_target, c) > best_w) best_w = w(ls.hovered_target, c), best = c;
    CaptionedToken(labels, "target ", Token(map.target_tokens, ls.hovered_target, b1, sizeof(b1)));
    if (best >= 0) CaptionedToken(labels, "strongest:", Token(map.source_tokens, best, b2, sizeof(b2)));
    if (best >= 0) ImGui::Text("weight  %.4f", best_w);
  }
  ImGui::Text("%d lines >= %.3f", ls.drawn, F.threshold);
  ImGui::EndTooltip();
}

// Captions "source" / "target", and a note when the threshold was raised to fit the line budget.
void DrawCaptions(ImDrawList* dl, const LinesFrame& F, const LinesViewState& ls) {
  const ImU32 dim_col = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  const float pad = 8.0f;
  const char* left = ls.queries_left ? "target (query)" : "source";
  const char* right = ls.queries_left ? "source (key)" : "target";
  dl->AddText(ImVec2(F.origin.x + pad, F.origin.y + pad), dim_col, left);
  dl->AddText(ImVec2(F.origin.x + F.size.x - pad - ImGui::CalcTextSize(right).x, F.origin.y + pad), dim_col, right);
  if (F.threshold <= ls.threshold) return;
  char note[96];
  std::snprintf(note, sizeof(note), "%d lines: showing weights >= %.3f", ls.drawn, F.threshold);
  dl->AddText(ImVec2(F.origin.x + F.size.x * 0.5f - ImGui::CalcTextSize(note).x * 0.5f, F.origin.y + pad), dim_col,
              note);
}

}  // namespace

namespace {

// The maps to draw: the current one, or in all-heads mode every ticked head of its layer.
std::vector<ShownHead> ShownHeads(AppState* s, LinesViewState* ls, bool* available) {
  const Example& ex = s->Current();
  int layer = 0, head = 0;
  ex.LayerHeadOf(s->current_map, &layer, &head);
  const std::vector<int> maps = LayerMaps(ex, layer);
  *available = AllHeadsAvailable(ex, maps);
  ls->layer = layer;
  ls->heads_drawn.assign(*available && ls->all_heads ? maps.size() : 0, -1);
  ls->shown_maps.clear();
  if (!*available || !ls->all_heads) return {{head, &s->CurrentMap()}};
  ls->head_off.resize(maps.size(), 0);
  std::vector<ShownHead> out;
  ls->shown_maps.clear();
  for (size_t h = 0; h < maps.size(); ++h)
    if (!ls->head_off[h]) out.push_back({(int)h, &ex.maps[(size_t)maps[h]]}), ls->shown_maps.push_back(maps[h]);
  return out;
}

// Builds and draws the lines of every shown head; the line budget is shared between them.
void DrawAllLines(ImDrawList* dl, const std::vector<ShownHead>& heads, const HeatmapStyle& style, LinesFrame* F,
                  LinesViewState* ls) {
  const bool several = !ls->heads_drawn.empty();
  LineCache* caches = &ls->single;
  if (several) {
    ls->heads.resize(ls->heads_drawn.size());
    caches = ls->heads.data();
  }
  const int budget = kLineBudget / std::max<int>(1, (int)heads.size());
  ls->effective_threshold = ls->threshold;
  for (const ShownHead& h : heads) {
    LineCache* lc = several ? &caches[h.head] : caches;
    EnsureRowMax(*h.map, lc);
    EnsureLines(*h.map, ls->rows_shown, ls->hovered_target, ls->hovered_source, ls->threshold, budget, lc);
    ls->effective_threshold = std::max(ls->effective_threshold, lc->effective_threshold);
  }
  F->threshold = ls->effective_threshold;
  F->partner = nullptr;
  if (several && !heads.empty() && (ls->hovered_source >= 0 || ls->hovered_target >= 0)) {
    const MatrixRM& w0 = heads[0].map->weights;
    std::vector<float>& pw = ls->partner_weight;  // keeps its capacity between frames
    pw.assign((size_t)(ls->hovered_target >= 0 ? w0.cols() : w0.rows()), 0.0f);
    for (const ShownHead& h : heads)
      for (size_t i = 0; i < pw.size(); ++i) {
        const float x = ls->hovered_target >= 0 ? h.map->weights(ls->hovered_target, (Eigen::Index)i)
                                                : h.map->weights((Eigen::Index)i, ls->hovered_source);
        pw[i] = std::max(pw[i], x);
      }
    F->partner = &pw;
  }
  for (const ShownHead& h : heads) {
    uint8_t rgb[3];
    CategoryColour(h.head, rgb);
    const int n = DrawLineSet(dl, *h.map, style, *F, *ls, several ? caches[h.head] : *caches, several ? rgb : nullptr);
    ls->drawn += n;
    if (several) ls->heads_drawn[(size_t)h.head] = n;
  }
}

}  // namespace

void LinesView::Draw(AppState* s) {
  LinesViewState& ls = state;
  const AttentionMap& map = s->CurrentMap();
  const int rows = (int)map.weights.rows(), cols = (int)map.weights.cols();
  Timeline& tl = s->timeline;
  if (tl.mode != TimelineMode::Decoding || tl.count != rows) tl.Reset(TimelineMode::Decoding, rows);
  if (s->config.controls) DrawTimelineControls(&tl, StepNoun(s->Current()));
  ls.rows_shown = std::clamp(tl.Step(), 0, rows);
  bool available = false;
  const std::vector<ShownHead> heads = ShownHeads(s, &ls, &available);
  if (s->config.controls) DrawToolbar(&ls, rows, cols, available);
  if (s->config.controls && !ls.heads_drawn.empty())
    DrawHeadSwatches(&ls, (int)ls.heads_drawn.size(), s->env.figure_rect);
  ls.drawn = 0;
  ls.hovered_source = ls.hovered_target = -1;
  ls.rect_valid = false;
  if (rows == 0 || cols == 0) {
    ImGui::TextDisabled("(empty matrix)");
    return;
  }
  EnsureLabelWidths(map, s->env.labels, &ls);
  // The canvas is a child window: its own draw list, so its own 64k-vertex budget.
  ImGui::BeginChild("lines_canvas", ImVec2(0, 0), false,
                    ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  LinesFrame F = LayoutCanvas(ls, rows, cols);
  F.rows_shown = ls.rows_shown;
  F.current_row = (tl.Step() < tl.count || tl.playing) ? tl.Step() - 1 : -1;
  ImGui::InvisibleButton("##lines", F.size);
  // A PNG: the tokens and their lines (a line above and below them), not the toolbars above.
  const float line_h = ImGui::GetTextLineHeight();
  const float figure[4] = {F.origin.x, std::min(F.src.Y(0), F.tgt.Y(0)) - line_h, F.origin.x + F.size.x,
                           std::max(F.src.Y(cols - 1), F.tgt.Y(rows - 1)) + line_h};
  AddFigureBox(s->env.figure_rect, figure);
  PickToken(F, ImGui::IsItemHovered(), &ls);
  ls.rect[0] = F.src.x;
  ls.rect[1] = F.origin.y + line_h + 16.0f;  // top and bottom of the token columns
  ls.rect[2] = F.tgt.x;
  ls.rect[3] = F.origin.y + F.size.y - 8.0f;
  ls.rect_valid = true;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->PushClipRect(F.origin, ImVec2(F.origin.x + F.size.x, F.origin.y + F.size.y), true);
  // Too many lines for the vertex budget: the threshold is raised until they fit.
  DrawAllLines(dl, heads, s->style, &F, &ls);
  ls.partners = DrawSourceTokens(dl, map, F, ls, s->env.labels) + DrawTargetTokens(dl, map, F, ls, s->env.labels);
  ls.token_y[0] = F.src.Y(0), ls.token_y[1] = F.src.spacing, ls.token_y[2] = F.tgt.Y(0), ls.token_y[3] = F.tgt.spacing;
  DrawCaptions(dl, F, ls);
  dl->PopClipRect();
  TokenTooltip(map, F, ls, s->env.labels, heads);
  ImGui::EndChild();
}

// All heads of a layer drawn (the last frame's shown_maps): the layer; else the head (MapSuffix).
std::string LinesView::FigureSuffix(const AppState* s) const {
  return state.shown_maps.empty() ? MapSuffix(s) : LayerSuffix(state.layer);
}

void LinesView::Describe(AppState*, JsonWriter* w) {
  const LinesViewState& l = state;
  w->Key("drawn");
  w->Number(l.drawn);
  w->Key("hovered_source");
  w->Number(l.hovered_source);
  w->Key("hovered_target");
  w->Number(l.hovered_target);
  w->Key("rows_shown");
  w->Number(l.rows_shown);
  w->Key("threshold");
  w->NumberF(l.effective_threshold);
  w->Key("colormap_colours");
  w->Bool(l.use_colormap);
  w->Key("queries_left");  // target (query) tokens down the left, as BertViz; rect[0] is then right of rect[2]
  w->Bool(l.queries_left);
  w->Key("partners");  // tokens highlighted as partners of the hovered one (any head drawn)
  w->Number(l.partners);
  w->Key("token_y");  // y of source token 0, source spacing, y of target token 0, target spacing
  w->BeginArray(true);
  for (float y : l.token_y) w->NumberF(y);
  w->EndArray();
  w->Key("all_heads");  // every head of `layer` at once (BertViz's head view)
  w->Bool(!l.heads_drawn.empty());
  w->Key("layer");
  w->Number(l.layer);
  w->Key("heads_drawn");  // [head] lines drawn, -1 for an unticked head (all-heads mode)
  w->BeginArray(true);
  for (int n : l.heads_drawn) w->Number(n);
  w->EndArray();
  w->Key("valid");
  w->Bool(l.rect_valid);
  w->Key("rect");
  w->BeginArray(true);
  for (float x : l.rect) w->NumberF(x);
  w->EndArray();
}

namespace {

// lines-heads all | off | H [H ...]: every head of the layer, the current map alone, or those heads.
Status LinesHeads(AppState* s, const CommandArgs& c, LinesViewState* ls) {
  if (c.rest == "off") return ls->all_heads = false, Status::Ok();
  const Example& ex = s->Current();
  int layer = 0, head = 0;
  ex.LayerHeadOf(s->current_map, &layer, &head);
  const std::vector<int> maps = LayerMaps(ex, layer);
  if (!AllHeadsAvailable(ex, maps))
    return Status::Error("lines-heads needs a layer of several heads held in memory (" + ex.title + ")");
  std::vector<uint8_t> off(maps.size(), c.rest == "all" ? 0 : 1);
  for (size_t i = 0; c.rest != "all" && i < c.words.size(); ++i) {
    int h;
    if (!c.Int(i, &h) || h < 0 || h >= (int)maps.size())
      return Status::Error("lines-heads all|off|H [H ...], heads 0 to " + std::to_string(maps.size() - 1));
    off[(size_t)h] = 0;
  }
  if (c.words.empty()) return Status::Error("lines-heads all|off|H [H ...]");
  ls->head_off = off;
  ls->all_heads = true;
  return Status::Ok();
}

}  // namespace

bool LinesView::RunCommand(AppState* s, const CommandArgs& c, Status* result) {
  if (c.verb == "lines-heads") return *result = LinesHeads(s, c, &state), true;
  if (c.verb == "lines-queries") {  // left | right
    const std::string side = c.words.size() == 1 ? c.words[0] : "";
    if (side != "left" && side != "right") return *result = Status::Error("lines-queries left|right"), true;
    state.queries_left = side == "left";
    return *result = Status::Ok(), true;
  }
  if (c.verb != "lines-threshold") return false;
  float t;
  if (!c.Float(0, &t) || !(t > 0 && t <= 1))
    *result = Status::Error("lines-threshold needs a number in (0, 1]");
  else
    state.threshold = t, *result = Status::Ok();
  return true;
}

}  // namespace attnviz
