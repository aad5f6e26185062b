// The machine interface of the lines, grid, steps and compare views: their state (one per
// AppState), their commands, and the description browser tests read (what the lines view drew,
// the grid's order and statistics, the step view's numbers, the compare view's panels).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "app/views_extra.h"
#include "imgui.h"

namespace attnviz {

ViewsState* ViewsOf(AppState* s) {
  // One app per process in practice. A different AppState, or a new ImGui context (tests start
  // several apps, possibly at the same address), starts afresh.
  static ViewsState state;
  const int frame = ImGui::GetFrameCount();
  if (state.owner != s || frame < state.last_frame) {
    state = ViewsState{};
    state.owner = s;
  }
  state.last_frame = frame;
  return &state;
}

namespace {

void Str(std::string* out, const char* s) {
  out->push_back('"');
  for (const unsigned char* p = (const unsigned char*)s; *p; ++p) {
    if (*p == '"' || *p == '\\') {
      out->push_back('\\');
      out->push_back((char)*p);
    } else if (*p < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", *p);
      out->append(buf);
    } else {
      out->push_back((char)*p);
    }
  }
  out->push_back('"');
}

void Num(std::string* out, double v) {
  char buf[32];
  if (std::isnan(v)) {
    out->append("null");  // e.g. a NaN typed into q in the step view
    return;
  }
  if (std::isinf(v)) v = v > 0 ? 3.4e38 : -3.4e38;  // JSON has no infinity; masked scores read as -3.4e38
  std::snprintf(buf, sizeof(buf), "%.7g", v);
  out->append(buf);
}

void Int(std::string* out, long long v) { out->append(std::to_string(v)); }

void Key(std::string* out, const char* k) {
  Str(out, k);
  out->push_back(':');
}

void RowArray(std::string* out, const char* key, const MatrixRM& m, int r) {
  out->push_back(',');
  Key(out, key);
  out->push_back('[');
  for (int j = 0; r < m.rows() && j < m.cols(); ++j) {
    if (j) out->push_back(',');
    Num(out, m(r, j));
  }
  out->push_back(']');
}

void Rect(std::string* out, const float r[4]) {
  out->push_back('[');
  for (int i = 0; i < 4; ++i) {
    if (i) out->push_back(',');
    Num(out, r[i]);
  }
  out->push_back(']');
}

void DescribeLines(const LinesViewState& l, std::string* out) {
  out->append(",\"lines\":{\"drawn\":");
  Int(out, l.drawn);
  out->append(",\"hovered_source\":");
  Int(out, l.hovered_source);
  out->append(",\"hovered_target\":");
  Int(out, l.hovered_target);
  out->append(",\"rows_shown\":");
  Int(out, l.rows_shown);
  out->append(",\"threshold\":");
  Num(out, l.effective_threshold);
  out->append(",\"colormap_colours\":");
  out->append(l.use_colormap ? "true" : "false");
  out->append(",\"valid\":");
  out->append(l.rect_valid ? "true" : "false");
  out->append(",\"rect\":");
  Rect(out, l.rect);
  out->append("}");
}

void DescribeGrid(const GridViewState& g, std::string* out) {
  out->append(",\"grid\":{\"sort\":");
  Str(out, GridSortName(g.sort));
  out->append(",\"clicked\":");
  Int(out, g.clicked);
  out->append(",\"order\":[");
  for (size_t i = 0; i < g.order.size(); ++i) {
    if (i) out->push_back(',');
    Int(out, g.order[i]);
  }
  out->append("],\"stats\":[");
  for (size_t i = 0; i < g.stats.size(); ++i) {
    const HeadStats& h = g.stats[i];
    if (i) out->push_back(',');
    out->append("{\"entropy\":");
    Num(out, h.entropy);
    out->append(",\"entropy_normalized\":");
    Num(out, h.entropy_normalized);
    out->append(",\"max_weight\":");
    Num(out, h.max_weight);
    out->append(",\"first_token\":");
    Num(out, h.first_token);
    out->append(",\"diagonality\":");
    Num(out, h.diagonality);
    out->append(",\"dominant_offset\":");
    Int(out, h.dominant_offset);
    out->append(",\"dominant_offset_mass\":");
    Num(out, h.dominant_offset_mass);
    out->append(",\"ok\":");
    out->append(i < g.stats_ok.size() && g.stats_ok[i] ? "true" : "false");
    out->append("}");
  }
  out->append("]}");
}

void DescribeSteps(AppState* s, const StepsViewState& sv, std::string* out) {
  Example& ex = s->Current();
  out->append(",\"steps\":{\"has_inputs\":");
  out->append(ex.has_inputs ? "true" : "false");
  out->append(",\"row\":");
  Int(out, sv.row);
  out->append(",\"error\":");
  Str(out, sv.error.c_str());
  out->append(",\"recomputes\":");
  Int(out, sv.recomputes);
  const AttentionMap& m = ex.maps[0];
  const int r = sv.row;
  if (ex.has_inputs && m.has_steps && r < m.steps.raw_scores.rows() && r < m.steps.row_sum.size()) {
    out->append(",\"score\":");
    Str(out, ScoreFunctionName(ex.inputs.params.score));
    out->append(",\"temperature\":");
    Num(out, ex.inputs.params.temperature);
    RowArray(out, "q", ex.inputs.q, r);
    RowArray(out, "scores", m.steps.raw_scores, r);
    RowArray(out, "scaled", m.steps.scaled, r);
    RowArray(out, "masked", m.steps.masked, r);
    RowArray(out, "exp", m.steps.exp, r);
    out->append(",\"row_sum\":");
    Num(out, m.steps.row_sum[r]);
    RowArray(out, "weights", m.weights, r);
    // The context vector straight from the weights and v (not the view's buffer, which exists
    // only once the view was drawn).
    out->append(",\"context\":[");
    const MatrixRM& v = ex.inputs.v;
    for (int c = 0; c < v.cols(); ++c) {
      double acc = 0;
      for (int j = 0; j < v.rows() && j < m.weights.cols(); ++j) acc += (double)m.weights(r, j) * v(j, c);
      if (c) out->push_back(',');
      Num(out, acc);
    }
    out->append("]");
  }
  out->append("}");
}

void DescribeCompare(AppState* s, const CompareViewState& cv, std::string* out) {
  out->append(",\"compare\":{\"available\":");
  out->append(s->Current().has_inputs || s->Current().maps.size() >= 2 ? "true" : "false");
  out->append(",\"mode\":");
  Str(out, cv.mode == CompareMode::ScoreFunctions ? "scores" : "maps");
  out->append(",\"left\":");
  if (cv.mode == CompareMode::ScoreFunctions) Str(out, ScoreFunctionName(cv.score[0]));
  else Int(out, cv.map_index[0]);
  out->append(",\"right\":");
  if (cv.mode == CompareMode::ScoreFunctions) Str(out, ScoreFunctionName(cv.score[1]));
  else Int(out, cv.map_index[1]);
  out->append(",\"diff_range\":");
  Num(out, cv.diff_range);
  out->append(",\"max_abs_diff\":");
  Num(out, cv.max_abs_diff);
  out->append(",\"max_cell\":[");
  Int(out, cv.max_row);
  out->push_back(',');
  Int(out, cv.max_col);
  out->append("],\"recomputes\":");
  Int(out, cv.recomputes);
  out->append(",\"errors\":[");
  Str(out, cv.error[0].c_str());
  out->push_back(',');
  Str(out, cv.error[1].c_str());
  out->push_back(',');
  Str(out, cv.diff_error.c_str());
  out->append("],\"panels\":[");
  const char* ids[3] = {"compare_left", "compare_right", "compare_diff"};
  bool first = true;
  for (int i = 0; i < 3; ++i) {
    const HeatmapGeometry& g = s->compare_views[i].geom;
    if (!g.valid || s->view != View::Compare) continue;
    if (!first) out->push_back(',');
    first = false;
    out->append("{\"id\":");
    Str(out, ids[i]);
    out->append(",\"rect\":");
    Rect(out, g.rect);
    out->append(",\"view\":");
    Rect(out, g.view);
    out->append(",\"rows\":");
    Int(out, g.rows);
    out->append(",\"cols\":");
    Int(out, g.cols);
    out->append(",\"colormap\":");
    Str(out, i == 2 ? "diverging" : ColormapName(s->style.colormap));
    out->append(",\"vmin\":");
    Num(out, i == 2 ? -cv.diff_range : s->style.vmin);
    out->append(",\"vmax\":");
    Num(out, i == 2 ? cv.diff_range : s->style.vmax);
    if (i == 2 && cv.result[2].weights.size() <= 4096) {
      out->append(",\"weights\":[");
      for (int k = 0; k < cv.result[2].weights.size(); ++k) {
        if (k) out->push_back(',');
        Num(out, cv.result[2].weights.data()[k]);
      }
      out->append("]");
    }
    out->append("}");
  }
  out->append("]}");
}

// The heatmap view's frames animation: which map is shown and how far it has blended into the next.
void DescribeFrames(AppState* s, std::string* out) {
  const Example& ex = s->Current();
  const HeatmapViewState& v = s->main_view;
  int next = -1;
  for (size_t i = 0; v.next && i < ex.maps.size(); ++i)
    if (&ex.maps[i] == v.next) next = (int)i;
  out->append(",\"frames\":{\"active\":");
  out->append(s->timeline.mode == TimelineMode::Frames ? "true" : "false");
  out->append(",\"maps\":");
  Int(out, (long long)ex.maps.size());
  out->append(",\"next\":");
  Int(out, next);
  out->append(",\"mix\":");
  Num(out, next >= 0 ? v.frame_mix : 0.0);
  out->append("}");
}

}  // namespace

void AppendViewDescription(AppState* s, std::string* out) {
  ViewsState* vs = ViewsOf(s);
  DescribeFrames(s, out);
  DescribeLines(vs->lines, out);
  DescribeGrid(vs->grid, out);
  DescribeSteps(s, vs->steps, out);
  DescribeCompare(s, vs->compare, out);
}

}  // namespace attnviz

