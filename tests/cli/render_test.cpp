// attnviz-cli render end to end: PNG, GIF and SVG figures are read back and checked against the
// file's weights (PNG/GIF pixels inverted through the colormap's lookup table), and bad arguments
// must fail with a clear message and a non-zero exit.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/colormap.h"
#include "figure/figure_font.h"
#include "figure/gif_codec.h"
#include "figure/png_codec.h"
#include "figure/system_fallback_fonts.h"
#include "io/attention_sets.h"
#include "io/file_util.h"
#include "io/utf8.h"

using namespace attnviz;

namespace {

const std::string kFile = std::string(ATTNVIZ_SOURCE_DIR) + "/tests/cli/data/translation10.json";

std::string TempPath(const std::string& name) {
  const char* tmp = std::getenv("TMPDIR");
  return std::string(tmp && *tmp ? tmp : "/tmp") + "/attnviz_render_test_" + std::to_string(getpid()) + "_" + name;
}

std::string Slurp(const std::string& path, bool remove = true) {
  std::vector<uint8_t> b;
  const Status st = ReadFileBytes(path, &b);
  EXPECT_TRUE(st.ok) << st.message;
  if (remove) std::remove(path.c_str());
  return std::string(b.begin(), b.end());
}

struct RunResult {
  int exit_code = -1;
  std::string out, err;
};

RunResult Cli(const std::string& args) {
  const std::string out = TempPath("stdout"), err = TempPath("stderr");
  const std::string cmd = std::string("'") + ATTNVIZ_CLI_PATH + "' " + args + " >'" + out + "' 2>'" + err + "'";
  const int status = std::system(cmd.c_str());
  RunResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  r.out = Slurp(out);
  r.err = Slurp(err);
  return r;
}

// "cells at (X, Y) of W x H px, range A to B" from render's report.
struct Layout {
  int x0 = 0, y0 = 0;
  float cw = 0, ch = 0;
  double vmin = 0, vmax = 0;
};
Layout ParseLayout(const std::string& out) {
  Layout L;
  const size_t at = out.find("cells at (");
  EXPECT_NE(at, std::string::npos) << out;
  if (at == std::string::npos) return L;
  EXPECT_EQ(std::sscanf(out.c_str() + at, "cells at (%d, %d) of %f x %f px, range %lf to %lf", &L.x0, &L.y0, &L.cw,
                        &L.ch, &L.vmin, &L.vmax),
            6)
      << out;
  return L;
}

const MatrixRM& Weights(const std::string& set, int layer, int head) {
  static AttentionDocument doc;
  static bool loaded = false;
  if (!loaded) {
    std::vector<uint8_t> bytes;
    EXPECT_TRUE(ReadFileBytes(kFile, &bytes).ok);
    EXPECT_TRUE(LoadAttentionDocument(bytes.data(), bytes.size(), &doc).ok);
    loaded = true;
  }
  for (const AttentionSet& s : doc.sets)
    if (s.name == set) return s.data.layers[(size_t)layer].heads[(size_t)head].weights;
  ADD_FAILURE() << "no set " << set;
  return doc.sets[0].data.layers[0].heads[0].weights;
}

// The lookup-table entry whose colour is exactly the pixel's, or -1.
int LutIndexOf(Colormap cm, const uint8_t* px) {
  const uint8_t* lut = ColormapLut(cm);
  for (int i = 0; i < kColormapLutSize; ++i)
    if (lut[i * 4] == px[0] && lut[i * 4 + 1] == px[1] && lut[i * 4 + 2] == px[2]) return i;
  return -1;
}

// Inverts every cell's centre pixel to a weight and returns the largest error against w (linear
// scale from vmin to vmax, or each row's maximum with row=true). Rows from rows_shown on must be empty.
double InvertCells(const RgbaImage& img, const Layout& L, const MatrixRM& w, Colormap cm, bool row, int rows_shown) {
  double worst = 0;
  for (int r = 0; r < (int)w.rows(); ++r)
    for (int c = 0; c < (int)w.cols(); ++c) {
      const int x = L.x0 + (int)((c + 0.5f) * L.cw), y = L.y0 + (int)((r + 0.5f) * L.ch);
      const int i = LutIndexOf(cm, img.At(x, y));
      if (r >= rows_shown) {
        EXPECT_NE(i, kColormapLutSize - 1) << "row " << r << " is not decoded yet: it must not look like a weight";
        continue;
      }
      EXPECT_GE(i, 0) << "cell " << r << "," << c << " is not a colormap colour";
      if (i < 0) return INFINITY;
      const double top = row ? w.row(r).maxCoeff() : L.vmax, bottom = row ? 0.0 : L.vmin;
      const double est = bottom + (top - bottom) * i / 255.0;
      worst = std::max(worst, std::fabs(est - w(r, c)) / (top - bottom));
    }
  return worst;
}

TEST(CliRender, PngPixelsInvertThroughTheColormapToTheWeights) {
  const std::string png = TempPath("fig.png");
  struct Case {
    const char* flags;
    Colormap cm;
    bool row;
  };
  for (const Case& k : {Case{"--colormap viridis --dpi 192", Colormap::Viridis, false},
                        Case{"--colormap greys --scale fixed", Colormap::Greys, false},
                        Case{"--colormap magma --scale row --labels none", Colormap::Magma, true}}) {
    RunResult r = Cli("render '" + kFile + "' --set cross --layer 1 --head 1 --out '" + png + "' " + k.flags);
    ASSERT_EQ(r.exit_code, 0) << k.flags << "\n" << r.err;
    const Layout L = ParseLayout(r.out);
    const std::string bytes = Slurp(png);
    ASSERT_EQ(bytes.substr(1, 3), "PNG");
    RgbaImage img;
    ASSERT_TRUE(DecodePng((const uint8_t*)bytes.data(), bytes.size(), &img).ok);
    const MatrixRM& w = Weights("cross", 1, 1);
    ASSERT_LE(L.x0 + L.cw * w.cols(), img.width);
    ASSERT_LE(L.y0 + L.ch * w.rows(), img.height);
    const double err = InvertCells(img, L, w, k.cm, k.row, 1 << 30);
    std::printf("%s: %dx%d px, largest error %.5f of the range\n", k.flags, img.width, img.height, err);
    EXPECT_LE(err, 0.5 / 255 + 1e-4) << k.flags;  // half a lookup-table step
  }
}

TEST(CliRender, DpiScalesTheFigureAndLabelsCanBeLeftOut) {
  const std::string a = TempPath("a.png"), b = TempPath("b.png"), c = TempPath("c.png");
  ASSERT_EQ(Cli("render '" + kFile + "' --out '" + a + "'").exit_code, 0);
  ASSERT_EQ(Cli("render '" + kFile + "' --out '" + b + "' --dpi 384").exit_code, 0);
  ASSERT_EQ(Cli("render '" + kFile + "' --out '" + c + "' --labels none").exit_code, 0);
  RgbaImage ia, ib, ic;
  const std::string sa = Slurp(a), sb = Slurp(b), sc = Slurp(c);
  ASSERT_TRUE(DecodePng((const uint8_t*)sa.data(), sa.size(), &ia).ok);
  ASSERT_TRUE(DecodePng((const uint8_t*)sb.data(), sb.size(), &ib).ok);
  ASSERT_TRUE(DecodePng((const uint8_t*)sc.data(), sc.size(), &ic).ok);
  EXPECT_NEAR(ib.width, 4 * ia.width, 8) << "--dpi 384 is 4x";
  EXPECT_NEAR(ib.height, 4 * ia.height, 8);
  EXPECT_LT(ic.width, ia.width) << "no row labels: narrower";
  EXPECT_LT(ic.height, ia.height) << "no column labels: shorter";
}

// The horizontal extent [first, last] of the pixels in cell (r, c) that differ from the cell's fill
// (its corner pixel) by more than 40 in a channel: the printed weight. first > last when none.
std::pair<int, int> TextSpan(const RgbaImage& img, const Layout& L, int r, int c) {
  const int x0 = L.x0 + (int)std::lround(c * L.cw), x1 = L.x0 + (int)std::lround((c + 1) * L.cw);
  const int y0 = L.y0 + (int)std::lround(r * L.ch), y1 = L.y0 + (int)std::lround((r + 1) * L.ch);
  const uint8_t* fill = img.At(x0 + 1, y0 + 1);
  int first = x1, last = x0 - 1;
  for (int y = y0 + 1; y < y1 - 1; ++y)
    for (int x = x0; x < x1; ++x) {
      const uint8_t* px = img.At(x, y);
      bool text = false;
      for (int k = 0; k < 3; ++k) text = text || std::abs((int)px[k] - (int)fill[k]) > 40;
      if (text) first = std::min(first, x), last = std::max(last, x);
    }
  return {first - x0, last - x0};
}

// --values prints every weight in its cell with room on both sides: the cells grow (square) to fit
// the widest number, more digits make them wider, and without --values they keep --cell.
TEST(CliRender, ValuesFitTheirCellsWithRoomOnBothSides) {
  const std::string png = TempPath("values.png");
  const MatrixRM& w = Weights("cross", 1, 1);
  float plain = 0, two = 0, four = 0;
  for (const char* flags : {"", "--values", "--decimals 4", "--values --dpi 192"}) {
    RunResult r = Cli("render '" + kFile + "' --set cross --layer 1 --head 1 --out '" + png + "' " + flags);
    ASSERT_EQ(r.exit_code, 0) << flags << "\n" << r.err;
    const Layout L = ParseLayout(r.out);
    EXPECT_EQ(L.cw, L.ch) << "square cells";
    const std::string bytes = Slurp(png);
    RgbaImage img;
    ASSERT_TRUE(DecodePng((const uint8_t*)bytes.data(), bytes.size(), &img).ok);
    const std::string f = flags;
    if (f.empty()) {
      plain = L.cw;
      EXPECT_EQ(plain, 24.0f) << "the default cell without values";
      continue;
    }
    if (f == "--values") two = L.cw;
    if (f == "--decimals 4") four = L.cw;
    const int margin = f.find("--dpi 192") != std::string::npos ? 4 : 2;  // 2 px at 1x
    int worst = 1 << 20;
    for (int row = 0; row < (int)w.rows(); ++row)
      for (int col = 0; col < (int)w.cols(); ++col) {
        const auto [first, last] = TextSpan(img, L, row, col);
        ASSERT_LE(first, last) << flags << ": cell " << row << "," << col << " has no number";
        worst = std::min({worst, first, (int)std::lround(L.cw) - 1 - last});
      }
    std::printf("%s: cells %.0f px, the closest number %d px from its cell's side\n", flags, L.cw, worst);
    EXPECT_GE(worst, margin) << flags << ": a number touches its cell's side";
  }
  EXPECT_GT(two, plain) << "\"0.00\" needs more than 24 px with room on both sides";
  EXPECT_GT(four, two) << "4 decimals: wider cells";
}

TEST(CliRender, LabelsAreThinnedWhenCellsAreSmallerThanText) {
  // 120 tokens: cells shrink to fit 4096 px? No: 24 px cells fit; with --cell 4 the 13 px labels overlap.
  std::string json = "{\"tokens\":[";
  for (int i = 0; i < 120; ++i) json += std::string(i ? "," : "") + "\"t" + std::to_string(i) + "\"";
  json += "],\"weights\":[";
  for (int i = 0; i < 120; ++i) {
    json += i ? ",[" : "[";
    for (int j = 0; j < 120; ++j) json += std::string(j ? "," : "") + (i == j ? "1" : "0");
    json += "]";
  }
  json += "]}";
  const std::string in = TempPath("diag.json"), png = TempPath("diag.png");
  ASSERT_TRUE(WriteFileString(in, json).ok);
  RunResult r = Cli("render '" + in + "' --out '" + png + "' --cell 4");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("labels every 4 rows, 4 cols"), std::string::npos) << r.out;
  r = Cli("render '" + in + "' --out '" + png + "' --cell 4 --labels all");
  EXPECT_NE(r.out.find("labels every 1 rows, 1 cols"), std::string::npos) << r.out;
  std::remove(in.c_str());
  std::remove(png.c_str());
}

