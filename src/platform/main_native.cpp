// Native desktop loop: GLFW window with an OpenGL ES 3.0 context, imgui's GLFW + OpenGL3
// backends, App::Frame() once per frame. Options:
//   --example ID   open an example (seed002, seed004, seed000, translation, causal)
//   --view NAME    open a view (heatmap, lines, grid, steps, compare, translate, train)
//   --frames N     quit after N frames (smoke runs under xvfb)
//   --screenshot F write the last frame to F as a binary PPM before quitting
//   --command CMD  run an app command after start (repeatable), e.g. --command "train start"
//   --describe F   write describe() of the last frame to F as JSON (label boxes, heatmap geometry)
//   --frame-stats  print App::Frame() CPU time statistics (after 30 warm-up frames) at exit
//   --describe F   write describe() (what the last frame drew, as JSON) to F before quitting
//   --cache SIZE   memory for the heads of lazily read (safetensors) files, e.g. 512M (default 256M)
//   FILE...        attention files to open (JSON, NPZ, NPY, BertViz data, safetensors), as if dropped
//                  on the window
#include <GLFW/glfw3.h>

#include <algorithm>
#include <cfloat>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "app/app.h"
#include "app/lazy_maps.h"
#include "app/panel_fill.h"
#include "figure/png_codec.h"
#include "imgui.h"
#include "imgui_impl_glfw.h"
#include "imgui_impl_opengl3.h"
#include "io/file_util.h"
#include "io/memory_budget.h"
#include "platform/key_latch.h"
#include "platform/label_raster.h"
#include "platform/native_loader.h"
#include "render/gl.h"
#include "render/offscreen.h"

