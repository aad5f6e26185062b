// attnviz io: the .npy format (numpy.lib.format), versions 1.0, 2.0 and 3.0.
//
// Layout: "\x93NUMPY" major minor, header length (uint16 for 1.0, uint32 for 2.0/3.0),
// then a Python dict literal {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
// padded with spaces to a multiple of 64 and ending in '\n', then the raw data.
// Reading accepts every numeric dtype of DType, <U / |S strings, either byte order
// (big-endian data is byte-swapped) and C or Fortran order (converted to C order).
// Writing produces what numpy.save does: version 1.0 (2.0 if the header needs it),
// C order, little-endian, header aligned to 64 bytes.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/status.h"
#include "io/memory_budget.h"
#include "io/ndarray.h"

namespace attnviz {

// Parses a whole .npy file. Errors name the problem (bad magic, malformed header,
// unsupported dtype, truncated data, shape too large, ...). Never crashes on bad bytes.
// The array's bytes (and the scratch of a Fortran-order transpose) are charged to *budget;
// without one, to a budget of DefaultMemoryBudget().
Status ParseNpy(const uint8_t* data, size_t size, NdArray* out, MemoryBudget* budget = nullptr);

// The header of a .npy file: what ParseNpy checks before it reads the data. Lets a reader that
// gets the file in pieces (io/attention_loader.h) put the data straight where it belongs.
struct NpyHeader {
  DType dtype = DType::Float32;  // element type
  int64_t itemsize = 4;          // bytes per element
  bool byte_swap = false;        // big-endian data ('>')
  bool fortran_order = false;    // column-major data
  std::vector<int64_t> shape;    // as declared
  int64_t numel = 1;             // product of shape (at most 2^31)
  size_t data_offset = 0;        // where the data starts
};
// Parses the magic, version and header dict (the same checks and messages as ParseNpy). Shapes of
// more than max_elements elements are refused (a reader that never holds the whole array, such as
// the lazy one in io/lazy_attention.h, passes a larger limit).
Status ParseNpyHeader(const uint8_t* data, size_t size, NpyHeader* out, int64_t max_elements = kMaxArrayElements);
// True when data[0 .. size) holds the whole header (or enough to know it is bad).
bool NpyHeaderComplete(const uint8_t* data, size_t size);
// The bytes before the data (magic, version, length, dict) from the first `size` >= 12 bytes of a
// .npy file; false when they are not a .npy file's (or too few to tell).
bool NpyHeaderBytes(const uint8_t* data, size_t size, uint64_t* header_bytes);

// Serializes `a` as a .npy file (appends nothing else to *out; *out is replaced).
Status WriteNpy(const NdArray& a, std::vector<uint8_t>* out);
// The same for a float32 matrix, without an NdArray copy of it: WriteNpy(FromMatrix(m)) byte for byte.
Status WriteNpyMatrix(const MatrixRM& m, std::vector<uint8_t>* out);

// The numpy dtype string of an array: "<f4", "|b1", "<U7", ...
std::string NpyDescr(const NdArray& a);

}  // namespace attnviz
