// Lazily read safetensors in the native app (mmap): the desktop build under Xvfb opens a file of
// 3 layers x 4 heads; the grid reads only the overviews (no head), and a visited head draws its
// weights (pixels inverted through the colormap against the file's F16 weights). A .npy too big to
// read whole (16 x 8 x 2048^2 float16, sparse) opens lazily too, on its first head (it stores no
// overviews for the grid), and a band of a visited head is read, not the file; so does an .npz of it
// (np.savez, with its tokens).
//   node tests/big/native_lazy.test.mjs path/to/attnviz
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { PNG } from 'pngjs';
import { check, summary, checkHeatmapPixels } from '../browser/lib.mjs';
import { write, writeBigNpy, writeBigNpz, testHead, fromHalf, toHalf } from './safetensors.mjs';

const APP = process.argv[2] || 'build/native/attnviz';
const ARTIFACTS = process.env.ATTNVIZ_ARTIFACTS || 'build/test-artifacts';

function run(file, args, name) {
  const ppm = path.join(os.tmpdir(), `attnviz-lazy-${process.pid}-${name}.ppm`);
  const json = ppm.replace(/\.ppm$/, '.json');
  // The screen is larger than the window: Xvfb's pointer (at the screen's centre) is off the window.
  execFileSync('xvfb-run', ['-a', '-s', '-screen 0 1920x1200x24', APP, ...args, '--frames', '40', '--screenshot', ppm,
    '--describe', json, file], { stdio: ['ignore', 'inherit', 'inherit'] });
  const buf = fs.readFileSync(ppm);
  const m = buf.toString('latin1', 0, 64).match(/^P6\s+(\d+)\s+(\d+)\s+(\d+)\s/);
  const png = new PNG({ width: Number(m[1]), height: Number(m[2]) });
  for (let i = 0; i < png.width * png.height; i++) {
    for (let k = 0; k < 3; k++) png.data[i * 4 + k] = buf[m[0].length + i * 3 + k];
    png.data[i * 4 + 3] = 255;
  }
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  fs.writeFileSync(path.join(ARTIFACTS, `native-lazy-${name}.png`), PNG.sync.write(png));
  const d = JSON.parse(fs.readFileSync(json, 'utf8'));
  fs.rmSync(ppm, { force: true });
  fs.rmSync(json, { force: true });
  return { d, png };
}

function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attnviz-native-lazy-'));
  const file = path.join(dir, 'small.safetensors');
  const n = 24, tokens = Array.from({ length: n }, (_, i) => `t${i}`);
  const p = write(file, [{ name: 'attention', kind: 'self', tokens, layers: 3, heads: 4 }], (s, l, h) => testHead(n, n, l, h));
  try {
    // The grid: overviews only.
    let { d } = run(file, ['--view', 'grid'], 'grid');
    check('the file opens lazily in the grid', d.example === 'file:' + file && d.view === 'grid', `${d.example} ${d.view}`);
    check('every thumbnail is drawn from its overview', d.grid.overviews_shown === 12, `${d.grid.overviews_shown}`);
    check('the grid read no head, only the overviews', d.lazy.heads === 0 && d.lazy.overviews === 12 &&
      d.lazy.bytes_read === 12 * n * n * 2, `heads ${d.lazy.heads}, overviews ${d.lazy.overviews}, ${d.lazy.bytes_read} bytes`);
    // A visited head: layer 2, head 1 is map 9.
    const r = run(file, ['--command', 'map 9', '--command', 'view heatmap', '--command', 'numbers off'], 'head');
    d = r.d;
    const h = d.heatmaps.find((x) => x.id === 'main');
    const want = Array.from(testHead(n, n, 2, 1), (w) => fromHalf(toHalf(w)));
    check('the visited head is all in memory and drawn without the overview', h && h.held[0] === 0 && h.held[1] === n &&
      !h.underlay, JSON.stringify(h && h.held));
    const maxErr = Math.max(...want.map((w, i) => Math.abs(Math.fround(h.weights[i]) - w)));
    check('its weights are the file\'s (F16)', maxErr === 0, `largest error ${maxErr}`);
    h.weights = want;
    checkHeatmapPixels('native lazy head (mmap)', d, h, r.png);
    check('one head read', d.lazy.heads === 1 && d.lazy.bytes_read >= n * n * 2, `${d.lazy.heads} heads, ${d.lazy.bytes_read} bytes`);
    check('the header planned the file', fs.statSync(file).size === p.size);

    // np.save of [16, 8, 2048, 2048] float16 (1 GiB, 2^29 weights): read lazily; head (3, 5) is one-hot.
    const npy = path.join(dir, 'big.npy');
    writeBigNpy(npy);
    d = run(npy, [], 'npy').d;
    check('a .npy too big to read whole opens lazily, on its first head', d.example === 'file:' + npy &&
      d.view === 'heatmap' && /stores no overviews/.test(d.message), `${d.example} ${d.view}: ${d.message}`);
    const b = run(npy, ['--command', 'map 29', '--command', 'zoom 128 1000 952', '--command', 'numbers off'], 'npy-band');
    const hb = b.d.heatmaps.find((x) => x.id === 'main');
    check('a zoomed-in band of a visited .npy head is read, not the file', hb && hb.held[0] <= 1000 && hb.held[1] > 1000 &&
      b.d.lazy.bytes_read < 64 * 2 ** 20, `held ${JSON.stringify(hb && hb.held)}, ${b.d.lazy.bytes_read} bytes read`);

    // np.savez of the same array with its tokens (stored members, 1 GiB): the archive is listed in
    // place and its attention member read like the .npy, with the tokens.
    const npz = path.join(dir, 'big.npz');
    writeBigNpz(npz);
    const z = run(npz, ['--command', 'map 29', '--command', 'zoom 128 1000 952', '--command', 'numbers off'], 'npz-band');
    const hz = z.d.heatmaps.find((x) => x.id === 'main');
    check('an .npz too big to read whole opens lazily, with its tokens', z.d.example === 'file:' + npz &&
      z.d.source_tokens[0] === 'w0' && z.d.source_tokens[511] === 'w511' && !z.d.message_is_error,
      `${z.d.example}: ${z.d.source_tokens.slice(509, 512)} ... (describe() gives the first 512); ${z.d.message}`);
    check('a zoomed-in band of a visited .npz head is read, not the file', hz && hz.held[0] <= 1000 && hz.held[1] > 1000 &&
      z.d.lazy.bytes_read < 64 * 2 ** 20, `held ${JSON.stringify(hz && hz.held)}, ${z.d.lazy.bytes_read} bytes read`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main();
process.exit(summary());
