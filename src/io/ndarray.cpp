#include "io/ndarray.h"

#include <cmath>
#include <cstring>

#include "io/memory_budget.h"
#include "io/utf8.h"

namespace attnviz {

const char* DTypeName(DType t) {
  switch (t) {
    case DType::Bool:
      return "bool";
    case DType::Int8:
      return "int8";
    case DType::Int16:
      return "int16";
    case DType::Int32:
      return "int32";
    case DType::Int64:
      return "int64";
    case DType::UInt8:
      return "uint8";
    case DType::UInt16:
      return "uint16";
    case DType::UInt32:
      return "uint32";
    case DType::UInt64:
      return "uint64";
    case DType::Float16:
      return "float16";
    case DType::Float32:
      return "float32";
    case DType::Float64:
      return "float64";
    case DType::Unicode:
      return "unicode";
    case DType::Bytes:
      return "bytes";
  }
  return "?";
}

bool DTypeIsNumeric(DType t) {
  return t != DType::Unicode && t != DType::Bytes;
}
bool DTypeIsFloat(DType t) {
  return t == DType::Float16 || t == DType::Float32 || t == DType::Float64;
}

int64_t NdArray::Numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string NdArray::ShapeString() const {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1) s += ",";
  return s + ")";
}

namespace {

template <typename T>
T Load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));  // data is little-endian and so are our targets (x86, wasm)
  return v;
}

}  // namespace

double ElementAsDouble(DType dtype, const uint8_t* p) {
  switch (dtype) {
    case DType::Bool:
      return p[0] ? 1.0 : 0.0;
    case DType::Int8:
      return (double)Load<int8_t>(p);
    case DType::Int16:
      return (double)Load<int16_t>(p);
    case DType::Int32:
      return (double)Load<int32_t>(p);
    case DType::Int64:
      return (double)Load<int64_t>(p);
    case DType::UInt8:
      return (double)p[0];
    case DType::UInt16:
      return (double)Load<uint16_t>(p);
    case DType::UInt32:
      return (double)Load<uint32_t>(p);
    case DType::UInt64:
      return (double)Load<uint64_t>(p);
    case DType::Float16:
      return (double)HalfToFloat(Load<uint16_t>(p));
    case DType::Float32:
      return (double)Load<float>(p);
    case DType::Float64:
      return Load<double>(p);
    case DType::Unicode:
    case DType::Bytes:
      return 0.0;
  }
  return 0.0;
}

double NdArray::GetDouble(int64_t i) const {
  return ElementAsDouble(dtype, data.data() + i * itemsize);
}

// The output of a conversion is charged to a fresh default budget and probed with the allocator
// (an int64 copy of a uint8 array is 8 times its size).
static Status CanConvert(int64_t n, size_t elem_bytes, const char* what) {
  MemoryBudget budget;
  const uint64_t bytes = (uint64_t)n * elem_bytes;
  Status st = budget.Charge(bytes, std::string(what) + ": converting " + std::to_string(n) + " elements");
  if (!st) return st;
  if (!TryAllocate((size_t)bytes)) return Status::Error(std::string(what) + ": out of memory");
  return Status::Ok();
}

static Status NotNumeric(const NdArray& a, const char* what) {
  return Status::Error(std::string(what) + ": expected a numeric array, got dtype " + DTypeName(a.dtype));
}

Status ToFloatVector(const NdArray& a, std::vector<float>* out) {
  if (!DTypeIsNumeric(a.dtype)) return NotNumeric(a, "array");
  const int64_t n = a.Numel();
  if (Status st = CanConvert(n, sizeof(float), "array"); !st) return st;
  out->resize((size_t)n);
  if (a.dtype == DType::Float32) {
    if (n) std::memcpy(out->data(), a.data.data(), (size_t)n * 4);
    return Status::Ok();
  }
  for (int64_t i = 0; i < n; ++i) (*out)[(size_t)i] = (float)a.GetDouble(i);
  return Status::Ok();
}

