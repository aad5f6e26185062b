// attnviz seq2seq: the English -> French grammar as derivations (internal; see corpus.h).
//
// A Sentence is every choice the sampler makes; Realize() turns it into tokens and gold links,
// Valid() states the grammar's constraints. Sample() draws each choice from a distribution that
// gives every value of its range a positive probability and rejects invalid derivations, so
// every valid derivation has a positive probability: the grammar generates exactly the valid
// derivations. The figure sentences (figures.cpp) are derivations written by hand.
//
//   Sentence := BareNp | [Frame] Clause ["."] | '"' Clause ',' '"' Np SpeechVerb ["."]
//   Frame    := Impersonal "that" ("it should be noted that") | Np ReportingVerb "that"
//   Clause   := Np Verb [Np] | Np can/will V [Np] | Np V-ed Np [Time] | Np was V-ed [Time]
//             | Np is Adj | Np is the least/most Adj of Ns         (each with "not"; some with "no longer")
//   Np       := Core [Prep Core]           Core := [det] [pre-adj] [adj...] noun | country | this
#pragma once
#include <string>
#include <vector>

#include "core/seq2seq/grammar_internal.h"

namespace attnviz {
namespace seq2seq {
namespace en_fr {

enum class NounKind { Common, Country, Abstract, This };
// Bare: plural objects ("weapons" -> "des armes") and abstract nouns ("destruction" -> "la destruction").
enum class Det { The, A, Possessive, Bare };

struct NpCore {
  NounKind kind = NounKind::Common;
  int noun = 0;                 // index into the list of its kind (kNouns, kCountries, kAbstractNouns)
  bool plural = false;          // common nouns only
  Det det = Det::The;           // common and abstract nouns
  int possessive = 0;           // Det::Possessive: index into kPossessives
  int pre_adjective = -1;       // index into kPreAdjectives ("new" -> "nouveau", before the noun); -1: none
  std::vector<int> adjectives;  // indices into kAdjectives (after the noun in French, reversed), English order
};

struct Np {
  NpCore head;
  int prep = -1;  // -1: none; else index into kPrepositions (0 is "of")
  NpCore complement;
};

enum class ClauseKind { Present, Modal, Future, PastActive, Passive, Copula, Superlative };
enum class Polarity { Positive, Not, NoLonger };

struct Clause {
  ClauseKind kind = ClauseKind::Present;
  Np subject;
  Polarity polarity = Polarity::Positive;
  int verb = 0;       // kVerbs (Present, Modal, Future) or kPastVerbs (PastActive, Passive)
  Np object;          // transitive verbs (every past verb is transitive)
  int adjective = 0;  // Copula, Superlative: index into kAdjectives
  bool most = false;  // Superlative: "most" (le plus) or "least" (le moins)
  int of_noun = 0;    // Superlative: "of environments" -> "de l' environnement" (kNouns)
  int month = -1;     // PastActive, Passive: "in [month] year"; -1: no month
  int year = -1;      // -1: no time phrase; else an index into the years (kFirstYear + year)
};

enum class Frame { None, BareNp, Impersonal, Reporting, Quote };

struct Sentence {
  Frame frame = Frame::None;
  int impersonal = 0;      // Impersonal: index into kImpersonalFrames
  Np reporter;             // Reporting: "destruction of the equipment" means that ...
  int reporting_verb = 0;  // Reporting: index into kReportingVerbs
  Clause clause;           // every frame but BareNp
  Np bare;                 // BareNp
  int speech_verb = 0;     // Quote: index into kSpeechVerbs ("said" -> "a dit")
  Np speaker;              // Quote: "the man" said
  bool period = false;     // a final "." on both sides (not after a bare noun phrase)
};

Sentence Sample(Rng* rng);
bool Valid(const Sentence& s);
SentencePair Realize(const Sentence& s);

// Lexicon lookups by English word, for derivations written by hand; -1 if absent.
int NounIndex(const std::string& en_singular);
int CountryIndex(const std::string& en);
int AbstractIndex(const std::string& en);
int AdjectiveIndex(const std::string& en);
int PreAdjectiveIndex(const std::string& en);
int PossessiveIndex(const std::string& en);
int PrepositionIndex(const std::string& en);
int VerbIndex(const std::string& en_base);
int PastVerbIndex(const std::string& en_base);
int ImpersonalIndex(const std::string& en);  // e.g. "it should be noted that"
int ReportingVerbIndex(const std::string& en_singular);
int SpeechVerbIndex(const std::string& en_past);
int MonthIndex(const std::string& en);
int YearIndex(int year);

}  // namespace en_fr
}  // namespace seq2seq
}  // namespace attnviz
