#include "app/views/compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "app/app_state.h"
#include "imgui.h"
#include "io/json.h"

namespace attnviz {
namespace {

const char* kScoreLabels[] = {"dot", "scaled dot", "general (Luong)", "additive (Bahdanau)", "cosine"};

void SetFailed(AttentionMap* m, int rows, int cols, const std::string& name) {
  m->name = name;
  m->weights.setZero(rows, cols);
  m->has_steps = false;
  m->Touch();
}

// Left/right with two score functions on the example's inputs.
void ComputeScores(Example& ex, CompareViewState* cv) {
  const AttentionInputs& in = ex.inputs;
  for (int i = 0; i < 2; ++i) {
    AttentionMap& m = cv->result[i];
    AttentionParams p = in.params;  // only on a cache miss
    p.score = cv->score[i];
    EnsureScoreParams(&p, in.q, in.k);
    p.keep_intermediates = true;
    AttentionResult res;
    const Status st = Attend(in.q, in.k, in.v, p, &res);
    m.source_tokens = in.key_labels;
    m.target_tokens = in.query_labels;
    if (!st) {
      cv->error[i] = st.message;
      SetFailed(&m, (int)in.q.rows(), (int)in.k.rows(), ScoreFunctionName(p.score));
      continue;
    }
    cv->error[i].clear();
    m.name = ScoreFunctionName(p.score);
    m.weights = res.weights;
    m.steps = res.steps;
    m.has_steps = true;
    m.Touch();
  }
}

// result[2] = b - a; a and b must have the same shape.
void ComputeDifference(const AttentionMap& a, const AttentionMap& b, CompareViewState* cv) {
  AttentionMap& d = cv->result[2];
  d.source_tokens = a.source_tokens;
  d.target_tokens = a.target_tokens;
  d.has_steps = false;
  d.Touch();
  cv->max_abs_diff = 0;
  cv->max_row = cv->max_col = -1;
  if (a.weights.rows() != b.weights.rows() || a.weights.cols() != b.weights.cols()) {
    d.name = "shapes differ";
    d.weights.resize(0, 0);
    cv->diff_error = "the two maps have different shapes (" + std::to_string(a.weights.rows()) + "x" +
                     std::to_string(a.weights.cols()) + " vs " + std::to_string(b.weights.rows()) + "x" +
                     std::to_string(b.weights.cols()) + ")";
    return;
  }
  cv->diff_error.clear();
  d.name = "difference";
  d.weights = b.weights - a.weights;
  for (int r = 0; r < d.weights.rows(); ++r) {
    for (int c = 0; c < d.weights.cols(); ++c) {
      const float x = std::abs(d.weights(r, c));
      if (x > cv->max_abs_diff) cv->max_abs_diff = x, cv->max_row = r, cv->max_col = c;
    }
  }
}

void MapLabel(char* buf, size_t n, const Example& ex, int i) {
  int layer, head;
  ex.LayerHeadOf(i, &layer, &head);
  const std::string& name = ex.maps[(size_t)i].name;
  if (!name.empty())
    std::snprintf(buf, n, "%d: %s", i, name.c_str());
  else
    std::snprintf(buf, n, "%d: layer %d head %d", i, layer, head);
}

bool MapCombo(const char* id, const Example& ex, int* index) {
  char label[96];
  MapLabel(label, sizeof(label), ex, *index);
  bool changed = false;
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 12);
  if (ImGui::BeginCombo(id, label)) {
    for (int i = 0; i < (int)ex.maps.size(); ++i) {
      MapLabel(label, sizeof(label), ex, i);
      ImGui::PushID(i);
      if (ImGui::Selectable(label, i == *index)) *index = i, changed = true;
      ImGui::PopID();
    }
    ImGui::EndCombo();
  }
  return changed;
}

const ImVec4 kErrorColour(1.0f, 0.45f, 0.4f, 1);

// The style of the left and right panels: one colour range for both (the wider of their resolved
// ranges), so that a colour is the same weight on either side. Per-row and fixed ranges already are.
HeatmapStyle SharedStyle(const HeatmapStyle& style, const AttentionMap* a, const AttentionMap* b) {
  if (style.range == RangeMode::Fixed || style.scale == ScaleMode::PerRow) return style;
  HeatmapStyle r = style;
  bool any = false;
  for (const AttentionMap* m : {a, b}) {
    if (m->weights.size() == 0) continue;  // a failed panel has no range
    const HeatmapStyle one = ResolveStyle(style, *m);
    r.vmin = any ? std::min(r.vmin, one.vmin) : one.vmin;
    r.vmax = any ? std::max(r.vmax, one.vmax) : one.vmax;
    any = true;
  }
  if (any) r.range = RangeMode::Fixed;
  return r;
}

}  // namespace

