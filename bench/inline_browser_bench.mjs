// Python's self-contained outputs with big data (docs/PYTHON.md, "Self-contained"): a BERT-base at
// 512 tokens (12 x 12 x 512 x 512 float32, 151 MB of softmax weights) written by attnviz.to_html()
//   stored:   as to_html writes it (weights over 16 MiB stored in the NPZ, not deflated)
//   deflated: the same page with the NPZ deflated (what to_html did for every size before stop 41)
// each written in the same run (Python), then opened from disk in headless Chromium, alternating,
// twice each. Prints the HTML's size, to_html's time, the page's load (goto: the HTML parsed and its
// scripts run) and the time to a ready viewer (data-attnviz-state, the data opened), then ratios.
//   node bench/inline_browser_bench.mjs   (make bench runs it; needs /usr/bin/python3 with numpy, or $PYTHON)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const PYTHON = process.env.PYTHON || '/usr/bin/python3';
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attnviz-inline-'));

const WRITE = `
import sys, time, numpy as np, attnviz
from attnviz import _html
rng = np.random.default_rng(0)
s = rng.normal(size=(12, 12, 512, 512)).astype(np.float32) * 4
w = np.exp(s - s.max(-1, keepdims=True)); w /= w.sum(-1, keepdims=True); w = w.astype(np.float32)
tokens = [f"t{i}" for i in range(512)]
for name, limit in (("stored", _html.COMPRESS_MAX_BYTES), ("deflated", 1 << 62)):
    _html.COMPRESS_MAX_BYTES = limit
    t = time.perf_counter()
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the size warning: this bench is about that size
        attnviz.to_html(f"{sys.argv[1]}/{name}.html", w, tokens=tokens)
    print(name, f"{time.perf_counter() - t:.2f}")
`;

async function open(browser, file) {
  const page = await (await browser.newContext({ viewport: { width: 1100, height: 800 } })).newPage();
  const t0 = Date.now();
  await page.goto(pathToFileURL(file).href, { timeout: 300000 });
  const loaded = Date.now() - t0;
  const state = await page.waitForFunction(() => {
    const e = document.querySelector('.attnviz-output');
    const s = e && e.getAttribute('data-attnviz-state');
    return (s === 'ready' || s === 'error') && s;
  }, null, { timeout: 300000, polling: 50 }).then((h) => h.jsonValue());
  const ready = Date.now() - t0;
  await page.context().close();
  if (state !== 'ready') throw new Error(`${file}: the viewer says ${state}`);
  return { loaded, ready };
}

async function main() {
  const out = execFileSync(PYTHON, ['-c', WRITE, dir], {
    env: { ...process.env, PYTHONPATH: path.join(ROOT, 'python'), PYTHONDONTWRITEBYTECODE: '1' },
    encoding: 'utf8', maxBuffer: 1 << 20,
  });
  const written = Object.fromEntries(out.trim().split('\n').map((l) => l.split(' ')).map(([n, s]) => [n, +s]));
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--use-angle=swiftshader', '--enable-unsafe-swiftshader'],
  });
  const runs = { stored: [], deflated: [] };
  try {
    for (let round = 0; round < 2; ++round)
      for (const name of round % 2 ? ['deflated', 'stored'] : ['stored', 'deflated'])
        runs[name].push(await open(browser, path.join(dir, `${name}.html`)));
  } finally {
    await browser.close();
  }
  const best = (name, k) => Math.min(...runs[name].map((r) => r[k]));
  for (const name of ['stored', 'deflated']) {
    const mb = fs.statSync(path.join(dir, `${name}.html`)).size / 1e6;
    console.log(`inline page=${name} html_mb=${mb.toFixed(1)} to_html_s=${written[name].toFixed(2)} ` +
                `load_ms=${runs[name].map((r) => r.loaded).join(',')} ready_ms=${runs[name].map((r) => r.ready).join(',')}`);
  }
  console.log(`ratio inline deflated/stored to_html=${(written.deflated / written.stored).toFixed(2)} ` +
              `ready=${(best('deflated', 'ready') / best('stored', 'ready')).toFixed(2)} ` +
              `html_size=${(fs.statSync(path.join(dir, 'deflated.html')).size / fs.statSync(path.join(dir, 'stored.html')).size).toFixed(2)}`);
  fs.rmSync(dir, { recursive: true, force: true });
}

main().catch((e) => { console.error(e); fs.rmSync(dir, { recursive: true, force: true }); process.exit(1); });
