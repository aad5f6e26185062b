// tests/core: every register-tile variant usable here (SSE2 / AVX2+FMA / AVX-512F natively,
// SIMD128 and, when the relaxed-SIMD module loaded, FMA in WASM) against the reference GEMM and
// attention, forced one at a time; and the probe's choice.
// --require-isa=<isa> (passed by the ctest that runs node with relaxed SIMD enabled) makes the
// absence of that ISA's variants a failure, so a glue that silently fell back is caught (the FMA
// kernels are registered only when they could go into the function table, kernels_fma_web.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/kernels.h"
#include "reference_reader.h"

namespace {

namespace k = attnviz::kernels;
using attnviz::MatrixRM;
using attnviz_test::AllClose;
using attnviz_test::Rng;

MatrixRM AsMatrix(const std::vector<float>& v, int rows, int cols) {
  return Eigen::Map<const MatrixRM>(v.data(), rows, cols);
}

struct ForceGuard {  // restores the probe's pick whatever the test does
  ~ForceGuard() { k::ForceTile(-1); }
};

void SleepSeconds(double s) {
  std::this_thread::sleep_for(std::chrono::duration<double>(s));
}

// Uses the kernels until the probe stops settling (a full probe whose figures rose is followed
// by another 0.25 s later, at most 8 in a row); false if it has not after 12 such waits.
bool SettleProbe() {
  for (int wait = 0; wait < 12 && k::ProbeSettling(); ++wait) {
    SleepSeconds(0.3);
    for (int i = 0; i < 64; ++i) k::SelectedTile();  // the clock is read every 64 uses
  }
  return !k::ProbeSettling();
}

TEST(KernelTiles, ProbeTimesEveryVariantAndPicksOne) {
  const k::TileProbe& probe = k::ProbeTiles();
  ASSERT_GT(k::TileVariantCount(), 0);
  ASSERT_GE(probe.selected, 0);
  ASSERT_LT(probe.selected, k::TileVariantCount());
  for (int i = 0; i < k::TileVariantCount(); ++i) {
    const k::TileVariant& v = k::TileVariantAt(i);
    std::printf("  variant %d: %s %-5s panel %2d  %6.2f GFLOP/s%s\n", i, v.isa, v.tile, v.panel, probe.gflops[i],
                i == probe.selected ? "  <- selected" : "");
    EXPECT_GT(probe.gflops[i], 0.0) << v.isa << " " << v.tile;
    EXPECT_LE(probe.gflops[i], probe.gflops[probe.selected]);
  }
  std::printf("  probe took %.2f ms\n", probe.probe_ms);
  EXPECT_STREQ(k::SelectedTile().tile, k::TileVariantAt(probe.selected).tile);
  EXPECT_EQ(k::PanelWidth(), k::TileVariantAt(probe.selected).panel);
}

// The start-up probe: one variant per ISA (the first registered), so that on cold WASM code it
// pays one compilation per ISA, not one per variant; it picks among those it timed.
TEST(KernelTiles, QuickProbeTimesOneVariantPerIsa) {
  const k::TileProbe quick = k::ProbeTiles(/*quick=*/true);
  std::set<std::string> isas;
  for (int i = 0; i < k::TileVariantCount(); ++i) {
    const k::TileVariant& v = k::TileVariantAt(i);
    const bool first_of_isa = isas.insert(v.isa).second;
    std::printf("  variant %d: %s %-5s %6.2f GFLOP/s%s\n", i, v.isa, v.tile, quick.gflops[i],
                i == quick.selected ? "  <- selected" : "");
    if (first_of_isa) {
      EXPECT_GT(quick.gflops[i], 0.0) << v.isa << " " << v.tile;
    } else {
      EXPECT_EQ(quick.gflops[i], 0.0) << v.isa << " " << v.tile;
    }
  }
  ASSERT_GE(quick.selected, 0);
  EXPECT_GT(quick.gflops[quick.selected], 0.0);
  std::printf("  quick probe took %.2f ms\n", quick.probe_ms);
  k::ProbeTiles();  // back to a full probe's pick for the tests that follow
}

// After the warm re-probes at 200 and 2000 uses, the probe runs again when its interval has
// passed (checked every 64 uses), and not while a variant is forced or before the interval.
TEST(KernelTiles, ProbesAgainAfterItsInterval) {
  ForceGuard guard;
  k::ForceTile(-1);
  for (int i = 0; i < 2100; ++i) k::SelectedTile();  // past both warm re-probes, whenever they came
  k::SetReprobeSeconds(1e9);
  ASSERT_TRUE(SettleProbe()) << "the probe went on settling";
  int before = k::ProbeRuns();
  for (int i = 0; i < 640; ++i) k::SelectedTile();
  EXPECT_EQ(k::ProbeRuns(), before) << "probed before its interval";
  k::SetReprobeSeconds(0.0);
  k::ForceTile(0);
  for (int i = 0; i < 640; ++i) k::SelectedTile();
  EXPECT_EQ(k::ProbeRuns(), before) << "probed while a variant was forced";
  k::ForceTile(-1);
  before = k::ProbeRuns();
  for (int i = 0; i < 640; ++i) k::SelectedTile();  // 10 clock checks, each due (interval 0)
  EXPECT_EQ(k::ProbeRuns(), before + 10);
  k::SetReprobeSeconds(-1.0);  // the default again
}

// Registers variant 0 again as `isa`, its kernel `fn` calling variant 0's (*inner); its index.
int RegisterWrapping(const char* isa, k::BlockKernelFn fn, k::BlockKernelFn* inner) {
  k::TileVariant v = k::TileVariantAt(0);
  *inner = v.fn;
  v.fn = fn;
  v.isa = isa;
  return k::RegisterTileVariant(v);
}

// A variant that runs like variant 0 plus a delay, as a WASM variant runs baseline code until
// V8's optimized code arrives. Registered once, by the test below; it computes what variant 0 does.
std::atomic<int> g_warming_delay_us{0};
k::BlockKernelFn g_warming_inner = nullptr;
void WarmingKernel(int m, int n, int kc, float alpha, const float* a, int lda, const float* block, float* c, int ldc,
                   int accumulate) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(g_warming_delay_us.load());
  while (std::chrono::steady_clock::now() < until) {
  }
  g_warming_inner(m, n, kc, alpha, a, lda, block, c, ldc, accumulate);
}

