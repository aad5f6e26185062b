// attnviz_open_file: the viewer's open path for the hostile corpus (tests/hostile/run_corpus.py).
// A headless App (no window, no GL, as tests/app) opens each FILE as a dropped file would be
// (App::OpenFileBytes -> OpenAttentionFile; a safetensors file, or a .npy too big to read whole, lazily, App::OpenLazy
// over its bytes in memory, as the browser's File.slice() reads it; natively also an .npz too big to read whole, as
// the desktop app does) and draws a few frames; prints "opened NAME" or
// "error: MESSAGE" and exits 1 if any file failed. Built natively and for WASM (node, NODERAWFS).
//   attnviz_open_file [--max-memory SIZE] [--frames N] FILE...
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "app/app.h"
#include "imgui.h"
#include "io/byte_source.h"
#include "io/file_util.h"
#include "io/json.h"
#include "io/lazy_attention.h"
#include "io/memory_budget.h"
#include "io/utf8.h"

namespace {

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

// The status bar's message after the open, from describe() (what a user and the embed API see).
bool OpenedWithoutError(attnviz::App* app, std::string* message) {
  attnviz::JsonValue d;
  if (!attnviz::ParseJson(app->DescribeJson(), &d)) {
    *message = "describe() is not JSON";
    return false;
  }
  const attnviz::JsonValue* m = d.Find("message");
  const attnviz::JsonValue* e = d.Find("message_is_error");
  *message = m && m->type == attnviz::JsonType::String ? m->string : "";
  return !(e && e->boolean);
}

}  // namespace

int main(int argc, char** argv) {
  int frames = 3, failures = 0;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--max-memory") == 0 && i + 1 < argc) {
      uint64_t bytes = 0;
      if (!attnviz::ParseByteSize(argv[++i], &bytes)) return 2;
      attnviz::SetDefaultMemoryBudget(bytes);
    } else if (std::strcmp(argv[i], "--frames") == 0 && i + 1 < argc) {
      frames = std::atoi(argv[++i]);
    } else {
      files.push_back(argv[i]);
    }
  }
  ImGui::CreateContext();
  ImGui::GetIO().DisplaySize = ImVec2(1280, 800);
  ImGui::GetIO().DeltaTime = 1.0f / 60.0f;
  attnviz::App app;
  attnviz::AppConfig cfg;
  cfg.headless = true;
  if (!app.Init(cfg)) return 2;
  Frames(&app, 1);
  for (const std::string& path : files) {
    std::vector<uint8_t> bytes;
    const attnviz::Status st = attnviz::ReadFileBytes(path, &bytes);
    std::string message;
    if (st) {
      // A length, then '{' at byte 8: safetensors (attnviz-lazy.js sniffs it so too, by its first
      // bytes); a .npy too big to read whole (attnviz-lazy.js asks attnviz_opens_lazily).
      const bool lazy = (bytes.size() >= 16 && bytes[8] == '{' && bytes[0] != '{' && bytes[0] != '[') ||
                        attnviz::NpyOpensLazily(bytes.data(), bytes.size(), bytes.size());
#ifndef __EMSCRIPTEN__
      // The desktop app lists an .npz too big to read whole in place and reads it lazily
      // (NativeFileLoader: OpensLazily); the page reads an .npz only whole.
      attnviz::MemorySource probe(bytes.data(), bytes.size());
      const bool npz = attnviz::LooksLikeZip(bytes.data(), bytes.size()) && attnviz::NpzOpensLazily(&probe);
#else
      const bool npz = false;
#endif
      if (npz) {
        (void)app.OpenLazy(path, std::make_unique<attnviz::MemorySource>(std::move(bytes)));
      } else if (lazy) {
        const uint8_t* prefix = bytes.data();  // stays valid: the source owns the bytes from here
        const size_t n = bytes.size();
        (void)app.OpenLazy(path, std::make_unique<attnviz::MemorySource>(std::move(bytes)), prefix, n);
      } else {
        app.OpenFileBytes(path, bytes.data(), bytes.size());
      }
      std::vector<uint8_t>().swap(bytes);
      Frames(&app, frames);
    }
    if (!st || !OpenedWithoutError(&app, &message)) {
      std::printf("error: %s\n", attnviz::PrintableText(st ? message : st.message, 4000).c_str());
      ++failures;
    } else {
      std::printf("opened %s\n", attnviz::PrintableText(path).c_str());
    }
  }
  app.Shutdown();
  ImGui::DestroyContext();
  return failures ? 1 : 0;
}
