// The web bundle and the first frame (issue: embeds small and fast). Prints
//   bundle file=attnviz.js bytes=.. gzip=..      (and attnviz.wasm, and the total)
//   first_frame page=... ms=min/median/max over 5 fresh browser contexts, from navigation to the
//   viewer's first drawn frame, served from 127.0.0.1
// Budgets: total <= 1.5 MB and <= 600 KB gzipped; first frame <= 1000 ms.
import { chromium } from 'playwright-core';
import { serve } from '../scripts/serve.mjs';
import { BUNDLE_BUDGET, bundleSize } from '../scripts/bundle_size.mjs';

const APP = process.env.ATTNVIZ_WEB_APP || 'build/web/app';
const size = bundleSize(APP);
for (const f of size.files) console.log(`bundle file=${f.file} bytes=${f.bytes} gzip=${f.gzip}`);
console.log(`bundle total bytes=${size.bytes} gzip=${size.gzip} budget_bytes=${BUNDLE_BUDGET.bytes} ` +
  `budget_gzip=${BUNDLE_BUDGET.gzip} ok=${size.ok}`);

const server = await serve(APP, 0);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--use-angle=swiftshader', '--enable-unsafe-swiftshader', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic', '--ignore-gpu-blocklist'],
});
for (const query of ['?example=seed002&embed=1&view=heatmap', '']) {
  const times = [];
  for (let i = 0; i < 5; ++i) {
    const ctx = await browser.newContext({ viewport: { width: 800, height: 500 }, colorScheme: 'dark' });
    const page = await ctx.newPage();
    await page.goto(`http://127.0.0.1:${server.address().port}/${query}`);
    times.push(await page.evaluate(() => window.attnvizReady.then(() => performance.now())));
    await ctx.close();
  }
  times.sort((a, b) => a - b);
  console.log(`first_frame page=/${query || 'index.html'} ms_min=${times[0].toFixed(0)} ms_median=${times[2].toFixed(0)} ` +
    `ms_max=${times[4].toFixed(0)} budget_ms=1000`);
}
await browser.close();
server.close();