namespace {

void GlfwError(int code, const char* text) {
  std::fprintf(stderr, "attnviz: GLFW error %d: %s\n", code, text);
}

attnviz::App* g_app = nullptr;
attnviz::NativeFileLoader* g_loader = nullptr;
attnviz::KeyLatch g_keys;  // a tap between two frames is still a press

void LatchedKey(GLFWwindow* window, int key, int scancode, int action, int mods) {
  ImGui_ImplGlfw_KeyCallback(window, key, scancode, action, mods);
  g_keys.OnKey(ImGui::GetIO(), key, action);
}

void LatchedChar(GLFWwindow*, unsigned int c) {
  g_keys.OnChar(ImGui::GetIO(), c);
}

// Files dropped on the window are read on the loader thread; the window keeps drawing meanwhile.
void DropCallback(GLFWwindow*, int count, const char** paths) {
  for (int i = 0; i < count; ++i) g_loader->Open(paths[i]);
}

bool WritePpm(const char* path, int w, int h) {
  std::vector<unsigned char> px((size_t)w * h * 4);
  glReadPixels(0, 0, w, h, GL_RGBA, GL_UNSIGNED_BYTE, px.data());
  FILE* f = std::fopen(path, "wb");
  if (!f) return false;
  std::fprintf(f, "P6\n%d %d\n255\n", w, h);
  for (int y = h - 1; y >= 0; --y)
    for (int x = 0; x < w; ++x) std::fwrite(&px[((size_t)y * w + x) * 4], 1, 3, f);
  std::fclose(f);
  return true;
}

struct Options {
  attnviz::AppConfig config;
  long max_frames = -1;               // quit after this many frames (> 0)
  const char* screenshot = nullptr;   // PPM of the last frame
  const char* describe = nullptr;     // describe() JSON of the last frame
  std::vector<std::string> commands;  // app commands run after start
  bool frame_stats = false;           // print App::Frame() CPU statistics at exit
  std::vector<const char*> files;     // attention files to open, as if dropped on the window
};

const char kUsage[] =
    "usage: attnviz [--example ID] [--view NAME] [--frames N] [--screenshot out.ppm] [--command CMD]... "
    "[--frame-stats] [--describe out.json] [--cache SIZE] [FILE...]\n";

const char kHelp[] =
    "attnviz: the attention viewer, natively (the same app as the web page)\n\n"
    "  FILE...              attention files to open, as if dropped on the window (JSON, NPZ, NPY, safetensors)\n"
    "  --example ID         the built-in example to start on (seed002, seed004, seed000, translation, causal,\n"
    "                       multihead)\n"
    "  --view NAME          heatmap, lines, grid, steps, compare, translate or train\n"
    "  --command CMD        an app command, run after start (repeatable; e.g. 'step 3', 'map 5', 'save-png 2')\n"
    "  --frames N           quit after N frames (scripts and tests)\n"
    "  --screenshot F.ppm   write the last frame as a PPM\n"
    "  --describe F.json    write describe() of the last frame\n"
    "  --frame-stats        print the frames' CPU time statistics at exit\n"
    "  --cache SIZE         memory for the heads of lazily read files, e.g. 512M (default 256M)\n"
    "  -h, --help           this help\n\n"
    "Keys: ? or h in the window lists them. docs/ARCHITECTURE.md lists the commands.\n";

// Returns 0 when the options were read, -1 after --help (exit 0), else the exit code (2: usage error).
int ParseOptions(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    const char* flag = argv[i];
    const bool takes_value = !std::strcmp(flag, "--example") || !std::strcmp(flag, "--view") ||
                             !std::strcmp(flag, "--frames") || !std::strcmp(flag, "--screenshot") ||
                             !std::strcmp(flag, "--command") || !std::strcmp(flag, "--describe") ||
                             !std::strcmp(flag, "--cache");
    if (!std::strcmp(flag, "--help") || !std::strcmp(flag, "-h")) {
      std::printf("%s\n%s", kUsage, kHelp);
      return -1;  // not an error: main exits 0
    }
    if (!std::strcmp(flag, "--frame-stats")) {
      o->frame_stats = true;
      continue;
    }
    if (flag[0] != '-') {
      o->files.push_back(flag);
      continue;
    }
    if (!takes_value) {
      std::fprintf(stderr, "attnviz: unknown option %s\n%s", flag, kUsage);
      return 2;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "attnviz: %s needs a value\n%s", flag, kUsage);
      return 2;
    }
    const char* value = argv[++i];
    if (!std::strcmp(flag, "--example"))
      o->config.example = value;
    else if (!std::strcmp(flag, "--view"))
      o->config.view = value;
    else if (!std::strcmp(flag, "--frames")) {
      char* end = nullptr;
      o->max_frames = std::strtol(value, &end, 10);
      if (end == value || *end || o->max_frames <= 0) {
        std::fprintf(stderr, "attnviz: --frames %s is not a count of frames (1 or more)\n%s", value, kUsage);
        return 2;
      }
    } else if (!std::strcmp(flag, "--screenshot"))
      o->screenshot = value;
    else if (!std::strcmp(flag, "--describe"))
      o->describe = value;
    else if (!std::strcmp(flag, "--cache")) {
      uint64_t bytes = 0;
      if (!attnviz::ParseByteSize(value, &bytes)) {
        std::fprintf(stderr, "attnviz: --cache %s is not a size such as 512M\n%s", value, kUsage);
        return 2;
      }
      attnviz::SetLazyCacheBudget(bytes);
    } else
      o->commands.push_back(value);
  }
  return 0;
}

// A GLFW window with an OpenGL ES 3.0 context and imgui's backends on it; nullptr + message on failure.
GLFWwindow* OpenWindow(bool vsync) {
  glfwSetErrorCallback(GlfwError);
  if (!glfwInit()) {
    std::fprintf(stderr, "attnviz: cannot initialise GLFW (is there a display? try xvfb-run)\n");
    return nullptr;
  }
  glfwWindowHint(GLFW_CLIENT_API, GLFW_OPENGL_ES_API);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 0);
  GLFWwindow* window = glfwCreateWindow(1280, 800, "attnviz", nullptr, nullptr);
  if (!window) {
    std::fprintf(stderr, "attnviz: cannot create an OpenGL ES 3.0 window\n");
    glfwTerminate();
    return nullptr;
  }
  glfwMakeContextCurrent(window);
  glfwSwapInterval(vsync ? 1 : 0);
  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGui_ImplGlfw_InitForOpenGL(window, true);
  glfwSetKeyCallback(window, LatchedKey);    // replaces ImGui's, which it then calls
  glfwSetCharCallback(window, LatchedChar);  // replaces ImGui's: typed characters keep their order
  ImGui_ImplOpenGL3_Init("#version 300 es");
  return window;
}

void CloseWindow(GLFWwindow* window) {
  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  glfwDestroyWindow(window);
  glfwTerminate();
}

