// `python3 -m attnviz serve FILE` in headless Chromium: a .npy too big to read whole (16 x 8 x 2048^2
// float16, sparse, 1 GiB) is served from disk and the page reads it lazily over Range requests,
// opening on its first head; a visited head's band is read, not the file. A small .npy is served from
// memory (no Range answers) and still opens, read whole. An .npz of the big array (np.savez, with its
// tokens) is served from disk and read lazily too.
//   node tests/python/serve.test.mjs   (ATTNVIZ_WEB_APP: the built app; python3 with numpy)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { openApp, check, summary, screenshot } from '../browser/lib.mjs';
import { writeNpy, writeBigNpy, writeBigNpz } from '../big/safetensors.mjs';

const PYTHON = process.env.ATTNVIZ_PYTHON || '/usr/bin/python3';

// Starts `python3 -m attnviz serve FILE` on a free port; resolves { url, stop }.
function pythonServe(file) {
  const env = { ...process.env, PYTHONPATH: path.resolve('python'), PYTHONDONTWRITEBYTECODE: '1' };
  const p = spawn(PYTHON, ['-m', 'attnviz', 'serve', file, '--port', '0', '--quiet', '--app',
    process.env.ATTNVIZ_WEB_APP || 'build/web/app'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  p.stderr.on('data', (d) => { err += d; });
  return new Promise((resolve, reject) => {
    let out = '';
    p.stdout.on('data', (d) => {
      out += d;
      const m = /serving .* at (http:\/\/127\.0\.0\.1:\d+\/)/.exec(out);
      if (m) resolve({ url: m[1], stop: () => p.kill() });
    });
    p.on('exit', (code) => reject(new Error(`attnviz serve exited (${code}): ${err}`)));
  });
}

async function opened(page, url) {
  await page.goto(url);
  await page.waitForFunction(() => window.attnvizFileOpened || window.attnvizError, null, { timeout: 60000 });
  return page.evaluate(() => ({ error: window.attnvizError || '', d: window.attnviz.describe() }));
}

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attnviz-pyserve-'));
  const big = path.join(dir, 'big.npy');
  writeBigNpy(big);
  const small = path.join(dir, 'small.npy');
  const n = 6, w = new Float32Array(2 * 2 * n * n).fill(1 / n);
  writeNpy(small, 2, 2, n, (l, h) => w.subarray((l * 2 + h) * n * n, (l * 2 + h + 1) * n * n));
  const app = await openApp('', { waitReady: false });
  const servers = [];
  try {
    const s1 = await pythonServe(big);
    servers.push(s1);
    let { error, d } = await opened(app.page, s1.url);
    check('serve: a .npy too big to read whole opens lazily, on its first head', !error && d.example === 'file:big.npy' &&
      d.view === 'heatmap' && d.lazy && d.lazy.bytes_read < 64 * 2 ** 20,
      `${error} ${d.example} ${d.view}, ${d.lazy && (d.lazy.bytes_read / 2 ** 20).toFixed(1)} MiB read`);
    await app.page.evaluate(() => window.attnviz.command('map 29'));
    await app.page.evaluate(() => window.attnviz.command('zoom 128 1000 952'));
    const t0 = Date.now();
    for (;;) {
      d = await app.page.evaluate(() => window.attnviz.describe());
      const h = d.heatmaps && d.heatmaps[0];
      if ((h && h.held && h.held[0] <= 992 && h.held[1] >= 1008) || Date.now() - t0 > 30000) break;
      await app.page.waitForTimeout(100);
    }
    const h = d.heatmaps[0];
    check('serve: a band of a visited head is read over Range requests', h.held[0] <= 992 && h.held[1] >= 1008 &&
      d.lazy.bytes_read < 64 * 2 ** 20, `held ${JSON.stringify(h.held)}, ${(d.lazy.bytes_read / 2 ** 20).toFixed(1)} MiB read`);
    await screenshot(app.page, 'python-serve-npy.png');
    // np.savez of the same array with its tokens: served from disk too, listed and read lazily.
    const npz = path.join(dir, 'big.npz');
    writeBigNpz(npz);
    const s3 = await pythonServe(npz);
    servers.push(s3);
    ({ error, d } = await opened(app.page, s3.url));
    check('serve: an .npz too big to read whole opens lazily with its tokens', !error && d.example === 'file:big.npz' &&
      d.lazy && d.lazy.bytes_read < 64 * 2 ** 20 && d.source_tokens[7] === 'w7',
      `${error} ${d.example}, ${d.lazy && (d.lazy.bytes_read / 2 ** 20).toFixed(1)} MiB read, ${d.source_tokens.slice(0, 8)}`);
    const s2 = await pythonServe(small);
    servers.push(s2);
    ({ error, d } = await opened(app.page, s2.url));
    check('serve: a small .npy opens, read whole', !error && d.example === 'file:small.npy' && !d.lazy,
      `${error} ${d.example} lazy=${JSON.stringify(d.lazy)}`);
  } finally {
    for (const s of servers) s.stop();
    await app.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().then(() => process.exit(summary()), (e) => { console.error(e); summary(); process.exit(1); });
