#include "app/app_chrome.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "app/app_commands.h"
#include "app/app_export.h"
#include "app/app_files.h"
#include "app/app_state.h"
#include "app/colour_bar.h"
#include "app/help_tip.h"
#include "app/lazy_maps.h"
#include "embedded_font.h"
#include "imgui.h"
#include "io/memory_budget.h"

namespace attnviz {
namespace {

// Latin-1 + Latin Extended-A, General Punctuation, super/subscripts, arrows, math operators, Greek, Cyrillic.
// Keep in step with the subset of the embedded font (CMakeLists.txt, pyftsubset --unicodes).
const ImWchar kGlyphRanges[] = {0x0020, 0x017F, 0x0370, 0x03FF, 0x0400, 0x04FF, 0x2000, 0x206F, 0x2070,
                                0x209F, 0x2190, 0x21FF, 0x2200, 0x22FF, 0x25A0, 0x25FF, 0};

const ImVec4 kErrorColour(1.0f, 0.45f, 0.4f, 1);

// A user action that can fail: the failure goes to the status bar.
void Report(AppState* s, const Status& st) {
  if (!st) s->Notify(st.message, true);
}

// The attention sets of an opened file (encoder, decoder, cross, ...): one example each.
void DrawSetPicker(AppState* s) {
  const std::vector<int> sets = SiblingSets(s);
  if (sets.size() < 2) return;
  ImGui::TextDisabled("ATTENTION SET");
  ImGui::SetNextItemWidth(-1);
  const Example& cur = s->Current();
  const std::string label = cur.set_name + "  (" + cur.kind + ")";
  if (ImGui::BeginCombo("##set", label.c_str())) {
    for (int i : sets) {
      const Example& e = s->examples[(size_t)i];
      const std::string item = e.set_name + "  (" + e.kind + ")";
      if (ImGui::Selectable(item.c_str(), i == s->current)) Report(s, SelectExample(s, i));
    }
    ImGui::EndCombo();
  }
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("The file holds several kinds of attention (self, causal, cross), each with its own tokens");
  ImGui::Separator();
}

void DrawExamplePicker(AppState* s) {
  ImGui::TextDisabled("EXAMPLE");
  ImGui::SetNextItemWidth(-1);
  if (ImGui::BeginCombo("##example", s->Current().title.c_str())) {
    for (int i = 0; i < (int)s->examples.size(); ++i)
      if (ImGui::Selectable(s->examples[(size_t)i].title.c_str(), i == s->current)) Report(s, SelectExample(s, i));
    ImGui::EndCombo();
  }
  ImGui::PushTextWrapPos(0);
  ImGui::TextUnformatted(s->Current().description.c_str());
  ImGui::PopTextWrapPos();
  ImGui::Separator();
  DrawSetPicker(s);
}

void DrawColourBar(AppState* s) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const float w = ImGui::GetContentRegionAvail().x, h = 10;
  const uint8_t* lut = ColormapLut(s->style.colormap);
  for (int i = 0; i < 64; ++i) {
    const uint8_t* e = lut + (i * 255 / 63) * 4;
    dl->AddRectFilled(ImVec2(p.x + w * i / 64, p.y), ImVec2(p.x + w * (i + 1) / 64 + 1, p.y + h),
                      IM_COL32(e[0], e[1], e[2], 255));
  }
  ImGui::Dummy(ImVec2(w, h));
  // The numbers at both ends and the middle, for the map shown (per row: fractions of the row's maximum).
  HeatmapStyle r;
  s->ColouredMap(&r);
  ColourTick t[3];
  RangeTicks((ColourScale)r.scale, r.vmin, r.vmax, t);
  const char *lo = t[0].text, *mid = t[1].text, *hi = t[2].text;
  ImGui::TextDisabled("%s", lo);
  ImGui::SameLine((w - ImGui::CalcTextSize(mid).x) * 0.5f);
  ImGui::TextDisabled("%s", mid);
  ImGui::SameLine(w - ImGui::CalcTextSize(hi).x);
  ImGui::TextDisabled("%s", hi);
}

// Where the colour range comes from, and the fixed range or the log scale's lower limit.
void DrawRangeControls(AppState* s) {
  HeatmapStyle& st = s->style;
  int range = (int)st.range;
  const char* ranges[] = {"range: auto (0 .. largest)", "range: fixed", "range: 99th percentile",
                          "range: 99.9th percentile"};
  ImGui::SetNextItemWidth(-1);
  if (ImGui::Combo("##rangemode", &range, ranges, IM_ARRAYSIZE(ranges))) st.range = (RangeMode)range;
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "auto: 0 to the map's largest weight, so long sequences (weights ~1/n) still show.\n"
        "fixed: the range you set (0 to 1 shows probabilities as they are).\n"
        "percentiles: a few very strong cells do not wash out the rest.");
  ImGui::SetNextItemWidth(-1);
  if (st.scale == ScaleMode::Log)
    ImGui::SliderFloat("##logmin", &st.vmin, 1e-6f, 0.5f, "min %.0e", ImGuiSliderFlags_Logarithmic);
  else if (st.range == RangeMode::Fixed)
    ImGui::DragFloatRange2("##range", &st.vmin, &st.vmax, 0.005f, 0.0f, 1.0f, "min %.3g", "max %.3g");
}

