// Lazily read attention (io/lazy_attention.h): the attnviz safetensors layout written and read back
// through a file (mmap natively, pread in WASM), rows and overviews read alone, an asynchronous
// source driven by hand (completions in any order, errors, cancellation), the per-frame work bound,
// a file changed while open, the index's refusals, and a sparse 32 x 32 x 4096 x 4096 file, as
// safetensors and as a bare .npy array (read lazily when too big to read whole).
#include "io/lazy_attention.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "io/file_util.h"
#include "io/memory_budget.h"
#include "io/ndarray.h"
#include "io/npy.h"
#include "io/zip.h"
#include "limited_child.h"

using namespace attnviz;

namespace {

std::string TempPath(const std::string& name) {
  return testing::TempDir() + "attnviz_lazy_" + std::to_string(getpid()) + "_" + name +
         (sizeof(void*) == 8 ? "_64" : "_32") + ".safetensors";
}

MatrixRM RandomAttention(int64_t rows, int64_t cols, std::mt19937* rng) {
  std::uniform_real_distribution<float> u(0.0f, 4.0f);
  MatrixRM m(rows, cols);
  for (int64_t r = 0; r < rows; ++r) {
    float sum = 0;
    for (int64_t c = 0; c < cols; ++c) sum += m(r, c) = std::exp(u(*rng));
    m.row(r) /= sum;
  }
  return m;
}

std::vector<std::string> Tokens(const char* prefix, int n) {
  std::vector<std::string> t;
  for (int i = 0; i < n; ++i) t.push_back(std::string(prefix) + std::to_string(i));
  return t;
}

// Two sets: "encoder" (self, 2 layers x 3 heads, 5 tokens) and "cross" (1 layer x 2 heads, 4 x 5).
AttentionDocument SmallDocument() {
  std::mt19937 rng(7);
  AttentionDocument doc;
  doc.version = 2;
  doc.tokenizer.space_marker = "\xe2\x96\x81";
  doc.tokenizer.special_tokens = {"</s>"};
  doc.meta.type = JsonType::Object;
  doc.meta.members.push_back({"model", JsonValue::MakeString("tiny")});
  AttentionSet enc;
  enc.name = "encoder";
  enc.kind = AttentionKind::Self;
  enc.data.source_tokens = enc.data.target_tokens = Tokens("s", 5);
  enc.data.self_attention = true;
  for (int l = 0; l < 2; ++l) {
    AttentionFile::Layer layer{"enc." + std::to_string(l), {}};
    for (int h = 0; h < 3; ++h) layer.heads.push_back({"h" + std::to_string(h), RandomAttention(5, 5, &rng)});
    enc.data.layers.push_back(layer);
  }
  AttentionSet cross;
  cross.name = "cross";
  cross.kind = AttentionKind::Cross;
  cross.data.source_tokens = Tokens("s", 5);
  cross.data.target_tokens = Tokens("t", 4);
  cross.data.layers.push_back({"dec.0", {{"a", RandomAttention(4, 5, &rng)}, {"b", RandomAttention(4, 5, &rng)}}});
  doc.sets.push_back(enc);
  doc.sets.push_back(cross);
  return doc;
}

// One set, one layer of the given heads [n_q, n_k]: query tokens q0.., key tokens k0...
AttentionDocument OneLayer(const std::string& name, std::vector<MatrixRM> heads) {
  AttentionDocument doc;
  AttentionSet set;
  set.name = name;
  set.data.source_tokens = Tokens("k", (int)heads[0].cols());
  set.data.target_tokens = Tokens("q", (int)heads[0].rows());
  AttentionFile::Layer layer{"layer 0", {}};
  for (size_t h = 0; h < heads.size(); ++h) layer.heads.push_back({"h" + std::to_string(h), std::move(heads[h])});
  set.data.layers.push_back(std::move(layer));
  doc.sets.push_back(std::move(set));
  return doc;
}

float RoundHalf(float x) {
  return HalfToFloat(FloatToHalf(x));
}

Status OpenPath(const std::string& path, LazyAttentionFile* f) {
  std::unique_ptr<ByteSource> src;
  Status st = OpenFileSource(path, &src);
  if (!st) return st;
  std::vector<uint8_t> prefix;  // the whole header (a head of 300000 columns has 3 MB of tokens)
  if (!(st = ReadLazyPrefix(src.get(), &prefix))) return st;
  return f->Open(std::move(src), prefix.data(), prefix.size());
}

// Submits one request and pumps until it is done.
LazyResult Fetch(LazyAttentionFile* f, const LazyRequest& r) {
  const uint64_t t = f->Submit(r);
  LazyResult out;
  for (int i = 0; i < 100000; ++i) {
    if (f->PopResult(&out)) {
      EXPECT_EQ(out.ticket, t);
      return out;
    }
    f->Pump(50);
  }
  ADD_FAILURE() << "request never finished";
  return out;
}

LazyRequest Rows(int set, int layer, int head, int64_t r0, int64_t r1) {
  LazyRequest r;
  r.set = set, r.layer = layer, r.head = head, r.row0 = r0, r.row1 = r1;
  return r;
}

LazyRequest Overviews(int set, int layer, int h0, int h1) {
  LazyRequest r;
  r.set = set, r.layer = layer, r.head = h0, r.head_end = h1, r.overview = true;
  return r;
}

TEST(LazyAttention, WritesAndReadsTheAttnvizLayout) {
  const AttentionDocument doc = SmallDocument();
  const std::string path = TempPath("small");
  ASSERT_TRUE(WriteLazyAttention(doc, StDType::F16, path).ok);
  LazyAttentionFile f;
  Status st = OpenPath(path, &f);
  ASSERT_TRUE(st.ok) << st.message;
  const LazyAttentionIndex& ix = f.index();
  EXPECT_TRUE(ix.attnviz_layout);
  ASSERT_EQ(ix.sets.size(), 2u);
  EXPECT_EQ(ix.sets[0].name, "encoder");
  EXPECT_EQ(ix.sets[0].kind, AttentionKind::Self);
  EXPECT_TRUE(ix.sets[0].self_attention);
  EXPECT_EQ(ix.sets[1].kind, AttentionKind::Cross);
  EXPECT_EQ(ix.sets[1].query_tokens, Tokens("t", 4));
  EXPECT_EQ(ix.sets[1].key_tokens, Tokens("s", 5));
  ASSERT_EQ(ix.sets[0].layers.size(), 2u);
  EXPECT_EQ(ix.sets[0].layers[1].name, "enc.1");
  EXPECT_EQ(ix.sets[0].layers[1].heads, 3);
  EXPECT_EQ(ix.sets[0].head_names, (std::vector<std::string>{"h0", "h1", "h2"}));
  EXPECT_EQ(ix.sets[0].PoolRows(LazyPool::Overview), 5);
  EXPECT_EQ(ix.tokenizer.space_marker, "\xe2\x96\x81");
  EXPECT_EQ(ix.tokenizer.special_tokens, std::vector<std::string>{"</s>"});
  ASSERT_TRUE(ix.meta.IsObject());
  EXPECT_EQ(ix.meta.Find("model")->string, "tiny");

  // Every head, whole: the F16 rounding of what was written.
  for (int s = 0; s < 2; ++s) {
    for (int l = 0; l < (int)ix.sets[(size_t)s].layers.size(); ++l) {
      for (int h = 0; h < ix.sets[(size_t)s].layers[(size_t)l].heads; ++h) {
        const MatrixRM& want = doc.sets[(size_t)s].data.layers[(size_t)l].heads[(size_t)h].weights;
        const LazyResult r = Fetch(&f, Rows(s, l, h, 0, want.rows()));
        ASSERT_TRUE(r.status.ok) << r.status.message;
        ASSERT_EQ(r.weights.rows(), want.rows());
        ASSERT_EQ(r.weights.cols(), want.cols());
        for (Eigen::Index i = 0; i < want.size(); ++i) EXPECT_EQ(r.weights.data()[i], RoundHalf(want.data()[i]));
        EXPECT_EQ(r.fixed, 0);
        EXPECT_EQ(r.max, r.weights.maxCoeff());  // kept as it was decoded
      }
    }
  }
  // Rows alone: exactly their bytes are read.
  const uint64_t before = f.BytesRead();
  const LazyResult rows = Fetch(&f, Rows(0, 1, 2, 2, 4));
  ASSERT_TRUE(rows.status.ok);
  EXPECT_EQ(f.BytesRead() - before, 2u * 5u * 2u);
  ASSERT_EQ(rows.weights.rows(), 2);
  EXPECT_EQ(rows.weights(1, 3), RoundHalf(doc.sets[0].data.layers[1].heads[2].weights(3, 3)));
  EXPECT_EQ(rows.max, rows.weights.maxCoeff());  // of the rows read
  // Overviews of several heads in one read (5 <= 256 tokens: the overview is the head itself).
  const LazyResult ov = Fetch(&f, Overviews(0, 1, 1, 3));
  ASSERT_TRUE(ov.status.ok) << ov.status.message;
  ASSERT_EQ(ov.weights.rows(), 10);
  EXPECT_EQ(ov.weights(5 + 4, 2), RoundHalf(doc.sets[0].data.layers[1].heads[2].weights(4, 2)));
  // Bad requests fail in their result.
  EXPECT_FALSE(Fetch(&f, Rows(0, 2, 0, 0, 1)).status.ok);
  EXPECT_FALSE(Fetch(&f, Rows(0, 0, 3, 0, 1)).status.ok);
  EXPECT_FALSE(Fetch(&f, Rows(0, 0, 0, 3, 6)).status.ok);
  EXPECT_FALSE(Fetch(&f, Overviews(1, 0, 0, 3)).status.ok);
  EXPECT_FALSE(Fetch(&f, Rows(2, 0, 0, 0, 1)).status.ok);
  std::remove(path.c_str());
}

TEST(LazyAttention, OverviewsAreMaxPooled) {
  // 7 x 5 into 3 x 2: rows [0,2) [2,4) [4,7), columns [0,2) [2,5).
  std::vector<float> head(35);
  for (int i = 0; i < 35; ++i) head[(size_t)i] = (float)((i * 17) % 35);
  float out[6];
  MaxPoolOverview(head.data(), 7, 5, 3, 2, out);
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 2; ++c) {
      float want = 0;
      for (int i = r * 7 / 3; i < (r + 1) * 7 / 3; ++i)
        for (int j = c * 5 / 2; j < (c + 1) * 5 / 2; ++j) want = std::max(want, head[(size_t)(i * 5 + j)]);
      EXPECT_EQ(out[r * 2 + c], want) << r << "," << c;
    }
  }
  // Rows pooled in pieces, in any order, give the same (what the viewer does while a head is read).
  float pieces[6] = {0, 0, 0, 0, 0, 0};
  MaxPoolRows(head.data(), 7, 5, 4, 7, 3, 2, pieces);
  MaxPoolRows(head.data(), 7, 5, 0, 3, 3, 2, pieces);
  MaxPoolRows(head.data(), 7, 5, 3, 4, 3, 2, pieces);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(pieces[i], out[i]) << i;
  // A stored overview of a 600 x 300 head is the max-pool of the head at 256 x 256.
  std::mt19937 rng(3);
  const AttentionDocument doc = OneLayer("big", {RandomAttention(600, 300, &rng)});
  const std::string path = TempPath("pool");
  ASSERT_TRUE(WriteLazyAttention(doc, StDType::F32, path).ok);
  LazyAttentionFile f;
  ASSERT_TRUE(OpenPath(path, &f).ok);
  EXPECT_EQ(f.index().sets[0].PoolRows(LazyPool::Overview), 256);
  EXPECT_EQ(f.index().sets[0].PoolCols(LazyPool::Overview), 256);
  const LazyResult head_r = Fetch(&f, Rows(0, 0, 0, 0, 600));
  const LazyResult ov = Fetch(&f, Overviews(0, 0, 0, 1));
  ASSERT_TRUE(head_r.status.ok && ov.status.ok);
  std::vector<float> want(256 * 256);
  MaxPoolOverview(head_r.weights.data(), 600, 300, 256, 256, want.data());
  for (size_t i = 0; i < want.size(); ++i) ASSERT_EQ(ov.weights.data()[i], want[i]) << i;
  std::remove(path.c_str());
}

