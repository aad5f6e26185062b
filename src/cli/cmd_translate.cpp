// attnviz-cli translate: translates a sentence with a trained seq2seq model and shows the alignment.
//
//   attnviz-cli translate "the european economic area"      (the built-in bahdanau-en-fr)
//   attnviz-cli translate --model transformer-en-fr --heads --out probe.json "syria sees the cat"
//   attnviz-cli translate --figure c          (Bahdanau et al. 2015, Figure 3(c), with the built-in bahdanau-en-fr)
//   attnviz-cli translate --model my-run.bin --figure all   (a model file; one JSON line per figure)
//
// --model takes a file, or the name of a model built into the binary (models/*.bin at build time,
// gen/embedded_models.cpp): a file of that name wins, so the CLI works from any directory.
//
// --out writes the attention file through io (SaveAttentionJson, docs/FORMATS.md): the same
// format and the same float printing as the viewer's own saves, so the weights read back exactly.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "cli/cli_args.h"
#include "cli/commands.h"
#include "core/seq2seq/figures.h"
#include "core/seq2seq/metrics.h"
#include "core/seq2seq/translate.h"
#include "embedded_models.h"
#include "io/attention_file.h"
#include "io/file_util.h"
#include "io/json.h"

namespace {

using namespace attnviz::seq2seq;
using attnviz::AttentionFile;
using attnviz::JsonWriter;
using attnviz::Status;

struct TranslateArgs {
  std::string model_path, sentence, out_path, figure;
  int beam = 1, heldout = 0, seed = 1;
  bool heads = false;
};

int Fail(const std::string& message) {
  std::fprintf(stderr, "attnviz-cli translate: %s\n", message.c_str());
  return attnviz::kExitError;
}

// The model built into the binary named name ("bahdanau-en-fr" or "bahdanau-en-fr.bin"), or null.
const EmbeddedFile* BuiltinModel(const std::string& name) {
  if (name.empty() || name.find('/') != std::string::npos) return nullptr;
  const std::string file = name.size() > 4 && name.compare(name.size() - 4, 4, ".bin") == 0 ? name : name + ".bin";
  return attnviz_embedded_models_find(file.c_str());
}

// "bahdanau-dates, bahdanau-en-fr, ...": the built-in models' names, for messages and --help.
std::string BuiltinModelNames() {
  size_t n = 0;
  const EmbeddedFile* files = attnviz_embedded_models_files(&n);
  std::string names;
  for (size_t i = 0; i < n; ++i) {
    const std::string f = files[i].name;
    if (f.size() <= 4 || f.compare(f.size() - 4, 4, ".bin") != 0) continue;
    names += (names.empty() ? "" : ", ") + f.substr(0, f.size() - 4);
  }
  return names.empty() ? "none" : names;
}

// A model file, or else a built-in model of that name. A missing file that names no built-in model
// keeps the file's own error, with the built-in names after it.
Status LoadModelFile(const std::string& path, Model* model) {
  std::vector<uint8_t> bytes;
  Status st = attnviz::ReadFileBytes(path, &bytes);
  if (st) {
    if (!(st = LoadModel(bytes.data(), bytes.size(), model))) return Status::Error(path + ": " + st.message);
    return Status::Ok();
  }
  const EmbeddedFile* builtin = BuiltinModel(path);
  if (!builtin) return Status::Error(st.message + " (built-in models: " + BuiltinModelNames() + ")");
  if (!(st = LoadModel(builtin->data, builtin->size, model)))
    return Status::Error("built-in model " + path + ": " + st.message);
  return Status::Ok();
}

// Row labels of the attention: the target words, then "</s>" for the end-of-sentence step when
// decoding finished (a translation cut at the maximum length has no such row).
std::vector<std::string> RowLabels(const Translation& t) {
  std::vector<std::string> rows = t.target_tokens;
  if (t.finished) rows.push_back("</s>");
  return rows;
}

// The attention file of a translation: one "cross-attention" layer holding the mean, then (with
// heads, when the model has more than one head) one layer per decoder layer with its heads.
AttentionFile ToAttentionFile(const Translation& t, bool heads) {
  AttentionFile f;
  f.source_tokens = t.source_tokens;
  f.target_tokens = RowLabels(t);
  f.layers.push_back({"cross-attention", {{"mean", t.attention}}});
  const size_t total_heads = t.layer_heads.size() * (t.layer_heads.empty() ? 0 : t.layer_heads[0].size());
  if (!heads || total_heads <= 1) return f;
  for (size_t l = 0; l < t.layer_heads.size(); ++l) {
    AttentionFile::Layer layer{t.layer_names[l], {}};
    for (size_t h = 0; h < t.layer_heads[l].size(); ++h) {
      const bool supervised = static_cast<int>(l) == t.supervised_layer && static_cast<int>(h) == t.supervised_head;
      layer.heads.push_back(
          {"head " + std::to_string(h + 1) + (supervised ? " (supervised)" : ""), t.layer_heads[l][h]});
    }
    f.layers.push_back(std::move(layer));
  }
  return f;
}

// Validates the file (shapes, finite non-negative weights) before writing it as JSON.
Status SaveAttention(const Translation& t, bool heads, const std::string& path) {
  AttentionFile f = ToAttentionFile(t, heads);
  Status st = attnviz::ValidateAttentionFile(&f);
  if (!st) return Status::Error("not writing " + path + ": " + st.message);
  for (const std::string& w : f.warnings) std::fprintf(stderr, "attnviz-cli translate: warning: %s\n", w.c_str());
  return attnviz::WriteFileString(path, attnviz::SaveAttentionJson(f));
}

// Display width of a UTF-8 string (code points; every glyph here is one column).
int Width(const std::string& s) {
  int w = 0;
  for (unsigned char c : s) w += (c & 0xC0) != 0x80;
  return w;
}
std::string Pad(const std::string& s, int width) {
  return s + std::string(std::max(0, width - Width(s)), ' ');
}

void PrintMatrix(const Translation& t, const Mat& attention) {
  const std::vector<std::string> rows = RowLabels(t);
  int label = 4;
  for (const std::string& r : rows) label = std::max(label, Width(r));
  int col = 4;
  for (const std::string& s : t.source_tokens) col = std::max(col, Width(s));
  std::printf("%s", Pad("", label + 1).c_str());
  for (const std::string& s : t.source_tokens) std::printf(" %s", Pad(s, col).c_str());
  std::printf("\n");
  for (int r = 0; r < attention.rows(); ++r) {
    std::printf("%s", Pad(rows[r], label + 1).c_str());
    int best = 0;
    attention.row(r).maxCoeff(&best);
    for (int c = 0; c < attention.cols(); ++c) {
      char cell[32];
      std::snprintf(cell, sizeof cell, "%s%.2f", c == best ? "*" : " ", static_cast<double>(attention(r, c)));
      std::printf(" %s", Pad(cell, col).c_str());
    }
    std::printf("\n");
  }
}

void WarnUnknownWords(const Model& model, const Translation& t) {
  for (int pos : t.unknown_positions) {
    std::fprintf(stderr, "warning: unknown word '%s'", t.source_tokens[pos].c_str());
    const std::vector<Suggestion> s = model.source_vocab.Suggest(t.source_tokens[pos]);
    for (size_t i = 0; i < s.size(); ++i)
      std::fprintf(stderr, "%s'%s'", i ? ", " : " (did you mean ", s[i].token.c_str());
    std::fprintf(stderr, "%s\n", s.empty() ? "" : "?)");
  }
}

// Held-out scores: greedy (or beam) exact match and token accuracy, and the argmax AER of
// forced-decoding attention for the mean and for every layer and head.
struct HeldoutScores {
  SequenceCounts seq;
  AlignmentCounts mean, mean_threshold, supervised;
  std::vector<std::vector<AlignmentCounts>> per_head;  // [layer][head]
  std::vector<std::string> layer_names;                // [layer]
};

// Decodes one held-out pair and force-decodes its reference; adds both to the scores.
Status ScorePair(const Model& model, const SentencePair& p, const TranslateOptions& options, HeldoutScores* s) {
  Translation decoded, forced;
  Status st = TranslateTokens(model, p.source, options, &decoded);
  if (!st || !(st = ForceDecode(model, p.source, p.target, &forced))) return st;
  s->seq.Add(decoded.target_ids, model.target_vocab.Encode(p.target));
  s->mean.Add(ScoreAlignment(forced.attention, p, AlignMode::ArgMax));
  s->mean_threshold.Add(ScoreAlignment(forced.attention, p, AlignMode::Threshold, 0.3f));
  s->supervised.Add(ScoreAlignment(AlignmentMatrix(forced), p, AlignMode::ArgMax));
  s->per_head.resize(forced.layer_heads.size());
  s->layer_names = forced.layer_names;
  for (size_t l = 0; l < forced.layer_heads.size(); ++l) {
    s->per_head[l].resize(forced.layer_heads[l].size());
    for (size_t h = 0; h < forced.layer_heads[l].size(); ++h)
      s->per_head[l][h].Add(ScoreAlignment(forced.layer_heads[l][h], p, AlignMode::ArgMax));
  }
  return Status::Ok();
}

// One JSON line: model, task, sentences, beam, exact_match, token_accuracy, aer, aer_threshold,
// heads [{layer, head, aer}], supervised ({layer, head, aer} of the supervised head, or null)
// (rates with 4 decimals).
std::string ScoresJson(const Model& model, int beam, const HeldoutScores& s) {
  JsonWriter w;
  auto rate = [&w](const char* key, double v) {
    w.Key(key);
    w.NumberFixed(v, 4);
  };
  w.BeginObject();
  w.Key("model");
  w.String(ModelKindName(model.config.kind));
  w.Key("task");
  w.String(TaskName(model.config.task));
  w.Key("sentences");
  w.Number(static_cast<double>(s.seq.sentences));
  w.Key("beam");
  w.Number(beam);
  rate("exact_match", s.seq.ExactMatch());
  rate("token_accuracy", s.seq.TokenAccuracy());
  rate("aer", s.mean.Aer());
  rate("aer_threshold", s.mean_threshold.Aer());
  w.Key("heads");
  w.BeginArray();
  for (size_t l = 0; l < s.per_head.size(); ++l)
    for (size_t h = 0; h < s.per_head[l].size(); ++h) {
      w.BeginObject();
      w.Key("layer");
      w.String(s.layer_names[l]);
      w.Key("head");
      w.Number(static_cast<double>(h + 1));
      rate("aer", s.per_head[l][h].Aer());
      w.EndObject();
    }
  w.EndArray();
  w.Key("supervised");
  if (HasSupervisedHead(model.config)) {
    w.BeginObject();
    w.Key("layer");
    w.String("decoder layer " + std::to_string(model.config.align_layer + 1));
    w.Key("head");
    w.Number(model.config.align_head + 1);
    rate("aer", s.supervised.Aer());
    w.EndObject();
  } else {
    w.Null();
  }
  w.EndObject();
  return w.str();
}

// --heldout N: scores the model on the first N held-out pairs of its task's corpus (the same
// held-out set `train --seed S` evaluated) and prints one JSON line.
int Evaluate(const Model& model, int n, int seed, int beam) {
  Corpus corpus;
  Status st = GenerateCorpus(model.config.task, static_cast<uint64_t>(seed), 0, n, &corpus);
  if (!st) return Fail(st.message);
  TranslateOptions options;
  options.beam_size = beam;
  HeldoutScores scores;
  for (const SentencePair& p : corpus.heldout)
    if (!(st = ScorePair(model, p, options, &scores))) return Fail(st.message);
  std::printf("%s\n", ScoresJson(model, beam, scores).c_str());
  return attnviz::kExitOk;
}

// Prints the translation and its attention matrix (and the supervised head's, if the model has
// one); with --out also writes the attention file.
int TranslateSentence(const Model& model, const TranslateArgs& a, const std::string& sentence, Translation* out) {
  TranslateOptions options;
  options.beam_size = a.beam;
  Translation& t = *out;
  Status st = Translate(model, sentence, options, &t);
  if (!st) return Fail(st.message);
  WarnUnknownWords(model, t);
  std::printf("%s\n\n", Join(t.target_tokens).c_str());
  PrintMatrix(t, t.attention);
  if (!SupervisedHeadName(t).empty()) {
    std::printf("\n%s:\n", SupervisedHeadName(t).c_str());
    PrintMatrix(t, AlignmentMatrix(t));
  }
  if (!a.out_path.empty() && !(st = SaveAttention(t, a.heads, a.out_path))) return Fail(st.message);
  return attnviz::kExitOk;
}

// --figure all: one JSON line per figure of the model's task:
// {figure, task, exact, output, reference, aer, aer_mean} (aer: the supervised head, else the mean).
int ScoreAllFigures(const Model& model, int beam) {
  for (const FigureSentence& f : FigureSentences()) {
    if (f.task != model.config.task) continue;
    FigureResult sc;
    if (Status st = EvaluateFigure(model, f, &sc, beam); !st) return Fail(st.message);
    JsonWriter w;
    w.BeginObject();
    w.Key("figure");
    w.String(f.id);
    w.Key("task");
    w.String(TaskName(f.task));
    w.Key("exact");
    w.Bool(sc.exact);
    w.Key("output");
    w.String(Join(sc.decoded.target_tokens));
    w.Key("reference");
    w.String(Join(f.gold.target));
    w.Key("aer");
    w.NumberFixed(sc.aer, 4);
    w.Key("aer_mean");
    w.NumberFixed(sc.aer_mean, 4);
    w.EndObject();
    std::printf("%s\n", w.str().c_str());
  }
  return attnviz::kExitOk;
}

// --figure ID: the same output as translating the figure's sentence, then (on stderr) where it
// comes from, its reference and how the translation and the alignment compare with them.
int TranslateFigure(const Model& model, const TranslateArgs& a, const FigureSentence& f) {
  FigureResult sc;
  if (Status st = EvaluateFigure(model, f, &sc, a.beam); !st) return Fail(st.message);
  Translation t;
  if (int rc = TranslateSentence(model, a, f.text, &t); rc != attnviz::kExitOk) return rc;
  std::fprintf(stderr,
               "figure %s: %s\n  source:    %s\n  reference: %s\n  %s; AER %.1f%% against the hand-made gold%s\n",
               f.id.c_str(), f.citation.c_str(), f.text.c_str(), f.reference.c_str(),
               sc.exact ? "exact match" : "NOT the reference", 100.0 * sc.aer,
               SupervisedHeadName(t).empty() ? "" : (" (" + SupervisedHeadName(t) + ")").c_str());
  return attnviz::kExitOk;
}

int RunTranslate(int argc, char** argv) {
  TranslateArgs a;
  attnviz::ArgParser args("translate", "translate a sentence with a seq2seq model and print the alignment");
  const std::string model_help =
      "a model file written by `attnviz-cli train --out`, or a built-in model: " + BuiltinModelNames() +
      " (default bahdanau-en-fr; with --figure bahdanau-TASK)";
  args.String("--model", &a.model_path, "FILE|NAME", model_help.c_str());
  args.String("--figure", &a.figure, "ID",
              "translate a figure's sentence: a, b, c, d (Bahdanau et al. 2015, Figure 3), es1..es4 (TensorFlow "
              "tutorial); all: one JSON line of scores per figure of the model's task");
  args.Int("--beam", &a.beam, "K", "beam size (default 1: greedy)");
  args.String("--out", &a.out_path, "FILE", "also write the attention as an attnviz JSON file");
  args.Flag("--heads", &a.heads, "Transformer: also write every decoder layer's heads to --out");
  args.Int("--heldout", &a.heldout, "N", "instead of a sentence: score the first N held-out pairs of the model's task");
  args.Int("--seed", &a.seed, "S", "with --heldout: the corpus seed the model was trained with (default 1)");
  args.Positional("sentence", &a.sentence, "the sentence to translate (quote it)", false);
  if (int rc = args.Parse(argc, argv); rc >= 0) return rc;
  const FigureSentence* figure = nullptr;
  if (args.Seen("--figure") && a.figure != "all" && !(figure = FindFigure(a.figure)))
    return args.UsageError("unknown --figure '" + a.figure + "' (a, b, c, d, es1, es2, es3, es4 or all)");
  if (a.model_path.empty()) {  // the model of the translation figures, built in
    a.model_path = std::string("bahdanau-") + (figure ? TaskName(figure->task) : "en-fr");
    if (!BuiltinModel(a.model_path))
      return args.UsageError("this build has no built-in " + a.model_path + ": give --model FILE");
  }
  Model model;
  if (Status st = LoadModelFile(a.model_path, &model); !st) return Fail(st.message);
  if (a.heldout > 0) return Evaluate(model, a.heldout, a.seed, a.beam);
  if (args.Seen("--figure")) return figure ? TranslateFigure(model, a, *figure) : ScoreAllFigures(model, a.beam);
  if (!args.Seen("sentence")) return args.UsageError("give a sentence to translate (or --heldout N, --figure ID)");
  Translation t;
  return TranslateSentence(model, a, a.sentence, &t);
}

}  // namespace

ATTNVIZ_CLI_COMMAND(translate, "translate a sentence with a seq2seq model; print or save its attention", RunTranslate)
