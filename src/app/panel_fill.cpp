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
  const ImVec2 sc = dd->FramebufferScale, off = dd->DisplayPos;
  const int fb_h = (int)(dd->DisplaySize.y * sc.y);
  // The same rounding as ImGui's backend gives a draw command's clip rectangle.
  const int box[4] = {(int)((cmd->ClipRect.x - off.x) * sc.x), (int)((cmd->ClipRect.y - off.y) * sc.y),
                      (int)((cmd->ClipRect.z - off.x) * sc.x), (int)((cmd->ClipRect.w - off.y) * sc.y)};
  const ImVec4 c = ImGui::ColorConvertU32ToFloat4((ImU32)(uintptr_t)cmd->UserCallbackData);
  const float rgba[4] = {c.x, c.y, c.z, 1.0f};
  ClearRect(box, fb_h, rgba);
}

}  // namespace

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
