// attnviz app: hiding tokens from an example's maps ([CLS], [SEP], <s>, punctuation, any token),
// optionally renormalising each row over the keys that are left, as BertViz users expect.
//
// The example keeps its original maps; the filtered ones replace `maps`, so every view, the grid's
// statistics, describe() and the exports show the same thing.
#pragma once
#include <string>
#include <vector>

#include "app/examples.h"
#include "core/status.h"

namespace attnviz {

struct TokenFilter {
  bool special = false;             // hide special tokens ([CLS], [SEP], <s>, </s>, <pad>, the file's own)
  bool punctuation = false;         // hide tokens made only of punctuation
  std::vector<std::string> tokens;  // hide these exact tokens too
  bool renormalize = false;         // divide each row by the sum of what is left
  bool Active() const { return special || punctuation || !tokens.empty() || renormalize; }
};

bool IsSpecialToken(const std::string& t, const std::vector<std::string>& file_specials);  // [CLS], </s>, ...
bool IsPunctuationToken(const std::string& t);  // ".", ",", "·,", "##." ... (markers ignored)

// Rebuilds ex->maps from the original maps under filter (restores them when it is not active).
// Fails, leaving the maps as they were, when the filter would hide every row or every column.
Status ApplyTokenFilter(Example* ex, const TokenFilter& filter);

}  // namespace attnviz
