#include "app/timeline.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "imgui.h"

namespace attnviz {

float Timeline::Max() const {
  if (count <= 0) return 0.0f;
  return mode == TimelineMode::Decoding ? (float)count : (float)(count - 1);
}

void Timeline::Reset(TimelineMode m, int n) {
  mode = m;
  count = std::max(0, n);
  playing = false;
  position = mode == TimelineMode::Decoding ? Max() : 0.0f;
}

void Timeline::Advance(float dt) {
  if (!playing || count <= 0) return;
  position += dt * speed;
  const float mx = Max();
  if (position >= mx) {
    if (loop && mx > 0) {
      position = std::fmod(position, mx + (mode == TimelineMode::Decoding ? 1.0f : 0.0f));
    } else {
      position = mx;
      playing = false;
    }
  }
}

void Timeline::Play() {
  if (position >= Max()) position = 0.0f;
  playing = true;
}

void Timeline::StepForward() {
  playing = false;
  position = std::min(Max(), std::floor(position + 1e-4f) + 1.0f);
}

void Timeline::StepBack() {
  playing = false;
  position = std::max(0.0f, std::ceil(position - 1e-4f) - 1.0f);
}

void Timeline::Home() {
  playing = false;
  position = 0.0f;
}

void Timeline::End() {
  playing = false;
  position = Max();
}

int Timeline::Step() const {
  return (int)std::floor(position + 1e-4f);
}

float Timeline::Fraction() const {
  if (mode != TimelineMode::Frames) return 0.0f;
  return position - std::floor(position + 1e-4f) > 0 ? position - std::floor(position) : 0.0f;
}

bool DrawTimelineControls(Timeline* t, const char* step_label) {
  bool changed = false;
  ImGui::PushID("timeline");
  if (ImGui::Button("|<")) t->Home(), changed = true;
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("First step (Home)");
  ImGui::SameLine();
  if (ImGui::Button("<")) t->StepBack(), changed = true;
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Step back (Left arrow)");
  ImGui::SameLine();
  if (ImGui::Button(t->playing ? "Pause" : "Play", ImVec2(ImGui::GetFontSize() * 3.5f, 0))) {
    if (t->playing)
      t->playing = false;
    else
      t->Play();
    changed = true;
  }
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Play / pause (Space)");
  ImGui::SameLine();
  if (ImGui::Button(">")) t->StepForward(), changed = true;
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Step forward (Right arrow)");
  ImGui::SameLine();
  if (ImGui::Button(">|")) t->End(), changed = true;
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Last step (End)");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(std::max(80.0f, ImGui::GetContentRegionAvail().x - ImGui::GetFontSize() * 17));
  char fmt[64];
  std::snprintf(fmt, sizeof(fmt), "%s %d / %d", step_label, t->Step(),
                t->mode == TimelineMode::Decoding ? t->count : std::max(0, t->count - 1));
  float pos = t->position;
  if (ImGui::SliderFloat("##scrub", &pos, 0.0f, std::max(t->Max(), 1e-3f), fmt)) {
    t->position = pos;
    if (t->mode == TimelineMode::Decoding) t->position = std::round(pos);
    t->playing = false;
    changed = true;
  }
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        t->mode == TimelineMode::Decoding
            ? "Rows shown so far: one query row a step, as a decoder emits one word at a time (drag to scrub)"
            : "The map shown, blended into the next between steps (drag to scrub)");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 7);
  changed |= ImGui::SliderFloat("##speed", &t->speed, 0.25f, 20.0f, "%.2f steps/s", ImGuiSliderFlags_Logarithmic);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Animation speed");
  ImGui::SameLine();
  changed |= ImGui::Checkbox("Loop", &t->loop);
  ImGui::PopID();
  return changed;
}

}  // namespace attnviz
