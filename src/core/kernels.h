// attnviz core: the attention hot path (Q K^T, row softmax, P V), fast and reference twins.
//
// Index of this header
//   - Workspace          packed buffers, allocated once and reused (grow only)
//   - Tile variants      register-tile GEMM block kernels, picked at run time by a short probe
//   - GEMM               C = alpha * A B (NN) and C = alpha * A B^T (NT), row-major
//   - Exp                vectorized exp (range-reduced polynomial) and its scalar twin
//   - Softmax            stable row softmax in place (subtract row max, guard zero sum)
//   - AttentionForward   fused single-head scaled-dot attention: scores -> softmax -> P V
//   - RowBlockChooser    AttentionForward's query-row block, chosen by timing its calls
//
// Every fast kernel has a plain reference twin (suffix Ref) that the tests compare it with.
// The fast GEMM runs through one of several register-tile variants (TileVariant): hand-written
// WASM SIMD128 in the web build (plus relaxed-SIMD FMA variants that the web glue registers from
// a separate module), and GCC vector-extension loops natively for SSE2, AVX2+FMA and AVX-512F,
// the latter two compiled in their own translation units and offered only when the CPU has them.
// A probe times the variants on this machine and keeps the fastest: a quick one (one variant per
// ISA, ~2 ms) at the first call, full ones (every variant, ~6 ms; ~20 ms in a page whose clock
// moves in 100 us steps) after 200 and 2000 calls, a quarter second after one whose figures rose
// (V8's optimized code arriving), then every 5 s of use (a machine's speed, and with it the
// fastest variant, can change while it runs).
// All matrices are row-major with an explicit leading dimension (ld = row stride in floats).
#pragma once
#include <cstddef>
#include <mutex>
#include <new>
#include <vector>

namespace attnviz {
namespace kernels {

// ---------------------------------------------------------------------------
// Workspace
// ---------------------------------------------------------------------------
// Memory on 64-byte boundaries: a packed panel row of 16 or 32 floats then fills whole cache
// lines, and an AVX-512 load of one never spans two.
template <typename T>
struct CacheLineAllocator {
  using value_type = T;
  static constexpr std::align_val_t kAlign{64};
  CacheLineAllocator() = default;
  template <typename U>
  CacheLineAllocator(const CacheLineAllocator<U>&) {}  // NOLINT: rebinding, as std::allocator
  T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), kAlign)); }
  void deallocate(T* p, std::size_t) { ::operator delete(p, kAlign); }
  template <typename U>
  bool operator==(const CacheLineAllocator<U>&) const {
    return true;
  }
  template <typename U>
  bool operator!=(const CacheLineAllocator<U>&) const {
    return false;
  }
};
using PackedFloats = std::vector<float, CacheLineAllocator<float>>;

struct Workspace {
  PackedFloats packed_b;       // B packed in column panels of PanelWidth() columns (K^T in AttentionForward)
  PackedFloats packed_v;       // AttentionForward: V packed the same way
  std::vector<float> scores;   // [n_q, n_k] scratch for AttentionForward when weights are not kept
  std::vector<float> row_max;  // AttentionForward: a row block's largest scores
};

const char* KernelIsa();  // "wasm-simd128" or "native": the build family of the fast kernels
int PanelWidth();  // columns per packed B panel of the selected tile variant (8 SIMD128/SSE2, 16 AVX2, 32 AVX-512)

// ---------------------------------------------------------------------------
// Tile variants
// ---------------------------------------------------------------------------
// C [m, n] (+)= alpha * A [m, kc] * Bblock, for one k-block: Bblock holds ceil(n / panel)
// panels of [kc][panel] floats back to back (zero-padded past n). m <= 64 (one row block).
// accumulate != 0 adds to C, otherwise C is overwritten. Pointers are plain floats so that a
// separate WASM module (the relaxed-SIMD one) can implement the same call on shared memory.
using BlockKernelFn = void (*)(int m, int n, int kc, float alpha, const float* a, int lda, const float* block, float* c,
                               int ldc, int accumulate);
using SoftmaxFn = int (*)(float* x, int rows, int cols, int ld, float scale, float* row_max, float* row_sum,
                          int log2);  // SoftmaxRows (log2 = 0) and SoftmaxRowsLog2 (log2 = 1)
