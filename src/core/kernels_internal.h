// attnviz core: what the kernel translation units share (not part of the public API).
// Each Append* adds the tile variants its translation unit was compiled for to out[0 .. max)
// and returns how many it added (0 when the build or the CPU has no such ISA).
#pragma once
#include "core/kernels.h"

namespace attnviz {
namespace kernels {

int AppendTileVariantsWasm(TileVariant* out, int max);    // kernels_tiles_wasm.cpp (web build)
int AppendTileVariantsSse2(TileVariant* out, int max);    // kernels_tiles_sse2.cpp (native baseline)
int AppendTileVariantsAvx2(TileVariant* out, int max);    // kernels_tiles_avx2.cpp (-mavx2 -mfma)
int AppendTileVariantsAvx512(TileVariant* out, int max);  // kernels_tiles_avx512.cpp (-mavx512f)

// An ISA file's variant list into out (at most max): what each AppendTileVariants* returns.
template <int N>
inline int CopyTileVariants(const TileVariant (&all)[N], TileVariant* out, int max) {
  int count = 0;
  for (const TileVariant& v : all)
    if (count < max) out[count++] = v;
  return count;
}

}  // namespace kernels
}  // namespace attnviz
