// attnviz app: PNG/GIF/WebM exports that need the platform (app_export.h).
#include "app/app_export.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "app/app.h"
#include "app/app_files.h"
#include "app/app_state.h"
#include "imgui.h"
#include "io/json.h"

namespace attnviz {
namespace {

// "attnviz-<example's stem>", then what the view shows of it (ViewModule::FigureSuffix: the heatmap's
// head, the lines' head or layer), so that each head's figure has a name of its own. ExportStem: safe
// on every file system.
std::string FigureStem(const AppState* s) {
  return "attnviz-" + ExportStem(s->examples[(size_t)s->current].id) + s->ActiveView().FigureSuffix(s);
}

// "attnviz-<figure's stem>@2x.png".
std::string CaptureName(const AppState* s, float scale) {
  char tail[32];
  std::snprintf(tail, sizeof tail, "@%gx.png", scale);
  return FigureStem(s) + tail;
}

// GIF and WebM are encoded by the page: the app asks it with an "export" event
// {"format": "gif"|"webm", "stepMs": N, "name": the download's file name}, which attnviz-embed.js answers by recording
// the steps.
Status RequestAnimationExport(AppState* s, const char* format, int step_ms) {
  if (!s->config.page_exports)
    return Status::Error(std::string("save-") + format +
                         ": the animation is encoded by the browser page; natively, use attnviz-cli render FILE "
                         "--out fig.gif");
  if (step_ms < 20 || step_ms > 60000) return Status::Error("the step time must be 20..60000 ms");
  s->Emit("export", std::string("{\"format\":\"") + format + "\",\"stepMs\":" + std::to_string(step_ms) +
                        ",\"name\":" + JsonEscape(FigureStem(s) + "." + format) + "}");
  s->Notify(std::string("recording the animation as ") + format + "...", false);
  return Status::Ok();
}

}  // namespace

Status QueueCapture(AppState* s, float scale, int id) {
  if (!(scale >= 1.0f && scale <= kMaxExportScale)) return Status::Error("the PNG scale must be between 1 and 4");
  if (s->config.headless) return Status::Error("save-png: nothing is drawn in a headless app");
  if (s->exports.captures.size() >= 16) return Status::Error("save-png: 16 captures are already waiting");
  s->exports.captures.push_back({scale, id, CaptureName(s, scale)});
  return Status::Ok();
}

void RecordViewRect(AppState* s) {
  const ImVec2 p = ImGui::GetCursorScreenPos(), avail = ImGui::GetContentRegionAvail();
  float* r = s->exports.view_rect;
  r[0] = p.x, r[1] = p.y, r[2] = p.x + std::max(1.0f, avail.x), r[3] = p.y + std::max(1.0f, avail.y);
  for (float& v : s->exports.figure_rect) v = 0.0f;
}

void FinishViewRect(AppState* s) {
  const float* f = s->exports.figure_rect;
  float* r = s->exports.view_rect;
  if (!s->ActiveView().ExportsFigureOnly() || !(f[2] > f[0] && f[3] > f[1])) return;
  const float box[4] = {std::max(r[0], f[0]), std::max(r[1], f[1]), std::min(r[2], f[2]), std::min(r[3], f[3])};
  if (box[2] - box[0] >= 1.0f && box[3] - box[1] >= 1.0f)
    for (int i = 0; i < 4; ++i) r[i] = box[i];
}

bool RunExportCommand(AppState* s, const CommandArgs& c, Status* result) {
  if (c.verb == "save-png") {
    float scale = 1.0f;
    if (!c.Word(0).empty() && !c.Float(0, &scale)) return *result = Status::Error("save-png needs a scale 1..4"), true;
    *result = QueueCapture(s, scale, 0);
    return true;
  }
  if (c.verb == "save-gif" || c.verb == "save-webm") {
    int step_ms = 700;
    if (!c.Word(0).empty() && !c.Int(0, &step_ms))
      return *result = Status::Error(c.verb + " needs a step time in ms"), true;
    *result = RequestAnimationExport(s, c.verb == "save-gif" ? "gif" : "webm", step_ms);
    return true;
  }
  return false;
}

std::string ExportCommandUsage() {
  return "save-png [SCALE 1..4]\nsave-gif [STEP_MS]\nsave-webm [STEP_MS]\n";
}

void DrawExportMenu(AppState* s) {
  for (int k : {1, 2, 4}) {
    char label[48];
    std::snprintf(label, sizeof label, "Save view as PNG (%dx)", k);
    if (ImGui::MenuItem(label, k == 2 ? "Ctrl+Shift+S" : nullptr)) {
      const Status st = QueueCapture(s, (float)k, 0);
      if (!st) s->Notify(st.message, true);
    }
  }
  if (ImGui::MenuItem("Save animation as GIF", nullptr, false, s->config.page_exports)) {
    const Status st = RequestAnimationExport(s, "gif", 700);
    if (!st) s->Notify(st.message, true);
  }
  if (ImGui::MenuItem("Save animation as WebM", nullptr, false, s->config.page_exports)) {
    const Status st = RequestAnimationExport(s, "webm", 700);
    if (!st) s->Notify(st.message, true);
  }
}

void ExportShortcuts(AppState* s) {
  const ImGuiIO& io = ImGui::GetIO();
  if (io.KeyCtrl && io.KeyShift && ImGui::IsKeyPressed('S', false)) {
    const Status st = QueueCapture(s, 2.0f, 0);
    if (!st) s->Notify(st.message, true);
  }
}

bool App::PeekCapture(float* scale, int* id, std::string* name, float view_rect[4]) const {
  if (s_->exports.captures.empty()) return false;
  const CaptureRequest& r = s_->exports.captures.front();
  *scale = r.scale, *id = r.id, *name = r.name;
  for (int i = 0; i < 4; ++i) view_rect[i] = s_->exports.view_rect[i];
  return true;
}

void App::PopCapture(bool ok, const std::string& error) {
  if (s_->exports.captures.empty()) return;
  const CaptureRequest r = s_->exports.captures.front();
  s_->exports.captures.erase(s_->exports.captures.begin());
  if (r.id != 0) return;  // the embed API's caller gets the image or the error
  if (ok)
    s_->Notify("saved " + r.name, false);
  else
    s_->Notify("PNG export failed: " + error, true);
}

Status App::RequestCapture(float scale, int id) {
  return QueueCapture(s_.get(), scale, id);
}

}  // namespace attnviz
