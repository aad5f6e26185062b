// attnviz core: single-head and multi-head attention (see attention.h for the contract).
//
// Attend() in passes:
//   pass 0: validate shapes, finiteness, temperature and masks (Status errors, never a crash)
//   pass 1: raw scores [n_q, n_k] for the score function (Q K^T by the fast GEMM for dot-like)
//   pass 2: scaled = raw * fn_scale / temperature  (fn_scale = 1/sqrt(d_k) or 1/cosine_temperature)
//   pass 3: masked = scaled with -inf where any mask part hides a key, plus the additive mask
//   pass 4: row softmax (subtract row max, guard zero sum; fully masked row -> zeros + flag)
//   pass 5: output = weights V  [n_q, d_v]
// Unmasked dot / scaled-dot without intermediates goes straight to kernels::AttentionForward.
#include "core/attention.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "core/kernels.h"

namespace attnviz {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

kernels::Workspace& ThreadWorkspace() {
  static thread_local kernels::Workspace ws;  // packed buffers allocated once per thread, then reused
  return ws;
}

std::string Shape(const MatrixRM& m) {
  return "[" + std::to_string(m.rows()) + ", " + std::to_string(m.cols()) + "]";
}

template <typename Derived>
bool AllFinite(const Eigen::MatrixBase<Derived>& m) {
  return m.size() == 0 || m.allFinite();
}

Status NonEmptyFinite(const MatrixRM& m, const char* name) {
  if (m.rows() == 0 || m.cols() == 0) return Status::Error(std::string(name) + " is empty " + Shape(m));
  if (!AllFinite(m)) return Status::Error(std::string(name) + " contains NaN or infinity");
  return Status::Ok();
}

bool IsDotLike(ScoreFunction f) {
  return f == ScoreFunction::Dot || f == ScoreFunction::ScaledDot;
}

Status ValidateScoreParams(const MatrixRM& q, const MatrixRM& k, const AttentionParams& p) {
  const int d_q = (int)q.cols(), d_k = (int)k.cols();
  const char* name = ScoreFunctionName(p.score);
  switch (p.score) {
    case ScoreFunction::Dot:
    case ScoreFunction::ScaledDot:
    case ScoreFunction::Cosine:
      if (d_q != d_k)
        return Status::Error("query has d=" + std::to_string(d_q) + " but key has d=" + std::to_string(d_k) + ": " +
                             name + " scores need equal dims");
      if (p.score == ScoreFunction::Cosine && !(p.cosine_temperature > 0.0f && std::isfinite(p.cosine_temperature)))
        return Status::Error("cosine_temperature must be a finite number > 0 (got " +
                             std::to_string(p.cosine_temperature) + ")");
      return Status::Ok();
    case ScoreFunction::General:
      if (p.W.rows() != d_q || p.W.cols() != d_k)
        return Status::Error("general scores need W of shape [d_q, d_k] = [" + std::to_string(d_q) + ", " +
                             std::to_string(d_k) + "] but W is " + Shape(p.W));
      if (!AllFinite(p.W)) return Status::Error("W contains NaN or infinity");
      return Status::Ok();
    case ScoreFunction::Additive: {
      const int a = (int)p.W_q.rows();
      if (a == 0) return Status::Error("additive scores need W_q [a, d_q]; W_q is empty");
      if (p.W_q.cols() != d_q)
        return Status::Error("additive scores need W_q [a, d_q] with d_q=" + std::to_string(d_q) + " but W_q is " +
                             Shape(p.W_q));
      if (p.W_k.rows() != a || p.W_k.cols() != d_k)
        return Status::Error("additive scores need W_k [a, d_k] = [" + std::to_string(a) + ", " + std::to_string(d_k) +
                             "] but W_k is " + Shape(p.W_k));
      if (p.v.size() != a)
        return Status::Error("additive scores need v of size a=" + std::to_string(a) + " but v has " +
                             std::to_string(p.v.size()));
      if (p.b.size() != 0 && p.b.size() != a)
        return Status::Error("additive bias b must be empty or of size a=" + std::to_string(a) + " but has " +
                             std::to_string(p.b.size()));
      if (!AllFinite(p.W_q) || !AllFinite(p.W_k) || !AllFinite(p.v) || !AllFinite(p.b))
        return Status::Error("additive parameters (W_q, W_k, v, b) contain NaN or infinity");
      return Status::Ok();
    }
  }
  return Status::Error("unknown score function");
}

Status ValidateMask(const AttentionMask& m, int n_q, int n_k) {
  if (!m.key_lengths.empty()) {
    if ((int)m.key_lengths.size() != n_q && m.key_lengths.size() != 1)
      return Status::Error("key_lengths has " + std::to_string(m.key_lengths.size()) +
                           " entries; expected 1 or n_q=" + std::to_string(n_q));
    for (int len : m.key_lengths)
      if (len < 0) return Status::Error("key_lengths must be >= 0 (got " + std::to_string(len) + ")");
  }
  if (!m.key_padding.empty() && (int)m.key_padding.size() != n_k)
    return Status::Error("key_padding has " + std::to_string(m.key_padding.size()) +
                         " entries but there are n_k=" + std::to_string(n_k) + " keys");
  if (m.boolean.size() != 0 && (m.boolean.rows() != n_q || m.boolean.cols() != n_k))
    return Status::Error("boolean mask is [" + std::to_string(m.boolean.rows()) + ", " +
                         std::to_string(m.boolean.cols()) + "] but scores are [" + std::to_string(n_q) + ", " +
                         std::to_string(n_k) + "]");
  if (m.additive.size() != 0) {
    if (m.additive.rows() != n_q || m.additive.cols() != n_k)
      return Status::Error("additive mask is " + Shape(m.additive) + " but scores are [" + std::to_string(n_q) + ", " +
                           std::to_string(n_k) + "]");
    for (Eigen::Index i = 0; i < m.additive.size(); ++i) {
      const float x = m.additive.data()[i];
      if (std::isnan(x) || x == std::numeric_limits<float>::infinity())
        return Status::Error("additive mask contains NaN or +infinity (use -inf to mask)");
    }
  }
  return Status::Ok();
}

Status ValidateTemperature(float t) {
  if (!(t > 0.0f) || !std::isfinite(t))
    return Status::Error("temperature must be a finite number > 0 (got " + std::to_string(t) + ")");
  return Status::Ok();
}

bool KeyMasked(const AttentionMask& m, int i, int j) {
  if (!m.key_lengths.empty() && j >= m.key_lengths[m.key_lengths.size() == 1 ? 0 : i]) return true;
  if (!m.key_padding.empty() && m.key_padding[j]) return true;
  if (m.causal && j > i + m.causal_offset) return true;
  if (m.window >= 0 && std::abs(i - j) > m.window) return true;
  if (m.boolean.size() != 0 && m.boolean(i, j)) return true;
  return false;
}

// Raw scores (before any scaling) and the score function's own scale factor.
void RawScores(const MatrixRM& q, const MatrixRM& k, const AttentionParams& p, MatrixRM* raw, float* fn_scale) {
  kernels::Workspace& ws = ThreadWorkspace();
  const int n_q = (int)q.rows(), n_k = (int)k.rows(), d_q = (int)q.cols(), d_k = (int)k.cols();
  raw->resize(n_q, n_k);
  *fn_scale = 1.0f;
  switch (p.score) {
    case ScoreFunction::Dot:
    case ScoreFunction::ScaledDot:
      kernels::GemmNT(n_q, n_k, d_q, 1.0f, q.data(), d_q, k.data(), d_k, raw->data(), n_k, &ws);
      if (p.score == ScoreFunction::ScaledDot) *fn_scale = 1.0f / std::sqrt((float)d_k);
      break;
    case ScoreFunction::General: {
      MatrixRM qw(n_q, d_k);  // [n_q, d_k] = Q W
      kernels::GemmNN(n_q, d_k, d_q, 1.0f, q.data(), d_q, p.W.data(), d_k, qw.data(), d_k, &ws);
      kernels::GemmNT(n_q, n_k, d_k, 1.0f, qw.data(), d_k, k.data(), d_k, raw->data(), n_k, &ws);
      break;
    }
    case ScoreFunction::Additive: {
      const int a = (int)p.W_q.rows();
      MatrixRM pq(n_q, a), pk(n_k, a);  // W_q q_i [n_q, a], W_k k_j + b [n_k, a]
      kernels::GemmNT(n_q, a, d_q, 1.0f, q.data(), d_q, p.W_q.data(), d_q, pq.data(), a, &ws);
      kernels::GemmNT(n_k, a, d_k, 1.0f, k.data(), d_k, p.W_k.data(), d_k, pk.data(), a, &ws);
      if (p.b.size() == a) pk.rowwise() += p.b.transpose();
      for (int i = 0; i < n_q; ++i)
        for (int j = 0; j < n_k; ++j) {
          float s = 0.0f;
          for (int c = 0; c < a; ++c) s += p.v[c] * std::tanh(pq(i, c) + pk(j, c));
          (*raw)(i, j) = s;
        }
      break;
    }
    case ScoreFunction::Cosine: {
      MatrixRM qn = q, kn = k;  // unit rows; a zero row stays zero (score 0)
      for (int i = 0; i < n_q; ++i) {
        const float norm = qn.row(i).norm();
        if (norm > 0.0f) qn.row(i) /= norm;
      }
      for (int j = 0; j < n_k; ++j) {
        const float norm = kn.row(j).norm();
        if (norm > 0.0f) kn.row(j) /= norm;
      }
      kernels::GemmNT(n_q, n_k, d_q, 1.0f, qn.data(), d_q, kn.data(), d_k, raw->data(), n_k, &ws);
      *fn_scale = 1.0f / p.cosine_temperature;
      break;
    }
  }
}

// Size limits before anything of size n_q x n_k is allocated: `matrices` score-sized float
// matrices of h x [n_q, n_k] each, refused above max_cells, then asked of the allocator so that
// a failure is a Status (with exceptions off, a failed new is an abort).
Status CheckAttentionSize(int64_t n_q, int64_t n_k, int64_t h, int64_t max_cells, int64_t matrices,
                          int64_t extra_floats) {
  const double cells_d = (double)n_q * (double)n_k * (double)h;  // exact below 2^53, never overflows
  if (cells_d > (double)max_cells) {
    char cells_text[32];
    std::snprintf(cells_text, sizeof(cells_text), "%.0f", cells_d);
    return Status::Error("attention of " + std::to_string(n_q) + " queries over " + std::to_string(n_k) + " keys" +
                         (h > 1 ? " with " + std::to_string(h) + " heads" : std::string()) + " needs " + cells_text +
                         " weights, over the limit of " + std::to_string(max_cells));
  }
  const int64_t cells = n_q * n_k * h;
  const uint64_t bytes = (uint64_t)(cells * matrices + extra_floats) * sizeof(float);
  if (bytes > SIZE_MAX) return Status::Error("attention: result too large for this machine");
  void* probe = std::malloc((size_t)bytes);
  if (!probe)
    return Status::Error("attention: out of memory (needs " + std::to_string(bytes) + " bytes for " +
                         std::to_string(n_q) + " x " + std::to_string(n_k) + " weights)");
  std::free(probe);
  return Status::Ok();
}

Status ValidateAttend(const MatrixRM& q, const MatrixRM& k, const MatrixRM& v, const AttentionParams& params) {
  Status st = NonEmptyFinite(q, "query");
  if (!st) return st;
  if (!(st = NonEmptyFinite(k, "key"))) return st;
  if (!(st = NonEmptyFinite(v, "value"))) return st;
  // weights + scores, and with intermediates raw, scaled, masked and exp
  const int64_t matrices = params.keep_intermediates ? 6 : 2;
  if (!(st = CheckAttentionSize(q.rows(), k.rows(), 1, params.max_cells, matrices, (int64_t)q.rows() * v.cols())))
    return st;
  if (v.rows() != k.rows())
    return Status::Error("key has n=" + std::to_string(k.rows()) + " rows but value has n=" + std::to_string(v.rows()) +
                         ": every key needs one value");
  if (!(st = ValidateScoreParams(q, k, params))) return st;
  if (!(st = ValidateTemperature(params.temperature))) return st;
  return ValidateMask(params.mask, (int)q.rows(), (int)k.rows());
}

// Attend() after validation.
void AttendValidated(const MatrixRM& q, const MatrixRM& k, const MatrixRM& v, const AttentionParams& params,
                     AttentionResult* out) {
  kernels::Workspace& ws = ThreadWorkspace();
  const int n_q = (int)q.rows(), n_k = (int)k.rows(), d_v = (int)v.cols();
  const AttentionMask& mask = params.mask;
  out->weights.resize(n_q, n_k);
  out->output.resize(n_q, d_v);
  out->row_fully_masked.assign(n_q, 0);
  out->steps = AttentionSteps{};

  if (IsDotLike(params.score) && mask.Empty() && !params.keep_intermediates) {
    const float fn_scale = params.score == ScoreFunction::ScaledDot ? 1.0f / std::sqrt((float)k.cols()) : 1.0f;
    kernels::AttentionForward(q.data(), k.data(), v.data(), n_q, n_k, (int)q.cols(), d_v, fn_scale / params.temperature,
                              out->weights.data(), out->output.data(), &ws);
    return;
  }

  // pass 1 + 2: raw scores, scaled in place into weights
  MatrixRM& s = out->weights;
  float fn_scale = 1.0f;
  RawScores(q, k, params, &s, &fn_scale);
  if (params.keep_intermediates) out->steps.raw_scores = s;
  const float scale = fn_scale / params.temperature;
  if (scale != 1.0f) s *= scale;
  if (params.keep_intermediates) out->steps.scaled = s;

  // pass 3: masks
  if (!mask.Empty()) {
    for (int i = 0; i < n_q; ++i)
      for (int j = 0; j < n_k; ++j)
        if (KeyMasked(mask, i, j)) s(i, j) = kNegInf;
    if (mask.additive.size() != 0) s += mask.additive;
  }

  // pass 4: softmax
  if (params.keep_intermediates) {
    AttentionSteps& st = out->steps;
    st.masked = s;
    st.exp.resize(n_q, n_k);
    st.row_max.resize(n_q);
    st.row_sum.resize(n_q);
    for (int i = 0; i < n_q; ++i) {
      float m = kNegInf;
      for (int j = 0; j < n_k; ++j) m = std::max(m, s(i, j));
      const bool dead = m == kNegInf;
      double sum = 0.0;
      for (int j = 0; j < n_k; ++j) {
        st.exp(i, j) = dead ? 0.0f : std::exp(s(i, j) - m);
        sum += st.exp(i, j);
      }
      st.row_max[i] = dead ? 0.0f : m;
      st.row_sum[i] = (float)sum;
      out->row_fully_masked[i] = dead ? 1 : 0;
      if (dead) {
        s.row(i).setZero();
      } else {
        const double inv = 1.0 / sum;  // sum >= 1: the max entry contributes exp(0)
        for (int j = 0; j < n_k; ++j) s(i, j) = (float)(st.exp(i, j) * inv);
      }
    }
  } else {
    std::vector<float> row_sum(n_q);
    kernels::SoftmaxRows(s.data(), n_q, n_k, n_k, 1.0f, nullptr, row_sum.data());
    for (int i = 0; i < n_q; ++i) out->row_fully_masked[i] = row_sum[i] == 0.0f ? 1 : 0;
  }

  // pass 5: output = weights V
  kernels::GemmNN(n_q, d_v, n_k, 1.0f, s.data(), n_k, v.data(), d_v, out->output.data(), d_v, &ws);
}

}  // namespace

