// Browser labels: the page's own fonts draw each label whole on a 2D canvas (an OffscreenCanvas
// when the browser has one), so shaping, right-to-left order, emoji sequences and font fallback
// are the browser's. No inline script or style: works under the strict CSP of web/.
#include <emscripten.h>

#include <cstdlib>
#include <cstring>

#include "platform/label_raster.h"

// clang-format off
// Draws text in px-pixel type and colour rgba (0xAABBGGRR) onto a transparent canvas just large
// enough; returns malloc'd RGBA pixels (the caller frees) and out = {width, height, baseline},
// or 0 when there is no 2D context.
EM_JS(unsigned char*, attnviz_js_raster_label, (const char* text, float px, unsigned int rgba, int* out), {
  var s = UTF8ToString(text);
  var c = Module["attnvizLabelCanvas"];
  if (!c) {
    c = typeof OffscreenCanvas !== "undefined" ? new OffscreenCanvas(1, 1) : document.createElement("canvas");
    Module["attnvizLabelCanvas"] = c;
  }
  var g = c.getContext("2d", {willReadFrequently: true});
  if (!g) return 0;
  // The generic family: the browser then falls back per script, and to colour emoji. Naming the
  // UI font (DejaVu Sans) first would draw emoji from its black-and-white emoticons.
  var font = px.toFixed(2) + "px sans-serif";
  if (Module["attnvizLabelFont"] !== font) {  // parsing a font is not free: only when it changes
    g.font = font;
    Module["attnvizLabelFont"] = font;
  }
  var m = g.measureText(s);
  var asc = Math.max(Math.ceil(px * 0.93), Math.ceil(m.actualBoundingBoxAscent || 0));
  var desc = Math.max(Math.ceil(px * 0.24), Math.ceil(m.actualBoundingBoxDescent || 0));
  var left = Math.max(0, Math.ceil(m.actualBoundingBoxLeft || 0));
  var right = Math.max(m.width, m.actualBoundingBoxRight || 0);
  var w = Math.min(4096, Math.max(1, Math.ceil(left + right) + 2));
  var h = Math.min(1024, asc + desc);  // one line of the UI font (1.17 em) unless the ink is taller
  // The shared canvas only grows, up to 1024 x 256: resizing reallocates its pixels and resets the
  // context, which cost more than drawing a short label (0.14 -> 0.08 ms a Latin label, measured in
  // Chromium). A longer label gets a canvas of its own, let go afterwards.
  if (w > 1024 || h > 256) {
    c = typeof OffscreenCanvas !== "undefined" ? new OffscreenCanvas(w, h) : document.createElement("canvas");
    c.width = w;
    c.height = h;
    g = c.getContext("2d", {willReadFrequently: true});
    if (!g) return 0;
    g.font = font;
  } else if (c.width < w || c.height < h) {
    c.width = Math.max(c.width, w, 256);
    c.height = Math.max(c.height, h, 64);
    g.font = font;
  }
  g.clearRect(0, 0, w, h);
  g.fillStyle = "rgba(" + (rgba & 255) + "," + ((rgba >>> 8) & 255) + "," + ((rgba >>> 16) & 255) + "," +
                (((rgba >>> 24) & 255) / 255) + ")";
  g.fillText(s, left + 1, asc);
  var img = g.getImageData(0, 0, w, h);
  var p = _malloc(w * h * 4);
  if (!p) return 0;
  HEAPU8.set(img.data, p);
  HEAP32[(out >> 2) + 0] = w;
  HEAP32[(out >> 2) + 1] = h;
  HEAP32[(out >> 2) + 2] = asc;
  return p;
});
// clang-format on

namespace attnviz {
namespace {

class CanvasLabelRasterizer : public LabelRasterizer {
 public:
  bool Rasterize(const std::string& utf8, float px, uint32_t rgba, LabelBitmap* out) override {
    int dims[3] = {0, 0, 0};
    unsigned char* p = attnviz_js_raster_label(utf8.c_str(), px, rgba, dims);
    if (!p) return false;
    out->width = dims[0];
    out->height = dims[1];
    out->baseline = (float)dims[2];
    out->rgba.assign(p, p + (size_t)dims[0] * dims[1] * 4);
    std::free(p);
    return true;
  }
  const char* Name() const override { return "canvas"; }
};

}  // namespace

std::unique_ptr<LabelRasterizer> MakeLabelRasterizer() {
  return std::unique_ptr<LabelRasterizer>(new CanvasLabelRasterizer);
}

}  // namespace attnviz