// Settling: when a full probe's figures rise over the previous one's (optimized code arrived for
// some variant), the next probe comes a quarter second of use later, not kReprobeSeconds later.
TEST(KernelTiles, ProbesSoonAgainWhenItsFiguresRise) {
  ForceGuard guard;
  k::ForceTile(-1);
  static const int warming = RegisterWrapping("test-warming", &WarmingKernel, &g_warming_inner);
  ASSERT_GE(warming, 0);
  for (int i = 0; i < 2100; ++i) k::SelectedTile();  // past the warm re-probes at 200 and 2000 uses
  k::SetReprobeSeconds(1e9);  // no periodic re-probe: every probe below is the test's or settling's
  // "Baseline code": a run takes 2 ms more than variant 0's (~0.1 ms), or 4x as long where variant 0
  // is slow itself (ASan: 4-14 ms a run under load), so that the rise below stands out of the noise
  // (under ASan and load figures moved by over kSettleRise, 10 %, from one probe to the next).
  const double run_us = 3.93216e3 / std::max(1e-3, k::ProbeTiles().gflops[0]);  // 3.93 MFLOP a run
  const int delay_us = (int)std::max(2000.0, 3.0 * run_us);
  g_warming_delay_us = delay_us;
  k::ProbeTiles();
  ASSERT_TRUE(SettleProbe()) << "the probe went on settling";
  const k::TileProbe slow = k::ProbeTiles();
  EXPECT_LT(slow.gflops[warming], std::min(2.0, slow.gflops[0] / 2)) << "the delay did not show";
  const bool settled_already = !k::ProbeSettling();  // usually: the figures held still
  g_warming_delay_us = 0;                            // "optimized code arrived"
  const double rose_to = k::ProbeTiles().gflops[warming];
  EXPECT_TRUE(k::ProbeSettling()) << "a figure rose from " << slow.gflops[warming] << " to " << rose_to
                                  << " GFLOP/s, and no probe is due";
  int before = k::ProbeRuns();
  for (int i = 0; i < 64; ++i) k::SelectedTile();
  EXPECT_EQ(k::ProbeRuns(), before) << "probed again within the quarter second";
  SleepSeconds(0.3);
  for (int i = 0; i < 64; ++i) k::SelectedTile();
  EXPECT_EQ(k::ProbeRuns(), before + 1) << "no probe a quarter second after the figures rose";
  EXPECT_TRUE(SettleProbe()) << "the probe went on settling";
  before = k::ProbeRuns();
  SleepSeconds(0.3);
  for (int i = 0; i < 640; ++i) k::SelectedTile();
  EXPECT_EQ(k::ProbeRuns(), before) << "probed again with the figures settled";
  std::printf("  settled before the rise: %s; the warming variant rose from %.2f to %.2f GFLOP/s (delay %d us)\n",
              settled_already ? "yes" : "no", slow.gflops[warming], rose_to, delay_us);
  k::SetReprobeSeconds(-1.0);
}

