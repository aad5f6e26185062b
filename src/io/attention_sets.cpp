// Version 2 attention files (several attention sets) and BertViz's data, on top of the version 1
// reader's pieces (attention_file_detail.h). docs/FORMATS.md describes both.
#include "io/attention_sets.h"

#include <cstring>
#include <utility>

#include "io/attention_file_detail.h"
#include "io/npy.h"

namespace attnviz {

using namespace attention_file_detail;

const char* AttentionKindName(AttentionKind k) {
  switch (k) {
    case AttentionKind::Causal:
      return "causal";
    case AttentionKind::Cross:
      return "cross";
    default:
      return "self";
  }
}

bool ParseAttentionKind(const std::string& s, AttentionKind* out) {
  for (AttentionKind k : {AttentionKind::Self, AttentionKind::Causal, AttentionKind::Cross}) {
    if (s == AttentionKindName(k)) {
      *out = k;
      return true;
    }
  }
  return false;
}

namespace {

// ---- shared ----------------------------------------------------------------

AttentionKind DefaultKind(const AttentionFile& f) {
  return f.source_tokens == f.target_tokens ? AttentionKind::Self : AttentionKind::Cross;
}

// BertViz names its sets "Encoder", "Decoder", "Cross" (encoder-decoder models), "All",
// "Sentence A -> Sentence B", ... (sentence pairs).
AttentionKind KindFromBertvizName(const std::string& name, const AttentionFile& f) {
  if (name == "Decoder") return AttentionKind::Causal;
  if (name == "Cross") return AttentionKind::Cross;
  if (name == "Encoder") return AttentionKind::Self;
  return DefaultKind(f);
}

// Checks a set and charges its weights to the document's budget.
Status FinishSet(AttentionSet* set, AttentionFileLimits* remaining) {
  Status st = ValidateAttentionFile(&set->data, *remaining);
  if (!st) return Status::Error("set '" + set->name + "': " + st.message);
  for (const AttentionFile::Layer& l : set->data.layers)
    for (const AttentionFile::Head& h : l.heads) remaining->max_values -= (int64_t)h.weights.size();
  return Status::Ok();
}

// One set as a document (version 1 files, and the v1 API reading the first set).
void WrapSingle(AttentionFile f, AttentionDocument* doc) {
  AttentionSet set;
  set.name = "attention";
  set.kind = f.self_attention ? AttentionKind::Self : DefaultKind(f);
  doc->meta = std::move(f.meta);
  doc->warnings = std::move(f.warnings);
  f.meta = JsonValue();
  f.warnings.clear();
  set.data = std::move(f);
  doc->version = 1;
  doc->sets.push_back(std::move(set));
}

// ---- JSON ------------------------------------------------------------------

int Depth(const JsonValue& v) {  // nesting of arrays down the first element: a matrix is 2
  if (!v.IsArray()) return 0;
  if (v.IsNumberArray()) return 1;
  return 1 + Depth(v.items[0]);
}

Status JsonNames(const JsonValue* v, const char* key, size_t count, std::vector<std::string>* out) {
  if (!v) return Status::Ok();
  AttentionFileLimits unlimited;
  Status st = JsonTokens(v, key, unlimited, out);
  if (!st) return st;
  if (out->size() != count)
    return Status::Error(std::string("\"") + key + "\" has " + std::to_string(out->size()) + " names, expected " +
                         std::to_string(count));
  return Status::Ok();
}

// "weights": [layers][heads][n_q][n_k], [heads][n_q][n_k] or [n_q][n_k].
Status JsonNestedWeights(const JsonValue& w, const std::string& where, const AttentionFileLimits& limits,
                         AttentionFile* f) {
  const int depth = Depth(w);
  if (depth < 2 || depth > 4)
    return Status::Error(where + ": \"weights\" must be nested [layers][heads][n_q][n_k] (or 3-D, 2-D) arrays");
  int64_t budget = limits.max_values;
  const size_t L = depth == 4 ? w.items.size() : 1;
  if ((int64_t)L > limits.max_layers) return Status::Error(where + ": too many layers");
  for (size_t l = 0; l < L; ++l) {
    const JsonValue& lv = depth == 4 ? w.items[l] : w;
    AttentionFile::Layer layer;
    layer.name = "layer " + std::to_string(l);
    const size_t H = depth >= 3 ? lv.items.size() : 1;
    if (depth >= 3 && (!lv.IsArray() || !lv.numbers.empty()))
      return Status::Error(where + ": layer " + std::to_string(l) + " must be an array of heads");
    if ((int64_t)H > limits.max_heads) return Status::Error(where + ": too many heads");
    for (size_t h = 0; h < H; ++h) {
      AttentionFile::Head head;
      head.name = "head " + std::to_string(h);
      const std::string hw = where + ".weights[" + std::to_string(l) + "][" + std::to_string(h) + "]";
      Status st = JsonMatrix(depth >= 3 ? lv.items[h] : lv, hw, &budget, &head.weights);
      if (!st) return st;
      layer.heads.push_back(std::move(head));
    }
    f->layers.push_back(std::move(layer));
  }
  return Status::Ok();
}

// The set's tokens: "tokens", or "query_tokens" and "key_tokens" (BertViz: left_text, right_text).
Status JsonSetTokens(const JsonValue& sv, const char* q_key, const char* k_key, const AttentionFileLimits& limits,
                     AttentionFile* f) {
  const JsonValue* tokens = sv.Find("tokens");
  const JsonValue* q = sv.Find(q_key);
  const JsonValue* k = sv.Find(k_key);
  Status st;
  if (tokens && (q || k))
    return Status::Error(std::string("give either \"tokens\" or \"") + q_key + "\"/\"" + k_key + "\"");
  if (tokens) {
    if (!(st = JsonTokens(tokens, "tokens", limits, &f->source_tokens))) return st;
    f->target_tokens = f->source_tokens;
    f->self_attention = true;
    return Status::Ok();
  }
  if (!q || !k) return Status::Error(std::string("needs \"tokens\", or \"") + q_key + "\" and \"" + k_key + "\"");
  if (!(st = JsonTokens(q, q_key, limits, &f->target_tokens))) return st;
  return JsonTokens(k, k_key, limits, &f->source_tokens);
}

// The set's layers from "weights" (nested) or "layers" (as in version 1).
Status JsonSetLayers(const JsonValue& sv, const std::string& where, const AttentionFileLimits& limits,
                     AttentionFile* f) {
  Status st;
  if (const JsonValue* w = sv.Find("weights")) {
    if (!(st = JsonNestedWeights(*w, where, limits, f))) return st;
  } else if (const JsonValue* layers = sv.Find("layers")) {
    int64_t budget = limits.max_values;
    if (!(st = JsonLayers(*layers, limits, &budget, &f->layers))) return st;
  } else {
    return Status::Error(where + ": needs \"weights\" or \"layers\"");
  }
  std::vector<std::string> names;
  if (!(st = JsonNames(sv.Find("layer_names"), "layer_names", f->layers.size(), &names))) return st;
  for (size_t l = 0; l < names.size(); ++l) f->layers[l].name = names[l];
  if (!(st = JsonNames(sv.Find("head_names"), "head_names", f->layers[0].heads.size(), &names))) return st;
  for (AttentionFile::Layer& l : f->layers)
    for (size_t h = 0; h < names.size() && h < l.heads.size(); ++h) l.heads[h].name = names[h];
  return Status::Ok();
}

Status JsonSet(const JsonValue& sv, size_t index, AttentionFileLimits* remaining, AttentionSet* set) {
  const std::string where = "sets[" + std::to_string(index) + "]";
  if (!sv.IsObject()) return Status::Error("attention json: " + where + " must be an object");
  const JsonValue* name = sv.Find("name");
  set->name = name && name->type == JsonType::String ? name->string : "set " + std::to_string(index);
  Status st = JsonSetTokens(sv, "query_tokens", "key_tokens", *remaining, &set->data);
  if (st) st = JsonSetLayers(sv, where, *remaining, &set->data);
  if (!st) return Status::Error("attention json: " + where + " ('" + set->name + "'): " + st.message);
  set->kind = DefaultKind(set->data);
  if (const JsonValue* kind = sv.Find("kind")) {
    if (kind->type != JsonType::String || !ParseAttentionKind(kind->string, &set->kind))
      return Status::Error("attention json: " + where + ": \"kind\" must be \"self\", \"causal\" or \"cross\"");
  }
  return FinishSet(set, remaining);
}

Status BertvizSet(const JsonValue& e, size_t index, AttentionFileLimits* remaining, AttentionSet* set) {
  const std::string where = "attention[" + std::to_string(index) + "]";
  if (!e.IsObject()) return Status::Error("bertviz: " + where + " must be an object with \"attn\"");
  const JsonValue* name = e.Find("name");
  set->name = name && name->type == JsonType::String ? name->string
                                                     : (index == 0 ? "attention" : "set " + std::to_string(index));
  Status st = JsonSetTokens(e, "left_text", "right_text", *remaining, &set->data);
  const JsonValue* attn = e.Find("attn");
  if (st && !attn) st = Status::Error("needs \"attn\": [layers][heads][queries][keys]");
  if (st) st = JsonNestedWeights(*attn, "attn", *remaining, &set->data);
  if (!st) return Status::Error("bertviz: " + where + " ('" + set->name + "'): " + st.message);
  set->data.self_attention = false;
  set->kind = KindFromBertvizName(set->name, set->data);
  return FinishSet(set, remaining);
}

const JsonValue* BertvizList(const JsonValue& root) {  // the params object's "attention", or the bare list
  const JsonValue* list = root.IsObject() ? root.Find("attention") : &root;
  if (!list || !list->IsArray() || list->items.empty() || !list->items[0].IsObject()) return nullptr;
  return list->items[0].Find("attn") ? list : nullptr;
}

Status JsonTokenizer(const JsonValue* t, TokenizerInfo* out) {
  if (!t || t->IsNull()) return Status::Ok();
  if (!t->IsObject()) return Status::Error("attention json: \"tokenizer\" must be an object");
  auto text = [&](const char* key, std::string* dst) {
    const JsonValue* v = t->Find(key);
    if (v && v->type == JsonType::String) *dst = v->string;
  };
  text("space_marker", &out->space_marker);
  text("continuation_marker", &out->continuation_marker);
  if (const JsonValue* sp = t->Find("special_tokens")) {
    AttentionFileLimits limits;
    Status st = JsonTokens(sp, "special_tokens", limits, &out->special_tokens);
    if (!st) return st;
  }
  return Status::Ok();
}

Status JsonDocument(const JsonValue& root, const AttentionFileLimits& limits, AttentionDocument* doc) {
  AttentionFileLimits remaining = limits;
  Status st;
  if (const JsonValue* list = BertvizList(root)) {
    doc->version = 0;
    for (size_t i = 0; i < list->items.size(); ++i) {
      AttentionSet set;
      if (!(st = BertvizSet(list->items[i], i, &remaining, &set))) return st;
      doc->sets.push_back(std::move(set));
    }
    return Status::Ok();
  }
  const JsonValue* sets = root.Find("sets");
  if (!sets || !sets->IsArray() || sets->items.empty())
    return Status::Error("attention json: version 2 needs \"sets\": a non-empty array of attention sets");
  if ((int64_t)sets->items.size() > limits.max_layers) return Status::Error("attention json: too many sets");
  doc->version = 2;
  for (size_t i = 0; i < sets->items.size(); ++i) {
    AttentionSet set;
    if (!(st = JsonSet(sets->items[i], i, &remaining, &set))) return st;
    doc->sets.push_back(std::move(set));
  }
  if (!(st = JsonTokenizer(root.Find("tokenizer"), &doc->tokenizer))) return st;
  if (const JsonValue* meta = root.Find("meta")) {
    if (!meta->IsObject() && !meta->IsNull()) return Status::Error("attention json: \"meta\" must be an object");
    doc->meta = *meta;
  }
  return Status::Ok();
}

// ---- NPZ -------------------------------------------------------------------

Status NpzJsonString(const NpzFile& z, const char* name, JsonValue* out) {
  const NdArray* a = z.Find(name);
  if (!a) return Status::Ok();
  std::vector<std::string> s;
  Status st = ToStrings(*a, &s, name);
  if (!st) return Status::Error("attention npz: " + st.message);
  if (s.size() != 1) return Status::Error(std::string("attention npz: '") + name + "' must hold one JSON string");
  st = ParseJson(s[0], out);
  if (!st) return Status::Error(std::string("attention npz: '") + name + "': " + st.message);
  return Status::Ok();
}

Status NpzSet(const NpzFile& z, size_t i, const std::vector<std::string>& names, const std::vector<std::string>& kinds,
              AttentionFileLimits* remaining, AttentionSet* set) {
  const std::string p = "set" + std::to_string(i) + "_";
  set->name = i < names.size() ? names[i] : "set " + std::to_string(i);
  const NdArray* a = z.Find(p + "attention");
  if (!a) return Status::Error("attention npz: no '" + p + "attention' array for set " + std::to_string(i));
  Status st = FromAttentionArray(*a, (p + "attention").c_str(), *remaining, &set->data);
  if (!st) return st;
  bool has_tokens, has_q, has_k;
  AttentionFile& f = set->data;
  if (!(st = NpzTokens(z, (p + "tokens").c_str(), *remaining, &f.source_tokens, &has_tokens))) return st;
  if (has_tokens) f.target_tokens = f.source_tokens, f.self_attention = true;
  if (!has_tokens) {
    if (!(st = NpzTokens(z, (p + "query_tokens").c_str(), *remaining, &f.target_tokens, &has_q))) return st;
    if (!(st = NpzTokens(z, (p + "key_tokens").c_str(), *remaining, &f.source_tokens, &has_k))) return st;
    if (!has_q || !has_k)
      return Status::Error("attention npz: set " + std::to_string(i) + " needs '" + p + "tokens' or '" + p +
                           "query_tokens' and '" + p + "key_tokens'");
  }
  std::vector<std::string> ln, hn;
  if (!(st = NpzNames(z, (p + "layer_names").c_str(), f.layers.size(), &ln))) return st;
  if (!(st = NpzNames(z, (p + "head_names").c_str(), f.layers[0].heads.size(), &hn))) return st;
  for (size_t l = 0; l < f.layers.size(); ++l) {
    if (!ln.empty()) f.layers[l].name = ln[l];
    for (size_t h = 0; h < hn.size(); ++h) f.layers[l].heads[h].name = hn[h];
  }
  set->kind = DefaultKind(f);
  if (i < kinds.size() && !ParseAttentionKind(kinds[i], &set->kind))
    return Status::Error("attention npz: set_kinds[" + std::to_string(i) + "] = '" + kinds[i] +
                         "' (expected self, causal or cross)");
  return FinishSet(set, remaining);
}

Status NpzDocument(const NpzFile& z, const AttentionFileLimits& limits, AttentionDocument* doc) {
  const NdArray& version = *z.Find("attnviz_version");
  if (!DTypeIsNumeric(version.dtype) || version.Numel() != 1 || version.GetDouble(0) != 2)
    return Status::Error("attention npz: attnviz_version must be the number 2 (this build reads versions 1 and 2)");
  Status st;
  doc->version = 2;
  std::vector<std::string> names, kinds;
  const NdArray* n = z.Find("set_names");
  if (!n) return Status::Error("attention npz: version 2 needs 'set_names'");
  if (!(st = ToStrings(*n, &names, "set_names"))) return Status::Error("attention npz: " + st.message);
  if (names.empty() || (int64_t)names.size() > limits.max_layers)
    return Status::Error("attention npz: 'set_names' must name 1 to " + std::to_string(limits.max_layers) + " sets");
  if (!(st = NpzNames(z, "set_kinds", names.size(), &kinds))) return st;
  AttentionFileLimits remaining = limits;
  for (size_t i = 0; i < names.size(); ++i) {
    AttentionSet set;
    if (!(st = NpzSet(z, i, names, kinds, &remaining, &set))) return st;
    doc->sets.push_back(std::move(set));
  }
  JsonValue tokenizer;
  if (!(st = NpzJsonString(z, "meta_json", &doc->meta))) return st;
  if (!(st = NpzJsonString(z, "tokenizer_json", &tokenizer))) return st;
  return JsonTokenizer(&tokenizer, &doc->tokenizer);
}

void CollectSetWarnings(AttentionDocument* doc) {
  for (AttentionSet& s : doc->sets) {
    for (std::string& w : s.data.warnings)
      doc->warnings.push_back(doc->sets.size() > 1 ? s.name + ": " + w : std::move(w));
    s.data.warnings.clear();
  }
}

Status FirstSet(AttentionDocument doc, AttentionFile* out) {
  AttentionFile f = std::move(doc.sets[0].data);
  f.meta = std::move(doc.meta);
  f.warnings = std::move(doc.warnings);
  if (doc.sets.size() > 1) {
    std::string names;
    for (const AttentionSet& s : doc.sets) names += (names.empty() ? "" : ", ") + s.name;
    f.warnings.push_back("the file has " + std::to_string(doc.sets.size()) + " attention sets (" + names +
                         "); this reads the first, '" + doc.sets[0].name + "'");
  }
  *out = std::move(f);
  return Status::Ok();
}

}  // namespace

namespace attention_file_detail {

bool IsAttentionDocumentJson(const JsonValue& root) {
  if (BertvizList(root)) return true;
  if (!root.IsObject()) return false;
  const JsonValue* v = root.Find("version");
  return root.Find("sets") || (v && v->type == JsonType::Number && v->number == 2);
}

Status FirstSetOf(const JsonValue& root, AttentionFile* out, const AttentionFileLimits& limits) {
  AttentionDocument doc;
  Status st = JsonDocument(root, limits, &doc);
  if (!st) return st;
  CollectSetWarnings(&doc);
  return FirstSet(std::move(doc), out);
}

Status FirstSetOf(const NpzFile& z, AttentionFile* out, const AttentionFileLimits& limits) {
  AttentionDocument doc;
  Status st = NpzDocument(z, limits, &doc);
  if (!st) return st;
  CollectSetWarnings(&doc);
  return FirstSet(std::move(doc), out);
}

}  // namespace attention_file_detail

Status LoadAttentionDocument(const uint8_t* data, size_t size, AttentionDocument* out,
                             const AttentionFileLimits& limits) {
  if (size == 0) return Status::Error("attention: the file is empty");
  AttentionDocument doc;
  Status st;
  const bool npy = size >= 6 && std::memcmp(data, "\x93NUMPY", 6) == 0;
  if (npy || (size >= 2 && data[0] == 'P' && data[1] == 'K')) {
    NpzFile z;
    if (npy) {
      NdArray a;
      if (!(st = ParseNpy(data, size, &a))) return st;
      z.Add("attention", std::move(a));
    } else if (!(st = ParseAttentionNpzFile(data, size, limits, &z))) {
      return st;  // (a bad attention array's shape is refused before anything is inflated)
    }
    if (z.Find("attnviz_version")) {
      st = NpzDocument(z, limits, &doc);
    } else {
      AttentionFile f;
      if ((st = ParseAttentionNpzArrays(z, &f, limits))) WrapSingle(std::move(f), &doc);
    }
  } else {
    size_t p = 0;
    if (size >= 3 && data[0] == 0xEF && data[1] == 0xBB && data[2] == 0xBF) p = 3;
    while (p < size && (data[p] == ' ' || data[p] == '\n' || data[p] == '\r' || data[p] == '\t')) ++p;
    if (p >= size || (data[p] != '{' && data[p] != '['))
      return Status::Error("attention: unrecognised file: expected JSON ('{'), NPZ ('PK') or NPY ('\\x93NUMPY')");
    JsonValue root;
    if (!(st = ParseJson((const char*)data, size, &root))) return st;
    if (IsAttentionDocumentJson(root)) {
      st = JsonDocument(root, limits, &doc);
    } else {
      AttentionFile f;
      if ((st = ParseAttentionJsonValue(root, &f, limits))) WrapSingle(std::move(f), &doc);
    }
  }
  if (!st) return st;
  CollectSetWarnings(&doc);
  *out = std::move(doc);
  return Status::Ok();
}

std::string SaveAttentionDocumentJson(const AttentionDocument& doc, int indent) {
  JsonWriter w(indent);
  w.BeginObject();
  w.Key("format");
  w.String("attnviz");
  w.Key("version");
  w.Number(2);
  const TokenizerInfo& t = doc.tokenizer;
  if (!t.space_marker.empty() || !t.continuation_marker.empty() || !t.special_tokens.empty()) {
    w.Key("tokenizer");
    w.BeginObject();
    w.Key("space_marker");
    t.space_marker.empty() ? w.Null() : w.String(t.space_marker);
    w.Key("continuation_marker");
    t.continuation_marker.empty() ? w.Null() : w.String(t.continuation_marker);
    w.Key("special_tokens");
    w.BeginArray(true);
    for (const std::string& s : t.special_tokens) w.String(s);
    w.EndArray();
    w.EndObject();
  }
  w.Key("sets");
  w.BeginArray();
  for (const AttentionSet& s : doc.sets) {
    w.BeginObject();
    w.Key("name");
    w.String(s.name);
    w.Key("kind");
    w.String(AttentionKindName(s.kind));
    w.Key("query_tokens");
    w.BeginArray(true);
    for (const std::string& x : s.data.target_tokens) w.String(x);
    w.EndArray();
    w.Key("key_tokens");
    w.BeginArray(true);
    for (const std::string& x : s.data.source_tokens) w.String(x);
    w.EndArray();
    w.Key("layers");
    w.BeginArray();
    for (const AttentionFile::Layer& l : s.data.layers) {
      w.BeginObject();
      w.Key("name");
      w.String(l.name);
      w.Key("heads");
      w.BeginArray();
      for (const AttentionFile::Head& h : l.heads) {
        w.BeginObject();
        w.Key("name");
        w.String(h.name);
        w.Key("weights");
        w.BeginArray();
        for (Eigen::Index r = 0; r < h.weights.rows(); ++r) {
          w.BeginArray(true);
          for (Eigen::Index c = 0; c < h.weights.cols(); ++c) w.NumberF(h.weights(r, c));
          w.EndArray();
        }
        w.EndArray();
        w.EndObject();
      }
      w.EndArray();
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  if (doc.meta.IsObject()) {
    w.Key("meta");
    w.Value(doc.meta);
  }
  w.EndObject();
  return w.str();
}

}  // namespace attnviz
