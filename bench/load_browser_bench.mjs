// Opening a big eager file in the browser (docs/PERFORMANCE.md, "Big files"): a 12 x 12 x 512 x 512
// float32 .npy (151 MB, written by attnviz_load_bench --make) opened by headless Chromium through
//   old:    the whole file as one ArrayBuffer, copied into the WASM heap, then attnviz_open_file
//           (what viewer.openFile did before attnviz-lazy.js)
//   stream: viewer.openFile(file) with the page reading itself (window.attnvizNoLoadWorker): File.slice()
//           reads of the size attnviz-lazy.js picks (up to 32 MiB) decoded straight into the final
//           matrices a feed at a time; stream_4mib: the same with 4 MiB reads (window.attnvizSliceBytes)
//   worker: viewer.openFile(file) as it is: the load worker reads and validates the file with its
//           own WASM instance and hands the document over; the page only copies floats;
//           worker_4mib: the same with 4 MiB reads; worker_fixed256k: the same with the page's calls into
//           the loader fixed at 256 KiB (window.attnvizFeedBytes), not paced at run time; worker_paced: worker
//           again, after it (the paced figures are the mean of the two, around the fixed run)
// each in a fresh page, in the same run; then the same two ways for a 12 x 12 x 128 x 128 attention
// JSON (27 MB, written here), which the page can only parse whole. Prints the open time, the WASM memory after it (against the
// data's size), the longest gap between animation frames while the file opened, the page's calls into
// the loader (longest, 99th percentile, how many over 8 ms), and the most the page's thread worked
// between two turns it gave the browser (longest_slice_ms).
//   node bench/load_browser_bench.mjs [FILE.npy] [--only=npy_stream,...]   (make bench runs it; make the file first)
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { chromium } from 'playwright-core';
import { serve } from '../scripts/serve.mjs';

const APP_DIR = process.env.ATTNVIZ_WEB_APP || 'build/web/app';
const FILE = process.argv.slice(2).find((a) => !a.startsWith('--')) || '/tmp/attnviz_bench_151mb.npy';
// --only=npy_stream,json_worker: just those runs (no ratio lines), for working on one path
const ONLY = process.argv.find((a) => a.startsWith('--only='))?.slice(7).split(',');
const MAKE = process.env.ATTNVIZ_LOAD_BENCH || 'build/native/bench/attnviz_load_bench';

const JSON_FILE = path.join(path.dirname(FILE), 'attnviz_bench_12x12x128.json');

// An attnviz attention JSON (version 2, one set) [layers][heads] of n x n softmax rows, 7 significant digits.
function writeJson(file, L, H, n) {
  const tokens = JSON.stringify(Array.from({ length: n }, (_, i) => `t${i}`));
  const fd = fs.openSync(file + '.part', 'w');
  fs.writeSync(fd, `{"format": "attnviz", "version": 2, "sets": [{"name": "attention", "tokens": ${tokens}, "weights": [`);
  let x = 1;
  for (let l = 0; l < L; l++) {
    const heads = [];
    for (let h = 0; h < H; h++) {
      const rows = [];
      for (let r = 0; r < n; r++) {
        const row = [];
        let sum = 0;
        for (let c = 0; c < n; c++) {
          x = (x * 1103515245 + 12345) % 2147483648;
          sum += row[c] = Math.exp(3 * x / 2147483648);
        }
        rows.push('[' + row.map((v) => (v / sum).toPrecision(7)).join(',') + ']');
      }
      heads.push('[' + rows.join(',') + ']');
    }
    fs.writeSync(fd, (l ? ',' : '') + '[' + heads.join(',') + ']');
  }
  fs.writeSync(fd, ']}]}');
  fs.closeSync(fd);
  fs.renameSync(file + '.part', file);
}

// Each run in its own page, closed afterwards: a page left open keeps drawing its grid of 144 maps
// (150-450 ms a frame on the software renderer) and slows every later run (before stop 22 it did).
async function run(browser, appPort, dataUrl, mode) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  try {
    return await runIn(await context.newPage(), appPort, dataUrl, mode);
  } finally {
    await context.close();
  }
}

