// attnviz_soak: long runs leave memory flat (docs/SECURITY.md). A headless App (no window, no GL)
// runs one or both phases, each for --seconds:
//   animation   the translation example plays in every view, frame after frame;
//   open/close  FILE... and a 512 x 512 two-head file made here are opened one after another as
//               dropped files, a few frames drawn, and the viewer switched back to the built-in
//               example.
// After a warm-up (the first quarter of each phase) the live heap (mallinfo) and the resident
// size (native) or the WASM memory size may grow by at most --max-growth-mb; a phase stops at the
// first sample over the limit, and the warm-up ends early if the heap grows by 256 MB (so a leak
// fails fast and stays bounded). Built natively and for
// WASM (node); `make test` runs 60 s of animation natively and 60 s as WASM, `make soak` an hour
// of each phase.
//   attnviz_soak [--phase animation|open-close|both] [--seconds N] [--max-growth-mb M] FILE...
#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "app/app.h"
#include "imgui.h"
#include "io/attention_file.h"
#include "io/file_util.h"

namespace {

struct Memory {
  double heap_mb;      // bytes malloc has handed out and not had back
  double resident_mb;  // native: resident set; WASM: the linear memory's size (it never shrinks)
};

Memory Measure() {
  Memory m{};
#if defined(__wasm__)
  m.heap_mb = mallinfo().uordblks / 1048576.0;
  m.resident_mb = __builtin_wasm_memory_size(0) * 65536.0 / 1048576.0;
#else
  m.heap_mb = mallinfo2().uordblks / 1048576.0;
  long pages = 0, resident = 0;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  m.resident_mb = resident * 4096.0 / 1048576.0;
#endif
  return m;
}

void Frames(attnviz::App* app, int n) {
  for (int i = 0; i < n; ++i) {
    unsigned char* px;
    int w, h;
    ImGui::GetIO().Fonts->GetTexDataAsRGBA32(&px, &w, &h);
    ImGui::NewFrame();
    app->Frame();
    ImGui::Render();
  }
}

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Runs `step` until `seconds` have passed; returns false (and prints why) if memory grew by more
// than max_growth_mb after the first quarter.
template <typename Step>
bool Phase(const char* name, double seconds, double max_growth_mb, Step step) {
  const double t0 = Now();
  const Memory start = Measure();
  Memory base{}, peak{};
  bool warm = false;
  long steps = 0;
  while (Now() - t0 < seconds) {
    step(steps++);
    const Memory m = Measure();
    if (!warm && (Now() - t0 >= seconds / 4 || m.heap_mb - start.heap_mb > 256)) {
      warm = true;  // the warm-up ends after a quarter of the phase, or at once on a runaway
      base = peak = m;
    }
    if (warm) {
      peak.heap_mb = std::max(peak.heap_mb, m.heap_mb);
      peak.resident_mb = std::max(peak.resident_mb, m.resident_mb);
      if (peak.heap_mb - base.heap_mb > max_growth_mb || peak.resident_mb - base.resident_mb > max_growth_mb) break;
    }
  }
  const double heap_growth = peak.heap_mb - base.heap_mb, resident_growth = peak.resident_mb - base.resident_mb;
  const bool ok = heap_growth <= max_growth_mb && resident_growth <= max_growth_mb;
  std::printf("%s %s: %ld steps in %.0f s; after warm-up heap %.1f -> %.1f MB, %s %.1f -> %.1f MB (limit +%.0f MB)\n",
              ok ? "ok  " : "FAIL", name, steps, Now() - t0, base.heap_mb, peak.heap_mb,
#if defined(__wasm__)
              "wasm memory",
#else
              "rss",
#endif
              base.resident_mb, peak.resident_mb, max_growth_mb);
  return ok;
}

// A 2-head 512 x 512 banded attention file as an .npz, made here rather than stored.
std::vector<uint8_t> BandedNpz() {
  attnviz::AttentionFile f;
  for (int i = 0; i < 512; ++i) f.source_tokens.push_back("t" + std::to_string(i));
  f.target_tokens = f.source_tokens;
  f.self_attention = true;
  attnviz::AttentionFile::Layer layer{"band", {}};
  for (int h = 0; h < 2; ++h) {
    attnviz::MatrixRM w(512, 512);
    for (int i = 0; i < 512; ++i) {
      for (int j = 0; j < 512; ++j) w(i, j) = std::exp(-std::abs(i - j) / (4.0f + 8.0f * h));
      w.row(i) /= w.row(i).sum();
    }
    layer.heads.push_back({"head " + std::to_string(h), w});
  }
  f.layers.push_back(layer);
  std::vector<uint8_t> out;
  if (!attnviz::SaveAttentionNpz(f, true, &out)) out.clear();
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 60, max_growth_mb = 8;
  std::string phase = "both";
  std::vector<std::vector<uint8_t>> files;
  std::vector<std::string> names;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
      seconds = std::atof(argv[++i]);
    } else if (std::strcmp(argv[i], "--phase") == 0 && i + 1 < argc) {
      phase = argv[++i];
    } else if (std::strcmp(argv[i], "--max-growth-mb") == 0 && i + 1 < argc) {
      max_growth_mb = std::atof(argv[++i]);
    } else {
      std::vector<uint8_t> bytes;
      const attnviz::Status st = attnviz::ReadFileBytes(argv[i], &bytes);
      if (!st) {
        std::fprintf(stderr, "soak: %s\n", st.message.c_str());
        return 2;
      }
      files.push_back(std::move(bytes));
      names.push_back(argv[i]);
    }
  }
  files.push_back(BandedNpz());
  names.push_back("banded_512.npz");
  ImGui::CreateContext();
  ImGui::GetIO().DisplaySize = ImVec2(1280, 800);
  ImGui::GetIO().DeltaTime = 1.0f / 60.0f;
  attnviz::App app;
  attnviz::AppConfig cfg;
  cfg.headless = true;
  if (!app.Init(cfg)) return 2;
  const char* views[] = {"heatmap", "lines", "grid", "steps", "compare"};
  if (!app.Command("example translation") || !app.Command("play")) return 2;
  bool ok = true;
  if (phase != "open-close")
    ok &= Phase("animation", seconds, max_growth_mb, [&](long step) {
      if (step % 600 == 0) (void)app.Command(std::string("view ") + views[(step / 600) % 5]);
      if (step % 300 == 299) (void)app.Command("play");  // restart the decoding when it has finished
      Frames(&app, 1);
    });
  if (phase != "animation") {
    ok &= Phase("open/close", seconds, max_growth_mb, [&](long step) {
      const size_t i = (size_t)step % files.size();
      app.OpenFileBytes(names[i], files[i].data(), files[i].size());
      Frames(&app, 5);
      (void)app.Command("example translation");
      Frames(&app, 1);
    });
  }
  app.Shutdown();
  ImGui::DestroyContext();
  return ok ? 0 : 1;
}
