// Under a strict Content-Security-Policy (no inline script or style, no eval; WebAssembly allowed
// by 'wasm-unsafe-eval') the main page and the lesson page work with no violation. Without
// 'wasm-unsafe-eval', the box says why instead of "Loading..." forever.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { APP_DIR, check, summary } from './lib.mjs';
import { serve } from '../../scripts/serve.mjs';
import { write, testHead } from '../big/safetensors.mjs';

const STRICT = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'";
const NO_WASM = "default-src 'self'; script-src 'self'; style-src 'self'";

async function openPage(browser, csp, page) {
  const server = await serve(APP_DIR, 0, { headers: { 'Content-Security-Policy': csp } });
  const p = await (await browser.newContext({ viewport: { width: 1000, height: 700 }, colorScheme: 'dark' })).newPage();
  const messages = [];
  p.on('console', (m) => messages.push(`${m.type()}: ${m.text()}`));
  p.on('pageerror', (e) => messages.push(`pageerror: ${e}`));
  await p.goto(`http://127.0.0.1:${server.address().port}/${page}`);
  return { p, messages, server };
}

// A lazily read safetensors file from a data host the policy names in connect-src: the Range
// requests run in the worker (attnviz-lazy.js from 'self'), and a head's weights arrive. With workers
// refused (worker-src 'none'), the page makes the requests itself and the head still arrives.
async function lazyUnderStrictCsp(browser, workers) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attnviz-csp-'));
  const n = 24, tokens = Array.from({ length: n }, (_, i) => `t${i}`);
  write(path.join(dir, 'small.safetensors'), [{ name: 'attention', kind: 'self', tokens, layers: 2, heads: 3 }],
    (s, l, h) => testHead(n, n, l, h));
  const data = await serve(dir, 0, { cors: true });
  const origin = `http://127.0.0.1:${data.address().port}`;
  const { p, messages, server } = await openPage(browser, `${STRICT}; connect-src 'self' ${origin}${workers ? '' : "; worker-src 'none'"}`, '?view=grid');
  try {
    await p.waitForFunction(() => window.attnviz !== undefined, null, { timeout: 60000 });
    await p.evaluate((u) => window.attnviz.openUrl(u), `${origin}/small.safetensors`);
    await p.waitForFunction(() => { const d = window.attnviz.describe(); return d.grid && d.grid.overviews_shown === 6; },
      null, { timeout: 30000 });
    await p.evaluate(() => { window.attnviz.command('map 4'); window.attnviz.command('view heatmap'); });
    await p.waitForFunction((rows) => {
      const h = window.attnviz.describe().heatmaps[0];
      return h && h.held && h.held[1] === rows && !h.underlay;
    }, n, { timeout: 30000 });
    const st = await p.evaluate(() => ({ w: window.AttnVizLazy.stats.worker_reads, p: window.AttnVizLazy.stats.page_reads }));
    const violations = messages.filter((m) => /Content Security Policy|Refused to/.test(m));
    if (workers) {
      check('strict CSP: a lazy file\'s overviews and a head are read by the Range worker', st.w > 0 && st.p === 0,
        `${st.w} worker reads, ${st.p} page reads`);
      check('strict CSP: no violations while reading a lazy file', violations.length === 0,
        violations.slice(0, 2).join(' | '));
    } else {
      check("worker-src 'none': the page reads the lazy file itself, and the head arrives", st.p > 0,
        `${st.w} worker reads, ${st.p} page reads; ${violations.length} refusals reported`);
    }
  } finally {
    server.close();
    data.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function main() {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--use-angle=swiftshader', '--enable-unsafe-swiftshader', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic', '--ignore-gpu-blocklist'],
  });
  try {
    let { p, messages, server } = await openPage(browser, STRICT, '?example=seed002&view=heatmap');
    await p.waitForFunction(() => window.attnviz !== undefined, null, { timeout: 60000 });
    const d = await p.evaluate(() => window.attnviz.describe());
    check('strict CSP: the page runs and draws', d.example === 'seed002' && d.heatmaps.length === 1);
    // Labels in other scripts are rasterised on a 2D canvas: no inline style or script either.
    const data = JSON.parse(fs.readFileSync('tests/data/multiscript.json', 'utf8'));
    await p.evaluate((x) => window.attnviz.load(x), data);
    await p.evaluate(() => window.attnviz.command('view heatmap'));
    await p.waitForFunction(() => window.attnviz.describe().label_cache.rasterised >= 20, null, { timeout: 60000 });
    check('strict CSP: labels in nine scripts are rasterised on a canvas', true);
    // The exports load an ES module and gifenc, and use no eval or workers.
    const sizes = await p.evaluate(async () => [(await window.attnviz.exportPng({ scale: 2 })).size,
      (await window.attnviz.exportGif({ stepMs: 100 })).size]);
    check('strict CSP: PNG and GIF exports work', sizes[0] > 1000 && sizes[1] > 1000, String(sizes));
    const violations = messages.filter((m) => /Content Security Policy|Refused to/.test(m));
    check('strict CSP: no violations', violations.length === 0, violations.slice(0, 2).join(' | '));
    server.close();

    await lazyUnderStrictCsp(browser, true);
    await lazyUnderStrictCsp(browser, false);

    ({ p, messages, server } = await openPage(browser, STRICT, 'lesson.html'));
    await p.waitForFunction(() => window.lessonViewers !== undefined, null, { timeout: 60000 });
    const n = await p.evaluate(() => window.lessonViewers.then((vs) => vs.filter((v) => v.describe().heatmaps.length >= 0).length));
    check('strict CSP: the lesson page mounts its three viewers', n === 3, String(n));
    const v2 = messages.filter((m) => /Content Security Policy|Refused to/.test(m));
    check('strict CSP: no violations on the lesson page', v2.length === 0, v2.slice(0, 2).join(' | '));
    server.close();

    ({ p, messages, server } = await openPage(browser, NO_WASM, ''));
    await p.waitForSelector('.attnviz-error', { timeout: 30000 });
    const text = await p.textContent('.attnviz-error');
    check("without 'wasm-unsafe-eval' the box says why", /wasm-unsafe-eval/.test(text), text);
    check('and the spinner is gone', (await p.$('.attnviz-loading')) === null);
    server.close();
  } finally {
    await browser.close();
  }
}

main().then(() => process.exit(summary()), (e) => { console.error(e); summary(); process.exit(1); });
