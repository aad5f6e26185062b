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
// call is a call_indirect from WASM to WASM (through JS, as before stop 65, it cost ~1 %). When the
// table cannot grow they are not registered, as when the engine lacks relaxed SIMD.
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
EM_JS(double, attnviz_fma_peak_js, (int iters), {
  const t0 = performance.now();
  Module["attnvizFma"]["madd_peak"](iters);
  return (performance.now() - t0) * 1e-3;
});
// The FMA module's exports `names` (a comma-separated list) in new consecutive slots of this module's
// function table, so a slot index is a C function pointer to the export; returns the first slot,
// or 0 when the table cannot grow (a binary linked without -sALLOW_TABLE_GROWTH).
EM_JS(int, attnviz_fma_table_slots, (const char* names), {
  try {
    const exports = UTF8ToString(names).split(",").map((n) => Module["attnvizFma"][n]);
    const first = wasmTable.length;
    wasmTable.grow(exports.length);
    exports.forEach((f, i) => wasmTable.set(first + i, f));
    return first;
  } catch (e) {
    err("relaxed-SIMD kernels not used: " + e);
    return 0;
  }
});
// clang-format on

bool g_fma_loaded = false;
struct FmaLoader {
  FmaLoader() {
    const EmbeddedFile* f = attnviz_embedded_fma_find("attnviz_fma.wasm");
    if (!f || !attnviz_fma_instantiate(f->data, (int)f->size)) return;
    const int slot = attnviz_fma_table_slots("softmax_rows,block_4x8,block_5x8,block_3x16");
    if (slot <= 0) return;  // the SIMD128 variants remain
    namespace k = attnviz::kernels;
    auto block = [&](int i) { return reinterpret_cast<k::BlockKernelFn>(static_cast<uintptr_t>(slot + i)); };
    const k::SoftmaxFn softmax = reinterpret_cast<k::SoftmaxFn>(static_cast<uintptr_t>(slot));
    const char* isa = "wasm-relaxed-simd";
    k::RegisterTileVariant({"4x8", isa, 4, 8, block(1), softmax});
    k::RegisterTileVariant({"5x8", isa, 5, 8, block(2), softmax});
    k::RegisterTileVariant({"3x16", isa, 3, 8, block(3), softmax});
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
