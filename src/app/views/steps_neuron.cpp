// attnviz view "steps": the query-key product per dimension (steps_neuron.h).
#include "app/views/steps_neuron.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/colormap.h"
#include "imgui.h"
#include "io/json.h"

namespace attnviz {
namespace {

constexpr int kMaxDimsDrawn = 256;  // wider vectors draw their first 256 dimensions (the sums use all)

// Cell colour (and, in *text, a contrasting colour for its number).
ImU32 ProductColor(float v, float max_abs, ImU32* text) {
  uint8_t rgb[3];
  ColormapSample(Colormap::Diverging, 0.5f + 0.5f * (max_abs > 0 ? v / max_abs : 0.0f), rgb);
  *text = ContrastingTextColor(rgb);
  return IM_COL32(rgb[0], rgb[1], rgb[2], 255);
}

// The cells of one key's product; a tooltip names the factors of the hovered one.
void DrawProductCells(const MatrixRM& q, const MatrixRM& k, int r, int j, float max_abs, float cell) {
  const int d = (int)q.cols(), drawn = std::min(d, kMaxDimsDrawn);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const float h = ImGui::GetTextLineHeight();
  for (int c = 0; c < drawn; ++c) {
    const ImVec2 a(p.x + c * cell, p.y), b(p.x + (c + 1) * cell - (cell >= 6 ? 1.0f : 0.0f), p.y + h);
    ImU32 text = 0;
    dl->AddRectFilled(a, b, ProductColor(q(r, c) * k(j, c), max_abs, &text));
    if (cell < 44) continue;  // wide cells print their product
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", q(r, c) * k(j, c));
    const float tw = ImGui::CalcTextSize(buf).x;
    if (tw < cell - 4) dl->AddText(ImVec2(a.x + (cell - tw) * 0.5f, a.y), text, buf);
  }
  ImGui::InvisibleButton("cells", ImVec2(std::max(1.0f, drawn * cell), h));
  if (ImGui::IsItemHovered()) {
    const int c = std::clamp((int)((ImGui::GetIO().MousePos.x - p.x) / cell), 0, drawn - 1);
    ImGui::SetTooltip("dimension %d: q = %.4g, k = %.4g, q \xc3\x97 k = %.4g", c, q(r, c), k(j, c), q(r, c) * k(j, c));
  }
}

}  // namespace

void DrawQueryKeyProduct(const MatrixRM& q, const MatrixRM& k, int r, const std::vector<std::string>& key_labels,
                         const float* scores, const char* score_label, const float* weights, const char* source,
                         QueryKeyProductShown* shown) {
  const int n_k = (int)k.rows(), d = (int)q.cols();
  if (r < 0 || r >= q.rows() || d < 1 || k.cols() != d) return;
  shown->row = r, shown->dims = d, shown->source = source;
  shown->sums.assign((size_t)n_k, 0.0f);
  shown->scores.clear();
  shown->products.clear();
  float max_abs = 0;
  for (int j = 0; j < n_k; ++j)
    for (int c = 0; c < d; ++c) max_abs = std::max(max_abs, std::fabs(q(r, c) * k(j, c)));
  ImGui::Spacing();
  ImGui::Text(
      "q \xe2\x88\x98 k per dimension (the neuron view): each cell is q_d \xc3\x97 k_d, blue < 0 < red; "
      "the cells of a line sum to q\xc2\xb7k");
  const float cell = std::clamp(360.0f / (float)std::min(d, kMaxDimsDrawn), 3.0f, 56.0f);
  const float label_w = ImGui::GetFontSize() * 7;
  if (d > kMaxDimsDrawn)
    ImGui::TextDisabled("(the first %d of %d dimensions are drawn; the sums use all)", kMaxDimsDrawn, d);
  for (int j = 0; j < n_k; ++j) {
    ImGui::PushID(j);
    const float x0 = ImGui::GetCursorPosX();
    ImGui::TextUnformatted(j < (int)key_labels.size() ? key_labels[(size_t)j].c_str() : "?");
    ImGui::SameLine(x0 + label_w);
    DrawProductCells(q, k, r, j, max_abs, cell);
    double sum = 0;
    for (int c = 0; c < d; ++c) sum += (double)q(r, c) * k(j, c);
    shown->sums[(size_t)j] = (float)sum;
    if (n_k * d <= 4096)
      for (int c = 0; c < d; ++c) shown->products.push_back(q(r, c) * k(j, c));
    ImGui::SameLine();
    if (scores) {
      ImGui::Text("\xce\xa3 = %.5g   %s = %.5g", sum, score_label, scores[j]);
      shown->scores.push_back(scores[j]);
    } else {
      ImGui::Text("\xce\xa3 = %.5g", sum);
    }
    if (weights) {
      ImGui::SameLine();
      ImGui::TextDisabled("weight %.4f", weights[j]);
    }
    ImGui::PopID();
  }
}

bool DrawFileQueryKey(const AttentionMap& m, int* row, QueryKeyProductShown* shown) {
  const int n_q = (int)m.weights.rows(), n_k = (int)m.weights.cols();
  if (m.q.rows() != n_q || m.k.rows() != n_k || m.q.cols() < 1 || m.q.cols() != m.k.cols()) return false;
  *row = std::clamp(*row, 0, n_q - 1);
  const std::vector<std::string>& queries = m.target_tokens.vec();
  ImGui::TextWrapped("%s carries its own queries and keys (d = %d): the product of the chosen query with every key.",
                     m.name.c_str(), (int)m.q.cols());
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 10);
  if (ImGui::BeginCombo("query row", *row < (int)queries.size() ? queries[(size_t)*row].c_str() : "?")) {
    for (int i = 0; i < n_q; ++i) {
      ImGui::PushID(i);
      if (ImGui::Selectable(i < (int)queries.size() ? queries[(size_t)i].c_str() : "?", i == *row)) *row = i;
      ImGui::PopID();
    }
    ImGui::EndCombo();
  }
  std::vector<float> scores((size_t)n_k);
  const float inv_sqrt_d = 1.0f / std::sqrt((float)m.q.cols());
  for (int j = 0; j < n_k; ++j) scores[(size_t)j] = m.q.row(*row).dot(m.k.row(j)) * inv_sqrt_d;
  ImGui::BeginChild("file_qk", ImVec2(0, 0), false, ImGuiWindowFlags_HorizontalScrollbar);
  DrawQueryKeyProduct(m.q, m.k, *row, m.source_tokens.vec(), scores.data(),
                      "q\xc2\xb7k / \xe2\x88\x9a"
                      "d",
                      &m.weights(*row, 0), "file", shown);
  ImGui::TextDisabled(
      "The weights are the file's; softmax of q\xc2\xb7k / \xe2\x88\x9a"
      "d gives them when the model "
      "used scaled dot-product attention without masks or biases.");
  ImGui::EndChild();
  return true;
}

void DescribeQueryKeyProduct(JsonWriter* w, const QueryKeyProductShown& shown) {
  w->Key("qk");
  w->BeginObject();
  w->Key("row");
  w->Number(shown.row);
  w->Key("dims");
  w->Number(shown.dims);
  w->Key("source");
  w->String(shown.source);
  for (const auto& [key, v] : {std::make_pair("sums", &shown.sums), std::make_pair("scores", &shown.scores),
                               std::make_pair("products", &shown.products)}) {
    w->Key(key);
    w->BeginArray(true);
    for (float x : *v) w->NumberF(x);
    w->EndArray();
  }
  w->EndObject();
}

}  // namespace attnviz
