// Test files in the attnviz safetensors layout (docs/FORMATS.md), written from node: the header, the
// overviews and the heads a test visits; a sparse file leaves every other byte a hole (ftruncate),
// so a 32 x 32 x 4096 x 4096 model (32 GiB) costs a few MB of disk.
import fs from 'node:fs';
import zlib from 'node:zlib';

// IEEE half bits of a float, round to nearest even (as FloatToHalf in src/io/safetensors.cpp).
const f32 = new Float32Array(1), u32 = new Uint32Array(f32.buffer);
export function toHalf(x) {
  f32[0] = x;
  const b = u32[0], sign = (b >>> 16) & 0x8000, a = b & 0x7fffffff;
  if (a > 0x7f800000) return sign | 0x7e00 | ((a >>> 13) & 0x3ff);
  if (a >= 0x477ff000) return sign | 0x7c00;
  if (a >= 0x38800000) return sign | (((a + 0xfff + ((a >>> 13) & 1)) - 0x38000000) >>> 13);
  const v = Math.abs(f32[0]) * 16777216, fl = Math.floor(v), d = v - fl;  // a subnormal half: round half to even
  return sign | (d > 0.5 || (d === 0.5 && fl % 2) ? fl + 1 : fl);
}
export function fromHalf(h) {
  const s = h & 0x8000 ? -1 : 1, e = (h >> 10) & 31, m = h & 1023;
  if (e === 0) return s * m * 2 ** -24;
  if (e === 31) return m ? NaN : s * Infinity;
  return s * (1 + m / 1024) * 2 ** (e - 15);
}

// Largest weight of each block (io/lazy_attention.h MaxPoolOverview): head [rows, cols] -> [R, C].
export function maxPool(head, rows, cols, R, C) {
  const out = new Float32Array(R * C);
  for (let r = 0; r < R; r++)
    for (let i = Math.floor(r * rows / R); i < Math.floor((r + 1) * rows / R); i++)
      for (let c = 0; c < C; c++)
        for (let j = Math.floor(c * cols / C); j < Math.floor((c + 1) * cols / C); j++)
          out[r * C + c] = Math.max(out[r * C + c], head[i * cols + j]);
  return out;
}

