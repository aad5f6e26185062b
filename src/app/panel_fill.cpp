// Opaque panels filled by GPU clears (panel_fill.h).
#include "app/panel_fill.h"

#include <cstdint>

#include "imgui_internal.h"
#include "render/clear_rect.h"

namespace attnviz {

namespace {

void OpaqueFillCallback(const ImDrawList*, const ImDrawCmd* cmd) {
  const ImDrawData* dd = ImGui::GetDrawData();
  if (!dd) return;
  const int fb_h = (int)(dd->DisplaySize.y * dd->FramebufferScale.y);
  int box[4];
  OpaqueFillBox(cmd->ClipRect, dd->DisplayPos, dd->FramebufferScale, fb_h, box);
  const ImVec4 c = ImGui::ColorConvertU32ToFloat4((ImU32)(uintptr_t)cmd->UserCallbackData);
  const float rgba[4] = {c.x, c.y, c.z, 1.0f};
  ClearRect(box, fb_h, rgba);
}

}  // namespace

void OpaqueFillBox(const ImVec4& clip, const ImVec2& off, const ImVec2& scale, int fb_h, int box[4]) {
  // imgui_impl_opengl3 (1.86): glScissor((int)min.x, (int)(fb_h - max.y), (int)(max.x - min.x),
  // (int)(max.y - min.y)). Truncating each edge on its own instead (until stop 62) left the fill a
  // pixel short of what ImGui draws at a fractional device-pixel ratio: a 1-px line of the window's
  // background along a panel's edge.
  const float x0 = (clip.x - off.x) * scale.x, y0 = (clip.y - off.y) * scale.y;
  const float x1 = (clip.z - off.x) * scale.x, y1 = (clip.w - off.y) * scale.y;
  box[0] = (int)x0;
  box[2] = box[0] + (int)(x1 - x0);
  box[3] = fb_h - (int)((float)fb_h - y1);
  box[1] = box[3] - (int)(y1 - y0);
}

void AddOpaqueFill(ImDrawList* dl, const ImVec2& p0, const ImVec2& p1, ImU32 col) {
  dl->PushClipRect(p0, p1, true);
  dl->AddCallback(OpaqueFillCallback, (void*)(uintptr_t)col);
  dl->PopClipRect();
}

bool IsOpaqueFill(const ImDrawCmd& cmd, ImU32* col) {
  if (cmd.UserCallback != OpaqueFillCallback) return false;
  *col = (ImU32)(uintptr_t)cmd.UserCallbackData;
  return true;
}

bool BeginOpaquePanel(const char* id, const ImVec2& size, bool border, ImU32 col) {
  // The child's box as BeginChild lays it out (size <= 0: the room left, less -size), filled before
  // BeginChild draws the border over it.
  const ImVec2 avail = ImGui::GetContentRegionAvail(), p0 = ImGui::GetCursorScreenPos();
  ImVec2 box(ImFloor(size.x), ImFloor(size.y));
  if (box.x <= 0.0f) box.x = ImMax(avail.x + box.x, 4.0f);
  if (box.y <= 0.0f) box.y = ImMax(avail.y + box.y, 4.0f);
  AddOpaqueFill(ImGui::GetWindowDrawList(), p0, ImVec2(p0.x + box.x, p0.y + box.y), col);
  return ImGui::BeginChild(id, size, border);
}

void ClearFrameBackground() {
  const ImVec4 c = ImGui::ColorConvertU32ToFloat4(ImGui::GetColorU32(ImGuiCol_WindowBg));
  const float rgba[4] = {c.x, c.y, c.z, 1.0f};
  ClearFrame(rgba);
}

}  // namespace attnviz
