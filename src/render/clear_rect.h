// attnviz render: opaque rectangles filled by the GPU's clear (glScissor + glClear) instead of
// blended, textured triangles. A software renderer (SwiftShader: headless Chromium, VMs without a
// GPU) spends ~15 ms of a 2-core machine on each screenful of triangles, a clear costs next to
// nothing (docs/PERFORMANCE.md, "What a drawn frame costs").
#pragma once

namespace attnviz {

// Fills box (x0, y0, x1, y1: framebuffer pixels, origin top-left, x1/y1 exclusive) of a framebuffer
// fb_h pixels high with rgba. Leaves the scissor test on, the scissor box and the clear colour changed
// (ImGui's backend sets the scissor box for every draw command).
void ClearRect(const int box[4], int fb_h, const float rgba[4]);

// Clears the whole bound framebuffer (the viewport's) to rgba, whatever the scissor test was.
void ClearFrame(const float rgba[4]);

}  // namespace attnviz