// The layout of sets [{name, kind, tokens | query_tokens + key_tokens, layers, heads}] (F16, with
// overviews, thumbnails for heads over 64 on a side unless options.thumbs is false, and screen copies
// for heads over 1024 on a side unless options.screens is false; with options.stats, every head's
// statistics "stats.s.l" F32 [heads, 8] first), in the writers' order (stats, thumb, overview, screen):
// {header, size, attention[s][l], overview[s][l], thumb[s][l], screen[s][l], stats[s][l], R[s], C[s], TR[s],
// TC[s], SR[s], SC[s]} (absolute offsets; SR = SC = 0 without screen copies, TR = TC = 0 without thumbnails).
export function plan(sets, meta = {}, options = {}) {
  const tensors = [], layout = {
    attention: [], overview: [], thumb: [], screen: [], stats: [], R: [], C: [], TR: [], TC: [], SR: [], SC: [], nq: [], nk: [],
  };
  if (options.stats)
    sets.forEach((s, i) => { for (let l = 0; l < s.layers; l++) tensors.push([`stats.${i}.${l}`, [s.heads, 8], 'F32']); });
  sets.forEach((s, i) => {
    const nq = (s.tokens || s.query_tokens).length, nk = (s.tokens || s.key_tokens).length;
    layout.nq.push(nq); layout.nk.push(nk);
    layout.R.push(Math.min(nq, 256)); layout.C.push(Math.min(nk, 256));
    const thumb = options.thumbs !== false && (nq > 64 || nk > 64);
    layout.TR.push(thumb ? Math.min(nq, 64) : 0); layout.TC.push(thumb ? Math.min(nk, 64) : 0);
    const screen = options.screens !== false && (nq > 1024 || nk > 1024);
    layout.SR.push(screen ? Math.min(nq, 1024) : 0); layout.SC.push(screen ? Math.min(nk, 1024) : 0);
    for (let l = 0; l < s.layers && thumb; l++) tensors.push([`thumb.${i}.${l}`, [s.heads, layout.TR[i], layout.TC[i]]]);
  });
  sets.forEach((s, i) => {
    for (let l = 0; l < s.layers; l++) tensors.push([`overview.${i}.${l}`, [s.heads, layout.R[i], layout.C[i]]]);
  });
  sets.forEach((s, i) => {
    for (let l = 0; l < s.layers && layout.SR[i]; l++)
      tensors.push([`screen.${i}.${l}`, [s.heads, layout.SR[i], layout.SC[i]]]);
  });
  sets.forEach((s, i) => {
    for (let l = 0; l < s.layers; l++) tensors.push([`attention.${i}.${l}`, [s.heads, layout.nq[i], layout.nk[i]]]);
  });
  const header = {
    __metadata__: {
      format: 'attnviz', version: '2', ...meta,
      sets: JSON.stringify(sets.map((s) => {
        const { heads, ...rest } = s;
        return rest;
      })),
    },
  };
  let at = 0;
  const offsets = {};
  for (const [name, shape, dtype = 'F16'] of tensors) {
    const bytes = shape.reduce((a, b) => a * b, dtype === 'F32' ? 4 : 2);
    header[name] = { dtype, shape, data_offsets: [at, at + bytes] };
    offsets[name] = at;
    at += bytes;
  }
  let text = JSON.stringify(header);
  text += ' '.repeat((8 - (text.length % 8)) % 8);
  const head = Buffer.alloc(8 + Buffer.byteLength(text));
  head.writeBigUInt64LE(BigInt(Buffer.byteLength(text)), 0);
  head.write(text, 8);
  const start = head.length;
  sets.forEach((s, i) => {
    layout.attention.push([]); layout.overview.push([]); layout.thumb.push([]); layout.screen.push([]); layout.stats.push([]);
    for (let l = 0; l < s.layers; l++) {
      if (options.stats) layout.stats[i].push(start + offsets[`stats.${i}.${l}`]);
      layout.attention[i].push(start + offsets[`attention.${i}.${l}`]);
      layout.overview[i].push(start + offsets[`overview.${i}.${l}`]);
      if (layout.SR[i]) layout.screen[i].push(start + offsets[`screen.${i}.${l}`]);
      if (layout.TR[i]) layout.thumb[i].push(start + offsets[`thumb.${i}.${l}`]);
    }
  });
  layout.header = head;
  layout.size = start + at;
  return layout;
}

function halves(values) {
  const b = Buffer.alloc(values.length * 2);
  for (let i = 0; i < values.length; i++) b.writeUInt16LE(toHalf(values[i]), 2 * i);
  return b;
}

// Writes the file: heads(s, l, h) gives a head's Float32Array [n_q * n_k], or null to leave it a hole
// (its thumbnail, overview and screen copy too). Every head a test draws must be given; the rest may be holes
// (sparse). options: as plan's; options.stats, a function (s, l, h) -> the head's 8 stored statistics
// (docs/FORMATS.md; a test's own values, not computed from the head), written for every head.
export function write(path, sets, heads, meta = {}, options = {}) {
  const p = plan(sets, meta, { ...options, stats: !!options.stats });
  const fd = fs.openSync(path, 'w');
  fs.writeSync(fd, p.header, 0, p.header.length, 0);
  sets.forEach((s, i) => {
    const nq = p.nq[i], nk = p.nk[i], R = p.R[i], C = p.C[i];
    for (let l = 0; l < s.layers && options.stats; l++) {
      const rows = Buffer.alloc(s.heads * 32);
      for (let h = 0; h < s.heads; h++) options.stats(i, l, h).forEach((v, k) => rows.writeFloatLE(v, 32 * h + 4 * k));
      fs.writeSync(fd, rows, 0, rows.length, p.stats[i][l]);
    }
    for (let l = 0; l < s.layers; l++) {
      for (let h = 0; h < s.heads; h++) {
        const w = heads(i, l, h);
        if (!w) continue;
        fs.writeSync(fd, halves(maxPool(w, nq, nk, R, C)), 0, R * C * 2, p.overview[i][l] + h * R * C * 2);
        const TR = p.TR[i], TC = p.TC[i], SR = p.SR[i], SC = p.SC[i];
        if (TR) fs.writeSync(fd, halves(maxPool(w, nq, nk, TR, TC)), 0, TR * TC * 2, p.thumb[i][l] + h * TR * TC * 2);
        if (SR) fs.writeSync(fd, halves(maxPool(w, nq, nk, SR, SC)), 0, SR * SC * 2, p.screen[i][l] + h * SR * SC * 2);
        const bytes = halves(w);
        fs.writeSync(fd, bytes, 0, bytes.length, p.attention[i][l] + h * nq * nk * 2);
      }
    }
  });
  fs.ftruncateSync(fd, p.size);
  fs.closeSync(fd);
  return p;
}

