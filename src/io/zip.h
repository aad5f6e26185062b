// attnviz io: the subset of ZIP that numpy's .npz uses (PKWARE APPNOTE 6.3).
//
// Reading: end of central directory (+ Zip64 locator/record), central directory entries
// with Zip64 extra fields, local headers (numpy writes every member with force_zip64, so
// local headers carry 0xFFFFFFFF sizes and a Zip64 extra), methods 0 (stored) and
// 8 (deflate, inflated by zlib), CRC-32 checked. Encryption, multi-disk archives and other
// methods are rejected with a message.
// Hostile archives (docs/SECURITY.md): every local header must agree with its central entry
// (name, method, flags, and CRC and sizes unless a data descriptor follows), members may not
// overlap each other or the central directory (one compressed body listed many times), the
// declared uncompressed sizes together must fit ZipReadOptions::max_total_bytes, and a member
// is inflated into a buffer that grows with what zlib actually produces, never pre-filled to
// the size the header declares.
// Writing: stored or deflate members, optionally Zip64 records everywhere (as numpy does).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "io/byte_source.h"
#include "io/memory_budget.h"

namespace attnviz {

struct ZipEntry {
  std::string name;                // member name, e.g. "weights.npy"
  uint16_t method = 0;             // 0 stored, 8 deflate
  uint32_t crc32 = 0;              // CRC-32 of the uncompressed bytes
  uint64_t compressed_size = 0;    // bytes stored in the archive
  uint64_t uncompressed_size = 0;  // bytes after inflation
  uint64_t data_offset = 0;        // offset of the member's (compressed) data in the archive
};

struct ZipReadOptions {
  uint64_t max_member_bytes = uint64_t(1) << 31;     // refuse members that would inflate beyond this
  uint64_t max_total_bytes = DefaultMemoryBudget();  // refuse archives whose members declare more in total
  size_t max_entries = 65536;                        // refuse archives listing more members
  bool verify_crc = true;  // false only in the fuzz targets: a fuzzer cannot get past a CRC it mutates
};

// Lists the members of a ZIP archive held in memory (validates every header it reads).
Status ZipList(const uint8_t* data, size_t size, std::vector<ZipEntry>* entries,
               const ZipReadOptions& options = ZipReadOptions());
// The same from a synchronous ByteSource (io/byte_source.h), read a range at a time: the end
// records, the central directory and each local header (at most 256 MiB in all, and the memory
// budget or 1 MiB), never the members'
// data. An archive of tens of GB is listed so (io/lazy_npz.cpp); a read error stops it as it is.
Status ZipListSource(ByteSource* source, std::vector<ZipEntry>* entries,
                     const ZipReadOptions& options = ZipReadOptions());
// Extracts one listed member (inflates, checks the size and CRC-32). The output is charged to
// *budget (when given) as it grows; on error nothing stays charged.
Status ZipExtract(const uint8_t* data, size_t size, const ZipEntry& entry, std::vector<uint8_t>* out,
                  const ZipReadOptions& options = ZipReadOptions(), MemoryBudget* budget = nullptr);

// The first bytes of a listed member: at most max_bytes (fewer if it is shorter), inflated only as
// far as they need. Lets a reader check a member's header before it inflates the whole member (a
// 1 GiB member of a shape it cannot use is refused at once). Not CRC-checked: ZipExtract is.
Status ZipPeek(const uint8_t* data, size_t size, const ZipEntry& entry, size_t max_bytes, std::vector<uint8_t>* out);

struct ZipWriteMember {
  std::string name;                  // member name
  const std::vector<uint8_t>* data;  // uncompressed bytes (not owned)
};
struct ZipWriteOptions {
  bool deflate = false;      // method 8 (np.savez_compressed) instead of 0 (np.savez)
  int level = 6;             // zlib level for deflate
  bool force_zip64 = false;  // Zip64 extras in every header + Zip64 end records
};
// Writes a complete archive into *out.
Status ZipWrite(const std::vector<ZipWriteMember>& members, const ZipWriteOptions& options, std::vector<uint8_t>* out);

}  // namespace attnviz