// Files the user asked to save are written to the working directory.
void SaveDownloads(attnviz::App& app) {
  std::string name, mime;
  std::vector<unsigned char> bytes;
  while (app.PopDownload(&name, &mime, &bytes)) {
    FILE* f = std::fopen(name.c_str(), "wb");
    const bool ok = f && std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
    if (f && std::fclose(f) != 0) std::fprintf(stderr, "attnviz: cannot close %s\n", name.c_str());
    std::fprintf(stderr, ok ? "attnviz: wrote %s\n" : "attnviz: cannot write %s\n", name.c_str());
  }
  std::string url;
  if (app.PopOpenUrlRequest(&url))
    std::fprintf(stderr, "attnviz: %s is part of the web app: `make run` serves it at http://127.0.0.1:8000/%s\n",
                 url.c_str(), url.c_str());
  if (app.PopOpenDialogRequest())
    std::fprintf(stderr, "attnviz: drop an attention file (JSON or NPZ) onto the window to open it\n");
}

// One frame: events, files being loaded, DPI, the app, drawing. Returns the framebuffer size drawn.
void RunFrame(GLFWwindow* window, attnviz::App& app, int* fb_w, int* fb_h) {
  glfwPollEvents();
  g_loader->Poll(&app);
  float sx = 1, sy = 1;
  glfwGetWindowContentScale(window, &sx, &sy);
  if (app.SetDpiScale(sx)) {
    ImGui_ImplOpenGL3_DestroyFontsTexture();
    ImGui_ImplOpenGL3_CreateFontsTexture();
  }
  ImGui_ImplOpenGL3_NewFrame();
  ImGui_ImplGlfw_NewFrame();
  ImGui::NewFrame();
  app.Frame();
  ImGui::Render();
  g_keys.EndFrame(ImGui::GetIO());
  glfwGetFramebufferSize(window, fb_w, fb_h);
  glViewport(0, 0, *fb_w, *fb_h);
  attnviz::ClearFrameBackground();
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
}

// One PNG export (App::PeekCapture): the frame is drawn again into an offscreen framebuffer at
// `scale` x the window's resolution, with fonts rasterised at that scale, then read back,
// cropped to the view, encoded by libpng and written to the working directory.
attnviz::Status CaptureFrame(GLFWwindow* window, attnviz::App& app, float scale, const std::string& name,
                             attnviz::OffscreenTarget* target) {
  float sx = 1, sy = 1;
  glfwGetWindowContentScale(window, &sx, &sy);
  if (app.SetDpiScale(sx * scale)) {
    ImGui_ImplOpenGL3_DestroyFontsTexture();
    ImGui_ImplOpenGL3_CreateFontsTexture();
  }
  ImGui_ImplOpenGL3_NewFrame();
  ImGui_ImplGlfw_NewFrame();
  ImGuiIO& io = ImGui::GetIO();
  io.MousePos = ImVec2(-FLT_MAX, -FLT_MAX);  // a figure: no hover highlight, no tooltip (Ctrl+Shift+S over a cell)
  io.DisplayFramebufferScale = ImVec2(io.DisplayFramebufferScale.x * scale, io.DisplayFramebufferScale.y * scale);
  ImGui::NewFrame();
  app.Frame();
  ImGui::Render();
  float rect_ui[4], again = scale;  // the figure's box as this frame drew it
  int id = 0;
  std::string same;
  const bool queued = app.PeekCapture(&again, &id, &same, rect_ui);
  const int w = (int)(io.DisplaySize.x * io.DisplayFramebufferScale.x);
  const int h = (int)(io.DisplaySize.y * io.DisplayFramebufferScale.y);
  attnviz::Status st = queued ? target->Begin(w, h) : attnviz::Status::Error("the capture was dropped");
  std::vector<uint8_t> rgba;
  int cw = 0, ch = 0;
  if (st) {
    glViewport(0, 0, w, h);
    attnviz::ClearFrameBackground();
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
    const float fx = io.DisplayFramebufferScale.x, fy = io.DisplayFramebufferScale.y;
    const int rect[4] = {(int)(rect_ui[0] * fx), (int)(rect_ui[1] * fy), (int)(rect_ui[2] * fx + 0.999f),
                         (int)(rect_ui[3] * fy + 0.999f)};
    st = attnviz::ReadFramebufferRect(w, h, rect, &rgba, &cw, &ch);
    target->End();
  }
  std::vector<uint8_t> png;
  if (st) st = attnviz::EncodePngRgba(rgba.data(), cw, ch, 96.0f * scale, &png);
  if (st) st = attnviz::WriteFileBytes(name, png.data(), png.size());
  if (app.SetDpiScale(sx)) {
    ImGui_ImplOpenGL3_DestroyFontsTexture();
    ImGui_ImplOpenGL3_CreateFontsTexture();
  }
  if (st) std::fprintf(stderr, "attnviz: wrote %s (%dx%d px)\n", name.c_str(), cw, ch);
  return st;
}

