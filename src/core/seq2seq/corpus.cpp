// attnviz seq2seq: corpus generation, the dates task and helpers shared by the grammars (see corpus.h).
#include "core/seq2seq/corpus.h"

#include <unordered_set>

#include "core/seq2seq/figures.h"
#include "core/seq2seq/grammar_internal.h"

namespace attnviz {
namespace seq2seq {

namespace internal {

bool FrVowel(const std::string& w) {
  if (w.empty()) return false;
  const unsigned char c = static_cast<unsigned char>(w[0]);
  if (c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u' || c == 'h') return true;
  return c == 0xC3 && w.size() > 1;  // é è ê â î ô ... (every accented initial here is a vowel)
}

bool EnVowelSound(const std::string& w) {
  if (w.empty()) return false;
  if (w.compare(0, 2, "eu") == 0 || w.compare(0, 3, "uni") == 0) return false;
  const char c = w[0];
  return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u';
}

void ElideFrench(std::vector<std::string>* tokens) {
  for (size_t i = 0; i + 1 < tokens->size(); ++i) {
    std::string& t = (*tokens)[i];
    if (!FrVowel((*tokens)[i + 1])) continue;
    if (t == "de") t = "d'";
    if (t == "que") t = "qu'";
    if (t == "ne") t = "n'";
  }
}

}  // namespace internal

namespace {

using internal::Builder;

// ---------------------------------------------------------------------------
// dates
// ---------------------------------------------------------------------------
const char* const kMonths[12] = {"january", "february", "march",     "april",   "may",      "june",
                                 "july",    "august",   "september", "october", "november", "december"};
const char* const kMonthAbbr[12] = {"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"};
constexpr int kFirstYear = 1950, kLastYear = 2049;

std::string Ordinal(int d) {
  const char* suffix = "th";
  if (d % 10 == 1 && d != 11) suffix = "st";
  if (d % 10 == 2 && d != 12) suffix = "nd";
  if (d % 10 == 3 && d != 13) suffix = "rd";
  return std::to_string(d) + suffix;
}
std::string TwoDigits(int x) {
  return (x < 10 ? "0" : "") + std::to_string(x);
}
int DaysIn(int month, int year) {
  static const int kDays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return month == 2 && leap ? 29 : kDays[month - 1];
}

SentencePair MakeDate(int format, int day, int month, int year) {
  Builder b;
  int s_day = -1, s_month = -1, s_year = -1;
  const std::string y = std::to_string(year);
  switch (format) {
    case 0:  // the 3rd of march 1999
      b.Src("the");
      s_day = b.Src(Ordinal(day));
      b.Src("of");
      s_month = b.Src(kMonths[month - 1]);
      s_year = b.Src(y);
      break;
    case 1:  // march 3 , 1999
      s_month = b.Src(kMonths[month - 1]);
      s_day = b.Src(std::to_string(day));
      b.Src(",");
      s_year = b.Src(y);
      break;
    case 2:  // 3 march 1999
      s_day = b.Src(std::to_string(day));
      s_month = b.Src(kMonths[month - 1]);
      s_year = b.Src(y);
      break;
    case 3:  // mar 3 1999
      s_month = b.Src(kMonthAbbr[month - 1]);
      s_day = b.Src(std::to_string(day));
      s_year = b.Src(y);
      break;
    case 4:  // 3 / 3 / 1999 (day / month / year)
      s_day = b.Src(std::to_string(day));
      b.Src("/");
      s_month = b.Src(std::to_string(month));
      b.Src("/");
      s_year = b.Src(y);
      break;
    default:  // march the 3rd , 1999
      s_month = b.Src(kMonths[month - 1]);
      b.Src("the");
      s_day = b.Src(Ordinal(day));
      b.Src(",");
      s_year = b.Src(y);
      break;
  }
  b.Link(b.Tgt(y), s_year);
  b.Tgt("-");
  b.Link(b.Tgt(TwoDigits(month)), s_month);
  b.Tgt("-");
  b.Link(b.Tgt(TwoDigits(day)), s_day);
  return b.p;
}
constexpr int kDateFormats = 6;

SentencePair GenerateDate(Rng* rng) {
  const int year = kFirstYear + rng->Uniform(kLastYear - kFirstYear + 1);
  const int month = 1 + rng->Uniform(12);
  const int day = 1 + rng->Uniform(DaysIn(month, year));
  return MakeDate(rng->Uniform(kDateFormats), day, month, year);
}

}  // namespace

const char* TaskName(Task t) {
  switch (t) {
    case Task::Dates:
      return "dates";
    case Task::EsEn:
      return "es-en";
    case Task::EnFr:
      break;
  }
  return "en-fr";
}

bool ParseTask(const std::string& name, Task* out) {
  for (Task t : {Task::EnFr, Task::Dates, Task::EsEn})
    if (name == TaskName(t)) return *out = t, true;
  return false;
}

bool IsPunctuation(const std::string& token) {
  for (const char* p : {"-", ",", "/", ".", ";", ":", "?", "!", "\xc2\xbf", "\xc2\xa1"})  // ... ¿ ¡
    if (token == p) return true;
  return false;
}

void BuildVocabs(Task task, Vocab* source, Vocab* target) {
  if (task == Task::EnFr) return internal::BuildEnFrVocabs(source, target);
  if (task == Task::EsEn) return internal::BuildEsEnVocabs(source, target);
  *source = Vocab();
  *target = Vocab();
  for (const char* w : {"the", "of", ",", "/"}) source->Add(w);
  for (int m = 0; m < 12; ++m) source->Add(kMonths[m]), source->Add(kMonthAbbr[m]);
  for (int d = 1; d <= 31; ++d) source->Add(std::to_string(d)), source->Add(Ordinal(d));
  target->Add("-");
  for (int d = 1; d <= 31; ++d) target->Add(TwoDigits(d));
  for (int y = kFirstYear; y <= kLastYear; ++y) source->Add(std::to_string(y)), target->Add(std::to_string(y));
}

SentencePair GeneratePair(Task task, Rng* rng) {
  switch (task) {
    case Task::Dates:
      return GenerateDate(rng);
    case Task::EsEn:
      return internal::GenerateEsEn(rng);
    case Task::EnFr:
      break;
  }
  return internal::GenerateEnFr(rng);
}

SentencePair ProbePair(Task task) {
  switch (task) {
    case Task::Dates:
      return MakeDate(0, 3, 3, 1999);
    case Task::EsEn:
      return FindFigure("es3")->gold;
    case Task::EnFr:
      break;
  }
  return internal::EnFrProbe();
}

Status GenerateCorpus(Task task, uint64_t seed, int n_train, int n_heldout, Corpus* out) {
  if (n_train < 0 || n_heldout < 0 || n_train + n_heldout > 2000000)
    return Status::Error("GenerateCorpus: sizes must be in [0, 2000000]");
  Corpus c;
  c.task = task;
  c.seed = seed;
  BuildVocabs(task, &c.source_vocab, &c.target_vocab);
  Rng rng(seed);
  std::unordered_set<std::string> seen;
  // The held-out set is drawn first so it does not depend on n_train; the probe never trains,
  // and neither do the figure sentences and their close variants.
  seen.insert(Join(ProbePair(task).source));
  int attempts = 0;
  const int max_attempts = 50 * (n_train + n_heldout) + 1000;
  for (std::vector<SentencePair>* set : {&c.heldout, &c.train}) {
    const int want = set == &c.heldout ? n_heldout : n_train;
    while (static_cast<int>(set->size()) < want) {
      if (++attempts > max_attempts) return Status::Error("GenerateCorpus: grammar too small for the requested sizes");
      SentencePair p = GeneratePair(task, &rng);
      if (!seen.insert(Join(p.source)).second) continue;
      if (task != Task::Dates && IsFigureVariant(task, p.source)) continue;
      set->push_back(std::move(p));
    }
  }
  *out = std::move(c);
  return Status::Ok();
}

}  // namespace seq2seq
}  // namespace attnviz
