#include "render/colormaps.h"

#include <cmath>
#include <cstring>

namespace attnviz {
namespace {

struct KeyColor { float t; uint8_t r, g, b; };

// Key colours; between keys the table interpolates linearly in sRGB.
// Greys runs black -> white as in the alignment figures of Bahdanau et al. (white = high).
const KeyColor kGreys[] = {{0.0f, 0, 0, 0}, {1.0f, 255, 255, 255}};
// viridis and magma: 9 samples of matplotlib's maps at t = 0, 1/8, ..., 1.
const KeyColor kViridis[] = {{0.000f, 68, 1, 84},    {0.125f, 71, 44, 122},  {0.250f, 59, 81, 139},
                             {0.375f, 44, 113, 142}, {0.500f, 33, 144, 141}, {0.625f, 39, 173, 129},
                             {0.750f, 92, 200, 99},  {0.875f, 170, 220, 50}, {1.000f, 253, 231, 37}};
const KeyColor kMagma[] = {{0.000f, 0, 0, 4},       {0.125f, 28, 16, 68},    {0.250f, 79, 18, 123},
                           {0.375f, 129, 37, 129},  {0.500f, 181, 54, 122},  {0.625f, 229, 80, 100},
                           {0.750f, 251, 135, 97},  {0.875f, 254, 194, 135}, {1.000f, 252, 253, 191}};
// Diverging blue - white - red (for differences; t = 0.5 is zero).
const KeyColor kDiverging[] = {{0.00f, 5, 48, 97},    {0.25f, 67, 147, 195}, {0.50f, 247, 247, 247},
                               {0.75f, 214, 96, 77},  {1.00f, 103, 0, 31}};

struct Table { const char* name; const KeyColor* keys; int count; bool diverging; };
const Table kTables[] = {
    {"greys", kGreys, 2, false},
    {"viridis", kViridis, 9, false},
    {"magma", kMagma, 9, false},
    {"diverging", kDiverging, 5, true},
};
static_assert(sizeof(kTables) / sizeof(kTables[0]) == (int)Colormap::Count, "one table per colormap");

uint8_t g_luts[(int)Colormap::Count][kColormapLutSize * 4];
bool g_built = false;

void BuildLuts() {
  for (int c = 0; c < (int)Colormap::Count; ++c) {
    const Table& tab = kTables[c];
    for (int i = 0; i < kColormapLutSize; ++i) {
      float t = (float)i / (kColormapLutSize - 1);
      int k = 0;
      while (k + 2 < tab.count && t > tab.keys[k + 1].t) ++k;
      const KeyColor& a = tab.keys[k];
      const KeyColor& b = tab.keys[k + 1];
      float u = (t - a.t) / (b.t - a.t);
      u = u < 0 ? 0 : (u > 1 ? 1 : u);
      uint8_t* out = &g_luts[c][i * 4];
      out[0] = (uint8_t)std::lround(a.r + (b.r - a.r) * u);
      out[1] = (uint8_t)std::lround(a.g + (b.g - a.g) * u);
      out[2] = (uint8_t)std::lround(a.b + (b.b - a.b) * u);
      out[3] = 255;
    }
  }
  g_built = true;
}

}  // namespace

const char* ColormapName(Colormap c) { return kTables[(int)c].name; }

bool ParseColormap(const char* name, Colormap* out) {
  for (int c = 0; c < (int)Colormap::Count; ++c) {
    if (std::strcmp(name, kTables[c].name) == 0) {
      *out = (Colormap)c;
      return true;
    }
  }
  return false;
}

bool ColormapIsDiverging(Colormap c) { return kTables[(int)c].diverging; }

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
