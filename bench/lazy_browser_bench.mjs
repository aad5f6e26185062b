// LLM-sized attention read lazily in the browser (docs/PERFORMANCE.md, "Big files"): a 32 layers x
// 32 heads x 4096 x 4096 F16 safetensors file (32 GiB; sparse: the header, a few heads and their
// overviews are written, the rest is a hole) served from 127.0.0.1 with HTTP Range requests by
// scripts/serve.mjs, opened in headless Chromium. Prints
//   open to first frame        openUrl() until the grid has drawn (placeholders or overviews)
//   grid to heatmap            `view heatmap` until head 0 shows at the view's resolution
//   switch to unvisited heads  then `map K` until
//                                first_frame: the first frame that draws the new head (any stand-in)
//                                view_resolution ("switched"): the first frame that shows it at the view's
//                                  resolution: its rows in view in memory, or a stand-in with at least as
//                                  many rows in view as the heatmap has pixel rows (a 1024^2 screen copy at
//                                  zoom 1; a 256^2 overview never, on a 4096^2 head)
//                                first_rows: the first frame that draws some of the head's own rows at
//                                  full resolution (those of its 4 MiB parts decoded so far, over the stand-in)
//                                in_memory / full_res_drawn: the whole 4096^2 head in memory, and drawn (zoomed out: from its
//                                  screen copy, which then has a cell per pixel: "coarse")
//                                filling_in: the first frame of a screen copy computed from the rows
//                                  read so far (files without stored screen copies)
//                              for the same model written with and without screen copies (in one run)
//   a zoomed-in band           rows in view of another unvisited head (zoom 64)
//   kept vs every frame drawn  twelve more switches alternating (ABBA) the default (a frame that would look like
//                              the last one is not drawn again) with Module.attnvizDrawEveryFrame (first run)
//   switch to visited heads    then back to 8 of those 12, the last visited first: until the whole head is
//                              in memory and drawn, and the reads that took (heads kept as halves: none)
//   quick / paced switches     then 8 unvisited heads each as soon as the last showed at the view's
//                              resolution (a user stepping through heads; served_mb: what the server sent
//                              meanwhile), and 8 more each 1 s after (the last one's whole head being read);
//                              each switch's reads are printed (start..end ms after it: size), and
//                              command_ms, the `map K` command's own time (it starts the reads)
//   grid scrolling             the App::Frame CPU time and the frame gaps while the wheel scrolls the
//                              1024-head grid and overviews stream in
//   thumbnails vs overviews    the same grid scroll in fresh pages of the same model with and without stored 64^2
//                              thumbnails (ABBA, 2 rounds; also --only=scroll): frames over 16 ms, the longest,
//                              what was read until the last screen filled in, and how long that took (from the
//                              first step, and after the last)
//   WASM memory                the most seen, against the 512 MB target
//   grid sorted                `grid-sort entropy` right after opening, until every head of the 1024 is
//                              sorted by the statistics the file stores (since stop 39; also with --only=grid)
//   a grid without overviews   the same shape as a bare .npy (what np.save writes: no overviews, so
//                              the grid reads each head it shows whole and pools it), in a 640 x 400
//                              page: the time until every thumbnail in view is shown, the bytes read,
//                              the WASM memory. With
//                              ATTNVIZ_WEB_APP_B=<another build's app folder>, the two builds are
//                              served in turn (A B A B) and a ratio line compares them.
//   node bench/lazy_browser_bench.mjs [--only=grid|--only=first|--only=scroll]   (--only=grid: the last section alone;
//   --only=first: the first page alone; ATTNVIZ_TRACE=trace.json: a Chromium trace of its paced switches,
//   or with ATTNVIZ_TRACE_SCROLL=1 of its grid scroll, whose frames' CPU times are then printed in order)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { serve } from '../scripts/serve.mjs';
import { write, writeNpy } from '../tests/big/safetensors.mjs';

const APP_DIR = process.env.ATTNVIZ_WEB_APP || 'build/web/app';
const N = 4096, L = 32, H = 32;
let served = 0;  // bytes the data server sent (every response, to the end or until cancelled)
const VISIT = [[7, 19], [15, 3], [31, 31]];  // heads written (one-hot rows), then switched to
const gridOnly = process.argv.includes('--only=grid');
const firstOnly = process.argv.includes('--only=first');  // the first page alone (screens=yes, with the switches)
const scrollOnly = process.argv.includes('--only=scroll');  // the thumbnails-vs-overviews scroll alone

