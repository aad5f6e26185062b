// attnviz core: the one colormap module. Every colour a weight gets (GL heatmap, SVG export,
// ImGui cell text, the browser test's pixel inversion) comes from here.
//
//   Colormap        enum of the built-in maps, in table order; names and parsing
//   ColormapTable   a map's key colours (the implot habit: a few keys, expanded into a LUT)
//   ColormapLut     256 RGBA8 entries per map: the keys interpolated at t = i / 255
//   ColormapSample  colour of t: the LUT entry the shader fetches for t (see the rule below)
//   ContrastingTextColor  black or white text on top of a cell
//
// Sampling rule (one rule for every consumer):
//   1. LUT entry i (0..255) is the key colours at t = i / 255, linearly interpolated in sRGB
//      between the two keys around t and rounded to the nearest integer per channel.
//   2. A value t is clamped to [0, 1] (NaN -> 0) and takes entry i = floor(t * 255 + 0.5), the
//      nearest entry. shaders/heatmap.frag fetches texel (t * 255 + 0.5) / 256 of the LUT texture
//      with NEAREST filtering, which is the same entry: what ColormapSample returns is what the
//      GPU shows. The SVG export and the ImGui cell text use ColormapSample too.
// The only key-colour consumer besides the LUT is the SVG colour bar, a continuous gradient
// whose stops are the keys themselves (the LUT is that gradient quantised to 256 steps).
// Tables are static and built on first use (thread-safe, no allocation after that).
#pragma once
#include <cstdint>

namespace attnviz {

enum class Colormap { Greys, Viridis, Magma, Diverging, Count };  // in table order

constexpr int kColormapLutSize = 256;  // entries per lookup table (RGBA8 each)

// One sRGB colour.
struct ColormapRgb {
  uint8_t r, g, b;  // sRGB, 0..255
};

// One key colour of a map.
struct ColormapKey {
  float t;        // position in [0, 1]; keys are sorted by t, first at 0, last at 1
  ColormapRgb c;  // colour at t
};

// One map: its name and key colours (static storage; one per Colormap, in enum order).
struct ColormapTable {
  Colormap id;              // this table's enum value
  const char* name;         // "greys", "viridis", "magma", "diverging"
  const ColormapKey* keys;  // key colours
  int count;                // number of keys (>= 2)
  bool diverging;           // centred at t = 0.5 (for signed differences)
};

const char* ColormapName(Colormap c);                 // "greys", "viridis", "magma", "diverging"
bool ParseColormap(const char* name, Colormap* out);  // inverse of ColormapName; false if unknown or null
bool ColormapIsDiverging(Colormap c);                 // centred at t = 0.5
const ColormapTable& ColormapTableOf(Colormap c);     // key colours of c (static storage)
const ColormapTable* FindColormap(const char* name);  // by name; nullptr if unknown or null

const uint8_t* ColormapLut(Colormap c);                    // kColormapLutSize RGBA8 entries, static, alpha 255
int ColormapLutIndex(float t);                             // floor(clamp(t) * 255 + 0.5); NaN -> 0
void ColormapSample(Colormap c, float t, uint8_t rgb[3]);  // rgb = ColormapLut(c)[ColormapLutIndex(t)]
// The colour of a line of weight t in [0, 1] (the lines view, its SVG): the strongest lines stand out
// most from the background (opacity and width show the weight as well). On a dark background the
// colormap from a quarter up to its light end (the diverging map: its red half, pale to red). On a
// light one (the light theme, the SVG's white page) strong lines take the colormap's dark end: greys
// from light grey to black, viridis and magma from their middle down, the diverging map from pale red
// to its darkest red (a light end vanishes on white: the greys' strongest lines were white on white).
void LineColour(Colormap c, float t, bool light_background, uint8_t rgb[3]);
// Colour i of a categorical palette (d3's category10, as BertViz colours heads), repeating after ten.
void CategoryColour(int i, uint8_t rgb[3]);

uint32_t ContrastingTextColor(const uint8_t rgb[3]);  // black or white by Rec. 709 luminance; 0xAABBGGRR (ImGui)

}  // namespace attnviz
