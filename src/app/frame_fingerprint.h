// What a frame draws, as 64 bits: ImGui's draw data (vertices, indices, clip rectangles, textures,
// callbacks) and what each heatmap callback draws with (its parameters, its textures' names and
// versions). Two frames with the same fingerprint look the same, so the web build keeps the canvas's
// image instead of drawing the second (App::DrawFingerprint).
#pragma once

#include <cstdint>
#include <vector>

#include "app/heatmap_widget.h"

struct ImDrawData;

namespace attnviz {

// extra: anything else the frame's pixels depend on (the label textures made so far).
uint64_t FingerprintFrame(const ImDrawData* draw_data, const std::vector<HeatmapCallbackData>& heatmaps,
                          uint64_t extra);

}  // namespace attnviz
