// Attention file loading (JSON / NPZ / NPY), validation, saving, SVG export (colours from core/colormap).
#include "io/attention_file.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

#include "core/colormap.h"
#include "io/file_util.h"
#include "io/npz.h"
#include "io/svg.h"

using namespace attnviz;

namespace {

std::vector<uint8_t> ReadData(const std::string& name) {
  std::vector<uint8_t> bytes;
  Status st = ReadFileBytes(std::string(ATTNVIZ_SOURCE_DIR) + "/tests/io/data/" + name, &bytes);
  EXPECT_TRUE(st.ok) << st.message;
  return bytes;
}

// Values numpy recorded for "file:member" in data/manifest.txt.
std::vector<double> ManifestValues(const std::string& key) {
  std::vector<uint8_t> bytes = ReadData("manifest.txt");
  std::istringstream in(std::string(bytes.begin(), bytes.end()));
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string k, dtype, shape, v;
    ls >> k >> dtype >> shape;
    if (k != key) continue;
    std::vector<double> values;
    while (ls >> v) values.push_back(std::strtod(v.c_str(), nullptr));
    return values;
  }
  ADD_FAILURE() << "no manifest line " << key;
  return {};
}

Status LoadText(const std::string& text, AttentionFile* f) {
  return LoadAttentionFile((const uint8_t*)text.data(), text.size(), f);
}

const char* kGoodJson = R"({
  "format": "attnviz", "version": 1,
  "source_tokens": ["the", "cat", "sat"],
  "target_tokens": ["le", "chat"],
  "layers": [
    {"name": "cross", "heads": [
      {"name": "h0", "weights": [[0.7, 0.2, 0.1], [0.1, 0.8, 0.1]]},
      {"name": "h1", "weights": [[1, 0, 0], [0, 0, 1]]}]},
    {"heads": [[[0.5, 0.25, 0.25], [0, 0.5, 0.5]]]}
  ],
  "meta": {"model": "toy", "step": 3}
})";

}  // namespace

TEST(AttentionFile, LoadsJson) {
  AttentionFile f;
  Status st = LoadText(kGoodJson, &f);
  ASSERT_TRUE(st.ok) << st.message;
  EXPECT_EQ(f.source_tokens, (std::vector<std::string>{"the", "cat", "sat"}));
  EXPECT_EQ(f.target_tokens, (std::vector<std::string>{"le", "chat"}));
  ASSERT_EQ(f.layers.size(), 2u);
  EXPECT_EQ(f.layers[0].name, "cross");
  EXPECT_EQ(f.layers[1].name, "layer 1");          // default names
  EXPECT_EQ(f.layers[1].heads[0].name, "head 0");  // a bare matrix is a head
  EXPECT_EQ(f.TotalHeads(), 3);
  EXPECT_FLOAT_EQ(f.layers[0].heads[0].weights(1, 1), 0.8f);
  EXPECT_EQ(f.meta.Find("model")->string, "toy");
  EXPECT_TRUE(f.warnings.empty());
}

TEST(AttentionFile, SelfAttentionTokensAndShorthand) {
  AttentionFile f;
  Status st = LoadText(R"({"tokens": ["a", "b"], "weights": [[1, 0], [0.5, 0.5]]})", &f);
  ASSERT_TRUE(st.ok) << st.message;
  EXPECT_TRUE(f.self_attention);
  EXPECT_EQ(f.source_tokens, f.target_tokens);
  ASSERT_EQ(f.layers.size(), 1u);
  // No tokens at all: indices, with a warning.
  st = LoadText(R"({"weights": [[1, 0, 0]]})", &f);
  ASSERT_TRUE(st.ok) << st.message;
  EXPECT_EQ(f.source_tokens, (std::vector<std::string>{"0", "1", "2"}));
  EXPECT_EQ(f.warnings.size(), 2u);
}

