// attnviz_bench: single-thread attention throughput, fast kernels vs a naive Eigen port.
//
// One line per case:
//   tile probe=startup isa=<isa> tile=<RxC> gflops=<probe> [selected]  (the quick start-up probe: 0 = not timed)
//   peak impl=<isa> muladd_gflops=<x>                          (SIMD mul+add peak, this process)
//   peak isa=<isa> gflops=<x>          (natively: the selected tile's ISA, FMA chains for AVX2 / AVX-512)
//   peak_fraction impl=native n=.. heads=.. isa=.. peak_gflops=<that peak, timed in the case's rotation>
//     median=<kernel median / peak median> best=<kernel best / peak best>
//   attention impl=<name> n=<n> d=<d> heads=<h> gflops=<median> best_gflops=<x> ns_per_score=<y> [speedup_vs_eigen=<r>]
//   softmax impl=<name> n=<rows> cols=<cols> ns_per_score=<y> [speedup_vs_eigen=<r>]
// FLOPs = 4 * n_q * n_k * d per head (2 for Q K^T, 2 for P V; softmax not counted).
// Protocol (the same as bench/peers/run.mjs): warm-up, then >= 9 samples of >= ~20 ms each (ATTNVIZ_BENCH_SAMPLE_MS)
// with the implementations alternating sample by sample; gflops and speedups use the median sample, best_gflops the
// fastest, cpu_gflops the median of process CPU time (std::clock; natively it leaves out the time the process waited
// for a core on a loaded machine; Emscripten's clock() follows the wall clock, so in WASM it equals gflops). Natively,
// eigen-march-native is Eigen built with -march=native (bench/eigen_native.cpp): the baseline the native kernels are
// held to.
#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <random>
#include <vector>

#include "core/attention.h"
#include "core/kernels.h"

namespace {

using attnviz::MatrixRM;
using Clock = std::chrono::steady_clock;

struct Timing {
  double median = 0.0, min = 0.0;  // seconds per call (wall clock)
  double cpu_median = 0.0;         // seconds per call of process CPU time (std::clock): excludes preemption
};

// A sample's length: 20 ms, or ATTNVIZ_BENCH_SAMPLE_MS (1-1000) to see how the figures depend on it
// (a baseline that pays a cold cache at each sample's start weighs less in longer ones). Natively
// only: node's environment does not reach the WASM build's getenv.
double SampleSeconds() {
  static const double s = [] {
    const char* e = std::getenv("ATTNVIZ_BENCH_SAMPLE_MS");
    const double ms = e ? std::atof(e) : 0.0;
    return ms >= 1.0 && ms <= 1000.0 ? ms * 1e-3 : 0.02;
  }();
  return s;
}

// Times each of fns: >= 9 rounds, each fn once per round in a rotating order; a sample is reps
// back-to-back calls (reps chosen so a sample takes SampleSeconds()). Returns the median and minimum.
std::vector<Timing> TimeAlternating(const std::vector<std::function<void()>>& fns) {
  const size_t count = fns.size();
  std::vector<int> reps(count);
  for (size_t i = 0; i < count; ++i) {
    fns[i]();
    const auto t0 = Clock::now();
    fns[i]();
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    reps[i] = std::max(1, (int)(SampleSeconds() / std::max(s, 1e-7)));
  }
  std::vector<std::vector<double>> samples(count), cpu(count);
  for (int round = 0; round < 9; ++round)
    for (size_t j = 0; j < count; ++j) {
      const size_t i = (round + j) % count;
      const std::clock_t c0 = std::clock();
      const auto t0 = Clock::now();
      for (int r = 0; r < reps[i]; ++r) fns[i]();
      samples[i].push_back(std::chrono::duration<double>(Clock::now() - t0).count() / reps[i]);
      cpu[i].push_back((double)(std::clock() - c0) / CLOCKS_PER_SEC / reps[i]);
    }
  std::vector<Timing> out(count);
  for (size_t i = 0; i < count; ++i) {
    std::sort(samples[i].begin(), samples[i].end());
    std::sort(cpu[i].begin(), cpu[i].end());
    out[i].median = samples[i][samples[i].size() / 2];
    out[i].min = samples[i][0];
    out[i].cpu_median = std::max(cpu[i][cpu[i].size() / 2], 1e-9);
  }
  return out;
}

MatrixRM RandomMatrix(int rows, int cols, std::mt19937* rng) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  MatrixRM m(rows, cols);
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = u(*rng);
  return m;
}

