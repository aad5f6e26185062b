#include "io/npy.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace attnviz {
namespace {

const uint8_t kMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
constexpr size_t kMaxHeaderLen = 1 << 20;  // numpy itself refuses headers above 10 kB by default

// ---- the header: a tiny reader for the Python literal numpy writes ----------
struct HeaderParser {
  const std::string& s;
  size_t pos = 0;
  std::string error;

  void SkipSpace() {
    while (pos < s.size() && (s[pos] == ' ' || s[pos] == '\t' || s[pos] == '\n' || s[pos] == '\r')) ++pos;
  }
  bool Eat(char c) {
    SkipSpace();
    if (pos < s.size() && s[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }
  bool Fail(const std::string& msg) {
    if (error.empty()) error = msg + " at header offset " + std::to_string(pos);
    return false;
  }
  bool String(std::string* out) {
    SkipSpace();
    if (pos >= s.size() || (s[pos] != '\'' && s[pos] != '"')) return Fail("expected a quoted string");
    char q = s[pos++];
    out->clear();
    while (pos < s.size() && s[pos] != q) {
      if (s[pos] == '\\') return Fail("escapes in header strings are not supported");
      out->push_back(s[pos++]);
    }
    if (pos >= s.size()) return Fail("unterminated string");
    ++pos;
    return true;
  }
  bool Word(const char* w) {
    SkipSpace();
    size_t n = std::strlen(w);
    if (s.compare(pos, n, w) == 0) {
      pos += n;
      return true;
    }
    return false;
  }
  bool Int(int64_t* out) {
    SkipSpace();
    size_t start = pos;
    int64_t v = 0;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      if (v > (int64_t(1) << 50)) return Fail("dimension too large");
      v = v * 10 + (s[pos++] - '0');
    }
    if (pos < s.size() && s[pos] == 'L') ++pos;  // Python 2 long suffix
    if (pos == start) return Fail("expected a non-negative integer");
    *out = v;
    return true;
  }
  bool Tuple(std::vector<int64_t>* out) {
    out->clear();
    if (!Eat('(')) return Fail("expected '(' for shape");
    if (Eat(')')) return true;
    while (true) {
      int64_t v;
      if (!Int(&v)) return false;
      out->push_back(v);
      if (out->size() > 64) return Fail("more than 64 dimensions");
      if (Eat(')')) return true;
      if (!Eat(',')) return Fail("expected ',' or ')' in shape");
      if (Eat(')')) return true;
    }
  }
};

bool ParseDescr(const std::string& d, DType* t, int64_t* itemsize, bool* swap, std::string* err) {
  if (d.size() < 2) {
    *err = "unsupported dtype '" + d + "'";
    return false;
  }
  char order = d[0];
  if (order != '<' && order != '>' && order != '|' && order != '=') {
    *err = "unsupported dtype '" + d + "' (no byte-order character)";
    return false;
  }
  *swap = order == '>';
  char kind = d[1];
  if (kind == 'O') {
    *err = "object arrays (dtype '|O', pickled Python objects) are not supported; save numeric or string arrays";
    return false;
  }
  std::string num = d.substr(2);
  if (num.empty() || num.size() > 9 || num.find_first_not_of("0123456789") != std::string::npos) {
    *err = "unsupported dtype '" + d + "'";
    return false;
  }
  int64_t n = 0;  // (checked above: 1-9 digits)
  for (char c : num) n = n * 10 + (c - '0');
  switch (kind) {
    case 'b':
      if (n == 1) {
        *t = DType::Bool;
        *itemsize = 1;
        return true;
      }
      break;
    case 'i':
      if (n == 1) {
        *t = DType::Int8;
        *itemsize = 1;
        return true;
      }
      if (n == 2) {
        *t = DType::Int16;
        *itemsize = 2;
        return true;
      }
      if (n == 4) {
        *t = DType::Int32;
        *itemsize = 4;
        return true;
      }
      if (n == 8) {
        *t = DType::Int64;
        *itemsize = 8;
        return true;
      }
      break;
    case 'u':
      if (n == 1) {
        *t = DType::UInt8;
        *itemsize = 1;
        return true;
      }
      if (n == 2) {
        *t = DType::UInt16;
        *itemsize = 2;
        return true;
      }
      if (n == 4) {
        *t = DType::UInt32;
        *itemsize = 4;
        return true;
      }
      if (n == 8) {
        *t = DType::UInt64;
        *itemsize = 8;
        return true;
      }
      break;
    case 'f':
      if (n == 2) {
        *t = DType::Float16;
        *itemsize = 2;
        return true;
      }
      if (n == 4) {
        *t = DType::Float32;
        *itemsize = 4;
        return true;
      }
      if (n == 8) {
        *t = DType::Float64;
        *itemsize = 8;
        return true;
      }
      break;
    case 'U':
      if (n >= 1 && n <= (1 << 20)) {
        *t = DType::Unicode;
        *itemsize = 4 * n;
        return true;
      }
      break;
    case 'S':
      if (n >= 1 && n <= (1 << 22)) {
        *t = DType::Bytes;
        *itemsize = n;
        *swap = false;
        return true;
      }
      break;
    default:
      break;
  }
  *err = "unsupported dtype '" + d + "'";
  return false;
}

Status ParseHeader(const std::string& h, std::string* descr, bool* fortran, std::vector<int64_t>* shape) {
  HeaderParser p{h, 0, std::string()};
  bool have_descr = false, have_order = false, have_shape = false;
  if (!p.Eat('{')) return Status::Error("npy: malformed header: expected '{'");
  while (!p.Eat('}')) {
    std::string key;
    if (!p.String(&key)) return Status::Error("npy: malformed header: " + p.error);
    if (!p.Eat(':')) return Status::Error("npy: malformed header: expected ':' after '" + key + "'");
    if (key == "descr") {
      p.SkipSpace();
      if (p.pos < h.size() && h[p.pos] == '[')
        return Status::Error("npy: structured dtypes (record arrays) are not supported");
      if (!p.String(descr)) return Status::Error("npy: malformed header: " + p.error);
      have_descr = true;
    } else if (key == "fortran_order") {
      if (p.Word("True"))
        *fortran = true;
      else if (p.Word("False"))
        *fortran = false;
      else
        return Status::Error("npy: malformed header: fortran_order must be True or False");
      have_order = true;
    } else if (key == "shape") {
      if (!p.Tuple(shape)) return Status::Error("npy: malformed header: " + p.error);
      have_shape = true;
    } else {
      return Status::Error("npy: malformed header: unexpected key '" + key + "'");
    }
    if (!p.Eat(',')) {
      if (!p.Eat('}')) return Status::Error("npy: malformed header: expected ',' or '}'");
      break;
    }
  }
  if (!have_descr || !have_order || !have_shape)
    return Status::Error("npy: malformed header: needs 'descr', 'fortran_order' and 'shape'");
  return Status::Ok();
}

void ByteSwap(std::vector<uint8_t>* data, int64_t unit) {
  if (unit <= 1) return;
  for (size_t i = 0; i + (size_t)unit <= data->size(); i += (size_t)unit)
    for (int64_t a = 0, b = unit - 1; a < b; ++a, --b) std::swap((*data)[i + a], (*data)[i + b]);
}

// ---- Fortran order -> C order -------------------------------------------------------------
// A Fortran-order array of shape D is, byte for byte, a C-order array of shape reverse(D): the
// conversion reverses all axes. Done naively (one gather per element, source offsets far apart)
// a 2^28-element array with 28 dims of 2 is a bit-reversal permutation with a cache and TLB miss
// per element: 20 s. So it runs as one cache-blocked matrix transpose plus two reversals whose
// pieces fit the cache (see FortranToC). Every step is O(numel).

// Copies one element of `item` bytes (N > 0: a compile-time size the compiler turns into a move).
template <size_t N>
inline void CopyItem(uint8_t* dst, const uint8_t* src, size_t item) {
  if (N)
    std::memcpy(dst, src, N);
  else
    std::memcpy(dst, src, item);
}

// dst (C order of `shape`) <- src, where element idx of dst is read at sum(idx[d] * fstride[d])
// (in elements of `item` bytes). The C-order odometer keeps the source offset incrementally.
template <size_t N>
void GatherT(const std::vector<int64_t>& shape, const std::vector<int64_t>& fstride, const uint8_t* src, uint8_t* dst,
             size_t item) {
  const int nd = (int)shape.size();
  const int64_t inner = shape[nd - 1], inner_stride = fstride[nd - 1];
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<int64_t> idx(nd, 0);
  int64_t f = 0;  // source element offset of idx
  for (int64_t c = 0; c < n; c += inner) {
    for (int64_t j = 0; j < inner; ++j) CopyItem<N>(dst + (c + j) * item, src + (f + j * inner_stride) * item, item);
    for (int d = nd - 2; d >= 0; --d) {  // advance the outer C-order index
      if (++idx[d] < shape[d]) {
        f += fstride[d];
        break;
      }
      f -= (shape[d] - 1) * fstride[d];
      idx[d] = 0;
    }
  }
}

// dst (C order of `shape`) <- src (C order of reverse(shape)): every axis reversed.
void ReverseAxes(const std::vector<int64_t>& shape, const uint8_t* src, uint8_t* dst, size_t item) {
  std::vector<int64_t> fstride(shape.size());  // the Fortran strides of `shape`
  int64_t s = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    fstride[d] = s;
    s *= shape[d];
  }
  switch (item) {
    case 1:
      return GatherT<1>(shape, fstride, src, dst, item);
    case 2:
      return GatherT<2>(shape, fstride, src, dst, item);
    case 4:
      return GatherT<4>(shape, fstride, src, dst, item);
    case 8:
      return GatherT<8>(shape, fstride, src, dst, item);
    default:
      return GatherT<0>(shape, fstride, src, dst, item);
  }
}

// out [cols, rows] <- in [rows, cols] in square tiles of T x T items staged in a local buffer, so
// both sides are read and written a whole row of the tile (a cache line for T * N = 64) at a time
// and power-of-two strides cannot thrash one cache set.
template <size_t N>
void TransposeT(const uint8_t* in, uint8_t* out, int64_t rows, int64_t cols, size_t item) {
  constexpr int64_t kT = N == 0 ? 16 : (64 / N < 8 ? 8 : 64 / N);
  uint8_t tile[kT * kT * (N ? N : 1)];
  std::vector<uint8_t> wide;  // strings wider than N: a heap tile
  uint8_t* t = tile;
  if (N == 0) {
    wide.resize((size_t)(kT * kT) * item);
    t = wide.data();
  }
  for (int64_t i0 = 0; i0 < rows; i0 += kT) {
    const int64_t ni = std::min(kT, rows - i0);
    for (int64_t j0 = 0; j0 < cols; j0 += kT) {
      const int64_t nj = std::min(kT, cols - j0);
      for (int64_t i = 0; i < ni; ++i)  // tile[j][i] = in[i0 + i][j0 + j]
        for (int64_t j = 0; j < nj; ++j)
          CopyItem<N>(t + (size_t)(j * kT + i) * item, in + (size_t)((i0 + i) * cols + j0 + j) * item, item);
      for (int64_t j = 0; j < nj; ++j)  // out[j0 + j][i0 .. i0 + ni) is one contiguous run
        std::memcpy(out + (size_t)((j0 + j) * rows + i0) * item, t + (size_t)(j * kT) * item, (size_t)ni * item);
    }
  }
}

void Transpose(const uint8_t* in, uint8_t* out, int64_t rows, int64_t cols, size_t item) {
  switch (item) {
    case 1:
      return TransposeT<1>(in, out, rows, cols, item);
    case 2:
      return TransposeT<2>(in, out, rows, cols, item);
    case 4:
      return TransposeT<4>(in, out, rows, cols, item);
    case 8:
      return TransposeT<8>(in, out, rows, cols, item);
    default:
      return TransposeT<0>(in, out, rows, cols, item);
  }
}

int64_t Product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t d : v) p *= d;
  return p;
}