// A fresh page opens the model and scrolls its 1024-head grid as run() does (60 wheel steps, two
// animation frames each), then waits until the last screen has filled in: the scroll's App::Frame CPU
// times, and the bytes read and the time from the first step until every thumbnail in view was shown.
async function gridScroll(browser, appPort, url, tag) {
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  await page.goto(`http://127.0.0.1:${appPort}/?example=seed004&view=heatmap`);
  await page.waitForFunction(() => window.attnviz !== undefined, null, { timeout: 60000 });
  await page.evaluate(async (u) => {
    const v = window.attnviz;
    await v.openUrl(u);
    v.command('view grid');
    for (let i = 0; i < 600 && !(v.describe().grid && v.describe().grid.drawn > 0); i++)
      await new Promise((res) => requestAnimationFrame(res));
  }, url);
  await page.mouse.move(800, 400);
  const before = await page.evaluate(() => ({ bytes: window.attnviz.describe().lazy.bytes_read, t: performance.now() }));
  const cpu = [];
  for (let i = 0; i < 60; i++) {
    await page.mouse.wheel(0, i < 40 ? 240 : -480);
    await page.evaluate(() => new Promise((res) => requestAnimationFrame(() => requestAnimationFrame(res))));
    cpu.push(await page.evaluate(() => window.attnviz.frameCpuMs()));
  }
  const r = await page.evaluate(async (t0) => {
    const last = performance.now();
    const v = window.attnviz;
    for (let i = 0; i < 3000; i++) {
      const d = v.describe();
      if (d.grid.waiting === 0 && d.lazy.pending === 0) {
        return { fill_ms: performance.now() - t0, after_ms: performance.now() - last, lazy: d.lazy, thumbs_wanted: d.grid.thumbs_wanted,
          shown: d.grid.overviews_shown, heap: v.module.HEAPU8.length };
      }
      await new Promise((res) => requestAnimationFrame(res));
    }
    return null;
  }, before.t);
  await page.context().close();
  if (!r) throw new Error(`${tag}: the grid did not fill in`);
  const sorted = [...cpu].sort((a, b) => a - b);
  const out = { over16: cpu.filter((x) => x > 16).length, max: sorted[sorted.length - 1],
    median: sorted[sorted.length >> 1], read_mb: (r.lazy.bytes_read - before.bytes) / 2 ** 20, fill_ms: r.fill_ms,
    after_ms: r.after_ms };
  console.log(`lazy browser grid_scroll_ab ${tag} frames=${cpu.length} over_16ms=${out.over16} ` +
    `frame_cpu_ms_median=${out.median.toFixed(2)} max=${out.max.toFixed(2)} read_during_scroll_mb=${out.read_mb.toFixed(1)} ` +
    `until_filled_ms=${out.fill_ms.toFixed(0)} (after_the_last_step=${out.after_ms.toFixed(0)}) thumbs_in_memory=${r.lazy.thumbs} overviews_in_memory=${r.lazy.overviews} ` +
    `thumbs_wanted=${r.thumbs_wanted} wasm_memory_mb=${(r.heap / 2 ** 20).toFixed(0)}`);
  return out;
}

// gridScroll of the model with thumbnails (A) and without (B), ABBA twice, and the ratios B / A.
async function thumbsVsOverviews(browser, appPort, base) {
  const runs = { a: [], b: [] };
  for (const which of ['a', 'b', 'b', 'a', 'a', 'b', 'b', 'a']) {
    const url = which === 'a' ? `${base}/llm.safetensors` : `${base}/llm-nothumbs.safetensors`;
    runs[which].push(await gridScroll(browser, appPort, url, which === 'a' ? 'thumbs=yes' : 'thumbs=no'));
  }
  const sum = (a, k) => a.reduce((x, y) => x + y[k], 0);
  console.log(`lazy browser grid_scroll_ab thumbs=no_over_yes read_mb=${(sum(runs.b, 'read_mb') / sum(runs.a, 'read_mb')).toFixed(1)} ` +
    `until_filled=${(sum(runs.b, 'fill_ms') / sum(runs.a, 'fill_ms')).toFixed(2)} ` +
    `after_the_last_step=${(sum(runs.b, 'after_ms') / Math.max(1, sum(runs.a, 'after_ms'))).toFixed(2)} ` +
    `frames_over_16ms yes=${sum(runs.a, 'over16')} no=${sum(runs.b, 'over16')} of ${runs.a.length * 60} each ` +
    `longest_ms yes=${Math.max(...runs.a.map((x) => x.max)).toFixed(1)} no=${Math.max(...runs.b.map((x) => x.max)).toFixed(1)}`);
}

