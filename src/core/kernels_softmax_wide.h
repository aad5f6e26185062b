// attnviz core: the softmax of the wide native ISAs (AVX2 + FMA, AVX-512F), compiled once per
// ISA by kernels_tiles_avx2.cpp and kernels_tiles_avx512.cpp: include it once, at file scope,
// after kernels_tiles_impl.h (whose GEMM tiles keep their FMAs) and with KT_LANES defined.
// Defines SoftmaxRowsWide (internal linkage) for the TileVariant::softmax of that ISA.
#include <immintrin.h>  // VFma's _mm*_fmadd_ps (gnu_inline: no out-of-line copy to clash at link time)

#include "core/kernels_exp.h"

namespace attnviz {
namespace kernels {
// The softmax keeps plain multiply-then-add rounding for scale * x - m: fused, it would not be
// exactly 0 at the row maximum (the reference rounds scale * x first), and the row sums would
// drift by ~1e-5. The exp's polynomial fuses explicitly (VFma in kernels_vec_native.h).
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif
namespace {
using namespace exp_constants;  // NOLINT: the exp's constants, shared with kernels.cpp
constexpr int kLanes = KT_LANES;
#include "core/kernels_vec_native.h"
}  // namespace
#include "core/kernels_softmax_impl.h"

namespace {
int SoftmaxRowsWide(float* x, int rows, int cols, int ld, float scale, float* row_max, float* row_sum, int log2) {
  return SoftmaxRowsImpl(x, rows, cols, ld, scale, row_max, row_sum, log2);
}
}  // namespace
}  // namespace kernels
}  // namespace attnviz
