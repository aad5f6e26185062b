// attnviz fuzz targets: the checks on a file the lazy reader opened as a plain array (a .npy, or an
// .npz's stored attention member): the array lies within the file, the tokens fit its shape, and the
// first rows of every layer's first head come back with the shape it promised, none negative. And,
// for any lazily read file, CheckPooledHead: a head pooled as it is decoded (a grid thumbnail of a
// file without overviews) is the max-pool of the same head read whole.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

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

// Head 0 of layer 0 of set 0 (when at most 2^20 weights), read whole and pooled (LazyRequest::pooled):
// both succeed or both fail, and the pooled one is MaxPoolOverview of the whole one, with its max.
inline void CheckPooledHead(attnviz::LazyAttentionFile* f) {
  if (f->index().sets.empty()) return;
  const attnviz::LazySet& set = f->index().sets[0];
  if (set.n_q * set.n_k > (int64_t(1) << 20)) return;
  attnviz::LazyRequest r;
  r.row0 = 0, r.row1 = set.n_q;
  const uint64_t whole_ticket = f->Submit(r);
  r.pooled = true;
  f->Submit(r);
  for (int i = 0; i < 1000 && f->Pending(); ++i) f->Pump(10);
  attnviz::LazyResult a, b, res;
  while (f->PopResult(&res)) (res.ticket == whole_ticket ? a : b) = std::move(res);
  ATTNVIZ_FUZZ_CHECK(a.status.ok == b.status.ok);
  if (!a.status.ok) return;
  const int R = attnviz::OverviewSide(set.n_q), C = attnviz::OverviewSide(set.n_k);
  ATTNVIZ_FUZZ_CHECK(b.weights.rows() == R && b.weights.cols() == C && a.max == b.max && a.fixed == b.fixed);
  std::vector<float> want((size_t)R * C);
  attnviz::MaxPoolOverview(a.weights.data(), set.n_q, set.n_k, R, C, want.data());
  for (size_t i = 0; i < want.size(); ++i) ATTNVIZ_FUZZ_CHECK(b.weights.data()[i] == want[i]);
}
