// attnviz_load_bench: opening a big eager file in the viewer (docs/PERFORMANCE.md, "Big files").
// A headless App (no window, as tests/app) opens a 12 x 12 x 512 x 512 float32 .npy (151 MB)
//   old:    the whole file read into memory, then App::OpenFile (parse + copy into the maps)
//   stream: App::BeginLoad / FeedLoad in 8 MiB pieces / FinishLoad (io/attention_loader.h: the
//           .npy is decoded straight into the final matrices, heads validated as they complete)
// and prints the wall time and the peak resident memory against the data's size. Each mode runs in
// its own process (peak RSS is per process):
//   attnviz_load_bench [--make FILE] [--mode old|stream] FILE
#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "app/app.h"
#include "imgui.h"
#include "io/file_util.h"
#include "io/ndarray.h"
#include "io/npy.h"

namespace {

double CpuSeconds() {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return (double)u.ru_utime.tv_sec + (double)u.ru_stime.tv_sec +
         1e-6 * (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

double PeakRssMb() {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return (double)u.ru_maxrss / 1024.0;  // KiB on Linux
}

// Softmax rows [12, 12, 512, 512] float32, written as np.save would.
int Make(const std::string& path) {
  const int64_t L = 12, H = 12, n = 512;
  std::vector<float> v((size_t)(L * H * n * n));
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(0.0f, 6.0f);
  for (int64_t r = 0; r < L * H * n; ++r) {
    float* row = v.data() + r * n;
    float sum = 0;
    for (int64_t c = 0; c < n; ++c) sum += row[c] = std::exp(u(rng));
    for (int64_t c = 0; c < n; ++c) row[c] /= sum;
  }
  std::vector<uint8_t> bytes;
  if (!attnviz::WriteNpy(attnviz::FromFloats({L, H, n, n}, v.data()), &bytes).ok) return 1;
  return attnviz::WriteFileBytes(path, bytes.data(), bytes.size()).ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = "stream", path;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--make") && i + 1 < argc) return Make(argv[++i]);
    if (!std::strcmp(argv[i], "--mode") && i + 1 < argc)
      mode = argv[++i];
    else
      path = argv[i];
  }
  if (path.empty() || (mode != "old" && mode != "stream")) {
    std::fprintf(stderr, "usage: attnviz_load_bench [--make FILE] [--mode old|stream] FILE\n");
    return 2;
  }
  ImGui::CreateContext();
  ImGui::GetIO().DisplaySize = ImVec2(1280, 800);
  attnviz::App app;
  attnviz::AppConfig cfg;
  cfg.headless = true;
  if (!app.Init(cfg)) return 1;
  const double base_mb = PeakRssMb();
  const auto t0 = std::chrono::steady_clock::now();
  const double cpu0 = CpuSeconds();
  attnviz::Status st;
  uint64_t size = 0;
  if (mode == "old") {
    std::vector<uint8_t> bytes;
    st = attnviz::ReadFileBytes(path, &bytes);
    size = bytes.size();
    if (st) st = app.OpenFile(path, bytes.data(), bytes.size());
  } else {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) return 1;
    std::fseek(f, 0, SEEK_END);
    size = (uint64_t)std::ftell(f);
    std::fseek(f, 0, SEEK_SET);
    st = app.BeginLoad(path, size);
    std::vector<uint8_t> piece(size_t(8) << 20);
    size_t n;
    while (st && (n = std::fread(piece.data(), 1, piece.size(), f)) > 0) st = app.FeedLoad(piece.data(), n);
    std::fclose(f);
    if (st) st = app.FinishLoad();
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double cpu = CpuSeconds() - cpu0;
  if (!st) {
    std::fprintf(stderr, "attnviz_load_bench: %s\n", st.message.c_str());
    return 1;
  }
  const double data_mb = (double)size / 1048576.0, peak_mb = PeakRssMb() - base_mb;
  std::printf("load native mode=%s file_mb=%.1f seconds=%.3f cpu_seconds=%.3f peak_extra_mb=%.1f peak_over_data=%.2f\n",
              mode.c_str(), data_mb, seconds, cpu, peak_mb, peak_mb / data_mb);
  return 0;
}