struct TileVariant {
  const char* tile;             // register tile rows x columns, e.g. "5x8"
  const char* isa;              // "wasm-simd128", "wasm-relaxed-simd", "sse2", "avx2-fma", "avx512f"
  int mr;                       // rows per register tile
  int panel;                    // packed panel width (columns) the kernel expects
  BlockKernelFn fn;             // the block kernel
  SoftmaxFn softmax = nullptr;  // SoftmaxRows of the same ISA (AVX2, AVX-512); null: the build's own
  // Native ISAs: 12 independent multiply-add chains (FMA where the ISA has it) on state, 12 vectors
  // of up to 16 floats read and written back, no other memory; returns the flops it did. null: none
  // (PeakGflops then times the build's mul+add loop).
  double (*peak_chunk)(float* state) = nullptr;
};
struct TileProbe {
  int selected = -1;           // index (TileVariantAt) of the fastest variant
  double gflops[32] = {};      // probe throughput per variant, by index
  double probe_ms = 0.0;       // wall time of the probe
  double clock_tick_us = 0.0;  // the clock's step it measured (a browser page without cross-origin isolation: ~100)
  int reps = 1;                // runs per timed sample (> 1 with a coarse clock: a sample spans >= 9 ticks)
};
int TileVariantCount();                           // variants usable on this CPU (built in + registered)
const TileVariant& TileVariantAt(int i);          // 0 <= i < TileVariantCount()
int RegisterTileVariant(const TileVariant& v);    // adds an external variant; returns its index or -1 (full)
const TileProbe& ProbeTiles(bool quick = false);  // times every variant (~6 ms) and selects the fastest;
                                                  // quick: the start-up probe, one variant per ISA
const TileVariant& SelectedTile();                // the pick: quick probe first, full ones at 200 and 2000 uses
void ForceTile(int i);                            // tests and benchmarks: use variant i (-1: back to the probe's pick)
int ProbeRuns();                                  // probes run so far (quick and full)
bool ProbeSettling();                             // the last full probe's figures rose: another is due soon
TileProbe LastProbe();                            // the last probe's figures (selected -1: none has run)
void SetProbeClock(double (*now_seconds)());      // tests: the probe's clock (nullptr: the steady clock)
double ProbeSeconds();                            // that clock's reading, in seconds
void SetReprobeSeconds(double seconds);           // tests: the periodic re-probe's interval (< 0: the default, 5 s)
double MulAddPeakGflops(double seconds);          // SIMD mul+add peak of this thread (independent chains, no memory)
double PeakGflops(const TileVariant& v, double seconds);  // v's ISA's multiply-add peak (peak_chunk, else mul+add)

// ---------------------------------------------------------------------------
// GEMM (row-major). m, n, k >= 0; c may not alias a or b.
// ---------------------------------------------------------------------------
// C [m, n] = alpha * A [m, k] * B [k, n]
void GemmNN(int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb, float* c, int ldc,
            Workspace* ws);
void GemmNNRef(int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb, float* c, int ldc);
// C [m, n] = alpha * A [m, k] * B^T, B [n, k]   (scores: S = Q K^T)
void GemmNT(int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb, float* c, int ldc,
            Workspace* ws);
void GemmNTRef(int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb, float* c, int ldc);

// ---------------------------------------------------------------------------
// Exp
// ---------------------------------------------------------------------------
// y[i] = exp(x[i]) for n values (x may equal y). Range reduction x = n ln2 + r, |r| <= ln2/2
// (n = round(x log2e) by the 1.5 * 2^23 trick, Cody-Waite split of ln2), e^r = 1 + r + r^2 P(r)
// with P of degree 4 (least-squares fit on Chebyshev nodes, 3.8e-9 in exact arithmetic),
// 2^n built in the exponent bits. Domain: x <= -87.68 (including -inf) gives exactly 0
// (clamped to -88, where 2^n has exponent field 0), x > 88 is clamped to 88, NaN stays NaN.
// Max relative error on [-87.3, 88]:
// kExpMaxRelError (measured by tests/core/kernels_test.cpp over 2M points: 8e-8 native and WASM).
void ExpFast(const float* x, float* y, int n);
float ExpScalar(float x);                   // the same polynomial, one value (scalar twin)
float Exp2Scalar(float x);                  // 2^x for x <= 0: SoftmaxRowsLog2's polynomial (kernels_exp.h), one value
constexpr float kExpMaxRelError = 2.0e-7f;  // documented bound, checked by the tests

