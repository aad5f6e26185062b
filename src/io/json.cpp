#include "io/json.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "io/utf8.h"

namespace attnviz {

const char* JsonTypeName(JsonType t) {
  switch (t) {
    case JsonType::Null:
      return "null";
    case JsonType::Bool:
      return "bool";
    case JsonType::Number:
      return "number";
    case JsonType::String:
      return "string";
    case JsonType::Array:
      return "array";
    case JsonType::Object:
      return "object";
  }
  return "?";
}

const JsonValue* JsonValue::Find(const std::string& key) const {
  for (const auto& m : members)
    if (m.first == key) return &m.second;
  return nullptr;
}

JsonValue JsonValue::MakeNumber(double v) {
  JsonValue j;
  j.type = JsonType::Number;
  j.number = v;
  return j;
}
JsonValue JsonValue::MakeString(const std::string& s) {
  JsonValue j;
  j.type = JsonType::String;
  j.string = s;
  return j;
}
JsonValue JsonValue::MakeBool(bool b) {
  JsonValue j;
  j.type = JsonType::Bool;
  j.boolean = b;
  return j;
}

// ---------------------------------------------------------------------------
// Parser: recursive descent over the bytes.
// ---------------------------------------------------------------------------
namespace {

// Clinger's fast path: a number of at most 2^53 as digits and a power of ten within 10^±22 is
// the correctly rounded quotient or product of two exact doubles. It covers what attnviz and
// numpy write for float32 weights (at most 9 significant digits: "0.0078125", "1.2345679e-05").
// Up to 19 digits and 10^±27, ScaleWide computes it in 128-bit integers (Python's json of a
// float32 tensor's tolist(), as BertViz data is made, has 17 digits). Anything else goes to
// strtod, whose long double arithmetic is software in WebAssembly: 80 % of the time of a JSON
// attention file there (bench/decode_bench.cpp, the json lines). `s` is a number already checked
// against the JSON grammar.
const double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                         1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};  // all exact

// m * 10^e as the correctly rounded double (m < 2^53, |e| <= 22: two exact operands, one rounding).
double ScaleExact(double m, int e) {
  return e < 0 ? m / kPow10[-e] : m * kPow10[e];
}

// 5^0 .. 5^27: every one below 2^63.
struct Pow5Table {
  uint64_t v[28];
  constexpr Pow5Table() : v() {
    v[0] = 1;
    for (int i = 1; i < 28; ++i) v[i] = v[i - 1] * 5;
  }
};
constexpr Pow5Table kPow5Table;
constexpr const uint64_t* kPow5 = kPow5Table.v;
static_assert(kPow5Table.v[27] == 7450580596923828125ull, "5^27 (the last entry) is below 2^63");

using U128 = unsigned __int128;

// x (with `sticky`: nonzero bits below x were dropped) * 2^shift, correctly rounded to a double.
// The top 64 bits of x are converted with the dropped bits ORed into their lowest bit (11 bits
// below a double's last one): that keeps round-to-nearest-even exact.
double RoundScaled(U128 x, bool sticky, int shift) {
  const uint64_t hi = (uint64_t)(x >> 64);
  uint64_t top = (uint64_t)x;
  if (hi) {
    const int drop = 64 - __builtin_clzll(hi);
    top = (uint64_t)(x >> drop);
    sticky |= (x & ((U128(1) << drop) - 1)) != 0;
    shift += drop;
  }
  return std::ldexp((double)(top | (uint64_t)sticky), shift);
}

// w * 10^e, correctly rounded, for any w < 2^64 and |e| <= 27 in exact integer arithmetic: w * 5^e
// for e >= 0; for e < 0, 128 bits of (w << s) / 5^-e and whether a remainder was left.
double ScaleWide(uint64_t w, int e) {
  if (e >= 0) return RoundScaled((U128)w * kPow5[e], false, e);
  const int s = 64 + __builtin_clzll(w);  // the numerator fills 128 bits: at least 64 bits of quotient
  const U128 n = (U128)w << s;
  const uint64_t d = kPow5[-e];
  const U128 q = n / d;
  return RoundScaled(q, n - q * d != 0, e - s);
}

bool FastNumber(const char* s, size_t len, double* out) {
  constexpr uint64_t kMax = uint64_t(1) << 53, kWide = ~uint64_t(0) / 10 - 1;  // 10 * kWide + 9 < 2^64
  size_t i = 0;
  const bool negative = s[0] == '-';
  i += negative;
  uint64_t w = 0;
  int e = 0;
  for (; i < len && s[i] >= '0' && s[i] <= '9'; ++i) {
    if (w > kWide) return false;
    w = w * 10 + (uint64_t)(s[i] - '0');
  }
  if (i < len && s[i] == '.')
    for (++i; i < len && s[i] >= '0' && s[i] <= '9'; ++i, --e) {
      if (w > kWide) return false;
      w = w * 10 + (uint64_t)(s[i] - '0');
    }
  if (i < len && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    const bool down = s[i] == '-';
    i += s[i] == '-' || s[i] == '+';
    int x = 0;
    for (; i < len && s[i] >= '0' && s[i] <= '9'; ++i) {
      if (x > 10000) return false;
      x = x * 10 + (s[i] - '0');
    }
    e += down ? -x : x;
  }
  double v = (double)w;
  if (w != 0) {
    if (w <= kMax && e >= -22 && e <= 22)
      v = ScaleExact(v, e);
    else if (e >= -27 && e <= 27)
      v = ScaleWide(w, e);  // 17-digit doubles as Python and JavaScript write them: "0.10000000149011612"
    else
      return false;
  }
  *out = negative ? -v : v;
  return true;
}

// The text printf's "%.<prec>g" gives for the P-digit integer m (10^(P-1) <= m < 10^P) times
// 10^(x - P + 1): fixed notation when -4 <= x < P, else d.ddde±xx; trailing zeros dropped.
void FormatG(bool negative, uint64_t m, int prec, int x, char* out) {
  char d[24];
  for (int i = prec - 1; i >= 0; --i, m /= 10) d[i] = (char)('0' + m % 10);
  int n = prec;
  while (n > 1 && d[n - 1] == '0') --n;  // significant digits kept
  char* o = out;
  if (negative) *o++ = '-';
  if (x < -4 || x >= prec) {
    *o++ = d[0];
    if (n > 1) {
      *o++ = '.';
      for (int i = 1; i < n; ++i) *o++ = d[i];
    }
    *o++ = 'e';
    *o++ = x < 0 ? '-' : '+';
    const int ax = x < 0 ? -x : x;
    if (ax >= 100) *o++ = (char)('0' + ax / 100);
    *o++ = (char)('0' + ax / 10 % 10);
    *o++ = (char)('0' + ax % 10);
  } else if (x >= 0) {
    for (int i = 0; i <= x; ++i) *o++ = i < n ? d[i] : '0';
    if (n > x + 1) {
      *o++ = '.';
      for (int i = x + 1; i < n; ++i) *o++ = d[i];
    }
  } else {
    *o++ = '0';
    *o++ = '.';
    for (int i = 0; i < -x - 1; ++i) *o++ = '0';
    for (int i = 0; i < n; ++i) *o++ = d[i];
  }
  *o = '\0';
}

// The shortest of "%.6g" .. "%.9g" of a finite float that reads back to it (through a double, as
// this parser reads it), without printf and strtof: in WebAssembly both run in software long
// double, 4 us a number. The digits come from one correctly rounded product and a round to even,
// checked by reading them back exactly (ScaleExact). False when out of that range (|x| beyond
// about 1e±13): the caller falls back to printf.
bool ShortFloat(float v, char* out) {
  const double a = std::fabs((double)v);
  if (a == 0.0) {
    std::strcpy(out, std::signbit(v) ? "-0" : "0");
    return true;
  }
  int x = (int)std::floor(std::log10(a));  // the leading digit's exponent (corrected below)
  for (int prec = 6; prec <= 9; ++prec) {
    for (int attempt = 0; attempt < 3; ++attempt) {
      const int k = prec - 1 - x;           // a * 10^k has prec digits before the point
      if (k < -22 || k > 22) return false;  // (then 10^-k is exact too)
      double m = std::nearbyint(ScaleExact(a, k));
      if (m >= kPow10[prec]) {  // x was one too low (or the rounding carried: 9.9999999 -> 10.000000)
        ++x;
        continue;
      }
      if (m < kPow10[prec - 1]) {  // x was one too high
        --x;
        continue;
      }
      if ((float)ScaleExact(m, -k) == (float)a) {
        FormatG(v < 0, (uint64_t)m, prec, x, out);
        return true;
      }
      break;
    }
  }
  return false;
}

class Parser {
 public:
  Parser(const char* s, size_t n, const JsonParseOptions& o) : s_(s), n_(n), opt_(o), budget_(o.max_memory) {}

