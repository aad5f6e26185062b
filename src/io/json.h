// attnviz io: a small, strict JSON (RFC 8259) parser and writer.
//
// Index of this header
//   - JsonValue      the parsed tree (objects keep their key order)
//   - ParseJson      bytes -> JsonValue or an error with line:column
//   - JsonWriter     streaming writer (used to save attention files without building a tree)
//   - SerializeJson  JsonValue -> text
//
// Parsing: UTF-8 input (a leading BOM is skipped), invalid UTF-8 is an error, \uXXXX escapes
// including surrogate pairs (a lone surrogate is an error), numbers per the JSON grammar,
// nesting depth limited, duplicate keys allowed (Find returns the first). Arrays holding only
// numbers are stored packed in `numbers` (a 512x512 attention matrix costs 2 MB, not 25 MB).
//
// Numbers: NaN and infinity (the one policy, docs/FORMATS.md). JSON has no NaN or infinity, so
// every writer (Number, NumberF, NumberFixed, SerializeJson) emits `null` for NaN, +inf and -inf
// and its output always parses again. ParseJson refuses the non-JSON spellings `NaN`,
// `Infinity`, `-Infinity` and numbers beyond the double range (`1e999`) with an error; `null` is
// valid JSON and parses as a Null value, so it is up to the reader of a format to refuse it where
// a number is required (the attention file does: io/attention_file.h).
//
// All JSON text of src/io and src/cli is written through JsonWriter; nothing is hand-assembled.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "io/memory_budget.h"

namespace attnviz {

// ---------------------------------------------------------------------------
// JsonValue
// ---------------------------------------------------------------------------
enum class JsonType { Null, Bool, Number, String, Array, Object };
const char* JsonTypeName(JsonType t);  // "null", "bool", "number", "string", "array", "object"

struct JsonValue {
  JsonType type = JsonType::Null;                          // which of the fields below is meaningful
  bool boolean = false;                                    // Bool
  double number = 0.0;                                     // Number
  std::string string;                                      // String (UTF-8)
  std::vector<JsonValue> items;                            // Array whose elements are not all numbers
  std::vector<double> numbers;                             // Array whose elements are all numbers (then items is empty)
  std::vector<std::pair<std::string, JsonValue>> members;  // Object, in file order

  bool IsNull() const { return type == JsonType::Null; }
  bool IsArray() const { return type == JsonType::Array; }
  bool IsObject() const { return type == JsonType::Object; }
  bool IsNumberArray() const { return type == JsonType::Array && items.empty(); }     // packed (or empty)
  size_t ArraySize() const { return items.empty() ? numbers.size() : items.size(); }  // elements of an Array
  const JsonValue* Find(const std::string& key) const;  // first member named key (Object), else nullptr

  static JsonValue MakeNumber(double v);  // convenience constructors for building trees
  static JsonValue MakeString(const std::string& s);
  static JsonValue MakeBool(bool b);
};

// ---------------------------------------------------------------------------
// ParseJson
// ---------------------------------------------------------------------------
struct JsonParseOptions {
  int max_depth = 256;                          // deepest nesting of arrays/objects
  size_t max_bytes = size_t(1) << 30;           // refuse larger documents
  uint64_t max_memory = DefaultMemoryBudget();  // bytes the tree may take (values, strings, vectors)
  bool fast_numbers = true;  // exact fast path for short numbers before strtod (false: strtod for all; benches)
};
// Parses one JSON document (whitespace around it allowed, nothing else). Errors read
// "json: 3:17: expected ',' or ']' in array". The tree is built within options.max_memory:
// every vector grows only after its new capacity is charged (a JsonValue is ~120 bytes, so
// 10^7 `[]` in 30 MB would take 1.2 GB), and a failing allocation is an error, not an abort.
Status ParseJson(const char* text, size_t size, JsonValue* out, const JsonParseOptions& options = JsonParseOptions());
inline Status ParseJson(const std::string& text, JsonValue* out) {
  return ParseJson(text.data(), text.size(), out);
}

// ---------------------------------------------------------------------------
// JsonWriter: streaming output. Commas and indentation are handled for you.
//   JsonWriter w(2); w.BeginObject(); w.Key("a"); w.Number(1); w.EndObject(); w.str();
// ---------------------------------------------------------------------------
class JsonWriter {
 public:
  explicit JsonWriter(int indent = 0);             // 0 = compact; n = pretty, n spaces per level
  void BeginObject();                              // {
  void EndObject();                                // }
  void BeginArray(bool inline_array = false);      // [ ; inline arrays keep their elements on one line
  void EndArray();                                 // ]
  void Key(const std::string& key);                // "key": (inside an object)
  void String(const std::string& s);               // escaped; invalid UTF-8 becomes U+FFFD
  void Number(double v);                           // shortest text that round-trips a double; NaN/inf -> null
  void NumberF(float v);                           // shortest text that round-trips a float; NaN/inf -> null
  void NumberFixed(double v, int decimals);        // "%.*f", for metrics kept to fixed decimals; NaN/inf -> null
  void Bool(bool b);                               // true / false
  void Null();                                     // null
  void Value(const JsonValue& v);                  // a whole tree
  const std::string& str() const { return out_; }  // the text so far

 private:
  void Separator();
  void Newline();
  struct Level {
    bool is_array, inline_array, empty;
  };
  std::vector<Level> stack_;
  std::string out_;
  int indent_;
  bool after_key_ = false;
};

std::string SerializeJson(const JsonValue& v, int indent = 0);  // whole tree to text
std::string JsonEscape(const std::string& s);                   // quoted, escaped string literal

// Appends a finite float as the shortest of printf's "%.6g" .. "%.9g" that strtof reads back to it
// (what NumberF writes; CSV's numbers too), without printf for most values: in WebAssembly printf
// and strtof run in software long double, ~4 us a number.
void AppendShortestFloat(float v, std::string* out);

}  // namespace attnviz
