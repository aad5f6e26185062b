// attnviz-cli end to end: runs the real binary (ATTNVIZ_CLI_PATH) on fixtures written by
// tests/cli/make_cli_fixtures.py and compares its .npz output with numpy's float64 reference.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/head_stats.h"
#include "core/seq2seq/figures.h"
#include "core/seq2seq/translate.h"
#include "io/attention_file.h"
#include "io/file_util.h"
#include "io/json.h"
#include "io/lazy_attention.h"
#include "io/npy.h"
#include "io/npz.h"

using namespace attnviz;

namespace {

std::string Data(const std::string& name) {
  return std::string(ATTNVIZ_SOURCE_DIR) + "/tests/cli/data/" + name;
}

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
  const Status st = ReadFileBytes(path, &b);
  EXPECT_TRUE(st.ok) << st.message;
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

std::string ModelPath(const std::string& file) {
  return std::string(ATTNVIZ_SOURCE_DIR) + "/models/" + file;
}

// What the CLI should have computed: the same model file translated in this process.
seq2seq::Translation TranslateHere(const std::string& model_file, const std::string& sentence) {
  std::vector<uint8_t> bytes;
  EXPECT_TRUE(ReadFileBytes(ModelPath(model_file), &bytes).ok);
  seq2seq::Model model;
  Status st = seq2seq::LoadModel(bytes.data(), bytes.size(), &model);
  EXPECT_TRUE(st.ok) << st.message;
  seq2seq::Translation t;
  st = seq2seq::Translate(model, sentence, seq2seq::TranslateOptions(), &t);
  EXPECT_TRUE(st.ok) << st.message;
  return t;
}

// Loads the attention file the CLI wrote (and removes it); its text must be exactly what io's
// SaveAttentionJson writes for the loaded content.
AttentionFile LoadWrittenAttention(const std::string& path) {
  const std::string text = Slurp(path);
  AttentionFile f;
  Status st = LoadAttentionFile((const uint8_t*)text.data(), text.size(), &f);
  EXPECT_TRUE(st.ok) << st.message << "\n" << text;
  EXPECT_TRUE(f.warnings.empty());
  EXPECT_EQ(text, SaveAttentionJson(f)) << "written by io's SaveAttentionJson";
  return f;
}

// Largest |file - core| over one head; prints it (the weights must be bit-identical: 0).
double ExpectSameWeights(const MatrixRM& file, const MatrixRM& core, const std::string& what) {
  EXPECT_EQ(file.rows(), core.rows()) << what;
  EXPECT_EQ(file.cols(), core.cols()) << what;
  if (file.rows() != core.rows() || file.cols() != core.cols()) return INFINITY;
  const double err = (file - core).cwiseAbs().maxCoeff();
  EXPECT_EQ(err, 0.0) << what << ": the attention file must keep every float exactly";
  return err;
}

// Keys of a JSON object in file order.
std::vector<std::string> Keys(const JsonValue& v) {
  std::vector<std::string> keys;
  for (const auto& m : v.members) keys.push_back(m.first);
  return keys;
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
  struct Case {
    std::string args, expect;
  };
  const Case cases[] = {
      {"attend --in /nonexistent/in.npz --out " + out, "cannot open '/nonexistent/in.npz'"},
      {"attend --in '" + Data("bad_not_npz.npz") + "' --out " + out, "no end-of-central-directory record"},
      {"attend --in '" + Data("bad_missing_value.npz") + "' --out " + out, "missing array 'value'"},
      {"attend --in '" + Data("bad_shapes.npz") + "' --out " + out, "query has d=3 but key has d=5"},
      {"attend --in '" + Data("bad_nan.npz") + "' --out " + out, "NaN"},
      {"attend --in '" + Data("seed002.npz") + "' --out " + out + " --score general",
       "--score general needs array 'W'"},
      {"attend --in '" + Data("seed002.npz") + "' --out " + out + " --heads 2", "needs multi-head weights"},
      {"attend --in '" + Data("mha.npz") + "' --out " + out + " --heads 3", "not divisible by num_heads=3"},
      {"attend --in '" + Data("seed002.npz") + "' --out /nonexistent/dir/out.npz", "cannot create"},
      {"render --in '" + Data("seed002.npz") + "' --svg " + out, "no 'attention' array"},
      {"inspect /tmp", "error reading '/tmp': Is a directory"},  // the reason, not only "error reading"
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
  EXPECT_NE(r.out.find("attention: 2 layers, 6 heads in total, n_q=4 (target) x n_k=5 (source)"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("layer 1 \"enc.1\": 3 heads: \"h0\" \"h1\" \"h2\""), std::string::npos) << r.out;
  const std::string svg = TempPath("out.svg");
  r = Cli("render --in '" + att + "' --svg '" + svg +
          "' --layer 1 --head 2 --colormap viridis --values --title 'enc.1 / h2'");
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

// inspect --heads / --sort: every head's statistics, ordered as the viewer's grid orders them.
TEST(Cli, InspectListsHeadStatisticsSortedAsTheGrid) {
  const std::string att = std::string(ATTNVIZ_SOURCE_DIR) + "/tests/io/data/attention_lhqk.npz";
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(ReadFileBytes(att, &bytes).ok);
  NpzFile npz;
  ASSERT_TRUE(ParseNpz(bytes.data(), bytes.size(), &npz).ok);
  AttentionFile f;
  ASSERT_TRUE(AttentionFileFromArrays(npz, &f).ok);
  struct Head {
    int layer, head;
    double entropy;
  };
  std::vector<Head> want;
  for (size_t l = 0; l < f.layers.size(); ++l)
    for (size_t h = 0; h < f.layers[l].heads.size(); ++h) {
      HeadStats hs;
      ASSERT_TRUE(ComputeHeadStats(f.layers[l].heads[h].weights, &hs).ok);
      want.push_back({(int)l, (int)h, hs.entropy});
    }
  std::stable_sort(want.begin(), want.end(), [](const Head& a, const Head& b) { return a.entropy < b.entropy; });
  ASSERT_FALSE(want.front().layer == 0 && want.front().head == 0 && want.back().layer == 1 && want.back().head == 2)
      << "the fixture's entropy order must differ from layer order, or the test proves nothing";
  RunResult r = Cli("inspect '" + att + "' --sort entropy");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const size_t table = r.out.find("offset (mass)\n");
  ASSERT_NE(table, std::string::npos) << r.out;
  const char* p = r.out.c_str() + table + 14;
  for (const Head& h : want) {
    int layer = -1, head = -1, n = 0;
    double entropy = -1;
    ASSERT_EQ(std::sscanf(p, " %d %d %lf%n", &layer, &head, &entropy, &n), 3) << p;
    EXPECT_EQ(layer, h.layer);
    EXPECT_EQ(head, h.head);
    EXPECT_NEAR(entropy, h.entropy, 5e-4);
    p = std::strchr(p, '\n');
    ASSERT_NE(p, nullptr);
    ++p;
  }
  r = Cli("inspect '" + att + "' --sort loudest");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown --sort 'loudest'"), std::string::npos) << r.err;
  r = Cli("inspect '" + att + "'");
  EXPECT_EQ(r.out.find("entropy"), std::string::npos) << "the table only with --heads or --sort";
}

TEST(Cli, InspectReadsASafetensorsHeaderOnly) {
  const std::string att = std::string(ATTNVIZ_SOURCE_DIR) + "/tests/io/data/attention_lhqk.npz";
  const std::string st = TempPath("lhqk.safetensors");
  RunResult r = Cli("convert '" + att + "' '" + st + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = Cli("inspect '" + st + "'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("safetensors, "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("attention.0.1        F16      (3, 4, 5)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2 layers, 6 heads in total, n_q=4 (target) x n_k=5 (source)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("layer 1 \"enc.1\": 3 heads, F16"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("statistics: stored for every head"), std::string::npos) << r.out;
  // --heads prints the statistics convert stored (no head read): the table --recompute makes from the heads.
  r = Cli("inspect --sort entropy '" + st + "'");
  const RunResult recomputed = Cli("inspect --recompute --sort entropy '" + st + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(recomputed.exit_code, 0) << recomputed.err;
  EXPECT_NE(r.out.find("(statistics stored in the file"), std::string::npos) << r.out;
  EXPECT_EQ(recomputed.out.find("(statistics stored in the file"), std::string::npos) << recomputed.out;
  const size_t a = r.out.find("heads (sorted by entropy"), b = recomputed.out.find("heads (sorted by entropy");
  ASSERT_NE(a, std::string::npos) << r.out;
  ASSERT_NE(b, std::string::npos) << recomputed.out;
  EXPECT_EQ(r.out.substr(a), recomputed.out.substr(b));
  EXPECT_EQ(std::count(r.out.begin() + (long)a, r.out.end(), '\n'), 2 + 6) << "a row per head";
  std::remove(st.c_str());

  // 32 layers x 32 heads x 4096 x 4096 F16 (32 GiB) with only its header written: a hole of zeros
  // that would take minutes to read; inspect answers from the header.
  AttentionDocument shape;
  AttentionSet set;
  set.name = "llm";
  for (int i = 0; i < 4096; ++i) set.data.source_tokens.push_back("t" + std::to_string(i));
  set.data.target_tokens = set.data.source_tokens;
  set.data.self_attention = true;
  for (int l = 0; l < 32; ++l) {
    AttentionFile::Layer layer{"layer " + std::to_string(l), {}};
    for (int h = 0; h < 32; ++h) layer.heads.push_back({"head " + std::to_string(h), MatrixRM()});
    set.data.layers.push_back(std::move(layer));
  }
  shape.sets.push_back(std::move(set));
  LazyWritePlan plan;
  ASSERT_TRUE(PlanLazyAttention(shape, StDType::F16, &plan).ok);
  const std::string big = TempPath("sparse.safetensors");
  const int fd = open(big.c_str(), O_CREAT | O_TRUNC | O_RDWR, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, plan.header.data(), plan.header.size()), (ssize_t)plan.header.size());
  ASSERT_EQ(ftruncate(fd, (off_t)plan.file_size), 0);
  close(fd);
  r = Cli("inspect --max-memory 64M '" + big + "'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("safetensors, 34"), std::string::npos) << r.out;  // 32 GiB of heads, 2 GiB of screen copies
  EXPECT_NE(r.out.find("32 layers, 1024 heads in total, n_q=4096 (target) x n_k=4096 (source)"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("overviews: 256 x 256 per head"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("screen copies: 1024 x 1024 per head"), std::string::npos) << r.out;
  // Cut inside its header: the reason, exit 1.
  ASSERT_EQ(truncate(big.c_str(), 1000), 0);
  r = Cli("inspect '" + big + "'");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("truncated"), std::string::npos) << r.err;
  std::remove(big.c_str());
}

// `inspect --heads` of a file too big to read whole under --max-memory 16K (read a head at a time)
// prints the table it prints when the file is read whole (up to the lazy reader's warnings).
void ExpectTheSameHeadsTableReadLazily(const std::string& path) {
  const RunResult whole = Cli("inspect '" + path + "' --sort entropy");
  const RunResult r = Cli("inspect --max-memory 16K '" + path + "' --sort entropy");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const size_t at_whole = whole.out.find("heads (sorted by entropy"), b = r.out.find("heads (sorted by entropy");
  ASSERT_NE(at_whole, std::string::npos) << whole.out;
  ASSERT_NE(b, std::string::npos) << r.out;
  EXPECT_EQ(r.out.substr(b, r.out.find("warning", b) - b), whole.out.substr(at_whole)) << path;
}

TEST(Cli, AnNpzTooBigToReadWholeIsInspectedConvertedAndRenderedLazilyWithItsTokens) {
  // np.savez of a [2, 3, 40, 40] float32 attention array with its tokens and layer names: under
  // --max-memory 16K it is read lazily (its attention member stored as it is); compressed, it says how
  // to make it readable.
  NpzFile z;
  NdArray a;
  a.shape = {2, 3, 40, 40};
  std::vector<float> w(2 * 3 * 40 * 40);
  for (size_t i = 0; i < w.size(); ++i) w[i] = (float)((i * 7919) % 101) / 2020.0f;
  a.data.resize(w.size() * 4);
  std::memcpy(a.data.data(), w.data(), a.data.size());
  z.Add("attention", a);
  std::vector<std::string> tokens;
  for (int i = 0; i < 40; ++i) tokens.push_back("tok" + std::to_string(i));
  z.Add("tokens", FromStrings(tokens));
  z.Add("layer_names", FromStrings({"enc", "dec"}));
  const std::string npz = TempPath("big.npz"), zipped = TempPath("big_compressed.npz"),
                    st = TempPath("big_npz.safetensors");
  for (const bool deflate : {false, true}) {
    NpzWriteOptions o;
    o.compressed = deflate;
    std::vector<uint8_t> bytes;
    ASSERT_TRUE(WriteNpz(z, o, &bytes).ok);
    ASSERT_TRUE(WriteFileBytes(deflate ? zipped : npz, bytes.data(), bytes.size()).ok);
  }
  RunResult r = Cli("inspect --max-memory 16K '" + npz + "'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("npz (its attention stored as it is), "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tokens (40): \"tok0\" \"tok1\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("layer 1 \"dec\": 3 heads, F32"), std::string::npos) << r.out;
  ExpectTheSameHeadsTableReadLazily(npz);  // --heads, a head at a time
  // convert keeps the tokens and names; render draws a head of it, as from the file read whole.
  r = Cli("convert --max-memory 16K '" + npz + "' '" + st + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = Cli("inspect '" + st + "'");
  EXPECT_NE(r.out.find("tokens (40): \"tok0\" \"tok1\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("layer 0 \"enc\""), std::string::npos) << r.out;
  const std::string lazy_svg = TempPath("big_npz_lazy.svg"), whole_svg = TempPath("big_npz_whole.svg");
  r = Cli("render --max-memory 16K '" + npz + "' --layer 1 --head 2 --out '" + lazy_svg + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = Cli("render '" + npz + "' --layer 1 --head 2 --out '" + whole_svg + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<uint8_t> lazy_bytes, whole_bytes;
  ASSERT_TRUE(ReadFileBytes(lazy_svg, &lazy_bytes).ok);
  ASSERT_TRUE(ReadFileBytes(whole_svg, &whole_bytes).ok);
  EXPECT_EQ(lazy_bytes, whole_bytes);
  EXPECT_NE(std::string(lazy_bytes.begin(), lazy_bytes.end()).find(">tok39<"), std::string::npos);
  r = Cli("inspect --max-memory 1K '" + zipped + "'");  // the file is smaller: deflated
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("is compressed (np.savez_compressed"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("Save it with np.savez"), std::string::npos) << r.err;
  for (const std::string& f : {npz, zipped, st, lazy_svg, whole_svg}) std::remove(f.c_str());
}

TEST(Cli, ANpyTooBigToReadWholeIsInspectedAndConvertedHeadByHead) {
  // np.save of a [2, 3, 40, 40] float32 array: under --max-memory 16K it is too big to read whole,
  // so inspect reads its header only and convert streams it into safetensors a head at a time.
  NdArray a;
  a.shape = {2, 3, 40, 40};
  a.data.resize(2 * 3 * 40 * 40 * 4);
  std::vector<float> w(2 * 3 * 40 * 40);
  for (size_t i = 0; i < w.size(); ++i) w[i] = (float)((i * 7919) % 101) / 2020.0f;
  std::memcpy(a.data.data(), w.data(), a.data.size());
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(WriteNpy(a, &bytes).ok);
  const std::string npy = TempPath("big.npy"), st = TempPath("big_npy.safetensors"), json = TempPath("big_npy.json");
  ASSERT_TRUE(WriteFileBytes(npy, bytes.data(), bytes.size()).ok);
  RunResult r = Cli("inspect --max-memory 16K '" + npy + "'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("npy, 37.6 KiB, too big to read whole"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2 layers, 6 heads in total, n_q=40 (target) x n_k=40 (source), self-attention"),
            std::string::npos)
      << r.out;
  r = Cli("inspect '" + npy + "'");  // read whole without the limit
  EXPECT_EQ(r.out.find("too big to read whole"), std::string::npos) << r.out;
  ExpectTheSameHeadsTableReadLazily(npy);  // --heads reads it a head at a time
  r = Cli("convert --max-memory 16K '" + npy + "' '" + st + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("wrote " + st + ": 1 set(s), 6 head(s)"), std::string::npos) << r.out;
  std::unique_ptr<ByteSource> src;
  ASSERT_TRUE(OpenFileSource(st, &src).ok);
  std::vector<uint8_t> prefix;
  ASSERT_TRUE(ReadLazyPrefix(src.get(), &prefix).ok);
  LazyAttentionFile f;
  ASSERT_TRUE(f.Open(std::move(src), prefix.data(), prefix.size()).ok);
  EXPECT_EQ(f.index().sets[0].PoolRows(attnviz::LazyPool::Overview), 40);  // overviews written as the heads streamed by
  LazyRequest q;
  q.layer = 1, q.head = 2, q.row0 = 0, q.row1 = 40;
  f.Submit(q);
  LazyResult res;
  while (!f.PopResult(&res)) f.Pump(100);
  ASSERT_TRUE(res.status.ok) << res.status.message;
  double worst = 0;
  for (int i = 0; i < 40 * 40; ++i)
    worst = std::max(worst, (double)std::fabs(res.weights.data()[i] - w[(size_t)(5 * 1600 + i)]));
  EXPECT_LT(worst, 1e-3);  // F16
  // render draws from it too, reading only the heads the figure needs: head (1, 2), then the mean of
  // layer 1 (3 heads: 19.2 KB within 32K; the file, 37.6 KiB, is over it and so read lazily).
  const std::string svg = TempPath("big_npy.svg");
  r = Cli("render --max-memory 32K '" + npy + "' --layer 1 --head 2 --out '" + svg + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("layer 1 \"layer 1\", head 2 \"head 2\", 40x40"), std::string::npos) << r.out;
  r = Cli("render --max-memory 32K '" + npy + "' --layer 1 --head -1 --out '" + svg + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("mean of heads, 40x40"), std::string::npos) << r.out;
  r = Cli("render --max-memory 32K '" + npy + "' --layer 2 --out '" + svg + "'");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--layer 2 is out of range (the file has 2 layers)"), std::string::npos) << r.err;
  std::remove(svg.c_str());
  // A .npy has no tokens: --tokens gives them (one per line here), and they must be as many as the keys.
  const std::string tok = TempPath("big_npy_tokens.txt");
  std::string lines;
  for (int i = 0; i < 40; ++i) lines += "tok" + std::to_string(i) + "\r\n";
  ASSERT_TRUE(WriteFileString(tok, lines).ok);
  r = Cli("convert --max-memory 16K '" + npy + "' '" + st + "' --tokens '" + tok + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("using indices"), std::string::npos) << r.err;
  r = Cli("inspect '" + st + "'");
  EXPECT_NE(r.out.find("tokens (40): \"tok0\" \"tok1\""), std::string::npos) << r.out;
  ASSERT_TRUE(WriteFileString(tok, "[\"a\", \"b\"]").ok);
  r = Cli("convert --max-memory 16K '" + npy + "' '" + st + "' --tokens '" + tok + "'");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("2 tokens, but the attention has 40 keys"), std::string::npos) << r.err;
  std::remove(tok.c_str());
  // Into JSON the whole file must fit the budget: refused, with the way out.
  r = Cli("convert --max-memory 16K '" + npy + "' '" + json + "'");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("a .safetensors output needs one head at a time"), std::string::npos) << r.err;
  std::remove(npy.c_str());
  std::remove(st.c_str());
}

TEST(Cli, TranslateWritesItsAttentionFileThroughIo) {
  const std::string sentence = "the european economic area";
  const std::string out = TempPath("translate.json");
  RunResult r =
      Cli("translate --model '" + ModelPath("bahdanau-en-fr.bin") + "' --out '" + out + "' '" + sentence + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const seq2seq::Translation t = TranslateHere("bahdanau-en-fr.bin", sentence);
  EXPECT_EQ(r.out.find(seq2seq::Join(t.target_tokens) + "\n\n"), 0u) << r.out;
  const AttentionFile f = LoadWrittenAttention(out);
  EXPECT_EQ(f.source_tokens, t.source_tokens);
  std::vector<std::string> rows = t.target_tokens;
  rows.push_back("</s>");  // the end-of-sentence step
  EXPECT_EQ(f.target_tokens, rows);
  ASSERT_EQ(f.layers.size(), 1u);
  ASSERT_EQ(f.layers[0].heads.size(), 1u);
  EXPECT_EQ(f.layers[0].name, "cross-attention");
  EXPECT_EQ(f.layers[0].heads[0].name, "mean");
  const double err = ExpectSameWeights(f.layers[0].heads[0].weights, t.attention, "mean");
  std::printf("  translate --out (bahdanau): %dx%d weights, max |file - core| = %g\n", f.NumQueries(), f.NumKeys(),
              err);
}

TEST(Cli, TranslateHeadsWritesEveryDecoderLayer) {
  const std::string sentence = "syria sees the cat";
  const std::string out = TempPath("translate_heads.json");
  RunResult r = Cli("translate --model '" + ModelPath("transformer-en-fr.bin") + "' --heads --out '" + out + "' '" +
                    sentence + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const seq2seq::Translation t = TranslateHere("transformer-en-fr.bin", sentence);
  const AttentionFile f = LoadWrittenAttention(out);
  ASSERT_EQ(f.layers.size(), 1 + t.layer_heads.size());
  double err = ExpectSameWeights(f.layers[0].heads[0].weights, t.attention, "mean");
  for (size_t l = 0; l < t.layer_heads.size(); ++l) {
    EXPECT_EQ(f.layers[l + 1].name, t.layer_names[l]);
    ASSERT_EQ(f.layers[l + 1].heads.size(), t.layer_heads[l].size());
    for (size_t h = 0; h < t.layer_heads[l].size(); ++h) {
      const bool supervised = static_cast<int>(l) == t.supervised_layer && static_cast<int>(h) == t.supervised_head;
      EXPECT_EQ(f.layers[l + 1].heads[h].name, "head " + std::to_string(h + 1) + (supervised ? " (supervised)" : ""));
      err = std::max(err, ExpectSameWeights(f.layers[l + 1].heads[h].weights, t.layer_heads[l][h],
                                            t.layer_names[l] + " head " + std::to_string(h + 1)));
    }
  }
  std::printf("  translate --heads --out (transformer): %d heads, max |file - core| = %g\n", f.TotalHeads(), err);
  r = Cli("translate --model '" + ModelPath("bahdanau-en-fr.bin") + "' --out /nonexistent/dir/t.json 'the cat'");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("cannot create '/nonexistent/dir/t.json'"), std::string::npos) << r.err;
}

TEST(Cli, TranslateHeldoutAndTrainPrintJsonLines) {
  RunResult r = Cli("translate --model '" + ModelPath("transformer-en-fr.bin") + "' --heldout 3");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  JsonValue scores;
  Status st = ParseJson(r.out, &scores);
  ASSERT_TRUE(st.ok) << st.message << "\n" << r.out;
  EXPECT_EQ(Keys(scores), (std::vector<std::string>{"model", "task", "sentences", "beam", "exact_match",
                                                    "token_accuracy", "aer", "aer_threshold", "heads", "supervised"}));
  const JsonValue* supervised = scores.Find("supervised");
  ASSERT_NE(supervised, nullptr);
  EXPECT_EQ(Keys(*supervised), (std::vector<std::string>{"layer", "head", "aer"}));
  EXPECT_EQ(supervised->Find("layer")->string, "decoder layer 2");
  EXPECT_EQ(supervised->Find("head")->number, 1);
  EXPECT_EQ(scores.Find("model")->string, "transformer");
  EXPECT_EQ(scores.Find("task")->string, "en-fr");
  EXPECT_EQ(scores.Find("sentences")->number, 3);
  EXPECT_NE(r.out.find("\"exact_match\":"), std::string::npos);
  ASSERT_EQ(scores.Find("heads")->ArraySize(), 8u) << "2 decoder layers x 4 heads";
  const JsonValue& head = scores.Find("heads")->items[7];
  EXPECT_EQ(Keys(head), (std::vector<std::string>{"layer", "head", "aer"}));
  EXPECT_EQ(head.Find("layer")->string, "decoder layer 2");
  EXPECT_EQ(head.Find("head")->number, 4);
  for (const char* rate : {"exact_match", "token_accuracy", "aer", "aer_threshold"}) {
    EXPECT_GE(scores.Find(rate)->number, 0.0) << rate;
    EXPECT_LE(scores.Find(rate)->number, 1.0) << rate;
  }

  const std::string model = TempPath("model.bin");
  r = Cli("train --model bahdanau --task dates --epochs 2 --train-size 32 --heldout-size 8 --seconds 100 --out '" +
          model + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("train: wrote " + model), std::string::npos) << r.err;
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(ReadFileBytes(model, &bytes).ok);
  std::remove(model.c_str());
  seq2seq::Model trained;
  EXPECT_TRUE(seq2seq::LoadModel(bytes.data(), bytes.size(), &trained).ok);
  int lines = 0;
  size_t start = 0;
  for (size_t end; (end = r.out.find('\n', start)) != std::string::npos; start = end + 1, ++lines) {
    JsonValue epoch;
    st = ParseJson(r.out.substr(start, end - start), &epoch);
    ASSERT_TRUE(st.ok) << st.message << "\n" << r.out;
    EXPECT_EQ(Keys(epoch), (std::vector<std::string>{"epoch", "loss", "heldout_loss", "exact_match", "token_accuracy",
                                                     "aer", "aer_threshold", "probe_aer", "seconds", "batches"}));
    EXPECT_EQ(epoch.Find("epoch")->number, lines + 1);
    EXPECT_GT(epoch.Find("loss")->number, 0.0);
  }
  EXPECT_EQ(lines, 2) << r.out;
  EXPECT_NE(r.out.find("\"exact_match\":0.0000,"), std::string::npos) << "fixed 4 decimals, as before: " << r.out;
}

// --figure ID prints exactly what translating the figure's sentence prints, then (stderr) the
// source, the reference and the scores; --figure all prints one JSON line per figure of the task.
TEST(Cli, TranslateFigures) {
  const std::string model = ModelPath("bahdanau-en-fr.bin");
  const seq2seq::FigureSentence* c = seq2seq::FindFigure("c");
  ASSERT_NE(c, nullptr);
  const RunResult figure = Cli("translate --model '" + model + "' --figure c");
  ASSERT_EQ(figure.exit_code, 0) << figure.err;
  const std::string quoted = "'" + c->text + "'";
  const RunResult typed = Cli("translate --model '" + model + "' " + quoted);
  ASSERT_EQ(typed.exit_code, 0) << typed.err;
  EXPECT_EQ(figure.out, typed.out) << "the same output as translating the sentence";
  EXPECT_EQ(figure.out.find(seq2seq::Join(c->gold.target) + "\n\n"), 0u) << figure.out;
  EXPECT_NE(figure.err.find("Bahdanau"), std::string::npos) << figure.err;
  EXPECT_NE(figure.err.find("exact match"), std::string::npos) << figure.err;

  RunResult r = Cli("translate --model '" + model + "' --figure all");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  int lines = 0;
  size_t start = 0;
  for (size_t end; (end = r.out.find('\n', start)) != std::string::npos; start = end + 1, ++lines) {
    JsonValue v;
    ASSERT_TRUE(ParseJson(r.out.substr(start, end - start), &v).ok) << r.out;
    EXPECT_EQ(Keys(v), (std::vector<std::string>{"figure", "task", "exact", "output", "reference", "aer", "aer_mean"}));
    EXPECT_EQ(v.Find("figure")->string, std::string(1, static_cast<char>('a' + lines)));
    EXPECT_TRUE(v.Find("exact")->boolean) << r.out;
    EXPECT_LE(v.Find("aer")->number, 0.25) << r.out;
  }
  EXPECT_EQ(lines, 4) << "the en-fr model has figures a..d";

  r = Cli("translate --model '" + ModelPath("bahdanau-es-en.bin") + "' --figure es3");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("are they still at home ?\n\n"), 0u) << r.out;
  r = Cli("translate --model '" + model + "' --figure es1");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("es-en"), std::string::npos) << r.err;
  r = Cli("translate --figure z");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown --figure 'z'"), std::string::npos) << r.err;
}

// The pretrained models are built into the CLI: --model takes their names, a sentence or a figure
// without --model uses the built-in Bahdanau model of its task, and this works from any directory
// (ctest runs the CLI in the build tree, where no models/ exists). Each gives what the model file
// itself gives.
TEST(Cli, TranslateWithBuiltinModels) {
  const std::string sentence = "'the european economic area was signed .'";
  const RunResult file = Cli("translate --model '" + ModelPath("bahdanau-en-fr.bin") + "' " + sentence);
  ASSERT_EQ(file.exit_code, 0) << file.err;
  RunResult r = Cli("translate " + sentence);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, file.out) << "no --model: the built-in bahdanau-en-fr";
  EXPECT_NE(r.out.find("la zone"), std::string::npos) << r.out;

  const RunResult transformer = Cli("translate --model '" + ModelPath("transformer-en-fr.bin") + "' " + sentence);
  ASSERT_EQ(transformer.exit_code, 0) << transformer.err;
  for (const char* name : {"transformer-en-fr", "transformer-en-fr.bin"}) {
    r = Cli(std::string("translate --model ") + name + " " + sentence);
    ASSERT_EQ(r.exit_code, 0) << name << ": " << r.err;
    EXPECT_EQ(r.out, transformer.out) << name;
  }
  EXPECT_NE(transformer.out, file.out) << "two models, two outputs: the name picked the model";

  const RunResult es3 = Cli("translate --model '" + ModelPath("bahdanau-es-en.bin") + "' --figure es3");
  r = Cli("translate --figure es3");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, es3.out) << "a figure without --model: the built-in Bahdanau model of its task";
  EXPECT_EQ(r.out.find("are they still at home ?\n\n"), 0u) << r.out;

  r = Cli("translate --model no-such-model 'the cat'");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("cannot open 'no-such-model'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("built-in models: bahdanau-dates, bahdanau-en-fr"), std::string::npos) << r.err;
  r = Cli("translate --model ../models/bahdanau-en-fr 'the cat'");
  EXPECT_EQ(r.exit_code, 1) << "a path is a file, never a built-in name";
  r = Cli("translate --help");
  EXPECT_NE(r.out.find("transformer-en-fr"), std::string::npos) << "--help lists the built-in models: " << r.out;
}
