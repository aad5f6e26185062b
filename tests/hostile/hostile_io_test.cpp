// Hostile inputs against the readers (docs/SECURITY.md): each test is one row of the "Hostile
// files" table or one of the classic cases, checked at the io / core level with the message
// expected. The same cases run end to end through attnviz-cli and the viewer's open path in
// tests/hostile/run_corpus.py (with time and memory limits).
#include <gtest/gtest.h>
#include <zlib.h>

#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "core/attention.h"
#include "io/attention_file.h"
#include "io/attention_sets.h"
#include "io/file_util.h"
#include "io/json.h"
#include "io/memory_budget.h"
#include "io/npy.h"
#include "io/npz.h"
#include "io/svg.h"
#include "io/utf8.h"
#include "io/zip.h"

using namespace attnviz;

namespace {

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

double SecondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void Put16(std::vector<uint8_t>* o, uint32_t v) {
  o->push_back(v & 0xff);
  o->push_back((v >> 8) & 0xff);
}
void Put32(std::vector<uint8_t>* o, uint32_t v) {
  for (int i = 0; i < 4; ++i) o->push_back((v >> (8 * i)) & 0xff);
}

// One member of a hand-made (non-Zip64) archive, with every field a liar may change.
struct TestMember {
  std::string name;
  std::vector<uint8_t> body;  // the bytes stored in the archive (deflated if method 8)
  uint16_t method = 0;
  uint32_t crc = 0;
  uint32_t uncompressed = 0;
  std::string local_name;  // "" = name
  bool local_crc_lie = false;
  int shares_local_of = -1;  // >= 0: the central entry points at that member's local header
};

std::vector<uint8_t> Deflate(const std::vector<uint8_t>& raw) {
  z_stream zs;
  std::memset(&zs, 0, sizeof(zs));
  deflateInit2(&zs, 6, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  std::vector<uint8_t> out(deflateBound(&zs, (uLong)raw.size()));
  zs.next_in = const_cast<Bytef*>(raw.data());
  zs.avail_in = (uInt)raw.size();
  zs.next_out = out.data();
  zs.avail_out = (uInt)out.size();
  deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

uint32_t Crc(const std::vector<uint8_t>& raw) {
  return (uint32_t)crc32(0L, raw.data(), (uInt)raw.size());
}

TestMember Stored(const std::string& name, const std::vector<uint8_t>& raw) {
  TestMember m;
  m.name = name;
  m.body = raw;
  m.crc = Crc(raw);
  m.uncompressed = (uint32_t)raw.size();
  return m;
}

TestMember Deflated(const std::string& name, const std::vector<uint8_t>& raw) {
  TestMember m = Stored(name, raw);
  m.method = 8;
  m.body = Deflate(raw);
  return m;
}

std::vector<uint8_t> BuildZip(const std::vector<TestMember>& members) {
  std::vector<uint8_t> z;
  std::vector<uint32_t> offsets;
  for (const TestMember& m : members) {
    offsets.push_back((uint32_t)z.size());
    if (m.shares_local_of >= 0) continue;
    const std::string& lname = m.local_name.empty() ? m.name : m.local_name;
    Put32(&z, 0x04034b50);
    Put16(&z, 20);
    Put16(&z, 0);
    Put16(&z, m.method);
    Put16(&z, 0);
    Put16(&z, 0x21);
    Put32(&z, m.local_crc_lie ? m.crc ^ 1 : m.crc);
    Put32(&z, (uint32_t)m.body.size());
    Put32(&z, m.uncompressed);
    Put16(&z, (uint32_t)lname.size());
    Put16(&z, 0);
    z.insert(z.end(), lname.begin(), lname.end());
    z.insert(z.end(), m.body.begin(), m.body.end());
  }
  const uint32_t cd = (uint32_t)z.size();
  for (size_t i = 0; i < members.size(); ++i) {
    const TestMember& m = members[i];
    Put32(&z, 0x02014b50);
    Put16(&z, 20);
    Put16(&z, 20);
    Put16(&z, 0);
    Put16(&z, m.method);
    Put16(&z, 0);
    Put16(&z, 0x21);
    Put32(&z, m.crc);
    Put32(&z, (uint32_t)m.body.size());
    Put32(&z, m.uncompressed);
    Put16(&z, (uint32_t)m.name.size());
    Put16(&z, 0);
    Put16(&z, 0);
    Put16(&z, 0);
    Put16(&z, 0);
    Put32(&z, 0);
    Put32(&z, m.shares_local_of >= 0 ? offsets[(size_t)m.shares_local_of] : offsets[i]);
    z.insert(z.end(), m.name.begin(), m.name.end());
  }
  const uint32_t cd_size = (uint32_t)z.size() - cd;
  Put32(&z, 0x06054b50);
  Put16(&z, 0);
  Put16(&z, 0);
  Put16(&z, (uint32_t)members.size());
  Put16(&z, (uint32_t)members.size());
  Put32(&z, cd_size);
  Put32(&z, cd);
  Put16(&z, 0);
  return z;
}

std::vector<uint8_t> Npy(const NdArray& a) {
  std::vector<uint8_t> b;
  EXPECT_TRUE(WriteNpy(a, &b).ok);
  return b;
}

Status ListAndExtractAll(const std::vector<uint8_t>& z, const ZipReadOptions& o = ZipReadOptions()) {
  std::vector<ZipEntry> entries;
  Status st = ZipList(z.data(), z.size(), &entries, o);
  if (!st) return st;
  std::vector<uint8_t> out;
  for (const ZipEntry& e : entries)
    if (!(st = ZipExtract(z.data(), z.size(), e, &out, o))) return st;
  return Status::Ok();
}

// ---- zip ----------------------------------------------------------------------------------

TEST(HostileZip, SameMemberListedManyTimesIsRefused) {
  // The table's first row: a central directory that lists one big member 3-8 times.
  std::vector<uint8_t> raw(1 << 16, 0);
  std::vector<TestMember> ms = {Deflated("a.npy", raw)};
  for (int i = 1; i < 8; ++i) {
    TestMember copy = ms[0];
    copy.name = "a" + std::to_string(i) + ".npy";
    copy.shares_local_of = 0;
    ms.push_back(copy);
  }
  const std::vector<uint8_t> z = BuildZip(ms);
  const Status st = ListAndExtractAll(z);
  ASSERT_FALSE(st.ok);
  // a shared local header names "a.npy", not "a1.npy": caught by the name check first
  EXPECT_TRUE(Contains(st.message, "names a different member")) << st.message;
  // the same entry listed twice under the same name: caught as an overlap
  ms.resize(2);
  ms[1].name = "a.npy";
  const Status st2 = ListAndExtractAll(BuildZip(ms));
  ASSERT_FALSE(st2.ok);
  EXPECT_TRUE(Contains(st2.message, "overlap")) << st2.message;
}

TEST(HostileZip, TotalUncompressedSizeIsLimited) {
  std::vector<uint8_t> raw(100000, 7);
  const std::vector<uint8_t> z = BuildZip({Deflated("a.npy", raw), Deflated("b.npy", raw), Deflated("c.npy", raw)});
  ZipReadOptions o;
  o.max_total_bytes = 250000;  // each member fits, the three together do not
  std::vector<ZipEntry> entries;
  const Status st = ZipList(z.data(), z.size(), &entries, o);
  ASSERT_FALSE(st.ok);
  EXPECT_TRUE(Contains(st.message, "declare more than 250000 bytes uncompressed in total")) << st.message;
  o.max_total_bytes = 300000;
  EXPECT_TRUE(ZipList(z.data(), z.size(), &entries, o).ok);
  EXPECT_EQ(ZipReadOptions().max_total_bytes, DefaultMemoryBudget());
}

TEST(HostileZip, LocalHeaderMustAgreeWithCentralEntry) {
  const std::vector<uint8_t> raw = {1, 2, 3, 4, 5};
  TestMember renamed = Stored("x.npy", raw);
  renamed.local_name = "y.npy";
  Status st = ListAndExtractAll(BuildZip({renamed}));
  EXPECT_TRUE(Contains(st.message, "names a different member than 'x.npy'")) << st.message;
  TestMember crc = Stored("x.npy", raw);
  crc.local_crc_lie = true;
  st = ListAndExtractAll(BuildZip({crc}));
  EXPECT_TRUE(Contains(st.message, "disagree on the CRC or sizes")) << st.message;
  EXPECT_TRUE(ListAndExtractAll(BuildZip({Stored("x.npy", raw)})).ok);
}

TEST(HostileZip, StreamLongerThanDeclaredSaysSo) {
  std::vector<uint8_t> raw(1000, 'a');
  TestMember m = Deflated("x.npy", raw);
  m.uncompressed = 500;
  const Status st = ListAndExtractAll(BuildZip({m}));
  EXPECT_TRUE(Contains(st.message, "inflates to more than the 500 bytes its header declares")) << st.message;
}

TEST(HostileZip, TruncatedCorruptAndTrailingStreamsAreNamed) {
  std::vector<uint8_t> raw(5000);
  for (size_t i = 0; i < raw.size(); ++i) raw[i] = (uint8_t)(i * 7 % 251);
  TestMember cut = Deflated("x.npy", raw);
  cut.body.resize(cut.body.size() / 2);
  Status st = ListAndExtractAll(BuildZip({cut}));
  EXPECT_TRUE(Contains(st.message, "deflate stream is truncated")) << st.message;

  TestMember garbage = Deflated("x.npy", raw);
  for (size_t i = 0; i < garbage.body.size(); ++i) garbage.body[i] = 0xff;
  st = ListAndExtractAll(BuildZip({garbage}));
  EXPECT_TRUE(Contains(st.message, "deflate stream is corrupt")) << st.message;

  TestMember trailing = Deflated("x.npy", raw);
  trailing.body.insert(trailing.body.end(), 16, 0);
  st = ListAndExtractAll(BuildZip({trailing}));
  EXPECT_TRUE(Contains(st.message, "the deflate stream ends after")) << st.message;
}

TEST(HostileZip, GarbageDeclaringHugeSizeFailsFastWithoutPrefill) {
  // A member declaring 512 MiB whose content is garbage: refused by the stream, in milliseconds;
  // the buffer only grows with real output (the runner checks RSS for the 2 GiB version).
  TestMember m;
  m.name = "x.npy";
  m.method = 8;
  m.body.assign(600000, 0xA5);
  m.uncompressed = 512u << 20;
  const std::vector<uint8_t> z = BuildZip({m});
  ZipReadOptions o;
  o.max_total_bytes = uint64_t(1) << 30;
  std::vector<ZipEntry> entries;
  ASSERT_TRUE(ZipList(z.data(), z.size(), &entries, o).ok);
  std::vector<uint8_t> out;
  const auto t0 = std::chrono::steady_clock::now();
  const Status st = ZipExtract(z.data(), z.size(), entries[0], &out, o);
  EXPECT_FALSE(st.ok);
  EXPECT_TRUE(Contains(st.message, "corrupt")) << st.message;
  EXPECT_LT(out.capacity(), size_t(1) << 20);
  EXPECT_LT(SecondsSince(t0), 0.5);
}

TEST(HostileZip, BudgetIsChargedAndRefunded) {
  std::vector<uint8_t> raw(4096, 1);
  const std::vector<uint8_t> z = BuildZip({Deflated("x.npy", raw)});
  std::vector<ZipEntry> entries;
  ASSERT_TRUE(ZipList(z.data(), z.size(), &entries).ok);
  std::vector<uint8_t> out;
  MemoryBudget small(1000);
  Status st = ZipExtract(z.data(), z.size(), entries[0], &out, ZipReadOptions(), &small);
  EXPECT_TRUE(Contains(st.message, "over the memory budget")) << st.message;
  EXPECT_EQ(small.used(), 0u);
  MemoryBudget enough(10000);
  ASSERT_TRUE(ZipExtract(z.data(), z.size(), entries[0], &out, ZipReadOptions(), &enough).ok);
  EXPECT_EQ(enough.used(), 4096u);
  EXPECT_EQ(out, raw);
}

// ---- npz ----------------------------------------------------------------------------------

TEST(HostileNpz, ManyMembersWithLongNamesAreLinear) {
  // 8192 members whose 2 KB names differ only at the end: the old pairwise check compared
  // 33 million pairs of 2 KB names. Hashed, this takes well under a second.
  const std::vector<uint8_t> npy = Npy(FromFloats({}, std::vector<float>{0.5f}.data()));
  std::vector<TestMember> ms;
  const std::string prefix(2048, 'n');
  for (int i = 0; i < 8192; ++i) ms.push_back(Stored(prefix + std::to_string(i) + ".npy", npy));
  const std::vector<uint8_t> z = BuildZip(ms);
  NpzFile npz;
  auto t0 = std::chrono::steady_clock::now();
  const Status st = ParseNpz(z.data(), z.size(), &npz);
  ASSERT_TRUE(st.ok) << st.message;
  EXPECT_EQ(npz.names.size(), 8192u);
  EXPECT_LT(SecondsSince(t0), 3.0);
  // and a duplicate is still found
  ms.push_back(Stored(prefix + "17.npy", npy));
  const std::vector<uint8_t> dup = BuildZip(ms);
  const Status st2 = ParseNpz(dup.data(), dup.size(), &npz);
  EXPECT_TRUE(Contains(st2.message, "duplicate array name")) << st2.message;
}

TEST(HostileNpz, ArraysTogetherStayWithinTheBudget) {
  std::vector<float> v(1000, 1.0f);
  const std::vector<uint8_t> a = Npy(FromFloats({1000}, v.data()));
  const std::vector<uint8_t> z = BuildZip({Deflated("a.npy", a), Deflated("b.npy", a), Deflated("c.npy", a)});
  ZipReadOptions o;
  o.max_total_bytes = 3 * a.size();  // declared sizes fit; the arrays kept + the member in hand do not
  NpzFile npz;
  const Status st = ParseNpz(z.data(), z.size(), &npz, o);
  ASSERT_FALSE(st.ok);
  EXPECT_TRUE(Contains(st.message, "over the memory budget")) << st.message;
  o.max_total_bytes = 4 * a.size() + 1024;  // + names and bookkeeping
  EXPECT_TRUE(ParseNpz(z.data(), z.size(), &npz, o).ok);
}

// ---- npy, ndarray -------------------------------------------------------------------------

std::vector<uint8_t> NpyWithHeader(const std::string& dict, size_t data_bytes, uint8_t fill = 0) {
  std::string header = dict;
  while ((10 + header.size() + 1) % 64) header.push_back(' ');
  header.push_back('\n');
  std::vector<uint8_t> b = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
  b.push_back(header.size() & 0xff);
  b.push_back((header.size() >> 8) & 0xff);
  b.insert(b.end(), header.begin(), header.end());
  b.resize(b.size() + data_bytes, fill);
  return b;
}

// An attention array whose .npy header gives a shape the reader cannot use is refused from that
// header, before the member is inflated: here the rest of its deflate stream is cut, which a whole
// inflate reports instead. (The corpus's npy_fortran_64dims_2p28, 1 GiB inflated, took 10-13 s of
// CPU in WASM that way; now it is refused in well under a second.)
TEST(HostileNpz, AnAttentionShapeTheReaderCannotUseIsRefusedBeforeInflating) {
  const auto cut_npz = [](const std::string& name, std::vector<int64_t> shape) {
    NdArray a;
    a.shape = std::move(shape);
    a.data.resize((size_t)a.Numel() * 4);
    for (size_t i = 0; i < a.data.size(); ++i) a.data[i] = (uint8_t)((i * 2654435761u) >> 13);
    std::vector<uint8_t> npy;
    EXPECT_TRUE(WriteNpy(a, &npy).ok);
    TestMember m = Deflated(name, npy);
    m.body.resize(m.body.size() / 2);
    return BuildZip({m});
  };
  const std::vector<uint8_t> five = cut_npz("attention.npy", {2, 2, 2, 2, 4096});
  AttentionFile f;
  Status st = LoadAttentionFile(five.data(), five.size(), &f);
  EXPECT_TRUE(Contains(st.message, "'attention' must have shape [layers, heads, n_q, n_k]")) << st.message;
  AttentionDocument doc;
  st = LoadAttentionDocument(five.data(), five.size(), &doc);
  EXPECT_TRUE(Contains(st.message, "'attention' must have shape [layers, heads, n_q, n_k]")) << st.message;
  // A usable shape with the same cut stream: the stream's own message, as before.
  const std::vector<uint8_t> four = cut_npz("attention.npy", {2, 2, 2, 8192});
  st = LoadAttentionDocument(four.data(), four.size(), &doc);
  EXPECT_TRUE(Contains(st.message, "deflate stream is truncated")) << st.message;
  // A member the reader does not use as attention is not judged by its shape.
  std::vector<uint8_t> npy;
  NdArray w;
  w.shape = {2, 2, 2, 2, 2};
  w.data.assign(32 * 4, 0);
  ASSERT_TRUE(WriteNpy(w, &npy).ok);
  NdArray att;
  att.shape = {1, 2, 2};
  att.data.resize(4 * 4);
  const float ones[4] = {1, 0, 0, 1};
  std::memcpy(att.data.data(), ones, sizeof(ones));
  std::vector<uint8_t> att_npy;
  ASSERT_TRUE(WriteNpy(att, &att_npy).ok);
  const std::vector<uint8_t> both = BuildZip({Deflated("attention.npy", att_npy), Deflated("weights.npy", npy)});
  st = LoadAttentionDocument(both.data(), both.size(), &doc);
  EXPECT_TRUE(st.ok) << st.message;
}

TEST(HostileNpy, FortranOrderWithManyDimsIsLinearAndCorrect) {
  // 64 dims, 2^22 elements: a bit-reversal permutation, done by a blocked transpose.
  std::string shape = "(";
  for (int d = 0; d < 64; ++d) shape += d % 3 == 0 && d < 66 ? "2, " : "1, ";
  shape += ")";
  std::vector<uint8_t> b = NpyWithHeader("{'descr': '|u1', 'fortran_order': True, 'shape': " + shape + ", }", 1 << 22);
  for (size_t i = 0; i < (1u << 22); ++i) b[b.size() - (1u << 22) + i] = (uint8_t)(i * 31 % 255);
  NdArray a;
  const auto t0 = std::chrono::steady_clock::now();
  const Status st = ParseNpy(b.data(), b.size(), &a);
  ASSERT_TRUE(st.ok) << st.message;
  EXPECT_LT(SecondsSince(t0), 1.0);  // a loose bound: the corpus runner times the 2^28 case in CPU seconds
  EXPECT_EQ(a.Numel(), int64_t(1) << 22);
  // element with C index c has Fortran index = bit-reversal over the 22 binary dims
  for (int64_t c : {int64_t(0), int64_t(1), int64_t(5), int64_t(123456), (int64_t(1) << 22) - 1}) {
    int64_t f = 0;
    for (int bit = 0; bit < 22; ++bit)
      if (c & (int64_t(1) << bit)) f |= int64_t(1) << (21 - bit);
    EXPECT_EQ(a.data[(size_t)c], (uint8_t)(f * 31 % 255)) << "c=" << c;
  }
}

// The naive Fortran-to-C conversion, one element at a time, as the reference.
std::vector<uint8_t> NaiveFortranToC(const std::vector<int64_t>& shape, size_t item, const std::vector<uint8_t>& f) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<uint8_t> c(f.size());
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t k = 0; k < n; ++k) {
    int64_t off = 0, stride = 1;
    for (size_t d = 0; d < shape.size(); ++d) {
      off += idx[d] * stride;
      stride *= shape[d];
    }
    std::memcpy(&c[(size_t)k * item], &f[(size_t)off * item], item);
    for (int d = (int)shape.size() - 1; d >= 0; --d) {
      if (++idx[(size_t)d] < shape[(size_t)d]) break;
      idx[(size_t)d] = 0;
    }
  }
  return c;
}

TEST(HostileNpy, FortranToCMatchesTheNaiveOrderForManyShapes) {
  struct Case {
    std::vector<int64_t> shape;
    const char* descr;
    size_t item;
  };
  const Case cases[] = {{{3, 5}, "<f4", 4},         {{1, 7, 1, 3, 2}, "<i2", 2},
                        {{5000, 3}, "|u1", 1},      {{3, 5000}, "<f8", 8},
                        {{2, 3, 700}, "|S3", 3},    {{700, 3, 2}, "<i2", 2},
                        {{64, 64, 2}, "<f4", 4},    {{2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2}, "|u1", 1},
                        {{33, 1, 65, 9}, "<U2", 8}, {{4097, 2, 3}, "|u1", 1},
                        {{2, 3, 4097}, "|u1", 1},   {{10, 20, 30, 40}, "<f4", 4}};
  for (const Case& c : cases) {
    std::string shape = "(";
    int64_t n = 1;
    for (int64_t d : c.shape) {
      shape += std::to_string(d) + ", ";
      n *= d;
    }
    shape += ")";
    std::vector<uint8_t> b =
        NpyWithHeader(std::string("{'descr': '") + c.descr + "', 'fortran_order': True, 'shape': " + shape + ", }",
                      (size_t)n * c.item);
    const size_t at = b.size() - (size_t)n * c.item;
    for (size_t i = at; i < b.size(); ++i) b[i] = (uint8_t)((i - at) * 2654435761u >> 13);
    NdArray a;
    const Status st = ParseNpy(b.data(), b.size(), &a);
    ASSERT_TRUE(st.ok) << shape << ": " << st.message;
    const std::vector<uint8_t> fortran(b.begin() + (long)at, b.end());
    EXPECT_TRUE(a.data == NaiveFortranToC(c.shape, c.item, fortran)) << shape << " " << c.descr;
  }
}

TEST(HostileNpy, FortranStringsAndOddShapes) {
  // [2, 1, 3] of |S3 in Fortran order: columns first (3-byte items take the generic path)
  std::vector<uint8_t> b = NpyWithHeader("{'descr': '|S3', 'fortran_order': True, 'shape': (2, 1, 3), }", 0);
  const char* fortran[] = {"a0", "b0", "a1", "b1", "a2", "b2"};  // column-major of [[a0 a1 a2] [b0 b1 b2]]
  for (const char* s : fortran) b.insert(b.end(), s, s + 3);     // with the NUL: "a0\0"
  NdArray a;
  ASSERT_TRUE(ParseNpy(b.data(), b.size(), &a).ok);
  std::vector<std::string> s;
  ASSERT_TRUE(ToStrings(a, &s).ok);
  EXPECT_EQ(s, (std::vector<std::string>{"a0", "a1", "a2", "b0", "b1", "b2"}));
}

TEST(HostileNpy, ArrayBytesAreChargedToTheBudget) {
  const std::vector<uint8_t> b = NpyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (1000,), }", 4000);
  NdArray a;
  MemoryBudget small(3000);
  const Status st = ParseNpy(b.data(), b.size(), &a, &small);
  ASSERT_FALSE(st.ok);
  EXPECT_TRUE(Contains(st.message, "npy: an array of shape (1000,) (float32) needs 4000 bytes, over the memory budget"))
      << st.message;
  MemoryBudget fortran(6000);  // a Fortran array needs its transpose scratch as well
  const std::vector<uint8_t> f = NpyWithHeader("{'descr': '<f4', 'fortran_order': True, 'shape': (20, 50), }", 4000);
  EXPECT_TRUE(Contains(ParseNpy(f.data(), f.size(), &a, &fortran).message, "Fortran-to-C transpose"));
  EXPECT_EQ(fortran.used(), 0u);
}

