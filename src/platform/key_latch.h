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
// nothing itself, or any key with Ctrl, Alt or Super) waits for the next frame, and so does a
// second such key: one frame sees one press of a key, so "Backspace, Backspace" or "Ctrl+Z,
// Ctrl+Z" within one frame did it once. Each waiting key gets a frame of its own, in order, with
// the modifiers it was pressed with, and the characters typed after it wait behind it.
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
  static constexpr size_t kMaxWaiting = 256;  // keys and characters waiting for later frames, at most

  // After the backend wrote io.KeysDown[key] for this event.
  void OnKey(ImGuiIO& io, int key, int action) {
    if (key < 0 || key >= kKeys) return;
    forced_up_.reset(key);  // a modifier forced up for a waiting key: its own event decides now
    if (action == GLFW_PRESS) physical_.set(key);
    if (action == GLFW_RELEASE) physical_.reset(key);
    if (action == GLFW_PRESS) {
      if (EditsOrMoves(key)) {
        if (edit_key_ || !queue_.empty()) {          // this frame has its editing key: this one waits
          if (queue_.size() >= kMaxWaiting) return;  // a flood (no frames coming): the rest is dropped
          queue_.push_back(Pending::Key(key, PhysicalMods()));
          if (!unseen_.test(key)) io.KeysDown[key] = false;  // shown when its turn comes
          return;
        }
        edit_key_ = true;
      }
      unseen_.set(key);
      held_.reset(key);  // pressed again before the frame: it is down for real now
      return;
    }
    if (action != GLFW_RELEASE) return;
    for (Pending& p : queue_)
      if (p.key == key) p.released = true;  // its frame lets it go after showing it
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
    if (edit_key_ || !queue_.empty()) {
      if (queue_.size() < kMaxWaiting) queue_.push_back(Pending::Char(c));
    } else {
      io.AddInputCharacter(c);
    }
  }

  // After a frame: every key that was down has been seen; the held ones go up for the next one.
  // The next frame gets what waited, in order: characters up to and with the first waiting key; a
  // key that was down in this frame waits one frame more (imgui sees a press only after a frame
  // with the key up).
  void EndFrame(ImGuiIO& io) {
    edit_key_ = false;
    std::bitset<kKeys> was_down;
    for (int k = 0; k < kKeys; ++k) was_down[k] = io.KeysDown[k];
    bool changed = held_.any() || forced_up_.any();
    for (int k = 0; k < kKeys; ++k) {
      if (held_.test(k)) io.KeysDown[k] = false;
      if (forced_up_.test(k)) io.KeysDown[k] = true;  // still physically down: back as it is
    }
    held_.reset();
    unseen_.reset();
    forced_up_.reset();
    size_t used = 0;
    bool typed = false;
    while (used < queue_.size()) {
      const Pending p = queue_[used];
      if (p.key >= 0 && was_down.test(p.key)) break;  // up for a frame first
      // imgui drops a frame's characters while Ctrl, Alt or Super is down: such a key gets the next frame
      if (p.key >= 0 && typed && (p.mods[0] || p.mods[2] || p.mods[3])) break;
      ++used;
      if (p.key < 0) {
        io.AddInputCharacter(p.c);
        typed = true;
        continue;
      }
      Show(io, p);
      changed = true;
      break;
    }
    queue_.erase(queue_.begin(), queue_.begin() + (long)used);
    if (changed) SetModifiers(io);
  }

  // The viewer lost the keyboard: what it held, what waited and what it thought was down go (the
  // releases of keys let go elsewhere, Ctrl of a Ctrl+Tab, never come).
  void Blur() {
    unseen_.reset(), held_.reset(), forced_up_.reset(), physical_.reset();
    queue_.clear();
    edit_key_ = false;
  }

  bool Holding() const { return held_.any(); }
  bool Waiting() const { return !queue_.empty(); }  // keys or characters wait for later frames

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

  // GLFW's printable keys are 32..162 and the keypad's 320..336; 340..348 are the modifiers. With
  // the modifiers as pressed: a Ctrl the latch holds for a frame does not make "t" typed after it Ctrl+T.
  bool EditsOrMoves(int key) const {
    if (IsModifier(key) || key == GLFW_KEY_MENU) return false;
    const bool printable = key < GLFW_KEY_ESCAPE || (key >= GLFW_KEY_KP_0 && key <= GLFW_KEY_KP_EQUAL);
    const std::bitset<4> m = PhysicalMods();
    return !printable || m[0] || m[2] || m[3];
  }

  // A character, or a key press (key >= 0) with the modifiers down when it was pressed.
  struct Pending {
    int key = -1;
    unsigned int c = 0;
    bool released = false;  // let go before its frame came
    bool mods[4] = {};      // Ctrl, Shift, Alt, Super
    static Pending Char(unsigned int c) {
      Pending p;
      p.c = c;
      return p;
    }
    static Pending Key(int key, const std::bitset<4>& mods) {
      Pending p;
      p.key = key;
      for (int m = 0; m < 4; ++m) p.mods[m] = mods[(size_t)m];
      return p;
    }
  };

  // Ctrl, Shift, Alt, Super as the keyboard has them (io's may be held by the latch for a frame).
  std::bitset<4> PhysicalMods() const {
    std::bitset<4> m;
    m[0] = physical_[GLFW_KEY_LEFT_CONTROL] || physical_[GLFW_KEY_RIGHT_CONTROL];
    m[1] = physical_[GLFW_KEY_LEFT_SHIFT] || physical_[GLFW_KEY_RIGHT_SHIFT];
    m[2] = physical_[GLFW_KEY_LEFT_ALT] || physical_[GLFW_KEY_RIGHT_ALT];
    m[3] = physical_[GLFW_KEY_LEFT_SUPER] || physical_[GLFW_KEY_RIGHT_SUPER];
    return m;
  }

  // A waiting key's frame: it is down (and goes up after the frame if it was let go meanwhile),
  // and the modifiers are as they were when it was pressed (a modifier pressed since is up for this
  // frame, one let go since is down for it).
  void Show(ImGuiIO& io, const Pending& p) {
    static const int kLeft[4] = {GLFW_KEY_LEFT_CONTROL, GLFW_KEY_LEFT_SHIFT, GLFW_KEY_LEFT_ALT, GLFW_KEY_LEFT_SUPER};
    static const int kRight[4] = {GLFW_KEY_RIGHT_CONTROL, GLFW_KEY_RIGHT_SHIFT, GLFW_KEY_RIGHT_ALT,
                                  GLFW_KEY_RIGHT_SUPER};
    for (int m = 0; m < 4; ++m) {
      const bool down = io.KeysDown[kLeft[m]] || io.KeysDown[kRight[m]];
      if (p.mods[m] && !down) {
        io.KeysDown[kLeft[m]] = true;
        held_.set(kLeft[m]);
      } else if (!p.mods[m] && down) {
        for (int k : {kLeft[m], kRight[m]})
          if (io.KeysDown[k]) io.KeysDown[k] = false, forced_up_.set(k);
      }
    }
    io.KeysDown[p.key] = true;
    unseen_.set(p.key);
    if (p.released) held_.set(p.key);
    edit_key_ = true;
  }

  std::bitset<kKeys> unseen_, held_;
  std::bitset<kKeys> forced_up_;  // modifiers physically down but up for a waiting key's frame
  std::bitset<kKeys> physical_;   // down as the key events say (not as the latch shows them)
  std::vector<Pending> queue_;    // characters and keys after this frame's editing key, in order
  bool edit_key_ = false;         // the coming frame has an editing key
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
