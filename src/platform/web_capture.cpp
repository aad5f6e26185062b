// attnviz platform (web): the PNG export's read-back and hand-over to the page (web_capture.h).
#include "platform/web_capture.h"

#include <emscripten.h>

#include <cmath>
#include <vector>

#include "app/app.h"
#include "platform/web_exports.h"
#include "render/offscreen.h"

// clang-format off
// Pixels [h, w, 4] top row first (or an error) for capture `id`. id 0 came from the UI: the page
// encodes a PNG with a 2D canvas and downloads it as `name`; other ids resolve the embed API's
// promise (Module.attnvizCaptures[id]) with an ImageData.
EM_JS(void, attnviz_js_captured, (int id, const char* name, const unsigned char* ptr, int w, int h, const char* err), {
  var error = UTF8ToString(err);
  var waiting = Module["attnvizCaptures"] && Module["attnvizCaptures"][id];
  if (waiting) delete Module["attnvizCaptures"][id];
  if (error) {
    if (waiting) waiting.reject(new Error(error));
    return;
  }
  var image = new ImageData(new Uint8ClampedArray(HEAPU8.slice(ptr, ptr + w * h * 4).buffer), w, h);
  if (waiting) {
    waiting.resolve(image);
    return;
  }
  var canvas = document.createElement("canvas");
  canvas.width = w;
  canvas.height = h;
  canvas.getContext("2d").putImageData(image, 0, 0);
  var file = UTF8ToString(name);
  canvas.toBlob(function(blob) {
    var a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = file;
    document.body.appendChild(a);
    a.click();
    setTimeout(function() { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
  }, "image/png");
});
// clang-format on

namespace attnviz {

void CaptureWebFrame(App& app, const float sz[4], int id, const std::string& name, const float view_rect[4]) {
  const float sx = sz[2] / sz[0], sy = sz[3] / sz[1];
  const int rect[4] = {(int)std::floor(view_rect[0] * sx), (int)std::floor(view_rect[1] * sy),
                       (int)std::ceil(view_rect[2] * sx), (int)std::ceil(view_rect[3] * sy)};
  std::vector<uint8_t> rgba;
  int w = 0, h = 0;
  const Status st = ReadFramebufferRect((int)sz[2], (int)sz[3], rect, &rgba, &w, &h);
  attnviz_js_captured(id, name.c_str(), st ? rgba.data() : nullptr, w, h, st.message.c_str());
  app.PopCapture(st.ok, st.message);
}

}  // namespace attnviz

// viewer.exportPng({scale}): asks for capture `id` (> 0) at scale 1..4; returns "" or the error.
// The pixels arrive in Module.attnvizCaptures[id] after the next frame.
extern "C" EMSCRIPTEN_KEEPALIVE const char* attnviz_capture(float scale, int id) {
  static std::string error;
  attnviz::App* app = attnviz::WebApp();
  if (!app) return "the viewer is not running";
  const attnviz::Status st = id > 0 ? app->RequestCapture(scale, id) : attnviz::Status::Error("bad capture id");
  error = st.message;
  return error.c_str();
}