// One page: open the file, switch to unvisited heads, a zoomed-in band; optionally scroll the grid.
async function run(browser, appPort, url, tag, { scroll = false, mainThreadReads = false, ab = false } = {}) {
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  await page.goto(`http://127.0.0.1:${appPort}/?example=seed004&view=heatmap`);
  await page.waitForFunction(() => window.attnviz !== undefined, null, { timeout: 60000 });
  await page.exposeFunction('attnvizServedBytes', () => served);
  // ATTNVIZ_TRACE=file.json: a Chromium trace (every thread's tasks, wall and thread time) of the paced
  // switches of the first run, to tell a busy thread from one waiting for a core.
  const traceScroll = !!process.env.ATTNVIZ_TRACE_SCROLL;  // =1: the grid scroll's frames traced instead
  const tracePath = ab && process.env.ATTNVIZ_TRACE;
  await page.exposeFunction('attnvizTrace', async (what) => {
    if (!tracePath || (what.endsWith('scroll') !== traceScroll)) return;
    if (what.startsWith('start')) {
      await browser.startTracing(page, { path: tracePath, screenshots: false, categories: ['__metadata', 'toplevel',
        'devtools.timeline', 'disabled-by-default-devtools.timeline', 'v8', 'disabled-by-default-v8.gc', 'blink.user_timing',
        'loading', 'netlog', 'gpu', 'viz', 'cc', 'disabled-by-default-network'] });
    } else await browser.stopTracing();
  });
  const r = await page.evaluate(async ({ url, visit, H, N, mainThreadReads, ab }) => {
    window.attnvizMainThreadReads = mainThreadReads;
    const v = window.attnviz, M = v.module, out = {};
    let heap = M.HEAPU8.length;
    const frame = () => new Promise((res) => requestAnimationFrame(res));
    let polls = 0;  // frames waited for by the last until()
    let longest = 0;  // the longest App::Frame CPU time seen by until() since reset
    const until = async (f, limit = 60000) => {
      const t0 = performance.now();
      for (polls = 0; ; polls++) {
        const d = v.describe();
        heap = Math.max(heap, M.HEAPU8.length);
        if (polls > 0) longest = Math.max(longest, v.frameCpuMs());
        if (f(d)) return d;
        if (performance.now() - t0 > limit) throw new Error('timed out: ' + JSON.stringify(d.lazy) + ' ' + d.message);
        await frame();  // the viewer draws when something arrives (not woken here: a user waiting)
      }
    };
    // The last frame drew head m at the view's resolution: the rows in view in memory, or a stand-in
    // with as many rows in view as the heatmap has pixel rows.
    const atViewResolution = (d, m) => {
      const h = d.heatmaps[0];
      if (d.map !== m || !h || !h.held) return false;
      const span = h.view[3] - h.view[1], px = (h.rect[3] - h.rect[1]) * (window.devicePixelRatio || 1);
      if (h.held[0] <= Math.floor(h.view[1]) && h.held[1] >= Math.ceil(h.view[3])) return true;
      return h.underlay && !h.underlay_partial && h.underlay_rows * span / h.rows >= px - 1;
    };
    let t0 = performance.now();
    await v.openUrl(url);
    out.open_ms = performance.now() - t0;  // header read and the example built
    await until((d) => d.grid && d.grid.drawn > 0);
    out.first_frame_ms = performance.now() - t0;
    await until((d) => d.grid.overviews_shown >= d.grid.drawn);
    out.overviews_ms = performance.now() - t0;
    // The heatmap of the head the grid had (head 0) first: until it shows at the view's resolution.
    // (Until stop 25 the first switch came at once, and paid for this one's reads, cancelled.)
    t0 = performance.now();
    v.command('view heatmap');
    const m0 = v.describe().map;
    await until((d) => atViewResolution(d, m0));
    out.view_switch_ms = performance.now() - t0;
    for (const k of ['switch_reads', 'first', 'partial', 'first_frames', 'first_cpu', 'first_parts', 'viewres', 'viewres_rows', 'memory', 'drawn', 'rows', 'longest']) out[k] = [];
    for (const [l, h] of visit.slice(0, 2)) {
      const m = l * H + h;
      t0 = performance.now();
      longest = 0;
      v.command(`map ${m}`);
      // (describe() tells what the last frame drew: one frame at least after the command.) The first
      // frame that draws the head, and the first at the view's resolution (often the same frame).
      let first = 0, partial = 0, rows = 0;
      const firstRows = (x) => {  // the head's own rows drawn (arrived parts, or all of it)
        const h = x.heatmaps[0];
        if (!rows && polls > 0 && x.map === m && h && h.rows_in > 0) rows = performance.now() - t0;
      };
      const d = await until((x) => {
        firstRows(x);
        if (polls === 0 || x.map !== m || !x.heatmaps[0]) return false;
        const h = x.heatmaps[0];
        if (!partial && h.underlay_partial) partial = performance.now() - t0;
        if (!first && (h.underlay || h.arrived > 0 || (h.held && h.held[1] > h.held[0]))) {
          first = performance.now() - t0;
          out.first_frames.push(polls);
          out.first_cpu.push(v.frameCpuMs());
          out.first_parts.push(x.frame_parts);
        }
        return first && atViewResolution(x, m);
      });
      // The Range reads made for it until then (start..end ms after the command, and bytes): on a
      // 2-vCPU VM with a software GPU they, not the frames, were most of the switch (stop 26).
      out.switch_reads.push(window.AttnVizLazy.stats.reads.filter((q) => q.start >= t0 - 1)
        .map((q) => `${(q.start - t0).toFixed(0)}..${(q.end - t0).toFixed(0)}:${(q.bytes / 1024).toFixed(0)}K` +
          (q.sent === undefined ? '' : `[${['sent', 'headers', 'body'].map((k) => (q[k] - t0).toFixed(0)).join('/')}]`))
        .join('+') || 'none');
      out.first.push(first);
      out.partial.push(partial);
      out.viewres.push(performance.now() - t0);
      out.viewres_rows.push(d.heatmaps[0].underlay ? d.heatmaps[0].underlay_rows : d.heatmaps[0].held[1] - d.heatmaps[0].held[0]);
      await until((x) => (firstRows(x), x.lazy_current.map === m && x.lazy_current.held[1] === N));
      out.memory.push(performance.now() - t0);  // read and decoded
      // and drawn: the head itself, or (zoomed out) its screen copy for it, which shows all the view can
      await until((x) => x.map === m && x.heatmaps[0] && x.heatmaps[0].held && x.heatmaps[0].held[1] === N &&
        (!x.heatmaps[0].underlay || x.heatmaps[0].coarse));
      out.drawn.push(performance.now() - t0);
      out.longest.push(longest);  // from the command until the whole head is drawn
      out.rows.push(rows || out.drawn[out.drawn.length - 1]);
    }
    out.fetch_ms = window.AttnVizLazy.stats.biggest_read_ms;
    out.work_ms = window.AttnVizLazy.stats.last_work_ms;
    out.aborted = window.AttnVizLazy.stats.aborted_reads;
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
    // Frames that look like the last one kept (the default) against every frame drawn
    // (Module.attnvizDrawEveryFrame), alternating over switches to heads not read yet: with a software
    // GPU each drawn frame holds a core that the switch's reads wait for.
    if (ab) out.ab = { kept: [], every: [], detail: [] };
    if (ab) await until((x) => x.map === bl * H + bh && x.heatmaps[0] && atViewResolution(x, bl * H + bh));
    for (let i = 0; i < (ab ? 12 : 0); i++) {
      const every = i % 4 === 1 || i % 4 === 2;  // ABBA: neither goes first more often
      M.attnvizDrawEveryFrame = every;
      const m = (16 + i) * H + 5 + i;  // unvisited: the file's hole, read like any head
      const d0 = v.describe();
      t0 = performance.now();
      v.command(`map ${m}`);
      const d1 = await until((x) => polls > 0 && atViewResolution(x, m));
      out.ab[every ? 'every' : 'kept'].push(performance.now() - t0);
      const reads = window.AttnVizLazy.stats.reads.filter((q) => q.start >= t0 - 1)
        .map((q) => `${(q.start - t0).toFixed(0)}..${(q.end - t0).toFixed(0)}`).join('+');
      out.ab.detail.push(`${every ? 'every' : 'kept'}:${(performance.now() - t0).toFixed(0)}ms/` +
        `${d1.frame - d0.frame - (d1.frames_kept - d0.frames_kept)}of${d1.frame - d0.frame}drawn/reads=${reads}`);
      await until((x) => x.lazy_current.map === m && x.lazy_current.held[1] === N);  // its reads over
    }
    M.attnvizDrawEveryFrame = false;
    // Back to those heads, the last visited first: heads the cache still holds (as floats, or for an
    // F16 file as halves, widened again) come back without a read; the others are read again.
    if (ab) out.revisit = { ms: [], reads: [], heap_mb: [], unpacks: 0, heap_before: heap };
    const unpacks0 = (v.describe().lazy || {}).unpacks || 0;
    for (let i = ab ? 11 : -1; i >= 4; i--) {
      const m = (16 + i) * H + 5 + i;
      t0 = performance.now();
      v.command(`map ${m}`);
      await until((x) => polls > 0 && x.lazy_current.map === m && x.lazy_current.held[1] === N &&
        x.heatmaps[0] && x.heatmaps[0].held && x.heatmaps[0].held[1] === N);
      out.revisit.ms.push(performance.now() - t0);
      out.revisit.reads.push(window.AttnVizLazy.stats.reads.filter((q) => q.start >= t0 - 1).length);
      out.revisit.heap_mb.push(Math.round(heap / 2 ** 20));
    }
    if (ab) out.revisit.unpacks = ((v.describe().lazy || {}).unpacks || 0) - unpacks0;
    if (ab) out.revisit.heap_after = heap;
    // Quick switches, as a user stepping through heads does: the next unvisited head as soon as the
    // last one shows at the view's resolution (the switches above wait for the whole head). A whole
    // head read meanwhile is cancelled; until then it shares the 2 cores with the new head's reads.
    // Then the same at a reader's pace: each head kept in view 1 s after it showed, so its whole head
    // is being read when the next is asked for.
    // What the server sent meanwhile: a network slower than this loopback spends it before the next head.
    if (ab) out.quick = { ms: [], reads: [], cmd: [], drawn: [], paced_ms: [], paced_reads: [], paced_cmd: [], paced_drawn: [], heap_mb: [], served: -(await window.attnvizServedBytes()) };
    for (let i = 0; i < (ab ? 16 : 0); i++) {
      const paced = i >= 8;
      if (i === 8) out.quick.served += await window.attnvizServedBytes();
      if (i === 8) await window.attnvizTrace('start');
      const m = paced ? (i - 8) * H + 20 + i : (16 + i) * H + 20 + i;  // unvisited (the file's hole)
      const s0 = v.describe();
      t0 = performance.now();
      performance.mark(`attnviz switch ${i}`);
      v.command(`map ${m}`);
      out.quick[paced ? 'paced_cmd' : 'cmd'].push(performance.now() - t0);  // the command itself (it starts the reads)
      await until((x) => polls > 0 && atViewResolution(x, m));
      out.quick[paced ? 'paced_ms' : 'ms'].push(performance.now() - t0);
      // Frames drawn until then (of those the page ran): each costs a software renderer tens of ms of
      // the cores the switch's reads wait for (stop 56).
      const s1 = v.describe();
      out.quick[paced ? 'paced_drawn' : 'drawn'].push(`${s1.frame - s0.frame - (s1.frames_kept - s0.frames_kept)}/${s1.frame - s0.frame}`);
      out.quick.heap_mb.push(Math.round(heap / 2 ** 20));
      out.quick[paced ? 'paced_reads' : 'reads'].push(window.AttnVizLazy.stats.reads
        .filter((q) => q.start >= t0 - 1 && q.end <= performance.now())
        .map((q) => `${(q.start - t0).toFixed(0)}..${(q.end - t0).toFixed(0)}:${(q.bytes / 1024).toFixed(0)}K` +
          (q.sent === undefined ? '' : `[${['sent', 'headers', 'body'].map((k) => (q[k] - t0).toFixed(0)).join('/')}]`))
        .join('+') || 'none');
      if (paced) {
        const a = v.describe();
        await new Promise((res) => setTimeout(res, 1000));
        const b = v.describe();
        // Frames drawn while the head stayed in view (of those the page ran): each one drawn costs a
        // software renderer ~100 ms of a core (stop 55), which the next switch's reads wait for.
        (out.quick.dwell = out.quick.dwell || []).push(`${b.frame - a.frame - (b.frames_kept - a.frames_kept)}/${b.frame - a.frame}`);
      }
    }
    await window.attnvizTrace('stop');
    out.heap = heap;
    return out;
  }, { url, visit: VISIT, H, N, mainThreadReads, ab });
  const ms = (a) => a.map((x) => x.toFixed(0)).join(',');
  console.log(`lazy browser ${tag} open_ms=${r.open_ms.toFixed(0)} first_frame_ms=${r.first_frame_ms.toFixed(0)} ` +
    `visible_overviews_ms=${r.overviews_ms.toFixed(0)} (target: first frame <= 2000)`);
  console.log(`lazy browser ${tag} grid_to_heatmap view_resolution_ms=${r.view_switch_ms.toFixed(0)} ` +
    `(the view switched from the grid to head 0's heatmap, before the head switches)`);
  console.log(`lazy browser ${tag} switch_to_unvisited_head first_frame_ms=${ms(r.first)} frames_waited=${r.first_frames.join(',')} ` +
    `that_frame_cpu_ms=${r.first_cpu.map((x) => x.toFixed(1)).join(',')} view_resolution_ms=${ms(r.viewres)} ` +
    `shown_rows=${r.viewres_rows.join(',')} longest_frame_cpu_ms=${r.longest.map((x) => x.toFixed(1)).join(',')} ` +
    `(switched = view_resolution; target: <= 300; longest frame: until the whole head is drawn)`);
  console.log(`lazy browser ${tag} switch_to_unvisited_head reads_until_view_resolution=${r.switch_reads.join(',')} ` +
    `(start..end ms after the command: size [the worker's request sent/headers in/body in])`);
  console.log(`lazy browser ${tag} switch_to_unvisited_head first_frame_parts ` + r.first_parts.map((p) =>
    `pump_ms=${p.pump_ms.toFixed(1)}/request_ms=${p.request_ms.toFixed(1)}/upload_ms=${p.upload_ms.toFixed(1)}/uploads=${p.uploads}`).join(' '));
  console.log(`lazy browser ${tag} filling_in first_partial_screen_copy_ms=${ms(r.partial)} (0: none; files ` +
    'without screen copies: one computed from the rows read so far)');
  console.log(`lazy browser ${tag} full_resolution first_rows_ms=${ms(r.rows)} in_memory_ms=${ms(r.memory)} drawn_ms=${ms(r.drawn)} ` +
    `biggest_read_ms=${r.fetch_ms.toFixed(0)} decode_ms=${r.work_ms.toFixed(0)} aborted_reads=${r.aborted}`);
  if (r.ab) {
    const med = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
    console.log(`lazy browser ${tag} switch_frames_kept_vs_every_frame_drawn kept_ms=${ms(r.ab.kept)} ` +
      `every_ms=${ms(r.ab.every)} median_ratio=${(med(r.ab.every) / med(r.ab.kept)).toFixed(2)} ` +
      '(view resolution; alternating, unvisited heads; ratio > 1: keeping unchanged frames is faster)');
    console.log(`lazy browser ${tag} switch_frames_kept_vs_every_frame_drawn detail ${r.ab.detail.join(' ')}`);
  }
  if (r.quick) {
    const sorted = [...r.quick.ms].sort((a, b) => a - b);
    console.log(`lazy browser ${tag} quick_switch_to_unvisited_head view_resolution_ms=${ms(r.quick.ms)} ` +
      `median=${sorted[sorted.length >> 1].toFixed(0)} max=${sorted[sorted.length - 1].toFixed(0)} ` +
      `served_mb=${(r.quick.served / 2 ** 20).toFixed(1)} ` +
      `(each as soon as the last showed at the view's resolution; served: bytes the server sent meanwhile; target: <= 300)`);
    const p = [...r.quick.paced_ms].sort((a, b) => a - b);
    console.log(`lazy browser ${tag} paced_switch_to_unvisited_head view_resolution_ms=${ms(r.quick.paced_ms)} ` +
      `median=${p[p.length >> 1].toFixed(0)} max=${p[p.length - 1].toFixed(0)} ` +
      `(each 1 s after the last showed at the view's resolution, its whole head being read; target: <= 300)`);
    console.log(`lazy browser ${tag} quick_switch_to_unvisited_head reads=${r.quick.reads.join(',')} ` +
      `command_ms=${r.quick.cmd.map((x) => x.toFixed(1)).join(',')} frames_drawn_until_shown=${r.quick.drawn.join(',')} ` +
      `(start..end ms after the command: size [the worker's request sent/headers in/body in]; the command's own time)`);
    console.log(`lazy browser ${tag} paced_switch_to_unvisited_head reads=${r.quick.paced_reads.join(',')} ` +
      `dwell_frames_drawn=${(r.quick.dwell || []).join(',')} frames_drawn_until_shown=${r.quick.paced_drawn.join(',')} command_ms=${r.quick.paced_cmd.map((x) => x.toFixed(1)).join(',')} ` +
      '(the same; a paced switch also cancels the last head\'s whole read)');
  }
  if (r.revisit) {
    console.log(`lazy browser ${tag} switch_to_visited_head in_memory_and_drawn_ms=${ms(r.revisit.ms)} ` +
      `reads=${r.revisit.reads.join(',')} widened_from_halves=${r.revisit.unpacks} ` +
      `wasm_memory_max_mb_before=${(r.revisit.heap_before / 2 ** 20).toFixed(0)} ` +
      `after=${(r.revisit.heap_after / 2 ** 20).toFixed(0)} (after each: ${r.revisit.heap_mb.join(',')}) ` +
      '(the 8 heads of the switches above, last visited first; 0 reads: still in the cache)');
  }
  console.log(`lazy browser ${tag} zoomed_in_band rows=${r.band_rows} in_memory_ms=${r.band_memory_ms.toFixed(0)} ` +
    `drawn_ms=${r.band_ms.toFixed(0)}`);
  let heap = r.heap;
  if (scroll) {
    // The grid: scroll down through the 32 layer rows with the wheel while overviews stream in.
    await page.evaluate(() => { window.attnviz.command('view grid'); });
    await page.mouse.move(800, 400);
    const cpu = [];
    const frames = [];  // each frame's CPU time and parts
    await page.evaluate(() => window.attnvizTrace('start scroll'));
    for (let i = 0; i < 60; i++) {
      await page.evaluate((k) => performance.mark(`attnviz scroll ${k}`), i);
      await page.mouse.wheel(0, i < 40 ? 240 : -480);
      await page.evaluate(() => new Promise((res) => requestAnimationFrame(() => requestAnimationFrame(res))));
      const s = await page.evaluate(() => ({ cpu: window.attnviz.frameCpuMs(), heap: window.attnviz.module.HEAPU8.length,
        parts: (() => { const d = window.attnviz.describe(); return { ...d.frame_parts, stats_ms: d.grid.stats_ms }; })() }));
      cpu.push(s.cpu);
      frames.push(s);
      heap = Math.max(heap, s.heap);
    }
    await page.evaluate(() => window.attnvizTrace('stop scroll'));
    if (traceScroll) console.log(`lazy browser ${tag} grid_scroll frame_cpu_ms_in_order=${frames.map((x) => x.cpu.toFixed(1)).join(',')}`);
    const lazy = await page.evaluate(() => window.attnviz.describe().lazy);
    cpu.sort((a, b) => a - b);
    console.log(`lazy browser ${tag} grid_scroll frames=${cpu.length} frame_cpu_ms_median=${cpu[cpu.length >> 1].toFixed(2)} ` +
      `p95=${cpu[Math.floor(cpu.length * 0.95)].toFixed(2)} max=${cpu[cpu.length - 1].toFixed(2)} ` +
      `thumbs_in_memory=${lazy.thumbs} overviews_in_memory=${lazy.overviews} (target: <= 16 ms)`);
    const fp = frames.map((f) => f.parts.fingerprint_ms).sort((a, b) => a - b);
    console.log(`lazy browser ${tag} grid_scroll fingerprint_ms median=${fp[fp.length >> 1].toFixed(3)} ` +
      `max=${fp[fp.length - 1].toFixed(3)} (App::DrawFingerprint after each frame, outside App::Frame)`);
    frames.sort((a, b) => b.cpu - a.cpu);
    for (const f of frames.slice(0, 3)) {  // the longest frames and where their time went
      const p = f.parts;
      console.log(`lazy browser ${tag} grid_scroll long_frame cpu_ms=${f.cpu.toFixed(1)} pump_ms=${p.pump_ms.toFixed(1)} ` +
        `(decode_ms=${p.decode_ms.toFixed(1)} install_ms=${p.install_ms.toFixed(1)}) ` +
        `request_ms=${p.request_ms.toFixed(1)} upload_ms=${p.upload_ms.toFixed(1)} uploads=${p.uploads} ` +
        `longest_upload_ms=${p.upload_max_ms.toFixed(1)} grid_stats_ms=${p.stats_ms.toFixed(1)}`);
    }
  }
  const lazy = await page.evaluate(() => window.attnviz.describe().lazy);
  console.log(`lazy browser ${tag} wasm_memory_max_mb=${(heap / 2 ** 20).toFixed(0)} cache_budget_mb=${lazy.budget / 2 ** 20} ` +
    `max_resident_mb=${(lazy.max_resident_bytes / 2 ** 20).toFixed(0)} bytes_read_mb=${(lazy.bytes_read / 2 ** 20).toFixed(0)} ` +
    `reads=${lazy.reads} evictions=${lazy.evictions} (target: <= 512 MB)` +
    (r.quick ? ` (after each quick and paced switch: ${r.quick.heap_mb.join(',')}; before the grid scroll: ${(r.heap / 2 ** 20).toFixed(0)})` : ''));
  // Heads packed into halves: by a command or frame that needed the room (at once), or ahead of need in
  // slices (stop 54; '-': a build without packing ahead).
  const num = (x, d = 0) => (x === undefined ? '-' : Number(x).toFixed(d));
  console.log(`lazy browser ${tag} packs=${lazy.packs} packs_ahead=${num(lazy.packs_ahead)} ` +
    `pack_slices=${num(lazy.pack_slices)} longest_pack_slice_ms=${num(lazy.longest_pack_slice_ms, 1)} ` +
    `longest_pack_alloc_ms=${num(lazy.longest_pack_alloc_ms, 1)} packs_finished_at_once=${num(lazy.packs_finished_at_once)} ` +
    `packs_dropped=${num(lazy.packs_dropped)} unpacks=${lazy.unpacks} ` +
    '(packs - packs_ahead: heads packed at once, in the command or frame that needed the room)');
  await page.close();
  return r;
}

