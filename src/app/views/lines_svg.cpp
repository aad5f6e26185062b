// attnviz view "lines": File > Save as SVG writes what the view shows (io/svg_lines.h): the same
// threshold, decoding step, per-target or global opacity and colormap, and in all-heads mode every
// ticked head in its colour.
#include "app/app_state.h"
#include "app/views/lines.h"
#include "io/svg_lines.h"

namespace attnviz {

bool LinesView::ExportSvg(AppState* s, std::string* svg, Status* error) {
  const AttentionMap& m = s->CurrentMap();
  const HeatmapStyle style = ResolveStyle(s->style, m);
  SvgLinesOptions o;
  o.colormap = style.colormap;
  o.threshold = state.effective_threshold;
  o.row_normalised = state.row_normalised;
  o.queries_left = state.queries_left;
  o.vmin = style.vmin, o.vmax = style.vmax;
  o.rows_shown = state.rect_valid ? state.rows_shown : (int)m.weights.rows();
  o.title = s->Current().title + (m.name.empty() ? "" : " - " + m.name);
  for (int map : state.shown_maps) {  // all heads: each ticked head of the layer in its colour
    int layer = 0, head = 0;
    s->Current().LayerHeadOf(map, &layer, &head);
    SvgLinesHead h;
    h.w = &s->Current().maps[(size_t)map].weights;
    h.head = head;
    CategoryColour(head, h.rgb);
    o.heads.push_back(h);
  }
  if (!o.heads.empty()) o.title = s->Current().title + " - layer " + std::to_string(state.layer) + ", all heads";
  *error = LinesSvgString(m.weights, m.source_tokens.vec(), m.target_tokens.vec(), o, svg);
  return true;
}

}  // namespace attnviz
