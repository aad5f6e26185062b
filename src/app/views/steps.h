// attnviz view "steps": for one query row, the whole computation the way the seeds write it out
// (q, each k, q.k, scaling, mask, exp, sum, softmax weight, each value scaled by its weight, the
// context vector) as tables. q, k, v, the score function and the temperature are editable and
// recompute live through the core.
#pragma once
#include <string>
#include <vector>

#include "app/view_module.h"
#include "app/views/steps_neuron.h"

namespace attnviz {

struct StepsViewState {
  int row = 0;                 // selected query row
  std::string error;           // last RecomputeExample error, shown in red
  std::vector<float> context;  // [d_v] context vector of the row, last frame
  int recomputes = 0;          // RecomputeExample calls made by edits
  int shown_row = -1;          // row whose table was drawn last frame, -1 none
  bool table_visible = false;
  float scroll_y = 0.0f;  // how far the panel below the controls is scrolled        // the table's header and first row
                          // were on screen last frame
  std::vector<float> shown_scores;   // [n_k] raw scores the table showed
  std::vector<float> shown_weights;  // [n_k] weights the table showed
  QueryKeyProductShown qk;           // the q ∘ k product drawn last frame (steps_neuron.h)
};

class StepsView : public ViewModule {
 public:
  void Draw(AppState* s) override;
  void Describe(AppState* s, JsonWriter* w) override;
  // steps-row R | steps-score NAME | steps-temperature T | steps-set q|k|v ROW COL VALUE
  bool RunCommand(AppState* s, const CommandArgs& c, Status* result) override;
  void OnExampleChanged(AppState* s) override;  // back to row 0, no error

  StepsViewState state;  // the row, the last error, what the table showed
};

}  // namespace attnviz
