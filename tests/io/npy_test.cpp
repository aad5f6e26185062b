// NPY / NPZ / ZIP tests: fixtures written by numpy (tests/io/make_npy_fixtures.py, values in
// data/manifest.txt), round trips through our writer, and corrupted inputs.
#include "io/npy.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>

#include "io/byte_source.h"
#include "io/file_util.h"
#include "io/npz.h"
#include "io/zip.h"

using namespace attnviz;

namespace {

std::string DataPath(const std::string& name) {
  return std::string(ATTNVIZ_SOURCE_DIR) + "/tests/io/data/" + name;
}

std::vector<uint8_t> ReadData(const std::string& name) {
  std::vector<uint8_t> bytes;
  Status st = ReadFileBytes(DataPath(name), &bytes);
  EXPECT_TRUE(st.ok) << st.message;
  return bytes;
}

std::string FromHex(const std::string& hex) {
  if (hex == "-") return "";
  std::string s;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) s.push_back((char)std::strtol(hex.substr(i, 2).c_str(), nullptr, 16));
  return s;
}

struct ManifestLine {
  std::string file, member, dtype;
  std::vector<int64_t> shape;
  std::vector<std::string> values;
};

std::vector<ManifestLine> ReadManifest() {
  std::vector<uint8_t> bytes = ReadData("manifest.txt");
  std::istringstream in(std::string(bytes.begin(), bytes.end()));
  std::vector<ManifestLine> lines;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::istringstream ls(line);
    ManifestLine m;
    std::string key, shape;
    ls >> key >> m.dtype >> shape;
    size_t colon = key.find(':');
    m.file = key.substr(0, colon);
    if (colon != std::string::npos) m.member = key.substr(colon + 1);
    if (shape != "-") {
      std::istringstream ss(shape);
      std::string d;
      while (std::getline(ss, d, ',')) m.shape.push_back(std::atoll(d.c_str()));
    }
    std::string v;
    while (ls >> v) m.values.push_back(v);
    lines.push_back(m);
  }
  return lines;
}

// Compares an array with its manifest line; numeric values must match exactly (numpy printed
// the stored value with repr, which round-trips doubles).
void ExpectMatches(const NdArray& a, const ManifestLine& m) {
  SCOPED_TRACE(m.file + ":" + m.member);
  EXPECT_EQ(DTypeName(a.dtype), m.dtype);
  EXPECT_EQ(a.shape, m.shape);
  ASSERT_EQ((size_t)a.Numel(), m.values.size());
  if (a.dtype == DType::Unicode || a.dtype == DType::Bytes) {
    std::vector<std::string> strings;
    ASSERT_TRUE(ToStrings(a, &strings).ok);
    for (size_t i = 0; i < strings.size(); ++i) EXPECT_EQ(strings[i], FromHex(m.values[i])) << "element " << i;
    return;
  }
  double max_err = 0;
  for (size_t i = 0; i < m.values.size(); ++i) {
    const double want = std::strtod(m.values[i].c_str(), nullptr);
    const double got = a.GetDouble((int64_t)i);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << "element " << i;
    } else if (std::isinf(want)) {
      EXPECT_EQ(got, want) << "element " << i;
    } else {
      max_err = std::max(max_err, std::fabs(got - want));
    }
  }
  std::printf("  %-28s %-8s %-10s max |err| = %.3g\n", (m.file + (m.member.empty() ? "" : ":" + m.member)).c_str(),
              m.dtype.c_str(), a.ShapeString().c_str(), max_err);
  EXPECT_EQ(max_err, 0.0);
}

}  // namespace

TEST(Npy, EveryNumpyFixtureMatchesItsManifest) {
  std::vector<ManifestLine> manifest = ReadManifest();
  ASSERT_GE(manifest.size(), 30u);
  int npy = 0, npz = 0;
  for (const ManifestLine& m : manifest) {
    std::vector<uint8_t> bytes = ReadData(m.file);
    if (m.member.empty()) {
      NdArray a;
      Status st = ParseNpy(bytes.data(), bytes.size(), &a);
      ASSERT_TRUE(st.ok) << m.file << ": " << st.message;
      ExpectMatches(a, m);
      ++npy;
    } else {
      NpzFile z;
      Status st = ParseNpz(bytes.data(), bytes.size(), &z);
      ASSERT_TRUE(st.ok) << m.file << ": " << st.message;
      const NdArray* a = z.Find(m.member);
      ASSERT_NE(a, nullptr) << m.member;
      ExpectMatches(*a, m);
      ++npz;
    }
  }
  std::printf("checked %d .npy fixtures and %d .npz members\n", npy, npz);
}

