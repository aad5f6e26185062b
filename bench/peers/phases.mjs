// bench/peers/phases.mjs: where attention's time goes in the WASM kernels, pass by pass, in one
// node process: S = Q K^T, the softmax of S's rows, O = P V, and the whole AttentionForward, for
// each ISA's fastest tile (the settled warm probe, common.mjs) or every tile (--all), the variants
// alternating sample by sample as bench/peers/run.mjs alternates implementations.
//
//   node --experimental-wasm-relaxed-simd bench/peers/phases.mjs build/web/bench/attnviz_bench_module.js \
//        [--all] [--samples N]
//
// Lines:
//   phase isa=.. tile=.. n=.. d=64 qk_gflops=.. softmax_ms=.. softmax_share=.. pv_gflops=..
//         attention_gflops=.. qk_of_peak=.. pv_of_peak=..
//   phase_peak impl=wasm-simd128-muladd|wasm-relaxed-simd-madd gflops=..
// Medians of the samples. The passes alone differ a little from inside AttentionForward: each
// GEMM packs its B in the call, and the softmax runs over all n rows at once, not over a row
// block still in L2. softmax_share: the softmax's time over the three passes'. *_of_peak: against
// the mul+add peak for SIMD128 tiles and the relaxed-madd peak for relaxed ones (each the median,
// over the samples, of that loop's best chunk).
import { performance } from 'perf_hooks';
import { loadBenchModule, median, modulePathFrom, settledPicks, settleProbe } from './common.mjs';

const args = process.argv.slice(2);
const SAMPLES = Math.max(7, Number(args.indexOf('--samples') >= 0 ? args[args.indexOf('--samples') + 1] : 15));
const D = 64;

const { m, variants: all } = await loadBenchModule(modulePathFrom(args));
const best = settledPicks(m, all, await settleProbe(m));  // isa -> its fastest variant in the probes
const variants = args.includes('--all') ? all : [...best.values()];

let seed = 777;
const random = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 4294967296) * 2 - 1;
const peaks = { muladd: [], madd: [] };
for (const n of [512, 1024, 2048]) {
  const [q, k, v, o, w] = [n * D, n * D, n * D, n * D, n * n].map((count) => m._malloc(count * 4));
  for (const p of [q, k, v]) for (let i = 0; i < n * D; ++i) m.HEAPF32[(p >> 2) + i] = random();
  const run = (which) => (which < 3 ? m._attnviz_bench_phase(which, q, k, v, n, D, w, o)
                                    : m._attnviz_bench_attention(q, k, v, n, D, 1, 0.125, w, o));
  const t0 = performance.now();
  while (performance.now() - t0 < 300)  // warm-up
    for (const x of variants) {
      m._attnviz_bench_force_tile(x.index);
      for (let which = 0; which < 4; ++which) run(which);
    }
  const times = variants.map(() => [[], [], [], []]);
  for (let s = 0; s < SAMPLES; ++s) {
    for (let j = 0; j < variants.length; ++j) {
      const vi = (j + s) % variants.length;  // a rotating order
      m._attnviz_bench_force_tile(variants[vi].index);
      for (let which = 0; which < 4; ++which) {
        const c = performance.now();
        run(which);
        times[vi][which].push(performance.now() - c);
      }
    }
    peaks.muladd.push(m._attnviz_bench_muladd_peak(0));
    const fma = m._attnviz_bench_fma_peak();
    if (fma > 0) peaks.madd.push(fma);
  }
  const gemmGflops = (ms) => (2 * n * n * D) / ms / 1e6;
  variants.forEach((x, vi) => {
    const [qk, sm, pv, att] = times[vi].map(median);
    const peak = median(x.isa === 'wasm-relaxed-simd' && peaks.madd.length ? peaks.madd : peaks.muladd);
    console.log(`phase isa=${x.isa} tile=${x.tile} n=${n} d=${D} qk_gflops=${gemmGflops(qk).toFixed(2)} ` +
      `softmax_ms=${sm.toFixed(3)} softmax_share=${(sm / (qk + sm + pv)).toFixed(3)} pv_gflops=${gemmGflops(pv).toFixed(2)} ` +
      `attention_gflops=${(2 * gemmGflops(att)).toFixed(2)} qk_of_peak=${(gemmGflops(qk) / peak).toFixed(2)} ` +
      `pv_of_peak=${(gemmGflops(pv) / peak).toFixed(2)}`);
  });
  for (const p of [q, k, v, o, w]) m._free(p);
}
console.log(`phase_peak impl=wasm-simd128-muladd gflops=${median(peaks.muladd).toFixed(2)}`);
if (peaks.madd.length) console.log(`phase_peak impl=wasm-relaxed-simd-madd gflops=${median(peaks.madd).toFixed(2)}`);
m._attnviz_bench_force_tile(-1);
