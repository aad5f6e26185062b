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

#include "io/attention_handover.h"
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
  // Over the limit (an .npz from a server without Range requests): the ways it is read lazily.
  const uint8_t zip[8] = {'P', 'K', 3, 4, 20, 0, 0, 0};
  AttentionLoader npz, npy;
  ASSERT_TRUE(npz.Begin(uint64_t(3) << 30).ok);
  const std::string said = npz.Feed(zip, sizeof(zip)).message;
  EXPECT_NE(said.find("the file is 3.0 GiB, over the limit"), std::string::npos) << said;
  EXPECT_NE(said.find("served with Range requests"), std::string::npos) << said;
  ASSERT_TRUE(npy.Begin(uint64_t(3) << 30).ok);
  const uint8_t text[8] = {'{', '"', 'a', '"', ':', ' ', '1', '}'};
  EXPECT_EQ(npy.Feed(text, sizeof(text)).message.find("Range"), std::string::npos);
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

// ---- the load worker's handover (io/attention_handover.h) ----------------------------------------

MatrixRM Random(int r, int c, std::mt19937* rng) {
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  MatrixRM m(r, c);
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = u(*rng);
  return m;
}

// Two sets (a self-attention encoder with queries and keys, a cross set), a tokenizer, meta, warnings.
AttentionDocument RichDocument() {
  std::mt19937 rng(7);
  AttentionDocument d;
  d.version = 2;
  d.tokenizer.space_marker = "\xe2\x96\x81";
  d.tokenizer.special_tokens = {"[CLS]", "[SEP]"};
  d.meta.type = JsonType::Object;
  d.meta.members.push_back({"model", JsonValue::MakeString("marian \xe6\x97\xa5\xe6\x9c\xac")});
  d.warnings = {"encoder: a warning"};
  AttentionSet enc;
  enc.name = "encoder";
  enc.kind = AttentionKind::Self;
  enc.data.self_attention = true;
  enc.data.source_tokens = enc.data.target_tokens = {"[CLS]", "\xd9\x85\xd8\xb1\xd8\xad\xd8\xa8\xd8\xa7", "[SEP]"};
  for (int l = 0; l < 2; ++l) {
    AttentionFile::Layer layer;
    layer.name = "enc." + std::to_string(l);
    for (int h = 0; h < 3; ++h) {
      AttentionFile::Head head;
      head.name = "head " + std::to_string(h);
      head.weights = Random(3, 3, &rng);
      if (l == 1) head.q = Random(3, 4, &rng), head.k = Random(3, 4, &rng);
      layer.heads.push_back(head);
    }
    enc.data.layers.push_back(layer);
  }
  AttentionSet cross;
  cross.name = "cross";
  cross.kind = AttentionKind::Cross;
  cross.data.source_tokens = {"a", "b", "c", "d", "e"};
  cross.data.target_tokens = {"x", "y"};
  cross.data.warnings = {"cross: rows do not sum to 1"};
  cross.data.meta = JsonValue::MakeNumber(3);
  AttentionFile::Layer layer;
  layer.name = "cross.0";
  layer.heads.push_back({"head 0", Random(2, 5, &rng)});
  cross.data.layers.push_back(layer);
  d.sets = {enc, cross};
  return d;
}

std::vector<uint8_t> Handover(const AttentionDocument& d) {
  const std::string head = HandoverHead(d);
  std::vector<uint8_t> out(head.begin(), head.end());
  for (const HandoverBlock& b : HandoverBlocks(d)) {
    const uint8_t* p = (const uint8_t*)b.data;
    out.insert(out.end(), p, p + b.count * sizeof(float));
  }
  const std::string trailer = HandoverTrailer(d);
  out.insert(out.end(), trailer.begin(), trailer.end());
  EXPECT_EQ(out.size(), HandoverSize(d));
  return out;
}

Status Receive(const std::vector<uint8_t>& bytes, size_t piece, AttentionDocument* out, uint64_t* memory = nullptr) {
  AttentionLoader loader;
  Status st = loader.BeginHandover();
  for (size_t at = 0; st.ok && at < bytes.size(); at += piece) {
    st = loader.Feed(bytes.data() + at, std::min(piece, bytes.size() - at));
    if (memory) *memory = std::max(*memory, loader.MemoryBytes());
  }
  return st.ok ? loader.Finish(out) : st;
}