TEST(AttentionFile, RowSumWarningsAndTinyNegatives) {
  AttentionFile f;
  Status st = LoadText(R"({"tokens": ["a", "b"], "weights": [[0.6, 0.6], [0, 0]]})", &f);
  ASSERT_TRUE(st.ok) << st.message;
  ASSERT_EQ(f.warnings.size(), 1u);  // the zero row (fully masked) is fine
  EXPECT_NE(f.warnings[0].find("1 of 2 rows do not sum to 1 (largest |sum - 1| = 0.2)"), std::string::npos)
      << f.warnings[0];
  st = LoadText(R"({"tokens": ["a", "b"], "weights": [[-1e-8, 1], [0.5, 0.5]]})", &f);
  ASSERT_TRUE(st.ok) << st.message;
  EXPECT_EQ(f.layers[0].heads[0].weights(0, 0), 0.0f);  // clamped
}

TEST(AttentionFile, BadJsonFilesAreRejectedWithReasons) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"format": "other", "weights": [[1]]})", "\"format\" must be \"attnviz\""},
      {R"({"version": 2, "weights": [[1]]})", "version 2 needs \"sets\""},
      {R"({"version": 3, "weights": [[1]]})", "version 3 is not supported"},
      {R"({"tokens": ["a"], "source_tokens": ["a"], "weights": [[1]]})", "either \"tokens\""},
      {R"({"tokens": ["a", "b"], "weights": [[1, 0]]})", "has weights [1, 2] but there are 2 target tokens"},
      {R"({"tokens": ["a", "b"], "weights": [[1, 0], [0]]})", "row 1 has 1 values, row 0 has 2"},
      {R"({"tokens": ["a", "b"], "weights": [[1, 0], [null, 1]]})", "row 1 must be an array of numbers"},
      {R"({"tokens": ["a", "b"], "weights": [[1, 0], [-0.5, 1.5]]})", "negative weight -0.5 at row 1, column 0"},
      {R"({"tokens": ["a", 7], "weights": [[1, 0], [0, 1]]})", "\"tokens\"[1] is a number, expected a string"},
      {R"({"tokens": ["a"]})", "no \"layers\""},
      {R"({"tokens": ["a"], "layers": [{"name": "x"}]})", "layers[0] needs \"heads\""},
      {R"({"tokens": ["a"], "layers": [{"heads": []}]})", "has no heads"},
      {R"({"tokens": ["a"], "layers": []})", "no layers"},
      {R"({"tokens": [], "weights": []})", "no tokens"},
      {R"([1, 2])", "top level must be an object"},
      {R"({"tokens": ["a"], "weights": [[1]], "meta": 5})", "\"meta\" must be an object"},
      {R"({"tokens": ["a"], "weights": [[1e39]]})", "weight 1e+39 at row 0, column 0 is beyond the float32 range"},
      {"{\"tokens\": [\"a\"],\n \"weights\": [[1]}", "json: 2:17: expected ',' or ']' in array"},
      {"hello", "unrecognised file"},
  };
  for (const auto& c : cases) {
    AttentionFile f;
    Status st = LoadText(c.first, &f);
    EXPECT_FALSE(st.ok) << c.first;
    EXPECT_NE(st.message.find(c.second), std::string::npos) << "got: " << st.message << "\nwant: " << c.second;
  }
  AttentionFile f;
  EXPECT_NE(LoadAttentionFile(nullptr, 0, &f).message.find("empty"), std::string::npos);
}

TEST(AttentionFile, SizeLimits) {
  AttentionFileLimits small;
  small.max_values = 5;
  AttentionFile f;
  const std::string t = R"({"tokens": ["a", "b", "c"], "weights": [[1, 0, 0], [0, 1, 0], [0, 0, 1]]})";
  Status st = LoadAttentionFile((const uint8_t*)t.data(), t.size(), &f, small);
  EXPECT_FALSE(st.ok);
  EXPECT_NE(st.message.find("too many weights"), std::string::npos) << st.message;
  small = AttentionFileLimits();
  small.max_tokens = 2;
  st = LoadAttentionFile((const uint8_t*)t.data(), t.size(), &f, small);
  EXPECT_NE(st.message.find("more than 2 tokens"), std::string::npos) << st.message;
}

