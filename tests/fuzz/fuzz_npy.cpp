// Fuzz target: .npy (io/npy.h). A file that parses must write and parse again to the same array.
// The same bytes opened as the lazy reader opens a .npy too big to read whole (io/lazy_attention.h):
// when its index reads, the array lies within the file and the first rows of every layer's first
// head come back with the shape it promised.
#include <memory>

#include "fuzz_common.h"
#include "fuzz_lazy.h"
#include "io/lazy_attention.h"
#include "io/npy.h"

namespace {

void FuzzLazy(const uint8_t* data, size_t size) {
  attnviz::LazyAttentionFile f;
  if (!attnviz::LooksLikeNpy(data, size)) return;
  if (!f.Open(std::unique_ptr<attnviz::ByteSource>(new attnviz::MemorySource(data, size)), data, size)) return;
  CheckLazyArray(&f, size);
  CheckPooledHead(&f);
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