void DrawStyleControls(AppState* s) {
  ImGui::TextDisabled("COLOUR");
  int cmap = (int)s->style.colormap;
  const char* cmaps[] = {"greys", "viridis", "magma", "diverging"};
  ImGui::SetNextItemWidth(-1);
  if (ImGui::Combo("##colormap", &cmap, cmaps, IM_ARRAYSIZE(cmaps))) s->style.colormap = (Colormap)cmap;
  int scale = (int)s->style.scale;
  ImGui::RadioButton("global", &scale, 0);
  ImGui::SameLine();
  ImGui::RadioButton("per row", &scale, 1);
  ImGui::SameLine();
  ImGui::RadioButton("log", &scale, 2);
  HelpMarker(
      "global: one scale for the whole matrix.\nper row: each row divided by its maximum.\n"
      "log: log10 of the weight between the range limits, shows small weights.");
  s->style.scale = (ScaleMode)scale;
  if (s->style.scale != ScaleMode::PerRow) DrawRangeControls(s);
  ImGui::Checkbox("numbers", &s->style.show_numbers);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "The weight in each cell: 3 decimals in wide cells, 2 in narrower ones, and in narrow cells\n"
        "as in papers (.87, 1.0), leaving the weights that round to 0 blank.");
  ImGui::SameLine();
  ImGui::Checkbox("grid", &s->style.show_grid);
  ImGui::SameLine();
  ImGui::Checkbox("colour bar", &s->style.show_colorbar);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "The colour bar beside the Heatmap's and Translate's matrix, with its range:\n"
        "part of their PNG, for a figure that carries its key.");
  int labels = (int)s->style.labels;
  const char* label_modes[] = {"labels: auto (thinned)", "labels: all", "labels: none"};
  ImGui::SetNextItemWidth(-1);
  if (ImGui::Combo("##labels", &labels, label_modes, IM_ARRAYSIZE(label_modes))) s->style.labels = (LabelMode)labels;
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "auto: every k-th token label, so that none overlap (hovered ones always show).\n"
        "all: every label, even overlapping. none: no token labels.");
  DrawColourBar(s);
  ImGui::Separator();
}

