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

std::string Label(const std::vector<std::string>& tokens, int i) {
  return i < (int)tokens.size() ? XmlEscape(PrintableText(WithoutWordStart(tokens[(size_t)i]), 24)) : std::to_string(i);
}

// A line's colour on the white page, strong lines the darkest: greys runs from light grey to black,
// the diverging map over its red half, viridis and magma without their last fifth (yellow and
// near-white vanish on white). Opacity and width show the weight as well.
void LineColourOnWhite(Colormap c, float t, uint8_t rgb[3]) {
  if (c == Colormap::Greys) return ColormapSample(c, 0.8f * (1.0f - t), rgb);
  if (c == Colormap::Diverging) return ColormapSample(c, 0.6f + 0.4f * t, rgb);
  ColormapSample(c, 0.8f * t, rgb);
}

// The lines of one map: colour by the colormap, or rgb for a head of the head view. xs, xt: the ends
// of a line at a source and at a target token.
void AppendLines(const MatrixRM& w, const uint8_t* rgb_fixed, int head, int shown, float xs, float xt, float top,
                 const SvgLinesOptions& o, std::string* s) {
  auto y_of = [&](int i) { return top + (i + 0.5f) * o.row_px; };
  const int n_k = (int)w.cols();
  const std::string head_attr = head >= 0 ? "\" data-head=\"" + std::to_string(head) : "";
  for (int r = 0; r < shown; ++r) {
    float row_max = 0;
    for (int c = 0; c < n_k; ++c) row_max = std::max(row_max, std::isfinite(w(r, c)) ? w(r, c) : 0.0f);
    for (int c = 0; c < n_k; ++c) {
      const float v = w(r, c);
      if (!(v >= o.threshold)) continue;
      const float t = o.row_normalised ? (row_max > 0 ? v / row_max : 0.0f)
                                       : std::clamp((v - o.vmin) / std::max(o.vmax - o.vmin, 1e-12f), 0.0f, 1.0f);
      uint8_t rgb[3];
      if (rgb_fixed)
        rgb[0] = rgb_fixed[0], rgb[1] = rgb_fixed[1], rgb[2] = rgb_fixed[2];
      else
        LineColourOnWhite(o.colormap, t, rgb);
      char col[8];
      std::snprintf(col, sizeof col, "#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
      *s += "<line x1=\"" + Num(xs) + "\" y1=\"" + Num(y_of(c)) + "\" x2=\"" + Num(xt) + "\" y2=\"" + Num(y_of(r)) +
            "\" stroke=\"" + col + "\" stroke-opacity=\"" + Num(0.15f + 0.85f * t) + "\" stroke-width=\"" +
            Num(0.5f + 3.0f * t) + "\" data-row=\"" + std::to_string(r) + "\" data-col=\"" + std::to_string(c) +
            "\" data-weight=\"" + Num(v) + head_attr + "\"/>\n";
    }
  }
}

}  // namespace

Status LinesSvgString(const MatrixRM& w, const std::vector<std::string>& source_tokens,
                      const std::vector<std::string>& target_tokens, const SvgLinesOptions& o, std::string* out) {
  const int n_q = (int)w.rows(), n_k = (int)w.cols();
  if (n_q < 1 || n_k < 1) return Status::Error("lines SVG: the map is empty");
  const int shown = std::clamp(o.rows_shown, 0, n_q);
  std::vector<SvgLinesHead> maps = o.heads;
  if (maps.empty()) maps.push_back({&w, -1, {}});
  int64_t count = 0;
  for (const SvgLinesHead& h : maps) {
    if (!h.w || h.w->rows() != n_q || h.w->cols() != n_k) return Status::Error("lines SVG: heads of different shapes");
    for (int r = 0; r < shown; ++r)
      for (int c = 0; c < n_k; ++c) count += (*h.w)(r, c) >= o.threshold;
  }
  if (count > o.max_lines)
    return Status::Error("lines SVG: " + std::to_string(count) + " lines are over " + std::to_string(o.max_lines) +
                         " (raise the threshold)");
  const float legend_y = 16.0f + (o.title.empty() ? 0.0f : o.font_px * 2.0f);  // the heads' colours, if several
  const float label_w = 170.0f, top = legend_y + (o.heads.empty() ? 0.0f : o.font_px * 2.0f);
  const float xl = 8.0f + label_w, xr = xl + o.gap_px;
  const float width = xr + label_w + 8.0f, height = top + std::max(n_q, n_k) * o.row_px + 8.0f;
  std::string& s = *out;
  s = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + Num(width) +
      "\" height=\"" + Num(height) + "\" viewBox=\"0 0 " + Num(width) + " " + Num(height) +
      "\" font-family=\"DejaVu Sans, sans-serif\" font-size=\"" + Num(o.font_px) + "\">\n<rect width=\"100%\" " +
      "height=\"100%\" fill=\"#ffffff\"/>\n";
  if (!o.title.empty())
    s += "<text x=\"8\" y=\"" + Num(8 + o.font_px) + "\" font-weight=\"bold\">" + XmlEscape(o.title) + "</text>\n";
  if (!o.heads.empty()) s += "<g class=\"legend\">\n";
  for (size_t i = 0; i < o.heads.size(); ++i) {
    const float x = 8.0f + (float)i * o.font_px * 5.5f;
    char col[8];
    std::snprintf(col, sizeof col, "#%02x%02x%02x", o.heads[i].rgb[0], o.heads[i].rgb[1], o.heads[i].rgb[2]);
    s += "<rect x=\"" + Num(x) + "\" y=\"" + Num(legend_y) + "\" width=\"" + Num(o.font_px) + "\" height=\"" +
         Num(o.font_px) + "\" fill=\"" + col + "\"/><text x=\"" + Num(x + o.font_px * 1.3f) + "\" y=\"" +
         Num(legend_y + o.font_px * 0.85f) + "\">head " + std::to_string(o.heads[i].head) + "</text>\n";
  }
  if (!o.heads.empty()) s += "</g>\n";
  auto y_of = [&](int i) { return top + (i + 0.5f) * o.row_px; };
  // Keys (sources) on the left by default; BertViz's orientation puts the queries (targets) there.
  const float xs = o.queries_left ? xr : xl, xt = o.queries_left ? xl : xr;
  const float gap = o.queries_left ? 6.0f : -6.0f;  // lines stop short of the labels
  const char* left = " text-anchor=\"end\"";
  s += "<g class=\"lines\" fill=\"none\">\n";
  for (const SvgLinesHead& h : maps)
    AppendLines(*h.w, o.heads.empty() ? nullptr : h.rgb, o.heads.empty() ? -1 : h.head, shown, xs - gap, xt + gap, top,
                o, &s);
  s += std::string("</g>\n<g class=\"source\"") + (o.queries_left ? "" : left) + ">\n";
  for (int c = 0; c < n_k; ++c)
    s += "<text x=\"" + Num(xs) + "\" y=\"" + Num(y_of(c) + o.font_px * 0.35f) + "\">" + Label(source_tokens, c) +
         "</text>\n";
  s += std::string("</g>\n<g class=\"target\"") + (o.queries_left ? left : "") + ">\n";
  for (int r = 0; r < n_q; ++r)
    s += "<text x=\"" + Num(xt) + "\" y=\"" + Num(y_of(r) + o.font_px * 0.35f) + "\"" +
         (r >= shown ? " fill-opacity=\"0.35\"" : "") + ">" + Label(target_tokens, r) + "</text>\n";
  s += "</g>\n</svg>\n";
  return Status::Ok();
}

}  // namespace attnviz
