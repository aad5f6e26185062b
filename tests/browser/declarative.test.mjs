// Declarative embeds: <div data-attnviz-src=...> and <div data-attnviz-example=...> are mounted by
// attnviz-embed.js with no script on the page; their options come from data attributes.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { PNG } from 'pngjs';
import { APP_DIR, check, summary, checkHeatmapPixels, frames } from './lib.mjs';
import { serve } from '../../scripts/serve.mjs';

const PAGES = path.join(path.dirname(new URL(import.meta.url).pathname), 'pages');
const FIG = { source_tokens: ['the', 'cat', 'sat'], target_tokens: ['le', 'chat', 'assis'],
  weights: [[0.8, 0.1, 0.1], [0.1, 0.7, 0.2], [0.05, 0.15, 0.8]] };

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attnviz-decl-'));
  for (const f of fs.readdirSync(APP_DIR)) fs.symlinkSync(path.resolve(APP_DIR, f), path.join(dir, f));
  for (const f of fs.readdirSync(PAGES)) fs.symlinkSync(path.join(PAGES, f), path.join(dir, f));
  fs.writeFileSync(path.join(dir, 'fig.json'), JSON.stringify(FIG));
  const server = await serve(dir, 0);
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--use-angle=swiftshader', '--enable-unsafe-swiftshader', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic', '--ignore-gpu-blocklist'],
  });
  try {
    const page = await (await browser.newContext({ viewport: { width: 900, height: 900 }, colorScheme: 'dark' })).newPage();
    const errors = [];
    page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
    await page.goto(`http://127.0.0.1:${server.address().port}/declarative.html`);
    await page.waitForFunction(() => document.getElementById('d2').attnvizViewer !== undefined, null, { timeout: 60000 });
    await page.evaluate(async () => {
      window.__d1 = await document.getElementById('d1').attnvizViewer;
      window.__d2 = await document.getElementById('d2').attnvizViewer;
      window.__d3 = await document.getElementById('d3').attnvizViewer;
    });
    await page.waitForFunction(() => window.__d1.describe().example === 'file:fig.json', null, { timeout: 30000 });
    await frames(page, 6);
    const d = await page.evaluate(() => window.__d1.describe());
    const h = d.heatmaps.find((x) => x.id === 'main');
    check('data-attnviz-src opens the file in the heatmap view', d.view === 'heatmap' && h && h.rows === 3);
    check('data-commands ran (numbers off; step 2)', d.timeline.step === 2 && !d.timeline.playing, `step ${d.timeline.step}`);
    const box = await page.evaluate(() => { const r = window.__d1.canvas.getBoundingClientRect(); return [r.x, r.y]; });
    const png = PNG.sync.read(await page.screenshot());
    checkHeatmapPixels('declarative figure', d, { ...h, rect: [h.rect[0] + box[0], h.rect[1] + box[1], h.rect[2] + box[0], h.rect[3] + box[1]] }, png);
    const d2 = await page.evaluate(() => window.__d2.describe());
    check('data-attnviz-example + data-views="steps": one view, no others', d2.example === 'seed002' &&
      d2.view === 'steps' && JSON.stringify(d2.views) === '["steps"]', JSON.stringify([d2.view, d2.views]));
    check('data-autoplay plays', d2.timeline.playing === true || d2.timeline.step === d2.timeline.count);
    // controls=false: the heatmap fills the box, with no toolbar above it.
    const d3 = await page.evaluate(() => window.__d3.describe());
    const h3 = d3.heatmaps.find((x) => x.id === 'main');
    check('data-controls="false": a bare figure (the heatmap starts at the top)', h3 && h3.rect[1] < 40,
      h3 && `top at ${h3.rect[1].toFixed(0)} px`);
    const h2 = (await page.evaluate(() => window.__d1.describe())).heatmaps.find((x) => x.id === 'main');
    check('with controls the heatmap sits below the toolbar', h2.rect[1] > h3.rect[1] + 20,
      `${h2.rect[1].toFixed(0)} vs ${h3.rect[1].toFixed(0)} px`);
    check('no console errors', errors.length === 0, errors.slice(0, 3).join(' | '));
  } finally {
    await browser.close();
    server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().then(() => process.exit(summary()), (e) => { console.error(e); summary(); process.exit(1); });
