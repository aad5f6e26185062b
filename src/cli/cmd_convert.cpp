// attnviz-cli convert: an attention file from one format into another (docs/FORMATS.md), mainly into
// the lazily read safetensors layout for big models (docs/PERFORMANCE.md, "Big files"):
//   attnviz-cli convert IN OUT [--dtype f16|bf16|f32] [--tokens FILE | --query-tokens FILE --key-tokens FILE]
//                              [--max-memory SIZE]
// IN: attention JSON (v1, v2, BertViz), NPZ, NPY or safetensors; OUT by its extension: .safetensors
// (every set, max-pooled overviews and, for heads over 1024 on a side, 1024^2 screen copies, heads
// streamed to disk), .json (version 2) or .npz (one set).
// A .npy input is decoded straight into its matrices (io/attention_loader.h). A safetensors input (or
// a .npy too big for that: io/lazy_attention.h) is read head by head: into a .safetensors output one
// head at a time, whatever the file's size (WriteLazyAttentionStreamed); into .json or .npz whole,
// within the memory budget.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "cli/cli_args.h"
#include "cli/cli_lazy.h"
#include "cli/cli_limits.h"
#include "cli/commands.h"
#include "io/attention_loader.h"
#include "io/attention_sets.h"
#include "io/byte_source.h"
#include "io/file_util.h"
#include "io/json.h"
#include "io/lazy_attention.h"
#include "io/utf8.h"

