#include "app/app.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <sstream>

#include "app/app_state.h"
#include "embedded_font.h"
#include "imgui.h"

namespace attnviz {

const char* ViewName(View v) {
  switch (v) {
    case View::Heatmap: return "heatmap";
    case View::Lines: return "lines";
    case View::Grid: return "grid";
    case View::Steps: return "steps";
    case View::Compare: return "compare";
    case View::Translate: return "translate";
    case View::Train: return "train";
    default: return "?";
  }
}

bool ParseView(const std::string& s, View* out) {
  for (int i = 0; i < (int)View::Count; ++i) {
    if (s == ViewName((View)i)) {
      *out = (View)i;
      return true;
    }
  }
  return false;
}

void AppState::Notify(const std::string& text, bool error) {
  message = text;
  message_is_error = error;
  message_time = ImGui::GetTime();
}

void SelectExample(AppState* s, int index) {
  if (index < 0 || index >= (int)s->examples.size()) return;
  Status st = EnsureExampleBuilt(&s->examples[index]);
  if (!st) {
    s->Notify(st.message, true);
    return;
  }
  s->current = index;
  s->current_map = 0;
  // Free the GPU copies of the previous example before forgetting the widget states.
  auto reset = [s](HeatmapViewState& v) {
    if (s->env.renderer) {
      s->renderer.Release(&v.tex);
      s->renderer.Release(&v.tex_next);
    }
    v = HeatmapViewState{};
  };
  reset(s->main_view);
  for (auto& v : s->compare_views) reset(v);
  for (auto& v : s->thumbs) reset(v);
  s->thumbs.assign(s->Current().maps.size(), HeatmapViewState{});
  s->timeline.Reset(TimelineMode::Decoding, (int)s->CurrentMap().weights.rows());
}

namespace {

// Latin-1 + Latin Extended-A, General Punctuation, super/subscripts, arrows, math operators, Greek, Cyrillic.
const ImWchar kGlyphRanges[] = {0x0020, 0x017F, 0x0370, 0x03FF, 0x0400, 0x04FF, 0x2000, 0x206F,
                                0x2070, 0x209F, 0x2190, 0x21FF, 0x2200, 0x22FF, 0x25A0, 0x25FF, 0};

void BuildFonts(float dpi_scale) {
  ImGuiIO& io = ImGui::GetIO();
  io.Fonts->Clear();
  const EmbeddedFile* font = attnviz_embedded_font_find("DejaVuSans.ttf");
  ImFontConfig cfg;
  cfg.FontDataOwnedByAtlas = false;  // the bytes are static, embedded at build time
  cfg.OversampleH = 2;
  cfg.OversampleV = 1;
  const float size = 15.0f * dpi_scale;
  if (font) {
    io.Fonts->AddFontFromMemoryTTF(const_cast<unsigned char*>(font->data), (int)font->size, size, &cfg, kGlyphRanges);
  } else {
    io.Fonts->AddFontDefault();
  }
  io.FontGlobalScale = 1.0f / dpi_scale;
}

void ApplyStyle() {
  ImGui::StyleColorsDark();
  ImGuiStyle& st = ImGui::GetStyle();
  st.WindowRounding = 0;
  st.FrameRounding = 3;
  st.GrabRounding = 3;
  st.TabRounding = 3;
  st.WindowBorderSize = 0;
  st.ItemSpacing = ImVec2(8, 6);
  st.Colors[ImGuiCol_WindowBg] = ImVec4(0.10f, 0.10f, 0.12f, 1.0f);
  st.Colors[ImGuiCol_ChildBg] = ImVec4(0.12f, 0.12f, 0.14f, 1.0f);
}

void HelpMarker(const char* text) {
  ImGui::SameLine();
  ImGui::TextDisabled("(?)");
  if (ImGui::IsItemHovered()) {
    ImGui::BeginTooltip();
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 30);
    ImGui::TextUnformatted(text);
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
  }
}

void DrawExamplePicker(AppState* s);
void DrawStyleControls(AppState* s);
void DrawMatrixInfo(AppState* s);

void DrawSidebar(AppState* s) {
  const bool model_view = s->view == View::Translate || s->view == View::Train;
  if (model_view) {
    ImGui::TextDisabled("TRANSLATION MODEL");
    ImGui::PushTextWrapPos(0);
    ImGui::TextUnformatted(s->view == View::Translate
                               ? "A sequence-to-sequence model trained by attnviz on a small English-French grammar. "
                                 "Type a sentence and press Enter: the words appear one by one while the alignment "
                                 "matrix fills in, row by row, as in the figures of Bahdanau et al. (2015)."
                               : "Train a fresh model in this page. Its attention starts as a uniform grey blur and "
                                 "sharpens into word alignments; the probe sentence shows it epoch by epoch.");
    ImGui::PopTextWrapPos();
    ImGui::Separator();
  } else {
    DrawExamplePicker(s);
  }
  DrawStyleControls(s);
  if (!model_view) DrawMatrixInfo(s);
}

void DrawExamplePicker(AppState* s) {
  ImGui::TextDisabled("EXAMPLE");
  ImGui::SetNextItemWidth(-1);
  if (ImGui::BeginCombo("##example", s->Current().title.c_str())) {
    for (int i = 0; i < (int)s->examples.size(); ++i) {
      if (ImGui::Selectable(s->examples[i].title.c_str(), i == s->current)) SelectExample(s, i);
    }
    ImGui::EndCombo();
  }
  ImGui::PushTextWrapPos(0);
  ImGui::TextUnformatted(s->Current().description.c_str());
  ImGui::PopTextWrapPos();
  ImGui::Separator();
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
  HelpMarker("global: one scale for the matrix (weights 0..1).\nper row: each row divided by its maximum.\n"
             "log: log10 of the weight between the range limits, shows small weights.");
  s->style.scale = (ScaleMode)scale;
  if (s->style.scale == ScaleMode::Log) {
    ImGui::SetNextItemWidth(-1);
    ImGui::SliderFloat("##logmin", &s->style.vmin, 1e-6f, 0.5f, "min %.0e", ImGuiSliderFlags_Logarithmic);
  } else if (s->style.scale == ScaleMode::Global) {
    ImGui::SetNextItemWidth(-1);
    ImGui::DragFloatRange2("##range", &s->style.vmin, &s->style.vmax, 0.005f, 0.0f, 1.0f, "min %.2f", "max %.2f");
  }
  ImGui::Checkbox("numbers", &s->style.show_numbers);
  ImGui::SameLine();
  ImGui::Checkbox("grid", &s->style.show_grid);
  ImGui::SameLine();
  ImGui::Checkbox("labels", &s->style.show_labels);
  // Colour bar.
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const float w = ImGui::GetContentRegionAvail().x, h = 10;
  const uint8_t* lut = ColormapLut(s->style.colormap);
  for (int i = 0; i < 64; ++i) {
    const uint8_t* e = lut + (i * 255 / 63) * 4;
    dl->AddRectFilled(ImVec2(p.x + w * i / 64, p.y), ImVec2(p.x + w * (i + 1) / 64 + 1, p.y + h), IM_COL32(e[0], e[1], e[2], 255));
  }
  ImGui::Dummy(ImVec2(w, h));
  ImGui::TextDisabled("%s", s->style.scale == ScaleMode::PerRow ? "0" : (s->style.scale == ScaleMode::Log ? "min" : "vmin"));
  ImGui::SameLine(w - ImGui::CalcTextSize("max").x);
  ImGui::TextDisabled("max");
  ImGui::Separator();
}

void DrawMatrixInfo(AppState* s) {
  const Example& ex = s->Current();
  if (ex.maps.size() > 1) {
    ImGui::TextDisabled("LAYER / HEAD");
    int layer = s->current_map / std::max(1, ex.heads), head = s->current_map % std::max(1, ex.heads);
    bool ch = false;
    ImGui::SetNextItemWidth(-1);
    ch |= ImGui::SliderInt("##layer", &layer, 0, ex.layers - 1, "layer %d");
    ImGui::SetNextItemWidth(-1);
    ch |= ImGui::SliderInt("##head", &head, 0, ex.heads - 1, "head %d");
    if (ch) s->current_map = std::clamp(layer * ex.heads + head, 0, (int)ex.maps.size() - 1);
    ImGui::Separator();
  }
  const AttentionMap& m = s->CurrentMap();
  ImGui::TextDisabled("MATRIX");
  ImGui::Text("%d x %d  (target x source)", (int)m.weights.rows(), (int)m.weights.cols());
  if (!m.name.empty()) ImGui::Text("%s", m.name.c_str());
}

void DrawStatusBar(AppState* s) {
  ImGui::Separator();
  if (s->train_ms > 0)
    ImGui::TextDisabled("frame %.2f ms CPU + %.1f ms training", s->frame_cpu_ms_avg, s->train_ms);
  else
    ImGui::TextDisabled("frame %.2f ms CPU", s->frame_cpu_ms_avg);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("CPU time of App::Frame(), mean of the last 120 frames (GPU time not included)");
  ImGui::SameLine();
  ImGui::TextDisabled("|  %.0f fps", ImGui::GetIO().Framerate);
  if (!s->message.empty()) {
    ImGui::SameLine();
    ImGui::TextColored(s->message_is_error ? ImVec4(1.0f, 0.45f, 0.4f, 1) : ImVec4(0.6f, 0.9f, 0.6f, 1), "|  %s",
                       s->message.c_str());
  }
  ImGui::SameLine(ImGui::GetWindowWidth() - ImGui::CalcTextSize("? help").x - 16);
  ImGui::TextDisabled("? help");
}

void DrawHelpWindow(AppState* s) {
  if (!s->show_help) return;
  ImGui::SetNextWindowSize(ImVec2(460, 0), ImGuiCond_Appearing);
  ImGui::SetNextWindowPos(ImVec2(ImGui::GetIO().DisplaySize.x * 0.5f, ImGui::GetIO().DisplaySize.y * 0.5f), ImGuiCond_Appearing, ImVec2(0.5f, 0.5f));
  if (ImGui::Begin("Help", &s->show_help, ImGuiWindowFlags_NoCollapse)) {
    ImGui::TextUnformatted("Keyboard");
    ImGui::BulletText("Space: play / pause the animation");
    ImGui::BulletText("Left / Right: step back / forward");
    ImGui::BulletText("Home / End: first / last step");
    ImGui::BulletText("1-7: heatmap, lines, grid, steps, compare, translate, train");
    ImGui::BulletText("? or h: this help");
    ImGui::TextUnformatted("Mouse");
    ImGui::BulletText("Hover a cell: tokens, weight, rank and arithmetic");
    ImGui::BulletText("Wheel: zoom around the cursor; drag: pan; double-click: reset");
  }
  ImGui::End();
}

bool KeyPressed(ImGuiKey key, bool repeat = true) { return ImGui::IsKeyPressed(ImGui::GetKeyIndex(key), repeat); }

void HandleShortcuts(AppState* s) {
  ImGuiIO& io = ImGui::GetIO();
  if (io.WantTextInput) return;
  if (KeyPressed(ImGuiKey_Space, false)) {
    if (s->timeline.playing) s->timeline.playing = false; else s->timeline.Play();
  }
  if (KeyPressed(ImGuiKey_RightArrow)) s->timeline.StepForward();
  if (KeyPressed(ImGuiKey_LeftArrow)) s->timeline.StepBack();
  if (KeyPressed(ImGuiKey_Home, false)) s->timeline.Home();
  if (KeyPressed(ImGuiKey_End, false)) s->timeline.End();
  // imgui 1.86 names only A/C/V/X/Y/Z; both platforms use GLFW, whose letter key codes are ASCII.
  if (io.KeyCtrl && ImGui::IsKeyPressed('O', false)) s->open_dialog_requested = true;
  if (io.KeyCtrl && ImGui::IsKeyPressed('S', false)) QueueSvgDownload(s);
  // imgui 1.86 has no named keys for digits or F-keys: use the typed characters.
  for (int i = 0; i < io.InputQueueCharacters.Size; ++i) {
    const ImWchar c = io.InputQueueCharacters[i];
    if (c == '?' || c == 'h') s->show_help = !s->show_help;
    if (c >= '1' && c < '1' + (int)View::Count) s->view = (View)(c - '1');
  }
}

}  // namespace

