// attnviz-cli end to end: runs the real binary (ATTNVIZ_CLI_PATH) on fixtures written by
// tests/cli/make_cli_fixtures.py and compares its .npz output with numpy's float64 reference.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "io/attention_file.h"
#include "io/file_util.h"
#include "io/npz.h"

using namespace attnviz;

namespace {

std::string Data(const std::string& name) { return std::string(ATTNVIZ_SOURCE_DIR) + "/tests/cli/data/" + name; }

std::string TempPath(const std::string& name) {
  const char* tmp = std::getenv("TMPDIR");
  return std::string(tmp && *tmp ? tmp : "/tmp") + "/attnviz_cli_test_" + std::to_string(getpid()) + "_" + name;
}

struct RunResult {
  int exit_code = -1;
  std::string out, err;
};

std::string Slurp(const std::string& path) {
  std::vector<uint8_t> b;
  ReadFileBytes(path, &b);
  std::remove(path.c_str());
  return std::string(b.begin(), b.end());
}

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

NpzFile LoadNpz(const std::string& path) {
  std::vector<uint8_t> bytes;
  Status st = ReadFileBytes(path, &bytes);
  EXPECT_TRUE(st.ok) << st.message;
  NpzFile z;
  st = ParseNpz(bytes.data(), bytes.size(), &z);
  EXPECT_TRUE(st.ok) << path << ": " << st.message;
  return z;
}

// Largest |ours - numpy| over one array; both must exist and have the same shape.
double MaxError(const NpzFile& ours, const NpzFile& ref, const std::string& name) {
  const NdArray* a = ours.Find(name);
  const NdArray* b = ref.Find(name);
  EXPECT_NE(a, nullptr) << "output lacks " << name;
  EXPECT_NE(b, nullptr) << "reference lacks " << name;
  if (!a || !b) return INFINITY;
  EXPECT_EQ(a->shape, b->shape) << name;
  if (a->shape != b->shape) return INFINITY;
  EXPECT_EQ(a->dtype, DType::Float32) << name;
  double err = 0;
  for (int64_t i = 0; i < a->Numel(); ++i) err = std::max(err, std::fabs(a->GetDouble(i) - b->GetDouble(i)));
  return err;
}

// Runs attend on case `name` with `flags` and checks output/weights(/head_weights) against numpy.
void CheckAttend(const std::string& name, const std::string& flags, const std::string& expected, double tol,
                 bool heads = false) {
  const std::string out = TempPath(name + ".out.npz");
  RunResult r = Cli("attend --in '" + Data(name + ".npz") + "' --out '" + out + "' " + flags);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  NpzFile ours = LoadNpz(out), ref = LoadNpz(Data(expected + ".expected.npz"));
  std::remove(out.c_str());
  const double ew = MaxError(ours, ref, "weights"), eo = MaxError(ours, ref, "output");
  std::printf("  %-12s %-34s max |err| weights %.3g, output %.3g", name.c_str(), flags.c_str(), ew, eo);
  EXPECT_LT(ew, tol) << name;
  EXPECT_LT(eo, tol * 50) << name;  // outputs are weighted sums of O(10) values
  if (heads) {
    const double eh = MaxError(ours, ref, "head_weights");
    std::printf(", head_weights %.3g", eh);
    EXPECT_LT(eh, tol);
  } else {
    EXPECT_EQ(ours.Find("head_weights"), nullptr);
  }
  std::printf("\n");
}

}  // namespace

TEST(Cli, Seed002DotScores) {
  CheckAttend("seed002", "--score dot", "seed002", 1e-6);
  const std::string out = TempPath("s2.npz");
  RunResult r = Cli("attend --in '" + Data("seed002.npz") + "' --out '" + out + "' --score dot");
  std::remove(out.c_str());
  EXPECT_NE(r.out.find("[0.1192, 0.0000, 0.0000, 0.8808]"), std::string::npos) << r.out;
}

TEST(Cli, Seed004ScaledDotCausalTemperature) {
  CheckAttend("seed004", "", "seed004", 1e-6);  // scaled_dot is the default
  CheckAttend("seed004", "--score scaled_dot --causal --temperature 2", "seed004_causal_t2", 1e-6);
}

TEST(Cli, GeneralAndAdditiveScores) {
  CheckAttend("general", "--score general", "general", 1e-5);
  CheckAttend("additive", "--score=additive", "additive", 1e-5);
  CheckAttend("cosine", "--score cosine", "cosine", 1e-5);
}

TEST(Cli, MultiHeadMatchesNumpyTorchMha) {
  CheckAttend("mha", "--heads 2", "mha", 1e-5, true);
  CheckAttend("mha_masked", "--heads 4 --compressed", "mha_masked", 1e-5, true);
}

