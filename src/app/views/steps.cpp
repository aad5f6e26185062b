#include "app/views/steps.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "app/app_chrome.h"
#include "app/app_state.h"
#include "imgui.h"
#include "io/json.h"

namespace attnviz {
namespace {

const char* kScoreLabels[] = {"dot", "scaled dot", "general (Luong)", "additive (Bahdanau)", "cosine"};

// "[a, b, c]" into buf, with an ellipsis when it does not fit.
void FormatVector(char* buf, size_t n, const float* x, int count, int stride = 1) {
  size_t used = 0;
  buf[0] = 0;
  auto put = [&](const char* s) {
    const int w = std::snprintf(buf + used, n - used, "%s", s);
    if (w > 0) used = std::min(n - 1, used + (size_t)w);
  };
  put("[");
  char num[32];
  for (int i = 0; i < count; ++i) {
    std::snprintf(num, sizeof(num), i ? ", %.4g" : "%.4g", x[(size_t)i * stride]);
    if (used + std::char_traits<char>::length(num) + 6 >= n) {
      put(", ...");
      break;
    }
    put(num);
  }
  put("]");
}

Status Recompute(AppState* s, StepsViewState* sv) {
  Status st = RecomputeExample(&s->Current());
  if (st)
    sv->error.clear();
  else
    sv->error = st.message;
  sv->recomputes++;
  return st;
}

// Restores the example's built-in inputs (rebuilds the examples once; only on a click).
void ResetInputs(AppState* s, StepsViewState* sv) {
  std::vector<Example> fresh;
  const Status built = BuildExamples(&fresh);
  if (!built) {
    s->Notify(built.message, true);
    return;
  }
  for (Example& f : fresh) {
    if (f.id != s->Current().id) continue;
    s->Current().inputs = f.inputs;
    (void)Recompute(s, sv);  // a failure is shown in the view
  }
}

// Editable row-major matrix data [rows, cols]: one DragFloat per cell, row labels on the left.
// Returns true when a cell was edited.
bool EditMatrix(const char* id, const char* title, float* data, int rows, int cols,
                const std::vector<std::string>* labels) {
  bool changed = false;
  ImGui::BeginGroup();
  ImGui::TextUnformatted(title);
  if (rows * cols > 1024) {
    ImGui::TextDisabled("(%d x %d: too large to edit here)", rows, cols);
    ImGui::EndGroup();
    return false;
  }
  const float cell_w = ImGui::GetFontSize() * 3.6f;
  if (rows > 0 && cols > 0 &&
      ImGui::BeginTable(id, cols + 1, ImGuiTableFlags_Borders | ImGuiTableFlags_SizingFixedFit)) {
    for (int i = 0; i < rows; ++i) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      if (labels && i < (int)labels->size())
        ImGui::TextDisabled("%s", (*labels)[(size_t)i].c_str());
      else
        ImGui::TextDisabled("%d", i);
      for (int j = 0; j < cols; ++j) {
        ImGui::TableNextColumn();
        ImGui::PushID(i * cols + j);
        ImGui::SetNextItemWidth(cell_w);
        changed |= ImGui::DragFloat("##c", &data[(size_t)i * cols + j], 0.05f, 0.0f, 0.0f, "%.4g");
        ImGui::PopID();
      }
    }
    ImGui::EndTable();
  }
  ImGui::EndGroup();
  return changed;
}

// Continues on the same line when a matrix of cols columns (EditMatrix) still fits there.
void SameLineIfFits(int cols) {
  const float gap = 24.0f;
  const float width =
      ImGui::GetFontSize() * 7.0f + cols * (ImGui::GetFontSize() * 3.6f + 2 * ImGui::GetStyle().CellPadding.x + 1);
  const float right = ImGui::GetItemRectMax().x + gap + width;
  const float limit = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
  if (right <= limit) ImGui::SameLine(0, gap);
}

// Puts the next control on this line when an item of width `item_w` labelled `label` fits, else
// wraps it to the next line (narrow embeds, 640 px wide).
void SameLineOrWrap(float item_w, const char* label) {
  const ImGuiStyle& st = ImGui::GetStyle();
  const float label_w = label ? ImGui::CalcTextSize(label, nullptr, true).x + st.ItemInnerSpacing.x : 0.0f;
  const float right = ImGui::GetItemRectMax().x + st.ItemSpacing.x + item_w + label_w;
  if (right <= ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x) ImGui::SameLine();
}

bool EditMatrix(const char* id, const char* title, MatrixRM* m, const std::vector<std::string>* labels) {
  return EditMatrix(id, title, m->data(), (int)m->rows(), (int)m->cols(), labels);
}

const char* RawHeader(ScoreFunction f) {
  switch (f) {
    case ScoreFunction::General:
      return "score q^T W k";
    case ScoreFunction::Additive:
      return "score v\xc2\xb7tanh(Wq q + Wk k)";
    case ScoreFunction::Cosine:
      return "score cos(q, k)";
    default:
      return "score q\xc2\xb7k";
  }
}

const char* ScaledHeader(ScoreFunction f) {
  switch (f) {
    case ScoreFunction::ScaledDot:
      return "s = score \xc3\xb7 \xe2\x88\x9a"
             "d \xc3\xb7 T";
    case ScoreFunction::Cosine:
      return "s = score \xc3\xb7 \xcf\x84 \xc3\xb7 T";
    default:
      return "s = score \xc3\xb7 T";
  }
}

// The whole weight matrix, coloured like the heatmap; clicking a row shows its steps above.
void DrawAllRows(AppState* s, const AttentionMap& m, const AttentionInputs& in, StepsViewState* sv) {
  const int n_q = (int)m.weights.rows(), n_k = (int)m.weights.cols();
  if (n_q > 64 || n_k > 32) return;
  ImGui::Spacing();
  if (!ImGui::CollapsingHeader("All rows: softmax weights (click a row to show its steps)",
                               ImGuiTreeNodeFlags_DefaultOpen))
    return;
  const ImGuiTableFlags tf = ImGuiTableFlags_Borders | ImGuiTableFlags_SizingFixedFit;
  if (!ImGui::BeginTable("all_rows", n_k + 1, tf)) return;
  const HeatmapStyle style = ResolveStyle(s->style, m);
  ImGui::TableSetupColumn("query \\ key");
  for (int j = 0; j < n_k; ++j)
    ImGui::TableSetupColumn(j < (int)in.key_labels.size() ? in.key_labels[(size_t)j].c_str() : "?");
  ImGui::TableHeadersRow();
  char buf[32];
  for (int i = 0; i < n_q; ++i) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::PushID(i);
    if (ImGui::Selectable(i < (int)in.query_labels.size() ? in.query_labels[(size_t)i].c_str() : "?", i == sv->row,
                          ImGuiSelectableFlags_SpanAllColumns))
      sv->row = i;
    ImGui::PopID();
    const float row_max = m.weights.row(i).maxCoeff();
    for (int j = 0; j < n_k; ++j) {
      ImGui::TableNextColumn();
      const float w = m.weights(i, j);
      uint8_t rgb[3];
      ColormapSample(style.colormap, HeatmapT(style, w, row_max), rgb);
      ImGui::TableSetBgColor(ImGuiTableBgTarget_CellBg, IM_COL32(rgb[0], rgb[1], rgb[2], 255));
      std::snprintf(buf, sizeof(buf), "%.4f", w);
      ImGui::PushStyleColor(ImGuiCol_Text, ContrastingTextColor(rgb));
      ImGui::TextUnformatted(buf);
      ImGui::PopStyleColor();
    }
  }
  ImGui::EndTable();
}

