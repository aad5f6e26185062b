// The relaxed-SIMD kernel module (src/core/kernels_fma.c) on its own, under node with relaxed
// SIMD enabled: it imports only a memory, has no data segment, every block kernel computes
// C (+)= alpha A B against a double-precision reference, and it writes no byte of the shared
// memory outside C (it runs on the main module's memory, so a stack or a data segment would
// corrupt it).   node --experimental-wasm-relaxed-simd tests/core/fma_module_test.mjs <attnviz_fma.wasm>
import { readFileSync } from 'fs';

let failed = 0;
function check(name, ok, detail = '') {
  if (!ok) failed++;
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}${detail ? '  (' + detail + ')' : ''}`);
}

const bytes = readFileSync(process.argv[2]);
check('WebAssembly.validate (relaxed SIMD enabled)', WebAssembly.validate(bytes));
const mod = new WebAssembly.Module(bytes);
const imports = WebAssembly.Module.imports(mod);
check('imports only env.memory', imports.length === 1 && imports[0].module === 'env' && imports[0].name === 'memory' &&
      imports[0].kind === 'memory', JSON.stringify(imports));
// section ids: 11 = data, 12 = data count
let p = 8;
const sections = [];
const leb = () => { let r = 0, s = 0, x; do { x = bytes[p++]; r |= (x & 0x7f) << s; s += 7; } while (x & 0x80); return r >>> 0; };
while (p < bytes.length) { const id = bytes[p++]; const len = leb(); sections.push(id); p += len; }
check('no data segment', !sections.includes(11) && !sections.includes(12), `sections ${sections.join(',')}`);

const memory = new WebAssembly.Memory({ initial: 8 });  // 512 KB
const { exports } = new WebAssembly.Instance(mod, { env: { memory } });
const heap = new Float32Array(memory.buffer);
const u8 = new Uint8Array(memory.buffer);
let seed = 7;
const rnd = () => { seed = (seed * 1103515245 + 12345) >>> 0; return (seed / 4294967296) * 2 - 1; };

// pack B [kc, n] into panels of 8 columns, [kc][8], zero-padded
function pack(b, kc, n) {
  const panels = Math.ceil(n / 8), out = new Float32Array(panels * kc * 8);
  for (let q = 0; q < panels; ++q)
    for (let k = 0; k < kc; ++k)
      for (let j = 0; j < 8; ++j) out[(q * kc + k) * 8 + j] = q * 8 + j < n ? b[k * n + q * 8 + j] : 0;
  return out;
}

for (const name of ['block_4x8', 'block_5x8', 'block_3x16'])
  for (const [m, n, kc, acc] of [[13, 21, 37, 0], [64, 64, 256, 1], [1, 3, 1, 0], [7, 40, 5, 1]]) {
    u8.fill(0xa5);  // sentinel everywhere
    const lda = kc + 3, ldc = n + 5, alpha = 0.37;
    const a = Float32Array.from({ length: m * lda }, rnd), b = Float32Array.from({ length: kc * n }, rnd);
    const c0 = Float32Array.from({ length: m * ldc }, rnd);
    const packed = pack(b, kc, n);
    const A = 1024, B = A + a.length + 64, C = B + packed.length + 64;  // float offsets
    heap.set(a, A); heap.set(packed, B); heap.set(c0, C);
    const before = u8.slice();
    exports[name](m, n, kc, alpha, A * 4, lda, B * 4, C * 4, ldc, acc);
    let maxErr = 0;
    for (let i = 0; i < m; ++i)
      for (let j = 0; j < n; ++j) {
        let s = 0;
        for (let k = 0; k < kc; ++k) s += a[i * lda + k] * b[k * n + j];
        const want = alpha * s + (acc ? c0[i * ldc + j] : 0);
        maxErr = Math.max(maxErr, Math.abs(heap[C + i * ldc + j] - want));
      }
    // every byte outside C's m x n entries is as before
    let stray = 0;
    const inC = (byte) => { const f = (byte >> 2) - C; if (f < 0) return false; const i = Math.floor(f / ldc), j = f % ldc; return i < m && j < n; };
    for (let i = 0; i < u8.length; ++i) if (u8[i] !== before[i] && !inC(i)) stray++;
    check(`${name} m=${m} n=${n} kc=${kc} acc=${acc}`, maxErr <= 2e-7 * kc + 1e-6 && stray === 0,
          `max abs err ${maxErr.toExponential(2)}, ${stray} stray bytes written`);
  }
// softmax_rows: against a double-precision softmax, with -inf entries, a fully masked row (zeros,
// row max and sum 0), scale != 1, cols not a multiple of 8, ld > cols; writes x, row_max and
// row_sum only, and returns the number of fully masked rows. log2 = 1: scores in log2 units, 2^x.
for (const [rows, cols, scale, log2] of [[5, 37, 0.37, 0], [3, 128, 1, 0], [2, 3, 1, 0], [5, 37, 0.37, 1], [3, 128, 1, 1]]) {
  const exp = log2 ? (t) => 2 ** t : Math.exp;
  u8.fill(0xa5);
  const ld = cols + 3, X = 2048, M = X + rows * ld + 64, S = M + rows + 64;
  const x = Float32Array.from({ length: rows * ld }, () => 8 * rnd());
  x[1] = -Infinity;  // a masked key in row 0
  for (let j = 0; j < cols; ++j) x[(rows - 1) * ld + j] = -Infinity;  // the last row fully masked
  heap.set(x, X);
  const before = u8.slice();
  const masked = exports.softmax_rows(X * 4, rows, cols, ld, scale, M * 4, S * 4, log2);
  let maxErr = 0, sumErr = 0, maskedOk = true;
  for (let i = 0; i < rows; ++i) {
    let m = -Infinity;
    for (let j = 0; j < cols; ++j) m = Math.max(m, Math.fround(scale * x[i * ld + j]));
    if (m === -Infinity) {
      for (let j = 0; j < cols; ++j) maskedOk &&= heap[X + i * ld + j] === 0;
      maskedOk &&= heap[M + i] === 0 && heap[S + i] === 0;
      continue;
    }
    let sum = 0;
    for (let j = 0; j < cols; ++j) sum += exp(Math.fround(scale * x[i * ld + j]) - m);
    for (let j = 0; j < cols; ++j)
      maxErr = Math.max(maxErr, Math.abs(heap[X + i * ld + j] - exp(Math.fround(scale * x[i * ld + j]) - m) / sum));
    sumErr = Math.max(sumErr, Math.abs(heap[S + i] - sum) / sum, Math.abs(heap[M + i] - m));
  }
  maskedOk &&= heap[X + 1] === 0;
  const written = (byte) => {
    const f = byte >> 2;
    if (f >= M && f < M + rows) return true;
    if (f >= S && f < S + rows) return true;
    const g = f - X;
    return g >= 0 && Math.floor(g / ld) < rows && g % ld < cols;
  };
  let stray = 0;
  for (let i = 0; i < u8.length; ++i) if (u8[i] !== before[i] && !written(i)) stray++;
  check(`softmax_rows rows=${rows} cols=${cols} scale=${scale} log2=${log2}`,
        masked === 1 && maskedOk && maxErr <= 1e-6 && sumErr <= 1e-6 && stray === 0,
        `max abs err ${maxErr.toExponential(2)}, row max/sum err ${sumErr.toExponential(2)}, masked rows ${masked}, ` +
        `${stray} stray bytes written`);
}
console.log(failed ? `${failed} failed` : 'all passed');
process.exit(failed ? 1 : 0);