// The grid of a file without overviews: the time from the open until every thumbnail in view shows.
// target: the thumbnails in view, when the build may not describe its placeholders (`waiting`: an
// older build served as B is given A's count).
// sort: a grid sort (e.g. 'entropy') set before the grid fills; since stop 39 the heads' statistics
// are then computed as they are pooled (stats_known at the end says how many).
async function gridWithoutOverviews(browser, appPort, url, tag, target = 0, sort = '') {
  const page = await (await browser.newContext({ viewport: { width: 640, height: 400 } })).newPage();
  await page.goto(`http://127.0.0.1:${appPort}/?view=grid`);
  await page.waitForFunction(() => window.attnviz !== undefined, null, { timeout: 60000 });
  const r = await page.evaluate(async ({ url, target, sort }) => {
    const v = window.attnviz, M = v.module;
    const frame = () => new Promise((res) => requestAnimationFrame(res));
    let heap = M.HEAPU8.length, first = 0, d;
    const t0 = performance.now();
    await v.openUrl(url);
    v.command('view grid');
    if (sort) v.command(`grid-sort ${sort}`);
    for (;;) {
      await frame();
      d = v.describe();
      heap = Math.max(heap, M.HEAPU8.length);
      if (!first && d.grid && d.grid.overviews_shown > 0) first = performance.now() - t0;
      if (d.grid && target ? d.grid.overviews_shown >= target
        : d.grid && d.grid.drawn > 1 && d.grid.waiting === 0 && d.grid.overviews_shown >= d.grid.drawn) break;
      if (performance.now() - t0 > 120000) throw new Error('the grid never filled: ' + JSON.stringify(d.lazy));
    }
    const ms = performance.now() - t0;
    return { shown: d.grid.overviews_shown, ms, first, lazy: d.lazy, heap, frames: d.frame, kept: d.frames_kept,
      known: d.grid.stats_known };
  }, { url, target, sort });
  await page.close();
  console.log(`lazy browser ${tag} grid_without_overviews${sort ? ` sort=${sort} stats_known=${r.known}` : ''} ` +
    `thumbnails=${r.shown} all_shown_ms=${r.ms.toFixed(0)} ` +
    `ms_per_thumbnail=${(r.ms / r.shown).toFixed(0)} first_ms=${r.first.toFixed(0)} ` +
    `bytes_read_mb=${(r.lazy.bytes_read / 2 ** 20).toFixed(0)} max_memory_mb=${(r.lazy.max_memory_bytes / 2 ** 20).toFixed(0)} ` +
    `wasm_memory_max_mb=${(r.heap / 2 ** 20).toFixed(0)} frames=${r.frames} frames_kept=${r.kept}`);
  return r;
}

