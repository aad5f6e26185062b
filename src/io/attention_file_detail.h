// attnviz io (internal): the pieces of the attention file reader that the version-2 and BertViz
// readers (attention_sets.cpp) share with version 1 (attention_file.cpp). Not a public API.
#pragma once
#include <string>
#include <vector>

#include "io/attention_file.h"
#include "io/ndarray.h"
#include "io/npz.h"

namespace attnviz {
namespace attention_file_detail {

void IndexTokens(int64_t n, std::vector<std::string>* tokens);  // "0", "1", ... for files that give none
// The arrays an .npz's attention is taken from, in this order, and an array's name from its member's
// ("attention.npy" -> "attention"), as ParseNpz names them.
extern const char* const kNpzAttentionNames[3];
std::string NpzArrayName(const std::string& member);
Status JsonTokens(const JsonValue* v, const char* key, const AttentionFileLimits& limits,
                  std::vector<std::string>* out);  // an array of strings (or ids)
Status JsonMatrix(const JsonValue& v, const std::string& where, int64_t* budget, MatrixRM* out);  // [[...], ...]
Status JsonHead(const JsonValue& h, const std::string& where, size_t index, int64_t* budget,
                AttentionFile::Head* out);  // {"name", "weights"} or a bare matrix
Status NpzTokens(const NpzFile& z, const char* name, const AttentionFileLimits& limits, std::vector<std::string>* out,
                 bool* found);  // a 1-D string (or id) array, if present
Status NpzNames(const NpzFile& z, const char* name, size_t count, std::vector<std::string>* out);  // count names
// The checks FromAttentionArray makes before it reads the data: a numeric array of 2 to 4 dimensions
// within the limits (a shape alone will do: an array's .npy header, before its data is inflated).
Status CheckAttentionShape(const NdArray& a, const char* array_name, const AttentionFileLimits& limits);
// An .npz (data[0, size), `entries` its listed members) whose attention array's header fails
// CheckAttentionShape, refused before any member is inflated; Ok when it passes or cannot be peeked
// at (ParseNpzListed then gives its own message).
Status PeekNpzAttention(const uint8_t* data, size_t size, const std::vector<ZipEntry>& entries,
                        const AttentionFileLimits& limits);
// A whole .npz into arrays, its attention array's shape checked first (PeekNpzAttention).
Status ParseAttentionNpzFile(const uint8_t* data, size_t size, const AttentionFileLimits& limits, NpzFile* out);
// [L, H, n_q, n_k], [H, n_q, n_k] or [n_q, n_k] into f->layers (named "layer l" / "head h").
Status FromAttentionArray(const NdArray& a, const char* array_name, const AttentionFileLimits& limits,
                          AttentionFile* f);
Status JsonLayers(const JsonValue& layers, const AttentionFileLimits& limits, int64_t* budget,
                  std::vector<AttentionFile::Layer>* out);  // version 1 "layers" array
Status ParseAttentionJsonValue(const JsonValue& root, AttentionFile* out,
                               const AttentionFileLimits& limits);  // a version 1 document
Status ParseAttentionNpzArrays(const NpzFile& z, AttentionFile* out,
                               const AttentionFileLimits& limits);  // version 1 arrays

// "where: weight 1e+39 at row r, column c is beyond the float32 range (weights are probabilities)"
Status BeyondFloat32(double x, const std::string& where, int64_t row, int64_t col);
// "layer 0 ('name') head 1 ('name')" for messages, names shortened and made printable.
std::string Where(const AttentionFile& f, size_t layer, size_t head);
// Warnings about rows that do not sum to 1: one per head up to the limit, then a count.
struct RowSumWarnings {
  std::vector<std::string> warnings;  // the heads warned about
  int warned = 0, unwarned = 0;       // heads warned about, heads past the limit
  void Add(const std::string& where, int bad_rows, int64_t rows, double worst, const AttentionFileLimits& limits);
  void Finish(std::vector<std::string>* out);  // appends the warnings and the count of the rest
};
// One head's weights: finite, not negative (noise within the tolerance clamped to 0), rows summing to 1
// (a warning). `where` names the head in messages.
Status CheckHeadWeights(const std::string& where, MatrixRM* weights, const AttentionFileLimits& limits,
                        RowSumWarnings* row_sums, bool* clamped = nullptr);  // clamped: a weight was set to 0

// attention_sets.cpp
bool IsAttentionDocumentJson(const JsonValue& root);  // version 2 ("sets") or BertViz data
// The first set of a version-2 / BertViz document as a version-1 file, with a warning naming the others.
Status FirstSetOf(const JsonValue& root, AttentionFile* out, const AttentionFileLimits& limits);
Status FirstSetOf(const NpzFile& z, AttentionFile* out, const AttentionFileLimits& limits);

}  // namespace attention_file_detail
}  // namespace attnviz
