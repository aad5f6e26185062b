// attnviz-cli inspect: what is in a file: the arrays of an .npz/.npy (name, dtype, shape,
// range) and, when it reads as an attention file, its layers / heads / tokens.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include "cli/cli_args.h"
#include "cli/commands.h"
#include "io/attention_file.h"
#include "io/file_util.h"
#include "io/npy.h"
#include "io/npz.h"

namespace attnviz {
namespace {

void PrintArray(const std::string& name, const NdArray& a) {
  std::printf("  %-20s %-8s %-16s", name.c_str(), NpyDescr(a).c_str(), a.ShapeString().c_str());
  const int64_t n = a.Numel();
  if (a.dtype == DType::Unicode || a.dtype == DType::Bytes) {
    std::vector<std::string> s;
    const Status st = ToStrings(a, &s);
    if (!st) {
      std::printf(" (unreadable strings: %s)\n", st.message.c_str());
      return;
    }
    std::printf(" [");
    for (size_t i = 0; i < s.size() && i < 8; ++i) std::printf("%s\"%s\"", i ? ", " : "", s[i].c_str());
    std::printf("%s]\n", s.size() > 8 ? ", ..." : "");
    return;
  }
  if (n == 0) {
    std::printf(" (empty)\n");
    return;
  }
  double lo = INFINITY, hi = -INFINITY, sum = 0;
  int64_t finite = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double v = a.GetDouble(i);
    if (!std::isfinite(v)) continue;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    sum += v;
    ++finite;
  }
  if (finite) std::printf(" min %.4g  max %.4g  mean %.4g", lo, hi, sum / (double)finite);
  if (finite != n) std::printf("  (%lld NaN/inf)", (long long)(n - finite));
  std::printf("\n");
}

void PrintTokens(const char* label, const std::vector<std::string>& t) {
  std::printf("  %s (%zu):", label, t.size());
  for (size_t i = 0; i < t.size() && i < 16; ++i) std::printf(" \"%s\"", t[i].c_str());
  std::printf("%s\n", t.size() > 16 ? " ..." : "");
}

int RunInspect(int argc, char** argv) {
  std::string path;
  ArgParser args("inspect",
                 "Prints the arrays (name, dtype, shape, min/max/mean) of an .npz or .npy file, and the\n"
                 "layers / heads / tokens of an attention file (JSON or NPZ, see docs/FORMATS.md).");
  args.Positional("FILE", &path, ".npz, .npy or attention .json");
  int rc = args.Parse(argc, argv);
  if (rc >= 0) return rc;
  std::vector<uint8_t> bytes;
  Status st = ReadFileBytes(path, &bytes);
  if (!st) {
    std::fprintf(stderr, "attnviz-cli inspect: %s\n", st.message.c_str());
    return kExitError;
  }
  const bool is_npy = bytes.size() >= 6 && std::memcmp(bytes.data(), "\x93NUMPY", 6) == 0;
  const bool is_zip = bytes.size() >= 2 && bytes[0] == 'P' && bytes[1] == 'K';
  if (is_npy || is_zip) {
    NpzFile z;
    if (is_npy) {
      NdArray a;
      st = ParseNpy(bytes.data(), bytes.size(), &a);
      if (st) z.Add("(npy)", std::move(a));
    } else {
      st = ParseNpz(bytes.data(), bytes.size(), &z);
    }
    if (!st) {
      std::fprintf(stderr, "attnviz-cli inspect: %s: %s\n", path.c_str(), st.message.c_str());
      return kExitError;
    }
    std::printf("%s: %s, %zu array%s\n", path.c_str(), is_npy ? "npy" : "npz", z.names.size(),
                z.names.size() == 1 ? "" : "s");
    for (size_t i = 0; i < z.names.size(); ++i) PrintArray(z.names[i], z.arrays[i]);
  }
  AttentionFile f;
  st = LoadAttentionFile(bytes.data(), bytes.size(), &f);
  if (!st) {
    if (is_npy || is_zip) return kExitOk;  // plain arrays, not an attention file: that's fine
    std::fprintf(stderr, "attnviz-cli inspect: %s: %s\n", path.c_str(), st.message.c_str());
    return kExitError;
  }
  std::printf("attention: %zu layer%s, %d head%s in total, n_q=%d (target) x n_k=%d (source)%s\n", f.layers.size(),
              f.layers.size() == 1 ? "" : "s", f.TotalHeads(), f.TotalHeads() == 1 ? "" : "s", f.NumQueries(),
              f.NumKeys(), f.self_attention ? ", self-attention" : "");
  if (f.self_attention) {
    PrintTokens("tokens", f.source_tokens);
  } else {
    PrintTokens("source tokens", f.source_tokens);
    PrintTokens("target tokens", f.target_tokens);
  }
  for (size_t l = 0; l < f.layers.size(); ++l) {
    std::printf("  layer %zu \"%s\": %zu head%s:", l, f.layers[l].name.c_str(), f.layers[l].heads.size(),
                f.layers[l].heads.size() == 1 ? "" : "s");
    for (size_t h = 0; h < f.layers[l].heads.size() && h < 16; ++h)
      std::printf(" \"%s\"", f.layers[l].heads[h].name.c_str());
    std::printf("%s\n", f.layers[l].heads.size() > 16 ? " ..." : "");
  }
  if (f.meta.IsObject()) std::printf("  meta: %s\n", SerializeJson(f.meta).c_str());
  for (const std::string& w : f.warnings) std::printf("  warning: %s\n", w.c_str());
  return kExitOk;
}

}  // namespace
}  // namespace attnviz

ATTNVIZ_CLI_COMMAND(inspect, "list the arrays of an .npz/.npy, or the layers/heads/tokens of an attention file",
                    attnviz::RunInspect)