// Opens the file on the grid and sorts it by entropy at once: until all of its heads are sorted
// (the statistics it stores: one read), with the reads that took.
async function gridSorted(browser, appPort, url) {
  const page = await (await browser.newContext({ viewport: { width: 640, height: 400 } })).newPage();
  await page.goto(`http://127.0.0.1:${appPort}/?view=grid`);
  await page.waitForFunction(() => window.attnviz !== undefined, null, { timeout: 60000 });
  const r = await page.evaluate(async (url) => {
    const v = window.attnviz;
    const frame = () => new Promise((res) => requestAnimationFrame(res));
    await v.openUrl(url);
    v.command('view grid');
    const t0 = performance.now();
    v.command('grid-sort entropy');
    let d;
    for (;;) {
      await frame();
      d = v.describe();
      if (d.grid && d.grid.stats_known === d.grid.order.length) break;
      if (performance.now() - t0 > 60000) {
        const grid = JSON.stringify({...d.grid, order: d.grid.order.length});
        throw new Error('the grid never sorted: ' + JSON.stringify(d.lazy) + grid);
      }
    }
    return { ms: performance.now() - t0, heads: d.grid.order.length, lazy: d.lazy };
  }, url);
  await page.close();
  console.log(`lazy browser grid_sorted heads=${r.heads} sorted_ms=${r.ms.toFixed(0)} stats_stored=${r.lazy.stats_stored} ` +
    `heads_read=${r.lazy.heads} reads=${r.lazy.reads} bytes_read_kib=${(r.lazy.bytes_read / 1024).toFixed(0)}`);
  return r;
}

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attnviz-lazy-bench-'));
  const tokens = Array.from({ length: N }, (_, i) => `w${i}`);
  const head = (s, l, h) => {
    if (!VISIT.some(([a, b]) => a === l && b === h)) return null;
    const w = new Float32Array(N * N);
    for (let r = 0; r < N; r++) w[r * N + (r * (h + 2)) % N] = 1;
    return w;
  };
  // Every head's stored statistics (test values: entropies in a scrambled order), as the writers store them.
  const stats = (s, l, h) => [((l * H + h) * 389 % (L * H)) / 100, 0.5, 0.5, 0, 0.5, 1, 0.5, N];
  for (const [name, screens, thumbs] of [['llm', true, true], ['llm-noscreen', false, true], ['llm-nothumbs', true, false]]) {
    if (name === 'llm-noscreen' && (firstOnly || gridOnly || scrollOnly)) continue;
    if (name === 'llm-nothumbs' && (firstOnly || gridOnly)) continue;
    const file = path.join(dir, `${name}.safetensors`);
    const plan = write(file, [{ name: 'llm', kind: 'self', tokens, layers: L, heads: H }], head, {}, { screens, thumbs, stats });
    console.log(`lazy file screens=${screens ? 'yes' : 'no'} thumbs=${thumbs ? 'yes' : 'no'} layers=${L} heads=${H} ` +
      `tokens=${N} dtype=F16 size_gib=${(plan.size / 2 ** 30).toFixed(1)} ` +
      `on_disk_mib=${(fs.statSync(file).blocks * 512 / 2 ** 20).toFixed(0)}`);
  }
  writeNpy(path.join(dir, 'llm.npy'), L, H, N, () => null);  // all a hole: the grid's reads are what is timed
  const app = await serve(APP_DIR, 0);
  const appB = process.env.ATTNVIZ_WEB_APP_B ? await serve(process.env.ATTNVIZ_WEB_APP_B, 0) : null;
  const data = await serve(dir, 0, { cors: true });
  data.on('request', (req, res) => {  // bytes sent, including those of reads cancelled on the way
    const sock = res.socket, b0 = sock.bytesWritten;
    res.on('close', () => { served += sock.bytesWritten - b0; });
  });
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--use-angle=swiftshader', '--enable-unsafe-swiftshader', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
  });
  try {
    const base = `http://127.0.0.1:${data.address().port}`;
    const port = app.address().port;
    const mean = (a) => a.reduce((x, y) => x + y, 0) / a.length;
    if (scrollOnly) {
      await thumbsVsOverviews(browser, port, base);
      return;
    }
    if (!gridOnly) {
      const yes = await run(browser, port, `${base}/llm.safetensors`, 'screens=yes', { scroll: true, ab: true });
      if (firstOnly) return;
      const no = await run(browser, port, `${base}/llm-noscreen.safetensors`, 'screens=no');
      const main = await run(browser, port, `${base}/llm.safetensors`, 'screens=yes reads=main_thread', { mainThreadReads: true });
      await thumbsVsOverviews(browser, port, base);
      const ratio = (a, b, k) => (mean(a[k]) / mean(b[k])).toFixed(2);
      console.log(`lazy browser screens_vs_none view_resolution=${ratio(yes, no, 'viewres')} first_frame=${ratio(yes, no, 'first')}`);
      console.log(`lazy browser first_full_resolution_rows_vs_whole_head_drawn screens=yes ` +
        `${(mean(yes.rows) / mean(yes.drawn)).toFixed(2)} screens=no ${(mean(no.rows) / mean(no.drawn)).toFixed(2)}`);
      console.log(`lazy browser worker_vs_main_thread_reads view_resolution=${ratio(yes, main, 'viewres')} ` +
        `full_resolution_in_memory=${ratio(yes, main, 'memory')}`);
    }
    for (let round = 0; round < 3; round++) await gridSorted(browser, port, `${base}/llm.safetensors`);
    // Unsorted, and sorted by entropy (statistics computed as heads are pooled, since stop 39); with
    // ATTNVIZ_WEB_APP_B, each against build B in turn, ATTNVIZ_GRID_ROUNDS rounds (default 3).
    const rounds = appB ? Math.max(1, Number(process.env.ATTNVIZ_GRID_ROUNDS || 3)) : 1;
    const median = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
    for (const sort of ['', 'entropy']) {
      const grid = { a: [], b: [] };  // ms per thumbnail
      for (let round = 0; round < rounds; round++) {
        const a = await gridWithoutOverviews(browser, port, `${base}/llm.npy`, appB ? 'build=A' : 'npy', 0, sort);
        grid.a.push(a.ms / a.shown);
        if (!appB) continue;
        const b = await gridWithoutOverviews(browser, appB.address().port, `${base}/llm.npy`, 'build=B', a.shown, sort);
        grid.b.push(b.ms / b.shown);
      }
      if (appB) console.log(`lazy browser grid_without_overviews${sort ? ` sort=${sort}` : ''} B_over_A ` +
        `ms_per_thumbnail mean=${(mean(grid.b) / mean(grid.a)).toFixed(2)} median=${(median(grid.b) / median(grid.a)).toFixed(2)} ` +
        `(> 1: A fills the grid faster)`);
    }
  } finally {
    await browser.close();
    app.close();
    if (appB) appB.close();
    data.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => { console.error(e); process.exit(1); });
