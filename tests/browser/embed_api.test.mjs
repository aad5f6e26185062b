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

const frameOf = (page, i) => page.evaluate((k) => window.viewers[k].describe().frame, i);

async function main() {
  const server = await serve(site(), 0);
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--use-angle=swiftshader', '--enable-unsafe-swiftshader', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic', '--ignore-gpu-blocklist'],
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
    check('load() from arrays opens the data', d1.example === 'file:data.json' && h && h.rows === 2 && h.cols === 3);
    const box = await page.evaluate(() => { const r = window.viewers[0].canvas.getBoundingClientRect(); return [r.x, r.y]; });
    const shot = PNG.sync.read(await page.screenshot({ path: path.join(ARTIFACTS, 'embed-api.png') }));
    const shifted = { ...h, rect: [h.rect[0] + box[0], h.rect[1] + box[1], h.rect[2] + box[0], h.rect[3] + box[1]] };
    checkHeatmapPixels('load() data on the page', d1, shifted, shot);
    check("seek() fires a 'step' event", (await page.evaluate(() => window.events.step.map((e) => e.step))).includes(2));
    const err = await page.evaluate(() => window.viewers[0].load({ tokens: ['a'], weights: [[0.5, 0.5]] })
      .then(() => '', (e) => e.message));
    check("a bad load() rejects with the reason and fires 'error'", /weights/.test(err) &&
      (await page.evaluate(() => window.events.error.length)) === 1, err);

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

    // An idle viewer draws nothing.
    await page.mouse.move(5, 5);
    await page.waitForTimeout(800);
    const f0 = [await frameOf(page, 0), await frameOf(page, 1)];
    await page.waitForTimeout(2000);
    const f1 = [await frameOf(page, 0), await frameOf(page, 1)];
    check('idle viewers draw no frames in 2 s', f1[0] === f0[0] && f1[1] === f0[1], `${f0} -> ${f1}`);
    await page.evaluate(() => window.viewers[1].play());
    await page.waitForTimeout(500);
    check('playing wakes it', (await frameOf(page, 1)) > f1[1]);

    // destroy() and mount again, 20 times: contexts and listeners are freed (Chromium keeps ~16 WebGL contexts).
    const cycles = await page.evaluate(async () => {
      window.viewers[1].destroy();
      let n = 0;
      for (let i = 0; i < 20; ++i) {
        const v = await AttnViz.mount('#v2', { example: 'seed004', embed: true });
        if (v.describe().example === 'seed004') n++;
        v.destroy();
      }
      return { n, canvases: document.querySelectorAll('#v2 canvas').length };
    });
    check('20 mount/destroy cycles', cycles.n === 20 && cycles.canvases === 0, JSON.stringify(cycles));
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
  }
}

main().then(() => process.exit(summary()), (e) => { console.error(e); summary(); process.exit(1); });
