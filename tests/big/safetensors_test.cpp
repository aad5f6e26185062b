// The safetensors container (io/safetensors.h): header parsing and every validation it makes,
// the header writer, and the F16 / BF16 conversions (exhaustively against the NPY reader's half).
#include "io/safetensors.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "io/ndarray.h"

using namespace attnviz;

namespace {

// A file: the 8-byte length, the JSON header as given, then data_bytes bytes of data.
std::vector<uint8_t> MakeFile(const std::string& json, size_t data_bytes, uint64_t declared_len = ~0ull) {
  std::vector<uint8_t> f(8 + json.size() + data_bytes, 0);
  const uint64_t len = declared_len == ~0ull ? json.size() : declared_len;
  for (int i = 0; i < 8; ++i) f[(size_t)i] = (uint8_t)(len >> (8 * i));
  std::memcpy(f.data() + 8, json.data(), json.size());
  return f;
}

Status Parse(const std::vector<uint8_t>& f, SafetensorsHeader* h) {
  return ParseSafetensorsHeader(f.data(), f.size(), f.size(), h);
}

std::string Error(const std::string& json, size_t data_bytes) {
  SafetensorsHeader h;
  const std::vector<uint8_t> f = MakeFile(json, data_bytes);
  const Status st = Parse(f, &h);
  EXPECT_FALSE(st.ok) << json;
  return st.message;
}

TEST(Safetensors, ParsesTheDocumentedExample) {
  // The example of the format's documentation: two tensors and metadata, padded with spaces.
  const std::string json =
      R"({"__metadata__":{"format":"pt"},"weight_1":{"dtype":"F16","shape":[2,3],"data_offsets":[0,12]},)"
      R"("weight_2":{"dtype":"BF16","shape":[1,2],"data_offsets":[12,16]}}   )";
  SafetensorsHeader h;
  const std::vector<uint8_t> f = MakeFile(json, 16);
  const Status st = Parse(f, &h);
  ASSERT_TRUE(st.ok) << st.message;
  ASSERT_EQ(h.tensors.size(), 2u);
  EXPECT_EQ(h.data_start, 8 + json.size());
  const SafetensorsTensor* w1 = h.Find("weight_1");
  ASSERT_NE(w1, nullptr);
  EXPECT_EQ(w1->dtype, StDType::F16);
  EXPECT_EQ(w1->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(w1->begin, h.data_start);
  EXPECT_EQ(w1->end, h.data_start + 12);
  EXPECT_EQ(h.Find("weight_2")->begin, h.data_start + 12);
  ASSERT_NE(h.Meta("format"), nullptr);
  EXPECT_EQ(*h.Meta("format"), "pt");
  EXPECT_EQ(h.Find("nope"), nullptr);
}

TEST(Safetensors, WriterRoundTripsAndAlignsTheData) {
  std::vector<SafetensorsTensorSpec> specs = {{"b", StDType::F32, {3, 5}},
                                              {"a", StDType::F16, {7}},
                                              {"scalar", StDType::F64, {}},
                                              {"empty", StDType::U8, {0, 4}}};
  std::vector<uint8_t> header;
  std::vector<uint64_t> begins;
  uint64_t size = 0;
  ASSERT_TRUE(SafetensorsHeaderBytes(specs, {{"k", "v \"quoted\""}}, &header, &begins, &size).ok);
  EXPECT_EQ(header.size() % 8, 0u);
  EXPECT_EQ(size, header.size() + 60 + 14 + 8);
  std::vector<uint8_t> f(size, 0);
  std::memcpy(f.data(), header.data(), header.size());
  SafetensorsHeader h;
  const Status st = Parse(f, &h);
  ASSERT_TRUE(st.ok) << st.message;
  for (size_t i = 0; i < specs.size(); ++i) {
    const SafetensorsTensor* t = h.Find(specs[i].name);
    ASSERT_NE(t, nullptr) << specs[i].name;
    EXPECT_EQ(t->begin, begins[i]);
    EXPECT_EQ(t->shape, specs[i].shape);
    EXPECT_EQ(t->dtype, specs[i].dtype);
  }
  EXPECT_EQ(*h.Meta("k"), "v \"quoted\"");
  std::vector<SafetensorsTensorSpec> twice = {{"x", StDType::F32, {1}}, {"x", StDType::F32, {1}}};
  EXPECT_FALSE(SafetensorsHeaderBytes(twice, {}, &header, &begins, &size).ok);
}

TEST(Safetensors, RefusesLiesAboutTheLayout) {
  const std::string t = R"("dtype":"F32","shape":[2],"data_offsets":)";
  // Offsets beyond the file.
  EXPECT_NE(Error("{\"x\":{" + t + "[0,8]}}", 4).find("beyond the end of the file"), std::string::npos);
  // Overlapping tensors.
  std::string m = Error("{\"x\":{" + t + "[0,8]},\"y\":{" + t + "[4,12]}}", 12);
  EXPECT_NE(m.find("overlap"), std::string::npos) << m;
  // The same bytes listed twice.
  m = Error("{\"x\":{" + t + "[0,8]},\"y\":{" + t + "[0,8]}}", 8);
  EXPECT_NE(m.find("overlap"), std::string::npos) << m;
  // A gap, and bytes after the last tensor.
  EXPECT_NE(Error("{\"x\":{" + t + "[4,12]}}", 12).find("gap"), std::string::npos);
  EXPECT_NE(Error("{\"x\":{" + t + "[0,8]}}", 12).find("after the last tensor"), std::string::npos);
  // dtype / shape lies: [2] F32 is 8 bytes.
  m = Error("{\"x\":{" + t + "[0,6]}}", 6);
  EXPECT_NE(m.find("dtype or the shape is wrong"), std::string::npos) << m;
  m = Error(R"({"x":{"dtype":"F16","shape":[3,3],"data_offsets":[0,36]}})", 36);
  EXPECT_NE(m.find("[3, 3] F16 = 18 bytes"), std::string::npos) << m;
  EXPECT_NE(Error(R"({"x":{"dtype":"F12","shape":[1],"data_offsets":[0,4]}})", 4).find("unknown dtype"),
            std::string::npos);
  EXPECT_NE(Error(R"({"x":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", 4).find("non-negative"),
            std::string::npos);
  EXPECT_NE(Error(R"({"x":{"dtype":"F32","shape":[1.5],"data_offsets":[0,4]}})", 4).find("non-negative"),
            std::string::npos);
  EXPECT_NE(Error(R"({"x":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,4]}})", 4).find("overflows"),
            std::string::npos);
  EXPECT_NE(Error(R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[4,0]}})", 4).find("end before"),
            std::string::npos);
  EXPECT_NE(Error(R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[0]}})", 4).find("data_offsets"),
            std::string::npos);
  EXPECT_NE(Error(R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"x":{"dtype":"F32","shape":[1],)"
                  R"("data_offsets":[4,8]}})",
                  8)
                .find("named twice"),
            std::string::npos);
  EXPECT_NE(Error(R"({"__metadata__":{"a":1}})", 0).find("must be a string"), std::string::npos);
  EXPECT_NE(Error(R"({"__metadata__":[]})", 0).find("object of strings"), std::string::npos);
  EXPECT_NE(Error(R"({"x":[1,2]})", 0).find("must be an object"), std::string::npos);
  EXPECT_NE(Error("[1]", 0).find("starting with '{'"), std::string::npos);
  EXPECT_NE(Error("{\"x\":", 0).find("header"), std::string::npos);
  EXPECT_TRUE(Error("{}", 4).find("after the last tensor") != std::string::npos);
}