TEST(CliRender, GifAnimatesTheDecodingOneFramePerTargetWord) {
  const std::string gif = TempPath("fig.gif");
  // 10 steps at about 600 x 400 px (--dpi 150): the target is at most 2 MB.
  RunResult r = Cli("render '" + kFile + "' --out '" + gif + "' --dpi 150 --step-ms 500");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("set \"cross\""), std::string::npos) << "a GIF prefers the cross-attention set\n" << r.out;
  const Layout L = ParseLayout(r.out);
  const std::string bytes = Slurp(gif);
  GifInfo info;
  ASSERT_TRUE(ReadGifInfo((const uint8_t*)bytes.data(), bytes.size(), &info).ok);
  std::printf("GIF: %d frames of %dx%d px, %zu bytes\n", info.frames, info.width, info.height, bytes.size());
  EXPECT_EQ(info.frames, 10);
  EXPECT_GE(info.width, 500);
  EXPECT_GE(info.height, 350);
  EXPECT_LE(bytes.size(), 2u << 20);
  ASSERT_EQ(info.delays_cs.size(), 10u);
  EXPECT_EQ(info.delays_cs[0], 50);
  const MatrixRM& w = Weights("cross", 0, 0);
  for (int k = 0; k < info.frames; ++k) {
    const double err = InvertCells(info.images[(size_t)k], L, w, Colormap::Greys, false, k + 1);
    EXPECT_LE(err, 0.5 / 255 + 1e-4) << "frame " << k;
  }
}

