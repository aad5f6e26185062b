// attnviz figure: a heatmap drawn on the CPU (heatmap_figure.h).
#include "figure/heatmap_figure.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "core/colour_scale.h"
#include "core/row_scan.h"
#include "io/utf8.h"

namespace attnviz {
namespace {

const Rgb8 kBackground{255, 255, 255}, kText{20, 20, 24}, kEmpty{236, 236, 240}, kOutline{230, 120, 30};

std::string Shorten(const std::string& s, size_t max_chars) {
  // control characters and bad UTF-8 become visible escapes; a word-start marker is a space
  const std::string p = PrintableText(WithoutWordStart(s), max_chars);
  return p.empty() ? std::string("\xE2\x90\xA3") : p;  // an empty token shows as U+2423 (open box)
}

// The q-th quantile (0..1) of the finite weights, by selection on a copy.
float Quantile(const MatrixRM& w, double q) {
  std::vector<float> v;
  v.reserve((size_t)w.size());
  for (Eigen::Index i = 0; i < w.size(); ++i)
    if (std::isfinite(w.data()[i])) v.push_back(w.data()[i]);
  if (v.empty()) return 0.0f;
  const size_t k = std::min(v.size() - 1, (size_t)std::floor(q * (double)(v.size() - 1) + 0.5));
  std::nth_element(v.begin(), v.begin() + (std::ptrdiff_t)k, v.end());
  return v[k];
}

}  // namespace

void ResolveFigureRange(const MatrixRM& w, const HeatmapFigureOptions& o, HeatmapFigureLayout* L) {
  L->scale = o.scale;
  float lo = 0, mx = 0;
  if (!FiniteRange(w.data(), (size_t)w.size(), &lo, &mx) || !(mx > 0)) mx = 1.0f;
  switch (o.scale) {
    case FigureScale::Fixed:
      L->vmin = o.vmin, L->vmax = o.vmax;
      break;
    case FigureScale::Row:
      L->vmin = 0, L->vmax = 1;
      break;
    case FigureScale::Log:
      L->vmax = mx, L->vmin = std::min(o.vmin > 0 ? o.vmin : 1e-4f, mx * 0.5f);
      break;
    case FigureScale::P99:
      L->vmin = 0, L->vmax = Quantile(w, 0.99);
      break;
    case FigureScale::P999:
      L->vmin = 0, L->vmax = Quantile(w, 0.999);
      break;
    default:
      L->vmin = 0, L->vmax = mx;
      break;
  }
  if (!(L->vmax > L->vmin)) L->vmax = L->vmin + (mx > 0 ? mx : 1.0f);
}

namespace {

std::string FormatNumber(float v, int decimals) {
  char b[48];
  std::snprintf(b, sizeof b, "%.*f", std::clamp(decimals, 0, 8), v);
  return b;
}

ColourScale FigureColourScale(FigureScale s) {
  return s == FigureScale::Row ? ColourScale::PerRow : s == FigureScale::Log ? ColourScale::Log : ColourScale::Linear;
}

// Label boxes and thinning: every k-th label so that neighbours never overlap (auto).
int LabelStep(FigureLabels mode, float text_px, float cell) {
  if (mode != FigureLabels::Auto || cell <= 0) return 1;
  return std::max(1, (int)std::ceil(text_px * 1.15f / cell));
}

// The cell side that fits the widest printed weight with 3 px (at scale 1) either side, or 0 when
// no value is printed. Digits share one advance width, so the widest strings are those of the
// smallest and the largest finite weights (the sign and the integer digits).
float ValueCellSide(const MatrixRM& w, const HeatmapFigureOptions& o, FigureFont* font, float value_px, float s) {
  float lo = 0, hi = 0;
  if (!o.values || !FiniteRange(w.data(), (size_t)w.size(), &lo, &hi)) return 0.0f;  // nothing printed
  const float tw = std::max(font->Measure(FormatNumber(lo, o.decimals), value_px),
                            font->Measure(FormatNumber(hi, o.decimals), value_px));
  return std::ceil(tw + 6.0f * s);
}

struct Plan {
  float s = 1, font = 13, pad = 8, title_h = 0, top_h = 0, left_w = 0, bar_w = 0;
  std::vector<std::string> cols, rows;
};

void PlanLabels(const MatrixRM& w, const std::vector<std::string>& src, const std::vector<std::string>& tgt,
                const HeatmapFigureOptions& o, FigureFont* font, Plan* p, HeatmapFigureLayout* L) {
  const int n_q = (int)w.rows(), n_k = (int)w.cols();
  for (int c = 0; c < n_k; ++c)
    p->cols.push_back(c < (int)src.size() ? Shorten(src[(size_t)c], o.max_label_chars) : std::to_string(c));
  for (int r = 0; r < n_q; ++r)
    p->rows.push_back(r < (int)tgt.size() ? Shorten(tgt[(size_t)r], o.max_label_chars) : std::to_string(r));
  if (o.labels == FigureLabels::None) return;
  float max_col = 0, max_row = 0;
  for (const std::string& t : p->cols) max_col = std::max(max_col, font->Measure(t, p->font));
  for (const std::string& t : p->rows) max_row = std::max(max_row, font->Measure(t, p->font));
  L->cols_rotated = max_col > L->cell_w - 2 * p->s;
  p->top_h = (L->cols_rotated ? max_col : p->font) + p->pad;
  p->left_w = max_row + p->pad;
  L->label_step_rows = LabelStep(o.labels, p->font, L->cell_h);
  L->label_step_cols = L->cols_rotated ? LabelStep(o.labels, p->font, L->cell_w) : 1;
}

void DrawLabels(const Plan& p, const HeatmapFigureOptions& o, FigureFont* font, RgbaImage* img,
                const HeatmapFigureLayout& L) {
  if (o.labels == FigureLabels::None) return;
  const float asc = font->Ascent(p.font);
  for (int c = 0; c < L.cols; c += L.label_step_cols) {
    const std::string& t = p.cols[(size_t)c];
    const float cx = L.x0 + (c + 0.5f) * L.cell_w;
    if (L.cols_rotated)  // baseline right of the cell's centre line, text rising from just above the matrix
      font->DrawUp(img, cx - asc * 0.5f, (float)L.y0 - p.pad * 0.5f, t, p.font, kText);
    else
      font->Draw(img, cx - font->Measure(t, p.font) * 0.5f, (float)L.y0 - p.pad * 0.5f - 2 * p.s, t, p.font, kText);
  }
  for (int r = 0; r < L.rows; r += L.label_step_rows) {
    const std::string& t = p.rows[(size_t)r];
    const float cy = L.y0 + (r + 0.5f) * L.cell_h;
    font->Draw(img, L.x0 - p.pad * 0.5f - font->Measure(t, p.font), cy + asc * 0.4f, t, p.font, kText);
  }
}

void DrawCells(const MatrixRM& w, const HeatmapFigureOptions& o, const Plan& p, FigureFont* font, RgbaImage* img,
               const HeatmapFigureLayout& L) {
  for (int r = 0; r < L.rows; ++r) {
    const int y0 = L.y0 + (int)std::lround(r * L.cell_h), y1 = L.y0 + (int)std::lround((r + 1) * L.cell_h);
    float row_max = 0;
    for (int c = 0; c < L.cols; ++c)
      if (std::isfinite(w(r, c))) row_max = std::max(row_max, w(r, c));
    for (int c = 0; c < L.cols; ++c) {
      const int x0 = L.x0 + (int)std::lround(c * L.cell_w), x1 = L.x0 + (int)std::lround((c + 1) * L.cell_w);
      if (r >= o.rows_shown) {
        FillRect(img, x0, y0, x1, y1, kEmpty);
        continue;
      }
      uint8_t rgb[3];
      ColormapSample(o.colormap, FigureT(L, w(r, c), row_max), rgb);
      FillRect(img, x0, y0, x1, y1, Rgb8{rgb[0], rgb[1], rgb[2]});
      if (!o.values) continue;
      const std::string v = FormatNumber(w(r, c), o.decimals);
      const float tw = font->Measure(v, p.font * 0.85f);
      if (tw > L.cell_w - 2 || p.font * 0.85f > L.cell_h - 2) continue;
      const uint32_t tc = ContrastingTextColor(rgb);  // 0xAABBGGRR
      const Rgb8 col{(uint8_t)(tc & 255), (uint8_t)((tc >> 8) & 255), (uint8_t)((tc >> 16) & 255)};
      font->Draw(img, (x0 + x1) * 0.5f - tw * 0.5f, (y0 + y1) * 0.5f + font->Ascent(p.font * 0.85f) * 0.4f, v,
                 p.font * 0.85f, col);
    }
  }
  if (o.current_row >= 0 && o.current_row < L.rows) {
    const int y0 = L.y0 + (int)std::lround(o.current_row * L.cell_h);
    const int y1 = L.y0 + (int)std::lround((o.current_row + 1) * L.cell_h);
    const int lw = std::max(1, (int)std::lround(2 * p.s));
    StrokeRect(img, L.x0 - lw, y0 - lw, L.x0 + (int)std::lround(L.cols * L.cell_w) + lw, y1 + lw, lw, kOutline);
  }
}

// A vertical bar, high values at the top, with the range's numbers beside it.
void DrawColorbar(const HeatmapFigureOptions& o, const Plan& p, FigureFont* font, RgbaImage* img,
                  const HeatmapFigureLayout& L, int x, int y, int h) {
  const int bw = (int)std::lround(14 * p.s);
  for (int j = 0; j < h; ++j) {
    uint8_t rgb[3];
    ColormapSample(o.colormap, 1.0f - (float)j / (float)std::max(1, h - 1), rgb);
    FillRect(img, x, y + j, x + bw, y + j + 1, Rgb8{rgb[0], rgb[1], rgb[2]});
  }
  // Round numbers along it (core/colour_scale.h), as many as fit a line and a half apart.
  const float asc = font->Ascent(p.font), line = p.font * 1.2f;
  ColourTick ticks[kMaxColourTicks];
  const int n = ColourTicks(FigureColourScale(L.scale), L.vmin, L.vmax, (int)(h / (1.5f * line)) + 1, ticks);
  for (int i = 0; i < n; ++i) {
    const int ty = y + (int)std::lround((1.0f - ticks[i].t) * (float)(h - 1));
    FillRect(img, x + bw, ty, x + bw + (int)std::lround(3 * p.s), ty + std::max(1, (int)std::lround(p.s)), kText);
    const float base = std::clamp(ty + asc * 0.4f, (float)y + asc, (float)(y + h));
    font->Draw(img, x + bw + 5 * p.s, base, ticks[i].text, p.font, kText);
  }
}

}  // namespace

bool ParseFigureScale(const std::string& s, FigureScale* out) {
  static const char* names[] = {"auto", "fixed", "row", "log", "p99", "p99.9"};
  for (int i = 0; i < 6; ++i)
    if (s == names[i]) return *out = (FigureScale)i, true;
  return false;
}
const char* FigureScaleName(FigureScale s) {
  static const char* names[] = {"auto", "fixed", "row", "log", "p99", "p99.9"};
  return names[(int)s];
}
bool ParseFigureLabels(const std::string& s, FigureLabels* out) {
  if (s == "all") return *out = FigureLabels::All, true;
  if (s == "auto") return *out = FigureLabels::Auto, true;
  if (s == "none") return *out = FigureLabels::None, true;
  return false;
}

float FigureT(const HeatmapFigureLayout& L, float w, float row_max) {
  if (!std::isfinite(w)) w = 0;
  return ColourT(FigureColourScale(L.scale), w, L.vmin, L.vmax, row_max);
}

Status RenderHeatmapFigure(const MatrixRM& w, const std::vector<std::string>& source_tokens,
                           const std::vector<std::string>& target_tokens, const HeatmapFigureOptions& o,
                           FigureFont* font, RgbaImage* out, HeatmapFigureLayout* layout) {
  if (w.rows() < 1 || w.cols() < 1) return Status::Error("render: the map is empty");
  if (!(o.scale_factor >= 0.25f && o.scale_factor <= 16.0f)) return Status::Error("render: scale out of range");
  HeatmapFigureLayout L;
  L.rows = (int)w.rows(), L.cols = (int)w.cols();
  ResolveFigureRange(w, o, &L);
  Plan p;
  p.s = o.scale_factor, p.font = o.font_px * p.s, p.pad = 8 * p.s;
  const float longest = (float)std::max(L.rows, L.cols);
  // With values, cells grow (square) to fit the printed weights, as far as max_matrix_px allows.
  const float wanted = std::max(o.cell_px * p.s, ValueCellSide(w, o, font, p.font * 0.85f, p.s));
  const float cell = std::max(1.0f, std::min(wanted, std::floor(o.max_matrix_px * p.s / longest)));
  L.cell_w = L.cell_h = cell;
  PlanLabels(w, source_tokens, target_tokens, o, font, &p, &L);
  if (!o.title.empty()) p.title_h = p.font * 1.6f;
  if (o.colorbar) {  // room for its widest number
    ColourTick ticks[kMaxColourTicks];
    float text = font->Measure("row max", p.font);
    for (int i = 0, n = ColourTicks(FigureColourScale(L.scale), L.vmin, L.vmax, kMaxColourTicks, ticks); i < n; ++i)
      text = std::max(text, font->Measure(ticks[i].text, p.font));
    p.bar_w = 14 * p.s + 8 * p.s + text + 12 * p.s;
  }
  L.x0 = (int)std::lround(p.pad + p.left_w);
  L.y0 = (int)std::lround(p.pad + p.title_h + p.top_h);
  const int mat_w = (int)std::lround(L.cols * cell), mat_h = (int)std::lround(L.rows * cell);
  const int bar_h = std::max(mat_h, (int)std::lround(80 * p.s));
  const int64_t W = L.x0 + mat_w + (int64_t)std::lround(p.bar_w + p.pad);
  const int64_t H = L.y0 + std::max(mat_h, o.colorbar ? bar_h : 0) + (int64_t)std::lround(p.pad + p.font * 0.5f);
  if (W * H > o.max_pixels)
    return Status::Error("render: the figure would be " + std::to_string(W) + " x " + std::to_string(H) +
                         " pixels, over the limit of " + std::to_string(o.max_pixels) + " (lower --dpi)");
  out->Resize((int)W, (int)H, kBackground);
  if (!o.title.empty()) font->Draw(out, p.pad, p.pad + font->Ascent(p.font), o.title, p.font, kText);
  DrawCells(w, o, p, font, out, L);
  DrawLabels(p, o, font, out, L);
  if (o.colorbar) DrawColorbar(o, p, font, out, L, L.x0 + mat_w + (int)std::lround(12 * p.s), L.y0, bar_h);
  if (layout) *layout = L;
  return Status::Ok();
}

}  // namespace attnviz
