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
#include "core/kernels_softmax_wide.h"
#include "core/kernels_tiles_impl.h"

namespace attnviz {
namespace kernels {
int AppendTileVariantsAvx512(TileVariant* out, int max) {
  if (!__builtin_cpu_supports("avx512f")) return 0;
  const TileVariant all[] = {
      {"8x32", "avx512f", 8, 32, &KtBlock<8, 1>, &SoftmaxRowsWide, &KtPeakChunk},  // first: the start-up probe's pick
      {"6x32", "avx512f", 6, 32, &KtBlock<6, 1>, &SoftmaxRowsWide, &KtPeakChunk},
      {"12x32", "avx512f", 12, 32, &KtBlock<12, 1>, &SoftmaxRowsWide, &KtPeakChunk},
      {"4x64", "avx512f", 4, 32, &KtBlock<4, 2>, &SoftmaxRowsWide, &KtPeakChunk},
      {"6x64", "avx512f", 6, 32, &KtBlock<6, 2>, &SoftmaxRowsWide, &KtPeakChunk},
  };
  return CopyTileVariants(all, out, max);
}
}  // namespace kernels
}  // namespace attnviz
#endif