void DrawPresets(AppState* s) {
  ImGui::TextDisabled("presets");
  const char* presets[][2] = {
      {"seed000", "Seed 000 (additive)"}, {"seed002", "Seed 002 (dot)"}, {"seed004", "Seed 004 (scaled dot)"}};
  for (const auto& p : presets) {
    ImGui::SameLine();
    if (!ImGui::Button(p[1])) continue;
    const Status st = SelectExampleById(s, p[0]);
    if (!st) s->Notify(st.message, true);
  }
}

// The query row, the score function and its parameters. Returns true when an input changed.
bool DrawControls(AppState* s, AttentionInputs& in, StepsViewState* sv) {
  bool changed = false;
  const int n_q = (int)in.q.rows();
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 10);
  const char* row_label = sv->row < (int)in.query_labels.size() ? in.query_labels[(size_t)sv->row].c_str() : "";
  if (ImGui::BeginCombo("query row", row_label)) {
    for (int i = 0; i < n_q; ++i) {
      ImGui::PushID(i);
      if (ImGui::Selectable(i < (int)in.query_labels.size() ? in.query_labels[(size_t)i].c_str() : "?", i == sv->row))
        sv->row = i;
      ImGui::PopID();
    }
    ImGui::EndCombo();
  }
  int score = (int)in.params.score;
  SameLineOrWrap(ImGui::GetFontSize() * 10, "score");
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 10);
  if (ImGui::Combo("score", &score, kScoreLabels, IM_ARRAYSIZE(kScoreLabels))) {
    in.params.score = (ScoreFunction)score;
    EnsureScoreParams(&in.params, in.q, in.k);
    changed = true;
  }
  SameLineOrWrap(ImGui::GetFontSize() * 8, "temperature T");
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 8);
  changed |=
      ImGui::SliderFloat("temperature T", &in.params.temperature, 0.05f, 20.0f, "%.3g", ImGuiSliderFlags_Logarithmic);
  if (in.params.score == ScoreFunction::Cosine) {
    SameLineOrWrap(ImGui::GetFontSize() * 7, "cosine \xcf\x84");
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 7);
    changed |= ImGui::SliderFloat("cosine \xcf\x84", &in.params.cosine_temperature, 0.01f, 2.0f, "%.3g",
                                  ImGuiSliderFlags_Logarithmic);
  }
  SameLineOrWrap(ImGui::GetFrameHeight(), "causal mask");
  changed |= ImGui::Checkbox("causal mask", &in.params.mask.causal);
  SameLineOrWrap(ImGui::CalcTextSize("reset inputs").x + 2 * ImGui::GetStyle().FramePadding.x, nullptr);
  if (ImGui::Button("reset inputs")) ResetInputs(s, sv);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Back to the example's original q, k, v and parameters");
  return changed;
}

