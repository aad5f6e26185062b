// Checks token labels in a screenshot against describe()'s label boxes (heatmap labels.boxes):
// every label of a script has ink, and none looks like the replacement glyph (ImGui's '?', a
// tofu box), whose look is taken from a reference run over tokens made of them. Shared by the
// browser test (tests/browser/labels.test.mjs) and the native Xvfb test (tests/app/native_labels.sh).
//   node tests/app/labels_check.mjs shot.png describe.json ref.png ref.json [dpr]
import fs from 'node:fs';
import { PNG } from 'pngjs';

// Ink map of a box: per pixel, how far its colour is from the box's most common colour (0..1).
function inkMap(png, box, dpr, vertical) {
  let [x0, y0, x1, y1] = box.map((v) => v * dpr);
  x0 = Math.max(0, Math.floor(x0)); y0 = Math.max(0, Math.floor(y0));
  x1 = Math.min(png.width, Math.ceil(x1)); y1 = Math.min(png.height, Math.ceil(y1));
  const w = Math.max(0, x1 - x0), h = Math.max(0, y1 - y0);
  const counts = new Map();
  for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++) {
    const i = (y * png.width + x) * 4, k = (png.data[i] << 16) | (png.data[i + 1] << 8) | png.data[i + 2];
    counts.set(k, (counts.get(k) || 0) + 1);
  }
  let bg = 0, best = -1;
  for (const [k, n] of counts) if (n > best) { best = n; bg = k; }
  const br = bg >> 16, bgg = (bg >> 8) & 255, bb = bg & 255;
  let ink = new Float32Array(w * h);
  for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) {
    const i = ((y + y0) * png.width + x + x0) * 4;
    const d = Math.max(Math.abs(png.data[i] - br), Math.abs(png.data[i + 1] - bgg), Math.abs(png.data[i + 2] - bb));
    ink[y * w + x] = Math.min(1, d / 128);
  }
  let W = w, H = h;
  if (vertical) {  // rotate clockwise back to reading orientation: (x, y) -> (H - 1 - y, x)
    const r = new Float32Array(w * h);
    for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) r[x * h + (h - 1 - y)] = ink[y * w + x];
    ink = r; W = h; H = w;
  }
  return { ink, w: W, h: H };
}

// The ink's bounding box resampled to 32 x 12 cells, plus its aspect ratio.
export function signature(png, box, dpr = 1, vertical = false) {
  const { ink, w, h } = inkMap(png, box, dpr, vertical);
  let bx0 = w, by0 = h, bx1 = -1, by1 = -1, inked = 0;
  for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) if (ink[y * w + x] > 0.3) {
    inked++; bx0 = Math.min(bx0, x); bx1 = Math.max(bx1, x); by0 = Math.min(by0, y); by1 = Math.max(by1, y);
  }
  if (inked === 0) return { inked: 0, cells: null, aspect: 0 };
  const SW = 32, SH = 12, cells = new Float32Array(SW * SH);
  const bw = bx1 - bx0 + 1, bh = by1 - by0 + 1;
  for (let y = 0; y < bh; y++) for (let x = 0; x < bw; x++) {
    const cx = Math.min(SW - 1, Math.floor(x * SW / bw)), cy = Math.min(SH - 1, Math.floor(y * SH / bh));
    cells[cy * SW + cx] += ink[(y + by0) * w + x + bx0];
  }
  const per = (bw * bh) / (SW * SH);
  for (let i = 0; i < cells.length; i++) cells[i] = Math.min(1, cells[i] / Math.max(per, 1e-6));
  return { inked, cells, aspect: bw / bh };
}

// 0 = the same picture; aspect ratios that differ by more than 35% count as different (1).
export function distance(a, b) {
  if (!a.cells || !b.cells) return 1;
  if (Math.abs(Math.log(a.aspect / b.aspect)) > Math.log(1.35)) return 1;
  let d = 0;
  for (let i = 0; i < a.cells.length; i++) d += Math.abs(a.cells[i] - b.cells[i]);
  return d / a.cells.length;
}

export function heatmapLabels(describe) {
  const h = (describe.heatmaps || [])[0];
  return h && h.labels ? h.labels.boxes.map(([axis, index, x0, y0, x1, y1, vertical]) =>
    ({ axis, index, box: [x0, y0, x1, y1], vertical: vertical === 1 })) : [];
}

// Checks a run: returns a list of {name, ok, detail}.
export function checkLabels(shot, desc, ref, refDesc, dpr = 1, minDistance = 0.08) {
  const results = [];
  const tokens = desc.source_tokens;
  const refs = heatmapLabels(refDesc).map((l) => ({ l, sig: signature(ref, l.box, dpr, l.vertical), token: refDesc.source_tokens[l.index] }))
    .filter((r) => r.sig.inked > 0);
  results.push({ name: 'reference replacement glyphs were drawn', ok: refs.length >= 2, detail: `${refs.length} with ink` });
  const labels = heatmapLabels(desc);
  for (let axis = 0; axis < 2; axis++) {
    for (let i = 0; i < tokens.length; i++) {
      const l = labels.find((x) => x.axis === axis && x.index === i);
      const name = `${axis ? 'column' : 'row'} label ${i} '${tokens[i]}'`;
      if (!l) { results.push({ name, ok: false, detail: 'no box in describe()' }); continue; }
      const sig = signature(shot, l.box, dpr, l.vertical);
      let nearest = 1, nearestTok = '';
      for (const r of refs) { const d = distance(sig, r.sig); if (d < nearest) { nearest = d; nearestTok = r.token; } }
      const ok = sig.inked >= 12 && nearest >= minDistance;
      results.push({ name, ok, detail: `${l.vertical ? 'rotated, ' : ''}${sig.inked} ink px, nearest replacement '${nearestTok}' at ${nearest.toFixed(3)}` });
    }
  }
  return results;
}

if (process.argv[1] && process.argv[1].endsWith('labels_check.mjs')) {
  const [shotF, descF, refF, refDescF, dprArg] = process.argv.slice(2);
  const read = (f) => PNG.sync.read(fs.readFileSync(f));
  const results = checkLabels(read(shotF), JSON.parse(fs.readFileSync(descF, 'utf8')), read(refF),
    JSON.parse(fs.readFileSync(refDescF, 'utf8')), Number(dprArg || 1));
  let failed = 0;
  for (const r of results) {
    if (!r.ok) failed++;
    console.log(`${r.ok ? 'ok  ' : 'FAIL'} ${r.name}  (${r.detail})`);
  }
  console.log(`${results.length - failed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
}
