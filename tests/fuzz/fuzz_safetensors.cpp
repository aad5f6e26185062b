// Fuzz target: the safetensors header (io/safetensors.h) and the lazily read attention file on top
// of it (io/lazy_attention.h). The whole input is the file. A header that parses must write again
// to a header that parses to the same tensors; an index that reads must serve the first rows and
// the overviews of every layer's first head from memory with the shapes it promised.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "fuzz_common.h"
#include "fuzz_lazy.h"
#include "io/lazy_attention.h"
#include "io/utf8.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  attnviz::SafetensorsHeader h;
  if (!attnviz::ParseSafetensorsHeader(data, size, size, &h)) return 0;
  uint64_t end = h.data_start;
  for (const attnviz::SafetensorsTensor& t : h.tensors) {
    ATTNVIZ_FUZZ_CHECK(t.begin == end && t.end >= t.begin && t.end <= size);
    ATTNVIZ_FUZZ_CHECK(t.end - t.begin == (uint64_t)t.Numel() * (uint64_t)attnviz::StDTypeSize(t.dtype));
    end = t.end;
  }
  ATTNVIZ_FUZZ_CHECK(end == size);
  // Written again in file order, the header parses to the same tensors.
  std::vector<attnviz::SafetensorsTensorSpec> specs;
  for (const attnviz::SafetensorsTensor& t : h.tensors) specs.push_back({t.name, t.dtype, t.shape});
  std::vector<uint8_t> again;
  std::vector<uint64_t> begins;
  uint64_t again_size = 0;
  ATTNVIZ_FUZZ_CHECK(attnviz::SafetensorsHeaderBytes(specs, h.metadata, &again, &begins, &again_size).ok);
  ATTNVIZ_FUZZ_CHECK(again_size - again.size() == size - h.data_start);
  again.resize(again_size, 0);
  attnviz::SafetensorsHeader h2;
  ATTNVIZ_FUZZ_CHECK(attnviz::ParseSafetensorsHeader(again.data(), again.size(), again.size(), &h2).ok);
  ATTNVIZ_FUZZ_CHECK(h2.tensors.size() == h.tensors.size() && h2.metadata == h.metadata);

  attnviz::LazyAttentionFile f;
  std::unique_ptr<attnviz::ByteSource> src(new attnviz::MemorySource(data, size));
  if (!f.Open(std::move(src), data, size)) return 0;
  for (const std::string& w : f.index().warnings) (void)attnviz::PrintableText(w);
  int requests = 0;
  for (size_t s = 0; s < f.index().sets.size() && requests < 64; ++s) {
    const attnviz::LazySet& set = f.index().sets[s];
    ATTNVIZ_FUZZ_CHECK((int64_t)set.query_tokens.size() == set.n_q && (int64_t)set.key_tokens.size() == set.n_k);
    if (set.stats) {  // every head's stored statistics, one read
      attnviz::LazyRequest r;
      r.set = (int)s, r.stats = true;
      f.Submit(r);
      ++requests;
    }
    for (size_t l = 0; l < set.layers.size() && requests < 64; ++l, requests += 4) {
      attnviz::LazyRequest r;
      r.set = (int)s, r.layer = (int)l, r.row0 = 0, r.row1 = set.n_q < 4 ? set.n_q : 4;
      f.Submit(r);
      for (attnviz::LazyPool pool : attnviz::kLazyPoolList) {
        if (!set.Has(pool)) continue;
        r.overview = true, r.pool = pool, r.head_end = 1;
        f.Submit(r);
      }
    }
  }
  for (int i = 0; i < 1000 && f.Pending(); ++i) f.Pump(10);
  attnviz::LazyResult res;
  while (f.PopResult(&res)) {
    ATTNVIZ_FUZZ_CHECK(res.status.ok);  // everything it promised is within the file
    const attnviz::LazySet& set = f.index().sets[(size_t)res.request.set];
    if (res.request.stats) {  // as stored: any floats; a row is taken only if it can be a head's statistics
      ATTNVIZ_FUZZ_CHECK(res.weights.rows() == set.Heads() && res.weights.cols() == attnviz::kHeadStatsColumns);
      for (Eigen::Index i = 0; i < res.weights.rows(); ++i) {
        attnviz::HeadStats h;
        if (!attnviz::HeadStatsFromRow(res.weights.data() + i * attnviz::kHeadStatsColumns, set.n_q, set.n_k, &h))
          continue;
        ATTNVIZ_FUZZ_CHECK(h.rows_counted >= 0 && h.rows_counted <= set.n_q && h.max_weight >= 0.0f);
        ATTNVIZ_FUZZ_CHECK(h.dominant_offset > -set.n_k && h.dominant_offset < set.n_q);
      }
      continue;
    }
    if (res.request.overview)
      ATTNVIZ_FUZZ_CHECK(res.weights.rows() == set.PoolRows(res.request.pool) &&
                         res.weights.cols() == set.PoolCols(res.request.pool));
    else
      ATTNVIZ_FUZZ_CHECK(res.weights.rows() == res.request.row1 && res.weights.cols() == set.n_k);
    for (Eigen::Index i = 0; i < res.weights.size(); ++i) ATTNVIZ_FUZZ_CHECK(res.weights.data()[i] >= 0.0f);
  }
  CheckPooledHead(&f);
  return 0;
}
