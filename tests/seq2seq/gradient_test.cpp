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

double Loss(const Model& m, const Batch& b) {
  Tape tape;
  return tape.Value(ForwardTeacherForced(m, &tape, b))(0, 0);
}

// Returns the largest relative error over every parameter tensor (2 random directions each).
double CheckGradients(ModelConfig config, const char* label) {
  Model m = TinyModel(config);
  const Batch batch = TinyBatch(m);
  Tape tape;
  for (Parameter& p : m.params) p.grad = Mat::Zero(p.value.rows(), p.value.cols());
  tape.Backward(ForwardTeacherForced(m, &tape, batch));
  Rng rng(17);
  double worst = 0;
  std::string worst_name;
  const Real eps = 1e-5;
  auto check = [&](Parameter& p, const Mat& dir, const char* what) {
    const Mat saved = p.value;
    p.value = saved + eps * dir;
    const double plus = Loss(m, batch);
    p.value = saved - eps * dir;
    const double minus = Loss(m, batch);
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

TEST(Seq2SeqGradients, Transformer) {
  CheckGradients(DefaultConfig(ModelKind::Transformer, Task::EnFr), "transformer");
}

}  // namespace
}  // namespace seq2seq
}  // namespace attnviz
