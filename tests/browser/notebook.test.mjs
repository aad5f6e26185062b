// The quickstart notebook (python/examples/quickstart.ipynb), executed by `jupyter nbconvert --to
// html --execute` (ctest python_notebook), opened from disk as a person opens an exported notebook:
// the three attnviz.show() outputs run offline from the inlined WebAssembly, each in its own viewer, and
// the heatmaps drawn are the data the notebook gave. An AMD `define` (RequireJS, as in Jupyter) is
// on the page and must be left alone. The third was called with hide=, renormalize= and sort=, the
// fourth is attnviz.head_view (BertViz's arguments).
import fs from 'node:fs';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { frames, screenshot, check, summary, checkHeatmapPixels } from './lib.mjs';

const HTML = process.env.ATTNVIZ_NOTEBOOK_HTML;
// The first cell's weights (rows: le chat noir; columns: the black cat).
const NUMPY_CELL = [0.80, 0.10, 0.10, 0.10, 0.15, 0.75, 0.05, 0.85, 0.10];
const TORCH_TOKENS = ['the', 'cat', 'sat', 'on', 'the', 'mat'];

// A heatmap's rectangle moved from canvas to page coordinates.
function onPage(h, r) {
  return { ...h, rect: [h.rect[0] + r[0], h.rect[1] + r[1], h.rect[2] + r[0], h.rect[3] + r[1]] };
}

async function pixelsOf(page, index, name) {
  const id = await page.evaluate((i) => document.querySelectorAll('.attnviz-output')[i].id, index);
  await page.evaluate((k) => window.attnvizViewers[k].command('numbers off'), id);
  await page.evaluate((k) => window.attnvizViewers[k].canvas.scrollIntoView({ block: 'center' }), id);
  await frames(page, 4);
  const r = await page.evaluate((k) => {
    const b = window.attnvizViewers[k].canvas.getBoundingClientRect();
    return [b.left, b.top];
  }, id);
  const d = await page.evaluate((k) => window.attnvizViewers[k].describe(), id);
  const shot = await screenshot(page, `notebook-${name}.png`);
  for (const h of d.heatmaps) {
    // A map may carry its own colour range (auto range per map); else the shared one applies.
    const range = { ...d, vmin: h.vmin ?? d.vmin, vmax: h.vmax ?? d.vmax };
    checkHeatmapPixels(`${name} ${h.id}`, range, onPage(h, r), shot.png);
  }
  return d;
}

