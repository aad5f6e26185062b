// The tutorial page (web/tutorial/): every step's viewer starts, shows only its views, and draws.
import { chromium } from 'playwright-core';
import { APP_DIR, check, summary, frames } from './lib.mjs';
import { serve } from '../../scripts/serve.mjs';

async function main() {
  const server = await serve(APP_DIR, 0, { headers: {
    'Content-Security-Policy': "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'" } });
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--use-angle=swiftshader', '--enable-unsafe-swiftshader', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic', '--ignore-gpu-blocklist'],
  });
  try {
    const page = await (await browser.newContext({ viewport: { width: 1000, height: 900 }, colorScheme: 'dark' })).newPage();
    const errors = [];
    page.on('console', (m) => { if (m.type() === 'error' || /Refused to/.test(m.text())) errors.push(m.text()); });
    await page.goto(`http://127.0.0.1:${server.address().port}/tutorial/index.html`);
    const n = await page.evaluate(() => window.tutorialViewers.then((vs) => { window.vs = vs; return vs.length; }));
    check('seven viewers start', n === 7, String(n));
    // Scroll through so each viewer draws (idle viewers draw nothing until something happens).
    for (let i = 0; i < 7; ++i) {
      await page.evaluate((k) => { window.vs[k].canvas.scrollIntoView(); window.vs[k].command('pause'); }, i);
      await frames(page, 4);
    }
    const d = await page.evaluate(() => window.vs.map((v) => v.describe()));
    const expect = [['heatmap', 'lines'], ['steps', 'heatmap'], ['heatmap', 'lines', 'steps'], ['steps', 'heatmap'],
      ['heatmap', 'compare', 'steps'], ['grid', 'heatmap', 'compare'], ['translate', 'train', 'heatmap']];
    for (let i = 0; i < 7; ++i) {
      check(`step ${i + 1}: only its views`, JSON.stringify(d[i].views) === JSON.stringify(expect[i]), JSON.stringify(d[i].views));
    }
    check('step 1 shows the soft dictionary (0.8, 0.2)', d[0].example === 'file:attention.json' &&
      d[0].heatmaps[0] && Math.abs(d[0].heatmaps[0].weights[0] - 0.8) < 1e-6);
    check('step 2 shows 927 / 397 / 148 / 929', JSON.stringify(d[1].steps.shown_scores) === '[927,397,148,929]',
      JSON.stringify(d[1].steps.shown_scores));
    check('step 4: one context vector of 2 numbers per query', d[3].steps.context && d[3].steps.context.length === 2);
    check('step 6: the grid draws every head', d[5].grid.drawn === 8, String(d[5].grid.drawn));
    check('step 7: figure (a), translated exactly', d[6].translate.figure === 'a' && d[6].translate.figure_exact === true &&
      /zone économique européenne a été signé/.test(d[6].translate.output), d[6].translate.output);
    check('no console errors or CSP violations', errors.length === 0, errors.slice(0, 3).join(' | '));
  } finally {
    await browser.close();
    server.close();
  }
}

main().then(() => process.exit(summary()), (e) => { console.error(e); summary(); process.exit(1); });
