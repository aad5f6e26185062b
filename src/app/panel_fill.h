// Opaque panels (the sidebar, the view area) and the frame's background filled by GPU clears, not
// by ImGui's blended triangles: a software renderer pays ~15 ms of a 2-core machine for each
// screenful of triangles, and the two panels and the background were about two screenfuls of each
// frame (render/clear_rect.h; docs/PERFORMANCE.md, "What a drawn frame costs").
#pragma once

#include "imgui.h"

namespace attnviz {

// Adds to dl a fill of [p0, p1) with col (opaque), clipped to dl's clip rectangle and drawn by a
// scissored clear where the draw list is rendered (the draw command's clip rectangle is the fill, its
// callback data the colour, so the frame fingerprint sees both).
void AddOpaqueFill(ImDrawList* dl, const ImVec2& p0, const ImVec2& p1, ImU32 col);

// The pixels [box[0], box[2]) x [box[1], box[3]) (top-left origin) a fill of clip rectangle `clip`
// clears in a framebuffer fb_h pixels high: exactly those ImGui's OpenGL backend scissors the same
// clip rectangle to (off: the draw data's DisplayPos, scale: its FramebufferScale).
void OpaqueFillBox(const ImVec4& clip, const ImVec2& off, const ImVec2& scale, int fb_h, int box[4]);

// Whether a draw command is a fill AddOpaqueFill added (its colour: *col).
bool IsOpaqueFill(const ImDrawCmd& cmd, ImU32* col);

// BeginChild for a panel whose background is col: filled by a clear in the parent's draw list (under
// the panel's border and contents). Call it while ImGuiCol_ChildBg is transparent, so that ImGui
// draws no background of its own, neither here nor for the children inside.
bool BeginOpaquePanel(const char* id, const ImVec2& size, bool border, ImU32 col);

// Clears the frame to the style's window background, as the 8-bit colour ImGui would have drawn:
// the host window draws none (the platform calls this before rendering ImGui's draw data).
void ClearFrameBackground();

}  // namespace attnviz
