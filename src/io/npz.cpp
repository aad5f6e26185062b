#include "io/npz.h"

#include <string_view>
#include <unordered_set>

#include "io/npy.h"

namespace attnviz {

const NdArray* NpzFile::Find(const std::string& name) const {
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return &arrays[i];
  return nullptr;
}

void NpzFile::Add(const std::string& name, NdArray array) {
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) {
      arrays[i] = std::move(array);
      return;
    }
  }
  names.push_back(name);
  arrays.push_back(std::move(array));
}

Status ParseNpz(const uint8_t* data, size_t size, NpzFile* out, const ZipReadOptions& options) {
  std::vector<ZipEntry> entries;
  const Status st = ZipList(data, size, &entries, options);
  if (!st) return Status::Error("npz: " + st.message);
  return ParseNpzListed(data, size, entries, out, options);
}

Status ParseNpzListed(const uint8_t* data, size_t size, const std::vector<ZipEntry>& entries, NpzFile* out,
                      const ZipReadOptions& options) {
  Status st;
  // One budget for the whole archive: every array kept, its name and bookkeeping, plus the member
  // being parsed.
  MemoryBudget budget(options.max_total_bytes);
  NpzFile npz;
  std::unordered_set<std::string_view> seen;  // hashed (65536 long names stay linear); views into entries
  std::vector<uint8_t> bytes;
  for (const ZipEntry& e : entries) {
    if (!e.name.empty() && e.name.back() == '/') continue;  // a directory entry
    std::string_view name(e.name);
    if (name.size() > 4 && name.substr(name.size() - 4) == ".npy") name.remove_suffix(4);
    if (!seen.insert(name).second) return Status::Error("npz: duplicate array name '" + std::string(name) + "'");
    st = budget.Charge(2 * name.size() + sizeof(NdArray) + 64, "npz: member '" + e.name + "'");
    if (!st || !(st = ZipExtract(data, size, e, &bytes, options, &budget))) return Status::Error("npz: " + st.message);
    NdArray a;
    st = ParseNpy(bytes.data(), bytes.size(), &a, &budget);
    budget.Refund(e.uncompressed_size);  // the member's bytes are dropped (reused) from here on
    if (!st) return Status::Error("npz: member '" + e.name + "': " + st.message);
    npz.names.emplace_back(name);
    npz.arrays.push_back(std::move(a));
  }
  *out = std::move(npz);
  return Status::Ok();
}

Status WriteNpz(const NpzFile& npz, const NpzWriteOptions& options, std::vector<uint8_t>* out) {
  if (npz.names.size() != npz.arrays.size()) return Status::Error("npz: names and arrays differ in count");
  std::vector<std::vector<uint8_t>> blobs(npz.arrays.size());
  std::vector<ZipWriteMember> members;
  std::vector<std::string> member_names(npz.names.size());
  for (size_t i = 0; i < npz.arrays.size(); ++i) {
    Status st = WriteNpy(npz.arrays[i], &blobs[i]);
    if (!st) return Status::Error("npz: array '" + npz.names[i] + "': " + st.message);
    member_names[i] = npz.names[i] + ".npy";
  }
  for (size_t i = 0; i < blobs.size(); ++i) members.push_back({member_names[i], &blobs[i]});
  ZipWriteOptions zo;
  zo.deflate = options.compressed;
  zo.force_zip64 = options.force_zip64;
  return ZipWrite(members, zo, out);
}

}  // namespace attnviz