TEST(AttentionFile, LoadsNumpyNpzWithUnicodeTokens) {
  std::vector<uint8_t> bytes = ReadData("attention_lhqk.npz");
  AttentionFile f;
  Status st = LoadAttentionFile(bytes.data(), bytes.size(), &f);
  ASSERT_TRUE(st.ok) << st.message;
  EXPECT_EQ(f.source_tokens, (std::vector<std::string>{"the", "cat", "sat", "<\xC3\xBC>", "\xF0\x9F\x90\xB1"}));
  EXPECT_EQ(f.target_tokens, (std::vector<std::string>{"le", "chat", "s'est", "assis"}));
  ASSERT_EQ(f.layers.size(), 2u);
  ASSERT_EQ(f.layers[1].heads.size(), 3u);
  EXPECT_EQ(f.layers[1].name, "enc.1");
  EXPECT_EQ(f.layers[1].heads[2].name, "h2");
  std::vector<double> want = ManifestValues("attention_lhqk.npz:attention");
  ASSERT_EQ(want.size(), 2u * 3 * 4 * 5);
  double max_err = 0;
  size_t k = 0;
  for (const auto& layer : f.layers)
    for (const auto& head : layer.heads)
      for (int i = 0; i < 20; ++i) max_err = std::max(max_err, std::fabs(head.weights.data()[i] - want[k++]));
  std::printf("attention_lhqk.npz: max |err| vs numpy = %.3g\n", max_err);
  EXPECT_EQ(max_err, 0.0);
  EXPECT_TRUE(f.warnings.empty()) << f.warnings[0];
}

TEST(AttentionFile, LoadsSelfAttentionNpzAndBareNpy) {
  std::vector<uint8_t> bytes = ReadData("attention_self.npz");
  AttentionFile f;
  Status st = LoadAttentionFile(bytes.data(), bytes.size(), &f);
  ASSERT_TRUE(st.ok) << st.message;
  EXPECT_TRUE(f.self_attention);
  EXPECT_EQ(f.target_tokens, (std::vector<std::string>{"a", "b", "c"}));
  std::vector<double> want = ManifestValues("attention_self.npz:attention");
  double max_err = 0;
  for (int i = 0; i < 9; ++i) max_err = std::max(max_err, std::fabs(f.layers[0].heads[0].weights.data()[i] - want[i]));
  std::printf("attention_self.npz (float64 -> float): max |err| = %.3g\n", max_err);
  EXPECT_LT(max_err, 1e-7);
  bytes = ReadData("attention_f16.npy");
  st = LoadAttentionFile(bytes.data(), bytes.size(), &f);
  ASSERT_TRUE(st.ok) << st.message;
  EXPECT_EQ(f.layers.size(), 1u);
  EXPECT_EQ(f.layers[0].heads.size(), 2u);
  EXPECT_EQ(f.NumQueries(), 4);
  // float16 rows sum to 1 only within ~1e-3: a warning is fine, an error is not.
}

