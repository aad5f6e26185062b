// attnviz app: the Translate and Train panels, driving the seq2seq models of src/core/seq2seq.
//
//   ModelSlot         a model the Translate panel can use (pretrained, embedded at build time, or
//                     the one being trained in this session)
//   TranslatePanel    sentence in, words out one by one while the alignment matrix fills in
//   TrainPanel        a fresh model trained live in time slices; loss / AER curves; the probe's
//                     alignment per epoch, scrubbable from uniform blur to sharp
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "app/examples.h"
#include "app/heatmap_widget.h"
#include "app/timeline.h"
#include "core/seq2seq/model.h"
#include "core/seq2seq/trainer.h"
#include "core/seq2seq/translate.h"

namespace attnviz {

struct AppState;

struct ModelSlot {
  std::string label;                 // menu text, e.g. "Bahdanau (RNNsearch), pretrained"
  std::string file;                  // embedded file name ("" for the session's trained model)
  bool loaded = false;               // model holds the weights
  std::string error;                 // why loading failed, if it did
  seq2seq::Model model;              // the weights
};

struct TranslatePanel {
  std::vector<ModelSlot> slots;      // pretrained models, then "trained in this session" when present
  int slot = 0;                      // chosen model
  char input[256] = "the european economic area";  // the sentence being translated
  seq2seq::Translation result;       // the last translation
  bool has_result = false;           // result is valid
  std::string error;                 // why the last translation failed
  std::vector<std::vector<seq2seq::Suggestion>> suggestions;  // per unknown source position
  int layer_head = -1;               // -1: mean over layers and heads; else layer * heads + head
  AttentionMap map;                  // what the heatmap shows (rows = emitted words)
  HeatmapViewState view;             // heatmap widget state
  Timeline timeline;                 // the decoding animation
  bool auto_translate = true;        // translate once at start so the page opens on a figure
};

struct TrainPanel {
  int kind = 0;                      // seq2seq::ModelKind
  int task = 0;                      // seq2seq::Task
  int seed = 1;                      // corpus, weights and shuffling seed
  float budget_ms = 12.0f;           // training time per frame (keeps the UI >= 50 fps)
  bool running = false;              // training advances every frame
  std::unique_ptr<seq2seq::Trainer> trainer;  // the model being trained (null before Start)
  std::string error;                 // why Init failed
  int probe_epoch = 0;               // probe snapshot shown (scrubber)
  bool follow_latest = true;         // the scrubber follows the newest epoch
  float probe_position = 0;          // fractional epoch position while playing the probe frames
  bool probe_playing = false;        // animating through the snapshots
  AttentionMap probe_a, probe_b;     // snapshots at floor/ceil of the probe position
  HeatmapViewState view;             // heatmap widget state
  std::vector<float> plot_loss, plot_aer, plot_em;  // reused plot buffers
};

struct ModelPanels {
  TranslatePanel translate;
  TrainPanel train;
  bool initialized = false;
};

void InitModelPanels(ModelPanels* p);          // lists the embedded pretrained models
void DrawTranslateView(AppState* s);           // the Translate tab
void DrawTrainView(AppState* s);               // the Train tab
void AdvanceTraining(AppState* s);             // one time slice of training (called every frame)
// Commands for tests and the embed API: "translate <sentence>", "train start|pause|reset",
// "model <index>". Returns "" on success, an error, or "?" if the command is not a model command.
std::string RunModelCommand(AppState* s, const std::string& verb, const std::string& arg);
void DescribeModelPanels(AppState* s, std::string* out);  // appends JSON fields (starting with a comma)

}  // namespace attnviz
