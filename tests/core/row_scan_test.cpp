// tests/core: ScanRows, the read-only pass over weights before the GPU, and RowsToHalves, the R16F one.
#include "core/row_scan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "core/half.h"

namespace {

// What the renderer's cleaned copy gives: max(0, the row's finite weights); and whether all are finite.
bool Reference(const std::vector<float>& w, int rows, int cols, std::vector<float>* row_max) {
  bool finite = true;
  row_max->assign((size_t)rows, 0.0f);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      const float v = w[(size_t)r * cols + c];
      if (!std::isfinite(v)) {
        finite = false;
        continue;
      }
      (*row_max)[(size_t)r] = std::max((*row_max)[(size_t)r], v);
    }
  return finite;
}

float FromBits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

// Random weights of every kind (tiny, subnormal, negative, huge), rows of odd widths (vector tails).
TEST(RowScan, RowMaximaMatchTheCleanedCopyForEveryKindOfWeight) {
  uint32_t seed = 99;
  auto next = [&] { return seed = seed * 1664525u + 1013904223u; };
  for (int cols : {1, 3, 7, 16, 33, 1024}) {
    const int rows = 37;
    std::vector<float> w((size_t)rows * cols);
    for (float& v : w) {
      const uint32_t k = next() % 8;
      v = k == 0   ? FromBits(next() & 0x007fffffu)               // subnormal or 0
          : k == 1 ? -(float)(next() % 1000) / 7.0f               // negative
          : k == 2 ? FromBits(next() % 0x7f800000u)               // any finite positive float
                   : std::exp(-(float)(next() % 4000) / 100.0f);  // softmax-like
    }
    for (int r = 5; r < 9; ++r)  // rows of nothing but negatives or zeros: maximum 0
      for (int c = 0; c < cols; ++c) w[(size_t)r * cols + c] = r == 5 ? -0.0f : -1.0f - (float)c;
    std::vector<float> want, got((size_t)rows, -7.0f);
    ASSERT_TRUE(Reference(w, rows, cols, &want));
    EXPECT_TRUE(attnviz::ScanRows(w.data(), rows, cols, got.data())) << cols;
    // The half textures' pass: the same maxima, each row's scale, each weight halved by it.
    std::vector<float> pairs(2 * (size_t)rows, -1.0f);
    std::vector<uint16_t> halves(w.size()), want_halves(w.size());
    EXPECT_TRUE(attnviz::RowsToHalves(w.data(), rows, cols, pairs.data(), halves.data()));
    for (int r = 0; r < rows; ++r) {
      float want_abs = 0.0f;
      for (int c = 0; c < cols; ++c) want_abs = std::max(want_abs, std::fabs(w[(size_t)r * cols + c]));
      const float scale = attnviz::PowerOfTwoAtLeast(want_abs);
      EXPECT_EQ(pairs[2 * (size_t)r], want[(size_t)r]) << "cols " << cols << " row " << r;
      EXPECT_EQ(pairs[2 * (size_t)r + 1], scale) << "cols " << cols << " row " << r;
      // |w| / s in (1/2, 1], but for rows of subnormals (s = 2^-126) and rows past 2^127 (s = 2^127)
      EXPECT_TRUE(want_abs == 0.0f || scale == 0x1p-126f ||
                  (want_abs / scale <= (scale == 0x1p127f ? 2.0f : 1.0f) && want_abs / scale > 0.5f))
          << want_abs << " " << scale;
      for (int c = 0; c < cols; ++c)
        want_halves[(size_t)r * cols + c] = attnviz::FloatToHalf(w[(size_t)r * cols + c] / scale);
    }
    EXPECT_EQ(halves, want_halves) << cols;
    for (int r = 0; r < rows; ++r) {
      EXPECT_EQ(got[(size_t)r], want[(size_t)r]) << "cols " << cols << " row " << r;
      EXPECT_FALSE(std::signbit(got[(size_t)r])) << "cols " << cols << " row " << r;
    }
  }
}

// One NaN or infinity anywhere (first, last, in a vector tail) is found, and left out of its row's maximum.
TEST(RowScan, NonFiniteWeightsAreFoundWherever) {
  const float bad[] = {std::numeric_limits<float>::quiet_NaN(),
                       -std::numeric_limits<float>::quiet_NaN(),
                       std::numeric_limits<float>::infinity(),
                       -std::numeric_limits<float>::infinity(),
                       FromBits(0x7f800001u),
                       FromBits(0xffc00000u)};
  const int rows = 4, cols = 19;
  for (float b : bad)
    for (int at : {0, cols - 1, 2 * cols + 17, rows * cols - 1}) {
      std::vector<float> w((size_t)rows * cols, 0.25f);
      w[(size_t)at] = b;
      std::vector<float> want, got((size_t)rows);
      ASSERT_FALSE(Reference(w, rows, cols, &want));
      EXPECT_FALSE(attnviz::ScanRows(w.data(), rows, cols, got.data())) << at;
      std::vector<float> pairs(2 * (size_t)rows);
      std::vector<uint16_t> halves(w.size(), 7);
      w[(size_t)(at == 0 ? 1 : 0)] = -0.5f;  // row 0's largest |w| is a negative weight's
      EXPECT_FALSE(attnviz::RowsToHalves(w.data(), rows, cols, pairs.data(), halves.data())) << at;
      for (int r = 0; r < rows; ++r) EXPECT_EQ(pairs[2 * (size_t)r + 1], r == 0 ? 0.5f : 0.25f) << at << " row " << r;
      EXPECT_EQ(halves[(size_t)at], 0) << at;  // the bad weight goes to the GPU as 0
      w[(size_t)(at == 0 ? 1 : 0)] = 0.25f;
      for (int r = 0; r < rows; ++r) EXPECT_EQ(got[(size_t)r], want[(size_t)r]) << at << " row " << r;
    }
  std::vector<float> fine((size_t)rows * cols, std::numeric_limits<float>::max());
  std::vector<float> got((size_t)rows);
  EXPECT_TRUE(attnviz::ScanRows(fine.data(), rows, cols, got.data()));  // the largest finite float is fine
  EXPECT_EQ(got[0], std::numeric_limits<float>::max());
}

}  // namespace

// FiniteRange skips NaN and infinities, keeps negative weights, and says so when none is finite.
TEST(FiniteRange, SmallestAndLargestFiniteWeights) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const float w[] = {nan, 0.25f, -inf, -12.5f, inf, 0.75f, nan};
  float lo = 7, hi = 7;
  ASSERT_TRUE(attnviz::FiniteRange(w, 7, &lo, &hi));
  EXPECT_EQ(lo, -12.5f);
  EXPECT_EQ(hi, 0.75f);
  const float none[] = {nan, inf, -inf};
  lo = hi = 7;
  EXPECT_FALSE(attnviz::FiniteRange(none, 3, &lo, &hi));
  EXPECT_FALSE(attnviz::FiniteRange(w, 0, &lo, &hi));
  EXPECT_EQ(lo, 7.0f) << "untouched when there is none";
  EXPECT_EQ(hi, 7.0f);
}
