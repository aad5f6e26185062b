// Fuzz target: .npy (io/npy.h). A file that parses must write and parse again to the same array.
// The same bytes opened as the lazy reader opens a .npy too big to read whole (io/lazy_attention.h):
// when its index reads, the array lies within the file and the first rows of every layer's first
// head come back with the shape it promised.
#include <memory>

#include "fuzz_common.h"
#include "io/lazy_attention.h"
#include "io/npy.h"

namespace {

void FuzzLazy(const uint8_t* data, size_t size) {
  attnviz::LazyAttentionFile f;
  if (!attnviz::LooksLikeNpy(data, size)) return;
  if (!f.Open(std::unique_ptr<attnviz::ByteSource>(new attnviz::MemorySource(data, size)), data, size)) return;
  const attnviz::LazyAttentionIndex& ix = f.index();
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
    f.Submit(r);
  }
  for (int i = 0; i < 1000 && f.Pending(); ++i) f.Pump(10);
  attnviz::LazyResult res;
  while (f.PopResult(&res)) {
    ATTNVIZ_FUZZ_CHECK(res.status.ok);
    ATTNVIZ_FUZZ_CHECK(res.weights.rows() == res.request.row1 && res.weights.cols() == set.n_k);
    for (Eigen::Index i = 0; i < res.weights.size(); ++i) ATTNVIZ_FUZZ_CHECK(res.weights.data()[i] >= 0.0f);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzLazy(data, size);
  attnviz::NdArray a;
  if (!attnviz::ParseNpy(data, size, &a)) return 0;
  ATTNVIZ_FUZZ_CHECK((int64_t)a.data.size() == a.Numel() * a.itemsize);
  std::vector<std::string> strings;
  std::vector<float> floats;
  if (a.dtype == attnviz::DType::Unicode || a.dtype == attnviz::DType::Bytes)
    (void)attnviz::ToStrings(a, &strings);
  else
    (void)attnviz::ToFloatVector(a, &floats);
  (void)attnviz::CountNonFinite(a);
  std::vector<uint8_t> written;
  ATTNVIZ_FUZZ_CHECK(attnviz::WriteNpy(a, &written).ok);
  attnviz::NdArray b;
  ATTNVIZ_FUZZ_CHECK(attnviz::ParseNpy(written.data(), written.size(), &b).ok);
  ATTNVIZ_FUZZ_CHECK(a.shape == b.shape && a.dtype == b.dtype && a.data == b.data);
  return 0;
}
