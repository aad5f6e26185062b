// Heatmap cells: weight -> colour (weightColour, shaders/colour.glsl, prepended by the renderer).
// u_weights_a/b: R16F [rows, cols] (texel x = column, y = row), NEAREST, each texel a weight divided
// by its row's scale; b is the next animation frame, mixed by u_frame_mix. u_rows_a/b: RG32F
// [rows, 1]: r = the row's largest weight (per-row colour), g = its scale (a power of two).
uniform sampler2D u_weights_a;
uniform sampler2D u_weights_b;
uniform sampler2D u_rows_a;
uniform sampler2D u_rows_b;
uniform float u_frame_mix;      // 0 = frame a, 1 = frame b
uniform vec2 u_range;           // vmin, vmax of the scale
uniform int u_scale_mode;       // 0 global linear, 1 per row (divide by row max), 2 log10
uniform int u_rows_shown;       // rows >= this are not yet emitted (decoding animation)
uniform ivec2 u_size;           // cols, rows
uniform vec4 u_empty_color;     // colour of rows not yet shown
uniform vec4 u_grid_color;      // cell border colour (alpha 0 = none)
uniform float u_cell_px;        // on-screen size of one cell in pixels (for borders)
uniform vec2 u_cells_per_px;    // matrix cells covered by one pixel, x and y (> 1 when zoomed out)
in vec2 v_cell;
out vec4 o_color;

// The scales of row y in frames a (x) and b (y), fetched once per row.
vec2 rowScales(int y) {
  float a = texelFetch(u_rows_a, ivec2(y, 0), 0).g;
  return vec2(a, u_frame_mix > 0.0 ? texelFetch(u_rows_b, ivec2(y, 0), 0).g : a);
}

// A cell's weight; the next frame's texture is read only while frames are being mixed (a
// software renderer pays for every fetch: up to 64 per pixel zoomed out).
float weightAt(ivec2 c, vec2 s) {
  float a = texelFetch(u_weights_a, c, 0).r * s.x;
  return u_frame_mix > 0.0 ? mix(a, texelFetch(u_weights_b, c, 0).r * s.y, u_frame_mix) : a;
}

void main() {
  ivec2 cell = clamp(ivec2(floor(v_cell)), ivec2(0), u_size - 1);
  if (v_cell.x < 0.0 || v_cell.y < 0.0 || v_cell.x >= float(u_size.x) || v_cell.y >= float(u_size.y)) {
    discard;
  }
  if (cell.y >= u_rows_shown) {
    o_color = u_empty_color;
    return;
  }
  // Zoomed out, one pixel covers several cells: show their maximum (up to 8 x 8 samples), so
  // a one-cell-wide alignment stays visible instead of being skipped by nearest sampling.
  ivec2 n = clamp(ivec2(ceil(u_cells_per_px - 1e-3)), ivec2(1), ivec2(8));
  ivec2 step = max(ivec2(1), ivec2(floor(u_cells_per_px / vec2(n))));
  float w = 0.0;
  if (n.x == 1 && n.y == 1) {
    w = weightAt(cell, rowScales(cell.y));
  } else {
    ivec2 base = ivec2(floor(v_cell - 0.5 * u_cells_per_px));
    w = -1e30;
    for (int j = 0; j < 8; ++j) {
      if (j >= n.y) break;
      int y = clamp(base.y + j * step.y, 0, u_size.y - 1);
      if (y >= u_rows_shown) continue;
      vec2 s = rowScales(y);
      for (int i = 0; i < 8; ++i) {
        if (i >= n.x) break;
        w = max(w, weightAt(ivec2(clamp(base.x + i * step.x, 0, u_size.x - 1), y), s));
      }
    }
    w = max(w, 0.0);
  }
  float m = u_scale_mode == 1 ? texelFetch(u_rows_a, ivec2(cell.y, 0), 0).r : 0.0;
  vec4 c = weightColour(w, u_scale_mode, u_range, m);
  if (u_grid_color.a > 0.0 && u_cell_px >= 6.0) {
    vec2 f = fract(v_cell) * u_cell_px;
    if (f.x < 1.0 || f.y < 1.0) c = mix(c, u_grid_color, u_grid_color.a);
  }
  o_color = vec4(c.rgb, 1.0);
}
