// attnviz core: colormaps as a small table of key colours (the implot habit), sampled by
// name with linear interpolation in sRGB between keys. One table for every consumer: the SVG
// export samples it directly; the renderer expands it into its 256-entry lookup textures.
#pragma once
#include <cstdint>

namespace attnviz {

struct ColormapRgb {
  uint8_t r, g, b;  // sRGB, 0..255
};

struct ColormapKey {
  float t;        // position in [0, 1]; keys are sorted by t, first 0, last 1
  ColormapRgb c;  // colour at t
};

struct ColormapTable {
  const char* name;         // "greys", "viridis", "magma", "diverging"
  const ColormapKey* keys;  // key colours
  int count;                // number of keys (>= 2)
  bool diverging;           // centred at t = 0.5 (for signed differences)
};

int ColormapTableCount();                       // number of built-in colormaps
const ColormapTable& ColormapTableAt(int i);    // i in [0, ColormapTableCount())
const ColormapTable* FindColormap(const char* name);  // by name, nullptr if unknown

// Colour at t in [0, 1] (clamped; NaN -> 0) of the named colormap, linearly interpolated
// between key colours. Unknown names fall back to greys and set *ok = false when given.
ColormapRgb ColormapSample(const char* name, float t, bool* ok = nullptr);
ColormapRgb ColormapSample(const ColormapTable& table, float t);  // same, table already looked up

}  // namespace attnviz
