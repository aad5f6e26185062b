#include "io/attention_handover.h"

#include <algorithm>
#include <cstdint>
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

std::string Length(uint64_t n) {
  std::string out;
  for (int i = 0; i < 8; ++i) out.push_back((char)(uint8_t)(n >> (8 * i)));
  return out;
}

uint64_t ReadLength(const uint8_t* p) {
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | p[i];
  return n;
}

void Shape(JsonWriter* w, int64_t rows, int64_t cols) {
  w->BeginArray(true);
  w->Number((double)rows);
  w->Number((double)cols);
  w->EndArray();
}

void Shape(JsonWriter* w, const MatrixRM& m) {
  Shape(w, m.rows(), m.cols());
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

// A list of strings: v (may be null) named `key` in messages.
Status StrValues(const JsonValue* v, const char* key, size_t count_max, size_t max, std::vector<std::string>* out) {
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

Status StrList(const JsonValue& o, const char* key, size_t count_max, size_t max, std::vector<std::string>* out) {
  return StrValues(o.Find(key), key, count_max, max, out);
}

// [rows, cols]: checks a matrix's shape and charges it to the budget. The matrix is allocated when its floats
// arrive (HandoverReceiver::Reach): allocating 144 heads at once took 50-140 ms of the page's thread
// (each fresh page is zeroed on first touch), spread over the feeds it costs nothing extra. Until
// then it is rows x 0, and *cols holds its width.
Status MakeMatrix(const JsonValue* shape, int64_t max_side, MemoryBudget* budget, uint64_t* floats, MatrixRM* m,
                  int64_t* cols) {
  if (!shape || !shape->IsNumberArray() || shape->numbers.size() != 2)
    return Status::Error("handover: a matrix shape is not [rows, cols]");
  const double r = shape->numbers[0], c = shape->numbers[1];
  if (!(r >= 1 && c >= 1 && r <= (double)max_side && c <= (double)max_side) || r != (int64_t)r || c != (int64_t)c)
    return Status::Error("handover: a matrix shape is out of range");
  const uint64_t n = (uint64_t)r * (uint64_t)c;
  if (!budget->TryCharge(n * sizeof(float)))
    return Status::Error("handover: out of memory for the matrices (" + std::to_string(*floats + n) + " weights)");
  *floats += n;
  m->resize((Eigen::Index)r, 0);
  *cols = (int64_t)c;
  return Status::Ok();
}

Status ReadSet(const JsonValue& js, const AttentionFileLimits& lim, MemoryBudget* budget, uint64_t* floats,
               std::vector<int64_t>* widths, AttentionSet* set) {
  if (!js.IsObject()) return Status::Error("handover: a set is not an object");
  std::string kind;
  Status st = Str(js, "name", lim.max_name_bytes, &set->name);
  if (st) st = Str(js, "kind", 16, &kind);
  if (st && !ParseAttentionKind(kind, &set->kind)) st = Status::Error("handover: unknown kind '" + kind + "'");
  AttentionFile& f = set->data;
  if (st) st = StrList(js, "query_tokens", (size_t)lim.max_tokens, lim.max_token_bytes, &f.target_tokens);
  if (st) st = StrList(js, "key_tokens", (size_t)lim.max_tokens, lim.max_token_bytes, &f.source_tokens);
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
      int64_t wc = 0, qc = 0, kc = 0;
      if (!(st = MakeMatrix(jh.Find("shape"), lim.max_tokens, budget, floats, &h.weights, &wc))) return st;
      if (h.weights.rows() != nq || wc != nk)
        return Status::Error("handover: a head's shape does not match its set's tokens");
      widths->push_back(wc);
      const JsonValue *q = jh.Find("q"), *k = jh.Find("k");
      if (!q != !k) return Status::Error("handover: a head has queries without keys or keys without queries");
      if (q) {
        if (!(st = MakeMatrix(q, lim.max_tokens, budget, floats, &h.q, &qc))) return st;
        if (!(st = MakeMatrix(k, lim.max_tokens, budget, floats, &h.k, &kc))) return st;
        if (h.q.rows() != nq || h.k.rows() != nk || qc != kc)
          return Status::Error("handover: a head's queries and keys do not match its tokens");
        widths->push_back(qc);
        widths->push_back(kc);
      }
      if (*floats > (uint64_t)lim.max_values) return Status::Error("handover: too many weights");
    }
  }
  return Status::Ok();
}

}  // namespace

std::string HandoverHead(const AttentionDocument& doc) {
  return HandoverHeadWithShape(doc, -1, -1);
}