const char* ScoreFunctionName(ScoreFunction f) {
  switch (f) {
    case ScoreFunction::Dot:
      return "dot";
    case ScoreFunction::ScaledDot:
      return "scaled_dot";
    case ScoreFunction::General:
      return "general";
    case ScoreFunction::Additive:
      return "additive";
    case ScoreFunction::Cosine:
      return "cosine";
  }
  return "unknown";
}

bool ParseScoreFunction(const std::string& name, ScoreFunction* out) {
  const ScoreFunction all[] = {ScoreFunction::Dot, ScoreFunction::ScaledDot, ScoreFunction::General,
                               ScoreFunction::Additive, ScoreFunction::Cosine};
  for (ScoreFunction f : all)
    if (name == ScoreFunctionName(f)) {
      *out = f;
      return true;
    }
  return false;
}

bool AttentionMask::Empty() const {
  return key_lengths.empty() && key_padding.empty() && !causal && window < 0 && boolean.size() == 0 &&
         additive.size() == 0;
}

Status Scores(const MatrixRM& q, const MatrixRM& k, const AttentionParams& params, MatrixRM* scores) {
  Status st = NonEmptyFinite(q, "query");
  if (!st) return st;
  if (!(st = NonEmptyFinite(k, "key"))) return st;
  if (!(st = CheckAttentionSize(q.rows(), k.rows(), 1, params.max_cells, 1, 0))) return st;
  if (!(st = ValidateScoreParams(q, k, params))) return st;
  float fn_scale = 1.0f;
  RawScores(q, k, params, scores, &fn_scale);
  if (fn_scale != 1.0f) *scores *= fn_scale;
  return Status::Ok();
}

