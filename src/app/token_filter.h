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
#include "core/token_select.h"

namespace attnviz {

struct TokenFilter : TokenHide {  // which tokens to hide (core/token_select.h), and
  bool renormalize = false;       // divide each row by the sum of what is left
  bool Active() const { return Any() || renormalize; }
};

// Rebuilds ex->maps from the original maps under filter (restores them when it is not active).
// Fails, leaving the maps as they were, when the filter would hide every row or every column.
Status ApplyTokenFilter(Example* ex, const TokenFilter& filter);

}  // namespace attnviz
