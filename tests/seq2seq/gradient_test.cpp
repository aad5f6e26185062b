// seq2seq: finite-difference checks of every model's backward pass, tensor by tensor.
// Built with ATTNVIZ_SEQ2SEQ_DOUBLE (see tests.cmake): the same tape and model code in double.
// Each tensor is checked along 2 random directions over the whole tensor (central differences
// of the loss vs the analytic <grad, direction>) and at 3 single coordinates.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "core/seq2seq/model.h"
#ifndef ATTNVIZ_SEQ2SEQ_DOUBLE
#error "gradient_test.cpp must be compiled with ATTNVIZ_SEQ2SEQ_DOUBLE (tests/seq2seq/tests.cmake)"
#endif
#include "core/seq2seq/rng.h"

namespace attnviz {
namespace seq2seq {
namespace {

Model TinyModel(ModelConfig c) {
  Vocab src, tgt;
  for (int i = 0; i < 7; ++i) src.Add("s" + std::to_string(i)), tgt.Add("t" + std::to_string(i));
  c.emb = 5, c.enc_hidden = 4, c.attn = 5;
  if (c.dec_hidden != 8) c.dec_hidden = 6;
  c.d_model = 8, c.heads = 2, c.ff = 12, c.enc_layers = 2, c.dec_layers = 2;
  Model m;
  EXPECT_TRUE(InitModel(c, src, tgt, 5, &m).ok);
  Rng rng(99);
  for (Parameter& p : m.params)  // move away from zero biases / unit gains so every path is exercised
    for (int i = 0; i < p.value.size(); ++i) p.value.data()[i] += static_cast<Real>(rng.Symmetric(0.3f));
  return m;
}

Batch TinyBatch(const Model& m) {
  Rng rng(3);
  Batch b;
  const int src_len[3] = {3, 5, 2}, tgt_len[3] = {4, 2, 3};  // ragged, so padding and masks matter
  b.size = 3;
  for (int i = 0; i < 3; ++i) {
    std::vector<int> s, t;
    for (int k = 0; k < src_len[i]; ++k) s.push_back(kNumSpecial + rng.Uniform(m.source_vocab.Size() - kNumSpecial));
    for (int k = 0; k < tgt_len[i]; ++k) t.push_back(kNumSpecial + rng.Uniform(m.target_vocab.Size() - kNumSpecial));
    b.source.push_back(s), b.target.push_back(t);
  }
  return b;
}

// Gold links for the supervised head: one or two sure links per target word, some words unaligned.
void AddTinyLinks(Batch* b) {
  Rng rng(11);
  b->links.assign(b->size, {});
  for (int i = 0; i < b->size; ++i)
    for (int t = 0; t < static_cast<int>(b->target[i].size()); ++t) {
      const int n_s = static_cast<int>(b->source[i].size());
      if (t == 1) continue;  // an unaligned word (like punctuation)
      b->links[i].push_back({t, rng.Uniform(n_s), true});
      if (t == 0 && n_s > 1) b->links[i].push_back({t, (b->links[i].back().source + 1) % n_s, true});
      b->links[i].push_back({t, rng.Uniform(n_s), false});  // possible links are not supervised
    }
}

double Loss(const Model& m, const Batch& b, Real align_weight) {
  Tape tape;
  return tape.Value(ForwardTeacherForced(m, &tape, b, nullptr, static_cast<float>(align_weight)))(0, 0);
}

// Returns the largest relative error over every parameter tensor (2 random directions each).
// align_weight > 0: the alignment loss (gold links in the batch) on the Transformer's supervised head
// or on the RNN models' attention (guided alignment).
double CheckGradients(ModelConfig config, const char* label, Real align_weight = 0) {
  Model m = TinyModel(config);
  Batch batch = TinyBatch(m);
  if (align_weight > 0) AddTinyLinks(&batch);
  Tape tape;
  for (Parameter& p : m.params) p.grad = Mat::Zero(p.value.rows(), p.value.cols());
  const Tape::Id loss = ForwardTeacherForced(m, &tape, batch, nullptr, static_cast<float>(align_weight));
  if (align_weight > 0) {
    Tape plain;
    const double without = plain.Value(ForwardTeacherForced(m, &plain, batch))(0, 0);
    EXPECT_GT(tape.Value(loss)(0, 0), without + 1e-6) << "the alignment term adds to the loss";
  }
  tape.Backward(loss);
  Rng rng(17);
  double worst = 0;
  std::string worst_name;
  const Real eps = 1e-5;
  auto check = [&](Parameter& p, const Mat& dir, const char* what) {
    const Mat saved = p.value;
    p.value = saved + eps * dir;
    const double plus = Loss(m, batch, align_weight);
    p.value = saved - eps * dir;
    const double minus = Loss(m, batch, align_weight);
    p.value = saved;
    const double numeric = (plus - minus) / (2.0 * eps);
    const double analytic = (p.grad.array() * dir.array()).sum();
    const double err =
        std::fabs(numeric - analytic) /
        std::max({std::fabs(numeric), std::fabs(analytic), 1e-4});  // floor: key biases have an exactly zero gradient
    if (err > worst) worst = err, worst_name = p.name + " " + what;
    EXPECT_LT(err, 1e-5) << label << " " << p.name << " " << what << ": analytic " << analytic << " numeric "
                         << numeric;
  };
  for (Parameter& p : m.params) {
    for (int trial = 0; trial < 2; ++trial) {
      Mat dir(p.value.rows(), p.value.cols());
      for (int i = 0; i < dir.size(); ++i) dir.data()[i] = rng.Symmetric(1.0f);
      check(p, dir, "(direction)");
    }
    for (int trial = 0; trial < 3; ++trial) {
      Mat dir = Mat::Zero(p.value.rows(), p.value.cols());
      dir.data()[rng.Uniform(static_cast<int>(dir.size()))] = 1;
      check(p, dir, "(coordinate)");
    }
  }
  std::printf("%-22s %3zu tensors, %5lld weights: largest relative error %.2e (%s)\n", label, m.params.size(),
              static_cast<long long>(m.NumWeights()), worst, worst_name.c_str());
  return worst;
}

TEST(Seq2SeqGradients, Bahdanau) {
  CheckGradients(DefaultConfig(ModelKind::Bahdanau, Task::EnFr), "bahdanau");
}

TEST(Seq2SeqGradients, LuongGeneral) {
  CheckGradients(DefaultConfig(ModelKind::Luong, Task::EnFr), "luong (general)");
}

TEST(Seq2SeqGradients, LuongDot) {
  ModelConfig c = DefaultConfig(ModelKind::Luong, Task::EnFr);
  c.luong_score = LuongScore::Dot;
  c.dec_hidden = 8;  // == 2 * enc_hidden of the tiny model
  CheckGradients(c, "luong (dot)");
}

TEST(Seq2SeqGradients, RnnGuidedAlignment) {
  CheckGradients(DefaultConfig(ModelKind::Bahdanau, Task::EnFr), "bahdanau + alignment", 0.7);
  CheckGradients(DefaultConfig(ModelKind::Luong, Task::EnFr), "luong + alignment", 0.7);
}

TEST(Seq2SeqGradients, Transformer) {
  ModelConfig c = DefaultConfig(ModelKind::Transformer, Task::EnFr);
  c.align_layer = c.align_head = -1;
  CheckGradients(c, "transformer");
}

TEST(Seq2SeqGradients, TransformerWithSupervisedHead) {
  ModelConfig c = DefaultConfig(ModelKind::Transformer, Task::EnFr);
  c.align_layer = 1, c.align_head = 1;  // the tiny model has 2 heads; supervise the second of layer 2
  CheckGradients(c, "transformer + alignment", 0.7);
  c.align_layer = 0, c.align_head = 0;  // and the first of layer 1 (the gradient then reaches layer 2 less directly)
  CheckGradients(c, "transformer + alignment (layer 1)", 0.7);
}

}  // namespace
}  // namespace seq2seq
}  // namespace attnviz
