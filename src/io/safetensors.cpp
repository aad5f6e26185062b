#include "io/safetensors.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <unordered_set>
#include <vector>

#include "io/half_f16c.h"
#include "io/half_simd128.h"
#include "io/json.h"
#include "io/utf8.h"

namespace attnviz {

namespace {

struct DTypeInfo {
  StDType type;
  const char* name;
  int size;
};
constexpr DTypeInfo kDTypes[] = {
    {StDType::Bool, "BOOL", 1}, {StDType::U8, "U8", 1},          {StDType::I8, "I8", 1},
    {StDType::I16, "I16", 2},   {StDType::U16, "U16", 2},        {StDType::F16, "F16", 2},
    {StDType::BF16, "BF16", 2}, {StDType::I32, "I32", 4},        {StDType::U32, "U32", 4},
    {StDType::F32, "F32", 4},   {StDType::F64, "F64", 8},        {StDType::I64, "I64", 8},
    {StDType::U64, "U64", 8},   {StDType::F8E4M3, "F8_E4M3", 1}, {StDType::F8E5M2, "F8_E5M2", 1},
};

// A tensor name as messages quote it: printable, shortened (names come from the file).
std::string Quoted(const std::string& name) {
  return "'" + PrintableText(name, 80) + "'";
}

// A JSON number that is an exact non-negative integer below 2^53.
bool AsIndex(double d, uint64_t* out) {
  if (!(d >= 0) || d > 9007199254740992.0 || d != std::floor(d)) return false;
  *out = (uint64_t)d;
  return true;
}

// One tensor entry {"dtype", "shape", "data_offsets"}; offsets relative to the data.
Status ParseTensor(const std::string& name, const JsonValue& v, const SafetensorsLimits& limits, SafetensorsTensor* t) {
  const std::string where = "safetensors: tensor " + Quoted(name);
  if (!v.IsObject()) return Status::Error(where + " must be an object {dtype, shape, data_offsets}");
  t->name = name;
  const JsonValue* dtype = v.Find("dtype");
  const JsonValue* shape = v.Find("shape");
  const JsonValue* offsets = v.Find("data_offsets");
  if (!dtype || dtype->type != JsonType::String) return Status::Error(where + " has no \"dtype\" string");
  if (!ParseStDType(dtype->string, &t->dtype))
    return Status::Error(where + " has an unknown dtype '" + PrintableText(dtype->string, 32) + "'");
  if (!shape || !shape->IsNumberArray()) return Status::Error(where + " needs \"shape\": an array of integers");
  if (shape->numbers.size() > limits.max_dims)
    return Status::Error(where + " has more than " + std::to_string(limits.max_dims) + " dimensions");
  uint64_t numel = 1;
  for (double d : shape->numbers) {
    uint64_t n;
    if (!AsIndex(d, &n)) return Status::Error(where + ": shape entries must be non-negative integers");
    if (n && numel > (uint64_t(1) << 62) / n) return Status::Error(where + ": the shape's size overflows");
    numel *= n;
    t->shape.push_back((int64_t)n);
  }
  if (!offsets || !offsets->IsNumberArray() || offsets->numbers.size() != 2)
    return Status::Error(where + " needs \"data_offsets\": [begin, end]");
  uint64_t begin, end;
  if (!AsIndex(offsets->numbers[0], &begin) || !AsIndex(offsets->numbers[1], &end))
    return Status::Error(where + ": data_offsets must be non-negative integers");
  if (end < begin)
    return Status::Error(where + ": data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                         "] end before they begin");
  const uint64_t need = numel * (uint64_t)StDTypeSize(t->dtype);
  if (end - begin != need) {
    std::string dims;
    for (int64_t d : t->shape) dims += (dims.empty() ? "" : ", ") + std::to_string(d);
    return Status::Error(where + " is [" + dims + "] " + StDTypeName(t->dtype) + " = " + std::to_string(need) +
                         " bytes, but its data_offsets span " + std::to_string(end - begin) +
                         " (the dtype or the shape is wrong)");
  }
  t->begin = begin;
  t->end = end;
  return Status::Ok();
}

// Sorted by begin, the tensors must tile the data [0, data_size) exactly.
Status CheckLayout(std::vector<SafetensorsTensor>* tensors, uint64_t data_size) {
  std::stable_sort(tensors->begin(), tensors->end(), [](const SafetensorsTensor& a, const SafetensorsTensor& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  uint64_t at = 0;
  const SafetensorsTensor* prev = nullptr;
  for (const SafetensorsTensor& t : *tensors) {
    if (t.end > data_size)
      return Status::Error("safetensors: tensor " + Quoted(t.name) + " ends at data byte " + std::to_string(t.end) +
                           ", beyond the end of the file (" + std::to_string(data_size) +
                           " bytes of data; truncated?)");
    if (t.begin < at)
      return Status::Error("safetensors: tensors " + Quoted(prev->name) + " and " + Quoted(t.name) +
                           " overlap (data bytes " + std::to_string(prev->begin) + ".." + std::to_string(prev->end) +
                           " and " + std::to_string(t.begin) + ".." + std::to_string(t.end) + ")");
    if (t.begin > at)
      return Status::Error("safetensors: " + std::to_string(t.begin - at) + " bytes of data before tensor " +
                           Quoted(t.name) + " belong to no tensor (a gap at data byte " + std::to_string(at) + ")");
    at = t.end;
    prev = &t;
  }
  if (at != data_size)
    return Status::Error("safetensors: " + std::to_string(data_size - at) +
                         " bytes after the last tensor belong to no tensor (the file is longer than its header says)");
  return Status::Ok();
}

}  // namespace

const char* StDTypeName(StDType t) {
  for (const DTypeInfo& d : kDTypes)
    if (d.type == t) return d.name;
  return "?";
}

bool ParseStDType(const std::string& s, StDType* out) {
  for (const DTypeInfo& d : kDTypes) {
    if (s == d.name) {
      *out = d.type;
      return true;
    }
  }
  return false;
}

int StDTypeSize(StDType t) {
  for (const DTypeInfo& d : kDTypes)
    if (d.type == t) return d.size;
  return 1;
}

bool StDTypeIsFloat(StDType t) {
  return t == StDType::F16 || t == StDType::BF16 || t == StDType::F32 || t == StDType::F64;
}

int64_t SafetensorsTensor::Numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

const SafetensorsTensor* SafetensorsHeader::Find(const std::string& name) const {
  const auto it = by_name.find(name);
  return it == by_name.end() ? nullptr : &tensors[it->second];
}

const std::string* SafetensorsHeader::Meta(const std::string& key) const {
  for (const auto& kv : metadata)
    if (kv.first == key) return &kv.second;
  return nullptr;
}

bool LooksLikeSafetensors(const uint8_t* prefix, size_t n, uint64_t file_size) {
  if (n < 9 || file_size < 10 || prefix[8] != '{') return false;
  uint64_t len = 0;
  for (int i = 7; i >= 0; --i) len = (len << 8) | prefix[i];
  return len >= 2 && len <= file_size - 8;
}

Status SafetensorsHeaderLength(const uint8_t* prefix, size_t n, uint64_t file_size, uint64_t* header_bytes,
                               const SafetensorsLimits& limits) {
  if (file_size < 8 || n < 8)
    return Status::Error("safetensors: the file is " + std::to_string(file_size) +
                         " bytes, too short for the 8-byte header length");
  uint64_t len = 0;
  for (int i = 7; i >= 0; --i) len = (len << 8) | prefix[i];
  if (len < 2) return Status::Error("safetensors: the header length is " + std::to_string(len) + " bytes");
  if (len > limits.max_header_bytes)
    return Status::Error("safetensors: the header is " + std::to_string(len) + " bytes, over the limit of " +
                         FormatByteSize(limits.max_header_bytes) + " (not a safetensors file?)");
  if (len > file_size - 8)
    return Status::Error("safetensors: the header says it is " + std::to_string(len) + " bytes, but the file has " +
                         std::to_string(file_size - 8) + " after the length (truncated, or not a safetensors file)");
  *header_bytes = 8 + len;
  return Status::Ok();
}

Status ParseSafetensorsHeader(const uint8_t* prefix, size_t n, uint64_t file_size, SafetensorsHeader* out,
                              MemoryBudget* budget, const SafetensorsLimits& limits) {
  uint64_t header_bytes = 0;
  Status st = SafetensorsHeaderLength(prefix, n, file_size, &header_bytes, limits);
  if (!st) return st;
  if (n < header_bytes)
    return Status::Error("safetensors: " + std::to_string(n) + " bytes given, the header needs " +
                         std::to_string(header_bytes));
  const char* text = (const char*)prefix + 8;
  const size_t len = (size_t)(header_bytes - 8);
  if (text[0] != '{') return Status::Error("safetensors: the header must be a JSON object starting with '{'");
  MemoryBudget own;
  if (!budget) budget = &own;
  JsonParseOptions options;
  options.max_depth = 8;
  options.max_memory = budget->left();
  JsonValue root;
  st = ParseJson(text, len, &root, options);
  if (!st) return Status::Error("safetensors: header: " + st.message);
  if (!root.IsObject()) return Status::Error("safetensors: the header must be a JSON object");
  if (root.members.size() > limits.max_tensors + 1)
    return Status::Error("safetensors: more than " + std::to_string(limits.max_tensors) + " tensors");
  SafetensorsHeader h;
  h.file_size = file_size;
  h.data_start = header_bytes;
  st = budget->Charge(root.members.size() * (sizeof(SafetensorsTensor) + 64), "safetensors: the tensor list");
  if (!st) return st;
  h.tensors.reserve(root.members.size());
  std::unordered_set<std::string> names;
  bool have_meta = false;
  for (const auto& kv : root.members) {
    if (kv.first == "__metadata__") {
      if (have_meta) return Status::Error("safetensors: two __metadata__ entries");
      have_meta = true;
      if (!kv.second.IsObject()) return Status::Error("safetensors: __metadata__ must be an object of strings");
      for (const auto& m : kv.second.members) {
        if (m.second.type != JsonType::String)
          return Status::Error("safetensors: __metadata__ value " + Quoted(m.first) + " must be a string");
        h.metadata.emplace_back(m.first, m.second.string);
      }
      continue;
    }
    if (!names.insert(kv.first).second)
      return Status::Error("safetensors: tensor " + Quoted(kv.first) + " is named twice");
    SafetensorsTensor t;
    if (!(st = ParseTensor(kv.first, kv.second, limits, &t))) return st;
    h.tensors.push_back(std::move(t));
  }
  if (!(st = CheckLayout(&h.tensors, file_size - header_bytes))) return st;
  for (size_t i = 0; i < h.tensors.size(); ++i) {
    h.tensors[i].begin += header_bytes;
    h.tensors[i].end += header_bytes;
    h.by_name.emplace(h.tensors[i].name, i);
  }
  *out = std::move(h);
  return Status::Ok();
}

Status SafetensorsHeaderBytes(const std::vector<SafetensorsTensorSpec>& tensors,
                              const std::vector<std::pair<std::string, std::string>>& metadata,
                              std::vector<uint8_t>* out, std::vector<uint64_t>* begins, uint64_t* file_size) {
  JsonWriter w(0);
  w.BeginObject();
  if (!metadata.empty()) {
    w.Key("__metadata__");
    w.BeginObject();
    for (const auto& kv : metadata) {
      w.Key(kv.first);
      w.String(kv.second);
    }
    w.EndObject();
  }
  std::vector<uint64_t> rel;
  uint64_t at = 0;
  std::unordered_set<std::string> names;
  for (const SafetensorsTensorSpec& t : tensors) {
    if (t.name == "__metadata__" || !names.insert(t.name).second)
      return Status::Error("safetensors: tensor name " + Quoted(t.name) + " is reserved or used twice");
    uint64_t bytes = (uint64_t)StDTypeSize(t.dtype);
    for (int64_t d : t.shape) {
      if (d < 0) return Status::Error("safetensors: tensor " + Quoted(t.name) + " has a negative dimension");
      bytes *= (uint64_t)d;
    }
    w.Key(t.name);
    w.BeginObject();
    w.Key("dtype");
    w.String(StDTypeName(t.dtype));
    w.Key("shape");
    w.BeginArray(true);
    for (int64_t d : t.shape) w.Number((double)d);
    w.EndArray();
    w.Key("data_offsets");
    w.BeginArray(true);
    w.Number((double)at);
    w.Number((double)(at + bytes));
    w.EndArray();
    w.EndObject();
    rel.push_back(at);
    at += bytes;
  }
  w.EndObject();
  std::string json = w.str();
  json.append((8 - json.size() % 8) % 8, ' ');  // the data starts 8-aligned
  const uint64_t len = json.size();
  out->resize(8 + json.size());
  for (int i = 0; i < 8; ++i) (*out)[(size_t)i] = (uint8_t)(len >> (8 * i));
  std::memcpy(out->data() + 8, json.data(), json.size());
  begins->clear();
  for (uint64_t r : rel) begins->push_back(8 + len + r);
  *file_size = 8 + len + at;
  return Status::Ok();
}

uint16_t FloatToBFloat16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40);  // NaN stays NaN (quiet)
  return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

float BFloat16ToFloat(uint16_t b) {
  const uint32_t x = (uint32_t)b << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

namespace {

// IEEE half -> float without touching subnormal floats (slow on x86): F. Giesen's "fast5".
// F16 bits -> float bits, exact for every value (signed zeros, subnormals, infinities, NaN payloads)
// and branch-free, so the loops below vectorize (WASM SIMD128, SSE2): a normal number re-biases its
// exponent, a subnormal converts its integer mantissa (x * 2^-24, exact), infinities and NaN move
// the exponent field to all ones. (A branchy version decoded 3-4x slower; bench/decode_bench.cpp.)
// always_inline: the web build compiles this file with -fno-inline-functions (CMakeLists.txt).
inline __attribute__((always_inline)) uint32_t HalfBitsToFloatBits(uint32_t h) {
  // Masks, not conditionals: GCC keeps a conditional around float arithmetic as a branch (it may
  // not speculate a multiply under -ftrapping-math), and a branch defeats the vectorizer.
  const uint32_t x = h & 0x7fffu;
  const uint32_t special = 0u - (uint32_t)(x >= 0x7c00u), subnormal = 0u - (uint32_t)(x < 0x400u);
  const uint32_t normal = (x << 13) + 0x38000000u + (special & 0x38000000u);
  const float sub = (float)(int32_t)x * 5.9604644775390625e-08f;  // 2^-24
  uint32_t sub_bits;
  std::memcpy(&sub_bits, &sub, 4);
  return (sub_bits & subnormal) | (normal & ~subnormal) | ((h & 0x8000u) << 16);
}

}  // namespace

namespace {

// n little-endian elements of type T at src -> float, through convert (one loop for every dtype).
template <typename T, typename Convert>
void DecodeEach(const uint8_t* src, size_t n, float* dst, Convert convert) {
  for (size_t i = 0; i < n; ++i) {
    T x;
    std::memcpy(&x, src + sizeof(T) * i, sizeof(T));
    dst[i] = convert(x);
  }
}

// n floats -> little-endian elements of type T at dst, through convert.
template <typename T, typename Convert>
void EncodeEach(const float* src, size_t n, uint8_t* dst, Convert convert) {
  for (size_t i = 0; i < n; ++i) {
    const T x = convert(src[i]);
    std::memcpy(dst + sizeof(T) * i, &x, sizeof(T));
  }
}

}  // namespace

bool DecodeFloats(StDType t, const uint8_t* src, size_t n, float* dst) {
  switch (t) {
    case StDType::F32:  // (read in place by the lazy reader: then src is dst)
      if (n && (const void*)src != (const void*)dst) std::memcpy(dst, src, n * 4);
      return true;
    case StDType::F16:
      for (size_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, src + 2 * i, 2);
        const uint32_t bits = HalfBitsToFloatBits(h);
        std::memcpy(dst + i, &bits, 4);
      }
      return true;
    case StDType::BF16:
      DecodeEach<uint16_t>(src, n, dst, BFloat16ToFloat);
      return true;
    case StDType::F64:
      DecodeEach<double>(src, n, dst, [](double d) { return (float)d; });
      return true;
    default:
      return false;
  }
}

size_t DecodeHalfWeights(const uint8_t* src, size_t n, float* dst, float* max) {
  // Arithmetic in vector lanes, not a table lookup per weight (bench/decode_bench.cpp). Natively on
  // x86 with F16C, the CPU's own conversion (half_f16c.cpp); in WebAssembly, SIMD lanes written for
  // it (half_simd128.cpp: what the compiler made of this loop took 1.5-1.8x as long); this loop converts
  // the rest, and everything elsewhere.
  int32_t top = 0;  // the largest weight's bits: non-negative halfs order as integers
  size_t fixed = 0;
  const size_t begin0 = HalfF16cAvailable() ? DecodeHalfWeightsF16c(src, n, dst, &top, &fixed)
                                            : DecodeHalfWeightsSimd128(src, n, dst, &top, &fixed);
  for (size_t begin = begin0; begin < n; begin += 65536) {  // a 32-bit count per chunk: lanes of one width
    const size_t end = std::min(n, begin + 65536);
    int32_t bad_count = 0;
    for (size_t i = begin; i < end; ++i) {
      uint16_t h;
      std::memcpy(&h, src + 2 * i, 2);
      const int32_t x = h & 0x7fff;
      const int32_t bad = (int32_t)(x > 0x7bff) | ((int32_t)(h >> 15) & (int32_t)(x != 0));
      const int32_t w = x & (bad - 1);  // 0 when bad
      bad_count += bad;
      top = top > w ? top : w;
      const uint32_t bits = HalfBitsToFloatBits((uint32_t)w);
      std::memcpy(dst + i, &bits, 4);
    }
    fixed += (size_t)bad_count;
  }
  if (max) {
    const uint32_t bits = HalfBitsToFloatBits((uint32_t)top);
    std::memcpy(max, &bits, 4);
  }
  return fixed;
}

namespace {

// n weights whose float32 bits come from load(i) -> dst, as DecodeHalfWeights treats halfs: NaN,
// infinities and negative numbers (not -0) become 0 and are counted; *top keeps the largest one's
// bits (non-negative floats order as integers). Without branches, so it vectorizes (the loads are
// always_inline: the web build's -Os target flags would leave them calls inside the loop).
template <typename Load>
size_t FloatBitsToWeights(size_t n, float* dst, int32_t* top, Load load) {
  size_t fixed = 0;
  int32_t t = *top;
  for (size_t begin = 0; begin < n; begin += 65536) {  // a 32-bit count per chunk: lanes of one width
    const size_t end = std::min(n, begin + 65536);
    int32_t bad_count = 0;
    for (size_t i = begin; i < end; ++i) {
      const uint32_t u = load(i);
      const int32_t x = (int32_t)(u & 0x7fffffffu);
      const int32_t bad = (int32_t)(x > 0x7f7fffff) | ((int32_t)(u >> 31) & (int32_t)(x != 0));
      const int32_t w = x & (bad - 1);  // 0 when bad
      bad_count += bad;
      t = t > w ? t : w;
      std::memcpy(dst + i, &w, 4);
    }
    fixed += (size_t)bad_count;
  }
  *top = t;
  return fixed;
}

}  // namespace

bool DecodeWeights(StDType t, const uint8_t* src, size_t n, float* dst, float* max, size_t* fixed) {
  int32_t top = 0;
  switch (t) {
    case StDType::F16:
      *fixed = DecodeHalfWeights(src, n, dst, max);
      return true;
    case StDType::F32:  // (src may be dst: each weight is read before it is written)
      *fixed = FloatBitsToWeights(
          n, dst, &top, [src](size_t i) __attribute__((always_inline)) {
            uint32_t u;
            std::memcpy(&u, src + 4 * i, 4);
            return u;
          });
      break;
    case StDType::BF16:
      *fixed = FloatBitsToWeights(
          n, dst, &top, [src](size_t i) __attribute__((always_inline)) {
            uint16_t h;
            std::memcpy(&h, src + 2 * i, 2);
            return (uint32_t)h << 16;
          });
      break;
    case StDType::F64:
      DecodeFloats(StDType::F64, src, n, dst);
      *fixed = FloatBitsToWeights(
          n, dst, &top, [dst](size_t i) __attribute__((always_inline)) {
            uint32_t u;
            std::memcpy(&u, dst + i, 4);
            return u;
          });
      break;
    default:
      return false;
  }
  if (max) std::memcpy(max, &top, 4);
  return true;
}

bool EncodeFloats(StDType t, const float* src, size_t n, uint8_t* dst) {
  switch (t) {
    case StDType::F32:
      if (n) std::memcpy(dst, src, n * 4);
      return true;
    case StDType::F16:
      EncodeEach<uint16_t>(src, n, dst, FloatToHalf);
      return true;
    case StDType::BF16:
      EncodeEach<uint16_t>(src, n, dst, FloatToBFloat16);
      return true;
    default:
      return false;
  }
}

}  // namespace attnviz
