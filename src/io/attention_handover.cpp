#include "io/attention_handover.h"

#include <algorithm>
#include <cstring>

#include "io/json.h"
#include "io/memory_budget.h"

namespace attnviz {

namespace {

const char kMagic[17] =
    "\x93"
    "ATTNVIZ-HANDOFF";          // 16 bytes
constexpr size_t kPrefix = 24;  // magic + skeleton length
constexpr uint64_t kMaxSkeleton = uint64_t(256) << 20;

void Shape(JsonWriter* w, const MatrixRM& m) {
  w->BeginArray(true);
  w->Number((double)m.rows());
  w->Number((double)m.cols());
  w->EndArray();
}

void Strings(JsonWriter* w, const std::vector<std::string>& v) {
  w->BeginArray(true);
  for (const std::string& s : v) w->String(s);
  w->EndArray();
}

// Readers of the skeleton: every field checked, with a message naming it.
Status Str(const JsonValue& o, const char* key, size_t max, std::string* out) {
  const JsonValue* v = o.Find(key);
  if (!v || v->type != JsonType::String) return Status::Error(std::string("handover: '") + key + "' is not a string");
  if (v->string.size() > max) return Status::Error(std::string("handover: '") + key + "' is too long");
  *out = v->string;
  return Status::Ok();
}

Status StrList(const JsonValue& o, const char* key, size_t count_max, size_t max, std::vector<std::string>* out) {
  const JsonValue* v = o.Find(key);
  if (!v || !v->IsArray() || !v->numbers.empty())
    return Status::Error(std::string("handover: '") + key + "' is not a list of strings");
  if (v->items.size() > count_max) return Status::Error(std::string("handover: '") + key + "' is too long");
  out->clear();
  for (const JsonValue& x : v->items) {
    if (x.type != JsonType::String || x.string.size() > max)
      return Status::Error(std::string("handover: '") + key + "' holds a bad string");
    out->push_back(x.string);
  }
  return Status::Ok();
}

// [rows, cols] -> a matrix of that size, within the budget.
Status MakeMatrix(const JsonValue* shape, int64_t max_side, MemoryBudget* budget, uint64_t* floats, MatrixRM* m) {
  if (!shape || !shape->IsNumberArray() || shape->numbers.size() != 2)
    return Status::Error("handover: a matrix shape is not [rows, cols]");
  const double r = shape->numbers[0], c = shape->numbers[1];
  if (!(r >= 1 && c >= 1 && r <= (double)max_side && c <= (double)max_side) || r != (int64_t)r || c != (int64_t)c)
    return Status::Error("handover: a matrix shape is out of range");
  const uint64_t n = (uint64_t)r * (uint64_t)c;
  if (!budget->TryCharge(n * sizeof(float)) || !TryAllocate((size_t)(n * sizeof(float))))
    return Status::Error("handover: out of memory for the matrices (" + std::to_string(*floats + n) + " weights)");
  *floats += n;
  m->resize((Eigen::Index)r, (Eigen::Index)c);
  return Status::Ok();
}

Status ReadSet(const JsonValue& js, const AttentionFileLimits& lim, MemoryBudget* budget, uint64_t* floats,
               AttentionSet* set) {
  if (!js.IsObject()) return Status::Error("handover: a set is not an object");
  std::string kind;
  Status st = Str(js, "name", lim.max_name_bytes, &set->name);
  if (st) st = Str(js, "kind", 16, &kind);
  if (st && !ParseAttentionKind(kind, &set->kind)) st = Status::Error("handover: unknown kind '" + kind + "'");
  AttentionFile& f = set->data;
  if (st) st = StrList(js, "query_tokens", (size_t)lim.max_tokens, lim.max_token_bytes, &f.target_tokens);
  if (st) st = StrList(js, "key_tokens", (size_t)lim.max_tokens, lim.max_token_bytes, &f.source_tokens);
  if (st) st = StrList(js, "warnings", 4096, 1 << 16, &f.warnings);
  if (!st) return st;
  const JsonValue *self = js.Find("self_attention"), *meta = js.Find("meta"), *layers = js.Find("layers");
  f.self_attention = self && self->type == JsonType::Bool && self->boolean;
  if (meta) f.meta = *meta;
  const int64_t nq = (int64_t)f.target_tokens.size(), nk = (int64_t)f.source_tokens.size();
  if (nq < 1 || nk < 1) return Status::Error("handover: a set has no tokens");
  if (!layers || !layers->IsArray() || layers->items.empty() || layers->items.size() > (size_t)lim.max_layers)
    return Status::Error("handover: a set's layers are missing or too many");
  for (const JsonValue& jl : layers->items) {
    const JsonValue* heads = jl.IsObject() ? jl.Find("heads") : nullptr;
    if (!heads || !heads->IsArray() || heads->items.empty() || heads->items.size() > (size_t)lim.max_heads)
      return Status::Error("handover: a layer's heads are missing or too many");
    f.layers.emplace_back();
    AttentionFile::Layer& layer = f.layers.back();
    if (!(st = Str(jl, "name", lim.max_name_bytes, &layer.name))) return st;
    for (const JsonValue& jh : heads->items) {
      if (!jh.IsObject()) return Status::Error("handover: a head is not an object");
      layer.heads.emplace_back();
      AttentionFile::Head& h = layer.heads.back();
      if (!(st = Str(jh, "name", lim.max_name_bytes, &h.name))) return st;
      if (!(st = MakeMatrix(jh.Find("shape"), lim.max_tokens, budget, floats, &h.weights))) return st;
      if (h.weights.rows() != nq || h.weights.cols() != nk)
        return Status::Error("handover: a head's shape does not match its set's tokens");
      const JsonValue *q = jh.Find("q"), *k = jh.Find("k");
      if (!q != !k) return Status::Error("handover: a head has queries without keys or keys without queries");
      if (q) {
        if (!(st = MakeMatrix(q, lim.max_tokens, budget, floats, &h.q))) return st;
        if (!(st = MakeMatrix(k, lim.max_tokens, budget, floats, &h.k))) return st;
        if (h.q.rows() != nq || h.k.rows() != nk || h.q.cols() != h.k.cols())
          return Status::Error("handover: a head's queries and keys do not match its tokens");
      }
      if (*floats > (uint64_t)lim.max_values) return Status::Error("handover: too many weights");
    }
  }
  return Status::Ok();
}

}  // namespace

std::string HandoverHead(const AttentionDocument& doc) {
  JsonWriter w(0);
  w.BeginObject();
  w.Key("version");
  w.Number(doc.version);
  w.Key("space_marker");
  w.String(doc.tokenizer.space_marker);
  w.Key("continuation_marker");
  w.String(doc.tokenizer.continuation_marker);
  w.Key("special_tokens");
  Strings(&w, doc.tokenizer.special_tokens);
  w.Key("meta");
  w.Value(doc.meta);
  w.Key("warnings");
  Strings(&w, doc.warnings);
  w.Key("sets");
  w.BeginArray();
  for (const AttentionSet& s : doc.sets) {
    w.BeginObject();
    w.Key("name");
    w.String(s.name);
    w.Key("kind");
    w.String(AttentionKindName(s.kind));
    w.Key("self_attention");
    w.Bool(s.data.self_attention);
    w.Key("query_tokens");
    Strings(&w, s.data.target_tokens);
    w.Key("key_tokens");
    Strings(&w, s.data.source_tokens);
    w.Key("meta");
    w.Value(s.data.meta);
    w.Key("warnings");
    Strings(&w, s.data.warnings);
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
        w.Key("shape");
        Shape(&w, h.weights);
        if (h.q.size() && h.k.size()) {
          w.Key("q");
          Shape(&w, h.q);
          w.Key("k");
          Shape(&w, h.k);
        }
        w.EndObject();
      }
      w.EndArray();
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  const std::string skeleton = w.str();
  std::string out(kMagic, 16);
  const uint64_t n = skeleton.size();
  for (int i = 0; i < 8; ++i) out.push_back((char)(uint8_t)(n >> (8 * i)));
  return out + skeleton;
}

std::vector<HandoverBlock> HandoverBlocks(const AttentionDocument& doc) {
  std::vector<HandoverBlock> out;
  // Queries and keys only when a head has both (HandoverHead writes their shapes then).
  for (const AttentionSet& s : doc.sets)
    for (const AttentionFile::Layer& l : s.data.layers)
      for (const AttentionFile::Head& h : l.heads) {
        out.push_back({h.weights.data(), (size_t)h.weights.size()});
        if (h.q.size() && h.k.size()) {
          out.push_back({h.q.data(), (size_t)h.q.size()});
          out.push_back({h.k.data(), (size_t)h.k.size()});
        }
      }
  return out;
}

uint64_t HandoverSize(const AttentionDocument& doc) {
  uint64_t n = HandoverHead(doc).size();
  for (const HandoverBlock& b : HandoverBlocks(doc)) n += (uint64_t)b.count * sizeof(float);
  return n;
}

Status HandoverReceiver::Begin(uint64_t total_bytes, const AttentionFileLimits& limits) {
  *this = HandoverReceiver();
  limits_ = limits;
  total_ = total_bytes;
  if (total_bytes < kPrefix) return Fail(Status::Error("handover: too short"));
  return Status::Ok();
}

Status HandoverReceiver::Fail(Status st) {
  if (!failed_) {
    failed_ = true;
    error_ = st;
    doc_ = AttentionDocument();
    blocks_.clear();
    std::vector<uint8_t>().swap(head_);
  }
  return error_;
}

uint64_t HandoverReceiver::MemoryBytes() const {
  uint64_t b = head_.capacity();
  for (const auto& blk : blocks_) b += (uint64_t)blk.second * sizeof(float);
  return b;
}

Status HandoverReceiver::StartData() {
  JsonValue sk;
  JsonParseOptions opt;
  opt.max_bytes = (size_t)kMaxSkeleton;
  Status st = ParseJson((const char*)head_.data() + kPrefix, head_.size() - kPrefix, &sk, opt);
  if (!st) return Status::Error("handover: " + st.message);
  if (!sk.IsObject()) return Status::Error("handover: the skeleton is not an object");
  AttentionDocument& d = doc_;
  const JsonValue *version = sk.Find("version"), *meta = sk.Find("meta"), *sets = sk.Find("sets");
  d.version = version && version->type == JsonType::Number ? (int)version->number : 1;
  if (meta) d.meta = *meta;
  st = Str(sk, "space_marker", 64, &d.tokenizer.space_marker);
  if (st) st = Str(sk, "continuation_marker", 64, &d.tokenizer.continuation_marker);
  if (st) st = StrList(sk, "special_tokens", 4096, limits_.max_token_bytes, &d.tokenizer.special_tokens);
  if (st) st = StrList(sk, "warnings", 4096, 1 << 16, &d.warnings);
  if (!st) return st;
  if (!sets || !sets->IsArray() || sets->items.empty() || sets->items.size() > 4096)
    return Status::Error("handover: no sets");
  MemoryBudget budget;
  uint64_t floats = 0;
  for (const JsonValue& js : sets->items) {
    d.sets.emplace_back();
    if (!(st = ReadSet(js, limits_, &budget, &floats, &d.sets.back()))) return st;
  }
  if (head_.size() + floats * sizeof(float) != total_)
    return Status::Error("handover: " + std::to_string(total_) + " bytes, but the skeleton says " +
                         std::to_string(head_.size() + floats * sizeof(float)));
  for (const HandoverBlock& b : HandoverBlocks(d)) blocks_.push_back({const_cast<float*>(b.data), b.count});
  std::vector<uint8_t>().swap(head_);
  in_data_ = true;
  return Status::Ok();
}

Status HandoverReceiver::Feed(const uint8_t* data, size_t n) {
  if (failed_) return error_;
  if (n > total_ - received_) return Fail(Status::Error("handover: more bytes than announced"));
  received_ += n;
  if (!in_data_) {
    const size_t want = head_bytes_ ? (size_t)head_bytes_ : kPrefix;
    const size_t take = std::min(n, want - head_.size());
    head_.insert(head_.end(), data, data + take);
    data += take;
    n -= take;
    if (head_.size() < want) return Status::Ok();
    if (!head_bytes_) {
      if (std::memcmp(head_.data(), kMagic, 16) != 0) return Fail(Status::Error("handover: not a handover stream"));
      uint64_t len = 0;
      for (int i = 7; i >= 0; --i) len = (len << 8) | head_[16 + (size_t)i];
      if (len > kMaxSkeleton || len > total_ - kPrefix) return Fail(Status::Error("handover: bad skeleton length"));
      head_bytes_ = kPrefix + len;
      head_.reserve((size_t)head_bytes_);
      received_ -= n;  // the rest again, now that the skeleton's size is known
      return Feed(data, n);
    }
    const Status st = StartData();
    if (!st) return Fail(st);
  }
  while (n > 0) {
    if (block_ >= blocks_.size()) return Fail(Status::Error("handover: more bytes than the matrices hold"));
    const size_t size = blocks_[block_].second * sizeof(float);
    const size_t take = std::min(n, size - block_at_);
    std::memcpy((uint8_t*)blocks_[block_].first + block_at_, data, take);
    data += take;
    n -= take;
    block_at_ += take;
    if (block_at_ == size) ++block_, block_at_ = 0;
  }
  return Status::Ok();
}

Status HandoverReceiver::Finish(AttentionDocument* out) {
  if (failed_) return error_;
  if (received_ != total_ || !in_data_ || block_ != blocks_.size())
    return Fail(Status::Error("handover: ended after " + std::to_string(received_) + " of " + std::to_string(total_) +
                              " bytes"));
  *out = std::move(doc_);
  *this = HandoverReceiver();
  return Status::Ok();
}

}  // namespace attnviz