TEST(Handover, TheDocumentArrivesWholeInPiecesOfAnySize) {
  const AttentionDocument d = RichDocument();
  const std::vector<uint8_t> bytes = Handover(d);
  for (size_t piece : {(size_t)1, (size_t)3, (size_t)7, (size_t)61, bytes.size()}) {
    AttentionDocument got;
    const Status st = Receive(bytes, piece, &got);
    ASSERT_TRUE(st.ok) << st.message;
    Loaded a, b;
    a.doc = d;
    b.doc = got;
    ExpectSame(a, b, "handover in pieces of " + std::to_string(piece));
    EXPECT_EQ(got.tokenizer.space_marker, d.tokenizer.space_marker);
    EXPECT_EQ(got.tokenizer.special_tokens, d.tokenizer.special_tokens);
    EXPECT_EQ(SerializeJson(got.meta), SerializeJson(d.meta));
    EXPECT_EQ(SerializeJson(got.sets[1].data.meta), "3");
    EXPECT_EQ(got.sets[1].data.warnings, d.sets[1].data.warnings);
    EXPECT_TRUE(got.sets[0].data.self_attention);
    EXPECT_FALSE(got.sets[1].data.self_attention);
    const AttentionFile::Head &x = got.sets[0].data.layers[1].heads[2], &y = d.sets[0].data.layers[1].heads[2];
    EXPECT_TRUE(x.q == y.q && x.k == y.k);
    EXPECT_EQ(got.sets[0].data.layers[0].heads[0].q.size(), 0);
  }
}

// What the load worker does with a bare .npy: the skeleton once the header is in, each head once
// it is complete, the trailer at the end; the receiver's document is the whole read's, warnings too.
TEST(Handover, ANpyIsHandedOverHeadByHeadAsItStreams) {
  std::mt19937 rng(3);
  NdArray a = Attention({2, 3, 16, 24}, &rng);
  float bad;  // a row that does not sum to 1: a warning known only at the end
  std::memcpy(&bad, a.data.data() + 4 * 1000, 4);
  bad += 0.5f;
  std::memcpy(a.data.data() + 4 * 1000, &bad, 4);
  const std::vector<uint8_t> file = Npy(a);
  const Loaded whole = Whole(file);
  ASSERT_TRUE(whole.status.ok);
  AttentionLoader sender;
  ASSERT_TRUE(sender.Begin(file.size()).ok);
  std::vector<uint8_t> sent;
  int64_t heads_sent = 0;
  size_t sent_while_streaming = 0;
  for (size_t at = 0; at < file.size(); at += 1000) {
    ASSERT_TRUE(sender.Feed(file.data() + at, std::min<size_t>(1000, file.size() - at)).ok);
    ASSERT_TRUE(sender.streaming());
    if (sent.empty()) {
      const std::string head = sender.StreamHandoverHead();
      ASSERT_FALSE(head.empty());
      sent.assign(head.begin(), head.end());
    }
    for (; heads_sent < sender.StreamedHeads(); ++heads_sent) {
      const uint8_t* p = (const uint8_t*)sender.StreamedHead(heads_sent);
      sent.insert(sent.end(), p, p + sender.StreamHeadSize() * 4);
    }
    sent_while_streaming = sent.size();
  }
  std::vector<const float*> addresses;
  for (int64_t i = 0; i < 6; ++i) addresses.push_back(sender.StreamedHead(i));
  AttentionDocument doc;
  ASSERT_TRUE(sender.Finish(&doc).ok);
  EXPECT_EQ(doc.sets[0].data.layers[1].heads[2].weights.data(), addresses[5]);  // kept their addresses
  const std::string trailer = HandoverTrailer(doc);
  EXPECT_EQ(sent_while_streaming, HandoverSize(doc) - trailer.size());  // every head went before the end
  sent.insert(sent.end(), trailer.begin(), trailer.end());
  Loaded got;
  got.status = Receive(sent, 777, &got.doc);
  ExpectSame(whole, got, "a .npy handed over as it streams");
  EXPECT_EQ(got.doc.warnings.size(), 3u);  // no source tokens, no target tokens, the row sum
}

