// attnviz_bench_module: the WASM attention kernels as a small module for bench/peers/run.mjs,
// which times them against onnxruntime-web and tfjs-wasm in one node process, alternating the
// implementations sample by sample. C exports only; the JS side owns inputs, timing and output.
#include <cstdlib>
#include <cstring>

#include "core/kernels.h"

namespace k = attnviz::kernels;

extern "C" double attnviz_fma_peak_seconds(int iters);  // src/platform/kernels_fma_web.cpp

extern "C" {

int attnviz_bench_tile_count() {
  return k::TileVariantCount();
}
const char* attnviz_bench_tile_name(int i) {
  return k::TileVariantAt(i).tile;
}
const char* attnviz_bench_tile_isa(int i) {
  return k::TileVariantAt(i).isa;
}
static k::TileProbe g_probe;  // the last probe's figures

// Runs the probe (quick != 0: the start-up one, one variant per ISA) and returns the selected index.
int attnviz_bench_probe(int quick) {
  g_probe = k::ProbeTiles(quick != 0);
  return g_probe.selected;
}
double attnviz_bench_probe_gflops(int i) {
  return i >= 0 && i < 32 ? g_probe.gflops[i] : 0.0;
}
double attnviz_bench_probe_ms() {
  return g_probe.probe_ms;
}
int attnviz_bench_selected() {  // the last probe's pick, which attnviz-auto runs (-1: no probe yet)
  return k::LastProbe().selected;
}
void attnviz_bench_force_tile(int i) {
  k::ForceTile(i);
}
void attnviz_bench_force_block(int rows) {  // AttentionForward's row block, 0 the default rule
  k::SetAttentionBlockRows(rows);
}
int attnviz_bench_block_rule(int n_k) {  // the row-block rule kept for n_k: 0 128 KiB, 1 256 rows, -1 timing
  return k::AttentionBlockRule(n_k);
}
double attnviz_bench_muladd_peak(double seconds) {
  return k::MulAddPeakGflops(seconds);
}
// GFLOP/s of the relaxed-madd peak loop (fastest of 300 short calls, as MulAddPeakGflops does),
// or 0 without relaxed SIMD.
double attnviz_bench_fma_peak() {
  double best = 1e30;
  for (int rep = 0; rep < 300; ++rep) {
    const double s = attnviz_fma_peak_seconds(1);
    if (s < 0) return 0.0;
    if (s < best) best = s;
  }
  return 2.0 * 4 * 12 * 2048.0 / best * 1e-9;
}

// A load-bearing peak: variant i's block kernel on a 60 x 96 A and one 96-deep k-block of B as wide
// as the variant's tile (8 or 16 columns: <= 32 KiB in all, L1-resident on every x86 core), `reps` times.
// Unlike the register-only mul+add loop, it loads A and B as the attention GEMMs do, from a few pages.
// In the rotation of bench/peers/run.mjs it tells which a slow stretch hits: loads from L1 (it
// slows with the kernels), or memory beyond L1 (it does not). Returns the flops done, 0 for a bad i.
double attnviz_bench_gemm_l1(int i, int reps) {
  constexpr int kM = 60, kK = 96, kMaxCols = 64;
  alignas(64) static float a[kM * kK], b[kK * kMaxCols], c[kM * kMaxCols];
  static bool filled = false;
  if (!filled) {
    for (int j = 0; j < kM * kK; ++j) a[j] = (float)((j * 7919) % 997) / 997.0f - 0.5f;
    for (int j = 0; j < kK * kMaxCols; ++j) b[j] = (float)((j * 104729) % 991) / 991.0f - 0.5f;
    filled = true;
  }
  if (i < 0 || i >= k::TileVariantCount()) return 0.0;
  const k::TileVariant& t = k::TileVariantAt(i);
  const char* x = std::strchr(t.tile, 'x');  // "4x16": the tile's columns, a whole number of panels
  const int cols = x ? std::atoi(x + 1) : t.panel;
  if (cols <= 0 || cols > kMaxCols || cols % t.panel) return 0.0;
  for (int r = 0; r < reps; ++r) t.fn(kM, cols, kK, 1.0f, a, kK, b, c, cols, 0);
  return 2.0 * kM * cols * kK * reps;
}

// heads x single-head attention: q, k, v [heads, n, d], weights [n, n] scratch, out [heads, n, d].
void attnviz_bench_attention(const float* q, const float* kk, const float* v, int n, int d, int heads, float scale,
                             float* weights, float* out) {
  static k::Workspace ws;  // allocated once, reused by every call
  const size_t hs = (size_t)n * d;
  for (int h = 0; h < heads; ++h)
    k::AttentionForward(q + h * hs, kk + h * hs, v + h * hs, n, n, d, d, scale, weights, out + h * hs, &ws);
}

// One of attention's three passes alone, on the selected tile (bench/peers/phases.mjs): 0 S = Q K^T
// [n, n] (k = d, K packed in the call), 1 the base-2 softmax of S's rows without the max pass (as
// AttentionForward runs it when the scores are bounded), 2 O = P V [n, d] (V packed in the call).
void attnviz_bench_phase(int which, const float* q, const float* kk, const float* v, int n, int d, float* w,
                         float* out) {
  static k::Workspace ws;
  if (which == 0) k::GemmNT(n, n, d, 0.125f, q, d, kk, d, w, n, &ws);
  if (which == 1) k::SoftmaxRowsLog2Unshifted(w, n, n, n, 1.0f, nullptr, nullptr);
  if (which == 2) k::GemmNN(n, d, n, 1.0f, w, n, v, d, out, d, &ws);
}
}
