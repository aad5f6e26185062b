// attnviz app: the application state and the one function that does a frame's work.
//
//   AppConfig   what the platform layer tells the app at start (embed options, DPI)
//   App         owns the state; Init() once a GL context and an ImGui context exist,
//               Frame() between ImGui::NewFrame() and ImGui::Render(), Shutdown() at exit
//
// The platform files (src/platform/) own the windows and the main loops; they call
// App::Frame() and nothing here knows whether it runs natively or in a browser.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"

namespace attnviz {

struct AppState;

struct AppConfig {
  std::string example;             // id of the example to open first ("" = the translation figure)
  std::string view;                // view to open first: a registry name (heatmap, lines, grid, ...)
  bool embed = false;              // embedded in a lesson page: no menu bar, a compact toolbar
  std::vector<std::string> views;  // the views this viewer offers, in tab order (empty: all); one view: no tab bar
  float dpi_scale = 1.0f;          // framebuffer pixels per UI pixel (devicePixelRatio on the web)
  bool controls = true;            // false: a bare figure (no tabs, toolbars, timeline or status bar)
  std::string theme;               // "light" or "dark" ("" = dark)
  bool headless = false;           // no GL: views run and lay out, nothing is uploaded or drawn (smoke tests)
  bool page_exports = false;       // the page encodes GIF and WebM (web build; app_export.h)
};

class App {
 public:
  App();
  ~App();
  Status Init(const AppConfig& config);  // GL objects, fonts, examples, views; the error says what failed
  void Frame();                          // one frame: every window and view
  void Shutdown();                       // frees GL objects
  // Fonts are rasterised at the DPI scale so text stays crisp on HiDPI screens. When this returns
  // true the platform must re-create the font texture (ImGui_ImplOpenGL3_CreateFontsTexture).
  bool SetDpiScale(float dpi_scale);
  // A file the user dropped or opened (attention JSON/NPZ, BertViz data). Errors are shown in the
  // status bar; OpenFile also returns them.
  void OpenFileBytes(const std::string& name, const unsigned char* data, size_t size);
  Status OpenFile(const std::string& name, const unsigned char* data, size_t size);
  void ShowError(const std::string& message);  // a platform error (e.g. an unreadable file) in the status bar
  // Machine-readable description of what is on screen, for browser tests and the embed API (JSON).
  const std::string& DescribeJson();
  // Runs a command from the embed API or a test: "example seed002", "view lines", "step 3", ...
  // (app_commands.cpp lists them). The error says what was wrong with the command or what failed.
  Status Command(const std::string& command);
  float LastFrameCpuMs() const;  // CPU time of the last App::Frame(), for the readout
  // A file the user asked to save (SVG, JSON); the platform writes it or starts a download.
  bool PopDownload(std::string* name, std::string* mime, std::vector<unsigned char>* bytes);
  bool PopOpenDialogRequest();
  bool PopOpenUrlRequest(std::string* url);
  // Files the app needs fetched (the web build's model files, "models/<file>"), and their arrival.
  bool PopFetchRequest(std::string* url);
  void DeliverFetch(const std::string& url, const unsigned char* data, size_t size,
                    const std::string& error);  // a page the user asked for (relative to the app's folder)
  bool NeedsFrames() const;  // something animates (playback, training): keep drawing even without input
  // Events for the embed API, oldest first: "step" {"step": k} when the timeline's step changes,
  // "hover" {"row": r, "col": c} (or -1s) when the hovered cell of the view's heatmap changes.
  bool PopEvent(std::string* type, std::string* json);
  // PNG export (app_export.h): a frame the platform should draw at `scale` x its usual resolution
  // and read back, cropped to view_rect (UI px); then PopCapture. RequestCapture: the embed API's.
  bool PeekCapture(float* scale, int* id, std::string* name, float view_rect[4]) const;
  void PopCapture(bool ok, const std::string& error);  // done (ok) or failed (error shown for UI requests)
  Status RequestCapture(float scale,
                        int id);  // scale 1..4; id != 0 names the caller  // true once after the user chose File > Open

 private:
  std::unique_ptr<AppState> s_;
  std::string describe_json_;  // reused by DescribeJson()
};

}  // namespace attnviz