// A variant that does variant 0's work twice (the second time into its own scratch, so that it
// still computes what variant 0 computes): it must time about half as fast.
k::BlockKernelFn g_twice_inner = nullptr;
void TwiceKernel(int m, int n, int kc, float alpha, const float* a, int lda, const float* block, float* c, int ldc,
                 int accumulate) {
  std::vector<float> scratch((size_t)m * n);
  g_twice_inner(m, n, kc, alpha, a, lda, block, scratch.data(), n, 0);
  g_twice_inner(m, n, kc, alpha, a, lda, block, c, ldc, accumulate);
}

// The clock of a browser page without cross-origin isolation: 100 us steps.
double CoarseClock() {
  const double t = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  return std::floor(t / 1e-4) * 1e-4;
}

// Each variant's best figure of three probes, as the app probes again and again: under ctest -j 2
// a thread preempted through both of a variant's ~1 ms samples would read it low once.
k::TileProbe BestOfThreeProbes() {
  k::TileProbe best = k::ProbeTiles();
  for (int again = 0; again < 2; ++again) {
    const k::TileProbe p = k::ProbeTiles();
    for (int v = 0; v < k::TileVariantCount(); ++v) best.gflops[v] = std::max(best.gflops[v], p.gflops[v]);
  }
  return best;
}

// With a clock that moves in 100 us steps a probe run (~0.1 ms) read 0, 1 or 2 steps: every figure
// was 3.9e6, 39.3 or 19.7 GFLOP/s and the pick was random (Chromium, stop 47). The probe now
// measures the clock's step and repeats runs until a sample spans >= 9 of them.
TEST(KernelTiles, ProbeFiguresHoldWithACoarseClock) {
  ForceGuard guard;
  static const int twice = RegisterWrapping("test-twice", &TwiceKernel, &g_twice_inner);
  ASSERT_GE(twice, 0);
  k::SetReprobeSeconds(1e9);
  const k::TileProbe fine = BestOfThreeProbes();
  k::SetProbeClock(&CoarseClock);
  const k::TileProbe coarse = BestOfThreeProbes();
  k::SetProbeClock(nullptr);
  std::printf("  fine clock: tick %.2f us, %d reps, %.1f ms; coarse: tick %.1f us, %d reps, %.1f ms\n",
              fine.clock_tick_us, fine.reps, fine.probe_ms, coarse.clock_tick_us, coarse.reps, coarse.probe_ms);
  EXPECT_NEAR(coarse.clock_tick_us, 100.0, 1.0);
  // a sample spans several ticks: runs repeated, unless one run is long already (ASan: ~4 ms).
  // 3.93 MFLOP a run: the probe's two products, 120 x 128 x 64 and 120 x 64 x 128.
  EXPECT_GE(coarse.reps * 3.93216 / fine.gflops[0], 0.5) << "ms a sample: " << coarse.reps << " reps";
  EXPECT_LT(fine.clock_tick_us, 2.0);
  for (int v : {0, twice}) {
    std::printf("  variant %d: %.2f GFLOP/s (fine clock), %.2f (coarse)\n", v, fine.gflops[v], coarse.gflops[v]);
    EXPECT_GT(coarse.gflops[v], fine.gflops[v] / 3) << v;
    EXPECT_LT(coarse.gflops[v], fine.gflops[v] * 3) << v;
  }
  // Twice the work reads slower than variant 0 at its best on either clock: under ASan with both cores
  // loaded, variant 0's five coarse probes once all read ~0.6 of its fine figure (0.52 against 0.85
  // GFLOP/s) while the twice variant read its own (0.40), and a coarse-only comparison failed.
  EXPECT_LT(coarse.gflops[twice], 0.75 * std::max(coarse.gflops[0], fine.gflops[0])) << "twice the work timed as fast";
  EXPECT_LT(coarse.probe_ms, 500.0);  // samples are bounded in time (<= 2 ms), not in runs
  k::SetReprobeSeconds(-1.0);
  k::ProbeTiles();
}

TEST(KernelTiles, RequiredIsaIsPresent) {
  std::string want;
  for (const std::string& arg : ::testing::internal::GetArgvs())
    if (arg.rfind("--require-isa=", 0) == 0) want = arg.substr(14);
  int found = 0;
  for (int i = 0; i < k::TileVariantCount(); ++i) found += want == k::TileVariantAt(i).isa;
  std::printf("  %d variants, %d of required isa '%s'\n", k::TileVariantCount(), found, want.c_str());
  if (!want.empty()) {
    EXPECT_GT(found, 0) << "no tile variant with isa " << want << " was registered";
  }
}