Status ToMatrix(const NdArray& a, MatrixRM* out, const char* what, int64_t expect_rows, int64_t expect_cols) {
  if (!DTypeIsNumeric(a.dtype)) return NotNumeric(a, what);
  if (a.Ndim() != 2) return Status::Error(std::string(what) + ": expected a 2-D array, got shape " + a.ShapeString());
  const int64_t rows = a.shape[0], cols = a.shape[1];
  if ((expect_rows >= 0 && rows != expect_rows) || (expect_cols >= 0 && cols != expect_cols)) {
    std::string want = "(" + (expect_rows >= 0 ? std::to_string(expect_rows) : std::string("*")) + ", " +
                       (expect_cols >= 0 ? std::to_string(expect_cols) : std::string("*")) + ")";
    return Status::Error(std::string(what) + ": expected shape " + want + ", got " + a.ShapeString());
  }
  if (Status st = CanConvert(rows * cols, sizeof(float), what); !st) return st;
  out->resize((Eigen::Index)rows, (Eigen::Index)cols);
  for (int64_t i = 0; i < rows * cols; ++i) out->data()[i] = (float)a.GetDouble(i);
  return Status::Ok();
}

Status ToVector(const NdArray& a, VectorF* out, const char* what, int64_t expect_len) {
  if (!DTypeIsNumeric(a.dtype)) return NotNumeric(a, what);
  bool ok = a.Ndim() == 1 || (a.Ndim() == 2 && (a.shape[0] == 1 || a.shape[1] == 1));
  if (!ok) return Status::Error(std::string(what) + ": expected a 1-D array, got shape " + a.ShapeString());
  const int64_t n = a.Numel();
  if (expect_len >= 0 && n != expect_len)
    return Status::Error(std::string(what) + ": expected " + std::to_string(expect_len) + " elements, got shape " +
                         a.ShapeString());
  if (Status st = CanConvert(n, sizeof(float), what); !st) return st;
  out->resize((Eigen::Index)n);
  for (int64_t i = 0; i < n; ++i) (*out)[(Eigen::Index)i] = (float)a.GetDouble(i);
  return Status::Ok();
}

Status ToMaskBytes(const NdArray& a, std::vector<uint8_t>* out, const char* what) {
  if (!DTypeIsNumeric(a.dtype) || DTypeIsFloat(a.dtype))
    return Status::Error(std::string(what) + ": expected a bool or integer array, got dtype " + DTypeName(a.dtype));
  const int64_t n = a.Numel();
  if (Status st = CanConvert(n, 1, what); !st) return st;
  out->resize((size_t)n);
  for (int64_t i = 0; i < n; ++i) (*out)[(size_t)i] = a.GetDouble(i) != 0.0 ? 1 : 0;
  return Status::Ok();
}

Status ToInt64Vector(const NdArray& a, std::vector<int64_t>* out, const char* what) {
  if (!DTypeIsNumeric(a.dtype) || DTypeIsFloat(a.dtype))
    return Status::Error(std::string(what) + ": expected an integer array, got dtype " + DTypeName(a.dtype));
  const int64_t n = a.Numel();
  if (Status st = CanConvert(n, sizeof(int64_t), what); !st) return st;
  out->resize((size_t)n);
  for (int64_t i = 0; i < n; ++i) {
    const uint8_t* p = a.data.data() + i * a.itemsize;
    int64_t v = 0;
    switch (a.dtype) {
      case DType::Int64:
        v = Load<int64_t>(p);
        break;
      case DType::UInt64:
        v = (int64_t)Load<uint64_t>(p);
        break;
      default:
        v = (int64_t)a.GetDouble(i);
        break;  // exact for every narrower integer
    }
    (*out)[(size_t)i] = v;
  }
  return Status::Ok();
}

std::string StringElement(const NdArray& a, int64_t i) {
  std::string s;
  if ((a.dtype != DType::Unicode && a.dtype != DType::Bytes) || i < 0 || i >= a.Numel()) return s;
  const uint8_t* p = a.data.data() + i * a.itemsize;
  if (a.dtype == DType::Bytes) {
    int64_t len = a.itemsize;
    while (len > 0 && p[len - 1] == 0) --len;
    s.assign((const char*)p, (size_t)len);
  } else {
    int64_t units = a.itemsize / 4;
    while (units > 0 && Load<uint32_t>(p + 4 * (units - 1)) == 0) --units;
    for (int64_t u = 0; u < units; ++u) AppendUtf8(Load<uint32_t>(p + 4 * u), &s);
  }
  return s;
}

