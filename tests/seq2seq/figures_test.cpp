// seq2seq figure sentences: the hand-made gold, the grammars that generate them, the hold-out,
// the es-en task, and the tokenizer on the sentences as printed.
#include "core/seq2seq/figures.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <set>
#include <tuple>

#include "core/seq2seq/grammar_internal.h"
#include "core/seq2seq/trainer.h"
#include "core/seq2seq/vocab.h"

namespace attnviz {
namespace seq2seq {
namespace {

using LinkSet = std::set<std::tuple<int, int, bool>>;
LinkSet Links(const SentencePair& p) {
  LinkSet out;
  for (const Link& l : p.links) out.insert({l.target, l.source, l.sure});
  return out;
}

TEST(Seq2SeqFigures, EightSentencesWithHandMadeGold) {
  const std::vector<FigureSentence>& figures = FigureSentences();
  ASSERT_EQ(figures.size(), 8u);
  const char* ids[8] = {"a", "b", "c", "d", "es1", "es2", "es3", "es4"};
  for (size_t i = 0; i < figures.size(); ++i) {
    const FigureSentence& f = figures[i];
    EXPECT_EQ(f.id, ids[i]);
    EXPECT_EQ(FindFigure(ids[i]), &f);
    EXPECT_EQ(f.task, i < 4 ? Task::EnFr : Task::EsEn) << f.id;
    EXPECT_EQ(f.gold.source, Tokenize(f.text)) << f.id;
    EXPECT_EQ(f.gold.target, Tokenize(f.reference)) << f.id << ": the reference tokenizes to the gold tokens";
    EXPECT_FALSE(f.citation.empty());
    std::vector<int> sure(f.gold.target.size(), 0);
    for (const Link& l : f.gold.links) {
      ASSERT_GE(l.target, 0);
      ASSERT_LT(l.target, static_cast<int>(f.gold.target.size())) << f.id;
      ASSERT_GE(l.source, 0);
      ASSERT_LT(l.source, static_cast<int>(f.gold.source.size())) << f.id;
      sure[l.target] += l.sure;
    }
    for (size_t t = 0; t < sure.size(); ++t)
      EXPECT_EQ(sure[t] > 0, !IsPunctuation(f.gold.target[t])) << f.id << " target word " << f.gold.target[t];
  }
  EXPECT_EQ(FindFigure("e"), nullptr);
  // As printed in Figure 3 of Bahdanau et al. (2015): elision and punctuation are tokens.
  EXPECT_EQ(Join(FindFigure("a")->gold.target),
            "l' accord sur la zone économique européenne a été signé en août 1992 .");
  EXPECT_EQ(Join(FindFigure("d")->gold.source), "\" this will change my future with my family , \" the man said .");
  EXPECT_EQ(Join(FindFigure("d")->gold.target), "\" cela va changer mon avenir avec ma famille \" , a dit l' homme .");
  EXPECT_EQ(Join(FindFigure("es3")->gold.source), "¿ todavía están en casa ?");
}

TEST(Seq2SeqFigures, EachGrammarGeneratesItsFiguresWithTheSameLinks) {
  for (const FigureSentence& f : FigureSentences()) {
    SentencePair generated;
    ASSERT_TRUE(internal::RealizeFigure(f.id, &generated)) << f.id << ": the derivation is not valid in the grammar";
    EXPECT_EQ(generated.source, f.gold.source) << f.id;
    EXPECT_EQ(generated.target, f.gold.target) << f.id;
    EXPECT_EQ(Links(generated), Links(f.gold)) << f.id << ": the grammar's links differ from the hand-made gold";
    Vocab src, tgt;
    BuildVocabs(f.task, &src, &tgt);
    EXPECT_TRUE(src.UnknownPositions(f.gold.source).empty()) << f.id;
    EXPECT_TRUE(tgt.UnknownPositions(f.gold.target).empty()) << f.id;
  }
}

// The sampler reaches every construction of the figures (with different words).
TEST(Seq2SeqFigures, SamplersProduceTheFiguresConstructions) {
  Corpus c;
  ASSERT_TRUE(GenerateCorpus(Task::EnFr, 3, 30000, 10, &c).ok);
  auto count = [&](const std::string& src_part, const std::string& tgt_part) {
    int n = 0;
    for (const auto& p : c.train)
      n += (" " + Join(p.source) + " ").find(src_part) != std::string::npos &&
           (" " + Join(p.target) + " ").find(tgt_part) != std::string::npos;
    return n;
  };
  const std::pair<const char*, const char*> parts[] = {
      {" was signed in ", " a été signé en "},
      {" were signed ", " ont été signé"},
      {" it should be noted that ", " il convient de noter que "},
      {" is the least ", " le moins "},
      {" are the most ", " les plus "},
      {" means that ", " signifie que "},
      {" can no longer ", " ne peut plus "},
      {" will ", " va "},
      {" , \" the man said . ", " \" , a dit l' homme . "},
      {" new ", " de nouve"},
      {" with my ", " avec m"},
      {" on the ", " sur l"},
      {"destruction of the ", "la destruction de"},
      {" of environments ", " de l' environnement "},
  };
  for (const auto& [en, fr] : parts) {
    const int n = count(en, fr);
    EXPECT_GE(n, 1) << "'" << en << "' -> '" << fr << "'";
    std::printf("%6d  '%s' -> '%s'\n", n, en, fr);
  }
  Corpus es;
  ASSERT_TRUE(GenerateCorpus(Task::EsEn, 3, 6000, 10, &es).ok);
  int weather = 0, question = 0, clitic = 0, identity = 0;
  for (const auto& p : es.train) {
    const std::string s = Join(p.source), t = Join(p.target);
    weather += s.find("hace mucho ") != std::string::npos && t.find("it's very ") != std::string::npos;
    question += s.find("¿ todavía ") == 0 && t.find(" still at ") != std::string::npos;
    clitic += s.find("averiguarlo") != std::string::npos && t.find("figure it out") != std::string::npos;
    identity += s.find("esta es ") == 0 && t.find("this is ") == 0;
  }
  std::printf("es-en: %d 'hace mucho', %d '¿ todavía', %d 'averiguarlo', %d 'esta es' in 6000\n", weather, question,
              clitic, identity);
  EXPECT_GE(weather, 10);
  EXPECT_GE(question, 10);
  EXPECT_GE(clitic, 10);
  EXPECT_GE(identity, 10);
}

TEST(Seq2SeqFigures, CloseVariantsAreHeldOutOfEveryCorpus) {
  // within one token edit (punctuation ignored): held out
  for (const char* s :
       {"the agreement on the european economic area was signed in august 1992",
        "the agreement on the european economic area was signed in august 1993 .", "trata de hacerlo .",
        "trata de averiguarlo", "todavía están en casa .", "¿ todavía están ellos en casa ?", "esta es mi casa ."})
    EXPECT_TRUE(IsFigureVariant(s[0] == 't' && s[1] == 'h' ? Task::EnFr : Task::EsEn, Tokenize(s))) << s;
  // two edits away: may train
  for (const char* s : {"the agreement on the european economic area was signed in july 1993 .",
                        "trata de leer el libro .", "quiero averiguarlo .", "esta es tu casa ."})
    EXPECT_FALSE(IsFigureVariant(s[0] == 't' && s[1] == 'h' ? Task::EnFr : Task::EsEn, Tokenize(s))) << s;
  EXPECT_FALSE(IsFigureVariant(Task::EsEn, Tokenize("the agreement on the european economic area")));

  for (Task task : {Task::EnFr, Task::EsEn}) {
    const TrainerConfig config = DefaultTrainerConfig(ModelKind::Bahdanau, task, 1);
    Corpus c;
    ASSERT_TRUE(GenerateCorpus(task, 1, config.n_train, config.n_heldout, &c).ok);
    int variants = 0;
    for (const auto* set : {&c.train, &c.heldout})
      for (const SentencePair& p : *set) {
        variants += IsFigureVariant(task, p.source);
        for (const FigureSentence& f : FigureSentences()) ASSERT_NE(p.source, f.gold.source) << f.id;
      }
    EXPECT_EQ(variants, 0) << TaskName(task);
    std::printf("%s, seed 1: %zu training pairs, none within one edit of a figure\n", TaskName(task), c.train.size());
  }
}

TEST(Seq2SeqFigures, EsEnAlignmentsAreValid) {
  Corpus c;
  ASSERT_TRUE(GenerateCorpus(Task::EsEn, 7, 3000, 100, &c).ok);
  for (const auto& p : c.train) {
    std::vector<int> sure(p.target.size(), 0);
    for (const Link& l : p.links) {
      ASSERT_LT(l.target, static_cast<int>(p.target.size()));
      ASSERT_LT(l.source, static_cast<int>(p.source.size()));
      sure[l.target] += l.sure;
    }
    for (size_t t = 0; t < p.target.size(); ++t)
      ASSERT_EQ(sure[t] > 0, !IsPunctuation(p.target[t])) << Join(p.source) << " -> " << Join(p.target);
    EXPECT_TRUE(c.source_vocab.UnknownPositions(p.source).empty()) << Join(p.source);
    EXPECT_TRUE(c.target_vocab.UnknownPositions(p.target).empty()) << Join(p.target);
  }
  std::printf("es-en vocab: %d source, %d target words\n", c.source_vocab.Size(), c.target_vocab.Size());
  EXPECT_STREQ(TaskName(Task::EsEn), "es-en");
  Task t = Task::EnFr;
  EXPECT_TRUE(ParseTask("es-en", &t));
  EXPECT_EQ(t, Task::EsEn);
  EXPECT_EQ(Join(ProbePair(Task::EsEn).target), "are they still at home ?");
}

TEST(Seq2SeqFigures, TokenizeTheSentencesAsPrinted) {
  EXPECT_EQ(Join(Tokenize("\xe2\x80\x9cThis will change my future with my family,\xe2\x80\x9d the man said.")),
            "\" this will change my future with my family , \" the man said .")
      << "curly quotes are straight quotes";
  EXPECT_EQ(Join(Tokenize("L\xe2\x80\x99"
                          "accord sur la zone")),
            "l' accord sur la zone")
      << "typographic apostrophe";
  EXPECT_EQ(Join(Tokenize("¡Hace mucho frío aquí! ¿Todavía?")), "¡ hace mucho frío aquí ! ¿ todavía ?");
  EXPECT_EQ(Join(Tokenize("«Cela»")), "« cela »");
  EXPECT_TRUE(IsPunctuation("¿"));
  EXPECT_TRUE(IsPunctuation("?"));
  EXPECT_FALSE(IsPunctuation("\"")) << "quotes are aligned, like words";
}

}  // namespace
}  // namespace seq2seq
}  // namespace attnviz