// Hide special tokens, punctuation or chosen tokens, and renormalise the rows (opened files).
void DrawTokenFilter(AppState* s) {
  if (s->Current().has_inputs) return;
  ImGui::TextDisabled("HIDE TOKENS");
  TokenFilter& f = s->filter;
  bool changed = ImGui::Checkbox("special", &f.special);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("[CLS], [SEP], <s>, </s>, <pad>, ... and the file's own special tokens");
  ImGui::SameLine();
  changed |= ImGui::Checkbox("punctuation", &f.punctuation);
  changed |= ImGui::Checkbox("renormalise rows", &f.renormalize);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Divide each row by the sum of the weights that are left");
  for (size_t i = 0; i < f.tokens.size(); ++i) {
    ImGui::PushID((int)i);
    if (ImGui::SmallButton(("x " + f.tokens[i]).c_str())) f.tokens.erase(f.tokens.begin() + (long)i), changed = true;
    ImGui::PopID();
    if (i + 1 < f.tokens.size()) ImGui::SameLine();
  }
  if (changed) Report(s, RefilterCurrent(s));
  ImGui::Separator();
}

void DrawMatrixInfo(AppState* s) {
  const Example& ex = s->Current();
  if (ex.maps.size() > 1) {
    ImGui::TextDisabled("LAYER / HEAD");
    int layer, head;
    ex.LayerHeadOf(s->current_map, &layer, &head);
    bool changed = false;
    ImGui::SetNextItemWidth(-1);
    changed |= ImGui::SliderInt("##layer", &layer, 0, ex.layers - 1, "layer %d");
    ImGui::SetNextItemWidth(-1);
    changed |= ImGui::SliderInt("##head", &head, 0, ex.heads - 1, "head %d");
    if (changed) s->current_map = ex.MapOf(layer, head);
    ImGui::Separator();
  }
  const AttentionMap& m = s->CurrentMap();
  ImGui::TextDisabled("MATRIX");
  ImGui::Text("%d x %d  (target x source)", m.Rows(), m.Cols());
  // A lazily read map: which of its rows are in memory, and whether more are coming. One line
  // whatever it says: a sidebar that grew or shrank moves its scrollbar one frame later, which made
  // every head switch draw one frame more (stop 59).
  if (s->Current().lazy) {
    const int held = (int)m.weights.rows();
    const bool reading = LazyReading(s, s->current_map);
    if (m.Complete())
      ImGui::TextDisabled("all rows in memory");
    else if (held == 0)
      ImGui::TextDisabled("%s", reading ? "loading..." : "not in memory");
    else
      ImGui::TextDisabled("rows %d-%d%s", m.row_offset, m.row_offset + held - 1,
                          reading ? ", loading..." : " in memory");
    HelpTip("A head is read when a view draws it, and kept in memory up to the cache budget");
  }
  if (!m.name.empty()) ImGui::Text("%s", m.name.c_str());
}