// The naive Eigen port: what a straightforward Eigen implementation of attention does.
void EigenAttention(const MatrixRM& q, const MatrixRM& k, const MatrixRM& v, float scale, MatrixRM* s, MatrixRM* o) {
  s->noalias() = scale * (q * k.transpose());
  for (Eigen::Index i = 0; i < s->rows(); ++i) {
    auto row = s->row(i).array();
    row = (row - row.maxCoeff()).exp();
    row /= row.sum();
  }
  o->noalias() = (*s) * v;
}

volatile float g_sink = 0.0f;  // keeps results observable

#ifdef ATTNVIZ_BENCH_EIGEN_NATIVE
extern "C" void EigenNativeAttention(const float* q, const float* k, const float* v, int n, int d, float scale);
#endif

void BenchAttention(int n, int d, int heads, std::mt19937* rng) {
  std::vector<MatrixRM> q(heads), k(heads), v(heads);
  for (int h = 0; h < heads; ++h) {
    q[h] = RandomMatrix(n, d, rng);
    k[h] = RandomMatrix(n, d, rng);
    v[h] = RandomMatrix(n, d, rng);
  }
  const float scale = 1.0f / std::sqrt((float)d);
  MatrixRM s(n, n), o(n, d);
  attnviz::kernels::Workspace ws;  // allocated once, reused by every repetition
  const double flops = 4.0 * n * (double)n * d * heads;
  const double scores = (double)n * n * heads;

  auto eigen = [&] {
    for (int h = 0; h < heads; ++h) EigenAttention(q[h], k[h], v[h], scale, &s, &o);
    g_sink = g_sink + o(0, 0);
  };
  auto fast = [&] {
    for (int h = 0; h < heads; ++h)
      attnviz::kernels::AttentionForward(q[h].data(), k[h].data(), v[h].data(), n, n, d, d, scale, s.data(), o.data(),
                                         &ws);
    g_sink = g_sink + o(0, 0);
  };
  // the same kernels with the softmax's max pass kept (AttentionForward skips it when the scores are bounded)
  auto fast_max_pass = [&] {
    attnviz::kernels::SetUnshiftedSoftmax(false);
    fast();
    attnviz::kernels::SetUnshiftedSoftmax(true);
  };
  std::vector<std::function<void()>> fns = {eigen, fast, fast_max_pass};
#ifdef ATTNVIZ_BENCH_EIGEN_NATIVE
  fns.push_back([&] {
    for (int h = 0; h < heads; ++h) EigenNativeAttention(q[h].data(), k[h].data(), v[h].data(), n, d, scale);
  });
#endif
  // the selected ISA's multiply-add peak in the same rotation (natively): a VM's core changes speed
  // within a run, so a peak taken once at the start would divide figures taken at another speed
  const attnviz::kernels::TileVariant& tile = attnviz::kernels::SelectedTile();
  float peak_state[12 * 16] = {};
  double peak_flops = 0.0;
  const size_t peak_index = fns.size();
  if (tile.peak_chunk) fns.push_back([&] { peak_flops = tile.peak_chunk(peak_state); });
  std::vector<Timing> t = TimeAlternating(fns);
  const Timing peak = tile.peak_chunk ? t[peak_index] : Timing{};
  if (tile.peak_chunk) t.erase(t.begin() + (std::ptrdiff_t)peak_index);
  const Timing max_pass = t[2];
  t.erase(t.begin() + 2);
  auto line = [&](const char* impl, const Timing& ti, const char* extra) {
    std::printf(
        "attention impl=%s n=%d d=%d heads=%d gflops=%.2f best_gflops=%.2f cpu_gflops=%.2f ns_per_score=%.3f%s\n", impl,
        n, d, heads, flops / ti.median * 1e-9, flops / ti.min * 1e-9, flops / ti.cpu_median * 1e-9,
        ti.median / scores * 1e9, extra);
  };
  char extra[200];
  line("eigen-naive", t[0], "");
  std::snprintf(extra, sizeof extra, " tile=%s isa=%s speedup_vs_eigen=%.2f", tile.tile, tile.isa,
                t[0].median / t[1].median);
  if (t.size() > 2)
    std::snprintf(extra + std::strlen(extra), sizeof extra - std::strlen(extra),
                  " speedup_vs_eigen_native=%.2f cpu_speedup_vs_eigen_native=%.2f", t[2].median / t[1].median,
                  t[2].cpu_median / t[1].cpu_median);
  if (t.size() > 2) line("eigen-march-native", t[2], "");
  line(attnviz::kernels::KernelIsa(), t[1], extra);
  if (tile.peak_chunk)
    std::printf("peak_fraction impl=%s n=%d heads=%d isa=%s peak_gflops=%.2f median=%.2f best=%.2f\n",
                attnviz::kernels::KernelIsa(), n, heads, tile.isa, peak_flops / peak.median * 1e-9,
                peak.median / peak_flops * flops / t[1].median, peak.min / peak_flops * flops / t[1].min);
  std::printf("softmax_shift n=%d heads=%d unshifted_ms=%.4f max_pass_ms=%.4f ratio=%.3f cpu_ratio=%.3f\n", n, heads,
              t[1].median * 1e3, max_pass.median * 1e3, max_pass.median / t[1].median,
              max_pass.cpu_median / t[1].cpu_median);
  std::fflush(stdout);
}

