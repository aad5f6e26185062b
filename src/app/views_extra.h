// attnviz app: state and helpers of the lines, grid, step-by-step and compare views, kept
// out of AppState so those views can grow without touching the shared struct.
//
//   LinesViewState      what the lines view drew and what is hovered
//   GridViewState       the grid's sort key and current order
//   StepsViewState      the step-by-step view's query row and last error
//   CompareViewState    the two sides being compared and their cached results
//   ViewsState          all of the above, one per AppState (ViewsOf)
//   RunViewCommand      the views' commands (grid-sort, steps-set, compare-scores, ...)
//   AppendViewDescription  JSON fields for the browser tests (called by DescribeState)
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "app/app_state.h"
#include "core/head_stats.h"

namespace attnviz {

// Makes the score function's parameters usable for q [n_q, d_q], k [n_k, d_k]: identity-ish
// W (General) or W_q, W_k, v (Additive) when missing or mis-shaped; keeps valid ones.
void EnsureScoreParams(AttentionParams* p, const MatrixRM& q, const MatrixRM& k);

enum class GridSort { Layer, Entropy, MaxWeight, FirstToken, Diagonality, Count };
const char* GridSortName(GridSort k);  // "layer", "entropy", "max_weight", "first_token", "diagonality"

struct LinesViewState {
  int drawn = 0;               // lines drawn last frame (weight >= threshold)
  int hovered_source = -1;     // source token under the mouse, -1 none
  int hovered_target = -1;     // target token under the mouse, -1 none
  int rows_shown = 0;          // target rows shown (decoding step)
  float threshold = 0.01f;     // lines below this weight are skipped
  bool use_colormap = true;    // colour lines by the colormap (else a fixed accent)
  bool row_normalised = true;  // opacity = weight / row max (else the sidebar's scale)
  float effective_threshold = 0.01f;  // threshold used (raised when the lines exceed the budget)
  float rect[4] = {0, 0, 0, 0};       // x of the source dots, top, x of the target dots, bottom
  bool rect_valid = false;            // drawn this frame
  struct Line { int row, col; };      // one (target, source) pair to draw
  std::vector<Line> lines;        // cached lines (at most the line budget), rebuilt on change
  const void* lines_owner = nullptr;  // cache key: map, version, step, hovered token, threshold
  uint64_t lines_version = ~0ull;     // map version of the cached lines
  int lines_rows_shown = -1, lines_row = -2, lines_col = -2;  // step, hovered target, hovered source
  float lines_threshold = -1;         // the user's threshold they were built for
  std::vector<float> row_max;         // [n_q] row maxima of the map (per-row opacity)
  const void* row_max_owner = nullptr;  // map the maxima belong to
  uint64_t row_max_version = ~0ull;     // its version
  float source_label_w = 0, target_label_w = 0;  // cached label extents
  const void* labels_owner = nullptr;            // map the extents belong to
  uint64_t labels_version = ~0ull;               // its version
};

struct GridViewState {
  GridSort sort = GridSort::Layer;     // ordering of the thumbnails
  std::vector<int> order;              // [n_maps] map index at each grid position
  std::vector<HeadStats> stats;        // [n_maps] per map (core/head_stats.h)
  std::vector<uint8_t> stats_ok;       // [n_maps] 0 where ComputeHeadStats failed (non-finite weights)
  std::vector<uint64_t> stats_version; // [n_maps] map version the stats belong to
  const void* stats_owner = nullptr;   // example the stats belong to (address and index)
  int stats_example = -1;              // index of that example in AppState::examples
  int clicked = -1;                    // map opened by the last click, -1 none
};

struct StepsViewState {
  int row = 0;                 // selected query row
  std::string error;           // last RecomputeExample error, shown in red
  std::vector<float> context;  // [d_v] context vector of the row, last frame
  int recomputes = 0;          // RecomputeExample calls made by edits
  const void* owner = nullptr; // example the row belongs to (address and index)
  int owner_index = -1;        // index of that example
};

enum class CompareMode { ScoreFunctions, Maps };

struct CompareViewState {
  CompareMode mode = CompareMode::ScoreFunctions;  // what the two sides are
  ScoreFunction score[2] = {ScoreFunction::Dot, ScoreFunction::ScaledDot};  // left, right (ScoreFunctions)
  int map_index[2] = {0, 1};      // left, right (Maps)
  float diff_range = 1.0f;        // |difference| mapped to the diverging colormap's ends
  AttentionMap result[3];         // left, right (ScoreFunctions only), difference right - left
  std::string error[2];           // Attend() errors per side
  std::string diff_error;         // why there is no difference (shapes differ)
  float max_abs_diff = 0;         // max |right - left|
  int max_row = -1, max_col = -1; // where it is (-1 when the maps are identical)
  int hover_row = -1, hover_col = -1;  // cell hovered in any panel last frame
  int recomputes = 0;             // how many times the cache was refilled
  // Cache key: recompute only when one of these changes.
  bool valid = false;             // the cache holds a result
  int key_example = -1;           // example index
  const void* key_owner = nullptr;  // example address
  uint64_t key_version = ~0ull;   // map version(s) the result was computed from
  int key_mode = -1, key_a = -1, key_b = -1;  // mode and the two choices
};

struct ViewsState {
  const AppState* owner = nullptr;  // the AppState this belongs to (reset when it changes)
  int last_frame = -1;              // ImGui frame count when last asked (a new context restarts it)
  LinesViewState lines;             // view_lines.cpp
  GridViewState grid;               // view_grid.cpp
  StepsViewState steps;             // view_steps.cpp
  CompareViewState compare;         // view_compare.cpp
};

// The views' state for s (one instance, re-initialised when a different AppState asks).
ViewsState* ViewsOf(AppState* s);

// Inverse of GridSortName.
bool ParseGridSort(const std::string& name, GridSort* out);

// The views' commands (for the embed API and tests). Sets *handled when verb is one of them;
// returns "" on success, else the error.
//   grid-sort layer|entropy|max_weight|first_token|diagonality    lines-threshold X
//   steps-row R   steps-score NAME   steps-temperature T   steps-set q|k|v ROW COL VALUE
//   compare-scores NAME NAME   compare-maps I J   compare-range X
std::string RunViewCommand(AppState* s, const std::string& verb, const std::string& arg, bool* handled);

// Appends (starting with a comma) JSON fields describing the lines, grid, steps and compare views.
void AppendViewDescription(AppState* s, std::string* out);

}  // namespace attnviz
