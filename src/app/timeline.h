// attnviz app: the animation timeline (play/pause, step, speed, loop, scrubber).
//
// Two modes:
//   Decoding  position k in [0, count]: the first k rows (emitted target words) are shown
//   Frames    position x in [0, count - 1]: frame floor(x), blended towards the next by fract(x)
#pragma once

namespace attnviz {

enum class TimelineMode { Decoding, Frames };

struct Timeline {
  TimelineMode mode = TimelineMode::Decoding;
  int count = 0;          // rows (Decoding) or frames (Frames)
  float position = 0.0f;  // see modes above
  bool playing = false;   // advancing with time
  bool loop = false;      // wrap around at the end
  float speed = 2.0f;     // steps (rows or frames) per second

  void Reset(TimelineMode m, int n);  // stops, and shows everything (Decoding) or frame 0 (Frames)
  void Advance(float dt);             // moves position by dt * speed while playing
  void Play();                        // starts; restarts from 0 when at the end
  void StepForward();                 // one whole step, pauses
  void StepBack();                    // one whole step back, pauses
  void Home();                        // position 0, pauses
  void End();                         // last position, pauses
  float Max() const;                  // the largest position
  int Step() const;                   // rows shown (Decoding) or frame index (Frames)
  float Fraction() const;             // blend towards the next frame (Frames), else 0
};

// Draws the timeline bar (buttons, scrubber, speed, loop). Returns true if the user changed it.
bool DrawTimelineControls(Timeline* t, const char* step_label);

}  // namespace attnviz