App::App() : s_(new AppState) {}
App::~App() = default;

bool App::Init(const AppConfig& config, std::string* error) {
  AppState* s = s_.get();
  s->config = config;
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;  // no imgui.ini next to the page or the binary
  ApplyStyle();
  s->dpi_scale = std::max(0.5f, config.dpi_scale);
  BuildFonts(s->dpi_scale);
  if (!config.headless && !s->renderer.Init(error)) return false;
  s->draw_pool.reserve(1024);
  s->env.renderer = config.headless ? nullptr : &s->renderer;
  s->env.pool = &s->draw_pool;
  Status st = BuildExamples(&s->examples);
  if (!st) {
    *error = st.message;
    return false;
  }
  int first = 0;
  const std::string want = config.example.empty() ? "translation" : config.example;
  for (int i = 0; i < (int)s->examples.size(); ++i)
    if (s->examples[i].id == want) first = i;
  SelectExample(s, first);
  s->models = std::make_unique<ModelPanels>();
  InitModelPanels(s->models.get());
  // The page opens on the translation model; embedded viewers and explicit examples on the heatmap.
  s->view = (config.embed || !config.example.empty()) ? View::Heatmap : View::Translate;
  if (!config.view.empty() && !ParseView(config.view, &s->view)) {
    *error = "unknown view '" + config.view + "'";
    return false;
  }
  return true;
}

