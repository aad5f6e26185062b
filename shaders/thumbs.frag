// A thumbnail's cells from its layer: weight -> colour (weightColour, shaders/colour.glsl). Its map
// is max-pooled to about its pixels, so a pixel covers at most 1.5 cells a side: the maximum of up
// to 2 x 2 keeps a one-cell line, as heatmap.frag does zoomed out.
// u_weights: R16F [side, side, layers], each texel a weight divided by its row's scale; u_rows:
// RG32F [side, 1, layers]: r = the row's largest weight, g = its scale.
uniform highp sampler2DArray u_weights;
uniform highp sampler2DArray u_rows;
in vec2 v_cell;
flat in vec4 v_clip;
flat in vec4 v_range_size;
flat in ivec2 v_layer_mode;
flat in vec2 v_cells_per_px;
out vec4 o_color;

void main() {
  if (any(lessThan(gl_FragCoord.xy, v_clip.xy)) || any(greaterThanEqual(gl_FragCoord.xy, v_clip.zw))) discard;
  ivec2 size = ivec2(v_range_size.zw + 0.5);
  int layer = v_layer_mode.x;
  ivec2 n = clamp(ivec2(ceil(v_cells_per_px - 1e-3)), ivec2(1), ivec2(2));
  ivec2 base = n.x == 1 && n.y == 1 ? ivec2(floor(v_cell)) : ivec2(floor(v_cell - 0.5 * v_cells_per_px));
  float w = -1e30, m = 0.0;
  for (int j = 0; j < 2; ++j) {
    if (j >= n.y) break;
    int y = clamp(base.y + j, 0, size.y - 1);
    vec2 row = texelFetch(u_rows, ivec3(y, 0, layer), 0).rg;
    m = max(m, row.r);
    for (int i = 0; i < 2; ++i) {
      if (i >= n.x) break;
      w = max(w, texelFetch(u_weights, ivec3(clamp(base.x + i, 0, size.x - 1), y, layer), 0).r * row.g);
    }
  }
  o_color = vec4(weightColour(max(w, 0.0), v_layer_mode.y, v_range_size.xy, m).rgb, 1.0);
}
