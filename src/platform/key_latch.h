// KeyLatch: every key press reaches imgui, however short, and typing keeps its order.
// PressAfterMove (below): a tap or a click faster than a frame lands where the pointer went.
//
// imgui 1.86 samples io.KeysDown once per frame, in NewFrame. A key pressed and released between
// two frames is never seen: a quick tap while a software-rendered frame takes 100+ ms, or while
// three embedded viewers share one animation frame. The latch holds such a key down until one
// frame has run with it, then lets it go, so the next frame sees the release.
//
// It also keeps typing in order. imgui 1.86 applies a frame's typed characters before its keys, so
// "Ctrl+A, t" or "Backspace, c" typed within one slow frame came out as "t" selected and replaced
// ("he green cars"), or as the "c" deleted. A character typed after such a key (one that types
// nothing itself, or any key with Ctrl, Alt or Super) waits for the next frame.
//
// Use: after the GLFW backend's key callback, OnKey(); instead of its char callback, OnChar();
// after the frame (ImGui::Render and the app's own reads of io.KeyCtrl & co.), EndFrame().
#pragma once

#include <GLFW/glfw3.h>

#include <bitset>
#include <vector>

#include "imgui.h"

namespace attnviz {

class KeyLatch {
 public:
  static constexpr int kKeys = (int)(sizeof(ImGuiIO::KeysDown) / sizeof(ImGuiIO::KeysDown[0]));

  // After the backend wrote io.KeysDown[key] for this event.
  void OnKey(ImGuiIO& io, int key, int action) {
    if (key < 0 || key >= kKeys) return;
    if (action == GLFW_PRESS) {
      if (EditsOrMoves(io, key)) edit_key_ = true;
      unseen_.set(key);
      held_.reset(key);  // pressed again before the frame: it is down for real now
      return;
    }
    if (action != GLFW_RELEASE) return;
    // A modifier let go while a key pressed with it waits for its first frame is held for that frame
    // too: Ctrl held across frames, then C tapped and Ctrl released before the next frame, is Ctrl+C
    // (a slow frame saw a bare C, and copy, paste and select-all failed at random).
    const bool with_modifier = IsModifier(key) && (unseen_ & ~Modifiers()).any();
    if (!unseen_.test(key) && !with_modifier) return;
    io.KeysDown[key] = true;  // no frame has seen it down yet, or the key it modifies
    held_.set(key);
    SetModifiers(io);
  }

  // A typed character (the GLFW char callback's).
  void OnChar(ImGuiIO& io, unsigned int c) {
    if (edit_key_ || !waiting_.empty())
      waiting_.push_back(c);
    else
      io.AddInputCharacter(c);
  }

  // After a frame: every key that was down has been seen; the held ones go up for the next one,
  // and the characters that waited are typed in it.
  void EndFrame(ImGuiIO& io) {
    for (unsigned int c : waiting_) io.AddInputCharacter(c);
    waiting_.clear();
    edit_key_ = false;
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

  static bool IsModifier(int key) { return key >= GLFW_KEY_LEFT_SHIFT && key <= GLFW_KEY_RIGHT_SUPER; }
  static const std::bitset<kKeys>& Modifiers() {
    static const std::bitset<kKeys> m = [] {
      std::bitset<kKeys> b;
      for (int k = GLFW_KEY_LEFT_SHIFT; k <= GLFW_KEY_RIGHT_SUPER && k < kKeys; ++k) b.set(k);
      return b;
    }();
    return m;
  }

  // GLFW's printable keys are 32..162 and the keypad's 320..336; 340..348 are the modifiers.
  static bool EditsOrMoves(const ImGuiIO& io, int key) {
    if (IsModifier(key) || key == GLFW_KEY_MENU) return false;
    const bool printable = key < GLFW_KEY_ESCAPE || (key >= GLFW_KEY_KP_0 && key <= GLFW_KEY_KP_EQUAL);
    return !printable || io.KeyCtrl || io.KeyAlt || io.KeySuper;
  }

  std::bitset<kKeys> unseen_, held_;
  std::vector<unsigned int> waiting_;  // characters typed after an editing key, for the next frame
  bool edit_key_ = false;              // such a key was pressed since the last frame
};

// PressAfterMove: a press where the pointer just arrived waits one frame (a tap on a touch screen,
// or a click faster than a frame). imgui 1.86 lets a tab, or any item that allows overlap, take a
// press only when the previous frame hovered it or nothing: a press that moved the pointer from one
// tab to another in a single frame was ignored, so on a phone every tap on a tab after the first
// did nothing. The pointer's first frame at its new place is a hover; the press comes in the next.
//
// Use: instead of the backend's mouse-button callback, OnButton() (when it returns false, call the
// backend's); after the backend's NewFrame, BeginFrame() with the cursor position; after the frame,
// EndFrame() with a function that hands a waiting press to the backend.
class PressAfterMove {
 public:
  // True when this press must wait for the next frame.
  bool OnButton(int button, int action, double x, double y) {
    if (action != GLFW_PRESS || button < 0 || button >= 5) return false;
    if (x == seen_x_ && y == seen_y_) return false;
    waiting_ |= 1u << button;
    return true;
  }

  // After the backend's NewFrame: where the pointer is this frame; a waiting button is up in it
  // (the backend reads a held button as down).
  void BeginFrame(ImGuiIO& io, double x, double y) {
    seen_x_ = x, seen_y_ = y;
    for (int b = 0; b < 5; ++b)
      if (waiting_ & (1u << b)) io.MouseDown[b] = false;
  }

  // After the frame: the presses that waited, for the next frame.
  template <class Press>
  void EndFrame(Press press) {
    for (int b = 0; b < 5; ++b)
      if (waiting_ & (1u << b)) press(b);
    waiting_ = 0;
  }

 private:
  double seen_x_ = -1e30, seen_y_ = -1e30;  // the pointer where the last frame saw it
  unsigned waiting_ = 0;                    // buttons whose press waits for the next frame
};

}  // namespace attnviz
