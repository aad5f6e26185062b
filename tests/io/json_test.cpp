// JSON parser/writer edge cases.
#include "io/json.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

using namespace attnviz;

namespace {

JsonValue MustParse(const std::string& text) {
  JsonValue v;
  Status st = ParseJson(text, &v);
  EXPECT_TRUE(st.ok) << text << " -> " << st.message;
  return v;
}

std::string ErrorOf(const std::string& text) {
  JsonValue v;
  Status st = ParseJson(text, &v);
  EXPECT_FALSE(st.ok) << "accepted: " << text;
  return st.message;
}

}  // namespace

TEST(Json, ScalarsAndStructure) {
  EXPECT_EQ(MustParse("null").type, JsonType::Null);
  EXPECT_TRUE(MustParse(" true ").boolean);
  EXPECT_FALSE(MustParse("false").boolean);
  EXPECT_EQ(MustParse("\"x\"").string, "x");
  JsonValue o = MustParse("{\"a\": [1, 2.5, -3e2], \"b\": {\"c\": [\"s\", null, true]}, \"a\": 0}");
  ASSERT_TRUE(o.IsObject());
  ASSERT_EQ(o.members.size(), 3u);
  const JsonValue* a = o.Find("a");  // first of the duplicate keys
  ASSERT_NE(a, nullptr);
  ASSERT_TRUE(a->IsNumberArray());
  EXPECT_EQ(a->numbers, (std::vector<double>{1, 2.5, -300}));
  const JsonValue* c = o.Find("b")->Find("c");
  ASSERT_EQ(c->items.size(), 3u);
  EXPECT_EQ(c->items[0].string, "s");
  EXPECT_TRUE(c->items[1].IsNull());
  EXPECT_EQ(MustParse("[]").ArraySize(), 0u);
  EXPECT_EQ(MustParse("{}").members.size(), 0u);
  // A mixed array unpacks the numbers it had already stored packed.
  JsonValue mixed = MustParse("[1, 2, \"three\", 4]");
  ASSERT_EQ(mixed.items.size(), 4u);
  EXPECT_TRUE(mixed.numbers.empty());
  EXPECT_EQ(mixed.items[1].number, 2);
  EXPECT_EQ(mixed.items[3].number, 4);
}

TEST(Json, Numbers) {
  const std::pair<const char*, double> good[] = {{"0", 0},
                                                 {"-0", -0.0},
                                                 {"1e3", 1000},
                                                 {"1E+3", 1000},
                                                 {"2.5e-3", 0.0025},
                                                 {"-12.75", -12.75},
                                                 {"123456789012", 123456789012.0},
                                                 {"1e-400", 0.0}};
  for (const auto& g : good) EXPECT_EQ(MustParse(g.first).number, g.second) << g.first;
  for (const char* bad : {"01", "1.", ".5", "+1", "1e", "1e+", "-", "--1", "0x10", "1.e3"}) ErrorOf(bad);
  EXPECT_NE(ErrorOf("NaN").find("NaN and Infinity"), std::string::npos);
  EXPECT_NE(ErrorOf("[Infinity]").find("NaN and Infinity"), std::string::npos);
  EXPECT_NE(ErrorOf("1e999").find("out of range"), std::string::npos);
}

