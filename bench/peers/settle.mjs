// bench/peers/settle.mjs: the warm tile probe, taken once V8 has optimized every variant.
//
// V8 runs a WASM function first as baseline (Liftoff) code and swaps in optimized code compiled on
// a background thread once the function is hot. A probe taken a fixed time after the first one
// could still time baseline code: in a run beside onnxruntime-web and tfjs, whose big modules are
// being optimized on the same threads, the "warm" probe read 17.6 and 22.1 GFLOP/s for the SIMD128
// and relaxed 4x8 tiles, which time 33 and 45 once optimized, and picked relaxed 5x8, ~1.45x
// slower in attention than relaxed 4x8 (machine 4, stop 47). So the probe runs again and again
// until no variant's figure has risen by more than 3 % for five probes in a row (or maxMs pass).
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
  return { probes, ms: performance.now() - t0, settled: calm >= 5 };
}
