// The eager loader (io/attention_loader.h): fed in pieces of every size, it must give exactly what
// LoadAttentionDocument gives for the whole file (document, warnings, messages), stream the plain
// .npy cases without holding a copy of the file, and fall back to the whole-file reader otherwise.
#include "io/attention_loader.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "io/file_util.h"
#include "io/ndarray.h"
#include "io/npy.h"
#include "io/safetensors.h"

using namespace attnviz;

namespace {

std::vector<uint8_t> Npy(const NdArray& a, bool big_endian = false) {
  std::vector<uint8_t> out;
  EXPECT_TRUE(WriteNpy(a, &out).ok);
  if (big_endian) {
    const std::string header(out.begin(), out.begin() + 128);
    const size_t at = header.find("'<");
    out[at + 1] = '>';
    const size_t data = out.size() - a.data.size();
    for (size_t i = data; i + (size_t)a.itemsize <= out.size(); i += (size_t)a.itemsize)
      std::reverse(out.begin() + (std::ptrdiff_t)i, out.begin() + (std::ptrdiff_t)(i + (size_t)a.itemsize));
  }
  return out;
}

// Softmax rows, [L, H, nq, nk] as a float32 array.
NdArray Attention(std::vector<int64_t> shape, std::mt19937* rng) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> v((size_t)n);
  std::uniform_real_distribution<float> u(0.0f, 3.0f);
  const int64_t nk = shape.back();
  for (int64_t r = 0; r < n / nk; ++r) {
    float sum = 0;
    for (int64_t c = 0; c < nk; ++c) sum += v[(size_t)(r * nk + c)] = std::exp(u(*rng));
    for (int64_t c = 0; c < nk; ++c) v[(size_t)(r * nk + c)] /= sum;
  }
  return FromFloats(shape, v.data());
}

NdArray Retype(const NdArray& f32, DType t) {
  NdArray a = f32;
  a.dtype = t;
  const int64_t n = f32.Numel();
  a.itemsize = t == DType::Float16 ? 2 : (t == DType::Float64 || t == DType::Int64 ? 8 : (t == DType::Bool ? 1 : 4));
  a.data.assign((size_t)(n * a.itemsize), 0);
  for (int64_t i = 0; i < n; ++i) {
    float x;
    std::memcpy(&x, f32.data.data() + 4 * i, 4);
    uint8_t* p = a.data.data() + i * a.itemsize;
    if (t == DType::Float16) {
      const uint16_t h = FloatToHalf(x);
      std::memcpy(p, &h, 2);
    } else if (t == DType::Float64) {
      const double d = x;
      std::memcpy(p, &d, 8);
    } else if (t == DType::Int32) {
      const int32_t k = x > 0.3f ? 1 : 0;
      std::memcpy(p, &k, 4);
    } else if (t == DType::Bool) {
      p[0] = x > 0.3f;
    }
  }
  return a;
}

struct Loaded {
  Status status;
  AttentionDocument doc;
  bool streamed = false;
};

Loaded Whole(const std::vector<uint8_t>& file) {
  Loaded r;
  r.status = LoadAttentionDocument(file.data(), file.size(), &r.doc);
  return r;
}

Loaded Pieces(const std::vector<uint8_t>& file, size_t piece, uint64_t declared = ~0ull) {
  Loaded r;
  AttentionLoader loader;
  r.status = loader.Begin(declared == ~0ull ? file.size() : declared);
  for (size_t at = 0; r.status.ok && at < file.size(); at += piece)
    r.status = loader.Feed(file.data() + at, std::min(piece, file.size() - at));
  r.streamed = loader.streaming();
  if (r.status.ok) r.status = loader.Finish(&r.doc);
  return r;
}

