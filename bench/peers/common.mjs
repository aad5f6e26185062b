// bench/peers/common.mjs: what run.mjs, phases.mjs and row_block.mjs share: loading the bench module,
// its tile variants with their probe figures, the warm probe once V8 has optimized every variant
// (settleProbe), and the median rule.
import { createRequire } from 'module';
import { readFileSync } from 'fs';
import path from 'path';

const require = createRequire(import.meta.url);

// The bench module's path: the first argument that is not an option.
export function modulePathFrom(args) {
  return path.resolve(args.find((a) => !a.startsWith('--')) ?? 'build/web/bench/attnviz_bench_module.js');
}

// The module (build/web/bench/attnviz_bench_module.js) and its tile variants [{index, isa, tile}].
export async function loadBenchModule(modulePath, printErr = () => {}) {
  const create = require(modulePath);
  const m = await create({ wasmBinary: readFileSync(modulePath.replace(/\.js$/, '.wasm')), print: () => {}, printErr });
  const variants = [];
  for (let i = 0; i < m._attnviz_bench_tile_count(); ++i)
    variants.push({ index: i, isa: m.UTF8ToString(m._attnviz_bench_tile_isa(i)), tile: m.UTF8ToString(m._attnviz_bench_tile_name(i)) });
  return { m, variants };
}

// Each variant's figure in the module's last probe (GFLOP/s, 0: not timed), written into v.gflops.
export function readProbe(m, variants) {
  for (const v of variants) v.gflops = m._attnviz_bench_probe_gflops(v.index);
  return variants;
}

// isa -> its variant the last probe timed fastest (variants timed at 0 left out).
export function fastestPerIsa(variants) {
  const best = new Map();
  for (const v of variants)
    if (v.gflops > 0 && (!best.has(v.isa) || v.gflops > best.get(v.isa).gflops)) best.set(v.isa, v);
  return best;
}

// The median of xs (the mean of the middle two for an even count).
export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const h = s.length >> 1;
  return s.length % 2 ? s[h] : 0.5 * (s[h - 1] + s[h]);
}

// The warm tile probe, taken once V8 has optimized every variant.
//
// V8 runs a WASM function first as baseline (Liftoff) code and swaps in optimized code compiled on
// a background thread once the function is hot. A probe taken a fixed time after the first one
// could still time baseline code: in a run beside onnxruntime-web and tfjs, whose big modules are
// being optimized on the same threads, the "warm" probe read 17.6 and 22.1 GFLOP/s for the SIMD128
// and relaxed 4x8 tiles, which time 33 and 45 once optimized, and picked relaxed 5x8, ~1.45x
// slower in attention than relaxed 4x8 (machine 4, stop 47). So the probe runs again and again
// until no variant's figure has risen by more than 3 % for five probes in a row (or maxMs pass).
// It returns each variant's best figure over those probes (best, by variant index): the per-ISA pick
// (settledPicks) is made from those, as the probe's own rule takes each variant's fastest run. The
// last probe alone can fall in a slow stretch of the machine: one read SIMD128 4x8 at 35.9 and 5x8
// at 36.9 GFLOP/s (55 and 43 in the probes before it), and the SIMD128 implementation then ran 5x8,
// 37 GFLOP/s in attention where 4x8 runs 46 (machine 5, stop 65).
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export async function settleProbe(m, maxMs = 5000) {
  const count = m._attnviz_bench_tile_count();
  const best = new Array(count).fill(0);
  const t0 = performance.now();
  let calm = 0, probes = 0;
  while (calm < 5 && performance.now() - t0 < maxMs) {
    m._attnviz_bench_probe(0);
    ++probes;
    let rose = false;
    for (let i = 0; i < count; ++i) {
      const g = m._attnviz_bench_probe_gflops(i);
      if (g > best[i] * 1.03) rose = true;
      best[i] = Math.max(best[i], g);
    }
    calm = rose ? 0 : calm + 1;
    await sleep(20);  // lets the background compiles finish
  }
  return { probes, ms: performance.now() - t0, settled: calm >= 5, best };
}

// isa -> its fastest variant by the best figure each had in settle's probes and the module's last
// probe (variants never timed left out); v.gflops is that figure.
export function settledPicks(m, variants, settle) {
  for (const v of readProbe(m, variants)) v.gflops = Math.max(v.gflops, settle.best[v.index] || 0);
  return fastestPerIsa(variants);
}