std::string HandoverHeadWithShape(const AttentionDocument& doc, int64_t rows, int64_t cols) {
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
        if (rows >= 0)
          Shape(&w, rows, cols);
        else
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
  return std::string(kMagic, 16) + Length(w.str().size()) + w.str();
}

std::string HandoverTrailer(const AttentionDocument& doc) {
  return HandoverTrailer(doc, {});
}

std::string HandoverTrailer(const AttentionDocument& doc, const std::vector<int64_t>& clamped) {
  JsonWriter w(0);
  w.BeginObject();
  w.Key("warnings");
  Strings(&w, doc.warnings);
  w.Key("set_warnings");
  w.BeginArray();
  for (const AttentionSet& s : doc.sets) Strings(&w, s.data.warnings);
  w.EndArray();
  if (!clamped.empty()) {
    w.Key("clamped");
    w.BeginArray(true);
    for (int64_t i : clamped) w.Number((double)i);
    w.EndArray();
  }
  w.EndObject();
  return Length(w.str().size()) + w.str();
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
  uint64_t n = HandoverHead(doc).size() + HandoverTrailer(doc).size();
  for (const HandoverBlock& b : HandoverBlocks(doc)) n += (uint64_t)b.count * sizeof(float);
  return n;
}

Status HandoverReceiver::Begin(const AttentionFileLimits& limits) {
  *this = HandoverReceiver();
  limits_ = limits;
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
  for (const Block& blk : blocks_)
    b += (uint64_t)blk.m->rows() * (uint64_t)blk.cols * sizeof(float);  // as they will be
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
  if (!st) return st;
  if (!sets || !sets->IsArray() || sets->items.empty() || sets->items.size() > 4096)
    return Status::Error("handover: no sets");
  MemoryBudget budget;
  uint64_t floats = 0;
  std::vector<int64_t> widths;  // of the matrices, in stream order
  for (const JsonValue& js : sets->items) {
    d.sets.emplace_back();
    if (!(st = ReadSet(js, limits_, &budget, &floats, &widths, &d.sets.back()))) return st;
  }
  // The whole allocated and freed once: the WASM heap grows once, and a document that cannot fit
  // fails now rather than half-way through its floats.
  if (floats > (uint64_t)SIZE_MAX / sizeof(float) || !TryAllocate((size_t)floats * sizeof(float)))
    return Status::Error("handover: out of memory for the matrices (" + std::to_string(floats) + " weights)");
  // The matrices in stream order (HandoverBlocks), once the document's vectors no longer move.
  size_t w = 0;
  const auto add = [&](MatrixRM* m) { blocks_.push_back({m, widths[w++]}); };
  for (AttentionSet& set : d.sets)
    for (AttentionFile::Layer& l : set.data.layers)
      for (AttentionFile::Head& h : l.heads) {
        add(&h.weights);
        if (h.q.rows() > 0) add(&h.q), add(&h.k);
      }
  std::vector<uint8_t>().swap(head_);
  return Status::Ok();
}

Status HandoverReceiver::ReadTrailer() {
  JsonValue t;
  Status st = ParseJson((const char*)head_.data() + 8, head_.size() - 8, &t);
  if (!st) return Status::Error("handover: trailer: " + st.message);
  if (!t.IsObject()) return Status::Error("handover: the trailer is not an object");
  if (!(st = StrList(t, "warnings", 1 << 16, 1 << 16, &doc_.warnings))) return st;
  const JsonValue* sw = t.Find("set_warnings");
  if (!sw || !sw->IsArray() || sw->ArraySize() != doc_.sets.size())
    return Status::Error("handover: the trailer's set warnings do not match the sets");
  for (size_t i = 0; i < doc_.sets.size(); ++i)
    if (!(st = StrValues(&sw->items[i], "set_warnings", 1 << 16, 1 << 16, &doc_.sets[i].data.warnings))) return st;
  const JsonValue* clamped = t.Find("clamped");
  if (clamped) {
    if (!clamped->IsNumberArray()) return Status::Error("handover: 'clamped' is not a list of matrices");
    for (double x : clamped->numbers) {
      if (!(x >= 0 && x < (double)blocks_.size())) return Status::Error("handover: 'clamped' names no matrix");
      MatrixRM& m = *blocks_[(size_t)x].m;  // every matrix is in by now
      float* p = m.data();
      for (Eigen::Index k = 0; k < m.size(); ++k) p[k] = p[k] < 0.0f ? 0.0f : p[k];
    }
  }
  std::vector<uint8_t>().swap(head_);
  return Status::Ok();
}

