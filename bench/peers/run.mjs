// bench/peers/run.mjs: attnviz's WASM attention kernels against onnxruntime-web (wasm EP, 1
// thread) and tfjs-wasm (XNNPACK, 1 thread), in one node process, on the same inputs.
//
//   node --no-experimental-fetch --experimental-wasm-relaxed-simd bench/peers/run.mjs \
//        build/web/bench/attnviz_bench_module.js [--samples N] [--quick]
//
// Protocol, the same for every implementation: a warm-up (every implementation runs every shape
// until ~0.3 s have passed, so V8 has tiered the hot code up), then 15 samples (>= 7); a sample is
// `reps` back-to-back calls (reps chosen so a sample takes ~6 ms, or one call when longer) and yields the time per call.
// Within each round the implementations run one after the other in a rotating order, so machine
// noise hits them alike. Reported: the median and the minimum time per call, as GFLOP/s
// (FLOPs = 4 n^2 d per head: 2 for Q K^T, 2 for P V; softmax not counted).
// Ratio lines divide the best peer's median time by attnviz's (> 1: attnviz is faster);
// ratio_min does the same with minimum times, ratio_cpu with median CPU times (process.cpuUsage:
// on a loaded machine the wall clock also counts the time the process waited for a core).
// Lines:
//   tile probe=<startup|warm> isa=.. tile=.. gflops=.. [selected]   (startup: the quick probe the app runs
//   at its first kernel call, one variant per ISA, 0 = not timed; warm: the full one, once repeated
//   probes have stopped rising, common.mjs: `tile probe=warm settle_probes=.. settle_ms=..`)
//   peak impl=wasm-simd128 muladd_gflops=..   (and impl=wasm-relaxed-simd madd_gflops=..): once, before the shapes
//   peak impl=wasm-simd128-muladd|wasm-relaxed-simd-madd n=.. heads=.. median_gflops=.. best_gflops=..: the peak
//   loops timed as two more implementations of each shape's rotation (same samples, same rule); the
//   peak_fraction lines divide by these (median by median, best by best). A VM's vCPU can change speed
//   from one millisecond to the next: a peak taken as the best of short runs, minutes apart, reads
//   the fast moments only.
//   attention impl=.. n=.. d=.. heads=.. median_gflops=.. best_gflops=.. median_ms=.. min_ms=.. cpu_median_gflops=..
//   ratio impl=wasm-simd128 vs=<best peer> n=.. heads=.. ratio=.. ratio_min=.. ratio_cpu=..
//   peak_fraction impl=.. n=.. heads=.. peak_gflops=.. median=.. best=.. start_median=.. [muladd_peak_gflops=..
//   of_muladd_median=..]   (relaxed SIMD: against the madd peak, and against the mul+add one)
//   peak impl=wasm-simd128-gemm-l1|wasm-relaxed-simd-gemm-l1 tile=.. n=.. ...: a diagnostic, the warm probe's
//   fastest tile of that ISA on an L1-resident GEMM in the same rotation (of_gemm_l1_median in peak_fraction):
//   it loads its operands, the mul+add loop does not, so the two tell apart what a slow stretch hits
//   samples impl=.. n=.. heads=.. gflops=..,..   (with ATTNVIZ_PEER_SAMPLES=1: every sample in the order
//   taken, round by round, so a slow stretch that hit every implementation shows as the same rounds)
import { createRequire } from 'module';
import path from 'path';
import { performance } from 'perf_hooks';
import * as ort from 'onnxruntime-web';
import * as tf from '@tensorflow/tfjs-core';
import { setWasmPaths } from '@tensorflow/tfjs-backend-wasm';
import { attentionModel } from './onnx_attention.mjs';
import { fastestPerIsa, loadBenchModule, median, modulePathFrom, readProbe, settledPicks, settleProbe } from './common.mjs';

