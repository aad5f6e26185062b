import { createRequire } from 'module';
import path from 'path';
import { performance } from 'perf_hooks';
const require = createRequire(import.meta.url);
const factory = require(path.resolve('build/web/bench/attnviz_bench_module.js'));
const m = await (typeof factory === 'function' ? factory() : factory);
m._attnviz_bench_probe(0);
let idx128 = -1, idxR = -1;
for (let i = 0; i < m._attnviz_bench_tile_count(); ++i) {
  const t = m.UTF8ToString(m._attnviz_bench_tile_name(i)), isa = m.UTF8ToString(m._attnviz_bench_tile_isa(i));
  if (t === '4x8' && isa === 'wasm-simd128') idx128 = i;
  if (t === '4x8' && isa === 'wasm-relaxed-simd') idxR = i;
}
const n = +process.argv[2] || 512, d = 64;
const p = (c) => { const x = m._malloc(c * 4); for (let i = 0; i < c; ++i) m.HEAPF32[(x >> 2) + i] = Math.random(); return x; };
const q = p(n * d), k = p(n * d), v = p(n * d), o = p(n * d), w = p(n * n);
const run = (idx) => { m._attnviz_bench_force_tile(idx); let best = 1e9; for (let r = 0; r < 7; ++r) { const t = performance.now(); m._attnviz_bench_attention(q, k, v, n, d, 1, 0.125, w, o); best = Math.min(best, performance.now() - t); } return 4 * n * n * d / best * 1e-6; };
for (let i = 0; i < 5; ++i) run(idx128), run(idxR), m._attnviz_bench_muladd_peak(0.05);
for (let i = 0; i < 20; ++i) {
  const pk = m._attnviz_bench_muladd_peak(0.05), fp = m._attnviz_bench_fma_peak();
  const a = run(idx128), b = run(idxR);
  console.log(`peak=${pk.toFixed(1)} fma=${fp.toFixed(1)} simd128=${a.toFixed(1)} (${(a/pk).toFixed(2)}) relaxed=${b.toFixed(1)} (${(b/pk).toFixed(2)})`);
  await new Promise((r) => setTimeout(r, 300));
}