TEST(CliRender, SvgOfAChosenSet) {
  const std::string svg = TempPath("fig.svg");
  RunResult r = Cli("render '" + kFile + "' --set encoder --out '" + svg + "' --scale p99");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string text = Slurp(svg);
  EXPECT_NE(text.find("</svg>"), std::string::npos);
  EXPECT_NE(text.find("warm"), std::string::npos);
  EXPECT_EQ(text.find("chat"), std::string::npos) << "the encoder set has no French tokens";
  // The row and log scales are drawn in SVG too, their colour bars marked as the PNG's are.
  r = Cli("render '" + kFile + "' --set encoder --out '" + svg + "' --scale row");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(Slurp(svg).find(">row max</text>"), std::string::npos);
  r = Cli("render '" + kFile + "' --set encoder --out '" + svg + "' --scale log");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(Slurp(svg).find(">0.001</text>"), std::string::npos) << "a decade of the log scale's bar";
}

// --hide leaves tokens out as the viewer's `hide` does, and --renormalize makes each row sum to 1
// over what is left: the PNG's cells invert to those weights, the SVG has no hidden label.
TEST(CliRender, HiddenTokensLeaveTheFigureAndRowsAreRenormalised) {
  const std::string png = TempPath("hide.png"), svg = TempPath("hide.svg");
  RunResult r = Cli("render '" + kFile + "' --set cross --layer 1 --head 1 --hide special --hide punctuation " +
                    "--renormalize --scale fixed --out '" + png + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("9x8 (1 query and 2 key tokens hidden, rows renormalised)"), std::string::npos) << r.out;
  const MatrixRM& w = Weights("cross", 1, 1);  // queries end in "\u2581.", keys in "\u2581.", "</s>"
  MatrixRM expected = w.topLeftCorner(9, 8);
  for (int i = 0; i < 9; ++i) expected.row(i) /= expected.row(i).sum();
  const std::string bytes = Slurp(png);
  RgbaImage img;
  ASSERT_TRUE(DecodePng((const uint8_t*)bytes.data(), bytes.size(), &img).ok);
  const Layout L = ParseLayout(r.out);
  EXPECT_LE(InvertCells(img, L, expected, Colormap::Greys, false, 1 << 30), 0.5 / 255 + 1e-4);
  EXPECT_GT((expected - w.topLeftCorner(9, 8)).cwiseAbs().maxCoeff(), 0.01) << "far more than the inversion's error";

  r = Cli("render '" + kFile + "' --set cross --hide special --hide tapis --hide xyz --out '" + svg + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("--hide 'xyz' matches no token"), std::string::npos) << r.err;
  std::string text = Slurp(svg);
  EXPECT_EQ(text.find("&lt;/s&gt;"), std::string::npos) << "</s> is special";
  EXPECT_EQ(text.find("tapis"), std::string::npos) << "'tapis' hides the token '\u2581tapis'";
  EXPECT_NE(text.find("chaud"), std::string::npos);
  ASSERT_EQ(Cli("render '" + kFile + "' --set cross --out '" + svg + "'").exit_code, 0);
  text = Slurp(svg);
  EXPECT_NE(text.find("&lt;/s&gt;"), std::string::npos) << "shown without --hide";
  EXPECT_NE(text.find("tapis"), std::string::npos);
}