// q, k, v and the score function's parameters, editable. Returns true when one was edited.
// In a short box (an embed of 360 px) they start folded, so the computation table shows first.
bool DrawInputs(AttentionInputs& in) {
  const bool roomy = ImGui::GetContentRegionAvail().y > ImGui::GetTextLineHeightWithSpacing() * 24;
  ImGui::SetNextItemOpen(roomy, ImGuiCond_Once);
  if (!ImGui::CollapsingHeader("Inputs (drag a number, or double-click to type one)")) return false;
  bool changed = EditMatrix("q", "queries q  [n_q, d]", &in.q, &in.query_labels);
  SameLineIfFits((int)in.k.cols());
  changed |= EditMatrix("k", "keys k  [n_k, d]", &in.k, &in.key_labels);
  SameLineIfFits((int)in.v.cols());
  changed |= EditMatrix("v", "values v  [n_k, d_v]", &in.v, &in.key_labels);
  if (in.params.score == ScoreFunction::General) changed |= EditMatrix("W", "W  [d_q, d_k]", &in.params.W, nullptr);
  if (in.params.score == ScoreFunction::Additive) {
    changed |= EditMatrix("Wq", "W_q  [a, d_q]", &in.params.W_q, nullptr);
    SameLineIfFits((int)in.params.W_k.cols());
    changed |= EditMatrix("Wk", "W_k  [a, d_k]", &in.params.W_k, nullptr);
    SameLineIfFits((int)in.params.v.size());
    changed |= EditMatrix("va", "v  [a]", in.params.v.data(), 1, (int)in.params.v.size(), nullptr);
  }
  return changed;
}

void SetupTableColumns(ScoreFunction f) {
  ImGui::TableSetupColumn("key j");
  ImGui::TableSetupColumn("k_j");
  ImGui::TableSetupColumn(RawHeader(f));
  ImGui::TableSetupColumn(ScaledHeader(f));
  ImGui::TableSetupColumn("+ mask");
  ImGui::TableSetupColumn("exp(s \xe2\x88\x92 max)");
  ImGui::TableSetupColumn("weight = exp / \xce\xa3");
  ImGui::TableSetupColumn("weight \xc3\x97 v_j");
  ImGui::TableHeadersRow();
}