TEST(Safetensors, RefusesBadLengths) {
  SafetensorsHeader h;
  std::vector<uint8_t> f = {1, 2, 3};
  EXPECT_NE(Parse(f, &h).message.find("too short"), std::string::npos);
  f = MakeFile("{}", 0, 1000);  // N beyond the file
  EXPECT_NE(Parse(f, &h).message.find("truncated"), std::string::npos);
  f = MakeFile("{}", 0, uint64_t(1) << 40);  // N beyond the limit, checked before anything is allocated
  EXPECT_NE(Parse(f, &h).message.find("over the limit"), std::string::npos);
  f = MakeFile("{}", 0, ~0ull - 1);
  EXPECT_FALSE(Parse(f, &h).ok);
  f = MakeFile(R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", 4);
  uint64_t need = 0;
  ASSERT_TRUE(SafetensorsHeaderLength(f.data(), 8, f.size(), &need).ok);
  EXPECT_EQ(need, f.size() - 4);
  // Fewer bytes than the header needs (a reader that fetched too little) is an error, not a read past the end.
  EXPECT_NE(ParseSafetensorsHeader(f.data(), 20, f.size(), &h).message.find("the header needs"), std::string::npos);
  // The tree is built within the memory budget.
  MemoryBudget tiny(64);
  EXPECT_FALSE(ParseSafetensorsHeader(f.data(), f.size(), f.size(), &h, &tiny).ok);
}

TEST(Safetensors, HalfConversionsAreExactAndRoundToNearestEven) {
  int64_t mismatches = 0;
  for (uint32_t b = 0; b < 65536; ++b) {
    const uint16_t h = (uint16_t)b;
    uint8_t bytes[2];
    std::memcpy(bytes, &h, 2);
    float fast = 0;
    ASSERT_TRUE(DecodeFloats(StDType::F16, bytes, 1, &fast));
    const float ref = HalfToFloat(h);
    if (std::isnan(ref)) {
      mismatches += !std::isnan(fast);
      mismatches += !std::isnan(HalfToFloat(FloatToHalf(ref)));
      continue;
    }
    uint32_t fb, rb;
    std::memcpy(&fb, &fast, 4);
    std::memcpy(&rb, &ref, 4);
    mismatches += fb != rb;               // bit-exact, signed zeros included
    mismatches += FloatToHalf(ref) != h;  // every half survives a round trip
  }
  EXPECT_EQ(mismatches, 0);
  EXPECT_EQ(FloatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(FloatToHalf(65519.0f), 0x7bff);  // below the midpoint to infinity
  EXPECT_EQ(FloatToHalf(65520.0f), 0x7c00);  // the midpoint rounds to even: infinity
  EXPECT_EQ(FloatToHalf(1e10f), 0x7c00);
  EXPECT_EQ(FloatToHalf(-1e10f), 0xfc00);
  EXPECT_EQ(FloatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3c00);      // tie -> even (1.0)
  EXPECT_EQ(FloatToHalf(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);  // tie -> even (1 + 2^-9)
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -25)), 0x0000);             // half the smallest subnormal: to even (0)
  EXPECT_EQ(FloatToHalf(std::ldexp(3.0f, -25)), 0x0002);             // 1.5 ulp: to even (2)
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -14) - std::ldexp(1.0f, -25)), 0x0400);  // rounds up to the smallest normal
  EXPECT_EQ(FloatToHalf(-0.0f), 0x8000);
}