TEST(AttentionFile, AcceptsAttendOutputAndRejectsOthers) {
  NpzFile z;
  float w[6] = {0.25f, 0.75f, 1, 0, 0.5f, 0.5f};
  float hw[12] = {0.25f, 0.75f, 1, 0, 0.5f, 0.5f, 1, 0, 0, 1, 0.5f, 0.5f};
  z.Add("output", FromFloats({3, 4}, hw));
  z.Add("weights", FromFloats({3, 2}, w));
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(WriteNpz(z, NpzWriteOptions(), &bytes).ok);
  AttentionFile f;
  Status st = LoadAttentionFile(bytes.data(), bytes.size(), &f);
  ASSERT_TRUE(st.ok) << st.message;
  EXPECT_EQ(f.layers[0].heads.size(), 1u);
  EXPECT_EQ(f.layers[0].name, "weights");
  z.Add("head_weights", FromFloats({2, 3, 2}, hw));
  ASSERT_TRUE(WriteNpz(z, NpzWriteOptions(), &bytes).ok);
  ASSERT_TRUE(LoadAttentionFile(bytes.data(), bytes.size(), &f).ok);
  EXPECT_EQ(f.layers[0].heads.size(), 2u);
  EXPECT_EQ(f.NumKeys(), 2);
  NpzFile other;
  other.Add("query", FromFloats({3, 2}, w));
  ASSERT_TRUE(WriteNpz(other, NpzWriteOptions(), &bytes).ok);
  st = LoadAttentionFile(bytes.data(), bytes.size(), &f);
  EXPECT_NE(st.message.find("no 'attention' array"), std::string::npos) << st.message;
  EXPECT_NE(st.message.find("the file has: query"), std::string::npos) << st.message;
  other.Add("attention", FromFloats({1, 1, 1, 3, 2}, w));  // 5-D
  ASSERT_TRUE(WriteNpz(other, NpzWriteOptions(), &bytes).ok);
  st = LoadAttentionFile(bytes.data(), bytes.size(), &f);
  EXPECT_NE(st.message.find("must have shape [layers, heads, n_q, n_k]"), std::string::npos) << st.message;
}

TEST(AttentionFile, SaveJsonAndNpzRoundTrip) {
  AttentionFile f;
  ASSERT_TRUE(LoadText(kGoodJson, &f).ok);
  f.layers.pop_back();                               // keep equal head counts for the NPZ form
  f.layers[0].heads[0].weights(0, 0) = 1.0f / 3.0f;  // needs 9 significant digits
  f.layers[0].heads[0].weights(0, 1) = 1.0f - 1.0f / 3.0f - 0.1f;
  const std::string json = SaveAttentionJson(f);
  AttentionFile back;
  Status st = LoadText(json, &back);
  ASSERT_TRUE(st.ok) << st.message << "\n" << json;
  EXPECT_EQ(back.source_tokens, f.source_tokens);
  EXPECT_EQ(back.layers[0].heads[1].name, "h1");
  EXPECT_EQ(back.meta.Find("step")->number, 3);
  for (size_t h = 0; h < 2; ++h)
    EXPECT_EQ(back.layers[0].heads[h].weights, f.layers[0].heads[h].weights) << "exact floats";
  std::vector<uint8_t> npz;
  ASSERT_TRUE(SaveAttentionNpz(f, true, &npz).ok);
  st = LoadAttentionFile(npz.data(), npz.size(), &back);
  ASSERT_TRUE(st.ok) << st.message;
  EXPECT_EQ(back.layers[0].name, "cross");
  EXPECT_EQ(back.target_tokens, f.target_tokens);
  EXPECT_EQ(back.layers[0].heads[0].weights, f.layers[0].heads[0].weights);
}

