import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { serve } from '/work/wt-lazy/scripts/serve.mjs';
import { write } from '/work/wt-lazy/tests/big/safetensors.mjs';
const N = 4096, L = 32, H = 32;
const VISIT = [[7, 19], [15, 3], [31, 31]];
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attnviz-trace-'));
const file = path.join(dir, 'llm.safetensors');
const tokens = Array.from({ length: N }, (_, i) => `w${i}`);
write(file, [{ name: 'llm', kind: 'self', tokens, layers: L, heads: H }], (s, l, h) => {
  if (!VISIT.some(([a, b]) => a === l && b === h)) return null;
  const w = new Float32Array(N * N);
  for (let r = 0; r < N; r++) w[r * N + (r * (h + 2)) % N] = 1;
  return w;
});
const app = await serve('/work/wt-lazy/build/web/app', 0);
const data = await serve(dir, 0, { cors: true });
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium',
  args: ['--no-sandbox', '--use-angle=swiftshader', '--enable-unsafe-swiftshader', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'] });
const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
await page.goto(`http://127.0.0.1:${app.address().port}/?example=seed004&view=heatmap`);
await page.waitForFunction(() => window.attnviz !== undefined, null, { timeout: 60000 });
const url = `http://127.0.0.1:${data.address().port}/llm.safetensors`;
const out = await page.evaluate(async ({ url, visit, H }) => {
  const v = window.attnviz, log = [];
  const frame = () => new Promise((res) => requestAnimationFrame(res));
  await v.openUrl(url);
  for (let i = 0; i < 40; i++) { v.command('numbers off'); await frame(); }
  v.command('view heatmap');
  for (let i = 0; i < 10; i++) { v.command('numbers off'); await frame(); }
  for (const [l, h] of visit.slice(0, 2)) {
    const m = l * H + h;
    window.AttnVizLazy.stats.reads.length = 0;
    const t0 = performance.now();
    v.command(`map ${m}`);
    const tc = performance.now() - t0;
    const frames = [];
    for (let i = 0; i < 60; i++) {
      const ft = await frame();
      const d = v.describe();
      const hm = d.heatmaps[0] || {};
      frames.push(`${(performance.now() - t0).toFixed(0)}(raf ${(ft - t0).toFixed(0)}) cpu=${v.frameCpuMs().toFixed(1)} u=${hm.underlay_rows} held=${hm.held} f=${d.frame||''}`);
      if (hm.held && hm.held[1] === 4096) break;
    }
    log.push({ m, t0, w: (window.AttnVizLazy.stats.wtimes||[]).splice(0), cmd_ms: tc, frames, reads: window.AttnVizLazy.stats.reads.map((r) => `${(r.start - t0).toFixed(0)}-${(r.end - t0).toFixed(0)}:${r.bytes}`) });
  }
  return log;
}, { url, visit: VISIT, H });
console.log(JSON.stringify(out, null, 1));
await browser.close(); app.close(); data.close(); fs.rmSync(dir, { recursive: true, force: true });