// The page copies a matrix's bytes straight where they go (HandoverRoom/HandoverAdvance), the rest
// through Feed: the same document.
TEST(Handover, BytesCopiedStraightIntoTheMatricesGiveTheSameDocument) {
  const AttentionDocument d = RichDocument();
  const std::vector<uint8_t> bytes = Handover(d);
  AttentionLoader loader;
  ASSERT_TRUE(loader.BeginHandover().ok);
  size_t direct = 0;
  for (size_t at = 0; at < bytes.size();) {
    uint8_t* dst = nullptr;
    const size_t room = loader.HandoverRoom(&dst);
    const size_t n = std::min<size_t>(room ? room : 5, std::min<size_t>(13, bytes.size() - at));
    if (room) {
      std::memcpy(dst, bytes.data() + at, n);
      ASSERT_TRUE(loader.HandoverAdvance(n).ok);
      direct += n;
    } else {
      ASSERT_TRUE(loader.Feed(bytes.data() + at, n).ok);
    }
    at += n;
  }
  EXPECT_EQ(direct, HandoverSize(d) - HandoverHead(d).size() - HandoverTrailer(d).size());  // every float
  uint8_t* dst = nullptr;
  EXPECT_EQ(loader.HandoverRoom(&dst), 0u);
  EXPECT_FALSE(loader.HandoverAdvance(4).ok);  // no matrix left to advance into
  Loaded a, b;
  a.doc = d;
  AttentionLoader again;
  ASSERT_TRUE(again.BeginHandover().ok);
  for (size_t at = 0; at < bytes.size();) {
    uint8_t* p = nullptr;
    const size_t room = again.HandoverRoom(&p);
    const size_t n = std::min<size_t>(room ? room : 7, bytes.size() - at);
    if (room) {
      std::memcpy(p, bytes.data() + at, n);
      ASSERT_TRUE(again.HandoverAdvance(n).ok);
    } else {
      ASSERT_TRUE(again.Feed(bytes.data() + at, n).ok);
    }
    at += n;
  }
  ASSERT_TRUE(again.Finish(&b.doc).ok);
  ExpectSame(a, b, "copied straight in");
}

// A little-endian float32 .npy: the load worker passes the file's own bytes on and only checks each
// head (one head's memory); tiny negatives its checks clamp are named in the trailer and clamped by
// the receiver. The document is the whole read's. A float16 one keeps its decoded heads instead.
TEST(Handover, AFloat32NpyIsPassedOnAsItIsAndCheckedInOneHeadsMemory) {
  std::mt19937 rng(9);
  NdArray a = Attention({2, 2, 32, 32}, &rng);
  const float tiny = -5e-7f;  // rounding noise: clamped to 0 by the reader
  std::memcpy(a.data.data() + 4 * (3 * 1024 + 77), &tiny, 4);
  const std::vector<uint8_t> file = Npy(a);
  const Loaded whole = Whole(file);
  ASSERT_TRUE(whole.status.ok) << whole.status.message;
  AttentionLoader sender;
  sender.ForwardRawFloats();
  ASSERT_TRUE(sender.Begin(file.size()).ok);
  ASSERT_TRUE(sender.Feed(file.data(), 700).ok);
  ASSERT_GE(sender.RawDataOffset(), 0);
  EXPECT_EQ(sender.StreamedHead(0), nullptr);
  EXPECT_EQ(sender.MemoryBytes(), 32u * 32u * 4u);  // one head's scratch, not the file's weights
  const std::string head = sender.StreamHandoverHead();
  ASSERT_TRUE(sender.Feed(file.data() + 700, file.size() - 700).ok);
  EXPECT_EQ(sender.ClampedHeads(), std::vector<int64_t>{3});
  const std::vector<int64_t> clamped = sender.ClampedHeads();
  const size_t offset = (size_t)sender.RawDataOffset();
  AttentionDocument doc;
  ASSERT_TRUE(sender.Finish(&doc).ok);
  std::vector<uint8_t> sent(head.begin(), head.end());
  sent.insert(sent.end(), file.begin() + (std::ptrdiff_t)offset, file.end());
  const std::string trailer = HandoverTrailer(doc, clamped);
  sent.insert(sent.end(), trailer.begin(), trailer.end());
  Loaded got;
  got.status = Receive(sent, 4096, &got.doc);
  ExpectSame(whole, got, "a float32 .npy passed on as it is");
  EXPECT_EQ(got.doc.sets[0].data.layers[1].heads[1].weights(2, 13), 0.0f);  // clamped, as the whole read does

  AttentionLoader f16;
  f16.ForwardRawFloats();
  const std::vector<uint8_t> half = Npy(Retype(a, DType::Float16));
  ASSERT_TRUE(f16.Begin(half.size()).ok);
  ASSERT_TRUE(f16.Feed(half.data(), half.size()).ok);
  EXPECT_EQ(f16.RawDataOffset(), -1);
  EXPECT_NE(f16.StreamedHead(0), nullptr);
}