void CompareView::OnExampleChanged(AppState*) {
  for (HeatmapViewState& p : state.panels) p = HeatmapViewState{};
  state.valid = false;
  state.map_index[0] = 0;
  state.map_index[1] = 1;
}

void CompareView::ReleaseTextures(AppState* s) {
  for (HeatmapViewState& p : state.panels) s->ReleaseTextures(&p);
}

bool CompareView::DrawControls(AppState* s) {
  CompareViewState& cv = state;
  Example& ex = s->Current();
  const int n_maps = (int)ex.maps.size();
  const bool can_scores = ex.has_inputs, can_maps = n_maps >= 2;
  if (cv.mode == CompareMode::Maps && !can_maps && can_scores) cv.mode = CompareMode::ScoreFunctions;
  if (cv.mode == CompareMode::ScoreFunctions && !can_scores && can_maps) cv.mode = CompareMode::Maps;
  if (!can_scores && !can_maps) {
    ImGui::TextWrapped(
        "This example has one map and no inputs: there is nothing to compare. Pick an example with "
        "q, k, v (to compare score functions) or with several heads or frames.");
    cv.valid = false;
    return false;
  }
  int mode = (int)cv.mode;
  ImGui::BeginDisabled(!can_scores);
  ImGui::RadioButton("two score functions", &mode, 0);
  ImGui::EndDisabled();
  ImGui::SameLine();
  ImGui::BeginDisabled(!can_maps);
  ImGui::RadioButton("two maps", &mode, 1);
  ImGui::EndDisabled();
  if (!can_maps && ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip("This example has a single map; heads or frames of a multi-map example can be compared");
  cv.mode = (CompareMode)mode;
  ImGui::SameLine(0, 24);
  for (int i = 0; i < 2; ++i) {
    if (cv.mode == CompareMode::ScoreFunctions) {
      int f = (int)cv.score[i];
      ImGui::SetNextItemWidth(ImGui::GetFontSize() * 10);
      if (ImGui::Combo(i == 0 ? "left" : "right", &f, kScoreLabels, IM_ARRAYSIZE(kScoreLabels)))
        cv.score[i] = (ScoreFunction)f;
    } else {
      cv.map_index[i] = std::clamp(cv.map_index[i], 0, n_maps - 1);
      MapCombo(i == 0 ? "left" : "right", ex, &cv.map_index[i]);
    }
    ImGui::SameLine();
  }
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 7);
  ImGui::SliderFloat("\xc2\xb1 range", &cv.diff_range, 0.001f, 1.0f, "%.3f", ImGuiSliderFlags_Logarithmic);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Differences of this size get the diverging colormap's end colours");
  ImGui::SameLine();
  if (ImGui::Button("fit") && cv.max_abs_diff > 0) cv.diff_range = std::max(0.001f, cv.max_abs_diff);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Set the range to the largest difference");
  return true;
}

// Recomputes only when the example's maps (their versions) or the choices change.
void CompareView::UpdateResults(AppState* s) {
  CompareViewState& cv = state;
  Example& ex = s->Current();
  const bool scores = cv.mode == CompareMode::ScoreFunctions;
  const int a = scores ? (int)cv.score[0] : cv.map_index[0];
  const int b = scores ? (int)cv.score[1] : cv.map_index[1];
  const uint64_t version =
      scores ? ex.maps[0].version : (ex.maps[(size_t)a].version * 1000003ull) ^ ex.maps[(size_t)b].version;
  if (cv.valid && cv.key_version == version && cv.key_mode == (int)cv.mode && cv.key_a == a && cv.key_b == b) return;
  if (scores) {
    ComputeScores(ex, &cv);
    ComputeDifference(cv.result[0], cv.result[1], &cv);
  } else {
    cv.error[0].clear();
    cv.error[1].clear();
    ComputeDifference(ex.maps[(size_t)a], ex.maps[(size_t)b], &cv);
  }
  cv.key_version = version;
  cv.key_mode = (int)cv.mode;
  cv.key_a = a;
  cv.key_b = b;
  cv.valid = true;
  cv.recomputes++;
}

