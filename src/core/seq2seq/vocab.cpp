// attnviz seq2seq: vocabularies, tokenization and suggestions (see vocab.h).
#include "core/seq2seq/vocab.h"

#include <algorithm>
#include <cstring>

namespace attnviz {
namespace seq2seq {

namespace {
const char* const kSpecialNames[kNumSpecial] = {"<pad>", "<unk>", "<s>", "</s>"};

// Splits UTF-8 into code points (invalid bytes become single units, never read past the end).
std::vector<uint32_t> CodePoints(const std::string& s) {
  std::vector<uint32_t> out;
  size_t i = 0;
  while (i < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    int len = 1;
    uint32_t cp = c;
    if (c >= 0xF0)
      len = 4, cp = c & 0x07;
    else if (c >= 0xE0)
      len = 3, cp = c & 0x0F;
    else if (c >= 0xC0)
      len = 2, cp = c & 0x1F;
    if (i + len > s.size()) len = 1, cp = c;
    for (int k = 1; k < len; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    out.push_back(cp);
    i += len;
  }
  return out;
}
// True if the letters at s[i...] end an English contraction ('s, 't, 're, 've, 'll, 'd, 'm) rather
// than start the word after a French elision (l'école, qu'il, n'a).
bool EnglishContraction(const std::string& s, size_t i) {
  size_t j = i;
  while (j < s.size() && s[j] >= 'a' && s[j] <= 'z') ++j;
  const bool word_ends = j == s.size() || !(static_cast<unsigned char>(s[j]) >= 0x80);
  const std::string suffix = s.substr(i, j - i);
  return word_ends && (suffix == "s" || suffix == "t" || suffix == "re" || suffix == "ve" || suffix == "ll" ||
                       suffix == "d" || suffix == "m");
}

}  // namespace

Vocab::Vocab() {
  for (const char* name : kSpecialNames) Add(name);
}

int Vocab::Add(const std::string& token) {
  auto it = ids_.find(token);
  if (it != ids_.end()) return it->second;
  const int id = Size();
  tokens_.push_back(token);
  ids_.emplace(token, id);
  return id;
}

int Vocab::Id(const std::string& token) const {
  auto it = ids_.find(token);
  return it == ids_.end() ? kUnk : it->second;
}

bool Vocab::Contains(const std::string& token) const {
  return ids_.count(token) != 0;
}

const std::string& Vocab::Token(int id) const {
  return id >= 0 && id < Size() ? tokens_[id] : tokens_[kUnk];
}

std::vector<int> Vocab::Encode(const std::vector<std::string>& words) const {
  std::vector<int> ids;
  ids.reserve(words.size());
  for (const std::string& w : words) ids.push_back(Id(w));
  return ids;
}

std::vector<std::string> Vocab::Decode(const std::vector<int>& ids) const {
  std::vector<std::string> out;
  for (int id : ids) {
    if (id == kEos) break;
    if (id == kPad || id == kBos) continue;
    out.push_back(Token(id));
  }
  return out;
}

std::vector<int> Vocab::UnknownPositions(const std::vector<std::string>& words) const {
  std::vector<int> out;
  for (size_t i = 0; i < words.size(); ++i)
    if (Id(words[i]) < kNumSpecial) out.push_back(static_cast<int>(i));
  return out;
}

std::vector<Suggestion> Vocab::Suggest(const std::string& word, int max_results, int max_distance) const {
  std::vector<Suggestion> all;
  for (int id = kNumSpecial; id < Size(); ++id) {
    const int d = EditDistance(word, tokens_[id]);
    if (d <= max_distance) all.push_back({tokens_[id], d});
  }
  std::stable_sort(all.begin(), all.end(),
                   [](const Suggestion& a, const Suggestion& b) { return a.distance < b.distance; });
  if (static_cast<int>(all.size()) > max_results) all.resize(std::max(0, max_results));
  return all;
}

std::vector<std::string> Tokenize(const std::string& sentence) {
  // pass 1: lowercase (ASCII, and Latin-1 capitals U+00C0..U+00DE encoded as C3 80..C3 9E)
  std::string s = sentence;
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 'A' && c <= 'Z') s[i] = static_cast<char>(c - 'A' + 'a');
    if (c == 0xC3 && i + 1 < s.size()) {
      unsigned char d = static_cast<unsigned char>(s[i + 1]);
      if (d >= 0x80 && d <= 0x9E && d != 0x97) s[i + 1] = static_cast<char>(d + 0x20);
      ++i;
    }
  }
  // pass 2: split on whitespace and punctuation; keep an elided article/pronoun attached to its apostrophe
  std::vector<std::string> out;
  std::string cur;
  auto flush = [&]() {
    if (!cur.empty()) out.push_back(cur);
    cur.clear();
  };
  auto starts = [&](size_t i, const char* seq) { return s.compare(i, std::strlen(seq), seq) == 0; };
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      flush();
    } else if (c == ',' || c == '.' || c == ';' || c == ':' || c == '!' || c == '?' || c == '/' || c == '"') {
      flush();
      out.push_back(std::string(1, c));
    } else if (starts(i, "\xe2\x80\x9c") || starts(i, "\xe2\x80\x9d")) {  // curly double quotes -> "
      flush();
      out.push_back("\"");
      i += 2;
    } else if (starts(i, "\xc2\xbf") || starts(i, "\xc2\xa1") || starts(i, "\xc2\xab") ||
               starts(i, "\xc2\xbb")) {  // inverted ? and !, guillemets
      flush();
      out.push_back(s.substr(i, 2));
      i += 1;
    } else if (c == '\'' || starts(i, "\xe2\x80\x99")) {  // ' or the typographic apostrophe
      if (c != '\'') i += 2;
      cur.push_back('\'');
      if (!EnglishContraction(s, i + 1)) flush();  // "l'" "école", but "it's", "let's", "can't"
    } else {
      cur.push_back(c);
    }
  }
  flush();
  return out;
}

std::string Join(const std::vector<std::string>& tokens) {
  std::string out;
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (i) out.push_back(' ');
    out += tokens[i];
  }
  return out;
}

int EditDistance(const std::string& a, const std::string& b) {
  const std::vector<uint32_t> x = CodePoints(a), y = CodePoints(b);
  std::vector<int> prev(y.size() + 1), cur(y.size() + 1);
  for (size_t j = 0; j <= y.size(); ++j) prev[j] = static_cast<int>(j);
  for (size_t i = 1; i <= x.size(); ++i) {
    cur[0] = static_cast<int>(i);
    for (size_t j = 1; j <= y.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x[i - 1] == y[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[y.size()];
}

}  // namespace seq2seq
}  // namespace attnviz
