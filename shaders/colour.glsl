// Shared by the heatmap fragment shaders (the renderer puts it after the version lines): a weight to
// its colour. u_lut: the colormap, RGBA8 [1, 256].
uniform sampler2D u_lut;

// w to the colormap's colour in a scale mode: 0 linear over range (vmin, vmax), 1 per row (over the
// row's largest weight, row_max), 2 log10 over range. Fetches one of the 256 texels, the one
// texture() at its centre would give (no coordinates to filter: cheaper for a software renderer).
vec4 weightColour(float w, int mode, vec2 range, float row_max) {
  float t;
  if (mode == 1) {
    t = row_max > 0.0 ? w / row_max : 0.0;
  } else if (mode == 2) {
    float lo = log(max(range.x, 1e-12));
    float hi = log(max(range.y, 1e-12));
    t = (log(max(w, 1e-12)) - lo) / max(hi - lo, 1e-12);
  } else {
    t = (w - range.x) / max(range.y - range.x, 1e-12);
  }
  t = clamp(t, 0.0, 1.0);
  return texelFetch(u_lut, ivec2(int(t * 255.0 + 0.5), 0), 0);
}
