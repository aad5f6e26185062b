#include "core/colormap.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace attnviz {
namespace {

// Greys runs black -> white as in the alignment figures of Bahdanau et al. (white = high).
const ColormapKey kGreys[] = {{0.0f, {0, 0, 0}}, {1.0f, {255, 255, 255}}};
// viridis and magma: 9 samples of matplotlib's maps at t = 0, 1/8, ..., 1.
const ColormapKey kViridis[] = {{0.000f, {68, 1, 84}},    {0.125f, {71, 44, 122}},  {0.250f, {59, 81, 139}},
                                {0.375f, {44, 113, 142}}, {0.500f, {33, 144, 141}}, {0.625f, {39, 173, 129}},
                                {0.750f, {92, 200, 99}},  {0.875f, {170, 220, 50}}, {1.000f, {253, 231, 37}}};
const ColormapKey kMagma[] = {{0.000f, {0, 0, 4}},      {0.125f, {28, 16, 68}},    {0.250f, {79, 18, 123}},
                              {0.375f, {129, 37, 129}}, {0.500f, {181, 54, 122}},  {0.625f, {229, 80, 100}},
                              {0.750f, {251, 135, 97}}, {0.875f, {254, 194, 135}}, {1.000f, {252, 253, 191}}};
// Diverging blue - white - red (for differences; t = 0.5 is zero).
const ColormapKey kDiverging[] = {{0.00f, {5, 48, 97}},
                                  {0.25f, {67, 147, 195}},
                                  {0.50f, {247, 247, 247}},
                                  {0.75f, {214, 96, 77}},
                                  {1.00f, {103, 0, 31}}};

template <int N>
constexpr int Count(const ColormapKey (&)[N]) {
  return N;
}

// In enum order: kTables[(int)c].id == c.
const ColormapTable kTables[] = {
    {Colormap::Greys, "greys", kGreys, Count(kGreys), false},
    {Colormap::Viridis, "viridis", kViridis, Count(kViridis), false},
    {Colormap::Magma, "magma", kMagma, Count(kMagma), false},
    {Colormap::Diverging, "diverging", kDiverging, Count(kDiverging), true},
};
static_assert(sizeof(kTables) / sizeof(kTables[0]) == (size_t)Colormap::Count, "one table per colormap");

uint8_t Lerp(uint8_t a, uint8_t b, float u) {
  return (uint8_t)std::lround(a + (b - a) * u);
}

// Step 1 of the sampling rule: the keys at t in [0, 1], interpolated between the two keys around t.
ColormapRgb InterpolateKeys(const ColormapTable& table, float t) {
  int k = 0;
  while (k + 2 < table.count && t > table.keys[k + 1].t) ++k;
  const ColormapKey& a = table.keys[k];
  const ColormapKey& b = table.keys[k + 1];
  float u = (t - a.t) / (b.t - a.t);
  u = u < 0 ? 0 : (u > 1 ? 1 : u);
  return {Lerp(a.c.r, b.c.r, u), Lerp(a.c.g, b.c.g, u), Lerp(a.c.b, b.c.b, u)};
}

struct Luts {
  uint8_t rgba[(int)Colormap::Count][kColormapLutSize * 4];
};

Luts BuildLuts() {
  Luts l = {};
  for (int c = 0; c < (int)Colormap::Count; ++c) {
    for (int i = 0; i < kColormapLutSize; ++i) {
      const ColormapRgb rgb = InterpolateKeys(kTables[c], (float)i / (kColormapLutSize - 1));
      uint8_t* out = &l.rgba[c][i * 4];
      out[0] = rgb.r;
      out[1] = rgb.g;
      out[2] = rgb.b;
      out[3] = 255;
    }
  }
  return l;
}

const Luts& GetLuts() {
  static const Luts luts = BuildLuts();  // built once, on first use
  return luts;
}

}  // namespace

const ColormapTable& ColormapTableOf(Colormap c) {
  return kTables[(int)c];
}
const char* ColormapName(Colormap c) {
  return kTables[(int)c].name;
}
bool ColormapIsDiverging(Colormap c) {
  return kTables[(int)c].diverging;
}

const ColormapTable* FindColormap(const char* name) {
  if (!name) return nullptr;
  for (const ColormapTable& t : kTables)
    if (std::strcmp(t.name, name) == 0) return &t;
  return nullptr;
}

bool ParseColormap(const char* name, Colormap* out) {
  const ColormapTable* t = FindColormap(name);
  if (!t) return false;
  *out = t->id;
  return true;
}

const uint8_t* ColormapLut(Colormap c) {
  return GetLuts().rgba[(int)c];
}

int ColormapLutIndex(float t) {
  if (!(t > 0.0f)) return 0;  // also catches NaN
  if (t >= 1.0f) return kColormapLutSize - 1;
  return (int)(t * (kColormapLutSize - 1) + 0.5f);
}

void ColormapSample(Colormap c, float t, uint8_t rgb[3]) {
  const uint8_t* e = ColormapLut(c) + ColormapLutIndex(t) * 4;
  rgb[0] = e[0];
  rgb[1] = e[1];
  rgb[2] = e[2];
}

void LineColour(Colormap c, float t, bool light_background, uint8_t rgb[3]) {
  t = std::clamp(t, 0.0f, 1.0f);
  if (c == Colormap::Diverging) return ColormapSample(c, light_background ? 0.6f + 0.4f * t : 0.55f + 0.2f * t, rgb);
  if (!light_background) return ColormapSample(c, 0.25f + 0.75f * t, rgb);
  if (c == Colormap::Greys) return ColormapSample(c, 0.8f * (1.0f - t), rgb);
  ColormapSample(c, 0.7f - 0.6f * t, rgb);
}

uint32_t ContrastingTextColor(const uint8_t rgb[3]) {
  const float lum = 0.2126f * rgb[0] + 0.7152f * rgb[1] + 0.0722f * rgb[2];
  return lum > 140.0f ? 0xFF000000u : 0xFFFFFFFFu;
}

void CategoryColour(int i, uint8_t rgb[3]) {
  static const uint8_t k[10][3] = {{31, 119, 180}, {255, 127, 14},  {44, 160, 44},   {214, 39, 40},  {148, 103, 189},
                                   {140, 86, 75},  {227, 119, 194}, {127, 127, 127}, {188, 189, 34}, {23, 190, 207}};
  const int j = ((i % 10) + 10) % 10;
  for (int c = 0; c < 3; ++c) rgb[c] = k[j][c];
}

}  // namespace attnviz
