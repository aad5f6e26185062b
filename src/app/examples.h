// attnviz app: built-in examples, each computed by the attention core (never typed in).
//
//   AttentionMap   one labelled matrix: target tokens (rows) x source tokens (columns)
//   Example        a titled set of maps (layers x heads) plus the inputs that made it
//   BuildExamples  the examples menu: the seeds' worked examples, a translation figure,
//                  a causal self-attention
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/attention.h"

namespace attnviz {

class LazyMaps;  // app/lazy_maps.h

// A list of token labels shared by every map that uses it: the maps of a 32 x 32-head file hold
// one copy of the tokens, not 1024. Read like a vector; assign a vector to replace it.
class TokenList {
 public:
  TokenList() = default;
  TokenList(std::vector<std::string> v)  // NOLINT: implicit, so maps can be given plain vectors
      : list_(std::make_shared<const std::vector<std::string>>(std::move(v))) {}
  TokenList(std::initializer_list<std::string> v) : TokenList(std::vector<std::string>(v)) {}
  size_t size() const { return list_ ? list_->size() : 0; }                         // number of tokens
  bool empty() const { return size() == 0; }                                        // no tokens
  const std::string& operator[](size_t i) const { return (*list_)[i]; }             // token i (i < size())
  const std::vector<std::string>& vec() const { return list_ ? *list_ : Empty(); }  // the whole list
  std::vector<std::string>::const_iterator begin() const { return vec().begin(); }
  std::vector<std::string>::const_iterator end() const { return vec().end(); }
  bool operator==(const TokenList& o) const { return vec() == o.vec(); }

 private:
  static const std::vector<std::string>& Empty();
  std::shared_ptr<const std::vector<std::string>> list_;
};

// Statistics of a map's weights for the colour range, computed once per map version.
struct MapRangeStats {
  uint64_t version = ~0ull;  // map version they belong to (~0: not computed)
  bool full = false;         // percentiles and histogram computed too (else only max: the auto range)
  float max = 0;             // largest weight
  float p99 = 0, p999 = 0;   // 99th and 99.9th percentiles (of a sample of ~2^18 weights)
  uint32_t hist[64] = {};    // sampled weights in 64 equal bins over [0, max]
  int64_t count = 0;         // weights counted in hist
};

// A version no map has had before (process-wide, from 1). Textures and caches keyed by a map's
// address and version cannot mistake a new map at a freed map's address for the old one.
uint64_t NewMapVersion();

struct AttentionMap {
  std::string name;                    // e.g. "layer 1 / head 3"
  TokenList source_tokens;             // [n_k] column labels, along the top
  TokenList target_tokens;             // [n_q] row labels, down the left
  MatrixRM weights;                    // [n_q, n_k]
  MatrixRM q, k;                       // optional: the file's queries [n_q, d] and keys [n_k, d] (steps view)
  bool has_steps = false;              // steps holds the arithmetic of every cell
  AttentionSteps steps;                // raw/scaled/masked/exp/row sums, when has_steps
  uint64_t version = NewMapVersion();  // new whenever weights change (Touch: texture re-upload)
  mutable MapRangeStats range_stats;   // colour range statistics (heatmap_widget.cpp), a cache
  // Lazily read files (app/lazy_maps.h): the map is lazy_rows x lazy_cols, and `weights` holds its
  // rows [row_offset, row_offset + weights.rows()): all of them, a band a zoomed-in view asked for,
  // or none (not in memory yet).
  int lazy_rows = 0, lazy_cols = 0;  // the whole map's shape; 0 for an ordinary map (weights is all of it)
  int row_offset = 0;                // the first row held in weights

  int Rows() const { return lazy_rows ? lazy_rows : (int)weights.rows(); }  // n_q
  int Cols() const { return lazy_rows ? lazy_cols : (int)weights.cols(); }  // n_k
  void Touch() { version = NewMapVersion(); }                               // its weights changed
  bool Complete() const { return !lazy_rows || (row_offset == 0 && weights.rows() == lazy_rows); }  // all rows held
};

// The inputs of a small single-head computation, editable in the step-by-step view.
struct AttentionInputs {
  MatrixRM q;                             // [n_q, d]
  MatrixRM k;                             // [n_k, d]
  MatrixRM v;                             // [n_k, d_v]
  AttentionParams params;                 // score function, temperature, masks
  std::vector<std::string> query_labels;  // [n_q]
  std::vector<std::string> key_labels;    // [n_k]
};

struct Example {
  std::string id;                           // stable id, used by the embed API (?example=seed002)
  std::string file;                         // the opened file it comes from ("" for built-in examples)
  std::string set_name;                     // its attention set within that file ("" when the file has one)
  std::string kind;                         // "self", "causal", "cross" for opened files ("" built-in)
  std::vector<std::string> special_tokens;  // the file's own special tokens (its tokenizer), for hiding
  std::vector<AttentionMap> original_maps;  // the maps before tokens were hidden (token_filter.h), else empty
  std::string title;                        // menu text
  std::string description;                  // one paragraph shown under the title
  bool has_inputs = false;                  // inputs is valid (the step view can recompute it)
  AttentionInputs inputs;                   // the single-head computation behind maps[0]
  std::vector<AttentionMap> maps;           // maps[l * heads + h]
  int layers = 1;                           // for the grid view
  int heads = 1;                            // for the grid view: the most heads of any layer
  // Files whose layers differ in head count: index of each layer's first map (maps are not
  // padded). Empty when every layer has `heads` maps (map = layer * heads + head).
  std::vector<int> layer_first_map;

  void LayerHeadOf(int map, int* layer, int* head) const;  // which layer and head map is
  int MapOf(int layer, int head) const;                    // the map of a layer and head, clamped
  // Big examples are built on first use, not at start: builder fills maps (and layers/heads).
  Status (*builder)(Example* ex) = nullptr;
  // A lazily read file (safetensors): its heads come into `maps` on demand, under a memory budget;
  // shared by the examples of the file's sets. lazy_set is this example's set in it.
  std::shared_ptr<LazyMaps> lazy;
  int lazy_set = 0;
};

// The word before the decoding timeline's count: "rows" for self-attention (an encoder reads its
// sentence at once: the rows are queries, not words decoded), "decoded" otherwise.
const char* StepNoun(const Example& ex);

// Builds a lazy example if it has not been built yet (no-op otherwise).
Status EnsureExampleBuilt(Example* ex);

// Recomputes maps[0] (weights + steps) from inputs with the core. Returns the core's status.
Status RecomputeExample(Example* ex);

// Makes the score function's parameters usable for q [n_q, d_q], k [n_k, d_k]: identity-ish
// W (General) or W_q, W_k, v (Additive) when missing or mis-shaped; keeps valid ones.
void EnsureScoreParams(AttentionParams* p, const MatrixRM& q, const MatrixRM& k);

// Every built-in example, in menu order. Errors from the core are returned, not hidden.
Status BuildExamples(std::vector<Example>* out);

}  // namespace attnviz