// True when Fortran and C order differ: at least two dims above 1.
bool OrderMatters(const std::vector<int64_t>& shape) {
  int big = 0;
  for (int64_t d : shape) big += d > 1;
  return big >= 2;
}

// Fortran (column-major) -> C (row-major) element order in *data; *scratch is a second buffer of
// the same size (charged by the caller). With D the shape (dims of 1 dropped) split as
// D = (front, back), where back is the fewest trailing dims covering >= 4 KiB:
//   the bytes are C order [reverse(back), reverse(front)] = a matrix [X, Y];
//   1. blocked transpose to [Y, X]: rows reverse(front), each row reverse(back);
//   2. within each row (X items, in cache) reverse back's axes;
//   3. move whole rows (>= 4 KiB each) to reverse front's axes.
void FortranToC(const std::vector<int64_t>& full_shape, int64_t itemsize, std::vector<uint8_t>* data,
                std::vector<uint8_t>* scratch) {
  std::vector<int64_t> shape;
  for (int64_t d : full_shape)
    if (d != 1) shape.push_back(d);
  const size_t item = (size_t)itemsize;
  const int64_t n = Product(shape);
  if (shape.size() < 2 || n == 0) return;
  scratch->resize(data->size());
  size_t m = 0;
  int64_t X = 1;
  while (m < shape.size() && (uint64_t)X * item < 4096) X *= shape[shape.size() - 1 - m++];
  if (m == shape.size()) {  // small enough to gather directly
    ReverseAxes(shape, data->data(), scratch->data(), item);
    data->swap(*scratch);
  } else {
    const std::vector<int64_t> front(shape.begin(), shape.end() - (long)m), back(shape.end() - (long)m, shape.end());
    const int64_t Y = n / X;
    const size_t row = (size_t)X * item;
    uint8_t* a = data->data();
    uint8_t* b = scratch->data();
    Transpose(a, b, X, Y, item);  // now in b
    if (back.size() >= 2) {
      for (int64_t r = 0; r < Y; ++r) ReverseAxes(back, b + (size_t)r * row, a + (size_t)r * row, item);
      std::swap(a, b);
    }
    if (front.size() >= 2) {
      ReverseAxes(front, b, a, row);
      std::swap(a, b);
    }
    if (b != data->data()) data->swap(*scratch);  // the result is where b points
  }
  scratch->clear();
  scratch->shrink_to_fit();
}

}  // namespace

