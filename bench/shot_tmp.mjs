import { chromium } from 'playwright-core';
import { serve } from '../scripts/serve.mjs';
const app = await serve('build/web/app', 0);
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--use-angle=swiftshader', '--enable-unsafe-swiftshader'] });
for (const dpr of [1.25, 1.5]) {
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 }, deviceScaleFactor: dpr })).newPage();
  await page.goto(`http://127.0.0.1:${app.address().port}/?example=seed004`);
  await page.waitForFunction(() => window.attnviz !== undefined && window.attnviz.describe().frame > 5);
  await page.waitForTimeout(800);
  await page.screenshot({ path: `/tmp/shot_dpr${dpr}.png` });
}
await browser.close(); app.close();
