// C exports for the embed API and the browser tests. Every export is prefixed attnviz_.
#include "platform/web_exports.h"

#include <emscripten.h>

#include <string>

#include "app/app.h"

extern "C" {

// JSON description of the screen: example, view, heatmap geometry (CSS px), weights, colormap LUT.
EMSCRIPTEN_KEEPALIVE const char* attnviz_describe() {
  attnviz::App* app = attnviz::WebApp();
  return app ? app->DescribeJson().c_str() : "{}";
}

// Runs an app command ("example seed002", "view lines", "step 3", ...). Returns "" or an error.
EMSCRIPTEN_KEEPALIVE const char* attnviz_command(const char* command) {
  static std::string result;
  attnviz::App* app = attnviz::WebApp();
  result = app ? app->Command(command ? command : "").message : "app not started";
  return result.c_str();
}

// Opens a dropped or picked file (bytes copied by the caller into the WASM heap).
EMSCRIPTEN_KEEPALIVE void attnviz_open_file(const char* name, const unsigned char* data, int size) {
  attnviz::App* app = attnviz::WebApp();
  if (app && data && size >= 0) app->OpenFileBytes(name ? name : "file", data, (size_t)size);
}

// CPU milliseconds of the last App::Frame().
EMSCRIPTEN_KEEPALIVE float attnviz_frame_cpu_ms() {
  attnviz::App* app = attnviz::WebApp();
  return app ? app->LastFrameCpuMs() : 0.0f;
}

}  // extern "C"
