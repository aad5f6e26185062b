// attnviz render: framebuffer read-back for exports (offscreen.h).
#include "render/offscreen.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "render/gl.h"

namespace attnviz {

Status OffscreenTarget::Begin(int w, int h) {
  GLint max_rb = 0;
  glGetIntegerv(GL_MAX_RENDERBUFFER_SIZE, &max_rb);
  if (w < 1 || h < 1 || w > max_rb || h > max_rb)
    return Status::Error("export: " + std::to_string(w) + " x " + std::to_string(h) +
                         " pixels is more than this GPU draws offscreen (" + std::to_string(max_rb) + ")");
  if (!fbo_) glGenFramebuffers(1, &fbo_);
  if (!color_) glGenRenderbuffers(1, &color_);
  glBindRenderbuffer(GL_RENDERBUFFER, color_);
  if (w != w_ || h != h_) glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, w, h);
  w_ = w, h_ = h;
  glBindFramebuffer(GL_FRAMEBUFFER, fbo_);
  glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, color_);
  if (glCheckFramebufferStatus(GL_FRAMEBUFFER) != GL_FRAMEBUFFER_COMPLETE) {
    End();
    return Status::Error("export: the offscreen framebuffer is incomplete");
  }
  return Status::Ok();
}

void OffscreenTarget::End() {
  glBindFramebuffer(GL_FRAMEBUFFER, 0);
}

void OffscreenTarget::Release() {
  if (fbo_) glDeleteFramebuffers(1, &fbo_);
  if (color_) glDeleteRenderbuffers(1, &color_);
  fbo_ = color_ = 0;
  w_ = h_ = 0;
}

Status ReadFramebufferRect(int fb_w, int fb_h, const int rect[4], std::vector<uint8_t>* rgba, int* w, int* h) {
  const int x0 = std::clamp(rect[0], 0, fb_w), x1 = std::clamp(rect[2], 0, fb_w);
  const int y0 = std::clamp(rect[1], 0, fb_h), y1 = std::clamp(rect[3], 0, fb_h);
  if (x1 <= x0 || y1 <= y0) return Status::Error("export: the view has no area to capture");
  *w = x1 - x0, *h = y1 - y0;
  const size_t row = (size_t)*w * 4;
  rgba->resize(row * (size_t)*h);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadPixels(x0, fb_h - y1, *w, *h, GL_RGBA, GL_UNSIGNED_BYTE, rgba->data());  // GL rows are bottom-up
  if (glGetError() != GL_NO_ERROR) return Status::Error("export: glReadPixels failed");
  std::vector<uint8_t> tmp(row);
  for (int y = 0; y < *h / 2; ++y) {
    uint8_t* a = rgba->data() + (size_t)y * row;
    uint8_t* b = rgba->data() + (size_t)(*h - 1 - y) * row;
    std::memcpy(tmp.data(), a, row);
    std::memcpy(a, b, row);
    std::memcpy(b, tmp.data(), row);
  }
  for (size_t i = 3; i < rgba->size(); i += 4) (*rgba)[i] = 255;  // the page's alpha says nothing about the figure
  return Status::Ok();
}

}  // namespace attnviz
