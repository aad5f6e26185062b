// seq2seq: the pretrained models in models/ (written by attnviz-cli train; see models/README.md).
// Each translates its task's figure sentences exactly (greedy), aligns them within the AER target
// against the hand-made gold, and keeps its held-out exact match. Runs natively and in WASM.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "core/seq2seq/figures.h"
#include "core/seq2seq/metrics.h"
#include "core/seq2seq/trainer.h"
#include "core/seq2seq/translate.h"

namespace attnviz {
namespace seq2seq {
namespace {

// AER of the figures against the hand-made gold (argmax of the teacher-forced attention, see
// docs/MODELS.md), micro-averaged over a model's figures: the Transformer's supervised head and the
// RNN models' attention (trained with guided alignment) all meet the 10% target.
constexpr double kFigureAer = 0.10;
constexpr double kHeldoutExactTarget = 0.95;   // greedy exact match on the 400 held-out pairs of seed 1
constexpr size_t kModelBytesTarget = 2000000;  // every models/*.bin together

const char* const kModelFiles[] = {"bahdanau-en-fr.bin", "luong-en-fr.bin", "transformer-en-fr.bin",
                                   "bahdanau-es-en.bin", "bahdanau-dates.bin"};

bool ReadFile(const std::string& path, std::vector<uint8_t>* out) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return false;
  uint8_t buf[65536];
  size_t n;
  out->clear();
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out->insert(out->end(), buf, buf + n);
  std::fclose(f);
  return true;
}

std::string ModelPath(const char* name) {
  return std::string(ATTNVIZ_SOURCE_DIR) + "/models/" + name;
}

Model LoadShipped(const char* name, size_t* bytes = nullptr) {
  std::vector<uint8_t> data;
  EXPECT_TRUE(ReadFile(ModelPath(name), &data)) << name;
  Model m;
  const Status st = LoadModel(data.data(), data.size(), &m);
  EXPECT_TRUE(st.ok) << name << ": " << st.message;
  if (bytes) *bytes = data.size();
  return m;
}

TEST(Seq2SeqPretrained, FiguresTranslateExactlyAndAlignWithinTarget) {
  for (const char* name : kModelFiles) {
    const Model m = LoadShipped(name);
    if (m.config.task == Task::Dates) continue;  // no figures
    AlignmentCounts total;
    int figures = 0;
    for (const FigureSentence& f : FigureSentences()) {
      if (f.task != m.config.task) continue;
      ++figures;
      Translation decoded, forced;
      ASSERT_TRUE(Translate(m, f.text, {}, &decoded).ok);
      ASSERT_TRUE(ForceDecode(m, f.gold.source, f.gold.target, &forced).ok);
      EXPECT_TRUE(decoded.unknown_positions.empty()) << name << " figure " << f.id;
      EXPECT_EQ(Join(decoded.target_tokens), Join(f.gold.target)) << name << " figure " << f.id;
      const AlignmentCounts c = ScoreAlignment(AlignmentMatrix(forced), f.gold, AlignMode::ArgMax);
      total.Add(c);
      std::printf("%-22s figure %-3s %s  AER %5.1f%%  %s\n", name, f.id.c_str(),
                  decoded.target_tokens == f.gold.target ? "exact" : "WRONG", 100.0 * c.Aer(),
                  Join(decoded.target_tokens).c_str());
    }
    EXPECT_EQ(figures, 4) << name;
    std::printf("%-22s all figures: AER %.1f%%%s\n", name, 100.0 * total.Aer(),
                HasSupervisedHead(m.config) ? " (supervised head)" : "");
    EXPECT_LE(total.Aer(), kFigureAer) << name;
  }
}

TEST(Seq2SeqPretrained, HeldoutExactMatchAndSizes) {
  size_t total_bytes = 0;
  for (const char* name : kModelFiles) {
    size_t bytes = 0;
    const Model m = LoadShipped(name, &bytes);
    total_bytes += bytes;
    Corpus c;
    ASSERT_TRUE(GenerateCorpus(m.config.task, 1, 0, 400, &c).ok);
    const EpochStats s = Evaluate(m, c.heldout);
    std::printf("%-22s %7zu bytes  held-out exact match %.2f%%, token accuracy %.2f%%, AER (mean attention) %.2f%%\n",
                name, bytes, 100.0 * s.exact_match, 100.0 * s.token_accuracy, 100.0 * s.aer);
    EXPECT_GE(s.exact_match, kHeldoutExactTarget) << name;
  }
  std::printf("all models: %zu bytes\n", total_bytes);
  EXPECT_LE(total_bytes, kModelBytesTarget);
}

TEST(Seq2SeqPretrained, DefaultSentenceOfThePage) {
  // The page opens on Translate with the Bahdanau model and this sentence (tests/browser/models.test.mjs).
  const Model m = LoadShipped("bahdanau-en-fr.bin");
  Translation t;
  ASSERT_TRUE(Translate(m, "the european economic area", {}, &t).ok);
  EXPECT_EQ(Join(t.target_tokens), "la zone économique européenne");
  ASSERT_EQ(t.attention.rows(), 5);
  EXPECT_GT(t.attention(2, 2), 0.5f) << "économique attends to economic";
  EXPECT_GT(t.attention(3, 1), 0.5f) << "européenne attends to european";
  ASSERT_TRUE(Translate(m, "the green cars", {}, &t).ok);
  EXPECT_EQ(Join(t.target_tokens), "les voitures vertes");
}

TEST(Seq2SeqPretrained, TransformerExposesItsSupervisedHead) {
  const Model m = LoadShipped("transformer-en-fr.bin");
  ASSERT_TRUE(HasSupervisedHead(m.config));
  Translation t;
  ASSERT_TRUE(Translate(m, FindFigure("a")->text, {}, &t).ok);
  EXPECT_EQ(t.supervised_layer, m.config.align_layer);
  EXPECT_EQ(t.supervised_head, m.config.align_head);
  EXPECT_EQ(&AlignmentMatrix(t), &t.layer_heads[t.supervised_layer][t.supervised_head]);
  EXPECT_EQ(SupervisedHeadName(t), "decoder layer 2, head 1 (supervised)");
  IncrementalDecoder dec;
  ASSERT_TRUE(dec.Start(m, FindFigure("a")->text).ok);
  EXPECT_EQ(dec.partial().supervised_head, m.config.align_head);
  const Model rnn = LoadShipped("bahdanau-en-fr.bin");
  ASSERT_TRUE(Translate(rnn, "the cat", {}, &t).ok);
  EXPECT_EQ(t.supervised_layer, -1);
  EXPECT_EQ(&AlignmentMatrix(t), &t.attention);
  EXPECT_EQ(SupervisedHeadName(t), "");
}

}  // namespace
}  // namespace seq2seq
}  // namespace attnviz
