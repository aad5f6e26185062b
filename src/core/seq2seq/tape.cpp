// attnviz seq2seq: forward and backward of every tape operation (see tape.h).
#include "core/seq2seq/tape.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>

#include "core/kernels.h"
#include "core/seq2seq/gemm.h"

namespace attnviz {
namespace seq2seq {

namespace {
// log P is taken of max(P, this): an attention weight that underflowed to 0 gives a large but finite loss.
constexpr Real kTinyProbability = static_cast<Real>(1e-30);
// x = tanh(x) for n values: vectorized in float (gemm.h), libm's in the double gradient-check build.
void TanhN(Real* x, int n) {
#ifdef ATTNVIZ_SEQ2SEQ_DOUBLE
  for (int i = 0; i < n; ++i) x[i] = std::tanh(x[i]);
#else
  TanhInPlace(x, n);
#endif
}
// x = exp(x) for n values: kernels::ExpFast in float (vectorized; libm's expf is scalar in WASM).
void ExpN(Real* x, int n) {
#ifdef ATTNVIZ_SEQ2SEQ_DOUBLE
  for (int i = 0; i < n; ++i) x[i] = std::exp(x[i]);
#else
  kernels::ExpFast(x, x, n);
#endif
}
}  // namespace

void Tape::Clear() {
  count_ = 0;
}

Tape::Id Tape::NewNode(Op op) {
  if (count_ == static_cast<int>(nodes_.size())) nodes_.emplace_back();
  Node& n = nodes_[count_];
  n.op = op;
  n.a = n.b = n.c = -1;
  n.i0 = n.i1 = n.i2 = 0;
  n.param = nullptr;
  n.ints.clear();
  return count_++;
}

const Mat& Tape::Value(Id id) const {
  const Node& n = nodes_[id];
  return n.op == Op::Param ? n.param->value : n.value;
}
const Mat& Tape::Saved(Id id) const {
  return nodes_[id].saved;
}

Mat& Tape::G(Id id) {
  Node& n = nodes_[id];
  return n.op == Op::Param ? ParamGrad(n.param) : n.grad;
}

void Tape::SetGradientTarget(const Parameter* first, std::vector<Mat>* grads) {
  grad_first_ = grads ? first : nullptr;
  grad_target_ = grads;
}

Mat& Tape::ParamGrad(Parameter* p) {
  if (grad_target_) {
    const auto i = reinterpret_cast<std::uintptr_t>(p) - reinterpret_cast<std::uintptr_t>(grad_first_);
    if (i % sizeof(Parameter) == 0 && i / sizeof(Parameter) < grad_target_->size())
      return (*grad_target_)[i / sizeof(Parameter)];
  }
  return p->grad;
}

// ---------------------------------------------------------------------------
// leaves
// ---------------------------------------------------------------------------
Tape::Id Tape::Constant(const Mat& value) {
  const Id id = NewNode(Op::Constant);
  nodes_[id].value = value;
  return id;
}

Tape::Id Tape::Param(const Parameter* p) {
  const Id id = NewNode(Op::Param);
  nodes_[id].param = const_cast<Parameter*>(p);  // only Backward writes, into p->grad
  return id;
}

Tape::Id Tape::Gather(const Parameter* table, const std::vector<int>& rows) {
  const Id id = NewNode(Op::Gather);
  Node& n = nodes_[id];
  n.param = const_cast<Parameter*>(table);  // only Backward writes, into table->grad
  n.ints = rows;
  n.value.resize(static_cast<int>(rows.size()), table->value.cols());
  for (size_t i = 0; i < rows.size(); ++i) n.value.row(i) = table->value.row(rows[i]);
  return id;
}

// ---------------------------------------------------------------------------
// generic
// ---------------------------------------------------------------------------
Tape::Id Tape::MatMul(Id a, Id b) {
  const Id id = NewNode(Op::MatMul);
  Node& n = nodes_[id];
  n.a = a, n.b = b;
  const Mat& A = Value(a);
  const Mat& B = Value(b);
  n.value.resize(A.rows(), B.cols());
#ifdef ATTNVIZ_SEQ2SEQ_DOUBLE
  n.value.noalias() = A * B;
#else
  MatMulNN(static_cast<int>(A.rows()), static_cast<int>(B.cols()), static_cast<int>(A.cols()), A.data(),
           static_cast<int>(A.cols()), B.data(), static_cast<int>(B.cols()), n.value.data(), static_cast<int>(B.cols()),
           false);
#endif
  return id;
}

Tape::Id Tape::AddBias(Id a, Id bias) {
  const Id id = NewNode(Op::AddBias);
  Node& n = nodes_[id];
  n.a = a, n.b = bias;
  n.value = Value(a);
  n.value.rowwise() += Value(bias).row(0);
  return id;
}

Tape::Id Tape::Add(Id a, Id b) {
  const Id id = NewNode(Op::Add);
  Node& n = nodes_[id];
  n.a = a, n.b = b;
  n.value = Value(a) + Value(b);
  return id;
}

Tape::Id Tape::Tanh(Id a) {
  const Id id = NewNode(Op::Tanh);
  Node& n = nodes_[id];
  n.a = a;
  n.value = Value(a);
  TanhN(n.value.data(), static_cast<int>(n.value.size()));
  return id;
}

Tape::Id Tape::Relu(Id a) {
  const Id id = NewNode(Op::Relu);
  Node& n = nodes_[id];
  n.a = a;
  n.value = Value(a).cwiseMax(0.0f);
  return id;
}

Tape::Id Tape::ConcatCols(const std::vector<Id>& parts) {
  const Id id = NewNode(Op::ConcatCols);
  Node& n = nodes_[id];
  n.ints = parts;
  int cols = 0;
  for (Id p : parts) cols += static_cast<int>(Value(p).cols());
  n.value.resize(Value(parts[0]).rows(), cols);
  int c = 0;
  for (Id p : parts) {
    n.value.middleCols(c, Value(p).cols()) = Value(p);
    c += static_cast<int>(Value(p).cols());
  }
  return id;
}

Tape::Id Tape::StackRows(const std::vector<Id>& parts) {
  const Id id = NewNode(Op::StackRows);
  Node& n = nodes_[id];
  n.ints = parts;
  int rows = 0;
  for (Id p : parts) rows += static_cast<int>(Value(p).rows());
  n.value.resize(rows, Value(parts[0]).cols());
  int r = 0;
  for (Id p : parts) {
    n.value.middleRows(r, Value(p).rows()) = Value(p);
    r += static_cast<int>(Value(p).rows());
  }
  return id;
}

Tape::Id Tape::RowBlock(Id a, int row0, int rows) {
  const Id id = NewNode(Op::RowBlock);
  Node& n = nodes_[id];
  n.a = a, n.i0 = row0;
  n.value = Value(a).middleRows(row0, rows);
  return id;
}

Tape::Id Tape::SelectRows(Id a, const std::vector<int>& rows) {
  const Id id = NewNode(Op::SelectRows);
  Node& n = nodes_[id];
  n.a = a;
  n.ints = rows;
  const Mat& A = Value(a);
  n.value.resize(static_cast<int>(rows.size()), A.cols());
  for (size_t i = 0; i < rows.size(); ++i) n.value.row(i) = A.row(rows[i]);
  return id;
}

// ---------------------------------------------------------------------------
// fused sequence kernels: forward
// ---------------------------------------------------------------------------
Tape::Id Tape::Gru(Id gx, Id gh, Id h, const std::vector<int>* row_valid) {
  const Id id = NewNode(Op::Gru);
  Node& n = nodes_[id];
  n.a = gx, n.b = gh, n.c = h;
  if (row_valid) n.ints = *row_valid;
  const Mat& X = Value(gx);
  const Mat& Hg = Value(gh);
  const Mat& H = Value(h);
  const int B = static_cast<int>(H.rows()), D = static_cast<int>(H.cols());
  n.saved.resize(B, 3 * D);  // [r | z | n]
  n.value.resize(B, D);
  for (int b = 0; b < B; ++b) {
    if (!n.ints.empty() && !n.ints[b]) {
      n.value.row(b) = H.row(b);
      n.saved.row(b).setZero();
      continue;
    }
    Real* gates = &n.saved(b, 0);  // [r | z | n] of this row
    // r, z = sigmoid(pre) = (1 + tanh(pre / 2)) / 2
    for (int j = 0; j < 2 * D; ++j) gates[j] = 0.5f * (X(b, j) + Hg(b, j));
    TanhN(gates, 2 * D);
    for (int j = 0; j < 2 * D; ++j) gates[j] = 0.5f * (1.0f + gates[j]);
    for (int j = 0; j < D; ++j) gates[2 * D + j] = X(b, 2 * D + j) + gates[j] * Hg(b, 2 * D + j);
    TanhN(gates + 2 * D, D);
    for (int j = 0; j < D; ++j) {
      const Real z = gates[D + j], nn = gates[2 * D + j];
      n.value(b, j) = (1.0f - z) * nn + z * H(b, j);
    }
  }
  return id;
}

Tape::Id Tape::AdditiveScores(Id keys_proj, Id query_proj, Id v) {
  const Id id = NewNode(Op::AdditiveScores);
  Node& n = nodes_[id];
  n.a = keys_proj, n.b = query_proj, n.c = v;
  const Mat& K = Value(keys_proj);
  const Mat& Q = Value(query_proj);
  const Mat& V = Value(v);
  const int B = static_cast<int>(Q.rows()), T = static_cast<int>(K.rows()) / B;
  // pass 1: T = tanh(keys + query) [T * B, a]; pass 2: scores = T . v
  n.saved.resize(K.rows(), K.cols());
  n.value.resize(B, T);
  for (int t = 0; t < T; ++t)
    for (int b = 0; b < B; ++b) n.saved.row(t * B + b) = K.row(t * B + b) + Q.row(b);
  TanhN(n.saved.data(), static_cast<int>(n.saved.size()));
  for (int t = 0; t < T; ++t)
    for (int b = 0; b < B; ++b) n.value(b, t) = n.saved.row(t * B + b).dot(V.row(0));
  return id;
}

Tape::Id Tape::DotScores(Id keys, Id query) {
  const Id id = NewNode(Op::DotScores);
  Node& n = nodes_[id];
  n.a = keys, n.b = query;
  const Mat& K = Value(keys);
  const Mat& Q = Value(query);
  const int B = static_cast<int>(Q.rows()), T = static_cast<int>(K.rows()) / B;
  n.value.resize(B, T);
  for (int t = 0; t < T; ++t)
    for (int b = 0; b < B; ++b) n.value(b, t) = K.row(t * B + b).dot(Q.row(b));
  return id;
}

Tape::Id Tape::MaskedSoftmax(Id scores, const std::vector<int>& lengths) {
  const Id id = NewNode(Op::MaskedSoftmax);
  Node& n = nodes_[id];
  n.a = scores;
  n.ints = lengths;
  const Mat& S = Value(scores);
  n.value.setZero(S.rows(), S.cols());
  for (int b = 0; b < S.rows(); ++b) {
    const int len = std::min<int>(lengths[b], static_cast<int>(S.cols()));
    if (len <= 0) continue;                         // fully masked row stays 0
    const Real mx = S.row(b).head(len).maxCoeff();  // subtract the row max
    Real sum = 0.0f;
    for (int t = 0; t < len; ++t) sum += (n.value(b, t) = std::exp(S(b, t) - mx));
    n.value.row(b).head(len) /= sum;  // sum >= 1 (the max term is exp(0))
  }
  return id;
}

Tape::Id Tape::Context(Id weights, Id values) {
  const Id id = NewNode(Op::Context);
  Node& n = nodes_[id];
  n.a = weights, n.b = values;
  const Mat& W = Value(weights);
  const Mat& V = Value(values);
  const int B = static_cast<int>(W.rows()), T = static_cast<int>(W.cols());
  n.value.setZero(B, V.cols());
  for (int t = 0; t < T; ++t)
    for (int b = 0; b < B; ++b)
      if (W(b, t) != 0.0f) n.value.row(b) += W(b, t) * V.row(t * B + b);
  return id;
}

Tape::Id Tape::LayerNorm(Id x, Id gamma, Id beta) {
  const Id id = NewNode(Op::LayerNorm);
  Node& n = nodes_[id];
  n.a = x, n.b = gamma, n.c = beta;
  const Mat& X = Value(x);
  const int m = static_cast<int>(X.rows()), d = static_cast<int>(X.cols());
  n.saved.resize(m, d);   // xhat
  n.saved2.resize(m, 1);  // 1 / std
  n.value.resize(m, d);
  for (int i = 0; i < m; ++i) {
    const Real mean = X.row(i).mean();
    const Real var = (X.row(i).array() - mean).square().mean();
    const Real rstd = 1.0f / std::sqrt(var + 1e-5f);
    n.saved2(i, 0) = rstd;
    n.saved.row(i) = ((X.row(i).array() - mean) * rstd).matrix();
    n.value.row(i) = (n.saved.row(i).array() * Value(gamma).row(0).array() + Value(beta).row(0).array()).matrix();
  }
  return id;
}

Tape::Id Tape::MultiHeadAttention(Id q, Id k, Id v, int batch, int heads, const std::vector<int>& key_lengths,
                                  bool causal) {
  const Id id = NewNode(Op::MultiHeadAttention);
  Node& n = nodes_[id];
  n.a = q, n.b = k, n.c = v;
  n.i0 = batch, n.i1 = heads, n.i2 = causal ? 1 : 0;
  n.ints = key_lengths;
  const Mat& Q = Value(q);
  const Mat& K = Value(k);
  const Mat& V = Value(v);
  const int nq = static_cast<int>(Q.rows()) / batch, nk = static_cast<int>(K.rows()) / batch;
  const int D = static_cast<int>(Q.cols()), dh = D / heads;
  const Real scale = 1.0f / std::sqrt(static_cast<Real>(dh));
  n.saved.resize(batch * heads * nq, nk);
  n.value.resize(Q.rows(), D);
  for (int b = 0; b < batch; ++b) {
    const int len = std::min(key_lengths[b], nk);
    for (int h = 0; h < heads; ++h) {
      auto P = n.saved.middleRows((b * heads + h) * nq, nq);
      // pass 1: scores = Q_h K_h^T / sqrt(d_h)
      P.noalias() = Q.block(b * nq, h * dh, nq, dh) * K.block(b * nk, h * dh, nk, dh).transpose();
      // pass 2: masked, max-subtracted softmax (a fully masked row becomes zeros)
      for (int i = 0; i < nq; ++i) {
        const int visible = causal ? std::min(len, i + 1) : len;
        if (visible <= 0) {
          P.row(i).setZero();
          continue;
        }
        const Real mx = P.row(i).head(visible).maxCoeff() * scale;
        Real sum = 0.0f;
        for (int j = 0; j < visible; ++j) sum += (P(i, j) = std::exp(P(i, j) * scale - mx));
        P.row(i).head(visible) /= sum;
        P.row(i).tail(nk - visible).setZero();
      }
      // pass 3: output = P V_h
      n.value.block(b * nq, h * dh, nq, dh).noalias() = P * V.block(b * nk, h * dh, nk, dh);
    }
  }
  return id;
}

Tape::Id Tape::CrossEntropy(Id logits, const std::vector<int>& targets) {
  const Id id = NewNode(Op::CrossEntropy);
  Node& n = nodes_[id];
  n.a = logits;
  n.ints = targets;
  const Mat& L = Value(logits);
  n.saved.resize(L.rows(), L.cols());  // softmax probabilities
  double total = 0.0;
  int count = 0;
  for (int i = 0; i < L.rows(); ++i) {
    const Real mx = L.row(i).maxCoeff();
    n.saved.row(i) = (L.row(i).array() - mx).matrix();
    ExpN(&n.saved(i, 0), static_cast<int>(L.cols()));
    const Real sum = n.saved.row(i).sum();
    n.saved.row(i) /= sum;
    if (targets[i] >= 0) {
      total += -(L(i, targets[i]) - mx - std::log(sum));
      ++count;
    }
  }
  n.i0 = count;
  n.value.resize(1, 1);
  n.value(0, 0) = count ? static_cast<Real>(total / count) : 0.0f;
  return id;
}

Tape::Id Tape::AttentionSupervision(Id attention, const std::vector<AttentionTarget>& targets, Real weight) {
  const Id id = NewNode(Op::AttentionSupervision);
  Node& n = nodes_[id];
  n.a = attention;
  n.targets = targets;
  n.saved.resize(1, 1);
  n.saved(0, 0) = weight;
  // A MultiHeadAttention node keeps its probabilities in saved; any other node (a MaskedSoftmax,
  // or a StackRows of them) is the probabilities itself.
  const Node& att = nodes_[attention];
  const Mat& P = att.op == Op::MultiHeadAttention ? att.saved : att.value;
  double total = 0.0;
  for (const AttentionTarget& t : targets)
    total -= static_cast<double>(t.p) * std::log(std::max(P(t.row, t.col), kTinyProbability));
  n.value.resize(1, 1);
  n.value(0, 0) = static_cast<Real>(weight * total);
  return id;
}

// ---------------------------------------------------------------------------
// backward
// ---------------------------------------------------------------------------
void Tape::Backward(Id loss) {
  for (int i = 0; i <= loss; ++i) {
    Node& n = nodes_[i];
    if (n.op != Op::Param) n.grad.setZero(n.value.rows(), n.value.cols());
    n.has_extra = false;
    if (!n.param) continue;
    Mat& pg = ParamGrad(n.param);
    if (pg.rows() != n.param->value.rows() || pg.cols() != n.param->value.cols())
      pg = Mat::Zero(n.param->value.rows(), n.param->value.cols());
  }
  nodes_[loss].grad.setOnes();
  deferred_.clear();
  for (int i = loss; i >= 0; --i) BackwardNode(nodes_[i]);
  FlushParamProducts();
}

void Tape::FlushParamProducts() {
#ifndef ATTNVIZ_SEQ2SEQ_DOUBLE  // the double build (gradient checks) multiplies through Eigen at once
  // Grouped by weight, each group in backward order (stable): the same sums for every run.
  std::stable_sort(deferred_.begin(), deferred_.end(),
                   [](const auto& x, const auto& y) { return std::less<Parameter*>()(x.first, y.first); });
  for (size_t g0 = 0, g1; g0 < deferred_.size(); g0 = g1) {
    Parameter* p = deferred_[g0].first;
    int rows = 0;
    for (g1 = g0; g1 < deferred_.size() && deferred_[g1].first == p; ++g1)
      rows += (int)deferred_[g1].second->grad.rows();
    Mat& dB = ParamGrad(p);
    const int k = static_cast<int>(dB.rows()), cols = static_cast<int>(dB.cols());
    stack_a_.resize(static_cast<size_t>(rows) * k);
    stack_dy_.resize(static_cast<size_t>(rows) * cols);
    size_t at = 0;
    for (size_t e = g0; e < g1; ++e) {
      const Node& n = *deferred_[e].second;
      const Mat& A = Value(n.a);
      std::copy(A.data(), A.data() + A.size(), stack_a_.data() + at * k);
      std::copy(n.grad.data(), n.grad.data() + n.grad.size(), stack_dy_.data() + at * cols);
      at += static_cast<size_t>(A.rows());
    }
    MatMulTN(k, cols, rows, stack_a_.data(), k, stack_dy_.data(), cols, dB.data(), cols);  // dB += A^T dY
  }
  deferred_.clear();
#endif
}

void Tape::MatMulBackward(Node& n) {
  const Mat& dY = n.grad;     // [m, n]
  const Mat& A = Value(n.a);  // [m, k]
  const Mat& B = Value(n.b);  // [k, n]
  Mat& dA = G(n.a);
  Mat& dB = G(n.b);
#ifdef ATTNVIZ_SEQ2SEQ_DOUBLE
  dA.noalias() += dY * B.transpose();
  dB.noalias() += A.transpose() * dY;
#else
  const int m = static_cast<int>(A.rows()), k = static_cast<int>(A.cols()), cols = static_cast<int>(B.cols());
  MatMulNT(m, k, cols, dY.data(), cols, B.data(), cols, dA.data(), k);  // dA [m, k] += dY B^T
  if (defer_ && nodes_[n.b].op == Op::Param)
    deferred_.emplace_back(nodes_[n.b].param, &n);  // dB += A^T dY with the weight's other uses
  else
    MatMulTN(k, cols, m, A.data(), k, dY.data(), cols, dB.data(), cols);  // dB [k, n] += A^T dY
#endif
}

void Tape::BackwardNode(Node& n) {
  const Mat& dY = n.grad;
  switch (n.op) {
    case Op::Constant:
    case Op::Param:
      break;
    case Op::Gather: {
      Mat& table = ParamGrad(n.param);
      for (size_t i = 0; i < n.ints.size(); ++i) table.row(n.ints[i]) += dY.row(i);
      break;
    }
    case Op::MatMul:
      MatMulBackward(n);
      break;
    case Op::AddBias:
      G(n.a) += dY;
      G(n.b) += dY.colwise().sum();
      break;
    case Op::Add:
      G(n.a) += dY;
      G(n.b) += dY;
      break;
    case Op::Tanh:
      G(n.a).array() += dY.array() * (1.0f - n.value.array().square());
      break;
    case Op::Relu:
      G(n.a).array() += dY.array() * (n.value.array() > 0.0f).cast<Real>();
      break;
    case Op::ConcatCols: {
      int c = 0;
      for (Id p : n.ints) {
        const int w = static_cast<int>(Value(p).cols());
        G(p) += dY.middleCols(c, w);
        c += w;
      }
      break;
    }
    case Op::StackRows: {
      int r = 0;
      for (Id p : n.ints) {
        const int h = static_cast<int>(Value(p).rows());
        G(p) += dY.middleRows(r, h);
        r += h;
      }
      break;
    }
    case Op::RowBlock:
      G(n.a).middleRows(n.i0, dY.rows()) += dY;
      break;
    case Op::SelectRows: {
      Mat& dA = G(n.a);
      for (size_t i = 0; i < n.ints.size(); ++i) dA.row(n.ints[i]) += dY.row(i);
      break;
    }
    case Op::Gru: {
      const Mat& Hg = Value(n.b);
      const Mat& H = Value(n.c);
      Mat& dX = G(n.a);
      Mat& dHg = G(n.b);
      Mat& dH = G(n.c);
      const int B = static_cast<int>(H.rows()), D = static_cast<int>(H.cols());
      for (int b = 0; b < B; ++b) {
        if (!n.ints.empty() && !n.ints[b]) {
          dH.row(b) += dY.row(b);
          continue;
        }
        for (int j = 0; j < D; ++j) {
          const Real r = n.saved(b, j), z = n.saved(b, D + j), nn = n.saved(b, 2 * D + j);
          const Real dy = dY(b, j);
          const Real dn_pre = dy * (1.0f - z) * (1.0f - nn * nn);
          const Real dz_pre = dy * (H(b, j) - nn) * z * (1.0f - z);
          const Real dr_pre = dn_pre * Hg(b, 2 * D + j) * r * (1.0f - r);
          dH(b, j) += dy * z;
          dX(b, j) += dr_pre, dX(b, D + j) += dz_pre, dX(b, 2 * D + j) += dn_pre;
          dHg(b, j) += dr_pre, dHg(b, D + j) += dz_pre, dHg(b, 2 * D + j) += dn_pre * r;
        }
      }
      break;
    }
    case Op::AdditiveScores: {
      Mat& dK = G(n.a);
      Mat& dQ = G(n.b);
      Mat& dV = G(n.c);
      const Mat& V = Value(n.c);
      const int B = static_cast<int>(dY.rows()), T = static_cast<int>(dY.cols());
      const int a = static_cast<int>(V.cols());
      for (int t = 0; t < T; ++t)
        for (int b = 0; b < B; ++b) {
          const Real g = dY(b, t);
          if (g == 0.0f) continue;
          const Real* tr = &n.saved(t * B + b, 0);
          const Real* v = V.data();
          Real* dv = dV.data();
          Real* dk = &dK(t * B + b, 0);
          Real* dq = &dQ(b, 0);
          for (int j = 0; j < a; ++j) {
            dv[j] += g * tr[j];
            const Real dpre = g * v[j] * (1.0f - tr[j] * tr[j]);
            dk[j] += dpre;
            dq[j] += dpre;
          }
        }
      break;
    }
    case Op::DotScores: {
      const Mat& K = Value(n.a);
      const Mat& Q = Value(n.b);
      Mat& dK = G(n.a);
      Mat& dQ = G(n.b);
      const int B = static_cast<int>(dY.rows()), T = static_cast<int>(dY.cols());
      for (int t = 0; t < T; ++t)
        for (int b = 0; b < B; ++b) {
          dK.row(t * B + b) += dY(b, t) * Q.row(b);
          dQ.row(b) += dY(b, t) * K.row(t * B + b);
        }
      break;
    }
    case Op::MaskedSoftmax: {
      Mat& dS = G(n.a);
      for (int b = 0; b < dY.rows(); ++b) {
        const Real dot = dY.row(b).dot(n.value.row(b));
        dS.row(b).array() += n.value.row(b).array() * (dY.row(b).array() - dot);
      }
      break;
    }
    case Op::Context: {
      const Mat& W = Value(n.a);
      const Mat& V = Value(n.b);
      Mat& dW = G(n.a);
      Mat& dV = G(n.b);
      const int B = static_cast<int>(W.rows()), T = static_cast<int>(W.cols());
      for (int t = 0; t < T; ++t)
        for (int b = 0; b < B; ++b) {
          dW(b, t) += dY.row(b).dot(V.row(t * B + b));
          if (W(b, t) != 0.0f) dV.row(t * B + b) += W(b, t) * dY.row(b);
        }
      break;
    }
    case Op::LayerNorm: {
      const auto gamma = Value(n.b).row(0).array();
      Mat& dX = G(n.a);
      G(n.b).row(0) += (dY.array() * n.saved.array()).matrix().colwise().sum();
      G(n.c).row(0) += dY.colwise().sum();
      const Real inv_d = 1.0f / static_cast<Real>(dY.cols());
      for (int i = 0; i < dY.rows(); ++i) {
        const Eigen::Array<Real, 1, Eigen::Dynamic> dxhat = dY.row(i).array() * gamma;
        const Real mean_dxhat = dxhat.sum() * inv_d;
        const Real mean_dxhat_xhat = (dxhat * n.saved.row(i).array()).sum() * inv_d;
        dX.row(i).array() += n.saved2(i, 0) * (dxhat - mean_dxhat - n.saved.row(i).array() * mean_dxhat_xhat);
      }
      break;
    }
    case Op::MultiHeadAttention: {
      const Mat& Q = Value(n.a);
      const Mat& K = Value(n.b);
      const Mat& V = Value(n.c);
      Mat& dQ = G(n.a);
      Mat& dK = G(n.b);
      Mat& dV = G(n.c);
      const int batch = n.i0, heads = n.i1;
      const int nq = static_cast<int>(Q.rows()) / batch, nk = static_cast<int>(K.rows()) / batch;
      const int dh = static_cast<int>(Q.cols()) / heads;
      const Real scale = 1.0f / std::sqrt(static_cast<Real>(dh));
      Mat dP(nq, nk);
      for (int b = 0; b < batch; ++b)
        for (int h = 0; h < heads; ++h) {
          const auto P = n.saved.middleRows((b * heads + h) * nq, nq);
          const auto dO = dY.block(b * nq, h * dh, nq, dh);
          dV.block(b * nk, h * dh, nk, dh).noalias() += P.transpose() * dO;
          dP.noalias() = dO * V.block(b * nk, h * dh, nk, dh).transpose();
          if (n.has_extra) dP += n.saved2.middleRows((b * heads + h) * nq, nq);  // from AttentionSupervision
          // softmax backward: dS = P * (dP - rowsum(dP * P)), then the 1/sqrt(d_h) scale
          for (int i = 0; i < nq; ++i) {
            const Real dot = dP.row(i).dot(P.row(i));
            dP.row(i) = (P.row(i).array() * (dP.row(i).array() - dot) * scale).matrix();
          }
          dQ.block(b * nq, h * dh, nq, dh).noalias() += dP * K.block(b * nk, h * dh, nk, dh);
          dK.block(b * nk, h * dh, nk, dh).noalias() += dP.transpose() * Q.block(b * nq, h * dh, nq, dh);
        }
      break;
    }
    case Op::AttentionSupervision: {
      // d(-w p log P)/dP = -w p / P; the attention node's softmax backward turns it into w (P - p).
      const Real g = dY(0, 0) * n.saved(0, 0);
      Node& att = nodes_[n.a];
      if (att.op != Op::MultiHeadAttention) {  // probabilities as a value: the gradient flows as usual
        Mat& dP = G(n.a);
        for (const AttentionTarget& t : n.targets)
          dP(t.row, t.col) -= g * t.p / std::max(att.value(t.row, t.col), kTinyProbability);
        break;
      }
      if (!att.has_extra) {
        att.saved2.setZero(att.saved.rows(), att.saved.cols());
        att.has_extra = true;
      }
      for (const AttentionTarget& t : n.targets)
        att.saved2(t.row, t.col) -= g * t.p / std::max(att.saved(t.row, t.col), kTinyProbability);
      break;
    }
    case Op::CrossEntropy: {
      if (n.i0 == 0) break;
      Mat& dL = G(n.a);
      const Real g = dY(0, 0) / static_cast<Real>(n.i0);
      for (int i = 0; i < dL.rows(); ++i) {
        if (n.ints[i] < 0) continue;
        dL.row(i) += g * n.saved.row(i);
        dL(i, n.ints[i]) -= g;
      }
      break;
    }
  }
}

}  // namespace seq2seq
}  // namespace attnviz
