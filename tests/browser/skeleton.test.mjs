// First light: the page loads WASM, draws the seed heatmaps through the project's shaders,
// and every cell's colour inverts through the colormap to the weight the core computed.
import fs from 'node:fs';
import { openApp, frames, screenshot, check, summary, checkHeatmapPixels, pixel } from './lib.mjs';

const SEED002 = [0.1192029, 0.0, 0.0, 0.8807971];  // softmax of dot scores 927, 397, 148, 929.1

async function main() {
  const app = await openApp('?example=seed002&view=heatmap');
  const { page, errors } = app;
  try {
    await frames(page, 5);
    const webgl = await page.evaluate(() => {
      const gl = document.querySelector('canvas').getContext('webgl2');
      return gl ? gl.getParameter(gl.VERSION) : null;
    });
    check('canvas has a WebGL2 context', webgl !== null && /WebGL 2/.test(webgl), String(webgl));
    let d = await page.evaluate(() => window.attnviz.describe());
    check('seed 002 example is open in the heatmap view', d.example === 'seed002' && d.view === 'heatmap');
    const h = d.heatmaps.find((x) => x.id === 'main');
    check('heatmap geometry is exposed', !!h && h.rows === 1 && h.cols === 4, JSON.stringify(h && [h.rows, h.cols]));
    const maxErr = Math.max(...SEED002.map((w, i) => Math.abs(h.weights[i] - w)));
    check('core weights match seed 002 (0.1192, 0, 0, 0.8808)', maxErr < 1e-4, `largest error ${maxErr.toExponential(2)}`);
    check('canvas fills the window', await page.evaluate(() => {
      const c = document.querySelector('canvas');
      return c.width === window.innerWidth && c.height === window.innerHeight;
    }));
    // Numbers sit on the cell centres; the pixel checks look at bare cells.
    check('command: numbers off', (await page.evaluate(() => window.attnviz.command('numbers off'))) === '');
    await frames(page, 3);
    let shot = await screenshot(page, 'seed002-heatmap.png');
    checkHeatmapPixels('seed 002', d, h, shot.png);
    // The background and the two panels are clears (src/app/panel_fill.cpp), under the sidebar's
    // border: the dark theme's WindowBg (0.10, 0.10, 0.12) between the panels, ChildBg (0.12, 0.12,
    // 0.14) in them, and the border (0.43, 0.43, 0.50, alpha 0.5) over the sidebar's edge.
    if (shot.png.width === 1280 && shot.png.height === 800) {
      const at = (x, y) => pixel(shot.png, x, y).join(',');
      check('the window background between the panels', at(4, 400) === '26,26,31' && at(312, 400) === '26,26,31',
        `${at(4, 400)} ${at(312, 400)}`);
      check('the sidebar and the view area', at(150, 745) === '31,31,36' && at(1000, 700) === '31,31,36',
        `${at(150, 745)} ${at(1000, 700)}`);
      check('the sidebar\'s border over its fill', at(8, 400) === '71,71,82' && at(150, 29) === '71,71,82',
        `${at(8, 400)} ${at(150, 29)}`);
    } else {
      check('the page is 1280 x 800 for the panel checks', false, `${shot.png.width} x ${shot.png.height}`);
    }

    // Seed 004 (4x4 self-attention) through another colormap.
    check('command: example seed004', (await page.evaluate(() => window.attnviz.command('example seed004'))) === '');
    check('command: colormap viridis', (await page.evaluate(() => window.attnviz.command('colormap viridis'))) === '');
    await frames(page, 4);
    d = await page.evaluate(() => window.attnviz.describe());
    const h4 = d.heatmaps.find((x) => x.id === 'main');
    check('seed 004 is 4x4', h4.rows === 4 && h4.cols === 4);
    const sums = [0, 1, 2, 3].map((r) => h4.weights.slice(r * 4, r * 4 + 4).reduce((a, b) => a + b, 0));
    check('seed 004 rows sum to 1', sums.every((s) => Math.abs(s - 1) < 1e-5), sums.map((s) => s.toFixed(6)).join(' '));
    check('seed 004 weight[0][2] = 0.74913 (numpy)', Math.abs(h4.weights[2] - 0.749130386) < 1e-4, String(h4.weights[2]));
    shot = await screenshot(page, 'seed004-heatmap-viridis.png');
    checkHeatmapPixels('seed 004 (viridis)', d, h4, shot.png);

    // UTF-8 tokens: the translation example carries accents.
    await page.evaluate(() => window.attnviz.command('example translation'));
    await page.evaluate(() => window.attnviz.command('colormap greys'));
    await frames(page, 4);
    d = await page.evaluate(() => window.attnviz.describe());
    check('translation tokens are UTF-8', d.target_tokens.includes('économique') && d.target_tokens.includes('européenne'),
      d.target_tokens.join(' '));
    shot = await screenshot(page, 'translation-heatmap.png');
    checkHeatmapPixels('translation', d, d.heatmaps.find((x) => x.id === 'main'), shot.png);
    await page.evaluate(() => window.attnviz.command('numbers on'));
    await frames(page, 3);
    shot = await screenshot(page, 'translation-heatmap-numbers.png');
    if (process.env.ATTNVIZ_DOCS_SCREENSHOT) fs.copyFileSync(shot.file, process.env.ATTNVIZ_DOCS_SCREENSHOT);

    check('unknown command gives an error', (await page.evaluate(() => window.attnviz.command('example nope'))).includes('unknown'));

    // Frames do not read back the state that WebGL answers with a GPU round trip (the viewport,
    // scissor box and blend state imgui's backend saves and restores): src/platform/webgl_state.js
    // answers them. Bindings and enables, which Chromium keeps on the page's side, may still be read.
    const reads = await page.evaluate(async () => {
      const proto = WebGL2RenderingContext.prototype, original = proto.getParameter, seen = {};
      const slow = [0x0BA2, 0x0C10, 0x80C8, 0x80C9, 0x80CA, 0x80CB, 0x8009, 0x883D];
      proto.getParameter = function(p) { if (slow.includes(p)) seen[p] = (seen[p] || 0) + 1; return original.call(this, p); };
      const f0 = window.attnviz.describe().frame;
      for (let i = 0; i < 10; ++i) {
        window.attnviz.command('numbers ' + (i % 2 ? 'on' : 'off'));  // something to draw
        await new Promise((r) => requestAnimationFrame(r));
      }
      proto.getParameter = original;
      return { frames: window.attnviz.describe().frame - f0, seen };
    });
    check('frames drawn while GL reads were counted', reads.frames >= 5, String(reads.frames));
    check('no viewport/scissor/blend read-backs from WebGL during frames', Object.keys(reads.seen).length === 0,
      JSON.stringify(reads.seen));
    check('no console errors', errors.length === 0, errors.slice(0, 3).join(' | '));
  } finally {
    await app.close();
  }
}

