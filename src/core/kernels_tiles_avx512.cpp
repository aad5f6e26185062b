// attnviz core: AVX-512F register-tile variants, compiled with -mavx512f -mfma (CMakeLists.txt)
// and offered only when the CPU reports AVX-512F. Panel 32 (two 16-float vectors); 32 zmm
// registers hold up to 24 accumulators plus B and the broadcast of A.
#include "core/kernels_internal.h"

#if defined(__wasm__) || !defined(__AVX512F__)
namespace attnviz {
namespace kernels {
int AppendTileVariantsAvx512(TileVariant*, int) {
  return 0;
}
}  // namespace kernels
}  // namespace attnviz
#else
#define KT_LANES 16
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
int SoftmaxRowsAvx512(float* x, int rows, int cols, int ld, float scale, float* row_max, float* row_sum) {
  return SoftmaxRowsImpl(x, rows, cols, ld, scale, row_max, row_sum);
}
}  // namespace

int AppendTileVariantsAvx512(TileVariant* out, int max) {
  if (!__builtin_cpu_supports("avx512f")) return 0;
  const TileVariant all[] = {
      {"6x32", "avx512f", 6, 32, &KtBlock<6, 1>, &SoftmaxRowsAvx512},
      {"8x32", "avx512f", 8, 32, &KtBlock<8, 1>, &SoftmaxRowsAvx512},
      {"12x32", "avx512f", 12, 32, &KtBlock<12, 1>, &SoftmaxRowsAvx512},
      {"4x64", "avx512f", 4, 32, &KtBlock<4, 2>, &SoftmaxRowsAvx512},
      {"6x64", "avx512f", 6, 32, &KtBlock<6, 2>, &SoftmaxRowsAvx512},
  };
  int count = 0;
  for (const TileVariant& v : all)
    if (count < max) out[count++] = v;
  return count;
}
}  // namespace kernels
}  // namespace attnviz
#endif
