// Fuzz target: .npz and its zip reader (io/npz.h, io/zip.h); listing from a source (ZipListSource) must
// give what listing in memory gives. Every listed member is extracted;
// an archive that parses must write and parse again to the same arrays. CRCs are not checked
// here (ZipReadOptions::verify_crc), or mutated members would never reach the .npy parser.
// The same bytes opened as the lazy reader opens an .npz too big to read whole (io/lazy_npz.cpp):
// listed in place, its stored attention member read like a .npy (fuzz_lazy.h).
#include <memory>

#include "fuzz_common.h"
#include "fuzz_lazy.h"
#include "io/npz.h"
#include "io/zip.h"

namespace {

void FuzzLazyNpz(const uint8_t* data, size_t size) {
  if (!attnviz::LooksLikeZip(data, size)) return;
  attnviz::MemorySource source(data, size);
  std::vector<uint8_t> prefix;
  if (!attnviz::ReadLazyNpzPrefix(&source, &prefix)) return;
  ATTNVIZ_FUZZ_CHECK(attnviz::LooksLikeLazyNpz(prefix.data(), prefix.size()));
  attnviz::LazyAttentionFile f;
  if (!f.Open(std::unique_ptr<attnviz::ByteSource>(new attnviz::MemorySource(data, size)), prefix.data(),
              prefix.size()))
    return;
  CheckLazyArray(&f, size);
  CheckPooledHead(&f);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzLazyNpz(data, size);
  attnviz::ZipReadOptions no_crc;
  no_crc.verify_crc = false;
  std::vector<attnviz::ZipEntry> entries, listed;
  const attnviz::Status in_memory = attnviz::ZipList(data, size, &entries, no_crc);
  attnviz::MemorySource whole(data, size);
  const attnviz::Status from_source = attnviz::ZipListSource(&whole, &listed, no_crc);  // a range at a time
  ATTNVIZ_FUZZ_CHECK(in_memory.ok == from_source.ok && in_memory.message == from_source.message);
  ATTNVIZ_FUZZ_CHECK(entries.size() == listed.size());
  for (size_t i = 0; i < entries.size(); ++i)
    ATTNVIZ_FUZZ_CHECK(entries[i].name == listed[i].name && entries[i].data_offset == listed[i].data_offset);
  if (in_memory) {
    std::vector<uint8_t> out;
    for (const attnviz::ZipEntry& e : entries) {
      if (attnviz::ZipExtract(data, size, e, &out, no_crc)) ATTNVIZ_FUZZ_CHECK(out.size() == e.uncompressed_size);
    }
  }
  attnviz::NpzFile z;
  if (!attnviz::ParseNpz(data, size, &z, no_crc)) return 0;
  ATTNVIZ_FUZZ_CHECK(z.names.size() == z.arrays.size());
  for (const std::string& n : z.names)
    if (n.size() > 60000) return 0;  // "<name>.npy" must fit a zip name field to be written back
  std::vector<uint8_t> written;
  attnviz::NpzWriteOptions o;
  o.compressed = size % 2 == 0;
  ATTNVIZ_FUZZ_CHECK(attnviz::WriteNpz(z, o, &written).ok);
  attnviz::NpzFile back;
  ATTNVIZ_FUZZ_CHECK(attnviz::ParseNpz(written.data(), written.size(), &back).ok);
  ATTNVIZ_FUZZ_CHECK(back.names == z.names);
  for (size_t i = 0; i < z.arrays.size(); ++i) ATTNVIZ_FUZZ_CHECK(back.arrays[i].data == z.arrays[i].data);
  return 0;
}