int Occurrences(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// --lines draws the lines view as SVG: one line per weight >= --threshold, the strongest of each
// row black (greys on the white page), labels without the word-start marker; --all-heads draws
// every head of the layer in its own colour, as --hide left them.
TEST(CliRender, LinesSvgOfOneHeadOrEveryHeadOfTheLayer) {
  const std::string svg = TempPath("lines.svg");
  RunResult r =
      Cli("render '" + kFile + "' --set cross --layer 1 --head 1 --lines --threshold 0.1 --out '" + svg + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string text = Slurp(svg);
  const MatrixRM& w = Weights("cross", 1, 1);
  int expected = 0;
  for (Eigen::Index i = 0; i < w.size(); ++i) expected += w.data()[i] >= 0.1f;
  EXPECT_EQ(Occurrences(text, "<line "), expected);
  EXPECT_EQ(Occurrences(text, "stroke=\"#000000\""), (int)w.rows()) << "each row's strongest line is black";
  EXPECT_NE(text.find(">chat<"), std::string::npos) << "'\u2581chat' is labelled 'chat'";
  EXPECT_EQ(text.find("\u2581"), std::string::npos);

  r = Cli("render '" + kFile + "' --set cross --layer 1 --lines --all-heads --hide special --threshold 0.05 --out '" +
          svg + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("all 2 heads, as lines"), std::string::npos) << r.out;
  text = Slurp(svg);
  for (int h = 0; h < 2; ++h) {
    const MatrixRM& wh = Weights("cross", 1, h);
    int n = 0;
    for (int i = 0; i < (int)wh.rows(); ++i)
      for (int c = 0; c + 1 < (int)wh.cols(); ++c) n += wh(i, c) >= 0.05f;  // the last key, </s>, is hidden
    EXPECT_EQ(Occurrences(text, "data-head=\"" + std::to_string(h) + "\""), n) << "head " << h;
    uint8_t rgb[3];
    CategoryColour(h, rgb);
    char colour[24];
    std::snprintf(colour, sizeof colour, "stroke=\"#%02x%02x%02x\"", rgb[0], rgb[1], rgb[2]);
    EXPECT_EQ(Occurrences(text, colour), n) << colour;
  }
  EXPECT_EQ(text.find("&lt;/s&gt;"), std::string::npos);
  EXPECT_NE(text.find(">head 1</text>"), std::string::npos) << "a legend of the heads' colours";

  // --queries-left: BertViz's orientation, the targets' labels down the left (anchored at their end).
  EXPECT_NE(text.find("<g class=\"source\" text-anchor=\"end\">"), std::string::npos) << "keys left by default";
  r = Cli("render '" + kFile + "' --set cross --layer 1 --head 1 --lines --queries-left --out '" + svg + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  text = Slurp(svg);
  EXPECT_NE(text.find("<g class=\"target\" text-anchor=\"end\">"), std::string::npos);
  EXPECT_NE(text.find("<g class=\"source\">"), std::string::npos);
  r = Cli("render '" + kFile + "' --queries-left --out '" + svg + "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--queries-left goes with --lines"), std::string::npos) << r.err;
}

// "lines from x A to B px, rows from y Y every R px" from render --lines' report (PNG).
struct LinesAt {
  float xs = 0, xt = 0, y0 = 0, row = 0;
  float Y(int i) const { return y0 + (float)i * row; }
};
LinesAt ParseLinesAt(const std::string& out) {
  LinesAt L;
  const size_t at = out.find("lines from x ");
  EXPECT_NE(at, std::string::npos) << out;
  if (at == std::string::npos) return L;
  const int n = std::sscanf(out.c_str() + at, "lines from x %f to %f px, rows from y %f every %f px", &L.xs, &L.xt,
                            &L.y0, &L.row);
  EXPECT_EQ(n, 4) << out;
  return L;
}

int Darkness(const RgbaImage& img, int x, int y) {  // 0 white .. 255 black
  const uint8_t* p = img.At(x, y);
  return 255 - (p[0] + p[1] + p[2]) / 3;
}

// Distance from (x, y) to the segment (ax, ay)-(bx, by).
float SegmentDistance(float x, float y, float ax, float ay, float bx, float by) {
  const float dx = bx - ax, dy = by - ay;
  const float t = std::clamp(((x - ax) * dx + (y - ay) * dy) / (dx * dx + dy * dy), 0.0f, 1.0f);
  return std::hypot(x - (ax + t * dx), y - (ay + t * dy));
}

// The PNG checks of a lines figure of w at threshold 0.1: each row's strongest line is black at its
// midpoint, the gap is white wherever no line passes within 4 px, and every key's label has ink.
void CheckLinesPng(const RgbaImage& img, const LinesAt& L, const MatrixRM& w, const std::string& what) {
  for (int r = 0; r < (int)w.rows(); ++r) {
    Eigen::Index c = 0;
    w.row(r).maxCoeff(&c);
    const float mx = 0.5f * (L.xs + L.xt), my = 0.5f * (L.Y((int)c) + L.Y(r));
    EXPECT_GT(Darkness(img, (int)mx, (int)my), 200) << what << ": row " << r << "'s strongest line, at its middle";
  }
  int white = 0, checked = 0;
  for (float x = std::min(L.xs, L.xt) + 10; x < std::max(L.xs, L.xt) - 10; x += 7)
    for (float y = L.Y(0); y < L.Y((int)std::max(w.rows(), w.cols()) - 1); y += 5) {
      float nearest = 1e9f;
      for (int r = 0; r < (int)w.rows(); ++r)
        for (int c = 0; c < (int)w.cols(); ++c)
          if (w(r, c) >= 0.1f) nearest = std::min(nearest, SegmentDistance(x, y, L.xs, L.Y(c), L.xt, L.Y(r)));
      if (nearest < 4 * L.row / 22) continue;
      ++checked;
      white += Darkness(img, (int)x, (int)y) == 0;
    }
  EXPECT_GT(checked, 20) << what;
  EXPECT_EQ(white, checked) << what << ": pixels no line passes near are white";
  const float side = L.xs < L.xt ? -1.0f : 1.0f;  // the keys' labels lie beyond the lines' source end
  for (int c = 0; c < (int)w.cols(); ++c) {
    int ink = 0;
    for (int x = 0; x < (int)(100 * L.row / 22); ++x)
      for (int dy = -(int)(L.row / 3); dy <= (int)(L.row / 3); ++dy)
        ink += Darkness(img, (int)(L.xs + side * (2 * L.row / 22 + (float)x)), (int)L.Y(c) + dy) > 64;
    EXPECT_GT(ink, 0) << what << ": key " << c << " has a label";  // key 8 is "."
  }
}

TEST(CliRender, LinesPngIsTheSvgFigureDrawnOnTheCpu) {
  const std::string png = TempPath("lines.png");
  const MatrixRM& w = Weights("cross", 1, 1);
  int width = 0;
  for (const char* extra : {"", " --queries-left", " --dpi 192"}) {
    const RunResult r = Cli("render '" + kFile + "' --set cross --layer 1 --head 1 --lines --threshold 0.1" + extra +
                            " --out '" + png + "'");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string bytes = Slurp(png);
    RgbaImage img;
    ASSERT_TRUE(DecodePng(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), &img).ok);
    const LinesAt L = ParseLinesAt(r.out);
    CheckLinesPng(img, L, w, std::string("render --lines") + extra);
    const std::string e = extra;
    if (e.empty()) {
      width = img.width;
      EXPECT_LT(L.xs, L.xt) << "keys on the left";
    } else if (e == " --queries-left") {
      EXPECT_GT(L.xs, L.xt) << "keys on the right";
    } else {
      EXPECT_NEAR(img.width, 2 * width, 1);
    }
  }
}

TEST(CliRender, BadArgumentsFailClearly) {
  const std::string out = TempPath("bad.png");
  struct Case {
    std::string args;
    int code;
    std::string expect;
  };
  const Case cases[] = {
      {"render '" + kFile + "' --out '" + out + "' --colormap jet", 2, "unknown --colormap 'jet'"},
      {"render '" + kFile + "' --out '" + out + "' --head 7", 1, "--head 7 is out of range"},
      {"render '" + kFile + "' --out '" + out + "' --layer -1", 1, "--layer -1 is out of range"},
      {"render '" + kFile + "' --out /nonexistent/dir/fig.png", 1, "/nonexistent/dir/fig.png"},
      {"render '" + kFile + "' --out /nonexistent/dir/fig.gif", 1, "/nonexistent/dir/fig.gif"},
      {"render '" + kFile + "' --out /nonexistent/dir/fig.svg", 1, "/nonexistent/dir/fig.svg"},
      {"render '" + kFile + "' --out '" + out + ".jpg'", 2, "must end in .png, .svg or .gif"},
      {"render '" + kFile + "' --out '" + out + "' --scale loud", 2, "unknown --scale 'loud'"},
      {"render '" + kFile + "' --out '" + out + "' --labels some", 2, "unknown --labels 'some'"},
      {"render '" + kFile + "' --out '" + out + "' --dpi 5000", 2, "--dpi must be between"},
      {"render '" + kFile + "' --out '" + out + "' --set decoder", 1, "--set 'decoder' is not in the file"},
      {"render /nonexistent/in.json --out '" + out + "'", 1, "/nonexistent/in.json"},
      {"render --out '" + out + "'", 2, "give the attention FILE"},
      {"render '" + kFile + "' --out '" + out + "' --font '" + kFile + "'", 1, "not a TrueType font"},
      {"render '" + kFile + "' --out '" + out + ".gif' --dpi 384 --cell 100", 1, "over 512 MiB of pixels"},
      {"render '" + kFile + "' --out '" + out + ".gif' --lines", 2, "--lines draws SVG or PNG"},
      {"render '" + kFile + "' --out '" + out + "' --lines --scale row", 2, "--scale is for heatmap figures"},
      {"render '" + kFile + "' --out '" + out + "' --all-heads", 2, "--all-heads goes with --lines"},
      {"render '" + kFile + "' --out '" + out + ".svg' --lines --threshold 0", 2, "--threshold must be in (0, 1]"},
      {"render '" + kFile + "' --out '" + out + "' --set encoder --hide special --hide punctuation --hide the --hide " +
           "black --hide cat --hide sat --hide on --hide warm --hide mat",
       1, "--hide would leave no query token"},
  };
  for (const Case& c : cases) {
    RunResult r = Cli(c.args);
    EXPECT_EQ(r.exit_code, c.code) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.expect), std::string::npos) << c.args << "\ngot: " << r.err << "\nwant: " << c.expect;
  }
  EXPECT_NE(access(out.c_str(), F_OK), 0) << "no figure is left behind by a failed render";
}

}  // namespace