// Every number reads as strtod reads it, bit for bit, with the fast path (short numbers) and
// without it: floats as attnviz and numpy write them, doubles as Python writes them, and the
// edges of the fast path (2^53, 10^22, subnormals, signed zeros, long mantissas).
// Every text, in one JSON array, is read bit for bit as strtod reads it, with the fast number
// paths on and off.
static void ExpectReadAsStrtod(const std::vector<std::string>& texts) {
  std::string doc = "[";
  for (size_t i = 0; i < texts.size(); ++i) doc += (i ? "," : "") + texts[i];
  doc += "]";
  for (bool fast : {true, false}) {
    JsonParseOptions options;
    options.fast_numbers = fast;
    JsonValue v;
    ASSERT_TRUE(ParseJson(doc.data(), doc.size(), &v, options).ok);
    ASSERT_EQ(v.numbers.size(), texts.size());
    int mismatches = 0;
    for (size_t i = 0; i < texts.size(); ++i) {
      const double want = std::strtod(texts[i].c_str(), nullptr), got = v.numbers[i];
      if (std::memcmp(&want, &got, sizeof want) != 0 && ++mismatches < 5)
        ADD_FAILURE() << texts[i] << " read as " << got << ", strtod: " << want << (fast ? " (fast path on)" : "");
    }
    EXPECT_EQ(mismatches, 0);
  }
}

TEST(Json, NumbersReadExactlyAsStrtodDoes) {
  std::vector<std::string> texts = {"0",
                                    "-0",
                                    "0.0",
                                    "-0.0",
                                    "0e5",
                                    "-0E-5",
                                    "1",
                                    "-1",
                                    "9007199254740992",
                                    "9007199254740993",
                                    "9007199254740991.5",
                                    "123456789012345678",
                                    "1e22",
                                    "1e23",
                                    "1e-22",
                                    "1e-23",
                                    "0.1",
                                    "0.30000000000000004",
                                    "1.7976931348623157e308",
                                    "4.9e-324",
                                    "2.2250738585072014e-308",
                                    "1.401298464324817e-45",
                                    "1.0000000000000000000",
                                    "0.0000000000000000000000001",
                                    "12345678901234567890e-10",
                                    "3.4028235e38",
                                    "1E+2",
                                    "1e+0",
                                    "65504",
                                    "6.1035156e-05",
                                    "5.9604645e-08"};
  uint32_t seed = 7;
  char b[64];
  for (int i = 0; i < 4000; ++i) {
    seed = seed * 1664525u + 1013904223u;
    uint32_t bits = seed;
    float f;
    std::memcpy(&f, &bits, 4);
    if (!std::isfinite(f)) continue;
    const float w = (float)(seed >> 8) * (1.0f / 16777216.0f) * std::ldexp(1.0f, -(int)(seed % 24));
    for (const char* fmt : {"%.9g", "%.6g", "%.17g"}) {
      std::snprintf(b, sizeof(b), fmt, (double)f);
      texts.push_back(b);
      std::snprintf(b, sizeof(b), fmt, (double)w);  // weights in [0, 1)
      texts.push_back(b);
    }
    std::snprintf(b, sizeof(b), "%.15g", (double)w * 3.0);
    texts.push_back(b);
  }
  ExpectReadAsStrtod(texts);
}

// Up to 19 significant digits within 10^±27 the reader computes in 128-bit integers: random
// doubles of every digit count there, and the decimal neighbours of the exact midpoints between
// two doubles (where rounding is decided by the last bits), against strtod.
TEST(Json, LongNumbersReadExactlyAsStrtodDoes) {
  std::vector<std::string> texts = {"0.10000000149011612",   "9007199254740993",        "18446744073709551615",
                                    "1844674407370955161.5", "9999999999999999999e-27", "1.0000000000000002",
                                    "0.99999999999999994",   "4.4501477170144023e-27",  "123456789012345678e9"};
  uint64_t seed = 11;
  char b[80];
  for (int i = 0; i < 6000; ++i) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    const double unit = (double)(seed >> 11) * 0x1p-53;                     // [0, 1)
    const double d = (0.5 + unit) * std::pow(10.0, (int)(seed % 51) - 25);  // 5e-26 .. 1.5e25
    for (const char* fmt : {"%.17g", "%.16g", "%.19g", "%.18e"}) {
      std::snprintf(b, sizeof(b), fmt, d);
      texts.push_back(b);
    }
    // The midpoint between d and the next double is exact in long double (64 or 113 bits).
    const long double mid = ((long double)d + (long double)std::nextafter(d, 2 * d)) / 2;
    for (const char* fmt : {"%.19Lg", "%.18Lg", "%.17Lg"}) {
      std::snprintf(b, sizeof(b), fmt, mid);
      texts.push_back(b);
    }
  }
  ExpectReadAsStrtod(texts);
}

