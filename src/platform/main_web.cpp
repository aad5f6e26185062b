// Browser loop: Emscripten's GLFW (a JS library) with a WebGL2 context, imgui's GLFW +
// OpenGL3 (GLSL ES 3.00) backends, App::Frame() once per animation frame.
// The canvas is sized from its CSS box times devicePixelRatio every frame, so it follows
// resizes and stays crisp on HiDPI screens; fonts are re-rasterised when the ratio changes.
#include <GLFW/glfw3.h>
#include <emscripten.h>
#include <emscripten/html5.h>

#include <cfloat>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "app/app.h"
#include "app/panel_fill.h"
#include "imgui.h"
#include "imgui_impl_glfw.h"
#include "imgui_impl_opengl3.h"
#include "platform/key_latch.h"
#include "platform/label_raster.h"
#include "platform/web_capture.h"
#include "platform/web_exports.h"
#include "render/gl.h"

// The JavaScript below is not C++: the formatter would break it ("!==" into "!= =").
// clang-format off
// Options the page passed to createAttnviz({attnvizOptions: {...}}), as
// "example\nview\nembed\nviews\ntheme\ncontrols" (views comma-separated).
EM_JS(char*, attnviz_js_options, (), {
  var o = Module["attnvizOptions"] || {};
  var s = String(o.example || "") + "\n" + String(o.view || "") + "\n" + (o.embed ? "1" : "0") + "\n" +
          (o.views || []).join(",") + "\n" + String(o.theme || "") + "\n" + (o.controls === false ? "0" : "1");
  var n = lengthBytesUTF8(s) + 1;
  var p = _malloc(n);
  stringToUTF8(s, p, n);
  return p;
});

// Sizes the canvas backing store to its CSS box * devicePixelRatio (* scale while a PNG export
// draws its frame). out = {css_w, css_h, fb_w, fb_h}.
EM_JS(void, attnviz_js_sync_canvas, (float* out, float scale), {
  var c = Module["canvas"];
  var dpr = ((typeof window !== "undefined" && window.devicePixelRatio) || 1) * scale;
  var w = Math.max(1, c.clientWidth), h = Math.max(1, c.clientHeight);
  var pw = Math.max(1, Math.round(w * dpr)), ph = Math.max(1, Math.round(h * dpr));
  if (c.width !== pw) c.width = pw;
  if (c.height !== ph) c.height = ph;
  HEAPF32[(out >> 2) + 0] = w;
  HEAPF32[(out >> 2) + 1] = h;
  HEAPF32[(out >> 2) + 2] = pw;
  HEAPF32[(out >> 2) + 3] = ph;
});

// Emscripten 3.1.6's GLFW passes the DOM wheel delta as is (pixels, lines or pages; down is
// positive), where GLFW means notches with up positive. The embed's wheel listener records the
// event's deltaMode; this returns the factor to GLFW notches (a 100 px or 3-line notch is 1).
EM_JS(float, attnviz_js_wheel_scale, (), {
  var mode = Module["attnvizWheelMode"] || 0;
  return mode === 1 ? -1 / 3 : mode === 2 ? -1 : -1 / 100;
});

// True while this instance's canvas has the keyboard focus (a full page is always focused).
EM_JS(int, attnviz_js_has_focus, (), {
  var o = Module["attnvizOptions"] || {};
  if (!o.embed) return 1;
  return document.activeElement === Module["canvas"] ? 1 : 0;
});

EM_JS(void, attnviz_js_first_frame, (), {
  if (Module["onFirstFrame"]) Module["onFirstFrame"]();
});

// The mouse cursor imgui asks for (an I-beam over a text box, arrows on a window's edge) as the
// canvas's CSS cursor: Emscripten 3.1.6's GLFW cursors do nothing, so it was always the arrow.
EM_JS(void, attnviz_js_set_cursor, (const char* css), { Module["canvas"].style.cursor = UTF8ToString(css); });