void App::Shutdown() {
  AppState* s = s_.get();
  if (s->config.headless) return;
  auto release = [&](HeatmapViewState& v) {
    s->renderer.Release(&v.tex);
    s->renderer.Release(&v.tex_next);
  };
  release(s->main_view);
  for (auto& v : s->thumbs) release(v);
  for (auto& v : s->compare_views) release(v);
  s->renderer.Shutdown();
}

bool App::SetDpiScale(float dpi_scale) {
  AppState* s = s_.get();
  dpi_scale = std::max(0.5f, dpi_scale);
  if (std::abs(dpi_scale - s->dpi_scale) < 1e-3f) return false;
  s->dpi_scale = dpi_scale;
  BuildFonts(dpi_scale);
  return true;
}

float App::LastFrameCpuMs() const { return s_->frame_cpu_ms; }

bool App::PopDownload(std::string* name, std::string* mime, std::vector<unsigned char>* bytes) {
  if (s_->downloads.empty()) return false;
  PendingDownload& d = s_->downloads.front();
  *name = std::move(d.name);
  *mime = std::move(d.mime);
  *bytes = std::move(d.bytes);
  s_->downloads.erase(s_->downloads.begin());
  return true;
}

bool App::PopOpenDialogRequest() {
  const bool r = s_->open_dialog_requested;
  s_->open_dialog_requested = false;
  return r;
}

