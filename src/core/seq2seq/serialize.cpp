// attnviz seq2seq: model files (see model.h, "Serialization").
//
// Layout (little-endian):
//   "AVS2" | u32 version | 14 x i32 config (version 1: the first 12) | vocab(source) | vocab(target) | u32 n_params |
//   n_params x { u16 name_len, name, u32 rows, u32 cols, u8 dtype (0 f32, 1 f16), data } | u32 fnv1a(all before)
//   vocab: u32 count, count x { u16 len, bytes }
#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/half.h"
#include "core/seq2seq/model.h"

namespace attnviz {
namespace seq2seq {

namespace {

constexpr char kMagic[4] = {'A', 'V', 'S', '2'};
constexpr uint32_t kMaxVocab = 1u << 20;
constexpr uint32_t kMaxParams = 4096;

uint32_t Fnv1a(const uint8_t* p, size_t n) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 16777619u;
  return h;
}

class Writer {
 public:
  explicit Writer(std::vector<uint8_t>* out) : out_(out) {}
  void Bytes(const void* p, size_t n) {
    const uint8_t* b = static_cast<const uint8_t*>(p);
    out_->insert(out_->end(), b, b + n);
  }
  void U8(uint8_t v) { out_->push_back(v); }
  void U16(uint16_t v) { U8(v & 0xFF), U8(v >> 8); }
  void U32(uint32_t v) { U16(v & 0xFFFF), U16(v >> 16); }
  void F32(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    U32(x);
  }
  void Str(const std::string& s) { U16(static_cast<uint16_t>(s.size())), Bytes(s.data(), s.size()); }

 private:
  std::vector<uint8_t>* out_;
};

class Reader {
 public:
  Reader(const uint8_t* p, size_t n) : p_(p), n_(n) {}
  bool ok() const { return ok_; }
  size_t remaining() const { return n_ - pos_; }
  bool Need(size_t k) {
    if (!ok_ || n_ - pos_ < k) ok_ = false;
    return ok_;
  }
  uint8_t U8() { return Need(1) ? p_[pos_++] : 0; }
  uint16_t U16() {
    const uint16_t lo = U8();
    return static_cast<uint16_t>(lo | (U8() << 8));
  }
  uint32_t U32() {
    const uint32_t lo = U16();
    return lo | (static_cast<uint32_t>(U16()) << 16);
  }
  float F32() {
    const uint32_t x = U32();
    float f;
    std::memcpy(&f, &x, 4);
    return f;
  }
  std::string Str() {
    const uint16_t len = U16();
    if (!Need(len)) return {};
    std::string s(reinterpret_cast<const char*>(p_ + pos_), len);
    pos_ += len;
    return s;
  }

