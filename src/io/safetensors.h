// attnviz io: the safetensors container (Hugging Face, huggingface.co/docs/safetensors).
//
// Index of this header
//   - StDType                 the element types a safetensors file names ("F16", "BF16", "F32", ...)
//   - SafetensorsHeader       the tensors (name, dtype, shape, absolute byte range) and __metadata__
//   - SafetensorsHeaderLength how many leading bytes the header needs (the first 8 bytes say)
//   - ParseSafetensorsHeader  bytes -> a header validated against the file's size
//   - SafetensorsHeaderBytes  the header a writer puts first, with every tensor's offsets
//   - Float conversions       F16 / BF16 / F32 / F64 bytes <-> float
//
// Layout: an 8-byte little-endian N, N bytes of UTF-8 JSON
//   {"__metadata__": {"key": "value", ...}, "name": {"dtype": "F16", "shape": [2, 3],
//    "data_offsets": [begin, end]}, ...}
// (padded with spaces), then the data; offsets count from the first byte after the header. As the
// reference implementation requires, the tensors cover the data exactly: no overlap, no gap, no
// bytes after the last one, and each spans shape x dtype size bytes. Only the header is read here;
// the data stays where it is (io/lazy_attention.h reads the ranges it needs).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/half.h"  // FloatToHalf, HalfToFloat
#include "core/status.h"
#include "io/memory_budget.h"

namespace attnviz {

// ---------------------------------------------------------------------------
// StDType
// ---------------------------------------------------------------------------
enum class StDType { Bool, U8, I8, I16, U16, F16, BF16, I32, U32, F32, F64, I64, U64, F8E4M3, F8E5M2 };
const char* StDTypeName(StDType t);                     // "F16", "BF16", "F8_E4M3", ... as in the file
bool ParseStDType(const std::string& s, StDType* out);  // inverse of StDTypeName
int StDTypeSize(StDType t);                             // bytes per element
bool StDTypeIsFloat(StDType t);                         // F16, BF16, F32, F64: what attention weights may be

// ---------------------------------------------------------------------------
// SafetensorsHeader
// ---------------------------------------------------------------------------
struct SafetensorsTensor {
  std::string name;  // as in the file
  StDType dtype = StDType::F32;
  std::vector<int64_t> shape;   // empty = a scalar
  uint64_t begin = 0, end = 0;  // absolute byte offsets in the file: [begin, end)
  int64_t Numel() const;        // product of shape
};

struct SafetensorsHeader {
  uint64_t file_size = 0;                                     // bytes of the whole file
  uint64_t data_start = 0;                                    // 8 + N: where offsets count from
  std::vector<SafetensorsTensor> tensors;                     // sorted by begin (file order)
  std::vector<std::pair<std::string, std::string>> metadata;  // __metadata__, in file order

  const SafetensorsTensor* Find(const std::string& name) const;  // nullptr when absent
  const std::string* Meta(const std::string& key) const;         // a __metadata__ value, nullptr when absent

  std::unordered_map<std::string, size_t> by_name;  // tensor name -> index in tensors
};

struct SafetensorsLimits {
  uint64_t max_header_bytes = uint64_t(100) << 20;  // the reference implementation's limit
  size_t max_tensors = size_t(1) << 16;             // tensors per file
  size_t max_dims = 16;                             // dimensions per tensor
};

// The bytes the header occupies, 8 + N, from the file's first `n` bytes (n >= 8). Refuses N above the
// limit or beyond the file before anything is allocated.
Status SafetensorsHeaderLength(const uint8_t* prefix, size_t n, uint64_t file_size, uint64_t* header_bytes,
                               const SafetensorsLimits& limits = SafetensorsLimits());

// True when the first bytes look like a safetensors file: a little-endian length that fits in the
// file, then '{' (JSON starts with '{' at byte 0, NPY with \x93NUMPY, NPZ with PK: no overlap).
bool LooksLikeSafetensors(const uint8_t* prefix, size_t n, uint64_t file_size);

// Parses the header held in prefix[0 .. n) (at least SafetensorsHeaderLength bytes) of a file of
// file_size bytes and validates every tensor against it: known dtype, shape x dtype size = its byte
// span, within the file, no overlap, no gap, no trailing bytes, no duplicate names. The JSON tree is
// built within *budget (the default memory budget when null). Errors name the tensor and the numbers.
Status ParseSafetensorsHeader(const uint8_t* prefix, size_t n, uint64_t file_size, SafetensorsHeader* out,
                              MemoryBudget* budget = nullptr, const SafetensorsLimits& limits = SafetensorsLimits());

// What a writer declares about one tensor; the writer then writes the tensors' bytes in this order.
struct SafetensorsTensorSpec {
  std::string name;
  StDType dtype = StDType::F16;
  std::vector<int64_t> shape;
};
// The 8-byte length and the JSON header (padded with spaces so the data starts 8-aligned), laying the
// tensors out in the order given. begins[i] receives tensor i's absolute file offset; *file_size the total.
Status SafetensorsHeaderBytes(const std::vector<SafetensorsTensorSpec>& tensors,
                              const std::vector<std::pair<std::string, std::string>>& metadata,
                              std::vector<uint8_t>* out, std::vector<uint64_t>* begins, uint64_t* file_size);

// ---------------------------------------------------------------------------
// Float conversions (little-endian bytes)
// ---------------------------------------------------------------------------
uint16_t FloatToBFloat16(float f);  // bfloat16, round to nearest even; NaN kept
float BFloat16ToFloat(uint16_t b);  // exact
// n elements of a float dtype (F16, BF16, F32, F64) -> float. Returns false for any other dtype.
bool DecodeFloats(StDType t, const uint8_t* src, size_t n, float* dst);
// n F16 attention weights -> float, as the viewer shows them: NaN, infinities and negative numbers
// (a weight is a probability) become 0 and are counted in the return value; *max (when not null)
// gets the largest weight (0 when n = 0). Branch-free, so it vectorizes.
size_t DecodeHalfWeights(const uint8_t* src, size_t n, float* dst, float* max);
// The same for any float dtype (F16, BF16, F32 — src may be dst — or F64): *fixed gets the count.
// F32 and BF16 are branch-free too. Returns false for any other dtype.
bool DecodeWeights(StDType t, const uint8_t* src, size_t n, float* dst, float* max, size_t* fixed);
// n floats -> F16, BF16 or F32 bytes (n * StDTypeSize(t)). Returns false for any other dtype.
bool EncodeFloats(StDType t, const float* src, size_t n, uint8_t* dst);

}  // namespace attnviz
