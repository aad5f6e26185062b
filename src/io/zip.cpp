#include "io/zip.h"

#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <utility>

namespace attnviz {
namespace {

constexpr uint32_t kLocalSig = 0x04034b50;
constexpr uint32_t kCentralSig = 0x02014b50;
constexpr uint32_t kEndSig = 0x06054b50;
constexpr uint32_t kEnd64Sig = 0x06064b50;
constexpr uint32_t kEnd64LocatorSig = 0x07064b50;
constexpr uint32_t k32Max = 0xFFFFFFFFu;
constexpr uint16_t kZip64ExtraId = 0x0001;
constexpr uint16_t kDosDate1980 = (0 << 9) | (1 << 5) | 1;  // 1980-01-01

uint16_t Get16(const uint8_t* p) {
  return (uint16_t)(p[0] | (p[1] << 8));
}
uint32_t Get32(const uint8_t* p) {
  return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
uint64_t Get64(const uint8_t* p) {
  return (uint64_t)Get32(p) | ((uint64_t)Get32(p + 4) << 32);
}

void Put16(std::vector<uint8_t>* o, uint16_t v) {
  o->push_back(v & 0xff);
  o->push_back(v >> 8);
}
void Put32(std::vector<uint8_t>* o, uint32_t v) {
  for (int i = 0; i < 4; ++i) o->push_back((v >> (8 * i)) & 0xff);
}
void Put64(std::vector<uint8_t>* o, uint64_t v) {
  for (int i = 0; i < 8; ++i) o->push_back((v >> (8 * i)) & 0xff);
}

// Resolves 0xFFFFFFFF fields from a Zip64 extended-information extra field. The extra holds,
// in this order, only those of (uncompressed, compressed, offset) whose header value is maxed.
Status ApplyZip64Extra(const uint8_t* extra, size_t len, uint64_t* uncomp, uint64_t* comp, uint64_t* offset,
                       const std::string& where) {
  size_t p = 0;
  while (p + 4 <= len) {
    uint16_t id = Get16(extra + p), sz = Get16(extra + p + 2);
    if (p + 4 + sz > len) return Status::Error("zip: " + where + ": extra field overruns its header");
    if (id == kZip64ExtraId) {
      const uint8_t* f = extra + p + 4;
      size_t q = 0;
      uint64_t* fields[3] = {uncomp, comp, offset};
      for (uint64_t* field : fields) {
        if (!field || *field != k32Max) continue;
        if (q + 8 > sz) return Status::Error("zip: " + where + ": Zip64 extra field too short");
        *field = Get64(f + q);
        q += 8;
      }
      return Status::Ok();
    }
    p += 4 + (size_t)sz;
  }
  return Status::Ok();
}

// The bytes a listing reads: the whole archive in memory, or ranges of a ByteSource read as they are
// needed (an archive of tens of GB listed from its end records, central directory and local headers;
// what was read stays until the listing ends, so every pointer At gave stays valid).
struct ZipBytes {
  uint64_t size = 0;
  const uint8_t* data = nullptr;  // the archive in memory, or
  ByteSource* source = nullptr;   // where its ranges come from
  std::deque<std::pair<uint64_t, std::vector<uint8_t>>> read;
  uint64_t read_bytes = 0;
  static constexpr uint64_t kMaxReadBytes = uint64_t(256) << 20;  // end records, directory and headers

  // [off, off + n) (within size: the caller checked) at *p.
  Status At(uint64_t off, uint64_t n, const uint8_t** p) {
    static const uint8_t kNone = 0;
    if (data || n == 0) return *p = data ? data + off : &kNone, Status::Ok();
    for (const auto& r : read)
      if (off >= r.first && off - r.first <= r.second.size() && n <= r.second.size() - (off - r.first))
        return *p = r.second.data() + (off - r.first), Status::Ok();
    // Within the memory budget, but never below 1 MiB (what a .npy header may take too).
    const uint64_t most = std::min<uint64_t>(kMaxReadBytes, std::max<uint64_t>(DefaultMemoryBudget(), 1 << 20));
    if (n > most || read_bytes > most - n)
      return Status::Error("zip: the central directory and headers are over " + FormatByteSize(most));
    if (!TryAllocate((size_t)n)) return Status::Error("zip: out of memory for the central directory");
    read.emplace_back(off, std::vector<uint8_t>((size_t)n));
    const Status st = source->Read(off, n, read.back().second.data());
    if (!st) return read.pop_back(), st;
    read_bytes += n;
    *p = read.back().second.data();
    return Status::Ok();
  }
};

// The local header of `ent` (at `local`) must describe the same member as its central entry:
// zip parsers that trust only one of the two can be shown different files.
Status CheckLocalHeader(ZipBytes& b, uint64_t local, uint16_t central_flags, ZipEntry* ent) {
  const uint64_t size = b.size;
  const Status missing = Status::Error("zip: local header of '" + ent->name + "' missing or truncated");
  if (local > size || size - local < 30) return missing;
  const uint8_t* l = nullptr;
  Status st = b.At(local, 30, &l);
  if (!st) return st;
  if (Get32(l) != kLocalSig) return missing;
  const uint16_t lflags = Get16(l + 6);
  if (Get16(l + 8) != ent->method)
    return Status::Error("zip: local and central headers of '" + ent->name + "' disagree on the method");
  if ((lflags & 0x1) != (central_flags & 0x1))
    return Status::Error("zip: local and central headers of '" + ent->name + "' disagree on encryption");
  const uint64_t lname = Get16(l + 26), lextra = Get16(l + 28);
  if (local + 30 + lname + lextra > size) return Status::Error("zip: local header of '" + ent->name + "' truncated");
  const uint32_t lcrc = Get32(l + 14);
  uint64_t l_uncomp = Get32(l + 22), l_comp = Get32(l + 18);
  const uint8_t* v = nullptr;  // its name, then its extra field
  if (!(st = b.At(local + 30, lname + lextra, &v))) return st;
  if (lname != ent->name.size() || std::memcmp(v, ent->name.data(), (size_t)lname) != 0)
    return Status::Error("zip: local header at offset " + std::to_string(local) + " names a different member than '" +
                         ent->name + "' in the central directory");
  if (!(lflags & 0x8)) {  // without a data descriptor the local header holds the real CRC and sizes
    st = ApplyZip64Extra(v + lname, (size_t)lextra, &l_uncomp, &l_comp, nullptr, "local header of '" + ent->name + "'");
    if (!st) return st;
    if (lcrc != ent->crc32 || l_uncomp != ent->uncompressed_size || l_comp != ent->compressed_size)
      return Status::Error("zip: local and central headers of '" + ent->name + "' disagree on the CRC or sizes");
  }
  ent->data_offset = local + 30 + lname + lextra;
  if (ent->data_offset > size || ent->compressed_size > size - ent->data_offset)
    return Status::Error("zip: data of '" + ent->name + "' runs past the end of the file (truncated?)");
  return Status::Ok();
}

// Sizes a member may declare, before anything is inflated.
Status CheckDeclaredSizes(const ZipEntry& ent, const ZipReadOptions& options) {
  if (ent.method != 0 && ent.method != 8)
    return Status::Error("zip: member '" + ent.name + "' uses compression method " + std::to_string(ent.method) +
                         " (only stored and deflate are supported)");
  if (ent.uncompressed_size > options.max_member_bytes)
    return Status::Error("zip: member '" + ent.name + "' declares " + std::to_string(ent.uncompressed_size) +
                         " bytes, over the limit of " + std::to_string(options.max_member_bytes));
  // Deflate cannot expand data more than ~1032:1; a larger claim is corruption or a bomb.
  if (ent.method == 8 && ent.uncompressed_size > ent.compressed_size * 1032 + 1024)
    return Status::Error("zip: member '" + ent.name + "' claims an impossible compression ratio (" +
                         std::to_string(ent.uncompressed_size) + " from " + std::to_string(ent.compressed_size) +
                         " bytes)");
  if (ent.method == 0 && ent.compressed_size != ent.uncompressed_size)
    return Status::Error("zip: stored member '" + ent.name + "' has different compressed and uncompressed sizes");
  return Status::Ok();
}

// Every member's bytes [local header, end of data) lie before the central directory and apart
// from every other member's: one compressed body listed several times (an overlapping zip bomb)
// is refused. O(n log n).
Status CheckNoOverlap(const std::vector<ZipEntry>& entries, const std::vector<uint64_t>& local_offsets,
                      uint64_t cd_offset) {
  std::vector<size_t> order(entries.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return local_offsets[a] < local_offsets[b]; });
  for (size_t k = 0; k < order.size(); ++k) {
    const ZipEntry& e = entries[order[k]];
    const uint64_t end = e.data_offset + e.compressed_size;
    if (end > cd_offset) return Status::Error("zip: data of '" + e.name + "' overlaps the central directory");
    if (k + 1 < order.size() && end > local_offsets[order[k + 1]])
      return Status::Error("zip: members '" + e.name + "' and '" + entries[order[k + 1]].name +
                           "' overlap (the same data listed twice: a zip bomb or a corrupt directory)");
  }
  return Status::Ok();
}

}  // namespace

namespace {

// The end-of-central-directory record (after which a comment may follow), and the Zip64 end record
// a locator right before it points at: the members' count and the central directory's place.
Status FindDirectory(ZipBytes& b, uint64_t* count, uint64_t* cd_size, uint64_t* cd_offset) {
  const uint64_t size = b.size;
  if (size < 22) return Status::Error("zip: file too small to be a ZIP archive (" + std::to_string(size) + " bytes)");
  const uint64_t lowest = size > 22 + 65535 ? size - 22 - 65535 : 0;
  const uint8_t* tail = nullptr;
  Status st = b.At(lowest, size - lowest, &tail);
  if (!st) return st;
  uint64_t eocd = UINT64_MAX;
  for (uint64_t p = size - 22 + 1; p-- > lowest;) {
    if (Get32(tail + (p - lowest)) == kEndSig && p + 22 + Get16(tail + (p - lowest) + 20) <= size) {
      eocd = p;
      break;
    }
  }
  if (eocd == UINT64_MAX)
    return Status::Error("zip: no end-of-central-directory record (not a ZIP file, or truncated)");
  const uint8_t* e = tail + (eocd - lowest);
  if (Get16(e + 4) != 0 || Get16(e + 6) != 0) return Status::Error("zip: multi-disk archives are not supported");
  *count = Get16(e + 10), *cd_size = Get32(e + 12), *cd_offset = Get32(e + 16);
  const uint8_t* locator = nullptr;
  if (eocd >= 20 && !(st = b.At(eocd - 20, 20, &locator))) return st;
  if (locator && Get32(locator) == kEnd64LocatorSig) {
    const uint64_t rec = Get64(locator + 8);
    const Status missing = Status::Error("zip: Zip64 end-of-central-directory record missing or truncated");
    if (rec > size || size - rec < 56) return missing;
    const uint8_t* r = nullptr;
    if (!(st = b.At(rec, 56, &r))) return st;
    if (Get32(r) != kEnd64Sig) return missing;
    *count = Get64(r + 32);
    *cd_size = Get64(r + 40);
    *cd_offset = Get64(r + 48);
  } else if (*count == 0xFFFF || *cd_size == k32Max || *cd_offset == k32Max) {
    return Status::Error("zip: archive needs Zip64 end records but has none");
  }
  return Status::Ok();
}

Status ListZip(ZipBytes& b, std::vector<ZipEntry>* entries, const ZipReadOptions& options) {
  entries->clear();
  const uint64_t size = b.size;
  uint64_t count = 0, cd_size = 0, cd_offset = 0;
  Status st = FindDirectory(b, &count, &cd_size, &cd_offset);
  if (!st) return st;
  if (count > options.max_entries) return Status::Error("zip: too many members (" + std::to_string(count) + ")");
  if (cd_offset > size || cd_size > size - cd_offset)
    return Status::Error("zip: central directory lies outside the file (truncated?)");
  if (count > cd_size / 46)
    return Status::Error("zip: the central directory is too small for " + std::to_string(count) +
                         " members (truncated?)");
  const uint8_t* cd = nullptr;
  if (!(st = b.At(cd_offset, cd_size, &cd))) return st;

  // Central directory entries, each checked against its local header.
  std::vector<uint64_t> local_offsets;
  entries->reserve((size_t)count);
  local_offsets.reserve((size_t)count);
  uint64_t total_uncompressed = 0;
  uint64_t p = 0;
  for (uint64_t i = 0; i < count; ++i) {
    if (p + 46 > cd_size || Get32(cd + p) != kCentralSig)
      return Status::Error("zip: central directory entry " + std::to_string(i) + " is malformed or truncated");
    const uint8_t* c = cd + p;
    const uint16_t flags = Get16(c + 8);
    ZipEntry ent;
    ent.method = Get16(c + 10);
    ent.crc32 = Get32(c + 16);
    ent.compressed_size = Get32(c + 20);
    ent.uncompressed_size = Get32(c + 24);
    const uint16_t name_len = Get16(c + 28), extra_len = Get16(c + 30), comment_len = Get16(c + 32);
    uint64_t local = Get32(c + 42);
    if (p + 46 + name_len + extra_len + comment_len > cd_size)
      return Status::Error("zip: central directory entry " + std::to_string(i) + " overruns the directory");
    ent.name.assign((const char*)c + 46, name_len);
    st = ApplyZip64Extra(c + 46 + name_len, extra_len, &ent.uncompressed_size, &ent.compressed_size, &local,
                         "central directory entry " + std::to_string(i));
    if (!st) return st;
    if (flags & 0x1) return Status::Error("zip: member '" + ent.name + "' is encrypted; not supported");
    if (!(st = CheckDeclaredSizes(ent, options))) return st;
    total_uncompressed += ent.uncompressed_size;  // each <= max_member_bytes, count <= max_entries: no overflow
    if (total_uncompressed > options.max_total_bytes)
      return Status::Error("zip: the members declare more than " + std::to_string(options.max_total_bytes) +
                           " bytes uncompressed in total, over the memory budget (" +
                           FormatByteSize(options.max_total_bytes) +
                           "; raise it: --max-memory in the CLI, maxMemory when embedding)");
    if (!(st = CheckLocalHeader(b, local, flags, &ent))) return st;
    entries->push_back(std::move(ent));
    local_offsets.push_back(local);
    p += 46 + (uint64_t)name_len + extra_len + comment_len;
  }
  return CheckNoOverlap(*entries, local_offsets, cd_offset);
}

}  // namespace

Status ZipList(const uint8_t* data, size_t size, std::vector<ZipEntry>* entries, const ZipReadOptions& options) {
  ZipBytes b;
  b.data = data;
  b.size = size;
  return ListZip(b, entries, options);
}

Status ZipListSource(ByteSource* source, std::vector<ZipEntry>* entries, const ZipReadOptions& options) {
  ZipBytes b;
  b.source = source;
  b.size = source->Size();
  return ListZip(b, entries, options);
}

namespace {

// The output, grown as zlib produces it: doubling in a realloc'd buffer while below the declared
// size, then at its last step moved into *out at the declared size (one reserve, then range
// copies: the bytes so far, then zeros; libc++ copies ranges of bytes with memcpy). Grown in *out
// itself, every doubling went through std::vector's reallocation, whose fill and destroy loops the
// web build runs a byte at a time (1.6 s of a 256 MiB member's 8.8 s; docs/PERFORMANCE.md, -Os).
// Peak memory is as it was: the last step holds the buffer (< declared) and *out (declared), as the
// vector's last reallocation held its old and new storage.
class InflateOutput {
 public:
  InflateOutput(std::vector<uint8_t>* out, uint64_t declared) : out_(out), declared_(declared) {}
  ~InflateOutput() { std::free(buf_); }
  uint8_t* data() { return in_out_ ? out_->data() : buf_; }
  size_t size() const { return in_out_ ? out_->size() : size_; }
  // Grows to want bytes (<= declared), keeping what is there; false when memory runs out.
  bool Grow(uint64_t want) {
    if (want > SIZE_MAX) return false;
    if (want < declared_) {
      void* p = std::realloc(buf_, (size_t)want);
      if (!p) return false;
      buf_ = static_cast<uint8_t*>(p);
      size_ = (size_t)want;
      return true;
    }
    if (!TryAllocate((size_t)want)) return false;
    static const uint8_t kZeros[1 << 16] = {};
    out_->reserve((size_t)want);
    out_->assign(buf_, buf_ + size_);
    while (out_->size() < want)
      out_->insert(out_->end(), kZeros, kZeros + std::min<uint64_t>(sizeof kZeros, want - out_->size()));
    std::free(buf_);
    buf_ = nullptr;
    size_ = 0;
    in_out_ = true;
    return true;
  }

