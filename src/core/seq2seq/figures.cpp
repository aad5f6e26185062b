// attnviz seq2seq: the figure sentences (see figures.h): hand-made gold alignments, and the
// derivations by which each task's grammar generates them.
#include "core/seq2seq/figures.h"

#include <algorithm>
#include <cstdlib>

#include "core/seq2seq/grammar_en_fr.h"
#include "core/seq2seq/grammar_es_en.h"
#include "core/seq2seq/vocab.h"

namespace attnviz {
namespace seq2seq {

namespace {

const char kBahdanau[] =
    "D. Bahdanau, K. Cho, Y. Bengio, Neural Machine Translation by Jointly Learning to Align and Translate, "
    "ICLR 2015 (arXiv:1409.0473), Figure 3";
const char kTensorFlow[] =
    "TensorFlow tutorial \"Neural machine translation with attention\" (tensorflow.org/tutorials/text/"
    "nmt_with_attention), Spanish -> English examples";

// One figure as written by hand: the printed sentence and translation, the target tokens, and the
// gold links as "t-s" pairs over token indices ("p" marks a possible link). Punctuation is unaligned.
// Conventions (docs/MODELS.md): a French determiner is linked to the English one, and possibly to
// its noun (which chooses le / la / l' / les); an article French adds ("la syrie", "la destruction",
// "de nouvelles armes") is linked to the noun; "ne ... plus" is linked to "no longer" pairwise, with
// the crossing pairs possible; "a été" are both linked to "was", "a dit" both to "said".
struct HandMade {
  const char *id, *label, *text, *reference, *target_tokens, *links;
  Task task;
};
const HandMade kHandMade[] = {
    // source: the(0) agreement(1) on(2) the(3) european(4) economic(5) area(6) was(7) signed(8) in(9)
    //         august(10) 1992(11) .(12)
    {"a", "Figure 3(a): The agreement on the European Economic Area was signed in August 1992.",
     "The agreement on the European Economic Area was signed in August 1992.",
     "L' accord sur la zone économique européenne a été signé en août 1992 .",
     "l' accord sur la zone économique européenne a été signé en août 1992 .",
     "0-0 0-1p 1-1 2-2 3-3 3-6p 4-6 5-5 6-4 7-7 8-7 9-8 10-9 11-10 12-11", Task::EnFr},
    // source: it(0) should(1) be(2) noted(3) that(4) the(5) marine(6) environment(7) is(8) the(9)
    //         least(10) known(11) of(12) environments(13) .(14)
    {"b", "Figure 3(b): It should be noted that the marine environment is the least known of environments.",
     "It should be noted that the marine environment is the least known of environments.",
     "Il convient de noter que l' environnement marin est le moins connu de l' environnement .",
     "il convient de noter que l' environnement marin est le moins connu de l' environnement .",
     "0-0 1-1 1-2p 2-2 3-3 4-4 5-5 5-7p 6-7 7-6 8-8 9-9 10-10 11-11 12-12 13-13 14-13", Task::EnFr},
    // source: destruction(0) of(1) the(2) equipment(3) means(4) that(5) syria(6) can(7) no(8) longer(9)
    //         produce(10) new(11) chemical(12) weapons(13) .(14)
    {"c", "Figure 3(c): Destruction of the equipment means that Syria can no longer produce new chemical weapons.",
     "Destruction of the equipment means that Syria can no longer produce new chemical weapons.",
     "La destruction de l' équipement signifie que la Syrie ne peut plus produire de nouvelles armes chimiques .",
     "la destruction de l' équipement signifie que la syrie ne peut plus produire de nouvelles armes chimiques .",
     "0-0 1-0 2-1 3-2 3-3p 4-3 5-4 6-5 7-6 8-6 9-8 9-9p 10-7 11-9 11-8p 12-10 13-13 14-11 15-13 16-12", Task::EnFr},
    // source: "(0) this(1) will(2) change(3) my(4) future(5) with(6) my(7) family(8) ,(9) "(10) the(11)
    //         man(12) said(13) .(14)
    {"d", "Figure 3(d): \"This will change my future with my family,\" the man said.",
     "\"This will change my future with my family,\" the man said.",
     "\" Cela va changer mon avenir avec ma famille \" , a dit l' homme .",
     "\" cela va changer mon avenir avec ma famille \" , a dit l' homme .",
     "0-0 1-1 2-2 3-3 4-4 4-5p 5-5 6-6 7-7 7-8p 8-8 9-10 11-13 12-13 13-11 13-12p 14-12", Task::EnFr},
    // source: hace(0) mucho(1) frío(2) aquí(3) .(4)
    {"es1", "Spanish 1: Hace mucho frío aquí.", "Hace mucho frío aquí.", "It's very cold here.",
     "it's very cold here .", "0-0 1-1 2-2 3-3", Task::EsEn},
    // source: esta(0) es(1) mi(2) vida(3) .(4)
    {"es2", "Spanish 2: Esta es mi vida.", "Esta es mi vida.", "This is my life.", "this is my life .",
     "0-0 1-1 2-2 3-3", Task::EsEn},
    // source: ¿(0) todavía(1) están(2) en(3) casa(4) ?(5)
    {"es3", "Spanish 3: ¿Todavía están en casa?", "¿Todavía están en casa?", "Are they still at home?",
     "are they still at home ?", "0-2 1-2 2-1 3-3 4-4", Task::EsEn},
    // source: trata(0) de(1) averiguarlo(2) .(3)
    {"es4", "Spanish 4: Trata de averiguarlo.", "Trata de averiguarlo.", "Try to figure it out.",
     "try to figure it out .", "0-0 1-1 2-2 3-2 4-2", Task::EsEn},
};

std::vector<std::string> SplitSpaces(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : text + " ") {
    if (c == ' ') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  return out;
}

std::vector<FigureSentence> BuildFigures() {
  std::vector<FigureSentence> out;
  for (const HandMade& h : kHandMade) {
    FigureSentence f;
    f.id = h.id;
    f.task = h.task;
    f.label = h.label;
    f.text = h.text;
    f.reference = h.reference;
    f.citation = h.task == Task::EnFr ? kBahdanau : kTensorFlow;
    f.gold.source = Tokenize(h.text);
    f.gold.target = SplitSpaces(h.target_tokens);
    for (const std::string& l : SplitSpaces(h.links)) {
      Link link;
      link.target = std::atoi(l.c_str());
      link.source = std::atoi(l.c_str() + l.find('-') + 1);
      link.sure = l.back() != 'p';
      f.gold.links.push_back(link);
    }
    out.push_back(std::move(f));
  }
  return out;
}

std::vector<std::string> WithoutPunctuation(const std::vector<std::string>& tokens) {
  std::vector<std::string> out;
  for (const std::string& t : tokens)
    if (!IsPunctuation(t)) out.push_back(t);
  return out;
}

// Levenshtein distance over tokens, stopping early once it must exceed limit.
int TokenDistance(const std::vector<std::string>& a, const std::vector<std::string>& b, int limit) {
  if (std::abs(static_cast<int>(a.size()) - static_cast<int>(b.size())) > limit) return limit + 1;
  std::vector<int> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = static_cast<int>(i);
    int row_min = cur[0];
    for (size_t j = 1; j <= b.size(); ++j) {
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      row_min = std::min(row_min, cur[j]);
    }
    if (row_min > limit) return limit + 1;
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

// ---------------------------------------------------------------------------
// the derivations: how each grammar generates the figure sentences
// ---------------------------------------------------------------------------
en_fr::NpCore Common(const char* noun, en_fr::Det det, std::vector<const char*> adjectives = {},
                     const char* possessive = "my") {
  en_fr::NpCore c;
  c.noun = en_fr::NounIndex(noun);
  c.det = det;
  c.possessive = en_fr::PossessiveIndex(possessive);
  for (const char* a : adjectives) c.adjectives.push_back(en_fr::AdjectiveIndex(a));
  return c;
}

en_fr::Sentence EnFrDerivation(const std::string& id) {
  using namespace en_fr;
  Sentence s;
  s.period = true;
  Clause& c = s.clause;
  if (id == "a") {  // Np(the agreement on the european economic area) was signed in august 1992 .
    c.kind = ClauseKind::Passive;
    c.subject.head = Common("agreement", Det::The);
    c.subject.prep = PrepositionIndex("on");
    c.subject.complement = Common("area", Det::The, {"european", "economic"});
    c.verb = PastVerbIndex("sign");
    c.month = MonthIndex("august");
    c.year = YearIndex(1992);
  } else if (id == "b") {  // it should be noted that + Np(the marine environment) is the least known of environments
    s.frame = Frame::Impersonal;
    s.impersonal = ImpersonalIndex("it should be noted that");
    c.kind = ClauseKind::Superlative;
    c.subject.head = Common("environment", Det::The, {"marine"});
    c.adjective = AdjectiveIndex("known");
    c.most = false;
    c.of_noun = NounIndex("environment");
  } else if (id == "c") {  // Np(destruction of the equipment) means that + syria can no longer produce Np(...)
    s.frame = Frame::Reporting;
    s.reporter.head.kind = NounKind::Abstract;
    s.reporter.head.noun = AbstractIndex("destruction");
    s.reporter.head.det = Det::Bare;
    s.reporter.prep = PrepositionIndex("of");
    s.reporter.complement = Common("equipment", Det::The);
    s.reporting_verb = ReportingVerbIndex("means");
    c.kind = ClauseKind::Modal;
    c.subject.head.kind = NounKind::Country;
    c.subject.head.noun = CountryIndex("syria");
    c.polarity = Polarity::NoLonger;
    c.verb = VerbIndex("produce");
    c.object.head = Common("weapon", Det::Bare, {"chemical"});
    c.object.head.plural = true;
    c.object.head.pre_adjective = PreAdjectiveIndex("new");
  } else if (id == "d") {  // " this will change Np(my future with my family) , " Np(the man) said .
    s.frame = Frame::Quote;
    c.kind = ClauseKind::Future;
    c.subject.head.kind = NounKind::This;
    c.verb = VerbIndex("change");
    c.object.head = Common("future", Det::Possessive);
    c.object.prep = PrepositionIndex("with");
    c.object.complement = Common("family", Det::Possessive);
    s.speaker.head = Common("man", Det::The);
    s.speech_verb = SpeechVerbIndex("said");
  }
  return s;
}

es_en::Sentence EsEnDerivation(const std::string& id) {
  using namespace es_en;
  Sentence s;
  s.period = true;
  if (id == "es1") {  // hace mucho frío aquí .
    s.family = Family::Weather;
    s.mood = WeatherMood::Statement;
    s.very = true;
    s.weather = WeatherIndex("frío");
    s.time_place = TimePlaceIndex("aquí");
  } else if (id == "es2") {  // esta es mi vida .
    s.family = Family::Identity;
    s.demonstrative = true;
    s.near = true;
    s.np.det = DeterminerIndex("mi");
    s.np.noun = NounIndex("vida");
  } else if (id == "es3") {  // ¿ todavía están en casa ?
    s.family = Family::Location;
    s.question = true;
    s.period = false;
    s.person = PersonIndex("están");
    s.adverb = Adverb::Still;
    s.place = PlaceIndex("casa");
  } else if (id == "es4") {  // trata de averiguarlo .
    s.family = Family::Infinitive;
    s.frame = FrameIndex("trata de");
    s.clitic = CliticIndex("averiguarlo");
  }
  return s;
}

}  // namespace

const std::vector<FigureSentence>& FigureSentences() {
  static const std::vector<FigureSentence> figures = BuildFigures();
  return figures;
}

const FigureSentence* FindFigure(const std::string& id) {
  for (const FigureSentence& f : FigureSentences())
    if (f.id == id) return &f;
  return nullptr;
}

bool IsFigureVariant(Task task, const std::vector<std::string>& source_tokens) {
  const std::vector<std::string> words = WithoutPunctuation(source_tokens);
  for (const FigureSentence& f : FigureSentences())
    if (f.task == task && TokenDistance(words, WithoutPunctuation(f.gold.source), 1) <= 1) return true;
  return false;
}

namespace internal {

bool RealizeFigure(const std::string& id, SentencePair* out) {
  const FigureSentence* f = FindFigure(id);
  if (!f) return false;
  if (f->task == Task::EnFr) {
    const en_fr::Sentence s = EnFrDerivation(id);
    if (!en_fr::Valid(s)) return false;
    *out = en_fr::Realize(s);
  } else {
    const es_en::Sentence s = EsEnDerivation(id);
    if (!es_en::Valid(s)) return false;
    *out = es_en::Realize(s);
  }
  return true;
}

}  // namespace internal
}  // namespace seq2seq
}  // namespace attnviz