// ---- labels in any script: glyphs the embedded DejaVu subset lacks come from system fonts ----

namespace {

const std::string kMultiscript = std::string(ATTNVIZ_SOURCE_DIR) + "/tests/data/multiscript.json";
const char* const kScriptTokens[] = {
    "\u2581\u6771\u4eac", "\u0412\u043b\u0430\u0434\u0438\u0432\u043e\u0441\u0442\u043e\u043a",
    "\u0395\u03bb\u03bb\u03ac\u03b4\u03b1", "\ud55c\uad6d\uc5b4", "\u0928\u092e\u0938\u094d\u0924\u0947"};
constexpr uint32_t kUnmapped = 0x10FFFD;  // private use, plane 16: no font has it

std::vector<uint8_t> UiFontBytes() {
  std::vector<uint8_t> b;
  const Status st = ReadFileBytes(ATTNVIZ_UI_FONT_PATH, &b);
  EXPECT_TRUE(st.ok) << st.message;
  return b;
}

// The token with every codepoint the font cannot draw replaced by kUnmapped: what the label
// looks like without fallback fonts.
std::string WithoutFallback(const FigureFont& plain, const std::string& token) {
  std::vector<uint32_t> cps;
  DecodeUtf8Lossy(token, &cps);
  std::string out;
  for (uint32_t cp : cps) AppendUtf8(plain.FaceFor(cp) >= 0 ? cp : kUnmapped, &out);
  return out;
}

}  // namespace

