// Opening a big eager file in the browser (docs/PERFORMANCE.md, "Big files"): a 12 x 12 x 512 x 512
// float32 .npy (151 MB, written by attnviz_load_bench --make) opened by headless Chromium through
//   old:    the whole file as one ArrayBuffer, copied into the WASM heap, then attnviz_open_file
//           (what viewer.openFile did before attnviz-lazy.js)
//   stream: viewer.openFile(file): 4 MiB File.slice() pieces decoded straight into the final matrices
// each in a fresh page, in the same run. Prints the open time, the WASM memory after it (against the
// data's size), and the longest gap between animation frames while the file opened.
//   node bench/load_browser_bench.mjs [FILE.npy]     (make bench runs it; make the file first)
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { chromium } from 'playwright-core';
import { serve } from '../scripts/serve.mjs';

const APP_DIR = process.env.ATTNVIZ_WEB_APP || 'build/web/app';
const FILE = process.argv[2] || '/tmp/attnviz_bench_151mb.npy';
const MAKE = process.env.ATTNVIZ_LOAD_BENCH || 'build/native/bench/attnviz_load_bench';

async function run(browser, appPort, dataUrl, mode) {
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  await page.goto(`http://127.0.0.1:${appPort}/?example=seed004&view=heatmap`);
  await page.waitForFunction(() => window.attnviz !== undefined, null, { timeout: 60000 });
  return page.evaluate(async ({ url, mode }) => {
    const blob = await (await fetch(url)).blob();  // in the page first: the bench times the open, not the network
    const file = new File([blob], 'big.npy');
    const v = window.attnviz, M = v.module;
    const before = M.HEAPU8.length;
    const ticks = [];
    let running = true;
    const tick = (now) => {
      ticks.push(now);
      if (running) requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
    const t0 = performance.now();
    if (mode === 'old') {
      const bytes = new Uint8Array(await file.arrayBuffer());
      const p = M._malloc(bytes.length);
      M.HEAPU8.set(bytes, p);
      const err = M.ccall('attnviz_open_file', 'string', ['string', 'number', 'number'], ['big.npy', p, bytes.length]);
      M._free(p);
      if (err) throw new Error(err);
    } else {
      await v.openFile(file);
    }
    const t1 = performance.now(), seconds = (t1 - t0) / 1000;
    // The grid fills in over the next frames (statistics and uploads a few ms a frame).
    let frame_cpu = 0;
    for (let i = 0; i < 600; ++i) {
      v.command('view grid');  // wakes the viewer
      await new Promise((r) => requestAnimationFrame(r));
      frame_cpu = Math.max(frame_cpu, v.frameCpuMs());
      const g = v.describe().grid;
      if (g.stats.length > 0 && g.stats_pending === 0 && g.drawn > 0) break;
    }
    const t2 = performance.now(), filled = (t2 - t0) / 1000;
    running = false;
    let gaps = 0, after = 0;  // the longest time between two frames while loading, and while the grid filled in
    for (let i = 1; i < ticks.length; ++i) {
      const gap = ticks[i] - ticks[i - 1];
      if (ticks[i - 1] < t1) gaps = Math.max(gaps, gap);
      else if (ticks[i] <= t2) after = Math.max(after, gap);
    }
    const d = v.describe();
    return { seconds, heap_before: before, heap_after: M.HEAPU8.length, data: file.size, example: d.example,
      maps: d.grid ? d.grid.stats.length : -1, gap_ms: gaps, after_ms: after, filled, frame_cpu,
      longest_feed: mode === 'stream' ? window.AttnVizLazy.stats.longest_feed_ms : seconds * 1000 };
  }, { url: dataUrl, mode });
}

async function main() {
  if (!fs.existsSync(FILE)) execFileSync(MAKE, ['--make', FILE], { stdio: 'inherit' });
  const app = await serve(APP_DIR, 0);
  const data = await serve(path.dirname(FILE), 0, { cors: true });
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--use-angle=swiftshader', '--enable-unsafe-swiftshader', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
  });
  const url = `http://127.0.0.1:${data.address().port}/${path.basename(FILE)}`;
  const results = {};
  try {
    for (const mode of ['old', 'stream']) {
      const r = await run(browser, app.address().port, url, mode);
      results[mode] = r;
      const mb = (b) => (b / 1048576).toFixed(1);
      console.log(`load browser mode=${mode} file_mb=${mb(r.data)} seconds=${r.seconds.toFixed(3)} ` +
        `wasm_heap_mb=${mb(r.heap_after)} heap_over_data=${(r.heap_after / r.data).toFixed(2)} ` +
        `longest_task_ms=${r.longest_feed.toFixed(1)} ` +
        `longest_frame_gap_while_loading_ms=${r.gap_ms.toFixed(0)} grid_filled_s=${r.filled.toFixed(2)} ` +
        `longest_frame_gap_after_ms=${r.after_ms.toFixed(0)} max_frame_cpu_ms_after=${r.frame_cpu.toFixed(1)} maps=${r.maps}`);
    }
    console.log(`load browser stream_vs_old time=${(results.stream.seconds / results.old.seconds).toFixed(2)} ` +
      `heap=${(results.stream.heap_after / results.old.heap_after).toFixed(2)}`);
  } finally {
    await browser.close();
    app.close();
    data.close();
  }
}

main().catch((e) => { console.error(e); process.exit(1); });
