#include "app/token_filter.h"

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

bool IsPunctuationToken(const std::string& t) {
  std::string s = t;
  for (const char* marker : {"\xc2\xb7", "##", "\xc4\xa0", "\xe2\x96\x81"})  // ·, ##, Ġ, ▁ prefixes
    if (s.compare(0, std::strlen(marker), marker) == 0) s = s.substr(std::strlen(marker));
  if (s.empty()) return false;
  for (unsigned char c : s)
    if (c >= 0x80 || !std::ispunct(c)) return false;  // ASCII punctuation only: «» etc. stay
  return true;
}

namespace {

std::vector<int> Kept(const TokenList& tokens, const TokenFilter& f, const std::vector<std::string>& specials) {
  std::vector<int> kept;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const std::string& t = tokens[i];
    const bool hide = (f.special && IsSpecialToken(t, specials)) || (f.punctuation && IsPunctuationToken(t)) ||
                      std::find(f.tokens.begin(), f.tokens.end(), t) != f.tokens.end();
    if (!hide) kept.push_back((int)i);
  }
  return kept;
}

std::vector<std::string> Pick(const TokenList& tokens, const std::vector<int>& kept) {
  std::vector<std::string> out;
  out.reserve(kept.size());
  for (int i : kept) out.push_back(tokens[(size_t)i]);
  return out;
}

}  // namespace

Status ApplyTokenFilter(Example* ex, const TokenFilter& filter) {
  if (ex->original_maps.empty()) {
    if (!filter.Active()) return Status::Ok();
    ex->original_maps = ex->maps;  // the first filter keeps the originals
  }
  if (!filter.Active()) {
    ex->maps = ex->original_maps;
    for (AttentionMap& m : ex->maps) m.Touch();
    return Status::Ok();
  }
  std::vector<AttentionMap> out;
  out.reserve(ex->original_maps.size());
  for (const AttentionMap& src : ex->original_maps) {
    const std::vector<int> rows = Kept(src.target_tokens, filter, ex->special_tokens);
    const std::vector<int> cols = Kept(src.source_tokens, filter, ex->special_tokens);
    if (rows.empty() || cols.empty()) return Status::Error("that would hide every query or every key token");
    AttentionMap m;
    m.name = src.name;
    m.target_tokens = Pick(src.target_tokens, rows);
    m.source_tokens = Pick(src.source_tokens, cols);
    m.weights.resize((Eigen::Index)rows.size(), (Eigen::Index)cols.size());
    for (size_t r = 0; r < rows.size(); ++r) {
      double sum = 0;
      for (size_t c = 0; c < cols.size(); ++c)
        sum += m.weights((Eigen::Index)r, (Eigen::Index)c) = src.weights(rows[r], cols[c]);
      if (filter.renormalize && sum > 0) m.weights.row((Eigen::Index)r) /= (float)sum;
    }
    m.Touch();  // never a version the textures saw
    out.push_back(std::move(m));
  }
  ex->maps = std::move(out);
  return Status::Ok();
}

}  // namespace attnviz