void CompareView::DrawPanels(AppState* s, const AttentionMap* panels[3]) {
  CompareViewState& cv = state;
  const HeatmapStyle shared = SharedStyle(s->style, panels[0], panels[1]);
  HeatmapStyle diff_style = s->style;
  diff_style.colormap = Colormap::Diverging;
  diff_style.scale = ScaleMode::Global;
  diff_style.range = RangeMode::Fixed;
  diff_style.vmin = -cv.diff_range;
  diff_style.vmax = cv.diff_range;
  const float line_h = ImGui::GetTextLineHeightWithSpacing(), gap = 10.0f;
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const ImVec2 size(std::max(60.0f, (avail.x - 2 * gap) / 3.0f), std::max(60.0f, avail.y - line_h * 3.5f));
  const char* ids[3] = {"cmp_left", "cmp_right", "cmp_diff"};
  int hover_row = -1, hover_col = -1;
  for (int i = 0; i < 3; ++i) {
    if (i) ImGui::SameLine(0, gap);
    ImGui::BeginGroup();
    ImGui::PushID(i);
    if (i < 2) {
      ImGui::Text("%s: %s", i == 0 ? "left" : "right", panels[i]->name.c_str());
      if (!cv.error[i].empty()) {
        ImGui::SameLine();
        ImGui::TextColored(kErrorColour, "failed");
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", cv.error[i].c_str());
      }
    } else {
      ImGui::Text("right \xe2\x88\x92 left  (blue < 0 < red, \xc2\xb1%.3g)", cv.diff_range);
    }
    const float m = 4.0f;  // a margin around the title in the PNG
    const float title[4] = {ImGui::GetItemRectMin().x - m, ImGui::GetItemRectMin().y - m, ImGui::GetItemRectMax().x + m,
                            ImGui::GetItemRectMax().y};
    AddFigureBox(s->env.figure_rect, title);  // a PNG: the titles and the panels (the widgets add theirs)
    HeatmapViewState& v = cv.panels[i];
    v.next = nullptr;
    v.frame_mix = 0;
    v.rows_shown = 1 << 30;
    v.current_row = -1;
    v.highlight_row = cv.hover_row;  // a cell hovered in any panel is outlined in the other two
    v.highlight_col = cv.hover_col;
    if (HeatmapWidget(ids[i], *panels[i], i == 2 ? diff_style : shared, &v, s->env, size))
      hover_row = v.hover_row, hover_col = v.hover_col;
    cv.panels_drawn += v.geom.valid ? 1 : 0;
    ImGui::PopID();
    ImGui::EndGroup();
  }
  cv.hover_row = hover_row;
  cv.hover_col = hover_col;
}

// The largest change and where it is.
void CompareView::DrawSummary(const AttentionMap* panels[3], const LabelEnv& labels) {
  const CompareViewState& cv = state;
  if (!cv.diff_error.empty()) {
    ImGui::TextColored(kErrorColour, "%s", cv.diff_error.c_str());
  } else if (cv.max_row >= 0) {
    const AttentionMap& d = cv.result[2];
    const char* tgt = cv.max_row < (int)d.target_tokens.size() ? d.target_tokens[(size_t)cv.max_row].c_str() : "?";
    const char* src = cv.max_col < (int)d.source_tokens.size() ? d.source_tokens[(size_t)cv.max_col].c_str() : "?";
    const ImU32 col = ImGui::GetColorU32(ImGuiCol_Text);
    ImGui::Text("largest change %.4f at", cv.max_abs_diff);
    ImGui::SameLine();
    LabelItem(labels, tgt, col);  // tokens in any script
    ImGui::SameLine();
    ImGui::TextUnformatted("\xe2\x86\x92");
    ImGui::SameLine();
    LabelItem(labels, src, col);
    ImGui::SameLine();
    ImGui::Text(" (%.4f \xe2\x86\x92 %.4f)", panels[0]->weights(cv.max_row, cv.max_col),
                panels[1]->weights(cv.max_row, cv.max_col));
  } else {
    ImGui::TextDisabled("the two maps are identical");
  }
}

void CompareView::Draw(AppState* s) {
  state.panels_drawn = 0;
  for (HeatmapViewState& p : state.panels) p.geom.valid = false;
  if (!DrawControls(s)) return;
  UpdateResults(s);
  const AttentionMap* panels[3];
  Panels(s, panels);
  DrawPanels(s, panels);
  // The summary right under the matrices: square cells leave the panels' height below them empty
  // when the view is taller than a third of its width (it sat at the bottom of the view).
  float bottom = 0.0f;
  for (const HeatmapViewState& p : state.panels)
    if (p.geom.valid) bottom = std::max(bottom, p.geom.rect[3]);
  const ImVec2 cursor = ImGui::GetCursorScreenPos();
  const float below = bottom + 2.0f * ImGui::GetStyle().ItemSpacing.y;
  if (bottom > 0 && below < cursor.y) ImGui::SetCursorScreenPos(ImVec2(cursor.x, below));
  state.summary_y = ImGui::GetCursorScreenPos().y;
  DrawSummary(panels, s->env.labels);
}

