// Decoding F16 attention weights to float (docs/PERFORMANCE.md, "Big files"): the lazy reader's
// pieces and the eager readers' F16 heads. Times, in one process with the implementations
// alternating, the shipped functions against the two they replaced (kept here as baselines):
//   weights  DecodeHalfWeights (vectorized; NaN, infinities and negatives -> 0, counted, the max)
//            vs  table: one load from a 256 KiB table per weight (the lazy reader until stop 25)
//            vs  lanes_loop: its portable loop alone, as the compiler vectorizes it (all of it in
//                WebAssembly until stop 52; half_simd128.cpp since, as half_f16c.cpp natively)
//   exact    DecodeFloats(F16) (vectorized, exact for every value)
//            vs  branchy: a conversion with branches for subnormals and infinities (until stop 25)
//   json     ParseJson of numbers as attnviz and numpy write float32 weights (<= 9 digits), with
//            the exact fast path for short numbers vs every number through strtod; and writing
//            them back (JsonWriter::NumberF) vs printf until strtof reads the text back
//   f32/bf16 DecodeWeights (branch-free, since stop 27) vs the conversion and a branchy clean-up loop
//   json17   the same weights as Python's json writes a tensor's tolist() (16-17 digits): the
//            128-bit integer path vs strtod
//   upload   a 1024 x 1024 head made ready for the GPU: ScanRows (read only, since stop 28) vs the
//            renderer's cleaned copy with row maxima until then, into a buffer already touched (a first
//            upload also paid for the buffer's fresh pages: the lazy bench's upload_ms shows that)
//   pool     a 2048^2 F16 head made into its 256 x 256 overview (a file without overviews, whose grid
//            reads each head whole): decoded a piece at a time and max-pooled as it is decoded
//            (LazyRequest::pooled, since stop 38) vs decoded into the head's floats, then pooled
//            (until then), with the old pooling (a max per weight through a column-bin table) and
//            the new (a bin's rows combined, then its columns); and pooled as decoded with the
//            head's statistics from the same pieces (since stop 39)
//   halves   the renderer's work before an R16F upload since stop 33 (RowsToHalves: each row's
//            maximum and scale, then its halves, into a 512 KiB band) vs ScanRows alone (the R32F
//            upload's), and vs ScanRows then the scalar FloatToHalf per weight
// Lines:
//   json|json17 impl=fast|strtod numbers=.. median_ms=.. mb_per_s=..   and   ratio impl=json_fast vs=json_strtod
//   ratio=.. decode impl=.. weights=.. median_ns_per_weight=.. min_ns_per_weight=.. gb_per_s_out=.. ratio impl=.. vs=..
//   ratio=..   (the baseline's median time over the shipped one's: > 1 is faster) attnviz_decode_bench (native:
//   build/native/bench/; WASM: node --no-experimental-fetch ...js)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/half.h"
#include "core/head_stats.h"
#include "core/row_scan.h"
#include "io/json.h"
#include "io/lazy_attention.h"
#include "io/ndarray.h"
#include "io/safetensors.h"

using namespace attnviz;

