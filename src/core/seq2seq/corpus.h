// attnviz seq2seq: deterministic toy corpora with gold word alignments.
//
// Index of this header
//   - Task            en-fr (a bilingual grammar), dates (human dates -> ISO), es-en (a small grammar)
//   - Link            one gold alignment link (target index, source index, sure/possible)
//   - SentencePair    tokens on both sides + gold links
//   - Corpus          train / held-out pairs and both vocabularies
//   - GenerateCorpus  seeded, platform-independent generation; the figure sentences are held out
//   - GeneratePair    one random pair (what GenerateCorpus samples)
//   - ProbePair       the fixed probe ("the european economic area")
//
// The en-fr grammar (grammar_en_fr.h) generates the four sentences of Figure 3 of Bahdanau, Cho
// and Bengio (2015) and their phenomena: determiners agreeing in gender/number and elision
// (le/la/l'/les), adjectives after the noun with multi-adjective reversal ("the european economic
// area" -> "la zone économique européenne"), adjectives before the noun ("new chemical weapons" ->
// "de nouvelles armes chimiques"), articles French inserts ("syria" -> "la syrie", "destruction" ->
// "la destruction"), contracting "of" (du / de la / de l' / des), negation ("does not see" ->
// "ne voit pas", "can no longer" -> "ne peut plus"), the passive ("was signed" -> "a été signé"),
// "that"-clauses ("it should be noted that" -> "il convient de noter que"), superlatives, and
// quotations with inversion ('" ... , " the man said' -> '" ... " , a dit l' homme').
// The es-en grammar (grammar_es_en.h) generates the examples of TensorFlow's NMT tutorial.
// The dates task maps "the 3rd of march 1999", "march 3 , 1999", "3 march 1999",
// "mar 3 1999", "3 / 3 / 1999" (day/month/year) to "1999 - 03 - 03": years are single tokens,
// so the alignment is word-level and non-monotonic (the year moves to the front).
// Gold links: "sure" links are the translation; "possible" links are defensible extras
// (du -> "the", voit -> "does"). AER uses both (Och & Ney 2003). Punctuation (IsPunctuation) is
// unaligned by design; every other target token has at least one sure link.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/seq2seq/rng.h"
#include "core/seq2seq/vocab.h"
#include "core/status.h"

namespace attnviz {
namespace seq2seq {

enum class Task : int {
  EnFr = 0,   // English -> French grammar
  Dates = 1,  // human-readable dates -> ISO "yyyy - mm - dd"
  EsEn = 2,   // Spanish -> English grammar
};
constexpr int kNumTasks = 3;
const char* TaskName(Task t);                        // "en-fr", "dates", "es-en"
bool ParseTask(const std::string& name, Task* out);  // inverse of TaskName

struct Link {
  int target = 0;    // index into SentencePair::target
  int source = 0;    // index into SentencePair::source
  bool sure = true;  // false: a "possible" link
};

struct SentencePair {
  std::vector<std::string> source;  // source tokens (no BOS/EOS)
  std::vector<std::string> target;  // target tokens (no BOS/EOS)
  std::vector<Link> links;          // gold alignment; one-to-many in both directions allowed
};

struct Corpus {
  Task task = Task::EnFr;             // which generator made it
  uint64_t seed = 0;                  // the seed it was made from
  std::vector<SentencePair> train;    // training pairs
  std::vector<SentencePair> heldout;  // held-out pairs (no source sentence also in train)
  Vocab source_vocab;                 // every source word the grammar can produce
  Vocab target_vocab;                 // every target word the grammar can produce
};

// Builds both vocabularies from the whole lexicon (independent of the sample) and
// n_train + n_heldout distinct random pairs. Same (task, seed, sizes) -> same corpus everywhere.
// Neither set contains the probe or a figure sentence or one of its close variants
// (IsFigureVariant in figures.h): the models must translate those compositionally.
Status GenerateCorpus(Task task, uint64_t seed, int n_train, int n_heldout, Corpus* out);
void BuildVocabs(Task task, Vocab* source, Vocab* target);  // the full lexicon of a task
SentencePair GeneratePair(Task task, Rng* rng);             // one random pair; advances *rng
// en-fr: "the european economic area"; dates: "the 3rd of march 1999"; es-en: "¿ todavía están en casa ?"
SentencePair ProbePair(Task task);
bool IsPunctuation(const std::string& token);  // unaligned by design: - , / . ; : ? ! ¿ ¡

}  // namespace seq2seq
}  // namespace attnviz