namespace attnviz {
namespace {

int Fail(const std::string& message) {
  std::fprintf(stderr, "attnviz-cli convert: %s\n", Printable(message).c_str());
  return kExitError;
}

bool EndsWith(const std::string& s, const char* suffix) {
  const std::string x(suffix);
  return s.size() >= x.size() && s.compare(s.size() - x.size(), x.size(), x) == 0;
}

// Every head of a file read lazily into a document (within the memory budget: .json and .npz outputs).
Status ReadLazy(LazyInput* in, AttentionDocument* doc) {
  MemoryBudget budget;
  *doc = in->shape;
  for (size_t s = 0; s < doc->sets.size(); ++s) {
    const LazySet& ls = in->file.index().sets[s];
    for (size_t l = 0; l < doc->sets[s].data.layers.size(); ++l)
      for (size_t h = 0; h < doc->sets[s].data.layers[l].heads.size(); ++h) {
        Status st = budget.Charge((uint64_t)(ls.n_q * ls.n_k) * 4, "convert: the weights of every head");
        if (!st) return Status::Error(st.message + " (a .safetensors output needs one head at a time)");
        if (!(st = in->Head((int)s, (int)l, (int)h, &doc->sets[s].data.layers[l].heads[h].weights, &doc->warnings)))
          return st;
      }
  }
  return Status::Ok();
}

// A list of tokens from a file: a JSON array of strings, or text with one token per line.
Status ReadTokenList(const std::string& path, std::vector<std::string>* out) {
  std::vector<uint8_t> bytes;
  Status st = ReadFileBytes(path, &bytes);
  if (!st) return st;
  const std::string text(bytes.begin(), bytes.end());
  const size_t first = text.find_first_not_of(" \t\r\n");
  const AttentionFileLimits limits;
  out->clear();
  if (first != std::string::npos && text[first] == '[') {
    JsonValue v;
    if (!(st = ParseJson(text, &v))) return Status::Error(path + ": " + st.message);
    if (!v.IsArray() || (v.items.empty() && !v.numbers.empty()))
      return Status::Error(path + ": expected a JSON array of strings");
    for (const JsonValue& t : v.items) {
      if (t.type != JsonType::String) return Status::Error(path + ": expected a JSON array of strings");
      out->push_back(t.string);
    }
  } else {
    if (!IsValidUtf8(text)) return Status::Error(path + ": the tokens are not UTF-8");
    for (size_t at = 0; at < text.size();) {
      size_t end = text.find('\n', at);
      if (end == std::string::npos) end = text.size();
      std::string line = text.substr(at, end - at);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      out->push_back(std::move(line));
      at = end + 1;
    }
  }
  for (const std::string& t : *out)
    if (t.size() > limits.max_token_bytes)
      return Status::Error(path + ": a token of " + std::to_string(t.size()) + " bytes, over the limit of " +
                           std::to_string(limits.max_token_bytes));
  return Status::Ok();
}

// --tokens / --query-tokens / --key-tokens: the tokens of a file of one set (a .npy has none).
Status ApplyTokenFiles(const std::string& both, const std::string& query, const std::string& key,
                       AttentionDocument* doc) {
  if (both.empty() && query.empty() && key.empty()) return Status::Ok();
  if (doc->sets.size() != 1)
    return Status::Error("--tokens applies to a file of one attention set; this one has " +
                         std::to_string(doc->sets.size()));
  AttentionFile& f = doc->sets[0].data;
  auto read = [&](const std::string& path, const std::vector<std::string>& now, const char* what,
                  std::vector<std::string>* into) {
    std::vector<std::string> list;
    Status st = ReadTokenList(path, &list);
    if (!st) return st;
    if (list.size() != now.size())
      return Status::Error(path + ": " + std::to_string(list.size()) + " tokens, but the attention has " +
                           std::to_string(now.size()) + " " + what);
    *into = std::move(list);
    return Status::Ok();
  };
  Status st;
  if (!both.empty()) {
    if (f.target_tokens.size() != f.source_tokens.size())
      return Status::Error("--tokens needs as many queries as keys (" + std::to_string(f.target_tokens.size()) + " x " +
                           std::to_string(f.source_tokens.size()) + "): use --query-tokens and --key-tokens");
    if (!(st = read(both, f.source_tokens, "keys", &f.source_tokens))) return st;
    f.target_tokens = f.source_tokens;
    f.self_attention = true;
  }
  if (!query.empty() && !(st = read(query, f.target_tokens, "queries", &f.target_tokens))) return st;
  if (!key.empty() && !(st = read(key, f.source_tokens, "keys", &f.source_tokens))) return st;
  if (!query.empty() || !key.empty()) f.self_attention = f.target_tokens == f.source_tokens;
  // The readers' warnings about missing tokens ("... tokens ...; using indices") no longer hold.
  auto stale = [](const std::string& w) { return w.find("using indices") != std::string::npos; };
  for (std::vector<std::string>* list : {&doc->warnings, &f.warnings})
    list->erase(std::remove_if(list->begin(), list->end(), stale), list->end());
  return Status::Ok();
}

int Wrote(const std::string& out, const AttentionDocument& doc) {
  int heads = 0;
  for (const AttentionSet& s : doc.sets)
    for (const AttentionFile::Layer& l : s.data.layers) heads += (int)l.heads.size();
  std::printf("wrote %s: %zu set(s), %d head(s)\n", Printable(out).c_str(), doc.sets.size(), heads);
  return kExitOk;
}

// Any other attention file, read in pieces (a .npy straight into its matrices).
Status ReadEager(const std::string& path, AttentionDocument* doc) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return Status::Error("cannot open '" + path + "': " + std::strerror(errno));
  std::fseek(f, 0, SEEK_END);
  const long size = std::ftell(f);
  std::fseek(f, 0, SEEK_SET);
  AttentionLoader loader;
  Status st = loader.Begin(size > 0 ? (uint64_t)size : 0);
  std::vector<uint8_t> piece(size_t(8) << 20);
  size_t n;
  while (st && (n = std::fread(piece.data(), 1, piece.size(), f)) > 0) st = loader.Feed(piece.data(), n);
  std::fclose(f);
  return st ? loader.Finish(doc) : st;
}

int RunConvert(int argc, char** argv) {
  std::string in, out, dtype_name = "f16", tokens, query_tokens, key_tokens;
  CliLimits limits;
  ArgParser args("convert",
                 "an attention file into another format: .safetensors (read lazily by the viewer: big models), "
                 ".json (version 2) or .npz (one set)");
  args.Positional("IN", &in, "attention JSON, NPZ, NPY or safetensors");
  args.Positional("OUT", &out, "the file to write: .safetensors, .json or .npz");
  args.String("--dtype", &dtype_name, "f16|bf16|f32", "weights in the safetensors file (default f16)");
  args.String("--tokens", &tokens, "FILE",
              "the tokens (queries and keys alike) of a file of one set, e.g. a .npy, which has none: a JSON "
              "array of strings, or one token per line");
  args.String("--query-tokens", &query_tokens, "FILE", "the queries' tokens (rows), as --tokens");
  args.String("--key-tokens", &key_tokens, "FILE", "the keys' tokens (columns), as --tokens");
  DeclareLimitFlags(&args, &limits);
  if (int rc = args.Parse(argc, argv); rc >= 0) return rc;
  if (int rc = ApplyLimitFlags(args, limits); rc >= 0) return rc;
  StDType dtype;
  if (dtype_name == "f16")
    dtype = StDType::F16;
  else if (dtype_name == "bf16")
    dtype = StDType::BF16;
  else if (dtype_name == "f32")
    dtype = StDType::F32;
  else
    return args.UsageError("--dtype must be f16, bf16 or f32");
  const bool to_st = EndsWith(out, ".safetensors"), to_json = EndsWith(out, ".json"), to_npz = EndsWith(out, ".npz");
  if (!to_st && !to_json && !to_npz) return args.UsageError("OUT must end in .safetensors, .json or .npz");

  std::unique_ptr<ByteSource> source;
  Status st = OpenFileSource(in, &source);
  if (!st) return Fail(st.message);
  const bool lazy = OpensLazily(source.get());
  AttentionDocument doc;
  LazyInput lazy_in;
  if (lazy && !(st = lazy_in.Open(std::move(source)))) return Fail(in + ": " + st.message);
  if (lazy && !(st = ApplyTokenFiles(tokens, query_tokens, key_tokens, &lazy_in.shape))) return Fail(st.message);
  if (lazy && to_st) {  // streamed: one head in memory at a time, whatever the file's size
    doc = lazy_in.shape;
    st = WriteLazyAttentionStreamed(lazy_in.shape, dtype, out, [&](int s, int l, int h, MatrixRM* w) {
      const Status got = lazy_in.Head(s, l, h, w, &doc.warnings);
      return got ? got : Status::Error(in + ": " + got.message);
    });
    for (const std::string& w : doc.warnings) std::fprintf(stderr, "warning: %s\n", Printable(w).c_str());
    if (!st) return Fail(st.message);
    return Wrote(out, doc);
  }
  st = lazy ? ReadLazy(&lazy_in, &doc) : ReadEager(in, &doc);
  if (!st) return Fail(in + ": " + st.message);
  if (!lazy && !(st = ApplyTokenFiles(tokens, query_tokens, key_tokens, &doc))) return Fail(st.message);
  for (const std::string& w : doc.warnings) std::fprintf(stderr, "warning: %s\n", Printable(w).c_str());

  if (to_st) {
    st = WriteLazyAttention(doc, dtype, out);
  } else if (to_json) {
    st = WriteFileString(out, SaveAttentionDocumentJson(doc) + "\n");
  } else {
    if (doc.sets.size() != 1)
      return Fail("an .npz holds one attention set; this file has " + std::to_string(doc.sets.size()));
    std::vector<uint8_t> bytes;
    AttentionFile& f = doc.sets[0].data;
    f.meta = doc.meta;
    if ((st = SaveAttentionNpz(f, true, &bytes))) st = WriteFileBytes(out, bytes.data(), bytes.size());
  }
  if (!st) return Fail(out + ": " + st.message);
  return Wrote(out, doc);
}

}  // namespace
}  // namespace attnviz

ATTNVIZ_CLI_COMMAND(convert, "an attention file into another format (.safetensors for big models, .json, .npz)",
                    attnviz::RunConvert)
