// Heatmap quad. The renderer prepends "#version 300 es" and precision lines.
// a_corner: unit-square corner (0..1). The quad covers u_rect_ndc on screen and
// shows the sub-rectangle u_view of the matrix (zoom and pan), in matrix units
// (x = column/key index, y = row/query index).
layout(location = 0) in vec2 a_corner;
uniform vec4 u_rect_ndc;  // x0, y0 (top-left), x1, y1 (bottom-right) in NDC
uniform vec4 u_view;      // col0, row0, col1, row1: visible part of the matrix, in cells
out vec2 v_cell;          // position in cell units: x = column, y = row
void main() {
  v_cell = mix(u_view.xy, u_view.zw, a_corner);
  gl_Position = vec4(mix(u_rect_ndc.xy, u_rect_ndc.zw, a_corner), 0.0, 1.0);
}
