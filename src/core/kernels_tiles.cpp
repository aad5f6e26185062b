// attnviz core: the register-tile registry, the start-up probe that picks a variant, and the
// SIMD mul+add peak. See kernels.h (Tile variants).
//
// Probe: every variant computes the same two products, 120 x 128 x 64 and 120 x 64 x 128 (B
// packed for its panel width), round-robin, until each has run >= 6 times and >= ~6 ms have
// passed in all (the first probe, at the first kernel call: 60 x 32 x 32, one variant per ISA,
// >= 2 rounds, ~2 ms); the fastest run of each decides. Round-robin matters under V8, which
// compiles a WASM function first with its baseline compiler and swaps in optimized code later:
// every variant gets the same chance to be tiered up before its best run is taken. Still, a
// probe at start-up sees mostly cold code under V8 (its pick there is close to random, and its
// time is mostly the first compilation of each variant), so it is kept short (one variant per
// ISA) and SelectedTile() probes again, fully, after kReprobeAfter and kSecondReprobeAfter uses,
// a quarter second after any full probe whose figures rose (optimized code arriving), then every
// kReprobeSeconds of use.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <vector>

#include "core/kernels_internal.h"

#ifdef __wasm_simd128__
#include <wasm_simd128.h>
#endif

namespace attnviz {
namespace kernels {
namespace {

constexpr int kMaxVariants = 32;
// Uses of the kernels before the warm re-probes: the first one runs the variants the quick
// start-up probe left out, which sends them to V8's optimizing compiler; the second times them
// optimized (under V8 a variant first run in the 200th use is still baseline code there).
constexpr int kReprobeAfter = 200, kSecondReprobeAfter = 2000;
// After those, the probe runs again whenever kReprobeSeconds have passed since the last one (the
// clock is read every kClockEvery uses): a machine's speed changes while the app runs (on the
// 2-vCPU EPYC VM of issue 14 a vCPU turns ~35 % slower for seconds at a time for the SIMD128
// tiles, ~15 % for the relaxed-SIMD ones, whose FMAs are half the instructions), and the fastest
// variant then is another. A full probe costs ~6 ms: 0.1 % of kernel-bound time (~20 ms in a page
// whose clock moves in 100 us steps, RunProbe: 0.4 %).
constexpr double kReprobeSeconds = 5.0;  // SetReprobeSeconds changes it (tests)
constexpr unsigned kClockEvery = 64;
// Settling: a full probe in which some variant timed over kSettleRise times its figure in the
// previous full probe (and the first full probe) is followed by another once kSettleSeconds have
// passed, up to kMaxSettleProbes such probes in a row. Under V8 a variant's figure rises when its
// optimized code arrives, which can take several probes: on machine 4 the SIMD128 and relaxed 4x8
// tiles read 17.6 and 22.1 GFLOP/s in a probe 300 ms after the first, 33 and 45 optimized, and
// that probe picked relaxed 5x8, ~1.45x slower in attention than relaxed 4x8 (stop 47,
// bench/peers/settle.mjs). Without settling such a pick stood until the next 5 s re-probe.
constexpr double kSettleSeconds = 0.25, kSettleRise = 1.10;
constexpr int kMaxSettleProbes = 8;
volatile float g_peak_sink = 0.0f;  // keeps the peak loop's result observable

struct Registry {
  TileVariant variants[kMaxVariants];
  int count = 0;
  TileProbe probe;
  std::atomic<int> selected{-1};  // the probe's pick, or a forced index
  bool probed = false;
  std::atomic<bool> forced{false};          // ForceTile(i >= 0) is in effect
  std::atomic<unsigned> uses{0};            // SelectedTile() calls, for the warm re-probes
  std::atomic<long long> last_probe_ns{0};  // steady clock at the end of the last probe
  std::atomic<int> probe_runs{0};           // probes run so far (ProbeRuns)
  std::atomic<double> reprobe_seconds{kReprobeSeconds};
  TileProbe last_full;                // the last full probe's figures (settling compares with them)
  bool has_full = false;              // a full probe has run
  std::atomic<bool> settling{false};  // the last full probe's figures rose: probe again soon
  int settle_probes = 0;              // probes run for settling in a row
  std::mutex mutex;
};

Registry& TheRegistry() {
  static Registry* r = [] {
    Registry* reg = new Registry;  // never destroyed: kernels may run during static destruction
    reg->count += AppendTileVariantsWasm(reg->variants + reg->count, kMaxVariants - reg->count);
    reg->count += AppendTileVariantsSse2(reg->variants + reg->count, kMaxVariants - reg->count);
    reg->count += AppendTileVariantsAvx2(reg->variants + reg->count, kMaxVariants - reg->count);
    reg->count += AppendTileVariantsAvx512(reg->variants + reg->count, kMaxVariants - reg->count);
    return reg;
  }();
  return *r;
}

using Clock = std::chrono::steady_clock;
long long NowNs() {
  return (long long)std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

// The probe's clock, in seconds: the steady clock, or a test's (SetProbeClock).
std::atomic<double (*)()> g_probe_clock{nullptr};
double ProbeNow() {
  if (double (*clock)() = g_probe_clock.load()) return clock();
  return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
}

// The probe clock's tick, in seconds: the median of five steps between distinct readings (the
// first change is skipped: it ends a partial tick; a step the thread was preempted in is one of
// five). Under V8 in a page without cross-origin isolation performance.now() moves in ~100 us
// steps; natively and in node, in < 1 us.
double ProbeClockTick() {
  const auto give_up = Clock::now() + std::chrono::milliseconds(20);
  double last = ProbeNow(), steps[5];
  for (int changes = 0; changes < 6;) {
    const double t = ProbeNow();
    if (t != last) {
      if (changes++ > 0) steps[changes - 2] = t - last;
      last = t;
    }
    if (Clock::now() > give_up) return 1e-3;  // a clock this coarse (or stopped): the longest samples
  }
  std::sort(steps, steps + 5);
  return steps[2];
}

// Packs B [k, n] (row-major) into panels of `panel` columns, zero-padded.
void PackForProbe(const std::vector<float>& b, int k, int n, int panel, std::vector<float>* out) {
  const int n_panels = (n + panel - 1) / panel;
  out->assign((size_t)n_panels * panel * k, 0.0f);
  for (int p = 0; p < n_panels; ++p)
    for (int kk = 0; kk < k; ++kk)
      for (int jj = 0; jj < panel && p * panel + jj < n; ++jj)
        (*out)[((size_t)p * k + kk) * panel + jj] = b[(size_t)kk * n + p * panel + jj];
}

// Whether a full probe's figures rose over the previous one's (settling, above): the first full
// probe, or some variant over kSettleRise times its previous figure (a variant registered since:
// from 0).
bool FiguresRose(const Registry& reg, const TileProbe& probe) {
  if (!reg.has_full) return true;
  for (int v = 0; v < reg.count && v < 32; ++v)
    if (probe.gflops[v] > kSettleRise * reg.last_full.gflops[v]) return true;
  return false;
}

// quick: the first probe (at the first kernel call), >= 2 rounds and ~2 ms; otherwise >= 6 and ~6 ms.
// settle: run because the previous full probe's figures rose (counted against kMaxSettleProbes).
void RunProbe(Registry* reg, bool quick = false, bool settle = false) {
  // Two products per run, attention's two GEMMs at d = 64: S = Q K^T (120 x 128, k = 64) and
  // O = P V (120 x 64, k = 128). 120 rows: a multiple of every tile height offered. (A single
  // 60 x 64 x 128 product favoured tiles two panels wide, whose one tile covered all 64 columns:
  // AVX-512 4x64, 5-10 % slower in attention than 12x32.) The quick probe runs products 15x
  // smaller: under V8 it times baseline code, ~1 GFLOP/s, and should cost a few ms, not ~80.
  const int m = quick ? 60 : 120, n = quick ? 32 : 128, k = quick ? 32 : 64;
  std::vector<float> a((size_t)m * n), b((size_t)k * n), c((size_t)m * n);  // A [m, k] and [m, n]
  for (size_t i = 0; i < a.size(); ++i) a[i] = (float)((i * 37) % 17) * 0.0625f - 0.5f;
  for (size_t i = 0; i < b.size(); ++i) b[i] = (float)((i * 53) % 19) * 0.0625f - 0.5f;
  std::vector<std::vector<float>> packed(reg->count), packed_t(reg->count);
  for (int v = 0; v < reg->count; ++v) {
    PackForProbe(b, k, n, reg->variants[v].panel, &packed[v]);    // B [k, n]
    PackForProbe(b, n, k, reg->variants[v].panel, &packed_t[v]);  // B [n, k] (the same floats)
  }
  // The quick probe times one variant per ISA (the first registered, the usual best): on cold
  // WASM code each variant's first call pays its Liftoff compilation (8 variants: ~26 ms in
  // node), and a pick among cold variants of one ISA is close to random anyway.
  std::vector<bool> timed(reg->count, true);
  if (quick)
    for (int v = 0; v < reg->count; ++v)
      for (int u = 0; u < v && timed[v]; ++u) timed[v] = std::strcmp(reg->variants[u].isa, reg->variants[v].isa) != 0;
  auto run = [&](int v, int reps) {  // seconds per run of the two products, over reps runs
    const double t0 = ProbeNow();
    for (int r = 0; r < reps; ++r) {
      reg->variants[v].fn(m, n, k, 1.0f, a.data(), k, packed[v].data(), c.data(), n, 0);
      reg->variants[v].fn(m, k, n, 1.0f, a.data(), n, packed_t[v].data(), c.data(), k, 0);
    }
    return (ProbeNow() - t0) / reps;
  };
  // A sample spans >= 9 clock ticks (at most 2 ms). With a fine clock that is one run (~0.1 ms);
  // with a browser's 100 us ticks a run read 0, 1 or 2 ticks, the figures came out as 3.9e6, 39.3
  // or 19.7 GFLOP/s whatever the variant, and the pick was the variant that happened to read 0
  // (stop 47). With such a clock runs are repeated (the count doubled on the first timed variant
  // until a sample reads >= 10 ticks) over 2 rounds (~20 ms for 8 variants), and the best sample
  // decides as with a fine clock: it is off by at most one tick in 9 (+12 %), and unlike a mean it
  // does not count the time the thread sat preempted (a mean read 1/3 of the figure beside a build).
  const double start = ProbeNow(), tick = ProbeClockTick();
  int reps = 1;
  const bool coarse = tick > 2e-6;
  for (int v = 0; coarse && v < reg->count; ++v) {
    if (!timed[v]) continue;
    // the shorter of two samples: one the thread was preempted in must not stop the doubling
    auto sample = [&](int r) { return std::min(run(v, r), run(v, r)) * r; };
    while (reps < 1024 && sample(reps) < std::min(10.0 * tick, 2e-3)) reps *= 2;  // >= 9 real ticks
    break;
  }
  std::vector<double> best(reg->count, 1e30);
  double elapsed = 0.0;
  const int min_rounds = quick || coarse ? 2 : 6;
  const double min_seconds = quick || coarse ? 0.002 : 0.006;
  for (int round = 0; round < 200 && (round < min_rounds || elapsed < min_seconds); ++round) {
    for (int v = 0; v < reg->count; ++v)
      if (timed[v]) best[v] = std::min(best[v], run(v, reps));
    elapsed = ProbeNow() - start;
  }
  TileProbe probe;
  for (int v = 0; v < reg->count && v < 32; ++v) {
    probe.gflops[v] = timed[v] ? 2.0 * 2.0 * m * n * k / std::max(best[v], 1e-9) * 1e-9 : 0.0;
    if (probe.selected < 0 || probe.gflops[v] > probe.gflops[probe.selected]) probe.selected = v;
  }
  probe.probe_ms = elapsed * 1e3;
  probe.clock_tick_us = tick * 1e6;
  probe.reps = reps;
  if (!quick) {
    reg->settle_probes = settle ? reg->settle_probes + 1 : 0;
    reg->settling.store(FiguresRose(*reg, probe) && reg->settle_probes < kMaxSettleProbes);
    reg->last_full = probe;
    reg->has_full = true;
  }
  reg->probe = probe;
  reg->probed = true;
  reg->last_probe_ns.store(NowNs());
  reg->probe_runs.fetch_add(1);
}

// A warm re-probe is due at use kReprobeAfter and kSecondReprobeAfter, kSettleSeconds after a
// full probe whose figures rose (settling), and every kReprobeSeconds after use kSecondReprobeAfter.
bool ReprobeDue(const Registry& reg, unsigned use) {
  if (use == kReprobeAfter || use == kSecondReprobeAfter) return true;
  if (use % kClockEvery != 0) return false;
  const double since = (double)(NowNs() - reg.last_probe_ns.load()) * 1e-9;
  if (reg.settling.load() && since >= kSettleSeconds) return true;
  return use >= kSecondReprobeAfter && since >= reg.reprobe_seconds.load();
}

}  // namespace

int TileVariantCount() {
  return TheRegistry().count;
}

const TileVariant& TileVariantAt(int i) {
  Registry& reg = TheRegistry();
  return reg.variants[std::clamp(i, 0, reg.count - 1)];
}

int RegisterTileVariant(const TileVariant& v) {
  Registry& reg = TheRegistry();
  std::lock_guard<std::mutex> lock(reg.mutex);
  if (reg.count >= kMaxVariants || !v.fn || v.mr <= 0 || v.panel <= 0) return -1;
  reg.variants[reg.count] = v;
  return reg.count++;
}

const TileProbe& ProbeTiles(bool quick) {
  Registry& reg = TheRegistry();
  std::lock_guard<std::mutex> lock(reg.mutex);
  RunProbe(&reg, quick);
  reg.selected.store(reg.probe.selected);
  return reg.probe;
}

const TileVariant& SelectedTile() {
  Registry& reg = TheRegistry();
  // The start-up probe may have timed cold code (V8 runs a WASM function in its baseline
  // compiler until it is hot); once the kernels have been used kReprobeAfter times, probe again,
  // and then as ReprobeDue says.
  const unsigned use = reg.uses.fetch_add(1, std::memory_order_relaxed) + 1;
  if (!reg.forced && ReprobeDue(reg, use)) {
    std::lock_guard<std::mutex> lock(reg.mutex);
    if (ReprobeDue(reg, use)) {  // still: another thread may have just probed
      RunProbe(&reg, /*quick=*/false, /*settle=*/reg.settling.load());
      reg.selected.store(reg.probe.selected);
    }
  }
  int s = reg.selected.load(std::memory_order_acquire);
  if (s < 0) {
    std::lock_guard<std::mutex> lock(reg.mutex);
    if (!reg.probed) RunProbe(&reg, /*quick=*/true);
    s = reg.selected.load();
    if (s < 0) {
      s = reg.probe.selected;
      reg.selected.store(s);
    }
  }
  return reg.variants[s];
}

int ProbeRuns() {
  return TheRegistry().probe_runs.load();
}

bool ProbeSettling() {
  return TheRegistry().settling.load();
}

void SetProbeClock(double (*now_seconds)()) {
  g_probe_clock.store(now_seconds);
}

double ProbeSeconds() {
  return ProbeNow();
}

TileProbe LastProbe() {
  Registry& reg = TheRegistry();
  std::lock_guard<std::mutex> lock(reg.mutex);
  return reg.probe;
}

void SetReprobeSeconds(double seconds) {
  TheRegistry().reprobe_seconds.store(seconds >= 0.0 ? seconds : kReprobeSeconds);
}

void ForceTile(int i) {
  Registry& reg = TheRegistry();
  std::lock_guard<std::mutex> lock(reg.mutex);
  reg.forced.store(i >= 0 && i < reg.count);
  if (reg.forced.load()) {
    reg.selected.store(i);
  } else {
    if (!reg.probed) RunProbe(&reg, /*quick=*/true);
    reg.selected.store(reg.probe.selected);
  }
}

// 12 independent chains acc = acc * m + c (one mul and one add per lane each): enough chains
// to cover the mul + add latency, no memory traffic. 2 FLOPs per lane per chain step. The loop
// is its own (never inlined) function, called again and again: V8 has no on-stack replacement
// for WASM, so a single long call would stay in baseline code for its whole run.
#ifdef __wasm_simd128__
using PeakVec = v128_t;
inline PeakVec PeakSplat(float x) {
  return wasm_f32x4_splat(x);
}
inline PeakVec PeakStep(PeakVec x, PeakVec m, PeakVec c) {
  return wasm_f32x4_add(wasm_f32x4_mul(x, m), c);
}
#else
typedef float PeakVec __attribute__((vector_size(16)));
inline PeakVec PeakSplat(float x) {
  return PeakVec{} + x;
}
inline PeakVec PeakStep(PeakVec x, PeakVec m, PeakVec c) {
  return x * m + c;
}
#endif
constexpr int kPeakSteps = 2048;

__attribute__((noinline)) void MulAddChunk(PeakVec* acc) {
  const PeakVec m = PeakSplat(0.999f), c = PeakSplat(0.001f);
  PeakVec a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3], a4 = acc[4], a5 = acc[5];
  PeakVec a6 = acc[6], a7 = acc[7], a8 = acc[8], a9 = acc[9], a10 = acc[10], a11 = acc[11];
  for (int it = 0; it < kPeakSteps; ++it) {
    a0 = PeakStep(a0, m, c), a1 = PeakStep(a1, m, c), a2 = PeakStep(a2, m, c), a3 = PeakStep(a3, m, c);
    a4 = PeakStep(a4, m, c), a5 = PeakStep(a5, m, c), a6 = PeakStep(a6, m, c), a7 = PeakStep(a7, m, c);
    a8 = PeakStep(a8, m, c), a9 = PeakStep(a9, m, c), a10 = PeakStep(a10, m, c), a11 = PeakStep(a11, m, c);
  }
  acc[0] = a0, acc[1] = a1, acc[2] = a2, acc[3] = a3, acc[4] = a4, acc[5] = a5;
  acc[6] = a6, acc[7] = a7, acc[8] = a8, acc[9] = a9, acc[10] = a10, acc[11] = a11;
}

namespace {
// The shortest of >= 50 runs of chunk() and as many more as fit in seconds.
template <typename Chunk>
double ShortestRun(Chunk chunk, double seconds) {
  double best = 1e30, total = 0.0;
  for (int rep = 0; rep < 100000 && (rep < 50 || total < seconds); ++rep) {
    const auto t0 = Clock::now();
    chunk();
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    best = std::min(best, s);
    total += s;
  }
  return best;
}
}  // namespace

double MulAddPeakGflops(double seconds) {
  PeakVec acc[12];
  for (int i = 0; i < 12; ++i) acc[i] = PeakSplat(1.0f + 0.01f * i);
  const double best = ShortestRun([&] { MulAddChunk(acc); }, seconds);
  float lanes[4];
  __builtin_memcpy(lanes, &acc[0], sizeof lanes);
  g_peak_sink = g_peak_sink + lanes[0];
  return 2.0 * 4 * 12.0 * kPeakSteps / best * 1e-9;
}

double PeakGflops(const TileVariant& v, double seconds) {
  if (!v.peak_chunk) return MulAddPeakGflops(seconds);
  float state[12 * 16];
  for (int i = 0; i < 12 * 16; ++i) state[i] = 1.0f + 0.01f * (float)(i % 12);
  double flops = 0.0;
  const double best = ShortestRun([&] { flops = v.peak_chunk(state); }, seconds);
  g_peak_sink = g_peak_sink + state[0];
  return flops / best * 1e-9;
}

}  // namespace kernels
}  // namespace attnviz
