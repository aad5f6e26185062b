// seq2seq corpus, vocabulary and metric tests.
#include "core/seq2seq/corpus.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <tuple>

#include "core/seq2seq/metrics.h"
#include "core/seq2seq/vocab.h"

namespace attnviz {
namespace seq2seq {
namespace {

std::string Str(const std::vector<std::string>& t) {
  return Join(t);
}

void CheckPair(const SentencePair& p, const Vocab& src, const Vocab& tgt) {
  ASSERT_FALSE(p.source.empty());
  ASSERT_FALSE(p.target.empty());
  std::vector<int> sure_per_target(p.target.size(), 0);
  for (const Link& l : p.links) {
    ASSERT_GE(l.target, 0) << Str(p.source);
    ASSERT_LT(l.target, static_cast<int>(p.target.size())) << Str(p.source);
    ASSERT_GE(l.source, 0) << Str(p.source);
    ASSERT_LT(l.source, static_cast<int>(p.source.size())) << Str(p.source);
    if (l.sure) ++sure_per_target[l.target];
  }
  for (size_t t = 0; t < p.target.size(); ++t) {
    if (IsPunctuation(p.target[t])) {
      EXPECT_EQ(sure_per_target[t], 0) << "punctuation is unaligned by design: " << Str(p.target);
    } else {
      EXPECT_GE(sure_per_target[t], 1) << "unaligned target word '" << p.target[t] << "' in " << Str(p.target);
    }
  }
  for (const std::string& w : p.source) EXPECT_TRUE(src.Contains(w)) << "source word not in vocab: " << w;
  for (const std::string& w : p.target) EXPECT_TRUE(tgt.Contains(w)) << "target word not in vocab: " << w;
}

TEST(Seq2SeqCorpus, EnFrAlignmentsAreValidAndCoverEveryWord) {
  Corpus c;
  ASSERT_TRUE(GenerateCorpus(Task::EnFr, 7, 3000, 300, &c).ok);
  EXPECT_EQ(c.train.size(), 3000u);
  EXPECT_EQ(c.heldout.size(), 300u);
  for (const auto& p : c.train) CheckPair(p, c.source_vocab, c.target_vocab);
  for (const auto& p : c.heldout) CheckPair(p, c.source_vocab, c.target_vocab);
  std::printf("en-fr vocab: %d source, %d target words; example: %s -> %s\n", c.source_vocab.Size(),
              c.target_vocab.Size(), Str(c.train[0].source).c_str(), Str(c.train[0].target).c_str());
  EXPECT_GE(c.source_vocab.Size(), 200);
  EXPECT_GE(c.target_vocab.Size(), 300);
}

TEST(Seq2SeqCorpus, DatesAlignmentsAreValidAndNonMonotonic) {
  Corpus c;
  ASSERT_TRUE(GenerateCorpus(Task::Dates, 3, 2000, 200, &c).ok);
  int crossing = 0;
  for (const auto& p : c.train) {
    CheckPair(p, c.source_vocab, c.target_vocab);
    ASSERT_EQ(p.target.size(), 5u);
    crossing += p.links[0].source > p.links[1].source;  // the year (target 0) comes after the month in the source
  }
  EXPECT_EQ(crossing, 2000) << "the year is always last in the source and first in the target";
  const SentencePair probe = ProbePair(Task::Dates);
  EXPECT_EQ(Str(probe.source), "the 3rd of march 1999");
  EXPECT_EQ(Str(probe.target), "1999 - 03 - 03");
}

TEST(Seq2SeqCorpus, ProbePairIsExactAndInGrammar) {
  const SentencePair p = ProbePair(Task::EnFr);
  EXPECT_EQ(Str(p.source), "the european economic area");
  EXPECT_EQ(Str(p.target), "la zone économique européenne");
  // sure: la-the, zone-area, économique-economic, européenne-european; possible: la-area (the noun
  // chooses the article's form, docs/MODELS.md)
  const std::vector<std::tuple<int, int, bool>> expected = {
      {0, 0, true}, {0, 3, false}, {1, 3, true}, {2, 2, true}, {3, 1, true}};
  ASSERT_EQ(p.links.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(p.links[i].target, std::get<0>(expected[i]));
    EXPECT_EQ(p.links[i].source, std::get<1>(expected[i]));
    EXPECT_EQ(p.links[i].sure, std::get<2>(expected[i]));
  }
  // the grammar produces its parts: "european economic X" -> "X économique(s) européen(ne)(s)" and area -> zone
  Corpus c;
  ASSERT_TRUE(GenerateCorpus(Task::EnFr, 11, 200000, 10, &c).ok);  // two given adjectives in order are rare
  int found = 0, reversed = 0, area = 0;
  for (const auto& q : c.train) {
    const std::string s = Str(q.source), t = Str(q.target);
    if (s.find("the european economic area") != std::string::npos &&
        t.find("la zone économique européenne") != std::string::npos)
      ++found;
    if (s.find("european economic") != std::string::npos &&
        (t.find("économique européen") != std::string::npos || t.find("économiques européen") != std::string::npos))
      ++reversed;
    if (s.find("the area") != std::string::npos && t.find("la zone") != std::string::npos) ++area;
    EXPECT_NE(s, "the european economic area") << "the probe is never a training sentence";
  }
  EXPECT_GE(reversed, 1);
  EXPECT_GE(area, 1);
  std::printf(
      "in 200000 sentences: %d contain the probe phrase, %d 'european economic' -> 'économique(s) européen...', %d "
      "'the area'\n",
      found, reversed, area);
}

TEST(Seq2SeqCorpus, GrammarShowsAgreementContractionNegationAndCountries) {
  Corpus c;
  ASSERT_TRUE(GenerateCorpus(Task::EnFr, 5, 20000, 10, &c).ok);
  auto has = [&](const std::string& src_part, const std::string& tgt_part) {
    for (const auto& p : c.train)
      if ((" " + Str(p.source) + " ").find(src_part) != std::string::npos &&
          (" " + Str(p.target) + " ").find(tgt_part) != std::string::npos)
        return true;
    return false;
  };
  EXPECT_TRUE(has(" of the ", " du ")) << "de + le -> du";
  EXPECT_TRUE(has(" of the ", " des ")) << "de + les -> des";
  EXPECT_TRUE(has(" of the ", " de la ")) << "de la";
  EXPECT_TRUE(has(" of the ", " de l' ")) << "de l'";
  EXPECT_TRUE(has(" syria ", " la syrie ")) << "countries take an article";
  EXPECT_TRUE(has(" does not ", " ne ")) << "negation";
  EXPECT_TRUE(has(" does not ", " n' ")) << "negation with elision";
  EXPECT_TRUE(has(" not ", " pas ")) << "ne ... pas";
  EXPECT_TRUE(has(" her cat ", " son chat ")) << "possessive agrees with the possessed noun";
  EXPECT_TRUE(has(" the school ", " l' école ")) << "elision before a vowel";
  EXPECT_TRUE(has(" the cats ", " les chats ")) << "plural article";
  // negation is one-to-many: "not" links to both "ne"/"n'" and "pas"
  bool one_to_many = false;
  for (const auto& p : c.train) {
    std::vector<int> per_source(p.source.size(), 0);
    for (const Link& l : p.links)
      if (l.sure) ++per_source[l.source];
    for (size_t s = 0; s < p.source.size(); ++s) one_to_many |= p.source[s] == "not" && per_source[s] == 2;
  }
  EXPECT_TRUE(one_to_many);
}

TEST(Seq2SeqCorpus, SameSeedSameCorpusDifferentSeedDifferentCorpus) {
  Corpus a, b, d;
  ASSERT_TRUE(GenerateCorpus(Task::EnFr, 42, 500, 50, &a).ok);
  ASSERT_TRUE(GenerateCorpus(Task::EnFr, 42, 500, 50, &b).ok);
  ASSERT_TRUE(GenerateCorpus(Task::EnFr, 43, 500, 50, &d).ok);
  int same = 0;
  for (size_t i = 0; i < a.train.size(); ++i) {
    ASSERT_EQ(a.train[i].source, b.train[i].source);
    ASSERT_EQ(a.train[i].target, b.train[i].target);
    ASSERT_EQ(a.train[i].links.size(), b.train[i].links.size());
    same += a.train[i].source == d.train[i].source;
  }
  EXPECT_LT(same, 50);
  EXPECT_EQ(a.source_vocab.Tokens(), b.source_vocab.Tokens());
  // the held-out set never repeats a training sentence
  for (const auto& h : a.heldout)
    for (const auto& t : a.train) ASSERT_NE(h.source, t.source);
}

TEST(Seq2SeqVocab, TokenizeUnknownWordsAndSuggestions) {
  Vocab src, tgt;
  BuildVocabs(Task::EnFr, &src, &tgt);
  const std::vector<std::string> words = Tokenize("The Europaen economic AREA.");
  ASSERT_EQ(words.size(), 5u);
  EXPECT_EQ(words[0], "the");
  EXPECT_EQ(words[3], "area");
  EXPECT_EQ(words[4], ".");
  const std::vector<int> unknown = src.UnknownPositions(words);
  ASSERT_EQ(unknown.size(), 1u) << "'.' is a word of the grammar (sentences may end with it)";
  EXPECT_EQ(unknown[0], 1);
  const std::vector<Suggestion> s = src.Suggest("europaen");
  ASSERT_FALSE(s.empty());
  EXPECT_EQ(s[0].token, "european");
  EXPECT_EQ(s[0].distance, 2);
  EXPECT_EQ(EditDistance("économique", "economique"), 1) << "distance counts code points, not bytes";
  EXPECT_EQ(Tokenize("L'ÉCOLE")[1], "école");
  EXPECT_EQ(Tokenize("l'école")[0], "l'");
  EXPECT_EQ(Join(Tokenize("It's cold, let's go: qu'il n'a pas")), "it's cold , let's go : qu' il n' a pas");
}

TEST(Seq2SeqMetrics, AlignmentErrorRate) {
  const SentencePair p = ProbePair(Task::EnFr);
  MatrixRM perfect = MatrixRM::Zero(5, 4);  // 4 words + EOS
  perfect(0, 0) = perfect(1, 3) = perfect(2, 2) = perfect(3, 1) = 1.0f;
  perfect.row(4).setConstant(0.25f);
  EXPECT_NEAR(ScoreAlignment(perfect, p, AlignMode::ArgMax).Aer(), 0.0, 1e-12);
  EXPECT_NEAR(ScoreAlignment(perfect, p, AlignMode::Threshold, 0.3f).Aer(), 0.0, 1e-12);
  MatrixRM diagonal = MatrixRM::Identity(5, 4);  // monotonic: right for "la" and "économique" only
  const AlignmentCounts c = ScoreAlignment(diagonal, p, AlignMode::ArgMax);
  EXPECT_EQ(c.predicted, 4);
  EXPECT_EQ(c.predicted_sure, 2);
  EXPECT_NEAR(c.Aer(), 0.5, 1e-12);
  SequenceCounts s;
  s.Add({5, 6, 7}, {5, 6, 7});
  s.Add({5, 9}, {5, 6, 7});
  EXPECT_NEAR(s.ExactMatch(), 0.5, 1e-12);
  EXPECT_NEAR(s.TokenAccuracy(), (4.0 + 1.0) / 8.0, 1e-12);
}

}  // namespace
}  // namespace seq2seq
}  // namespace attnviz