void RunCaptures(GLFWwindow* window, attnviz::App& app) {
  static attnviz::OffscreenTarget target;
  float scale = 1, rect[4];
  int id = 0;
  std::string name;
  while (app.PeekCapture(&scale, &id, &name, rect)) {
    const attnviz::Status st = CaptureFrame(window, app, scale, name, &target);
    if (!st) std::fprintf(stderr, "attnviz: %s\n", st.message.c_str());
    app.PopCapture(st.ok, st.message);
  }
}

void PrintFrameStats(std::vector<float> v) {
  if (v.empty()) return;
  std::sort(v.begin(), v.end());
  double sum = 0;
  for (float x : v) sum += x;
  std::printf("frame_cpu_ms frames=%zu mean=%.3f median=%.3f p95=%.3f max=%.3f\n", v.size(), sum / v.size(),
              v[v.size() / 2], v[(size_t)(v.size() * 0.95)], v.back());
}

bool WriteText(const char* path, const std::string& text) {
  FILE* f = std::fopen(path, "wb");
  if (!f) return false;
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  return std::fclose(f) == 0 && ok;
}

// Frames until the window closes or --frames is reached; the last one optionally as a PPM.
void RunLoop(GLFWwindow* window, attnviz::App& app, const Options& o) {
  std::vector<float> frame_ms;
  for (long frame = 1; !glfwWindowShouldClose(window); ++frame) {
    int fb_w = 0, fb_h = 0;
    RunFrame(window, app, &fb_w, &fb_h);
    if (o.frame_stats && frame > 30) frame_ms.push_back(app.LastFrameCpuMs());
    if (o.max_frames > 0 && frame >= o.max_frames) {
      if (o.screenshot && !WritePpm(o.screenshot, fb_w, fb_h))
        std::fprintf(stderr, "attnviz: cannot write %s\n", o.screenshot);
      if (o.describe && !WriteText(o.describe, app.DescribeJson()))
        std::fprintf(stderr, "attnviz: cannot write %s\n", o.describe);
      glfwSwapBuffers(window);
      break;
    }
    glfwSwapBuffers(window);
    SaveDownloads(app);
    RunCaptures(window, app);
  }
  if (o.frame_stats) PrintFrameStats(std::move(frame_ms));
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (const int code = ParseOptions(argc, argv, &o)) return code < 0 ? 0 : code;
  GLFWwindow* window = OpenWindow(o.max_frames <= 0);
  if (!window) return 1;
  float sx = 1, sy = 1;
  glfwGetWindowContentScale(window, &sx, &sy);
  o.config.dpi_scale = sx;
  const std::unique_ptr<attnviz::LabelRasterizer> labels = attnviz::MakeLabelRasterizer();
  if (!labels) std::fprintf(stderr, "attnviz: no fonts from fontconfig: labels use the UI font only\n");
  o.config.labels = labels.get();
  attnviz::App app;
  g_app = &app;
  // Live training on its own thread, its micro-batches on every core (ATTNVIZ_TRAIN_THREADS=n: n threads).
  const char* train_threads = std::getenv("ATTNVIZ_TRAIN_THREADS");
  const int threads = train_threads ? std::max(0, std::min(256, std::atoi(train_threads))) : 0;
  o.config.train_runner = [threads] { return attnviz::MakeThreadRunnerOn(threads); };
  const attnviz::Status st = app.Init(o.config);
  if (!st) {
    std::fprintf(stderr, "attnviz: %s\n", st.message.c_str());
    CloseWindow(window);
    return 1;
  }
  attnviz::NativeFileLoader loader;
  g_loader = &loader;
  glfwSetDropCallback(window, DropCallback);
  for (const char* f : o.files) loader.Open(f);
  loader.WaitIdle(&app);  // files named on the command line are open before the first frame and the commands
  for (const std::string& c : o.commands) {
    const attnviz::Status cs = app.Command(c);
    if (!cs) std::fprintf(stderr, "attnviz: --command \"%s\": %s\n", c.c_str(), cs.message.c_str());
  }
  RunLoop(window, app, o);
  app.Shutdown();
  CloseWindow(window);
  return 0;
}