TEST(Npy, Float16ConversionEdgeCases) {
  EXPECT_EQ(HalfToFloat(0x3c00), 1.0f);
  EXPECT_EQ(HalfToFloat(0xc000), -2.0f);
  EXPECT_EQ(HalfToFloat(0x7bff), 65504.0f);
  EXPECT_EQ(HalfToFloat(0x0001), std::ldexp(1.0f, -24));  // smallest subnormal
  EXPECT_TRUE(std::isinf(HalfToFloat(0x7c00)));
  EXPECT_TRUE(std::isnan(HalfToFloat(0x7e00)));
  EXPECT_TRUE(std::signbit(HalfToFloat(0x8000)));
}

TEST(Npy, FortranOrderIsConvertedToCOrder) {
  std::vector<uint8_t> c = ReadData("v1_f4_c.npy"), f = ReadData("v1_f4_fortran.npy");
  NdArray a, b;
  ASSERT_TRUE(ParseNpy(c.data(), c.size(), &a).ok);
  ASSERT_TRUE(ParseNpy(f.data(), f.size(), &b).ok);
  EXPECT_NE(c, f);            // the files differ (header and element order) ...
  EXPECT_EQ(a.data, b.data);  // ... the arrays do not
  MatrixRM m;
  ASSERT_TRUE(ToMatrix(b, &m, "x", 3, 4).ok);
  EXPECT_EQ(m(1, 2), 0.75f);  // row 1, column 2 of arange(12)*0.375-1.5
}

TEST(Npy, RoundTripThroughOurWriter) {
  std::vector<ManifestLine> manifest = ReadManifest();
  int count = 0;
  for (const ManifestLine& m : manifest) {
    if (!m.member.empty()) continue;
    std::vector<uint8_t> bytes = ReadData(m.file), written;
    NdArray a, back;
    ASSERT_TRUE(ParseNpy(bytes.data(), bytes.size(), &a).ok);
    ASSERT_TRUE(WriteNpy(a, &written).ok);
    EXPECT_EQ(written.size() % 64, a.data.size() % 64) << "header is padded to 64 bytes";
    Status st = ParseNpy(written.data(), written.size(), &back);
    ASSERT_TRUE(st.ok) << m.file << ": " << st.message;
    EXPECT_EQ(back.shape, a.shape) << m.file;
    EXPECT_EQ(back.dtype, a.dtype) << m.file;
    EXPECT_EQ(back.data, a.data) << m.file;
    ++count;
  }
  // numpy-identical bytes for a plain C-order little-endian float32 file
  std::vector<uint8_t> original = ReadData("v1_f4_c.npy"), written;
  NdArray a;
  ASSERT_TRUE(ParseNpy(original.data(), original.size(), &a).ok);
  ASSERT_TRUE(WriteNpy(a, &written).ok);
  EXPECT_EQ(written, original);
  std::printf("round-tripped %d arrays\n", count);
}

// save-npy writes a map's weights without an NdArray copy of them (a 4096^2 head is 64 MB): the
// same bytes as through FromMatrix, numpy's for the file above.
TEST(Npy, AMatrixIsWrittenAsItsNdArrayIs) {
  std::vector<uint8_t> original = ReadData("v1_f4_c.npy"), written, via_array;
  NdArray a;
  MatrixRM m;
  ASSERT_TRUE(ParseNpy(original.data(), original.size(), &a).ok);
  ASSERT_TRUE(ToMatrix(a, &m).ok);
  ASSERT_TRUE(WriteNpyMatrix(m, &written).ok);
  EXPECT_EQ(written, original);
  MatrixRM big = MatrixRM::Random(300, 517);
  ASSERT_TRUE(WriteNpyMatrix(big, &written).ok);
  ASSERT_TRUE(WriteNpy(FromMatrix(big), &via_array).ok);
  EXPECT_EQ(written, via_array);
}