TEST(HostileNpy, StringArraysAreLimitedBeforeAllocating) {
  // 2^21 one-byte strings: the old ToStrings reserved 2^21 std::strings (64 MiB) before any check.
  NdArray a;
  a.dtype = DType::Bytes;
  a.itemsize = 1;
  a.shape = {int64_t(1) << 21};
  a.data.assign(size_t(1) << 21, 'x');
  std::vector<std::string> out;
  const Status st = ToStrings(a, &out, "layer_names");
  ASSERT_FALSE(st.ok);
  EXPECT_EQ(st.message, "layer_names: 2097152 strings, over the limit of 1048576");
  EXPECT_EQ(out.capacity(), 0u);
  EXPECT_EQ(StringElement(a, 5), "x");
  EXPECT_EQ(StringElement(a, -1), "");
  EXPECT_EQ(StringElement(a, a.Numel()), "");
  a.shape = {1000};
  a.data.resize(1000);
  EXPECT_TRUE(ToStrings(a, &out).ok);
  EXPECT_EQ(out.size(), 1000u);
}

TEST(HostileNpy, ConversionsAreCheckedAgainstTheBudget) {
  const uint64_t saved = DefaultMemoryBudget();
  SetDefaultMemoryBudget(1 << 20);
  NdArray a;
  a.dtype = DType::UInt8;
  a.itemsize = 1;
  a.shape = {512, 512};  // 256 KiB of uint8 -> 2 MiB of int64
  a.data.assign(512 * 512, 1);
  std::vector<int64_t> ids;
  const Status st = ToInt64Vector(a, &ids, "ids");
  EXPECT_TRUE(Contains(st.message, "ids: converting 262144 elements needs 2097152 bytes")) << st.message;
  MatrixRM m;
  EXPECT_TRUE(ToMatrix(a, &m, "weights").ok);  // 1 MiB of float fits
  SetDefaultMemoryBudget(saved);
}

