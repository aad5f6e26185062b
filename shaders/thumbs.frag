// A thumbnail's cells from its layer: weight -> colour (weightColour, shaders/colour.glsl). Its map
// is max-pooled to about its pixels, so a pixel covers at most 1.5 cells a side: the maximum of up
// to 2 x 2 keeps a one-cell line, as heatmap.frag does zoomed out.
// u_weights: R16F [128, 128, layers], each texel a weight divided by its row's scale; u_rows:
// RG32F [128, 1, layers]: r = the row's largest weight, g = its scale.
uniform highp sampler2DArray u_weights;
uniform highp sampler2DArray u_rows;
in vec2 v_cell;
flat in vec4 v_range_size;
flat in ivec2 v_layer_mode;
flat in vec2 v_cells_per_px;
out vec4 o_color;

// The weight of cell c (times its row's scale); m becomes the larger of m and its row's largest weight.
float cellWeight(ivec2 c, int layer, inout float m) {
  vec2 row = texelFetch(u_rows, ivec3(c.y, 0, layer), 0).rg;
  m = max(m, row.r);
  return texelFetch(u_weights, ivec3(c, layer), 0).r * row.g;
}

// Straight-line code, no loops: with loops over the same fetches a software renderer (SwiftShader)
// took ~120 ns a thumbnail pixel (frame bench, VIEW=grid-lazy: ~36 ms for ~300,000 pixels), against
// ~30 for the heatmap view's.
void main() {
  ivec2 last = ivec2(v_range_size.zw + 0.5) - 1;
  int layer = v_layer_mode.x;
  float m = 0.0, w;
  if (v_cells_per_px.x <= 1.001 && v_cells_per_px.y <= 1.001) {
    w = cellWeight(clamp(ivec2(floor(v_cell)), ivec2(0), last), layer, m);
  } else {  // up to 2 x 2 cells a pixel: their maximum (a side of one cell fetches it twice)
    ivec2 n = clamp(ivec2(ceil(v_cells_per_px - 1e-3)), ivec2(1), ivec2(2));
    ivec2 a = clamp(ivec2(floor(v_cell - 0.5 * v_cells_per_px)), ivec2(0), last);
    ivec2 b = min(a + n - 1, last);
    w = max(max(cellWeight(a, layer, m), cellWeight(ivec2(b.x, a.y), layer, m)),
            max(cellWeight(ivec2(a.x, b.y), layer, m), cellWeight(b, layer, m)));
  }
  o_color = vec4(weightColour(max(w, 0.0), v_layer_mode.y, v_range_size.xy, m).rgb, 1.0);
}
