// attnviz app: the application state and the one function that does a frame's work.
//
//   AppConfig   what the platform layer tells the app at start (embed options, DPI)
//   App         owns the state; Init() once a GL context and an ImGui context exist,
//               Frame() between ImGui::NewFrame() and ImGui::Render(), Shutdown() at exit
//
// The platform files (src/platform/) own the windows and the main loops; they call
// App::Frame() and nothing here knows whether it runs natively or in a browser.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "app/train_runner.h"
#include "core/status.h"

namespace attnviz {

struct AppState;
struct AttentionDocument;
class ByteSource;
class LabelRasterizer;

struct AppConfig {
  std::string example;             // id of the example to open first ("" = the translation figure)
  std::string view;                // view to open first: a registry name (heatmap, lines, grid, ...)
  bool embed = false;              // embedded in a lesson page: no menu bar, a compact toolbar
  std::vector<std::string> views;  // the views this viewer offers, in tab order (empty: all); one view: no tab bar
  float dpi_scale = 1.0f;          // framebuffer pixels per UI pixel (devicePixelRatio on the web)
  bool controls = true;            // false: a bare figure (no tabs, toolbars, timeline or status bar)
  std::string theme;               // "light" or "dark" ("" = dark)
  bool headless = false;           // no GL: views run and lay out, nothing is uploaded or drawn (smoke tests)
  // Makes the runner for live training: a thread natively, a Web Worker in the browser; empty =
  // training in the UI's frames (app/train_runner.h).
  std::function<std::unique_ptr<TrainRunner>()> train_runner;

  LabelRasterizer* labels = nullptr;  // the platform's label back end (owned by it); null: the UI font only
  bool page_exports = false;          // the page encodes GIF and WebM (web build; app_export.h)
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
  void ShowNote(const std::string& message);   // news from the platform (e.g. "saved clip.gif") in the status bar
  // A file read in pieces while frames keep coming (the browser): a progress window with a Cancel
  // button shows until FinishLoad. FeedLoad fails with the reader's message, or "cancelled: ...".
  Status BeginLoad(const std::string& name, uint64_t total_bytes);
  Status FeedLoad(const unsigned char* data, size_t size);
  Status FinishLoad();
  Status ProgressLoad(uint64_t received);  // the browser's load worker read this much (app_files.h)
  Status HandOverLoad(uint64_t total);
  size_t LoadRoom(uint8_t** dst);  // a handover's next matrix bytes go here (0: FeedLoad them)
  Status AdvanceLoad(size_t n);    // after copying n bytes there (then FeedLoad, FinishLoad hand the document over)
  void AbortLoad(const std::string& message);  // the reading failed (network, file): the message shows
  // A file read elsewhere (the native loader thread): its progress in the same window, and the
  // document once read (sets moved). LoadCancelRequested: the user pressed Cancel.
  void ShowLoadProgress(const std::string& name, uint64_t received, uint64_t total);  // total 0: hide it
  bool LoadCancelRequested() const;
  // Between frames: decodes and installs lazily read heads for about budget_ms (the browser calls it
  // when a read ends, so a head is in memory without waiting for slow frames). True while busy.
  bool WorkLazy(double budget_ms);
  Status OpenDocument(const std::string& name, AttentionDocument* doc);
  // A safetensors file read lazily, head by head (docs/FORMATS.md): from a synchronous source (mmap)
  // prefix may be null; an asynchronous one (the browser's reads) comes with the file's header.
  Status OpenLazy(const std::string& name, std::unique_ptr<ByteSource> source, const uint8_t* prefix = nullptr,
                  size_t n = 0);
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
  // The shown view's background work for up to ms between frames; true if it did some (a frame shows
  // it). Then, in what is left of the ms, lazily read F16/BF16 files pack undrawn heads ahead of need
  // (PackAheadLazyMaps): *background_left says that is unfinished (no frame needed for it).
  bool Idle(double ms, bool* background_left = nullptr);
  bool PackAhead();  // only the packing ahead, LazyPackAheadMs at most (a frame the page skips); true if unfinished
  bool NeedsFrames() const;  // something animates (playback, training): keep drawing even without input
  // Events for the embed API, oldest first: "step" {"step": k} when the timeline's step changes,
  // "hover" {"row": r, "col": c} (or -1s) when the hovered cell of the view's heatmap changes.
  bool PopEvent(std::string* type, std::string* json);
  // PNG export (app_export.h): a frame the platform should draw at `scale` x its usual resolution
  // and read back, cropped to view_rect (UI px); then PopCapture. RequestCapture: the embed API's.
  bool PeekCapture(float* scale, int* id, std::string* name, float view_rect[4]) const;
  void PopCapture(bool ok, const std::string& error);  // done (ok) or failed (error shown for UI requests)
  Status RequestCapture(float scale, int id);          // scale 1..4; id != 0 names the caller
  // After ImGui::Render(): a fingerprint of what the frame draws (ImGui's draw data, the heatmaps'
  // parameters and texture versions, the label textures made so far). Equal to the last drawn
  // frame's: it would look the same, and the web build does not draw it again (SwiftShader spends
  // 60-100 ms of a core on each frame, which the page's reads then wait for; docs/PERFORMANCE.md).
  uint64_t DrawFingerprint() const;
  // The platform drew this frame, or kept the last one; the fingerprint took ms (describe()).
  void NoteFrameDrawn(bool drawn, float fingerprint_ms);

 private:
  std::unique_ptr<AppState> s_;
  std::string describe_json_;  // reused by DescribeJson()
};

}  // namespace attnviz