// A lazily read file: what its cache holds against the budget, what was read, and the budget itself.
void DrawLazyCache(AppState* s) {
  LazyCacheStats now;
  if (!LazyCacheStatsOf(s, &now)) return;
  // Its figures refresh with the status bar's readout (FrameStats::RefreshEvery): while a head is read
  // they move with every part, and each frame that looks new is drawn again, which on a software
  // renderer costs the page ~100 ms of a core (stop 55: paced head switches waited for those frames).
  const LazyCacheStats& st = s->Current().lazy->Readout(now, s->frame.refresh);
  ImGui::Separator();
  ImGui::TextDisabled("CACHE");
  HelpMarker(
      "This file is read lazily: a head is read when a view draws it and stays in memory up to the "
      "budget, least recently drawn first out. Heads of an F16 or BF16 file that you left are kept in 16 bits "
      "(half the memory, the same weights) and come back without a read. The grid shows each head's "
      "max-pooled thumbnail (64 x 64, for small cells) or overview (256 x 256).");
  const float used = st.budget ? (float)((double)st.resident / (double)st.budget) : 0.0f;
  const std::string bar = FormatApproxByteSize(st.resident) + " of " + FormatByteSize(st.budget);
  ImGui::ProgressBar(std::min(used, 1.0f), ImVec2(-1, 0), bar.c_str());
  HelpTip(
      "Memory the heads, their 16-bit copies, thumbnails, overviews and screen copies take now, against the cache "
      "budget");
  ImGui::Text("%d head%s, %d in 16 bits", st.heads, st.heads == 1 ? "" : "s", st.packed);
  if (st.bands) ImGui::SameLine(), ImGui::Text("+ %d band%s", st.bands, st.bands == 1 ? "" : "s");
  // The stand-ins held, wrapped to the sidebar ("618 thumbnails, 12 overviews, 1 screen copy" is wider).
  char held[128] = "";  // no allocation a frame
  int len = 0;
  auto count = [&](int n, const char* one, const char* many) {
    if (n == 0 || len >= (int)sizeof(held)) return;
    len += std::snprintf(held + len, sizeof(held) - (size_t)len, "%s%d %s", len ? ", " : "", n, n == 1 ? one : many);
  };
  count(st.thumbs, "thumbnail", "thumbnails");
  count(st.overviews, "overview", "overviews");
  count(st.screens, "screen copy", "screen copies");
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
  ImGui::TextWrapped("%s", len ? held : "no overviews or screen copies yet");
  ImGui::PopStyleColor();
  ImGui::TextDisabled("read %s in %llu reads%s", FormatApproxByteSize(st.bytes_read).c_str(),
                      (unsigned long long)st.reads, st.pending ? ", loading..." : "");
  HelpTip(("of " + FormatApproxByteSize(st.file_bytes) + " in the file").c_str());
  static const char* const kBudgets[] = {"64M", "128M", "256M", "512M", "1G", "2G"};
  int at = -1;
  for (int i = 0; i < (int)IM_ARRAYSIZE(kBudgets); ++i) {
    uint64_t b = 0;
    if (ParseByteSize(kBudgets[i], &b) && b == st.budget) at = i;
  }
  ImGui::SetNextItemWidth(-1);
  if (ImGui::BeginCombo("##cache", ("budget " + FormatByteSize(st.budget)).c_str())) {
    for (int i = 0; i < (int)IM_ARRAYSIZE(kBudgets); ++i)
      if (ImGui::Selectable(kBudgets[i], i == at)) Report(s, RunCommand(s, std::string("cache ") + kBudgets[i]));
    ImGui::EndCombo();
  }
  HelpTip(
      "How much memory the file's heads may take (the cache command: cache 512M). A lower budget takes effect at "
      "once.");
}

bool KeyPressed(ImGuiKey key, bool repeat = true) {
  return ImGui::IsKeyPressed(ImGui::GetKeyIndex(key), repeat);
}

}  // namespace

bool LightStyle() {
  const ImVec4 bg = ImGui::GetStyle().Colors[ImGuiCol_WindowBg];
  return 0.2126f * bg.x + 0.7152f * bg.y + 0.0722f * bg.z > 0.5f;
}

void ApplyStyle(bool light) {
  if (light)
    ImGui::StyleColorsLight();
  else
    ImGui::StyleColorsDark();
  ImGuiStyle& st = ImGui::GetStyle();
  st.WindowRounding = 0;
  st.FrameRounding = 3;
  st.GrabRounding = 3;
  st.TabRounding = 3;
  st.WindowBorderSize = 0;
  st.ItemSpacing = ImVec2(8, 6);
  st.Colors[ImGuiCol_WindowBg] = light ? ImVec4(0.97f, 0.97f, 0.96f, 1.0f) : ImVec4(0.10f, 0.10f, 0.12f, 1.0f);
  st.Colors[ImGuiCol_ChildBg] = light ? ImVec4(0.93f, 0.93f, 0.92f, 1.0f) : ImVec4(0.12f, 0.12f, 0.14f, 1.0f);
}

void BuildFonts(float dpi_scale) {
  ImGuiIO& io = ImGui::GetIO();
  io.Fonts->Clear();
  const EmbeddedFile* font = attnviz_embedded_font_find("DejaVuSans.ttf");
  ImFontConfig cfg;
  cfg.FontDataOwnedByAtlas = false;  // the bytes are static, embedded at build time
  cfg.OversampleH = 2;
  cfg.OversampleV = 1;
  const float size = 15.0f * dpi_scale;
  if (font)
    io.Fonts->AddFontFromMemoryTTF(const_cast<unsigned char*>(font->data), (int)font->size, size, &cfg, kGlyphRanges);
  else
    io.Fonts->AddFontDefault();
  io.FontGlobalScale = 1.0f / dpi_scale;
}

