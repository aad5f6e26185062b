// Web glue: loads the relaxed-SIMD (FMA) kernel module and offers its block kernels to the
// core's tile probe. Linked (as object code, so its start-up constructor is kept) into the web
// app, the WASM benchmarks and the WASM core tests.
//
// The module (src/core/kernels_fma.c, built by clang-16 + wasm-ld-16) is embedded in this
// binary as bytes, so loading it is synchronous and needs no fetch: at start-up
// WebAssembly.validate decides (false on engines without relaxed SIMD, e.g. node 20 without
// --experimental-wasm-relaxed-simd: the plain SIMD128 variants remain), then the module is
// instantiated on this module's WebAssembly.Memory and every export block_RxC is registered as
// a tile variant of isa "wasm-relaxed-simd", with the module's softmax_rows as its softmax. They
// are called per k-block of up to 64 rows (thousands of multiply-adds per call), not per element,
// and directly: each export is put in this module's function table (-sALLOW_TABLE_GROWTH), so a
// call is a call_indirect from WASM to WASM. Only when the table cannot grow are they called
// through the JS functions below (a trampoline into JS and out each call: ~0.1 us, stop 65).
#include <emscripten.h>

#include <cstdint>
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
// The export `name` of the FMA module in a new slot of this module's function table (its index is
// the C function pointer), or 0 when the table cannot grow (built without ALLOW_TABLE_GROWTH).
EM_JS(int, attnviz_fma_table_slot, (const char* name), {
  try {
    const i = wasmTable.length;
    wasmTable.grow(1);
    wasmTable.set(i, Module["attnvizFma"][UTF8ToString(name)]);
    return i;
  } catch (e) {
    return 0;
  }
});
// clang-format on

bool g_fma_loaded = false;
const char* g_fma_calls = "js";  // how the kernels are called: "table" (WASM to WASM) or "js"

// The export as a C function pointer: its table slot, else the JS trampoline.
template <typename Fn>
Fn Direct(const char* name, Fn js) {
  const int slot = attnviz_fma_table_slot(name);
  return slot > 0 ? reinterpret_cast<Fn>(static_cast<uintptr_t>(slot)) : js;
}

struct FmaLoader {
  FmaLoader() {
    const EmbeddedFile* f = attnviz_embedded_fma_find("attnviz_fma.wasm");
    if (!f || !attnviz_fma_instantiate(f->data, (int)f->size)) return;
    namespace k = attnviz::kernels;
    const char* isa = "wasm-relaxed-simd";
    const k::SoftmaxFn softmax = Direct<k::SoftmaxFn>("softmax_rows", &attnviz_fma_softmax);
    const k::BlockKernelFn b4x8 = Direct<k::BlockKernelFn>("block_4x8", &attnviz_fma_4x8);
    g_fma_calls = b4x8 == &attnviz_fma_4x8 ? "js" : "table";
    k::RegisterTileVariant({"4x8", isa, 4, 8, b4x8, softmax});
    k::RegisterTileVariant({"5x8", isa, 5, 8, Direct<k::BlockKernelFn>("block_5x8", &attnviz_fma_5x8), softmax});
    k::RegisterTileVariant({"3x16", isa, 3, 8, Direct<k::BlockKernelFn>("block_3x16", &attnviz_fma_3x16), softmax});
    g_fma_loaded = true;
  }
};
FmaLoader g_fma_loader;

}  // namespace

// How the FMA kernels are called: "table" (WASM to WASM), "js" (through JS), "none" (not loaded).
extern "C" const char* attnviz_fma_calls() {
  return g_fma_loaded ? g_fma_calls : "none";
}

// For the benchmark: seconds of the relaxed-madd peak loop (12 chains x 2048 x iters steps of
// 4 lanes, 2 FLOPs each), or -1 when the module is not loaded.
extern "C" double attnviz_fma_peak_seconds(int iters) {
  return g_fma_loaded ? attnviz_fma_peak_js(iters) : -1.0;
}
