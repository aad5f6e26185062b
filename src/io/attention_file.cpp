#include "io/attention_file.h"

#include <cmath>
#include <cstdio>
#include <cstring>

#include "io/attention_file_detail.h"
#include "io/attention_sets.h"
#include "io/memory_budget.h"
#include "io/npy.h"
#include "io/npz.h"
#include "io/safetensors.h"
#include "io/utf8.h"
#include "io/zip.h"

namespace attnviz {

int AttentionFile::TotalHeads() const {
  int n = 0;
  for (const Layer& l : layers) n += (int)l.heads.size();
  return n;
}

namespace attention_file_detail {

// Tokens "0", "1", ... for files that give none.
void IndexTokens(int64_t n, std::vector<std::string>* tokens) {
  tokens->clear();
  for (int64_t i = 0; i < n; ++i) tokens->push_back(std::to_string(i));
}

// "layer 0 ('name') head 1 ('name')", names shortened and made printable (they come from the file).
std::string Where(const AttentionFile& f, size_t layer, size_t head) {
  return "layer " + std::to_string(layer) + " ('" + PrintableText(f.layers[layer].name, 64) + "') head " +
         std::to_string(head) + " ('" + PrintableText(f.layers[layer].heads[head].name, 64) + "')";
}

Status CheckName(const std::string& name, const char* what, const AttentionFileLimits& limits) {
  if (name.size() <= limits.max_name_bytes) return Status::Ok();
  return Status::Error(std::string("attention: a ") + what + " name is longer than " +
                       std::to_string(limits.max_name_bytes) + " bytes (" + std::to_string(name.size()) + ")");
}

// A finite number that no float32 holds (JSON doubles, f8 arrays).
Status BeyondFloat32(double x, const std::string& where, int64_t row, int64_t col) {
  char b[32];
  std::snprintf(b, sizeof(b), "%g", x);
  return Status::Error(where + ": weight " + b + " at row " + std::to_string(row) + ", column " + std::to_string(col) +
                       " is beyond the float32 range (weights are probabilities)");
}

// ---- JSON ------------------------------------------------------------------
Status JsonTokens(const JsonValue* v, const char* key, const AttentionFileLimits& limits,
                  std::vector<std::string>* out) {
  if (!v->IsArray()) return Status::Error(std::string("attention json: \"") + key + "\" must be an array of strings");
  if ((int64_t)v->ArraySize() > limits.max_tokens)
    return Status::Error(std::string("attention json: \"") + key + "\" has more than " +
                         std::to_string(limits.max_tokens) + " tokens");
  out->clear();
  if (!v->numbers.empty()) {  // all numbers: token ids, keep them as text
    for (double d : v->numbers) {
      char b[32];
      std::snprintf(b, sizeof(b), "%.17g", d);
      out->push_back(b);
    }
    return Status::Ok();
  }
  for (size_t i = 0; i < v->items.size(); ++i) {
    const JsonValue& t = v->items[i];
    if (t.type != JsonType::String)
      return Status::Error(std::string("attention json: \"") + key + "\"[" + std::to_string(i) + "] is a " +
                           JsonTypeName(t.type) + ", expected a string");
    if (t.string.size() > limits.max_token_bytes)
      return Status::Error(std::string("attention json: \"") + key + "\"[" + std::to_string(i) + "] is longer than " +
                           std::to_string(limits.max_token_bytes) + " bytes");
    out->push_back(t.string);
  }
  return Status::Ok();
}

Status JsonMatrix(const JsonValue& v, const std::string& where, int64_t* budget, MatrixRM* out) {
  if (!v.IsArray() || !v.numbers.empty())
    return Status::Error("attention json: " + where + ": \"weights\" must be an array of rows (arrays of numbers)");
  const size_t rows = v.items.size();
  size_t cols = 0;
  for (size_t i = 0; i < rows; ++i) {
    const JsonValue& r = v.items[i];
    if (!r.IsNumberArray())
      return Status::Error("attention json: " + where + ": row " + std::to_string(i) +
                           " must be an array of numbers (null, strings, NaN are not allowed)");
    if (i == 0) cols = r.numbers.size();
    if (r.numbers.size() != cols)
      return Status::Error("attention json: " + where + ": row " + std::to_string(i) + " has " +
                           std::to_string(r.numbers.size()) + " values, row 0 has " + std::to_string(cols));
  }
  *budget -= (int64_t)(rows * cols);
  if (*budget < 0) return Status::Error("attention json: too many weights in total (limit exceeded)");
  if (!TryAllocate(rows * cols * sizeof(float)))
    return Status::Error("attention json: " + where + ": not enough memory for " + std::to_string(rows) + " x " +
                         std::to_string(cols) + " weights");
  out->resize((Eigen::Index)rows, (Eigen::Index)cols);
  for (size_t i = 0; i < rows; ++i) {
    for (size_t j = 0; j < cols; ++j) {
      const double x = v.items[i].numbers[j];
      if (std::fabs(x) > 3.4028234663852886e38)  // finite in JSON, but no float32 holds it
        return BeyondFloat32(x, "attention json: " + where, (int64_t)i, (int64_t)j);
      (*out)((Eigen::Index)i, (Eigen::Index)j) = (float)x;
    }
  }
  return Status::Ok();
}

Status JsonHead(const JsonValue& h, const std::string& where, size_t index, int64_t* budget, AttentionFile::Head* out) {
  if (h.IsArray()) {  // a bare matrix is accepted as an unnamed head
    out->name = "head " + std::to_string(index);
    return JsonMatrix(h, where, budget, &out->weights);
  }
  if (!h.IsObject()) return Status::Error("attention json: " + where + " must be an object with \"weights\"");
  const JsonValue* name = h.Find("name");
  if (name && name->type == JsonType::String && name->string.size() > AttentionFileLimits().max_name_bytes)
    return CheckName(name->string, "head", AttentionFileLimits());
  out->name = name && name->type == JsonType::String ? name->string : "head " + std::to_string(index);
  const JsonValue* w = h.Find("weights");
  if (!w) return Status::Error("attention json: " + where + " has no \"weights\"");
  Status st = JsonMatrix(*w, where, budget, &out->weights);
  // Optional queries and keys (the steps view's q . k product); ValidateAttentionFile checks shapes.
  const JsonValue *q = h.Find("q"), *k = h.Find("k");
  if (st && (q || k) && !(q && k))
    return Status::Error("attention json: " + where + " gives \"q\" without \"k\" or k without q");
  if (st && q) st = JsonMatrix(*q, where + " \"q\"", budget, &out->q);
  if (st && k) st = JsonMatrix(*k, where + " \"k\"", budget, &out->k);
  return st;
}

// ---- NPZ -------------------------------------------------------------------
const char* const kNpzAttentionNames[3] = {"attention", "head_weights", "weights"};

std::string NpzArrayName(const std::string& member) {
  const size_t n = member.size();
  return n > 4 && member.compare(n - 4, 4, ".npy") == 0 ? member.substr(0, n - 4) : member;
}

Status NpzTokens(const NpzFile& z, const char* name, const AttentionFileLimits& limits, std::vector<std::string>* out,
                 bool* found) {
  const NdArray* a = z.Find(name);
  *found = a != nullptr;
  if (!a) return Status::Ok();
  if (a->Ndim() != 1)
    return Status::Error(std::string("attention npz: '") + name + "' must be 1-D, got shape " + a->ShapeString());
  if (a->Numel() > limits.max_tokens)
    return Status::Error(std::string("attention npz: '") + name + "' has too many tokens");
  if (a->dtype == DType::Unicode || a->dtype == DType::Bytes) return ToStrings(*a, out, name);
  if (DTypeIsNumeric(a->dtype) && !DTypeIsFloat(a->dtype)) {  // token ids
    std::vector<int64_t> ids;
    Status st = ToInt64Vector(*a, &ids, name);
    if (!st) return st;
    out->clear();
    for (int64_t id : ids) out->push_back(std::to_string(id));
    return Status::Ok();
  }
  return Status::Error(std::string("attention npz: '") + name +
                       "' must be a string array (<U or |S) or integer ids, got " + DTypeName(a->dtype));
}

Status NpzNames(const NpzFile& z, const char* name, size_t count, std::vector<std::string>* out) {
  const NdArray* a = z.Find(name);
  if (!a) return Status::Ok();
  if (a->Ndim() != 1 || a->Numel() != (int64_t)count)  // before any string is made
    return Status::Error(std::string("attention npz: '") + name + "' has shape " + a->ShapeString() + ", expected (" +
                         std::to_string(count) + ",)");
  std::vector<std::string> names;
  Status st = ToStrings(*a, &names, name);
  if (!st) return Status::Error("attention npz: " + st.message);
  for (const std::string& n : names)
    if (!(st = CheckName(n, "layer or head", AttentionFileLimits()))) return st;
  *out = names;
  return Status::Ok();
}

Status CheckAttentionShape(const NdArray& a, const char* array_name, const AttentionFileLimits& limits) {
  if (!DTypeIsNumeric(a.dtype))
    return Status::Error(std::string("attention: '") + array_name + "' must be a numeric array, got " +
                         DTypeName(a.dtype));
  int64_t L = 1, H = 1, nq, nk;
  if (a.Ndim() == 4) {
    L = a.shape[0];
    H = a.shape[1];
    nq = a.shape[2];
    nk = a.shape[3];
  } else if (a.Ndim() == 3) {
    H = a.shape[0];
    nq = a.shape[1];
    nk = a.shape[2];
  } else if (a.Ndim() == 2) {
    nq = a.shape[0];
    nk = a.shape[1];
  } else {
    return Status::Error(std::string("attention: '") + array_name +
                         "' must have shape [layers, heads, n_q, n_k], [heads, n_q, n_k] or [n_q, n_k], got " +
                         a.ShapeString());
  }
  if (L < 1 || H < 1 || nq < 1 || nk < 1)
    return Status::Error(std::string("attention: '") + array_name + "' is empty " + a.ShapeString());
  if (L > limits.max_layers || H > limits.max_heads || nq > limits.max_tokens || nk > limits.max_tokens ||
      a.Numel() > limits.max_values)
    return Status::Error(std::string("attention: '") + array_name + "' of shape " + a.ShapeString() +
                         " exceeds the size limits");
  return Status::Ok();
}

Status PeekNpzAttention(const uint8_t* data, size_t size, const std::vector<ZipEntry>& entries,
                        const AttentionFileLimits& limits) {
  // The array ParseAttentionNpzArrays will use ('attention', else 'head_weights', else 'weights'),
  // and every set's (version 2), by array name (the member's, '.npy' dropped, as ParseNpz does).
  const auto array_name = [](const ZipEntry& e) { return NpzArrayName(e.name); };
  std::vector<const ZipEntry*> used;
  bool v2 = false;
  for (const ZipEntry& e : entries) v2 = v2 || array_name(e) == "attnviz_version";
  for (const char* name : kNpzAttentionNames) {
    if (v2) break;
    for (const ZipEntry& e : entries)
      if (array_name(e) == name) used.push_back(&e);
    if (!used.empty()) break;
  }
  for (const ZipEntry& e : entries) {
    const std::string n = array_name(e);
    if (n.rfind("set", 0) == 0 && n.size() > 10 && n.compare(n.size() - 10, 10, "_attention") == 0) used.push_back(&e);
  }
  std::vector<uint8_t> head;
  for (const ZipEntry* e : used) {
    NpyHeader h;
    if (!ZipPeek(data, size, *e, 1 << 16, &head) || !ParseNpyHeader(head.data(), head.size(), &h)) continue;
    NdArray shape_only;
    shape_only.shape = h.shape;
    shape_only.dtype = h.dtype;
    const Status st = CheckAttentionShape(shape_only, array_name(*e).c_str(), limits);
    if (!st) return st;
  }
  return Status::Ok();
}

Status ParseAttentionNpzFile(const uint8_t* data, size_t size, const AttentionFileLimits& limits, NpzFile* out) {
  std::vector<ZipEntry> entries;
  Status st = ZipList(data, size, &entries);
  if (!st) return Status::Error("npz: " + st.message);
  if (!(st = PeekNpzAttention(data, size, entries, limits))) return st;
  return ParseNpzListed(data, size, entries, out);
}

Status FromAttentionArray(const NdArray& a, const char* array_name, const AttentionFileLimits& limits,
                          AttentionFile* f) {
  Status st = CheckAttentionShape(a, array_name, limits);
  if (!st) return st;
  const size_t nd = a.shape.size();
  const int64_t L = nd == 4 ? a.shape[0] : 1, H = nd >= 3 ? a.shape[nd - 3] : 1;
  const int64_t nq = a.shape[nd - 2], nk = a.shape[nd - 1];
  f->layers.assign((size_t)L, AttentionFile::Layer());
  int64_t flat = 0;
  for (int64_t l = 0; l < L; ++l) {
    f->layers[(size_t)l].name = "layer " + std::to_string(l);
    f->layers[(size_t)l].heads.resize((size_t)H);
    for (int64_t h = 0; h < H; ++h) {
      AttentionFile::Head& head = f->layers[(size_t)l].heads[(size_t)h];
      head.name = "head " + std::to_string(h);
      if (!TryAllocate((size_t)(nq * nk) * sizeof(float)))
        return Status::Error(std::string("attention: not enough memory for '") + array_name + "' " + a.ShapeString());
      head.weights.resize((Eigen::Index)nq, (Eigen::Index)nk);
      const uint8_t* src = a.data.data() + flat * a.itemsize;
      if (a.dtype == DType::Float32 || a.dtype == DType::Float16) {  // the common cases: no per-element switch
        DecodeFloats(a.dtype == DType::Float32 ? StDType::F32 : StDType::F16, src, (size_t)(nq * nk),
                     head.weights.data());
        flat += nq * nk;
        continue;
      }
      for (int64_t i = 0; i < nq * nk; ++i) {
        const double x = a.GetDouble(flat++);
        if (std::isfinite(x) && std::fabs(x) > 3.4028234663852886e38)
          return BeyondFloat32(
              x,
              std::string("attention: '") + array_name + "' layer " + std::to_string(l) + " head " + std::to_string(h),
              i / nk, i % nk);
        head.weights.data()[i] = (float)x;
      }
    }
  }
  return Status::Ok();
}

}  // namespace attention_file_detail

using namespace attention_file_detail;

Status ParseAttentionJson(const char* text, size_t size, AttentionFile* out, const AttentionFileLimits& limits) {
  JsonValue root;
  Status st = ParseJson(text, size, &root);
  if (!st) return st;
  if (IsAttentionDocumentJson(root)) return FirstSetOf(root, out, limits);
  return ParseAttentionJsonValue(root, out, limits);
}

namespace attention_file_detail {

// "layers": [{"name", "heads": [{"name", "weights"} or a matrix, ...]}, ...]
Status JsonLayers(const JsonValue& layers, const AttentionFileLimits& limits, int64_t* budget,
                  std::vector<AttentionFile::Layer>* out) {
  Status st;
  if (!layers.IsArray() || !layers.numbers.empty())
    return Status::Error("attention json: \"layers\" must be an array of objects");
  if ((int64_t)layers.items.size() > limits.max_layers) return Status::Error("attention json: too many layers");
  for (size_t l = 0; l < layers.items.size(); ++l) {
    const JsonValue& lv = layers.items[l];
    const std::string lwhere = "layers[" + std::to_string(l) + "]";
    if (!lv.IsObject()) return Status::Error("attention json: " + lwhere + " must be an object with \"heads\"");
    AttentionFile::Layer layer;
    const JsonValue* name = lv.Find("name");
    if (name && name->type == JsonType::String && !(st = CheckName(name->string, "layer", limits))) return st;
    layer.name = name && name->type == JsonType::String ? name->string : "layer " + std::to_string(l);
    const JsonValue* heads = lv.Find("heads");
    if (!heads || !heads->IsArray() || !heads->numbers.empty())
      return Status::Error("attention json: " + lwhere + " needs \"heads\": an array of {\"name\", \"weights\"}");
    if ((int64_t)heads->items.size() > limits.max_heads)
      return Status::Error("attention json: " + lwhere + " has too many heads");
    for (size_t h = 0; h < heads->items.size(); ++h) {
      AttentionFile::Head head;
      st = JsonHead(heads->items[h], lwhere + ".heads[" + std::to_string(h) + "]", h, budget, &head);
      if (!st) return st;
      layer.heads.push_back(std::move(head));
    }
    out->push_back(std::move(layer));
  }
  return Status::Ok();
}

Status ParseAttentionJsonValue(const JsonValue& root, AttentionFile* out, const AttentionFileLimits& limits) {
  Status st;
  if (!root.IsObject())
    return Status::Error("attention json: the top level must be an object, got " +
                         std::string(JsonTypeName(root.type)));
  AttentionFile f;
  if (const JsonValue* fmt = root.Find("format")) {
    if (fmt->type != JsonType::String || fmt->string != "attnviz")
      return Status::Error("attention json: \"format\" must be \"attnviz\"");
  }
  if (const JsonValue* ver = root.Find("version")) {
    if (ver->type != JsonType::Number) return Status::Error("attention json: \"version\" must be a number");
    if (ver->number != 1)
      return Status::Error("attention json: version " + SerializeJson(*ver) +
                           " is not supported (this build reads versions 1 and 2)");
  }
  const JsonValue* tokens = root.Find("tokens");
  const JsonValue* src = root.Find("source_tokens");
  const JsonValue* tgt = root.Find("target_tokens");
  if (tokens && (src || tgt))
    return Status::Error("attention json: give either \"tokens\" or \"source_tokens\"/\"target_tokens\", not both");
  if (tokens) {
    if (!(st = JsonTokens(tokens, "tokens", limits, &f.source_tokens))) return st;
    f.target_tokens = f.source_tokens;
    f.self_attention = true;
  }
  if (src && !(st = JsonTokens(src, "source_tokens", limits, &f.source_tokens))) return st;
  if (tgt && !(st = JsonTokens(tgt, "target_tokens", limits, &f.target_tokens))) return st;

  int64_t budget = limits.max_values;
  const JsonValue* layers = root.Find("layers");
  if (layers) {
    if (!(st = JsonLayers(*layers, limits, &budget, &f.layers))) return st;
  } else if (const JsonValue* w = root.Find("weights")) {  // shorthand: one matrix
    AttentionFile::Head head;
    if (!(st = JsonHead(*w, "weights", 0, &budget, &head))) return st;
    f.layers.push_back({"layer 0", {std::move(head)}});
  } else {
    return Status::Error("attention json: no \"layers\" (or \"weights\") found");
  }
  if (const JsonValue* meta = root.Find("meta")) {
    if (!meta->IsObject() && !meta->IsNull()) return Status::Error("attention json: \"meta\" must be an object");
    f.meta = *meta;
  }
  const bool have_head = !f.layers.empty() && !f.layers[0].heads.empty();
  if (!src && !tokens && have_head) {
    IndexTokens(f.layers[0].heads[0].weights.cols(), &f.source_tokens);
    f.warnings.push_back("no source tokens given; using indices");
  }
  if (!tgt && !tokens && have_head) {
    IndexTokens(f.layers[0].heads[0].weights.rows(), &f.target_tokens);
    f.warnings.push_back("no target tokens given; using indices");
  }
  if (!(st = ValidateAttentionFile(&f, limits))) return st;
  *out = std::move(f);
  return Status::Ok();
}

}  // namespace attention_file_detail

Status ParseAttentionNpz(const uint8_t* data, size_t size, AttentionFile* out, const AttentionFileLimits& limits) {
  NpzFile z;
  Status st;
  if (size >= 6 && std::memcmp(data, "\x93NUMPY", 6) == 0) {
    NdArray a;
    if (!(st = ParseNpy(data, size, &a))) return st;
    z.Add("attention", std::move(a));
  } else if (!(st = ParseAttentionNpzFile(data, size, limits, &z))) {
    return st;
  }
  return AttentionFileFromArrays(z, out, limits);
}

Status AttentionFileFromArrays(const NpzFile& z, AttentionFile* out, const AttentionFileLimits& limits) {
  if (z.Find("attnviz_version")) return FirstSetOf(z, out, limits);
  return ParseAttentionNpzArrays(z, out, limits);
}

namespace attention_file_detail {

Status ParseAttentionNpzArrays(const NpzFile& z, AttentionFile* out, const AttentionFileLimits& limits) {
  Status st;
  AttentionFile f;
  const NdArray* a = nullptr;
  const char* used = nullptr;
  for (const char* n : kNpzAttentionNames) {
    if ((a = z.Find(n))) {
      used = n;
      break;
    }
  }
  if (!a) {
    std::string have;
    for (const std::string& n : z.names) have += (have.empty() ? "" : ", ") + n;
    return Status::Error(
        "attention npz: no 'attention' array (also looked for 'head_weights' and 'weights'); the file has: " +
        (have.empty() ? std::string("nothing") : have));
  }
  if (!(st = FromAttentionArray(*a, used, limits, &f))) return st;
  bool has_tokens, has_src, has_tgt;
  if (!(st = NpzTokens(z, "tokens", limits, &f.source_tokens, &has_tokens))) return st;
  if (has_tokens) {
    f.target_tokens = f.source_tokens;
    f.self_attention = true;
  }
  if (!(st = NpzTokens(z, "source_tokens", limits, &f.source_tokens, &has_src))) return st;
  if (!(st = NpzTokens(z, "target_tokens", limits, &f.target_tokens, &has_tgt))) return st;
  if (has_tokens && (has_src || has_tgt))
    return Status::Error("attention npz: give either 'tokens' or 'source_tokens'/'target_tokens', not both");
  if (!has_src && !has_tokens) {
    IndexTokens(f.layers[0].heads[0].weights.cols(), &f.source_tokens);
    f.warnings.push_back("no source tokens given; using indices");
  }
  if (!has_tgt && !has_tokens) {
    IndexTokens(f.layers[0].heads[0].weights.rows(), &f.target_tokens);
    f.warnings.push_back("no target tokens given; using indices");
  }
  std::vector<std::string> layer_names, head_names;
  if (!(st = NpzNames(z, "layer_names", f.layers.size(), &layer_names))) return st;
  if (!(st = NpzNames(z, "head_names", f.layers[0].heads.size(), &head_names))) return st;
  for (size_t l = 0; l < f.layers.size(); ++l) {
    if (!layer_names.empty()) f.layers[l].name = layer_names[l];
    for (size_t h = 0; h < f.layers[l].heads.size() && !head_names.empty(); ++h)
      f.layers[l].heads[h].name = head_names[h];
  }
  if (std::strcmp(used, "attention") != 0 && layer_names.empty()) f.layers[0].name = used;
  if (!(st = ValidateAttentionFile(&f, limits))) return st;
  *out = std::move(f);
  return Status::Ok();
}

}  // namespace attention_file_detail

Status LoadAttentionFile(const uint8_t* data, size_t size, AttentionFile* out, const AttentionFileLimits& limits) {
  if (size == 0) return Status::Error("attention: the file is empty");
  if (size >= 2 && data[0] == 'P' && data[1] == 'K') return ParseAttentionNpz(data, size, out, limits);
  if (size >= 6 && std::memcmp(data, "\x93NUMPY", 6) == 0) return ParseAttentionNpz(data, size, out, limits);
  size_t p = 0;
  if (size >= 3 && data[0] == 0xEF && data[1] == 0xBB && data[2] == 0xBF) p = 3;
  while (p < size && (data[p] == ' ' || data[p] == '\n' || data[p] == '\r' || data[p] == '\t')) ++p;
  if (p < size && (data[p] == '{' || data[p] == '[')) return ParseAttentionJson((const char*)data, size, out, limits);
  return Status::Error("attention: unrecognised file: expected JSON ('{'), NPZ ('PK') or NPY ('\\x93NUMPY')");
}

// A head's optional q [n_q, d] and k [n_k, d]: both or neither, matching shapes, finite.
static Status CheckQueriesKeys(const AttentionFile::Head& head, int64_t nq, int64_t nk, const std::string& where) {
  if (head.q.size() == 0 && head.k.size() == 0) return Status::Ok();
  if (head.q.rows() != nq || head.k.rows() != nk || head.q.cols() != head.k.cols() || head.q.cols() < 1)
    return Status::Error("attention: " + where + " has q [" + std::to_string(head.q.rows()) + ", " +
                         std::to_string(head.q.cols()) + "] and k [" + std::to_string(head.k.rows()) + ", " +
                         std::to_string(head.k.cols()) + "]; expected [" + std::to_string(nq) + ", d] and [" +
                         std::to_string(nk) + ", d]");
  if (!head.q.allFinite() || !head.k.allFinite())
    return Status::Error("attention: " + where + " has a non-finite value in q or k");
  return Status::Ok();
}

Status ValidateAttentionFile(AttentionFile* f, const AttentionFileLimits& limits) {
  if (f->layers.empty()) return Status::Error("attention: the file has no layers");
  if ((int64_t)f->layers.size() > limits.max_layers) return Status::Error("attention: too many layers");
  const int64_t nq = (int64_t)f->target_tokens.size(), nk = (int64_t)f->source_tokens.size();
  if (nq == 0 || nk == 0)
    return Status::Error("attention: there are no tokens (n_q = " + std::to_string(nq) +
                         ", n_k = " + std::to_string(nk) + ")");
  if (nq > limits.max_tokens || nk > limits.max_tokens) return Status::Error("attention: too many tokens");
  for (const auto* list : {&f->source_tokens, &f->target_tokens})
    for (const std::string& t : *list)
      if (t.size() > limits.max_token_bytes)
        return Status::Error("attention: a token is longer than " + std::to_string(limits.max_token_bytes) + " bytes");
  int64_t total = 0;
  RowSumWarnings row_sums;
  for (size_t l = 0; l < f->layers.size(); ++l) {
    AttentionFile::Layer& layer = f->layers[l];
    Status named = CheckName(layer.name, "layer", limits);
    for (size_t h = 0; named && h < layer.heads.size(); ++h) named = CheckName(layer.heads[h].name, "head", limits);
    if (!named) return named;
    if (layer.heads.empty())
      return Status::Error("attention: layer " + std::to_string(l) + " ('" + layer.name + "') has no heads");
    if ((int64_t)layer.heads.size() > limits.max_heads)
      return Status::Error("attention: layer " + std::to_string(l) + " has too many heads");
    for (size_t h = 0; h < layer.heads.size(); ++h) {
      MatrixRM& w = layer.heads[h].weights;
      const std::string where = Where(*f, l, h);
      if (Status qk = CheckQueriesKeys(layer.heads[h], nq, nk, where); !qk) return qk;
      if (w.rows() != nq || w.cols() != nk)
        return Status::Error("attention: " + where + " has weights [" + std::to_string(w.rows()) + ", " +
                             std::to_string(w.cols()) + "] but there are " + std::to_string(nq) +
                             " target tokens (rows) and " + std::to_string(nk) + " source tokens (columns)");
      total += (int64_t)w.size();
      if (total > limits.max_values)
        return Status::Error("attention: more than " + std::to_string(limits.max_values) + " weights in total");
      const Status st = CheckHeadWeights(where, &w, limits, &row_sums);
      if (!st) return st;
    }
  }
  row_sums.Finish(&f->warnings);
  return Status::Ok();
}

namespace attention_file_detail {

Status CheckHeadWeights(const std::string& where, MatrixRM* weights, const AttentionFileLimits& limits,
                        RowSumWarnings* row_sums, bool* clamped) {
  MatrixRM& w = *weights;
  int bad_rows = 0;
  double worst = 0;
  const Eigen::Index cols = w.cols();
  for (Eigen::Index i = 0; i < w.rows(); ++i) {
    float* row = w.data() + i * cols;
    double sum = 0;
    bool clean = true;  // the usual case: every weight finite and >= 0, checked without branches
    for (Eigen::Index j = 0; j < cols; ++j) {
      clean &= row[j] >= 0.0f && row[j] <= 3.4028234663852886e38f;
      sum += row[j];
    }
    if (!clean) {
      sum = 0;
      for (Eigen::Index j = 0; j < cols; ++j) {
        float& x = row[j];
        if (!std::isfinite(x))
          return Status::Error("attention: " + where + " has a non-finite weight at row " + std::to_string(i) +
                               ", column " + std::to_string(j));
        if (x < 0) {
          if (x < -limits.negative_tolerance) {
            char b[32];
            std::snprintf(b, sizeof(b), "%g", (double)x);
            return Status::Error("attention: " + where + " has a negative weight " + b + " at row " +
                                 std::to_string(i) + ", column " + std::to_string(j) +
                                 " (attention weights are probabilities)");
          }
          x = 0.0f;
          if (clamped) *clamped = true;
        }
        sum += x;
      }
    }
    if (sum != 0.0 && std::fabs(sum - 1.0) > limits.row_sum_tolerance) {
      ++bad_rows;
      worst = std::max(worst, std::fabs(sum - 1.0));
    }
  }
  if (bad_rows) row_sums->Add(where, bad_rows, (int64_t)w.rows(), worst, limits);
  return Status::Ok();
}

void RowSumWarnings::Add(const std::string& where, int bad_rows, int64_t rows, double worst,
                         const AttentionFileLimits& limits) {
  if (warned >= limits.max_row_sum_warnings) {
    ++unwarned;
    return;
  }
  ++warned;
  char b[64];
  std::snprintf(b, sizeof(b), "%g", worst);
  warnings.push_back(where + ": " + std::to_string(bad_rows) + " of " + std::to_string(rows) +
                     " rows do not sum to 1 (largest |sum - 1| = " + b + ")");
}

void RowSumWarnings::Finish(std::vector<std::string>* out) {
  for (std::string& w : warnings) out->push_back(std::move(w));
  warnings.clear();
  if (unwarned) out->push_back("... and " + std::to_string(unwarned) + " more heads with rows that do not sum to 1");
}

}  // namespace attention_file_detail

std::string SaveAttentionJson(const AttentionFile& f, int indent) {
  JsonWriter w(indent);
  w.BeginObject();
  w.Key("format");
  w.String("attnviz");
  w.Key("version");
  w.Number(1);
  auto tokens = [&](const char* key, const std::vector<std::string>& list) {
    w.Key(key);
    w.BeginArray(true);
    for (const std::string& t : list) w.String(t);
    w.EndArray();
  };
  if (f.self_attention && f.source_tokens == f.target_tokens) {
    tokens("tokens", f.source_tokens);
  } else {
    tokens("source_tokens", f.source_tokens);
    tokens("target_tokens", f.target_tokens);
  }
  w.Key("layers");
  w.BeginArray();
  for (const AttentionFile::Layer& layer : f.layers) {
    w.BeginObject();
    w.Key("name");
    w.String(layer.name);
    w.Key("heads");
    w.BeginArray();
    for (const AttentionFile::Head& head : layer.heads) {
      w.BeginObject();
      w.Key("name");
      w.String(head.name);
      w.Key("weights");
      w.BeginArray();
      for (Eigen::Index i = 0; i < head.weights.rows(); ++i) {
        w.BeginArray(true);
        for (Eigen::Index j = 0; j < head.weights.cols(); ++j) w.NumberF(head.weights(i, j));
        w.EndArray();
      }
      w.EndArray();
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  if (f.meta.IsObject()) {
    w.Key("meta");
    w.Value(f.meta);
  }
  w.EndObject();
  return w.str() + "\n";
}

Status SaveAttentionNpz(const AttentionFile& f, bool compressed, std::vector<uint8_t>* out) {
  if (f.layers.empty() || f.layers[0].heads.empty()) return Status::Error("attention: nothing to save");
  const size_t H = f.layers[0].heads.size();
  const int64_t nq = f.layers[0].heads[0].weights.rows(), nk = f.layers[0].heads[0].weights.cols();
  std::vector<float> values;
  std::vector<std::string> head_names;
  for (const AttentionFile::Layer& layer : f.layers) {
    if (layer.heads.size() != H)
      return Status::Error("attention npz: every layer must have the same number of heads to save as one array");
    for (const AttentionFile::Head& head : layer.heads) {
      if (head.weights.rows() != nq || head.weights.cols() != nk)
        return Status::Error("attention npz: heads differ in shape");
      values.insert(values.end(), head.weights.data(), head.weights.data() + head.weights.size());
    }
  }
  for (const AttentionFile::Head& head : f.layers[0].heads) head_names.push_back(head.name);
  std::vector<std::string> layer_names;
  for (const AttentionFile::Layer& layer : f.layers) layer_names.push_back(layer.name);
  NpzFile z;
  z.Add("attention", FromFloats({(int64_t)f.layers.size(), (int64_t)H, nq, nk}, values.data()));
  if (f.self_attention && f.source_tokens == f.target_tokens) {
    z.Add("tokens", FromStrings(f.source_tokens));
  } else {
    z.Add("source_tokens", FromStrings(f.source_tokens));
    z.Add("target_tokens", FromStrings(f.target_tokens));
  }
  z.Add("layer_names", FromStrings(layer_names));
  z.Add("head_names", FromStrings(head_names));
  NpzWriteOptions o;
  o.compressed = compressed;
  return WriteNpz(z, o, out);
}

}  // namespace attnviz