void CompareView::Panels(AppState* s, const AttentionMap* panels[3]) const {
  for (int i = 0; i < 3; ++i) panels[i] = &state.result[i];
  const Example& ex = s->Current();
  if (state.mode == CompareMode::Maps)
    panels[0] = &ex.maps[(size_t)state.map_index[0]], panels[1] = &ex.maps[(size_t)state.map_index[1]];
}

bool CompareView::ShownMap(AppState* s, const AttentionMap** map, HeatmapStyle* style, std::string* name) {
  if (state.panels_drawn < 2) return false;
  const AttentionMap* panels[3];
  Panels(s, panels);
  *map = panels[0];
  *style = SharedStyle(*style, panels[0], panels[1]);
  if (name) *name = s->Current().title + " - left: " + panels[0]->name;
  return true;
}

void CompareView::Describe(AppState* s, JsonWriter* w) {
  const CompareViewState& cv = state;
  const bool scores = cv.mode == CompareMode::ScoreFunctions;
  w->Key("available");  // the view drew its panels last frame
  w->Bool(cv.panels_drawn == 3);
  w->Key("panels_drawn");
  w->Number(cv.panels_drawn);
  w->Key("summary_y");  // the top of the "largest change" line, in UI pixels
  w->NumberF(cv.summary_y);
  w->Key("mode");
  w->String(scores ? "scores" : "maps");
  w->Key("left");
  scores ? w->String(ScoreFunctionName(cv.score[0])) : w->Number(cv.map_index[0]);
  w->Key("right");
  scores ? w->String(ScoreFunctionName(cv.score[1])) : w->Number(cv.map_index[1]);
  w->Key("diff_range");
  w->NumberF(cv.diff_range);
  w->Key("max_abs_diff");
  w->NumberF(cv.max_abs_diff);
  w->Key("max_cell");
  w->BeginArray(true);
  w->Number(cv.max_row);
  w->Number(cv.max_col);
  w->EndArray();
  w->Key("recomputes");
  w->Number(cv.recomputes);
  w->Key("errors");
  w->BeginArray(true);
  w->String(cv.error[0]);
  w->String(cv.error[1]);
  w->String(cv.diff_error);
  w->EndArray();
  w->Key("panels");
  w->BeginArray();
  const char* ids[3] = {"compare_left", "compare_right", "compare_diff"};
  const bool shown = &s->ActiveView() == this;
  const AttentionMap* maps[3];
  Panels(s, maps);
  for (int i = 0; i < 3 && shown; ++i) DescribeHeatmap(w, ids[i], cv.panels[i].geom, maps[i]);
  w->EndArray();
}

bool CompareView::RunCommand(AppState* s, const CommandArgs& c, Status* result) {
  CompareViewState& cv = state;
  if (c.verb == "compare-scores") {
    ScoreFunction f0, f1;
    if (!ParseScoreFunction(c.Word(0), &f0) || !ParseScoreFunction(c.Word(1), &f1)) {
      *result = Status::Error("usage: compare-scores SCORE SCORE (dot, scaled_dot, general, additive, cosine)");
      return true;
    }
    cv.mode = CompareMode::ScoreFunctions;
    cv.score[0] = f0;
    cv.score[1] = f1;
  } else if (c.verb == "compare-maps") {
    int i, j;
    const int n = (int)s->Current().maps.size();
    if (!c.Int(0, &i) || !c.Int(1, &j) || i < 0 || j < 0 || i >= n || j >= n) {
      *result = Status::Error("compare-maps: map index out of range (0.." + std::to_string(n - 1) + ")");
      return true;
    }
    cv.mode = CompareMode::Maps;
    cv.map_index[0] = i;
    cv.map_index[1] = j;
  } else if (c.verb == "compare-range") {
    float r;
    if (!c.Float(0, &r) || !(r > 0) || !std::isfinite(r)) {
      *result = Status::Error("compare-range needs a positive number");
      return true;
    }
    cv.diff_range = r;
  } else {
    return false;
  }
  *result = Status::Ok();
  return true;
}

}  // namespace attnviz
