// attnviz app: figure exports that need the platform: a PNG of the current view (the platform
// renders one frame at 1x-4x and reads it back), and the animation as GIF or WebM (the page
// encodes them: npm's gifenc, the browser's MediaRecorder).
//
//   CaptureRequest     one frame to read back: scale, who asked (0 = the UI: save a file) and a name
//   ExportState        the pending captures and where the view was drawn (what a PNG shows)
//   QueueCapture       save-png [SCALE], the File menu, Ctrl+Shift+S, viewer.exportPng()
//   RunExportCommand   save-png, save-gif, save-webm
//   DrawExportMenu     File menu items
// App::PeekCapture / App::PopCapture / App::RequestCapture (app.h) are defined in app_export.cpp.
#pragma once
#include <string>
#include <vector>

#include "core/status.h"

namespace attnviz {

struct AppState;
struct CommandArgs;

struct CaptureRequest {
  float scale = 1.0f;  // framebuffer pixels per device pixel of the normal frame, 1..4
  int id = 0;          // 0: from the UI (the platform saves a file); else the embed API's request
  std::string name;    // file name for id 0, e.g. "attnviz-translation.png"
};

struct ExportState {
  std::vector<CaptureRequest> captures;  // oldest first; at most 16 pending
  float view_rect[4] = {0, 0, 0, 0};     // x0, y0, x1, y1 (UI px) a PNG shows: the view's area, or its heatmaps
  float figure_rect[4] = {0, 0, 0, 0};   // the box of the heatmaps drawn this frame (HeatmapEnv::figure_rect)
  // This frame is the one a PNG reads back (a capture was waiting when it began): views draw it as a
  // figure (the Grid fits every head in, unscrolled; no selection outline). The platform reads
  // view_rect after the frame.
  bool capture_frame = false;
};

constexpr float kMaxExportScale = 4.0f;

Status QueueCapture(AppState* s, float scale, int id);  // scale in [1, 4]; the name comes from the example
// Records the area the active view is about to draw in (call where the view's Draw starts), and
// empties the heatmaps' box; FinishViewRect (after Draw) crops to that box when the view exports
// its heatmaps only (ViewModule::ExportsFigureOnly) and drew some.
void RecordViewRect(AppState* s);
void FinishViewRect(AppState* s);
// save-png [SCALE], save-gif [STEP_MS], save-webm [STEP_MS]: true if c was one of them (*result set).
bool RunExportCommand(AppState* s, const CommandArgs& c, Status* result);
std::string ExportCommandUsage();   // one line per command
void DrawExportMenu(AppState* s);   // File menu items (PNG at 1x/2x/4x; GIF and WebM in the browser)
void ExportShortcuts(AppState* s);  // Ctrl+Shift+S: PNG at 2x

}  // namespace attnviz