void BenchSoftmax(int rows, int cols, std::mt19937* rng) {
  const MatrixRM x = 8.0f * RandomMatrix(rows, cols, rng);
  MatrixRM s = x;
  const double scores = (double)rows * cols;
  const std::vector<Timing> t =
      TimeAlternating({[&] {
                         s = x;
                         for (Eigen::Index i = 0; i < s.rows(); ++i) {
                           auto row = s.row(i).array();
                           row = (row - row.maxCoeff()).exp();
                           row /= row.sum();
                         }
                         g_sink = g_sink + s(0, 0);
                       },
                       [&] {
                         s = x;
                         g_sink = g_sink + s(0, 0);
                       },
                       [&] {
                         s = x;
                         attnviz::kernels::SoftmaxRows(s.data(), rows, cols, cols, 1.0f, nullptr, nullptr);
                         g_sink = g_sink + s(0, 0);
                       },
                       // AttentionForward's two base-2 softmaxes: with the max pass, and without
                       // (the scores, in [-8, 8], are within its +-64)
                       [&] {
                         s = x;
                         attnviz::kernels::SoftmaxRowsLog2(s.data(), rows, cols, cols, 1.0f, nullptr, nullptr);
                         g_sink = g_sink + s(0, 0);
                       },
                       [&] {
                         s = x;
                         attnviz::kernels::SoftmaxRowsLog2Unshifted(s.data(), rows, cols, cols, 1.0f, nullptr, nullptr);
                         g_sink = g_sink + s(0, 0);
                       }});
  const double t_eigen = t[0].median, t_copy = t[1].median, t_fast = t[2].median;
  // the copy that restores the input each repetition is subtracted from both
  auto net = [&](double ti) { return std::max(ti - t_copy, 1e-12); };
  const double e = net(t_eigen), f = net(t_fast), l2 = net(t[3].median), un = net(t[4].median);
  std::printf("softmax impl=eigen-naive n=%d cols=%d ns_per_score=%.3f\n", rows, cols, e / scores * 1e9);
  std::printf("softmax impl=%s n=%d cols=%d ns_per_score=%.3f speedup_vs_eigen=%.2f\n", attnviz::kernels::KernelIsa(),
              rows, cols, f / scores * 1e9, e / f);
  std::printf("softmax impl=%s-log2 n=%d cols=%d ns_per_score=%.3f max_pass=yes\n", attnviz::kernels::KernelIsa(), rows,
              cols, l2 / scores * 1e9);
  std::printf("softmax impl=%s-log2-unshifted n=%d cols=%d ns_per_score=%.3f max_pass=no speedup_vs_max_pass=%.2f\n",
              attnviz::kernels::KernelIsa(), rows, cols, un / scores * 1e9, l2 / un);
  std::fflush(stdout);
}

