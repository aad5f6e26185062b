// attnviz seq2seq: pieces shared by the corpus generators (corpus.cpp, grammar_en_fr.cpp,
// grammar_es_en.cpp, figures.cpp). Not part of the public API.
//
// Every generator works in two steps: sample a derivation (a plain struct of choices), then
// realize it (tokens on both sides and their gold links). The figure sentences are derivations
// written by hand and realized by the same code, so "the grammar generates them" is testable.
#pragma once
#include <string>
#include <vector>

#include "core/seq2seq/corpus.h"
#include "core/seq2seq/rng.h"
#include "core/seq2seq/vocab.h"

namespace attnviz {
namespace seq2seq {
namespace internal {

template <typename T, size_t N>
constexpr int Count(const T (&)[N]) {
  return static_cast<int>(N);
}

// A sentence under construction: tokens on both sides and the links between them.
struct Builder {
  SentencePair p;
  int Src(const std::string& w) {
    p.source.push_back(w);
    return static_cast<int>(p.source.size()) - 1;
  }
  int Tgt(const std::string& w) {
    p.target.push_back(w);
    return static_cast<int>(p.target.size()) - 1;
  }
  void Link(int t, int s, bool sure = true) {
    if (t >= 0 && s >= 0) p.links.push_back({t, s, sure});
  }
};

// French elision: a vowel or a mute h (all h-words of the lexicon are mute).
bool FrVowel(const std::string& w);
// English "an": written vowel, except the "you"-sounding eu-/uni-.
bool EnVowelSound(const std::string& w);
// French elision after the fact: "de", "que", "ne" before a vowel become "d'", "qu'", "n'".
void ElideFrench(std::vector<std::string>* tokens);

// --- en-fr (grammar_en_fr.cpp) ---
SentencePair GenerateEnFr(Rng* rng);
void BuildEnFrVocabs(Vocab* source, Vocab* target);
SentencePair EnFrProbe();

// --- es-en (grammar_es_en.cpp) ---
SentencePair GenerateEsEn(Rng* rng);
void BuildEsEnVocabs(Vocab* source, Vocab* target);
SentencePair EsEnProbe();

// --- figures (figures.cpp): the figure sentences realized by their task's grammar ---
bool RealizeFigure(const std::string& id, SentencePair* out);

}  // namespace internal
}  // namespace seq2seq
}  // namespace attnviz