// An asynchronous source driven by the test: reads start, and end when the test says.
class HandSource : public ByteSource {
 public:
  explicit HandSource(std::vector<uint8_t> bytes) : mem_(std::move(bytes)) {}
  uint64_t Size() const override { return mem_.Size(); }
  bool Asynchronous() const override { return true; }
  Status Read(uint64_t, uint64_t, uint8_t*) override { return Status::Error("asynchronous only"); }
  void StartRead(uint64_t ticket, uint64_t offset, uint64_t size, uint8_t* dst, bool bulk) override {
    (void)bulk;
    started[ticket] = {offset, size, dst};
  }
  void CancelRead(uint64_t ticket) override {
    cancelled.push_back(ticket);
    started.erase(ticket);
  }
  // Copies the bytes of a started read (what the browser does when a response arrives).
  void Deliver(uint64_t ticket) {
    const Pending& p = started.at(ticket);
    ASSERT_TRUE(mem_.Read(p.offset, p.size, p.dst).ok);
    started.erase(ticket);
  }
  struct Pending {
    uint64_t offset, size;
    uint8_t* dst;
  };
  std::map<uint64_t, Pending> started;
  std::vector<uint64_t> cancelled;

 private:
  MemorySource mem_;
};

// Opens doc, written as F16, on a HandSource the test drives (owned by f); null on failure.
HandSource* OpenByHand(const AttentionDocument& doc, const char* name, LazyAttentionFile* f) {
  const std::string path = TempPath(name);
  std::vector<uint8_t> bytes;
  const bool written = WriteLazyAttention(doc, StDType::F16, path).ok && ReadFileBytes(path, &bytes).ok;
  std::remove(path.c_str());
  if (!written) return nullptr;
  auto* hand = new HandSource(bytes);
  return f->Open(std::unique_ptr<ByteSource>(hand), bytes.data(), bytes.size()).ok ? hand : nullptr;
}

// Pools head 0 of layer 0 of the file at path (a piece a pump) and checks it against MaxPoolOverview
// of the head read whole: the same overview, fix-ups and largest weight, and never the head's floats
// in memory.
// A pooled read's statistics (with_stats) are those of the head read whole, exactly.
void ExpectStatsOf(const LazyResult& pooled, const MatrixRM& whole) {
  HeadStats want;
  ASSERT_TRUE(ComputeHeadStats(whole, &want).ok);
  ASSERT_TRUE(pooled.has_stats);
  EXPECT_EQ(pooled.stats.entropy, want.entropy);
  EXPECT_EQ(pooled.stats.max_weight, want.max_weight);
  EXPECT_EQ(pooled.stats.first_token, want.first_token);
  EXPECT_EQ(pooled.stats.diagonality, want.diagonality);
  EXPECT_EQ(pooled.stats.dominant_offset, want.dominant_offset);
  EXPECT_EQ(pooled.stats.dominant_offset_mass, want.dominant_offset_mass);
  EXPECT_EQ(pooled.stats.rows_counted, want.rows_counted);
}

void ExpectPooledHeadIsItsOverview(const std::string& path, int64_t rows, int64_t cols, int64_t fixed, float max) {
  LazyAttentionFile f;
  const Status opened = OpenPath(path, &f);
  ASSERT_TRUE(opened.ok) << opened.message;
  const LazyResult whole = Fetch(&f, Rows(0, 0, 0, 0, rows));
  ASSERT_TRUE(whole.status.ok) << whole.status.message;
  LazyRequest pool = Rows(0, 0, 0, 5, 6);  // rows are ignored: the whole head is pooled
  pool.pooled = true;
  pool.with_stats = true;
  const uint64_t t = f.Submit(pool);
  LazyResult r;
  uint64_t most_loading = 0;
  for (int i = 0; i < 100000 && !f.PopResult(&r); ++i) {
    f.Pump(0.001);  // a piece a pump
    most_loading = std::max(most_loading, f.LoadingBytes());
  }
  ASSERT_EQ(r.ticket, t);
  ASSERT_TRUE(r.status.ok) << r.status.message;
  const int R = OverviewSide(rows), C = OverviewSide(cols);
  ASSERT_EQ(r.weights.rows(), R);
  ASSERT_EQ(r.weights.cols(), C);
  std::vector<float> want((size_t)R * C);
  MaxPoolOverview(whole.weights.data(), rows, cols, R, C, want.data());
  for (size_t i = 0; i < want.size(); ++i) ASSERT_EQ(r.weights.data()[i], want[i]) << i;
  EXPECT_EQ(r.fixed, fixed);
  EXPECT_EQ(whole.fixed, fixed);
  EXPECT_EQ(r.max, max);
  EXPECT_EQ(whole.max, max);
  EXPECT_LE(most_loading, (uint64_t)R * C * sizeof(float));  // never the head's floats
  ExpectStatsOf(r, whole.weights);
}

TEST(LazyAttention, MaxPoolingAPieceOfRowsIsMaxPoolingThemInTheHead) {
  // Against the definition (every weight of a cell's block), for bins of every kind: more bins than
  // rows or columns (empty ones stay 0), one row or column per bin, and uneven blocks; and shapes one
  // after another with the same columns into other bins, and other columns into the same bins (the
  // column bins are worked out per call, into a buffer kept between calls).
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  for (const auto& shape : std::vector<std::array<int, 4>>{
           {7, 5, 3, 2}, {9, 13, 9, 13}, {9, 13, 4, 5}, {3, 4, 5, 7}, {300, 37, 256, 16}, {300, 40, 256, 16}}) {
    const int rows = shape[0], cols = shape[1], R = shape[2], C = shape[3];
    std::vector<float> head((size_t)rows * cols);
    for (float& w : head) w = u(rng);
    std::vector<float> want((size_t)R * C, 0.0f);
    for (int r = 0; r < R; ++r)
      for (int c = 0; c < C; ++c)
        for (int i = (int)((int64_t)r * rows / R); i < (int)((int64_t)(r + 1) * rows / R); ++i)
          for (int j = (int)((int64_t)c * cols / C); j < (int)((int64_t)(c + 1) * cols / C); ++j)
            want[(size_t)r * C + c] = std::max(want[(size_t)r * C + c], head[(size_t)i * cols + j]);
    std::vector<float> whole((size_t)R * C), pieces((size_t)R * C, 0.0f);
    MaxPoolOverview(head.data(), rows, cols, R, C, whole.data());
    for (int row0 = 0; row0 < rows; row0 += 2) {  // pieces of two rows, each held on its own
      const int row1 = std::min(rows, row0 + 2);
      std::vector<float> piece(head.begin() + (ptrdiff_t)row0 * cols, head.begin() + (ptrdiff_t)row1 * cols);
      MaxPoolPiece(piece.data(), rows, cols, row0, row1, R, C, pieces.data());
    }
    EXPECT_EQ(whole, want) << rows << "x" << cols << " into " << R << "x" << C;
    EXPECT_EQ(pieces, want) << rows << "x" << cols << " into " << R << "x" << C;
  }
}

// MaxPoolPiece keeps its buffers between the pieces of a head, but not a long row's: pooled right, then
// let go (a hostile file's head of 2^28 columns would hold 1 GiB for the life of the thread).
TEST(LazyAttention, MaxPoolingKeepsNoLongRowsBuffers) {
  const int64_t rows = 3, cols = int64_t(1) << 20;  // a 4 MiB row
  const int out_cols = 256;
  std::vector<float> head((size_t)(rows * cols));
  for (size_t k = 0; k < head.size(); ++k) head[k] = (float)((k * 2654435761u) % 1000) / 1000.0f;
  std::vector<float> out(out_cols, 0.0f);
  MaxPoolPiece(head.data(), rows, cols, 0, rows, 1, out_cols, out.data());
  for (int b = 0; b < out_cols; ++b) {
    float m = 0;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = b * cols / out_cols; c < (b + 1) * cols / out_cols; ++c)
        m = std::max(m, head[(size_t)(r * cols + c)]);
    ASSERT_EQ(out[(size_t)b], m) << "bin " << b;
  }
  EXPECT_LE(MaxPoolKeptBytes(), kMaxPoolKeptBytes) << "a 4 MiB row's buffer was kept";
  std::vector<float> small(4 * 512, 0.5f), small_out(2 * 256, 0.0f);
  MaxPoolPiece(small.data(), 4, 512, 0, 4, 2, 256, small_out.data());
  EXPECT_GT(MaxPoolKeptBytes(), 0u) << "a short row's buffers are kept for the next piece";
  EXPECT_EQ(small_out[0], 0.5f);
}