async function runIn(page, appPort, dataUrl, mode) {
  await page.goto(`http://127.0.0.1:${appPort}/?example=seed004&view=heatmap`);
  await page.waitForFunction(() => window.attnviz !== undefined, null, { timeout: 60000 });
  return page.evaluate(async ({ url, mode, slice }) => {
    const blob = await (await fetch(url)).blob();  // in the page first: the bench times the open, not the network
    const file = new File([blob], url.endsWith('.json') ? 'big.json' : 'big.npy');
    window.attnvizNoLoadWorker = !mode.startsWith('worker');
    if (slice) window.attnvizSliceBytes = slice << 20;
    if (mode.endsWith('_fixed256k')) window.attnvizFeedBytes = 256 << 10;  // the loader's calls not paced
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
    let frame_cpu = 0, slowest = null;  // the slowest frame's CPU time, and where it went
    for (let i = 0; i < 600; ++i) {
      v.command('view grid');  // wakes the viewer
      await new Promise((r) => requestAnimationFrame(r));
      const d = v.describe(), cpu = v.frameCpuMs();
      if (cpu > frame_cpu && d.grid) {
        const g = d.grid;
        slowest = { ...d.frame_parts, stats_ms: g.stats_ms, pool_ms: g.pool_ms, pooled: g.pooled, slice_ms: g.slice_ms, drawn: g.drawn };
      }
      frame_cpu = Math.max(frame_cpu, cpu);
      const g = d.grid;
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
      maps: d.grid ? d.grid.stats.length : -1, gap_ms: gaps, after_ms: after, filled, frame_cpu, slowest,
      worker: mode !== 'old' && window.AttnVizLazy.stats.load_worker,
      worker_read_ms: mode.startsWith('worker') ? window.AttnVizLazy.stats.worker_read_ms : 0,
      feeds: mode === 'old' ? [0, 0, 0, 0] : ['pieces', 'longest_feed_ms', 'feed_total_ms', 'finish_ms', 'read_wait_ms', 'yield_ms', 'idle_ms'].map((k) => window.AttnVizLazy.stats[k]),
      calls: (() => {  // the loader's calls: 99th percentile, and how many took over 8 ms
        const ms = (mode === 'old' ? [seconds * 1000] : window.AttnVizLazy.stats.feed_ms).slice().sort((a, b) => a - b);
        return { p99: ms[Math.min(ms.length - 1, Math.floor(ms.length * 0.99))] || 0, over8: ms.filter((x) => x > 8).length };
      })(),
      longest_slice: mode === 'old' ? seconds * 1000 : window.AttnVizLazy.stats.longest_slice_ms,
      longest_feed: mode === 'old' ? seconds * 1000
        : Math.max(window.AttnVizLazy.stats.longest_feed_ms, window.AttnVizLazy.stats.finish_ms) };
  }, { url: dataUrl, mode, slice: mode.includes('_4mib') ? 4 : 0 });
}

