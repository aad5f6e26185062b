// A grid's thumbnails in one instanced draw: one quad per thumbnail, its data per instance, the quad
// cut to the part in view on the CPU (no discard, nothing to clip per pixel). The renderer prepends
// "#version 300 es" and precision lines.
layout(location = 0) in vec2 a_corner;      // unit-square corner (0..1)
layout(location = 1) in vec4 a_rect;        // x0, y0 (top-left), x1, y1 (bottom-right) in NDC: the part in view
layout(location = 2) in vec4 a_view;        // col0, row0, col1, row1: the cells at those corners
layout(location = 3) in vec4 a_range_size;  // vmin, vmax of the scale; cols, rows of its layer
layout(location = 4) in vec2 a_layer_mode;  // layer, scale mode (0 global, 1 per row, 2 log10)
uniform vec2 u_fb;                          // framebuffer size in pixels
out vec2 v_cell;                            // position in cells: x = column, y = row
flat out vec4 v_range_size;
flat out ivec2 v_layer_mode;
flat out vec2 v_cells_per_px;  // cells one pixel covers, x and y
void main() {
  v_cell = mix(a_view.xy, a_view.zw, a_corner);
  v_range_size = a_range_size;
  v_layer_mode = ivec2(a_layer_mode + 0.5);
  vec2 px = abs(a_rect.zw - a_rect.xy) * 0.5 * u_fb;
  v_cells_per_px = (a_view.zw - a_view.xy) / max(px, vec2(1e-6));
  gl_Position = vec4(mix(a_rect.xy, a_rect.zw, a_corner), 0.0, 1.0);
}
