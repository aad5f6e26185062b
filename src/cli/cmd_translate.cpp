// attnviz-cli translate: translates a sentence with a trained seq2seq model and shows the alignment.
//
//   attnviz-cli translate --model models/bahdanau-en-fr.bin "the european economic area"
//   attnviz-cli translate --model models/transformer-en-fr.bin --heads --out probe.json "syria sees the cat"
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "cli/cli_args.h"
#include "cli/commands.h"
#include "core/seq2seq/metrics.h"
#include "core/seq2seq/translate.h"

namespace {

using namespace attnviz::seq2seq;

bool ReadFile(const std::string& path, std::vector<uint8_t>* out) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return false;
  uint8_t buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out->insert(out->end(), buf, buf + n);
  const bool ok = !std::ferror(f);
  std::fclose(f);
  return ok;
}

// A tiny JSON writer: strings escaped per RFC 8259, floats with enough digits to round-trip.
void JsonString(std::string* o, const std::string& s) {
  o->push_back('"');
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') o->push_back('\\'), o->push_back(static_cast<char>(c));
    else if (c < 0x20) {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\u%04x", c);
      *o += esc;
    } else o->push_back(static_cast<char>(c));
  }
  o->push_back('"');
}
void JsonStrings(std::string* o, const std::vector<std::string>& v) {
  o->push_back('[');
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) o->push_back(',');
    JsonString(o, v[i]);
  }
  o->push_back(']');
}
void JsonMatrix(std::string* o, const Mat& m) {
  o->push_back('[');
  for (int r = 0; r < m.rows(); ++r) {
    if (r) o->push_back(',');
    o->push_back('[');
    for (int c = 0; c < m.cols(); ++c) {
      char num[32];
      std::snprintf(num, sizeof num, "%s%.6g", c ? "," : "", static_cast<double>(m(r, c)));
      *o += num;
    }
    o->push_back(']');
  }
  o->push_back(']');
}

// The attnviz attention file: one "cross-attention" layer with the mean, then (with --heads)
// one layer per decoder layer with its heads. Rows: target tokens (EOS row included as "</s>").
std::string AttentionJson(const Translation& t, bool heads) {
  std::vector<std::string> target = t.target_tokens;
  if (t.finished) target.push_back("</s>");
  std::string o = "{\"format\":\"attnviz\",\"version\":1,\"source_tokens\":";
  JsonStrings(&o, t.source_tokens);
  o += ",\"target_tokens\":";
  JsonStrings(&o, target);
  o += ",\"layers\":[{\"name\":\"cross-attention\",\"heads\":[{\"name\":\"mean\",\"weights\":";
  JsonMatrix(&o, t.attention);
  o += "}]}";
  if (heads && t.layer_heads.size() * (t.layer_heads.empty() ? 0 : t.layer_heads[0].size()) > 1) {
    for (size_t l = 0; l < t.layer_heads.size(); ++l) {
      o += ",{\"name\":";
      JsonString(&o, t.layer_names[l]);
      o += ",\"heads\":[";
      for (size_t h = 0; h < t.layer_heads[l].size(); ++h) {
        o += h ? ",{\"name\":" : "{\"name\":";
        JsonString(&o, "head " + std::to_string(h + 1));
        o += ",\"weights\":";
        JsonMatrix(&o, t.layer_heads[l][h]);
        o += "}";
      }
      o += "]}";
    }
  }
  o += "]}\n";
  return o;
}

// Display width of a UTF-8 string (code points; every glyph here is one column).
int Width(const std::string& s) {
  int w = 0;
  for (unsigned char c : s) w += (c & 0xC0) != 0x80;
  return w;
}
std::string Pad(const std::string& s, int width) { return s + std::string(std::max(0, width - Width(s)), ' '); }

void PrintMatrix(const Translation& t) {
  std::vector<std::string> rows = t.target_tokens;
  if (t.finished) rows.push_back("</s>");
  int label = 4;
  for (const std::string& r : rows) label = std::max(label, Width(r));
  int col = 4;
  for (const std::string& s : t.source_tokens) col = std::max(col, Width(s));
  std::printf("%s", Pad("", label + 1).c_str());
  for (const std::string& s : t.source_tokens) std::printf(" %s", Pad(s, col).c_str());
  std::printf("\n");
  for (int r = 0; r < t.attention.rows(); ++r) {
    std::printf("%s", Pad(rows[r], label + 1).c_str());
    int best = 0;
    t.attention.row(r).maxCoeff(&best);
    for (int c = 0; c < t.attention.cols(); ++c) {
      char cell[32];
      std::snprintf(cell, sizeof cell, "%s%.2f", c == best ? "*" : " ", static_cast<double>(t.attention(r, c)));
      std::printf(" %s", Pad(cell, col).c_str());
    }
    std::printf("\n");
  }
}