// ---- json ---------------------------------------------------------------------------------

TEST(HostileJson, TreeIsBuiltWithinTheBudget) {
  // 10^5 empty arrays: ~120 bytes of tree per 3 bytes of text
  std::string text = "[";
  for (int i = 0; i < 100000; ++i) text += i ? ",[]" : "[]";
  text += "]";
  JsonParseOptions o;
  o.max_memory = 4 << 20;
  JsonValue v;
  Status st = ParseJson(text.data(), text.size(), &v, o);
  ASSERT_FALSE(st.ok);
  EXPECT_TRUE(Contains(st.message, "the document needs more memory than the budget of 4 MiB allows")) << st.message;
  o.max_memory = 64 << 20;
  st = ParseJson(text.data(), text.size(), &v, o);
  ASSERT_TRUE(st.ok) << st.message;
  EXPECT_EQ(v.items.size(), 100000u);
}

TEST(HostileJson, StringsAndNumbersAreCharged) {
  const std::string big_string = "{\"name\": \"" + std::string(1 << 20, 'a') + "\"}";
  JsonParseOptions o;
  o.max_memory = 1 << 19;
  JsonValue v;
  EXPECT_TRUE(Contains(ParseJson(big_string.data(), big_string.size(), &v, o).message, "needs more memory"));
  std::string numbers = "[";
  for (int i = 0; i < 100000; ++i) numbers += i ? ",1" : "1";
  numbers += "]";
  EXPECT_TRUE(Contains(ParseJson(numbers.data(), numbers.size(), &v, o).message, "needs more memory"));
  o.max_memory = 4 << 20;
  ASSERT_TRUE(ParseJson(numbers.data(), numbers.size(), &v, o).ok);
  EXPECT_EQ(v.numbers.size(), 100000u);
  ASSERT_TRUE(ParseJson(big_string.data(), big_string.size(), &v, o).ok);
  EXPECT_EQ(v.members[0].second.string.size(), size_t(1) << 20);
}

