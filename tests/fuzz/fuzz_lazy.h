// attnviz fuzz targets: the checks on a file the lazy reader opened as a plain array (a .npy, or an
// .npz's stored attention member): the array lies within the file, the tokens fit its shape, and the
// first rows of every layer's first head come back with the shape it promised, none negative.
#pragma once
#include <cstddef>
#include <cstdint>

#include "fuzz_common.h"
#include "io/lazy_attention.h"

inline void CheckLazyArray(attnviz::LazyAttentionFile* f, size_t size) {
  const attnviz::LazyAttentionIndex& ix = f->index();
  ATTNVIZ_FUZZ_CHECK(ix.npy && ix.sets.size() == 1 && ix.header.data_start <= size);
  const attnviz::LazySet& set = ix.sets[0];
  ATTNVIZ_FUZZ_CHECK((int64_t)set.query_tokens.size() == set.n_q && (int64_t)set.key_tokens.size() == set.n_k);
  const attnviz::LazyLayer& last = set.layers.back();
  const uint64_t end =
      last.offset + (uint64_t)last.heads * (uint64_t)(set.n_q * set.n_k) * (uint64_t)attnviz::StDTypeSize(last.dtype);
  ATTNVIZ_FUZZ_CHECK(end <= size);
  for (size_t l = 0; l < set.layers.size() && l < 64; ++l) {
    attnviz::LazyRequest r;
    r.layer = (int)l, r.row0 = 0, r.row1 = set.n_q < 4 ? set.n_q : 4;
    f->Submit(r);
  }
  for (int i = 0; i < 1000 && f->Pending(); ++i) f->Pump(10);
  attnviz::LazyResult res;
  while (f->PopResult(&res)) {
    ATTNVIZ_FUZZ_CHECK(res.status.ok);
    ATTNVIZ_FUZZ_CHECK(res.weights.rows() == res.request.row1 && res.weights.cols() == set.n_k);
    for (Eigen::Index i = 0; i < res.weights.size(); ++i) ATTNVIZ_FUZZ_CHECK(res.weights.data()[i] >= 0.0f);
  }
}