TEST(Handover, AFileThatLooksLikeAHandoverIsNotTakenForOne) {
  // Only the viewer's own load worker hands documents over: a stranger's file with the magic is not one.
  const std::vector<uint8_t> bytes = Handover(RichDocument());
  const Loaded r = Pieces(bytes, 4096);
  EXPECT_FALSE(r.status.ok);
}

std::vector<uint8_t> WithSkeleton(const std::vector<uint8_t>& bytes, const std::string& from, const std::string& to) {
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | bytes[16 + (size_t)i];
  std::string sk(bytes.begin() + 24, bytes.begin() + 24 + (std::ptrdiff_t)n);
  const size_t at = sk.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  sk.replace(at, from.size(), to);
  std::vector<uint8_t> out(bytes.begin(), bytes.begin() + 16);
  for (int i = 0; i < 8; ++i) out.push_back((uint8_t)((uint64_t)sk.size() >> (8 * i)));
  out.insert(out.end(), sk.begin(), sk.end());
  out.insert(out.end(), bytes.begin() + 24 + (std::ptrdiff_t)n, bytes.end());
  return out;
}

TEST(Handover, LiesAndShortStreamsGiveMessagesNotCrashes) {
  const std::vector<uint8_t> good = Handover(RichDocument());
  AttentionDocument doc;
  std::vector<uint8_t> bad = good;
  bad[3] ^= 1;
  EXPECT_NE(Receive(bad, 64, &doc).message.find("not a handover"), std::string::npos);
  const std::vector<uint8_t> cut(good.begin(), good.end() - 5);
  EXPECT_NE(Receive(cut, 64, &doc).message.find("ended before"), std::string::npos);
  const size_t trailer = HandoverTrailer(RichDocument()).size();
  const std::vector<uint8_t> cut_data(good.begin(), good.end() - (std::ptrdiff_t)trailer - 10);
  EXPECT_NE(Receive(cut_data, 64, &doc).message.find("ended inside the matrices"), std::string::npos);
  std::vector<uint8_t> more = good;
  more.push_back(0);
  EXPECT_NE(Receive(more, 64, &doc).message.find("more bytes"), std::string::npos);
  // A shape that does not match the tokens; a missing key; a kind that does not exist; broken JSON.
  EXPECT_NE(Receive(WithSkeleton(good, "[2,5]", "[2,4]"), 64, &doc).message.find("does not match"), std::string::npos);
  EXPECT_NE(Receive(WithSkeleton(good, "\"kind\":\"cross\"", "\"kind\":\"sideways\""), 64, &doc).message.find("kind"),
            std::string::npos);
  EXPECT_NE(Receive(WithSkeleton(good, "\"query_tokens\"", "\"q_tokens\""), 64, &doc).message.find("query_tokens"),
            std::string::npos);
  EXPECT_FALSE(Receive(WithSkeleton(good, "{", "["), 64, &doc).ok);
  // Keys wider than their queries: matrices are sized when their floats arrive, so the widths are
  // checked from the skeleton alone.
  EXPECT_NE(Receive(WithSkeleton(good, "\"k\":[3,4]", "\"k\":[3,5]"), 64, &doc).message.find("do not match its tokens"),
            std::string::npos);
  // A skeleton that asks for 64 Gi weights: refused before anything is allocated.
  uint64_t memory = 0;
  const std::vector<uint8_t> huge = WithSkeleton(good, "[2,5]", "[65536,65536]");
  const Status st = Receive(huge, 4096, &doc, &memory);
  EXPECT_FALSE(st.ok);
  EXPECT_LT(memory, 1u << 20) << st.message;
  // Random bytes of the skeleton changed, 2000 times: a document or a message, never a crash.
  std::mt19937 rng(5);
  int refused = 0;
  for (int i = 0; i < 2000; ++i) {
    std::vector<uint8_t> m = good;
    for (int k = 0; k < 3; ++k) m[std::uniform_int_distribution<size_t>(0, 400)(rng)] = (uint8_t)rng();
    refused += !Receive(m, 97, &doc).ok;
  }
  EXPECT_GT(refused, 1000);
  // Every prefix of a good stream: an error at Finish, never a crash.
  for (size_t n = 0; n < good.size(); n += 13) {
    const std::vector<uint8_t> part(good.begin(), good.begin() + (std::ptrdiff_t)n);
    EXPECT_FALSE(Receive(part, 5, &doc).ok) << n;
  }
}

}  // namespace