TEST(FigureFontFallback, EveryCodepointOfCjkCyrillicGreekHangulDevanagariTokensHasAFace) {
  const std::vector<uint8_t> ttf = UiFontBytes();
  FigureFont font;
  ASSERT_TRUE(font.Init(ttf.data(), ttf.size()).ok);
  EXPECT_EQ(font.FaceFor(0x6771), -1) << "the embedded subset has no CJK: the test would prove nothing";
  EXPECT_EQ(font.FaceFor(0xD55C), -1);
  EXPECT_EQ(font.FaceFor(0x0928), -1);
  EXPECT_EQ(font.FaceFor(0x0412), 0) << "Cyrillic is in the subset";
  std::vector<std::string> texts(std::begin(kScriptTokens), std::end(kScriptTokens));
  EXPECT_GE(AddSystemFallbacks(&font, texts), 1);
  std::vector<uint32_t> cps;
  for (const std::string& t : texts) {
    DecodeUtf8Lossy(t, &cps);
    for (uint32_t cp : cps) EXPECT_GE(font.FaceFor(cp), 0) << t << ": U+" << std::hex << cp << " has no face";
  }
  EXPECT_EQ(font.FaceFor(0x0412), 0) << "the primary font still draws what it has";
  EXPECT_EQ(font.FaceFor(kUnmapped), -1);
  // Drawn: CJK ink is not the missing-glyph boxes of two unmapped codepoints.
  RgbaImage a, b;
  a.Resize(64, 32, Rgb8{255, 255, 255}), b.Resize(64, 32, Rgb8{255, 255, 255});
  std::string boxes;
  AppendUtf8(kUnmapped, &boxes), AppendUtf8(kUnmapped, &boxes);
  font.Draw(&a, 2, 24, "\u6771\u4eac", 16, Rgb8{0, 0, 0});
  font.Draw(&b, 2, 24, boxes, 16, Rgb8{0, 0, 0});
  EXPECT_NE(a.rgba, b.rgba);
}