// The vectorized paths (whole buffers, as the readers call them), at every start offset modulo a
// vector and with lengths that leave a scalar tail, against the scalar reference HalfToFloat.
TEST(Safetensors, HalfDecodingInBulkMatchesTheScalarReferenceForEveryValue) {
  std::vector<uint8_t> bytes(2 * (65536 + 16));
  for (uint32_t b = 0; b < 65536 + 16; ++b) {
    const uint16_t h = (uint16_t)(b * 40503u);  // every value once in the first 65536 (40503 is odd)
    std::memcpy(bytes.data() + 2 * b, &h, 2);
  }
  std::vector<float> out(65536 + 16);
  for (int offset = 0; offset < 8; ++offset) {
    const size_t n = 65536 + 7 - (size_t)offset;
    const uint8_t* src = bytes.data() + 2 * offset;
    ASSERT_TRUE(DecodeFloats(StDType::F16, src, n, out.data()));
    int64_t mismatches = 0;
    for (size_t i = 0; i < n; ++i) {
      uint16_t h;
      std::memcpy(&h, src + 2 * i, 2);
      const float ref = HalfToFloat(h);
      uint32_t fb, rb;
      std::memcpy(&fb, &out[i], 4);
      std::memcpy(&rb, &ref, 4);
      mismatches += std::isnan(ref) ? !std::isnan(out[i]) || (fb & 0x7fffffffu) != (rb & 0x7fffffffu) : fb != rb;
    }
    EXPECT_EQ(mismatches, 0) << "DecodeFloats, offset " << offset;
    // Weights: NaN, infinities and negative numbers other than -0 become 0 and are counted.
    float mx = -1.0f;
    const size_t fixed = DecodeHalfWeights(src, n, out.data(), &mx);
    size_t want_fixed = 0;
    float want_max = 0.0f;
    mismatches = 0;
    for (size_t i = 0; i < n; ++i) {
      uint16_t h;
      std::memcpy(&h, src + 2 * i, 2);
      const float ref = HalfToFloat(h);
      const bool bad = !(ref >= 0.0f) || std::isinf(ref);  // -0 >= 0: kept
      want_fixed += bad;
      const float want = bad ? 0.0f : ref;
      want_max = std::max(want_max, want);
      mismatches += out[i] != want;
    }
    EXPECT_EQ(mismatches, 0) << "DecodeHalfWeights, offset " << offset;
    EXPECT_EQ(fixed, want_fixed);
    EXPECT_EQ(mx, want_max);
    EXPECT_EQ(mx, 65504.0f);  // the largest finite half is among them
  }
  float mx = -1.0f;  // nothing to decode: no weights fixed, a maximum of 0
  EXPECT_EQ(DecodeHalfWeights(bytes.data(), 0, out.data(), &mx), 0u);
  EXPECT_EQ(mx, 0.0f);
}