Status ParseNpyHeader(const uint8_t* data, size_t size, NpyHeader* out, int64_t max_elements) {
  if (size < 10 || std::memcmp(data, kMagic, 6) != 0)
    return Status::Error("npy: not a .npy file (missing \\x93NUMPY magic)");
  const int major = data[6], minor = data[7];
  size_t header_len, header_start;
  if (major == 1) {
    header_len = (size_t)data[8] | ((size_t)data[9] << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (size < 12) return Status::Error("npy: truncated file (header length)");
    header_len = (size_t)data[8] | ((size_t)data[9] << 8) | ((size_t)data[10] << 16) | ((size_t)data[11] << 24);
    header_start = 12;
  } else {
    return Status::Error("npy: unsupported format version " + std::to_string(major) + "." + std::to_string(minor));
  }
  if (header_len > kMaxHeaderLen)
    return Status::Error("npy: header length " + std::to_string(header_len) + " is too large");
  if (header_start + header_len > size) return Status::Error("npy: truncated file (header)");
  const std::string header((const char*)data + header_start, header_len);

  NpyHeader h;
  std::string descr;
  Status st = ParseHeader(header, &descr, &h.fortran_order, &h.shape);
  if (!st) return st;
  std::string err;
  if (!ParseDescr(descr, &h.dtype, &h.itemsize, &h.byte_swap, &err)) return Status::Error("npy: " + err);
  int64_t numel = 1;
  for (int64_t d : h.shape) {
    if (d > kMaxArrayElements) return Status::Error("npy: dimension " + std::to_string(d) + " is too large");
    if (d > 0 && numel > max_elements / d)  // numel * d > max_elements, without overflowing
      return Status::Error(max_elements == kMaxArrayElements
                               ? std::string("npy: shape has more than 2^31 elements; refusing to load")
                               : "npy: shape has more than " + std::to_string(max_elements) + " elements");
    numel *= d;
  }
  h.numel = numel;
  h.data_offset = header_start + header_len;
  *out = std::move(h);
  return Status::Ok();
}

bool NpyHeaderBytes(const uint8_t* data, size_t size, uint64_t* header_bytes) {
  if (size < 12 || std::memcmp(data, kMagic, 6) != 0 || data[6] < 1 || data[6] > 3) return false;
  const uint64_t len = data[6] == 1 ? (uint64_t)data[8] | ((uint64_t)data[9] << 8)
                                    : (uint64_t)data[8] | ((uint64_t)data[9] << 8) | ((uint64_t)data[10] << 16) |
                                          ((uint64_t)data[11] << 24);
  *header_bytes = (data[6] == 1 ? 10 : 12) + len;
  return true;
}

bool NpyHeaderComplete(const uint8_t* data, size_t size) {
  if (size < 12 || std::memcmp(data, kMagic, 6) != 0) return size >= 12;
  const size_t len =
      data[6] == 1 ? (size_t)data[8] | ((size_t)data[9] << 8)
                   : (size_t)data[8] | ((size_t)data[9] << 8) | ((size_t)data[10] << 16) | ((size_t)data[11] << 24);
  return len > kMaxHeaderLen || size >= (data[6] == 1 ? 10 : 12) + len;
}

Status ParseNpy(const uint8_t* data, size_t size, NdArray* out, MemoryBudget* budget) {
  NpyHeader h;
  Status st = ParseNpyHeader(data, size, &h);
  if (!st) return st;
  const std::vector<int64_t>& shape = h.shape;
  const DType dtype = h.dtype;
  const int64_t itemsize = h.itemsize, numel = h.numel;
  const bool swap = h.byte_swap, fortran = h.fortran_order;
  const size_t available = size - h.data_offset;
  const uint64_t need = (uint64_t)numel * (uint64_t)itemsize;
  if (need > available)
    return Status::Error("npy: truncated data: shape " + std::to_string(numel) + " elements x " +
                         std::to_string(itemsize) + " bytes needs " + std::to_string(need) + " bytes, file has " +
                         std::to_string(available));
  if (need < available)
    return Status::Error("npy: " + std::to_string(available - need) +
                         " unexpected trailing bytes after the data (shape x dtype size mismatch)");

  MemoryBudget own_budget;
  if (!budget) budget = &own_budget;
  NdArray a;
  a.shape = shape;
  a.dtype = dtype;
  a.itemsize = itemsize;
  const std::string what = "npy: an array of shape " + a.ShapeString() + " (" + DTypeName(dtype) + ")";
  if (!(st = CheckedAssign(&a.data, data + h.data_offset, (size_t)need, budget, what))) return st;
  if (swap) ByteSwap(&a.data, dtype == DType::Unicode ? 4 : itemsize);
  if (fortran && OrderMatters(a.shape)) {
    std::vector<uint8_t> scratch;  // a copy, overwritten by the transpose: memcpy is faster than resize's fill
    if (!(st = CheckedAssign(&scratch, a.data.data(), (size_t)need, budget,
                             "npy: the Fortran-to-C transpose of " + a.ShapeString()))) {
      budget->Refund(need);
      return st;
    }
    FortranToC(a.shape, itemsize, &a.data, &scratch);
    budget->Refund(need);
  }
  *out = std::move(a);
  return Status::Ok();
}

std::string NpyDescr(const NdArray& a) {
  switch (a.dtype) {
    case DType::Bool:
      return "|b1";
    case DType::Int8:
      return "|i1";
    case DType::Int16:
      return "<i2";
    case DType::Int32:
      return "<i4";
    case DType::Int64:
      return "<i8";
    case DType::UInt8:
      return "|u1";
    case DType::UInt16:
      return "<u2";
    case DType::UInt32:
      return "<u4";
    case DType::UInt64:
      return "<u8";
    case DType::Float16:
      return "<f2";
    case DType::Float32:
      return "<f4";
    case DType::Float64:
      return "<f8";
    case DType::Unicode:
      return "<U" + std::to_string(a.itemsize / 4);
    case DType::Bytes:
      return "|S" + std::to_string(a.itemsize);
  }
  return "?";
}

namespace {
// *out = the .npy prefix (magic, version, header) of an array with a's dtype and shape, with room
// reserved for its data_bytes.
void WriteNpyPrefix(const NdArray& a, size_t data_bytes, std::vector<uint8_t>* out) {
  std::string header = "{'descr': '" + NpyDescr(a) + "', 'fortran_order': False, 'shape': " + a.ShapeString() + ", }";
  // Pad so that magic + version + length + header is a multiple of 64, ending in '\n'.
  size_t prefix = 10;
  size_t total = prefix + header.size() + 1;
  int major = 1;
  if (header.size() + 1 + 64 > 65535) {
    major = 2;
    prefix = 12;
    total = prefix + header.size() + 1;
  }
  size_t pad = (64 - total % 64) % 64;
  header.append(pad, ' ');
  header.push_back('\n');
  const size_t hlen = header.size();
  out->clear();
  out->reserve(prefix + hlen + data_bytes);
  out->insert(out->end(), kMagic, kMagic + 6);
  out->push_back((uint8_t)major);
  out->push_back(0);
  out->push_back((uint8_t)(hlen & 0xff));
  out->push_back((uint8_t)((hlen >> 8) & 0xff));
  if (major == 2) {
    out->push_back((uint8_t)((hlen >> 16) & 0xff));
    out->push_back((uint8_t)((hlen >> 24) & 0xff));
  }
  out->insert(out->end(), header.begin(), header.end());
}
}  // namespace

Status WriteNpy(const NdArray& a, std::vector<uint8_t>* out) {
  const int64_t numel = a.Numel();
  if (numel < 0 || numel > kMaxArrayElements) return Status::Error("npy: array too large to write");
  if ((int64_t)a.data.size() != numel * a.itemsize)
    return Status::Error("npy: array data holds " + std::to_string(a.data.size()) + " bytes, shape " + a.ShapeString() +
                         " x itemsize " + std::to_string(a.itemsize) + " needs " + std::to_string(numel * a.itemsize));
  WriteNpyPrefix(a, a.data.size(), out);
  out->insert(out->end(), a.data.begin(), a.data.end());
  return Status::Ok();
}

Status WriteNpyMatrix(const MatrixRM& m, std::vector<uint8_t>* out) {
  NdArray meta;  // dtype and shape only: the weights are copied once, straight from the matrix
  meta.shape = {(int64_t)m.rows(), (int64_t)m.cols()};
  if (meta.Numel() > kMaxArrayElements) return Status::Error("npy: array too large to write");
  const size_t bytes = (size_t)m.size() * sizeof(float);
  WriteNpyPrefix(meta, bytes, out);
  const uint8_t* p = reinterpret_cast<const uint8_t*>(m.data());
  out->insert(out->end(), p, p + bytes);  // little-endian float32, as NdArray holds it (WASM, x86)
  return Status::Ok();
}

}  // namespace attnviz