// ---- svg ----------------------------------------------------------------------------------

TEST(HostileSvg, StreamsInChunksAndRefusesHugeMaps) {
  MatrixRM w = MatrixRM::Constant(300, 300, 1.0f / 300);
  std::vector<std::string> tokens(300, "t");
  SvgHeatmapOptions o;
  size_t pieces = 0, largest = 0, total = 0;
  std::string streamed;
  ASSERT_TRUE(WriteHeatmapSvg(w, tokens, tokens, "viridis", o, [&](const char* d, size_t n) {
                ++pieces;
                largest = std::max(largest, n);
                total += n;
                streamed.append(d, n);
                return true;
              }).ok);
  EXPECT_GT(pieces, 10u);
  EXPECT_LT(largest, size_t(80) << 10);  // 64 KiB plus at most one element
  EXPECT_EQ(streamed, HeatmapSvg(w, tokens, tokens, "viridis", o));
  o.max_cells = 300 * 299;
  std::string out = "x";
  const Status st = HeatmapSvgString(w, tokens, tokens, "viridis", o, &out);
  EXPECT_EQ(st.message.substr(0, 66), "svg: a 300 x 300 map has 90000 cells, over the limit of 89700 (abo");
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(HeatmapSvg(w, tokens, tokens, "viridis", o), "");
  // a write error stops the stream
  o.max_cells = 1 << 20;
  EXPECT_EQ(WriteHeatmapSvg(w, tokens, tokens, "greys", o, [](const char*, size_t) { return false; }).message,
            "svg: write error");
}

