// attnviz view "train": a fresh seq2seq model trained live in time slices (a few ms per frame),
// its loss / AER / exact-match curves, and the probe sentence's alignment per epoch, scrubbable
// from the uniform grey blur of epoch 0 to sharp word alignments.
#pragma once
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "app/examples.h"
#include "app/heatmap_widget.h"
#include "app/train_runner.h"
#include "app/view_module.h"
#include "core/seq2seq/trainer.h"

namespace attnviz {

struct TrainViewState {
  int kind = 0;                                     // seq2seq::ModelKind
  int task = 0;                                     // seq2seq::Task
  int seed = 1;                                     // corpus, weights and shuffling seed
  float budget_ms = 12.0f;                          // training time per frame, when it runs in frames
  bool running = false;                             // training advances
  std::string where;                                // "" = the default (a thread, a worker), or "frames"
  std::unique_ptr<TrainRunner> runner;              // the run (null until the tab is first shown)
  std::string note;                                 // e.g. why it fell back to training in frames
  std::string error;                                // why Init failed
  int probe_epoch = 0;                              // probe snapshot shown (scrubber)
  bool follow_latest = true;                        // the scrubber follows the newest epoch
  float probe_position = 0;                         // fractional epoch position while playing the probe frames
  bool probe_playing = false;                       // animating through the snapshots
  AttentionMap probe_a, probe_b;                    // snapshots at floor/ceil of the probe position
  HeatmapViewState widget;                          // heatmap widget state
  std::vector<float> plot_loss, plot_aer, plot_em;  // reused plot buffers
  int curves_drawn = 0;                             // plots drawn last frame
  std::chrono::steady_clock::time_point advanced;   // the last frame's Advance (Animating's frame rate)
  // The runner holds a run made ready when the view was first shown (its epoch-0 probe drawn, the
  // worker's code compiled), paused until Train starts it: nothing of that lands on the first frames
  // of training (a worker started by Train made the first probe's frame 20-40 ms, docs/PERFORMANCE.md).
  bool prepared = false;
  bool prepare_tried = false;                       // a failed one is not tried again every frame
  int run_kind = -1, run_task = -1, run_seed = -1;  // the settings the runner's run was started with
  bool RunHasSettings() const;                      // the runner's run is for kind, task and seed
};

class TrainView : public ViewModule {
 public:
  void Draw(AppState* s) override;
  bool Animating(const AppState*) const override;
  bool HoveredCell(int* row, int* col) const override {
    *row = state.widget.hover_row, *col = state.widget.hover_col;
    return *row >= 0;
  }
  void Describe(AppState* s, JsonWriter* w) override;
  void DescribeHeatmaps(AppState* s, JsonWriter* w) override;
  // train start|pause|resume|budget MS|where frames|auto|bahdanau|luong|transformer
  bool RunCommand(AppState* s, const CommandArgs& c, Status* result) override;
  void Advance(AppState* s, float dt) override;  // one training slice, and the probe replay
  void ReleaseTextures(AppState* s) override;
  const char* SidebarAbout() const override;
  // The probe sentence's map at the shown epoch, with the style DrawProbe draws it with.
  bool ShownMap(AppState* s, const AttentionMap** map, HeatmapStyle* style, std::string* name) override;

  TrainViewState state;  // the trainer, the curves, the probe scrubber

 private:
  // A fresh model with random weights; paused when !running (a prepared run, TrainViewState::prepared).
  Status Start(AppState* s, bool running);
  void Prepare(AppState* s);  // a paused run for the settings shown, when none is there or they changed
  Status Train(AppState* s);  // the Train button: starts the prepared run, or a fresh one
  const TrainProgress& progress() const { return state.runner->progress(); }
  void DrawControls(AppState* s);
  void DrawCurves();
  void DrawProbe(AppState* s);
};

}  // namespace attnviz
