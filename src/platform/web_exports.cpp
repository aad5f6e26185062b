// C exports for the embed API and the browser tests. Every export is prefixed attnviz_.
#include "platform/web_exports.h"

#include <emscripten.h>

#include <string>

#include "app/app.h"
#include "app/lazy_maps.h"
#include "imgui.h"
#include "io/memory_budget.h"

namespace {
size_t attnviz_room_size = 0;  // attnviz_load_room's size, for attnviz_load_room_size

// The string exports' shape: runs call(app) and returns its message ("" or why not), valid until
// the next such export is called (the page's ccall copies it out at once), or "app not started".
template <typename Call>
const char* MessageOf(Call call) {
  static std::string result;
  attnviz::App* app = attnviz::WebApp();
  if (!app) return "app not started";
  result = call(app).message;
  return result.c_str();
}
}  // namespace

extern "C" {

// JSON description of the screen: example, view, heatmap geometry (CSS px), weights, colormap LUT.
EMSCRIPTEN_KEEPALIVE const char* attnviz_describe() {
  attnviz::App* app = attnviz::WebApp();
  return app ? app->DescribeJson().c_str() : "{}";
}

// Runs an app command ("example seed002", "view lines", "step 3", ...). Returns "" or an error.
EMSCRIPTEN_KEEPALIVE const char* attnviz_command(const char* command) {
  return MessageOf([&](attnviz::App* app) { return app->Command(command ? command : ""); });
}

// Opens a dropped, picked or fetched file (bytes copied by the caller into the WASM heap).
// Returns "" or why the file could not be opened (also shown in the status bar).
EMSCRIPTEN_KEEPALIVE const char* attnviz_open_file(const char* name, const unsigned char* data, int size) {
  if (!data || size < 0) return "no data";
  return MessageOf([&](attnviz::App* app) { return app->OpenFile(name ? name : "file", data, (size_t)size); });
}

// A file read in pieces by the page (attnviz-lazy.js): begin with its size, feed every byte in order,
// finish. Each returns "" or why not ("cancelled: ..." once the user pressed Cancel in the progress
// window); frames keep coming between the calls.
EMSCRIPTEN_KEEPALIVE const char* attnviz_load_begin(const char* name, double total) {
  return MessageOf(
      [&](attnviz::App* app) { return app->BeginLoad(name ? name : "file", total > 0 ? (uint64_t)total : 0); });
}

EMSCRIPTEN_KEEPALIVE const char* attnviz_load_feed(const unsigned char* data, int size) {
  return MessageOf([&](attnviz::App* app) { return app->FeedLoad(data, size > 0 ? (size_t)size : 0); });
}

EMSCRIPTEN_KEEPALIVE const char* attnviz_load_finish() {
  return MessageOf([&](attnviz::App* app) { return app->FinishLoad(); });
}

// The browser's load worker (web/attnviz-load-worker.js) reads the file: after attnviz_load_begin,
// how far it got ("cancelled: ..." once the user pressed Cancel); then attnviz_load_handover with
// the size of the document it hands over, whose bytes come through attnviz_load_feed.
EMSCRIPTEN_KEEPALIVE const char* attnviz_load_progress(double received) {
  return MessageOf([&](attnviz::App* app) { return app->ProgressLoad(received > 0 ? (uint64_t)received : 0); });
}

EMSCRIPTEN_KEEPALIVE const char* attnviz_load_handover(double total) {
  return MessageOf([&](attnviz::App* app) { return app->HandOverLoad(total > 0 ? (uint64_t)total : 0); });
}

// During a handover: where the next matrix bytes go (0: none; feed them) and how many fit there;
// the page copies them itself, then advances (one copy, not two).
EMSCRIPTEN_KEEPALIVE double attnviz_load_room() {
  attnviz::App* app = attnviz::WebApp();
  uint8_t* dst = nullptr;
  const size_t n = app ? app->LoadRoom(&dst) : 0;
  attnviz_room_size = n;
  return n ? (double)(uintptr_t)dst : 0.0;
}

EMSCRIPTEN_KEEPALIVE double attnviz_load_room_size() {
  return (double)attnviz_room_size;
}

EMSCRIPTEN_KEEPALIVE const char* attnviz_load_advance(double n) {
  return MessageOf([&](attnviz::App* app) { return app->AdvanceLoad(n > 0 ? (size_t)n : 0); });
}

// The page could not read the rest of the file (network, file system): ends the load with the message.
EMSCRIPTEN_KEEPALIVE void attnviz_load_abort(const char* message) {
  attnviz::App* app = attnviz::WebApp();
  if (app) app->AbortLoad(message ? message : "the file could not be read");
}

// Shows a message from the page (e.g. a failed fetch of ?src=) in the status bar.
EMSCRIPTEN_KEEPALIVE void attnviz_show_error(const char* message) {
  attnviz::App* app = attnviz::WebApp();
  if (app && message) app->ShowError(message);
}

// Shows news from the page (the animation it recorded was downloaded) in the status bar.
EMSCRIPTEN_KEEPALIVE void attnviz_show_note(const char* message) {
  attnviz::App* app = attnviz::WebApp();
  if (app && message) app->ShowNote(message);
}

// The memory budget of every reader and of the heads of lazily read files (the embed option
// maxMemory), in bytes; 0 restores the defaults (1 GiB; a 256 MiB cache of heads).
EMSCRIPTEN_KEEPALIVE void attnviz_set_memory_budget(double bytes) {
  attnviz::SetDefaultMemoryBudget(bytes > 0 ? (uint64_t)bytes : 0);
  attnviz::SetLazyCacheBudget(bytes > 0 ? (uint64_t)bytes : 0);
}

// A file the app asked for (attnviz_js_fetch) has arrived, or failed with error.
EMSCRIPTEN_KEEPALIVE void attnviz_fetched(const char* url, const unsigned char* data, int size, const char* error) {
  attnviz::App* app = attnviz::WebApp();
  if (app && url) app->DeliverFetch(url, data, size > 0 ? (size_t)size : 0, error ? error : "");
}

// The page's idle time (requestIdleCallback, attnviz-embed.js): the shown view's background work
// for up to ms, then packing ahead (App::Idle). Bit 0: the view did some (the next frame shows it);
// bit 1: background work is left (ask again soon, no frame needed).
EMSCRIPTEN_KEEPALIVE int attnviz_idle(double ms) {
  attnviz::App* app = attnviz::WebApp();
  if (!app) return 0;
  bool left = false;
  const bool worked = app->Idle(ms, &left);
  return (worked ? 1 : 0) | (left ? 2 : 0);
}

// CPU milliseconds of the last App::Frame().
EMSCRIPTEN_KEEPALIVE float attnviz_frame_cpu_ms() {
  attnviz::App* app = attnviz::WebApp();
  return app ? app->LastFrameCpuMs() : 0.0f;
}

// Frames drawn so far (ImGui's frame count): a sampler of attnviz_frame_cpu_ms reads each frame once
// by taking a sample only when this has moved (the app draws only when something changes).
EMSCRIPTEN_KEEPALIVE int attnviz_frame_count() {
  return ImGui::GetCurrentContext() ? ImGui::GetFrameCount() : 0;
}

}  // extern "C"