// NumberF writes what printf's shortest "%.6g".."%.9g" that strtof reads back gives, for floats
// of every magnitude (its fast path covers about 1e-13..1e13, printf the rest).
TEST(Json, FloatsAreWrittenAsTheShortestPrintfTextThatReadsBack) {
  auto reference = [](float v) {
    char b[32];
    for (int prec = 6; prec <= 9; ++prec) {
      std::snprintf(b, sizeof(b), "%.*g", prec, (double)v);
      if (std::strtof(b, nullptr) == v) break;
    }
    return std::string(b);
  };
  std::vector<float> values = {0.0f,
                               -0.0f,
                               1.0f,
                               -1.0f,
                               0.5f,
                               0.1f,
                               1e-5f,
                               1e-4f,
                               9.9999999e-5f,
                               123456.7f,
                               999999.94f,
                               9999999.0f,
                               1e7f,
                               1e8f,
                               16777216.0f,
                               65504.0f,
                               3.4028235e38f,
                               1e-45f,
                               1.17549435e-38f,
                               0.33333334f,
                               2.5e-13f,
                               7.0e12f,
                               1048576.5f,
                               0.0078125f};
  uint32_t seed = 3;
  for (int i = 0; i < 200000; ++i) {
    seed = seed * 1664525u + 1013904223u;
    float f;
    std::memcpy(&f, &seed, 4);
    if (std::isfinite(f)) values.push_back(f);
    values.push_back(std::exp(-20.0f * (float)(seed >> 8) * (1.0f / 16777216.0f)));  // weights
  }
  int mismatches = 0;
  for (float v : values) {
    JsonWriter w(0);
    w.NumberF(v);
    const std::string want = reference(v);
    if (w.str() != want && ++mismatches <= 5) ADD_FAILURE() << w.str() << " written, printf: " << want;
  }
  EXPECT_EQ(mismatches, 0);
}

TEST(Json, StringsEscapesAndUtf8) {
  EXPECT_EQ(MustParse(R"("a\"b\\c\/d\b\f\n\r\t")").string, "a\"b\\c/d\b\f\n\r\t");
  EXPECT_EQ(MustParse(R"("\u00e9\u20AC")").string, "\xC3\xA9\xE2\x82\xAC");                 // é €
  EXPECT_EQ(MustParse(R"("\ud83d\ude00")").string, "\xF0\x9F\x98\x80");                     // surrogate pair -> U+1F600
  EXPECT_EQ(MustParse("\"\xE6\x97\xA5\xE6\x9C\xAC\"").string, "\xE6\x97\xA5\xE6\x9C\xAC");  // raw UTF-8 kept
  EXPECT_EQ(MustParse(R"("\u0000")").string, std::string(1, '\0'));
  EXPECT_NE(ErrorOf(R"("\ud83d")").find("high surrogate without a low surrogate"), std::string::npos);
  EXPECT_NE(ErrorOf(R"("\ud83d\u0041")").find("high surrogate"), std::string::npos);
  EXPECT_NE(ErrorOf(R"("\ude00")").find("lone low surrogate"), std::string::npos);
  EXPECT_NE(ErrorOf(R"("\u12G4")").find("invalid hex digit"), std::string::npos);
  EXPECT_NE(ErrorOf(R"("\x")").find("invalid escape"), std::string::npos);
  EXPECT_NE(ErrorOf("\"a\nb\"").find("control character"), std::string::npos);
  EXPECT_NE(ErrorOf("\"\xC3\x28\"").find("invalid UTF-8"), std::string::npos);
  EXPECT_NE(ErrorOf("\"\xC0\xAF\"").find("invalid UTF-8"), std::string::npos);      // overlong '/'
  EXPECT_NE(ErrorOf("\"\xED\xA0\x80\"").find("invalid UTF-8"), std::string::npos);  // encoded surrogate
  EXPECT_NE(ErrorOf("\"abc").find("unterminated string"), std::string::npos);
  EXPECT_EQ(MustParse("\xEF\xBB\xBF{\"bom\": 1}").Find("bom")->number, 1);  // a UTF-8 BOM is skipped
}