void ExpectSame(const Loaded& a, const Loaded& b, const std::string& what) {
  ASSERT_EQ(a.status.ok, b.status.ok) << what << ": " << a.status.message << " | " << b.status.message;
  EXPECT_EQ(a.status.message, b.status.message) << what;
  if (!a.status.ok) return;
  EXPECT_EQ(a.doc.version, b.doc.version) << what;
  EXPECT_EQ(a.doc.warnings, b.doc.warnings) << what;
  ASSERT_EQ(a.doc.sets.size(), b.doc.sets.size()) << what;
  for (size_t s = 0; s < a.doc.sets.size(); ++s) {
    const AttentionSet &x = a.doc.sets[s], &y = b.doc.sets[s];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.kind, y.kind);
    EXPECT_EQ(x.data.source_tokens, y.data.source_tokens);
    EXPECT_EQ(x.data.target_tokens, y.data.target_tokens);
    ASSERT_EQ(x.data.layers.size(), y.data.layers.size());
    for (size_t l = 0; l < x.data.layers.size(); ++l) {
      EXPECT_EQ(x.data.layers[l].name, y.data.layers[l].name);
      ASSERT_EQ(x.data.layers[l].heads.size(), y.data.layers[l].heads.size());
      for (size_t h = 0; h < x.data.layers[l].heads.size(); ++h) {
        EXPECT_EQ(x.data.layers[l].heads[h].name, y.data.layers[l].heads[h].name);
        EXPECT_TRUE(x.data.layers[l].heads[h].weights == y.data.layers[l].heads[h].weights) << what;
      }
    }
  }
}

void ExpectStreamsLikeAWholeRead(const std::vector<uint8_t>& file, const std::string& what, bool streams) {
  const Loaded whole = Whole(file);
  for (size_t piece : {(size_t)1, (size_t)3, (size_t)7, (size_t)4096, file.size()}) {
    const Loaded p = Pieces(file, piece);
    ExpectSame(whole, p, what + " in pieces of " + std::to_string(piece));
    if (whole.status.ok) {
      EXPECT_EQ(p.streamed, streams) << what;
    }
  }
}

TEST(AttentionLoader, PiecesGiveWhatAWholeReadGives) {
  std::mt19937 rng(5);
  const NdArray a4 = Attention({2, 3, 17, 19}, &rng);
  ExpectStreamsLikeAWholeRead(Npy(a4), "f4 [2,3,17,19]", true);
  ExpectStreamsLikeAWholeRead(Npy(Attention({3, 5, 7}, &rng)), "f4 [3,5,7]", true);
  ExpectStreamsLikeAWholeRead(Npy(Attention({6, 6}, &rng)), "f4 [6,6]", true);
  ExpectStreamsLikeAWholeRead(Npy(Retype(a4, DType::Float16)), "f2", true);
  ExpectStreamsLikeAWholeRead(Npy(Retype(a4, DType::Float64)), "f8", true);
  ExpectStreamsLikeAWholeRead(Npy(a4, true), ">f4", true);
  ExpectStreamsLikeAWholeRead(Npy(Retype(a4, DType::Float64), true), ">f8", true);
  ExpectStreamsLikeAWholeRead(Npy(Retype(a4, DType::Int32)), "i4 (rows do not sum to 1: warnings)", true);
  ExpectStreamsLikeAWholeRead(Npy(Retype(a4, DType::Bool)), "bool", true);
  // Fortran order, a 5-D array and strings go through the whole-file reader, with its messages.
  std::vector<uint8_t> fortran = Npy(Attention({4, 5}, &rng));
  const std::string header(fortran.begin(), fortran.begin() + 64);
  const size_t at = header.find("False");
  std::memcpy(fortran.data() + at, "True ", 5);
  ExpectStreamsLikeAWholeRead(fortran, "fortran", false);
  ExpectStreamsLikeAWholeRead(Npy(Attention({1, 2, 2, 3, 3}, &rng)), "5-D", false);
  ExpectStreamsLikeAWholeRead(Npy(FromStrings({"a", "b"})), "strings", false);
  // Other formats: JSON and NPZ.
  const std::string json = R"({"tokens": ["a", "b"], "weights": [[0.5, 0.5], [1, 0]]})";
  ExpectStreamsLikeAWholeRead(std::vector<uint8_t>(json.begin(), json.end()), "json", false);
  std::vector<uint8_t> npz;
  ASSERT_TRUE(ReadFileBytes(std::string(ATTNVIZ_SOURCE_DIR) + "/tests/io/data/attention_lhqk.npz", &npz).ok);
  ExpectStreamsLikeAWholeRead(npz, "npz", false);
}