// Each variant through the public GEMM and AttentionForward: shapes cross a row block (64), a
// k-block (256), odd panel tails and pair-of-panel tails.
TEST(KernelTiles, EveryVariantMatchesReference) {
  ForceGuard guard;
  const int shapes[][3] = {{1, 1, 1}, {7, 9, 13}, {64, 64, 64}, {65, 31, 257}, {130, 77, 64}, {13, 200, 300}};
  for (int i = 0; i < k::TileVariantCount(); ++i) {
    k::ForceTile(i);
    const k::TileVariant& v = k::TileVariantAt(i);
    ASSERT_STREQ(k::SelectedTile().tile, v.tile);
    Rng rng(100 + i);
    k::Workspace ws;
    attnviz_test::ErrorLog log;
    const std::string name = std::string(v.isa) + " " + v.tile;
    for (const auto& s : shapes) {
      const int m = s[0], n = s[1], kk = s[2];
      const auto a = attnviz_test::RandomValues((size_t)m * kk, &rng, -1.0f, 1.0f);
      const auto b = attnviz_test::RandomValues((size_t)kk * n, &rng, -1.0f, 1.0f);
      std::vector<float> c_fast((size_t)m * n, 7.0f), c_ref((size_t)m * n);
      const double atol = 2e-7 * kk + 1e-7;
      k::GemmNN(m, n, kk, 0.37f, a.data(), kk, b.data(), n, c_fast.data(), n, &ws);
      k::GemmNNRef(m, n, kk, 0.37f, a.data(), kk, b.data(), n, c_ref.data(), n);
      EXPECT_TRUE(AllClose(AsMatrix(c_fast, m, n), AsMatrix(c_ref, m, n), atol, 1e-6, name + " GemmNN", &log, "gemm"));
    }
    for (int n : {5, 96, 300}) {
      const int d = 64;
      const auto q = attnviz_test::RandomValues((size_t)n * d, &rng, -1.0f, 1.0f);
      const auto kk = attnviz_test::RandomValues((size_t)n * d, &rng, -1.0f, 1.0f);
      const auto vv = attnviz_test::RandomValues((size_t)n * d, &rng, -1.0f, 1.0f);
      std::vector<float> w_fast((size_t)n * n), o_fast((size_t)n * d), w_ref((size_t)n * n), o_ref((size_t)n * d);
      k::AttentionForward(q.data(), kk.data(), vv.data(), n, n, d, d, 0.125f, w_fast.data(), o_fast.data(), &ws);
      k::AttentionForwardRef(q.data(), kk.data(), vv.data(), n, n, d, d, 0.125f, w_ref.data(), o_ref.data());
      EXPECT_TRUE(AllClose(AsMatrix(w_fast, n, n), AsMatrix(w_ref, n, n), 1e-6, 1e-5, name + " weights", &log,
                           "attention weights"));
      EXPECT_TRUE(AllClose(AsMatrix(o_fast, n, d), AsMatrix(o_ref, n, d), 2e-6, 1e-5, name + " output", &log,
                           "attention output"));
    }
    log.Print(("variant " + name + ":").c_str());
  }
}

TEST(KernelTiles, MulAddPeakIsPositive) {
  const double peak = k::MulAddPeakGflops(0.002);
  std::printf("  SIMD mul+add peak: %.1f GFLOP/s\n", peak);
  EXPECT_GT(peak, 0.1);
}

// A native variant's peak loop (attnviz_bench's peak_fraction lines) runs all 12 chains of its
// ISA's width, 2048 steps of a = 0.001 + 0.999 a each (from 0: 1 - 0.999^2048 = 0.871), touches no
// float past them, and says how many flops that was. Variants without one (WASM) get the build's
// mul+add peak.
TEST(KernelTiles, EveryIsaTimesItsOwnPeak) {
  for (int i = 0; i < k::TileVariantCount(); ++i) {
    const k::TileVariant& v = k::TileVariantAt(i);
    if (v.peak_chunk) {
      const int lanes = v.panel / 2;  // the native panels are two vectors wide
      float state[12 * 16 + 1] = {};
      const double flops = v.peak_chunk(state);
      EXPECT_EQ(flops, 2.0 * lanes * 12 * 2048) << v.isa << " " << v.tile;
      for (int j = 0; j < 12 * lanes; ++j)
        EXPECT_NEAR(state[j], 1.0 - std::pow(0.999, 2048), 1e-4) << v.isa << " " << j;
      for (int j = 12 * lanes; j < 12 * 16 + 1; ++j) EXPECT_EQ(state[j], 0.0f) << v.isa << " " << j;
    }
    const double peak = k::PeakGflops(v, 0.002);
    std::printf("  %s %s multiply-add peak: %.1f GFLOP/s\n", v.isa, v.tile, peak);
    EXPECT_GT(peak, 0.1);
  }
}

}  // namespace
