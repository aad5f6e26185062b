// tests/core: the one colormap module. The LUT is the keys at t = i / 255; sampling takes the
// LUT entry the shader fetches; names, clamping and text colours. (SVG fills: tests/io.)
#include "core/colormap.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace {

using attnviz::Colormap;
using attnviz::ColormapLut;
using attnviz::ColormapSample;
using attnviz::ColormapTable;
using attnviz::ColormapTableOf;
using attnviz::kColormapLutSize;

constexpr int kCount = (int)Colormap::Count;

// The texel shaders/heatmap.frag reads for t (already clamped there): texture() at
// u = (t * 255 + 0.5) / 256 with NEAREST filtering on a 256-wide texture reads texel floor(u * 256).
int ShaderTexel(float t) {
  t = std::fmin(std::fmax(t, 0.0f), 1.0f);
  const float u = (t * 255.0f + 0.5f) / 256.0f;
  const int i = (int)std::floor(u * 256.0f);
  return i < 0 ? 0 : (i > 255 ? 255 : i);
}

// Keys at t, continuous (double): what the LUT approximates.
void KeysAt(const ColormapTable& tab, double t, double out[3]) {
  int k = 0;
  while (k + 2 < tab.count && t > tab.keys[k + 1].t) ++k;
  const auto& a = tab.keys[k];
  const auto& b = tab.keys[k + 1];
  const double u = (t - a.t) / (b.t - a.t);
  out[0] = a.c.r + (b.c.r - a.c.r) * u;
  out[1] = a.c.g + (b.c.g - a.c.g) * u;
  out[2] = a.c.b + (b.c.b - a.c.b) * u;
}

TEST(Colormap, NamesParseAndTables) {
  for (int i = 0; i < kCount; ++i) {
    const Colormap c = (Colormap)i;
    const char* name = attnviz::ColormapName(c);
    Colormap parsed = Colormap::Count;
    ASSERT_TRUE(attnviz::ParseColormap(name, &parsed)) << name;
    EXPECT_EQ(parsed, c);
    const ColormapTable* found = attnviz::FindColormap(name);
    ASSERT_NE(found, nullptr);
    EXPECT_EQ(found, &ColormapTableOf(c));  // the name lookup goes through the same table
    EXPECT_EQ(found->id, c);
    EXPECT_GE(found->count, 2);
    EXPECT_EQ(found->keys[0].t, 0.0f);
    EXPECT_EQ(found->keys[found->count - 1].t, 1.0f);
    EXPECT_EQ(attnviz::ColormapIsDiverging(c), c == Colormap::Diverging);
  }
  Colormap untouched = Colormap::Magma;
  EXPECT_FALSE(attnviz::ParseColormap("jet", &untouched));
  EXPECT_FALSE(attnviz::ParseColormap(nullptr, &untouched));
  EXPECT_EQ(untouched, Colormap::Magma);
  EXPECT_EQ(attnviz::FindColormap("Viridis"), nullptr);  // names are lower case, exact
}

TEST(Colormap, LutEndsAreTheEndKeys) {
  for (int i = 0; i < kCount; ++i) {
    const ColormapTable& tab = ColormapTableOf((Colormap)i);
    const uint8_t* lut = ColormapLut((Colormap)i);
    const auto& first = tab.keys[0].c;
    const auto& last = tab.keys[tab.count - 1].c;
    const uint8_t* end = lut + (kColormapLutSize - 1) * 4;
    EXPECT_EQ((int)lut[0], first.r) << tab.name;
    EXPECT_EQ((int)lut[1], first.g) << tab.name;
    EXPECT_EQ((int)lut[2], first.b) << tab.name;
    EXPECT_EQ((int)end[0], last.r) << tab.name;
    EXPECT_EQ((int)end[1], last.g) << tab.name;
    EXPECT_EQ((int)end[2], last.b) << tab.name;
    for (int e = 0; e < kColormapLutSize; ++e) ASSERT_EQ(lut[e * 4 + 3], 255) << tab.name << " alpha at " << e;
  }
  EXPECT_EQ(ColormapLut(Colormap::Viridis), ColormapLut(Colormap::Viridis));  // static storage
}

// Step 1 of the rule: entry i is the keys at i / 255, rounded (so within 0.5 of the exact value).
TEST(Colormap, LutIsTheKeysAtEachEntry) {
  double worst = 0;
  for (int i = 0; i < kCount; ++i) {
    const ColormapTable& tab = ColormapTableOf((Colormap)i);
    const uint8_t* lut = ColormapLut((Colormap)i);
    for (int e = 0; e < kColormapLutSize; ++e) {
      double want[3];
      KeysAt(tab, e / 255.0, want);
      for (int ch = 0; ch < 3; ++ch) worst = std::fmax(worst, std::fabs(lut[e * 4 + ch] - want[ch]));
    }
  }
  std::printf("  largest |LUT - keys at i/255|: %.4f levels (bound 0.5 + float slack)\n", worst);
  EXPECT_LE(worst, 0.5 + 1e-3);
  // Closed forms: greys is the identity ramp; magma at 16/255 lies halfway between its first two keys.
  for (int e = 0; e < kColormapLutSize; ++e) ASSERT_EQ(ColormapLut(Colormap::Greys)[e * 4], e);
  const uint8_t* m = ColormapLut(Colormap::Magma) + 16 * 4;
  EXPECT_EQ((int)m[0], 14);
  EXPECT_EQ((int)m[2], 36);
}