// The NaN/infinity policy end to end (docs/FORMATS.md): a weight that is not finite is written
// as null by SaveAttentionJson (and kept as NaN/inf by SaveAttentionNpz), and both readers refuse
// such a file with a message that names the place.
TEST(AttentionFile, NonFiniteWeightsAreWrittenAsNullAndRejectedOnLoad) {
  for (float bad : {std::nanf(""), INFINITY, -INFINITY}) {
    AttentionFile f;
    ASSERT_TRUE(LoadText(kGoodJson, &f).ok);
    f.layers.pop_back();  // equal head counts for the NPZ form
    f.layers[0].heads[1].weights(1, 0) = bad;
    const std::string json = SaveAttentionJson(f, 0);
    EXPECT_NE(json.find("[null,"), std::string::npos) << json;
    JsonValue tree;
    ASSERT_TRUE(ParseJson(json, &tree).ok) << "the writer's output is valid JSON";
    AttentionFile back;
    Status st = LoadText(json, &back);
    EXPECT_FALSE(st.ok);
    EXPECT_NE(st.message.find("layers[0].heads[1]: row 1 must be an array of numbers"), std::string::npos)
        << st.message;
    std::vector<uint8_t> npz;
    ASSERT_TRUE(SaveAttentionNpz(f, false, &npz).ok);
    st = LoadAttentionFile(npz.data(), npz.size(), &back);
    EXPECT_FALSE(st.ok);
    EXPECT_NE(st.message.find("non-finite weight at row 1, column 0"), std::string::npos) << st.message;
  }
  AttentionFile f;  // non-JSON spellings never reach the attention reader
  EXPECT_NE(LoadText(R"({"tokens": ["a"], "weights": [[NaN]]})", &f).message.find("NaN and Infinity are not valid"),
            std::string::npos);
  EXPECT_NE(LoadText(R"({"tokens": ["a"], "weights": [[1e999]]})", &f).message.find("number out of range"),
            std::string::npos);
}

TEST(AttentionFile, CorruptedNpzNeverCrashes) {
  const std::vector<uint8_t> good = ReadData("attention_lhqk.npz");
  int errors = 0;
  for (size_t n = 0; n < good.size(); ++n) {
    AttentionFile f;
    if (!LoadAttentionFile(good.data(), n, &f).ok) ++errors;
    std::vector<uint8_t> bad = good;
    bad[n] ^= 0xA5;
    (void)LoadAttentionFile(bad.data(), bad.size(), &f);  // may succeed (value bytes); must not crash
  }
  EXPECT_EQ(errors, (int)good.size());
}

TEST(AttentionFile, MutatedJsonNeverCrashes) {
  const std::string good = kGoodJson;
  int errors = 0, accepted = 0;
  for (size_t pos = 0; pos < good.size(); ++pos) {
    for (char c : {'\0', '"', '[', ']', '{', '}', ',', '-', 'e', '\\', '\xC3'}) {
      std::string bad = good;
      bad[pos] = c;
      AttentionFile f;
      if (LoadText(bad, &f).ok)
        ++accepted;
      else
        ++errors;
    }
    AttentionFile f;
    if (!LoadText(good.substr(0, pos), &f).ok) ++errors;
  }
  std::printf("mutated JSON: %d clean errors, %d accepted\n", errors, accepted);
  EXPECT_GT(errors, (int)good.size() * 5);
}