// ---- attend -------------------------------------------------------------------------------

TEST(HostileAttend, QueryTimesKeyIsLimited) {
  MatrixRM q = MatrixRM::Zero(65536, 1), k = MatrixRM::Zero(65536, 1), v = MatrixRM::Zero(65536, 1);
  AttentionParams p;
  AttentionResult r;
  const Status st = Attend(q, k, v, p, &r);
  ASSERT_FALSE(st.ok);
  EXPECT_EQ(st.message, "attention of 65536 queries over 65536 keys needs 4294967296 weights, over the limit of " +
                            std::to_string(kMaxAttentionCells));
  MatrixRM s;
  EXPECT_FALSE(Scores(q, k, p, &s).ok);
  MultiHeadParams mp;
  mp.num_heads = 4;
  MatrixRM q4 = MatrixRM::Zero(4096, 4), k4 = MatrixRM::Zero(8192, 4);
  mp.in_proj_weight = MatrixRM::Zero(12, 4);
  mp.out_proj_weight = MatrixRM::Zero(4, 4);
  MultiHeadResult mr;
  const Status st2 = MultiHeadAttention(q4, k4, k4, mp, &mr);
  EXPECT_EQ(st2.message,
            "attention of 4096 queries over 8192 keys with 4 heads needs 134217728 weights, over the "
            "limit of " +
                std::to_string(kMaxAttentionCells));
  p.max_cells = 100;
  MatrixRM q2 = MatrixRM::Constant(10, 3, 0.5f), k2 = MatrixRM::Constant(11, 3, 0.25f);
  EXPECT_FALSE(Attend(q2, k2, k2, p, &r).ok);
  p.max_cells = 110;
  EXPECT_TRUE(Attend(q2, k2, k2, p, &r).ok);
}