const require = createRequire(import.meta.url);  // the tfjs wasm files' folder
const args = process.argv.slice(2);
const modulePath = modulePathFrom(args);
const quick = args.includes('--quick');
const samplesArg = args.indexOf('--samples');
const SAMPLES = Math.max(7, samplesArg >= 0 ? Number(args[samplesArg + 1]) : 15);
const SAMPLE_SECONDS = quick ? 0.004 : 0.006;  // short samples: fewer of them hit by a preemption
const SHAPES = quick ? [[128, 64, 1], [512, 64, 1]] : [[128, 64, 1], [512, 64, 1], [1024, 64, 1], [2048, 64, 1], [512, 64, 12]];

// Deterministic inputs in [-1, 1) (xorshift32), shared by every implementation.
function randomArray(count, seed) {
  const out = new Float32Array(count);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < count; ++i) {
    x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0;
    out[i] = (x / 4294967296) * 2 - 1;
  }
  return out;
}

// ---- attnviz (the WASM module) ----
function loadAttnviz() {
  return loadBenchModule(modulePath, (s) => console.error(s));
}

function probeLines(a, label) {
  const selected = a.m._attnviz_bench_probe(label === 'startup' ? 1 : 0);  // startup: the quick probe
  const ms = a.m._attnviz_bench_probe_ms();
  for (const v of readProbe(a.m, a.variants)) {
    console.log(`tile probe=${label} isa=${v.isa} tile=${v.tile} gflops=${v.gflops.toFixed(2)}${v.index === selected ? ' selected' : ''}`);
  }
  console.log(`tile probe=${label} probe_ms=${ms.toFixed(2)} selected=${a.variants[selected].isa}:${a.variants[selected].tile}`);
  return selected;
}

// isa: the warm probe's fastest variant of that ISA, forced for the whole run; 'auto': attnviz as
// the app runs it, on whatever variant the probe picked last (it probes again every few seconds
// of use, src/core/kernels_tiles.cpp).
function attnvizImpl(a, isa) {
  const auto = isa === 'auto';
  const best = auto ? { index: -1, tile: 'probe' } : (a.picks || fastestPerIsa(a.variants)).get(isa);
  if (!best) return null;
  let ptrs = null;
  return {
    name: auto ? 'attnviz-auto' : isa,
    tile: best.tile,
    setup(q, k, v, heads, n, d, scale) {
      const m = a.m;
      if (ptrs) for (const p of Object.values(ptrs)) m._free(p);
      const bytes = q.length * 4;
      ptrs = { q: m._malloc(bytes), k: m._malloc(bytes), v: m._malloc(bytes), o: m._malloc(bytes), w: m._malloc(n * n * 4) };
      m.HEAPF32.set(q, ptrs.q >> 2);
      m.HEAPF32.set(k, ptrs.k >> 2);
      m.HEAPF32.set(v, ptrs.v >> 2);
      this.call = () => {
        m._attnviz_bench_force_tile(best.index);
        m._attnviz_bench_attention(ptrs.q, ptrs.k, ptrs.v, n, d, heads, scale, ptrs.w, ptrs.o);
      };
      this.output = () => m.HEAPF32.slice(ptrs.o >> 2, (ptrs.o >> 2) + q.length);
    },
  };
}

// ---- the machine's peaks, as implementations of the rotation ----
// muladd: MulAddPeakGflops(0) runs exactly 50 chunks of 12 chains x 2048 f32x4 mul + add steps;
// madd: attnviz_bench_fma_peak runs 300 such chunks of relaxed_madd (one JS call each).
function peakImpl(a, kind) {
  const chunk = 2 * 4 * 12 * 2048;
  return {
    name: kind === 'muladd' ? 'wasm-simd128-muladd' : 'wasm-relaxed-simd-madd',
    kind,
    flops: (kind === 'muladd' ? 50 : 300) * chunk,
    call: kind === 'muladd' ? () => a.m._attnviz_bench_muladd_peak(0) : () => a.m._attnviz_bench_fma_peak(),
  };
}

