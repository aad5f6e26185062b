// The embed API on a page of its own: two viewers driven independently; views restricted;
// load() from arrays (pixel-checked); events; keyboard etiquette (Tab, Backspace in the page's
// input, keys only to the focused viewer); the wheel scrolls the page over an unfocused viewer;
// an idle viewer draws no frames; destroy() and mount again, many times.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { PNG } from 'pngjs';
import { APP_DIR, ARTIFACTS, check, summary, checkHeatmapPixels, frames } from './lib.mjs';
import { serve } from '../../scripts/serve.mjs';

const PAGES = path.join(path.dirname(new URL(import.meta.url).pathname), 'pages');
const W = [[0.6, 0.3, 0.1], [0.05, 0.15, 0.8]];

// A folder with the built app and the test page (symlinks), served on 127.0.0.1.
function site() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attnviz-embed-'));
  for (const f of fs.readdirSync(APP_DIR)) fs.symlinkSync(path.resolve(APP_DIR, f), path.join(dir, f));
  for (const f of fs.readdirSync(PAGES)) fs.symlinkSync(path.join(PAGES, f), path.join(dir, f));
  return dir;
}

// Resident memory (bytes) of this test's renderer processes, read from /proc: the descendants of the
// browser launched with MARKER (other tests may run browsers at the same time).
const MARKER = `--attnviz-test=${process.pid}`;
function rendererRss() {
  const procs = new Map();
  for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
      procs.set(pid, { cmd: fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8'), ppid: /PPid:\s+(\d+)/.exec(status)[1],
        rss: Number((/VmRSS:\s+(\d+) kB/.exec(status) || [0, 0])[1]) * 1024 });
    } catch { /* the process ended */ }
  }
  const ours = (pid) => { for (let p = pid, i = 0; p && p !== '0' && i < 16; p = procs.get(p)?.ppid, ++i) if (procs.get(p)?.cmd.includes(MARKER)) return true; return false; };
  let total = 0;
  for (const [pid, p] of procs) if (p.cmd.includes('--type=renderer') && ours(pid)) total += p.rss;
  return total;
}

const frameOf = (page, i) => page.evaluate((k) => window.viewers[k].describe().frame, i);

