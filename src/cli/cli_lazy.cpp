#include "cli/cli_lazy.h"

namespace attnviz {

Status LazyInput::Open(std::unique_ptr<ByteSource> source) {
  std::vector<uint8_t> prefix;
  Status st = ReadLazyPrefix(source.get(), &prefix);
  if (!st || !(st = file.Open(std::move(source), prefix.data(), prefix.size()))) return st;
  const LazyAttentionIndex& ix = file.index();
  shape.version = 2;
  shape.tokenizer = ix.tokenizer;
  shape.meta = ix.meta;
  shape.warnings = ix.warnings;
  for (const LazySet& ls : ix.sets) {
    AttentionSet set;
    set.name = ls.name;
    set.kind = ls.kind;
    set.data.target_tokens = ls.query_tokens;
    set.data.source_tokens = ls.key_tokens;
    set.data.self_attention = ls.self_attention;
    for (const LazyLayer& ll : ls.layers) {
      AttentionFile::Layer layer{ll.name, {}};
      for (int h = 0; h < ll.heads; ++h)
        layer.heads.push_back(
            {h < (int)ls.head_names.size() ? ls.head_names[(size_t)h] : "head " + std::to_string(h), {}});
      set.data.layers.push_back(std::move(layer));
    }
    shape.sets.push_back(std::move(set));
  }
  return Status::Ok();
}

Status LazyInput::Head(int s, int l, int h, MatrixRM* weights, std::vector<std::string>* warnings) {
  LazyRequest r;
  r.set = s, r.layer = l, r.head = h, r.row0 = 0, r.row1 = file.index().sets[(size_t)s].n_q;
  file.Submit(r);
  LazyResult res;
  while (!file.PopResult(&res)) file.Pump(1000);
  if (!res.status) return res.status;
  if (res.fixed)
    warnings->push_back("layer " + std::to_string(l) + " head " + std::to_string(h) + ": " + std::to_string(res.fixed) +
                        " NaN, infinite or negative weights written as 0");
  *weights = std::move(res.weights);
  return Status::Ok();
}

}  // namespace attnviz