Status Attend(const MatrixRM& q, const MatrixRM& k, const MatrixRM& v, const AttentionParams& params,
              AttentionResult* out) {
  Status st = ValidateAttend(q, k, v, params);
  if (!st) return st;
  AttendValidated(q, k, v, params, out);
  return Status::Ok();
}

int SoftmaxRows(MatrixRM* x, float temperature) {
  if (x->size() == 0) return 0;
  // An invalid temperature is treated as 1 (this helper has no Status); Attend() validates it.
  const float t = (temperature > 0.0f && std::isfinite(temperature)) ? temperature : 1.0f;
  return kernels::SoftmaxRows(x->data(), (int)x->rows(), (int)x->cols(), (int)x->cols(), 1.0f / t, nullptr, nullptr);
}

Status MultiHeadAttention(const MatrixRM& query, const MatrixRM& key, const MatrixRM& value,
                          const MultiHeadParams& params, MultiHeadResult* out) {
  // pass 0: validation
  Status st = NonEmptyFinite(query, "query");
  if (!st) return st;
  if (!(st = NonEmptyFinite(key, "key"))) return st;
  if (!(st = NonEmptyFinite(value, "value"))) return st;
  const int E = (int)query.cols(), h = params.num_heads;
  const int n_q = (int)query.rows(), n_k = (int)key.rows();
  if (h < 1) return Status::Error("num_heads must be >= 1 (got " + std::to_string(h) + ")");
  if (E % h != 0)
    return Status::Error("embed_dim E=" + std::to_string(E) + " is not divisible by num_heads=" + std::to_string(h));
  if (key.cols() != E || value.cols() != E)
    return Status::Error("query has E=" + std::to_string(E) + " but key is " + Shape(key) + " and value is " +
                         Shape(value) + ": all need E columns");
  if (value.rows() != n_k)
    return Status::Error("key has n=" + std::to_string(n_k) + " rows but value has n=" + std::to_string(value.rows()));
  if (params.in_proj_weight.rows() != 3 * E || params.in_proj_weight.cols() != E)
    return Status::Error("in_proj_weight must be [3E, E] = [" + std::to_string(3 * E) + ", " + std::to_string(E) +
                         "] but is " + Shape(params.in_proj_weight));
  if (params.in_proj_bias.size() != 0 && params.in_proj_bias.size() != 3 * E)
    return Status::Error("in_proj_bias must be empty or [3E] = [" + std::to_string(3 * E) + "] but has " +
                         std::to_string(params.in_proj_bias.size()));
  if (params.out_proj_weight.rows() != E || params.out_proj_weight.cols() != E)
    return Status::Error("out_proj_weight must be [E, E] = [" + std::to_string(E) + ", " + std::to_string(E) +
                         "] but is " + Shape(params.out_proj_weight));
  if (params.out_proj_bias.size() != 0 && params.out_proj_bias.size() != E)
    return Status::Error("out_proj_bias must be empty or [E] = [" + std::to_string(E) + "] but has " +
                         std::to_string(params.out_proj_bias.size()));
  if (!AllFinite(params.in_proj_weight) || !AllFinite(params.in_proj_bias) || !AllFinite(params.out_proj_weight) ||
      !AllFinite(params.out_proj_bias))
    return Status::Error("multi-head projection weights contain NaN or infinity");
  if (!(st = ValidateMask(params.mask, n_q, n_k))) return st;
  // h head weights + the mean + one head's scores; projections and outputs [n, E]
  if (!(st = CheckAttentionSize(n_q, n_k, h, params.max_cells, 1,
                                (int64_t)2 * n_q * n_k + (int64_t)5 * (n_q + n_k) * E)))
    return st;

  // pass 1: input projections  X W^T + b  (torch Linear layout)
  kernels::Workspace& ws = ThreadWorkspace();
  const MatrixRM* inputs[3] = {&query, &key, &value};
  MatrixRM proj[3];  // Q' [n_q, E], K' [n_k, E], V' [n_k, E]
  for (int t = 0; t < 3; ++t) {
    const MatrixRM& x = *inputs[t];
    proj[t].resize(x.rows(), E);
    kernels::GemmNT((int)x.rows(), E, E, 1.0f, x.data(), E, params.in_proj_weight.data() + (size_t)t * E * E, E,
                    proj[t].data(), E, &ws);
    if (params.in_proj_bias.size() != 0) proj[t].rowwise() += params.in_proj_bias.segment(t * E, E).transpose();
  }

  // pass 2: per-head scaled dot attention on column slices
  const int hd = E / h;
  AttentionParams head_params;
  head_params.score = ScoreFunction::ScaledDot;
  head_params.mask = params.mask;
  MatrixRM concat(n_q, E);
  out->head_weights.resize(h);
  out->mean_weights = MatrixRM::Zero(n_q, n_k);
  out->row_fully_masked.assign(n_q, 0);
  AttentionResult head;
  for (int i = 0; i < h; ++i) {
    const MatrixRM qh = proj[0].middleCols(i * hd, hd);
    const MatrixRM kh = proj[1].middleCols(i * hd, hd);
    const MatrixRM vh = proj[2].middleCols(i * hd, hd);
    AttendValidated(qh, kh, vh, head_params, &head);
    concat.middleCols(i * hd, hd) = head.output;
    out->mean_weights += head.weights;
    out->head_weights[i] = std::move(head.weights);
    for (int r = 0; r < n_q; ++r) out->row_fully_masked[r] |= head.row_fully_masked[r];
  }
  out->mean_weights *= 1.0f / (float)h;

  // pass 3: output projection
  out->output.resize(n_q, E);
  kernels::GemmNT(n_q, E, E, 1.0f, concat.data(), E, params.out_proj_weight.data(), E, out->output.data(), E, &ws);
  if (params.out_proj_bias.size() != 0) out->output.rowwise() += params.out_proj_bias.transpose();
  return Status::Ok();
}

}  // namespace attnviz
