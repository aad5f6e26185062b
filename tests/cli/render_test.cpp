// attnviz-cli render end to end: PNG, GIF and SVG figures are read back and checked against the
// file's weights (PNG/GIF pixels inverted through the colormap's lookup table), and bad arguments
// must fail with a clear message and a non-zero exit.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/colormap.h"
#include "figure/gif_codec.h"
#include "figure/png_codec.h"
#include "io/attention_sets.h"
#include "io/file_util.h"

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
      {"render '" + kFile + "' --out '" + out + ".svg' --scale log", 1, "PNG and GIF figures only"},
      {"render /nonexistent/in.json --out '" + out + "'", 1, "/nonexistent/in.json"},
      {"render --out '" + out + "'", 2, "give the attention FILE"},
      {"render '" + kFile + "' --out '" + out + "' --font '" + kFile + "'", 1, "not a TrueType font"},
      {"render '" + kFile + "' --out '" + out + ".gif' --dpi 384 --cell 100", 1, "over 512 MiB of pixels"},
  };
  for (const Case& c : cases) {
    RunResult r = Cli(c.args);
    EXPECT_EQ(r.exit_code, c.code) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.expect), std::string::npos) << c.args << "\ngot: " << r.err << "\nwant: " << c.expect;
  }
  EXPECT_NE(access(out.c_str(), F_OK), 0) << "no figure is left behind by a failed render";
}

}  // namespace
