// tests/core: core/half.h against a reference that rounds in double on the half's own grid.
#include "core/half.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

namespace {

using attnviz::FloatsToHalves;
using attnviz::FloatToHalf;
using attnviz::HalfToFloat;

float FromBits(uint32_t x) {
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

// The value IEEE rounding to half gives f (finite f), in double: round to nearest even on the grid of
// f's binade (steps of 2^-24 below 2^-14), infinity from 65520 up.
double ReferenceHalfValue(float f) {
  const double a = std::fabs((double)f);
  if (a >= 65520.0) return std::copysign(INFINITY, f);
  int e = 0;
  std::frexp(a, &e);  // a = m 2^e, m in [0.5, 1): the binade's ulp is 2^(e - 11)
  const double ulp = a < 0x1p-14 ? 0x1p-24 : std::ldexp(1.0, e - 11);
  return std::copysign(std::nearbyint(a / ulp) * ulp, f);  // nearbyint: ties to even
}

TEST(Half, EveryHalfSurvivesARoundTrip) {
  int mismatches = 0;
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = HalfToFloat((uint16_t)h);
    if (std::isnan(f)) {
      mismatches += (h & 0x7c00u) != 0x7c00u || (h & 0x3ffu) == 0;
      mismatches += !std::isnan(HalfToFloat(FloatToHalf(f)));
      continue;
    }
    mismatches += FloatToHalf(f) != h;
  }
  EXPECT_EQ(mismatches, 0);
  EXPECT_EQ(HalfToFloat(0x3c00), 1.0f);
  EXPECT_EQ(HalfToFloat(0x0001), 0x1p-24f);
  EXPECT_EQ(HalfToFloat(0x7bff), 65504.0f);
  EXPECT_EQ(HalfToFloat(0xfc00), -INFINITY);
}

TEST(Half, FloatsRoundToTheNearestHalfTiesToEven) {
  // Every 997th float bit pattern (4.3 million, both signs, every binade) and every midpoint between
  // two neighbouring halves: the scalar and the bulk conversion against the reference.
  std::vector<float> in;
  for (uint64_t x = 0; x <= 0xffffffffu; x += 997) in.push_back(FromBits((uint32_t)x));
  for (uint32_t h = 0; h < 0x7bff; ++h)
    in.push_back((float)(0.5 * ((double)HalfToFloat((uint16_t)h) + (double)HalfToFloat((uint16_t)(h + 1)))));
  std::vector<uint16_t> bulk(in.size());
  FloatsToHalves(in.data(), in.size(), 1.0f, bulk.data());
  size_t scalar_wrong = 0, bulk_wrong = 0, checked = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    const float f = in[i];
    if (!std::isfinite(f)) {
      bulk_wrong += bulk[i] != 0;  // NaN and infinities -> 0 for the GPU
      continue;
    }
    ++checked;
    const double want = ReferenceHalfValue(f);
    scalar_wrong += (double)HalfToFloat(FloatToHalf(f)) != want;
    const double saturated = std::isinf(want) ? std::copysign(65504.0, want) : want;
    bulk_wrong += (double)HalfToFloat(bulk[i]) != saturated;
  }
  EXPECT_GT(checked, 4000000u);
  EXPECT_EQ(scalar_wrong, 0u);
  EXPECT_EQ(bulk_wrong, 0u);
  // Ties: 1 + 2^-11 lies halfway between 1 and 1 + 2^-10 and goes to the even 1; 1 + 3 * 2^-11 up.
  EXPECT_EQ(FloatToHalf(1.0f + 0x1p-11f), 0x3c00);
  EXPECT_EQ(FloatToHalf(1.0f + 3 * 0x1p-11f), 0x3c02);
  EXPECT_EQ(FloatToHalf(0x1p-25f), 0x0000);      // halfway to the smallest subnormal: even (0)
  EXPECT_EQ(FloatToHalf(3 * 0x1p-25f), 0x0002);  // halfway between 1 and 2 subnormal steps: 2
  EXPECT_EQ(FloatToHalf(65520.0f), 0x7c00);
  EXPECT_EQ(FloatToHalf(-65519.0f), 0xfbff);
}

TEST(Half, BulkScalesSaturatesAndZeroesNonFinite) {
  const float in[] = {0.75f, -3.0f, 1e6f, -1e6f, NAN, INFINITY, -INFINITY, 1e-30f};
  uint16_t out[8];
  FloatsToHalves(in, 8, 0.25f, out);
  EXPECT_EQ(HalfToFloat(out[0]), 0.1875f);
  EXPECT_EQ(HalfToFloat(out[1]), -0.75f);
  EXPECT_EQ(HalfToFloat(out[2]), 65504.0f);
  EXPECT_EQ(HalfToFloat(out[3]), -65504.0f);
  EXPECT_EQ(out[4], 0);
  EXPECT_EQ(out[5], 0);
  EXPECT_EQ(out[6], 0);
  EXPECT_EQ(HalfToFloat(out[7]), 0.0f);
}

TEST(Half, PowerOfTwoScales) {
  EXPECT_EQ(attnviz::PowerOfTwoAtLeast(1.0f), 1.0f);
  EXPECT_EQ(attnviz::PowerOfTwoAtLeast(0.75f), 1.0f);
  EXPECT_EQ(attnviz::PowerOfTwoAtLeast(-929.0f), 1024.0f);
  EXPECT_EQ(attnviz::PowerOfTwoAtLeast(0.5f), 0.5f);
  EXPECT_EQ(attnviz::PowerOfTwoAtLeast(3e-9f), 0x1p-28f);
  EXPECT_EQ(attnviz::PowerOfTwoAtLeast(0.0f), 1.0f);
  EXPECT_EQ(attnviz::PowerOfTwoAtLeast(NAN), 1.0f);
  EXPECT_EQ(attnviz::PowerOfTwoAtLeast(std::numeric_limits<float>::max()), 0x1p127f);
  EXPECT_EQ(attnviz::PowerOfTwoAtLeast(1e-40f), 0x1p-126f);  // a subnormal: 1 / scale stays finite
  EXPECT_TRUE(std::isfinite(1.0f / attnviz::PowerOfTwoAtLeast(1e-45f)));
}

}  // namespace