TEST(Json, ErrorsCarryLineAndColumn) {
  std::string m = ErrorOf("{\n  \"a\": [1, 2\n  \"b\": 3\n}");
  EXPECT_NE(m.find("json: 3:3: expected ',' or ']' in array"), std::string::npos) << m;
  m = ErrorOf("{\"a\" 1}");
  EXPECT_NE(m.find("1:6: expected ':'"), std::string::npos) << m;
  m = ErrorOf("[1, 2,]");
  EXPECT_NE(m.find("1:7: unexpected character ']'"), std::string::npos) << m;
  m = ErrorOf("{\"a\": 1,}");
  EXPECT_NE(m.find("expected a string key"), std::string::npos) << m;
  EXPECT_NE(ErrorOf("").find("empty document"), std::string::npos);
  EXPECT_NE(ErrorOf("   ").find("empty document"), std::string::npos);
  EXPECT_NE(ErrorOf("{} {}").find("unexpected text after"), std::string::npos);
  EXPECT_NE(ErrorOf("[1, 2").find("unexpected end of input in array"), std::string::npos);
  EXPECT_NE(ErrorOf("tru").find("unexpected character 't'"), std::string::npos);
  EXPECT_NE(ErrorOf("'single'").find("unexpected character '''"), std::string::npos);
}

TEST(Json, DepthLimit) {
  std::string ok(256, '['), deep(100000, '[');
  ok += std::string(256, ']');
  MustParse(ok);
  EXPECT_NE(ErrorOf(deep).find("nesting deeper than 256"), std::string::npos);
  std::string objs;
  for (int i = 0; i < 300; ++i) objs += "{\"a\":";
  EXPECT_NE(ErrorOf(objs).find("nesting deeper than 256"), std::string::npos);
}

TEST(Json, WriterRoundTrips) {
  const std::string text =
      "{\"s\": \"tab\\t quote\\\" \\u00e9 \\ud83d\\ude00 ctl\\u0001\", \"n\": [0, -1.5, 1e-07, 0.1, 3.141592653589793, "
      "1e+300],"
      " \"o\": {\"x\": null, \"y\": [true, false, [], {}]}}";
  JsonValue v = MustParse(text);
  for (int indent : {0, 2}) {
    std::string out = SerializeJson(v, indent);
    JsonValue back = MustParse(out);
    EXPECT_EQ(SerializeJson(back, 0), SerializeJson(v, 0)) << out;
    EXPECT_EQ(back.Find("s")->string, v.Find("s")->string);
    EXPECT_EQ(back.Find("n")->numbers, v.Find("n")->numbers);  // exact doubles
  }
  EXPECT_EQ(SerializeJson(v.Find("o")->Find("y")[0], 0), "[true,false,[],{}]");
  JsonWriter w;
  w.BeginArray();
  w.NumberF(0.1f);
  w.NumberF(1.0f / 3.0f);
  w.Number(NAN);
  w.String("bad \xFF byte");
  w.EndArray();
  EXPECT_EQ(w.str(), "[0.1,0.33333334,null,\"bad \xEF\xBF\xBD byte\"]");
  EXPECT_EQ(JsonEscape("<\x7f>"), "\"<\x7f>\"");
}

