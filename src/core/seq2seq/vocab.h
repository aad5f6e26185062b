// attnviz seq2seq: vocabularies, tokenization and unknown-word suggestions.
//
// Index of this header
//   - Special tokens     ids 0..3 in every vocabulary
//   - Vocab              token <-> id, unknown detection, edit-distance suggestions
//   - Tokenize()         lowercase + split a user sentence the way the corpus is tokenized
//   - EditDistance()     Levenshtein distance over UTF-8 code points
#pragma once
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace attnviz {
namespace seq2seq {

// ---------------------------------------------------------------------------
// Special tokens (the same ids in every vocabulary)
// ---------------------------------------------------------------------------
enum SpecialToken : int {
  kPad = 0,  // "<pad>": padding in batches, never predicted
  kUnk = 1,  // "<unk>": a word the vocabulary does not know
  kBos = 2,  // "<s>": first decoder input
  kEos = 3,  // "</s>": end of a target sentence
  kNumSpecial = 4,
};

// ---------------------------------------------------------------------------
// Vocab
// ---------------------------------------------------------------------------
struct Suggestion {
  std::string token;  // a vocabulary word
  int distance = 0;   // edit distance (code points) to the queried word
};

class Vocab {
 public:
  Vocab();                                                               // holds only the 4 special tokens
  int Add(const std::string& token);                                     // id of token, adding it if new
  int Id(const std::string& token) const;                                // id, or kUnk if unknown
  bool Contains(const std::string& token) const;                         // true if known (special tokens included)
  const std::string& Token(int id) const;                                // token of id ("<unk>" if out of range)
  int Size() const { return static_cast<int>(tokens_.size()); }          // number of tokens, specials included
  const std::vector<std::string>& Tokens() const { return tokens_; }     // all tokens, by id
  std::vector<int> Encode(const std::vector<std::string>& words) const;  // ids (kUnk for unknown words)
  std::vector<std::string> Decode(const std::vector<int>& ids) const;    // tokens, stopping at kEos, skipping kPad/kBos
  std::vector<int> UnknownPositions(const std::vector<std::string>& words) const;  // indices of unknown words
  std::vector<Suggestion> Suggest(const std::string& word, int max_results = 3,
                                  int max_distance = 3) const;  // closest known words, nearest first (ties: by id)

 private:
  std::vector<std::string> tokens_;
  std::unordered_map<std::string, int> ids_;
};

// ---------------------------------------------------------------------------
// Tokenization and distance
// ---------------------------------------------------------------------------
// Lowercases ASCII and the common Latin-1 capitals (É -> é ...), splits on spaces and
// detaches , . ; : ! ? / " ¿ ¡ « » (curly quotes become ") and a French elision
// ("l'école" and "l’école" -> "l'" "école"), but keeps English contractions ("it's", "can't").
std::vector<std::string> Tokenize(const std::string& sentence);
std::string Join(const std::vector<std::string>& tokens);      // tokens separated by single spaces
int EditDistance(const std::string& a, const std::string& b);  // Levenshtein over UTF-8 code points

}  // namespace seq2seq
}  // namespace attnviz
