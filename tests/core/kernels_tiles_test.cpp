// tests/core: every register-tile variant usable here (SSE2 / AVX2+FMA / AVX-512F natively,
// SIMD128 and, when the relaxed-SIMD module loaded, FMA in WASM) against the reference GEMM and
// attention, forced one at a time; and the probe's choice.
// --require-isa=<isa> (passed by the ctest that runs node with relaxed SIMD enabled) makes the
// absence of that ISA's variants a failure, so a glue that silently fell back is caught.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>
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

}  // namespace