// One key's row of the computation table; records the numbers it shows.
void DrawKeyRow(const AttentionMap& m, const AttentionInputs& in, int r, int j, bool best, StepsViewState* sv) {
  const AttentionSteps& st = m.steps;
  char buf[256];
  ImGui::TableNextRow();
  // Amber behind the largest weight, and slate behind the sums, each in the theme's tone (the dark
  // theme's slate left the light theme's black text unreadable).
  if (best)
    ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg1,
                           LightStyle() ? IM_COL32(255, 205, 90, 120) : IM_COL32(90, 70, 20, 160));
  ImGui::TableNextColumn();
  ImGui::Text("%s", j < (int)in.key_labels.size() ? in.key_labels[(size_t)j].c_str() : "?");
  ImGui::TableNextColumn();
  FormatVector(buf, sizeof(buf), in.k.row(j).data(), (int)in.k.cols());
  ImGui::TextUnformatted(buf);
  ImGui::TableNextColumn();
  ImGui::Text("%.6g", st.raw_scores(r, j));
  ImGui::TableNextColumn();
  ImGui::Text("%.6g", st.scaled(r, j));
  ImGui::TableNextColumn();
  if (std::isinf(st.masked(r, j)))
    ImGui::TextDisabled("\xe2\x88\x92\xe2\x88\x9e (masked)");
  else
    ImGui::Text("%.6g", st.masked(r, j));
  ImGui::TableNextColumn();
  ImGui::Text("%.4g", st.exp(r, j));
  ImGui::TableNextColumn();
  ImGui::Text("%.4f", m.weights(r, j));
  ImGui::TableNextColumn();
  const int d_v = (int)in.v.cols();
  float weighted[64];  // FormatVector shows at most ~40 numbers anyway
  const int shown = std::min(d_v, 64);
  for (int c = 0; c < shown; ++c) weighted[c] = m.weights(r, j) * in.v(j, c);
  FormatVector(buf, sizeof(buf), weighted, shown);
  ImGui::TextUnformatted(buf);
  sv->shown_scores.push_back(st.raw_scores(r, j));
  sv->shown_weights.push_back(m.weights(r, j));
}

// The computation of row r as a table: each key's score, scaling, mask, exp, weight, weighted value.
void DrawComputationTable(const AttentionMap& m, const AttentionInputs& in, int r, StepsViewState* sv) {
  const int n_k = (int)in.k.rows(), d_v = (int)in.v.cols();
  const ImGuiTableFlags tf = ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit;
  sv->table_visible = ImGui::IsRectVisible(ImVec2(1, ImGui::GetTextLineHeightWithSpacing() * 2));
  if (!ImGui::BeginTable("computation", 8, tf)) return;
  SetupTableColumns(in.params.score);
  int best = 0;
  for (int j = 1; j < n_k; ++j) best = m.weights(r, j) > m.weights(r, best) ? j : best;
  for (int j = 0; j < n_k; ++j) DrawKeyRow(m, in, r, j, j == best, sv);
  char buf[256];
  ImGui::TableNextRow(ImGuiTableRowFlags_None);
  ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg1,
                         LightStyle() ? IM_COL32(185, 200, 225, 255) : IM_COL32(40, 60, 90, 200));
  ImGui::TableNextColumn();
  ImGui::TextUnformatted("\xce\xa3 (sum)");
  for (int c = 0; c < 5; ++c) ImGui::TableNextColumn();  // to the exp column
  ImGui::Text("%.4g", m.steps.row_sum[r]);
  ImGui::TableNextColumn();
  ImGui::Text("%.4f", m.weights.row(r).sum());
  ImGui::TableNextColumn();
  FormatVector(buf, sizeof(buf), sv->context.data(), d_v);
  ImGui::TextUnformatted(buf);
  ImGui::EndTable();
  sv->shown_row = r;
}

