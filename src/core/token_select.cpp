#include "core/token_select.h"

#include <algorithm>
#include <cctype>
#include <cstring>

namespace attnviz {

bool IsSpecialToken(const std::string& t, const std::vector<std::string>& file_specials) {
  static const char* const kCommon[] = {"[CLS]", "[SEP]", "[PAD]",  "[MASK]",        "[UNK]", "<s>",  "</s>",
                                        "<pad>", "<unk>", "<mask>", "<|endoftext|>", "<eos>", "<bos>"};
  for (const char* k : kCommon)
    if (t == k) return true;
  return std::find(file_specials.begin(), file_specials.end(), t) != file_specials.end();
}

std::string BareToken(const std::string& t) {
  for (const char* marker : {"\xc2\xb7", "##", "\xc4\xa0", "\xe2\x96\x81"})  // ·, ##, Ġ, ▁ prefixes
    if (t.size() > std::strlen(marker) && t.compare(0, std::strlen(marker), marker) == 0)
      return t.substr(std::strlen(marker));
  return t;
}

bool TokenMatches(const std::string& token, const std::string& typed) {
  return token == typed || BareToken(token) == typed;
}

bool IsPunctuationToken(const std::string& t) {
  const std::string s = BareToken(t);
  if (s.empty()) return false;
  for (unsigned char c : s)
    if (c >= 0x80 || !std::ispunct(c)) return false;  // ASCII punctuation only: «» etc. stay
  return true;
}

std::vector<int> KeptTokens(const std::vector<std::string>& tokens, const TokenHide& hide,
                            const std::vector<std::string>& file_specials) {
  std::vector<int> kept;
  kept.reserve(tokens.size());
  for (size_t i = 0; i < tokens.size(); ++i) {
    const std::string& t = tokens[i];
    const bool hidden =
        (hide.special && IsSpecialToken(t, file_specials)) || (hide.punctuation && IsPunctuationToken(t)) ||
        std::any_of(hide.tokens.begin(), hide.tokens.end(), [&](const std::string& h) { return TokenMatches(t, h); });
    if (!hidden) kept.push_back((int)i);
  }
  return kept;
}

std::vector<std::string> PickTokens(const std::vector<std::string>& tokens, const std::vector<int>& kept) {
  std::vector<std::string> out;
  out.reserve(kept.size());
  for (int i : kept) out.push_back(tokens[(size_t)i]);
  return out;
}

void SelectRowsCols(const MatrixRM& w, const std::vector<int>& rows, const std::vector<int>& cols, bool renormalize,
                    MatrixRM* out) {
  out->resize((Eigen::Index)rows.size(), (Eigen::Index)cols.size());
  for (size_t r = 0; r < rows.size(); ++r) {
    const float* src = w.data() + (size_t)rows[r] * (size_t)w.cols();
    float* dst = out->data() + r * cols.size();
    double sum = 0;
    for (size_t c = 0; c < cols.size(); ++c) sum += dst[c] = src[cols[c]];
    if (renormalize && sum > 0)
      for (size_t c = 0; c < cols.size(); ++c) dst[c] /= (float)sum;
  }
}

}  // namespace attnviz
