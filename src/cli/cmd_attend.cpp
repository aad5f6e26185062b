// attnviz-cli attend: attention over arrays in an .npz (docs/CLI.md).
//   in:  query [n_q, d_q], key [n_k, d_k], value [n_k, d_v]; W / W_q, W_k, v, b for general and
//        additive scores; in_proj_weight, in_proj_bias, out_proj_weight, out_proj_bias for
//        torch-style multi-head attention; key_padding_mask [n_k] (bool, True = ignore);
//        attn_mask [n_q, n_k] (bool: True = not allowed; float: added to the scores)
//   out: output [n_q, d_v or E], weights [n_q, n_k], head_weights [h, n_q, n_k] when h > 1;
//        tokens / source_tokens / target_tokens are copied through when the input has them
#include <algorithm>
#include <cstdio>
#include <string>

#include "cli/cli_args.h"
#include "cli/cli_limits.h"
#include "cli/commands.h"
#include "core/attention.h"
#include "io/file_util.h"
#include "io/memory_budget.h"
#include "io/npz.h"

namespace attnviz {
namespace {

struct AttendOptions {
  std::string in_path, out_path, score_name = "scaled_dot";
  ScoreFunction score = ScoreFunction::ScaledDot;  // parsed from score_name
  int heads = 1;
  bool causal = false, compressed = false, quiet = false;
  float temperature = 1.0f;
  CliLimits limits;
};

// The weights, the scores, their copies into the output arrays and the serialized .npz: about
// five float [n_q, n_k] matrices (per head) within the memory budget.
int64_t MaxAttentionCells() {
  return std::min<int64_t>(kMaxAttentionCells, (int64_t)(DefaultMemoryBudget() / (5 * sizeof(float))));
}

int Fail(const std::string& message) {
  std::fprintf(stderr, "attnviz-cli attend: %s\n", Printable(message).c_str());
  return kExitError;
}

void DeclareFlags(ArgParser* args, AttendOptions* o) {
  args->String("--in", &o->in_path, "IN.npz", "input arrays", true);
  args->String("--out", &o->out_path, "OUT.npz", "where to write output / weights / head_weights", true);
  args->String("--score", &o->score_name, "NAME", "dot | scaled_dot (default) | general | additive | cosine");
  args->Int("--heads", &o->heads, "H", "number of heads (multi-head, needs in_proj_weight; default 1)");
  args->Flag("--causal", &o->causal, "query i sees keys j <= i only");
  args->Float("--temperature", &o->temperature, "T", "softmax(scores / T), T > 0 (default 1; single-head only)");
  args->Flag("--compressed", &o->compressed, "write OUT with deflate (np.savez_compressed)");
  args->Flag("--quiet", &o->quiet, "print nothing on success");
  DeclareLimitFlags(args, &o->limits);
}

// Usage checks that need no input file. Returns -1 to go on, else the exit code.
int CheckFlags(const ArgParser& args, AttendOptions* o) {
  if (!ParseScoreFunction(o->score_name, &o->score))
    return args.UsageError("unknown --score '" + o->score_name + "' (dot, scaled_dot, general, additive, cosine)");
  if (!(o->temperature > 0.0f)) return args.UsageError("--temperature must be > 0");
  if (o->heads < 1) return args.UsageError("--heads must be >= 1");
  return ApplyLimitFlags(args, o->limits);
}

Status ReadInput(const std::string& path, NpzFile* in) {
  std::vector<uint8_t> bytes;
  Status st = ReadFileBytes(path, &bytes);
  if (!st) return st;
  if (!(st = ParseNpz(bytes.data(), bytes.size(), in))) return Status::Error(path + ": " + st.message);
  return Status::Ok();
}

Status ReadQueryKeyValue(const NpzFile& in, const std::string& path, MatrixRM* q, MatrixRM* k, MatrixRM* v) {
  for (auto [name, m] : {std::pair<const char*, MatrixRM*>{"query", q}, {"key", k}, {"value", v}}) {
    const NdArray* a = in.Find(name);
    if (!a) return Status::Error(path + ": missing array '" + name + "' (2-D)");
    Status st = ToMatrix(*a, m, name);
    if (!st) return Status::Error(path + ": " + st.message);
  }
  return Status::Ok();
}

// Reads the optional masks shared by single- and multi-head attention.
Status LoadMasks(const NpzFile& in, int n_q, int n_k, AttentionMask* mask) {
  if (const NdArray* kp = in.Find("key_padding_mask")) {
    std::vector<uint8_t> bytes;
    Status st = ToMaskBytes(*kp, &bytes, "key_padding_mask");
    if (!st) return st;
    const bool shape_ok = (kp->Ndim() == 1 || (kp->Ndim() == 2 && kp->shape[0] == 1)) && kp->Numel() == n_k;
    if (!shape_ok)
      return Status::Error("key_padding_mask: expected shape (" + std::to_string(n_k) + ",), got " + kp->ShapeString());
    mask->key_padding = bytes;
  }
  if (const NdArray* am = in.Find("attn_mask")) {
    if (am->Ndim() != 2 || am->shape[0] != n_q || am->shape[1] != n_k)
      return Status::Error("attn_mask: expected shape (" + std::to_string(n_q) + ", " + std::to_string(n_k) +
                           "), got " + am->ShapeString());
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

// torch nn.MultiheadAttention weights: in_proj_weight [3E, E] (+ in_proj_bias [3E]),
// out_proj_weight [E, E] (+ out_proj_bias [E]); E = the queries' width.
Status ReadMultiHeadWeights(const NpzFile& in, const std::string& path, int E, MultiHeadParams* p) {
  auto in_file = [&](const Status& st) { return Status::Error(path + ": " + st.message); };
  Status st;
  if (!(st = ToMatrix(*in.Find("in_proj_weight"), &p->in_proj_weight, "in_proj_weight", 3 * E, E))) return in_file(st);
  if (const NdArray* a = in.Find("in_proj_bias"))
    if (!(st = ToVector(*a, &p->in_proj_bias, "in_proj_bias", 3 * E))) return in_file(st);
  const NdArray* ow = in.Find("out_proj_weight");
  if (!ow) return Status::Error(path + ": in_proj_weight is present but out_proj_weight [E, E] is missing");
  if (!(st = ToMatrix(*ow, &p->out_proj_weight, "out_proj_weight", E, E))) return in_file(st);
  if (const NdArray* a = in.Find("out_proj_bias"))
    if (!(st = ToVector(*a, &p->out_proj_bias, "out_proj_bias", E))) return in_file(st);
  return Status::Ok();
}

// Multi-head attention -> output, weights (mean over heads) and, with H > 1, head_weights [H, n_q, n_k].
Status AttendMultiHead(const AttendOptions& o, const NpzFile& in, const MatrixRM& q, const MatrixRM& k,
                       const MatrixRM& v, NpzFile* out) {
  const int n_q = (int)q.rows(), n_k = (int)k.rows();
  MultiHeadParams p;
  p.num_heads = o.heads;
  p.max_cells = MaxAttentionCells();
  Status st = ReadMultiHeadWeights(in, o.in_path, (int)q.cols(), &p);
  if (!st) return st;
  if (!(st = LoadMasks(in, n_q, n_k, &p.mask))) return Status::Error(o.in_path + ": " + st.message);
  p.mask.causal = o.causal;
  MultiHeadResult r;
  if (!(st = MultiHeadAttention(q, k, v, p, &r))) return st;
  out->Add("output", FromMatrix(r.output));
  out->Add("weights", FromMatrix(r.mean_weights));
  if (o.heads > 1) {
    std::vector<float> all;
    for (const MatrixRM& w : r.head_weights) all.insert(all.end(), w.data(), w.data() + w.size());
    out->Add("head_weights", FromFloats({(int64_t)o.heads, n_q, n_k}, all.data()));
  }
  if (!o.quiet) PrintMatrix("weights (mean over heads)", r.mean_weights);
  return Status::Ok();
}

// The score function's own arrays: W [d_q, d_k] for general; W_q [a, d_q], W_k [a, d_k], v [a]
// and optional b [a] for additive.
Status ReadScoreWeights(const NpzFile& in, const std::string& path, const MatrixRM& q, const MatrixRM& k,
                        AttentionParams* p) {
  auto in_file = [&](const Status& st) { return Status::Error(path + ": " + st.message); };
  Status st;
  if (p->score == ScoreFunction::General) {
    const NdArray* w = in.Find("W");
    if (!w) return Status::Error("--score general needs array 'W' [d_q, d_k] in " + path);
    if (!(st = ToMatrix(*w, &p->W, "W", q.cols(), k.cols()))) return in_file(st);
  }
  if (p->score == ScoreFunction::Additive) {
    const NdArray *wq = in.Find("W_q"), *wk = in.Find("W_k"), *va = in.Find("v");
    if (!wq || !wk || !va)
      return Status::Error("--score additive needs arrays 'W_q' [a, d_q], 'W_k' [a, d_k] and 'v' [a] in " + path);
    if (!(st = ToMatrix(*wq, &p->W_q, "W_q", -1, q.cols()))) return in_file(st);
    if (!(st = ToMatrix(*wk, &p->W_k, "W_k", p->W_q.rows(), k.cols()))) return in_file(st);
    if (!(st = ToVector(*va, &p->v, "v", p->W_q.rows()))) return in_file(st);
    if (const NdArray* b = in.Find("b"))
      if (!(st = ToVector(*b, &p->b, "b", p->W_q.rows()))) return in_file(st);
  }
  return Status::Ok();
}

// Single-head attention -> output, weights; notes rows whose keys were all masked.
Status AttendSingleHead(const AttendOptions& o, const NpzFile& in, const MatrixRM& q, const MatrixRM& k,
                        const MatrixRM& v, NpzFile* out) {
  AttentionParams p;
  p.score = o.score;
  p.temperature = o.temperature;
  p.max_cells = MaxAttentionCells();
  Status st = ReadScoreWeights(in, o.in_path, q, k, &p);
  if (!st) return st;
  if (!(st = LoadMasks(in, (int)q.rows(), (int)k.rows(), &p.mask))) return Status::Error(o.in_path + ": " + st.message);
  p.mask.causal = o.causal;
  AttentionResult r;
  if (!(st = Attend(q, k, v, p, &r))) return st;
  out->Add("output", FromMatrix(r.output));
  out->Add("weights", FromMatrix(r.weights));
  if (!o.quiet) PrintMatrix("weights", r.weights);
  int fully_masked = 0;
  for (uint8_t m : r.row_fully_masked) fully_masked += m;
  if (fully_masked)
    std::fprintf(stderr, "attnviz-cli attend: note: %d query row(s) had every key masked (weights are 0)\n",
                 fully_masked);
  return Status::Ok();
}

// Token arrays pass through, so the output opens in the viewer with labels (docs/FORMATS.md).
void CopyTokens(const NpzFile& in, NpzFile* out) {
  for (const char* tokens : {"tokens", "source_tokens", "target_tokens"})
    if (const NdArray* a = in.Find(tokens)) out->Add(tokens, *a);
}

// True if the chosen attention reads the input array `name`.
bool IsUsedInput(const std::string& name, bool multi_head, ScoreFunction score) {
  static const char* always[] = {"query",     "key",    "value",         "key_padding_mask",
                                 "attn_mask", "tokens", "source_tokens", "target_tokens"};
  for (const char* a : always)
    if (name == a) return true;
  if (multi_head)
    return name == "in_proj_weight" || name == "in_proj_bias" || name == "out_proj_weight" || name == "out_proj_bias";
  if (score == ScoreFunction::General) return name == "W";
  if (score == ScoreFunction::Additive) return name == "W_q" || name == "W_k" || name == "v" || name == "b";
  return false;
}

void NoteUnusedInputs(const NpzFile& in, bool multi_head, ScoreFunction score) {
  for (const std::string& name : in.names)
    if (!IsUsedInput(name, multi_head, score))
      std::fprintf(stderr, "attnviz-cli attend: note: array '%s' is not used\n", PrintableName(name).c_str());
}

Status WriteOutput(const NpzFile& out, const std::string& path, bool compressed) {
  std::vector<uint8_t> blob;
  NpzWriteOptions wo;
  wo.compressed = compressed;
  Status st = WriteNpz(out, wo, &blob);
  if (!st) return st;
  return WriteFileBytes(path, blob.data(), blob.size());
}

int RunAttend(int argc, char** argv) {
  AttendOptions o;
  ArgParser args("attend",
                 "Computes attention over the arrays of an .npz: query [n_q, d_q], key [n_k, d_k], value [n_k, d_v]\n"
                 "(+ W for general, W_q, W_k, v, b for additive; in_proj_weight, in_proj_bias, out_proj_weight,\n"
                 "out_proj_bias for torch-style multi-head; key_padding_mask, attn_mask) and writes output, weights\n"
                 "and, with several heads, head_weights [h, n_q, n_k] to OUT.npz.");
  DeclareFlags(&args, &o);
  if (int rc = args.Parse(argc, argv); rc >= 0) return rc;
  if (int rc = CheckFlags(args, &o); rc >= 0) return rc;

  NpzFile in;
  MatrixRM q, k, v;
  Status st = ReadInput(o.in_path, &in);
  if (!st || !(st = ReadQueryKeyValue(in, o.in_path, &q, &k, &v))) return Fail(st.message);
  const bool multi_head = in.Find("in_proj_weight") != nullptr;
  if (multi_head) {
    if (args.Seen("--score") && o.score != ScoreFunction::ScaledDot)
      return args.UsageError("multi-head attention (in_proj_weight present) uses scaled_dot scores only");
    if (o.temperature != 1.0f) return args.UsageError("--temperature is not supported with multi-head attention");
  } else if (o.heads != 1) {
    return Fail("--heads " + std::to_string(o.heads) +
                " needs multi-head weights: in_proj_weight [3E, E] and out_proj_weight [E, E] in " + o.in_path);
  }
  NpzFile out;
  st = multi_head ? AttendMultiHead(o, in, q, k, v, &out) : AttendSingleHead(o, in, q, k, v, &out);
  if (!st) return Fail(st.message);
  CopyTokens(in, &out);
  if (!o.quiet) NoteUnusedInputs(in, multi_head, o.score);
  if (!(st = WriteOutput(out, o.out_path, o.compressed))) return Fail(st.message);
  if (!o.quiet)
    std::printf("attend: %s, %d head%s, n_q=%d n_k=%d -> %s\n",
                multi_head ? "multi-head scaled_dot" : ScoreFunctionName(o.score), o.heads, o.heads == 1 ? "" : "s",
                (int)q.rows(), (int)k.rows(), o.out_path.c_str());
  return kExitOk;
}

}  // namespace
}  // namespace attnviz

ATTNVIZ_CLI_COMMAND(attend, "attention over query/key/value arrays in an .npz -> output, weights", attnviz::RunAttend)
