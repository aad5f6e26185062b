#include "io/npz.h"

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
  Status st = ZipList(data, size, &entries, options);
  if (!st) return Status::Error("npz: " + st.message);
  NpzFile npz;
  std::vector<uint8_t> bytes;
  for (const ZipEntry& e : entries) {
    if (!e.name.empty() && e.name.back() == '/') continue;  // a directory entry
    st = ZipExtract(data, size, e, &bytes, options);
    if (!st) return Status::Error("npz: " + st.message);
    NdArray a;
    st = ParseNpy(bytes.data(), bytes.size(), &a);
    if (!st) return Status::Error("npz: member '" + e.name + "': " + st.message);
    std::string name = e.name;
    if (name.size() > 4 && name.compare(name.size() - 4, 4, ".npy") == 0) name.resize(name.size() - 4);
    if (npz.Find(name)) return Status::Error("npz: duplicate array name '" + name + "'");
    npz.names.push_back(name);
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