async function main() {
  const dir = site();
  const server = await serve(dir, 0);
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--use-angle=swiftshader', '--enable-unsafe-swiftshader', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic', '--ignore-gpu-blocklist', MARKER],
  });
  const page = await (await browser.newContext({ viewport: { width: 900, height: 700 }, colorScheme: 'dark' })).newPage();
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error' || /WebGL contexts/.test(m.text())) errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  let wasmFetches = 0;
  page.on('request', (r) => { if (r.url().endsWith('attnviz.wasm')) wasmFetches++; });
  try {
    await page.goto(`http://127.0.0.1:${server.address().port}/embed-api.html`);
    await page.waitForFunction(() => window.viewers !== undefined, null, { timeout: 60000 });
    let d1 = await page.evaluate(() => window.viewers[0].describe());
    const d2 = await page.evaluate(() => window.viewers[1].describe());
    check('two viewers, each with its own example', d1.example === 'seed002' && d2.example === 'translation');
    check('views: the first viewer offers only heatmap and steps', JSON.stringify(d1.views) === '["heatmap","steps"]',
      JSON.stringify(d1.views));
    check('a view it does not offer is refused', /does not offer/.test(await page.evaluate(() => window.viewers[0].command('view grid'))));
    check('the second viewer offers every view', d2.views.length === 7);
    check('two viewers share one download and compile of attnviz.wasm', wasmFetches === 1, `${wasmFetches} fetches`);

    // load() from arrays (a Float32Array row too), then the pixels match the weights.
    await page.evaluate((w) => window.viewers[0].load({ source_tokens: ['the', 'cat', 'sat'],
      target_tokens: ['le', 'chat'], weights: [w[0], Float32Array.from(w[1])] }), W);
    check("load() fires 'loaded'", (await page.evaluate(() => window.events.loaded.length)) === 1);
    await page.evaluate(() => { window.viewers[0].command('numbers off'); window.viewers[0].seek(2); });
    await frames(page, 6);
    d1 = await page.evaluate(() => window.viewers[0].describe());
    const h = d1.heatmaps.find((x) => x.id === 'main');
    check('load() from arrays opens the data, named "attention" (not "data")',
      d1.example === 'file:attention.json' && h && h.rows === 2 && h.cols === 3, d1.example);
    const box = await page.evaluate(() => { const r = window.viewers[0].canvas.getBoundingClientRect(); return [r.x, r.y]; });
    const shot = PNG.sync.read(await page.screenshot({ path: path.join(ARTIFACTS, 'embed-api.png') }));
    const shifted = { ...h, rect: [h.rect[0] + box[0], h.rect[1] + box[1], h.rect[2] + box[0], h.rect[3] + box[1]] };
    checkHeatmapPixels('load() data on the page', d1, shifted, shot);
    check("seek() fires a 'step' event", (await page.evaluate(() => window.events.step.map((e) => e.step))).includes(2));
    const err = await page.evaluate(() => window.viewers[0].load({ tokens: ['a'], weights: [[0.5, 0.5]] })
      .then(() => '', (e) => e.message));
    check("a bad load() rejects with the reason and fires 'error'", /weights/.test(err) &&
      (await page.evaluate(() => window.events.error.length)) === 1, err);
    const named = await page.evaluate(async () => {
      await window.viewers[0].load({ tokens: ['a', 'b'], weights: [[1, 0], [0.5, 0.5]], meta: { name: 'lesson 3' } });
      const a = window.viewers[0].describe().example;
      await window.viewers[0].load({ tokens: ['a', 'b'], weights: [[1, 0], [0.5, 0.5]], meta: { name: '../x' } });
      return [a, window.viewers[0].describe().example];
    });
    check("load(data) takes its name from meta.name when it is a plain name", named[0] === 'file:lesson 3.json' &&
      named[1] === 'file:attention.json', JSON.stringify(named));

    // Keyboard: the page's input keeps its keys; Tab moves through input, viewer, link.
    await page.focus('#before');
    await page.keyboard.press('End');
    await page.keyboard.press('Backspace');
    check('Backspace edits the page input', (await page.inputValue('#before')) === 'ab');
    await page.keyboard.press('Tab');
    check('Tab moves into the first viewer', await page.evaluate(() => document.activeElement === window.viewers[0].canvas));
    const stepBefore = await page.evaluate(() => window.viewers[1].describe().timeline.step);
    await page.keyboard.down('Home');
    await frames(page, 4);
    await page.keyboard.up('Home');
    await frames(page, 2);
    check('keys go only to the focused viewer', (await page.evaluate(() => window.viewers[0].describe().timeline.step)) === 0 &&
      (await page.evaluate(() => window.viewers[1].describe().timeline.step)) === stepBefore);
    await page.keyboard.press('Tab');
    check('Tab moves on out of the viewer (no keyboard trap)', await page.evaluate(() => document.activeElement.id === 'after'));

    // The wheel over an unfocused viewer scrolls the page.
    await page.focus('#before');
    const v2 = await page.evaluate(() => { const r = window.viewers[1].canvas.getBoundingClientRect(); return [r.x + 100, r.y + 100]; });
    await page.mouse.move(v2[0], v2[1]);
    const y0 = await page.evaluate(() => window.scrollY);
    await page.mouse.wheel(0, 300);
    await page.waitForTimeout(300);
    check('the wheel over an unfocused viewer scrolls the page', (await page.evaluate(() => window.scrollY)) > y0);

    // 640x360, the size the docs suggest: the steps view shows its table; with the viewer focused,
    // the wheel scrolls the panel under the pointer (not the page, not a zoom).
    await page.evaluate(() => { window.viewers[0].command('example seed002'); window.viewers[0].command('view steps'); });
    await page.evaluate(() => { window.viewers[0].canvas.scrollIntoView(); window.viewers[0].canvas.focus(); });
    await frames(page, 6);
    let st = await page.evaluate(() => window.viewers[0].describe().steps);
    check('640x360: the steps view shows its score table', st.table_visible === true, JSON.stringify({ t: st.table_visible }));
    const p1 = await page.evaluate(() => { const r = window.viewers[0].canvas.getBoundingClientRect(); return [r.x + 320, r.y + 260]; });
    await page.mouse.move(p1[0], p1[1]);
    const pageY = await page.evaluate(() => window.scrollY);
    await page.mouse.wheel(0, 200);
    await frames(page, 6);
    st = await page.evaluate(() => window.viewers[0].describe().steps);
    check('focused viewer: the wheel scrolls the panel under it', st.scroll_y > 0, `scroll_y ${st.scroll_y}`);
    check('...and not the page', (await page.evaluate(() => window.scrollY)) === pageY);

    // Page Down / Page Up and the arrows browse the heads of the focused viewer, not the page.
    await page.evaluate(() => { const v = window.viewers[0]; v.command('example multihead'); v.command('view heatmap'); });
    await frames(page, 4);
    const mapOf0 = () => page.evaluate(() => window.viewers[0].describe().map);
    const scrollBefore = await page.evaluate(() => window.scrollY);
    await page.keyboard.press('PageDown');
    await frames(page, 4);
    const afterPageDown = await mapOf0();
    await page.keyboard.press('ArrowDown');
    await frames(page, 4);
    const afterDown = await mapOf0();
    await page.keyboard.press('PageUp');
    await frames(page, 4);
    const afterPageUp = await mapOf0();
    check('Page Down, Down, Page Up: layer 1 head 0, head 1, layer 0 head 1 (maps 4, 5, 1)',
      afterPageDown === 4 && afterDown === 5 && afterPageUp === 1, `${afterPageDown} ${afterDown} ${afterPageUp}`);
    check('...and the page did not scroll', (await page.evaluate(() => window.scrollY)) === scrollBefore);
    await page.evaluate(() => window.viewers[0].command('example seed002'));

    // One wheel notch up over the focused viewer's heatmap zooms in by one step (not by 100).
    await page.evaluate(() => window.viewers[0].command('view heatmap'));
    await frames(page, 4);
    const hm0 = (await page.evaluate(() => window.viewers[0].describe())).heatmaps.find((x) => x.id === 'main');
    const cvs = await page.evaluate(() => { const r = window.viewers[0].canvas.getBoundingClientRect(); return [r.x, r.y]; });
    await page.mouse.move(cvs[0] + (hm0.rect[0] + hm0.rect[2]) / 2, cvs[1] + (hm0.rect[1] + hm0.rect[3]) / 2);
    await page.mouse.wheel(0, -100);
    await frames(page, 4);
    const hm1 = (await page.evaluate(() => window.viewers[0].describe())).heatmaps.find((x) => x.id === 'main');
    const span = (h) => h.view[2] - h.view[0];
    check('a wheel notch up zooms in by one step', span(hm1) < span(hm0) && span(hm1) > span(hm0) / 1.5,
      `columns in view ${span(hm0).toFixed(2)} -> ${span(hm1).toFixed(2)}`);

    // An idle viewer draws nothing.
    // After the mouse leaves, a viewer draws a few more frames (6 after the last input): wait until
    // both counts stood still for 0.5 s (at most 6 s; a loaded CI machine has needed more than 0.8 s for
    // those frames), then count for 2 s. A viewer that kept drawing fails either way.
    await page.mouse.move(5, 5);
    for (let i = 0, last = ''; i < 12; i++) {
      await page.waitForTimeout(500);
      const now = `${await frameOf(page, 0)},${await frameOf(page, 1)}`;
      if (now === last) break;
      last = now;
    }
    const f0 = [await frameOf(page, 0), await frameOf(page, 1)];
    await page.waitForTimeout(2000);
    const f1 = [await frameOf(page, 0), await frameOf(page, 1)];
    check('idle viewers draw no frames in 2 s', f1[0] === f0[0] && f1[1] === f0[1], `${f0} -> ${f1}`);
    await page.evaluate(() => window.viewers[1].play());
    await page.waitForTimeout(500);
    check('playing wakes it', (await frameOf(page, 1)) > f1[1]);

    // destroy() and mount again, 50 times: contexts, listeners and WASM memory are freed (Chromium keeps
    // ~16 WebGL contexts). Each instance owns at least 16 MB of WASM memory, so a leak shows as
    // hundreds of MB of renderer memory; weak references to every instance's memory must all clear.
    await page.evaluate(() => { window.viewers[1].destroy(); window.memRefs = []; });
    const cycle = (n) => page.evaluate(async (k) => {
      let ok = 0;
      for (let i = 0; i < k; ++i) {
        const v = await AttnViz.mount('#v2', { example: 'seed004', embed: true });
        if (v.describe().example === 'seed004') ok++;
        window.memRefs.push(new WeakRef(v.module.HEAPU8.buffer));
        v.destroy();
      }
      return ok;
    }, n);
    const cdp = await page.context().newCDPSession(page);
    const gc = async () => { for (let i = 0; i < 3; ++i) await cdp.send('HeapProfiler.collectGarbage'); };
    let mounted = await cycle(10);
    await gc();
    const rss0 = rendererRss();
    mounted += await cycle(40);
    await gc();
    await page.waitForTimeout(200);
    await gc();
    const rss1 = rendererRss();
    const live = await page.evaluate(() => window.memRefs.filter((r) => r.deref() !== undefined).length);
    const canvases = await page.evaluate(() => document.querySelectorAll('#v2 canvas').length);
    check('50 mount/destroy cycles', mounted === 50 && canvases === 0, `${mounted} mounted, ${canvases} canvases left`);
    check('every destroyed viewer\'s WASM memory is collected', live === 0, `${live} of 50 still reachable`);
    const grew = (rss1 - rss0) / 1048576;
    check('renderer memory flat over the last 40 cycles (< 48 MB growth)', rss0 > 0 && grew < 48,
      `renderer RSS ${(rss0 / 1048576).toFixed(0)} -> ${(rss1 / 1048576).toFixed(0)} MB`);
    const last = await page.evaluate(async () => {
      window.viewers[1] = await AttnViz.mount('#v2', { example: 'seed004', embed: true });
      return window.viewers[1].describe().example;
    });
    check('a viewer mounted after them works', last === 'seed004');
    // maxMemory: a budget smaller than the data refuses it with a message.
    const small = await page.evaluate(async () => {
      const el = document.createElement('div');
      el.className = 'viewer';
      document.body.appendChild(el);
      const v = await AttnViz.mount(el, { embed: true, maxMemory: '1K' });
      const w = Array.from({ length: 64 }, () => Array(64).fill(1 / 64));
      const msg = await v.load({ tokens: Array.from({ length: 64 }, (_, i) => 't' + i), weights: w })
        .then(() => 'opened', (e) => e.message);
      v.destroy();
      return msg;
    });
    check('maxMemory: data over the budget is refused with a message', /budget/.test(small), small);
    check('no console errors or lost WebGL contexts', errors.length === 0, errors.slice(0, 3).join(' | '));
  } finally {
    await browser.close();
    server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().then(() => process.exit(summary()), (e) => { console.error(e); summary(); process.exit(1); });