  Status Document(JsonValue* out) {
    if (n_ >= 3 && (uint8_t)s_[0] == 0xEF && (uint8_t)s_[1] == 0xBB && (uint8_t)s_[2] == 0xBF) p_ = 3;
    SkipSpace();
    if (p_ >= n_) return Error("empty document");
    if (!Value(out, 0)) return status_;
    SkipSpace();
    if (p_ < n_) return Error("unexpected text after the JSON value");
    return Status::Ok();
  }

 private:
  Status Error(const std::string& msg) {
    // line:column of p_ (column counted in bytes, 1-based)
    size_t line = 1, col = 1;
    for (size_t i = 0; i < p_ && i < n_; ++i) {
      if (s_[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    return Status::Error("json: " + std::to_string(line) + ":" + std::to_string(col) + ": " + msg);
  }
  bool Fail(const std::string& msg) {
    if (status_.ok) status_ = Error(msg);
    return false;
  }
  // Charges `bytes` of tree before they are allocated (and asks the allocator).
  bool Charge(uint64_t bytes) {
    if (!budget_.TryCharge(bytes))
      return Fail("the document needs more memory than the budget of " + FormatByteSize(budget_.limit()) +
                  " allows (raise it: --max-memory in the CLI, maxMemory when embedding)");
    if (!TryAllocate((size_t)bytes)) return Fail("out of memory");
    return true;
  }
  // Makes room for one more element: doubles the capacity after charging it; the old buffer's
  // charge is returned once the vector has moved.
  template <typename T>
  bool Room(std::vector<T>* v) {
    if (v->size() < v->capacity()) return true;
    const size_t old_cap = v->capacity(), new_cap = old_cap ? 2 * old_cap : 1;
    if (!Charge((uint64_t)new_cap * sizeof(T))) return false;
    v->reserve(new_cap);
    budget_.Refund((uint64_t)old_cap * sizeof(T));
    return true;
  }
  // Reserves a string's buffer: the raw text up to the closing quote bounds its decoded length
  // (escapes only shrink).
  bool ReserveString(std::string* out) {
    size_t q = p_ + 1;
    while (q < n_ && s_[q] != '"') q += s_[q] == '\\' ? 2 : 1;
    const size_t raw = (q < n_ ? q : n_) - p_;
    if (raw > 15 && !Charge(raw)) return false;  // short strings live inside std::string
    out->reserve(raw);
    return true;
  }
  void SkipSpace() {
    while (p_ < n_ && (s_[p_] == ' ' || s_[p_] == '\t' || s_[p_] == '\n' || s_[p_] == '\r')) ++p_;
  }
  bool Literal(const char* word) {
    size_t len = std::strlen(word);
    if (n_ - p_ >= len && std::memcmp(s_ + p_, word, len) == 0) {
      p_ += len;
      return true;
    }
    return false;
  }

  bool Value(JsonValue* out, int depth) {
    SkipSpace();
    if (p_ >= n_) return Fail("unexpected end of input, expected a value");
    const char c = s_[p_];
    if (c == '{') return Object(out, depth + 1);
    if (c == '[') return Array(out, depth + 1);
    if (c == '"') {
      out->type = JsonType::String;
      return String(&out->string);
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
      out->type = JsonType::Number;
      return Number(&out->number);
    }
    if (Literal("true")) {
      *out = JsonValue::MakeBool(true);
      return true;
    }
    if (Literal("false")) {
      *out = JsonValue::MakeBool(false);
      return true;
    }
    if (Literal("null")) {
      *out = JsonValue();
      return true;
    }
    if (c == 'N' || c == 'I') {
      const size_t at = p_;
      if (Literal("NaN") || Literal("Infinity")) {
        p_ = at;
        return Fail("NaN and Infinity are not valid JSON numbers");
      }
    }
    return Fail(std::string("unexpected character '") + (c >= 0x20 && c < 0x7f ? std::string(1, c) : "\\x" + Hex2(c)) +
                "', expected a value");
  }
  static std::string Hex2(char c) {
    char b[4];
    std::snprintf(b, sizeof(b), "%02X", (unsigned)(uint8_t)c);
    return b;
  }

  bool Object(JsonValue* out, int depth) {
    if (depth > opt_.max_depth) return Fail("nesting deeper than " + std::to_string(opt_.max_depth) + " levels");
    out->type = JsonType::Object;
    ++p_;  // {
    SkipSpace();
    if (p_ < n_ && s_[p_] == '}') {
      ++p_;
      return true;
    }
    while (true) {
      SkipSpace();
      if (p_ >= n_) return Fail("unexpected end of input in object");
      if (s_[p_] != '"') return Fail("expected a string key in object");
      std::string key;
      if (!String(&key)) return false;
      SkipSpace();
      if (p_ >= n_ || s_[p_] != ':') return Fail("expected ':' after object key");
      ++p_;
      if (!Room(&out->members)) return false;
      out->members.emplace_back(std::move(key), JsonValue());
      if (!Value(&out->members.back().second, depth)) return false;
      SkipSpace();
      if (p_ >= n_) return Fail("unexpected end of input in object");
      if (s_[p_] == ',') {
        ++p_;
        continue;
      }
      if (s_[p_] == '}') {
        ++p_;
        return true;
      }
      return Fail("expected ',' or '}' in object");
    }
  }

  bool Array(JsonValue* out, int depth) {
    if (depth > opt_.max_depth) return Fail("nesting deeper than " + std::to_string(opt_.max_depth) + " levels");
    out->type = JsonType::Array;
    ++p_;  // [
    SkipSpace();
    if (p_ < n_ && s_[p_] == ']') {
      ++p_;
      return true;
    }
    bool packed = true;  // all numbers so far: keep them in out->numbers
    while (true) {
      SkipSpace();
      if (p_ >= n_) return Fail("unexpected end of input in array");
      const char c = s_[p_];
      if (packed && (c == '-' || (c >= '0' && c <= '9'))) {
        double v;
        if (!Number(&v)) return false;
        if (!Room(&out->numbers)) return false;
        out->numbers.push_back(v);
      } else {
        if (packed) {  // first non-number: unpack what we have
          packed = false;
          const size_t n = out->numbers.size();
          if (n) {
            if (!Charge((uint64_t)(n + 1) * sizeof(JsonValue))) return false;
            out->items.reserve(n + 1);
            for (double v : out->numbers) out->items.push_back(JsonValue::MakeNumber(v));
            budget_.Refund((uint64_t)out->numbers.capacity() * sizeof(double));
            out->numbers.clear();
            out->numbers.shrink_to_fit();
          }
        }
        if (!Room(&out->items)) return false;
        out->items.emplace_back();
        if (!Value(&out->items.back(), depth)) return false;
      }
      SkipSpace();
      if (p_ >= n_) return Fail("unexpected end of input in array");
      if (s_[p_] == ',') {
        ++p_;
        continue;
      }
      if (s_[p_] == ']') {
        ++p_;
        return true;
      }
      return Fail("expected ',' or ']' in array");
    }
  }

  bool Number(double* out) {
    const size_t start = p_;
    if (s_[p_] == '-') ++p_;
    if (p_ >= n_) return Fail("truncated number");
    if (s_[p_] == '0') {
      ++p_;
      if (p_ < n_ && s_[p_] >= '0' && s_[p_] <= '9') return Fail("leading zeros are not allowed in numbers");
    } else if (s_[p_] >= '1' && s_[p_] <= '9') {
      while (p_ < n_ && s_[p_] >= '0' && s_[p_] <= '9') ++p_;
    } else {
      return Fail("expected a digit");
    }
    if (p_ < n_ && s_[p_] == '.') {
      ++p_;
      if (p_ >= n_ || s_[p_] < '0' || s_[p_] > '9') return Fail("expected a digit after '.'");
      while (p_ < n_ && s_[p_] >= '0' && s_[p_] <= '9') ++p_;
    }
    if (p_ < n_ && (s_[p_] == 'e' || s_[p_] == 'E')) {
      ++p_;
      if (p_ < n_ && (s_[p_] == '+' || s_[p_] == '-')) ++p_;
      if (p_ >= n_ || s_[p_] < '0' || s_[p_] > '9') return Fail("expected a digit in the exponent");
      while (p_ < n_ && s_[p_] >= '0' && s_[p_] <= '9') ++p_;
    }
    if (opt_.fast_numbers && FastNumber(s_ + start, p_ - start, out)) return true;
    // strtod needs a terminated string; numbers are short, so copy (long ones go to the heap).
    char buf[64];
    const size_t len = p_ - start;
    if (len < sizeof(buf)) {
      std::memcpy(buf, s_ + start, len);
      buf[len] = '\0';
      *out = std::strtod(buf, nullptr);
    } else {
      std::string tmp(s_ + start, len);
      *out = std::strtod(tmp.c_str(), nullptr);
    }
    if (std::isinf(*out)) {
      p_ = start;
      return Fail("number out of range");
    }
    return true;
  }

  bool Hex4(uint32_t* out) {
    if (n_ - p_ < 4) return Fail("truncated \\u escape");
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = s_[p_ + i];
      v <<= 4;
      if (c >= '0' && c <= '9')
        v |= (uint32_t)(c - '0');
      else if (c >= 'a' && c <= 'f')
        v |= (uint32_t)(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        v |= (uint32_t)(c - 'A' + 10);
      else {
        p_ += i;
        return Fail("invalid hex digit in \\u escape");
      }
    }
    p_ += 4;
    *out = v;
    return true;
  }

  bool String(std::string* out) {
    out->clear();
    if (!ReserveString(out)) return false;
    ++p_;  // opening quote
    while (true) {
      if (p_ >= n_) return Fail("unterminated string");
      const unsigned char c = (unsigned char)s_[p_];
      if (c == '"') {
        ++p_;
        return true;
      }
      if (c < 0x20) return Fail("control character in string (must be escaped)");
      if (c == '\\') {
        ++p_;
        if (p_ >= n_) return Fail("unterminated escape");
        const char e = s_[p_++];
        switch (e) {
          case '"':
            out->push_back('"');
            break;
          case '\\':
            out->push_back('\\');
            break;
          case '/':
            out->push_back('/');
            break;
          case 'b':
            out->push_back('\b');
            break;
          case 'f':
            out->push_back('\f');
            break;
          case 'n':
            out->push_back('\n');
            break;
          case 'r':
            out->push_back('\r');
            break;
          case 't':
            out->push_back('\t');
            break;
          case 'u': {
            uint32_t cp;
            const size_t esc = p_ - 2;
            if (!Hex4(&cp)) return false;
            if (cp >= 0xDC00 && cp <= 0xDFFF) {
              p_ = esc;
              return Fail("lone low surrogate in \\u escape");
            }
            if (cp >= 0xD800 && cp <= 0xDBFF) {
              uint32_t lo;
              if (n_ - p_ < 2 || s_[p_] != '\\' || s_[p_ + 1] != 'u') {
                p_ = esc;
                return Fail("high surrogate without a low surrogate");
              }
              p_ += 2;
              if (!Hex4(&lo)) return false;
              if (lo < 0xDC00 || lo > 0xDFFF) {
                p_ = esc;
                return Fail("high surrogate without a low surrogate");
              }
              cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            }
            AppendUtf8(cp, out);
            break;
          }
          default:
            p_ -= 2;
            return Fail(std::string("invalid escape '\\") + (e >= 0x20 && e < 0x7f ? std::string(1, e) : "?") + "'");
        }
        continue;
      }
      if (c < 0x80) {
        out->push_back((char)c);
        ++p_;
        continue;
      }
      const size_t start = p_;
      uint32_t cp;
      if (!DecodeUtf8(s_, n_, &p_, &cp)) {
        p_ = start;
        return Fail("invalid UTF-8 in string");
      }
      out->append(s_ + start, p_ - start);
    }
  }

  const char* s_;
  size_t n_;
  size_t p_ = 0;
  JsonParseOptions opt_;
  MemoryBudget budget_;
  Status status_;
};

}  // namespace

Status ParseJson(const char* text, size_t size, JsonValue* out, const JsonParseOptions& options) {
  if (size > options.max_bytes)
    return Status::Error("json: document of " + std::to_string(size) + " bytes is too large");
  Parser p(text, size, options);
  JsonValue v;
  Status st = p.Document(&v);
  if (!st) return st;
  *out = std::move(v);
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// Writer
// ---------------------------------------------------------------------------
std::string JsonEscape(const std::string& s) {
  std::string o = "\"";
  size_t p = 0;
  while (p < s.size()) {
    const unsigned char c = (unsigned char)s[p];
    if (c >= 0x80) {
      const size_t start = p;
      uint32_t cp;
      if (DecodeUtf8(s.data(), s.size(), &p, &cp))
        o.append(s, start, p - start);
      else
        o += "\xEF\xBF\xBD";  // U+FFFD for invalid bytes
      continue;
    }
    ++p;
    switch (c) {
      case '"':
        o += "\\\"";
        break;
      case '\\':
        o += "\\\\";
        break;
      case '\n':
        o += "\\n";
        break;
      case '\r':
        o += "\\r";
        break;
      case '\t':
        o += "\\t";
        break;
      case '\b':
        o += "\\b";
        break;
      case '\f':
        o += "\\f";
        break;
      default:
        if (c < 0x20) {
          char b[8];
          std::snprintf(b, sizeof(b), "\\u%04x", c);
          o += b;
        } else {
          o.push_back((char)c);
        }
    }
  }
  return o + "\"";
}

JsonWriter::JsonWriter(int indent) : indent_(indent) {}

void JsonWriter::Newline() {
  if (indent_ <= 0) return;
  out_.push_back('\n');
  out_.append(stack_.size() * (size_t)indent_, ' ');
}

void JsonWriter::Separator() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (stack_.empty()) return;
  Level& l = stack_.back();
  if (!l.empty) out_.push_back(',');
  if (l.inline_array) {
    if (!l.empty && indent_ > 0) out_.push_back(' ');
  } else {
    Newline();
  }
  l.empty = false;
}

void JsonWriter::BeginObject() {
  Separator();
  out_.push_back('{');
  stack_.push_back({false, false, true});
}
void JsonWriter::EndObject() {
  const bool empty = stack_.back().empty;
  stack_.pop_back();
  if (!empty) Newline();
  out_.push_back('}');
}
void JsonWriter::BeginArray(bool inline_array) {
  Separator();
  out_.push_back('[');
  const bool parent_inline = !stack_.empty() && stack_.back().inline_array;
  stack_.push_back({true, inline_array || parent_inline, true});
}
void JsonWriter::EndArray() {
  const Level l = stack_.back();
  stack_.pop_back();
  if (!l.empty && !l.inline_array) Newline();
  out_.push_back(']');
}
void JsonWriter::Key(const std::string& key) {
  Separator();
  out_ += JsonEscape(key);
  out_ += indent_ > 0 ? ": " : ":";
  after_key_ = true;
}
void JsonWriter::String(const std::string& s) {
  Separator();
  out_ += JsonEscape(s);
}
void JsonWriter::Number(double v) {
  Separator();
  if (!std::isfinite(v)) {
    out_ += "null";
    return;
  }
  char b[32];
  for (int prec = 15; prec <= 17; ++prec) {  // shortest of %.15g..%.17g that reads back exactly
    std::snprintf(b, sizeof(b), "%.*g", prec, v);
    if (std::strtod(b, nullptr) == v) break;
  }
  out_ += b;
}
void JsonWriter::NumberF(float v) {
  Separator();
  if (!std::isfinite(v)) {
    out_ += "null";
    return;
  }
  AppendShortestFloat(v, &out_);
}

void AppendShortestFloat(float v, std::string* out) {
  char b[32];
  if (ShortFloat(v, b)) {  // (the same text as the loop below, fast)
    *out += b;
    return;
  }
  for (int prec = 6; prec <= 9; ++prec) {
    std::snprintf(b, sizeof(b), "%.*g", prec, (double)v);
    if (std::strtof(b, nullptr) == v) break;
  }
  *out += b;
}
void JsonWriter::NumberFixed(double v, int decimals) {
  Separator();
  if (!std::isfinite(v)) {
    out_ += "null";
    return;
  }
  char b[400];  // DBL_MAX has 309 integer digits; at most 40 decimals
  std::snprintf(b, sizeof(b), "%.*f", std::max(0, std::min(decimals, 40)), v);
  out_ += b;
}
void JsonWriter::Bool(bool b) {
  Separator();
  out_ += b ? "true" : "false";
}
void JsonWriter::Null() {
  Separator();
  out_ += "null";
}

void JsonWriter::Value(const JsonValue& v) {
  switch (v.type) {
    case JsonType::Null:
      Null();
      break;
    case JsonType::Bool:
      Bool(v.boolean);
      break;
    case JsonType::Number:
      Number(v.number);
      break;
    case JsonType::String:
      String(v.string);
      break;
    case JsonType::Array:
      BeginArray(v.IsNumberArray());
      for (double d : v.numbers) Number(d);
      for (const JsonValue& item : v.items) Value(item);
      EndArray();
      break;
    case JsonType::Object:
      BeginObject();
      for (const auto& m : v.members) {
        Key(m.first);
        Value(m.second);
      }
      EndObject();
      break;
  }
}

std::string SerializeJson(const JsonValue& v, int indent) {
  JsonWriter w(indent);
  w.Value(v);
  return w.str();
}

}  // namespace attnviz
