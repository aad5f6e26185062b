#include "io/svg.h"

#include <algorithm>
#include <cstdio>

#include "core/colormap.h"
#include "core/row_scan.h"
#include "io/memory_budget.h"
#include "io/utf8.h"

namespace attnviz {
namespace {

std::string Fmt(const char* fmt, double a) {
  char b[64];
  std::snprintf(b, sizeof(b), fmt, a);
  return b;
}

std::string Fixed(double v, int decimals) {  // "%.*f": 48 characters at most for a float
  char b[64];
  std::snprintf(b, sizeof(b), "%.*f", decimals, v);
  return b;
}

std::string Hex(const uint8_t rgb[3]) {
  char b[8];
  std::snprintf(b, sizeof(b), "#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
  return b;
}

std::string Label(const std::vector<std::string>& tokens, size_t i, size_t max_chars) {
  std::string t = i < tokens.size() ? WithoutWordStart(tokens[i]) : std::to_string(i);  // as the PNG labels it
  std::vector<uint32_t> cps;
  DecodeUtf8Lossy(t, &cps);
  if (max_chars > 1 && cps.size() > max_chars) {
    cps.resize(max_chars - 1);
    cps.push_back(0x2026);  // ellipsis
  }
  std::string out;
  for (uint32_t cp : cps) AppendUtf8(cp, &out);
  return out;
}

// Buffers SVG text and hands it to the sink 64 KiB at a time.
class SvgOut {
 public:
  explicit SvgOut(const SvgSink& sink) : sink_(sink) { buf_.reserve(kChunk + 4096); }
  SvgOut& operator+=(const std::string& t) {
    buf_ += t;
    if (buf_.size() >= kChunk) Flush();
    return *this;
  }
  SvgOut& operator+=(const char* t) { return *this += std::string(t); }
  bool Flush() {
    if (ok_ && !buf_.empty()) ok_ = sink_(buf_.data(), buf_.size());
    buf_.clear();
    return ok_;
  }
  bool ok() const { return ok_; }

 private:
  static constexpr size_t kChunk = size_t(1) << 16;
  const SvgSink& sink_;
  std::string buf_;
  bool ok_ = true;
};

// Rough advance width of a label: good enough to size margins without a font.
float TextWidth(const std::string& s, float font) {
  return 0.62f * font * (float)Utf8Length(s);
}

// The colour bar at x, from y0 down bh: the key colours' gradient (the LUT quantises it, core/colormap.h)
// and its round numbers (core/colour_scale.h), each inside the bar's height.
void EmitColourBar(SvgOut* out, const ColormapTable& table, float bx, float y0, float bh, float font,
                   const ColourTick* ticks, int n_ticks) {
  SvgOut& s = *out;
  s += "<defs><linearGradient id=\"attnviz-colorbar\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">\n";
  for (int k = 0; k < table.count; ++k) {
    const ColormapRgb& c = table.keys[k].c;
    const uint8_t rgb[3] = {c.r, c.g, c.b};
    s += "<stop offset=\"" + Fmt("%g", table.keys[k].t) + "\" stop-color=\"" + Hex(rgb) + "\"/>\n";
  }
  s += "</linearGradient></defs>\n";
  s += "<rect class=\"colorbar\" x=\"" + Fmt("%g", bx) + "\" y=\"" + Fmt("%g", y0) + "\" width=\"16\" height=\"" +
       Fmt("%g", bh) + "\" fill=\"url(#attnviz-colorbar)\" stroke=\"#444\" stroke-width=\"0.5\"/>\n";
  s += "<g class=\"colorbar-ticks\">\n";
  for (int i = 0; i < n_ticks; ++i) {
    const float y = y0 + (1 - ticks[i].t) * bh;
    const float base = std::clamp(y + font * 0.35f, y0 + font * 0.8f, y0 + bh);
    s += "<line x1=\"" + Fmt("%g", bx + 16) + "\" y1=\"" + Fmt("%g", y) + "\" x2=\"" + Fmt("%g", bx + 20) + "\" y2=\"" +
         Fmt("%g", y) + "\" stroke=\"#444\" stroke-width=\"0.5\"/>\n";
    s += "<text x=\"" + Fmt("%g", bx + 22) + "\" y=\"" + Fmt("%g", base) + "\">" + XmlEscape(ticks[i].text) +
         "</text>\n";
  }
  s += "</g>\n";
}

}  // namespace

std::string XmlEscape(const std::string& s) {
  std::string o;
  size_t p = 0;
  while (p < s.size()) {
    const size_t start = p;
    uint32_t cp;
    if (!DecodeUtf8(s.data(), s.size(), &p, &cp)) cp = 0xFFFD;
    switch (cp) {
      case '&':
        o += "&amp;";
        break;
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '"':
        o += "&quot;";
        break;
      case '\'':
        o += "&apos;";
        break;
      default:
        if ((cp < 0x20 && cp != '\t') || cp == 0xFFFE || cp == 0xFFFF)
          AppendUtf8(0xFFFD, &o);
        else if (cp == 0xFFFD)
          AppendUtf8(cp, &o);
        else
          o.append(s, start, p - start);
    }
  }
  return o;
}

Status CheckSvgHeatmapSize(int64_t rows, int64_t cols, const SvgHeatmapOptions& opt) {
  const int64_t cells = rows * cols;
  if (cells <= opt.max_cells) return Status::Ok();
  return Status::Error("svg: a " + std::to_string(rows) + " x " + std::to_string(cols) + " map has " +
                       std::to_string(cells) + " cells, over the limit of " + std::to_string(opt.max_cells) +
                       " (about " + FormatApproxByteSize((uint64_t)cells * 90) + " of SVG)");
}

Status WriteHeatmapSvg(const MatrixRM& w, const std::vector<std::string>& source_tokens,
                       const std::vector<std::string>& target_tokens, const std::string& colormap,
                       const SvgHeatmapOptions& opt, const SvgSink& sink) {
  if (Status st = CheckSvgHeatmapSize(w.rows(), w.cols(), opt); !st)
    return Status::Error(st.message + "; pick a smaller map or raise --max-cells");
  Colormap cmap = Colormap::Greys;
  ParseColormap(colormap.c_str(), &cmap);  // unknown names keep greys
  const ColormapTable& table = ColormapTableOf(cmap);
  const int rows = (int)w.rows(), cols = (int)w.cols();
  const float font = opt.font_size > 1 ? opt.font_size : 1, value_font = font * 0.85f;
  const int decimals = std::clamp(opt.decimals, 0, 8);
  float lo = 0, hi = 0;  // the finite weights' range
  const bool any_finite = FiniteRange(w.data(), (size_t)w.size(), &lo, &hi);
  // With values, cells grow (square) to fit the widest number with 3 px either side: the widest are
  // those of the smallest and largest weights (a sign, more integer digits).
  float cell = opt.cell_size > 1 ? opt.cell_size : 1;
  if (opt.show_values && any_finite)
    cell = std::max(cell, std::ceil(std::max(TextWidth(Fixed(lo, decimals), value_font),
                                             TextWidth(Fixed(hi, decimals), value_font)) +
                                    6));
  float vmin = opt.vmin, vmax = opt.vmax;
  if (std::isnan(vmax)) {
    vmax = std::max(0.0f, hi);
    if (vmax <= vmin) vmax = vmin + 1;
  }

  // pass 1: layout
  std::vector<std::string> top(cols), left(rows);
  float top_w = 0, left_w = 0;
  for (int j = 0; j < cols; ++j)
    top_w = std::max(top_w, TextWidth(top[j] = Label(source_tokens, j, opt.max_label_chars), font));
  for (int i = 0; i < rows; ++i)
    left_w = std::max(left_w, TextWidth(left[i] = Label(target_tokens, i, opt.max_label_chars), font));
  const bool rotate = top_w > cell - 2;  // labels would overlap their neighbours
  const float title_h = opt.title.empty() ? 0 : font * 1.6f + 4;
  const float top_h = rotate ? top_w * 0.7071f + font + 6 : font + 8;
  const float x0 = 8 + left_w + 6, y0 = 8 + title_h + top_h;
  ColourTick ticks[kMaxColourTicks];
  const float bar_h = std::max(rows * cell, 4 * font);
  const int n_ticks = ColourTicks(opt.scale, vmin, vmax, (int)(bar_h / (1.5f * font)) + 1, ticks);
  float tick_w = 0;
  for (int i = 0; i < n_ticks; ++i) tick_w = std::max(tick_w, TextWidth(ticks[i].text, font));
  const float bar_w = opt.colorbar ? 16 + 8 + tick_w + 16 : 0;
  const float width = x0 + cols * cell + (rotate ? top_w * 0.7071f : 0) + bar_w + 8;
  const float height = y0 + rows * cell + 8;

  // pass 2: emit, streamed through a 64 KiB buffer
  SvgOut s(sink);
  s += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  s += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + Fmt("%.0f", width) + "\" height=\"" +
       Fmt("%.0f", height) + "\" viewBox=\"0 0 " + Fmt("%.0f", width) + " " + Fmt("%.0f", height) +
       "\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" font-size=\"" + Fmt("%g", font) + "\">\n";
  s += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  if (!opt.title.empty())
    s += "<text x=\"" + Fmt("%g", x0) + "\" y=\"" + Fmt("%g", 8 + font * 1.2f) + "\" font-size=\"" +
         Fmt("%g", font * 1.2f) + "\" font-weight=\"bold\">" + XmlEscape(opt.title) + "</text>\n";
  s += "<g class=\"source-tokens\">\n";
  for (int j = 0; j < cols; ++j) {
    const float cx = x0 + (j + 0.5f) * cell;
    if (rotate)
      s += "<text transform=\"translate(" + Fmt("%g", cx) + "," + Fmt("%g", y0 - 4) + ") rotate(-45)\">" +
           XmlEscape(top[j]) + "</text>\n";
    else
      s += "<text x=\"" + Fmt("%g", cx) + "\" y=\"" + Fmt("%g", y0 - 6) + "\" text-anchor=\"middle\">" +
           XmlEscape(top[j]) + "</text>\n";
  }
  s += "</g>\n<g class=\"target-tokens\" text-anchor=\"end\">\n";
  for (int i = 0; i < rows; ++i)
    s += "<text x=\"" + Fmt("%g", x0 - 6) + "\" y=\"" + Fmt("%g", y0 + (i + 0.5f) * cell + font * 0.35f) + "\">" +
         XmlEscape(left[i]) + "</text>\n";
  s += "</g>\n<g class=\"cells\" shape-rendering=\"crispEdges\">\n";
  std::vector<float> row_max(rows, 0.0f);  // the per-row scale's divisors
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j)
      if (std::isfinite(w(i, j))) row_max[i] = std::max(row_max[i], w(i, j));
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < cols; ++j) {
      uint8_t c[3];
      ColormapSample(cmap, ColourT(opt.scale, w(i, j), vmin, vmax, row_max[i]), c);  // as the GL heatmap shows
      s += "<rect x=\"" + Fmt("%g", x0 + j * cell) + "\" y=\"" + Fmt("%g", y0 + i * cell) + "\" width=\"" +
           Fmt("%g", cell) + "\" height=\"" + Fmt("%g", cell) + "\" fill=\"" + Hex(c) + "\"/>\n";
    }
  }
  s += "</g>\n";
  if (opt.show_values) {
    s += "<g class=\"values\" text-anchor=\"middle\" font-size=\"" + Fmt("%g", value_font) + "\">\n";
    for (int i = 0; i < rows; ++i) {
      for (int j = 0; j < cols; ++j) {
        const float v = w(i, j);
        uint8_t c[3];
        ColormapSample(cmap, ColourT(opt.scale, v, vmin, vmax, row_max[i]), c);
        const bool black = ContrastingTextColor(c) == 0xFF000000u;  // as the app's cell text
        s += "<text x=\"" + Fmt("%g", x0 + (j + 0.5f) * cell) + "\" y=\"" +
             Fmt("%g", y0 + (i + 0.5f) * cell + value_font * 0.35f) + "\" fill=\"" + (black ? "black" : "white") +
             "\">" + Fixed(v, decimals) + "</text>\n";
      }
    }
    s += "</g>\n";
  }
  if (opt.colorbar)
    EmitColourBar(&s, table, x0 + cols * cell + (rotate ? top_w * 0.7071f : 0) + 16, y0, bar_h, font, ticks, n_ticks);
  s += "</svg>\n";
  if (!s.Flush()) return Status::Error("svg: write error");
  return Status::Ok();
}

Status HeatmapSvgString(const MatrixRM& w, const std::vector<std::string>& source_tokens,
                        const std::vector<std::string>& target_tokens, const std::string& colormap,
                        const SvgHeatmapOptions& options, std::string* out) {
  out->clear();
  return WriteHeatmapSvg(w, source_tokens, target_tokens, colormap, options, [out](const char* d, size_t n) {
    out->append(d, n);
    return true;
  });
}

std::string HeatmapSvg(const MatrixRM& w, const std::vector<std::string>& source_tokens,
                       const std::vector<std::string>& target_tokens, const std::string& colormap,
                       const SvgHeatmapOptions& options) {
  std::string svg;
  if (!HeatmapSvgString(w, source_tokens, target_tokens, colormap, options, &svg)) svg.clear();
  return svg;
}

}  // namespace attnviz