TEST(CliRender, LabelsInAnyScriptAreDrawnWithSystemFallbackFonts) {
  const std::vector<uint8_t> ttf = UiFontBytes();
  FigureFont plain;
  ASSERT_TRUE(plain.Init(ttf.data(), ttf.size()).ok);
  std::string json = Slurp(kMultiscript, false), boxed = json;
  for (const char* t : kScriptTokens) {
    const std::string from = std::string("\"") + t + "\"", to = "\"" + WithoutFallback(plain, t) + "\"";
    ASSERT_NE(boxed.find(from), std::string::npos) << t;
    for (size_t at = 0; (at = boxed.find(from, at)) != std::string::npos; at += to.size())
      boxed.replace(at, from.size(), to);
  }
  const std::string in = TempPath("boxed.json"), a = TempPath("ms.png"), b = TempPath("boxed.png");
  ASSERT_TRUE(WriteFileString(in, boxed).ok);
  const RunResult ra = Cli("render '" + kMultiscript + "' --out '" + a + "' --labels all");
  const RunResult rb = Cli("render '" + in + "' --out '" + b + "' --labels all");
  std::remove(in.c_str());
  ASSERT_EQ(ra.exit_code, 0) << ra.err;
  ASSERT_EQ(rb.exit_code, 0) << rb.err;
  const std::string sa = Slurp(a), sb = Slurp(b);
  RgbaImage ia, ib;
  ASSERT_TRUE(DecodePng((const uint8_t*)sa.data(), sa.size(), &ia).ok);
  ASSERT_TRUE(DecodePng((const uint8_t*)sb.data(), sb.size(), &ib).ok);
  const Layout La = ParseLayout(ra.out), Lb = ParseLayout(rb.out);
  AttentionDocument doc;
  std::vector<uint8_t> bytes(json.begin(), json.end());
  ASSERT_TRUE(LoadAttentionDocument(bytes.data(), bytes.size(), &doc).ok);
  const std::vector<std::string>& rows = doc.sets[0].data.target_tokens;
  for (const char* t : kScriptTokens) {
    if (WithoutFallback(plain, t) == t) continue;  // the embedded font draws it: nothing to fall back
    const int r = (int)(std::find(rows.begin(), rows.end(), std::string(t)) - rows.begin());
    ASSERT_LT(r, (int)rows.size()) << t;
    // The row label, right-aligned against the cells: pixels of the two renders must differ.
    int differing = 0;
    const int w = std::min(La.x0, Lb.x0), h = (int)std::min(La.ch, Lb.ch);
    for (int y = 0; y < h; ++y)
      for (int x = 1; x <= w; ++x) {
        const uint8_t* pa = ia.At(La.x0 - x, La.y0 + (int)(r * La.ch) + y);
        const uint8_t* pb = ib.At(Lb.x0 - x, Lb.y0 + (int)(r * Lb.ch) + y);
        differing += pa[0] != pb[0] || pa[1] != pb[1] || pa[2] != pb[2];
      }
    EXPECT_GT(differing, 20) << t << ": its row label looks like the missing-glyph boxes";
  }
}
