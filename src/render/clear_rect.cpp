// Opaque rectangles filled by a scissored clear (clear_rect.h).
#include "render/clear_rect.h"

#include "render/gl.h"

namespace attnviz {

void ClearRect(const int box[4], int fb_h, const float rgba[4]) {
  const int w = box[2] - box[0], h = box[3] - box[1];
  if (w <= 0 || h <= 0) return;
  glEnable(GL_SCISSOR_TEST);
  glScissor(box[0], fb_h - box[3], w, h);  // GL's origin is the bottom left
  glClearColor(rgba[0], rgba[1], rgba[2], rgba[3]);
  glClear(GL_COLOR_BUFFER_BIT);
}

void ClearFrame(const float rgba[4]) {
  glDisable(GL_SCISSOR_TEST);
  glClearColor(rgba[0], rgba[1], rgba[2], rgba[3]);
  glClear(GL_COLOR_BUFFER_BIT);
}

}  // namespace attnviz
