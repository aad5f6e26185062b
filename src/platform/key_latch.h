// KeyLatch: every key press reaches imgui, however short.
//
// imgui 1.86 samples io.KeysDown once per frame, in NewFrame. A key pressed and released between
// two frames is never seen: a quick tap while a software-rendered frame takes 100+ ms, or while
// three embedded viewers share one animation frame. The latch holds such a key down until one
// frame has run with it, then lets it go, so the next frame sees the release.
//
// Use: after the GLFW backend's key callback, OnKey(); after the frame (ImGui::Render and the
// app's own reads of io.KeyCtrl & co.), EndFrame().
#pragma once

#include <GLFW/glfw3.h>

#include <bitset>

#include "imgui.h"

namespace attnviz {

class KeyLatch {
 public:
  static constexpr int kKeys = (int)(sizeof(ImGuiIO::KeysDown) / sizeof(ImGuiIO::KeysDown[0]));

  // After the backend wrote io.KeysDown[key] for this event.
  void OnKey(ImGuiIO& io, int key, int action) {
    if (key < 0 || key >= kKeys) return;
    if (action == GLFW_PRESS) {
      unseen_.set(key);
      held_.reset(key);  // pressed again before the frame: it is down for real now
      return;
    }
    if (action != GLFW_RELEASE || !unseen_.test(key)) return;
    io.KeysDown[key] = true;  // no frame has seen it down yet
    held_.set(key);
    SetModifiers(io);
  }

  // After a frame: every key that was down has been seen; the held ones go up for the next one.
  void EndFrame(ImGuiIO& io) {
    if (held_.any()) {
      for (int k = 0; k < kKeys; ++k)
        if (held_.test(k)) io.KeysDown[k] = false;
      SetModifiers(io);
    }
    held_.reset();
    unseen_.reset();
  }

  bool Holding() const { return held_.any(); }

 private:
  // As the GLFW backend derives them from the key array.
  static void SetModifiers(ImGuiIO& io) {
    io.KeyCtrl = io.KeysDown[GLFW_KEY_LEFT_CONTROL] || io.KeysDown[GLFW_KEY_RIGHT_CONTROL];
    io.KeyShift = io.KeysDown[GLFW_KEY_LEFT_SHIFT] || io.KeysDown[GLFW_KEY_RIGHT_SHIFT];
    io.KeyAlt = io.KeysDown[GLFW_KEY_LEFT_ALT] || io.KeysDown[GLFW_KEY_RIGHT_ALT];
    io.KeySuper = io.KeysDown[GLFW_KEY_LEFT_SUPER] || io.KeysDown[GLFW_KEY_RIGHT_SUPER];
  }

  std::bitset<kKeys> unseen_, held_;
};

}  // namespace attnviz