namespace {

// The fill="#rrggbb" of every cell <rect> (row-major, as emitted) and the fill of every value <text>.
void ParseSvgCells(const std::string& svg, std::vector<std::string>* cell_fills, std::vector<std::string>* text_fills) {
  auto fills_in = [&](const std::string& group, const char* element, std::vector<std::string>* out) {
    size_t p = svg.find("<g class=\"" + group + "\"");
    if (p == std::string::npos) return;
    const size_t end = svg.find("</g>", p);
    const std::string open = std::string("<") + element + " ";
    while ((p = svg.find(open, p)) != std::string::npos && p < end) {
      const size_t f = svg.find(" fill=\"", p);
      const size_t q = svg.find('"', f + 7);
      out->push_back(svg.substr(f + 7, q - f - 7));
      p = q;
    }
  };
  fills_in("cells", "rect", cell_fills);
  fills_in("values", "text", text_fills);
}

std::string HexOf(const uint8_t rgb[3]) {
  char b[8];
  std::snprintf(b, sizeof(b), "#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
  return b;
}

}  // namespace

// The SVG export colours cells with ColormapSample (the LUT entry the GL heatmap shows) and
// picks the value colour with ContrastingTextColor, for every colormap, clamping and NaN.
TEST(Svg, CellFillsAreColormapSamples) {
  const int rows = 4, cols = 9;
  MatrixRM w(rows, cols);
  for (int i = 0; i < rows * cols; ++i) w.data()[i] = -0.2f + 1.4f * i / (rows * cols - 1);  // beyond both ends
  w(1, 3) = NAN;
  w(2, 5) = 0.5f / 255.0f;  // half a LUT step
  SvgHeatmapOptions o;
  o.vmin = 0.0f;
  o.vmax = 1.0f;
  o.show_values = true;
  int compared = 0;
  for (int ci = 0; ci < (int)Colormap::Count; ++ci) {
    const Colormap c = (Colormap)ci;
    const std::string svg = HeatmapSvg(w, {}, {}, ColormapName(c), o);
    std::vector<std::string> cells, texts;
    ParseSvgCells(svg, &cells, &texts);
    ASSERT_EQ((int)cells.size(), rows * cols) << ColormapName(c);
    ASSERT_EQ((int)texts.size(), rows * cols) << ColormapName(c);
    for (int i = 0; i < rows; ++i) {
      for (int j = 0; j < cols; ++j) {
        uint8_t rgb[3];
        ColormapSample(c, w(i, j), rgb);  // vmin 0, vmax 1: t = w
        EXPECT_EQ(cells[i * cols + j], HexOf(rgb)) << ColormapName(c) << " cell " << i << "," << j << " w=" << w(i, j);
        const char* text = ContrastingTextColor(rgb) == 0xFF000000u ? "black" : "white";
        EXPECT_EQ(texts[i * cols + j], text) << ColormapName(c) << " cell " << i << "," << j;
        ++compared;
      }
    }
  }
  std::printf("  %d SVG cells: fill = ColormapSample, value text = ContrastingTextColor\n", compared);
  // Unknown names draw in greys, through the same tables.
  std::vector<std::string> grey_cells, unknown_cells, unused;
  ParseSvgCells(HeatmapSvg(w, {}, {}, "greys", o), &grey_cells, &unused);
  ParseSvgCells(HeatmapSvg(w, {}, {}, "no-such-map", o), &unknown_cells, &unused);
  EXPECT_EQ(grey_cells, unknown_cells);
}

// The SVG colours as the view it comes from: per row (each row divided by its largest weight) and
// log (ln w between ln vmin and ln vmax), not always linearly; its colour bar marks round numbers.
TEST(Svg, CellsFollowThePerRowAndLogScalesAndTheBarMarksRoundNumbers) {
  MatrixRM w(2, 3);
  w << 0.1f, 0.2f, 0.05f, 0.01f, 0.001f, 0.0001f;
  SvgHeatmapOptions o;
  std::vector<std::string> cells, unused;
  o.scale = ColourScale::PerRow;
  const std::string row_svg = HeatmapSvg(w, {}, {}, "greys", o);
  ParseSvgCells(row_svg, &cells, &unused);
  ASSERT_EQ(cells.size(), 6u);
  uint8_t top[3], half[3], quarter[3];
  ColormapSample(Colormap::Greys, 1.0f, top);
  ColormapSample(Colormap::Greys, 0.5f, half);
  ColormapSample(Colormap::Greys, 0.25f, quarter);
  EXPECT_EQ(cells[1], HexOf(top)) << "row 0's largest";
  EXPECT_EQ(cells[0], HexOf(half)) << "0.1 of 0.2";
  EXPECT_EQ(cells[2], HexOf(quarter));
  EXPECT_EQ(cells[3], HexOf(top)) << "row 1's largest, 0.01, is as white as row 0's 0.2";
  EXPECT_NE(row_svg.find(">row max</text>"), std::string::npos);
  EXPECT_NE(row_svg.find(">0.5</text>"), std::string::npos);
  o.scale = ColourScale::Log;
  o.vmin = 1e-4f, o.vmax = 1.0f;
  o.cell_size = 60;  // a bar 120 px high: room for every decade a line and a half apart
  const std::string log_svg = HeatmapSvg(w, {}, {}, "greys", o);
  cells.clear();
  ParseSvgCells(log_svg, &cells, &unused);
  ASSERT_EQ(cells.size(), 6u);
  uint8_t c[3];
  ColormapSample(Colormap::Greys, 0.5f, c);
  EXPECT_EQ(cells[3], HexOf(c)) << "0.01 is halfway between 1e-4 and 1 on the log scale";
  ColormapSample(Colormap::Greys, 0.25f, c);
  EXPECT_EQ(cells[4], HexOf(c)) << "0.001, a quarter of the way";
  for (const char* tick : {">0.0001</text>", ">0.001</text>", ">0.01</text>", ">0.1</text>", ">1</text>"})
    EXPECT_NE(log_svg.find(tick), std::string::npos) << tick;
  o.scale = ColourScale::Linear;
  o.vmin = 0, o.vmax = 0.2f;
  const std::string lin_svg = HeatmapSvg(w, {}, {}, "greys", o);
  cells.clear();
  ParseSvgCells(lin_svg, &cells, &unused);
  ColormapSample(Colormap::Greys, 0.5f, c);
  EXPECT_EQ(cells[0], HexOf(c)) << "0.1 of 0 .. 0.2";
  EXPECT_NE(lin_svg.find(">0.1</text>"), std::string::npos);
  EXPECT_NE(lin_svg.find(">0.2</text>"), std::string::npos);
}

TEST(Svg, HeatmapHasCellsLabelsAndEscapes) {
  MatrixRM w(2, 3);
  w << 0.0f, 0.5f, 1.0f, 0.25f, 0.25f, 0.5f;
  SvgHeatmapOptions o;
  o.show_values = true;
  o.title = "A & B";
  o.cell_size = 48;
  std::string svg = HeatmapSvg(w, {"<s>", "caf\xC3\xA9", "\"q\""}, {"x", "y"}, "greys", o);
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  size_t rects = 0;
  for (size_t p = 0; (p = svg.find("<rect x=", p)) != std::string::npos; ++p) ++rects;
  EXPECT_EQ(rects, 6u);  // cells only (background and colour bar spell their attributes differently)
  EXPECT_NE(svg.find("&lt;s&gt;"), std::string::npos);
  EXPECT_NE(svg.find("caf\xC3\xA9"), std::string::npos);
  EXPECT_NE(svg.find("&quot;q&quot;"), std::string::npos);
  EXPECT_NE(svg.find("A &amp; B"), std::string::npos);
  EXPECT_NE(svg.find("fill=\"#ffffff\""), std::string::npos);  // the 1.0 cell in greys (vmax = max = 1)
  EXPECT_NE(svg.find("fill=\"#000000\""), std::string::npos);  // the 0.0 cell
  EXPECT_NE(svg.find(">0.50<"), std::string::npos);
  EXPECT_EQ(svg.find("rotate("), std::string::npos);  // short labels fit
  std::string crowded = HeatmapSvg(w, {"a rather long token", "another long one", "x"}, {"x", "y"}, "viridis");
  EXPECT_NE(crowded.find("rotate(-45)"), std::string::npos);
  EXPECT_EQ(XmlEscape("a\x01\xFF'"), "a\xEF\xBF\xBD\xEF\xBF\xBD&apos;");
}

// A map over max_cells is refused before any SVG is written; the error names the map, the limit and
// the SVG's size, and the writer adds the CLI's advice (the app adds its own to the size check).
TEST(Svg, MapsOverTheCellLimitAreRefusedWithTheirSize) {
  MatrixRM w = MatrixRM::Constant(3, 4, 0.25f);
  SvgHeatmapOptions o;
  o.max_cells = 12;
  EXPECT_TRUE(CheckSvgHeatmapSize(3, 4, o).ok);
  std::string svg;
  ASSERT_TRUE(HeatmapSvgString(w, {}, {}, "greys", o, &svg).ok);
  EXPECT_NE(svg.find("<svg"), std::string::npos);
  o.max_cells = 11;
  const Status size = CheckSvgHeatmapSize(3, 4, o);
  EXPECT_FALSE(size.ok);
  EXPECT_NE(size.message.find("a 3 x 4 map has 12 cells, over the limit of 11"), std::string::npos) << size.message;
  EXPECT_NE(size.message.find("(about 1.1 KiB of SVG)"), std::string::npos) << size.message;
  EXPECT_EQ(size.message.find("--max-cells"), std::string::npos) << "advice is the caller's: " << size.message;
  svg = "unchanged";
  const Status st = HeatmapSvgString(w, {}, {}, "greys", o, &svg);
  EXPECT_FALSE(st.ok);
  EXPECT_EQ(st.message.find(size.message), 0u) << st.message;
  EXPECT_NE(st.message.find("--max-cells"), std::string::npos) << st.message;
  EXPECT_TRUE(svg.empty()) << "nothing written: " << svg.size() << " bytes";
  EXPECT_EQ(HeatmapSvg(w, {}, {}, "greys", o), "");
  // 4096^2 cells at ~90 bytes each: the size at a glance, in GiB.
  o.max_cells = 1 << 20;
  EXPECT_NE(CheckSvgHeatmapSize(4096, 4096, o).message.find("1.4 GiB of SVG"), std::string::npos)
      << CheckSvgHeatmapSize(4096, 4096, o).message;
}

// The width attribute of the first cell: <rect x=".." y=".." width="W" ...
float FirstCellWidth(const std::string& svg) {
  const size_t at = svg.find("<rect x=");
  const size_t wp = at == std::string::npos ? at : svg.find("width=\"", at);
  return wp == std::string::npos ? -1.0f : std::strtof(svg.c_str() + wp + 7, nullptr);
}

// Printed weights have opt.decimals digits, and the cells grow (square) to fit the widest with
// room on both sides; without values they keep cell_size.
TEST(Svg, ValuesHaveTheirDecimalsAndCellsFitThem) {
  MatrixRM w(2, 2);
  w << 0.25f, 0.75f, -12.5f, 1.0f;
  SvgHeatmapOptions o;
  EXPECT_EQ(FirstCellWidth(HeatmapSvg(w, {}, {}, "greys", o)), 24.0f) << "no values: cell_size";
  o.show_values = true;
  const std::string two = HeatmapSvg(w, {}, {}, "greys", o);
  EXPECT_NE(two.find(">0.25<"), std::string::npos);
  EXPECT_NE(two.find(">-12.50<"), std::string::npos);
  o.decimals = 4;
  const std::string four = HeatmapSvg(w, {}, {}, "greys", o);
  EXPECT_NE(four.find(">0.2500<"), std::string::npos) << "--decimals reaches the SVG";
  EXPECT_NE(four.find(">-12.5000<"), std::string::npos);
  EXPECT_EQ(four.find(">0.25<"), std::string::npos);
  // "-12.5000" at 0.85 x 12 px: ~8 characters of ~6.3 px, 3 px either side.
  EXPECT_GE(FirstCellWidth(four), 8 * 0.62f * 12 * 0.85f + 6) << four.substr(0, 600);
  EXPECT_GT(FirstCellWidth(four), FirstCellWidth(two));
  EXPECT_GT(FirstCellWidth(two), 24.0f) << "\"-12.50\" does not fit 24 px with room";
  o.decimals = 0;
  w << 0.25f, 0.75f, 0.5f, 1.0f;
  EXPECT_EQ(FirstCellWidth(HeatmapSvg(w, {}, {}, "greys", o)), 24.0f) << "\"1\" fits the default cell";
}