// A head whose rows are softmax-like and differ per (layer, head): easy to tell apart in pixels.
export function testHead(nq, nk, l, h) {
  const w = new Float32Array(nq * nk);
  for (let r = 0; r < nq; r++) {
    let sum = 0;
    for (let c = 0; c < nk; c++) sum += w[r * nk + c] = Math.exp(2.5 * Math.sin(0.7 * r + 1.3 * c + l * 0.9 + h * 1.7));
    for (let c = 0; c < nk; c++) w[r * nk + c] /= sum;
  }
  return w;
}

// A bare .npy array [layers, heads, n, n] of float16 (what np.save writes), sparse like write():
// heads(l, h) gives a head's F32 weights [n * n] or null (a hole of zeros). Returns the data offset.
export function writeNpy(path, layers, heads, n, weights) {
  const header = npyHeader('<f2', `(${layers}, ${heads}, ${n}, ${n})`);
  const fd = fs.openSync(path, 'w');
  fs.writeSync(fd, header, 0, header.length, 0);
  for (let l = 0; l < layers; l++) {
    for (let h = 0; h < heads; h++) {
      const w = weights(l, h);
      if (!w) continue;
      const bytes = halves(w);
      fs.writeSync(fd, bytes, 0, bytes.length, header.length + (l * heads + h) * n * n * 2);
    }
  }
  fs.ftruncateSync(fd, header.length + layers * heads * n * n * 2);
  fs.closeSync(fd);
  return header.length;
}

