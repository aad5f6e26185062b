// attnviz io: NdArray, the in-memory form of one numpy array (what .npy/.npz hold).
//
// Index of this header
//   - DType          element types read from / written to numpy files
//   - NdArray        shape + dtype + C-order little-endian bytes
//   - Conversions    to float vectors, MatrixRM, strings; back from them
//   - Checks         finite-ness, shape helpers
//
// Data is always kept in C (row-major) order, little-endian, exactly itemsize bytes per
// element: Fortran-order and big-endian files are converted when read.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/attention.h"
#include "core/half.h"  // HalfToFloat
#include "core/status.h"

namespace attnviz {

// ---------------------------------------------------------------------------
// DType
// ---------------------------------------------------------------------------
enum class DType {
  Bool,     // |b1, one byte 0/1
  Int8,     // i1
  Int16,    // <i2
  Int32,    // <i4
  Int64,    // <i8
  UInt8,    // |u1
  UInt16,   // <u2
  UInt32,   // <u4
  UInt64,   // <u8
  Float16,  // <f2 (IEEE half), widened to float by the accessors
  Float32,  // <f4
  Float64,  // <f8
  Unicode,  // <U{n}: n UTF-32LE code units per element, NUL-padded
  Bytes,    // |S{n}: n bytes per element, NUL-padded
};
const char* DTypeName(DType t);  // "float32", "bool", "unicode", ... (for messages and `inspect`)
bool DTypeIsNumeric(DType t);    // every dtype except Unicode and Bytes
bool DTypeIsFloat(DType t);      // Float16, Float32, Float64

constexpr int64_t kMaxArrayElements = int64_t(1) << 31;   // larger declared shapes are rejected
constexpr int64_t kMaxStringElements = int64_t(1) << 20;  // ToStrings' default limit (32 MiB of std::string)

// ---------------------------------------------------------------------------
// NdArray
// ---------------------------------------------------------------------------
struct NdArray {
  std::vector<int64_t> shape;    // empty = 0-d (a scalar, one element)
  DType dtype = DType::Float32;  // element type
  int64_t itemsize = 4;          // bytes per element (from dtype; string dtypes: 4n or n)
  std::vector<uint8_t> data;     // [numel * itemsize] C-order, little-endian

  int64_t Numel() const;                          // product of shape (1 for 0-d)
  int Ndim() const { return (int)shape.size(); }  // number of dimensions
  std::string ShapeString() const;                // "(3, 4)", "()" — numpy's spelling
  double GetDouble(int64_t i) const;              // element i (flat C index) of a numeric array as double
};

// ---------------------------------------------------------------------------
// Conversions (all validate dtype and shape and say what they expected)
// ---------------------------------------------------------------------------
// Any numeric dtype -> float, flat C order: out [numel].
Status ToFloatVector(const NdArray& a, std::vector<float>* out);
// 2-D numeric array -> MatrixRM [rows, cols]. expect_rows/expect_cols < 0 = any; `what`
// names the array in error messages (e.g. "query").
Status ToMatrix(const NdArray& a, MatrixRM* out, const char* what = "array", int64_t expect_rows = -1,
                int64_t expect_cols = -1);
// 1-D numeric array (or [1, n] / [n, 1]) -> VectorF [n].
Status ToVector(const NdArray& a, VectorF* out, const char* what = "array", int64_t expect_len = -1);
// Bool or integer array -> 0/1 bytes (non-zero = 1), flat C order: out [numel].
Status ToMaskBytes(const NdArray& a, std::vector<uint8_t>* out, const char* what = "mask");
// Unicode (UTF-32LE) or Bytes array -> UTF-8 strings, trailing NULs stripped, flat C order.
// Refused before anything is allocated: more than max_count elements, or more memory than the
// default budget (one std::string per element plus the text).
Status ToStrings(const NdArray& a, std::vector<std::string>* out, const char* what = "strings",
                 int64_t max_count = kMaxStringElements);
// Element i (flat C index, 0 <= i < Numel()) of a Unicode or Bytes array as UTF-8; "" otherwise.
std::string StringElement(const NdArray& a, int64_t i);
// Integer array -> int64 values (bool counts as 0/1), flat C order.
Status ToInt64Vector(const NdArray& a, std::vector<int64_t>* out, const char* what = "array");

NdArray FromMatrix(const MatrixRM& m);                                         // float32 [rows, cols]
NdArray FromFloats(const std::vector<int64_t>& shape, const float* values);    // float32 of any shape
NdArray FromDoubles(const std::vector<int64_t>& shape, const double* values);  // float64 of any shape
NdArray FromBools(const std::vector<int64_t>& shape, const uint8_t* values);   // bool of any shape
// 1-D <U{n}> array from UTF-8 strings (n = longest, in code points; invalid UTF-8 -> U+FFFD).
NdArray FromStrings(const std::vector<std::string>& strings);

// ---------------------------------------------------------------------------
// Checks
// ---------------------------------------------------------------------------
// Counts NaN and +-inf elements of a float array (0 for other dtypes). NaN is allowed in
// files; callers that need finite data use this to flag it.
int64_t CountNonFinite(const NdArray& a, int64_t* first_index = nullptr);

// One element of a numeric dtype at p (unaligned, little-endian) as double; 0 for text dtypes.
double ElementAsDouble(DType dtype, const uint8_t* p);

}  // namespace attnviz
