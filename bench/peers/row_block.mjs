// bench/peers/row_block.mjs: AttentionForward's query-row block (src/core/kernels.cpp), A/B in one
// node process: the default rule (256 rows in WASM) against forced blocks, on the app's own tile
// choice and on the tile the warm probe times fastest for each ISA, alternating the blocks sample by sample as bench/peers/run.mjs alternates
// implementations (same warm-up, samples and median rule).
//
//   node --experimental-wasm-relaxed-simd bench/peers/row_block.mjs build/web/bench/attnviz_bench_module.js \
//        [--blocks 64,128,512] [--samples N]
//
// Lines:
//   row_block isa=.. tile=.. n=.. d=64 block=<default|rows> median_gflops=.. best_gflops=.. ratio=..
// ratio: the default's median time over this block's (> 1: the forced block is faster). Since stop
// 50 the default is timed at run time (kernels::RowBlockChooser: 128 KiB of scores or 256 rows);
//   row_block_rule isa=.. tile=.. n=.. rule=128KiB|256rows|being timed
// says which rule it had kept at the end. A forced block whose ratio stays above ~1.05 in repeated
// runs is one the chooser does not offer.
import { performance } from 'perf_hooks';
import { loadBenchModule, median, modulePathFrom, settledPicks, settleProbe } from './common.mjs';

const args = process.argv.slice(2);
const option = (name, fallback) => (args.indexOf(name) >= 0 ? args[args.indexOf(name) + 1] : fallback);
const BLOCKS = [0, ...option('--blocks', '64,128,512').split(',').map(Number)];
const SAMPLES = Math.max(7, Number(option('--samples', 15)));
const D = 64;

const { m, variants: all } = await loadBenchModule(modulePathFrom(args));
// As bench/peers/run.mjs: probes until every variant runs optimized code (common.mjs settleProbe).
const best = settledPicks(m, all, await settleProbe(m));  // isa -> the variant the probes timed fastest
let seed = 12345;
const random = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 4294967296) * 2 - 1;
// The app's own choice (the quick start-up probe, as `attnviz-auto` in run.mjs), then each ISA's best.
const variants = [{ index: -1, isa: 'auto', tile: 'probe' }, ...best.values()];
for (const v of variants) {
  for (const n of [1024, 2048]) {
    const bytes = n * D * 4;
    const q = m._malloc(bytes), k = m._malloc(bytes), vv = m._malloc(bytes), o = m._malloc(bytes), w = m._malloc(n * n * 4);
    for (const p of [q, k, vv]) for (let i = 0; i < n * D; ++i) m.HEAPF32[(p >> 2) + i] = random();
    m._attnviz_bench_force_tile(v.index);
    const call = (block) => {
      m._attnviz_bench_force_block(block);
      m._attnviz_bench_attention(q, k, vv, n, D, 1, 0.125, w, o);
    };
    let t0 = performance.now(), calls = 0;
    while (performance.now() - t0 < 300) for (const b of BLOCKS) call(b), ++calls;  // warm-up
    const reps = Math.max(1, Math.round(6 / ((performance.now() - t0) / calls)));
    const times = BLOCKS.map(() => []);
    for (let r = 0; r < SAMPLES; ++r) {
      for (let j = 0; j < BLOCKS.length; ++j) {
        const bi = (j + r) % BLOCKS.length;  // a rotating order
        const s = performance.now();
        for (let i = 0; i < reps; ++i) call(BLOCKS[bi]);
        times[bi].push((performance.now() - s) / reps);
      }
    }
    const gflops = (ms) => (4 * n * n * D) / ms / 1e6;
    BLOCKS.forEach((b, i) => {
      console.log(`row_block isa=${v.isa} tile=${v.tile} n=${n} d=${D} block=${b || 'default'} ` +
        `median_gflops=${gflops(median(times[i])).toFixed(2)} best_gflops=${gflops(Math.min(...times[i])).toFixed(2)} ` +
        `ratio=${(median(times[0]) / median(times[i])).toFixed(3)}`);
    });
    const rule = m._attnviz_bench_block_rule(n);  // what the default ended on (it is timed again every 5 s)
    console.log(`row_block_rule isa=${v.isa} tile=${v.tile} n=${n} rule=${['being timed', '128KiB', '256rows'][rule + 1]}`);
    for (const p of [q, k, vv, o, w]) m._free(p);
  }
}
m._attnviz_bench_force_block(0);
m._attnviz_bench_force_tile(-1);
