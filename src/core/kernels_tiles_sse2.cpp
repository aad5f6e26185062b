// attnviz core: SSE2 register-tile variants (the native baseline every x86-64 CPU runs).
// Panel 8 (two 4-float vectors); 16 xmm registers hold up to 12 accumulators plus B and A.
#include "core/kernels_internal.h"

#if defined(__wasm__)
namespace attnviz {
namespace kernels {
int AppendTileVariantsSse2(TileVariant*, int) {
  return 0;
}
}  // namespace kernels
}  // namespace attnviz
#else
#define KT_LANES 4
#include "core/kernels_tiles_impl.h"

namespace attnviz {
namespace kernels {
int AppendTileVariantsSse2(TileVariant* out, int max) {
  const TileVariant all[] = {
      {"4x16", "sse2", 4, 8, &KtBlock<4, 2>, nullptr, &KtPeakChunk},  // first: the start-up probe's pick
      {"4x8", "sse2", 4, 8, &KtBlock<4, 1>, nullptr, &KtPeakChunk},
      {"5x8", "sse2", 5, 8, &KtBlock<5, 1>, nullptr, &KtPeakChunk},
      {"6x8", "sse2", 6, 8, &KtBlock<6, 1>, nullptr, &KtPeakChunk},
      {"3x16", "sse2", 3, 8, &KtBlock<3, 2>, nullptr, &KtPeakChunk},
  };
  return CopyTileVariants(all, out, max);
}
}  // namespace kernels
}  // namespace attnviz
#endif