#if ATTNVIZ_LIMITED_CHILD
// MaxPoolPiece's buffers (a row of cols floats, a table of out_cols + 1 columns) are asked of the
// allocator first: where it cannot give them, the piece is pooled without them, with the same result,
// instead of std::bad_alloc -> abort. In a child whose address space is limited to 24 MiB more than
// it has (the piece mapped, untouched), 2 rows of 2^24 columns (64 MiB to combine them) are pooled
// into 2^22 bins (a 32 MiB table). (ASan reserves terabytes of shadow, and WASM has no fork: there it
// is not run.)
TEST(LazyAttention, MaxPoolingWithNoRoomForItsBuffersGivesTheSameResult) {
  const int64_t cols = int64_t(1) << 24;
  const int out_cols = 1 << 22;
  void* mem =
      mmap(nullptr, (size_t)(2 * cols) * sizeof(float), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  void* out_mem =
      mmap(nullptr, (size_t)out_cols * sizeof(float), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_TRUE(mem != MAP_FAILED && out_mem != MAP_FAILED);
  float* piece = (float*)mem;
  float* out = (float*)out_mem;
  piece[5] = 0.5f, piece[cols + 6] = 0.75f, piece[4 * 1000 + 2] = 0.125f, piece[2 * cols - 1] = 0.25f;
  const std::string got = InChildWithLittleMemory(24, [&] {
    const bool row_fits = TryAllocate((size_t)cols * sizeof(float));
    const bool table_fits = TryAllocate(((size_t)out_cols + 1) * sizeof(int64_t));
    MaxPoolPiece(piece, 2, cols, 0, 2, 1, out_cols, out);
    int wrong = 0;
    for (int b = 0; b < out_cols; ++b) {
      const float want = b == 1 ? 0.75f : b == 1000 ? 0.125f : b == out_cols - 1 ? 0.25f : 0.0f;
      wrong += out[b] != want;
    }
    return "row fits " + std::to_string(row_fits) + ", table fits " + std::to_string(table_fits) + ", " +
           std::to_string(wrong) + " bins wrong";
  });
  munmap(mem, (size_t)(2 * cols) * sizeof(float));
  munmap(out_mem, (size_t)out_cols * sizeof(float));
  EXPECT_EQ(got, "row fits 0, table fits 0, 0 bins wrong");
}
#endif

TEST(LazyAttention, APooledHeadIsItsOverviewMadeWithoutHoldingItsWeights) {
  // F32 through a file: a 600 x 300 head with weights the reader fixes up (NaN, negative).
  std::mt19937 rng(5);
  MatrixRM odd = RandomAttention(600, 300, &rng);
  odd(10, 20) = std::numeric_limits<float>::quiet_NaN(), odd(599, 299) = -1.0f, odd(300, 7) = 5.0f;
  const std::string path = TempPath("pooled");
  ASSERT_TRUE(WriteLazyAttention(OneLayer("p", {odd}), StDType::F32, path).ok);
  ExpectPooledHeadIsItsOverview(path, 600, 300, 2, 5.0f);
  std::remove(path.c_str());
  // F16 through an asynchronous source: a 1500 x 1400 head is two parts (4 MiB, then the rest), which
  // end in reverse order; rows that straddle the parts are pooled once both are in.
  const AttentionDocument doc = OneLayer("async", {RandomAttention(1500, 1400, &rng)});
  LazyAttentionFile f;
  HandSource* hand = OpenByHand(doc, "pooled_async", &f);
  ASSERT_NE(hand, nullptr);
  LazyRequest pool = Rows(0, 0, 0, 0, 1);
  pool.pooled = pool.with_stats = true;
  const uint64_t t = f.Submit(pool);
  f.Pump(1);
  ASSERT_EQ(hand->started.size(), 2u);
  const uint64_t second = hand->started.rbegin()->first;
  hand->Deliver(second);
  f.CompleteRead(second, Status::Ok());
  f.Pump(50);
  LazyResult r;
  EXPECT_FALSE(f.PopResult(&r));  // the first part is not in: nothing to pool yet
  hand->Deliver(t);
  f.CompleteRead(t, Status::Ok());
  EXPECT_LE(f.LoadingBytes(), (uint64_t)1500 * 1400 * 2 + 256 * 256 * 4);  // the bytes read, the overview
  for (int i = 0; i < 1000 && !f.PopResult(&r); ++i) f.Pump(50);
  ASSERT_EQ(r.ticket, t);
  ASSERT_TRUE(r.status.ok) << r.status.message;
  MatrixRM halves = doc.sets[0].data.layers[0].heads[0].weights;
  for (Eigen::Index i = 0; i < halves.size(); ++i) halves.data()[i] = RoundHalf(halves.data()[i]);
  std::vector<float> want(256 * 256);
  MaxPoolOverview(halves.data(), 1500, 1400, 256, 256, want.data());
  for (size_t i = 0; i < want.size(); ++i) ASSERT_EQ(r.weights.data()[i], want[i]) << i;
  ExpectStatsOf(r, halves);  // rows that straddle the parts counted once, in order
}

TEST(LazyAttention, AsynchronousReadsEndInAnyOrder) {
  const AttentionDocument doc = SmallDocument();
  LazyAttentionFile f;
  f.SetMaxInFlight(2);
  HandSource* hand = OpenByHand(doc, "async", &f);
  ASSERT_NE(hand, nullptr);
  const uint64_t a = f.Submit(Rows(0, 0, 0, 0, 5));
  const uint64_t b = f.Submit(Rows(0, 1, 1, 1, 3));
  const uint64_t c = f.Submit(Overviews(0, 0, 0, 3));
  const uint64_t d = f.Submit(Rows(1, 0, 1, 0, 4));
  f.Pump(10);
  EXPECT_EQ(hand->started.size(), 2u);  // at most two reads at once
  EXPECT_EQ(f.Reads(), 2u);
  hand->Deliver(b);
  f.CompleteRead(b, Status::Ok());
  f.Pump(10);
  LazyResult r;
  ASSERT_TRUE(f.PopResult(&r));
  EXPECT_EQ(r.ticket, b);
  ASSERT_TRUE(r.status.ok);
  EXPECT_EQ(r.weights(0, 4), RoundHalf(doc.sets[0].data.layers[1].heads[1].weights(1, 4)));
  EXPECT_EQ(hand->started.size(), 2u);  // c started in b's place
  // A network error (or a truncated response) ends the request with its message.
  f.CompleteRead(a, Status::Error("the response ended after 12 of 50 bytes"));
  ASSERT_TRUE(f.PopResult(&r));
  EXPECT_EQ(r.ticket, a);
  EXPECT_FALSE(r.status.ok);
  EXPECT_NE(r.status.message.find("ended after 12"), std::string::npos);
  hand->started.erase(a);
  f.Pump(10);
  // Cancelled while its read is under way: the source hears of it, no result comes.
  f.Cancel(c);
  EXPECT_EQ(hand->cancelled, std::vector<uint64_t>{c});
  f.Pump(10);
  ASSERT_EQ(hand->started.count(d), 1u);
  hand->Deliver(d);
  f.CompleteRead(d, Status::Ok());
  f.CompleteRead(c, Status::Ok());  // a late completion of a cancelled read is ignored
  f.Pump(10);
  ASSERT_TRUE(f.PopResult(&r));
  EXPECT_EQ(r.ticket, d);
  EXPECT_EQ(r.weights(3, 0), RoundHalf(doc.sets[1].data.layers[0].heads[1].weights(3, 0)));
  EXPECT_FALSE(f.PopResult(&r));
  EXPECT_EQ(f.Pending(), 0u);
  EXPECT_EQ(f.LoadingBytes(), 0u);
}

// What a frame does after asking for what it drew: reads start, nothing is decoded (that waits for
// Pump, between frames and at the next frame's start).
TEST(LazyAttention, StartReadsStartsReadsAndDecodesNothing) {
  const AttentionDocument doc = SmallDocument();
  LazyAttentionFile f;
  HandSource* hand = OpenByHand(doc, "start", &f);
  ASSERT_NE(hand, nullptr);
  const uint64_t a = f.Submit(Rows(0, 0, 0, 0, 5));
  EXPECT_TRUE(hand->started.empty());
  f.StartReads();
  ASSERT_EQ(hand->started.count(a), 1u);
  hand->Deliver(a);
  f.CompleteRead(a, Status::Ok());
  f.StartReads();
  LazyResult r;
  EXPECT_FALSE(f.PopResult(&r));  // in, not decoded
  EXPECT_EQ(f.Pending(), 1u);
  f.Pump(10);
  ASSERT_TRUE(f.PopResult(&r));
  EXPECT_EQ(r.ticket, a);
  ASSERT_TRUE(r.status.ok);
  EXPECT_EQ(r.weights(2, 1), RoundHalf(doc.sets[0].data.layers[0].heads[0].weights(2, 1)));
}

// A switch starts its reads of one part before the app makes room for them (LazyMaps::Request): only
// those whose buffers fit in the room it has. Their buffers are counted from the moment they are
// asked for until they are decoded.
TEST(LazyAttention, ReadsStartedEarlyFitTheRoomGiven) {
  const AttentionDocument doc = SmallDocument();
  LazyAttentionFile f;
  HandSource* hand = OpenByHand(doc, "room", &f);
  ASSERT_NE(hand, nullptr);
  const uint64_t bytes = 5 * 5 * 2;  // a 5 x 5 F16 head
  std::vector<uint64_t> t;
  for (int h = 0; h < 3; ++h) t.push_back(f.Submit(Rows(0, 0, h, 0, 5)));
  EXPECT_EQ(f.StagingBytes(), 3 * bytes);  // asked for, not started: to be held
  EXPECT_EQ(f.LoadingBytes(), 0u);
  f.StartReads(/*single_part_only=*/true, 2 * bytes + bytes / 2);
  EXPECT_EQ(hand->started.size(), 2u);
  EXPECT_EQ(hand->started.count(t[2]), 0u);
  EXPECT_EQ(f.LoadingBytes(), 2 * bytes);
  f.StartReads(/*single_part_only=*/true, 0);  // no room: nothing more, the ones under way go on
  EXPECT_EQ(hand->started.size(), 2u);
  f.StartReads();  // after room is made: the rest
  ASSERT_EQ(hand->started.size(), 3u);
  for (uint64_t ticket : t) hand->Deliver(ticket), f.CompleteRead(ticket, Status::Ok());
  EXPECT_EQ(f.StagingBytes(), 3 * bytes);  // in, not decoded
  f.Pump(10);
  EXPECT_EQ(f.StagingBytes(), 0u);
  LazyResult r;
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(f.PopResult(&r) && r.status.ok);
}

TEST(LazyAttention, ABigReadComesInPartsDecodedAsTheyArrive) {
  // One 1536 x 2048 F16 head: 6 MiB, two parts (4 MiB + 2 MiB).
  std::mt19937 rng(5);
  const AttentionDocument doc = OneLayer("big", {RandomAttention(1536, 2048, &rng)});
  const std::string path = TempPath("parts");
  ASSERT_TRUE(WriteLazyAttention(doc, StDType::F16, path).ok);
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(ReadFileBytes(path, &bytes).ok);
  std::remove(path.c_str());
  auto open = [&](LazyAttentionFile* f) {
    auto* hand = new HandSource(bytes);
    EXPECT_TRUE(f->Open(std::unique_ptr<ByteSource>(hand), bytes.data(), bytes.size()).ok);
    return hand;
  };
  LazyAttentionFile f;
  HandSource* hand = open(&f);
  const uint64_t t = f.Submit(Rows(0, 0, 0, 0, 1536));
  const uint64_t small = f.Submit(Overviews(0, 0, 0, 1));
  f.Pump(10);
  // The overview and one part of the head: while a one-part read is under way, a whole head keeps
  // one part in flight (the stand-in gets the bandwidth); its second part starts when the overview is in.
  ASSERT_EQ(hand->started.size(), 2u);
  EXPECT_EQ(f.Reads(), 2u);  // requests, not parts
  ASSERT_EQ(hand->started.count(t), 1u);
  ASSERT_EQ(hand->started.count(small), 1u);
  EXPECT_EQ(hand->started.at(t).size, LazyAttentionFile::kPartBytes);
  hand->Deliver(small);
  f.CompleteRead(small, Status::Ok());
  f.Pump(10);
  LazyResult ov;
  ASSERT_TRUE(f.PopResult(&ov));
  EXPECT_EQ(ov.ticket, small);
  ASSERT_EQ(hand->started.size(), 2u);  // both parts of the head
  uint64_t second = 0;
  for (const auto& kv : hand->started)
    if (kv.first != t && kv.first != small) second = kv.first;
  ASSERT_NE(second, 0u);
  EXPECT_EQ(hand->started.at(second).size, (uint64_t)1536 * 2048 * 2 - LazyAttentionFile::kPartBytes);
  // The second part first: nothing can be decoded yet.
  hand->Deliver(second);
  f.CompleteRead(second, Status::Ok());
  f.Pump(1000);
  LazyResult r;
  EXPECT_FALSE(f.PopResult(&r));
  EXPECT_FALSE(f.Busy());
  // The first part: the whole head, exact.
  hand->Deliver(t);
  f.CompleteRead(t, Status::Ok());
  EXPECT_TRUE(f.Busy());
  for (int i = 0; i < 20 && !f.PopResult(&r); ++i) f.Pump(1000);
  ASSERT_EQ(r.ticket, t);
  ASSERT_TRUE(r.status.ok) << r.status.message;
  const MatrixRM& w = doc.sets[0].data.layers[0].heads[0].weights;
  for (int64_t i = 0; i < w.size(); i += 997) ASSERT_EQ(r.weights.data()[i], RoundHalf(w.data()[i])) << i;
  EXPECT_EQ(r.weights(1535, 2047), RoundHalf(w(1535, 2047)));
  EXPECT_EQ(f.BytesRead(), (uint64_t)1536 * 2048 * 2 + 256 * 256 * 2);  // the head and the overview

  // Only the first part in: it is decoded at once (the piece work between frames is not idle).
  LazyAttentionFile g;
  hand = open(&g);
  const uint64_t u = g.Submit(Rows(0, 0, 0, 0, 1536));
  g.Pump(10);
  hand->Deliver(u);
  g.CompleteRead(u, Status::Ok());
  EXPECT_TRUE(g.Busy());
  for (int i = 0; i < 20 && g.Busy(); ++i) g.Pump(1000);
  EXPECT_FALSE(g.Busy());  // 4 MiB decoded, waiting for the rest
  EXPECT_FALSE(g.PopResult(&r));
  // A part fails (the response cut short): the request fails with its reason, the other part is cancelled.
  uint64_t rest = 0;
  for (const auto& kv : hand->started) rest = kv.first;
  ASSERT_NE(rest, 0u);
  g.CompleteRead(rest, Status::Error("the response ended after 12 of 2097152 bytes"));
  ASSERT_TRUE(g.PopResult(&r));
  EXPECT_EQ(r.ticket, u);
  EXPECT_NE(r.status.message.find("ended after 12"), std::string::npos);
  EXPECT_EQ(g.Pending(), 0u);

  // Cancelled with a part under way: the source hears of every part started and not in.
  LazyAttentionFile c;
  hand = open(&c);
  const uint64_t v = c.Submit(Rows(0, 0, 0, 0, 1536));
  c.Pump(10);
  ASSERT_EQ(hand->started.size(), 2u);
  hand->Deliver(v);
  c.CompleteRead(v, Status::Ok());
  c.Cancel(v);
  EXPECT_EQ(hand->cancelled.size(), 1u);
  EXPECT_EQ(c.Pending(), 0u);
}

TEST(LazyAttention, APumpDoesAPieceAtATime) {
  std::mt19937 rng(11);
  MatrixRM w = RandomAttention(1500, 1500, &rng);
  w(3, 4) = std::nanf("");  // the file carries them; the reader shows them as 0 and counts them
  w(5, 6) = -0.5f;
  w(1400, 7) = 2.5f;  // the largest, in the last piece
  const AttentionDocument doc = OneLayer("wide", {w});
  const std::string path = TempPath("pieces");
  ASSERT_TRUE(WriteLazyAttention(doc, StDType::F16, path).ok);
  LazyAttentionFile f;
  ASSERT_TRUE(OpenPath(path, &f).ok);
  f.Submit(Rows(0, 0, 0, 0, 1500));  // 2.25 Mi weights: 9 pieces of 256 Ki
  LazyResult r;
  const int pieces = (int)((1500 * 1500 + LazyAttentionFile::kPieceWeights - 1) / LazyAttentionFile::kPieceWeights);
  f.Pump(0);
  EXPECT_EQ(f.Pending(), 1u);
  EXPECT_GT(f.LoadingBytes(), 1500u * 1500u * 4u - 1);
  for (int i = 1; i < pieces - 1; ++i) f.Pump(0);
  EXPECT_EQ(f.Pending(), 1u);
  f.Pump(0);
  EXPECT_EQ(f.Pending(), 0u);
  ASSERT_TRUE(f.PopResult(&r));
  ASSERT_TRUE(r.status.ok);
  EXPECT_EQ(r.fixed, 2);
  EXPECT_EQ(r.weights(3, 4), 0.0f);
  EXPECT_EQ(r.weights(5, 6), 0.0f);
  EXPECT_EQ(r.weights(1499, 1499), RoundHalf(w(1499, 1499)));
  EXPECT_EQ(r.max, 2.5f);  // over every piece, NaN and the negative one not counted
  // The same as F32, read in place: +inf is fixed up too and does not count as the largest.
  w(9, 9) = std::numeric_limits<float>::infinity();
  const std::string path32 = TempPath("pieces32");
  ASSERT_TRUE(WriteLazyAttention(OneLayer("wide", {w}), StDType::F32, path32).ok);
  LazyAttentionFile g;
  ASSERT_TRUE(OpenPath(path32, &g).ok);
  g.Submit(Rows(0, 0, 0, 0, 1500));
  for (int i = 0; i < 20 && !g.PopResult(&r); ++i) g.Pump(1000);
  ASSERT_TRUE(r.status.ok) << r.status.message;
  EXPECT_EQ(r.fixed, 3);
  EXPECT_EQ(r.weights(9, 9), 0.0f);
  EXPECT_EQ(r.max, 2.5f);
  std::remove(path.c_str());
  std::remove(path32.c_str());
}

TEST(LazyAttention, AFileChangedWhileOpenIsAnError) {
  const std::string path = TempPath("changed");
  ASSERT_TRUE(WriteLazyAttention(SmallDocument(), StDType::F16, path).ok);
  LazyAttentionFile f;
  ASSERT_TRUE(OpenPath(path, &f).ok);
  ASSERT_TRUE(Fetch(&f, Rows(0, 0, 0, 0, 5)).status.ok);
  ASSERT_EQ(truncate(path.c_str(), 100), 0);  // another program rewrote it
  const LazyResult r = Fetch(&f, Rows(0, 0, 1, 0, 5));
  EXPECT_FALSE(r.status.ok);
  EXPECT_NE(r.status.message.find("changed since it was opened"), std::string::npos) << r.status.message;
  std::remove(path.c_str());
}

// A header with the given tensors (zeros for data) and __metadata__, parsed and indexed.
Status IndexOf(const std::vector<SafetensorsTensorSpec>& specs,
               const std::vector<std::pair<std::string, std::string>>& meta, LazyAttentionIndex* out) {
  std::vector<uint8_t> bytes;
  std::vector<uint64_t> begins;
  uint64_t size = 0;
  Status st = SafetensorsHeaderBytes(specs, meta, &bytes, &begins, &size);
  if (!st) return st;
  bytes.resize(size, 0);
  SafetensorsHeader h;
  if (!(st = ParseSafetensorsHeader(bytes.data(), bytes.size(), size, &h))) return st;
  return ReadLazyAttentionIndex(std::move(h), out);
}

TEST(LazyAttention, TheIndexRefusesInconsistentFiles) {
  const std::string sets = R"([{"name":"x","tokens":["a","b","c"],"layers":2}])";
  const std::vector<std::pair<std::string, std::string>> meta = {
      {"format", "attnviz"}, {"version", "2"}, {"sets", sets}};
  LazyAttentionIndex ix;
  Status st =
      IndexOf({{"attention.0.0", StDType::F16, {2, 3, 3}}, {"attention.0.1", StDType::F16, {4, 3, 3}}}, meta, &ix);
  ASSERT_TRUE(st.ok) << st.message;
  EXPECT_EQ(ix.sets[0].layers[1].heads, 4);  // layers may differ in heads
  EXPECT_EQ(ix.sets[0].MaxHeads(), 4);
  EXPECT_EQ(ix.sets[0].PoolRows(LazyPool::Overview), 0);
  auto error = [&](const std::vector<SafetensorsTensorSpec>& specs,
                   const std::vector<std::pair<std::string, std::string>>& m) {
    LazyAttentionIndex x;
    const Status s = IndexOf(specs, m, &x);
    EXPECT_FALSE(s.ok);
    return s.message;
  };
  EXPECT_NE(error({{"attention.0.0", StDType::F16, {2, 3, 3}}}, meta).find("'attention.0.1' is missing"),
            std::string::npos);
  EXPECT_NE(error({{"attention.0.0", StDType::F16, {2, 3, 4}}, {"attention.0.1", StDType::F16, {2, 3, 3}}}, meta)
                .find("expected [heads, 3, 3]"),
            std::string::npos);
  EXPECT_NE(error({{"attention.0.0", StDType::I32, {2, 3, 3}}, {"attention.0.1", StDType::F16, {2, 3, 3}}}, meta)
                .find("must be F16"),
            std::string::npos);
  EXPECT_NE(error({{"attention.0.0", StDType::F16, {2, 3, 3}},
                   {"attention.0.1", StDType::F16, {2, 3, 3}},
                   {"overview.0.0", StDType::F16, {2, 2, 2}}},
                  meta)
                .find("some layers only"),
            std::string::npos);
  EXPECT_NE(error({{"attention.0.0", StDType::F16, {2, 3, 3}},
                   {"attention.0.1", StDType::F16, {2, 3, 3}},
                   {"overview.0.0", StDType::F16, {2, 4, 2}},
                   {"overview.0.1", StDType::F16, {2, 4, 2}}},
                  meta)
                .find("R <= n_q"),
            std::string::npos);
  EXPECT_NE(error({}, {{"format", "attnviz"}, {"version", "3"}, {"sets", sets}}).find("version '3'"),
            std::string::npos);
  EXPECT_NE(error({}, {{"format", "attnviz"}, {"version", "2"}, {"sets", "[{"}}).find("\"sets\""), std::string::npos);
  EXPECT_NE(
      error({}, {{"format", "attnviz"}, {"version", "2"}, {"sets", R"([{"tokens":["a"]}])"}}).find("needs \"layers\""),
      std::string::npos);
  EXPECT_NE(error({{"weights", StDType::F32, {2, 2}}}, {}).find("the file has: weights"), std::string::npos);
}

// Stored statistics ("stats.s.l") that are not what the layout says are left out with a warning;
// the file opens without them.
TEST(LazyAttention, StoredStatisticsNotAsTheLayoutSaysAreLeftOutWithAWarning) {
  const std::vector<std::pair<std::string, std::string>> meta = {
      {"format", "attnviz"}, {"version", "2"}, {"sets", R"([{"name":"x","tokens":["a","b","c"],"layers":2}])"}};
  const SafetensorsTensorSpec a0{"attention.0.0", StDType::F16, {2, 3, 3}},
      a1{"attention.0.1", StDType::F16, {4, 3, 3}};
  auto stats = [](int l, int heads, StDType t = StDType::F32, int cols = kHeadStatsColumns) {
    return SafetensorsTensorSpec{"stats.0." + std::to_string(l), t, {heads, cols}};
  };
  LazyAttentionIndex ok;
  Status st = IndexOf({stats(0, 2), stats(1, 4), a0, a1}, meta, &ok);
  ASSERT_TRUE(st.ok) << st.message;
  EXPECT_TRUE(ok.sets[0].stats);
  EXPECT_TRUE(ok.warnings.empty());
  EXPECT_EQ(ok.sets[0].Heads(), 6);
  EXPECT_EQ(ok.sets[0].layers[1].stats_offset, ok.sets[0].layers[0].stats_offset + 2 * kHeadStatsColumns * 4);
  auto warned = [&](const std::vector<SafetensorsTensorSpec>& specs, const char* why) {
    LazyAttentionIndex x;
    const Status s = IndexOf(specs, meta, &x);
    ASSERT_TRUE(s.ok) << s.message;
    EXPECT_FALSE(x.sets[0].stats) << why;
    ASSERT_EQ(x.warnings.size(), 1u) << why;
    EXPECT_NE(x.warnings[0].find(why), std::string::npos) << x.warnings[0];
    EXPECT_NE(x.warnings[0].find("not used"), std::string::npos) << x.warnings[0];
  };
  warned({stats(0, 2), a0, a1}, "some layers have none");
  warned({stats(1, 4), a0, a1}, "some layers have none");  // layer 0's missing: not "does not follow"
  warned({stats(0, 2), stats(1, 4, StDType::F16), a0, a1}, "'stats.0.1' is not F32 [4, 8]");
  warned({stats(0, 3), stats(1, 4), a0, a1}, "'stats.0.0' is not F32 [2, 8]");
  warned({stats(0, 2), stats(1, 4, StDType::F32, 7), a0, a1}, "is not F32 [4, 8]");
  warned({stats(0, 2), a0, stats(1, 4), a1}, "'stats.0.1' does not follow the previous layer's");
  warned({stats(1, 4), stats(0, 2), a0, a1}, "does not follow");  // back to back, in the wrong order
  LazyAttentionIndex none;                                        // a file without them: no warning

  ASSERT_TRUE(IndexOf({a0, a1}, meta, &none).ok);
  EXPECT_FALSE(none.sets[0].stats);
  EXPECT_TRUE(none.warnings.empty());
}

// Every head's statistics stored by the writers are those a viewer computes from the head as it reads
// it (the same rounding and fix-ups: NaN, infinity, negative -> 0), and a set's come in one read.
TEST(LazyAttention, StoredStatisticsAreWhatTheReaderComputesFromTheHeads) {
  AttentionDocument doc = SmallDocument();
  MatrixRM& odd = doc.sets[0].data.layers[1].heads[0].weights;
  odd(0, 1) = std::numeric_limits<float>::quiet_NaN();
  odd(2, 2) = -0.5f;
  odd(3, 0) = std::numeric_limits<float>::infinity();
  doc.sets[0].data.layers[1].heads[2].weights.setZero();  // no rows counted
  doc.sets[1].data.layers[0].heads[1].weights.row(1).setZero();
  for (StDType dtype : {StDType::F16, StDType::BF16, StDType::F32}) {
    const std::string path = TempPath(std::string("stats_") + StDTypeName(dtype));
    ASSERT_TRUE(WriteLazyAttention(doc, dtype, path).ok);
    LazyAttentionFile f;
    Status st = OpenPath(path, &f);
    ASSERT_TRUE(st.ok) << st.message;
    for (int s = 0; s < 2; ++s) {
      const LazySet& set = f.index().sets[(size_t)s];
      ASSERT_TRUE(set.stats);
      const uint64_t reads = f.Reads(), bytes = f.BytesRead();
      LazyRequest r;
      r.set = s, r.stats = true;
      const LazyResult stored = Fetch(&f, r);
      ASSERT_TRUE(stored.status.ok) << stored.status.message;
      EXPECT_EQ(f.Reads() - reads, 1u);
      EXPECT_EQ(f.BytesRead() - bytes, (uint64_t)set.Heads() * kHeadStatsColumns * 4);
      ASSERT_EQ(stored.weights.rows(), set.Heads());
      ASSERT_EQ(stored.weights.cols(), kHeadStatsColumns);
      int row = 0;
      for (int l = 0; l < (int)set.layers.size(); ++l) {
        for (int h = 0; h < set.layers[(size_t)l].heads; ++h, ++row) {
          SCOPED_TRACE(std::string(StDTypeName(dtype)) + " set " + std::to_string(s) + " layer " + std::to_string(l) +
                       " head " + std::to_string(h));
          const LazyResult head = Fetch(&f, Rows(s, l, h, 0, set.n_q));
          ASSERT_TRUE(head.status.ok);
          HeadStats want, got;
          ASSERT_TRUE(ComputeHeadStats(head.weights, &want).ok);
          ASSERT_TRUE(
              HeadStatsFromRow(stored.weights.data() + (size_t)row * kHeadStatsColumns, set.n_q, set.n_k, &got));
          EXPECT_EQ(got.entropy, want.entropy);
          EXPECT_EQ(got.entropy_normalized, want.entropy_normalized);
          EXPECT_EQ(got.max_weight, want.max_weight);
          EXPECT_EQ(got.first_token, want.first_token);
          EXPECT_EQ(got.diagonality, want.diagonality);
          EXPECT_EQ(got.dominant_offset, want.dominant_offset);
          EXPECT_EQ(got.dominant_offset_mass, want.dominant_offset_mass);
          EXPECT_EQ(got.rows_counted, want.rows_counted);
        }
      }
    }
    EXPECT_EQ(f.index().sets[0].layers[0].stats_offset, f.index().header.data_start);  // statistics come first
    std::remove(path.c_str());
  }
}

// A file of SmallDocument()'s small heads stores none of `pool`; asking for them is an error ("the
// file stores no screen copies"), not a crash.
void ExpectNoneInASmallFile(LazyPool pool) {
  const std::string small = TempPath(std::string("none_") + LazyPoolPrefix(pool));
  ASSERT_TRUE(WriteLazyAttention(SmallDocument(), StDType::F16, small).ok);
  LazyAttentionFile g;
  ASSERT_TRUE(OpenPath(small, &g).ok);
  EXPECT_EQ(g.index().sets[0].PoolRows(pool), 0);
  LazyRequest none = Overviews(0, 0, 0, 1);
  none.pool = pool;
  EXPECT_NE(Fetch(&g, none).status.message.find(std::string("no ") + LazyPoolName(pool)), std::string::npos);
  std::remove(small.c_str());
}

// Each case's tensors added to a set of 2 layers of one n x n F16 head: the index is refused with a
// message that contains the case's text.
using IndexErrorCase = std::pair<std::vector<SafetensorsTensorSpec>, const char*>;
void ExpectIndexErrors(int n, const std::vector<IndexErrorCase>& cases) {
  std::string tokens = "[";
  for (int i = 0; i < n; ++i) tokens += (i ? ",\"t" : "\"t") + std::to_string(i) + "\"";
  const std::vector<std::pair<std::string, std::string>> meta = {
      {"format", "attnviz"}, {"version", "2"}, {"sets", "[{\"tokens\":" + tokens + "],\"layers\":2}]"}};
  for (const IndexErrorCase& c : cases) {
    std::vector<SafetensorsTensorSpec> specs = {{"attention.0.0", StDType::F16, {1, n, n}},
                                                {"attention.0.1", StDType::F16, {1, n, n}}};
    specs.insert(specs.end(), c.first.begin(), c.first.end());
    LazyAttentionIndex x;
    const Status s = IndexOf(specs, meta, &x);
    EXPECT_FALSE(s.ok) << c.second;
    EXPECT_NE(s.message.find(c.second), std::string::npos) << s.message;
  }
}

TEST(LazyAttention, ScreenCopiesAreWrittenReadAndChecked) {
  // Heads over 1024 on a side get a max-pooled screen copy (1024 x min(n_k, 1024)); smaller ones none.
  std::mt19937 rng(5);
  const AttentionDocument doc = OneLayer("long", {RandomAttention(1100, 40, &rng), RandomAttention(1100, 40, &rng)});
  const std::string path = TempPath("screen");
  ASSERT_TRUE(WriteLazyAttention(doc, StDType::F32, path).ok);
  LazyAttentionFile f;
  ASSERT_TRUE(OpenPath(path, &f).ok);
  const LazySet& ls = f.index().sets[0];
  EXPECT_EQ(ls.PoolRows(LazyPool::Screen), 1024);
  EXPECT_EQ(ls.PoolCols(LazyPool::Screen), 40);
  LazyRequest r = Overviews(0, 0, 1, 2);
  r.pool = LazyPool::Screen;
  const LazyResult screen = Fetch(&f, r);
  ASSERT_TRUE(screen.status.ok) << screen.status.message;
  ASSERT_EQ(screen.weights.rows(), 1024);
  std::vector<float> want(1024 * 40);
  MaxPoolOverview(doc.sets[0].data.layers[0].heads[1].weights.data(), 1100, 40, 1024, 40, want.data());
  for (size_t i = 0; i < want.size(); ++i) ASSERT_EQ(screen.weights.data()[i], want[i]) << i;
  std::remove(path.c_str());
  // Not written for heads that fit; asking for them is an error, not a crash.
  ExpectNoneInASmallFile(LazyPool::Screen);

  // Hostile screen copies: a wrong dtype, more than 1024 rows, more rows than the head, other heads, some layers.
  ExpectIndexErrors(
      1100,
      {{{{"screen.0.0", StDType::I32, {1, 1024, 1024}}, {"screen.0.1", StDType::F16, {1, 1024, 1024}}},
        "'screen.0.0' is I32; attention weights must be F16"},
       {{{"screen.0.0", StDType::F16, {1, 1100, 1024}}, {"screen.0.1", StDType::F16, {1, 1100, 1024}}}, "at most 1024"},
       {{{"screen.0.0", StDType::F16, {2, 1024, 1024}}, {"screen.0.1", StDType::F16, {2, 1024, 1024}}},
        "expected [1, R, C]"},
       {{{"screen.0.0", StDType::F16, {1, 1024, 1024}}, {"screen.0.1", StDType::F16, {1, 512, 512}}},
        "the same for every layer"},
       {{{"screen.0.0", StDType::F16, {1, 1024}}, {"screen.0.1", StDType::F16, {1, 1024}}},
        "must be [heads, n_q, n_k]"},
       {{{"screen.0.1", StDType::F16, {1, 1024, 1024}}}, "screen copies for some layers only"}});
}

TEST(LazyAttention, ThumbnailsAreWrittenReadAndChecked) {
  // Heads over 64 on a side get a max-pooled 64 x 64 thumbnail for the grid's small cells, placed
  // after the statistics and before the overviews; heads that fit get none (their overview is as small).
  std::mt19937 rng(9);
  const AttentionDocument doc = OneLayer("mid", {RandomAttention(200, 50, &rng), RandomAttention(200, 50, &rng)});
  for (StDType dtype : {StDType::F16, StDType::F32}) {
    const std::string path = TempPath("thumb");
    ASSERT_TRUE(WriteLazyAttention(doc, dtype, path).ok);
    LazyAttentionFile f;
    ASSERT_TRUE(OpenPath(path, &f).ok);
    const LazySet& ls = f.index().sets[0];
    EXPECT_EQ(ls.PoolRows(LazyPool::Thumb), 64);
    EXPECT_EQ(ls.PoolCols(LazyPool::Thumb), 50);  // C = min(n_k, 64)
    EXPECT_EQ(ls.PoolRows(LazyPool::Overview), 200);
    EXPECT_LT(ls.layers[0].Pooled(LazyPool::Thumb).offset, ls.layers[0].Pooled(LazyPool::Overview).offset);
    EXPECT_GT(ls.layers[0].Pooled(LazyPool::Thumb).offset, ls.layers[0].stats_offset);
    LazyRequest r = Overviews(0, 0, 0, 2);
    r.pool = LazyPool::Thumb;
    const LazyResult thumbs = Fetch(&f, r);
    ASSERT_TRUE(thumbs.status.ok) << thumbs.status.message;
    ASSERT_EQ(thumbs.weights.rows(), 2 * 64);
    ASSERT_EQ(thumbs.weights.cols(), 50);
    for (int h = 0; h < 2; ++h) {
      std::vector<float> want(64 * 50);
      MaxPoolOverview(doc.sets[0].data.layers[0].heads[(size_t)h].weights.data(), 200, 50, 64, 50, want.data());
      for (size_t i = 0; i < want.size(); ++i) {
        const float w = dtype == StDType::F32 ? want[i] : HalfToFloat(FloatToHalf(want[i]));
        ASSERT_EQ(thumbs.weights.data()[(size_t)h * want.size() + i], w) << h << " " << i;
      }
    }
    std::remove(path.c_str());
  }
  // A head no bigger than a thumbnail gets none; asking for them is an error, not a crash.
  ExpectNoneInASmallFile(LazyPool::Thumb);

  // Hostile thumbnails: over 64 on a side, other heads, differing layers, some layers only.
  ExpectIndexErrors(
      100,
      {{{{"thumb.0.0", StDType::F16, {1, 100, 64}}, {"thumb.0.1", StDType::F16, {1, 100, 64}}}, "at most 64"},
       {{{"thumb.0.0", StDType::F16, {2, 64, 64}}, {"thumb.0.1", StDType::F16, {2, 64, 64}}}, "expected [1, R, C]"},
       {{{"thumb.0.0", StDType::F16, {1, 64, 64}}, {"thumb.0.1", StDType::F16, {1, 32, 32}}},
        "the same for every layer"},
       {{{"thumb.0.1", StDType::F16, {1, 64, 64}}}, "thumbnails for some layers only"}});
}

TEST(LazyAttention, APlainAttentionTensorOpens) {
  // 'attention' [2, 3, 4, 5] F32 with tokens in __metadata__.
  std::vector<uint8_t> bytes;
  std::vector<uint64_t> begins;
  uint64_t size = 0;
  ASSERT_TRUE(SafetensorsHeaderBytes({{"attention", StDType::F32, {2, 3, 4, 5}}},
                                     {{"query_tokens", R"(["a","b","c","d"])"}}, &bytes, &begins, &size)
                  .ok);
  bytes.resize(size);
  for (int i = 0; i < 120; ++i) {
    const float v = (float)i / 120.0f;
    std::memcpy(bytes.data() + begins[0] + 4 * i, &v, 4);
  }
  LazyAttentionFile f;
  const Status st = f.Open(std::unique_ptr<ByteSource>(new MemorySource(bytes)), bytes.data(), bytes.size());
  ASSERT_TRUE(st.ok) << st.message;
  const LazySet& s = f.index().sets[0];
  EXPECT_FALSE(f.index().attnviz_layout);
  EXPECT_EQ(s.layers.size(), 2u);
  EXPECT_EQ(s.layers[1].heads, 3);
  EXPECT_EQ(s.query_tokens, (std::vector<std::string>{"a", "b", "c", "d"}));
  EXPECT_EQ(s.key_tokens, Tokens("", 5));
  EXPECT_EQ(f.index().warnings.size(), 1u);  // no key tokens
  const LazyResult r = Fetch(&f, Rows(0, 1, 2, 1, 3));
  ASSERT_TRUE(r.status.ok);
  const int flat0 = ((1 * 3 + 2) * 4 + 1) * 5;  // layer 1, head 2, row 1, column 0
  EXPECT_EQ(r.weights(0, 0), (float)flat0 / 120.0f);
  EXPECT_EQ(r.weights(1, 4), (float)(flat0 + 9) / 120.0f);
}

TEST(LazyAttention, ASparse32GiBFileReadsHeadByHead) {
  // 32 layers x 32 heads x 4096 x 4096 F16: the header and one head are written, the rest is a
  // hole. Natively the file is mmap'ed. The WASM build (node, NODERAWFS) reads with pread, and
  // Emscripten 3.1.6's file system drops the high 32 bits of 64-bit file offsets, so there the
  // same layout has 960 tokens (just under 2 GiB); the browser reads big files with Range requests.
  const int n = sizeof(void*) == 8 ? 4096 : 960;
  AttentionDocument shape;
  AttentionSet set;
  set.name = "llm";
  set.data.source_tokens = set.data.target_tokens = Tokens("t", n);
  set.data.self_attention = true;
  for (int l = 0; l < 32; ++l) {
    AttentionFile::Layer layer{"layer " + std::to_string(l), {}};
    for (int h = 0; h < 32; ++h) layer.heads.push_back({"head " + std::to_string(h), MatrixRM()});
    set.data.layers.push_back(std::move(layer));
  }
  shape.sets.push_back(std::move(set));
  LazyWritePlan plan;
  ASSERT_TRUE(PlanLazyAttention(shape, StDType::F16, &plan).ok);
  EXPECT_GT(plan.file_size, (uint64_t)n * n * 2048);
  const std::string path = TempPath("sparse");
  const int fd = open(path.c_str(), O_CREAT | O_TRUNC | O_RDWR, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(pwrite(fd, plan.header.data(), plan.header.size(), 0), (ssize_t)plan.header.size());
  // Head (7, 19): row r is one-hot at column (r * 3) % 4096.
  std::vector<uint16_t> head((size_t)n * n, 0);
  for (int r = 0; r < n; ++r) head[(size_t)r * n + (size_t)(r * 3) % n] = FloatToHalf(1.0f);
  const uint64_t head_at = plan.attention[0][7] + uint64_t(19) * n * n * 2;
  ASSERT_EQ(pwrite(fd, head.data(), head.size() * 2, (off_t)head_at), (ssize_t)(head.size() * 2));
  ASSERT_EQ(ftruncate(fd, (off_t)plan.file_size), 0);
  close(fd);
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ((uint64_t)st.st_size, plan.file_size);

  LazyAttentionFile f;
  const Status opened = OpenPath(path, &f);
  ASSERT_TRUE(opened.ok) << opened.message;
  ASSERT_EQ(f.index().sets[0].layers.size(), 32u);
  EXPECT_EQ(f.index().sets[0].PoolRows(LazyPool::Overview), 256);
  const LazyResult r = Fetch(&f, Rows(0, 7, 19, 0, n));
  ASSERT_TRUE(r.status.ok) << r.status.message;
  int64_t wrong = 0;
  for (int row = 0; row < n; ++row) {
    wrong += r.weights(row, (row * 3) % n) != 1.0f;
    wrong += r.weights.row(row).sum() != 1.0f;
  }
  EXPECT_EQ(wrong, 0);
  // Rows of an unwritten head read as zeros; only their bytes are read.
  const uint64_t before = f.BytesRead();
  const LazyResult z = Fetch(&f, Rows(0, 31, 31, n - 96, n));
  ASSERT_TRUE(z.status.ok);
  EXPECT_EQ(f.BytesRead() - before, 96u * (uint64_t)n * 2u);
  EXPECT_EQ(z.weights.sum(), 0.0f);
  std::remove(path.c_str());
}

}  // namespace

namespace {

// A .npy header (version 1.0, padded to 64 bytes as np.save does) for `descr`, `shape`, C or Fortran order.
std::vector<uint8_t> NpyHeaderFor(const std::string& descr, const std::vector<int64_t>& shape, bool fortran = false) {
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") + ", 'shape': (";
  for (size_t i = 0; i < shape.size(); ++i)
    dict += std::to_string(shape[i]) + (shape.size() == 1 || i + 1 < shape.size() ? ", " : "");
  dict += "), }";
  while ((10 + dict.size() + 1) % 64) dict += ' ';
  dict += '\n';
  const uint8_t magic[10] = {
      0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (uint8_t)(dict.size() & 0xff), (uint8_t)(dict.size() >> 8)};
  std::vector<uint8_t> out(sizeof(magic) + dict.size());
  std::memcpy(out.data(), magic, sizeof(magic));
  std::memcpy(out.data() + sizeof(magic), dict.data(), dict.size());
  return out;
}

}  // namespace

TEST(LazyAttention, ABigNpyArrayReadsHeadByHead) {
  // np.save of a [32, 32, n, n] float16 array (32 GiB at n = 4096; 960 in WASM, as above): the header
  // and head (7, 19) are written, the rest is a hole. Too big to read whole, so it is read lazily.
  const int n = sizeof(void*) == 8 ? 4096 : 960;
  const std::vector<uint8_t> header = NpyHeaderFor("<f2", {32, 32, n, n});
  const uint64_t file_size = header.size() + uint64_t(32) * 32 * n * n * 2;
  const std::string path = TempPath("sparse_npy");
  const int fd = open(path.c_str(), O_CREAT | O_TRUNC | O_RDWR, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(pwrite(fd, header.data(), header.size(), 0), (ssize_t)header.size());
  std::vector<uint16_t> head((size_t)n * n, 0);
  for (int r = 0; r < n; ++r) head[(size_t)r * n + (size_t)(r * 5) % n] = FloatToHalf(1.0f);
  const uint64_t head_at = header.size() + (uint64_t(7) * 32 + 19) * n * n * 2;
  ASSERT_EQ(pwrite(fd, head.data(), head.size() * 2, (off_t)head_at), (ssize_t)(head.size() * 2));
  ASSERT_EQ(ftruncate(fd, (off_t)file_size), 0);
  close(fd);

  std::unique_ptr<ByteSource> source;
  ASSERT_TRUE(OpenFileSource(path, &source).ok);
  EXPECT_TRUE(OpensLazily(source.get()));
  EXPECT_TRUE(NpyOpensLazily(header.data(), header.size(), file_size));
  LazyAttentionFile f;
  const Status opened = OpenPath(path, &f);
  ASSERT_TRUE(opened.ok) << opened.message;
  const LazyAttentionIndex& ix = f.index();
  EXPECT_TRUE(ix.npy);
  EXPECT_EQ(ix.header.file_size, file_size);
  ASSERT_EQ(ix.sets.size(), 1u);
  const LazySet& s = ix.sets[0];
  ASSERT_EQ(s.layers.size(), 32u);
  EXPECT_EQ(s.layers[31].heads, 32);
  EXPECT_EQ(s.layers[0].dtype, StDType::F16);
  EXPECT_EQ(s.n_q, n);
  EXPECT_TRUE(s.self_attention);
  EXPECT_EQ(s.kind, AttentionKind::Self);
  EXPECT_EQ(s.PoolRows(LazyPool::Overview), 0);  // a .npy stores none: the viewer pools them
  EXPECT_EQ(s.key_tokens[n - 1], std::to_string(n - 1));
  const LazyResult r = Fetch(&f, Rows(0, 7, 19, 0, n));
  ASSERT_TRUE(r.status.ok) << r.status.message;
  int64_t wrong = 0;
  for (int row = 0; row < n; ++row) wrong += r.weights(row, (row * 5) % n) != 1.0f || r.weights.row(row).sum() != 1.0f;
  EXPECT_EQ(wrong, 0);
  const uint64_t before = f.BytesRead();  // a band of another head: only its bytes
  const LazyResult z = Fetch(&f, Rows(0, 7, 20, 10, 42));
  ASSERT_TRUE(z.status.ok);
  EXPECT_EQ(f.BytesRead() - before, 32u * (uint64_t)n * 2u);
  EXPECT_EQ(z.weights.sum(), 0.0f);
  std::remove(path.c_str());
}

TEST(LazyAttention, ANpyArrayIsReadLazilyOnlyWhenTooBigAndRefusedWithReasons) {
  // A small [2, 3, 4, 5] float32 array: the eager readers take it; read lazily, the same values.
  std::vector<uint8_t> small = NpyHeaderFor("<f4", {2, 3, 4, 5});
  const size_t data_at = small.size();
  small.resize(data_at + 120 * 4);
  for (int i = 0; i < 120; ++i) {
    const float v = (float)i / 120.0f;
    std::memcpy(small.data() + data_at + 4 * i, &v, 4);
  }
  EXPECT_FALSE(NpyOpensLazily(small.data(), small.size(), small.size()));
  MemorySource small_source(small);
  EXPECT_FALSE(OpensLazily(&small_source));
  LazyAttentionFile f;
  Status st = f.Open(std::unique_ptr<ByteSource>(new MemorySource(small)), small.data(), small.size());
  ASSERT_TRUE(st.ok) << st.message;
  EXPECT_FALSE(f.index().sets[0].self_attention);  // 4 x 5: queries and keys differ
  const LazyResult r = Fetch(&f, Rows(0, 1, 2, 1, 3));
  ASSERT_TRUE(r.status.ok);
  const int flat0 = ((1 * 3 + 2) * 4 + 1) * 5;  // layer 1, head 2, row 1, column 0
  EXPECT_EQ(r.weights(0, 0), (float)flat0 / 120.0f);
  EXPECT_EQ(r.weights(1, 4), (float)(flat0 + 9) / 120.0f);

  // Headers of arrays too big to read whole, on files that hold only the header.
  auto refused = [](const std::vector<uint8_t>& header, uint64_t file_size) {
    EXPECT_TRUE(NpyOpensLazily(header.data(), header.size(), file_size));
    LazyAttentionFile g;
    std::vector<uint8_t> file(header);
    const Status s = g.Open(std::unique_ptr<ByteSource>(new MemorySource(file)), header.data(), header.size());
    EXPECT_FALSE(s.ok);
    return s.message;
  };
  const int64_t big = 8192;  // 64 x 64 x 8192^2 weights: past 2^28
  EXPECT_NE(refused(NpyHeaderFor("<f2", {64, 64, big, big}), 0).find("the file is"), std::string::npos);
  EXPECT_NE(refused(NpyHeaderFor("<f2", {64, 64, big, big}), 0).find("truncated"), std::string::npos);
  EXPECT_NE(refused(NpyHeaderFor("<f4", {64, 64, big, big}, true), 0).find("Fortran order"), std::string::npos);
  EXPECT_NE(refused(NpyHeaderFor(">f4", {64, 64, big, big}), 0).find("big-endian"), std::string::npos);
  EXPECT_NE(refused(NpyHeaderFor("<i4", {64, 64, big, big}), 0).find("int32; attention weights must be"),
            std::string::npos);
  EXPECT_NE(refused(NpyHeaderFor("<f2", {2, 64, 64, big, big}), 0).find("must be [layers, heads"), std::string::npos);
  EXPECT_NE(refused(NpyHeaderFor("<f2", {4096, 64, big, big}), 0).find("exceeds the size limits"), std::string::npos);
  // Shapes whose product overflows 64 bits are refused by the header parser, before any arithmetic on them.
  const std::vector<uint8_t> huge = NpyHeaderFor("<f2", {2000000000, 2000000000, 2000000000});
  EXPECT_FALSE(NpyOpensLazily(huge.data(), huge.size(), 1 << 20));
  NpyHeader h;
  EXPECT_NE(ParseNpyHeader(huge.data(), huge.size(), &h, int64_t(1) << 50).message.find("more than"),
            std::string::npos);
  // A version-2 header length far beyond the file: refused before anything is allocated for it.
  std::vector<uint8_t> lie = {0x93, 'N', 'U', 'M', 'P', 'Y', 2, 0, 0xff, 0xff, 0xff, 0x7f, '{'};
  lie.resize(4096, ' ');
  MemorySource lie_source(lie);
  std::vector<uint8_t> prefix;
  EXPECT_NE(ReadLazyPrefix(&lie_source, &prefix).message.find("too short for its header"), std::string::npos);
  EXPECT_FALSE(OpensLazily(&lie_source));
  std::vector<uint8_t> long_header = {0x93, 'N', 'U', 'M', 'P', 'Y', 2, 0, 0, 0, 0x20, 0, '{'};  // 2 MiB
  long_header.resize(3 << 20, ' ');
  MemorySource long_source(long_header);
  EXPECT_NE(ReadLazyPrefix(&long_source, &prefix).message.find("is too large"), std::string::npos);
}

namespace {

// An .npz as np.savez writes it (stored members, Zip64 records): a [2, 3, 4, 5] float32 attention
// array (weight i / 120 at flat index i) and the small members given.
std::vector<uint8_t> NpzWith(const std::vector<std::pair<std::string, std::vector<std::string>>>& strings,
                             bool deflate = false, const std::vector<int64_t>& shape = {2, 3, 4, 5}) {
  std::vector<uint8_t> attention = NpyHeaderFor("<f4", shape);
  const size_t at = attention.size();
  attention.resize(at + 120 * 4);
  for (int i = 0; i < 120; ++i) {
    const float v = (float)i / 120.0f;
    std::memcpy(attention.data() + at + 4 * i, &v, 4);
  }
  std::vector<std::vector<uint8_t>> small(strings.size());
  std::vector<ZipWriteMember> members = {{"attention.npy", &attention}};
  for (size_t i = 0; i < strings.size(); ++i) {
    EXPECT_TRUE(WriteNpy(FromStrings(strings[i].second), &small[i]).ok);
    members.push_back({strings[i].first + ".npy", &small[i]});
  }
  ZipWriteOptions o;
  o.deflate = deflate;
  o.force_zip64 = true;
  std::vector<uint8_t> out;
  EXPECT_TRUE(ZipWrite(members, o, &out).ok);
  return out;
}

// Opens an .npz lazily as the viewer does (ReadLazyPrefix, then Open): "" or the message.
std::string OpenNpz(const std::vector<uint8_t>& npz, LazyAttentionFile* f) {
  MemorySource probe(npz.data(), npz.size());
  std::vector<uint8_t> prefix;
  Status st = ReadLazyPrefix(&probe, &prefix);
  if (st) st = f->Open(std::unique_ptr<ByteSource>(new MemorySource(npz)), prefix.data(), prefix.size());
  return st.message;
}

struct MemoryBudgetFor {  // the default memory budget for one test, the default again afterwards
  explicit MemoryBudgetFor(uint64_t bytes) { SetDefaultMemoryBudget(bytes); }
  ~MemoryBudgetFor() { SetDefaultMemoryBudget(0); }
};

}  // namespace

TEST(LazyAttention, AStoredNpzTooBigToReadWholeIsReadLazilyWithItsTokensAndNames) {
  std::vector<std::string> words;
  for (int i = 0; i < 5; ++i) words.push_back("w" + std::to_string(i));
  const std::vector<uint8_t> npz =
      NpzWith({{"source_tokens", words}, {"target_tokens", {"a", "b", "c", "d"}}, {"layer_names", {"enc", "dec"}}});
  MemorySource source(npz.data(), npz.size());
  EXPECT_FALSE(OpensLazily(&source));  // it fits the budget: read whole
  MemoryBudgetFor budget(1024);
  EXPECT_TRUE(OpensLazily(&source));
  LazyAttentionFile f;
  ASSERT_EQ(OpenNpz(npz, &f), "");
  const LazySet& set = f.index().sets[0];
  EXPECT_EQ(set.key_tokens, words);
  EXPECT_EQ(set.query_tokens, (std::vector<std::string>{"a", "b", "c", "d"}));
  EXPECT_FALSE(set.self_attention);
  EXPECT_EQ(set.layers[1].name, "dec");
  EXPECT_TRUE(f.index().warnings.empty());
  const LazyResult r = Fetch(&f, Rows(0, 1, 2, 1, 3));  // layer 1, head 2, rows 1-2
  ASSERT_TRUE(r.status.ok) << r.status.message;
  const int flat0 = ((1 * 3 + 2) * 4 + 1) * 5;
  EXPECT_EQ(r.weights(0, 0), (float)flat0 / 120.0f);
  EXPECT_EQ(r.weights(1, 4), (float)(flat0 + 9) / 120.0f);

  // Its tokens are charged to the memory budget before they are read (1 KiB here: 300 tokens do not fit).
  std::vector<std::string> many(300, "w");
  LazyAttentionFile over;
  EXPECT_NE(OpenNpz(NpzWith({{"source_tokens", many}}), &over).find("over the memory budget"), std::string::npos);

  // One list of tokens is self-attention only if it fits both sides.
  LazyAttentionFile g;
  EXPECT_NE(OpenNpz(NpzWith({{"tokens", words}}), &g).find("5 query tokens for 4 rows"), std::string::npos);
  LazyAttentionFile square;
  ASSERT_EQ(OpenNpz(NpzWith({{"tokens", {"x", "y", "z"}}}, false, {2, 4, 3, 3}), &square), "");
  EXPECT_TRUE(square.index().sets[0].self_attention);
  EXPECT_EQ(square.index().sets[0].key_tokens[2], "z");

  // What cannot be read lazily says what would make it readable.
  LazyAttentionFile h;
  EXPECT_NE(OpenNpz(NpzWith({{"tokens", words}}, true), &h).find("compressed (np.savez_compressed"), std::string::npos);
  LazyAttentionFile v2;
  EXPECT_NE(OpenNpz(NpzWith({{"attnviz_version", {"2"}}}), &v2).find("several attention sets"), std::string::npos);
  LazyAttentionFile none;
  std::vector<uint8_t> other = NpzWith({{"tokens", words}});
  const size_t name_at = std::string(other.begin(), other.end()).find("attention.npy");
  ASSERT_NE(name_at, std::string::npos);
  // Renaming the member in its local header only: the listing refuses the disagreement.
  other[name_at] = 'X';
  EXPECT_NE(OpenNpz(other, &none).find("npz: zip:"), std::string::npos);
  // The attention member shorter than its header says (the array declared far bigger).
  std::vector<uint8_t> big_header = NpzWith({}, false, {64, 64, 8192, 8192});
  LazyAttentionFile short_member;
  EXPECT_NE(OpenNpz(big_header, &short_member).find("but its array needs"), std::string::npos);
  MemoryBudgetFor roomy(0);
  MemorySource big_source(big_header.data(), big_header.size());
  EXPECT_TRUE(OpensLazily(&big_source));  // small, but past 2^28 weights: the lazy reader says why not
  // Every cut of the descriptor is refused, none read out of bounds (ASan).
  MemorySource probe(npz.data(), npz.size());
  std::vector<uint8_t> prefix;
  ASSERT_TRUE(ReadLazyPrefix(&probe, &prefix).ok);
  for (size_t n = 0; n < prefix.size(); n += 7) {
    LazyAttentionIndex index;
    std::vector<uint8_t> cut(prefix.begin(), prefix.begin() + (long)n);
    EXPECT_FALSE(ReadLazyNpzIndex(cut.data(), cut.size(), &index).ok) << n;
  }
}

TEST(LazyAttention, AStreamedWriteIsTheSameFileAsAWholeOne) {
  // Two sets, the second with heads over 1024 rows (thumbnails and screen copies too), layers of 2 and 3 heads.
  std::mt19937 rng(11);
  AttentionDocument doc;
  for (int s = 0; s < 2; ++s) {
    AttentionSet set;
    set.name = s ? "tall" : "small";
    const int rows = s ? 1030 : 7, cols = s ? 20 : 9;
    set.data.target_tokens = Tokens("q", rows);
    set.data.source_tokens = Tokens("k", cols);
    for (int l = 0; l < 2; ++l) {
      AttentionFile::Layer layer{"layer " + std::to_string(l), {}};
      for (int h = 0; h < 2 + l; ++h)
        layer.heads.push_back({"h" + std::to_string(h), RandomAttention(rows, cols, &rng)});
      set.data.layers.push_back(std::move(layer));
    }
    doc.sets.push_back(std::move(set));
  }
  const std::string whole = TempPath("whole"), streamed = TempPath("streamed");
  ASSERT_TRUE(WriteLazyAttention(doc, StDType::F16, whole).ok);
  AttentionDocument shape = doc;
  for (AttentionSet& s : shape.sets)
    for (AttentionFile::Layer& l : s.data.layers)
      for (AttentionFile::Head& h : l.heads) h.weights = MatrixRM();
  std::vector<std::string> asked;
  const Status st = WriteLazyAttentionStreamed(shape, StDType::F16, streamed, [&](int s, int l, int h, MatrixRM* w) {
    asked.push_back(std::to_string(s) + std::to_string(l) + std::to_string(h));
    *w = doc.sets[(size_t)s].data.layers[(size_t)l].heads[(size_t)h].weights;
    return Status::Ok();
  });
  ASSERT_TRUE(st.ok) << st.message;
  EXPECT_EQ(asked, (std::vector<std::string>{"000", "001", "010", "011", "012", "100", "101", "110", "111", "112"}));
  std::vector<uint8_t> a, b;
  ASSERT_TRUE(ReadFileBytes(whole, &a).ok);
  ASSERT_TRUE(ReadFileBytes(streamed, &b).ok);
  EXPECT_EQ(a.size(), b.size());
  EXPECT_TRUE(a == b) << "the streamed file differs from the whole one";
  // A head of the wrong shape, or a source that fails: an error, and no file left behind.
  const Status bad = WriteLazyAttentionStreamed(shape, StDType::F16, streamed, [&](int s, int, int, MatrixRM* w) {
    *w = MatrixRM::Zero(s ? 3 : 7, 9);
    return Status::Ok();
  });
  EXPECT_NE(bad.message.find("is not [n_q, n_k] = [1030, 20]"), std::string::npos) << bad.message;
  EXPECT_NE(access(streamed.c_str(), F_OK), 0);
  const Status failed = WriteLazyAttentionStreamed(
      shape, StDType::F16, streamed, [&](int, int, int, MatrixRM*) { return Status::Error("the source failed"); });
  EXPECT_EQ(failed.message, "the source failed");
  EXPECT_NE(access(streamed.c_str(), F_OK), 0);
  std::remove(whole.c_str());
}

TEST(LazyAttention, APooledHeadIsDecodedInWholeRows) {
  // A bare .npy [1, 1, 5, 65536] float32 (the longest rows): steps of 4 rows (a piece), then 1.
  const int64_t rows = 5, cols = 65536;
  ASSERT_EQ(LazyAttentionFile::kPieceWeights / cols, 4);
  std::vector<uint8_t> bytes = NpyHeaderFor("<f4", {1, 1, rows, cols});
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  for (int64_t i = 0; i < rows * cols; ++i) {
    float w = u(rng);
    if (i == 1000) w = -2.0f;         // fixed up to 0
    if (i == 4 * cols + 5) w = 3.0f;  // in the last step's row
    uint8_t b[4];
    std::memcpy(b, &w, 4);
    bytes.insert(bytes.end(), b, b + 4);
  }
  const std::string path = TempPath("pooled_long") + ".npy";
  ASSERT_TRUE(WriteFileBytes(path, bytes.data(), bytes.size()).ok);
  ExpectPooledHeadIsItsOverview(path, rows, cols, 1, 3.0f);
  std::remove(path.c_str());
}
