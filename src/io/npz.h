// attnviz io: .npz archives (np.savez / np.savez_compressed): a ZIP of "<name>.npy" members.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "io/ndarray.h"
#include "io/zip.h"

namespace attnviz {

struct NpzFile {
  std::vector<std::string> names;  // array names in archive order ("weights", not "weights.npy")
  std::vector<NdArray> arrays;     // arrays[i] is called names[i]

  const NdArray* Find(const std::string& name) const;  // nullptr if absent
  void Add(const std::string& name, NdArray array);    // appends (replaces an array of the same name)
};

// Parses a whole .npz held in memory: every member must be a valid .npy. Errors name the
// member ("npz: member 'weights.npy': npy: truncated data ..."). The arrays kept plus the member
// being inflated stay within options.max_total_bytes (the memory budget).
Status ParseNpz(const uint8_t* data, size_t size, NpzFile* out, const ZipReadOptions& options = ZipReadOptions());
// The same from the members ZipList gave (a caller that looked at them first lists them once).
Status ParseNpzListed(const uint8_t* data, size_t size, const std::vector<ZipEntry>& entries, NpzFile* out,
                      const ZipReadOptions& options = ZipReadOptions());

struct NpzWriteOptions {
  bool compressed = false;  // deflate, as np.savez_compressed
  bool force_zip64 = true;  // numpy writes every member with Zip64 records; so do we by default
};
// Serializes an NpzFile (members "<name>.npy", C order, little-endian).
Status WriteNpz(const NpzFile& npz, const NpzWriteOptions& options, std::vector<uint8_t>* out);

}  // namespace attnviz
