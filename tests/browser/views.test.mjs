// The viewer in a real browser: decoding animation row by row, lines view, grid click,
// step-by-step numbers, compare view, frames; screenshots of each view go to the artifacts
// (and to docs/ when ATTNVIZ_DOCS_DIR is set).
import fs from 'node:fs';
import path from 'node:path';
import { openApp, frames, screenshot, check, summary, checkHeatmapPixels, pixel, cellCentre } from './lib.mjs';

const EMPTY_ROW = [41, 41, 46];  // HeatmapDraw::empty_rgba (0.16, 0.16, 0.18)

async function docShot(page, name) {
  const shot = await screenshot(page, name);
  if (process.env.ATTNVIZ_DOCS_DIR) fs.copyFileSync(shot.file, path.join(process.env.ATTNVIZ_DOCS_DIR, name));
  return shot;
}

const cmd = (page, c) => page.evaluate((x) => window.attnviz.command(x), c);
const describe = (page) => page.evaluate(() => window.attnviz.describe());

// Records the weights textures the page makes: every texImage2D / texSubImage2D of a one-channel
// format, as [call, internalformat, type, width, height, bytes of the data argument].
function watchTextures() {
  window.__textures = [];
  const proto = WebGL2RenderingContext.prototype;
  const image = proto.texImage2D, sub = proto.texSubImage2D;
  proto.texImage2D = function (...a) {
    if (a.length >= 9 && a[6] === this.RED) window.__textures.push(['image', a[2], a[7], a[3], a[4], a[8] ? a[8].byteLength : 0]);
    return image.apply(this, a);
  };
  proto.texSubImage2D = function (...a) {
    if (a.length >= 9 && a[6] === this.RED) window.__textures.push(['sub', 0, a[7], a[4], a[5], a[8] ? a[8].byteLength : 0]);
    return sub.apply(this, a);
  };
}

