// attnviz-cli inspect: what is in a file: the arrays of an .npz/.npy (name, dtype, shape,
// range) and, when it reads as an attention file, its layers / heads / tokens. A safetensors file is
// described from its header alone (tensors, sets, shapes, dtypes): its weights are never read.
// Everything that came from the file is printed through Printable (no terminal escapes run).
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>

#include "cli/cli_args.h"
#include "cli/cli_lazy.h"
#include "cli/cli_limits.h"
#include "cli/commands.h"
#include "core/head_stats.h"
#include "io/attention_file.h"
#include "io/byte_source.h"
#include "io/file_util.h"
#include "io/lazy_attention.h"
#include "io/npy.h"
#include "io/npz.h"
#include "io/utf8.h"

namespace attnviz {
namespace {

int Fail(const std::string& message) {
  std::fprintf(stderr, "attnviz-cli inspect: %s\n", Printable(message).c_str());
  return kExitError;
}

struct RangeStats {
  double lo = INFINITY, hi = -INFINITY, sum = 0;
  int64_t finite = 0;
  void Add(double v) {
    if (!std::isfinite(v)) return;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    sum += v;
    ++finite;
  }
};

template <typename T>
void Accumulate(const NdArray& a, RangeStats* r) {
  const uint8_t* p = a.data.data();
  const int64_t n = a.Numel();
  for (int64_t i = 0; i < n; ++i) {
    T v;
    std::memcpy(&v, p + i * (int64_t)sizeof(T), sizeof(T));
    r->Add((double)v);
  }
}

void PrintArray(const std::string& name, const NdArray& a) {
  std::printf("  %-20s %-8s %-16s", PrintableName(name).c_str(), NpyDescr(a).c_str(), a.ShapeString().c_str());
  const int64_t n = a.Numel();
  if (a.dtype == DType::Unicode || a.dtype == DType::Bytes) {
    std::printf(" [");  // the first few only: a string array may hold millions
    for (int64_t i = 0; i < n && i < 8; ++i)
      std::printf("%s\"%s\"", i ? ", " : "", PrintableText(StringElement(a, i), 40).c_str());
    std::printf("%s]\n", n > 8 ? ", ..." : "");
    return;
  }
  if (n == 0) {
    std::printf(" (empty)\n");
    return;
  }
  RangeStats r;
  switch (a.dtype) {  // typed loops: an array may hold 2^31 elements
    case DType::Float32:
      Accumulate<float>(a, &r);
      break;
    case DType::Float64:
      Accumulate<double>(a, &r);
      break;
    case DType::UInt8:
    case DType::Bool:
      Accumulate<uint8_t>(a, &r);
      break;
    default:
      for (int64_t i = 0; i < n; ++i) r.Add(a.GetDouble(i));
      break;
  }
  const double lo = r.lo, hi = r.hi, sum = r.sum;
  const int64_t finite = r.finite;
  if (finite) std::printf(" min %.4g  max %.4g  mean %.4g", lo, hi, sum / (double)finite);
  if (finite != n) std::printf("  (%lld NaN/inf)", (long long)(n - finite));
  std::printf("\n");
}

void PrintTokens(const char* label, const std::vector<std::string>& t) {
  std::printf("  %s (%zu):", label, t.size());
  for (size_t i = 0; i < t.size() && i < 16; ++i) std::printf(" \"%s\"", PrintableText(t[i], 40).c_str());
  std::printf("%s\n", t.size() > 16 ? " ..." : "");
}

// Lists the arrays of an .npy/.npz into *z (a bare .npy's array is called "attention").
// *has_attention: the archive holds an 'attention' array, so it is meant as an attention file and
// must also validate as one. The attention file is then read from these arrays: one parse.
Status ListArrays(const std::string& path, const std::vector<uint8_t>& bytes, bool is_npy, NpzFile* out,
                  bool* has_attention) {
  NpzFile& z = *out;
  Status st;
  if (is_npy) {
    NdArray a;
    st = ParseNpy(bytes.data(), bytes.size(), &a);
    if (st) z.Add("attention", std::move(a));
  } else {
    st = ParseNpz(bytes.data(), bytes.size(), &z);
  }
  if (!st) return Status::Error(path + ": " + st.message);
  std::printf("%s: %s, %zu array%s\n", Printable(path).c_str(), is_npy ? "npy" : "npz", z.names.size(),
              z.names.size() == 1 ? "" : "s");
  for (size_t i = 0; i < z.names.size(); ++i) PrintArray(z.names[i], z.arrays[i]);
  *has_attention = z.Find("attention") != nullptr && !is_npy;
  return Status::Ok();
}

void PrintAttentionFile(const AttentionFile& f) {
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
    std::printf("  layer %zu \"%s\": %zu head%s:", l, PrintableName(f.layers[l].name).c_str(), f.layers[l].heads.size(),
                f.layers[l].heads.size() == 1 ? "" : "s");
    for (size_t h = 0; h < f.layers[l].heads.size() && h < 16; ++h)
      std::printf(" \"%s\"", PrintableName(f.layers[l].heads[h].name).c_str());
    std::printf("%s\n", f.layers[l].heads.size() > 16 ? " ..." : "");
  }
  if (f.meta.IsObject()) std::printf("  meta: %s\n", Printable(SerializeJson(f.meta)).c_str());
  for (const std::string& w : f.warnings) std::printf("  warning: %s\n", Printable(w).c_str());
}

// A head's statistics for --heads: *ok false when it has none (weights not finite, or stored
// statistics that cannot be); an error stops the listing.
using HeadStatsSource = std::function<Status(int layer, int head, HeadStats* out, bool* ok)>;

// --heads: every head's statistics (core/head_stats.h, as the viewer's grid shows them), in layer
// order or sorted by one of them as the grid sorts (entropy lowest first, the others highest first).
// heads[l] is layer l's head count; the statistics come one head at a time (a file read lazily).
Status PrintHeadStats(const std::vector<int>& heads, int n_keys, const HeadStatsSource& stats,
                      const std::string& sort) {
  struct Row {
    int layer, head;
    HeadStats s;
    bool ok;
  };
  std::vector<Row> rows;
  int total = 0, done = 0;
  for (int n : heads) total += n;
  const bool progress = total > 64 && isatty(2);
  for (size_t l = 0; l < heads.size(); ++l)
    for (int h = 0; h < heads[l]; ++h) {
      Row r{(int)l, h, {}, false};
      const Status st = stats((int)l, h, &r.s, &r.ok);
      if (!st) return Status::Error("layer " + std::to_string(l) + " head " + std::to_string(h) + ": " + st.message);
      rows.push_back(r);
      if (progress && (++done % 16 == 0 || done == total))
        std::fprintf(stderr, "\rinspect: head %d of %d", done, total);
    }
  if (progress) std::fprintf(stderr, "\n");
  auto key = [&](const Row& r) {
    if (sort == "entropy") return r.s.entropy;
    if (sort == "max_weight") return -r.s.max_weight;
    if (sort == "first_token") return -r.s.first_token;
    return -r.s.diagonality;
  };
  if (sort != "layer")
    std::stable_sort(rows.begin(), rows.end(), [&](const Row& a, const Row& b) {
      const bool ka = a.ok && a.s.rows_counted > 0, kb = b.ok && b.s.rows_counted > 0;  // all-zero heads have none
      return ka != kb ? ka : (ka && key(a) < key(b));                                   // heads without statistics last
    });
  std::printf("heads (%s; entropy in nats, of at most %.3f):\n",
              sort == "layer"
                  ? "layer order"
                  : ("sorted by " + sort + (sort == "entropy" ? ", lowest first" : ", highest first")).c_str(),
              std::log((double)std::max(1, n_keys)));
  std::printf("  layer  head  entropy  max_weight  first_token  diagonality  offset (mass)\n");
  for (const Row& r : rows) {
    if (!r.ok || r.s.rows_counted == 0) {
      std::printf("  %5d  %4d  (no statistics: %s)\n", r.layer, r.head,
                  r.ok ? "every row is zero" : "weights not finite, or stored ones impossible");
      continue;
    }
    std::printf("  %5d  %4d  %7.3f  %10.3f  %11.3f  %11.3f  %+6d (%.3f)\n", r.layer, r.head, r.s.entropy,
                r.s.max_weight, r.s.first_token, r.s.diagonality, r.s.dominant_offset, r.s.dominant_offset_mass);
  }
  return Status::Ok();
}

void PrintHeadStats(const AttentionFile& f, const std::string& sort) {
  std::vector<int> heads;
  for (const AttentionFile::Layer& l : f.layers) heads.push_back((int)l.heads.size());
  (void)PrintHeadStats(
      heads, f.NumKeys(),
      [&](int l, int h, HeadStats* out, bool* ok) {
        *ok = ComputeHeadStats(f.layers[(size_t)l].heads[(size_t)h].weights, out).ok;
        return Status::Ok();
      },
      sort);
}

// A set's stored statistics (one read), [heads of all layers, kHeadStatsColumns].
Status ReadStoredStats(LazyAttentionFile* file, int set, MatrixRM* out) {
  LazyRequest r;
  r.set = set, r.stats = true;
  file->Submit(r);
  LazyResult res;
  while (!file->PopResult(&res)) file->Pump(1000);
  if (!res.status) return res.status;
  *out = std::move(res.weights);
  return Status::Ok();
}

// --heads of a file read lazily: every set's heads. The statistics its writer stored (attnviz.save,
// attnviz-cli convert) are printed as they are, unless `recompute`; otherwise every head is read, one
// at a time (the file may be tens of GB).
int PrintLazyHeadStats(const std::string& path, const std::string& sort, bool recompute) {
  std::unique_ptr<ByteSource> source;
  Status st = OpenFileSource(path, &source);
  LazyInput in;
  if (!st || !(st = in.Open(std::move(source)))) return Fail(path + ": " + st.message);
  std::vector<std::string> warnings;
  for (size_t s = 0; s < in.shape.sets.size(); ++s) {
    const AttentionFile& f = in.shape.sets[s].data;
    const LazySet& ls = in.file.index().sets[s];
    std::vector<int> heads, first;
    for (const AttentionFile::Layer& l : f.layers) {
      first.push_back(first.empty() ? 0 : first.back() + heads.back());
      heads.push_back((int)l.heads.size());
    }
    if (in.shape.sets.size() > 1) std::printf("set \"%s\":\n", PrintableName(in.shape.sets[s].name).c_str());
    MatrixRM stored;
    const bool use_stored = ls.stats && !recompute;
    if (use_stored && !(st = ReadStoredStats(&in.file, (int)s, &stored))) return Fail(path + ": " + st.message);
    if (use_stored) std::printf("(statistics stored in the file by its writer; --recompute reads every head)\n");
    MatrixRM scratch;
    st = PrintHeadStats(
        heads, f.NumKeys(),
        [&](int l, int h, HeadStats* out, bool* ok) {
          if (use_stored) {
            *ok = HeadStatsFromRow(stored.data() + (size_t)(first[(size_t)l] + h) * kHeadStatsColumns, ls.n_q, ls.n_k,
                                   out);
            return Status::Ok();
          }
          const Status read = in.Head((int)s, l, h, &scratch, &warnings);
          if (read) *ok = ComputeHeadStats(scratch, out).ok;
          return read;
        },
        sort);
    if (!st) return Fail(path + ": " + st.message);
  }
  for (const std::string& w : warnings) std::printf("  warning: %s\n", Printable(w).c_str());
  return kExitOk;
}

void PrintLazySet(const LazySet& set) {
  int heads = 0;
  for (const LazyLayer& l : set.layers) heads += l.heads;
  std::printf("set \"%s\" (%s): %zu layer%s, %d head%s in total, n_q=%lld (target) x n_k=%lld (source)%s\n",
              PrintableName(set.name).c_str(), AttentionKindName(set.kind), set.layers.size(),
              set.layers.size() == 1 ? "" : "s", heads, heads == 1 ? "" : "s", (long long)set.n_q, (long long)set.n_k,
              set.self_attention ? ", self-attention" : "");
  if (set.self_attention) {
    PrintTokens("tokens", set.key_tokens);
  } else {
    PrintTokens("source tokens", set.key_tokens);
    PrintTokens("target tokens", set.query_tokens);
  }
  for (size_t l = 0; l < set.layers.size(); ++l)
    std::printf("  layer %zu \"%s\": %d head%s, %s\n", l, PrintableName(set.layers[l].name).c_str(),
                set.layers[l].heads, set.layers[l].heads == 1 ? "" : "s", StDTypeName(set.layers[l].dtype));
  using attnviz::LazyPool;
  if (set.Has(LazyPool::Overview))
    std::printf("  overviews: %d x %d per head (max-pooled)\n", set.PoolRows(LazyPool::Overview),
                set.PoolCols(LazyPool::Overview));
  else
    std::printf("  overviews: none stored (the viewer reads each head whole to make one)\n");
  if (set.Has(LazyPool::Thumb))
    std::printf("  thumbnails: %d x %d per head (max-pooled; the grid draws them in cells up to %d pixels)\n",
                set.PoolRows(LazyPool::Thumb), set.PoolCols(LazyPool::Thumb), attnviz::kThumbSide);
  if (set.Has(LazyPool::Screen))
    std::printf("  screen copies: %d x %d per head (max-pooled; the heatmap draws them while a head is read)\n",
                set.PoolRows(LazyPool::Screen), set.PoolCols(LazyPool::Screen));
  std::printf(set.stats ? "  statistics: stored for every head (the grid sorts before reading; --heads prints them)\n"
                        : "  statistics: none stored (computed from each head once it is read)\n");
}

// A safetensors file: its header only (the file may be tens of GB).
int InspectSafetensors(const std::string& path, std::unique_ptr<ByteSource> source) {
  std::vector<uint8_t> prefix;
  Status st = ReadLazyPrefix(source.get(), &prefix);
  SafetensorsHeader header;
  if (st) st = ParseSafetensorsHeader(prefix.data(), prefix.size(), source->Size(), &header);
  if (!st) return Fail(path + ": " + st.message);
  std::printf("%s: safetensors, %s, %zu tensor%s (header %s; the weights are not read)\n", Printable(path).c_str(),
              FormatApproxByteSize(header.file_size).c_str(), header.tensors.size(),
              header.tensors.size() == 1 ? "" : "s", FormatApproxByteSize(header.data_start).c_str());
  for (size_t i = 0; i < header.tensors.size() && i < 64; ++i) {
    const SafetensorsTensor& t = header.tensors[i];
    std::string shape = "(";
    for (size_t d = 0; d < t.shape.size(); ++d) shape += (d ? ", " : "") + std::to_string(t.shape[d]);
    shape += t.shape.size() == 1 ? ",)" : ")";
    std::printf("  %-20s %-8s %-22s %s\n", PrintableName(t.name).c_str(), StDTypeName(t.dtype), shape.c_str(),
                FormatApproxByteSize(t.end - t.begin).c_str());
  }
  if (header.tensors.size() > 64) std::printf("  ... %zu more\n", header.tensors.size() - 64);
  LazyAttentionIndex index;
  st = ReadLazyAttentionIndex(std::move(header), &index);
  if (!st) return Fail(path + ": not an attention file: " + st.message);
  std::printf("attention (%s layout): %zu set%s\n", index.attnviz_layout ? "attnviz" : "plain", index.sets.size(),
              index.sets.size() == 1 ? "" : "s");
  for (const LazySet& set : index.sets) PrintLazySet(set);
  if (index.meta.IsObject()) std::printf("  meta: %s\n", Printable(SerializeJson(index.meta)).c_str());
  for (const std::string& w : index.warnings) std::printf("  warning: %s\n", Printable(w).c_str());
  return kExitOk;
}

// A .npy or .npz too big to read whole (NpyOpensLazily, NpzOpensLazily): its header (and an .npz's
// directory and small members) only.
int InspectArrayLazily(const std::string& path, std::unique_ptr<ByteSource> source) {
  std::vector<uint8_t> prefix;
  Status st = ReadLazyPrefix(source.get(), &prefix);
  LazyAttentionIndex index;
  const bool npz = st && LooksLikeLazyNpz(prefix.data(), prefix.size());
  if (st)
    st = npz ? ReadLazyNpzIndex(prefix.data(), prefix.size(), &index)
             : ReadLazyNpyIndex(prefix.data(), prefix.size(), source->Size(), &index);
  if (!st) return Fail(path + ": " + st.message);
  std::printf("%s: %s, %s, too big to read whole: read lazily, head by head (the weights are not read)\n",
              Printable(path).c_str(), npz ? "npz (its attention stored as it is)" : "npy",
              FormatApproxByteSize(index.header.file_size).c_str());
  for (const LazySet& set : index.sets) PrintLazySet(set);
  for (const std::string& w : index.warnings) std::printf("  warning: %s\n", Printable(w).c_str());
  return kExitOk;
}

int RunInspect(int argc, char** argv) {
  std::string path, sort = "layer";
  bool heads = false, recompute = false;
  CliLimits limits;
  ArgParser args(
      "inspect",
      "Prints the arrays (name, dtype, shape, min/max/mean) of an .npz or .npy file, and the\n"
      "layers / heads / tokens of an attention file (JSON or NPZ, see docs/FORMATS.md). A\n"
      "safetensors file (or a .npy or .npz too big to read whole) is described from its header: tensors, sets,\n"
      "shapes, dtypes (no weights read).\n"
      "Exit 1 when the file cannot be read, or holds an 'attention' array that is not valid.");
  args.Positional("FILE", &path, ".npz, .npy, .safetensors or attention .json");
  args.Flag("--heads", &heads,
            "also every head's statistics: entropy, max weight, first-token weight, diagonality, dominant offset");
  args.String("--sort", &sort, "KEY",
              "order of --heads: layer (default) | entropy (lowest first) | max_weight | first_token | diagonality");
  args.Flag("--recompute", &recompute,
            "with --heads on a file that stores its heads' statistics (attnviz.save, attnviz-cli convert):\n"
            "read every head and compute them instead of printing the stored ones");
  DeclareLimitFlags(&args, &limits);
  if (int rc = args.Parse(argc, argv); rc >= 0) return rc;
  if (sort != "layer" && sort != "entropy" && sort != "max_weight" && sort != "first_token" && sort != "diagonality")
    return args.UsageError("unknown --sort '" + sort + "' (layer, entropy, max_weight, first_token, diagonality)");
  if (args.Seen("--sort") || recompute) heads = true;
  if (int rc = ApplyLimitFlags(args, limits); rc >= 0) return rc;
  std::unique_ptr<ByteSource> source;  // a safetensors file is not read whole (other formats are, below)
  uint8_t first[16] = {};
  // A length, then '{' at byte 8, is a safetensors file (its header then says what is wrong, e.g. a
  // length beyond a truncated file); JSON, NPY and NPZ start otherwise.
  if (OpenFileSource(path, &source) && source->Size() >= 16 && source->Read(0, 16, first) &&
      (LooksLikeSafetensors(first, sizeof(first), source->Size()) ||
       (first[8] == '{' && first[0] != '{' && first[0] != '[' && first[0] != 0x93 && first[0] != 'P'))) {
    const int rc = InspectSafetensors(path, std::move(source));
    return rc == kExitOk && heads ? PrintLazyHeadStats(path, sort, recompute) : rc;  // read one head at a time
  }
  if (source && (LooksLikeNpy(first, sizeof(first)) || LooksLikeZip(first, sizeof(first))) &&
      OpensLazily(source.get())) {
    const int rc = InspectArrayLazily(path, std::move(source));
    return rc == kExitOk && heads ? PrintLazyHeadStats(path, sort, recompute) : rc;
  }
  source.reset();
  std::vector<uint8_t> bytes;
  Status st = ReadFileBytes(path, &bytes);
  if (!st) return Fail(st.message);
  const bool is_npy = bytes.size() >= 6 && std::memcmp(bytes.data(), "\x93NUMPY", 6) == 0;
  const bool is_zip = bytes.size() >= 2 && bytes[0] == 'P' && bytes[1] == 'K';
  bool has_attention = false;
  NpzFile arrays;
  if ((is_npy || is_zip) && !(st = ListArrays(path, bytes, is_npy, &arrays, &has_attention))) return Fail(st.message);
  AttentionFile f;
  st = is_npy || is_zip ? AttentionFileFromArrays(arrays, &f) : LoadAttentionFile(bytes.data(), bytes.size(), &f);
  if (!st) {
    if ((is_npy || is_zip) && !has_attention) {  // plain arrays, not an attention file: that's fine
      std::printf("not an attention file: %s\n", Printable(st.message).c_str());
      return kExitOk;
    }
    return Fail(path + ": " + (has_attention ? "not a valid attention file: " : "") + st.message);
  }
  PrintAttentionFile(f);
  if (heads) PrintHeadStats(f, sort);
  return kExitOk;
}

}  // namespace
}  // namespace attnviz

ATTNVIZ_CLI_COMMAND(inspect, "list the arrays of an .npz/.npy, or the layers/heads/tokens of an attention file",
                    attnviz::RunInspect)
