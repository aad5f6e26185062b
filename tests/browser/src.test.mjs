// ?src=URL: a version-2 attention file (encoder, decoder, cross) fetched from another origin
// opens on its cross set and plays it; the pixels match the weights; a server without CORS and
// a missing file give clear messages, in the promise and in the status bar.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openApp, frames, screenshot, check, summary, checkHeatmapPixels } from './lib.mjs';
import { serve } from '../../scripts/serve.mjs';

const CROSS = [[0.70, 0.20, 0.05, 0.05], [0.10, 0.15, 0.60, 0.15], [0.05, 0.60, 0.25, 0.10], [0.05, 0.05, 0.10, 0.80]];
const FILE = {
  format: 'attnviz', version: 2,
  sets: [
    { name: 'encoder', kind: 'self', tokens: ['the', 'european', 'economic', 'area'],
      weights: [[[[0.7, 0.1, 0.1, 0.1], [0.1, 0.7, 0.1, 0.1], [0.1, 0.1, 0.7, 0.1], [0.1, 0.1, 0.1, 0.7]]]] },
    { name: 'decoder', kind: 'causal', tokens: ['la', 'zone', 'économique', 'européenne'],
      weights: [[[[1, 0, 0, 0], [0.5, 0.5, 0, 0], [0.3, 0.3, 0.4, 0], [0.25, 0.25, 0.25, 0.25]]]] },
    { name: 'cross', kind: 'cross', query_tokens: ['la', 'zone', 'économique', 'européenne'],
      key_tokens: ['the', 'european', 'economic', 'area'], weights: [[CROSS]] },
  ],
};

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attnviz-src-'));
  fs.writeFileSync(path.join(dir, 'marian.json'), JSON.stringify(FILE));
  const withCors = await serve(dir, 0, { cors: true });
  const withoutCors = await serve(dir, 0);
  const url = `http://127.0.0.1:${withCors.address().port}/marian.json`;
  const app = await openApp(`?src=${encodeURIComponent(url)}&range=p99&step=2`);
  const { page, errors } = app;
  try {
    await page.waitForFunction(() => window.attnviz.describe().example.startsWith('file:'), null, { timeout: 30000 });
    let d = await page.evaluate(() => window.attnviz.describe());
    check('?src= opens the fetched file on its cross set', d.example === 'file:marian.json#cross' && d.kind === 'cross',
      `${d.example} (${d.kind})`);
    check('the three sets are listed', JSON.stringify(d.sets) === '["encoder","decoder","cross"]', JSON.stringify(d.sets));
    check('the cross set plays as the translation figure', d.view === 'heatmap' && d.timeline.count === 4);
    await page.waitForFunction(() => window.attnviz.describe().range === 'p99', null, { timeout: 60000 });
    d = await page.evaluate(() => window.attnviz.describe());
    check('URL options apply once the file is in (range=p99, step=2)', d.range === 'p99' && d.timeline.step === 2 &&
      !d.timeline.playing, `range ${d.range}, step ${d.timeline.step}`);
    check('the progress bar is gone once loaded', (await page.$('.attnviz-progress')) === null);
    await page.evaluate(() => { window.attnviz.command('numbers off'); window.attnviz.command('step 4'); });
    await frames(page, 4);
    d = await page.evaluate(() => window.attnviz.describe());
    const h = d.heatmaps.find((x) => x.id === 'main');
    const maxErr = Math.max(...CROSS.flat().map((w, i) => Math.abs(h.weights[i] - w)));
    check('the cross weights arrive intact', maxErr < 1e-6, `largest error ${maxErr.toExponential(2)}`);
    const shot = await screenshot(page, 'src-cross.png');
    checkHeatmapPixels('fetched cross set', d, h, shot.png);
    check('command: set encoder', (await page.evaluate(() => window.attnviz.command('set encoder'))) === '');

    // Another origin without CORS, then a missing file: rejected with a reason, shown in the status bar.
    const noCors = `http://127.0.0.1:${withoutCors.address().port}/marian.json`;
    const e1 = await page.evaluate((u) => window.attnviz.openUrl(u).then(() => 'opened', (e) => e.message), noCors);
    check('a server without CORS gives a clear message', /CORS/.test(e1), e1);
    await frames(page, 2);
    d = await page.evaluate(() => window.attnviz.describe());
    check('the status bar says it too', d.message_is_error && /CORS/.test(d.message), d.message);
    const e2 = await page.evaluate((u) => window.attnviz.openUrl(u).then(() => 'opened', (e) => e.message),
      url.replace('marian.json', 'missing.json'));
    check('a missing file says HTTP 404', /HTTP 404/.test(e2), e2);
    const e3 = await page.evaluate(() => window.attnviz.openFile(new File(['{"version": 2}'], 'bad.json'))
      .then(() => 'opened', (e) => e.message));
    check('openFile rejects a bad file with the reason', /sets/.test(e3), e3);
    check('the file stays open after the failures', (await page.evaluate(() => window.attnviz.describe().example))
      === 'file:marian.json#encoder');
    const unexpected = errors.filter((e) => !/CORS|Access-Control|Failed to load resource|ERR_FAILED/.test(e));
    check('no other console errors', unexpected.length === 0, unexpected.slice(0, 3).join(' | '));
  } finally {
    await app.close();
    withCors.close();
    withoutCors.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().then(() => process.exit(summary()), (e) => { console.error(e); summary(); process.exit(1); });
