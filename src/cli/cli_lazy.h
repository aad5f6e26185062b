// attnviz-cli: a file read lazily (safetensors, a .npy too big to read whole: io/lazy_attention.h)
// for the commands that need some of its heads (convert, render): its shape as a document, and a
// head on request.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "io/attention_sets.h"
#include "io/byte_source.h"
#include "io/lazy_attention.h"

namespace attnviz {

struct LazyInput {
  LazyAttentionFile file;
  AttentionDocument shape;  // tokens, layer and head names; heads without weights

  Status Open(std::unique_ptr<ByteSource> source);
  // Head h of layer l of set s (warnings about weights written as 0 go to *warnings).
  Status Head(int s, int l, int h, MatrixRM* weights, std::vector<std::string>* warnings);
};

}  // namespace attnviz