// Step 2 of the rule: sampling equals the LUT entry the shader fetches, for many t.
TEST(Colormap, SampleIsTheShadersLutEntry) {
  int checked = 0;
  double worst_vs_keys = 0;
  srand(7);
  for (int i = 0; i < kCount; ++i) {
    const Colormap c = (Colormap)i;
    const uint8_t* lut = ColormapLut(c);
    for (int k = 0; k <= 20000; ++k) {
      float t = k < 10000 ? k / 9999.0f : (float)((double)rand() / RAND_MAX);
      uint8_t rgb[3];
      ColormapSample(c, t, rgb);
      const int texel = ShaderTexel(t);
      ASSERT_EQ(attnviz::ColormapLutIndex(t), texel) << "t = " << t;
      for (int ch = 0; ch < 3; ++ch) ASSERT_EQ(rgb[ch], lut[texel * 4 + ch]) << attnviz::ColormapName(c) << " t=" << t;
      double want[3];
      KeysAt(ColormapTableOf(c), t, want);
      for (int ch = 0; ch < 3; ++ch) worst_vs_keys = std::fmax(worst_vs_keys, std::fabs(rgb[ch] - want[ch]));
      ++checked;
    }
  }
  // Quantisation to 256 entries: half a step of the steepest key segment plus rounding.
  std::printf("  %d samples equal their LUT entry; largest |sample - keys at t|: %.3f levels (bound 2)\n", checked,
              worst_vs_keys);
  EXPECT_LE(worst_vs_keys, 2.0);
  EXPECT_EQ(attnviz::ColormapLutIndex(0.5f / 255.0f - 1e-6f), 0);  // nearest entry: below half a step
  EXPECT_EQ(attnviz::ColormapLutIndex(0.5f / 255.0f + 1e-6f), 1);
  EXPECT_EQ(attnviz::ColormapLutIndex(0.5f), 128);
}

TEST(Colormap, NanAndOutOfRangeClamp) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  for (int i = 0; i < kCount; ++i) {
    const Colormap c = (Colormap)i;
    const uint8_t* lut = ColormapLut(c);
    const uint8_t* end = lut + (kColormapLutSize - 1) * 4;
    for (float t : {nan, -inf, -1.0f, -1e-7f, 0.0f}) {
      uint8_t rgb[3];
      ColormapSample(c, t, rgb);
      EXPECT_TRUE(rgb[0] == lut[0] && rgb[1] == lut[1] && rgb[2] == lut[2]) << attnviz::ColormapName(c) << " t=" << t;
    }
    for (float t : {1.0f, 1.0f + 1e-6f, 2.0f, 1e30f, inf}) {
      uint8_t rgb[3];
      ColormapSample(c, t, rgb);
      EXPECT_TRUE(rgb[0] == end[0] && rgb[1] == end[1] && rgb[2] == end[2]) << attnviz::ColormapName(c) << " t=" << t;
    }
  }
  EXPECT_EQ(attnviz::ColormapLutIndex(nan), 0);
  EXPECT_EQ(attnviz::ColormapLutIndex(inf), kColormapLutSize - 1);
}

TEST(Colormap, ContrastingTextColor) {
  const uint32_t black = 0xFF000000u, white = 0xFFFFFFFFu;  // 0xAABBGGRR
  const uint8_t paper[3] = {255, 255, 255}, ink[3] = {0, 0, 0}, yellow[3] = {253, 231, 37}, navy[3] = {5, 48, 97};
  EXPECT_EQ(attnviz::ContrastingTextColor(paper), black);
  EXPECT_EQ(attnviz::ContrastingTextColor(yellow), black);
  EXPECT_EQ(attnviz::ContrastingTextColor(ink), white);
  EXPECT_EQ(attnviz::ContrastingTextColor(navy), white);
  // At both ends of every sequential map: dark low end -> white text, light high end -> black text.
  for (Colormap c : {Colormap::Greys, Colormap::Viridis, Colormap::Magma}) {
    uint8_t lo[3], hi[3];
    ColormapSample(c, 0.0f, lo);
    ColormapSample(c, 1.0f, hi);
    EXPECT_EQ(attnviz::ContrastingTextColor(lo), white) << attnviz::ColormapName(c);
    EXPECT_EQ(attnviz::ContrastingTextColor(hi), black) << attnviz::ColormapName(c);
  }
  uint8_t centre[3];
  ColormapSample(Colormap::Diverging, 0.5f, centre);  // near-white zero of the diverging map
  EXPECT_EQ(attnviz::ContrastingTextColor(centre), black);
}

// The lines view's colours: the strongest line stands out from the background, more than the weakest,
// on the dark theme's background and on the light theme's (where greys' strongest line was white on
// near-white) and the SVG's white page.
TEST(Colormap, StrongLinesStandOutOnDarkAndLightBackgrounds) {
  auto luma = [](const uint8_t c[3]) { return 0.2126f * c[0] + 0.7152f * c[1] + 0.0722f * c[2]; };
  for (const float bg : {15.0f, 240.0f, 255.0f}) {  // imgui's dark and light window backgrounds, white
    for (Colormap c : {Colormap::Greys, Colormap::Viridis, Colormap::Magma, Colormap::Diverging}) {
      uint8_t weak[3], strong[3];
      attnviz::LineColour(c, 0.0f, bg > 128, weak);
      attnviz::LineColour(c, 1.0f, bg > 128, strong);
      // Drawn at the lines view's opacity, 0.08 + 0.92 t: weak lines are faint whatever their colour.
      const float s = std::fabs(luma(strong) - bg), w = 0.08f * std::fabs(luma(weak) - bg);
      EXPECT_GT(s, 100.0f) << attnviz::ColormapName(c) << " on " << bg << ": the strongest line";
      EXPECT_GT(s, w + 40.0f) << attnviz::ColormapName(c) << " on " << bg << ": strong vs weak";
    }
  }
}

}  // namespace