TEST(Npy, ConvertersCheckShapeAndDtype) {
  std::vector<uint8_t> bytes = ReadData("v1_f4_c.npy");
  NdArray a;
  ASSERT_TRUE(ParseNpy(bytes.data(), bytes.size(), &a).ok);
  MatrixRM m;
  Status st = ToMatrix(a, &m, "query", 4, 3);
  EXPECT_FALSE(st.ok);
  EXPECT_NE(st.message.find("query: expected shape (4, 3), got (3, 4)"), std::string::npos) << st.message;
  VectorF v;
  EXPECT_FALSE(ToVector(a, &v, "v").ok);
  std::vector<std::string> s;
  EXPECT_FALSE(ToStrings(a, &s).ok);
  std::vector<uint8_t> mask;
  EXPECT_FALSE(ToMaskBytes(a, &mask).ok);  // floats are not masks
  std::vector<uint8_t> nb = ReadData("nan_f4.npy");
  NdArray n;
  ASSERT_TRUE(ParseNpy(nb.data(), nb.size(), &n).ok);
  int64_t first = -1;
  EXPECT_EQ(CountNonFinite(n, &first), 3);
  EXPECT_EQ(first, 1);
  EXPECT_EQ(CountNonFinite(a), 0);
  // FromStrings -> WriteNpy -> ParseNpy -> ToStrings keeps non-ASCII text.
  std::vector<std::string> words = {"a", "été", "\xF0\x9F\x98\x80", ""};
  std::vector<uint8_t> w;
  ASSERT_TRUE(WriteNpy(FromStrings(words), &w).ok);
  NdArray u;
  ASSERT_TRUE(ParseNpy(w.data(), w.size(), &u).ok);
  EXPECT_EQ(NpyDescr(u), "<U3");
  ASSERT_TRUE(ToStrings(u, &s).ok);
  EXPECT_EQ(s, words);
}

TEST(Npy, MalformedHeadersGiveClearErrors) {
  auto make = [](const std::string& header, size_t data_bytes) {
    std::vector<uint8_t> f = {
        0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (uint8_t)(header.size() & 0xff), (uint8_t)(header.size() >> 8)};
    f.insert(f.end(), header.begin(), header.end());
    f.resize(f.size() + data_bytes, 0);
    return f;
  };
  struct Case {
    std::string header;
    size_t bytes;
    const char* expect;
  };
  const Case cases[] = {
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }\n", 16, nullptr},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }\n", 15, "truncated data"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }\n", 17, "trailing bytes"},
      {"{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }\n", 16, "unsupported dtype '<c8'"},
      {"{'descr': '|O', 'fortran_order': False, 'shape': (2,), }\n", 16, "object arrays"},
      {"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }\n", 8, "structured dtypes"},
      {"{'descr': '<f4', 'fortran_order': maybe, 'shape': (2,), }\n", 8, "fortran_order must be True or False"},
      {"{'descr': '<f4', 'shape': (2,), }\n", 8, "needs 'descr', 'fortran_order' and 'shape'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, -1), }\n", 8, "malformed header"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (65536, 65536), }\n", 8, "more than 2^31 elements"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,2 }\n", 16, "malformed header"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'extra': 1}\n", 8, "unexpected key 'extra'"},
      {"['descr']\n", 8, "expected '{'"},
  };
  for (const Case& c : cases) {
    std::vector<uint8_t> f = make(c.header, c.bytes);
    NdArray a;
    Status st = ParseNpy(f.data(), f.size(), &a);
    if (!c.expect) {
      EXPECT_TRUE(st.ok) << st.message;
      continue;
    }
    EXPECT_FALSE(st.ok) << c.header;
    EXPECT_NE(st.message.find(c.expect), std::string::npos) << "got: " << st.message << "\nwant: " << c.expect;
  }
  const uint8_t not_npy[] = "hello world, no magic here";
  NdArray a;
  EXPECT_NE(ParseNpy(not_npy, sizeof(not_npy), &a).message.find("magic"), std::string::npos);
  std::vector<uint8_t> v9 = make("{}", 0);
  v9[6] = 9;
  EXPECT_NE(ParseNpy(v9.data(), v9.size(), &a).message.find("unsupported format version 9.0"), std::string::npos);
}

