// Shared helpers for the browser tests: serve the built app, drive Debian's Chromium
// (SwiftShader WebGL2) with playwright-core, read pixels, invert colormaps.
import fs from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { PNG } from 'pngjs';
import { serve } from '../../scripts/serve.mjs';

export const APP_DIR = process.env.ATTNVIZ_WEB_APP || 'build/web/app';
export const ARTIFACTS = process.env.ATTNVIZ_ARTIFACTS || 'build/test-artifacts';

let passed = 0, failed = 0;
export function check(name, ok, detail = '') {
  if (ok) passed++; else failed++;
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}${detail ? '  (' + detail + ')' : ''}`);
}
export function summary() {
  console.log(`${passed} passed, ${failed} failed`);
  return failed === 0 && passed > 0 ? 0 : 1;
}

// Starts the server and the browser; returns { page, errors, close }.
// init: a script run in the page before its own (context.addInitScript), e.g. to watch WebGL calls.
export async function openApp(query = '', { width = 1280, height = 800, dpr = 1, extraArgs = [], waitReady = true, init = null, touch = false } = {}) {
  if (!fs.existsSync(path.join(APP_DIR, 'attnviz.wasm'))) throw new Error(`${APP_DIR}/attnviz.wasm missing: build the web app first`);
  const server = await serve(APP_DIR, 0);
  const port = server.address().port;
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--use-angle=swiftshader', '--enable-unsafe-swiftshader', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic', '--ignore-gpu-blocklist', ...extraArgs],
  });
  // The viewer follows prefers-color-scheme; the tests (and the screenshots in docs/) use dark.
  const context = await browser.newContext({ viewport: { width, height }, deviceScaleFactor: dpr, colorScheme: 'dark', hasTouch: touch, isMobile: touch });
  if (init) await context.addInitScript(init);
  const page = await context.newPage();
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(`http://127.0.0.1:${port}/${query}`);
  if (waitReady) await page.waitForFunction(() => window.attnviz !== undefined, null, { timeout: 60000 });
  return {
    page, errors, port,
    close: async () => { await browser.close(); server.close(); },
  };
}

// Waits n animation frames in the page.
export async function frames(page, n = 3) {
  await page.evaluate((k) => new Promise((res) => {
    const tick = () => (k-- <= 0 ? res() : requestAnimationFrame(tick));
    tick();
  }), n);
}

export async function screenshot(page, name) {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const file = path.join(ARTIFACTS, name);
  const buf = await page.screenshot({ path: file });
  return { file, png: PNG.sync.read(buf) };
}

export function pixel(png, x, y) {
  const i = (Math.round(y) * png.width + Math.round(x)) * 4;
  return [png.data[i], png.data[i + 1], png.data[i + 2]];
}

// Nearest LUT entry (flat [r,g,b,...] of 256) -> t in [0,1], plus the colour distance.
export function invertLut(lut, rgb) {
  let best = 0, bestD = Infinity;
  for (let i = 0; i < lut.length / 3; i++) {
    const d = (lut[3 * i] - rgb[0]) ** 2 + (lut[3 * i + 1] - rgb[1]) ** 2 + (lut[3 * i + 2] - rgb[2]) ** 2;
    if (d < bestD) { bestD = d; best = i; }
  }
  return { t: best / (lut.length / 3 - 1), dist: Math.sqrt(bestD) };
}

// Centre of cell (r, c) of a described heatmap, in CSS pixels.
export function cellCentre(h, r, c) {
  const [x0, y0, x1, y1] = h.rect, [c0, r0, c1, r1] = h.view;
  return [x0 + (c + 0.5 - c0) * (x1 - x0) / (c1 - c0), y0 + (r + 0.5 - r0) * (y1 - y0) / (r1 - r0)];
}

// Expected colormap coordinate of a weight under the described scale.
export function expectedT(d, w, rowMax) {
  let t;
  if (d.scale === 'row') t = rowMax > 0 ? w / rowMax : 0;
  else if (d.scale === 'log') t = (Math.log(Math.max(w, 1e-12)) - Math.log(d.vmin)) / (Math.log(d.vmax) - Math.log(d.vmin));
  else t = (w - d.vmin) / (d.vmax - d.vmin);
  return Math.min(1, Math.max(0, t));
}

// Checks every cell centre of heatmap h inverts through the LUT to its weight. Returns the largest error.
export function checkHeatmapPixels(name, d, h, png, dpr = 1, tol = 0.02) {
  // The range the heatmap was drawn with (the auto range is resolved per map); older describes had only d's.
  const range = { scale: d.scale, vmin: h.vmin ?? d.vmin, vmax: h.vmax ?? d.vmax };
  let worst = 0, worstCell = '';
  for (let r = 0; r < h.rows_shown; r++) {
    const row = h.weights.slice(r * h.cols, (r + 1) * h.cols);
    const rowMax = Math.max(...row);
    for (let c = 0; c < h.cols; c++) {
      const [x, y] = cellCentre(h, r, c);
      const rgb = pixel(png, x * dpr, y * dpr);
      const { t, dist } = invertLut(d.lut, rgb);
      const err = Math.abs(t - expectedT(range, row[c], rowMax)) + (dist > 12 ? 1 : 0);  // off the colormap = wrong
      if (err > worst) { worst = err; worstCell = `cell ${r},${c} w=${row[c].toFixed(4)} rgb=${rgb} t=${t.toFixed(3)}`; }
    }
  }
  check(`${name}: every cell inverts through the colormap to its weight`, worst <= tol,
    `largest error ${worst.toFixed(4)}${worstCell ? ' at ' + worstCell : ''}, tolerance ${tol}`);
  return worst;
}
