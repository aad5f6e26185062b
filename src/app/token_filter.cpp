#include "app/token_filter.h"

namespace attnviz {

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
    const std::vector<int> rows = KeptTokens(src.target_tokens.vec(), filter, ex->special_tokens);
    const std::vector<int> cols = KeptTokens(src.source_tokens.vec(), filter, ex->special_tokens);
    if (rows.empty() || cols.empty()) return Status::Error("that would hide every query or every key token");
    AttentionMap m;
    m.name = src.name;
    m.target_tokens = PickTokens(src.target_tokens.vec(), rows);
    m.source_tokens = PickTokens(src.source_tokens.vec(), cols);
    SelectRowsCols(src.weights, rows, cols, filter.renormalize, &m.weights);
    m.Touch();  // never a version the textures saw
    out.push_back(std::move(m));
  }
  ex->maps = std::move(out);
  return Status::Ok();
}

}  // namespace attnviz