// ---- printing, sizes, files ---------------------------------------------------------------

TEST(HostileText, TerminalEscapesAreShownNotRun) {
  const std::string title = "a\x1b]0;pwned\x07\x1b[2Jb";
  const std::string p = PrintableText(title);
  EXPECT_EQ(p, "a\\x1b]0;pwned\\x07\\x1b[2Jb");
  for (char c : p) EXPECT_GE((unsigned char)c, 0x20);
  EXPECT_EQ(PrintableText("\xC2\x9B"
                          "31m"),
            "\\u009b31m");  // C1 CSI
  EXPECT_EQ(PrintableText("abc\xE2\x80\xAE"
                          "fdp.exe"),
            "abc\\u202efdp.exe");  // right-to-left override
  EXPECT_EQ(PrintableText("\xff\xfe ok \"q\" \\"), "\\xff\\xfe ok \\\"q\\\" \\\\");
  EXPECT_EQ(PrintableText("h\xC3\xA9llo \xE2\x96\x81the"), "h\xC3\xA9llo \xE2\x96\x81the");  // UTF-8 kept
  EXPECT_EQ(PrintableText(std::string(1000, 'x'), 10), std::string(10, 'x') + "\xE2\x80\xA6(1000 bytes)");
}

TEST(HostileText, ByteSizes) {
  uint64_t b = 0;
  EXPECT_TRUE(ParseByteSize("512M", &b));
  EXPECT_EQ(b, uint64_t(512) << 20);
  EXPECT_TRUE(ParseByteSize("1.5GiB", &b));
  EXPECT_EQ(b, uint64_t(3) << 29);
  EXPECT_TRUE(ParseByteSize("4096", &b));
  EXPECT_EQ(b, 4096u);
  EXPECT_TRUE(ParseByteSize("64kb", &b));
  EXPECT_EQ(b, 65536u);
  for (const char* bad : {"", "0", "-1G", "1X", "G", "nan", "1e30"}) EXPECT_FALSE(ParseByteSize(bad, &b)) << bad;
  EXPECT_EQ(FormatByteSize(uint64_t(1) << 30), "1 GiB");
  EXPECT_EQ(FormatByteSize(1536), "1536 bytes");
  // At a glance (the sidebar's CACHE section, inspect): one decimal past bytes.
  EXPECT_EQ(FormatApproxByteSize(40456448), "38.6 MiB");
  EXPECT_EQ(FormatApproxByteSize(900), "900 bytes");
  EXPECT_EQ(FormatApproxByteSize(uint64_t(3) << 29), "1.5 GiB");
}