 private:
  const uint8_t* p_;
  size_t n_, pos_ = 0;
  bool ok_ = true;
};

void WriteVocab(Writer* w, const Vocab& v) {
  w->U32(static_cast<uint32_t>(v.Size()));
  for (const std::string& t : v.Tokens()) w->Str(t);
}

Status ReadVocab(Reader* r, const char* which, Vocab* out) {
  const uint32_t n = r->U32();
  if (!r->ok() || n < kNumSpecial || n > kMaxVocab || n > r->remaining() / 2)
    return Status::Error(std::string("model file: bad ") + which + " vocabulary size");
  Vocab v;
  for (uint32_t i = 0; i < n; ++i) {
    const std::string t = r->Str();
    if (!r->ok()) return Status::Error(std::string("model file: truncated ") + which + " vocabulary");
    if (i < kNumSpecial) {
      if (t != v.Token(static_cast<int>(i)))
        return Status::Error(std::string("model file: bad special token in ") + which + " vocabulary");
      continue;
    }
    if (t.empty() || v.Contains(t))
      return Status::Error(std::string("model file: empty or duplicate word in ") + which + " vocabulary");
    v.Add(t);
  }
  *out = std::move(v);
  return Status::Ok();
}

}  // namespace

Status SaveModel(const Model& m, std::vector<uint8_t>* out, bool half) {
  Status st = ValidateConfig(m.config);
  if (!st) return st;
  std::vector<uint8_t> buf;
  Writer w(&buf);
  w.Bytes(kMagic, 4);
  w.U32(kModelFormatVersion);
  const ModelConfig& c = m.config;
  for (int v : {static_cast<int>(c.kind), static_cast<int>(c.task), c.emb, c.enc_hidden, c.dec_hidden, c.attn,
                static_cast<int>(c.luong_score), c.d_model, c.heads, c.ff, c.enc_layers, c.dec_layers, c.align_layer,
                c.align_head})
    w.U32(static_cast<uint32_t>(v));
  WriteVocab(&w, m.source_vocab);
  WriteVocab(&w, m.target_vocab);
  w.U32(static_cast<uint32_t>(m.params.size()));
  for (const Parameter& p : m.params) {
    if (!p.value.allFinite()) return Status::Error("save: parameter " + p.name + " has non-finite values");
    w.Str(p.name);
    w.U32(static_cast<uint32_t>(p.value.rows()));
    w.U32(static_cast<uint32_t>(p.value.cols()));
    w.U8(half ? 1 : 0);
    for (int i = 0; i < p.value.size(); ++i) {
      if (half)
        w.U16(FloatToHalf(std::clamp(p.value.data()[i], -65504.0f, 65504.0f)));  // saturate
      else
        w.F32(p.value.data()[i]);
    }
  }
  w.U32(Fnv1a(buf.data(), buf.size()));
  *out = std::move(buf);
  return Status::Ok();
}

Status LoadModel(const uint8_t* data, size_t size, Model* out) {
  if (!data || size < 12) return Status::Error("model file: too short to be a model");
  if (std::memcmp(data, kMagic, 4) != 0) return Status::Error("model file: bad magic (not an attnviz seq2seq model)");
  Reader r(data + 4, size - 4);
  const uint32_t version = r.U32();
  if (version != 1 && version != kModelFormatVersion)
    return Status::Error("model file: unsupported version " + std::to_string(version));
  uint32_t stored;
  std::memcpy(&stored, data + size - 4, 4);  // the writer is little-endian, as are x86 and WASM
  if (Fnv1a(data, size - 4) != stored) return Status::Error("model file: checksum mismatch (truncated or corrupt)");
  int cfg[14] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1, -1};  // version 1 has no supervised head
  for (int i = 0; i < (version == 1 ? 12 : 14); ++i) cfg[i] = static_cast<int>(r.U32());
  if (!r.ok()) return Status::Error("model file: truncated header");
  ModelConfig c;
  c.kind = static_cast<ModelKind>(cfg[0]);
  c.task = static_cast<Task>(cfg[1]);
  c.emb = cfg[2], c.enc_hidden = cfg[3], c.dec_hidden = cfg[4], c.attn = cfg[5];
  c.luong_score = static_cast<LuongScore>(cfg[6]);
  c.d_model = cfg[7], c.heads = cfg[8], c.ff = cfg[9], c.enc_layers = cfg[10], c.dec_layers = cfg[11];
  c.align_layer = cfg[12], c.align_head = cfg[13];
  Status st = ValidateConfig(c);
  if (!st) return Status::Error("model file: " + st.message);
  Vocab src, tgt;
  if (!(st = ReadVocab(&r, "source", &src))) return st;
  if (!(st = ReadVocab(&r, "target", &tgt))) return st;
  // Every weight takes at least 2 bytes: refuse before allocating what the file cannot hold.
  if (CountWeights(c, src.Size(), tgt.Size()) > static_cast<int64_t>(r.remaining() / 2))
    return Status::Error("model file: truncated (the config needs more weights than the file holds)");
  Model m;
  if (!(st = InitModel(c, src, tgt, 0, &m))) return st;  // the expected names and shapes
  const uint32_t n = r.U32();
  if (!r.ok() || n > kMaxParams || n != m.params.size())
    return Status::Error("model file: expected " + std::to_string(m.params.size()) + " parameters");
  for (Parameter& p : m.params) {
    const std::string name = r.Str();
    const uint32_t rows = r.U32(), cols = r.U32();
    const uint8_t dtype = r.U8();
    if (!r.ok()) return Status::Error("model file: truncated parameter header");
    if (name != p.name || static_cast<Eigen::Index>(rows) != p.value.rows() ||
        static_cast<Eigen::Index>(cols) != p.value.cols() || dtype > 1)
      return Status::Error("model file: parameter '" + name + "' does not match the model's '" + p.name + "' " +
                           std::to_string(p.value.rows()) + "x" + std::to_string(p.value.cols()));
    const size_t count = static_cast<size_t>(rows) * cols;
    if (!r.Need(count * (dtype ? 2 : 4))) return Status::Error("model file: truncated weights of " + p.name);
    for (size_t i = 0; i < count; ++i) {
      const float f = dtype ? HalfToFloat(r.U16()) : r.F32();
      if (!std::isfinite(f)) return Status::Error("model file: non-finite weight in " + p.name);
      p.value.data()[i] = f;
    }
  }
  if (r.remaining() != 4) return Status::Error("model file: unexpected trailing bytes");
  *out = std::move(m);
  return Status::Ok();
}

}  // namespace seq2seq
}  // namespace attnviz