TEST(Cli, HelpAndUsageErrors) {
  RunResult r = Cli("--help");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* c : {"attend", "inspect", "render"}) EXPECT_NE(r.out.find(c), std::string::npos) << r.out;
  r = Cli("");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("commands:"), std::string::npos);
  r = Cli("attend --help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("usage: attnviz-cli attend --in IN.npz --out OUT.npz"), std::string::npos) << r.out;
  r = Cli("frobnicate");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown command 'frobnicate'"), std::string::npos) << r.err;
  r = Cli("attend --in x.npz --out y.npz --bogus");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown flag '--bogus'"), std::string::npos) << r.err;
  r = Cli("attend --in x.npz");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("missing required flag --out"), std::string::npos) << r.err;
  r = Cli("attend --in x.npz --out y.npz --score banana");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown --score 'banana'"), std::string::npos) << r.err;
  r = Cli("attend --in x.npz --out y.npz --heads two");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("bad value 'two' for --heads"), std::string::npos) << r.err;
  r = Cli("attend --in x.npz --out y.npz --temperature");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--temperature needs a value"), std::string::npos) << r.err;
  r = Cli("attend --in x.npz --out y.npz --temperature -1");
  EXPECT_EQ(r.exit_code, 2);
  r = Cli("inspect");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("missing argument FILE"), std::string::npos) << r.err;
}

TEST(Cli, BadInputsExitOneWithAMessage) {
  const std::string out = TempPath("bad.npz");
  struct Case { std::string args, expect; };
  const Case cases[] = {
      {"attend --in /nonexistent/in.npz --out " + out, "cannot open '/nonexistent/in.npz'"},
      {"attend --in '" + Data("bad_not_npz.npz") + "' --out " + out, "no end-of-central-directory record"},
      {"attend --in '" + Data("bad_missing_value.npz") + "' --out " + out, "missing array 'value'"},
      {"attend --in '" + Data("bad_shapes.npz") + "' --out " + out, "query has d=3 but key has d=5"},
      {"attend --in '" + Data("bad_nan.npz") + "' --out " + out, "NaN"},
      {"attend --in '" + Data("seed002.npz") + "' --out " + out + " --score general", "--score general needs array 'W'"},
      {"attend --in '" + Data("seed002.npz") + "' --out " + out + " --heads 2", "needs multi-head weights"},
      {"attend --in '" + Data("mha.npz") + "' --out " + out + " --heads 3", "not divisible by num_heads=3"},
      {"attend --in '" + Data("seed002.npz") + "' --out /nonexistent/dir/out.npz", "cannot create"},
      {"render --in '" + Data("seed002.npz") + "' --svg " + out, "no 'attention' array"},
  };
  for (const Case& c : cases) {
    RunResult r = Cli(c.args);
    EXPECT_EQ(r.exit_code, 1) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.expect), std::string::npos) << c.args << "\ngot: " << r.err << "\nwant: " << c.expect;
  }
  std::remove(out.c_str());
}

TEST(Cli, InspectAndRender) {
  RunResult r = Cli("inspect '" + Data("mha.npz") + "'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("in_proj_weight       <f8      (24, 8)          min"), std::string::npos) << r.out;
  const std::string att = std::string(ATTNVIZ_SOURCE_DIR) + "/tests/io/data/attention_lhqk.npz";
  r = Cli("inspect '" + att + "'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("attention: 2 layers, 6 heads in total, n_q=4 (target) x n_k=5 (source)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("layer 1 \"enc.1\": 3 heads: \"h0\" \"h1\" \"h2\""), std::string::npos) << r.out;
  const std::string svg = TempPath("out.svg");
  r = Cli("render --in '" + att + "' --svg '" + svg + "' --layer 1 --head 2 --colormap viridis --values --title 'enc.1 / h2'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(ReadFileBytes(svg, &bytes).ok);
  std::string text(bytes.begin(), bytes.end());
  EXPECT_NE(text.find("</svg>"), std::string::npos);
  EXPECT_NE(text.find("s&apos;est"), std::string::npos);
  EXPECT_NE(text.find("enc.1 / h2"), std::string::npos);
  r = Cli("render --in '" + att + "' --svg '" + svg + "' --layer 2");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--layer 2 is out of range (the file has 2 layers)"), std::string::npos) << r.err;
  r = Cli("render --in '" + att + "' --svg '" + svg + "' --colormap jet");
  EXPECT_EQ(r.exit_code, 2);
  // attend output renders directly (head_weights -> one layer of heads)
  const std::string out = TempPath("mha.out.npz");
  ASSERT_EQ(Cli("attend --in '" + Data("mha.npz") + "' --out '" + out + "' --heads 2 --quiet").exit_code, 0);
  r = Cli("render --in '" + out + "' --svg '" + svg + "' --head -1");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("mean of heads, 3x5"), std::string::npos) << r.out;
  std::remove(out.c_str());
  std::remove(svg.c_str());
}
