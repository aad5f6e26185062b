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
#include "core/kernels_softmax_wide.h"
#include "core/kernels_tiles_impl.h"

namespace attnviz {
namespace kernels {
int AppendTileVariantsAvx2(TileVariant* out, int max) {
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) return 0;
  const TileVariant all[] = {
      {"6x16", "avx2-fma", 6, 16, &KtBlock<6, 1>, &SoftmaxRowsWide, &KtPeakChunk},  // first: the start-up probe's pick
      {"4x16", "avx2-fma", 4, 16, &KtBlock<4, 1>, &SoftmaxRowsWide, &KtPeakChunk},
      {"3x32", "avx2-fma", 3, 16, &KtBlock<3, 2>, &SoftmaxRowsWide, &KtPeakChunk},
      {"4x32", "avx2-fma", 4, 16, &KtBlock<4, 2>, &SoftmaxRowsWide, &KtPeakChunk},
  };
  return CopyTileVariants(all, out, max);
}
}  // namespace kernels
}  // namespace attnviz
#endif
