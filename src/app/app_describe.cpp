// describe(): what is on screen, as JSON, for browser tests and the embed API. The app writes the
// shared fields; the active view lists the heatmaps it drew; every view writes its own object.
// Numbers follow io/json.h's policy (NaN and infinity are null).
#include <string>

#include "app/app_commands.h"
#include "app/app_files.h"
#include "app/app_state.h"
#include "app/lazy_maps.h"
#include "core/kernels.h"
#include "imgui.h"
#include "io/json.h"

namespace attnviz {
namespace {

const char* ScaleName(ScaleMode m) {
  switch (m) {
    case ScaleMode::PerRow:
      return "row";
    case ScaleMode::Log:
      return "log";
    default:
      return "global";
  }
}

void WriteTokens(JsonWriter* w, const char* key, const std::vector<std::string>& tokens) {
  w->Key(key);
  w->BeginArray(true);
  for (size_t i = 0; i < tokens.size() && i < 512; ++i) w->String(tokens[i]);
  w->EndArray();
}

// Token labels: the mode, the markers toggle, who rasterises labels the UI font lacks (canvas,
// freetype, none) and the label cache's counters.
void WriteLabels(AppState* s, JsonWriter* w) {
  w->Key("labels");  // token labels: all|auto|none
  w->String(LabelModeName(s->style.labels));
  w->Key("markers");  // tokenizer markers drawn as dim marks
  w->Bool(s->show_markers);
  w->Key("label_backend");  // who rasterises labels the UI font lacks: canvas, freetype, none
  w->String(s->labels.BackendName());
  const LabelCacheStats ls = s->labels.Stats();
  w->Key("label_cache");
  w->BeginObject();
  w->Key("entries");
  w->Number(ls.entries);
  w->Key("bytes");
  w->Number((double)ls.bytes);
  w->Key("rasterised");
  w->Number(ls.rasterised);
  w->Key("evicted");
  w->Number(ls.evicted);
  w->Key("failed");
  w->Number(ls.failed);
  w->Key("deferred");  // labels the latest frame left for later frames (its rasterising budget was spent)
  w->Number(ls.deferred);
  w->Key("frame_ms_max");
  w->Number(ls.frame_ms_max);
  w->Key("label_ms_max");
  w->Number(ls.label_ms_max);
  w->EndObject();
}

// "frames_kept", "frame_cpu_ms" (the mean of the last 120 frames) and "frame_parts" of the last frame:
// lazy files' decoding before the views, their requests after, texture uploads, the fingerprint.
void DescribeFrame(const FrameStats& f, JsonWriter* w) {
  w->Key("frames_kept");  // frames that would have looked like the last drawn one, not drawn again
  w->Number(f.kept);
  w->Key("frame_cpu_ms");
  w->NumberF(f.cpu_ms_avg);
  w->Key("frame_parts");
  w->BeginObject();
  w->Key("pump_ms");
  w->NumberF(f.pump_ms);
  w->Key("decode_ms");
  w->NumberF(f.decode_ms);
  w->Key("install_ms");
  w->NumberF(f.install_ms);
  w->Key("request_ms");
  w->NumberF(f.request_ms);
  w->Key("upload_ms");
  w->NumberF(f.upload_ms);
  w->Key("upload_max_ms");  // the longest single upload of them
  w->NumberF(f.upload_max_ms);
  w->Key("uploads");
  w->Number(f.uploads);
  w->Key("fingerprint_ms");  // App::DrawFingerprint of the frame before (after ImGui::Render)
  w->NumberF(f.fingerprint_ms);
  w->EndObject();
}

// {step, count, playing, mode} of the timeline t.
void WriteTimeline(const Timeline& t, JsonWriter* w) {
  w->Key("timeline");
  w->BeginObject();
  w->Key("step");
  w->Number(t.Step());
  w->Key("count");
  w->Number(t.count);
  w->Key("playing");
  w->Bool(t.playing);
  w->Key("mode");
  w->String(t.mode == TimelineMode::Decoding ? "decoding" : "frames");
  w->EndObject();
}

// The view tabs drawn last frame: {view, rect} (CSS px), for a page or a test to tap them.
void WriteTabs(const AppState* s, JsonWriter* w) {
  w->Key("tabs");
  w->BeginArray();
  for (const auto& t : s->tab_rects) {
    w->BeginObject();
    w->Key("view");
    w->String(ViewInfoAt(t.view).name);
    w->Key("rect");
    w->BeginArray(true);
    for (float v : {t.lo.x, t.lo.y, t.hi.x, t.hi.y}) w->NumberF(v);
    w->EndArray();
    w->EndObject();
  }
  w->EndArray();
}

// The last frame's ImGui draw data: draw lists, draw commands (a callback counts as one; each is a
// draw call or a callback's draws), the callbacks among them, vertices.
void DescribeDrawData(JsonWriter* w) {
  const ImDrawData* dd = ImGui::GetDrawData();
  int cmds = 0, callbacks = 0;
  for (int i = 0; dd && i < dd->CmdListsCount; ++i)
    for (const ImDrawCmd& c : dd->CmdLists[i]->CmdBuffer) cmds++, callbacks += c.UserCallback != nullptr;
  w->Key("draw");
  w->BeginObject();
  w->Key("lists");
  w->Number(dd ? dd->CmdListsCount : 0);
  w->Key("cmds");
  w->Number(cmds);
  w->Key("callbacks");
  w->Number(callbacks);
  w->Key("vertices");
  w->Number(dd ? dd->TotalVtxCount : 0);
  w->EndObject();
}

void WriteShared(AppState* s, JsonWriter* w) {
  w->Key("frame");
  w->Number(ImGui::GetFrameCount());
  DescribeDrawData(w);
  w->Key("example");
  w->String(s->Current().id);
  w->Key("view");
  w->String(ViewInfoAt(s->view).name);
  w->Key("theme");
  w->String(s->light_theme ? "light" : "dark");
  w->Key("views");  // the views this viewer offers, in tab order
  w->BeginArray(true);
  for (int v : s->offered) w->String(ViewInfoAt(v).name);
  w->EndArray();
  w->Key("set");
  w->String(s->Current().set_name);
  w->Key("kind");
  w->String(s->Current().kind);
  w->Key("hidden");
  w->BeginObject();
  w->Key("special");
  w->Bool(s->filter.special);
  w->Key("punctuation");
  w->Bool(s->filter.punctuation);
  w->Key("tokens");
  w->BeginArray(true);
  for (const std::string& t : s->filter.tokens) w->String(t);
  w->EndArray();
  w->Key("renormalize");
  w->Bool(s->filter.renormalize);
  w->EndObject();
  w->Key("sets");
  w->BeginArray(true);
  for (int i : SiblingSets(s)) w->String(s->examples[(size_t)i].set_name);
  w->EndArray();
  w->Key("map");
  w->Number(s->current_map);
  DescribeFileLoads(s, w);
  DescribeLazy(s, w);  // and lazy_current
  w->Key("colormap");
  w->String(ColormapName(s->style.colormap));
  w->Key("scale");
  w->String(ScaleName(s->style.scale));
  // The colour range as it applies to the map the view colours (RangeMode resolved).
  HeatmapStyle resolved;
  const AttentionMap& coloured = s->ColouredMap(&resolved);
  w->Key("range");
  w->String(RangeModeName(s->style.range));
  w->Key("numbers");
  w->Bool(s->style.show_numbers);
  w->Key("colorbar");
  w->Bool(s->style.show_colorbar);
  w->Key("vmin");
  w->NumberF(resolved.vmin);
  w->Key("vmax");
  w->NumberF(resolved.vmax);
  w->Key("low_contrast");
  w->NumberF(LowContrastFraction(resolved, coloured));
  WriteLabels(s, w);
  w->Key("dpi_scale");
  w->NumberF(s->dpi_scale);
  DescribeFrame(s->frame, w);
  w->Key("message");
  w->String(s->message);
  w->Key("message_is_error");
  w->Bool(s->message_is_error);
  w->Key("sidebar");  // the sidebar was drawn (View > Sidebar; by default from 720 px wide)
  w->Bool(s->SidebarShown(ImGui::GetCurrentContext() ? ImGui::GetIO().DisplaySize.x : 0.0f));
  w->Key("text_input");  // a text box has the keyboard (typing goes there, not to the shortcuts)
  w->Bool(ImGui::GetCurrentContext() && ImGui::GetIO().WantTextInput);
  WriteTimeline(s->ShownTimeline(), w);  // Translate's own, else the example's
  WriteTabs(s, w);
  w->Key("view_rect");  // what a PNG export shows (CSS px): the view's area, or its heatmaps
  w->BeginArray();
  for (float v : s->exports.view_rect) w->NumberF(v);
  w->EndArray();
  const AttentionMap& m = s->CurrentMap();
  WriteTokens(w, "source_tokens", m.source_tokens.vec());
  WriteTokens(w, "target_tokens", m.target_tokens.vec());
}

void WriteLut(AppState* s, JsonWriter* w) {
  w->Key("lut");
  w->BeginArray(true);
  const uint8_t* lut = ColormapLut(s->style.colormap);
  for (int i = 0; i < kColormapLutSize; ++i)
    for (int c = 0; c < 3; ++c) w->Number(lut[i * 4 + c]);
  w->EndArray();
}

}  // namespace

void DescribeState(AppState* s, std::string* out) {
  JsonWriter w;
  w.BeginObject();
  WriteShared(s, &w);
  w.Key("heatmaps");
  w.BeginArray();
  s->ActiveView().DescribeHeatmaps(s, &w);
  w.EndArray();
  for (int i = 0; i < ViewCount(); ++i) {
    w.Key(ViewInfoAt(i).name);
    w.BeginObject();
    s->views[(size_t)i]->Describe(s, &w);
    w.EndObject();
  }
  w.Key("kernel");  // the GEMM register tile the start-up probe picked on this machine
  w.BeginObject();
  const kernels::TileVariant& tile = kernels::SelectedTile();
  w.Key("tile");
  w.String(tile.tile);
  w.Key("isa");
  w.String(tile.isa);
  w.Key("variants");  // tile variants offered to the probe (8 in a browser with relaxed SIMD)
  w.Number(kernels::TileVariantCount());
  w.Key("probes");  // probes run so far: the quick one at the first kernel call, then full ones
  w.Number(kernels::ProbeRuns());
  const kernels::TileProbe probe = kernels::LastProbe();
  w.Key("clock_tick_us");  // the step of the clock the probe timed with (a page without cross-origin isolation: ~100)
  w.NumberFixed(probe.clock_tick_us, 1);
  w.Key("reps");  // runs per timed sample (> 1: the clock is coarse)
  w.Number(probe.reps);
  w.Key("probe");  // the last probe's GFLOP/s per variant (0: not timed by the quick probe)
  w.BeginArray();
  for (int i = 0; i < kernels::TileVariantCount() && i < 32; ++i) {
    const kernels::TileVariant& v = kernels::TileVariantAt(i);
    w.BeginObject();
    w.Key("isa");
    w.String(v.isa);
    w.Key("tile");
    w.String(v.tile);
    w.Key("gflops");
    w.NumberFixed(probe.gflops[i], 2);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  WriteLut(s, &w);
  w.EndObject();
  *out = w.str();
}

}  // namespace attnviz