// A load-bearing peak (diagnostic): the warm probe's fastest tile of an ISA on an L1-resident GEMM
// (attnviz_bench_gemm_l1: 60 x 96 by 96 x the tile's columns, 100 times a call). It loads its operands
// as the attention GEMMs do, where the mul+add loop loads nothing, so a slow stretch that hits it as
// well hits loads from L1, not memory beyond it.
function gemmL1Impl(a, isa) {
  const best = (a.picks || fastestPerIsa(a.variants)).get(isa);
  if (!best) return null;
  const inner = 100;
  const flops = a.m._attnviz_bench_gemm_l1(best.index, 1) * inner;
  if (!(flops > 0)) return null;
  return {
    name: `${isa}-gemm-l1`,
    kind: `gemm-l1-${isa}`,
    tile: best.tile,
    flops,
    call: () => a.m._attnviz_bench_gemm_l1(best.index, inner),
  };
}

// ---- onnxruntime-web ----
function ortImpl() {
  return {
    name: 'onnxruntime-web',
    async setup(q, k, v, heads, n, d, scale) {
      const session = await ort.InferenceSession.create(attentionModel(heads, n, d, scale), {
        executionProviders: ['wasm'], graphOptimizationLevel: 'all' });
      const feeds = { q: new ort.Tensor('float32', q, [heads, n, d]), k: new ort.Tensor('float32', k, [heads, n, d]),
                      v: new ort.Tensor('float32', v, [heads, n, d]) };
      let last = null;
      this.call = async () => { last = (await session.run(feeds)).o; };
      this.output = () => last.data;
    },
  };
}

// ---- tfjs with the wasm backend ----
function tfjsImpl() {
  let tensors = [];
  return {
    name: 'tfjs-wasm',
    setup(q, k, v, heads, n, d, scale) {
      for (const t of tensors) t.dispose();
      const [qt, kt, vt] = [q, k, v].map((x) => tf.tensor3d(x, [heads, n, d]));
      tensors = [qt, kt, vt];
      let last = null;
      this.call = () => {
        // K^T by an explicit transpose: tfjs-wasm's matMul with transposeB = true measured ~7x
        // slower here (36 ms against 5 ms for 512 x 64 x 512); the transpose costs n d copies.
        const o = tf.tidy(() => tf.matMul(tf.softmax(tf.matMul(tf.mul(qt, scale), tf.transpose(kt, [0, 2, 1]))), vt));
        last = o.dataSync();  // forces the result out, as the other two return it
        o.dispose();
      };
      this.output = () => last;
    },
  };
}

// ms per call: wall clock, and CPU time of this process (user + system), which leaves out the
// time the process sat preempted on a loaded machine (V8's background threads are idle by then).
async function timeCalls(impl, reps) {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  for (let r = 0; r < reps; ++r) await impl.call();
  const wall = (performance.now() - t0) / reps;
  const c = process.cpuUsage(c0);
  return { wall, cpu: (c.user + c.system) / 1e3 / reps };
}