async function main() {
  const app = await openApp('?example=translation&view=heatmap', { init: watchTextures });
  const { page, errors } = app;
  try {
    await cmd(page, 'numbers off');
    // Decoding animation: after k steps exactly k rows are drawn, the rest are empty.
    for (const k of [0, 1, 3, 5]) {
      check(`step ${k} accepted`, (await cmd(page, `step ${k}`)) === '');
      await frames(page, 3);
      const d = await describe(page);
      const h = d.heatmaps.find((x) => x.id === 'main');
      const shot = await screenshot(page, `decoding-step-${k}.png`);
      let drawnOk = true, emptyOk = true;
      for (let r = 0; r < h.rows; r++) {
        const [x, y] = cellCentre(h, r, Math.min(1, h.cols - 1));
        const rgb = pixel(shot.png, x, y);
        const isEmpty = rgb.every((v, i) => Math.abs(v - EMPTY_ROW[i]) <= 3);
        if (r < k && isEmpty) drawnOk = false;
        if (r >= k && !isEmpty) emptyOk = false;
      }
      check(`decoding: after ${k} steps the first ${k} rows are drawn`, h.rows_shown === k && drawnOk, `rows_shown=${h.rows_shown}`);
      check(`decoding: after ${k} steps the other rows are empty`, emptyOk);
      if (k > 0) checkHeatmapPixels(`decoding step ${k}`, d, h, shot.png);
    }
    // Playing the animation advances the rows over time.
    await cmd(page, 'step 0');
    await cmd(page, 'play');
    await page.waitForFunction(() => window.attnviz.describe().timeline.step >= 2, null, { timeout: 60000 });
    check('play advances the decoding animation', (await describe(page)).timeline.step >= 2);
    await cmd(page, 'pause');
    await cmd(page, 'step 5');
    await cmd(page, 'numbers on');
    await frames(page, 3);
    await docShot(page, 'view-heatmap.png');

    // Lines view draws lines (pixels differ from the background between the two columns).
    await cmd(page, 'view lines');
    await frames(page, 4);
    let d = await describe(page);
    check('lines view reports drawn lines', d.lines && d.lines.drawn > 0, JSON.stringify(d.lines && d.lines.drawn));
    let shot = await docShot(page, 'view-lines.png');
    if (d.lines && d.lines.valid) {
      const [x0, y0, x1, y1] = d.lines.rect;
      let lit = 0, total = 0;
      for (let y = y0 + 4; y < y1 - 4; y += 3) {
        for (let x = x0 + (x1 - x0) * 0.3; x < x0 + (x1 - x0) * 0.7; x += 3) {
          const [r, g, b] = pixel(shot.png, x, y);
          total++;
          if (r + g + b > 200) lit++;
        }
      }
      check('lines view: lines are visible between the token columns', lit > total * 0.01, `${lit}/${total} bright samples`);
    } else {
      check('lines view exposes its rectangle', false);
    }

    // Grid: a click on a thumbnail opens that head in the heatmap view.
    await cmd(page, 'example multihead');
    await cmd(page, 'view grid');
    await frames(page, 4);
    d = await describe(page);
    const thumbs = d.heatmaps.filter((h) => h.id.startsWith('thumb'));
    check('grid shows 8 thumbnails (2 layers x 4 heads)', thumbs.length === 8, String(thumbs.length));
    await docShot(page, 'view-grid.png');
    const target = thumbs.find((t) => t.id === 'thumb6') || thumbs[thumbs.length - 1];
    const [tx0, ty0, tx1, ty1] = target.rect;
    await page.mouse.click((tx0 + tx1) / 2, (ty0 + ty1) / 2);
    await frames(page, 4);
    d = await describe(page);
    check('grid click opens the clicked head', d.view === 'heatmap' && d.map === Number(target.id.slice(5)),
      `view=${d.view} map=${d.map} clicked=${target.id}`);

    // Lines, all heads (BertViz's head view): each of the layer's 4 heads draws lines in its own
    // colour (d3's category10); the mouse is moved off the canvas so no hover filters them.
    await cmd(page, 'view lines');
    check('lines-heads all accepted on the multihead example', (await cmd(page, 'lines-heads all')) === '');
    await page.mouse.move(5, 795);
    await frames(page, 4);
    d = await describe(page);
    shot = await docShot(page, 'view-lines-heads.png');
    const headRgb = [[31, 119, 180], [255, 127, 14], [44, 160, 44], [214, 39, 40]];
    const seen = headRgb.map(() => 0);
    if (d.lines && d.lines.valid) {
      const [x0, y0, x1, y1] = d.lines.rect;
      for (let y = y0 + 4; y < y1 - 4; y += 2)
        for (let x = x0 + (x1 - x0) * 0.2; x < x0 + (x1 - x0) * 0.8; x += 2) {
          const px = pixel(shot.png, x, y);
          headRgb.forEach((c, k) => { if (c.every((v, i) => Math.abs(v - px[i]) <= 12)) seen[k]++; });
        }
    }
    check('lines, all heads: 4 heads drawn, each with lines', d.lines && d.lines.all_heads &&
      d.lines.heads_drawn.length === 4 && d.lines.heads_drawn.every((n) => n > 0), JSON.stringify(d.lines && d.lines.heads_drawn));
    check('lines, all heads: every head\'s colour is on the canvas', seen.every((n) => n >= 20), `pixels per head colour: ${seen}`);
    await cmd(page, 'lines-heads off');

    // Step-by-step view shows the seed 002 numbers.
    await cmd(page, 'example seed002');
    await cmd(page, 'view steps');
    await frames(page, 4);
    d = await describe(page);
    const st = d.steps || {};
    const scores = st.scores || [];
    const want = [927, 397, 148, 929];
    const scoreErr = Math.max(...want.map((w, i) => Math.abs((scores[i] ?? 1e9) - w)));
    check('steps: seed 002 dot scores 927, 397, 148, 929', scoreErr < 1e-2, `scores=${JSON.stringify(scores)}`);
    const weights = st.weights || [];
    const wantW = [0.1192029, 0, 0, 0.8807971];
    const wErr = Math.max(...wantW.map((w, i) => Math.abs((weights[i] ?? 9) - w)));
    check('steps: seed 002 weights 0.1192, 0, 0, 0.8808', wErr < 1e-4, `weights=${JSON.stringify(weights)}`);
    const ctx = st.context || [];
    check('steps: context is the weighted sum', ctx.length === 3 && Math.abs(ctx[0] - (0.1192029 * 3 + 0.8807971 * 4)) < 1e-3,
      JSON.stringify(ctx));
    await docShot(page, 'view-steps.png');

    // Compare view: two scoring functions and their difference.
    await cmd(page, 'example seed004');
    await cmd(page, 'view compare');
    await frames(page, 4);
    d = await describe(page);
    check('compare view is available on seed 004', d.compare && d.compare.available === true);
    await docShot(page, 'view-compare.png');

    // A frame that would look like the one on the canvas is not drawn again (App::DrawFingerprint):
    // the viewer woken with nothing changed keeps its image. A change is drawn at once: every
    // cell of the heatmap after each step inverts to its weight, and the rows not yet emitted are empty.
    await cmd(page, 'example translation');
    await cmd(page, 'view heatmap');
    await cmd(page, 'numbers off');
    await cmd(page, 'step 5');
    await page.mouse.move(1100, 650);  // an empty part of the view: no hover, no tooltip
    await frames(page, 8);
    const kept = await page.evaluate(async () => {
      const v = window.attnviz, d0 = v.describe(), t0 = performance.now();
      for (let i = 0; i < 10; i++) {
        v.command('view heatmap');  // wakes the viewer; nothing on screen changes
        await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
      }
      const d1 = v.describe();
      return { frames: d1.frame - d0.frame, kept: d1.frames_kept - d0.frames_kept, s: (performance.now() - t0) / 1000 };
    });
    // Drawn: the status bar's readout, refreshed twice a second, and one frame more.
    const mayDraw = 2 + Math.ceil(kept.s * 2);
    check('a woken viewer with nothing new keeps its image (frames not drawn again)',
      kept.frames >= 10 && kept.frames - kept.kept <= mayDraw,
      `${kept.kept} of ${kept.frames} frames kept in ${kept.s.toFixed(2)} s (at most ${mayDraw} drawn)`);
    for (const k of [2, 3]) {
      await cmd(page, `step ${k}`);
      await frames(page, 3);
      d = await describe(page);
      const h = d.heatmaps.find((x) => x.id === 'main');
      const shot = await screenshot(page, `kept-then-step-${k}.png`);
      checkHeatmapPixels(`step ${k} after kept frames`, d, h, shot.png);
      const [x, y] = cellCentre(h, k, Math.min(1, h.cols - 1));
      const rgb = pixel(shot.png, x, y);
      check(`after kept frames, step ${k}: row ${k} is still empty`, rgb.every((v, i) => Math.abs(v - EMPTY_ROW[i]) <= 3),
        `${rgb}`);
    }

    // Only the weights change (the same tokens, name, shape and colour range): the texture's new
    // contents are drawn. (The status bar's message changes too, so this does not isolate the texture
    // version in the fingerprint; AppFrames.EveryHeatmapParameterAndTextureUploadChangesTheFingerprint does.)
    const sameButWeights = [[[0.8, 0.1, 0.1], [0.2, 0.3, 0.5]], [[0.1, 0.1, 0.8], [0.5, 0.3, 0.2]]];
    for (let i = 0; i < sameButWeights.length; i++) {
      await page.evaluate((w) => window.attnviz.load({ source_tokens: ['the', 'cat', 'sat'], target_tokens: ['le', 'chat'],
        weights: w }), sameButWeights[i]);
      await cmd(page, 'numbers off');
      await cmd(page, 'step 2');
      await frames(page, 6);
      d = await describe(page);
      const h = d.heatmaps.find((x) => x.id === 'main');
      const shot = await screenshot(page, `same-but-weights-${i + 1}.png`);
      checkHeatmapPixels(`weights ${i + 1} of 2 (same tokens, shape and range)`, d, h, shot.png);
    }

    // The per-row scale divides by each row's maximum, which the renderer takes in its read-only pass
    // over the weights (core/row_scan) and uploads beside them; the log scale maps through the range.
    for (const scale of ['row', 'log', 'global']) {
      await cmd(page, `scale ${scale}`);
      await frames(page, 4);
      d = await describe(page);
      const h = d.heatmaps.find((x) => x.id === 'main');
      const shot = await screenshot(page, `scale-${scale}.png`);
      check(`scale ${scale} is described`, d.scale === scale, String(d.scale));
      checkHeatmapPixels(`scale ${scale}`, d, h, shot.png);
    }

    // Half-float textures (render/heatmap_renderer.h): each row is scaled by its own power of two, so
    // rows a million apart in magnitude keep 11 bits each. Raw halves would saturate row 0 (> 65504)
    // and round row 1 to multiples of 6e-8 (t 0.24 instead of 0.25); one scale for the whole map
    // would leave row 1 all zeros.
    await page.evaluate(() => { window.__textures.length = 0; });
    const wide = [[1e6, 5e5, 2.5e5, 0], [4e-7, 2e-7, 1e-7, 3e-8], [0.25, 0.5, 0.125, 0.125]];
    await page.evaluate((w) => window.attnviz.load({ source_tokens: ['a', 'b', 'c', 'd'], target_tokens: ['x', 'y', 'z'],
      weights: w }), wide);
    await cmd(page, 'numbers off');
    await cmd(page, 'step 3');
    for (const scale of ['row', 'global']) {
      await cmd(page, `scale ${scale}`);
      await frames(page, 4);
      d = await describe(page);
      const h = d.heatmaps.find((x) => x.id === 'main');
      const shot = await screenshot(page, `half-rows-${scale}.png`);
      check(`wide-range weights opened (${scale})`, h && h.rows === 3 && h.cols === 4);
      checkHeatmapPixels(`weights 1e-7 to 1e6, scale ${scale}`, d, h, shot.png, 1, 0.01);
    }
    const tex = await page.evaluate(() => window.__textures.filter((t) => t[3] === 4));
    const gl = { R16F: 0x822D, HALF_FLOAT: 0x140B };
    check('the 3 x 4 map went to the GPU as an R16F texture of halves', tex.length >= 2 &&
      tex.some((t) => t[0] === 'image' && t[1] === gl.R16F && t[4] === 3) && tex.every((t) => t[2] === gl.HALF_FLOAT),
      JSON.stringify(tex));
    check('its 3 rows were sent as halves, 2 bytes a cell', tex.some((t) => t[0] === 'sub' && t[2] === gl.HALF_FLOAT &&
      t[4] === 3), JSON.stringify(tex));

    // The theme follows the reader's colour scheme, until they pick one in View > Light theme.
    const theme = () => page.evaluate(() => window.attnviz.describe().theme);
    await page.emulateMedia({ colorScheme: 'light' });
    await frames(page, 3);
    const followed = await theme();
    const click = async (x, y) => { await page.mouse.move(x, y); await frames(page, 3); await page.mouse.click(x, y); await frames(page, 3); };
    await click(145, 10);   // View
    await click(170, 231);  // Light theme (ticked: unticks it)
    const picked = await theme();
    await page.emulateMedia({ colorScheme: 'dark' });
    await frames(page, 3);
    await page.emulateMedia({ colorScheme: 'light' });
    await frames(page, 3);
    const keptTheme = await theme();
    check('the theme follows the colour scheme until the reader picks one in the View menu',
      followed === 'light' && picked === 'dark' && keptTheme === 'dark', `${followed} ${picked} ${keptTheme}`);

    check('no console errors', errors.length === 0, errors.slice(0, 3).join(' | '));
  } finally {
    await app.close();
  }
}

main().then(() => process.exit(summary()), (e) => { console.error(e); summary(); process.exit(1); });