namespace {

constexpr size_t kWeights = size_t(1) << 22;  // a 2048^2 head: 8 MiB of F16, 16 MiB of floats
constexpr size_t kPiece = size_t(1) << 18;    // the lazy reader's piece (kPieceWeights)
constexpr int kSamples = 9;

const float* Table() {
  static std::vector<float> table = [] {
    std::vector<float> t(65536);
    for (uint32_t h = 0; h < 65536; ++h) {
      const float f = HalfToFloat((uint16_t)h);
      t[h] = f >= 0.0f && f <= 3.4e38f ? f : 0.0f;
    }
    return t;
  }();
  return table.data();
}

size_t TableWeights(const uint8_t* src, size_t n, float* dst, float* max) {
  const float* table = Table();
  float mx = 0.0f;
  size_t fixed = 0;
  for (size_t i = 0; i < n; ++i) {
    uint16_t h;
    std::memcpy(&h, src + 2 * i, 2);
    dst[i] = table[h];
    mx = std::max(mx, dst[i]);
    fixed += ((h & 0x7c00) == 0x7c00) | ((h >> 15) & ((h & 0x7fff) != 0));
  }
  *max = mx;
  return fixed;
}

// DecodeHalfWeights' portable loop (safetensors.cpp, HalfBitsToFloatBits inlined), without the
// vector paths in front of it.
inline __attribute__((always_inline)) uint32_t LoopHalfBits(uint32_t h) {
  const uint32_t x = h & 0x7fffu;
  const uint32_t special = 0u - (uint32_t)(x >= 0x7c00u), subnormal = 0u - (uint32_t)(x < 0x400u);
  const uint32_t normal = (x << 13) + 0x38000000u + (special & 0x38000000u);
  const float sub = (float)(int32_t)x * 5.9604644775390625e-08f;
  uint32_t sub_bits;
  std::memcpy(&sub_bits, &sub, 4);
  return (sub_bits & subnormal) | (normal & ~subnormal) | ((h & 0x8000u) << 16);
}

__attribute__((noinline)) size_t LanesLoopWeights(const uint8_t* src, size_t n, float* dst, float* max) {
  int32_t top = 0;
  size_t fixed = 0;
  for (size_t begin = 0; begin < n; begin += 65536) {
    const size_t end = std::min(n, begin + 65536);
    int32_t bad_count = 0;
    for (size_t i = begin; i < end; ++i) {
      uint16_t h;
      std::memcpy(&h, src + 2 * i, 2);
      const int32_t x = h & 0x7fff;
      const int32_t bad = (int32_t)(x > 0x7bff) | ((int32_t)(h >> 15) & (int32_t)(x != 0));
      const int32_t w = x & (bad - 1);
      bad_count += bad;
      top = top > w ? top : w;
      const uint32_t bits = LoopHalfBits((uint32_t)w);
      std::memcpy(dst + i, &bits, 4);
    }
    fixed += (size_t)bad_count;
  }
  const uint32_t bits = LoopHalfBits((uint32_t)top);
  std::memcpy(max, &bits, 4);
  return fixed;
}

float Branchy(uint16_t h) {
  uint32_t o = (uint32_t)(h & 0x7fff) << 13;
  const uint32_t exp = o & 0x0f800000u;
  o += 0x38000000u;
  float f;
  if (exp == 0x0f800000u) {
    o += 0x38000000u;
    std::memcpy(&f, &o, 4);
  } else if (exp == 0) {
    o += 1u << 23;
    std::memcpy(&f, &o, 4);
    f -= 6.103515625e-05f;
  } else {
    std::memcpy(&f, &o, 4);
  }
  return (h & 0x8000) ? -f : f;
}

void BranchyExact(const uint8_t* src, size_t n, float* dst) {
  for (size_t i = 0; i < n; ++i) {
    uint16_t h;
    std::memcpy(&h, src + 2 * i, 2);
    dst[i] = Branchy(h);
  }
}

double Seconds(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

struct Impl {
  const char* name;
  int kind;  // 0 table, 1 DecodeHalfWeights, 2 branchy, 3 DecodeFloats, 4 lanes_loop
  std::vector<double> samples;
};

double RunOnce(int kind, const std::vector<uint8_t>& src, std::vector<float>* dst, double* checksum) {
  const auto t0 = std::chrono::steady_clock::now();
  size_t fixed = 0;
  float top = 0.0f;
  for (size_t at = 0; at < kWeights; at += kPiece) {  // piece by piece, as the lazy reader decodes
    const uint8_t* s = src.data() + 2 * at;
    float* d = dst->data() + at;
    float mx = 0.0f;
    if (kind == 0) fixed += TableWeights(s, kPiece, d, &mx);
    if (kind == 1) fixed += DecodeHalfWeights(s, kPiece, d, &mx);
    if (kind == 2) BranchyExact(s, kPiece, d);
    if (kind == 3) DecodeFloats(StDType::F16, s, kPiece, d);
    if (kind == 4) fixed += LanesLoopWeights(s, kPiece, d, &mx);
    top = std::max(top, mx);
  }
  const double t = Seconds(t0);
  *checksum = (double)fixed + top + (*dst)[kWeights / 3];
  return t;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The renderer's upload preparation until stop 28 (HeatmapRenderer::CleanToScratch): every weight
// copied, non-finite ones as 0, and each row's maximum.
void CleanCopy(const float* data, int rows, int cols, float* clean, float* row_max) {
  for (int r = 0; r < rows; ++r) {
    float m = 0.0f;
    for (int c = 0; c < cols; ++c) {
      float v = data[(size_t)r * cols + c];
      if (!std::isfinite(v)) v = 0.0f;
      clean[(size_t)r * cols + c] = v;
      m = std::max(m, v);
    }
    row_max[r] = m;
  }
}

// A head's weights made ready for upload: ScanRows against the cleaned copy, alternating. Returns
// whether the row maxima agree.
bool UploadLines(const std::vector<float>& weights) {
  const int rows = 1024, cols = 1024;
  const size_t n = (size_t)rows * cols;
  std::vector<float> clean(n), max_a(rows), max_b(rows);
  const char* names[] = {"ScanRows", "clean_copy"};
  std::vector<double> samples[2];
  bool finite = true;
  for (int round = 0; round < kSamples + 2; ++round)
    for (int r = 0; r < 2; ++r) {
      const int k = (r + round) % 2;
      const auto t0 = std::chrono::steady_clock::now();
      if (k == 0) finite = ScanRows(weights.data(), rows, cols, max_a.data());
      if (k == 1) CleanCopy(weights.data(), rows, cols, clean.data(), max_b.data());
      if (round >= 2) samples[k].push_back(Seconds(t0));
    }
  for (int k = 0; k < 2; ++k)
    std::printf("upload impl=%s rows=%d cols=%d median_ms=%.3f\n", names[k], rows, cols, Median(samples[k]) * 1e3);
  std::printf("ratio impl=ScanRows vs=clean_copy ratio=%.2f\n", Median(samples[1]) / Median(samples[0]));
  size_t differ = finite ? 1 : 0;  // the weights hold NaNs: ScanRows must say so
  for (int r = 0; r < rows; ++r) differ += max_a[r] != max_b[r];
  return differ == 0;
}

// MaxPoolRows until stop 38: a max per weight into its cell, through a column-bin table.
void OldMaxPool(const float* head, int64_t rows, int64_t cols, int out_rows, int out_cols, float* out) {
  std::fill(out, out + (size_t)out_rows * out_cols, 0.0f);
  std::vector<int> col_bin((size_t)cols);
  for (int b = 0; b < out_cols; ++b)
    for (int64_t c = (int64_t)b * cols / out_cols; c < (int64_t)(b + 1) * cols / out_cols; ++c) col_bin[(size_t)c] = b;
  int r = 0;
  for (int64_t i = 0; i < rows; ++i) {
    while ((int64_t)(r + 1) * rows / out_rows <= i) ++r;
    float* o = out + (size_t)r * out_cols;
    const float* row = head + i * cols;
    for (int64_t c = 0; c < cols; ++c) o[col_bin[(size_t)c]] = std::max(o[col_bin[(size_t)c]], row[c]);
  }
}

// A 2048^2 F16 head into its 256 x 256 overview, three ways, alternating, and a fourth: pooled as
// decoded with the head's statistics from the same pieces (LazyRequest::with_stats, since stop 39:
// the grid of a file without overviews sorts the heads it made thumbnails of). Returns whether
// they agree (the statistics: with those of the whole head).
bool PoolLines(const std::vector<uint8_t>& src) {
  const int n = 2048, side = 256;
  const size_t per_piece = kPiece / n * n;  // whole rows, as the reader's pooled steps
  std::vector<float> head(kWeights), piece(per_piece), out[4];
  const char* names[] = {"pooled_as_decoded", "whole_head_then_old_pool", "whole_head_then_new_pool",
                         "pooled_with_stats"};
  std::vector<double> samples[4];
  HeadStatsAccumulator acc;
  HeadStats pooled_stats;
  for (int round = 0; round < kSamples + 2; ++round)
    for (int r = 0; r < 4; ++r) {
      const int k = (r + round) % 4;
      out[k].assign((size_t)side * side, 0.0f);
      float mx = 0;
      const auto t0 = std::chrono::steady_clock::now();
      if (k == 3) acc.Begin(n, n);
      for (size_t done = 0; done < kWeights; done += per_piece) {
        const size_t m = std::min(per_piece, kWeights - done);
        float* dst = k == 0 || k == 3 ? piece.data() : head.data() + done;
        DecodeHalfWeights(src.data() + 2 * done, m, dst, &mx);
        const int64_t row0 = (int64_t)(done / n), row1 = (int64_t)((done + m) / n);
        if (k == 0 || k == 3) MaxPoolPiece(dst, n, n, row0, row1, side, side, out[k].data());
        if (k == 3) (void)acc.AddRowData(dst, (int)row0, (int)row1);
      }
      if (k == 1) OldMaxPool(head.data(), n, n, side, side, out[k].data());
      if (k == 2) MaxPoolOverview(head.data(), n, n, side, side, out[k].data());
      if (k == 3) (void)acc.Finish(&pooled_stats);
      if (round >= 2) samples[k].push_back(Seconds(t0));
    }
  for (int k = 0; k < 4; ++k)
    std::printf("pool impl=%s weights=%zu median_ms=%.3f ns_per_weight=%.3f\n", names[k], kWeights,
                Median(samples[k]) * 1e3, Median(samples[k]) * 1e9 / kWeights);
  std::printf("ratio impl=pooled_as_decoded vs=whole_head_then_old_pool ratio=%.2f\n",
              Median(samples[1]) / Median(samples[0]));
  std::printf("ratio impl=new_pool vs=old_pool ratio=%.2f (both decode the whole head first: the new pooling alone)\n",
              Median(samples[1]) / Median(samples[2]));
  std::printf("ratio impl=pooled_with_stats vs=pooled_as_decoded ratio=%.2f (< 1: what the statistics cost)\n",
              Median(samples[0]) / Median(samples[3]));
  std::printf("ratio impl=pooled_with_stats vs=whole_head_then_old_pool ratio=%.2f\n",
              Median(samples[1]) / Median(samples[3]));
  MatrixRM whole(n, n);
  std::memcpy(whole.data(), head.data(), kWeights * sizeof(float));  // decoded whole by the last rounds
  HeadStats want;
  const bool stats_same = ComputeHeadStats(whole, &want).ok && want.entropy == pooled_stats.entropy &&
                          want.dominant_offset == pooled_stats.dominant_offset &&
                          want.diagonality == pooled_stats.diagonality &&
                          want.rows_counted == pooled_stats.rows_counted;
  return out[0] == out[1] && out[1] == out[2] && out[0] == out[3] && stats_same;
}

// What HeatmapRenderer::Upload does on the CPU for an R16F texture (bands of 2^18 weights):
// RowsToHalves, or the same with the scalar FloatToHalf after ScanRows.
void HalfRows(const float* w, int rows, int cols, bool scalar, std::vector<float>* pairs, std::vector<uint16_t>* band) {
  const int band_rows = std::max(1, (1 << 18) / cols);
  for (int r0 = 0; r0 < rows; r0 += band_rows) {
    const int n = std::min(band_rows, rows - r0);
    const float* src = w + (size_t)r0 * cols;
    if (!scalar) {
      RowsToHalves(src, n, cols, pairs->data() + 2 * (size_t)r0, band->data());
      continue;
    }
    ScanRows(src, n, cols, pairs->data() + 2 * (size_t)r0);  // (only the maxima's cost; the pairs are not used)
    for (int r = 0; r < n; ++r) {
      float a = 0.0f;
      for (int c = 0; c < cols; ++c)
        a = std::max(a, std::isfinite(src[(size_t)r * cols + c]) ? std::fabs(src[(size_t)r * cols + c]) : 0.0f);
      const float inv = 1.0f / PowerOfTwoAtLeast(a);
      for (int c = 0; c < cols; ++c) {
        const float v = src[(size_t)r * cols + c];
        (*band)[(size_t)r * cols + c] = std::isfinite(v) ? FloatToHalf(v * inv) : 0;
      }
    }
  }
}

// The renderer's R16F preparation against ScanRows alone (R32F) and a scalar conversion, alternating.
// Returns whether the vector and scalar halves agree.
bool HalfLines(const std::vector<float>& weights) {
  const int rows = 1024, cols = 1024;
  std::vector<float> row_max(rows), pairs(2 * (size_t)rows);
  std::vector<uint16_t> band_a((size_t)1 << 18), band_b((size_t)1 << 18);
  const char* names[] = {"RowsToHalves", "ScanRows", "scalar_halves"};
  std::vector<double> samples[3];
  for (int round = 0; round < kSamples + 2; ++round)
    for (int i = 0; i < 3; ++i) {
      const int k = (i + round) % 3;
      const auto t0 = std::chrono::steady_clock::now();
      if (k == 0) HalfRows(weights.data(), rows, cols, false, &pairs, &band_a);
      if (k == 1) ScanRows(weights.data(), rows, cols, row_max.data());
      if (k == 2) HalfRows(weights.data(), rows, cols, true, &pairs, &band_b);
      if (round >= 2) samples[k].push_back(Seconds(t0));
    }
  for (int k = 0; k < 3; ++k)
    std::printf("halves impl=%s rows=%d cols=%d median_ms=%.3f ns_per_weight=%.3f\n", names[k], rows, cols,
                Median(samples[k]) * 1e3, Median(samples[k]) * 1e9 / ((double)rows * cols));
  std::printf("ratio impl=RowsToHalves vs=ScanRows ratio=%.2f (< 1: the R16F texture's CPU cost over R32F's)\n",
              Median(samples[1]) / Median(samples[0]));
  std::printf("ratio impl=RowsToHalves vs=scalar_halves ratio=%.2f\n", Median(samples[2]) / Median(samples[0]));
  return band_a == band_b;
}

// The lazy reader's F32 and BF16 weights until stop 27: the plain conversion, then a loop with a
// branch per weight for NaN, negatives and +inf, and the maximum.
size_t OldFloatWeights(StDType t, const uint8_t* src, size_t n, float* dst, float* max) {
  DecodeFloats(t, src, n, dst);
  size_t fixed = 0;
  float mx = 0.0f;
  for (size_t i = 0; i < n; ++i) {
    if (!(dst[i] >= 0.0f) || dst[i] > 3.4e38f) {
      dst[i] = 0.0f;
      ++fixed;
    }
    mx = std::max(mx, dst[i]);
  }
  *max = mx;
  return fixed;
}

// F32 and BF16 weights, piece by piece: DecodeWeights against OldFloatWeights, alternating. Prints
// the lines and returns whether both gave the same weights, counts and maxima.
bool FloatWeightLines(const std::vector<float>& weights) {
  bool same = true;
  for (StDType t : {StDType::F32, StDType::BF16}) {
    const size_t size = StDTypeSize(t);
    std::vector<uint8_t> src(size * kWeights);
    EncodeFloats(t, weights.data(), kWeights, src.data());
    std::vector<float> a(kWeights), b(kWeights);
    std::vector<double> samples[2];
    double fixed[2] = {0, 0};
    float top[2] = {0, 0};
    for (int round = 0; round < kSamples + 2; ++round)
      for (int r = 0; r < 2; ++r) {
        const int k = (r + round) % 2;  // 0 shipped, 1 old
        float* out = k ? b.data() : a.data();
        fixed[k] = 0;
        const auto t0 = std::chrono::steady_clock::now();
        for (size_t at = 0; at < kWeights; at += kPiece) {
          float mx = 0.0f;
          size_t f = 0;
          if (k == 0) DecodeWeights(t, src.data() + size * at, kPiece, out + at, &mx, &f);
          if (k == 1) f = OldFloatWeights(t, src.data() + size * at, kPiece, out + at, &mx);
          fixed[k] += (double)f;
          top[k] = std::max(top[k], mx);
        }
        if (round >= 2) samples[k].push_back(Seconds(t0));
      }
    for (int k = 0; k < 2; ++k)
      std::printf("decode impl=%s weights=%zu median_ns_per_weight=%.3f\n",
                  k ? (t == StDType::F32 ? "old_F32" : "old_BF16")
                    : (t == StDType::F32 ? "DecodeWeights_F32" : "DecodeWeights_BF16"),
                  kWeights, Median(samples[k]) * 1e9 / kWeights);
    std::printf("ratio impl=DecodeWeights_%s vs=old_%s ratio=%.2f\n", StDTypeName(t), StDTypeName(t),
                Median(samples[1]) / Median(samples[0]));
    size_t differ = fixed[0] != fixed[1] || top[0] != top[1];
    for (size_t i = 0; i < kWeights; ++i) differ += a[i] != b[i];
    same = same && differ == 0;
  }
  return same;
}

// A [rows][cols] JSON array of float32 weights: as numpy writes them (the shortest text that reads
// back as the float: <= 9 digits), or as Python's json writes a tensor's tolist() (the shortest that
// reads back as the double: mostly 16-17 digits).
std::string WeightsJson(int rows, int cols, bool python) {
  std::string doc = "[";
  uint32_t seed = 99;
  char b[32];
  for (int r = 0; r < rows; ++r) {
    doc += r ? ",[" : "[";
    for (int c = 0; c < cols; ++c) {
      seed = seed * 1664525u + 1013904223u;
      const float w = std::exp(-16.0f * (float)(seed >> 8) * (1.0f / 16777216.0f));
      for (int prec = python ? 15 : 6; prec <= 17; ++prec) {
        std::snprintf(b, sizeof(b), "%.*g", prec, (double)w);
        if (python ? std::strtod(b, nullptr) == (double)w : std::strtof(b, nullptr) == w) break;
      }
      doc += (c ? "," : "");
      doc += b;
    }
    doc += "]";
  }
  doc += "]";
  return doc;
}

// ParseJson of one such document with and without the fast paths, alternating: prints the json
// (numpy) or json17 (python) lines; returns how many numbers the two read differently.
size_t JsonReadLines(const char* tag, const std::string& doc, int rows, int cols, JsonValue v[2]) {
  std::vector<double> t[2];
  for (int round = 0; round < 7; ++round)
    for (int k = 0; k < 2; ++k) {
      const int which = (k + round) % 2;  // 0: fast path, 1: strtod
      JsonParseOptions options;
      options.fast_numbers = which == 0;
      v[which] = JsonValue();
      const auto t0 = std::chrono::steady_clock::now();
      if (!ParseJson(doc.data(), doc.size(), &v[which], options).ok) return (size_t)rows * cols;
      if (round >= 2) t[which].push_back(Seconds(t0));
    }
  const double fast = Median(t[0]), slow = Median(t[1]);
  std::printf("%s impl=fast numbers=%d median_ms=%.1f mb_per_s=%.1f\n", tag, rows * cols, fast * 1e3,
              doc.size() / fast * 1e-6);
  std::printf("%s impl=strtod numbers=%d median_ms=%.1f mb_per_s=%.1f\n", tag, rows * cols, slow * 1e3,
              doc.size() / slow * 1e-6);
  std::printf("ratio impl=%s_fast vs=%s_strtod ratio=%.2f\n", tag, tag, slow / fast);
  size_t differ = 0;
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      const double x = v[0].items[(size_t)r].numbers[(size_t)c], y = v[1].items[(size_t)r].numbers[(size_t)c];
      differ += std::memcmp(&x, &y, sizeof x) != 0;
    }
  return differ;
}

// Reading both kinds of JSON, then writing float32 weights back; returns false when a fast path
// read a number differently from strtod.
bool JsonLines() {
  const int rows = 512, cols = 1024;
  JsonValue v[2], v17[2];
  size_t differ = JsonReadLines("json", WeightsJson(rows, cols, false), rows, cols, v);
  differ += JsonReadLines("json17", WeightsJson(rows, cols, true), rows, cols, v17);
  // Writing the same weights back (JsonWriter::NumberF: the shortest text that reads back).
  std::vector<double> tw;
  size_t out_bytes = 0;
  for (int round = 0; round < 3; ++round) {
    JsonWriter w(0);
    const auto t0 = std::chrono::steady_clock::now();
    w.BeginArray();
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c) w.NumberF((float)v[0].items[(size_t)r].numbers[(size_t)c]);
    w.EndArray();
    tw.push_back(Seconds(t0));
    out_bytes = w.str().size();
  }
  // The baseline: what NumberF did until stop 25 (printf "%.6g".."%.9g" until strtof reads it back).
  std::vector<double> tp;
  for (int round = 0; round < 3; ++round) {
    std::string out;
    char b[32];
    const auto t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c) {
        const float f = (float)v[0].items[(size_t)r].numbers[(size_t)c];
        for (int prec = 6; prec <= 9; ++prec) {
          std::snprintf(b, sizeof(b), "%.*g", prec, (double)f);
          if (std::strtof(b, nullptr) == f) break;
        }
        out += b;
        out += ',';
      }
    tp.push_back(Seconds(t0));
  }
  std::printf("json impl=write numbers=%d median_ms=%.1f mb_per_s=%.1f\n", rows * cols, Median(tw) * 1e3,
              out_bytes / Median(tw) * 1e-6);
  std::printf("json impl=write_printf numbers=%d median_ms=%.1f\n", rows * cols, Median(tp) * 1e3);
  std::printf("ratio impl=json_write vs=json_write_printf ratio=%.2f\n", Median(tp) / Median(tw));
  std::printf("json check differing_numbers=%zu (0: the fast path reads every number as strtod does)\n", differ);
  return differ == 0;
}

}  // namespace