// The sparse .npy the lazy tests share: [16, 8, 2048, 2048] float16 (1 GiB, 2^29 weights: too big
// to read whole), a hole but for layer 3 head 5 (map 29), one-hot with row r at column (r * 3) % 2048.
// A .npy version 1.0 header, padded to 64 bytes as np.save pads it: descr '<f2', shape '(2, 3)'.
function npyHeader(descr, shape) {
  let dict = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shape}, }`;
  while ((10 + dict.length + 1) % 64) dict += ' ';
  dict += '\n';
  const header = Buffer.alloc(10 + dict.length);
  header.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0]);
  header.writeUInt16LE(dict.length, 8);
  header.write(dict, 10, 'latin1');
  return header;
}

export const BIG_NPY = { layers: 16, heads: 8, n: 2048, map: 29, hot: (r) => (r * 3) % 2048 };
export function writeBigNpy(path) {
  const N = BIG_NPY.n;
  return writeNpy(path, BIG_NPY.layers, BIG_NPY.heads, N, (l, h) => {
    if (l * BIG_NPY.heads + h !== BIG_NPY.map) return null;
    const w = new Float32Array(N * N);
    for (let r = 0; r < N; r++) w[r * N + BIG_NPY.hot(r)] = 1;
    return w;
  });
}

// Little-endian fields one after another: [bytes, value] pairs (2, 4 or 8 bytes), or Buffers as they are.
function le(...fields) {
  return Buffer.concat(fields.map((f) => {
    if (Buffer.isBuffer(f)) return f;
    const b = Buffer.alloc(f[0]);
    if (f[0] === 8) b.writeBigUInt64LE(BigInt(f[1]));
    else if (f[0] === 4) b.writeUInt32LE(f[1]);
    else b.writeUInt16LE(f[1]);
    return b;
  }));
}

// np.savez("big.npz", attention=<BIG_NPY's array>, tokens=["w0", ..., "w2047"]) as numpy writes it
// (stored members, Zip64 records, CRC-32s), the attention member sparse like writeBigNpy's file.
// deflated: the attention member says it is deflated (np.savez_compressed), its bytes a hole (never
// inflated: the lazy reader refuses it from its method).
export function writeBigNpz(path, { deflated = false } = {}) {
  const { layers, heads, n: N } = BIG_NPY;
  const header = npyHeader('<f2', `(${layers}, ${heads}, ${N}, ${N})`);
  const head = Buffer.alloc(N * N * 2);
  for (let r = 0; r < N; r++) head.writeUInt16LE(0x3c00, (r * N + BIG_NPY.hot(r)) * 2);  // 1.0 in F16
  const dataBytes = layers * heads * N * N * 2;
  let crc = zlib.crc32(header);
  const zeros = Buffer.alloc(head.length);
  for (let i = 0; i < layers * heads; i++) crc = zlib.crc32(i === BIG_NPY.map ? head : zeros, crc);
  const width = 5;  // '<U5': w2047
  const text = Buffer.alloc(N * width * 4);
  for (let i = 0; i < N; i++) [...`w${i}`].forEach((ch, k) => text.writeUInt32LE(ch.codePointAt(0), (i * width + k) * 4));
  const tokens = Buffer.concat([npyHeader(`<U${width}`, `(${N},)`), text]);
  const members = [
    { name: 'attention.npy', size: header.length + dataBytes, crc, method: deflated ? 8 : 0 },
    { name: 'tokens.npy', size: tokens.length, crc: zlib.crc32(tokens), method: 0 },
  ];
  const fd = fs.openSync(path, 'w');
  let at = 0;
  const max32 = 0xffffffff;
  for (const m of members) {  // local header with its Zip64 extra (sizes), then the data
    const name = Buffer.from(m.name);
    const local = le([4, 0x04034b50], [2, 45], [2, 0], [2, m.method], [2, 0], [2, 0x21], [4, m.crc >>> 0], [4, max32],
      [4, max32], [2, name.length], [2, 20], name, [2, 1], [2, 16], [8, m.size], [8, m.size]);
    m.offset = at;
    fs.writeSync(fd, local, 0, local.length, at);
    const body = at + local.length;
    if (m.name === 'tokens.npy') fs.writeSync(fd, tokens, 0, tokens.length, body);
    else {
      fs.writeSync(fd, header, 0, header.length, body);
      fs.writeSync(fd, head, 0, head.length, body + header.length + BIG_NPY.map * head.length);
    }
    at = body + m.size;
  }
  const cd = at;
  for (const m of members) {  // central directory entries with their Zip64 extras (sizes, offset)
    const name = Buffer.from(m.name);
    const c = le([4, 0x02014b50], [2, 45], [2, 45], [2, 0], [2, m.method], [2, 0], [2, 0x21], [4, m.crc >>> 0], [4, max32],
      [4, max32], [2, name.length], [2, 28], [2, 0], [2, 0], [2, 0], [4, 0], [4, max32], name, [2, 1], [2, 24],
      [8, m.size], [8, m.size], [8, m.offset]);
    fs.writeSync(fd, c, 0, c.length, at);
    at += c.length;
  }
  // Zip64 end record, its locator, and the end record whose fields say to look at them.
  const end = le([4, 0x06064b50], [8, 44], [2, 45], [2, 45], [4, 0], [4, 0], [8, 2], [8, 2], [8, at - cd], [8, cd],
    [4, 0x07064b50], [4, 0], [8, at], [4, 1],
    [4, 0x06054b50], [2, 0], [2, 0], [2, 0xffff], [2, 0xffff], [4, max32], [4, max32], [2, 0]);
  fs.writeSync(fd, end, 0, end.length, at);
  fs.closeSync(fd);
}
