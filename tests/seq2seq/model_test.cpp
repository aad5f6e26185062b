// seq2seq: determinism, serialization, decoding API and a short training run.
#include "core/seq2seq/model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "core/seq2seq/metrics.h"
#include "core/seq2seq/trainer.h"
#include "core/seq2seq/translate.h"

namespace attnviz {
namespace seq2seq {
namespace {

double NowMs() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

TrainerConfig SmallConfig(ModelKind kind, int n_train) {
  TrainerConfig c = DefaultTrainerConfig(kind, Task::EnFr, 1);
  c.n_train = n_train;
  c.n_heldout = 100;
  return c;
}

// A weight used at every step gets its gradient in one product over all its uses at the end of
// Backward: the same gradients (to float rounding) as one product per use, for every model.
TEST(Seq2SeqTape, DeferredWeightProductsGiveTheSameGradients) {
  for (ModelKind kind : {ModelKind::Bahdanau, ModelKind::Luong, ModelKind::Transformer}) {
    TrainerConfig cfg = LiveTrainerConfig(kind, Task::EnFr, 3);
    cfg.n_train = 64, cfg.n_heldout = 4;
    Trainer tr;
    ASSERT_TRUE(tr.Init(cfg).ok);
    const Model& m = tr.model();
    std::vector<const SentencePair*> pairs;
    for (int i = 0; i < 6; ++i) pairs.push_back(&tr.corpus().train[(size_t)i]);
    const Batch batch = BuildBatch(m, pairs);
    std::vector<std::vector<Mat>> grads(2, std::vector<Mat>(m.params.size()));
    for (int defer = 0; defer < 2; ++defer) {
      for (size_t p = 0; p < m.params.size(); ++p)
        grads[defer][p].setZero(m.params[p].value.rows(), m.params[p].value.cols());
      Tape tape;
      tape.SetDeferParamProducts(defer != 0);
      tape.SetGradientTarget(m.params.data(), &grads[defer]);
      tape.Backward(ForwardTeacherForced(m, &tape, batch, nullptr, 0.0f));
    }
    for (size_t p = 0; p < m.params.size(); ++p) {
      const float scale = std::max(1e-3f, grads[0][p].cwiseAbs().maxCoeff());
      EXPECT_LE((grads[1][p] - grads[0][p]).cwiseAbs().maxCoeff(), 1e-5f * scale)
          << ModelKindName(kind) << " " << m.params[p].name;
    }
  }
}

TEST(Seq2SeqTrainer, SameSeedSameLosses) {
  for (ModelKind kind : {ModelKind::Bahdanau, ModelKind::Luong, ModelKind::Transformer}) {
    Trainer a, b;
    ASSERT_TRUE(a.Init(SmallConfig(kind, 200)).ok);
    ASSERT_TRUE(b.Init(SmallConfig(kind, 200)).ok);
    a.Step(1e9, 3);
    b.Step(1e9, 3);
    ASSERT_EQ(a.batch_losses().size(), 3u);
    for (int i = 0; i < 3; ++i) EXPECT_EQ(a.batch_losses()[i], b.batch_losses()[i]) << ModelKindName(kind);
    for (size_t p = 0; p < a.model().params.size(); ++p)
      ASSERT_TRUE(a.model().params[p].value == b.model().params[p].value) << a.model().params[p].name;
    std::printf("%-11s first losses %.6f %.6f %.6f (identical across two runs)\n", ModelKindName(kind),
                a.batch_losses()[0], a.batch_losses()[1], a.batch_losses()[2]);
  }
}

TEST(Seq2SeqTrainer, ShortRunLowersLossAndAer) {
  Trainer t;
  TrainerConfig c = SmallConfig(ModelKind::Bahdanau, 1600);
  c.n_heldout = 200;
  c.learning_rate = 6e-3f;  // a short run: no decay, a short warm-up (150 updates in all)
  c.warmup_batches = 30;
  c.decay_batches = 0;
  ASSERT_TRUE(t.Init(c).ok);
  const EpochStats before = Evaluate(t.model(), t.corpus().heldout);
  const double start = NowMs();
  t.RunEpoch();
  t.RunEpoch();
  t.RunEpoch();
  const double ms = NowMs() - start;
  const EpochStats& after = t.history().back();
  std::printf(
      "bahdanau, 1600 pairs x 3 epochs in %.1f s: held-out loss %.3f -> %.3f, AER %.3f -> %.3f, "
      "exact match %.3f -> %.3f, probe AER %.2f -> %.2f\n",
      ms / 1000.0, before.heldout_loss, after.heldout_loss, before.aer, after.aer, before.exact_match,
      after.exact_match, t.probes().front().aer, t.probes().back().aer);
  EXPECT_LT(after.heldout_loss, 0.5 * before.heldout_loss);
  EXPECT_LT(after.aer, before.aer - 0.1);
  EXPECT_LT(t.history().back().loss, t.history().front().loss);
  EXPECT_EQ(t.probes().size(), 4u);  // epoch 0 + three epochs
  EXPECT_EQ(t.probes().back().attention.rows(), 5);
  EXPECT_EQ(t.probes().back().attention.cols(), 4);
}

TEST(Seq2SeqTrainer, StepRespectsItsBudgetWithMicroBatches) {
  // The browser's settings: a unit of work is a micro-batch of 4 sentences or 8 held-out sentences.
  Trainer t;
  TrainerConfig c = SmallConfig(ModelKind::Bahdanau, 160);
  c.micro_batch = 4;
  c.eval_chunk = 8;
  c.n_heldout = 40;
  ASSERT_TRUE(t.Init(c).ok);
  const double heldout_loss_before = Evaluate(t.model(), t.corpus().heldout).heldout_loss;
  t.Step(1e9, 2);  // warm the per-unit cost estimate
  double worst = 0, total = 0, worst_planning = 0;
  std::vector<double> planning;
  int slices = 0, units_total = 0;
  while (t.epoch() < 1) {
    const double start = NowMs();
    const int units = t.Step(10.0);
    const double ms = NowMs() - start;
    EXPECT_GE(units, 1);
    // Step starts a unit only if its average cost still fits: the units before the last one fit
    // the budget. (Wall-clock slices themselves depend on the machine's load, so they are printed.)
    planning.push_back((units - 1) * (ms / units));
    worst_planning = std::max(worst_planning, planning.back());
    worst = std::max(worst, ms);
    total += ms;
    units_total += units;
    ++slices;
  }
  std::sort(planning.begin(), planning.end());
  const double median_planning = planning[planning.size() / 2];
  std::printf(
      "Step(10 ms), micro-batch 4: %d slices, %d units, mean %.2f ms, longest %.2f ms; %lld Adam updates; "
      "work started after the first unit: median %.2f ms, worst %.2f ms\n",
      slices, units_total, total / slices, worst, static_cast<long long>(t.batches()), median_planning, worst_planning);
  // The median, not the worst: a slice the machine preempts (ctest -j2 on 2 cores) runs long
  // whatever Step planned; a Step that ignored its budget would overrun in most slices.
  EXPECT_LT(median_planning, 15.0) << "work started after the first unit stays within ~the budget";
  EXPECT_EQ(t.batches(), 5) << "160 pairs / 32 per update";
  // Five warm-up updates (at most 5% of the rate) move the held-out loss only a little, but down.
  EXPECT_LT(t.history().back().heldout_loss, heldout_loss_before);
}

TEST(Seq2SeqTrainer, MicroBatchesAccumulateTheSameUpdate) {
  // With equal-length micro-batches the accumulated gradient equals the full batch's; here the
  // lengths differ, so the updates agree only approximately (per-micro-batch token means).
  Trainer full, micro;
  TrainerConfig c = SmallConfig(ModelKind::Luong, 64);
  ASSERT_TRUE(full.Init(c).ok);
  c.micro_batch = 8;
  ASSERT_TRUE(micro.Init(c).ok);
  full.Step(1e9, 1);
  micro.Step(1e9, 4);
  ASSERT_EQ(full.batches(), 1);
  ASSERT_EQ(micro.batches(), 1);
  float largest = 0, step = 0;
  for (size_t p = 0; p < full.model().params.size(); ++p) {
    largest = std::max(largest, (full.model().params[p].value - micro.model().params[p].value).cwiseAbs().maxCoeff());
  }
  step = full.config().learning_rate * 1.0f / static_cast<float>(full.config().warmup_batches);
  std::printf("one update, full batch vs 4 micro-batches: largest weight difference %.2e (step size %.2e)\n", largest,
              step);
  EXPECT_LE(largest, 2.0f * step * 1.01f) << "Adam's first step moves each weight by at most ~lr (sign may differ)";
  EXPECT_NEAR(full.last_loss(), micro.last_loss(), 0.05f);
}

// The browser build has no threads (its training worker runs one): native only.
#if !defined(__EMSCRIPTEN__)
TEST(Seq2SeqTrainer, ThreadsGiveBitwiseTheSameRun) {
  // Micro-batches of 4 in batches of 16 (the page's shape): 3 threads take micro-batches 3 + 1 per
  // batch, 2 threads 2 + 2; every gradient buffer is reduced in micro-batch order, so the losses,
  // the weights and the held-out figures are bitwise those of one thread.
  for (ModelKind kind : {ModelKind::Bahdanau, ModelKind::Transformer}) {
    TrainerConfig c = SmallConfig(kind, 96);
    c.n_heldout = 40;
    c.batch_size = 16;
    c.micro_batch = 4;
    c.eval_chunk = 8;
    c.align_weight = 0.3f;
    std::vector<std::unique_ptr<Trainer>> runs;
    for (int threads : {1, 2, 3}) {
      c.threads = threads;
      runs.push_back(std::make_unique<Trainer>());
      ASSERT_TRUE(runs.back()->Init(c).ok);
      runs.back()->RunEpoch();
      while (runs.back()->batches() < 8) runs.back()->Step(1e9, 1);  // and two batches of the second epoch
    }
    const Trainer& one = *runs[0];
    ASSERT_EQ(one.batches(), 8);
    for (size_t r = 1; r < runs.size(); ++r) {
      const Trainer& many = *runs[r];
      const int threads = many.config().threads;
      ASSERT_EQ(many.batch_losses().size(), one.batch_losses().size()) << threads;
      EXPECT_EQ(0, std::memcmp(many.batch_losses().data(), one.batch_losses().data(),
                               one.batch_losses().size() * sizeof(float)))
          << ModelKindName(kind) << " threads=" << threads;
      for (size_t p = 0; p < one.model().params.size(); ++p) {
        const Mat& a = one.model().params[p].value;
        const Mat& b = many.model().params[p].value;
        ASSERT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(Real)))
            << ModelKindName(kind) << " threads=" << threads << " " << one.model().params[p].name;
      }
      EXPECT_EQ(many.history()[0].exact_match, one.history()[0].exact_match);
      EXPECT_EQ(many.history()[0].aer, one.history()[0].aer);
      EXPECT_EQ(many.history()[0].heldout_loss, one.history()[0].heldout_loss);
    }
    std::printf("%-11s threads 1 / 2 / 3: %zu batch losses and every weight bitwise equal (last loss %.6f)\n",
                ModelKindName(kind), one.batch_losses().size(), one.last_loss());
  }
}
#endif

Model TrainedTinyModel(ModelKind kind) {
  Trainer t;
  EXPECT_TRUE(t.Init(SmallConfig(kind, 200)).ok);
  t.Step(1e9, 5);
  return t.model();
}

TEST(Seq2SeqSerialization, RoundTripAndCorruptFiles) {
  for (ModelKind kind : {ModelKind::Bahdanau, ModelKind::Luong, ModelKind::Transformer}) {
    const Model m = TrainedTinyModel(kind);
    std::vector<uint8_t> bytes, half;
    ASSERT_TRUE(SaveModel(m, &bytes).ok);
    ASSERT_TRUE(SaveModel(m, &half, true).ok);
    Model a, b;
    ASSERT_TRUE(LoadModel(bytes.data(), bytes.size(), &a).ok);
    ASSERT_TRUE(LoadModel(half.data(), half.size(), &b).ok);
    ASSERT_EQ(a.params.size(), m.params.size());
    float half_err = 0;
    for (size_t i = 0; i < m.params.size(); ++i) {
      ASSERT_TRUE(a.params[i].value == m.params[i].value) << m.params[i].name;
      const float scale = std::max(1.0f, m.params[i].value.cwiseAbs().maxCoeff());
      half_err = std::max(half_err, (b.params[i].value - m.params[i].value).cwiseAbs().maxCoeff() / scale);
    }
    EXPECT_LT(half_err, 1e-3f);
    EXPECT_EQ(a.source_vocab.Tokens(), m.source_vocab.Tokens());
    Translation t1, t2;
    ASSERT_TRUE(Translate(m, "the cat sees the dog", {}, &t1).ok);
    ASSERT_TRUE(Translate(a, "the cat sees the dog", {}, &t2).ok);
    EXPECT_EQ(t1.target_tokens, t2.target_tokens);
    EXPECT_LT((t1.attention - t2.attention).cwiseAbs().maxCoeff(), 1e-6f);
    std::printf("%-11s %zu bytes (float32), %zu bytes (float16), float16 relative error %.1e\n", ModelKindName(kind),
                bytes.size(), half.size(), half_err);

    // every truncation is an error, never a crash
    int rejected = 0, tried = 0;
    for (size_t n = 0; n < bytes.size(); n += std::max<size_t>(1, bytes.size() / 997)) {
      Model x;
      ++tried;
      rejected += !LoadModel(bytes.data(), n, &x).ok;
    }
    EXPECT_EQ(rejected, tried);
    // a flipped byte anywhere is caught (checksum, or a structural check first)
    for (size_t pos : {size_t(0), size_t(4), size_t(9), bytes.size() / 3, bytes.size() / 2, bytes.size() - 1}) {
      std::vector<uint8_t> bad = bytes;
      bad[pos] ^= 0x5A;
      Model x;
      const Status st = LoadModel(bad.data(), bad.size(), &x);
      EXPECT_FALSE(st.ok) << "flipped byte " << pos;
    }
    Model x;
    EXPECT_FALSE(LoadModel(nullptr, 0, &x).ok);
  }
}

TEST(Seq2SeqSerialization, StructuralErrorsHaveMessages) {
  const Model m = TrainedTinyModel(ModelKind::Bahdanau);
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(SaveModel(m, &bytes).ok);
  Model x;
  std::vector<uint8_t> bad = bytes;
  bad[0] = 'X';
  Status st = LoadModel(bad.data(), bad.size(), &x);
  EXPECT_NE(st.message.find("magic"), std::string::npos) << st.message;
  bad = bytes;
  bad[4] = 9;  // version
  st = LoadModel(bad.data(), bad.size(), &x);
  EXPECT_NE(st.message.find("version"), std::string::npos) << st.message;
  st = LoadModel(bytes.data(), bytes.size() - 10, &x);
  EXPECT_FALSE(st.ok);
  // a consistent checksum over a hostile header: huge sizes are refused before anything is allocated
  bad = bytes;
  bad[16] = 0x00, bad[17] = 0x04;  // config emb (3rd int after magic and version) = 1024
  uint32_t h = 2166136261u;
  for (size_t i = 0; i + 4 < bad.size(); ++i) h = (h ^ bad[i]) * 16777619u;
  std::memcpy(bad.data() + bad.size() - 4, &h, 4);
  const Status hostile = LoadModel(bad.data(), bad.size(), &x);
  EXPECT_FALSE(hostile.ok);
  std::printf("emb 1024 with a valid checksum -> \"%s\"\n", hostile.message.c_str());
  std::printf("truncated file -> \"%s\"\n", st.message.c_str());
}

TEST(Seq2SeqSerialization, SupervisedHeadRoundTripsAndVersion1Loads) {
  Model m = TrainedTinyModel(ModelKind::Transformer);
  ASSERT_TRUE(HasSupervisedHead(m.config)) << "DefaultConfig supervises a head";
  EXPECT_EQ(m.config.align_layer, 1);
  EXPECT_EQ(m.config.align_head, 0);
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(SaveModel(m, &bytes).ok);
  Model back;
  ASSERT_TRUE(LoadModel(bytes.data(), bytes.size(), &back).ok);
  EXPECT_EQ(back.config.align_layer, 1);
  EXPECT_EQ(back.config.align_head, 0);
  // A version 1 file (12 config ints, no supervised head) still loads, without a supervised head.
  std::vector<uint8_t> v1(bytes.begin(), bytes.begin() + 8 + 12 * 4);
  v1[4] = 1;
  v1.insert(v1.end(), bytes.begin() + 8 + 14 * 4, bytes.end() - 4);
  uint32_t h = 2166136261u;
  for (uint8_t b : v1) h = (h ^ b) * 16777619u;
  for (int k = 0; k < 4; ++k) v1.push_back(static_cast<uint8_t>(h >> (8 * k)));
  Model old;
  const Status st = LoadModel(v1.data(), v1.size(), &old);
  ASSERT_TRUE(st.ok) << st.message;
  EXPECT_FALSE(HasSupervisedHead(old.config));
  EXPECT_TRUE(old.params[5].value == m.params[5].value);
  // a supervised head outside the model is refused
  ModelConfig bad = m.config;
  bad.align_head = bad.heads;
  EXPECT_FALSE(ValidateConfig(bad).ok);
  bad = DefaultConfig(ModelKind::Bahdanau, Task::EnFr);
  bad.align_layer = bad.align_head = 0;
  EXPECT_FALSE(ValidateConfig(bad).ok) << "only a Transformer has heads to supervise";
}

TEST(Seq2SeqTrainer, SupervisedHeadLearnsTheGoldAlignment) {
  // 60 updates on 1920 sentences, with and without the alignment loss: the supervised head's
  // teacher-forced AER drops far below the unsupervised model's same head.
  double aer[2];
  for (int supervised = 0; supervised < 2; ++supervised) {
    TrainerConfig c = SmallConfig(ModelKind::Transformer, 1920);
    c.align_weight = supervised ? 1.0f : 0.0f;
    c.warmup_batches = 20;
    Trainer t;
    ASSERT_TRUE(t.Init(c).ok);
    t.Step(1e9, 60);
    AlignmentCounts counts;
    for (int i = 0; i < 40; ++i) {
      const SentencePair& p = t.corpus().heldout[i];
      Translation forced;
      ASSERT_TRUE(ForceDecode(t.model(), p.source, p.target, &forced).ok);
      counts.Add(ScoreAlignment(forced.layer_heads[1][0], p, AlignMode::ArgMax));
    }
    aer[supervised] = counts.Aer();
  }
  std::printf("decoder layer 2 head 1 after 60 updates: AER %.3f unsupervised, %.3f supervised\n", aer[0], aer[1]);
  EXPECT_LT(aer[1], aer[0] - 0.2);
}

TEST(Seq2SeqTrainer, GuidedAlignmentPullsRnnAttentionTowardsTheGold) {
  // 40 updates of each RNN model with and without guided alignment (weight 0.3, as the shipped
  // en-fr models): the teacher-forced attention's AER on held-out pairs drops well below the unguided run's.
  for (ModelKind kind : {ModelKind::Bahdanau, ModelKind::Luong}) {
    double aer[2];
    for (int guided = 0; guided < 2; ++guided) {
      TrainerConfig c = SmallConfig(kind, 1280);
      c.align_weight = guided ? 0.3f : 0.0f;
      c.warmup_batches = 20;
      Trainer t;
      ASSERT_TRUE(t.Init(c).ok);
      t.Step(1e9, 40);
      AlignmentCounts counts;
      for (int i = 0; i < 40; ++i) {
        const SentencePair& p = t.corpus().heldout[i];
        Translation forced;
        ASSERT_TRUE(ForceDecode(t.model(), p.source, p.target, &forced).ok);
        counts.Add(ScoreAlignment(forced.attention, p, AlignMode::ArgMax));
      }
      aer[guided] = counts.Aer();
    }
    std::printf("%s after 40 updates: AER %.3f unguided, %.3f guided\n", ModelKindName(kind), aer[0], aer[1]);
    EXPECT_LT(aer[1], aer[0] - 0.2) << ModelKindName(kind);
  }
}

TEST(Seq2SeqTranslate, IncrementalDecoderMatchesTranslateAndRowsAreDistributions) {
  for (ModelKind kind : {ModelKind::Bahdanau, ModelKind::Luong, ModelKind::Transformer}) {
    const Model m = TrainedTinyModel(kind);
    const std::string sentence = "the european economic area";
    Translation greedy, beam;
    ASSERT_TRUE(Translate(m, sentence, {}, &greedy).ok);
    TranslateOptions opt;
    opt.beam_size = 4;
    ASSERT_TRUE(Translate(m, sentence, opt, &beam).ok);
    IncrementalDecoder dec;
    ASSERT_TRUE(dec.Start(m, sentence).ok);
    int steps = 0;
    float worst = 0;
    while (!dec.Done()) {
      DecodedWord w;
      ASSERT_TRUE(dec.DecodeStep(&w).ok);
      ASSERT_EQ(w.attention.size(), 4);
      worst = std::max(worst, std::fabs(w.attention.sum() - 1.0f));
      const int layers = kind == ModelKind::Transformer ? 2 : 1;
      ASSERT_EQ(static_cast<int>(w.layer_heads.size()), layers);
      ++steps;
    }
    DecodedWord w;
    EXPECT_FALSE(dec.DecodeStep(&w).ok) << "stepping past the end is an error";
    EXPECT_EQ(dec.partial().target_tokens, greedy.target_tokens) << ModelKindName(kind);
    EXPECT_LT((dec.partial().attention - greedy.attention).cwiseAbs().maxCoeff(), 1e-5f);
    for (const Translation* t : {&greedy, &beam}) {
      ASSERT_EQ(t->attention.rows(), static_cast<int>(t->target_tokens.size()) + (t->finished ? 1 : 0));
      for (int r = 0; r < t->attention.rows(); ++r)
        worst = std::max(worst, std::fabs(t->attention.row(r).sum() - 1.0f));
    }
    EXPECT_LT(worst, 1e-4f);
    EXPECT_TRUE(beam.finished);
    std::printf("%-11s after 5 batches: greedy '%s' (%d steps), beam-4 '%s'; largest |row sum - 1| %.1e\n",
                ModelKindName(kind), Join(greedy.target_tokens).c_str(), steps, Join(beam.target_tokens).c_str(),
                worst);
  }
  const Model m = TrainedTinyModel(ModelKind::Bahdanau);
  Translation t;
  EXPECT_FALSE(Translate(m, "   ", {}, &t).ok);
  ASSERT_TRUE(Translate(m, "the europaen area", {}, &t).ok);
  ASSERT_EQ(t.unknown_positions.size(), 1u);
  EXPECT_EQ(t.unknown_positions[0], 1);
}

TEST(Seq2SeqTranslate, StepwiseForcedDecodingMatchesBatchedTeacherForcing) {
  // Two code paths compute the same attention: the batched training forward (padding, masks)
  // and the one-sentence step API used by the UI. They must agree.
  Corpus corpus;
  ASSERT_TRUE(GenerateCorpus(Task::EnFr, 1, 0, 6, &corpus).ok);
  for (ModelKind kind : {ModelKind::Bahdanau, ModelKind::Luong, ModelKind::Transformer}) {
    const Model m = TrainedTinyModel(kind);
    std::vector<const SentencePair*> pairs;
    for (const auto& p : corpus.heldout) pairs.push_back(&p);
    Tape tape;
    BatchAttention batched;
    ForwardTeacherForced(m, &tape, BuildBatch(m, pairs), &batched);
    float worst = 0;
    for (size_t i = 0; i < pairs.size(); ++i) {
      Translation forced;
      ASSERT_TRUE(ForceDecode(m, pairs[i]->source, pairs[i]->target, &forced).ok);
      ASSERT_EQ(forced.attention.rows(), batched[i].rows());
      ASSERT_EQ(forced.attention.cols(), batched[i].cols());
      worst = std::max(worst, (forced.attention - batched[i]).cwiseAbs().maxCoeff());
    }
    std::printf("%-11s batched vs step-by-step attention over %zu ragged sentences: largest difference %.1e\n",
                ModelKindName(kind), pairs.size(), worst);
    EXPECT_LT(worst, 1e-4f);
  }
}

}  // namespace
}  // namespace seq2seq
}  // namespace attnviz
