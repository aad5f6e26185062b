// attnviz core: which tokens to leave out of a map ([CLS], [SEP], <s>, punctuation, any token),
// and the map without them, each row optionally renormalised over the keys that are left, as
// BertViz users expect. The app's token filter and `attnviz-cli render --hide` share it, so a
// figure drawn by the CLI hides what the viewer hides.
#pragma once
#include <string>
#include <vector>

#include "core/attention.h"

namespace attnviz {

struct TokenHide {
  bool special = false;             // hide special tokens ([CLS], [SEP], <s>, </s>, <pad>, the file's own)
  bool punctuation = false;         // hide tokens made only of punctuation
  std::vector<std::string> tokens;  // hide these tokens too (TokenMatches)
  bool Any() const { return special || punctuation || !tokens.empty(); }
};

bool IsSpecialToken(const std::string& t, const std::vector<std::string>& file_specials);  // [CLS], </s>, ...
bool IsPunctuationToken(const std::string& t);  // ".", ",", "·,", "##." ... (markers ignored)
std::string BareToken(const std::string& t);    // t without its word marker: "▁le" -> "le", "##s" -> "s"
// A token to hide, as the user typed it, matches the token itself or the token without its marker
// (the labels show "le" for "▁le").
bool TokenMatches(const std::string& token, const std::string& typed);

// The indices of the tokens that stay, in order.
std::vector<int> KeptTokens(const std::vector<std::string>& tokens, const TokenHide& hide,
                            const std::vector<std::string>& file_specials);

std::vector<std::string> PickTokens(const std::vector<std::string>& tokens, const std::vector<int>& kept);

// *out = w's rows `rows` and columns `cols`; with renormalize, each row divided by its sum (rows
// that sum to 0 stay 0). Indices must be in range.
void SelectRowsCols(const MatrixRM& w, const std::vector<int>& rows, const std::vector<int>& cols, bool renormalize,
                    MatrixRM* out);

}  // namespace attnviz
