// attnviz io: the attention file a researcher drops onto the viewer (docs/FORMATS.md).
//
// Index of this header
//   - AttentionFile       tokens + layers of heads of [n_q, n_k] weight matrices
//   - LoadAttentionFile   sniffs JSON / NPZ / NPY, parses, validates, collects warnings
//   - Save*               JSON (the documented text form) and NPZ
//
// Rows are queries (target tokens, down the left of a heatmap), columns are keys (source
// tokens, along the top): weights[i][j] = how much target token i attends to source token j.
// Two encodings of the same content:
//   JSON {"format":"attnviz","version":1,"source_tokens":[...],"target_tokens":[...],
//         "layers":[{"name":"...","heads":[{"name":"...","weights":[[...],...]}]}],"meta":{...}}
//        (self-attention files may give "tokens" instead of the two lists)
//   NPZ  attention [layers, heads, n_q, n_k] | [heads, n_q, n_k] | [n_q, n_k] (any float dtype),
//        source_tokens / target_tokens (or tokens) as numpy string arrays (<U or |S),
//        optional layer_names [layers], head_names [heads]; `attnviz-cli attend` output
//        (head_weights [h, n_q, n_k] or weights [n_q, n_k]) is accepted too.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/attention.h"
#include "core/status.h"
#include "io/json.h"
#include "io/npz.h"

namespace attnviz {

// ---------------------------------------------------------------------------
// AttentionFile
// ---------------------------------------------------------------------------
struct AttentionFile {
  struct Head {
    std::string name;  // e.g. "head 3"
    MatrixRM weights;  // [n_q, n_k] rows = target tokens, columns = source tokens
    MatrixRM q = MatrixRM(),
             k = MatrixRM();  // optional queries [n_q, d] and keys [n_k, d] (JSON "q", "k"); empty when absent
  };
  struct Layer {
    std::string name;         // e.g. "layer 0" or "decoder.3.cross_attn"
    std::vector<Head> heads;  // at least one
  };
  std::vector<std::string> source_tokens;  // [n_k] keys, along the top
  std::vector<std::string> target_tokens;  // [n_q] queries, down the left
  std::vector<Layer> layers;               // at least one
  bool self_attention = false;             // the file gave one "tokens" list (source == target)
  JsonValue meta;                          // free-form "meta" object from JSON (Null if none)
  std::vector<std::string> warnings;       // non-fatal findings of the last load (rows not summing to 1, ...)

  int NumQueries() const { return (int)target_tokens.size(); }  // n_q
  int NumKeys() const { return (int)source_tokens.size(); }     // n_k
  int TotalHeads() const;                                       // sum of heads over layers
};

struct AttentionFileLimits {
  int max_layers = 1024;                  // layers per file
  int max_heads = 1024;                   // heads per layer
  int64_t max_tokens = 65536;             // n_q and n_k each
  int64_t max_values = int64_t(1) << 28;  // total weights over all heads (1 GiB of floats)
  size_t max_token_bytes = 4096;          // bytes per token string
  size_t max_name_bytes = 4096;           // bytes per layer or head name
  int max_row_sum_warnings = 16;          // heads warned about individually; the rest are counted
  float row_sum_tolerance = 1e-3f;        // |sum - 1| above this (on a non-zero row) is warned about
  float negative_tolerance = 1e-6f;       // weights in [-tol, 0) are clamped to 0, below -tol rejected
};

// ---------------------------------------------------------------------------
// LoadAttentionFile: bytes -> validated AttentionFile (out->warnings filled).
// The format is sniffed: "PK" = NPZ, "\x93NUMPY" = a bare attention array, else JSON.
// ---------------------------------------------------------------------------
Status LoadAttentionFile(const uint8_t* data, size_t size, AttentionFile* out,
                         const AttentionFileLimits& limits = AttentionFileLimits());
Status ParseAttentionJson(const char* text, size_t size, AttentionFile* out,
                          const AttentionFileLimits& limits = AttentionFileLimits());
Status ParseAttentionNpz(const uint8_t* data, size_t size, AttentionFile* out,
                         const AttentionFileLimits& limits = AttentionFileLimits());
// The same from arrays already parsed (an NPZ's, or a bare .npy's as "attention"), so a caller
// that lists the arrays too reads the file once.
Status AttentionFileFromArrays(const NpzFile& arrays, AttentionFile* out,
                               const AttentionFileLimits& limits = AttentionFileLimits());
// Checks shapes against the tokens, finiteness and signs; fills file->warnings. Called by the
// parsers; call it yourself after building an AttentionFile by hand.
Status ValidateAttentionFile(AttentionFile* file, const AttentionFileLimits& limits = AttentionFileLimits());

// ---------------------------------------------------------------------------
// Saving
// ---------------------------------------------------------------------------
// JSON text (indent 0 = compact; rows of a matrix always stay on one line). Floats are written
// with the fewest digits that read back to the same float.
std::string SaveAttentionJson(const AttentionFile& file, int indent = 1);
// NPZ with attention [L, H, n_q, n_k] float32 (all layers must have the same head count),
// source_tokens / target_tokens (<U), layer_names, head_names.
Status SaveAttentionNpz(const AttentionFile& file, bool compressed, std::vector<uint8_t>* out);

}  // namespace attnviz
