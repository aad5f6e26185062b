// Deep links and the iframe embed: URL options set the state; the page keeps it in its hash so a
// copied link reopens the same frame of the same view; the postMessage API answers an allowed
// origin and ignores another (three local ports).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { APP_DIR, check, summary } from './lib.mjs';
import { serve } from '../../scripts/serve.mjs';

const parentPage = (appUrl) => `<!doctype html><html><body>
<iframe id="f" src="${appUrl}" width="700" height="420"></iframe>
<script>
  window.replies = [];
  window.addEventListener('message', (e) => window.replies.push(e.data));
  window.send = (m) => document.getElementById('f').contentWindow.postMessage(m, '*');
</script></body></html>`;

async function main() {
  const app = await serve(APP_DIR, 0);
  const appBase = `http://127.0.0.1:${app.address().port}/`;
  const dirA = fs.mkdtempSync(path.join(os.tmpdir(), 'attnviz-pa-'));
  const dirB = fs.mkdtempSync(path.join(os.tmpdir(), 'attnviz-pb-'));
  const a = await serve(dirA, 0), b = await serve(dirB, 0);
  const originA = `http://127.0.0.1:${a.address().port}`;
  const frameUrl = `${appBase}index.html?embed=1&example=seed002&view=heatmap&origins=${encodeURIComponent(originA)}`;
  fs.writeFileSync(path.join(dirA, 'index.html'), parentPage(frameUrl));
  fs.writeFileSync(path.join(dirB, 'index.html'), parentPage(frameUrl));
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--use-angle=swiftshader', '--enable-unsafe-swiftshader', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic', '--ignore-gpu-blocklist'],
  });
  const ctx = await browser.newContext({ viewport: { width: 1000, height: 700 }, colorScheme: 'dark' });
  try {
    // URL options set the state.
    let page = await ctx.newPage();
    await page.goto(`${appBase}?example=multihead&view=heatmap&layer=1&head=1&colormap=viridis&step=3&theme=light`);
    await page.waitForFunction(() => window.attnviz !== undefined, null, { timeout: 60000 });
    let d = await page.evaluate(() => window.attnviz.describe());
    check('URL options: layer 1 head 1 is map 5, viridis, step 3, light theme',
      d.map === 5 && d.colormap === 'viridis' && d.timeline.step === 3 && d.theme === 'light',
      JSON.stringify([d.map, d.colormap, d.timeline.step, d.theme]));
    // The state goes into the hash; the link reopens it.
    await page.evaluate(() => {
      for (const c of ['step 2', 'view grid', 'numbers off', 'colorbar off']) window.attnviz.command(c);
    });
    await page.waitForFunction(() => /view=grid/.test(location.hash) && /step=2/.test(location.hash), null, { timeout: 60000 });
    const link = page.url();
    await page.close();
    page = await ctx.newPage();
    await page.goto(link);
    await page.waitForFunction(() => window.attnviz !== undefined, null, { timeout: 60000 });
    d = await page.evaluate(() => window.attnviz.describe());
    check('a copied link reopens the same state', d.example === 'multihead' && d.view === 'grid' && d.map === 5 &&
      d.timeline.step === 2 && d.colormap === 'viridis' && d.numbers === false && d.colorbar === false,
      `${link.split('#')[1]} -> ${d.view} map ${d.map} step ${d.timeline.step} numbers ${d.numbers} colorbar ${d.colorbar}`);
    await page.close();

    // postMessage from the allowed origin: answered.
    page = await ctx.newPage();
    const frameLogs = [];
    page.on('console', (m) => frameLogs.push(m.text()));
    await page.goto(`${originA}/index.html`);
    await page.waitForFunction(() => window.replies.some((r) => r && r.attnviz === 'ready'), null, { timeout: 60000 });
    await page.evaluate(() => window.send({ attnviz: 'command', id: 1, command: 'step 0' }));
    await page.evaluate(() => window.send({ attnviz: 'describe', id: 2 }));
    await page.evaluate(() => window.send({ attnviz: 'command', id: 3, command: 'view nowhere' }));
    await page.waitForFunction(() => window.replies.filter((r) => r && r.attnviz === 'result').length >= 3, null, { timeout: 60000 });
    const replies = await page.evaluate(() => window.replies.filter((r) => r.attnviz === 'result'));
    const byId = Object.fromEntries(replies.map((r) => [r.id, r]));
    check('allowed origin: a command is answered', byId[1] && byId[1].error === '');
    check('allowed origin: describe is answered', byId[2] && byId[2].describe && byId[2].describe.timeline.step === 0);
    check('allowed origin: a bad command says why', byId[3] && /unknown view/.test(byId[3].error), byId[3] && byId[3].error);
    await page.evaluate(() => window.send('not an object'));
    await page.waitForTimeout(300);
    check('a malformed message is ignored with a warning', frameLogs.some((t) => /malformed message/.test(t)));
    await page.close();

    // From another origin: ignored.
    page = await ctx.newPage();
    const logsB = [];
    page.on('console', (m) => logsB.push(m.text()));
    await page.goto(`http://127.0.0.1:${b.address().port}/index.html`);
    await page.waitForSelector('#f');
    const frame = await (await page.$('#f')).contentFrame();
    await frame.waitForFunction(() => window.attnviz !== undefined, null, { timeout: 60000 });
    await page.evaluate(() => window.send({ attnviz: 'command', id: 9, command: 'step 0' }));
    await page.waitForTimeout(1000);
    const got = await page.evaluate(() => window.replies.filter((r) => r && r.attnviz === 'result').length);
    check('another origin gets no answer', got === 0);
    check('and the viewer warns about it', logsB.some((t) => /ignored a message from/.test(t)), logsB.slice(-2).join(' | '));
  } finally {
    await browser.close();
    app.close(); a.close(); b.close();
    for (const d of [dirA, dirB]) fs.rmSync(d, { recursive: true, force: true });
  }
}

main().then(() => process.exit(summary()), (e) => { console.error(e); summary(); process.exit(1); });
