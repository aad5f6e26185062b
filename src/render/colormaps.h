// attnviz render: colormaps as a few key colours expanded into 256-entry lookup tables
// (the implot habit). The same tables feed the GL lookup texture, the SVG export and the
// browser test, which inverts pixels through them.
#pragma once
#include <cstdint>

namespace attnviz {

enum class Colormap { Greys, Viridis, Magma, Diverging, Count };

constexpr int kColormapLutSize = 256;                 // entries per lookup table
const char* ColormapName(Colormap c);                 // "greys", "viridis", "magma", "diverging"
bool ParseColormap(const char* name, Colormap* out);  // inverse of ColormapName
bool ColormapIsDiverging(Colormap c);                 // centred at t = 0.5
// The 256 RGBA8 entries of a colormap's lookup table (static storage, never freed).
const uint8_t* ColormapLut(Colormap c);
// Colour at t in [0,1] (clamped), as the shader samples it: nearest of the 256 entries.
void ColormapSample(Colormap c, float t, uint8_t rgb[3]);
// Text colour that reads on top of a cell of colour rgb: black or white (by luminance).
uint32_t ContrastingTextColor(const uint8_t rgb[3]);  // 0xAABBGGRR (ImGui's packed order)

}  // namespace attnviz