// --heldout N: scores the model on the first N held-out pairs of its task's corpus (the same
// held-out set `train --seed S` evaluated): greedy (or beam) exact match and token accuracy, and the
// argmax AER of forced-decoding attention for the mean and for every layer and head.
int Evaluate(const Model& model, int n, int seed, int beam) {
  Corpus corpus;
  attnviz::Status st = GenerateCorpus(model.config.task, static_cast<uint64_t>(seed), 0, n, &corpus);
  if (!st) {
    std::fprintf(stderr, "attnviz-cli translate: %s\n", st.message.c_str());
    return attnviz::kExitError;
  }
  SequenceCounts seq;
  AlignmentCounts mean, mean_threshold;
  std::vector<std::vector<AlignmentCounts>> per_head;
  std::vector<std::string> layer_names;
  TranslateOptions options;
  options.beam_size = beam;
  for (const SentencePair& p : corpus.heldout) {
    Translation decoded, forced;
    if (!(st = TranslateTokens(model, p.source, options, &decoded)) || !(st = ForceDecode(model, p.source, p.target, &forced))) {
      std::fprintf(stderr, "attnviz-cli translate: %s\n", st.message.c_str());
      return attnviz::kExitError;
    }
    seq.Add(decoded.target_ids, model.target_vocab.Encode(p.target));
    mean.Add(ScoreAlignment(forced.attention, p, AlignMode::ArgMax));
    mean_threshold.Add(ScoreAlignment(forced.attention, p, AlignMode::Threshold, 0.3f));
    per_head.resize(forced.layer_heads.size());
    layer_names = forced.layer_names;
    for (size_t l = 0; l < forced.layer_heads.size(); ++l) {
      per_head[l].resize(forced.layer_heads[l].size());
      for (size_t h = 0; h < forced.layer_heads[l].size(); ++h)
        per_head[l][h].Add(ScoreAlignment(forced.layer_heads[l][h], p, AlignMode::ArgMax));
    }
  }
  std::printf("{\"model\":\"%s\",\"task\":\"%s\",\"sentences\":%lld,\"beam\":%d,\"exact_match\":%.4f,"
              "\"token_accuracy\":%.4f,\"aer\":%.4f,\"aer_threshold\":%.4f,\"heads\":[",
              ModelKindName(model.config.kind), TaskName(model.config.task), static_cast<long long>(seq.sentences), beam,
              seq.ExactMatch(), seq.TokenAccuracy(), mean.Aer(), mean_threshold.Aer());
  for (size_t l = 0; l < per_head.size(); ++l)
    for (size_t h = 0; h < per_head[l].size(); ++h)
      std::printf("%s{\"layer\":\"%s\",\"head\":%zu,\"aer\":%.4f}", l + h ? "," : "", layer_names[l].c_str(), h + 1,
                  per_head[l][h].Aer());
  std::printf("]}\n");
  return attnviz::kExitOk;
}

int RunTranslate(int argc, char** argv) {
  std::string model_path, sentence, out_path;
  int beam = 1, heldout = 0, seed = 1;
  bool heads = false;
  attnviz::ArgParser args("translate", "translate a sentence with a seq2seq model and print the alignment");
  args.String("--model", &model_path, "FILE", "model file written by `attnviz-cli train --out`", true);
  args.Int("--beam", &beam, "K", "beam size (default 1: greedy)");
  args.String("--out", &out_path, "FILE", "also write the attention as an attnviz JSON file");
  args.Flag("--heads", &heads, "Transformer: also write every decoder layer's heads to --out");
  args.Int("--heldout", &heldout, "N", "instead of a sentence: score the first N held-out pairs of the model's task");
  args.Int("--seed", &seed, "S", "with --heldout: the corpus seed the model was trained with (default 1)");
  args.Positional("sentence", &sentence, "the sentence to translate (quote it)", false);
  if (int rc = args.Parse(argc, argv); rc >= 0) return rc;
  std::vector<uint8_t> bytes;
  if (!ReadFile(model_path, &bytes)) {
    std::fprintf(stderr, "attnviz-cli translate: cannot read %s\n", model_path.c_str());
    return attnviz::kExitError;
  }
  Model model;
  attnviz::Status st = LoadModel(bytes.data(), bytes.size(), &model);
  if (!st) {
    std::fprintf(stderr, "attnviz-cli translate: %s: %s\n", model_path.c_str(), st.message.c_str());
    return attnviz::kExitError;
  }
  if (heldout > 0) return Evaluate(model, heldout, seed, beam);
  if (!args.Seen("sentence")) return args.UsageError("give a sentence to translate (or --heldout N)");
  TranslateOptions options;
  options.beam_size = beam;
  Translation t;
  st = Translate(model, sentence, options, &t);
  if (!st) {
    std::fprintf(stderr, "attnviz-cli translate: %s\n", st.message.c_str());
    return attnviz::kExitError;
  }
  for (int pos : t.unknown_positions) {
    std::fprintf(stderr, "warning: unknown word '%s'", t.source_tokens[pos].c_str());
    const std::vector<Suggestion> s = model.source_vocab.Suggest(t.source_tokens[pos]);
    for (size_t i = 0; i < s.size(); ++i) std::fprintf(stderr, "%s'%s'", i ? ", " : " (did you mean ", s[i].token.c_str());
    std::fprintf(stderr, "%s\n", s.empty() ? "" : "?)");
  }
  std::printf("%s\n\n", Join(t.target_tokens).c_str());
  PrintMatrix(t);
  if (!out_path.empty()) {
    const std::string json = AttentionJson(t, heads);
    FILE* f = std::fopen(out_path.c_str(), "wb");
    const bool ok = f && std::fwrite(json.data(), 1, json.size(), f) == json.size();
    if (f) std::fclose(f);
    if (!ok) {
      std::fprintf(stderr, "attnviz-cli translate: cannot write %s\n", out_path.c_str());
      return attnviz::kExitError;
    }
  }
  return attnviz::kExitOk;
}

}  // namespace

ATTNVIZ_CLI_COMMAND(translate, "translate a sentence with a seq2seq model; print or save its attention", RunTranslate)