async function main() {
  if (!fs.existsSync(FILE)) execFileSync(MAKE, ['--make', FILE], { stdio: 'inherit' });
  if (!fs.existsSync(JSON_FILE)) writeJson(JSON_FILE, 12, 12, 128);
  const app = await serve(APP_DIR, 0);
  const data = await serve(path.dirname(FILE), 0, { cors: true });
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--use-angle=swiftshader', '--enable-unsafe-swiftshader', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
  });
  const url = `http://127.0.0.1:${data.address().port}/${path.basename(FILE)}`;
  const jsonUrl = `http://127.0.0.1:${data.address().port}/${path.basename(JSON_FILE)}`;
  const results = {};
  try {
    for (const [mode, where, what] of [['old', url, 'npy'], ['stream_4mib', url, 'npy'], ['stream', url, 'npy'], ['worker_4mib', url, 'npy'], ['worker', url, 'npy'],
      ['worker_fixed256k', url, 'npy'], ['worker_paced', url, 'npy'],
      ['stream', jsonUrl, 'json'], ['worker', jsonUrl, 'json']]) {
      if (ONLY && !ONLY.includes(`${what}_${mode}`)) continue;
      const r = await run(browser, app.address().port, where, mode);
      results[`${what}_${mode}`] = r;
      const mb = (b) => (b / 1048576).toFixed(1);
      console.log(`load browser file=${what} mode=${mode} file_mb=${mb(r.data)} seconds=${r.seconds.toFixed(3)} ` +
        `wasm_heap_mb=${mb(r.heap_after)} heap_over_data=${(r.heap_after / r.data).toFixed(2)} ` +
        `longest_task_ms=${r.longest_feed.toFixed(1)} call_p99_ms=${r.calls.p99.toFixed(1)} calls_over_8ms=${r.calls.over8} ` +
        `longest_slice_ms=${r.longest_slice.toFixed(1)} ` +
        `longest_frame_gap_while_loading_ms=${r.gap_ms.toFixed(0)} grid_filled_s=${r.filled.toFixed(2)} ` +
        `longest_frame_gap_after_ms=${r.after_ms.toFixed(0)} max_frame_cpu_ms_after=${r.frame_cpu.toFixed(1)} maps=${r.maps} ` +
        `load_worker=${r.worker ? `yes worker_read_s=${(r.worker_read_ms / 1000).toFixed(3)}` : 'no'} ` +
        `feeds=${r.feeds[0]} longest_feed_ms=${r.feeds[1].toFixed(1)} feed_total_ms=${r.feeds[2].toFixed(0)} ` +
        `finish_ms=${r.feeds[3].toFixed(1)}` +
        (mode.startsWith('worker') ? ` page_idle_ms=${r.feeds[6].toFixed(0)}` : '') + (mode.startsWith('stream') ? ` read_wait_ms=${r.feeds[4].toFixed(0)} yield_ms=${r.feeds[5].toFixed(0)}` : ''));
      const f = r.slowest;
      if (f) {
        const rest = r.frame_cpu - f.pump_ms - f.request_ms - f.upload_ms - f.stats_ms - f.pool_ms;
        console.log(`load browser file=${what} mode=${mode} slowest_frame_after cpu_ms=${r.frame_cpu.toFixed(1)} ` +
          `pump_ms=${f.pump_ms.toFixed(1)} request_ms=${f.request_ms.toFixed(1)} upload_ms=${f.upload_ms.toFixed(1)} ` +
          `uploads=${f.uploads} grid_stats_ms=${f.stats_ms.toFixed(1)} pool_ms=${f.pool_ms.toFixed(1)} pooled=${f.pooled} ` +
          `thumbnails_drawn=${f.drawn} grid_slice_ms=${f.slice_ms.toFixed(1)} rest_ms=${rest.toFixed(1)} ` +
          `(grid_slice_ms: the grid's time for pooling, uploads and statistics, 200x the frame interval within 10-30 ms; ` +
          `rest_ms: the window's widgets and what no part times)`);
      }
    }
    if (ONLY) return;
    const ratio = (a, b, k) => (results[a][k] / results[b][k]).toFixed(2);
    console.log(`load browser npy stream_vs_old time=${ratio('npy_stream', 'npy_old', 'seconds')} ` +
      `heap=${ratio('npy_stream', 'npy_old', 'heap_after')}`);
    console.log(`load browser npy slices_vs_4mib stream_time=${ratio('npy_stream', 'npy_stream_4mib', 'seconds')} ` +
      `worker_time=${ratio('npy_worker', 'npy_worker_4mib', 'seconds')}`);
    console.log(`load browser npy worker_vs_stream time=${ratio('npy_worker', 'npy_stream', 'seconds')} ` +
      `heap=${ratio('npy_worker', 'npy_stream', 'heap_after')} ` +
      `longest_task=${ratio('npy_worker', 'npy_stream', 'longest_feed')}`);
    const paced = (k) => ((results.npy_worker[k] + results.npy_worker_paced[k]) / 2).toFixed(1);
    console.log(`load browser npy paced_vs_fixed256k longest_call_ms=${paced('longest_feed')}/${results.npy_worker_fixed256k.longest_feed.toFixed(1)} ` +
      `call_p99_ms=${((results.npy_worker.calls.p99 + results.npy_worker_paced.calls.p99) / 2).toFixed(1)}/${results.npy_worker_fixed256k.calls.p99.toFixed(1)} ` +
      `calls_over_8ms=${(results.npy_worker.calls.over8 + results.npy_worker_paced.calls.over8) / 2}/${results.npy_worker_fixed256k.calls.over8} ` +
      `time=${(((results.npy_worker.seconds + results.npy_worker_paced.seconds) / 2) / results.npy_worker_fixed256k.seconds).toFixed(2)}`);
    console.log(`load browser json worker_vs_stream time=${ratio('json_worker', 'json_stream', 'seconds')} ` +
      `heap=${ratio('json_worker', 'json_stream', 'heap_after')} ` +
      `longest_task=${ratio('json_worker', 'json_stream', 'longest_feed')}`);
  } finally {
    await browser.close();
    app.close();
    data.close();
  }
}

main().catch((e) => { console.error(e); process.exit(1); });