int main() {
  // Softmax-like weights: most tiny (many F16 subnormals), a few large, some hostile values.
  std::vector<uint8_t> src(2 * kWeights);
  uint32_t seed = 12345;
  for (size_t i = 0; i < kWeights; ++i) {
    seed = seed * 1664525u + 1013904223u;
    const float u = (float)(seed >> 8) * (1.0f / 16777216.0f);
    float w = std::exp(-24.0f * u);  // 1 .. 4e-11: normals and subnormals
    uint16_t h = FloatToHalf(w);
    if ((seed & 0xffff) == 7) h = 0x7e00;  // NaN
    if ((seed & 0xffff) == 9) h = 0xbc00;  // -1
    std::memcpy(src.data() + 2 * i, &h, 2);
  }
  std::vector<float> a(kWeights), b(kWeights);
  Impl impls[] = {{"table", 0, {}},
                  {"DecodeHalfWeights", 1, {}},
                  {"branchy", 2, {}},
                  {"DecodeFloats_F16", 3, {}},
                  {"lanes_loop", 4, {}}};
  double check[5] = {0, 0, 0, 0, 0};
  for (int round = 0; round < kSamples + 2; ++round)  // two warm-up rounds, then samples
    for (int r = 0; r < 5; ++r) {
      Impl& im = impls[(r + round) % 5];
      const double t = RunOnce(im.kind, src, im.kind == 2 || im.kind == 3 ? &b : &a, &check[im.kind]);
      if (round >= 2) im.samples.push_back(t);
    }
  // The shipped functions agree with their baselines on every weight.
  std::vector<float> ta(kWeights), tb(kWeights);
  float m0 = 0, m1 = 0;
  const size_t f0 = TableWeights(src.data(), kWeights, ta.data(), &m0);
  const size_t f1 = DecodeHalfWeights(src.data(), kWeights, tb.data(), &m1);
  size_t differ = f0 != f1 || m0 != m1;
  for (size_t i = 0; i < kWeights; ++i) differ += ta[i] != tb[i];
  float m4 = 0;
  differ += LanesLoopWeights(src.data(), kWeights, ta.data(), &m4) != f1 || m4 != m1;
  for (size_t i = 0; i < kWeights; ++i) differ += ta[i] != tb[i];
  BranchyExact(src.data(), kWeights, ta.data());
  DecodeFloats(StDType::F16, src.data(), kWeights, tb.data());
  for (size_t i = 0; i < kWeights; ++i) differ += std::memcmp(&ta[i], &tb[i], 4) != 0;
  for (const Impl& im : impls) {
    const double med = Median(im.samples), mn = *std::min_element(im.samples.begin(), im.samples.end());
    std::printf("decode impl=%s weights=%zu median_ns_per_weight=%.3f min_ns_per_weight=%.3f gb_per_s_out=%.2f\n",
                im.name, kWeights, med * 1e9 / kWeights, mn * 1e9 / kWeights, 4.0 * kWeights / med * 1e-9);
  }
  std::printf("ratio impl=DecodeHalfWeights vs=table ratio=%.2f\n",
              Median(impls[0].samples) / Median(impls[1].samples));
  std::printf("ratio impl=DecodeHalfWeights vs=lanes_loop ratio=%.2f\n",
              Median(impls[4].samples) / Median(impls[1].samples));
  std::printf("ratio impl=DecodeFloats_F16 vs=branchy ratio=%.2f\n",
              Median(impls[2].samples) / Median(impls[3].samples));
  std::printf("decode check differing_outputs=%zu (0: the same floats, counts and maxima as the baselines)\n", differ);
  // The same weights as F32 and BF16 (with the NaNs and negatives), for the lazy reader's other dtypes.
  std::vector<float> weights(kWeights);
  DecodeFloats(StDType::F16, src.data(), kWeights, weights.data());
  const bool floats_same = FloatWeightLines(weights);
  std::printf("decode check f32_bf16_same=%d (1: the same floats, counts and maxima as the old loop)\n",
              floats_same ? 1 : 0);
  const bool upload_same = UploadLines(weights);
  std::printf("decode check upload_row_max_same=%d (1: ScanRows gives the copy's row maxima and finds the NaNs)\n",
              upload_same ? 1 : 0);
  const bool halves_same = HalfLines(weights);
  std::printf("decode check halves_same=%d (1: the vectorized halves equal the scalar FloatToHalf's)\n",
              halves_same ? 1 : 0);
  const bool pool_same = PoolLines(src);
  std::printf(
      "decode check pool_same=%d (1: the four ways give the same overview, the statistics those of the whole head)\n",
      pool_same ? 1 : 0);
  const bool json_same = JsonLines();
  return differ == 0 && json_same && floats_same && upload_same && halves_same && pool_same ? 0 : 1;
}
