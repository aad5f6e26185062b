// The Eigen baseline built with -march=native (AVX2 / AVX-512 when the machine has them), for
// attnviz_bench natively: the same naive attention as EigenAttention in attention_bench.cpp.
// Built as its own shared library with hidden visibility and -Bsymbolic (bench/bench.cmake), so
// its -march=native copies of Eigen's inline templates never replace the SSE2 ones of the
// benchmark itself (or the other way round).
#include <Eigen/Core>

using MatrixRM = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

extern "C" __attribute__((visibility("default"))) void EigenNativeAttention(const float* q, const float* k,
                                                                            const float* v, int n, int d, float scale) {
  static MatrixRM s, o;  // allocated once per shape
  s.resize(n, n);
  o.resize(n, d);
  const Eigen::Map<const MatrixRM> mq(q, n, d), mk(k, n, d), mv(v, n, d);
  s.noalias() = scale * (mq * mk.transpose());
  for (Eigen::Index i = 0; i < s.rows(); ++i) {
    auto row = s.row(i).array();
    row = (row - row.maxCoeff()).exp();
    row /= row.sum();
  }
  o.noalias() = s * mv;
  static volatile float sink;
  sink = o(0, 0);
}
