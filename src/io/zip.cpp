#include "io/zip.h"

#include <zlib.h>

#include <cstring>

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

}  // namespace

Status ZipList(const uint8_t* data, size_t size, std::vector<ZipEntry>* entries, const ZipReadOptions& options) {
  entries->clear();
  if (size < 22) return Status::Error("zip: file too small to be a ZIP archive (" + std::to_string(size) + " bytes)");
  // Pass 1: find the end-of-central-directory record (it may be followed by a comment).
  size_t eocd = SIZE_MAX;
  const size_t lowest = size > 22 + 65535 ? size - 22 - 65535 : 0;
  for (size_t p = size - 22 + 1; p-- > lowest;) {
    if (Get32(data + p) == kEndSig && p + 22 + Get16(data + p + 20) <= size) {
      eocd = p;
      break;
    }
  }
  if (eocd == SIZE_MAX) return Status::Error("zip: no end-of-central-directory record (not a ZIP file, or truncated)");
  const uint8_t* e = data + eocd;
  if (Get16(e + 4) != 0 || Get16(e + 6) != 0) return Status::Error("zip: multi-disk archives are not supported");
  uint64_t count = Get16(e + 10), cd_size = Get32(e + 12), cd_offset = Get32(e + 16);

  // Pass 2: a Zip64 locator right before the EOCD points at the Zip64 end record.
  if (eocd >= 20 && Get32(data + eocd - 20) == kEnd64LocatorSig) {
    uint64_t rec = Get64(data + eocd - 20 + 8);
    if (rec > size || size - rec < 56 || Get32(data + rec) != kEnd64Sig)
      return Status::Error("zip: Zip64 end-of-central-directory record missing or truncated");
    count = Get64(data + rec + 32);
    cd_size = Get64(data + rec + 40);
    cd_offset = Get64(data + rec + 48);
  } else if (count == 0xFFFF || cd_size == k32Max || cd_offset == k32Max) {
    return Status::Error("zip: archive needs Zip64 end records but has none");
  }
  if (count > options.max_entries) return Status::Error("zip: too many members (" + std::to_string(count) + ")");
  if (cd_offset > size || cd_size > size - cd_offset)
    return Status::Error("zip: central directory lies outside the file (truncated?)");

  // Pass 3: central directory entries.
  uint64_t p = cd_offset;
  const uint64_t cd_end = cd_offset + cd_size;
  for (uint64_t i = 0; i < count; ++i) {
    const std::string where = "central directory entry " + std::to_string(i);
    if (p + 46 > cd_end || Get32(data + p) != kCentralSig)
      return Status::Error("zip: " + where + " is malformed or truncated");
    const uint8_t* c = data + p;
    const uint16_t flags = Get16(c + 8);
    ZipEntry ent;
    ent.method = Get16(c + 10);
    ent.crc32 = Get32(c + 16);
    ent.compressed_size = Get32(c + 20);
    ent.uncompressed_size = Get32(c + 24);
    const uint16_t name_len = Get16(c + 28), extra_len = Get16(c + 30), comment_len = Get16(c + 32);
    uint64_t local = Get32(c + 42);
    if (p + 46 + name_len + extra_len + comment_len > cd_end)
      return Status::Error("zip: " + where + " overruns the directory");
    ent.name.assign((const char*)c + 46, name_len);
    Status st =
        ApplyZip64Extra(c + 46 + name_len, extra_len, &ent.uncompressed_size, &ent.compressed_size, &local, where);
    if (!st) return st;
    if (flags & 0x1) return Status::Error("zip: member '" + ent.name + "' is encrypted; not supported");
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
    // The local header: its own name and extra lengths decide where the data starts.
    if (local > size || size - local < 30 || Get32(data + local) != kLocalSig)
      return Status::Error("zip: local header of '" + ent.name + "' missing or truncated");
    const uint8_t* l = data + local;
    if (Get16(l + 8) != ent.method)
      return Status::Error("zip: local and central headers of '" + ent.name + "' disagree on the method");
    uint64_t lname = Get16(l + 26), lextra = Get16(l + 28);
    if (local + 30 + lname + lextra > size) return Status::Error("zip: local header of '" + ent.name + "' truncated");
    uint64_t l_uncomp = Get32(l + 22), l_comp = Get32(l + 18);
    st = ApplyZip64Extra(l + 30 + lname, (size_t)lextra, &l_uncomp, &l_comp, nullptr,
                         "local header of '" + ent.name + "'");
    if (!st) return st;
    ent.data_offset = local + 30 + lname + lextra;
    if (ent.data_offset > size || ent.compressed_size > size - ent.data_offset)
      return Status::Error("zip: data of '" + ent.name + "' runs past the end of the file (truncated?)");
    if (ent.method == 0 && ent.compressed_size != ent.uncompressed_size)
      return Status::Error("zip: stored member '" + ent.name + "' has different compressed and uncompressed sizes");
    entries->push_back(std::move(ent));
    p += 46 + (uint64_t)name_len + extra_len + comment_len;
  }
  return Status::Ok();
}