TEST(AttentionLoader, BadFilesGiveTheSameMessages) {
  std::mt19937 rng(9);
  NdArray a = Attention({2, 2, 4, 4}, &rng);
  float nan = std::nanf(""), negative = -0.25f;
  std::memcpy(a.data.data() + 4 * 37, &nan, 4);
  ExpectStreamsLikeAWholeRead(Npy(a), "NaN", true);
  a = Attention({2, 2, 4, 4}, &rng);
  std::memcpy(a.data.data() + 4 * 50, &negative, 4);
  ExpectStreamsLikeAWholeRead(Npy(a), "negative", true);
  NdArray d = Retype(Attention({2, 3, 3}, &rng), DType::Float64);
  const double huge = 1e300;
  std::memcpy(d.data.data() + 8 * 11, &huge, 8);
  ExpectStreamsLikeAWholeRead(Npy(d), "beyond float32", true);
  std::vector<uint8_t> f = Npy(Attention({2, 3, 3}, &rng));
  std::vector<uint8_t> truncated(f.begin(), f.end() - 5);
  ExpectStreamsLikeAWholeRead(truncated, "truncated", true);
  std::vector<uint8_t> trailing = f;
  trailing.push_back(0);
  ExpectStreamsLikeAWholeRead(trailing, "trailing", true);
  std::vector<uint8_t> bad_header = f;
  bad_header[20] = '#';
  ExpectStreamsLikeAWholeRead(bad_header, "bad header", true);
  ExpectStreamsLikeAWholeRead({0x93, 'N', 'U'}, "tiny", true);
  // A file that ends before its declared size, or grows past it (a .npy's header already says so).
  EXPECT_NE(Pieces(f, 64, f.size() + 10).status.message.find("trailing bytes"), std::string::npos);
  const std::string json = R"({"tokens": ["a"], "weights": [[1]]})";
  const std::vector<uint8_t> j(json.begin(), json.end());
  Loaded early = Pieces(j, 8, j.size() + 10);
  EXPECT_FALSE(early.status.ok);
  EXPECT_NE(early.status.message.find("ended after"), std::string::npos) << early.status.message;
  Loaded grew = Pieces(j, 8, j.size() - 10);
  EXPECT_NE(grew.status.message.find("grew"), std::string::npos) << grew.status.message;
  AttentionLoader empty;
  EXPECT_NE(empty.Begin(0).message.find("empty"), std::string::npos);
}

TEST(AttentionLoader, StreamingHoldsTheWeightsAndOnePiece) {
  std::mt19937 rng(1);
  const NdArray a = Retype(Attention({4, 4, 64, 64}, &rng), DType::Float16);
  const std::vector<uint8_t> f = Npy(a);
  AttentionLoader loader;
  ASSERT_TRUE(loader.Begin(f.size()).ok);
  ASSERT_TRUE(loader.Feed(f.data(), f.size() / 2).ok);
  EXPECT_TRUE(loader.streaming());
  EXPECT_EQ(loader.MemoryBytes(), (uint64_t)a.Numel() * 4);  // the final matrices, no copy of the file
  EXPECT_EQ(loader.received(), f.size() / 2);
  ASSERT_TRUE(loader.Feed(f.data() + f.size() / 2, f.size() - f.size() / 2).ok);
  AttentionDocument doc;
  ASSERT_TRUE(loader.Finish(&doc).ok);
  EXPECT_EQ(doc.sets[0].data.layers.size(), 4u);
  EXPECT_EQ(loader.MemoryBytes(), 0u);
}

}  // namespace