// The query, the constants, the table and the context vector of the selected row.
void DrawRowSteps(const AttentionMap& m, const AttentionInputs& in, StepsViewState* sv) {
  const int r = sv->row, n_k = (int)in.k.rows(), d_v = (int)in.v.cols();
  const AttentionSteps& st = m.steps;
  // Context vector c = sum_j w_j v_j, into a buffer kept across frames.
  sv->context.assign((size_t)d_v, 0.0f);
  for (int j = 0; j < n_k; ++j)
    for (int c = 0; c < d_v; ++c) sv->context[(size_t)c] += m.weights(r, j) * in.v(j, c);
  char buf[256];
  ImGui::Spacing();
  FormatVector(buf, sizeof(buf), in.q.row(r).data(), (int)in.q.cols());
  ImGui::Text("query %s = %s", in.query_labels.size() > (size_t)r ? in.query_labels[(size_t)r].c_str() : "", buf);
  const float d = (float)in.k.cols();
  ImGui::TextDisabled(
      "d = %d,  \xe2\x88\x9a"
      "d = %.4g,  T = %.4g,  row max of s = %.6g,  weight = exp(s \xe2\x88\x92 max) / \xce\xa3 exp",
      (int)d, std::sqrt(d), in.params.temperature, st.row_max.size() > r ? st.row_max[r] : 0.0f);
  DrawComputationTable(m, in, r, sv);
  FormatVector(buf, sizeof(buf), sv->context.data(), d_v);
  ImGui::Text("context vector c = \xce\xa3 weight_j v_j = %s", buf);
  ImGui::TextDisabled(
      "The highlighted key gets the largest weight; masked keys show \xe2\x88\x92\xe2\x88\x9e and get weight 0.");
  DrawQueryKeyProduct(in.q, in.k, r, in.key_labels, &st.raw_scores(r, 0), RawHeader(in.params.score), &m.weights(r, 0),
                      "inputs", &sv->qk);
  if (in.params.score != ScoreFunction::Dot && in.params.score != ScoreFunction::ScaledDot)
    ImGui::TextDisabled("With the %s score the score is not q\xc2\xb7k: the cells show what a dot product would give.",
                        ScoreFunctionName(in.params.score));
}

bool HasSteps(const AttentionMap& m, const AttentionInputs& in, int r) {
  const int n_q = (int)in.q.rows(), n_k = (int)in.k.rows();
  return m.has_steps && m.steps.raw_scores.rows() == n_q && m.steps.raw_scores.cols() == n_k &&
         m.weights.rows() == n_q && r < (int)m.steps.row_sum.size();
}

void WriteRow(JsonWriter* w, const char* key, const MatrixRM& m, int r) {
  w->Key(key);
  w->BeginArray(true);
  for (int j = 0; r < m.rows() && j < m.cols(); ++j) w->NumberF(m(r, j));
  w->EndArray();
}

void WriteFloats(JsonWriter* w, const char* key, const std::vector<float>& v) {
  w->Key(key);
  w->BeginArray(true);
  for (float x : v) w->NumberF(x);
  w->EndArray();
}

}  // namespace

void StepsView::Draw(AppState* s) {
  StepsViewState& sv = state;
  sv.shown_row = -1;
  sv.table_visible = false;
  sv.shown_scores.clear();
  sv.shown_weights.clear();
  sv.qk = QueryKeyProductShown();
  DrawPresets(s);
  Example& ex = s->Current();
  if (!ex.has_inputs && DrawFileQueryKey(s->CurrentMap(), &sv.row, &sv.qk)) return;  // the file's own q and k
  if (!ex.has_inputs) {
    ImGui::Spacing();
    ImGui::TextWrapped(
        "\"%s\" holds attention weights only (no queries, keys or values), so there is no computation "
        "to show step by step. Pick a preset above or a built-in example to see every step.",
        ex.title.c_str());
    return;
  }
  AttentionInputs& in = ex.inputs;
  sv.row = std::clamp(sv.row, 0, std::max(0, (int)in.q.rows() - 1));
  bool changed = DrawControls(s, in, &sv);
  ImGui::BeginChild("steps_scroll", ImVec2(0, 0), false, ImGuiWindowFlags_HorizontalScrollbar);
  changed |= DrawInputs(in);
  if (changed) (void)Recompute(s, &sv);  // a failure is shown below
  if (!sv.error.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.45f, 0.4f, 1));
    ImGui::TextWrapped("%s", sv.error.c_str());
    ImGui::PopStyleColor();
    ImGui::TextDisabled("The tables below show the last computation that succeeded.");
  }
  const AttentionMap& m = ex.maps[0];
  if (!HasSteps(m, in, sv.row)) {
    ImGui::TextDisabled("(no intermediate results for this example)");
  } else {
    DrawRowSteps(m, in, &sv);
    if (in.q.rows() > 1) DrawAllRows(s, m, in, &sv);
  }
  sv.scroll_y = ImGui::GetScrollY();
  ImGui::EndChild();
}

