// attnviz view "steps": the query-key product per dimension (BertViz's neuron view). For query
// row r, one line per key j: the elementwise product q_r ∘ k_j as coloured cells (the diverging
// colormap, centred at 0, scaled by the row's largest |product|), then Σ_d q_rd k_jd = q_r·k_j
// and the score and weight it leads to. Works from the step inputs or a file's own q and k.
#pragma once
#include <string>
#include <vector>

#include "app/examples.h"
#include "core/attention.h"

namespace attnviz {

class JsonWriter;

struct QueryKeyProductShown {
  int row = -1;                 // query row drawn last frame, -1 none
  int dims = 0;                 // d
  std::string source;           // "inputs" (the step inputs) or "file" (the file's own q and k)
  std::vector<float> sums;      // [n_k] Σ_d q ∘ k_j as drawn
  std::vector<float> products;  // [n_k, d] q ∘ k_j, row-major, for maps up to 4096 products
  std::vector<float> scores;    // [n_k] the score shown beside each sum
};

// Draws the product for row r of q [n_q, d] and k [n_k, d]; scores [n_k] (may be null) are shown
// beside the sums under score_label ("q·k", "q·k / √d", ...), weights [n_k] (may be null) after them.
void DrawQueryKeyProduct(const MatrixRM& q, const MatrixRM& k, int r, const std::vector<std::string>& key_labels,
                         const float* scores, const char* score_label, const float* weights, const char* source,
                         QueryKeyProductShown* shown);
// A map from a file that carries its own q and k (format version 2, docs/FORMATS.md): a query
// row picker and the product with scores q·k / √d. False (nothing drawn) when the map has none
// or their shapes do not match the map (tokens hidden).
bool DrawFileQueryKey(const AttentionMap& m, int* row, QueryKeyProductShown* shown);
// describe().steps.qk: {row, dims, source, sums, scores, products}.
void DescribeQueryKeyProduct(JsonWriter* w, const QueryKeyProductShown& shown);

}  // namespace attnviz