Status ToStrings(const NdArray& a, std::vector<std::string>* out, const char* what, int64_t max_count) {
  if (a.dtype != DType::Unicode && a.dtype != DType::Bytes)
    return Status::Error(std::string(what) + ": expected a string array (<U or |S), got dtype " + DTypeName(a.dtype));
  const int64_t n = a.Numel();
  if (n > max_count)
    return Status::Error(std::string(what) + ": " + std::to_string(n) + " strings, over the limit of " +
                         std::to_string(max_count));
  // UTF-32 -> UTF-8 never grows the text, so data.size() bounds it.
  MemoryBudget budget;
  const uint64_t headers = (uint64_t)n * sizeof(std::string);
  Status st = budget.Charge(headers + a.data.size(), std::string(what) + ": " + std::to_string(n) + " strings");
  if (!st) return st;
  if (!TryAllocate((size_t)headers)) return Status::Error(std::string(what) + ": out of memory");
  out->clear();
  out->reserve((size_t)n);
  for (int64_t i = 0; i < n; ++i) out->push_back(StringElement(a, i));
  return Status::Ok();
}

static int64_t ItemSize(DType t) {
  switch (t) {
    case DType::Bool:
    case DType::Int8:
    case DType::UInt8:
      return 1;
    case DType::Int16:
    case DType::UInt16:
    case DType::Float16:
      return 2;
    case DType::Int32:
    case DType::UInt32:
    case DType::Float32:
      return 4;
    case DType::Int64:
    case DType::UInt64:
    case DType::Float64:
      return 8;
    default:
      return 0;
  }
}

static NdArray MakeArray(const std::vector<int64_t>& shape, DType t, const void* values) {
  NdArray a;
  a.shape = shape;
  a.dtype = t;
  a.itemsize = ItemSize(t);
  a.data.resize((size_t)(a.Numel() * a.itemsize));
  if (!a.data.empty()) std::memcpy(a.data.data(), values, a.data.size());
  return a;
}

NdArray FromMatrix(const MatrixRM& m) {
  return MakeArray({(int64_t)m.rows(), (int64_t)m.cols()}, DType::Float32, m.data());
}
NdArray FromFloats(const std::vector<int64_t>& shape, const float* values) {
  return MakeArray(shape, DType::Float32, values);
}
NdArray FromDoubles(const std::vector<int64_t>& shape, const double* values) {
  return MakeArray(shape, DType::Float64, values);
}
NdArray FromBools(const std::vector<int64_t>& shape, const uint8_t* values) {
  NdArray a = MakeArray(shape, DType::Bool, values);
  for (uint8_t& b : a.data) b = b ? 1 : 0;
  return a;
}

NdArray FromStrings(const std::vector<std::string>& strings) {
  std::vector<std::vector<uint32_t>> cps(strings.size());
  size_t longest = 1;  // numpy never writes <U0
  for (size_t i = 0; i < strings.size(); ++i) {
    DecodeUtf8Lossy(strings[i], &cps[i]);
    if (cps[i].size() > longest) longest = cps[i].size();
  }
  NdArray a;
  a.shape = {(int64_t)strings.size()};
  a.dtype = DType::Unicode;
  a.itemsize = (int64_t)longest * 4;
  a.data.assign(strings.size() * longest * 4, 0);
  for (size_t i = 0; i < cps.size(); ++i)
    for (size_t u = 0; u < cps[i].size(); ++u) std::memcpy(&a.data[(i * longest + u) * 4], &cps[i][u], 4);
  return a;
}

int64_t CountNonFinite(const NdArray& a, int64_t* first_index) {
  if (!DTypeIsFloat(a.dtype)) return 0;
  int64_t count = 0;
  const int64_t n = a.Numel();
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(a.GetDouble(i))) {
      if (count == 0 && first_index) *first_index = i;
      ++count;
    }
  }
  return count;
}

}  // namespace attnviz
