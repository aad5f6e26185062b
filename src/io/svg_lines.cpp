// attnviz io: the lines view as SVG (svg_lines.h).
#include "io/svg_lines.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "io/svg.h"
#include "io/utf8.h"

namespace attnviz {
namespace {

std::string Num(float v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.4g", v);
  return b;
}

std::string Colour(const uint8_t rgb[3]) {
  char col[8];
  std::snprintf(col, sizeof col, "#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
  return col;
}

}  // namespace

std::string LinesLabel(const std::vector<std::string>& tokens, int i) {
  return i < (int)tokens.size() ? PrintableText(WithoutWordStart(tokens[(size_t)i]), 24) : std::to_string(i);
}

void ForEachLine(const SvgLinesHead& h, int shown, const SvgLinesOptions& o,
                 const std::function<void(int row, int col, float weight, const LineStyle& style)>& f) {
  const MatrixRM& w = *h.w;
  const bool fixed = !o.heads.empty();
  const int n_k = (int)w.cols();
  for (int r = 0; r < shown; ++r) {
    float row_max = 0;
    for (int c = 0; c < n_k; ++c) row_max = std::max(row_max, std::isfinite(w(r, c)) ? w(r, c) : 0.0f);
    for (int c = 0; c < n_k; ++c) {
      const float v = w(r, c);
      if (!(v >= o.threshold)) continue;
      const float t = o.row_normalised ? (row_max > 0 ? v / row_max : 0.0f)
                                       : std::clamp((v - o.vmin) / std::max(o.vmax - o.vmin, 1e-12f), 0.0f, 1.0f);
      LineStyle s;
      if (fixed)
        s.rgb[0] = h.rgb[0], s.rgb[1] = h.rgb[1], s.rgb[2] = h.rgb[2];
      else
        LineColour(o.colormap, t, true, s.rgb);  // on the white page
      s.opacity = 0.15f + 0.85f * t;
      s.width = 0.5f + 3.0f * t;
      f(r, c, v, s);
    }
  }
}

Status LayOutLines(const MatrixRM& w, const SvgLinesOptions& o, LinesLayout* L, std::vector<SvgLinesHead>* maps,
                   int* shown) {
  const int n_q = (int)w.rows(), n_k = (int)w.cols();
  if (n_q < 1 || n_k < 1) return Status::Error("lines: the map is empty");
  *shown = std::clamp(o.rows_shown, 0, n_q);
  *maps = o.heads;
  if (maps->empty()) maps->push_back({&w, -1, {}});
  int64_t count = 0;
  for (const SvgLinesHead& h : *maps) {
    if (!h.w || h.w->rows() != n_q || h.w->cols() != n_k) return Status::Error("lines: heads of different shapes");
    for (int r = 0; r < *shown; ++r)
      for (int c = 0; c < n_k; ++c) count += (*h.w)(r, c) >= o.threshold;
  }
  if (count > o.max_lines)
    return Status::Error("lines: " + std::to_string(count) + " lines are over " + std::to_string(o.max_lines) +
                         " (raise the threshold)");
  L->title_y = 8 + o.font_px;
  L->legend_y = 16.0f + (o.title.empty() ? 0.0f : o.font_px * 2.0f);
  const float label_w = 170.0f;
  L->top = L->legend_y + (o.heads.empty() ? 0.0f : o.font_px * 2.0f);
  L->row_px = o.row_px;
  const float xl = 8.0f + label_w, xr = xl + o.gap_px;
  L->width = xr + label_w + 8.0f;
  L->height = L->top + (float)std::max(n_q, n_k) * o.row_px + 8.0f;
  // Keys (sources) on the left by default; BertViz's orientation puts the queries (targets) there.
  L->source_left = !o.queries_left;
  L->x_source = o.queries_left ? xr : xl;
  L->x_target = o.queries_left ? xl : xr;
  const float gap = o.queries_left ? 6.0f : -6.0f;  // lines stop short of the labels
  L->line_source = L->x_source - gap;
  L->line_target = L->x_target + gap;
  return Status::Ok();
}

Status LinesSvgString(const MatrixRM& w, const std::vector<std::string>& source_tokens,
                      const std::vector<std::string>& target_tokens, const SvgLinesOptions& o, std::string* out) {
  LinesLayout L;
  std::vector<SvgLinesHead> maps;
  int shown = 0;
  const Status st = LayOutLines(w, o, &L, &maps, &shown);
  if (!st) return st;
  std::string& s = *out;
  s = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + Num(L.width) +
      "\" height=\"" + Num(L.height) + "\" viewBox=\"0 0 " + Num(L.width) + " " + Num(L.height) +
      "\" font-family=\"DejaVu Sans, sans-serif\" font-size=\"" + Num(o.font_px) + "\">\n<rect width=\"100%\" " +
      "height=\"100%\" fill=\"#ffffff\"/>\n";
  if (!o.title.empty())
    s += "<text x=\"8\" y=\"" + Num(L.title_y) + "\" font-weight=\"bold\">" + XmlEscape(o.title) + "</text>\n";
  if (!o.heads.empty()) s += "<g class=\"legend\">\n";
  for (size_t i = 0; i < o.heads.size(); ++i) {
    const float x = L.LegendX((int)i, o.font_px);
    s += "<rect x=\"" + Num(x) + "\" y=\"" + Num(L.legend_y) + "\" width=\"" + Num(o.font_px) + "\" height=\"" +
         Num(o.font_px) + "\" fill=\"" + Colour(o.heads[i].rgb) + "\"/><text x=\"" + Num(x + o.font_px * 1.3f) +
         "\" y=\"" + Num(L.legend_y + o.font_px * 0.85f) + "\">head " + std::to_string(o.heads[i].head) + "</text>\n";
  }
  if (!o.heads.empty()) s += "</g>\n";
  const char* left = " text-anchor=\"end\"";
  s += "<g class=\"lines\" fill=\"none\">\n";
  for (const SvgLinesHead& h : maps) {
    const std::string head_attr = o.heads.empty() ? "" : "\" data-head=\"" + std::to_string(h.head);
    ForEachLine(h, shown, o, [&](int r, int c, float v, const LineStyle& ls) {
      s += "<line x1=\"" + Num(L.line_source) + "\" y1=\"" + Num(L.YOf(c)) + "\" x2=\"" + Num(L.line_target) +
           "\" y2=\"" + Num(L.YOf(r)) + "\" stroke=\"" + Colour(ls.rgb) + "\" stroke-opacity=\"" + Num(ls.opacity) +
           "\" stroke-width=\"" + Num(ls.width) + "\" data-row=\"" + std::to_string(r) + "\" data-col=\"" +
           std::to_string(c) + "\" data-weight=\"" + Num(v) + head_attr + "\"/>\n";
    });
  }
  s += std::string("</g>\n<g class=\"source\"") + (L.source_left ? left : "") + ">\n";
  for (int c = 0; c < (int)w.cols(); ++c)
    s += "<text x=\"" + Num(L.x_source) + "\" y=\"" + Num(L.YOf(c) + o.font_px * 0.35f) + "\">" +
         XmlEscape(LinesLabel(source_tokens, c)) + "</text>\n";
  s += std::string("</g>\n<g class=\"target\"") + (L.source_left ? "" : left) + ">\n";
  for (int r = 0; r < (int)w.rows(); ++r)
    s += "<text x=\"" + Num(L.x_target) + "\" y=\"" + Num(L.YOf(r) + o.font_px * 0.35f) + "\"" +
         (r >= shown ? " fill-opacity=\"0.35\"" : "") + ">" + XmlEscape(LinesLabel(target_tokens, r)) + "</text>\n";
  s += "</g>\n</svg>\n";
  return Status::Ok();
}

}  // namespace attnviz
