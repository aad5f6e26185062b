// attnviz platform (web): PNG export read-back. The loop draws a frame at the requested scale
// (the canvas's backing store grows for that one frame, fonts are re-rasterised at that scale),
// then CaptureWebFrame reads the view's rectangle and hands the pixels to the page, which encodes
// them with its canvas (toBlob) and downloads them or resolves viewer.exportPng()'s promise.
#pragma once
#include <string>

namespace attnviz {
class App;
// sz = {css_w, css_h, fb_w, fb_h} of the frame just drawn; view_rect in CSS px.
void CaptureWebFrame(App& app, const float sz[4], int id, const std::string& name, const float view_rect[4]);
}  // namespace attnviz
