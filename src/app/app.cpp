#include "app/app.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "app/app_chrome.h"
#include "app/app_commands.h"
#include "app/app_files.h"
#include "app/app_state.h"
#include "app/frame_fingerprint.h"
#include "app/lazy_maps.h"
#include "app/panel_fill.h"
#include "imgui.h"

namespace attnviz {
namespace {

// The view to open first: ?view= if given; else the heatmap for embeds and explicit examples,
// else the translation model the page opens on.
Status ChooseFirstView(AppState* s) {
  if (!s->config.view.empty()) return SelectView(s, s->config.view);
  const Status st = SelectView(s, s->config.embed || !s->config.example.empty() ? "heatmap" : "translate");
  if (!st) s->view = s->offered[0];  // that view is not offered: the first one that is
  return Status::Ok();
}

// AppConfig::views as registry indices (all views when none are named).
Status ChooseOfferedViews(AppState* s) {
  s->offered.clear();
  for (const std::string& name : s->config.views) {
    if (name.empty()) continue;
    const int i = FindView(name);
    if (i < 0) return Status::Error("unknown view '" + name + "' in the views option (" + ViewNames() + ")");
    if (!IsOffered(s, i)) s->offered.push_back(i);
  }
  if (s->offered.empty())
    for (int i = 0; i < ViewCount(); ++i) s->offered.push_back(i);
  return Status::Ok();
}

// The full-window host of the views: menu bar (not in embeds), sidebar, tabs, the active view.
void DrawMainWindow(AppState* s) {
  ImGuiIO& io = ImGui::GetIO();
  ImGui::SetNextWindowPos(ImVec2(0, 0));
  ImGui::SetNextWindowSize(io.DisplaySize);
  const ImGuiWindowFlags flags = ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                                 ImGuiWindowFlags_NoBringToFrontOnFocus | ImGuiWindowFlags_NoSavedSettings |
                                 ImGuiWindowFlags_NoBackground | (s->config.embed ? 0 : ImGuiWindowFlags_MenuBar);
  // The background is the platform's clear (ClearFrameBackground), the panels' are clears too
  // (panel_fill.h); children inside them draw none (the panel's colour is already under them).
  const ImU32 panel = ImGui::GetColorU32(ImGuiCol_ChildBg);
  ImGui::PushStyleColor(ImGuiCol_ChildBg, IM_COL32(0, 0, 0, 0));
  ImGui::Begin("attnviz", nullptr, flags);
  if (!s->config.embed) DrawMenuBar(s);
  const float status_h = s->config.controls ? ImGui::GetFrameHeightWithSpacing() + 4 : 0.0f;
  const float sidebar_w = s->SidebarShown(io.DisplaySize.x) ? std::min(300.0f, io.DisplaySize.x * 0.28f) : 0.0f;
  if (sidebar_w > 0) {
    BeginOpaquePanel("sidebar", ImVec2(sidebar_w, -status_h), true, panel);
    DrawSidebar(s);
    ImGui::EndChild();
    ImGui::SameLine();
  }
  BeginOpaquePanel("main", ImVec2(0, -status_h), false, panel);
  if (s->config.controls) DrawViewTabs(s);
  RecordViewRect(s);
  if (LazyWaiting(s) && !s->ActiveView().DrawsLazyMaps())
    ImGui::TextDisabled("reading %s from %s ...", s->CurrentMap().name.c_str(), s->Current().title.c_str());
  else
    s->ActiveView().Draw(s);
  FinishViewRect(s);
  ImGui::EndChild();
  if (s->config.controls) DrawStatusBar(s);
  ImGui::End();
  ImGui::PopStyleColor();
}

// "step" and "hover" events when they changed during this frame.
void QueueEvents(AppState* s) {
  const int step = s->ShownTimeline().Step();
  if (step != s->last_step) s->Emit("step", "{\"step\":" + std::to_string(step) + "}");
  s->last_step = step;
  int hover[2] = {-1, -1};
  if (!s->ActiveView().HoveredCell(&hover[0], &hover[1])) hover[0] = hover[1] = -1;
  if (hover[0] != s->last_hover[0] || hover[1] != s->last_hover[1])
    s->Emit("hover", "{\"row\":" + std::to_string(hover[0]) + ",\"col\":" + std::to_string(hover[1]) + "}");
  s->last_hover[0] = hover[0];
  s->last_hover[1] = hover[1];
}

}  // namespace

App::App() : s_(new AppState) {}
App::~App() = default;

Status App::Init(const AppConfig& config) {
  AppState* s = s_.get();
  s->config = config;
  ImGui::GetIO().IniFilename = nullptr;  // no imgui.ini next to the page or the binary
  s->light_theme = config.theme == "light";
  if (!config.theme.empty() && config.theme != "light" && config.theme != "dark")
    return Status::Error("unknown theme '" + config.theme + "' (light, dark)");
  ApplyStyle(s->light_theme);
  s->dpi_scale = std::max(0.5f, config.dpi_scale);
  BuildFonts(s->dpi_scale);
  if (!config.headless) {
    const Status st = s->renderer.Init();
    if (!st) return st;
  }
  s->draw_pool.reserve(1024);
  s->env.renderer = config.headless ? nullptr : &s->renderer;
  s->env.pool = &s->draw_pool;
  s->env.batch_first = &s->draw_batch_first;
  s->env.upload_budget = &s->upload_budget;
  s->env.upload_deadline = &s->upload_deadline;
  s->env.upload_ms = &s->frame.upload_ms;
  s->env.upload_max_ms = &s->frame.upload_max_ms;
  s->env.uploads = &s->frame.uploads;
  s->env.upload_speed = &s->upload_speed;
  s->env.figure_rect = s->exports.figure_rect;
  s->labels.Init(config.headless ? nullptr : config.labels);
  for (int i = 0; i < ViewCount(); ++i) s->views.push_back(ViewInfoAt(i).create());
  Status offered = ChooseOfferedViews(s);
  if (!offered) return offered;
  s->models.ListEmbedded();
  Status st = BuildExamples(&s->examples);
  if (!st) return st;
  if (s->examples.empty()) return Status::Error("no examples were built");
  st = SelectExampleById(s, config.example.empty() ? "translation" : config.example);
  if (!st) return st;
  return ChooseFirstView(s);
}

void App::Shutdown() {
  AppState* s = s_.get();
  for (auto& v : s->views) v->ReleaseTextures(s);
  s->labels.Shutdown();
  if (!s->config.headless) s->renderer.Shutdown();
}

bool App::SetDpiScale(float dpi_scale) {
  AppState* s = s_.get();
  dpi_scale = std::max(0.5f, dpi_scale);
  if (std::abs(dpi_scale - s->dpi_scale) < 1e-3f) return false;
  s->dpi_scale = dpi_scale;
  BuildFonts(dpi_scale);
  return true;
}

float App::LastFrameCpuMs() const {
  return s_->frame.cpu_ms;
}

uint64_t App::DrawFingerprint() const {
  // A label texture may reuse a freed texture's name: the count of labels made tells them apart.
  return FingerprintFrame(ImGui::GetDrawData(), s_->draw_pool, (uint64_t)s_->labels.Stats().rasterised);
}

void App::NoteFrameDrawn(bool drawn, float fingerprint_ms) {
  if (!drawn) s_->frame.kept++;
  s_->frame.fingerprint_ms = fingerprint_ms;
}

bool App::PopDownload(std::string* name, std::string* mime, std::vector<unsigned char>* bytes) {
  if (s_->downloads.empty()) return false;
  PendingDownload& d = s_->downloads.front();
  *name = std::move(d.name);
  *mime = std::move(d.mime);
  *bytes = std::move(d.bytes);
  s_->downloads.erase(s_->downloads.begin());
  return true;
}

bool App::PopOpenUrlRequest(std::string* url) {
  if (s_->open_url_request.empty()) return false;
  *url = std::move(s_->open_url_request);
  s_->open_url_request.clear();
  return true;
}

bool App::PopFetchRequest(std::string* url) {
  auto& q = s_->models.fetch_requests;
  if (q.empty()) return false;
  *url = std::move(q.front());
  q.erase(q.begin());
  return true;
}

void App::DeliverFetch(const std::string& url, const unsigned char* data, size_t size, const std::string& error) {
  if (!s_->models.Deliver(url, data, size, error)) s_->Notify("fetched " + url + ", which nothing asked for", true);
}

namespace {
std::chrono::steady_clock::time_point DeadlineIn(double ms) {  // at most 50 ms from now
  return std::chrono::steady_clock::now() + std::chrono::microseconds((int64_t)(std::min(ms, 50.0) * 1000));
}
}  // namespace

bool App::Idle(double ms, bool* background_left) {
  AppState* s = s_.get();
  if (background_left) *background_left = false;
  if (!(ms > 0) || s->load.active) return false;
  const auto deadline = DeadlineIn(ms);
  const bool worked = s->ActiveView().Idle(s, deadline);
  const bool left = PackAheadLazyMaps(s, deadline);
  if (background_left) *background_left = left;
  return worked;
}

bool App::PackAhead() {
  const double ms = LazyPackAheadMs();
  if (!(ms > 0)) return false;
  return PackAheadLazyMaps(s_.get(), DeadlineIn(ms));
}

bool App::NeedsFrames() const {
  const AppState* s = s_.get();
  if (s->timeline.playing || !s->downloads.empty() || s->labels.Pending() || !s->exports.captures.empty()) return true;
  for (const auto& v : s->views)
    if (v->Animating(s)) return true;
  return LazyWantsFrame(s_.get()) || LazyReadoutDue(s_.get());
}

bool App::PopEvent(std::string* type, std::string* json) {
  if (s_->events.empty()) return false;
  *type = std::move(s_->events.front().type);
  *json = std::move(s_->events.front().json);
  s_->events.erase(s_->events.begin());
  return true;
}

bool App::PopOpenDialogRequest() {
  const bool r = s_->open_dialog_requested;
  s_->open_dialog_requested = false;
  return r;
}

// One frame: input, the views' background work, the window, the help, the CPU time readout.
void App::Frame() {
  AppState* s = s_.get();
  const auto t0 = std::chrono::steady_clock::now();
  const float dt = ImGui::GetIO().DeltaTime;
  s->draw_pool.clear();
  s->draw_batch_first = -1;
  s->upload_budget = int64_t(16) << 20;  // ~16 MB of textures a frame; one bigger map still goes at once
  s->upload_speed.BeginFrame();
  if (s->env.renderer) s->renderer.BeginFrame();  // thumbnail layers used from now on are this frame's
  // A lazily read file's uploads stop 6 ms into the frame (its overviews stream in while the grid
  // scrolls); the grid sets its own (views/grid.cpp); other uploads have the byte budget only.
  s->upload_deadline =
      s->Current().lazy ? t0 + std::chrono::milliseconds(6) : std::chrono::steady_clock::time_point::max();
  s->frame.BeginFrame(ImGui::GetTime(), LazyCurrentBeingRead(s));
  s->frame.train_ms = 0;
  s->frame.upload_ms = 0;
  s->frame.upload_max_ms = 0;
  s->frame.decode_ms = 0;
  s->frame.install_ms = 0;
  s->frame.uploads = 0;
  s->exports.capture_frame = !s->exports.captures.empty();
  s->labels.BeginFrame(s->exports.capture_frame);  // a PNG's frame draws every label it shows
  s->env.labels.cache = s->labels.Available() ? &s->labels : nullptr;
  s->env.labels.dpi_scale = s->dpi_scale;
  s->env.labels.markers = s->show_markers;
  HandleShortcuts(s);
  PumpLazyMaps(s);  // lazily read heads: last frame's wants in, a few ms of reading
  const auto t_pump = std::chrono::steady_clock::now();
  s->timeline.Advance(dt);
  for (auto& v : s->views) v->Advance(s, dt);
  DrawMainWindow(s);
  const auto t_views = std::chrono::steady_clock::now();
  RequestLazyMaps(s);  // the heads and overviews the views drew: kept, or asked for now
  s->frame.pump_ms = std::chrono::duration<float, std::milli>(t_pump - t0).count();
  s->frame.request_ms = std::chrono::duration<float, std::milli>(std::chrono::steady_clock::now() - t_views).count();
  DrawLoadProgress(s);
  DrawHelpWindow(s);
  QueueEvents(s);
  const auto t1 = std::chrono::steady_clock::now();
  // The training slice is budgeted separately (Train view); the readout shows the UI's own cost.
  s->frame.Record(std::chrono::duration<float, std::milli>(t1 - t0).count() - s->frame.train_ms);
}

void App::OpenFileBytes(const std::string& name, const unsigned char* data, size_t size) {
  (void)OpenFile(name, data, size);  // the status bar shows a failure
}

Status App::OpenFile(const std::string& name, const unsigned char* data, size_t size) {
  const Status st = OpenAttentionFile(s_.get(), name, data, size);
  if (!st) s_->Notify(st.message, true);
  return st;
}

void App::ShowError(const std::string& message) {
  s_->Notify(message, true);
}

void App::ShowNote(const std::string& message) {
  s_->Notify(message, false);
}

Status App::BeginLoad(const std::string& name, uint64_t total_bytes) {
  const Status st = BeginFileLoad(s_.get(), name, total_bytes);
  if (!st) s_->Notify(st.message, true);
  return st;
}

Status App::FeedLoad(const unsigned char* data, size_t size) {
  const Status st = FeedFileLoad(s_.get(), data, size);
  if (!st) s_->Notify(st.message, true);
  return st;
}

Status App::FinishLoad() {
  const Status st = FinishFileLoad(s_.get());
  if (!st) s_->Notify(st.message, true);
  return st;
}

Status App::ProgressLoad(uint64_t received) {
  const Status st = ProgressFileLoad(s_.get(), received);
  if (!st) s_->Notify(st.message, true);
  return st;
}

Status App::HandOverLoad(uint64_t total) {
  const Status st = HandOverFileLoad(s_.get(), total);
  if (!st) s_->Notify(st.message, true);
  return st;
}

size_t App::LoadRoom(uint8_t** dst) {
  return FileLoadRoom(s_.get(), dst);
}

Status App::AdvanceLoad(size_t n) {
  const Status st = AdvanceFileLoad(s_.get(), n);
  if (!st) s_->Notify(st.message, true);
  return st;
}

void App::AbortLoad(const std::string& message) {
  s_->load = FileLoad();
  s_->Notify(message, true);
}

void App::ShowLoadProgress(const std::string& name, uint64_t received, uint64_t total) {
  FileLoad& L = s_->load;
  if (L.in_app) return;  // a load fed here has its own progress
  if (total == 0) {
    L = FileLoad();
    return;
  }
  if (!L.active || L.name != name) {
    L = FileLoad();
    L.name = name;
    L.active = true;
  }
  L.received = received;
  L.total = total;
}

Status App::OpenLazy(const std::string& name, std::unique_ptr<ByteSource> source, const uint8_t* prefix, size_t n) {
  const Status st = OpenLazyAttention(s_.get(), name, std::move(source), prefix, n);
  if (!st) s_->Notify(st.message, true);
  return st;
}

bool App::WorkLazy(double budget_ms) {
  return WorkLazyMaps(s_.get(), budget_ms);
}

bool App::LoadCancelRequested() const {
  return s_->load.cancel;
}

Status App::OpenDocument(const std::string& name, AttentionDocument* doc) {
  const Status st = OpenAttentionDocument(s_.get(), name, doc);
  if (!st) s_->Notify(st.message, true);
  return st;
}

Status App::Command(const std::string& command) {
  const Status st = RunCommand(s_.get(), command);
  // A command (the embed API's setMap, `map K`) may have changed a lazily read map between frames:
  // its rows are asked for now, not after the next frame (which a slow renderer may take long to draw).
  if (s_->Current().lazy && s_->ActiveView().WantLazyMaps(s_.get())) RequestLazyMaps(s_.get());
  return st;
}

const std::string& App::DescribeJson() {
  DescribeState(s_.get(), &describe_json_);
  return describe_json_;
}

}  // namespace attnviz