TEST(Npz, WriterRoundTripsStoredDeflateAndZip64) {
  std::vector<uint8_t> bytes = ReadData("savez.npz");
  NpzFile z;
  ASSERT_TRUE(ParseNpz(bytes.data(), bytes.size(), &z).ok);
  ASSERT_EQ(z.names.size(), 6u);
  for (int compressed = 0; compressed < 2; ++compressed) {
    for (int zip64 = 0; zip64 < 2; ++zip64) {
      NpzWriteOptions o;
      o.compressed = compressed;
      o.force_zip64 = zip64;
      std::vector<uint8_t> out;
      ASSERT_TRUE(WriteNpz(z, o, &out).ok);
      NpzFile back;
      Status st = ParseNpz(out.data(), out.size(), &back);
      ASSERT_TRUE(st.ok) << st.message;
      ASSERT_EQ(back.names, z.names);
      for (size_t i = 0; i < z.arrays.size(); ++i) {
        EXPECT_EQ(back.arrays[i].shape, z.arrays[i].shape);
        EXPECT_EQ(back.arrays[i].data, z.arrays[i].data) << z.names[i];
      }
      std::vector<ZipEntry> entries;
      ASSERT_TRUE(ZipList(out.data(), out.size(), &entries).ok);
      for (const ZipEntry& e : entries) EXPECT_EQ(e.method, compressed ? 8 : 0);
      const bool has_end64 =
          std::string(out.begin(), out.end()).find(std::string("PK\x06\x06", 4)) != std::string::npos;
      EXPECT_EQ(has_end64, (bool)zip64);
      std::printf("  npz compressed=%d zip64=%d: %zu bytes\n", compressed, zip64, out.size());
    }
  }
}

TEST(Npz, ListsNumpyMembersWithZip64LocalExtras) {
  for (const char* f : {"savez.npz", "savez_compressed.npz", "zip64.npz", "zip64_compressed.npz"}) {
    std::vector<uint8_t> bytes = ReadData(f);
    std::vector<ZipEntry> entries;
    Status st = ZipList(bytes.data(), bytes.size(), &entries);
    ASSERT_TRUE(st.ok) << f << ": " << st.message;
    ASSERT_FALSE(entries.empty());
    const bool compressed = std::strstr(f, "compressed") != nullptr;
    for (const ZipEntry& e : entries) {
      EXPECT_EQ(e.method, compressed ? 8 : 0) << f << " " << e.name;
      if (compressed) {
        EXPECT_LT(e.compressed_size, e.uncompressed_size + 64) << e.name;
      }
    }
  }
}

TEST(Npz, DeflateBombAndBadMethodsAreRefused) {
  NpzFile z;
  std::vector<float> zeros(1 << 16, 0.0f);
  z.Add("big", FromFloats({(int64_t)zeros.size()}, zeros.data()));
  std::vector<uint8_t> out;
  NpzWriteOptions o;
  o.compressed = true;
  ASSERT_TRUE(WriteNpz(z, o, &out).ok);
  ZipReadOptions small;
  small.max_member_bytes = 1000;  // 256 KiB of zeros deflate to a few hundred bytes
  NpzFile back;
  Status st = ParseNpz(out.data(), out.size(), &back, small);
  EXPECT_FALSE(st.ok);
  EXPECT_NE(st.message.find("over the limit"), std::string::npos) << st.message;
  // Change the method to 12 (bzip2) in both headers.
  std::vector<uint8_t> bad = out;
  for (size_t i = 0; i + 4 <= bad.size(); ++i) {
    if (bad[i] == 'P' && bad[i + 1] == 'K' && bad[i + 2] == 3 && bad[i + 3] == 4) bad[i + 8] = 12;
    if (bad[i] == 'P' && bad[i + 1] == 'K' && bad[i + 2] == 1 && bad[i + 3] == 2) bad[i + 10] = 12;
  }
  st = ParseNpz(bad.data(), bad.size(), &back);
  EXPECT_FALSE(st.ok);
  EXPECT_NE(st.message.find("compression method 12"), std::string::npos) << st.message;
}

