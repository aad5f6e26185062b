// Native desktop loop: GLFW window with an OpenGL ES 3.0 context, imgui's GLFW + OpenGL3
// backends, App::Frame() once per frame. Options:
//   --example ID   open an example (seed002, seed004, seed000, translation, causal)
//   --view NAME    open a view (heatmap, lines, grid, steps, compare)
//   --frames N     quit after N frames (smoke runs under xvfb)
//   --screenshot F write the last frame to F as a binary PPM before quitting
//   --command CMD  run an app command after start (repeatable), e.g. --command "train start"
//   --frame-stats  print App::Frame() CPU time statistics (after 30 warm-up frames) at exit
#include <GLFW/glfw3.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "app/app.h"
#include "imgui.h"
#include "imgui_impl_glfw.h"
#include "imgui_impl_opengl3.h"
#include "render/gl.h"

namespace {

void GlfwError(int code, const char* text) { std::fprintf(stderr, "attnviz: GLFW error %d: %s\n", code, text); }

attnviz::App* g_app = nullptr;

void DropCallback(GLFWwindow*, int count, const char** paths) {
  for (int i = 0; i < count; ++i) {
    FILE* f = std::fopen(paths[i], "rb");
    if (!f) {
      std::fprintf(stderr, "attnviz: cannot open %s\n", paths[i]);
      continue;
    }
    std::vector<unsigned char> bytes;
    unsigned char buf[65536];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) bytes.insert(bytes.end(), buf, buf + n);
    std::fclose(f);
    g_app->OpenFileBytes(paths[i], bytes.data(), bytes.size());
  }
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

}  // namespace

int main(int argc, char** argv) {
  attnviz::AppConfig config;
  long max_frames = -1;
  const char* screenshot = nullptr;
  std::vector<std::string> commands;
  bool frame_stats = false;
  std::vector<float> frame_ms;
  for (int i = 1; i < argc; ++i) {
    auto next = [&](const char* flag) -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "attnviz: %s needs a value\n", flag);
        std::exit(2);
      }
      return argv[++i];
    };
    if (!std::strcmp(argv[i], "--example")) config.example = next("--example");
    else if (!std::strcmp(argv[i], "--view")) config.view = next("--view");
    else if (!std::strcmp(argv[i], "--frames")) max_frames = std::atol(next("--frames"));
    else if (!std::strcmp(argv[i], "--screenshot")) screenshot = next("--screenshot");
    else if (!std::strcmp(argv[i], "--command")) commands.push_back(next("--command"));
    else if (!std::strcmp(argv[i], "--frame-stats")) frame_stats = true;
    else {
      std::fprintf(stderr, "usage: attnviz [--example ID] [--view NAME] [--frames N] [--screenshot out.ppm] [--command CMD]...\n");
      return 2;
    }
  }

  glfwSetErrorCallback(GlfwError);
  if (!glfwInit()) {
    std::fprintf(stderr, "attnviz: cannot initialise GLFW (is there a display? try xvfb-run)\n");
    return 1;
  }
  glfwWindowHint(GLFW_CLIENT_API, GLFW_OPENGL_ES_API);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 0);
  GLFWwindow* window = glfwCreateWindow(1280, 800, "attnviz", nullptr, nullptr);
  if (!window) {
    std::fprintf(stderr, "attnviz: cannot create an OpenGL ES 3.0 window\n");
    glfwTerminate();
    return 1;
  }
  glfwMakeContextCurrent(window);
  glfwSwapInterval(max_frames > 0 ? 0 : 1);

  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGui_ImplGlfw_InitForOpenGL(window, true);
  ImGui_ImplOpenGL3_Init("#version 300 es");

  float sx = 1, sy = 1;
  glfwGetWindowContentScale(window, &sx, &sy);
  config.dpi_scale = sx;
  attnviz::App app;
  g_app = &app;
  std::string error;
  if (!app.Init(config, &error)) {
    std::fprintf(stderr, "attnviz: %s\n", error.c_str());
    return 1;
  }
  glfwSetDropCallback(window, DropCallback);
  for (const std::string& c : commands) {
    const std::string err = app.Command(c);
    if (!err.empty()) std::fprintf(stderr, "attnviz: --command \"%s\": %s\n", c.c_str(), err.c_str());
  }

  long frame = 0;
  while (!glfwWindowShouldClose(window)) {
    glfwPollEvents();
    glfwGetWindowContentScale(window, &sx, &sy);
    if (app.SetDpiScale(sx)) {
      ImGui_ImplOpenGL3_DestroyFontsTexture();
      ImGui_ImplOpenGL3_CreateFontsTexture();
    }
    ImGui_ImplOpenGL3_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    ImGui::NewFrame();
    app.Frame();
    if (frame_stats && frame >= 30) frame_ms.push_back(app.LastFrameCpuMs());
    ImGui::Render();
    int fb_w, fb_h;
    glfwGetFramebufferSize(window, &fb_w, &fb_h);
    glViewport(0, 0, fb_w, fb_h);
    glClearColor(0.1f, 0.1f, 0.12f, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
    ++frame;
    if (max_frames > 0 && frame >= max_frames) {
      if (screenshot && !WritePpm(screenshot, fb_w, fb_h)) std::fprintf(stderr, "attnviz: cannot write %s\n", screenshot);
      glfwSwapBuffers(window);
      break;
    }
    glfwSwapBuffers(window);
    std::string name, mime;
    std::vector<unsigned char> bytes;
    while (app.PopDownload(&name, &mime, &bytes)) {
      FILE* f = std::fopen(name.c_str(), "wb");
      if (f && std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size()) std::fprintf(stderr, "attnviz: wrote %s\n", name.c_str());
      else std::fprintf(stderr, "attnviz: cannot write %s\n", name.c_str());
      if (f) std::fclose(f);
    }
    if (app.PopOpenDialogRequest())
      std::fprintf(stderr, "attnviz: drop an attention file (JSON or NPZ) onto the window to open it\n");
  }
  if (frame_stats && !frame_ms.empty()) {
    std::vector<float> v = frame_ms;
    std::sort(v.begin(), v.end());
    double sum = 0;
    for (float x : v) sum += x;
    std::printf("frame_cpu_ms frames=%zu mean=%.3f median=%.3f p95=%.3f max=%.3f\n", v.size(), sum / v.size(),
                v[v.size() / 2], v[(size_t)(v.size() * 0.95)], v.back());
  }
  app.Shutdown();
  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  glfwDestroyWindow(window);
  glfwTerminate();
  return 0;
}