// The one NaN/infinity policy (io/json.h, docs/FORMATS.md): every writer emits null for NaN,
// +inf and -inf, and what it wrote parses back (as null values).
TEST(Json, NanAndInfinityAreWrittenAsNullAndParseBack) {
  const double inf = std::numeric_limits<double>::infinity();
  const float inf_f = std::numeric_limits<float>::infinity();
  JsonWriter w;
  w.BeginArray();
  w.Number(std::nan(""));
  w.Number(inf);
  w.Number(-inf);
  w.NumberF(std::nanf(""));
  w.NumberF(inf_f);
  w.NumberF(-inf_f);
  w.NumberFixed(std::nan(""), 4);
  w.NumberFixed(inf, 4);
  w.NumberFixed(-inf, 4);
  w.EndArray();
  EXPECT_EQ(w.str(), "[null,null,null,null,null,null,null,null,null]");
  JsonValue back = MustParse(w.str());
  ASSERT_EQ(back.ArraySize(), 9u);
  for (const JsonValue& item : back.items) EXPECT_TRUE(item.IsNull());

  // a tree holding non-finite numbers (a packed number row included), compact and indented
  JsonValue tree;
  tree.type = JsonType::Object;
  tree.members.emplace_back("nan", JsonValue::MakeNumber(std::nan("")));
  tree.members.emplace_back("inf", JsonValue::MakeNumber(inf));
  tree.members.emplace_back("neg_inf", JsonValue::MakeNumber(-inf));
  JsonValue row;
  row.type = JsonType::Array;
  row.numbers = {0.25, std::nan(""), inf, -inf};
  tree.members.emplace_back("row", row);
  EXPECT_EQ(SerializeJson(tree), "{\"nan\":null,\"inf\":null,\"neg_inf\":null,\"row\":[0.25,null,null,null]}");
  for (int indent : {0, 2}) {
    const std::string text = SerializeJson(tree, indent);
    JsonValue parsed = MustParse(text);
    for (const char* key : {"nan", "inf", "neg_inf"}) {
      ASSERT_NE(parsed.Find(key), nullptr) << text;
      EXPECT_TRUE(parsed.Find(key)->IsNull()) << key << " in " << text;
    }
    const JsonValue* r = parsed.Find("row");
    ASSERT_NE(r, nullptr);
    ASSERT_EQ(r->ArraySize(), 4u) << text;
    ASSERT_FALSE(r->IsNumberArray()) << "nulls unpack the row";
    EXPECT_EQ(r->items[0].number, 0.25);
    for (int i = 1; i < 4; ++i) EXPECT_TRUE(r->items[i].IsNull()) << text;
  }
  // readers refuse the non-JSON spellings instead of guessing
  EXPECT_NE(ErrorOf("[-Infinity]").find("expected a digit"), std::string::npos);
  EXPECT_NE(ErrorOf("[1e999]").find("number out of range"), std::string::npos);
}

TEST(Json, NumberFixedKeepsTheGivenDecimals) {
  JsonWriter w;
  w.BeginObject();
  w.Key("a");
  w.NumberFixed(0.97754, 4);
  w.Key("b");
  w.NumberFixed(1.0, 4);
  w.Key("c");
  w.NumberFixed(4.905712, 5);
  w.Key("d");
  w.NumberFixed(12.345, 0);
  w.EndObject();
  EXPECT_EQ(w.str(), "{\"a\":0.9775,\"b\":1.0000,\"c\":4.90571,\"d\":12}");
  MustParse(w.str());
}

TEST(Json, TruncationsNeverCrash) {
  const std::string text =
      "{\"format\": \"attnviz\", \"t\": [\"\\ud83d\\ude00\", \"\xC3\xA9\"], \"w\": [[0.5, 0.5], [1e-3, 9.99e-1]]}";
  MustParse(text);
  int errors = 0;
  for (size_t n = 0; n < text.size(); ++n) {
    JsonValue v;
    if (!ParseJson(text.data(), n, &v).ok) ++errors;
  }
  EXPECT_EQ(errors, (int)text.size());  // every proper prefix is incomplete
}
