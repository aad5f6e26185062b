// attnviz app: AppState, the one struct every view reads and writes (imgui habit: state lives
// in one struct handed around, not in loose globals). Each view's own state is its module
// object in `views` (view_module.h); what several views share lives here.
#pragma once
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "app/app.h"
#include "app/app_export.h"
#include "app/app_files.h"
#include "app/examples.h"
#include "app/heatmap_widget.h"
#include "app/model_library.h"
#include "app/timeline.h"
#include "app/token_filter.h"
#include "app/view_module.h"
#include "imgui.h"
#include "render/label_cache.h"

namespace attnviz {

struct PendingDownload {
  std::string name;                  // suggested file name
  std::string mime;                  // e.g. image/svg+xml
  std::vector<unsigned char> bytes;  // contents
};

struct FrameStats {
  float cpu_ms = 0;      // last App::Frame() CPU time (training slice excluded)
  float train_ms = 0;    // CPU time of this frame's training slice
  float cpu_ms_avg = 0;  // mean of the last 120 frames
  // Parts of the last frame (describe()'s "frame_parts"): lazily read files' decoding and installing
  // before the views, their requests after, texture uploads (time and count) within the views.
  float pump_ms = 0, request_ms = 0, upload_ms = 0;
  float upload_max_ms = 0;              // of upload_ms: the longest single upload
  float decode_ms = 0, install_ms = 0;  // of pump_ms: reading and decoding; installing what arrived
  int uploads = 0;
  float fingerprint_ms = 0;  // the last App::DrawFingerprint (measured by the platform)
  long kept = 0;             // frames not drawn again: they looked like the last drawn one
  float ring[120] = {};      // recent App::Frame() CPU times
  int count = 0;             // frames recorded so far
  void Record(float ms);     // adds a frame and updates the mean
  // The median and the longest of the recent frames' CPU times (0 before the first): the status bar's
  // readout, which a few long frames (a file read, a texture upload) move only in its maximum.
  void Recent(float* median, float* longest) const;
  // The status bar's readout, refreshed twice a second: a number that changed every frame would make
  // every frame look new (App::DrawFingerprint), and nobody reads it at 60 Hz. While the shown head of
  // a lazily read file is still being read, once in 2 s: each frame drawn then costs a software
  // renderer ~40 ms of the cores the reads wait for (stop 59: paced head switches).
  float shown_cpu_ms = 0, shown_cpu_max_ms = 0, shown_train_ms = 0, shown_fps = 0;
  // Two clocks, on purpose: BeginFrame paces refreshes by ImGui's time (the frame's own clock, which
  // the tests step), and LazyReadoutDue, asked between frames, reads steady_clock, because an idle
  // page runs no frames to advance ImGui's (refresh_asked carries its answer into the next frame).
  double shown_at = -1;  // ImGui::GetTime() of the last refresh
  bool refresh = true;   // this frame refreshes the readouts: the status bar's, the sidebar's cache figures
  std::chrono::steady_clock::time_point refreshed_at{};  // when they last did (LazyReadoutDue)
  bool refresh_asked = false;  // LazyReadoutDue asked for a frame to refresh them: the next one does
  static double RefreshEvery(bool waiting) { return waiting ? 2.0 : 0.5; }  // seconds
  void BeginFrame(double now, bool waiting);                                // decides refresh
};

struct AppEvent {
  std::string type;  // "step", "hover"
  std::string json;  // its data, a JSON object
};

struct AppState {
  AppConfig config;
  HeatmapRenderer renderer;
  std::vector<HeatmapCallbackData> draw_pool;             // reserved once in Init
  int draw_batch_first = -1;                              // HeatmapEnv::batch_first
  HeatmapEnv env;                                         // renderer + pool, handed to every heatmap widget
  int64_t upload_budget = 0;                              // texture bytes still to upload this frame (HeatmapEnv)
  std::chrono::steady_clock::time_point upload_deadline;  // and until when (HeatmapEnv)
  UploadSpeed upload_speed;                               // how fast uploads have gone (HeatmapEnv)
  LabelCache labels;                                      // token labels the UI font cannot draw, as textures
  bool show_markers = true;                               // tokenizer markers as dim marks (the "markers" command)

