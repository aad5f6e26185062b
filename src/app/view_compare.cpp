// The compare view: two attention maps side by side on the same inputs, and their difference
// (right - left) in the diverging colormap, 0 at its centre. Either two score functions on the
// current example's q, k, v (computed here with Attend and cached until something changes) or
// two maps (heads, frames) of the current example.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "app/views_extra.h"
#include "imgui.h"

namespace attnviz {
namespace {

const char* kScoreLabels[] = {"dot", "scaled dot", "general (Luong)", "additive (Bahdanau)", "cosine"};

void SetFailed(AttentionMap* m, int rows, int cols, const std::string& name) {
  m->name = name;
  m->weights.setZero(rows, cols);
  m->has_steps = false;
  m->version++;
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
    m.version++;
  }
}

// result[2] = b - a; a and b must have the same shape.
void ComputeDifference(const AttentionMap& a, const AttentionMap& b, CompareViewState* cv) {
  AttentionMap& d = cv->result[2];
  d.source_tokens = a.source_tokens;
  d.target_tokens = a.target_tokens;
  d.has_steps = false;
  d.version++;
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
  const int heads = std::max(1, ex.heads);
  const std::string& name = ex.maps[(size_t)i].name;
  if (!name.empty()) std::snprintf(buf, n, "%d: %s", i, name.c_str());
  else std::snprintf(buf, n, "%d: layer %d head %d", i, i / heads, i % heads);
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

}  // namespace

void DrawCompareView(AppState* s) {
  CompareViewState& cv = ViewsOf(s)->compare;
  Example& ex = s->Current();
  const int n_maps = (int)ex.maps.size();
  const bool can_scores = ex.has_inputs, can_maps = n_maps >= 2;
  if (cv.mode == CompareMode::Maps && !can_maps && can_scores) cv.mode = CompareMode::ScoreFunctions;
  if (cv.mode == CompareMode::ScoreFunctions && !can_scores && can_maps) cv.mode = CompareMode::Maps;
  if (!can_scores && !can_maps) {
    ImGui::TextWrapped("This example has one map and no inputs: there is nothing to compare. Pick an example with "
                       "q, k, v (to compare score functions) or with several heads or frames.");
    cv.valid = false;
    return;
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
  if (cv.mode == CompareMode::ScoreFunctions) {
    for (int i = 0; i < 2; ++i) {
      int f = (int)cv.score[i];
      ImGui::SetNextItemWidth(ImGui::GetFontSize() * 10);
      if (ImGui::Combo(i == 0 ? "left" : "right", &f, kScoreLabels, IM_ARRAYSIZE(kScoreLabels))) cv.score[i] = (ScoreFunction)f;
      ImGui::SameLine();
    }
  } else {
    for (int i = 0; i < 2; ++i) {
      cv.map_index[i] = std::clamp(cv.map_index[i], 0, n_maps - 1);
      MapCombo(i == 0 ? "left" : "right", ex, &cv.map_index[i]);
      ImGui::SameLine();
    }
  }
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 7);
  ImGui::SliderFloat("\xc2\xb1 range", &cv.diff_range, 0.001f, 1.0f, "%.3f", ImGuiSliderFlags_Logarithmic);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Differences of this size get the diverging colormap's end colours");
  ImGui::SameLine();
  if (ImGui::Button("fit") && cv.max_abs_diff > 0) cv.diff_range = std::max(0.001f, cv.max_abs_diff);

  // Cache: recompute only when the example, its inputs (maps' versions) or the choices change.
  const int a = cv.mode == CompareMode::ScoreFunctions ? (int)cv.score[0] : cv.map_index[0];
  const int b = cv.mode == CompareMode::ScoreFunctions ? (int)cv.score[1] : cv.map_index[1];
  const uint64_t version = cv.mode == CompareMode::ScoreFunctions
                               ? ex.maps[0].version
                               : (ex.maps[(size_t)a].version * 1000003ull) ^ ex.maps[(size_t)b].version;
  if (!cv.valid || cv.key_example != s->current || cv.key_owner != &ex || cv.key_version != version ||
      cv.key_mode != (int)cv.mode || cv.key_a != a || cv.key_b != b) {
    if (cv.mode == CompareMode::ScoreFunctions) {
      ComputeScores(ex, &cv);
      ComputeDifference(cv.result[0], cv.result[1], &cv);
    } else {
      cv.error[0].clear();
      cv.error[1].clear();
      ComputeDifference(ex.maps[(size_t)a], ex.maps[(size_t)b], &cv);
    }
    cv.key_example = s->current;
    cv.key_owner = &ex;
    cv.key_version = version;
    cv.key_mode = (int)cv.mode;
    cv.key_a = a;
    cv.key_b = b;
    cv.valid = true;
    cv.recomputes++;
  }
  const AttentionMap* panels[3] = {&cv.result[0], &cv.result[1], &cv.result[2]};
  if (cv.mode == CompareMode::Maps) panels[0] = &ex.maps[(size_t)a], panels[1] = &ex.maps[(size_t)b];

  // A cell hovered in any panel is outlined in the other two.
  for (int i = 0; i < 3; ++i) {
    s->compare_views[i].highlight_row = cv.hover_row;
    s->compare_views[i].highlight_col = cv.hover_col;
  }
  HeatmapStyle diff_style = s->style;
  diff_style.colormap = Colormap::Diverging;
  diff_style.scale = ScaleMode::Global;
  diff_style.vmin = -cv.diff_range;
  diff_style.vmax = cv.diff_range;

  const float line_h = ImGui::GetTextLineHeightWithSpacing(), gap = 10.0f;
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float panel_w = std::max(60.0f, (avail.x - 2 * gap) / 3.0f);
  const float panel_h = std::max(60.0f, avail.y - line_h * 3.5f);
  int hover_row = -1, hover_col = -1;
  char caption[128];
  for (int i = 0; i < 3; ++i) {
    if (i) ImGui::SameLine(0, gap);
    ImGui::BeginGroup();
    ImGui::PushID(i);
    if (i < 2) {
      std::snprintf(caption, sizeof(caption), "%s: %s", i == 0 ? "left" : "right", panels[i]->name.c_str());
      ImGui::TextUnformatted(caption);
      if (!cv.error[i].empty()) {
        ImGui::SameLine();
        ImGui::TextColored(ImVec4(1.0f, 0.45f, 0.4f, 1), "failed");
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", cv.error[i].c_str());
      }
    } else {
      ImGui::Text("right \xe2\x88\x92 left  (blue < 0 < red, \xc2\xb1%.3g)", cv.diff_range);
    }
    HeatmapViewState& v = s->compare_views[i];
    v.next = nullptr;
    v.frame_mix = 0;
    v.rows_shown = 1 << 30;
    v.current_row = -1;
    if (HeatmapWidget(i == 0 ? "cmp_left" : (i == 1 ? "cmp_right" : "cmp_diff"), *panels[i], i == 2 ? diff_style : s->style,
                      &v, s->env, ImVec2(panel_w, panel_h))) {
      hover_row = v.hover_row;
      hover_col = v.hover_col;
    }
    ImGui::PopID();
    ImGui::EndGroup();
  }
  cv.hover_row = hover_row;
  cv.hover_col = hover_col;

  // Summary: the largest change and where it is.
  if (!cv.diff_error.empty()) {
    ImGui::TextColored(ImVec4(1.0f, 0.45f, 0.4f, 1), "%s", cv.diff_error.c_str());
  } else if (cv.max_row >= 0) {
    const AttentionMap& d = cv.result[2];
    const char* tgt = cv.max_row < (int)d.target_tokens.size() ? d.target_tokens[(size_t)cv.max_row].c_str() : "?";
    const char* src = cv.max_col < (int)d.source_tokens.size() ? d.source_tokens[(size_t)cv.max_col].c_str() : "?";
    ImGui::Text("largest change %.4f at %s \xe2\x86\x92 %s  (%.4f \xe2\x86\x92 %.4f)", cv.max_abs_diff, tgt, src,
                panels[0]->weights(cv.max_row, cv.max_col), panels[1]->weights(cv.max_row, cv.max_col));
  } else {
    ImGui::TextDisabled("the two maps are identical");
  }
}

}  // namespace attnviz