void App::Frame() {
  AppState* s = s_.get();
  const auto t0 = std::chrono::steady_clock::now();
  s->draw_pool.clear();
  ImGuiIO& io = ImGui::GetIO();
  HandleShortcuts(s);
  s->timeline.Advance(io.DeltaTime);
  s->models->translate.timeline.Advance(io.DeltaTime);
  s->train_ms = 0;
  AdvanceTraining(s);

  ImGui::SetNextWindowPos(ImVec2(0, 0));
  ImGui::SetNextWindowSize(io.DisplaySize);
  const ImGuiWindowFlags flags = ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                                 ImGuiWindowFlags_NoBringToFrontOnFocus | ImGuiWindowFlags_NoSavedSettings |
                                 (s->config.embed ? 0 : ImGuiWindowFlags_MenuBar);
  ImGui::Begin("attnviz", nullptr, flags);
  if (!s->config.embed && ImGui::BeginMenuBar()) {
    if (ImGui::BeginMenu("File")) {
      if (ImGui::MenuItem("Open attention file...", "Ctrl+O")) s->open_dialog_requested = true;
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("JSON or NPZ exported from your model (docs/FORMATS.md); you can also drop it on the window");
      ImGui::Separator();
      if (ImGui::MenuItem("Save heatmap as SVG", "Ctrl+S")) QueueSvgDownload(s);
      if (ImGui::MenuItem("Export attention JSON")) QueueJsonDownload(s);
      ImGui::EndMenu();
    }
    if (ImGui::BeginMenu("Examples")) {
      for (int i = 0; i < (int)s->examples.size(); ++i)
        if (ImGui::MenuItem(s->examples[i].title.c_str(), nullptr, i == s->current)) SelectExample(s, i);
      ImGui::EndMenu();
    }
    if (ImGui::BeginMenu("View")) {
      for (int i = 0; i < (int)View::Count; ++i) {
        char key[4];
        std::snprintf(key, sizeof(key), "%d", i + 1);
        if (ImGui::MenuItem(ViewName((View)i), key, s->view == (View)i)) s->view = (View)i;
      }
      ImGui::EndMenu();
    }
    if (ImGui::BeginMenu("Help")) {
      if (ImGui::MenuItem("Keyboard and mouse", "?")) s->show_help = true;
      ImGui::EndMenu();
    }
    ImGui::TextDisabled("  attnviz: attention, made visible");
    ImGui::EndMenuBar();
  }

  const float status_h = ImGui::GetFrameHeightWithSpacing() + 4;
  const float sidebar_w = s->config.embed ? 0.0f : std::min(300.0f, io.DisplaySize.x * 0.28f);
  if (sidebar_w > 0) {
    ImGui::BeginChild("sidebar", ImVec2(sidebar_w, -status_h), true);
    DrawSidebar(s);
    ImGui::EndChild();
    ImGui::SameLine();
  }
  ImGui::BeginChild("main", ImVec2(0, -status_h), false);
  if (ImGui::BeginTabBar("views")) {
    // A view chosen by keyboard or command selects its tab once; otherwise the tab bar decides.
    const bool forced = s->view != s->tab_view;
    const char* labels[] = {"Heatmap", "Lines", "Grid", "Step by step", "Compare", "Translate", "Train"};
    for (int i = 0; i < (int)View::Count; ++i) {
      const ImGuiTabItemFlags f = (forced && s->view == (View)i) ? ImGuiTabItemFlags_SetSelected : 0;
      if (ImGui::BeginTabItem(labels[i], nullptr, f)) {
        if (!forced) s->view = (View)i;
        ImGui::EndTabItem();
      }
    }
    ImGui::EndTabBar();
    s->tab_view = s->view;
  }
  switch (s->view) {
    case View::Heatmap: DrawHeatmapView(s); break;
    case View::Lines: DrawLinesView(s); break;
    case View::Grid: DrawGridView(s); break;
    case View::Steps: DrawStepsView(s); break;
    case View::Compare: DrawCompareView(s); break;
    case View::Translate: DrawTranslateView(s); break;
    case View::Train: DrawTrainView(s); break;
    default: break;
  }
  ImGui::EndChild();
  DrawStatusBar(s);
  ImGui::End();
  DrawHelpWindow(s);

  const auto t1 = std::chrono::steady_clock::now();
  // The training slice is budgeted separately (Train tab); the readout shows the UI's own cost.
  s->frame_cpu_ms = std::chrono::duration<float, std::milli>(t1 - t0).count() - s->train_ms;
  s->frame_cpu_ring[s->frame_cpu_count++ % 120] = s->frame_cpu_ms;
  const int n = std::min(s->frame_cpu_count, 120);
  float sum = 0;
  for (int i = 0; i < n; ++i) sum += s->frame_cpu_ring[i];
  s->frame_cpu_ms_avg = sum / n;
}

void App::OpenFileBytes(const std::string& name, const unsigned char* data, size_t size) {
  OpenAttentionFile(s_.get(), name, data, size);
}

std::string App::Command(const std::string& command) { return RunCommand(s_.get(), command); }

const std::string& App::DescribeJson() {
  DescribeState(s_.get(), &s_->describe_json);
  return s_->describe_json;
}

}  // namespace attnviz
