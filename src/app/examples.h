// attnviz app: built-in examples, each computed by the attention core (never typed in).
//
//   AttentionMap   one labelled matrix: target tokens (rows) x source tokens (columns)
//   Example        a titled set of maps (layers x heads) plus the inputs that made it
//   BuildExamples  the examples menu: the seeds' worked examples, a translation figure,
//                  a causal self-attention
#pragma once
#include <string>
#include <vector>

#include "core/attention.h"

namespace attnviz {

struct AttentionMap {
  std::string name;                        // e.g. "layer 1 / head 3"
  std::vector<std::string> source_tokens;  // [n_k] column labels, along the top
  std::vector<std::string> target_tokens;  // [n_q] row labels, down the left
  MatrixRM weights;                        // [n_q, n_k]
  bool has_steps = false;                  // steps holds the arithmetic of every cell
  AttentionSteps steps;                    // raw/scaled/masked/exp/row sums, when has_steps
  uint64_t version = 0;                    // bumped whenever weights change (texture re-upload)
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
  std::string id;                  // stable id, used by the embed API (?example=seed002)
  std::string title;               // menu text
  std::string description;         // one paragraph shown under the title
  bool has_inputs = false;         // inputs is valid (the step view can recompute it)
  AttentionInputs inputs;          // the single-head computation behind maps[0]
  std::vector<AttentionMap> maps;  // maps[l * heads + h]
  int layers = 1;                  // for the grid view
  int heads = 1;                   // for the grid view
  // Big examples are built on first use, not at start: builder fills maps (and layers/heads).
  Status (*builder)(Example* ex) = nullptr;
};

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
