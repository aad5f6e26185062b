// attnviz app: the view module interface and the registry of views.
//
// A view is one file pair, src/app/views/<name>.{h,cpp}, and one row of the table in
// src/app/views/registry.cpp. Nothing else in the app names a view.
//
//   CommandArgs   one command line split into a verb and words ("steps-set q 0 1 2.5")
//   ViewModule    a view: the object is the view's state (one per AppState, no statics), its
//                 methods draw it, describe what it drew, and run its commands
//   ViewInfo      one row of the registry: name, tab label, help text and a factory
//   ViewCount / ViewInfoAt / FindView   the registry, in tab order (keys 1..N)
#pragma once
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"

namespace attnviz {

struct AppState;
struct AttentionMap;
struct HeatmapStyle;
struct Timeline;
class JsonWriter;

// ---------------------------------------------------------------------------
// CommandArgs: "verb word word ..." (the embed API's command(), tests, --command)
// ---------------------------------------------------------------------------
struct CommandArgs {
  std::string verb;                // first word, e.g. "steps-set"
  std::string rest;                // everything after the verb and one space, e.g. "q 0 1 2.5"
  std::vector<std::string> words;  // rest split on whitespace: {"q", "0", "1", "2.5"}

  static CommandArgs Parse(const std::string& line);  // splits a command line
  const std::string& Word(size_t i) const;            // words[i], or "" past the end
  bool Int(size_t i, int* out) const;                 // words[i] as a whole decimal integer
  bool Float(size_t i, float* out) const;             // words[i] as a number (nan and inf allowed)
};

// ---------------------------------------------------------------------------
// ViewModule: what every view implements. AppState owns one instance per registry row.
// ---------------------------------------------------------------------------
class ViewModule {
 public:
  virtual ~ViewModule() = default;
  // Draws the view into the remaining space of the main panel (the tab bar is above it).
  virtual void Draw(AppState* s) = 0;
  // Members of the view's object in the describe JSON (the caller opened the object): what it
  // drew last frame, for browser tests and the embed API.
  virtual void Describe(AppState* s, JsonWriter* w) = 0;
  // Heatmaps this view drew last frame, as elements of describe's "heatmaps" array (called only
  // for the active view). Each element: {id, rect, view, rows, cols, rows_shown, weights?}.
  virtual void DescribeHeatmaps(AppState*, JsonWriter*) {}
  // Runs cmd if it is one of this view's commands: returns true and sets *result; else false.
  virtual bool RunCommand(AppState*, const CommandArgs&, Status*) { return false; }
  // Work done every frame whether or not the view is shown (training slices, animations).
  virtual void Advance(AppState*, float /*dt*/) {}
  // The app switched to another example (or opened a file): forget per-example state.
  virtual void OnExampleChanged(AppState*) {}
  // Frees the view's GPU textures (example switch and shutdown).
  virtual void ReleaseTextures(AppState*) {}
  // True while the view animates on its own (training, a decoding animation): the platform keeps
  // drawing frames; an idle viewer draws none.
  virtual bool Animating(const AppState*) const { return false; }
  // Background work between frames while the view is shown, until deadline (the browser's idle time:
  // a software renderer leaves the page's thread idle most of a frame). True if it did some.
  virtual bool Idle(AppState*, std::chrono::steady_clock::time_point /*deadline*/) { return false; }
  // The cell of the view's main heatmap under the mouse (for the embed API's hover event).
  virtual bool HoveredCell(int* /*row*/, int* /*col*/) const { return false; }
  // Text the sidebar shows instead of the example picker and matrix info, for views that do not
  // show the current example (Translate, Train); nullptr keeps the picker.
  virtual const char* SidebarAbout() const { return nullptr; }
  // Draws maps of a lazily read file whose rows are not all in memory (placeholders, overviews,
  // bands) and says which rows it draws (app/lazy_maps.h). Other views wait for the whole map.
  virtual bool DrawsLazyMaps() const { return false; }
  // Says now which rows of lazily read maps it will draw (a command changed the map between frames),
  // so the reads start before the next frame. False when it has nothing to say.
  virtual bool WantLazyMaps(AppState*) { return false; }
  // File > Save as SVG: a view that draws something else than the heatmap (lines) writes its own
  // SVG into *svg and returns true (*error set on failure); false = the map's heatmap SVG.
  virtual bool ExportSvg(AppState*, std::string* /*svg*/, Status* /*error*/) { return false; }
  // True: a PNG, GIF or WebM of the view shows only its figure (the heatmaps' labels and matrices,
  // the grid's heads, the lines' canvas: HeatmapEnv::figure_rect), not its controls: a figure for a
  // paper or a lesson. False: the whole view area (views whose titles, curves or tables belong in it).
  virtual bool ExportsFigureOnly() const { return false; }
  // What a figure of the view shows of the example's maps, for its file name: one head ("-layer1-head2",
  // MapSuffix), one layer's heads ("-layer1"), or "" (every head, or a map of the view's own), so that
  // figures of different heads do not share a name (app_export.cpp, FigureStem).
  virtual std::string FigureSuffix(const AppState*) const { return ""; }
  // The timeline the view animates instead of the example's (Translate: its decoding), or null:
  // the keys (Space, arrows, Home, End), play / pause / step, describe's timeline and the step
  // events act on it (AppState::ShownTimeline), so a GIF of the view animates what it shows.
  virtual Timeline* OwnTimeline() { return nullptr; }
  // The map the view colours with the sidebar's settings when it is not the current example's
  // (Translate: the translation; Train: the probe), the style it draws it with (*style comes in as
  // the sidebar's) and, when name is not null, its name for titles: the colour bar's numbers (every
  // frame, no name), describe's range and File > Save as SVG follow it (AppState::ColouredMap).
  // False: the example's map.
  virtual bool ShownMap(AppState*, const AttentionMap** /*map*/, HeatmapStyle* /*style*/, std::string* /*name*/) {
    return false;
  }
};

// ---------------------------------------------------------------------------
// The registry
// ---------------------------------------------------------------------------
struct ViewInfo {
  const char* name;                         // "heatmap": commands, ?view=, describe key
  const char* label;                        // "Heatmap": the tab text
  const char* help;                         // one line shown on hover over the tab
  std::unique_ptr<ViewModule> (*create)();  // a fresh module (its state at start)
};

template <class T>
std::unique_ptr<ViewModule> MakeView() {  // factory for ViewInfo::create
  return std::make_unique<T>();
}

int ViewCount();                        // rows in the registry
const ViewInfo& ViewInfoAt(int i);      // i in [0, ViewCount()), tab order
int FindView(const std::string& name);  // index of the view called name, -1 if none
std::string ViewNames();                // "heatmap, lines, ..." for error messages

}  // namespace attnviz