// Gathers a length-prefixed part into head_: `prefix` bytes, the length at prefix - 8, then that many.
Status HandoverReceiver::Collect(const uint8_t** data, size_t* n, size_t prefix, uint64_t limit, bool* complete) {
  *complete = false;
  while (*n > 0) {
    const size_t want = head_bytes_ ? (size_t)head_bytes_ : prefix;
    const size_t take = std::min(*n, want - head_.size());
    head_.insert(head_.end(), *data, *data + take);
    *data += take;
    *n -= take;
    if (head_.size() < want) return Status::Ok();
    if (head_bytes_) {
      *complete = true;
      return Status::Ok();
    }
    if (prefix == kPrefix && std::memcmp(head_.data(), kMagic, 16) != 0)
      return Status::Error("handover: not a handover stream");
    const uint64_t len = ReadLength(head_.data() + prefix - 8);
    if (len > limit) return Status::Error("handover: bad length");
    head_bytes_ = prefix + len;
    head_.reserve((size_t)head_bytes_);
    if (len == 0) {
      *complete = true;
      return Status::Ok();
    }
  }
  return Status::Ok();
}

Status HandoverReceiver::Feed(const uint8_t* data, size_t n) {
  if (failed_) return error_;
  bool complete = false;
  Status st;
  if (part_ == Part::Head) {
    if (!(st = Collect(&data, &n, kPrefix, kMaxSkeleton, &complete))) return Fail(st);
    if (!complete) return Status::Ok();
    if (!(st = StartData())) return Fail(st);
    head_bytes_ = 0;
    part_ = Part::Data;
  }
  while (part_ == Part::Data && n > 0 && block_ < blocks_.size()) {
    if (!(st = Reach())) return Fail(st);
    const size_t size = BlockBytes();
    const size_t take = std::min(n, size - block_at_);
    std::memcpy((uint8_t*)blocks_[block_].m->data() + block_at_, data, take);
    data += take;
    n -= take;
    block_at_ += take;
    if (block_at_ == size) ++block_, block_at_ = 0;
  }
  if (part_ == Part::Data && block_ == blocks_.size()) part_ = Part::Trailer;
  if (part_ == Part::Trailer && n > 0) {
    if (!(st = Collect(&data, &n, 8, kMaxSkeleton, &complete))) return Fail(st);
    if (complete) {
      if (!(st = ReadTrailer())) return Fail(st);
      part_ = Part::Done;
    }
  }
  if (n > 0) return Fail(Status::Error("handover: more bytes than the stream holds"));
  return Status::Ok();
}

size_t HandoverReceiver::BlockBytes() const {
  return (size_t)blocks_[block_].m->rows() * (size_t)blocks_[block_].cols * sizeof(float);
}

// The matrix being filled gets its memory (MakeMatrix left it rows x 0).
Status HandoverReceiver::Reach() {
  MatrixRM* m = blocks_[block_].m;
  const int64_t cols = blocks_[block_].cols;
  if (m->cols() == cols) return Status::Ok();
  if (!TryAllocate(BlockBytes())) return Status::Error("handover: out of memory for the matrices");
  m->resize(m->rows(), (Eigen::Index)cols);
  return Status::Ok();
}

size_t HandoverReceiver::Room(uint8_t** dst) {
  if (failed_ || part_ != Part::Data || block_ >= blocks_.size()) return 0;
  const Status st = Reach();
  if (!st) {
    (void)Fail(st);
    return 0;
  }
  *dst = (uint8_t*)blocks_[block_].m->data() + block_at_;
  return BlockBytes() - block_at_;
}

Status HandoverReceiver::Advance(size_t n) {
  uint8_t* dst = nullptr;
  if (failed_) return error_;
  if (n > Room(&dst)) return Fail(Status::Error("handover: advanced past a matrix"));
  block_at_ += n;
  if (block_at_ == BlockBytes()) ++block_, block_at_ = 0;
  if (block_ == blocks_.size()) part_ = Part::Trailer;
  return Status::Ok();
}

Status HandoverReceiver::Finish(AttentionDocument* out) {
  if (failed_) return error_;
  if (part_ != Part::Done)
    return Fail(
        Status::Error(part_ == Part::Data ? "handover: ended inside the matrices" : "handover: ended before its end"));
  *out = std::move(doc_);
  *this = HandoverReceiver();
  return Status::Ok();
}

}  // namespace attnviz
