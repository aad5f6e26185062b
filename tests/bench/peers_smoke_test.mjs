// tests/bench/peers_smoke_test.mjs: bench/peers/run.mjs --quick end to end (make bench's peer
// comparison): every implementation computed the same attention as onnxruntime-web, and the lines
// issue 14's figures are read from are all there, with numbers in them. Figures are not judged
// (a test is not a benchmark); their presence and the outputs' agreement are.
//   node --experimental-wasm-relaxed-simd tests/bench/peers_smoke_test.mjs <attnviz_bench_module.js>
import { spawnSync } from 'child_process';
import path from 'path';
import { fileURLToPath } from 'url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const modulePath = process.argv[2];
const run = spawnSync(process.execPath,
  ['--no-experimental-fetch', '--experimental-wasm-relaxed-simd', path.join(root, 'bench/peers/run.mjs'), modulePath, '--quick'],
  { cwd: root, encoding: 'utf8', env: { ...process.env, ATTNVIZ_PEER_SAMPLES: '1' }, timeout: 240e3 });
const out = run.stdout || '';
const fail = (msg) => {
  console.error(`FAIL: ${msg}\n--- stdout ---\n${out}\n--- stderr ---\n${run.stderr || ''}`);
  process.exit(1);
};
if (run.status !== 0) fail(`run.mjs exited with ${run.status}${run.error ? ` (${run.error.message})` : ''}`);

const lines = out.split('\n');
const fields = (line) => Object.fromEntries(line.split(' ').slice(1).map((f) => f.split('=')).filter((f) => f.length === 2));
const pick = (prefix, pred = () => true) => lines.filter((l) => l.startsWith(prefix + ' ')).map(fields).filter(pred);
const num = (x, what) => {
  const v = Number(x);
  if (!Number.isFinite(v) || v <= 0) fail(`${what}: '${x}' is not a positive number`);
  return v;
};

const shapes = ['128', '512'];  // --quick's shapes, one head
const ours = ['wasm-simd128', 'wasm-relaxed-simd', 'attnviz-auto'];  // relaxed SIMD is on in this node
let checks = 0;
for (const n of shapes) {
  for (const impl of [...ours, 'onnxruntime-web', 'tfjs-wasm']) {
    const a = pick('attention', (f) => f.impl === impl && f.n === n);
    if (a.length !== 1) fail(`one attention line for ${impl} n=${n}, found ${a.length}`);
    num(a[0].median_gflops, `${impl} n=${n} median_gflops`);
    const diff = Number(a[0].max_abs_diff_vs_onnxruntime);
    if (!(diff <= 1e-6)) fail(`${impl} n=${n} differs from onnxruntime by ${a[0].max_abs_diff_vs_onnxruntime}`);
    checks += 2;
  }
  for (const impl of ours) {
    const r = pick('ratio', (f) => f.impl === impl && f.n === n);
    if (r.length !== 1) fail(`one ratio line for ${impl} n=${n}, found ${r.length}`);
    if (!['onnxruntime-web', 'tfjs-wasm'].includes(r[0].vs)) fail(`ratio vs '${r[0].vs}' is not a peer`);
    num(r[0].ratio, `ratio ${impl} n=${n}`);
    const p = pick('peak_fraction', (f) => f.impl === impl && f.n === n);
    if (p.length !== 1) fail(`one peak_fraction line for ${impl} n=${n}, found ${p.length}`);
    num(p[0].median, `peak_fraction ${impl} n=${n} median`);
    num(p[0].of_gemm_l1_median, `peak_fraction ${impl} n=${n} of_gemm_l1_median`);
    checks += 4;
  }
  for (const peak of ['wasm-simd128-muladd', 'wasm-relaxed-simd-madd', 'wasm-simd128-gemm-l1', 'wasm-relaxed-simd-gemm-l1']) {
    const p = pick('peak', (f) => f.impl === peak && f.n === n);
    if (p.length !== 1) fail(`one peak line for ${peak} n=${n}, found ${p.length}`);
    num(p[0].median_gflops, `${peak} n=${n} median_gflops`);
    const s = pick('samples', (f) => f.impl === peak && f.n === n);
    if (s.length !== 1 || s[0].gflops.split(',').length < 7) fail(`${peak} n=${n}: no line of >= 7 samples`);
    checks += 2;
  }
}
const probe = pick('tile', (f) => f.probe === 'warm' && f.selected);
if (probe.length !== 1 || !probe[0].selected.includes(':')) fail('no warm probe line naming its pick');
// Each ISA's implementation runs the variant its settled line picked (the best over every warm probe).
for (const isa of ['wasm-simd128', 'wasm-relaxed-simd']) {
  const p = pick('tile', (f) => f.probe === 'settled' && f.isa === isa);
  if (p.length !== 1) fail(`one settled pick for ${isa}, found ${p.length}`);
  num(p[0].best_gflops, `${isa} settled best_gflops`);
  const runs = pick('attention', (f) => f.impl === isa);
  if (!runs.length || runs.some((f) => f.tile !== p[0].tile)) fail(`${isa} did not run its settled pick ${p[0].tile}`);
}
console.log(`ok: ${checks + 3} checks on bench/peers/run.mjs --quick`);