// ---------------------------------------------------------------------------
// Softmax, in place, per row of x [rows, cols] (stride ld); scale > 0, entries finite or -inf:
//   x = exp(scale * x - m) / sum,  m = max_j scale * x_j
// A row whose every entry is -inf becomes all zeros, row_max 0 and row_sum 0 (never NaN).
// row_max / row_sum ([rows]) may be null. Returns the number of fully masked rows.
// Accuracy, against exact arithmetic: every weight of at least 1e-30 within kSoftmaxMaxRelError
// of its value. (It uses a shorter exp than ExpFast, kernels_exp.h: its results are divided by
// a sum >= 1.) Checked by tests/core/kernels_test.cpp.
// ---------------------------------------------------------------------------
constexpr float kSoftmaxMaxRelError = 1.0e-6f;
int SoftmaxRows(float* x, int rows, int cols, int ld, float scale, float* row_max, float* row_sum);
// The same over scores in log2 units: x = 2^(scale * x - m) / sum, m = max_j scale * x_j (row_max
// in log2 units). AttentionForward folds log2e into Q K^T's scale and calls this: its 2^x needs
// no ln2 split and a shorter polynomial (kernels_exp.h). Same contract and accuracy bound.
int SoftmaxRowsLog2(float* x, int rows, int cols, int ld, float scale, float* row_max, float* row_sum);
// The same without the max pass, for a caller that knows every scale * x is finite and within
// +-kUnshiftedLog2Limit: x = 2^(scale * x) / sum, row_max 0. Every 2^x then lies in [2^-64, 2^64]
// and a sum of up to 2^31 of them stays a normal float, so no shift is needed. Same accuracy
// bound (2^x of the score itself: no rounding in a subtraction); no row is fully masked.
constexpr float kUnshiftedLog2Limit = 64.0f;
int SoftmaxRowsLog2Unshifted(float* x, int rows, int cols, int ld, float scale, float* row_max, float* row_sum);
int SoftmaxRowsRef(float* x, int rows, int cols, int ld, float scale, float* row_max, float* row_sum);

// ---------------------------------------------------------------------------
// AttentionForward: single head, no mask. Packs K^T and V once, then runs the three passes
// per block of query rows (kernels.cpp says how many) so the scores stay in cache between passes.
// The scores are computed in log2 units (scale * log2e) for SoftmaxRowsLog2, unless a block's largest
// ones pass 64 there: that block is done again in natural units (exact for large exact scores).
// When |scale| log2e max|q_i| max|k_j| (Cauchy-Schwarz, with a margin for rounding) bounds a block's
// scores within kUnshiftedLog2Limit, the block's softmax is SoftmaxRowsLog2Unshifted (no max pass).
//   q [n_q, d], k [n_k, d], v [n_k, d_v]   (contiguous, row-major)
//   weights [n_q, n_k] = softmax(scale * q k^T)   (null: use ws->scores as scratch)
//   out [n_q, d_v] = weights v
// ---------------------------------------------------------------------------
void AttentionForward(const float* q, const float* k, const float* v, int n_q, int n_k, int d, int d_v, float scale,
                      float* weights, float* out, Workspace* ws);
void SetUnshiftedSoftmax(bool on);  // tests and benchmarks: let AttentionForward skip the max pass (default on)
// AttentionForward's query-row block: rows > 0 forces it (rounded to the tile's rows), 0 the timed
// choice (RowBlockChooser, below). Benchmarks A/B it in one process; nothing else sets it.
void SetAttentionBlockRows(int rows);
void AttentionForwardRef(const float* q, const float* k, const float* v, int n_q, int n_k, int d, int d_v, float scale,
                         float* weights, float* out);

// AttentionForward's query-row block is chosen by timing, per class of n_k (its power of two), between
// two rules where they differ: 0 = 128 KiB of scores (32768 / n_k rows, kept in L2 between the three
// passes), 1 = 256 rows (the packed K^T and V streamed for more work per block). Which one is faster
// changes with the machine and with what else shares its caches (kernels.cpp). A class's calls of at
// least kTimedScores scores alternate the two, kTrials timed calls each (the time per score; a call
// under 10 ticks of the probe's clock is not counted), then the faster rule is kept until
// kRetimeSeconds have passed, when the class is timed again. Thread-safe.
class RowBlockChooser {
 public:
  static constexpr int kClasses = 32, kTrials = 3;
  static constexpr double kTimedScores = 65536, kRetimeSeconds = 5.0;
  explicit RowBlockChooser(int fallback) : fallback_(fallback) {}
  // The rule for the next call of class c at time now; *timed: time the call and Record it.
  int Pick(int c, double now, bool* timed);
  void Record(int c, int rule, double seconds_per_score, double now);  // a timed call's figure, ended at now
  int Chosen(int c) const;  // the rule kept for class c, -1 while it is being timed
  int fallback() const { return fallback_; }

 private:
  struct Class {
    int trials[2] = {0, 0};
    double best[2] = {0, 0};  // fastest seconds per score of each rule's timed calls
    int chosen = -1;
    double chosen_at = 0;
  };
  int fallback_;  // used while neither rule has been timed (calls too short to time)
  Class classes_[kClasses];
  mutable std::mutex mutex_;
};
RowBlockChooser& AttentionRowBlocks();  // the one AttentionForward uses
int AttentionBlockRule(int n_k);        // the rule kept for n_k's class (0, 1), -1: being timed

}  // namespace kernels
}  // namespace attnviz
