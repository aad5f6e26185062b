// attnviz view "translate": a sentence in, words out one by one while the alignment matrix
// fills in row by row, as in the figures of Bahdanau et al. (2015). The models come from
// AppState::models (pretrained, or trained in the Train view).
#pragma once
#include <string>
#include <vector>

#include "app/examples.h"
#include "app/heatmap_widget.h"
#include "app/timeline.h"
#include "app/view_module.h"
#include "core/seq2seq/figures.h"
#include "core/seq2seq/translate.h"

namespace attnviz {

struct TranslateViewState {
  char input[256] = "the european economic area";             // the sentence being translated
  float input_rect[4] = {0, 0, 0, 0};                         // where its box was drawn last frame
  seq2seq::Translation result;                                // the last translation
  bool has_result = false;                                    // result is valid
  std::string error;                                          // why the last translation failed
  std::vector<std::vector<seq2seq::Suggestion>> suggestions;  // per unknown source position
  int unknown_lines = 0;                                      // lines the unknown words took last frame
  int layer_head = -1;             // -1: mean over layers and heads; else layer * heads + head
  AttentionMap map;                // what the heatmap shows (rows = emitted words)
  HeatmapViewState widget;         // heatmap widget state
  Timeline timeline;               // the decoding animation
  bool auto_translate = true;      // translate once at start so the page opens on a figure
  std::string shown_words;         // the translation as drawn last frame (emitted words only)
  std::string loading;             // "loading the model (320 KB)" while its file is fetched (web build)
  bool retry_when_loaded = false;  // translate as soon as the model has arrived
  std::string figure;              // the figure sentence being shown ("a".."d", "es1".."es4"), "" none
  AttentionMap gold;               // its hand-made gold alignment (sure 1, possible 0.5), rows as decoded
  HeatmapViewState gold_widget;    // the gold heatmap beside the model's
  bool figure_scored = false;      // figure_exact / figure_aer hold the model's result
  bool figure_exact = false;       // the model's translation equals the figure's reference
  double figure_aer = 0;           // AER of the model's alignment against the gold
};

class TranslateView : public ViewModule {
 public:
  void Draw(AppState* s) override;
  bool Animating(const AppState*) const override { return state.timeline.playing; }
  bool HoveredCell(int* row, int* col) const override {
    *row = state.widget.hover_row, *col = state.widget.hover_col;
    return *row >= 0;
  }
  void Describe(AppState* s, JsonWriter* w) override;
  void DescribeHeatmaps(AppState* s, JsonWriter* w) override;
  // translate SENTENCE | model INDEX | figure a|b|c|d|es1..es4
  bool RunCommand(AppState* s, const CommandArgs& c, Status* result) override;
  void Advance(AppState* s, float dt) override;  // the animation; translates once a fetched model arrives
  void ReleaseTextures(AppState* s) override;
  const char* SidebarAbout() const override;
  bool ExportsFigureOnly() const override { return true; }  // the alignment (and gold), not the input bar
  Timeline* OwnTimeline() override { return state.has_result ? &state.timeline : nullptr; }  // the decoding
  // The translation's map (with the sidebar's style), once there is one.
  bool ShownMap(AppState* s, const AttentionMap** map, HeatmapStyle* style, std::string* name) override;

  TranslateViewState state;  // input, result, animation

 private:
  Status Translate(AppState* s);  // translates state.input with the chosen model
  void DrawInputBar(AppState* s);
  bool DrawUnknownWords(AppState* s);  // true when a suggestion was taken (translated again)
  void DrawOutputLine();
  Status PlayFigure(AppState* s, const std::string& id);  // types the figure's sentence with a model of its task
  void ScoreFigure(AppState* s);                          // gold map and verdict after a figure's translation
  void DrawFigurePicker(AppState* s);
  void DrawHeatmaps(AppState* s);  // the model's alignment, and the gold beside it
};

}  // namespace attnviz