// F32, BF16 and F64 weights decode as the viewer shows them, like F16's: NaN, infinities and negative
// numbers (not -0) become 0 and are counted, and the maximum is the largest weight. Random bit
// patterns (every class: subnormals, NaNs, infinities, negatives, zeros) at several offsets, against
// the plain conversion and a scalar check; F32 also in place.
TEST(Safetensors, FloatWeightsOfEveryDtypeAreCleanedAndCountedLikeHalfs) {
  std::vector<uint8_t> bytes(8 * 70000 + 64);
  uint64_t x = 0x243F6A8885A308D3ull;
  for (size_t i = 0; i < bytes.size(); ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    bytes[i] = (uint8_t)(x >> 24);
  }
  const uint32_t specials[] = {0x7f800000u, 0xff800000u, 0x7fc00000u, 0x80000000u,
                               0x00000001u, 0x7f7fffffu, 0xbf800000u};
  for (size_t k = 0; k < 7; ++k) std::memcpy(bytes.data() + 4 * k, &specials[k], 4);  // F32 and the BF16 halves
  for (StDType t : {StDType::F32, StDType::BF16, StDType::F64}) {
    for (size_t offset : {0u, 1u, 3u, 7u}) {
      const size_t n = 66000 + offset;  // past one 65536-weight chunk
      const uint8_t* src = bytes.data() + StDTypeSize(t) * offset;
      std::vector<float> plain(n), out(n);
      ASSERT_TRUE(DecodeFloats(t, src, n, plain.data()));
      float mx = -1.0f;
      size_t fixed = 99;
      ASSERT_TRUE(DecodeWeights(t, src, n, out.data(), &mx, &fixed));
      size_t want_fixed = 0, mismatches = 0;
      float want_max = 0.0f;
      for (size_t i = 0; i < n; ++i) {
        const bool bad = !(plain[i] >= 0.0f) || std::isinf(plain[i]);  // -0 >= 0: kept (as 0)
        const float want = bad ? 0.0f : plain[i];
        want_fixed += bad;
        want_max = std::max(want_max, want);
        mismatches += out[i] != want;
      }
      EXPECT_EQ(mismatches, 0u) << StDTypeName(t) << " offset " << offset;
      EXPECT_EQ(fixed, want_fixed) << StDTypeName(t) << " offset " << offset;
      EXPECT_GT(want_fixed, n / 8) << "the random bits hold bad weights";
      EXPECT_EQ(mx, want_max) << StDTypeName(t) << " offset " << offset;
      if (t == StDType::F32) {  // in place, as the lazy reader decodes F32
        std::vector<float> in(n);
        std::memcpy(in.data(), src, 4 * n);
        size_t fixed2 = 0;
        ASSERT_TRUE(DecodeWeights(t, reinterpret_cast<const uint8_t*>(in.data()), n, in.data(), nullptr, &fixed2));
        EXPECT_EQ(fixed2, want_fixed);
        EXPECT_EQ(std::memcmp(in.data(), out.data(), 4 * n), 0) << "in place";
      }
    }
  }
  size_t fixed = 0;
  float out[1];
  EXPECT_FALSE(DecodeWeights(StDType::I32, bytes.data(), 1, out, nullptr, &fixed)) << "not a float dtype";
}

TEST(Safetensors, BFloat16ConversionsRoundToNearestEven) {
  EXPECT_EQ(FloatToBFloat16(1.0f), 0x3f80);
  EXPECT_EQ(BFloat16ToFloat(0x3f80), 1.0f);
  float tie;
  const uint32_t tie_bits = 0x3f808000u;  // halfway between 0x3f80 and 0x3f81: to even
  std::memcpy(&tie, &tie_bits, 4);
  EXPECT_EQ(FloatToBFloat16(tie), 0x3f80);
  const uint32_t up_bits = 0x3f818000u;  // halfway between 0x3f81 and 0x3f82: to even
  std::memcpy(&tie, &up_bits, 4);
  EXPECT_EQ(FloatToBFloat16(tie), 0x3f82);
  EXPECT_TRUE(std::isnan(BFloat16ToFloat(FloatToBFloat16(std::nanf("")))));
  for (uint32_t b = 0; b < 65536; b += 7) {
    const float f = BFloat16ToFloat((uint16_t)b);
    if (!std::isnan(f)) {
      EXPECT_EQ(FloatToBFloat16(f), (uint16_t)b);
    }
  }
  const float values[] = {0.25f, 1e-3f, 0.1f, 3.0f};
  uint8_t bytes[8 * 4];
  ASSERT_TRUE(EncodeFloats(StDType::BF16, values, 4, bytes));
  float back[4];
  ASSERT_TRUE(DecodeFloats(StDType::BF16, bytes, 4, back));
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(back[i], values[i], values[i] * 4e-3f);
  ASSERT_TRUE(EncodeFloats(StDType::F32, values, 4, bytes));
  ASSERT_TRUE(DecodeFloats(StDType::F32, bytes, 4, back));
  for (int i = 0; i < 4; ++i) EXPECT_EQ(back[i], values[i]);
  EXPECT_FALSE(DecodeFloats(StDType::I32, bytes, 1, back));
  EXPECT_FALSE(EncodeFloats(StDType::U8, values, 1, bytes));
}

}  // namespace
