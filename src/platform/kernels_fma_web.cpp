// Web glue: loads the relaxed-SIMD (FMA) kernel module and offers its block kernels to the
// core's tile probe. Linked (as object code, so its start-up constructor is kept) into the web
// app, the WASM benchmarks and the WASM core tests.
//
// The module (src/core/kernels_fma.c, built by clang-16 + wasm-ld-16) is embedded in this
// binary as bytes, so loading it is synchronous and needs no fetch: at start-up
// WebAssembly.validate decides (false on engines without relaxed SIMD, e.g. node 20 without
// --experimental-wasm-relaxed-simd: the plain SIMD128 variants remain), then the module is
// instantiated on this module's WebAssembly.Memory and every export block_RxC is registered as
// a tile variant of isa "wasm-relaxed-simd", with the module's softmax_rows as its softmax. Each
// block kernel call crosses into JS once per
// k-block of up to 64 rows (thousands of multiply-adds per call), not per element.
#include <emscripten.h>

#include <cstdio>

#include "core/kernels.h"
#include "embedded_fma.h"

namespace {

// clang-format off
EM_JS(int, attnviz_fma_instantiate, (const unsigned char* bytes, int size), {
  try {
    const code = HEAPU8.slice(bytes, bytes + size);
    if (!WebAssembly.validate(code)) return 0;  // no relaxed SIMD in this engine
    const instance = new WebAssembly.Instance(new WebAssembly.Module(code), {env: {memory: wasmMemory}});
    Module["attnvizFma"] = instance.exports;
    return 1;
  } catch (e) {
    err("relaxed-SIMD kernels not loaded: " + e);
    return 0;
  }
});
EM_JS(void, attnviz_fma_4x8, (int m, int n, int kc, float alpha, const float* a, int lda, const float* b, float* c, int ldc, int acc), {
  Module["attnvizFma"]["block_4x8"](m, n, kc, alpha, a, lda, b, c, ldc, acc);
});
EM_JS(void, attnviz_fma_5x8, (int m, int n, int kc, float alpha, const float* a, int lda, const float* b, float* c, int ldc, int acc), {
  Module["attnvizFma"]["block_5x8"](m, n, kc, alpha, a, lda, b, c, ldc, acc);
});
EM_JS(void, attnviz_fma_3x16, (int m, int n, int kc, float alpha, const float* a, int lda, const float* b, float* c, int ldc, int acc), {
  Module["attnvizFma"]["block_3x16"](m, n, kc, alpha, a, lda, b, c, ldc, acc);
});
EM_JS(int, attnviz_fma_softmax, (float* x, int rows, int cols, int ld, float scale, float* row_max, float* row_sum, int log2), {
  return Module["attnvizFma"]["softmax_rows"](x, rows, cols, ld, scale, row_max, row_sum, log2);
});
EM_JS(double, attnviz_fma_peak_js, (int iters), {
  const t0 = performance.now();
  Module["attnvizFma"]["madd_peak"](iters);
  return (performance.now() - t0) * 1e-3;
});
// clang-format on

bool g_fma_loaded = false;

struct FmaLoader {
  FmaLoader() {
    const EmbeddedFile* f = attnviz_embedded_fma_find("attnviz_fma.wasm");
    if (!f || !attnviz_fma_instantiate(f->data, (int)f->size)) return;
    namespace k = attnviz::kernels;
    const char* isa = "wasm-relaxed-simd";
    k::RegisterTileVariant({"4x8", isa, 4, 8, &attnviz_fma_4x8, &attnviz_fma_softmax});
    k::RegisterTileVariant({"5x8", isa, 5, 8, &attnviz_fma_5x8, &attnviz_fma_softmax});
    k::RegisterTileVariant({"3x16", isa, 3, 8, &attnviz_fma_3x16, &attnviz_fma_softmax});
    g_fma_loaded = true;
  }
};
FmaLoader g_fma_loader;

}  // namespace

// For the benchmark: seconds of the relaxed-madd peak loop (12 chains x 2048 x iters steps of
// 4 lanes, 2 FLOPs each), or -1 when the module is not loaded.
extern "C" double attnviz_fma_peak_seconds(int iters) {
  return g_fma_loaded ? attnviz_fma_peak_js(iters) : -1.0;
}