  std::vector<Example> examples;  // built-in and opened files
  int current = 0;                // index into examples
  int current_map = 0;            // layer * heads + head shown in the single-map views
  HeatmapStyle style;             // colormap, scale, range, numbers: the sidebar's choices
  int sidebar = -1;               // View > Sidebar: -1 auto (shown from 720 px wide), 0 hidden, 1 shown
  Timeline timeline;              // decoding / frames animation shared by the heatmap and lines views
  TokenFilter filter;             // tokens hidden from opened files' maps (not from examples with inputs)
  ModelLibrary models;            // translation models: pretrained and trained in this session

  std::vector<std::unique_ptr<ViewModule>> views;  // one per registry row (view_module.h), same order
  int view = 0;                                    // index of the view shown
  int tab_view = -1;                               // the view the tab bar shows (differs for one frame after a switch)
  struct TabRect {
    int view;
    ImVec2 lo, hi;
  };
  std::vector<TabRect> tab_rects;  // the view tabs drawn last frame (describe().tabs)
  std::vector<int> offered;        // the views this viewer offers (registry indices, tab order; AppConfig::views)

  std::string message;            // last error or notice, shown in the status bar
  bool message_is_error = false;  // message is an error (red)
  double message_time = 0;        // ImGui time when it was set
  FrameStats frame;               // CPU time readout
  float dpi_scale = 1.0f;
  bool light_theme = false;  // the light ImGui theme (AppConfig::theme, the "theme" command)                  //
                             // framebuffer pixels per UI pixel
  bool show_help = false;    // the help window is open
  std::vector<PendingDownload> downloads;  // files the platform should save (SVG, JSON)
  std::vector<AppEvent> events;            // for the embed API (App::PopEvent), at most 64 kept
  int last_step = -1;                      // timeline step at the end of the last frame
  int last_hover[2] = {-1, -1};            // hovered cell at the end of the last frame
  std::string open_url_request;            // a page the platform should open (Help > Tutorial)
  bool open_dialog_requested = false;      // the platform should show a file picker
  FileLoad load;                           // a file being read in pieces (progress, cancel)
  ExportState exports;                     // PNG captures waiting for the platform, the view's area

  Example& Current() { return examples[(size_t)current]; }  // the example shown
  const AttentionMap& CurrentMap();                         // its map current_map (clamped)
  // The map the active view colours with the sidebar's settings (ViewModule::ShownMap, else
  // CurrentMap), its style resolved for it (ResolveStyle), and a name for titles and file names.
  const AttentionMap& ColouredMap(HeatmapStyle* resolved, std::string* name = nullptr);
  // The sidebar is drawn in a viewer this wide: never in an embed, and by default not below 720 px
  // (a phone), where it left the view too little room.
  bool SidebarShown(float width) const { return !config.embed && (sidebar < 0 ? width >= 720.0f : sidebar == 1); }
  // The timeline the active view shows: its own (ViewModule::OwnTimeline), else the example's.
  Timeline& ShownTimeline();
  ViewModule& ActiveView() { return *views[(size_t)view]; }  // the module of the view shown
  const ViewModule& ActiveView() const { return *views[(size_t)view]; }
  void Notify(const std::string& text, bool error);  // status bar message
  void Emit(const char* type, std::string json);     // an event for the page (at most 64 kept)
  void ReleaseTextures(HeatmapViewState* v);         // frees a widget's GPU copies (no-op headless)
};

// Switches to example `index`, building it first if it is lazy; every view forgets its
// per-example state. On failure the current example stays and the error is returned.
Status SelectExample(AppState* s, int index);
// Applies s->filter to the current example again (after the user changed it) and refreshes the views.
Status RefilterCurrent(AppState* s);
Status SelectExampleById(AppState* s, const std::string& id);  // same, by Example::id
Status SelectView(AppState* s, const std::string& name);       // by registry name ("grid"), if offered
bool IsOffered(const AppState* s, int view);                   // the viewer shows this view's tab

}  // namespace attnviz
