// attnviz render: reading frames back for exports (PNG of the view at 1x-4x).
//
//   OffscreenTarget       an RGBA8 framebuffer object to draw a frame into at any size (the native
//                         app's PNG: its window's framebuffer is only as large as the window)
//   ReadFramebufferRect   pixels of a rectangle of the bound framebuffer, top row first
#pragma once
#include <cstdint>
#include <vector>

#include "core/status.h"

namespace attnviz {

class OffscreenTarget {
 public:
  ~OffscreenTarget() { Release(); }
  // Creates (or resizes to) a w x h RGBA8 target and binds it; fails above GL_MAX_RENDERBUFFER_SIZE.
  Status Begin(int w, int h);
  void End();      // binds the default framebuffer again
  void Release();  // frees the GL objects

 private:
  unsigned int fbo_ = 0, color_ = 0;
  int w_ = 0, h_ = 0;
};

// rect = x0, y0, x1, y1 in framebuffer pixels, y down, clamped to fb_w x fb_h. Reads the bound
// framebuffer (glReadPixels, bottom row first) and flips it: *rgba is [h, w, 4], top row first.
Status ReadFramebufferRect(int fb_w, int fb_h, const int rect[4], std::vector<uint8_t>* rgba, int* w, int* h);

}  // namespace attnviz