 private:
  std::vector<uint8_t>* out_;
  uint64_t declared_;
  uint8_t* buf_ = nullptr;
  size_t size_ = 0;
  bool in_out_ = false;
};

// Inflates entry's raw deflate stream into *out, which grows with what zlib produces (never
// pre-filled to the declared size) and never beyond it.
Status Inflate(const uint8_t* src, const ZipEntry& entry, std::vector<uint8_t>* out) {
  InflateOutput buf(out, entry.uncompressed_size);
  z_stream zs;
  std::memset(&zs, 0, sizeof(zs));
  if (inflateInit2(&zs, -MAX_WBITS) != Z_OK) return Status::Error("zip: zlib inflateInit2 failed");
  const std::string member = "zip: member '" + entry.name + "': ";
  const uint64_t declared = entry.uncompressed_size;
  uint64_t in_left = entry.compressed_size;
  zs.next_in = const_cast<Bytef*>(src);
  size_t produced = 0;
  uint8_t sink[1];  // lets zlib report a stream longer than declared
  int rc = Z_OK;
  Status error;
  while (rc == Z_OK) {
    const uInt chunk = 1u << 30;
    if (zs.avail_in == 0 && in_left) {
      zs.avail_in = in_left > chunk ? chunk : (uInt)in_left;
      in_left -= zs.avail_in;
    }
    if (produced == buf.size() && produced < declared) {  // grow: double, at least 64 KiB, at most declared
      const uint64_t want = std::min<uint64_t>(declared, std::max<uint64_t>(uint64_t(1) << 16, 2 * (uint64_t)produced));
      if (!buf.Grow(want)) {
        error = Status::Error(member + "out of memory inflating to " + std::to_string(want) + " bytes");
        break;
      }
    }
    const bool full = produced == declared;
    zs.next_out = full ? sink : buf.data() + produced;
    const size_t room = buf.size() - produced;
    zs.avail_out = full ? 1 : (room > chunk ? chunk : (uInt)room);
    const uInt avail_before = zs.avail_out;
    const uLong before_in = zs.total_in;
    rc = inflate(&zs, Z_NO_FLUSH);
    const size_t wrote = avail_before - zs.avail_out;
    if (full && wrote) {
      error = Status::Error(member + "the deflate stream inflates to more than the " + std::to_string(declared) +
                            " bytes its header declares");
      break;
    }
    if (!full) produced += wrote;
    if (rc == Z_DATA_ERROR || rc == Z_NEED_DICT || rc == Z_MEM_ERROR || rc == Z_STREAM_ERROR) {
      error = Status::Error(member + "the deflate stream is corrupt (zlib: " + (zs.msg ? zs.msg : "error") +
                            ") after " + std::to_string(zs.total_in) + " compressed bytes");
      break;
    }
    if (rc == Z_OK && zs.total_in == before_in && wrote == 0) rc = Z_BUF_ERROR;  // no progress
    if (rc == Z_BUF_ERROR) {
      error = Status::Error(member + "the deflate stream is truncated: its " + std::to_string(entry.compressed_size) +
                            " compressed bytes end before the stream does");
      break;
    }
  }
  const uint64_t consumed = zs.total_in;
  inflateEnd(&zs);
  if (!error) return error;
  if (consumed != entry.compressed_size)
    return Status::Error(member + "the deflate stream ends after " + std::to_string(consumed) +
                         " bytes, the header says " + std::to_string(entry.compressed_size));
  if (produced != declared)
    return Status::Error("zip: member '" + entry.name + "' inflated to " + std::to_string(produced) +
                         " bytes, header says " + std::to_string(declared));
  return Status::Ok();  // produced == declared: the bytes are in *out
}

}  // namespace

Status ZipPeek(const uint8_t* data, size_t size, const ZipEntry& entry, size_t max_bytes, std::vector<uint8_t>* out) {
  if (entry.data_offset > size || entry.compressed_size > size - entry.data_offset)
    return Status::Error("zip: data of '" + entry.name + "' runs past the end of the file");
  const size_t want = (size_t)std::min<uint64_t>(max_bytes, entry.uncompressed_size);
  out->assign(want, 0);
  const uint8_t* src = data + entry.data_offset;
  if (entry.method == 0) {
    std::memcpy(out->data(), src, std::min<uint64_t>(want, entry.compressed_size));
    out->resize((size_t)std::min<uint64_t>(want, entry.compressed_size));
    return Status::Ok();
  }
  z_stream zs;
  std::memset(&zs, 0, sizeof(zs));
  if (inflateInit2(&zs, -MAX_WBITS) != Z_OK) return Status::Error("zip: zlib inflateInit2 failed");
  zs.next_in = const_cast<Bytef*>(src);
  zs.avail_in = (uInt)std::min<uint64_t>(entry.compressed_size, uint64_t(1) << 30);
  zs.next_out = out->data();
  zs.avail_out = (uInt)want;
  int rc = Z_OK;
  while (rc == Z_OK && zs.avail_out > 0 && zs.avail_in > 0) rc = inflate(&zs, Z_NO_FLUSH);
  out->resize(want - zs.avail_out);
  inflateEnd(&zs);
  if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR)
    return Status::Error("zip: member '" + entry.name + "': the deflate stream is corrupt");
  return Status::Ok();
}