// HiDPI: the canvas backing store follows devicePixelRatio and the cells still invert.
async function hidpi() {
  const app = await openApp('?example=seed004', { width: 900, height: 600, dpr: 2 });
  try {
    await app.page.evaluate(() => window.attnviz.command('numbers off'));
    await frames(app.page, 4);
    const size = await app.page.evaluate(() => {
      const c = document.querySelector('canvas');
      return [c.width, c.height, window.innerWidth, window.innerHeight];
    });
    check('HiDPI: canvas is 2x its CSS size', size[0] === 2 * size[2] && size[1] === 2 * size[3], size.join(' '));
    const d = await app.page.evaluate(() => window.attnviz.describe());
    check('HiDPI: fonts rasterised at 2x', d.dpi_scale === 2, String(d.dpi_scale));
    const shot = await screenshot(app.page, 'seed004-hidpi.png');
    checkHeatmapPixels('HiDPI seed 004', d, d.heatmaps.find((x) => x.id === 'main'), shot.png, 2);
    // Resizing the window resizes the canvas.
    await app.page.setViewportSize({ width: 700, height: 500 });
    await frames(app.page, 4);
    const w = await app.page.evaluate(() => document.querySelector('canvas').width);
    check('resize: canvas follows the window', w === 1400, String(w));
    check('HiDPI: no console errors', app.errors.length === 0, app.errors.slice(0, 3).join(' | '));
  } finally {
    await app.close();
  }
}

// Without WebGL2 the page says so instead of staying blank.
async function noWebGL() {
  const app = await openApp('', { extraArgs: ['--disable-webgl', '--disable-webgl2'], waitReady: false });
  try {
    await app.page.waitForSelector('.attnviz-error', { timeout: 30000 });
    const text = await app.page.textContent('.attnviz-error');
    check('no WebGL2: a readable message is shown', /WebGL2/.test(text), text.slice(0, 80));
  } finally {
    await app.close();
  }
}

main().then(hidpi).then(noWebGL).then(() => process.exit(summary()), (e) => { console.error(e); summary(); process.exit(1); });