void StepsView::Describe(AppState* s, JsonWriter* w) {
  const StepsViewState& sv = state;
  Example& ex = s->Current();
  w->Key("has_inputs");
  w->Bool(ex.has_inputs);
  w->Key("row");
  w->Number(sv.row);
  w->Key("error");
  w->String(sv.error);
  w->Key("recomputes");
  w->Number(sv.recomputes);
  // What the table showed last frame (empty when the view was not drawn).
  w->Key("shown_row");
  w->Number(sv.shown_row);
  w->Key("table_visible");
  w->Bool(sv.table_visible);
  w->Key("scroll_y");
  w->NumberF(sv.scroll_y);
  WriteFloats(w, "shown_scores", sv.shown_scores);
  WriteFloats(w, "shown_weights", sv.shown_weights);
  DescribeQueryKeyProduct(w, sv.qk);
  const AttentionMap& m = ex.maps[0];
  const int r = sv.row;
  if (!ex.has_inputs || !HasSteps(m, ex.inputs, r)) return;
  w->Key("score");
  w->String(ScoreFunctionName(ex.inputs.params.score));
  w->Key("temperature");
  w->NumberF(ex.inputs.params.temperature);
  WriteRow(w, "q", ex.inputs.q, r);
  WriteRow(w, "scores", m.steps.raw_scores, r);
  WriteRow(w, "scaled", m.steps.scaled, r);
  WriteRow(w, "masked", m.steps.masked, r);  // -inf (masked) is null: see io/json.h
  WriteRow(w, "exp", m.steps.exp, r);
  w->Key("row_sum");
  w->NumberF(m.steps.row_sum[r]);
  WriteRow(w, "weights", m.weights, r);
  // The context vector straight from the weights and v (the view's buffer exists only once drawn).
  const MatrixRM& v = ex.inputs.v;
  w->Key("context");
  w->BeginArray(true);
  for (int c = 0; c < v.cols(); ++c) {
    double acc = 0;
    for (int j = 0; j < v.rows() && j < m.weights.cols(); ++j) acc += (double)m.weights(r, j) * v(j, c);
    w->NumberF((float)acc);
  }
  w->EndArray();
}

namespace {

// steps-set q|k|v ROW COL VALUE (VALUE may be nan or inf: the core must reject it).
Status SetInput(AttentionInputs& in, const CommandArgs& c) {
  const std::string& which = c.Word(0);
  MatrixRM* m = which == "q" ? &in.q : (which == "k" ? &in.k : (which == "v" ? &in.v : nullptr));
  int i, j;
  float x;
  if (!m || !c.Int(1, &i) || !c.Int(2, &j) || !c.Float(3, &x))
    return Status::Error("usage: steps-set q|k|v ROW COL VALUE");
  if (i < 0 || j < 0 || i >= m->rows() || j >= m->cols()) return Status::Error("steps-set: cell out of range");
  (*m)(i, j) = x;
  return Status::Ok();
}

}  // namespace

void StepsView::OnExampleChanged(AppState*) {
  const int recomputes = state.recomputes;  // a running count, kept across examples
  state = StepsViewState{};
  state.recomputes = recomputes;
}

bool StepsView::RunCommand(AppState* s, const CommandArgs& c, Status* result) {
  const bool edit = c.verb == "steps-score" || c.verb == "steps-set" || c.verb == "steps-temperature";
  if (c.verb != "steps-row" && !edit) return false;
  Example& ex = s->Current();
  AttentionInputs& in = ex.inputs;
  if (!ex.has_inputs) {
    *result = Status::Error(ex.title + " has no inputs (q, k, v) to show step by step");
    return true;
  }
  if (c.verb == "steps-row") {
    int r;
    if (!c.Int(0, &r) || r < 0 || r >= in.q.rows())
      *result = Status::Error("steps-row: row out of range (0.." + std::to_string(in.q.rows() - 1) + ")");
    else
      state.row = r, *result = Status::Ok();
    return true;
  }
  Status parsed = Status::Ok();
  if (c.verb == "steps-score") {
    if (!ParseScoreFunction(c.Word(0), &in.params.score))
      parsed = Status::Error("unknown score function '" + c.Word(0) + "'");
    else
      EnsureScoreParams(&in.params, in.q, in.k);
  } else if (c.verb == "steps-temperature") {
    if (!c.Float(0, &in.params.temperature)) parsed = Status::Error("steps-temperature needs a number");
  } else {
    parsed = SetInput(in, c);
  }
  // A failed recompute is also shown in the view; the caller of command() gets it too.
  *result = parsed ? Recompute(s, &state) : parsed;
  return true;
}

}  // namespace attnviz
