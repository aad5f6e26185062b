// attnviz view "grid": every layer x head of the current example as a thumbnail (layers as
// rows, heads as columns), captioned with per-head statistics; a combo reorders the grid by a
// statistic, and a click opens the map in the heatmap view.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "app/heatmap_widget.h"
#include "app/view_module.h"
#include "core/head_stats.h"

namespace attnviz {

enum class GridSort { Layer, Entropy, MaxWeight, FirstToken, Diagonality, Count };
const char* GridSortName(GridSort k);                        // "layer", "entropy", "max_weight", ...
bool ParseGridSort(const std::string& name, GridSort* out);  // inverse of GridSortName

struct GridViewState {
  GridSort sort = GridSort::Layer;       // ordering of the thumbnails
  std::vector<int> order;                // [n_maps] map index at each grid position
  std::vector<HeadStats> stats;          // [n_maps] per map (core/head_stats.h)
  std::vector<uint8_t> stats_ok;         // [n_maps] 0 where ComputeHeadStats failed (non-finite weights)
  std::vector<uint64_t> stats_version;   // [n_maps] map version the stats belong to
  std::vector<HeatmapViewState> thumbs;  // [n_maps] thumbnail widgets (textures)
  std::vector<AttentionMap> pooled;      // [n_maps] a big map's max-pooled overview, shown as its thumbnail
  std::vector<uint64_t> pooled_of;       // [n_maps] the map version each was pooled from
  int pooled_now = 0;                    // overviews pooled this frame
  int clicked = -1;                      // map opened by the last click, -1 none
  int drawn = 0;                         // thumbnails drawn last frame
  int waiting = 0;                       // visible ones shown as placeholders (their uploads to come)
  int deferred = 0;                      // of those, ones whose map is in memory: the frame's upload budget ran out
  int overviews_shown = 0;               // of them, drawn from a lazily read file's thumbnails or overviews
  int thumbs_wanted = 0;                 // ... in cells small enough for its stored 64^2 thumbnails
  int stats_pending = 0;                 // maps whose statistics are not computed yet (a few ms per frame)
  bool order_stale = false;              // statistics came after this frame's order: one more frame sorts them
  int caption_level = 0;                 // how much the captions say (FitCaptions): 0 all, 2 least
  int caption_lines = 1;                 // lines a caption takes (2: a sorted grid's head, then value; 0: none)
  float caption_scale = 1;               // their font size, down to 0.7 to fit
  bool captions_cut = false;             // the widest caption does not fit even so (clipped)
  int stats_known = 0;                   // maps with statistics (the sort puts the rest last)
  HeadStatsAccumulator partial;          // a big head's statistics, computed over several frames
  int partial_map = -1;                  // which map (-1 none)
  uint64_t partial_version = 0;          // at which version
  float stats_ms = 0;                    // time spent on statistics last frame
  float pool_ms = 0;                     // time spent pooling an eager file's overviews last frame (pooled_now of them)
  float slice_ms = 0;  // an eager file's time for overviews, uploads and statistics last frame (GridSlice)
};

class GridView : public ViewModule {
 public:
  void Draw(AppState* s) override;
  void Describe(AppState* s, JsonWriter* w) override;
  void DescribeHeatmaps(AppState* s, JsonWriter* w) override;
  bool RunCommand(AppState* s, const CommandArgs& c, Status* result) override;  // grid-sort KEY
  void OnExampleChanged(AppState* s) override;
  bool DrawsLazyMaps() const override { return true; }
  bool ExportsFigureOnly() const override { return true; }  // the grid of heads, not the sort bar
  void ReleaseTextures(AppState* s) override;
  bool Animating(const AppState* s) const override;  // while statistics or thumbnails are to come
  bool Idle(AppState* s, std::chrono::steady_clock::time_point deadline) override;  // statistics

  GridViewState state;  // sort, order, statistics, thumbnails

 private:
  void DrawSingle(AppState* s);  // an example with one map: a big thumbnail and its statistics
  void DrawThumbnails(AppState* s, int heads, int grid_rows);
};

}  // namespace attnviz