// Up / Down: the previous / next map (head by head, on into the next layer); Page Up / Page Down:
// the same head of the previous / next layer.
void BrowseMapKeys(AppState* s) {
  const Example& ex = s->Current();
  const int n = (int)ex.maps.size();
  int layer = 0, head = 0;
  ex.LayerHeadOf(s->current_map, &layer, &head);
  if (KeyPressed(ImGuiKey_DownArrow)) s->current_map = std::min(n - 1, s->current_map + 1);
  if (KeyPressed(ImGuiKey_UpArrow)) s->current_map = std::max(0, s->current_map - 1);
  if (KeyPressed(ImGuiKey_PageDown) && layer + 1 < ex.layers) s->current_map = ex.MapOf(layer + 1, head);
  if (KeyPressed(ImGuiKey_PageUp) && layer > 0) s->current_map = ex.MapOf(layer - 1, head);
}

void HandleShortcuts(AppState* s) {
  ImGuiIO& io = ImGui::GetIO();
  if (io.WantTextInput) return;
  Timeline& t = s->ShownTimeline();  // Translate's decoding, else the example's
  if (KeyPressed(ImGuiKey_Space, false)) {
    if (t.playing)
      t.playing = false;
    else
      t.Play();
  }
  if (KeyPressed(ImGuiKey_RightArrow)) t.StepForward();
  if (KeyPressed(ImGuiKey_LeftArrow)) t.StepBack();
  if (KeyPressed(ImGuiKey_Home, false)) t.Home();
  if (KeyPressed(ImGuiKey_End, false)) t.End();
  BrowseMapKeys(s);
  // imgui 1.86 names only A/C/V/X/Y/Z; both platforms use GLFW, whose letter key codes are ASCII.
  if (io.KeyCtrl && ImGui::IsKeyPressed('O', false)) s->open_dialog_requested = true;
  if (io.KeyCtrl && !io.KeyShift && ImGui::IsKeyPressed('S', false)) Report(s, QueueSvgDownload(s));
  ExportShortcuts(s);  // Ctrl+Shift+S: PNG
  // imgui 1.86 has no named keys for digits: use the typed characters.
  for (int i = 0; i < io.InputQueueCharacters.Size; ++i) {
    const ImWchar c = io.InputQueueCharacters[i];
    if (c == '?' || c == 'h') s->show_help = !s->show_help;
    const int k = c - '1';  // key N: the N-th view this viewer offers
    if (k >= 0 && k < std::min((int)s->offered.size(), 9)) s->view = s->offered[(size_t)k];
  }
}

