// LLM-sized attention read lazily in the browser (docs/PERFORMANCE.md, "Big files"): a 32 layers x
// 32 heads x 4096 x 4096 F16 safetensors file (32 GiB; sparse: the header, a few heads and their
// overviews are written, the rest is a hole) served from 127.0.0.1 with HTTP Range requests by
// scripts/serve.mjs, opened in headless Chromium. Prints
//   open to first frame        openUrl() until the grid has drawn (placeholders or overviews)
//   switch to unvisited heads  `map K` until the first frame that draws the new head (its overview),
//                              until the head is in memory, and until it is drawn (held 0..4096, no underlay)
//   a zoomed-in band           rows in view of another unvisited head (zoom 64)
//   grid scrolling             the App::Frame CPU time and the frame gaps while the wheel scrolls the
//                              1024-head grid and overviews stream in
//   WASM memory                the most seen, against the 512 MB target
//   node bench/lazy_browser_bench.mjs
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { serve } from '../scripts/serve.mjs';
import { write } from '../tests/big/safetensors.mjs';

const APP_DIR = process.env.ATTNVIZ_WEB_APP || 'build/web/app';
const N = 4096, L = 32, H = 32;
const VISIT = [[7, 19], [15, 3], [31, 31]];  // heads written (one-hot rows), then switched to

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attnviz-lazy-bench-'));
  const file = path.join(dir, 'llm.safetensors');
  const tokens = Array.from({ length: N }, (_, i) => `w${i}`);
  const plan = write(file, [{ name: 'llm', kind: 'self', tokens, layers: L, heads: H }], (s, l, h) => {
    if (!VISIT.some(([a, b]) => a === l && b === h)) return null;
    const w = new Float32Array(N * N);
    for (let r = 0; r < N; r++) w[r * N + (r * (h + 2)) % N] = 1;
    return w;
  });
  console.log(`lazy file layers=${L} heads=${H} tokens=${N} dtype=F16 size_gib=${(plan.size / 2 ** 30).toFixed(1)} ` +
    `on_disk_mib=${(fs.statSync(file).blocks * 512 / 2 ** 20).toFixed(0)}`);
  const app = await serve(APP_DIR, 0);
  const data = await serve(dir, 0, { cors: true });
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--use-angle=swiftshader', '--enable-unsafe-swiftshader', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
  });
  try {
    const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
    await page.goto(`http://127.0.0.1:${app.address().port}/?example=seed004&view=heatmap`);
    await page.waitForFunction(() => window.attnviz !== undefined, null, { timeout: 60000 });
    const url = `http://127.0.0.1:${data.address().port}/llm.safetensors`;
    const r = await page.evaluate(async ({ url, visit, H }) => {
      const v = window.attnviz, M = v.module, out = {};
      let heap = M.HEAPU8.length;
      const frame = () => new Promise((res) => requestAnimationFrame(res));
      let polls = 0;  // frames waited for by the last until()
      const until = async (f, limit = 60000) => {
        const t0 = performance.now();
        for (polls = 0; ; polls++) {
          const d = v.describe();
          heap = Math.max(heap, M.HEAPU8.length);
          if (f(d)) return d;
          if (performance.now() - t0 > limit) throw new Error('timed out: ' + JSON.stringify(d.lazy) + ' ' + d.message);
          v.command('numbers off');  // wakes the viewer
          await frame();
        }
      };
      let t0 = performance.now();
      await v.openUrl(url);
      out.open_ms = performance.now() - t0;  // header read and the example built
      await until((d) => d.grid && d.grid.drawn > 0);
      out.first_frame_ms = performance.now() - t0;
      await until((d) => d.grid.overviews_shown >= d.grid.drawn);
      out.overviews_ms = performance.now() - t0;
      // Unvisited heads: whole, then a zoomed-in band of another.
      v.command('view heatmap');
      out.switch_ms = [];
      out.memory_ms = [];
      out.first_useful_ms = [];
      out.first_useful_frames = [];
      out.first_useful_cpu = [];
      for (const [l, h] of visit.slice(0, 2)) {
        const m = l * H + h;
        t0 = performance.now();
        v.command(`map ${m}`);
        // The first frame that draws the new head: its overview standing in (or its rows already).
        // (describe() tells what the last frame drew: one frame at least after the command.)
        await until((d) => polls > 0 && d.map === m && d.heatmaps[0] && (d.heatmaps[0].underlay ||
          (d.heatmaps[0].held && d.heatmaps[0].held[1] > d.heatmaps[0].held[0])));
        out.first_useful_ms.push(performance.now() - t0);
        out.first_useful_frames.push(polls);
        out.first_useful_cpu.push(v.frameCpuMs());
        await until((d) => d.lazy_current.map === m && d.lazy_current.held[1] === 4096);
        out.memory_ms.push(performance.now() - t0);  // read and decoded
        await until((d) => d.map === m && d.heatmaps[0] && d.heatmaps[0].held && d.heatmaps[0].held[1] === 4096 &&
          !d.heatmaps[0].underlay);
        out.switch_ms.push(performance.now() - t0);  // and drawn
        out.fetch_ms = window.AttnVizLazy.stats.biggest_read_ms;
        out.work_ms = window.AttnVizLazy.stats.last_work_ms;
      }
      const [bl, bh] = visit[2];
      v.command('zoom 64 2048 2048');
      t0 = performance.now();
      v.command(`map ${bl * H + bh}`);
      await until((x) => x.lazy_current.map === bl * H + bh && x.lazy_current.held[0] <= 2016 && x.lazy_current.held[1] >= 2080);
      out.band_memory_ms = performance.now() - t0;
      const d = await until((x) => x.map === bl * H + bh && x.heatmaps[0] && x.heatmaps[0].held &&
        x.heatmaps[0].held[0] <= 2016 && x.heatmaps[0].held[1] >= 2080);
      out.band_ms = performance.now() - t0;
      out.band_rows = d.heatmaps[0].held[1] - d.heatmaps[0].held[0];
      v.command('zoom 1');
      out.lazy_after_heads = v.describe().lazy;
      out.heap = heap;
      return out;
    }, { url, visit: VISIT, H });
    console.log(`lazy browser open_ms=${r.open_ms.toFixed(0)} first_frame_ms=${r.first_frame_ms.toFixed(0)} ` +
      `visible_overviews_ms=${r.overviews_ms.toFixed(0)} (target: first frame <= 2000)`);
    console.log(`lazy browser switch_to_unvisited_head first_frame_of_new_head_ms=` +
      `${r.first_useful_ms.map((x) => x.toFixed(0)).join(',')} frames_waited=${r.first_useful_frames.join(',')} ` +
      `that_frame_cpu_ms=${r.first_useful_cpu.map((x) => x.toFixed(1)).join(',')} (its overview stands in; target: <= 300)`);
    console.log(`lazy browser switch_to_unvisited_head in_memory_ms=${r.memory_ms.map((x) => x.toFixed(0)).join(',')} ` +
      `drawn_ms=${r.switch_ms.map((x) => x.toFixed(0)).join(',')} biggest_read_ms=${r.fetch_ms.toFixed(0)} ` +
      `decode_ms=${r.work_ms.toFixed(0)} (target: <= 300)`);
    console.log(`lazy browser zoomed_in_band rows=${r.band_rows} in_memory_ms=${r.band_memory_ms.toFixed(0)} ` +
      `drawn_ms=${r.band_ms.toFixed(0)}`);

    // The grid: scroll down through the 32 layer rows with the wheel while overviews stream in.
    await page.evaluate(() => { window.attnviz.command('view grid'); });
    await page.mouse.move(800, 400);
    const cpu = [], gaps = [];
    let heap = r.heap;
    for (let i = 0; i < 60; i++) {
      const t = Date.now();
      await page.mouse.wheel(0, i < 40 ? 240 : -480);
      await page.evaluate(() => new Promise((res) => requestAnimationFrame(() => requestAnimationFrame(res))));
      gaps.push(Date.now() - t);
      const s = await page.evaluate(() => ({ cpu: window.attnviz.frameCpuMs(), heap: window.attnviz.module.HEAPU8.length }));
      cpu.push(s.cpu);
      heap = Math.max(heap, s.heap);
    }
    const lazy = await page.evaluate(() => window.attnviz.describe().lazy);
    cpu.sort((a, b) => a - b);
    console.log(`lazy browser grid_scroll frames=${cpu.length} frame_cpu_ms_median=${cpu[cpu.length >> 1].toFixed(2)} ` +
      `p95=${cpu[Math.floor(cpu.length * 0.95)].toFixed(2)} max=${cpu[cpu.length - 1].toFixed(2)} ` +
      `overviews_in_memory=${lazy.overviews} (target: <= 16 ms)`);
    console.log(`lazy browser wasm_memory_max_mb=${(heap / 2 ** 20).toFixed(0)} cache_budget_mb=${lazy.budget / 2 ** 20} ` +
      `max_resident_mb=${(lazy.max_resident_bytes / 2 ** 20).toFixed(0)} bytes_read_mb=${(lazy.bytes_read / 2 ** 20).toFixed(0)} ` +
      `reads=${lazy.reads} evictions=${lazy.evictions} (target: <= 512 MB)`);
  } finally {
    await browser.close();
    app.close();
    data.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => { console.error(e); process.exit(1); });
