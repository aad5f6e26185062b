// attnviz app: AppState, the one struct every view reads and writes (imgui habit:
// state lives in one struct handed around, not in loose globals).
#pragma once
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "app/app.h"
#include "app/examples.h"
#include "app/model_panels.h"
#include "app/heatmap_widget.h"
#include "app/timeline.h"

namespace attnviz {

enum class View { Heatmap, Lines, Grid, Steps, Compare, Translate, Train, Count };
const char* ViewName(View v);                   // "heatmap", "lines", ...
bool ParseView(const std::string& s, View* out);  // inverse of ViewName

struct PendingDownload {
  std::string name;                // suggested file name
  std::string mime;                // e.g. image/svg+xml
  std::vector<unsigned char> bytes;  // contents
};

struct AppState {
  AppConfig config;
  HeatmapRenderer renderer;
  std::vector<HeatmapCallbackData> draw_pool;  // reserved once in Init
  HeatmapEnv env;

  std::vector<Example> examples;  // built-in and opened files
  int current = 0;                // index into examples
  int current_map = 0;            // layer * heads + head shown in the single-map views
  View view = View::Heatmap;
  View tab_view = View::Count;    // the view the tab bar shows (differs for one frame after a switch)

  HeatmapStyle style;
  HeatmapViewState main_view;                // the big heatmap
  std::vector<HeatmapViewState> thumbs;      // grid thumbnails, one per map
  HeatmapViewState compare_views[3];         // left, right, difference

  Timeline timeline;                         // decoding / frames animation
  std::unique_ptr<ModelPanels> models;       // Translate and Train tabs
  std::string message;                       // last error or notice, shown in the status bar
  bool message_is_error = false;
  double message_time = 0;
  float frame_cpu_ms = 0;                    // last App::Frame() CPU time (training slice excluded)
  float train_ms = 0;                        // CPU time of this frame's training slice
  float frame_cpu_ms_avg = 0;                // mean of the last 120 frames
  float frame_cpu_ring[120] = {};            // recent App::Frame() CPU times
  int frame_cpu_count = 0;                   // frames recorded so far
  float dpi_scale = 1.0f;
  bool show_help = false;
  std::string describe_json;                 // reused buffer for DescribeJson()
  std::vector<PendingDownload> downloads;    // files the platform should save (SVG, JSON)
  bool open_dialog_requested = false;        // the platform should show a file picker

  Example& Current() { return examples[current]; }
  const AttentionMap& CurrentMap() {
    Example& ex = Current();
    return ex.maps[std::min<int>(current_map, (int)ex.maps.size() - 1)];
  }
  void Notify(const std::string& text, bool error);  // status bar message
};

// Views (one file each). Each draws into the current ImGui window's remaining space.
void DrawHeatmapView(AppState* s);
void DrawLinesView(AppState* s);
void DrawGridView(AppState* s);
void DrawStepsView(AppState* s);
void DrawCompareView(AppState* s);
void SelectExample(AppState* s, int index);  // switches example and resets views/timeline

// app_commands.cpp: files, commands and the machine-readable state.
void OpenAttentionFile(AppState* s, const std::string& name, const unsigned char* data, size_t size);
std::string RunCommand(AppState* s, const std::string& command);  // "" on success, else the error
void DescribeState(AppState* s, std::string* out);                 // JSON for tests and the embed API
void QueueSvgDownload(AppState* s);   // the current map as a standalone SVG heatmap
void QueueJsonDownload(AppState* s);  // the current example as an attnviz attention JSON file

}  // namespace attnviz
