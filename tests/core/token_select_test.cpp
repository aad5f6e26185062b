// Which tokens a filter hides, and the map without them (the app's token filter and
// `attnviz-cli render --hide` both use these).
#include "core/token_select.h"

#include <gtest/gtest.h>

using namespace attnviz;

TEST(TokenSelect, SpecialPunctuationAndTypedTokens) {
  const std::vector<std::string> toks = {"[CLS]", "\u2581the", "##s", "\u2581.", ",", "\u00ab", "<extra_0>", "[SEP]"};
  TokenHide hide;
  EXPECT_EQ(KeptTokens(toks, hide, {}).size(), toks.size()) << "nothing hidden by default";
  hide.special = true;
  EXPECT_EQ(KeptTokens(toks, hide, {"<extra_0>"}), (std::vector<int>{1, 2, 3, 4, 5})) << "common and file specials";
  hide.punctuation = true;
  EXPECT_EQ(KeptTokens(toks, hide, {}), (std::vector<int>{1, 2, 5, 6}))
      << "'\u2581.' and ',' are punctuation, '\u00ab' not";
  hide = TokenHide{};
  hide.tokens = {"the", "s"};  // as the labels show them
  EXPECT_EQ(KeptTokens(toks, hide, {}), (std::vector<int>{0, 3, 4, 5, 6, 7}));
  EXPECT_TRUE(TokenMatches("\u2581the", "\u2581the"));
  EXPECT_TRUE(TokenMatches("\u0120the", "the"));
  EXPECT_FALSE(TokenMatches("the", "\u2581the")) << "the marker is only dropped from the file's token";
  EXPECT_FALSE(TokenMatches("\u2581", "")) << "a lone marker is a token of its own";
  EXPECT_EQ(BareToken("\u2581"), "\u2581");
  EXPECT_EQ(BareToken("##ing"), "ing");
}

TEST(TokenSelect, RowsAndColumnsKeptAndRowsRenormalised) {
  MatrixRM w(3, 4);
  w << 0.1f, 0.2f, 0.3f, 0.4f,  //
      0.5f, 0.0f, 0.5f, 0.0f,   //
      0.0f, 1.0f, 0.0f, 0.0f;
  MatrixRM out;
  SelectRowsCols(w, {0, 2}, {0, 2}, false, &out);
  ASSERT_EQ(out.rows(), 2);
  ASSERT_EQ(out.cols(), 2);
  EXPECT_FLOAT_EQ(out(0, 0), 0.1f);
  EXPECT_FLOAT_EQ(out(0, 1), 0.3f);
  EXPECT_FLOAT_EQ(out(1, 1), 0.0f);
  SelectRowsCols(w, {0, 1, 2}, {0, 2}, true, &out);
  EXPECT_NEAR(out(0, 0), 0.25, 1e-6);
  EXPECT_NEAR(out(0, 1), 0.75, 1e-6);
  EXPECT_NEAR(out(1, 0) + out(1, 1), 1.0, 1e-6);
  EXPECT_EQ(out(2, 0), 0.0f) << "a row with nothing left stays 0, not NaN";
  EXPECT_EQ(out(2, 1), 0.0f);
  EXPECT_EQ(PickTokens({"a", "b", "c"}, {2, 0}), (std::vector<std::string>{"c", "a"}));
}