Status ZipExtract(const uint8_t* data, size_t size, const ZipEntry& entry, std::vector<uint8_t>* out,
                  const ZipReadOptions& options, MemoryBudget* budget) {
  if (entry.data_offset > size || entry.compressed_size > size - entry.data_offset)
    return Status::Error("zip: data of '" + entry.name + "' runs past the end of the file");
  if (entry.uncompressed_size > options.max_member_bytes)
    return Status::Error("zip: member '" + entry.name + "' is too large");
  if (budget) {  // the output can never exceed the declared size
    Status st = budget->Charge(entry.uncompressed_size, "zip: member '" + entry.name + "'");
    if (!st) return st;
  }
  const uint8_t* src = data + entry.data_offset;
  out->clear();
  Status st;
  if (entry.method == 0) {
    if (!TryAllocate((size_t)entry.uncompressed_size))
      st = Status::Error("zip: member '" + entry.name + "': out of memory");
    else
      out->assign(src, src + entry.uncompressed_size);
  } else {
    st = Inflate(src, entry, out);
  }
  if (st && options.verify_crc) {
    uLong crc = crc32(0L, Z_NULL, 0);
    size_t done = 0;
    while (done < out->size()) {
      size_t n = out->size() - done;
      if (n > (1u << 30)) n = 1u << 30;
      crc = crc32(crc, out->data() + done, (uInt)n);
      done += n;
    }
    if ((uint32_t)crc != entry.crc32)
      st = Status::Error("zip: CRC-32 mismatch in member '" + entry.name + "' (corrupt data)");
  }
  if (!st) {
    if (budget) budget->Refund(entry.uncompressed_size);
    out->clear();
    out->shrink_to_fit();
  }
  return st;
}

