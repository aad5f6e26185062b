// The lazily read attention file: its index (attnviz layout or a plain "attention" tensor), byte
// ranges, overviews, and the queue of reads. The writer is in lazy_attention_write.cpp.
#include "io/lazy_attention.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <new>

#include "io/attention_file_detail.h"
#include "io/file_util.h"
#include "io/json.h"
#include "io/memory_budget.h"
#include "io/ndarray.h"
#include "io/npy.h"
#include "io/utf8.h"

namespace attnviz {

using attention_file_detail::IndexTokens;
using attention_file_detail::JsonTokens;

int LazySet::Heads() const {
  int h = 0;
  for (const LazyLayer& l : layers) h += l.heads;
  return h;
}

int LazySet::MaxHeads() const {
  int h = 0;
  for (const LazyLayer& l : layers) h = std::max(h, l.heads);
  return h;
}

namespace {

Status MetaJson(const SafetensorsHeader& h, const char* key, JsonValue* out, bool* found) {
  const std::string* text = h.Meta(key);
  *found = text != nullptr;
  if (!text) return Status::Ok();
  JsonParseOptions options;
  options.max_depth = 16;
  const Status st = ParseJson(text->data(), text->size(), out, options);
  if (!st) return Status::Error(std::string("safetensors: __metadata__ \"") + key + "\": " + st.message);
  return Status::Ok();
}

Status CheckNames(const std::vector<std::string>& names, const AttentionFileLimits& limits) {
  for (const std::string& n : names)
    if (n.size() > limits.max_name_bytes)
      return Status::Error("a name is longer than " + std::to_string(limits.max_name_bytes) + " bytes");
  return Status::Ok();
}

// A float tensor of rank 3 [heads, rows, cols], for messages "set 0 layer 3".
Status CheckHeadTensor(const SafetensorsTensor& t, const std::string& what, int64_t rows, int64_t cols,
                       const AttentionFileLimits& limits) {
  if (!StDTypeIsFloat(t.dtype))
    return Status::Error("safetensors: " + what + " is " + StDTypeName(t.dtype) +
                         "; attention weights must be F16, BF16, F32 or F64");
  if (t.shape.size() != 3)
    return Status::Error("safetensors: " + what + " must be [heads, n_q, n_k], got " + std::to_string(t.shape.size()) +
                         " dimensions");
  if (t.shape[0] < 1 || t.shape[0] > limits.max_heads)
    return Status::Error("safetensors: " + what + " has " + std::to_string(t.shape[0]) + " heads (1 to " +
                         std::to_string(limits.max_heads) + ")");
  if (rows >= 0 && (t.shape[1] != rows || t.shape[2] != cols))
    return Status::Error("safetensors: " + what + " is [" + std::to_string(t.shape[0]) + ", " +
                         std::to_string(t.shape[1]) + ", " + std::to_string(t.shape[2]) + "], expected [heads, " +
                         std::to_string(rows) + ", " + std::to_string(cols) + "] from the tokens");
  return Status::Ok();
}

// A layer's stored max-pooled copies (overviews, screen copies or thumbnails) [heads, R, C]: a float dtype, the
// layer's heads, R <= n_q, C <= n_k, the same R and C for every layer, no bigger than the pool's side.
Status PooledTensor(const SafetensorsTensor& o, const std::string& name, LazyPool pool,
                    const AttentionFileLimits& limits, LazySet* set, LazyLayer* layer) {
  Status st = CheckHeadTensor(o, "tensor '" + name + "'", -1, -1, limits);
  if (!st) return st;
  const int64_t R = o.shape[1], C = o.shape[2], side = LazyPoolSide(pool);
  int& rows = set->pool_rows[(int)pool];
  int& cols = set->pool_cols[(int)pool];
  if (o.shape[0] != layer->heads || R < 1 || C < 1 || R > set->n_q || C > set->n_k || R > side || C > side ||
      (rows && (R != rows || C != cols)))
    return Status::Error("safetensors: tensor '" + name + "' is [" + std::to_string(o.shape[0]) + ", " +
                         std::to_string(R) + ", " + std::to_string(C) + "]; expected [" + std::to_string(layer->heads) +
                         ", R, C] with R <= n_q, C <= n_k, both at most " + std::to_string(side) +
                         ", the same for every layer");
  rows = (int)R;
  cols = (int)C;
  LazyPooled& p = layer->Pooled(pool);
  p.dtype = o.dtype;
  p.offset = o.begin;
  return Status::Ok();
}

// A set's stored statistics "stats.s.l": F32 [heads, kHeadStatsColumns] for every layer, back to
// back in layer order. They are optional, so a set whose statistics are not so is read without them,
// with a warning (the grid then sorts the heads it has read).
void StatsTensors(const SafetensorsHeader& h, const std::string& prefix, const std::string& where, LazySet* set,
                  std::vector<std::string>* warnings) {
  uint64_t next = 0;
  int found = 0;
  bool missing = false;
  std::string why;
  for (size_t l = 0; l < set->layers.size() && why.empty(); ++l) {
    const std::string name = "stats." + prefix + std::to_string(l);
    const SafetensorsTensor* t = h.Find(name);
    if (!t) {
      missing = true;
      continue;
    }
    ++found;
    LazyLayer& layer = set->layers[l];
    if (t->dtype != StDType::F32 || t->shape.size() != 2 || t->shape[0] != layer.heads ||
        t->shape[1] != kHeadStatsColumns)
      why = "tensor '" + name + "' is not F32 [" + std::to_string(layer.heads) + ", " +
            std::to_string(kHeadStatsColumns) + "]";
    else if (l > 0 && !missing && t->begin != next)
      why = "tensor '" + name + "' does not follow the previous layer's";
    layer.stats_offset = t->begin;
    next = t->end;
  }
  if (why.empty() && found > 0 && missing) why = "some layers have none";
  set->stats = why.empty() && found > 0;
  if (!why.empty())
    warnings->push_back(where + ": the stored head statistics are not used (" + why +
                        "); the grid sorts the heads it has read");
}

// One set of the attnviz layout: its description in "sets" and its tensors.
Status AttnvizSet(const SafetensorsHeader& h, const JsonValue& sv, size_t s, const AttentionFileLimits& limits,
                  LazySet* set, std::vector<std::string>* warnings) {
  const std::string where = "sets[" + std::to_string(s) + "]";
  if (!sv.IsObject()) return Status::Error("safetensors: " + where + " must be an object");
  const JsonValue* name = sv.Find("name");
  set->name = name && name->type == JsonType::String ? name->string : "set " + std::to_string(s);
  if (set->name.size() > limits.max_name_bytes) return Status::Error("safetensors: " + where + ": name too long");
  Status st;
  const JsonValue* tokens = sv.Find("tokens");
  if (tokens) {
    if (!(st = JsonTokens(tokens, "tokens", limits, &set->key_tokens))) return st;
    set->query_tokens = set->key_tokens;
    set->self_attention = true;
  } else {
    const JsonValue* q = sv.Find("query_tokens");
    const JsonValue* k = sv.Find("key_tokens");
    if (!q || !k)
      return Status::Error("safetensors: " + where + " needs \"tokens\" or \"query_tokens\" and \"key_tokens\"");
    if (!(st = JsonTokens(q, "query_tokens", limits, &set->query_tokens))) return st;
    if (!(st = JsonTokens(k, "key_tokens", limits, &set->key_tokens))) return st;
  }
  for (const auto* list : {&set->query_tokens, &set->key_tokens})
    for (const std::string& t : *list)
      if (t.size() > limits.max_token_bytes)
        return Status::Error("safetensors: " + where + ": a token is longer than " +
                             std::to_string(limits.max_token_bytes) + " bytes");
  set->n_q = (int64_t)set->query_tokens.size();
  set->n_k = (int64_t)set->key_tokens.size();
  if (set->n_q < 1 || set->n_k < 1) return Status::Error("safetensors: " + where + " has no tokens");
  set->kind = set->query_tokens == set->key_tokens ? AttentionKind::Self : AttentionKind::Cross;
  if (const JsonValue* kind = sv.Find("kind")) {
    if (kind->type != JsonType::String || !ParseAttentionKind(kind->string, &set->kind))
      return Status::Error("safetensors: " + where + ": \"kind\" must be \"self\", \"causal\" or \"cross\"");
  }
  const JsonValue* layers = sv.Find("layers");
  uint64_t n_layers = 0;
  if (!layers || layers->type != JsonType::Number || !(layers->number >= 1) || layers->number > limits.max_layers ||
      layers->number != std::floor(layers->number))
    return Status::Error("safetensors: " + where + " needs \"layers\": 1 to " + std::to_string(limits.max_layers));
  n_layers = (uint64_t)layers->number;
  std::vector<std::string> layer_names;
  if (const JsonValue* ln = sv.Find("layer_names")) {
    AttentionFileLimits any;
    any.max_tokens = limits.max_layers;
    if (!(st = JsonTokens(ln, "layer_names", any, &layer_names))) return st;
    if (layer_names.size() != n_layers)
      return Status::Error("safetensors: " + where + ": \"layer_names\" has " + std::to_string(layer_names.size()) +
                           " names for " + std::to_string(n_layers) + " layers");
  }
  if (const JsonValue* hn = sv.Find("head_names")) {
    AttentionFileLimits any;
    any.max_tokens = limits.max_heads;
    if (!(st = JsonTokens(hn, "head_names", any, &set->head_names))) return st;
  }
  if (!(st = CheckNames(layer_names, limits)) || !(st = CheckNames(set->head_names, limits)))
    return Status::Error("safetensors: " + where + ": " + st.message);
  const std::string prefix = std::to_string(s) + ".";
  bool any[kLazyPools] = {}, all[kLazyPools] = {true, true, true};  // by LazyPool
  for (uint64_t l = 0; l < n_layers; ++l) {
    const std::string tname = "attention." + prefix + std::to_string(l);
    const SafetensorsTensor* t = h.Find(tname);
    if (!t)
      return Status::Error("safetensors: " + where + " has " + std::to_string(n_layers) + " layers, but tensor '" +
                           tname + "' is missing");
    if (!(st = CheckHeadTensor(*t, "tensor '" + tname + "'", set->n_q, set->n_k, limits))) return st;
    LazyLayer layer;
    layer.name = l < layer_names.size() ? layer_names[l] : "layer " + std::to_string(l);
    layer.heads = (int)t->shape[0];
    layer.dtype = t->dtype;
    layer.offset = t->begin;
    for (LazyPool pool : kLazyPoolList) {
      const std::string pname = std::string(LazyPoolPrefix(pool)) + prefix + std::to_string(l);
      const SafetensorsTensor* o = h.Find(pname);
      any[(int)pool] = any[(int)pool] || o;
      all[(int)pool] = all[(int)pool] && o;
      if (o && !(st = PooledTensor(*o, pname, pool, limits, set, &layer))) return st;
    }
    set->layers.push_back(std::move(layer));
  }
  for (LazyPool pool : kLazyPoolList)
    if (any[(int)pool] && !all[(int)pool])
      return Status::Error("safetensors: " + where + " has " + LazyPoolName(pool) + " for some layers only (every '" +
                           LazyPoolPrefix(pool) + prefix + "l' or none)");
  StatsTensors(h, prefix, "set '" + PrintableText(set->name, 64) + "'", set, warnings);
  return Status::Ok();
}

Status AttnvizLayout(const SafetensorsHeader& h, const AttentionFileLimits& limits, LazyAttentionIndex* out) {
  const std::string* version = h.Meta("version");
  if (!version || *version != "2")
    return Status::Error("safetensors: attnviz layout version '" + (version ? PrintableText(*version, 16) : "") +
                         "' is not supported (this build reads version 2)");
  JsonValue sets, tokenizer;
  bool found = false;
  Status st = MetaJson(h, "sets", &sets, &found);
  if (!st) return st;
  if (!found || !sets.IsArray() || sets.items.empty())
    return Status::Error("safetensors: __metadata__ \"sets\" must be a JSON array of attention sets");
  if ((int64_t)sets.items.size() > limits.max_layers) return Status::Error("safetensors: too many sets");
  for (size_t s = 0; s < sets.items.size(); ++s) {
    LazySet set;
    if (!(st = AttnvizSet(h, sets.items[s], s, limits, &set, &out->warnings))) return st;
    out->sets.push_back(std::move(set));
  }
  if (!(st = MetaJson(h, "tokenizer", &tokenizer, &found))) return st;
  if (found && tokenizer.IsObject()) {
    if (const JsonValue* v = tokenizer.Find("space_marker"); v && v->type == JsonType::String)
      out->tokenizer.space_marker = v->string;
    if (const JsonValue* v = tokenizer.Find("continuation_marker"); v && v->type == JsonType::String)
      out->tokenizer.continuation_marker = v->string;
    if (const JsonValue* v = tokenizer.Find("special_tokens"))
      if (!(st = JsonTokens(v, "special_tokens", limits, &out->tokenizer.special_tokens))) return st;
  }
  if (!(st = MetaJson(h, "meta", &out->meta, &found))) return st;
  out->attnviz_layout = true;
  return Status::Ok();
}

// The layers of one array [L, H, n_q, n_k], [H, n_q, n_k] or [n_q, n_k] of `dtype` at file offset
// `begin` (C order); `what` names it in messages.
Status PlainArraySet(const std::vector<int64_t>& shape, StDType dtype, uint64_t begin, const char* what,
                     const AttentionFileLimits& limits, LazySet* set) {
  const size_t nd = shape.size();
  if (nd < 2 || nd > 4)
    return Status::Error(std::string(what) + " must be [layers, heads, n_q, n_k], [heads, n_q, n_k] or [n_q, n_k]");
  const int64_t L = nd == 4 ? shape[0] : 1, H = nd >= 3 ? shape[nd - 3] : 1;
  set->name = "attention";
  set->n_q = shape[nd - 2];
  set->n_k = shape[nd - 1];
  if (L < 1 || H < 1 || set->n_q < 1 || set->n_k < 1 || L > limits.max_layers || H > limits.max_heads ||
      set->n_q > limits.max_tokens || set->n_k > limits.max_tokens)
    return Status::Error(std::string(what) + " of this shape is empty or exceeds the size limits");
  const uint64_t layer_bytes = (uint64_t)(H * set->n_q * set->n_k) * (uint64_t)StDTypeSize(dtype);
  for (int64_t l = 0; l < L; ++l) {
    LazyLayer layer;
    layer.name = "layer " + std::to_string(l);
    layer.heads = (int)H;
    layer.dtype = dtype;
    layer.offset = begin + (uint64_t)l * layer_bytes;
    set->layers.push_back(std::move(layer));
  }
  return Status::Ok();
}

// Tokens by index where the file gave none; the kind from whether queries and keys are the same.
Status IndexTokensWhereMissing(LazySet* set, LazyAttentionIndex* out) {
  if (set->query_tokens.empty()) {
    IndexTokens(set->n_q, &set->query_tokens);
    out->warnings.push_back("no query tokens given; using indices");
  }
  if (set->key_tokens.empty()) {
    IndexTokens(set->n_k, &set->key_tokens);
    out->warnings.push_back("no key tokens given; using indices");
  }
  if ((int64_t)set->query_tokens.size() != set->n_q || (int64_t)set->key_tokens.size() != set->n_k)
    return Status::Error("safetensors: " + std::to_string(set->query_tokens.size()) + " query and " +
                         std::to_string(set->key_tokens.size()) + " key tokens for 'attention' [.., " +
                         std::to_string(set->n_q) + ", " + std::to_string(set->n_k) + "]");
  set->kind = set->query_tokens == set->key_tokens ? AttentionKind::Self : AttentionKind::Cross;
  return Status::Ok();
}

// A plain file: one float tensor "attention" [L, H, n_q, n_k], [H, n_q, n_k] or [n_q, n_k].
Status PlainLayout(const SafetensorsHeader& h, const AttentionFileLimits& limits, LazyAttentionIndex* out) {
  const SafetensorsTensor* t = h.Find("attention");
  if (!t) {
    std::string have;
    for (size_t i = 0; i < h.tensors.size() && i < 8; ++i)
      have += (have.empty() ? "" : ", ") + PrintableText(h.tensors[i].name, 40);
    return Status::Error(
        "safetensors: neither the attnviz layout (__metadata__ \"format\": \"attnviz\") nor a tensor named "
        "'attention' [layers, heads, n_q, n_k]; the file has: " +
        (have.empty() ? std::string("no tensors") : have));
  }
  if (!StDTypeIsFloat(t->dtype))
    return Status::Error(std::string("safetensors: 'attention' is ") + StDTypeName(t->dtype) +
                         "; attention weights must be F16, BF16, F32 or F64");
  LazySet set;
  Status st = PlainArraySet(t->shape, t->dtype, t->begin, "safetensors: 'attention'", limits, &set);
  if (!st) return st;
  JsonValue v;
  bool found = false;
  if (!(st = MetaJson(h, "tokens", &v, &found))) return st;
  if (found) {
    if (!(st = JsonTokens(&v, "tokens", limits, &set.key_tokens))) return st;
    set.query_tokens = set.key_tokens;
    set.self_attention = true;
  }
  if (!(st = MetaJson(h, "query_tokens", &v, &found))) return st;
  if (found && !(st = JsonTokens(&v, "query_tokens", limits, &set.query_tokens))) return st;
  if (!(st = MetaJson(h, "key_tokens", &v, &found))) return st;
  if (found && !(st = JsonTokens(&v, "key_tokens", limits, &set.key_tokens))) return st;
  if (!(st = IndexTokensWhereMissing(&set, out))) return st;
  out->sets.push_back(std::move(set));
  return Status::Ok();
}

}  // namespace

Status ReadLazyAttentionIndex(SafetensorsHeader header, LazyAttentionIndex* out, const AttentionFileLimits& limits) {
  LazyAttentionIndex index;
  const std::string* format = header.Meta("format");
  const Status st =
      format && *format == "attnviz" ? AttnvizLayout(header, limits, &index) : PlainLayout(header, limits, &index);
  if (!st) return st;
  index.header = std::move(header);
  *out = std::move(index);
  return Status::Ok();
}

bool LooksLikeNpy(const uint8_t* prefix, size_t n) {
  return n >= 6 && std::memcmp(prefix, "\x93NUMPY", 6) == 0;
}

namespace {
// Shapes the lazy .npy reader takes: the size limits bound each dimension, so their product does too.
constexpr int64_t kLazyNpyMaxElements = int64_t(1) << 50;
}  // namespace

Status ReadLazyNpyIndex(const uint8_t* prefix, size_t n, uint64_t file_size, LazyAttentionIndex* out,
                        const AttentionFileLimits& limits) {
  LazyNpyArray where;
  where.bytes = file_size;
  where.file_size = file_size;
  return ReadLazyNpyIndexAt(prefix, n, where, out, limits);
}

Status ReadLazyNpyIndexAt(const uint8_t* prefix, size_t n, const LazyNpyArray& where, LazyAttentionIndex* out,
                          const AttentionFileLimits& limits) {
  NpyHeader h;
  Status st = ParseNpyHeader(prefix, n, &h, kLazyNpyMaxElements);
  if (!st) return st;
  StDType dtype;
  if (h.dtype == DType::Float16)
    dtype = StDType::F16;
  else if (h.dtype == DType::Float32)
    dtype = StDType::F32;
  else if (h.dtype == DType::Float64)
    dtype = StDType::F64;
  else
    return Status::Error(std::string("npy: the array is ") + DTypeName(h.dtype) +
                         "; attention weights must be float16, float32 or float64");
  if (h.byte_swap && h.itemsize > 1)
    return Status::Error(
        "npy: the array is big-endian, which is read only whole; save it little-endian "
        "(np.save(path, a.astype(a.dtype.newbyteorder('<'))))");
  int64_t long_dims = 0;  // a Fortran-order array of one non-trivial dimension is laid out as in C order
  for (int64_t d : h.shape) long_dims += d > 1;
  if (h.fortran_order && long_dims > 1)
    return Status::Error(
        "npy: the array is in Fortran order, which is read only whole; save it in C order "
        "(np.save(path, np.ascontiguousarray(a)))");
  LazyAttentionIndex index;
  LazySet set;
  if (where.base > where.file_size || where.bytes > where.file_size - where.base)
    return Status::Error("npy: the array lies outside the file");
  if (!(st = PlainArraySet(h.shape, dtype, where.base + h.data_offset, "npy: the array", limits, &set))) return st;
  const uint64_t need = (uint64_t)h.numel * (uint64_t)h.itemsize;
  if (h.data_offset > where.bytes || need > where.bytes - h.data_offset)
    return Status::Error(std::string(where.base ? "npy: the member is " : "npy: the file is ") +
                         std::to_string(where.bytes) + " bytes, but its array needs " +
                         std::to_string(h.data_offset + need) + " (truncated?)");
  set.self_attention = set.n_q == set.n_k;  // one list of tokens (indices) for a square array
  IndexTokens(set.n_q, &set.query_tokens);
  IndexTokens(set.n_k, &set.key_tokens);
  set.kind = set.self_attention ? AttentionKind::Self : AttentionKind::Cross;
  index.warnings.push_back("a .npy file holds no tokens; using indices");
  index.sets.push_back(std::move(set));
  index.npy = true;
  index.header.file_size = where.file_size;
  index.header.data_start = where.base + h.data_offset;
  *out = std::move(index);
  return Status::Ok();
}

bool NpyOpensLazily(const uint8_t* prefix, size_t n, uint64_t file_size) {
  NpyHeader h;
  if (!LooksLikeNpy(prefix, n) || !ParseNpyHeader(prefix, n, &h, kLazyNpyMaxElements)) return false;
  return h.numel > AttentionFileLimits().max_values ||
         file_size > std::min<uint64_t>(kMaxFileBytes, DefaultMemoryBudget());
}

bool OpensLazily(ByteSource* source) {
  uint8_t first[16] = {};
  if (source->Asynchronous() || source->Size() < sizeof(first) || !source->Read(0, sizeof(first), first)) return false;
  if (LooksLikeSafetensors(first, sizeof(first), source->Size())) return true;
  if (LooksLikeZip(first, sizeof(first))) return NpzOpensLazily(source);
  std::vector<uint8_t> prefix;
  return LooksLikeNpy(first, sizeof(first)) && ReadLazyPrefix(source, &prefix) &&
         NpyOpensLazily(prefix.data(), prefix.size(), source->Size());
}

ByteRange HeadRowsRange(const LazySet& set, int layer, int head, int64_t row0, int64_t row1) {
  const LazyLayer& l = set.layers[(size_t)layer];
  const uint64_t item = (uint64_t)StDTypeSize(l.dtype);
  ByteRange r;
  r.offset = l.offset + ((uint64_t)head * (uint64_t)set.n_q + (uint64_t)row0) * (uint64_t)set.n_k * item;
  r.size = (uint64_t)(row1 - row0) * (uint64_t)set.n_k * item;
  return r;
}

ByteRange PooledRange(const LazySet& set, int layer, LazyPool pool, int head0, int head1) {
  const LazyLayer& l = set.layers[(size_t)layer];
  const LazyPooled& p = l.Pooled(pool);
  const uint64_t per_head =
      (uint64_t)set.PoolRows(pool) * (uint64_t)set.PoolCols(pool) * (uint64_t)StDTypeSize(p.dtype);
  ByteRange r;
  r.offset = p.offset + (uint64_t)head0 * per_head;
  r.size = (uint64_t)(head1 - head0) * per_head;
  return r;
}

void MaxPoolOverview(const float* head, int64_t rows, int64_t cols, int out_rows, int out_cols, float* out) {
  std::fill(out, out + (size_t)out_rows * out_cols, 0.0f);
  MaxPoolRows(head, rows, cols, 0, rows, out_rows, out_cols, out);
}

void MaxPoolRows(const float* head, int64_t rows, int64_t cols, int64_t row0, int64_t row1, int out_rows, int out_cols,
                 float* out) {
  MaxPoolPiece(head + row0 * cols, rows, cols, row0, row1, out_rows, out_cols, out);
}

namespace {

// MaxPoolPiece where its buffers cannot be had: each row reduced into its bins on its own (the same
// result, slower).
void MaxPoolPieceUnbuffered(const float* piece, int64_t rows, int64_t cols, int64_t row0, int64_t row1, int out_rows,
                            int out_cols, float* out) {
  int r = (int)(row0 * out_rows / rows);
  for (int64_t i = row0; i < row1; ++i) {
    while ((int64_t)(r + 1) * rows / out_rows <= i) ++r;
    const float* src = piece + (i - row0) * cols;
    float* o = out + (size_t)r * out_cols;
    for (int b = 0; b < out_cols; ++b) {
      float m = o[b];
      for (int64_t c = (int64_t)b * cols / out_cols, c1 = (int64_t)(b + 1) * cols / out_cols; c < c1; ++c)
        m = m < src[c] ? src[c] : m;
      o[b] = m;
    }
  }
}

thread_local std::vector<float> t_pool_acc;      // a bin's rows combined; kept: a head is pooled a piece at a time
thread_local std::vector<int64_t> t_pool_first;  // [out_cols + 1] each column bin's first column (kept: its capacity)
}  // namespace

size_t MaxPoolKeptBytes() {
  return t_pool_acc.capacity() * sizeof(float) + t_pool_first.capacity() * sizeof(int64_t);
}

// Row i of the head falls in bin r (floor(r * rows / out_rows) <= i < floor((r + 1) * rows / out_rows)),
// column c in bin b likewise. The rows of one bin are first combined element by element (a loop the
// compiler vectorizes), then each bin's columns reduced once: faster than a max per weight into
// its cell through a column-bin table (until stop 38: 2.2-2.5x, bench/decode_bench.cpp "pool"), and
// the same result. The column bins' first columns are worked out once per call, not with two
// 64-bit divisions per bin and bin row: a 512 x 512 head pooled to 256 x 256 (an eager file's grid
// thumbnail) 0.352 -> 0.313 ms in node on TurboFan code (stop 48; in the page ~1.1-1.4 ms a head
// while the grid fills in, beside the load worker and the renderer).
void MaxPoolPiece(const float* piece, int64_t rows, int64_t cols, int64_t row0, int64_t row1, int out_rows,
                  int out_cols, float* out) {
  std::vector<float>& acc = t_pool_acc;
  std::vector<int64_t>& first = t_pool_first;
  // Both are small beside the piece (a row; a bin's first columns), but an allocation that fails is an
  // error, not a crash: without them the piece is pooled a row at a time, the bins found by division.
  if (!(first.capacity() > (size_t)out_cols || TryAllocate(((size_t)out_cols + 1) * sizeof(int64_t))) ||
      !(acc.capacity() >= (size_t)cols || TryAllocate((size_t)cols * sizeof(float))))
    return MaxPoolPieceUnbuffered(piece, rows, cols, row0, row1, out_rows, out_cols, out);
  first.resize((size_t)out_cols + 1);
  for (int b = 0; b <= out_cols; ++b) first[(size_t)b] = (int64_t)b * cols / out_cols;
  const int64_t* f = first.data();
  int r = (int)(row0 * out_rows / rows);  // the bin of row0 (or one before it): bins are searched forwards
  for (int64_t i = row0; i < row1;) {
    while ((int64_t)(r + 1) * rows / out_rows <= i) ++r;
    const int64_t end = std::min(row1, (int64_t)(r + 1) * rows / out_rows);  // > i
    const float* src = piece + (i - row0) * cols;
    if (end - i > 1) {  // (raw pointers: the page's -Os build of this file inlines no helper in a loop)
      acc.assign(src, src + cols);
      float* a = acc.data();
      for (int64_t k = i + 1; k < end; ++k) {
        const float* row = piece + (k - row0) * cols;
        for (int64_t c = 0; c < cols; ++c) a[c] = a[c] < row[c] ? row[c] : a[c];
      }
      src = a;
    }
    float* o = out + (size_t)r * out_cols;
    for (int b = 0; b < out_cols; ++b) {
      float m = o[b];
      for (int64_t c = f[b], c1 = f[b + 1]; c < c1; ++c) m = m < src[c] ? src[c] : m;
      o[b] = m;
    }
    i = end;
  }
  if (MaxPoolKeptBytes() > kMaxPoolKeptBytes) std::vector<float>().swap(acc), std::vector<int64_t>().swap(first);
}

// ---------------------------------------------------------------------------
// LazyAttentionFile
// ---------------------------------------------------------------------------

namespace {
constexpr uint64_t kMaxNpyHeaderBytes = (uint64_t(1) << 20) + 12;  // as ParseNpyHeader allows
}  // namespace

Status ReadLazyPrefix(ByteSource* source, std::vector<uint8_t>* out) {
  if (source->Asynchronous()) return Status::Error("ReadLazyPrefix needs a synchronous source");
  uint8_t first[12] = {};
  if (source->Size() < 8) return Status::Error("safetensors: the file is too short for the 8-byte header length");
  Status st = source->Read(0, std::min<uint64_t>(sizeof(first), source->Size()), first);
  if (!st) return st;
  uint64_t need = 0;
  if (LooksLikeZip(first, sizeof(first))) return ReadLazyNpzPrefix(source, out);
  if (LooksLikeNpy(first, sizeof(first))) {
    if (!NpyHeaderBytes(first, sizeof(first), &need) || need > source->Size())
      return Status::Error("npy: the file is too short for its header");
    if (need > kMaxNpyHeaderBytes) return Status::Error("npy: header length " + std::to_string(need) + " is too large");
  } else if (!(st = SafetensorsHeaderLength(first, 8, source->Size(), &need))) {
    return st;
  }
  if (!TryAllocate((size_t)need)) return Status::Error("safetensors: out of memory for the header");
  out->resize((size_t)need);
  return source->Read(0, need, out->data());
}

namespace {

// Cancels a job's parts that are under way (their bytes must not land in freed memory).
template <typename JobT>
void CancelParts(ByteSource* source, const JobT& job) {
  for (size_t i = 0; i < job.part_tickets.size(); ++i)
    if (job.part_tickets[i] && !job.part_done[i]) source->CancelRead(job.part_tickets[i]);
}

}  // namespace

int LazyAttentionFile::Job::InFlight() const {
  int n = 0;
  for (int i = 0; i < parts_started; ++i) n += !part_done[(size_t)i];
  return n;
}

LazyAttentionFile::~LazyAttentionFile() {
  for (const auto& j : jobs_)
    if (j->state == JobState::Reading) CancelParts(source_.get(), *j);
}

Status LazyAttentionFile::Open(std::unique_ptr<ByteSource> source, const uint8_t* prefix, size_t n) {
  Status st;
  if (LooksLikeLazyNpz(prefix, n)) {
    if (!(st = ReadLazyNpzIndex(prefix, n, &index_))) return st;
    if (index_.header.file_size != source->Size()) return Status::Error("npz: the file changed since it was listed");
  } else if (LooksLikeNpy(prefix, n)) {
    if (!(st = ReadLazyNpyIndex(prefix, n, source->Size(), &index_))) return st;
  } else {
    SafetensorsHeader header;
    if (!(st = ParseSafetensorsHeader(prefix, n, source->Size(), &header))) return st;
    if (!(st = ReadLazyAttentionIndex(std::move(header), &index_))) return st;
  }
  source_ = std::move(source);
  return Status::Ok();
}

uint64_t LazyAttentionFile::Submit(const LazyRequest& r) {
  std::unique_ptr<Job> job(new Job);
  job->ticket = next_ticket_++;
  job->request = r;
  const uint64_t ticket = job->ticket;
  const Status st = Prepare(job.get());
  if (!st)
    Finish(std::move(job), st);
  else
    jobs_.push_back(std::move(job));
  return ticket;
}

Status LazyAttentionFile::Prepare(Job* job) {
  const LazyRequest& r = job->request;
  if (r.set < 0 || r.set >= (int)index_.sets.size()) return Status::Error("no attention set " + std::to_string(r.set));
  const LazySet& set = index_.sets[(size_t)r.set];
  if (r.stats) {  // every layer's, one range (StatsTensors checked they follow each other)
    if (!set.stats) return Status::Error("the file stores no head statistics");
    job->rows = set.Heads();
    job->cols = kHeadStatsColumns;
    job->range = {set.layers[0].stats_offset, (uint64_t)job->rows * (uint64_t)job->cols * sizeof(float)};
    job->dtype = StDType::F32;
    return Status::Ok();
  }
  if (r.layer < 0 || r.layer >= (int)set.layers.size()) return Status::Error("no layer " + std::to_string(r.layer));
  const LazyLayer& layer = set.layers[(size_t)r.layer];
  if (r.overview) {
    const LazyPool pool = r.pool;
    if ((int)pool < 0 || (int)pool >= kLazyPools) return Status::Error("no such stored copies");
    if (!set.Has(pool)) return Status::Error(std::string("the file stores no ") + LazyPoolName(pool));
    if (r.head < 0 || r.head_end <= r.head || r.head_end > layer.heads)
      return Status::Error("no heads [" + std::to_string(r.head) + ", " + std::to_string(r.head_end) + ")");
    job->range = PooledRange(set, r.layer, pool, r.head, r.head_end);
    job->dtype = layer.Pooled(pool).dtype;
    job->rows = (int64_t)(r.head_end - r.head) * set.PoolRows(pool);
    job->cols = set.PoolCols(pool);
  } else {
    if (r.head < 0 || r.head >= layer.heads) return Status::Error("no head " + std::to_string(r.head));
    if (r.pooled) job->request.row0 = 0, job->request.row1 = set.n_q;  // the whole head
    const int64_t row0 = job->request.row0, row1 = job->request.row1;
    if (row0 < 0 || row1 <= row0 || row1 > set.n_q)
      return Status::Error("no rows [" + std::to_string(row0) + ", " + std::to_string(row1) + ")");
    job->range = HeadRowsRange(set, r.layer, r.head, row0, row1);
    job->dtype = layer.dtype;
    job->rows = row1 - row0;
    job->cols = set.n_k;
  }
  return Status::Ok();
}

void LazyAttentionFile::Cancel(uint64_t ticket) {
  for (auto it = jobs_.begin(); it != jobs_.end(); ++it) {
    if ((*it)->ticket != ticket) continue;
    if ((*it)->state == JobState::Reading) CancelParts(source_.get(), **it);
    jobs_.erase(it);
    return;
  }
}

void LazyAttentionFile::Finish(std::unique_ptr<Job> job, Status st) {
  LazyResult r;
  r.ticket = job->ticket;
  r.request = job->request;
  r.status = std::move(st);
  r.fixed = job->fixed;
  r.max = job->max;
  if (r.status && job->stats) r.has_stats = job->stats->Finish(&r.stats).ok;
  if (r.status) r.weights = std::move(job->out);
  results_.push_back(std::move(r));
}

bool LazyAttentionFile::PopResult(LazyResult* out) {
  if (results_.empty()) return false;
  *out = std::move(results_.front());
  results_.pop_front();
  return true;
}

bool LazyAttentionFile::Progress(uint64_t ticket, const MatrixRM** out, int64_t* rows) const {
  for (const auto& j : jobs_) {
    if (j->ticket != ticket || j->request.overview || j->request.pooled) continue;
    *out = &j->out;
    *rows = j->out.size() ? j->done / j->cols : 0;
    return true;
  }
  return false;
}

bool LazyAttentionFile::Knows(uint64_t ticket) const {
  for (const auto& j : jobs_)
    if (j->ticket == ticket) return true;
  for (const LazyResult& r : results_)
    if (r.ticket == ticket) return true;
  return false;
}

bool LazyAttentionFile::Busy() const {
  if (!results_.empty()) return true;
  for (const auto& j : jobs_)
    if (j->state != JobState::Reading || j->ready > j->done) return true;  // to start, or to decode
  return false;
}

uint64_t LazyAttentionFile::LoadingBytes() const {
  uint64_t b = 0;
  for (const auto& j : jobs_) b += j->staging_bytes + (uint64_t)j->out.size() * sizeof(float);
  for (const LazyResult& r : results_) b += (uint64_t)r.weights.size() * sizeof(float);  // not popped yet
  return b;
}

uint64_t LazyAttentionFile::StagingBytes() const {
  uint64_t b = 0;
  if (Asynchronous())
    for (const auto& j : jobs_) b += j->state == JobState::Queued || j->staging ? j->range.size : 0;
  return b;
}

LazyAttentionFile::Job* LazyAttentionFile::FindPart(uint64_t ticket, int* part) {
  for (const auto& j : jobs_) {
    if (j->state != JobState::Reading) continue;
    for (int i = 0; i < j->parts_started; ++i)
      if (j->part_tickets[(size_t)i] == ticket && !j->part_done[(size_t)i]) return *part = i, j.get();
  }
  return nullptr;
}

void LazyAttentionFile::CompleteRead(uint64_t ticket, const Status& st) {
  int part = 0;
  Job* job = FindPart(ticket, &part);
  if (!job) return;  // cancelled, or its job failed already
  if (!st) {         // the request fails with the part's reason; its other parts are not waited for
    job->part_done[(size_t)part] = 1;
    CancelParts(source_.get(), *job);
    for (auto it = jobs_.begin(); it != jobs_.end(); ++it) {
      if (it->get() != job) continue;
      std::unique_ptr<Job> failed = std::move(*it);
      jobs_.erase(it);
      Finish(std::move(failed), st);
      return;
    }
    return;
  }
  job->part_done[(size_t)part] = 1;
  const uint64_t begin = (uint64_t)part * kPartBytes;
  bytes_read_ += std::min(kPartBytes, job->range.size - begin);
  const int parts = job->Parts();
  while (job->parts_in < parts && job->part_done[(size_t)job->parts_in]) ++job->parts_in;
  const uint64_t in_bytes = std::min(job->range.size, (uint64_t)job->parts_in * kPartBytes);
  job->ready = std::min(job->rows * job->cols, (int64_t)(in_bytes / (uint64_t)StDTypeSize(job->dtype)));
  if (job->parts_in == parts) job->state = JobState::Decoding;
}

// Decodes n elements of src into the job's output at `done` (pooled: whole rows, max-pooled into it);
// weights that are not finite or are negative become 0 and are counted.
Status LazyAttentionFile::DecodePiece(Job* job, const uint8_t* src, int64_t n) {
  float* dst = job->out.data() + job->done;
  if (job->request.pooled) {
    if (pooling_.size() < (size_t)n) {
      if (!TryAllocate((size_t)n * sizeof(float))) return Status::Error("out of memory for a piece of a head");
      pooling_.resize((size_t)n);
    }
    dst = pooling_.data();
  }
  if (job->request.stats) {  // as stored: HeadStatsFromRow checks them
    if (!DecodeFloats(job->dtype, src, (size_t)n, dst)) return Status::Error("not a float tensor");
    job->done += n;
    return Status::Ok();
  }
  float piece_max = 0.0f;  // the largest weight, kept as it is decoded (the viewer's colour range)
  size_t fixed = 0;
  if (!DecodeWeights(job->dtype, src, (size_t)n, dst, &piece_max, &fixed)) return Status::Error("not a float tensor");
  if (job->request.pooled) {
    const int64_t row0 = job->done / job->cols;
    MaxPoolPiece(dst, job->rows, job->cols, row0, row0 + n / job->cols, (int)job->out.rows(), (int)job->out.cols(),
                 job->out.data());
    if (job->stats) (void)job->stats->AddRowData(dst, (int)row0, (int)(row0 + n / job->cols));  // finite, >= 0
  }
  job->max = std::max(job->max, piece_max);
  job->fixed += (int64_t)fixed;
  job->done += n;
  return Status::Ok();
}

Status LazyAttentionFile::AllocateOut(Job* job) {
  if (job->out.size() > 0) return Status::Ok();
  const bool pooled = job->request.pooled;
  const int64_t rows = pooled ? OverviewSide(job->rows) : job->rows,
                cols = pooled ? OverviewSide(job->cols) : job->cols;
  if (!TryAllocate((size_t)(rows * cols) * sizeof(float)))
    return Status::Error("out of memory for " + std::to_string(rows) + " x " + std::to_string(cols) + " weights");
  job->out.resize((Eigen::Index)rows, (Eigen::Index)cols);
  if (pooled) job->out.setZero();  // weights are >= 0 once decoded: MaxPoolOverview's start
  if (pooled && job->request.with_stats) {
    job->stats.reset(new (std::nothrow) HeadStatsAccumulator);
    if (!job->stats || !TryAllocate((size_t)(job->rows + job->cols) * (sizeof(double) + sizeof(float))))
      return Status::Error("out of memory for a head's statistics");
    job->stats->Begin((int)job->rows, (int)job->cols);
  }
  return Status::Ok();
}

// Of `available` elements from `done` on, those the next step decodes: a piece, or for a pooled
// request the whole rows in it (at least one row, so a row longer than a piece is still decoded).
int64_t LazyAttentionFile::PieceWeights(const Job& job, int64_t available) const {
  if (!job.request.pooled) return std::min(kPieceWeights, available);
  const int64_t rows = std::max<int64_t>(1, kPieceWeights / job.cols);
  return std::min(rows, available / job.cols) * job.cols;
}

Status LazyAttentionFile::StartParts(Job* job, int* in_flight, int limit) {
  const int parts = job->Parts();
  if (job->state == JobState::Queued) {
    // Not zeroed: the source writes every byte before it is decoded (a 32 MiB memset and its page
    // faults cost a switch tens of ms in the browser).
    job->staging.reset(new (std::nothrow) uint8_t[(size_t)job->range.size]);
    if (!job->staging)
      return Status::Error("out of memory for a read of " + std::to_string(job->range.size) + " bytes");
    job->staging_bytes = job->range.size;
    job->part_tickets.assign((size_t)parts, 0);
    job->part_done.assign((size_t)parts, 0);
    job->state = JobState::Reading;
    ++reads_;
  }
  while (*in_flight < limit && job->parts_started < parts) {
    const int i = job->parts_started++;
    const uint64_t begin = (uint64_t)i * kPartBytes, size = std::min(kPartBytes, job->range.size - begin);
    const uint64_t ticket = i == 0 ? job->ticket : next_ticket_++;
    job->part_tickets[(size_t)i] = ticket;
    ++*in_flight;
    source_->StartRead(ticket, job->range.offset + begin, size, job->staging.get() + begin, /*bulk=*/parts > 1);
  }
  return Status::Ok();
}

Status LazyAttentionFile::Step(Job* job) {
  const int64_t total = job->rows * job->cols;
  const size_t item = (size_t)StDTypeSize(job->dtype);
  Status st = AllocateOut(job);
  if (!st) return st;
  const int64_t n = PieceWeights(*job, (source_->Asynchronous() ? job->ready : total) - job->done);
  if (n <= 0) return Status::Ok();  // the next part is not in yet
  if (source_->Asynchronous()) {    // the bytes are in staging: decode a piece
    st = DecodePiece(job, job->staging.get() + (size_t)job->done * item, n);
    if (job->done == total) job->staging.reset(), job->staging_bytes = 0;
    return st;
  }
  // Synchronous: read a piece (straight into the output for F32) and decode it.
  const uint64_t offset = job->range.offset + (uint64_t)job->done * item;
  if (job->done == 0) ++reads_;
  uint8_t* dst = job->dtype == StDType::F32 && !job->request.pooled ? (uint8_t*)(job->out.data() + job->done) : nullptr;
  if (!dst) {
    if (piece_.size() < (size_t)n * item) {  // a piece, or one row of a pooled head (longer than a piece)
      if (!TryAllocate((size_t)n * item)) return Status::Error("out of memory for a piece of a head");
      piece_.resize((size_t)n * item);
    }
    dst = piece_.data();
  }
  if (!(st = source_->Read(offset, (uint64_t)n * item, dst))) return st;
  bytes_read_ += (uint64_t)n * item;
  return DecodePiece(job, dst, n);  // F32 in place: the checks only
}

void LazyAttentionFile::StartReads(bool single_part_only, uint64_t room) {
  if (!Asynchronous()) return;
  uint64_t ended = 0;
  Status how;
  while (source_->TakeCompletion(&ended, &how)) CompleteRead(ended, how);
  // Keep a few reads under way, oldest requests first.
  int in_flight = 0;
  for (const auto& j : jobs_) in_flight += j->state == JobState::Reading ? j->InFlight() : 0;
  // Requests of one part (overviews, screen copies, bands) first, so a whole head's parts do not
  // hold them back; while one is under way, whole heads keep one part in flight, not more (the
  // stand-in the view draws now gets the bandwidth).
  for (int pass = 0; pass < (single_part_only ? 1 : 2); ++pass) {
    int limit = max_in_flight_;
    if (pass == 1) {
      int small = 0, big = 0;
      for (const auto& j : jobs_) (j->Parts() > 1 ? big : small) += j->state == JobState::Reading ? j->InFlight() : 0;
      if (small > 0) limit = std::min(max_in_flight_, small + std::max(1, big));
    }
    for (auto it = jobs_.begin(); it != jobs_.end() && in_flight < limit;) {
      Job* job = it->get();
      const bool fits = job->state != JobState::Queued || job->range.size <= room;
      if (job->state == JobState::Decoding || (pass == 0 && job->Parts() > 1) || !fits) {
        ++it;
        continue;
      }
      if (job->state == JobState::Queued && room != UINT64_MAX) room -= job->range.size;
      const Status st = StartParts(job, &in_flight, limit);
      if (st) {
        ++it;
        continue;
      }
      std::unique_ptr<Job> failed = std::move(*it);
      it = jobs_.erase(it);
      Finish(std::move(failed), st);
    }
  }
}

void LazyAttentionFile::Pump(double budget_ms) {
  if (!source_) return;
  const auto start = std::chrono::steady_clock::now();
  auto elapsed_ms = [&] {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  };
  const bool async = source_->Asynchronous();
  StartReads();
  // The next job with bytes to decode: stand-ins (overviews, screen copies, statistics) first, then requests of
  // one part (bands), then whole heads; oldest first within each.
  auto next_job = [&] {
    auto pick = jobs_.end();
    int best = 3;
    for (auto it = jobs_.begin(); it != jobs_.end() && best > 0; ++it) {
      if (async && (*it)->ready <= (*it)->done) continue;
      const int rank = (*it)->request.overview || (*it)->request.stats ? 0 : (*it)->range.size <= kPartBytes ? 1 : 2;
      if (rank < best) best = rank, pick = it;
    }
    return pick;
  };
  for (bool first = true; first || elapsed_ms() < budget_ms; first = false) {  // at least one piece
    const auto it = next_job();
    if (it == jobs_.end()) break;
    const Status st = Step(it->get());
    if (!st || (*it)->done == (*it)->rows * (*it)->cols) {
      std::unique_ptr<Job> done = std::move(*it);
      jobs_.erase(it);
      Finish(std::move(done), st);
    }
  }
}

}  // namespace attnviz