void DrawMenuBar(AppState* s) {
  if (!ImGui::BeginMenuBar()) return;
  if (ImGui::BeginMenu("File")) {
    if (ImGui::MenuItem("Open attention file...", "Ctrl+O")) s->open_dialog_requested = true;
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("JSON or NPZ exported from your model (docs/FORMATS.md); you can also drop it on the window");
    ImGui::Separator();
    if (ImGui::MenuItem("Save heatmap (or lines) as SVG", "Ctrl+S")) Report(s, QueueSvgDownload(s));
    if (ImGui::MenuItem("Export attention JSON")) Report(s, QueueJsonDownload(s));
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Every map of the example, in attnviz's JSON format");
    if (ImGui::MenuItem("Export map as CSV")) Report(s, QueueCsvDownload(s));
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("The map shown, with its tokens as the header row and column");
    if (ImGui::MenuItem("Export map as NPY")) Report(s, QueueNpyDownload(s));
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("The map shown as a float32 numpy array [rows, columns]");
    ImGui::Separator();
    DrawExportMenu(s);
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Examples")) {
    for (int i = 0; i < (int)s->examples.size(); ++i)
      if (ImGui::MenuItem(s->examples[(size_t)i].title.c_str(), nullptr, i == s->current))
        Report(s, SelectExample(s, i));
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("View")) {
    for (int i = 0; i < ViewCount(); ++i) {
      char key[12];
      std::snprintf(key, sizeof(key), "%d", i + 1);
      if (!IsOffered(s, i)) continue;
      if (ImGui::MenuItem(ViewInfoAt(i).label, i < 9 ? key : nullptr, s->view == i)) s->view = i;
    }
    ImGui::Separator();
    const bool shown = s->SidebarShown(ImGui::GetIO().DisplaySize.x);
    if (ImGui::MenuItem("Sidebar", nullptr, shown)) s->sidebar = shown ? 0 : 1;
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("Colours, tokens to hide, layer and head (hidden by default below 720 px)");
    if (ImGui::MenuItem("Tokenizer markers", nullptr, s->show_markers)) s->show_markers = !s->show_markers;
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip(
          "A dim \xc2\xb7 for a word start (\xe2\x96\x81, \xc4\xa0) and \xe2\x80\x90 for a continuation (##)");
    if (ImGui::MenuItem("Light theme", nullptr, s->light_theme)) {
      ApplyStyle(s->light_theme = !s->light_theme);
      // The reader chose: the page stops following the system's colour scheme (attnviz-embed.js).
      s->Emit("theme", s->light_theme ? "{\"theme\":\"light\"}" : "{\"theme\":\"dark\"}");
    }
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("Dark text on white, for PNG figures in papers and slides (SVG exports are always on white)");
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Help")) {
    if (ImGui::MenuItem("Keyboard and mouse", "?")) s->show_help = true;
    if (ImGui::MenuItem("Tutorial: attention, step by step")) s->open_url_request = "tutorial/index.html";
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("A lesson with a live viewer at each step (opens a new tab)");
    ImGui::EndMenu();
  }
  ImGui::TextDisabled("  attnviz: attention, made visible");
  ImGui::EndMenuBar();
}

void DrawSidebar(AppState* s) {
  const char* about = s->ActiveView().SidebarAbout();
  if (about) {
    ImGui::TextDisabled("%s", ViewInfoAt(s->view).label);
    ImGui::PushTextWrapPos(0);
    ImGui::TextUnformatted(about);
    ImGui::PopTextWrapPos();
    ImGui::Separator();
  } else {
    DrawExamplePicker(s);
  }
  DrawStyleControls(s);
  if (!about) DrawTokenFilter(s);
  if (!about) DrawMatrixInfo(s);
  if (!about) DrawLazyCache(s);
}

void DrawViewTabs(AppState* s) {
  if (s->offered.size() < 2) return;  // one view: no tab bar
  if (!ImGui::BeginTabBar("views")) return;
  // A view chosen by keyboard or command selects its tab once; otherwise the tab bar decides.
  const bool forced = s->view != s->tab_view;
  s->tab_rects.clear();
  for (int k = 0; k < (int)s->offered.size(); ++k) {
    const int i = s->offered[(size_t)k];
    const ImGuiTabItemFlags f = (forced && s->view == i) ? ImGuiTabItemFlags_SetSelected : 0;
    const bool open = ImGui::BeginTabItem(ViewInfoAt(i).label, nullptr, f);
    s->tab_rects.push_back({i, ImGui::GetItemRectMin(), ImGui::GetItemRectMax()});
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s  (key %d)", ViewInfoAt(i).help, k + 1);
    if (!open) continue;
    if (!forced) s->view = i;
    ImGui::EndTabItem();
  }
  ImGui::EndTabBar();
  s->tab_view = s->view;
}