TEST(HostileText, FilesAboveTheBudgetAreNotRead) {
  const std::string path = ::testing::TempDir() + "attnviz_hostile_budget.bin";
  std::vector<uint8_t> bytes(5000, 1);
  ASSERT_TRUE(WriteFileBytes(path, bytes.data(), bytes.size()).ok);
  const uint64_t saved = DefaultMemoryBudget();
  SetDefaultMemoryBudget(4096);
  std::vector<uint8_t> back;
  const Status st = ReadFileBytes(path, &back);
  SetDefaultMemoryBudget(saved);
  EXPECT_TRUE(Contains(st.message, "is 5000 bytes, over the limit of 4 KiB")) << st.message;
  ASSERT_TRUE(ReadFileBytes(path, &back).ok);
  EXPECT_EQ(back, bytes);
  std::remove(path.c_str());
}

TEST(HostileText, FileSinkRemovesPartialFiles) {
  const std::string path = ::testing::TempDir() + "attnviz_hostile_sink.svg";
  {
    FileSink sink;
    ASSERT_TRUE(sink.Open(path).ok);
    EXPECT_TRUE(sink.Write("abc", 3));
  }  // not closed: an error happened on the way
  std::vector<uint8_t> back;
  EXPECT_FALSE(ReadFileBytes(path, &back).ok);
  FileSink sink;
  ASSERT_TRUE(sink.Open(path).ok);
  EXPECT_TRUE(sink.Write("abc", 3));
  ASSERT_TRUE(sink.Close().ok);
  ASSERT_TRUE(ReadFileBytes(path, &back).ok);
  EXPECT_EQ(std::string(back.begin(), back.end()), "abc");
  std::remove(path.c_str());
}

}  // namespace
