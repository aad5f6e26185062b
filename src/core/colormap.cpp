#include "core/colormap.h"

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
const ColormapKey kMagma[] = {{0.000f, {0, 0, 4}},       {0.125f, {28, 16, 68}},    {0.250f, {79, 18, 123}},
                              {0.375f, {129, 37, 129}},  {0.500f, {181, 54, 122}},  {0.625f, {229, 80, 100}},
                              {0.750f, {251, 135, 97}},  {0.875f, {254, 194, 135}}, {1.000f, {252, 253, 191}}};
// Diverging blue - white - red (for differences; t = 0.5 is zero).
const ColormapKey kDiverging[] = {{0.00f, {5, 48, 97}},    {0.25f, {67, 147, 195}}, {0.50f, {247, 247, 247}},
                                  {0.75f, {214, 96, 77}},  {1.00f, {103, 0, 31}}};

const ColormapTable kTables[] = {
    {"greys", kGreys, 2, false},
    {"viridis", kViridis, 9, false},
    {"magma", kMagma, 9, false},
    {"diverging", kDiverging, 5, true},
};
constexpr int kTableCount = sizeof(kTables) / sizeof(kTables[0]);

uint8_t Lerp(uint8_t a, uint8_t b, float u) { return (uint8_t)std::lround(a + (b - a) * u); }

}  // namespace

int ColormapTableCount() { return kTableCount; }
const ColormapTable& ColormapTableAt(int i) { return kTables[i]; }

const ColormapTable* FindColormap(const char* name) {
  if (!name) return nullptr;
  for (const ColormapTable& t : kTables)
    if (std::strcmp(t.name, name) == 0) return &t;
  return nullptr;
}

ColormapRgb ColormapSample(const ColormapTable& table, float t) {
  if (!(t > 0.0f)) t = 0.0f;  // also catches NaN
  if (t > 1.0f) t = 1.0f;
  int k = 0;
  while (k + 2 < table.count && t > table.keys[k + 1].t) ++k;
  const ColormapKey& a = table.keys[k];
  const ColormapKey& b = table.keys[k + 1];
  float u = (t - a.t) / (b.t - a.t);
  u = u < 0 ? 0 : (u > 1 ? 1 : u);
  return {Lerp(a.c.r, b.c.r, u), Lerp(a.c.g, b.c.g, u), Lerp(a.c.b, b.c.b, u)};
}

ColormapRgb ColormapSample(const char* name, float t, bool* ok) {
  const ColormapTable* table = FindColormap(name);
  if (ok) *ok = table != nullptr;
  return ColormapSample(table ? *table : kTables[0], t);
}

}  // namespace attnviz
