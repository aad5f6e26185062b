// An .npz too big to read whole, read lazily (io/lazy_attention.h, docs/FORMATS.md): the archive is
// listed in place (ZipListSource: its end records, directory and local headers only), the attention
// member's .npy header is read, and the small members (tokens, names) are extracted. What
// was found goes to LazyAttentionFile::Open as a descriptor (the "prefix" of other formats):
//
//   "ATTNVIZ-NPZ1" | u64 file size | u64 member base | u64 member bytes | u32 n | n bytes of .npy header
//   | u32 count | count x (u16 name length | name | u32 length | that many bytes of a small .npy)
//
// little-endian. The descriptor is made here and read here; it is still checked like a file.
#include <algorithm>
#include <cstring>

#include "io/attention_file_detail.h"
#include "io/file_util.h"
#include "io/lazy_attention.h"
#include "io/memory_budget.h"
#include "io/npy.h"
#include "io/npz.h"
#include "io/zip.h"

namespace attnviz {
namespace {

constexpr char kMagic[12] = {'A', 'T', 'T', 'N', 'V', 'I', 'Z', '-', 'N', 'P', 'Z', '1'};
constexpr uint64_t kMaxHeaderBytes = (uint64_t(1) << 20) + 12;  // as ParseNpyHeader allows
constexpr uint64_t kMaxSmallBytes = uint64_t(64) << 20;         // tokens and names, each
// The arrays read besides the attention (attention_file_detail::kNpzAttentionNames).
const char* const kSmallNames[] = {"tokens", "source_tokens", "target_tokens", "layer_names", "head_names"};
using attention_file_detail::NpzArrayName;

void Put(std::vector<uint8_t>* out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back((uint8_t)(v >> (8 * i)));
}

// Reads the descriptor front to back; every read is bounds-checked.
struct Cursor {
  const uint8_t* p;
  size_t n, at = 0;
  bool ok = true;
  uint64_t Get(int bytes) {
    if (n - at < (size_t)bytes) return ok = false, 0;
    uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v |= (uint64_t)p[at + i] << (8 * i);
    at += (size_t)bytes;
    return v;
  }
  const uint8_t* Take(uint64_t bytes) {
    if (!ok || n - at < bytes) return ok = false, nullptr;
    const uint8_t* q = p + at;
    at += (size_t)bytes;
    return q;
  }
};

// The archive's members, listed from its end records, directory and local headers, with limits for a
// file never held whole.
Status ListInPlace(ByteSource* source, std::vector<ZipEntry>* entries) {
  ZipReadOptions o;
  o.max_member_bytes = uint64_t(1) << 46;  // 64 TiB: the attention array's own limits bound it
  o.max_total_bytes = uint64_t(1) << 62;   // 65536 members of 2^46 bytes cannot overflow it
  o.max_entries = 4096;
  const Status st = ZipListSource(source, entries, o);
  return st ? st : Status::Error(st.message.rfind("zip: ", 0) == 0 ? "npz: " + st.message : st.message);
}

const ZipEntry* AttentionMember(const std::vector<ZipEntry>& entries, Status* st) {
  for (const ZipEntry& e : entries)
    if (NpzArrayName(e.name) == "attnviz_version") {
      *st = Status::Error(
          "npz: a file of several attention sets (attnviz version 2) is read only whole; write it as "
          "safetensors instead (attnviz.save(..., format='safetensors'))");
      return nullptr;
    }
  for (const char* name : attention_file_detail::kNpzAttentionNames)
    for (const ZipEntry& e : entries)
      if (NpzArrayName(e.name) == name) return &e;
  *st = Status::Error("npz: no 'attention' array (nor 'head_weights' or 'weights')");
  return nullptr;
}

}  // namespace

bool LooksLikeZip(const uint8_t* prefix, size_t n) {
  return n >= 4 && std::memcmp(prefix, "PK\x03\x04", 4) == 0;
}

bool LooksLikeLazyNpz(const uint8_t* prefix, size_t n) {
  return n >= sizeof(kMagic) && std::memcmp(prefix, kMagic, sizeof(kMagic)) == 0;
}

Status ReadLazyNpzPrefix(ByteSource* source, std::vector<uint8_t>* out) {
  if (source->Asynchronous()) return Status::Error("ReadLazyNpzPrefix needs a synchronous source");
  const uint64_t size = source->Size();
  std::vector<ZipEntry> entries;
  Status st = ListInPlace(source, &entries);
  if (!st) return st;
  const ZipEntry* a = AttentionMember(entries, &st);
  if (!a) return st;
  if (a->method != 0)
    return Status::Error("npz: '" + a->name +
                         "' is compressed (np.savez_compressed: " + FormatApproxByteSize(a->uncompressed_size) +
                         " to inflate), which is read only whole, and the file is too big for that. Save it with "
                         "np.savez (stored), or as safetensors (attnviz.save(..., format='safetensors')), or raise "
                         "the memory budget (--max-memory in the CLI, maxMemory when embedding)");
  uint8_t first[12];
  uint64_t header = 0;
  if (a->compressed_size < sizeof(first) || !(st = source->Read(a->data_offset, sizeof(first), first)))
    return st ? Status::Error("npz: '" + a->name + "' is too short for a .npy header") : st;
  if (!NpyHeaderBytes(first, sizeof(first), &header) || header > a->compressed_size)
    return Status::Error("npz: '" + a->name + "' is too short for a .npy header");
  if (header > kMaxHeaderBytes) return Status::Error("npz: '" + a->name + "' has a .npy header over 1 MiB");
  out->assign(kMagic, kMagic + sizeof(kMagic));
  Put(out, size, 8);
  Put(out, a->data_offset, 8);
  Put(out, a->compressed_size, 8);
  Put(out, header, 4);
  out->resize(out->size() + (size_t)header);
  if (!(st = source->Read(a->data_offset, header, out->data() + out->size() - header))) return st;
  std::vector<const ZipEntry*> small;
  for (const char* name : kSmallNames)
    for (const ZipEntry& e : entries)
      if (NpzArrayName(e.name) == name) small.push_back(&e);
  Put(out, small.size(), 4);
  std::vector<uint8_t> stored, bytes;
  MemoryBudget budget;  // the small members, stored and inflated, within the memory budget
  for (const ZipEntry* e : small) {
    if (e->uncompressed_size > kMaxSmallBytes || e->compressed_size > kMaxSmallBytes)
      return Status::Error("npz: '" + e->name + "' is " + FormatByteSize(e->uncompressed_size) + ", over " +
                           FormatByteSize(kMaxSmallBytes) + " for tokens or names");
    ZipEntry here = *e;  // its bytes alone, read from the source
    here.data_offset = 0;
    if (!(st = budget.Charge(e->compressed_size, "npz: '" + e->name + "'"))) return st;
    if (!TryAllocate((size_t)e->compressed_size)) return Status::Error("npz: out of memory for '" + e->name + "'");
    stored.resize((size_t)e->compressed_size);
    if (!(st = source->Read(e->data_offset, e->compressed_size, stored.data()))) return st;
    if (!(st = ZipExtract(stored.data(), stored.size(), here, &bytes, ZipReadOptions(), &budget)))
      return Status::Error("npz: " + st.message);
    Put(out, e->name.size(), 2);
    out->insert(out->end(), e->name.begin(), e->name.end());
    Put(out, bytes.size(), 4);
    out->insert(out->end(), bytes.begin(), bytes.end());
  }
  return Status::Ok();
}

bool NpzOpensLazily(ByteSource* source) {
  uint8_t first[4] = {};
  if (source->Asynchronous() || source->Size() < sizeof(first) || !source->Read(0, sizeof(first), first) ||
      !LooksLikeZip(first, sizeof(first)))
    return false;
  // Too big to read whole: lazily, or refused by the lazy reader with what would make it readable.
  if (source->Size() > std::min<uint64_t>(kMaxFileBytes, DefaultMemoryBudget())) return true;
  std::vector<uint8_t> d;
  NpyHeader h;
  if (!ReadLazyNpzPrefix(source, &d)) return false;  // the eager reader says what is wrong
  Cursor c{d.data(), d.size(), sizeof(kMagic)};
  c.Get(8), c.Get(8), c.Get(8);
  const uint64_t n = c.Get(4);
  const uint8_t* header = c.Take(n);
  return header && ParseNpyHeader(header, (size_t)n, &h, int64_t(1) << 50) &&
         h.numel > AttentionFileLimits().max_values;
}

Status ReadLazyNpzIndex(const uint8_t* prefix, size_t n, LazyAttentionIndex* out, const AttentionFileLimits& limits) {
  using namespace attention_file_detail;
  const Status bad = Status::Error("npz: the description of the archive is malformed");
  if (!LooksLikeLazyNpz(prefix, n)) return bad;
  Cursor c{prefix, n, sizeof(kMagic)};
  LazyNpyArray where;
  where.file_size = c.Get(8);
  where.base = c.Get(8);
  where.bytes = c.Get(8);
  const uint64_t header_bytes = c.Get(4);
  const uint8_t* header = c.Take(header_bytes);
  if (!header) return bad;
  Status st = ReadLazyNpyIndexAt(header, (size_t)header_bytes, where, out, limits);
  if (!st)
    return Status::Error(st.message.rfind("npy: ", 0) == 0 ? "npz: 'attention': " + st.message.substr(5) : st.message);
  NpzFile z;
  for (uint64_t i = 0, count = c.Get(4); c.ok && i < count; ++i) {
    const uint64_t name_len = c.Get(2);
    const uint8_t* name = c.Take(name_len);
    const uint64_t len = c.Get(4);
    const uint8_t* bytes = c.Take(len);
    if (!bytes) return bad;
    NdArray a;
    const std::string member((const char*)name, (size_t)name_len);
    if (!(st = ParseNpy(bytes, (size_t)len, &a))) return Status::Error("npz: '" + member + "': " + st.message);
    z.Add(NpzArrayName(member), std::move(a));
  }
  if (!c.ok) return bad;
  LazySet& set = out->sets[0];
  std::vector<std::string> tokens, keys, queries, layer_names;
  bool has_tokens = false, has_keys = false, has_queries = false;
  if (!(st = NpzTokens(z, "tokens", limits, &tokens, &has_tokens)) ||
      !(st = NpzTokens(z, "source_tokens", limits, &keys, &has_keys)) ||
      !(st = NpzTokens(z, "target_tokens", limits, &queries, &has_queries)))
    return st;
  if (has_tokens && (has_keys || has_queries))
    return Status::Error("attention npz: give either 'tokens' or 'source_tokens'/'target_tokens', not both");
  if (has_tokens) keys = queries = tokens;
  if ((has_tokens || has_keys) && (int64_t)keys.size() != set.n_k)
    return Status::Error("attention npz: " + std::to_string(keys.size()) + " key tokens for " +
                         std::to_string(set.n_k) + " columns of the attention");
  if ((has_tokens || has_queries) && (int64_t)queries.size() != set.n_q)
    return Status::Error("attention npz: " + std::to_string(queries.size()) + " query tokens for " +
                         std::to_string(set.n_q) + " rows of the attention");
  for (const auto* list : {&keys, &queries})
    for (const std::string& t : *list)
      if (t.size() > limits.max_token_bytes)
        return Status::Error("attention npz: a token is longer than " + std::to_string(limits.max_token_bytes) +
                             " bytes");
  if (has_tokens || has_keys) set.key_tokens = keys;
  if (has_tokens || has_queries) set.query_tokens = queries;
  if (has_tokens || has_keys || has_queries) {
    out->warnings.clear();  // "holds no tokens"
    if (!has_tokens && !has_keys) out->warnings.push_back("no source tokens given; using indices");
    if (!has_tokens && !has_queries) out->warnings.push_back("no target tokens given; using indices");
    set.self_attention = has_tokens || (set.key_tokens == set.query_tokens);
    set.kind = set.self_attention ? AttentionKind::Self : AttentionKind::Cross;
  }
  if (!(st = NpzNames(z, "layer_names", set.layers.size(), &layer_names))) return st;
  for (size_t l = 0; l < layer_names.size(); ++l) set.layers[l].name = layer_names[l];
  if (!(st = NpzNames(z, "head_names", (size_t)set.MaxHeads(), &set.head_names))) return st;
  out->npy = true;
  return Status::Ok();
}

}  // namespace attnviz
