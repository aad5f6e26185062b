// attnviz-cli attend: attention over arrays in an .npz (docs/CLI.md).
//   in:  query [n_q, d_q], key [n_k, d_k], value [n_k, d_v]; W / W_q, W_k, v, b for general and
//        additive scores; in_proj_weight, in_proj_bias, out_proj_weight, out_proj_bias for
//        torch-style multi-head attention; key_padding_mask [n_k] (bool, True = ignore);
//        attn_mask [n_q, n_k] (bool: True = not allowed; float: added to the scores)
//   out: output [n_q, d_v or E], weights [n_q, n_k], head_weights [h, n_q, n_k] when h > 1;
//        tokens / source_tokens / target_tokens are copied through when the input has them
#include <cstdio>
#include <string>

#include "cli/cli_args.h"
#include "cli/commands.h"
#include "core/attention.h"
#include "io/file_util.h"
#include "io/npz.h"

namespace attnviz {
namespace {

int Fail(const std::string& message) {
  std::fprintf(stderr, "attnviz-cli attend: %s\n", message.c_str());
  return kExitError;
}

// Reads the optional masks shared by single- and multi-head attention.
Status LoadMasks(const NpzFile& in, int n_q, int n_k, AttentionMask* mask) {
  if (const NdArray* kp = in.Find("key_padding_mask")) {
    std::vector<uint8_t> bytes;
    Status st = ToMaskBytes(*kp, &bytes, "key_padding_mask");
    if (!st) return st;
    const bool shape_ok = (kp->Ndim() == 1 || (kp->Ndim() == 2 && kp->shape[0] == 1)) && kp->Numel() == n_k;
    if (!shape_ok) return Status::Error("key_padding_mask: expected shape (" + std::to_string(n_k) + ",), got " + kp->ShapeString());
    mask->key_padding = bytes;
  }
  if (const NdArray* am = in.Find("attn_mask")) {
    if (am->Ndim() != 2 || am->shape[0] != n_q || am->shape[1] != n_k)
      return Status::Error("attn_mask: expected shape (" + std::to_string(n_q) + ", " + std::to_string(n_k) + "), got " +
                           am->ShapeString());
    if (am->dtype == DType::Bool) {
      std::vector<uint8_t> bytes;
      Status st = ToMaskBytes(*am, &bytes, "attn_mask");
      if (!st) return st;
      mask->boolean = Eigen::Map<MaskRM>(bytes.data(), n_q, n_k);
    } else if (DTypeIsFloat(am->dtype)) {
      Status st = ToMatrix(*am, &mask->additive, "attn_mask");
      if (!st) return st;
    } else {
      return Status::Error(std::string("attn_mask: expected bool or float, got ") + DTypeName(am->dtype));
    }
  }
  return Status::Ok();
}

void PrintMatrix(const char* name, const MatrixRM& m) {
  if (m.size() > 64) return;  // small results only: the worked examples in docs/CLI.md
  std::printf("%s =\n", name);
  for (Eigen::Index i = 0; i < m.rows(); ++i) {
    std::printf("  [");
    for (Eigen::Index j = 0; j < m.cols(); ++j) std::printf("%s%.4f", j ? ", " : "", m(i, j));
    std::printf("]\n");
  }
}

int RunAttend(int argc, char** argv) {
  std::string in_path, out_path, score_name = "scaled_dot";
  int heads = 1;
  bool causal = false, compressed = false, quiet = false;
  float temperature = 1.0f;
  ArgParser args("attend",
                 "Computes attention over the arrays of an .npz: query [n_q, d_q], key [n_k, d_k], value [n_k, d_v]\n"
                 "(+ W for general, W_q, W_k, v, b for additive; in_proj_weight, in_proj_bias, out_proj_weight,\n"
                 "out_proj_bias for torch-style multi-head; key_padding_mask, attn_mask) and writes output, weights\n"
                 "and, with several heads, head_weights [h, n_q, n_k] to OUT.npz.");
  args.String("--in", &in_path, "IN.npz", "input arrays", true);
  args.String("--out", &out_path, "OUT.npz", "where to write output / weights / head_weights", true);
  args.String("--score", &score_name, "NAME", "dot | scaled_dot (default) | general | additive | cosine");
  args.Int("--heads", &heads, "H", "number of heads (multi-head, needs in_proj_weight; default 1)");
  args.Flag("--causal", &causal, "query i sees keys j <= i only");
  args.Float("--temperature", &temperature, "T", "softmax(scores / T), T > 0 (default 1; single-head only)");
  args.Flag("--compressed", &compressed, "write OUT with deflate (np.savez_compressed)");
  args.Flag("--quiet", &quiet, "print nothing on success");
  int rc = args.Parse(argc, argv);
  if (rc >= 0) return rc;

  ScoreFunction score;
  if (!ParseScoreFunction(score_name, &score))
    return args.UsageError("unknown --score '" + score_name + "' (dot, scaled_dot, general, additive, cosine)");
  if (!(temperature > 0.0f)) return args.UsageError("--temperature must be > 0");
  if (heads < 1) return args.UsageError("--heads must be >= 1");

  std::vector<uint8_t> bytes;
  Status st = ReadFileBytes(in_path, &bytes);
  if (!st) return Fail(st.message);
  NpzFile in;
  if (!(st = ParseNpz(bytes.data(), bytes.size(), &in))) return Fail(in_path + ": " + st.message);

  MatrixRM q, k, v;
  for (auto [name, m] : {std::pair<const char*, MatrixRM*>{"query", &q}, {"key", &k}, {"value", &v}}) {
    const NdArray* a = in.Find(name);
    if (!a) return Fail(in_path + ": missing array '" + name + "' (2-D)");
    if (!(st = ToMatrix(*a, m, name))) return Fail(in_path + ": " + st.message);
  }
  const int n_q = (int)q.rows(), n_k = (int)k.rows();
  const bool multi_head = in.Find("in_proj_weight") != nullptr;
  NpzFile out;
  int num_heads = 1;

  if (multi_head) {
    if (args.Seen("--score") && score != ScoreFunction::ScaledDot)
      return args.UsageError("multi-head attention (in_proj_weight present) uses scaled_dot scores only");
    if (temperature != 1.0f) return args.UsageError("--temperature is not supported with multi-head attention");
    MultiHeadParams p;
    p.num_heads = heads;
    const int E = (int)q.cols();
    if (!(st = ToMatrix(*in.Find("in_proj_weight"), &p.in_proj_weight, "in_proj_weight", 3 * E, E))) return Fail(in_path + ": " + st.message);
    if (const NdArray* a = in.Find("in_proj_bias"))
      if (!(st = ToVector(*a, &p.in_proj_bias, "in_proj_bias", 3 * E))) return Fail(in_path + ": " + st.message);
    const NdArray* ow = in.Find("out_proj_weight");
    if (!ow) return Fail(in_path + ": in_proj_weight is present but out_proj_weight [E, E] is missing");
    if (!(st = ToMatrix(*ow, &p.out_proj_weight, "out_proj_weight", E, E))) return Fail(in_path + ": " + st.message);
    if (const NdArray* a = in.Find("out_proj_bias"))
      if (!(st = ToVector(*a, &p.out_proj_bias, "out_proj_bias", E))) return Fail(in_path + ": " + st.message);
    if (!(st = LoadMasks(in, n_q, n_k, &p.mask))) return Fail(in_path + ": " + st.message);
    p.mask.causal = causal;
    MultiHeadResult r;
    if (!(st = MultiHeadAttention(q, k, v, p, &r))) return Fail(st.message);
    out.Add("output", FromMatrix(r.output));
    out.Add("weights", FromMatrix(r.mean_weights));
    if (heads > 1) {
      std::vector<float> all;
      for (const MatrixRM& w : r.head_weights) all.insert(all.end(), w.data(), w.data() + w.size());
      out.Add("head_weights", FromFloats({(int64_t)heads, n_q, n_k}, all.data()));
    }
    num_heads = heads;
    if (!quiet) PrintMatrix("weights (mean over heads)", r.mean_weights);
  } else {
    if (heads != 1) return Fail("--heads " + std::to_string(heads) + " needs multi-head weights: in_proj_weight [3E, E] and out_proj_weight [E, E] in " + in_path);
    AttentionParams p;
    p.score = score;
    p.temperature = temperature;
    if (score == ScoreFunction::General) {
      const NdArray* w = in.Find("W");
      if (!w) return Fail("--score general needs array 'W' [d_q, d_k] in " + in_path);
      if (!(st = ToMatrix(*w, &p.W, "W", q.cols(), k.cols()))) return Fail(in_path + ": " + st.message);
    }
    if (score == ScoreFunction::Additive) {
      const NdArray *wq = in.Find("W_q"), *wk = in.Find("W_k"), *va = in.Find("v");
      if (!wq || !wk || !va) return Fail("--score additive needs arrays 'W_q' [a, d_q], 'W_k' [a, d_k] and 'v' [a] in " + in_path);
      if (!(st = ToMatrix(*wq, &p.W_q, "W_q", -1, q.cols()))) return Fail(in_path + ": " + st.message);
      if (!(st = ToMatrix(*wk, &p.W_k, "W_k", p.W_q.rows(), k.cols()))) return Fail(in_path + ": " + st.message);
      if (!(st = ToVector(*va, &p.v, "v", p.W_q.rows()))) return Fail(in_path + ": " + st.message);
      if (const NdArray* b = in.Find("b"))
        if (!(st = ToVector(*b, &p.b, "b", p.W_q.rows()))) return Fail(in_path + ": " + st.message);
    }
    if (!(st = LoadMasks(in, n_q, n_k, &p.mask))) return Fail(in_path + ": " + st.message);
    p.mask.causal = causal;
    AttentionResult r;
    if (!(st = Attend(q, k, v, p, &r))) return Fail(st.message);
    out.Add("output", FromMatrix(r.output));
    out.Add("weights", FromMatrix(r.weights));
    if (!quiet) PrintMatrix("weights", r.weights);
    int fully_masked = 0;
    for (uint8_t m : r.row_fully_masked) fully_masked += m;
    if (fully_masked) std::fprintf(stderr, "attnviz-cli attend: note: %d query row(s) had every key masked (weights are 0)\n", fully_masked);
  }
  // Token arrays pass through, so the output opens in the viewer with labels (docs/FORMATS.md).
  for (const char* tokens : {"tokens", "source_tokens", "target_tokens"})
    if (const NdArray* a = in.Find(tokens)) out.Add(tokens, *a);
  for (const std::string& name : in.names) {  // say which inputs went unused
    static const char* known[] = {"query", "key", "value", "key_padding_mask", "attn_mask", "tokens", "source_tokens", "target_tokens"};
    bool used = false;
    for (const char* kn : known) used |= name == kn;
    if (multi_head) used |= name == "in_proj_weight" || name == "in_proj_bias" || name == "out_proj_weight" || name == "out_proj_bias";
    else if (score == ScoreFunction::General) used |= name == "W";
    else if (score == ScoreFunction::Additive) used |= name == "W_q" || name == "W_k" || name == "v" || name == "b";
    if (!used && !quiet) std::fprintf(stderr, "attnviz-cli attend: note: array '%s' is not used\n", name.c_str());
  }
  std::vector<uint8_t> blob;
  NpzWriteOptions wo;
  wo.compressed = compressed;
  if (!(st = WriteNpz(out, wo, &blob))) return Fail(st.message);
  if (!(st = WriteFileBytes(out_path, blob.data(), blob.size()))) return Fail(st.message);
  if (!quiet)
    std::printf("attend: %s, %d head%s, n_q=%d n_k=%d -> %s\n", multi_head ? "multi-head scaled_dot" : ScoreFunctionName(score),
                num_heads, num_heads == 1 ? "" : "s", n_q, n_k, out_path.c_str());
  return kExitOk;
}

}  // namespace
}  // namespace attnviz

ATTNVIZ_CLI_COMMAND(attend, "attention over query/key/value arrays in an .npz -> output, weights", attnviz::RunAttend)
