// Label thinning (core/label_layout.h): strides that keep labels from overlapping.
#include "core/label_layout.h"

#include <gtest/gtest.h>

namespace attnviz {
namespace {

TEST(LabelLayout, ModesRoundTrip) {
  for (int i = 0; i < (int)LabelMode::Count; ++i) {
    LabelMode m;
    ASSERT_TRUE(ParseLabelMode(LabelModeName((LabelMode)i), &m));
    EXPECT_EQ((int)m, i);
  }
  LabelMode m = LabelMode::All;
  EXPECT_FALSE(ParseLabelMode("some", &m));
  EXPECT_EQ(m, LabelMode::All);
}

TEST(LabelLayout, AutoStrideNeverOverlaps) {
  // Labels 14 px tall at cells from 1 to 40 px: drawn labels are >= 14 + gap apart, and the stride
  // is the smallest that achieves it.
  for (float cell = 1; cell <= 40; cell += 0.5f) {
    const int k = LabelStride(LabelMode::Auto, cell, 14.0f, 2.0f);
    ASSERT_GE(k, 1);
    EXPECT_GE(k * cell, 16.0f - 1e-3f) << "cell " << cell;
    if (k > 1) {
      EXPECT_LT((k - 1) * cell, 16.0f) << "cell " << cell;
    }
  }
  EXPECT_EQ(LabelStride(LabelMode::Auto, 16.0f, 14.0f, 2.0f), 1);  // exactly fits
}

TEST(LabelLayout, AllNoneAndHostileSizes) {
  EXPECT_EQ(LabelStride(LabelMode::All, 0.1f, 100.0f), 1);
  EXPECT_EQ(LabelStride(LabelMode::None, 100.0f, 1.0f), 0);
  EXPECT_EQ(LabelStride(LabelMode::Auto, 0.0f, 14.0f), 1);
  EXPECT_EQ(LabelStride(LabelMode::Auto, -1.0f, 14.0f), 1);
  EXPECT_EQ(LabelStride(LabelMode::Auto, 1e-30f, 14.0f), 1000000);
  EXPECT_FALSE(LabelShown(3, 0));
  EXPECT_TRUE(LabelShown(4, 2));
  EXPECT_FALSE(LabelShown(3, 2));
  EXPECT_TRUE(LabelShown(3, 2, 3));  // the highlighted label is always drawn
}

}  // namespace
}  // namespace attnviz