void DrawStatusBar(AppState* s) {
  ImGui::Separator();
  FrameStats& f = s->frame;
  if (f.refresh) {
    f.Recent(&f.shown_cpu_ms, &f.shown_cpu_max_ms);
    f.shown_train_ms = f.train_ms;
    f.shown_fps = ImGui::GetIO().Framerate;
  }
  if (f.shown_train_ms > 0)
    ImGui::TextDisabled("frame %.2f ms CPU (max %.0f) + %.1f ms training", f.shown_cpu_ms, f.shown_cpu_max_ms,
                        f.shown_train_ms);
  else
    ImGui::TextDisabled("frame %.2f ms CPU (max %.0f)", f.shown_cpu_ms, f.shown_cpu_max_ms);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "CPU time of App::Frame(): the median of the last 120 frames, and the longest of them (a file "
        "read or a texture upload); GPU time not included. Refreshed twice a second, once in 2 s while the "
        "head shown is being read");
  ImGui::SameLine();
  ImGui::TextDisabled("|  %.0f fps", f.shown_fps);
  const float help_x = ImGui::GetWindowWidth() - ImGui::CalcTextSize("? help").x - 16;
  if (!s->message.empty()) {
    ImGui::SameLine();
    // Clipped before "? help" so a long message never runs into it; the whole text on hover.
    const ImVec2 p = ImGui::GetCursorScreenPos();
    const float clip_x = ImGui::GetWindowPos().x + help_x - 8;
    ImGui::PushClipRect(p, ImVec2(clip_x, p.y + ImGui::GetFrameHeight()), true);
    ImGui::TextColored(s->message_is_error ? kErrorColour : ImVec4(0.6f, 0.9f, 0.6f, 1), "|  %s", s->message.c_str());
    ImGui::PopClipRect();
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", s->message.c_str());
  }
  ImGui::SameLine(help_x);
  ImGui::TextDisabled("? help");
  if (ImGui::IsItemClicked()) s->show_help = true;
}

// A bullet whose text wraps at the window's edge, its lines under its first (BulletText does not
// wrap: the help's longer lines were cut off).
static void HelpBullet(const char* text) {
  ImGui::Bullet();
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextUnformatted(text);
  ImGui::PopTextWrapPos();
}

void DrawHelpWindow(AppState* s) {
  if (!s->show_help) return;
  const ImGuiIO& io = ImGui::GetIO();
  // As wide as the lines want, within the viewer (an embed can be 640 x 360): wider text wraps, and a
  // taller list scrolls.
  const ImVec2 fit(std::max(200.0f, std::min(640.0f, io.DisplaySize.x - 32)), std::max(120.0f, io.DisplaySize.y - 32));
  ImGui::SetNextWindowSize(ImVec2(fit.x, 0), ImGuiCond_Appearing);
  ImGui::SetNextWindowSizeConstraints(ImVec2(160, 100), fit);
  ImGui::SetNextWindowPos(ImVec2(io.DisplaySize.x * 0.5f, io.DisplaySize.y * 0.5f), ImGuiCond_Appearing,
                          ImVec2(0.5f, 0.5f));
  if (ImGui::Begin("Help", &s->show_help, ImGuiWindowFlags_NoCollapse)) {
    ImGui::TextUnformatted("Keyboard");
    HelpBullet("Space: play / pause the animation");
    HelpBullet("Left / Right: step back / forward");
    HelpBullet("Home / End: first / last step");
    HelpBullet("Up / Down: previous / next head; Page Up / Page Down: previous / next layer");
    char line[64];
    for (int k = 0; k < (int)s->offered.size() && k < 9; ++k) {
      std::snprintf(line, sizeof(line), "%d: %s view", k + 1, ViewInfoAt(s->offered[(size_t)k]).label);
      HelpBullet(line);
    }
    HelpBullet("Ctrl+O: open a file; Ctrl+S: save the heatmap as SVG; Ctrl+Shift+S: the view as PNG (2x)");
    HelpBullet("? or h: this help");
    ImGui::TextUnformatted("Mouse");
    HelpBullet("Hover a cell: tokens, weight, rank and arithmetic");
    HelpBullet("Wheel: zoom around the cursor; drag: pan; double-click: reset");
    HelpBullet("Right-click a cell (opened files): hide its key token; the sidebar lists hidden tokens");
  }
  ImGui::End();
}

}  // namespace attnviz