async function main() {
  ort.env.wasm.numThreads = 1;
  ort.env.wasm.simd = true;
  setWasmPaths(path.dirname(require.resolve('@tensorflow/tfjs-backend-wasm')) + '/');
  await tf.setBackend('wasm');
  await tf.ready();
  const a = await loadAttnviz();
  console.log(`# bench/peers: attnviz ${path.basename(modulePath)}, onnxruntime-web ${ort.env.versions?.web ?? '?'} ` +
              `(wasm EP, ${ort.env.wasm.numThreads} thread), tfjs ${tf.version_core} (wasm backend, simd=` +
              `${tf.env().getBool('WASM_HAS_SIMD_SUPPORT')}, threads=${tf.env().getBool('WASM_HAS_MULTITHREAD_SUPPORT')}); ` +
              `node ${process.version}; ${SAMPLES} samples, median and min, implementations alternating`);
  probeLines(a, 'startup');  // what the app would pick at start-up (cold code)

  const impls = [ortImpl(), tfjsImpl()];

  // warm-up: every implementation on every shape (tiers V8 up), then a probe on warm code
  for (const [n, d, heads] of SHAPES) {
    const q = randomArray(heads * n * d, 1), k = randomArray(heads * n * d, 2), v = randomArray(heads * n * d, 3);
    const warm = [attnvizImpl(a, 'wasm-simd128'), attnvizImpl(a, 'wasm-relaxed-simd'), attnvizImpl(a, 'auto'), ...impls]
      .filter(Boolean);
    for (const impl of warm) {
      await impl.setup(q, k, v, heads, n, d, 1 / Math.sqrt(d));
      const t0 = performance.now();
      while (performance.now() - t0 < (quick ? 30 : 300 / SHAPES.length)) await impl.call();
    }
  }
  // Full probes until every variant runs optimized code (common.mjs); the reported one follows.
  const settle = await settleProbe(a.m);
  console.log(`tile probe=warm settle_probes=${settle.probes} settle_ms=${settle.ms.toFixed(0)} settled=${settle.settled}`);
  probeLines(a, 'warm');
  // The SIMD128 and relaxed implementations each run their ISA's fastest variant by the best
  // figure it had in any of those probes (common.mjs settledPicks), not by the last probe alone.
  a.picks = settledPicks(a.m, a.variants, settle);
  for (const v of a.picks.values())
    console.log(`tile probe=settled isa=${v.isa} tile=${v.tile} best_gflops=${v.gflops.toFixed(2)} picked`);
  // Peaks: the best of 5 measurements, a few ms apart: V8 compiles the optimized peak loop on a
  // background thread, and on a loaded machine a measurement can still run the baseline code
  // (one run read 12 GFLOP/s for mul+add instead of 44).
  let peak = 0, fmaPeak = 0;
  for (let i = 0; i < 5; ++i) {
    peak = Math.max(peak, a.m._attnviz_bench_muladd_peak(0.05));
    fmaPeak = Math.max(fmaPeak, a.m._attnviz_bench_fma_peak());
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  console.log(`peak impl=wasm-simd128 muladd_gflops=${peak.toFixed(2)}`);
  if (fmaPeak > 0) console.log(`peak impl=wasm-relaxed-simd madd_gflops=${fmaPeak.toFixed(2)}`);

  const ours = [attnvizImpl(a, 'wasm-simd128'), attnvizImpl(a, 'wasm-relaxed-simd'), attnvizImpl(a, 'auto')].filter(Boolean);
  const peaks = [peakImpl(a, 'muladd'), fmaPeak > 0 ? peakImpl(a, 'madd') : null,
                 gemmL1Impl(a, 'wasm-simd128'), gemmL1Impl(a, 'wasm-relaxed-simd')].filter(Boolean);
  const all = [...ours, ...impls, ...peaks];
  for (const [n, d, heads] of SHAPES) {
    const q = randomArray(heads * n * d, 11 + n), k = randomArray(heads * n * d, 12 + n), v = randomArray(heads * n * d, 13 + n);
    const scale = 1 / Math.sqrt(d);
    for (const impl of all) if (impl.setup) await impl.setup(q, k, v, heads, n, d, scale);
    // reps per sample from one timed call each (after one untimed call)
    const reps = {};
    for (const impl of all) {
      await impl.call();
      const ms = (await timeCalls(impl, 2)).wall;
      reps[impl.name] = Math.max(1, Math.round((SAMPLE_SECONDS * 1e3) / Math.max(ms, 1e-3)));
    }
    const times = Object.fromEntries(all.map((i) => [i.name, []]));
    const cpuTimes = Object.fromEntries(all.map((i) => [i.name, []]));
    for (let s = 0; s < SAMPLES; ++s)
      for (let j = 0; j < all.length; ++j) {
        const impl = all[(s + j) % all.length];  // rotating order
        const t = await timeCalls(impl, reps[impl.name]);
        times[impl.name].push(t.wall);
        cpuTimes[impl.name].push(t.cpu);
      }
    // ATTNVIZ_PEER_SAMPLES=1: every sample's GFLOP/s, in the order taken (slow stretches show as runs)
    if (process.env.ATTNVIZ_PEER_SAMPLES) {
      for (const impl of all) {
        const f = impl.flops ? impl.flops * 1e-6 : 4 * n * n * d * heads * 1e-6;
        console.log(`samples impl=${impl.name} n=${n} heads=${heads} gflops=${times[impl.name].map((t) => (f / t).toFixed(1)).join(',')}`);
      }
    }
    // the peaks, timed in the same rotation and by the same rule as the attention calls
    const peakStats = {};
    for (const p of peaks) {
      const med = median(times[p.name]), min = Math.min(...times[p.name]);
      peakStats[p.kind] = { med: p.flops / med * 1e-6, best: p.flops / min * 1e-6 };
      console.log(`peak impl=${p.name}${p.tile ? ` tile=${p.tile}` : ''} n=${n} heads=${heads} median_gflops=${peakStats[p.kind].med.toFixed(2)} ` +
                  `best_gflops=${peakStats[p.kind].best.toFixed(2)} samples=${SAMPLES} reps=${reps[p.name]}`);
    }
    // agreement with onnxruntime (sanity: every implementation computed the same attention)
    const ref = impls[0].output();
    const flops = 4 * n * n * d * heads;
    const stats = {};
    for (const impl of [...ours, ...impls]) {
      const out = impl.output();
      let diff = 0;
      for (let i = 0; i < ref.length; ++i) diff = Math.max(diff, Math.abs(out[i] - ref[i]));
      const med = median(times[impl.name]), min = Math.min(...times[impl.name]);
      const cpu = median(cpuTimes[impl.name]);
      stats[impl.name] = { med, min, cpu };
      const tile = impl.tile ? ` tile=${impl.tile}` : '';
      console.log(`attention impl=${impl.name}${tile} n=${n} d=${d} heads=${heads} median_gflops=${(flops / med * 1e-6).toFixed(2)} ` +
                  `best_gflops=${(flops / min * 1e-6).toFixed(2)} median_ms=${med.toFixed(4)} min_ms=${min.toFixed(4)} ` +
                  `cpu_median_gflops=${(flops / cpu * 1e-6).toFixed(2)} samples=${SAMPLES} reps=${reps[impl.name]} ` +
                  `max_abs_diff_vs_onnxruntime=${diff.toExponential(2)}`);
    }
    const bestPeer = impls.reduce((x, y) => (stats[y.name].med < stats[x.name].med ? y : x));
    for (const impl of ours) {
      const r = stats[bestPeer.name].med / stats[impl.name].med;
      const rmin = Math.min(...impls.map((p) => stats[p.name].min)) / stats[impl.name].min;
      const rcpu = Math.min(...impls.map((p) => stats[p.name].cpu)) / stats[impl.name].cpu;
      console.log(`ratio impl=${impl.name} vs=${bestPeer.name} n=${n} heads=${heads} ratio=${r.toFixed(2)} ` +
                  `ratio_min=${rmin.toFixed(2)} ratio_cpu=${rcpu.toFixed(2)}`);
      // the relaxed path against its own (relaxed-madd) peak, and also against the mul+add peak,
      // the machine figure issue 14's 75 % target names
      // median against the peak's median in this shape's rotation, best against its best;
      // start_median: against the peak measured once before the shapes (as before stop 29)
      const relaxed = impl.name === 'wasm-relaxed-simd' && peakStats.madd;
      const pk = relaxed ? peakStats.madd : peakStats.muladd;
      const startPk = relaxed ? fmaPeak : peak;
      const gf = (t) => flops / t * 1e-6;
      const vsMulAdd = relaxed
        ? ` muladd_peak_gflops=${peakStats.muladd.med.toFixed(2)} of_muladd_median=${(gf(stats[impl.name].med) / peakStats.muladd.med).toFixed(2)}`
        : '';
      // against the L1-resident GEMM of the same ISA (the app's pick: of the ISA it ran last), a diagnostic
      const l1 = peakStats[`gemm-l1-${impl.name === 'attnviz-auto' ? a.variants[a.m._attnviz_bench_selected()]?.isa : impl.name}`];
      const vsL1 = l1 ? ` of_gemm_l1_median=${(gf(stats[impl.name].med) / l1.med).toFixed(2)}` : '';
      console.log(`peak_fraction impl=${impl.name} n=${n} heads=${heads} peak_gflops=${pk.med.toFixed(2)} ` +
                  `median=${(gf(stats[impl.name].med) / pk.med).toFixed(2)} best=${(gf(stats[impl.name].min) / pk.best).toFixed(2)} ` +
                  `start_median=${(gf(stats[impl.name].med) / startPk).toFixed(2)}${vsMulAdd}${vsL1}`);
    }
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