Status ZipExtract(const uint8_t* data, size_t size, const ZipEntry& entry, std::vector<uint8_t>* out,
                  const ZipReadOptions& options) {
  if (entry.data_offset > size || entry.compressed_size > size - entry.data_offset)
    return Status::Error("zip: data of '" + entry.name + "' runs past the end of the file");
  if (entry.uncompressed_size > options.max_member_bytes)
    return Status::Error("zip: member '" + entry.name + "' is too large");
  const uint8_t* src = data + entry.data_offset;
  out->assign((size_t)entry.uncompressed_size, 0);
  if (entry.method == 0) {
    if (entry.uncompressed_size) std::memcpy(out->data(), src, (size_t)entry.uncompressed_size);
  } else {
    z_stream zs;
    std::memset(&zs, 0, sizeof(zs));
    if (inflateInit2(&zs, -MAX_WBITS) != Z_OK) return Status::Error("zip: zlib inflateInit2 failed");
    uint64_t in_left = entry.compressed_size, out_left = entry.uncompressed_size;
    zs.next_in = const_cast<Bytef*>(src);
    zs.next_out = out->data();
    int rc = Z_OK;
    uint8_t sink[1];  // lets zlib report a stream longer than declared
    while (rc == Z_OK) {
      const uInt chunk = 1u << 30;
      if (zs.avail_in == 0 && in_left) {
        zs.avail_in = in_left > chunk ? chunk : (uInt)in_left;
        in_left -= zs.avail_in;
      }
      if (zs.avail_out == 0) {
        if (out_left) {
          zs.avail_out = out_left > chunk ? chunk : (uInt)out_left;
          out_left -= zs.avail_out;
        } else {
          zs.next_out = sink;
          zs.avail_out = 1;
        }
      }
      const uLong before_in = zs.total_in, before_out = zs.total_out;
      rc = inflate(&zs, Z_NO_FLUSH);
      if (zs.next_out == sink + 1) {
        rc = Z_DATA_ERROR;
        break;
      }  // more output than declared
      if (rc == Z_BUF_ERROR || (rc == Z_OK && zs.total_in == before_in && zs.total_out == before_out)) {
        rc = Z_BUF_ERROR;
        break;
      }
    }
    const uint64_t produced = zs.total_out;
    inflateEnd(&zs);
    if (rc != Z_STREAM_END)
      return Status::Error("zip: member '" + entry.name + "': deflate stream is corrupt or truncated (zlib " +
                           std::to_string(rc) + ")");
    if (produced != entry.uncompressed_size)
      return Status::Error("zip: member '" + entry.name + "' inflated to " + std::to_string(produced) +
                           " bytes, header says " + std::to_string(entry.uncompressed_size));
  }
  uLong crc = crc32(0L, Z_NULL, 0);
  size_t done = 0;
  while (done < out->size()) {
    size_t n = out->size() - done;
    if (n > (1u << 30)) n = 1u << 30;
    crc = crc32(crc, out->data() + done, (uInt)n);
    done += n;
  }
  if ((uint32_t)crc != entry.crc32)
    return Status::Error("zip: CRC-32 mismatch in member '" + entry.name + "' (corrupt data)");
  return Status::Ok();
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