// Text copied in the viewer (Ctrl+C in a text box) goes to the system clipboard too, where the
// browser allows it (a secure context, the page focused); a refusal is silent: the copy still pastes
// inside the viewer.
EM_JS(void, attnviz_js_copy_text, (const char* text), {
  const t = UTF8ToString(text);
  if (navigator.clipboard && navigator.clipboard.writeText) navigator.clipboard.writeText(t).catch(() => {});
});

EM_JS(void, attnviz_js_fatal, (const char* msg), {
  var text = UTF8ToString(msg);
  console.warn("attnviz: " + text);
  if (Module["onFatal"]) Module["onFatal"](text);
});

// Starts a browser download of bytes [ptr, ptr + len).
EM_JS(void, attnviz_js_download, (const char* name, const char* mime, const unsigned char* ptr, int len), {
  var blob = new Blob([HEAPU8.slice(ptr, ptr + len)], {type: UTF8ToString(mime)});
  var a = document.createElement("a");
  a.href = URL.createObjectURL(blob);
  a.download = UTF8ToString(name);
  document.body.appendChild(a);
  a.click();
  setTimeout(function() { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
});

// Shows the browser's file picker; the chosen file is copied into the heap and opened.
EM_JS(void, attnviz_js_open_dialog, (), {
  var input = document.createElement("input");
  input.type = "file";
  input.accept = ".json,.npz,application/json";
  input.onchange = function() {
    var f = input.files && input.files[0];
    if (!f) return;
    f.arrayBuffer().then(function(buf) {
      var bytes = new Uint8Array(buf);
      var p = _malloc(Math.max(1, bytes.length));
      HEAPU8.set(bytes, p);
      var n = lengthBytesUTF8(f.name) + 1;
      var np = _malloc(n);
      stringToUTF8(f.name, np, n);
      _attnviz_open_file(np, p, bytes.length);
      _free(np);
      _free(p);
    });
  };
  input.click();
});
// True once after the page saw input, a resize or an API call (attnviz-embed.js sets the flag):
// an idle viewer draws no frames.
EM_JS(int, attnviz_js_take_wake, (), {
  var w = Module["attnvizWake"];
  Module["attnvizWake"] = false;
  return w ? 1 : 0;
});

// True once after attnviz-lazy.js asked for one frame to show the progress of a file being read.
EM_JS(int, attnviz_js_take_progress_frame, (), {
  var w = Module["attnvizProgressFrame"];
  Module["attnvizProgressFrame"] = false;
  return w ? 1 : 0;
});

// Module.attnvizDrawEveryFrame: draw even a frame that looks like the last one (A/B benchmarks).
EM_JS(int, attnviz_js_draw_every_frame, (), { return Module["attnvizDrawEveryFrame"] ? 1 : 0; });

// Opens a page of the app's folder in a new tab (Help > Tutorial).
EM_JS(void, attnviz_js_open_url, (const char* url), {
  window.open(new URL(UTF8ToString(url), document.baseURI).href, "_blank", "noopener");
});

// Fetches a file the app needs (a model), relative to attnviz.wasm, and hands it to attnviz_fetched.
EM_JS(void, attnviz_js_fetch, (const char* url), {
  var u = UTF8ToString(url);
  var full = Module["locateFile"] ? Module["locateFile"](u, "") : u;
  var done = function(p, n, err) {
    ccall("attnviz_fetched", null, ["string", "number", "number", "string"], [u, p, n, err]);
    Module["attnvizWake"] = true;
  };
  fetch(full).then(function(r) {
    if (!r.ok) throw new Error("HTTP " + r.status + " for " + full);
    return r.arrayBuffer();
  }).then(function(buf) {
    var b = new Uint8Array(buf);
    var p = _malloc(Math.max(1, b.length));
    HEAPU8.set(b, p);
    done(p, b.length, "");
    _free(p);
  }).catch(function(e) { done(0, 0, String((e && e.message) || e)); });
});

// An event for the page's listeners (viewer.on(type, fn)).
EM_JS(void, attnviz_js_emit, (const char* type, const char* json), {
  if (Module["onAttnvizEvent"]) Module["onAttnvizEvent"](UTF8ToString(type), JSON.parse(UTF8ToString(json)));
});
// Live training in a Web Worker (web/attnviz-train-worker.js): sends a command, starting the
// worker on first use. Each start is a new run; reports of an older run still in flight are
// dropped. What comes back goes to attnviz_train_deliver / attnviz_train_failed (below).
EM_JS(void, attnviz_js_train_send, (const char* text), {
  var t = UTF8ToString(text);
  var type = JSON.parse(t).type;
  if (type === "stop" && !Module["attnvizTrainWorker"]) return;
  if (type === "start") Module["attnvizTrainRun"] = (Module["attnvizTrainRun"] || 0) + 1;
  var w = Module["attnvizTrainWorker"];
  var fail = function(msg) {
    Module.ccall("attnviz_train_failed", null, ["string"], [msg]);
    Module["attnvizWake"] = true;
  };
  if (!w) {
    try {
      var url = Module["locateFile"] ? Module["locateFile"]("attnviz-train-worker.js", "") : "attnviz-train-worker.js";
      w = Module["attnvizTrainWorker"] = new Worker(url);
    } catch (e) {
      fail("Web Workers are not available here: " + ((e && e.message) || e));
      return;
    }
    w.onerror = function(e) {
      e.preventDefault();
      fail("the training worker failed: " + ((e && e.message) || "it could not be loaded"));
    };
    w.onmessage = function(e) {
      var m = e.data || {};
      if (!Module["asm"] || m.run !== Module["attnvizTrainRun"]) return;  // destroyed, or an older run
      if (m.error) { fail(m.error); return; }
      var model = m.model || new Uint8Array(0);
      var p = model.length ? _malloc(model.length) : 0;
      if (model.length && !p) { fail("not enough memory for the trained model"); return; }
      if (p) HEAPU8.set(model, p);
      Module.ccall("attnviz_train_deliver", null, ["string", "number", "number"], [m.report, p, model.length]);
      if (p) _free(p);
      // An epoch's end wakes the viewer; the reports between (one per 50 ms slice) are drawn at the
      // Train view's own pace (TrainView::Animating), not at the page's full frame rate.
      if (model.length) Module["attnvizWake"] = true;
    };
  }
  w.postMessage({ run: Module["attnvizTrainRun"] || 0, text: t });
  if (type === "stop") { w.terminate(); Module["attnvizTrainWorker"] = null; }
});
// clang-format on

namespace {

// The live training run's page end (app/train_runner.h); the worker's reports arrive through
// attnviz_train_deliver.
class WorkerRunner : public attnviz::ReportRunner {
 public:
  WorkerRunner() : ReportRunner([](const std::string& m) { attnviz_js_train_send(m.c_str()); }) { live = this; }
  ~WorkerRunner() override {
    if (live == this) live = nullptr;
  }
  static WorkerRunner* live;  // the runner the reports are for (one per page instance)
};
WorkerRunner* WorkerRunner::live = nullptr;

struct WebLoop {
  GLFWwindow* window = nullptr;
  std::unique_ptr<attnviz::LabelRasterizer> labels = attnviz::MakeLabelRasterizer();  // outlives app
  attnviz::App app;
  long frame = 0;
  int quiet_frames = 0;                              // frames drawn since the last input or animation
  float last_size[4] = {0, 0, 0, 0};                 // canvas CSS and backing-store size last frame
  uint64_t drawn_fingerprint = 0;                    // App::DrawFingerprint of the frame on the canvas (0: none)
  bool stopped = false;                              // destroy() was called
  attnviz::KeyLatch keys;                            // a tap between two frames is still a press
  attnviz::PressAfterMove presses;                   // a tap where the pointer just arrived hovers first
  std::string clipboard;                             // imgui's clipboard (Emscripten 3.1.6's GLFW has none)
  ImGuiMouseCursor cursor = ImGuiMouseCursor_Arrow;  // the canvas's CSS cursor
};
WebLoop* g_loop = nullptr;

const char* CssCursor(ImGuiMouseCursor c) {
  switch (c) {
    case ImGuiMouseCursor_None:
      return "none";
    case ImGuiMouseCursor_TextInput:
      return "text";
    case ImGuiMouseCursor_ResizeAll:
      return "move";
    case ImGuiMouseCursor_ResizeNS:
      return "ns-resize";
    case ImGuiMouseCursor_ResizeEW:
      return "ew-resize";
    case ImGuiMouseCursor_ResizeNESW:
      return "nesw-resize";
    case ImGuiMouseCursor_ResizeNWSE:
      return "nwse-resize";
    case ImGuiMouseCursor_Hand:
      return "pointer";
    case ImGuiMouseCursor_NotAllowed:
      return "not-allowed";
    default:
      return "default";
  }
}

// An idle viewer draws nothing: a few frames after the last input, resize or API call, and
// while nothing animates, the frame is skipped (the canvas keeps its last image).
bool ShouldDraw(WebLoop& L, const float sz[4]) {
  bool woke = attnviz_js_take_wake() != 0 || L.frame < 3 || L.keys.Waiting();  // a key waits for its own frame
  for (int i = 0; i < 4; ++i) woke = woke || sz[i] != L.last_size[i];
  for (int i = 0; i < 4; ++i) L.last_size[i] = sz[i];
  if (woke) L.quiet_frames = 0;
  if (L.quiet_frames < 6) return ++L.quiet_frames, true;  // a few more frames let ImGui settle hover and animations
  if (L.app.NeedsFrames()) return true;  // an animation's frames (a view may ask for fewer than every one)
  // While a file is read, one frame now and then shows its progress: a software renderer would
  // otherwise spend the reading's time drawing.
  return attnviz_js_take_progress_frame() != 0;
}

// Emscripten's GLFW reports sizes and the cursor in canvas (device) pixels; the UI works in CSS
// pixels. It listens to keys on the whole window: with several viewers on a page, only the
// focused one may see them.
void PrepareInput(const float sz[4], attnviz::KeyLatch* keys) {
  ImGuiIO& io = ImGui::GetIO();
  io.DisplaySize = ImVec2(sz[0], sz[1]);
  io.DisplayFramebufferScale = ImVec2(sz[2] / sz[0], sz[3] / sz[1]);
  if (io.MousePos.x > -1e30f) io.MousePos = ImVec2(io.MousePos.x * sz[0] / sz[2], io.MousePos.y * sz[1] / sz[3]);
  if (!attnviz_js_has_focus()) {
    keys->Blur();
    io.ClearInputCharacters();
    for (bool& k : io.KeysDown) k = false;
    io.KeyCtrl = io.KeyShift = io.KeyAlt = io.KeySuper = false;
  }
}

// What the app asked of the page this frame: downloads, the file picker, events.
void HandOver(WebLoop& L) {
  std::string name, mime;
  std::vector<unsigned char> bytes;
  while (L.app.PopDownload(&name, &mime, &bytes))
    attnviz_js_download(name.c_str(), mime.c_str(), bytes.data(), (int)bytes.size());
  if (L.app.PopOpenDialogRequest()) attnviz_js_open_dialog();
  std::string url;
  if (L.app.PopOpenUrlRequest(&url)) attnviz_js_open_url(url.c_str());
  while (L.app.PopFetchRequest(&url)) attnviz_js_fetch(url.c_str());
  std::string type, json;
  while (L.app.PopEvent(&type, &json)) attnviz_js_emit(type.c_str(), json.c_str());
}

void Frame() {
  WebLoop& L = *g_loop;
  if (L.stopped) return;
  float sz[4], cap_scale = 1.0f, cap_rect[4];
  int cap_id = 0;
  std::string cap_name;
  const bool capturing = L.app.PeekCapture(&cap_scale, &cap_id, &cap_name, cap_rect);  // a PNG export
  attnviz_js_sync_canvas(sz, capturing ? cap_scale : 1.0f);
  if (!ShouldDraw(L, sz) && !capturing) {
    L.app.PackAhead();  // a skipped frame's time: heads packed ahead of need
    return;
  }
  if (L.app.SetDpiScale(sz[2] / sz[0])) {
    ImGui_ImplOpenGL3_DestroyFontsTexture();
    ImGui_ImplOpenGL3_CreateFontsTexture();
  }
  glfwPollEvents();
  ImGui_ImplOpenGL3_NewFrame();
  ImGui_ImplGlfw_NewFrame();
  double cx = 0, cy = 0;
  glfwGetCursorPos(L.window, &cx, &cy);
  L.presses.BeginFrame(ImGui::GetIO(), cx, cy);
  PrepareInput(sz, &L.keys);
  if (capturing) ImGui::GetIO().MousePos = ImVec2(-FLT_MAX, -FLT_MAX);  // a figure: no hover highlight or tooltip
  ImGui::NewFrame();
  L.app.Frame();
  ImGui::Render();
  L.keys.EndFrame(ImGui::GetIO());
  L.presses.EndFrame([&L](int b) { ImGui_ImplGlfw_MouseButtonCallback(L.window, b, GLFW_PRESS, 0); });
  const ImGuiMouseCursor cursor = ImGui::GetMouseCursor();
  if (cursor != L.cursor) attnviz_js_set_cursor(CssCursor(L.cursor = cursor));
  // A frame that would look like the one on the canvas is not drawn again: without a draw call the
  // canvas keeps its image and the compositor has nothing to do (the settling frames after input, a
  // progress frame whose bar did not move). Module.attnvizDrawEveryFrame turns this off (benchmarks).
  const double t_fingerprint = emscripten_get_now();
  const uint64_t fingerprint = L.app.DrawFingerprint();
  const bool draw = capturing || fingerprint != L.drawn_fingerprint || attnviz_js_draw_every_frame();
  L.app.NoteFrameDrawn(draw, (float)(emscripten_get_now() - t_fingerprint));
  if (draw) {
    glViewport(0, 0, (int)sz[2], (int)sz[3]);
    attnviz::ClearFrameBackground();
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
    L.drawn_fingerprint = capturing ? 0 : fingerprint;  // a capture draws at another scale
  }
  // The figure's box as this frame drew it (a view may lay a figure out otherwise than on screen).
  if (capturing && L.app.PeekCapture(&cap_scale, &cap_id, &cap_name, cap_rect))
    attnviz::CaptureWebFrame(L.app, sz, cap_id, cap_name, cap_rect);
  if (++L.frame == 2) attnviz_js_first_frame();
  HandOver(L);
}

}  // namespace

namespace attnviz {
App* WebApp() {
  return g_loop && !g_loop->stopped ? &g_loop->app : nullptr;
}
}  // namespace attnviz

// viewer.destroy(): stops the loop and frees the app, ImGui, GL objects and GLFW's listeners.
extern "C" EMSCRIPTEN_KEEPALIVE void attnviz_destroy() {
  if (!g_loop || g_loop->stopped) return;
  g_loop->stopped = true;
  emscripten_cancel_main_loop();
  g_loop->app.Shutdown();
  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  glfwDestroyWindow(g_loop->window);
  glfwTerminate();
}

// The page's paste event (attnviz-embed.js): the text Ctrl+V then pastes. Emscripten 3.1.6's
// glfwGetClipboardString / glfwSetClipboardString do nothing, so imgui's copy and paste did nothing in
// the browser: a sentence copied from a paper could not be pasted into Translate.
extern "C" EMSCRIPTEN_KEEPALIVE void attnviz_set_clipboard(const char* text) {
  if (g_loop && text) g_loop->clipboard = text;
}

static const char* GetClipboard(void*) {
  return g_loop ? g_loop->clipboard.c_str() : "";
}

static void SetClipboard(void*, const char* text) {
  if (!g_loop || !text) return;
  g_loop->clipboard = text;
  attnviz_js_copy_text(text);
}

extern "C" EMSCRIPTEN_KEEPALIVE void attnviz_train_deliver(const char* report, const uint8_t* model, int size) {
  if (WorkerRunner::live && report) WorkerRunner::live->Deliver(report, std::strlen(report), model, (size_t)size);
}

extern "C" EMSCRIPTEN_KEEPALIVE void attnviz_train_failed(const char* message) {
  if (WorkerRunner::live) WorkerRunner::live->Fail(message ? message : "the training worker failed");
}

static void LatchedKey(GLFWwindow* window, int key, int scancode, int action, int mods) {
  ImGui_ImplGlfw_KeyCallback(window, key, scancode, action, mods);
  if (g_loop) g_loop->keys.OnKey(ImGui::GetIO(), key, action);
}

static void SettledButton(GLFWwindow* window, int button, int action, int mods) {
  double x = 0, y = 0;
  glfwGetCursorPos(window, &x, &y);
  if (g_loop && g_loop->presses.OnButton(button, action, x, y)) return;  // handed over after the frame
  ImGui_ImplGlfw_MouseButtonCallback(window, button, action, mods);
}

static void LatchedChar(GLFWwindow*, unsigned int c) {
  if (g_loop) g_loop->keys.OnChar(ImGui::GetIO(), c);
}

// The wheel in GLFW's units (see attnviz_js_wheel_scale), handed on to ImGui's GLFW backend.
static void WheelToNotches(GLFWwindow* window, double dx, double dy) {
  const double k = attnviz_js_wheel_scale();
  ImGui_ImplGlfw_ScrollCallback(window, dx * k, dy * k);
}

int main() {
  if (!glfwInit()) {
    attnviz_js_fatal("cannot initialise GLFW");
    return 1;
  }
  glfwWindowHint(GLFW_CLIENT_API, GLFW_OPENGL_ES_API);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 0);
  float sz[4];
  attnviz_js_sync_canvas(sz, 1.0f);
  g_loop = new WebLoop;
  g_loop->window = glfwCreateWindow((int)sz[2], (int)sz[3], "attnviz", nullptr, nullptr);
  if (!g_loop->window) {
    attnviz_js_fatal("cannot create a WebGL2 context");
    return 1;
  }
  glfwMakeContextCurrent(g_loop->window);
  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGui_ImplGlfw_InitForOpenGL(g_loop->window, true);
  glfwSetScrollCallback(g_loop->window, WheelToNotches);      // replaces ImGui's, which it then calls
  glfwSetKeyCallback(g_loop->window, LatchedKey);             // likewise
  glfwSetCharCallback(g_loop->window, LatchedChar);           // typed characters keep their order (KeyLatch)
  glfwSetMouseButtonCallback(g_loop->window, SettledButton);  // a tap hovers first (PressAfterMove)
  ImGui::GetIO().GetClipboardTextFn = GetClipboard;           // replaces the backend's (see attnviz_set_clipboard)
  ImGui::GetIO().SetClipboardTextFn = SetClipboard;
  ImGui_ImplOpenGL3_Init("#version 300 es");

  attnviz::AppConfig config;
  char* opts = attnviz_js_options();
  std::string o(opts);
  std::free(opts);
  const size_t a = o.find('\n'), b = o.find('\n', a + 1);
  config.example = o.substr(0, a);
  config.view = o.substr(a + 1, b - a - 1);
  const size_t c = o.find('\n', b + 1);
  config.embed = o.substr(b + 1, c - b - 1) == "1";
  const size_t d = c == std::string::npos ? c : o.find('\n', c + 1);
  const std::string views = c == std::string::npos ? "" : o.substr(c + 1, d == std::string::npos ? d : d - c - 1);
  for (size_t p = 0; p < views.size();) {  // views: comma-separated names
    const size_t q = std::min(views.find(',', p), views.size());
    if (q > p) config.views.push_back(views.substr(p, q - p));
    p = q + 1;
  }
  const size_t e = d == std::string::npos ? d : o.find('\n', d + 1);
  if (d != std::string::npos) config.theme = o.substr(d + 1, e == std::string::npos ? e : e - d - 1);
  if (e != std::string::npos) config.controls = o.substr(e + 1) != "0";
  config.dpi_scale = sz[2] / sz[0];
  config.train_runner = [] { return std::unique_ptr<attnviz::TrainRunner>(new WorkerRunner); };
  config.labels = g_loop->labels.get();
  config.page_exports = true;  // GIF and WebM are encoded by attnviz-embed.js
  const attnviz::Status st = g_loop->app.Init(config);
  if (!st) {
    attnviz_js_fatal(st.message.c_str());
    return 1;
  }
  emscripten_set_main_loop(Frame, 0, false);
  return 0;
}