namespace attnviz {
namespace {

bool ParseFloat(const std::string& s, float* out) {
  char* end = nullptr;
  *out = std::strtof(s.c_str(), &end);
  return !s.empty() && end && *end == 0;
}

bool ParseInt(const std::string& s, int* out) {
  char* end = nullptr;
  const long v = std::strtol(s.c_str(), &end, 10);
  *out = (int)v;
  return !s.empty() && end && *end == 0;
}

}  // namespace

bool ParseGridSort(const std::string& name, GridSort* out) {
  for (int i = 0; i < (int)GridSort::Count; ++i) {
    if (name == GridSortName((GridSort)i)) {
      *out = (GridSort)i;
      return true;
    }
  }
  return false;
}

std::string RunViewCommand(AppState* s, const std::string& verb, const std::string& arg, bool* handled) {
  *handled = true;
  ViewsState* vs = ViewsOf(s);
  Example& ex = s->Current();
  std::istringstream in(arg);
  std::string a, b, c, d;
  in >> a >> b >> c >> d;
  if (verb == "grid-sort") {
    if (!ParseGridSort(a, &vs->grid.sort)) return "unknown sort '" + a + "' (layer, entropy, max_weight, first_token, diagonality)";
    return "";
  }
  if (verb == "lines-threshold") {
    float t;
    if (!ParseFloat(a, &t) || !(t > 0 && t <= 1)) return "lines-threshold needs a number in (0, 1]";
    vs->lines.threshold = t;
    return "";
  }
  if (verb == "steps-row") {
    int r;
    if (!ex.has_inputs) return "this example has no inputs";
    if (!ParseInt(a, &r) || r < 0 || r >= ex.inputs.q.rows()) return "steps-row out of range";
    if (vs->steps.owner != &ex || vs->steps.owner_index != s->current) {
      vs->steps = StepsViewState{};
      vs->steps.owner = &ex;
      vs->steps.owner_index = s->current;
    }
    vs->steps.row = r;
    return "";
  }
  if (verb == "steps-score" || verb == "steps-set" || verb == "steps-temperature") {
    if (!ex.has_inputs) return "this example has no inputs";
    if (vs->steps.owner != &ex || vs->steps.owner_index != s->current) {
      vs->steps = StepsViewState{};
      vs->steps.owner = &ex;
      vs->steps.owner_index = s->current;
    }
    AttentionInputs& inp = ex.inputs;
    if (verb == "steps-score") {
      if (!ParseScoreFunction(a, &inp.params.score)) return "unknown score function '" + a + "'";
      EnsureScoreParams(&inp.params, inp.q, inp.k);
    } else if (verb == "steps-temperature") {
      if (!ParseFloat(a, &inp.params.temperature)) return "steps-temperature needs a number";
    } else {
      // steps-set q|k|v ROW COL VALUE (VALUE may be nan or inf: the core must reject it)
      MatrixRM* m = a == "q" ? &inp.q : (a == "k" ? &inp.k : (a == "v" ? &inp.v : nullptr));
      int i, j;
      float x;
      if (!m || !ParseInt(b, &i) || !ParseInt(c, &j) || !ParseFloat(d, &x)) return "usage: steps-set q|k|v ROW COL VALUE";
      if (i < 0 || j < 0 || i >= m->rows() || j >= m->cols()) return "steps-set: cell out of range";
      (*m)(i, j) = x;
    }
    const Status st = RecomputeExample(&ex);
    vs->steps.error = st ? "" : st.message;
    vs->steps.recomputes++;
    return "";  // a failed recompute is shown in the view (and in describe), not a bad command
  }
  if (verb == "compare-scores") {
    ScoreFunction f0, f1;
    if (!ParseScoreFunction(a, &f0) || !ParseScoreFunction(b, &f1)) return "usage: compare-scores SCORE SCORE";
    vs->compare.mode = CompareMode::ScoreFunctions;
    vs->compare.score[0] = f0;
    vs->compare.score[1] = f1;
    return "";
  }
  if (verb == "compare-maps") {
    int i, j;
    const int n = (int)ex.maps.size();
    if (!ParseInt(a, &i) || !ParseInt(b, &j) || i < 0 || j < 0 || i >= n || j >= n) return "compare-maps: map index out of range";
    vs->compare.mode = CompareMode::Maps;
    vs->compare.map_index[0] = i;
    vs->compare.map_index[1] = j;
    return "";
  }
  if (verb == "compare-range") {
    float r;
    if (!ParseFloat(a, &r) || !(r > 0)) return "compare-range needs a positive number";
    vs->compare.diff_range = r;
    return "";
  }
  *handled = false;
  return "";
}

}  // namespace attnviz