Status ZipWrite(const std::vector<ZipWriteMember>& members, const ZipWriteOptions& options, std::vector<uint8_t>* out) {
  out->clear();
  struct Written {
    uint64_t offset, comp, uncomp;
    uint32_t crc;
    bool zip64;
  };
  std::vector<Written> written;
  for (const ZipWriteMember& m : members) {
    if (m.name.size() > 0xFFFF) return Status::Error("zip: member name too long");
    const std::vector<uint8_t>& raw = *m.data;
    uLong crc = crc32(0L, Z_NULL, 0);
    for (size_t done = 0; done < raw.size();) {
      size_t n = raw.size() - done;
      if (n > (1u << 30)) n = 1u << 30;
      crc = crc32(crc, raw.data() + done, (uInt)n);
      done += n;
    }
    std::vector<uint8_t> packed;
    if (options.deflate) {
      z_stream zs;
      std::memset(&zs, 0, sizeof(zs));
      if (deflateInit2(&zs, options.level, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return Status::Error("zip: zlib deflateInit2 failed");
      if (raw.size() > (1u << 30)) {
        deflateEnd(&zs);
        return Status::Error("zip: member too large to deflate");
      }
      packed.resize(deflateBound(&zs, (uLong)raw.size()));
      zs.next_in = const_cast<Bytef*>(raw.data());
      zs.avail_in = (uInt)raw.size();
      zs.next_out = packed.data();
      zs.avail_out = (uInt)packed.size();
      int rc = deflate(&zs, Z_FINISH);
      packed.resize(zs.total_out);
      deflateEnd(&zs);
      if (rc != Z_STREAM_END) return Status::Error("zip: deflate failed");
    }
    const std::vector<uint8_t>& body = options.deflate ? packed : raw;
    Written w{out->size(), body.size(), raw.size(), (uint32_t)crc, false};
    w.zip64 = options.force_zip64 || w.comp >= k32Max || w.uncomp >= k32Max || w.offset >= k32Max;
    Put32(out, kLocalSig);
    Put16(out, w.zip64 ? 45 : 20);  // version needed
    Put16(out, 0);                  // flags
    Put16(out, options.deflate ? 8 : 0);
    Put16(out, 0);  // time
    Put16(out, kDosDate1980);
    Put32(out, w.crc);
    Put32(out, w.zip64 ? k32Max : (uint32_t)w.comp);
    Put32(out, w.zip64 ? k32Max : (uint32_t)w.uncomp);
    Put16(out, (uint16_t)m.name.size());
    Put16(out, w.zip64 ? 20 : 0);
    out->insert(out->end(), m.name.begin(), m.name.end());
    if (w.zip64) {
      Put16(out, kZip64ExtraId);
      Put16(out, 16);
      Put64(out, w.uncomp);
      Put64(out, w.comp);
    }
    out->insert(out->end(), body.begin(), body.end());
    written.push_back(w);
  }
  const uint64_t cd_offset = out->size();
  for (size_t i = 0; i < members.size(); ++i) {
    const Written& w = written[i];
    const std::string& name = members[i].name;
    Put32(out, kCentralSig);
    Put16(out, w.zip64 ? 45 : 20);  // version made by (MS-DOS, 2.0 / 4.5)
    Put16(out, w.zip64 ? 45 : 20);  // version needed
    Put16(out, 0);
    Put16(out, options.deflate ? 8 : 0);
    Put16(out, 0);
    Put16(out, kDosDate1980);
    Put32(out, w.crc);
    Put32(out, w.zip64 ? k32Max : (uint32_t)w.comp);
    Put32(out, w.zip64 ? k32Max : (uint32_t)w.uncomp);
    Put16(out, (uint16_t)name.size());
    Put16(out, w.zip64 ? 28 : 0);
    Put16(out, 0);            // comment
    Put16(out, 0);            // disk
    Put16(out, 0);            // internal attributes
    Put32(out, 0x81800000u);  // external attributes: regular file, mode 0600 (as Python writes)
    Put32(out, w.zip64 ? k32Max : (uint32_t)w.offset);
    out->insert(out->end(), name.begin(), name.end());
    if (w.zip64) {
      Put16(out, kZip64ExtraId);
      Put16(out, 24);
      Put64(out, w.uncomp);
      Put64(out, w.comp);
      Put64(out, w.offset);
    }
  }
  const uint64_t cd_size = out->size() - cd_offset;
  const bool end64 = options.force_zip64 || members.size() >= 0xFFFF || cd_offset >= k32Max || cd_size >= k32Max;
  if (end64) {
    const uint64_t rec = out->size();
    Put32(out, kEnd64Sig);
    Put64(out, 44);  // size of the remaining record
    Put16(out, 45);
    Put16(out, 45);
    Put32(out, 0);
    Put32(out, 0);
    Put64(out, members.size());
    Put64(out, members.size());
    Put64(out, cd_size);
    Put64(out, cd_offset);
    Put32(out, kEnd64LocatorSig);
    Put32(out, 0);
    Put64(out, rec);
    Put32(out, 1);
  }
  Put32(out, kEndSig);
  Put16(out, 0);
  Put16(out, 0);
  Put16(out, end64 ? 0xFFFF : (uint16_t)members.size());
  Put16(out, end64 ? 0xFFFF : (uint16_t)members.size());
  Put32(out, end64 ? k32Max : (uint32_t)cd_size);
  Put32(out, end64 ? k32Max : (uint32_t)cd_offset);
  Put16(out, 0);
  return Status::Ok();
}

}  // namespace attnviz
