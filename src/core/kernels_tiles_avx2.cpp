// attnviz core: AVX2 + FMA register-tile variants, compiled with -mavx2 -mfma (CMakeLists.txt)
// and offered only when the CPU reports both. Panel 16 (two 8-float vectors); 16 ymm registers.
// GCC contracts acc += x * b into vfmadd231ps (-ffp-contract=fast is its default for GNU C++).
#include "core/kernels_internal.h"

#if defined(__wasm__) || !defined(__AVX2__) || !defined(__FMA__)
namespace attnviz {
namespace kernels {
int AppendTileVariantsAvx2(TileVariant*, int) {
  return 0;
}
}  // namespace kernels
}  // namespace attnviz
#else
#define KT_LANES 8
#include "core/kernels_exp.h"
#include "core/kernels_tiles_impl.h"

namespace attnviz {
namespace kernels {
// The softmax keeps plain multiply-then-add rounding: fused, scale * x - m would not be exactly 0
// at the row maximum (the reference rounds scale * x first), and the row sums would drift by
// ~1e-5. The tile kernels above are compiled before this point and keep their FMAs.
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
int SoftmaxRowsAvx2(float* x, int rows, int cols, int ld, float scale, float* row_max, float* row_sum) {
  return SoftmaxRowsImpl(x, rows, cols, ld, scale, row_max, row_sum);
}
}  // namespace

int AppendTileVariantsAvx2(TileVariant* out, int max) {
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) return 0;
  const TileVariant all[] = {
      {"4x16", "avx2-fma", 4, 16, &KtBlock<4, 1>, &SoftmaxRowsAvx2},
      {"6x16", "avx2-fma", 6, 16, &KtBlock<6, 1>, &SoftmaxRowsAvx2},
      {"3x32", "avx2-fma", 3, 16, &KtBlock<3, 2>, &SoftmaxRowsAvx2},
      {"4x32", "avx2-fma", 4, 16, &KtBlock<4, 2>, &SoftmaxRowsAvx2},
  };
  int count = 0;
  for (const TileVariant& v : all)
    if (count < max) out[count++] = v;
  return count;
}
}  // namespace kernels
}  // namespace attnviz
#endif
