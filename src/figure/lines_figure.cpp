// attnviz figure: the lines view as a raster figure (lines_figure.h).
#include "figure/lines_figure.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace attnviz {

void DrawLineAA(RgbaImage* img, float x0, float y0, float x1, float y1, float width, Rgb8 c, float opacity) {
  if (x1 < x0) std::swap(x0, x1), std::swap(y0, y1);
  const float dx = x1 - x0, dy = y1 - y0;
  if (!(dx > 0) || !(width > 0) || !(opacity > 0)) return;
  const float cos_t = dx / std::sqrt(dx * dx + dy * dy);  // a pixel's distance to the line: its vertical offset x this
  const float hw = 0.5f * width;
  const float reach = (hw + 1.0f) / cos_t;  // rows a column's pixels can be covered in, either side
  const int xa = std::max(0, (int)std::floor(x0)), xb = std::min(img->width, (int)std::ceil(x1));
  for (int x = xa; x < xb; ++x) {
    const float px = (float)x + 0.5f;
    const float hx = std::clamp(std::min(px + 0.5f, x1) - std::max(px - 0.5f, x0), 0.0f, 1.0f);  // flat ends
    const float yc = y0 + (std::clamp(px, x0, x1) - x0) / dx * dy;  // the line's centre in this column
    const int ya = std::max(0, (int)std::floor(yc - reach)), yb = std::min(img->height - 1, (int)std::ceil(yc + reach));
    for (int y = ya; y <= yb; ++y) {
      const float d = ((float)y + 0.5f - yc) * cos_t;  // signed distance of the pixel's centre
      const float cov = std::clamp(std::min(hw, d + 0.5f) - std::max(-hw, d - 0.5f), 0.0f, 1.0f) * hx;
      if (cov > 0) BlendPixel(img, x, y, c, (int)(cov * opacity * 255.0f + 0.5f));
    }
  }
}

Status RenderLinesFigure(const MatrixRM& w, const std::vector<std::string>& source_tokens,
                         const std::vector<std::string>& target_tokens, const LinesFigureOptions& fo, FigureFont* font,
                         RgbaImage* out, LinesLayout* layout) {
  const SvgLinesOptions& o = fo.lines;
  LinesLayout L;
  std::vector<SvgLinesHead> maps;
  int shown = 0;
  Status st = LayOutLines(w, o, &L, &maps, &shown);
  if (!st) return st;
  if (layout) *layout = L;
  const float k = std::clamp(fo.scale_factor, 0.25f, 16.0f);  // --dpi 24 .. 1536
  const int width = (int)std::ceil(L.width * k), height = (int)std::ceil(L.height * k);
  if ((int64_t)width * height > fo.max_pixels)
    return Status::Error("lines figure: " + std::to_string(width) + " x " + std::to_string(height) +
                         " px is over the limit of " + std::to_string(fo.max_pixels) +
                         " pixels (lower --dpi, or hide tokens)");
  out->Resize(width, height, Rgb8{255, 255, 255});
  const Rgb8 black{0, 0, 0}, dimmed{166, 166, 166};  // text, and a row not yet decoded (the SVG's 0.35 opacity)
  const float px = o.font_px * k;
  if (!o.title.empty()) font->Draw(out, 8 * k, L.title_y * k, o.title, px, black);
  for (size_t i = 0; i < o.heads.size(); ++i) {
    const float x = L.LegendX((int)i, o.font_px);
    const SvgLinesHead& h = o.heads[i];
    FillRect(out, (int)std::lround(x * k), (int)std::lround(L.legend_y * k), (int)std::lround((x + o.font_px) * k),
             (int)std::lround((L.legend_y + o.font_px) * k), Rgb8{h.rgb[0], h.rgb[1], h.rgb[2]});
    font->Draw(out, (x + o.font_px * 1.3f) * k, (L.legend_y + o.font_px * 0.85f) * k, "head " + std::to_string(h.head),
               px, black);
  }
  for (const SvgLinesHead& h : maps)
    ForEachLine(h, shown, o, [&](int r, int c, float, const LineStyle& s) {
      DrawLineAA(out, L.line_source * k, L.YOf(c) * k, L.line_target * k, L.YOf(r) * k, s.width * k,
                 Rgb8{s.rgb[0], s.rgb[1], s.rgb[2]}, s.opacity);
    });
  // Labels: the left column's end at its anchor, the right column's start there.
  const auto label = [&](const std::string& t, float anchor, bool left, int i, Rgb8 c) {
    const float x = left ? anchor * k - font->Measure(t, px) : anchor * k;
    font->Draw(out, x, (L.YOf(i) + o.font_px * 0.35f) * k, t, px, c);
  };
  for (int c = 0; c < (int)w.cols(); ++c) label(LinesLabel(source_tokens, c), L.x_source, L.source_left, c, black);
  for (int r = 0; r < (int)w.rows(); ++r)
    label(LinesLabel(target_tokens, r), L.x_target, !L.source_left, r, r < shown ? black : dimmed);
  return Status::Ok();
}

}  // namespace attnviz