// Runs every kernel on small inputs first: V8 starts WASM functions in its baseline compiler
// (Liftoff) and tiers hot ones up to TurboFan; the timed runs should see optimized code.
void WarmUp(std::mt19937* rng) {
  const int n = 96, d = 64;
  const MatrixRM q = RandomMatrix(n, d, rng), k = RandomMatrix(n, d, rng), v = RandomMatrix(n, d, rng);
  MatrixRM s(n, n), o(n, d);
  attnviz::kernels::Workspace ws;
  for (int rep = 0; rep < 60; ++rep) {
    attnviz::kernels::AttentionForward(q.data(), k.data(), v.data(), n, n, d, d, 0.125f, s.data(), o.data(), &ws);
    EigenAttention(q, k, v, 0.125f, &s, &o);
  }
  g_sink = g_sink + o(0, 0);
}

}  // namespace

int main() {
  std::mt19937 rng(1234);
  // cold, as at an app's start-up: the quick probe (one variant per ISA) that the first kernel call runs
  const attnviz::kernels::TileProbe& probe = attnviz::kernels::ProbeTiles(/*quick=*/true);
  for (int i = 0; i < attnviz::kernels::TileVariantCount(); ++i) {
    const attnviz::kernels::TileVariant& v = attnviz::kernels::TileVariantAt(i);
    std::printf("tile probe=startup isa=%s tile=%s gflops=%.2f%s\n", v.isa, v.tile, probe.gflops[i],
                i == probe.selected ? " selected" : "");
  }
  std::printf("tile probe=startup probe_ms=%.2f\n", probe.probe_ms);
  WarmUp(&rng);
  attnviz::kernels::ProbeTiles();            // runs every variant: V8 compiles them optimized in the background
  attnviz::kernels::MulAddPeakGflops(0.05);  // warm-up: under V8 the peak loop must be tiered up too
  // again on warm code: the pick the timed runs use, kept fixed (no re-probe in the middle of a case)
  attnviz::kernels::ForceTile(attnviz::kernels::ProbeTiles().selected);
  const attnviz::kernels::TileVariant& tile = attnviz::kernels::SelectedTile();
  std::printf("tile probe=warm selected=%s:%s\n", tile.isa, tile.tile);
  std::printf("peak impl=%s muladd_gflops=%.2f\n",
              std::strcmp(attnviz::kernels::KernelIsa(), "native") ? "wasm-simd128" : "sse2",
              attnviz::kernels::MulAddPeakGflops(0.05));
  if (tile.peak_chunk) std::printf("peak isa=%s gflops=%.2f\n", tile.isa, attnviz::kernels::PeakGflops(tile, 0.05));
  std::printf("# attnviz_bench: fast kernels = %s, single thread, median and min of 9 alternating samples of %.0f ms\n",
              attnviz::kernels::KernelIsa(), SampleSeconds() * 1e3);
  for (int n : {128, 512, 1024, 2048}) BenchAttention(n, 64, 1, &rng);
  BenchAttention(512, 64, 12, &rng);
  BenchSoftmax(1024, 1024, &rng);
  return 0;
}
