#include "render/colormaps.h"

#include "core/colormap.h"

#include <cmath>
#include <cstring>

namespace attnviz {
namespace {

// Names in enum order; the key colours live in core/colormap (shared with the SVG export).
const char* const kNames[] = {"greys", "viridis", "magma", "diverging"};
static_assert(sizeof(kNames) / sizeof(kNames[0]) == (int)Colormap::Count, "one name per colormap");

uint8_t g_luts[(int)Colormap::Count][kColormapLutSize * 4];
bool g_built = false;

void BuildLuts() {
  for (int c = 0; c < (int)Colormap::Count; ++c) {
    const ColormapTable* tab = FindColormap(kNames[c]);
    for (int i = 0; i < kColormapLutSize; ++i) {
      const ColormapRgb rgb = ColormapSample(*tab, (float)i / (kColormapLutSize - 1));
      uint8_t* out = &g_luts[c][i * 4];
      out[0] = rgb.r;
      out[1] = rgb.g;
      out[2] = rgb.b;
      out[3] = 255;
    }
  }
  g_built = true;
}

}  // namespace

const char* ColormapName(Colormap c) { return kNames[(int)c]; }

bool ParseColormap(const char* name, Colormap* out) {
  for (int c = 0; c < (int)Colormap::Count; ++c) {
    if (std::strcmp(name, kNames[c]) == 0) {
      *out = (Colormap)c;
      return true;
    }
  }
  return false;
}

bool ColormapIsDiverging(Colormap c) { return c == Colormap::Diverging; }

const uint8_t* ColormapLut(Colormap c) {
  if (!g_built) BuildLuts();
  return g_luts[(int)c];
}

void ColormapSample(Colormap c, float t, uint8_t rgb[3]) {
  if (!(t >= 0.0f)) t = 0.0f;  // also catches NaN
  if (t > 1.0f) t = 1.0f;
  int i = (int)(t * (kColormapLutSize - 1) + 0.5f);
  const uint8_t* e = ColormapLut(c) + i * 4;
  rgb[0] = e[0];
  rgb[1] = e[1];
  rgb[2] = e[2];
}

uint32_t ContrastingTextColor(const uint8_t rgb[3]) {
  float lum = 0.2126f * rgb[0] + 0.7152f * rgb[1] + 0.0722f * rgb[2];
  return lum > 140.0f ? 0xFF000000u : 0xFFFFFFFFu;
}

}  // namespace attnviz