// Fuzz-ish: every truncation and many single-byte corruptions of real files must give either a
// clean error or (for bytes the format does not check, e.g. data values) a valid array.
TEST(Npz, ListingFromASourceGivesWhatListingInMemoryGives) {
  // ZipListSource reads only the end records, the directory and the local headers, a range at a time
  // (an .npz of tens of GB read lazily): on every numpy fixture, each truncation and each corrupted
  // byte, it gives the members ZipList gives, or the same message.
  int compared = 0;
  for (const char* f : {"savez.npz", "savez_compressed.npz", "zip64.npz", "zip64_compressed.npz"}) {
    const std::vector<uint8_t> good = ReadData(f);
    auto same = [&](const std::vector<uint8_t>& b, const std::string& what) {
      std::vector<ZipEntry> a, c;
      const Status sa = ZipList(b.data(), b.size(), &a);
      MemorySource source(b.data(), b.size());
      const Status sc = ZipListSource(&source, &c);
      ASSERT_EQ(sa.ok, sc.ok) << f << " " << what;
      ASSERT_EQ(sa.message, sc.message) << f << " " << what;
      ASSERT_EQ(a.size(), c.size()) << f << " " << what;
      for (size_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(a[i].name, c[i].name);
        EXPECT_EQ(a[i].data_offset, c[i].data_offset);
        EXPECT_EQ(a[i].compressed_size, c[i].compressed_size);
        EXPECT_EQ(a[i].crc32, c[i].crc32);
      }
      ++compared;
    };
    same(good, "whole");
    for (size_t len = 0; len < good.size(); len += 3) same({good.begin(), good.begin() + (long)len}, "cut");
    for (size_t pos = 0; pos < good.size(); ++pos) {
      std::vector<uint8_t> bad = good;
      bad[pos] ^= 0xA5;
      same(bad, "byte " + std::to_string(pos));
    }
  }
  EXPECT_GT(compared, 1000);
  // A source that fails says so, as it is.
  struct Failing : MemorySource {
    using MemorySource::MemorySource;
    Status Read(uint64_t, uint64_t, uint8_t*) override { return Status::Error("the disk is gone"); }
  };
  const std::vector<uint8_t> good = ReadData("savez.npz");
  Failing failing(good.data(), good.size());
  std::vector<ZipEntry> entries;
  EXPECT_EQ(ZipListSource(&failing, &entries).message, "the disk is gone");
}

TEST(Npz, TruncatedAndCorruptedFilesNeverCrash) {
  int errors = 0, accepted = 0;
  for (const char* f : {"savez.npz", "savez_compressed.npz", "zip64.npz", "zip64_compressed.npz", "v1_f2.npy",
                        "v2_f4.npy", "v1_5d_fortran.npy", "U_tokens.npy"}) {
    const std::vector<uint8_t> good = ReadData(f);
    const bool is_npz = std::strstr(f, ".npz") != nullptr;
    auto parse = [&](const std::vector<uint8_t>& b) {
      if (is_npz) {
        NpzFile z;
        return ParseNpz(b.data(), b.size(), &z);
      }
      NdArray a;
      return ParseNpy(b.data(), b.size(), &a);
    };
    for (size_t len = 0; len < good.size(); ++len) {
      std::vector<uint8_t> cut(good.begin(), good.begin() + len);
      Status st = parse(cut);
      EXPECT_FALSE(st.ok) << f << " truncated to " << len << " bytes was accepted";
      EXPECT_FALSE(st.message.empty());
      ++errors;
    }
    uint32_t rng = 12345;
    for (size_t pos = 0; pos < good.size(); ++pos) {
      for (uint8_t value : {(uint8_t)0x00, (uint8_t)0xFF, (uint8_t)(good[pos] ^ 0x5A)}) {
        std::vector<uint8_t> bad = good;
        bad[pos] = value;
        rng = rng * 1664525u + 1013904223u;
        bad[(rng >> 8) % bad.size()] ^= (uint8_t)(rng >> 24);  // plus a second random byte
        Status st = parse(bad);
        if (st.ok)
          ++accepted;
        else
          ++errors;
      }
    }
  }
  std::printf("corrupted inputs: %d clean errors, %d accepted (value bytes), 0 crashes\n", errors, accepted);
  EXPECT_GT(errors, 1000);
}