async function main() {
  if (!HTML || !fs.existsSync(HTML)) throw new Error(`ATTNVIZ_NOTEBOOK_HTML=${HTML}: run the python_notebook test first`);
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--use-angle=swiftshader', '--enable-unsafe-swiftshader', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic', '--ignore-gpu-blocklist'],
  });
  try {
    const page = await (await browser.newContext({ viewport: { width: 1100, height: 800 }, acceptDownloads: true })).newPage();
    const url = pathToFileURL(HTML).href;
    const requests = [], errors = [];
    page.on('request', (r) => requests.push(r.url()));
    page.on('console', (m) => { if (m.type() === 'error') errors.push({ text: m.text(), url: m.location().url }); });
    page.on('pageerror', (e) => errors.push({ text: String(e), url: '' }));
    // Nothing leaves the machine: every request but the page itself fails.
    await page.route('**/*', (route) => (route.request().url() === url ? route.continue() : route.abort()));
    await page.addInitScript(() => {
      window.amdCalls = 0;
      window.define = function () { window.amdCalls++; };
      window.define.amd = {};
    });
    await page.goto(url);
    await page.waitForFunction(() => {
      const outs = [...document.querySelectorAll('.attnviz-output')];
      return outs.length > 0 && outs.every((e) => ['ready', 'error'].includes(e.getAttribute('data-attnviz-state')));
    }, null, { timeout: 120000 });

    const states = await page.evaluate(() => [...document.querySelectorAll('.attnviz-output')].map(
      (e) => [e.id, e.getAttribute('data-attnviz-state'), e.getAttribute('data-attnviz-error')]));
    check('four viewers in the notebook', states.length === 4, JSON.stringify(states));
    check('every viewer started from the inlined app', states.every((s) => s[1] === 'ready'), JSON.stringify(states));
    check('each viewer has its own id and canvas', new Set(states.map((s) => s[0])).size === 4 &&
      (await page.$$('.attnviz-output canvas')).length === 4);

    // The notebook's template links its own scripts (RequireJS, MathJax); the outputs fetch nothing.
    const templateRefs = await page.evaluate(() => [...document.querySelectorAll('[src],[href]')]
      .filter((e) => !e.closest('.attnviz-output')).map((e) => e.src || e.href));
    const foreign = requests.filter((r) => r !== url && !templateRefs.includes(r));
    check('the outputs request nothing (no CDN, no files)', foreign.length === 0, foreign.slice(0, 3).join(' '));
    check('an AMD define on the page is not called', (await page.evaluate(() => window.amdCalls)) === 0);

    // Viewer 1: the numpy cell's 3x3 weights, pixel for pixel.
    const d1 = await pixelsOf(page, 0, 'numpy');
    check('viewer 1 shows the numpy cell\'s tokens',
      d1.source_tokens.join(' ') === 'the black cat' && d1.target_tokens.join(' ') === 'le chat noir',
      `${d1.source_tokens} / ${d1.target_tokens}`);
    const h1 = d1.heatmaps.find((h) => h.id === 'main');
    const err1 = h1 ? Math.max(...NUMPY_CELL.map((w, i) => Math.abs(h1.weights[i] - w))) : 1;
    check('viewer 1 draws the numpy cell\'s weights', !!h1 && h1.rows === 3 && h1.cols === 3 && err1 < 1e-6,
      `largest error ${err1.toExponential(2)}`);

    // Viewer 2: the captured TransformerEncoder, 2 layers x 2 heads of 6x6 self-attention, in the grid.
    const d2 = await pixelsOf(page, 1, 'torch');
    check('viewer 2 shows the torch cell\'s tokens', d2.source_tokens.join(' ') === TORCH_TOKENS.join(' ') &&
      d2.target_tokens.join(' ') === TORCH_TOKENS.join(' '), String(d2.source_tokens));
    check('viewer 2 shows 2 layers x 2 heads in the grid', d2.view === 'grid' && d2.heatmaps.length === 4,
      `${d2.view}, ${d2.heatmaps.length} maps`);
    const sums = d2.heatmaps.flatMap((h) => [0, 1, 2, 3, 4, 5].map(
      (r) => h.weights.slice(r * 6, r * 6 + 6).reduce((a, b) => a + b, 0)));
    check('viewer 2: every row of every head sums to 1', sums.length === 24 && sums.every((s) => Math.abs(s - 1) < 1e-5));
    check('the two viewers show different data', d1.heatmaps[0].weights.length !== d2.heatmaps[0].weights.length);

    // Viewer 3: show(cap, tokens=[CLS] the cat sat . [SEP], hide=["special", "punctuation"],
    // renormalize=True, sort="entropy"): 3x3 heads whose rows sum to 1, sharpest head first.
    const d3 = await pixelsOf(page, 2, 'hidden');
    check('viewer 3 hides [CLS], [SEP] and "."', d3.source_tokens.join(' ') === 'the cat sat' &&
      d3.target_tokens.join(' ') === 'the cat sat' && d3.hidden.special && d3.hidden.punctuation,
      `${d3.source_tokens} / ${JSON.stringify(d3.hidden)}`);
    const sums3 = d3.heatmaps.flatMap((h) => [0, 1, 2].map((r) => h.weights.slice(r * 3, r * 3 + 3).reduce((a, b) => a + b, 0)));
    check('viewer 3: rows renormalised over what is left', d3.heatmaps.length === 4 && sums3.every((s) => Math.abs(s - 1) < 1e-5),
      sums3.map((s) => s.toFixed(4)).join(' '));
    const ent = d3.grid.order.map((i) => d3.grid.stats[i].entropy);
    check('viewer 3: the grid is sorted by entropy, lowest first', d3.grid.sort === 'entropy' && ent.length === 4 &&
      ent.every((e, i) => i === 0 || e >= ent[i - 1]) && d3.grid.stats.every((x) => x.ok), `${d3.grid.sort}: ${ent}`);

    // Viewer 4: head_view(2 layers of [1, 4, 6, 6], tokens): the Lines view, all 4 heads of layer 0.
    const id4 = await page.evaluate(() => document.querySelectorAll('.attnviz-output')[3].id);
    await page.evaluate((k) => window.attnvizViewers[k].canvas.scrollIntoView({ block: 'center' }), id4);
    await frames(page, 4);
    const d4 = await page.evaluate((k) => window.attnvizViewers[k].describe(), id4);
    await screenshot(page, 'notebook-head-view.png');
    check('viewer 4 (head_view) draws every head of layer 0 in the Lines view', d4.view === 'lines' &&
      d4.lines.all_heads && d4.lines.layer === 0 && d4.lines.heads_drawn.length === 4 &&
      d4.lines.heads_drawn.every((n) => n > 0) && d4.lines.drawn === d4.lines.heads_drawn.reduce((a, b) => a + b, 0),
      `${d4.view} ${JSON.stringify(d4.lines && { all: d4.lines.all_heads, heads: d4.lines.heads_drawn, drawn: d4.lines.drawn })}`);
    check('viewer 4 shows the tokens given', d4.source_tokens.join(' ') === 'the cat sat on the mat', String(d4.source_tokens));

    // Exports from an inlined output (a figure or a clip for a paper): the export code comes inlined
    // too (window.AttnVizExport; there is no folder to import attnviz-export.js from, and they failed
    // with "Failed to resolve module specifier"). The animation downloads under a file-system-safe name.
    const magic = (k, f) => page.evaluate(([k, f]) => window.attnvizViewers[k][f]({ stepMs: 40 }).then(
      async (b) => ({ type: b.type, size: b.size, head: [...new Uint8Array(await b.slice(0, 6).arrayBuffer())] }),
      (e) => ({ error: e.message })), [k, f]);
    const png = await magic(id4, 'exportPng'), gif = await magic(id4, 'exportGif');
    check('exportPng from an inlined output gives a PNG', png.type === 'image/png' && png.size > 1000 &&
      String.fromCharCode(...png.head.slice(1, 4)) === 'PNG', JSON.stringify(png));
    check('exportGif from an inlined output gives a GIF', gif.type === 'image/gif' &&
      String.fromCharCode(...gif.head) === 'GIF89a', JSON.stringify(gif));
    const id1 = await page.evaluate(() => document.querySelectorAll('.attnviz-output')[0].id);
    const download = page.waitForEvent('download', { timeout: 30000 });
    const saveGif = await page.evaluate((k) => window.attnvizViewers[k].command('save-gif 40'), id1);
    const name = saveGif ? '' : (await download).suggestedFilename();
    await frames(page, 2);
    const d1after = await page.evaluate((k) => window.attnvizViewers[k].describe(), id1);
    check('save-gif in an inlined output downloads the clip as attnviz-attention.gif (the file, no extension)',
      !saveGif && name === 'attnviz-attention.gif', `${saveGif} ${name}`);
    check('... and says so on the status line (it said "recording the animation as gif..." for good)',
      d1after.message === 'saved attnviz-attention.gif' && !d1after.message_is_error, d1after.message);

    const ours = errors.filter((e) => !templateRefs.includes(e.url));
    check('no console errors from the outputs', ours.length === 0, ours.slice(0, 3).map((e) => e.text).join(' | '));

    // A notebook viewer that strips the first output's data element (a sanitiser that drops unknown
    // script types): that output says why in its own box; the others still start.
    const html = fs.readFileSync(HTML, 'utf8');
    const stripped = html.replace(/<script type="application\/octet-stream" id="[^"]*-data">[^<]*<\/script>/, '');
    const strippedFile = HTML.replace(/\.html$/, '') + '-no-data.html';
    fs.writeFileSync(strippedFile, stripped);
    const page2 = await (await browser.newContext({ viewport: { width: 1100, height: 800 } })).newPage();
    await page2.goto(pathToFileURL(strippedFile).href);
    await page2.waitForFunction(() => [...document.querySelectorAll('.attnviz-output')]
      .every((e) => ['ready', 'error'].includes(e.getAttribute('data-attnviz-state'))), null, { timeout: 120000 });
    const states2 = await page2.evaluate(() => [...document.querySelectorAll('.attnviz-output')].map(
      (e) => [e.getAttribute('data-attnviz-state'), e.getAttribute('data-attnviz-error'),
        (e.querySelector('.attnviz-error') || {}).textContent || '']));
    check('an output whose inlined data was stripped says so in its box; the others start', stripped !== html &&
      states2[0][0] === 'error' && /inlined data .* is missing/.test(states2[0][2]) &&
      states2.slice(1).every((s) => s[0] === 'ready'), JSON.stringify(states2.map((s) => [s[0], s[1]])));
  } finally {
    await browser.close();
  }
}

main().then(() => process.exit(summary()), (e) => { console.error(e); summary(); process.exit(1); });
