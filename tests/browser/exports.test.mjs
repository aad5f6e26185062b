// Exports in the browser, each read back: PNG at 1x and 2x (cells invert through the colormap to
// the weights), GIF (frame count, size, under 2 MB for a 10-step 600x400 figure), WebM (frames and
// duration: each step held stepMs), the File menu / command paths (downloads), the lines view's
// SVG, and bad arguments. Screenshots of the File menu land in build/test-artifacts/.
import fs from 'node:fs';
import { PNG } from 'pngjs';
import { check, checkHeatmapPixels, frames, openApp, screenshot, summary } from './lib.mjs';

const FILE = JSON.parse(fs.readFileSync('tests/cli/data/translation10.json', 'utf8'));

const blobBytes = (page, method, opts) => page.evaluate(async ([m, o]) => {
  const blob = await window.attnviz[m](o);
  return { type: blob.type, bytes: Array.from(new Uint8Array(await blob.arrayBuffer())) };
}, [method, opts]);

// GIF structure without decoding: logical screen size and the image descriptors (0x2C).
function gifInfo(b) {
  const u = Uint8Array.from(b);
  const w = u[6] | (u[7] << 8), h = u[8] | (u[9] << 8);
  let p = 13;
  if (u[10] & 0x80) p += 3 * (1 << ((u[10] & 7) + 1));
  let images = 0;
  const skipBlocks = () => { while (u[p] !== 0) p += u[p] + 1; p++; };
  while (p < u.length && u[p] !== 0x3b) {
    if (u[p] === 0x21) { p += 2; skipBlocks(); continue; }
    if (u[p] !== 0x2c) throw new Error(`bad GIF block 0x${u[p].toString(16)} at ${p}`);
    images++;
    const flags = u[p + 9];
    p += 10;
    if (flags & 0x80) p += 3 * (1 << ((flags & 7) + 1));
    p++;  // LZW minimum code size
    skipBlocks();
  }
  return { width: w, height: h, images, magic: String.fromCharCode(...u.slice(0, 6)) };
}

// WebM (EBML) walk: master elements are entered (their sizes may be "unknown" in a recording),
// others skipped. Returns the video size and each (Simple)Block's time in ms.
function webmInfo(b) {
  const u = Uint8Array.from(b);
  const MASTERS = new Set([0x18538067, 0x1f43b675, 0x1654ae6b, 0xae, 0xe0, 0xa0, 0x1549a966]);
  let p = 0, cluster = 0, scale = 1e6;
  const out = { width: 0, height: 0, times: [] };
  const vint = (keepMarker) => {
    const first = u[p];
    let len = 1;
    while (len <= 8 && !(first & (0x80 >> (len - 1)))) len++;
    let v = keepMarker ? first : first & (0xff >> len);
    for (let i = 1; i < len; i++) v = v * 256 + u[p + i];
    const allOnes = !keepMarker && v === 2 ** (7 * len) - 1;
    p += len;
    return allOnes ? -1 : v;
  };
  const uint = (n) => { let v = 0; for (let i = 0; i < n; i++) v = v * 256 + u[p + i]; return v; };
  while (p < u.length) {
    const id = vint(true), size = vint(false);
    if (MASTERS.has(id)) continue;
    if (size < 0) break;
    if (id === 0xe7) cluster = uint(size);
    else if (id === 0x2ad7b1) scale = uint(size);
    else if (id === 0xb0) out.width = uint(size);
    else if (id === 0xba) out.height = uint(size);
    else if (id === 0xa3 || id === 0xa1) {  // SimpleBlock, or Block inside a BlockGroup
      const save = p;
      vint(false);  // track number
      const rel = (u[p] << 8 | u[p + 1]) << 16 >> 16;
      out.times.push((cluster + rel) * scale / 1e6);
      p = save;
    }
    p += size;
  }
  return out;
}

async function main() {
  const app = await openApp('?embed=1&view=heatmap', { width: 600, height: 400 });
  const { page, errors } = app;
  let code = 1;
  try {
    await page.evaluate((f) => window.attnviz.load(f, 'translation10.json'), FILE);
    await page.evaluate(() => { window.attnviz.command('numbers off'); window.attnviz.command('step 10'); });
    await frames(page, 6);
    const d = await page.evaluate(() => window.attnviz.describe());
    check('the translation opens on its cross set, 10 decoding steps', d.kind === 'cross' && d.timeline.count === 10,
      `${d.kind} ${JSON.stringify(d.timeline)}`);
    const h = d.heatmaps.find((x) => x.id === 'main');
    const [ox, oy] = d.view_rect;
    const shifted = { ...h, rect: [h.rect[0] - ox, h.rect[1] - oy, h.rect[2] - ox, h.rect[3] - oy] };

    // PNG at 1x and 2x: the cells invert to the weights; 2x is twice the size.
    const sizes = {};
    for (const scale of [1, 2]) {
      const r = await blobBytes(page, 'exportPng', { scale });
      const png = PNG.sync.read(Buffer.from(r.bytes));
      sizes[scale] = [png.width, png.height];
      check(`exportPng({scale: ${scale}}) is a PNG of the view`, r.type === 'image/png' && png.width > 100,
        `${r.type} ${png.width}x${png.height}`);
      checkHeatmapPixels(`PNG ${scale}x`, d, shifted, png, scale, 0.02);
      fs.mkdirSync('build/test-artifacts', { recursive: true });
      fs.writeFileSync(`build/test-artifacts/export-${scale}x.png`, Buffer.from(r.bytes));
    }
    const [vx0, vy0, vx1, vy1] = d.view_rect;
    const bar = h.colorbar || [0, 0, 0, 0];
    check('the PNG is the figure: the labels, the matrix and its colour bar, not the controls above or the space beside',
      bar[0] > h.rect[2] && vx1 - bar[2] >= 20 && vx1 - bar[2] <= 80 && vy1 - h.rect[3] <= 8 && vy0 > 30 &&
      h.rect[1] - vy0 > 10 &&
      Math.abs(sizes[1][0] - (vx1 - vx0)) <= 2 && Math.abs(sizes[1][1] - (vy1 - vy0)) <= 2,
      `view_rect ${d.view_rect.map(Math.round)}, matrix ${h.rect.map(Math.round)}, PNG ${sizes[1]}`);
    // The colour bar in the 2x PNG: the colormap's top (white in greys) down to its bottom (black),
    // its luma never rising on the way down, and its numbers (ink) beside it.
    {
      const png = PNG.sync.read(Buffer.from((await blobBytes(page, 'exportPng', { scale: 2 })).bytes));
      const luma = (x, y) => { const i = (y * png.width + x) * 4; return 0.299 * png.data[i] + 0.587 * png.data[i + 1] + 0.114 * png.data[i + 2]; };
      const bx = Math.round(((bar[0] + bar[2]) / 2 - vx0) * 2);
      const ys = [];
      for (let k = 1; k < 20; ++k) ys.push(Math.round((bar[1] + (bar[3] - bar[1]) * k / 20 - vy0) * 2));
      const lumas = ys.map((y) => luma(bx, y));
      const falling = lumas.every((l, i) => i === 0 || l <= lumas[i - 1] + 1);
      let ink = 0;
      const tx0 = Math.round((bar[2] + 8 - vx0) * 2), tx1 = Math.min(png.width - 1, Math.round((vx1 - vx0) * 2) - 2);
      for (let y = Math.round((bar[1] - vy0) * 2); y < Math.round((bar[3] - vy0) * 2); ++y)
        for (let x = tx0; x < tx1; ++x) if (luma(x, y) > 150) ++ink;
      check('the 2x PNG carries the colour bar: white at the top, black at the bottom, its numbers beside it',
        bar[2] > bar[0] && lumas[0] > 230 && lumas[lumas.length - 1] < 25 && falling && ink > 30,
        `bar ${bar.map(Math.round)}, luma ${lumas.map(Math.round)}, ink ${ink}`);
    }
    check('the 2x PNG is twice as large', Math.abs(sizes[2][0] - 2 * sizes[1][0]) <= 2 &&
      Math.abs(sizes[2][1] - 2 * sizes[1][1]) <= 2, JSON.stringify(sizes));
    const after = await page.evaluate(() => window.attnviz.describe());
    check('the canvas returns to its own resolution after a 2x export',
      await page.evaluate(() => window.attnviz.canvas.width) === 600, String(after.view_rect));

    // GIF: one frame per decoding step, the view's size, <= 2 MB.
    const g = await blobBytes(page, 'exportGif', { stepMs: 100 });
    const gi = gifInfo(g.bytes);
    fs.writeFileSync('build/test-artifacts/export.gif', Buffer.from(g.bytes));
    check('exportGif: a GIF89a with one frame per decoding step', g.type === 'image/gif' && gi.magic === 'GIF89a' &&
      gi.images === 10, `${gi.magic} ${gi.images} frames`);
    check('exportGif: the size of the 1x PNG', gi.width === sizes[1][0] && gi.height === sizes[1][1],
      `${gi.width}x${gi.height} vs ${sizes[1]}`);
    check('exportGif: a 10-step 600x400 figure is under 2 MB', g.bytes.length <= 2 * 1024 * 1024, `${g.bytes.length} bytes`);
    const back = await page.evaluate(() => window.attnviz.describe().timeline.step);
    check('the step shown before the export is restored', back === 10, String(back));

    // WebM: each of the 10 steps held 250 ms: the last frame (the end of the last step) at 2.5 s.
    const v = await blobBytes(page, 'exportWebm', { stepMs: 250 });
    const wi = webmInfo(v.bytes);
    fs.writeFileSync('build/test-artifacts/export.webm', Buffer.from(v.bytes));
    const last = wi.times.length ? wi.times[wi.times.length - 1] : -1;
    check('exportWebm: a WebM of the view\'s size', v.type === 'video/webm' && wi.width === sizes[1][0] &&
      wi.height === sizes[1][1], `${v.type} ${wi.width}x${wi.height}`);
    check('exportWebm: 11 frames (10 steps and the end)', wi.times.length === 11, `${wi.times.length}: ${wi.times}`);
    check('exportWebm: 2.5 s long, each step 250 ms', Math.abs(last - 2500) <= 60 &&
      wi.times.slice(1).every((t, i) => Math.abs(t - wi.times[i] - 250) <= 60), wi.times.join(' '));

    // The mouse over a cell highlights its row and column (yellow) on screen; a PNG is the figure
    // without them, and without the tooltip.
    const yellow = (png) => {
      let n = 0;
      for (let i = 0; i < png.data.length; i += 4)
        n += png.data[i] > 230 && png.data[i + 1] > 170 && png.data[i + 1] < 220 && png.data[i + 2] < 40;
      return n;
    };
    await page.mouse.move((h.rect[0] + h.rect[2]) / 2, (h.rect[1] + h.rect[3]) / 2);
    await frames(page, 4);
    const onScreen = yellow(PNG.sync.read(await page.screenshot()));
    const hovered = PNG.sync.read(Buffer.from((await blobBytes(page, 'exportPng', { scale: 1 })).bytes));
    check('a PNG taken with the mouse over a cell has no hover highlight', onScreen > 100 && yellow(hovered) === 0,
      `${onScreen} highlight pixels on screen, ${yellow(hovered)} in the PNG`);
    await page.mouse.move(1, 1);
    await frames(page, 2);

    // Turned column labels are whole in a PNG, up to the matrix's last column: the export's frame
    // draws at a new scale, its labels were culled before the turn, and the rasteriser left most of
    // them to later frames ("was" came out as "wa", the last columns' labels not at all).
    // 26 columns: more than the rasteriser's 24 labels a frame.
    const words = ['agreement', 'European', 'Economic', 'signature', 'August', 'nineteen', 'ninety', 'country',
      'treaty', 'history', 'between', 'members', 'against', 'finally', 'Brussels', 'council', 'minister',
      'market', 'trade', 'parties', 'customs', 'tariffs', 'workers', 'capital', 'services', 'goods'];
    const sent = ['accord', 'signé', 'août', 'traité', 'enfin'];
    const w5 = sent.map((_, i) => words.map((__, j) => (j === i ? 0.5 : 0.5 / 25)));
    await page.evaluate((f) => window.attnviz.load(f, 'long-labels.json'),
      { source_tokens: words, target_tokens: sent, weights: w5 });
    await frames(page, 4);
    const dl2 = await page.evaluate(() => window.attnviz.describe());
    const hl = dl2.heatmaps.find((x) => x.id === 'main');
    const cols = hl.labels.boxes.filter((b) => b[0] === 1 && b[6] === 1);
    const lp = PNG.sync.read(Buffer.from((await blobBytes(page, 'exportPng', { scale: 2 })).bytes));
    fs.writeFileSync('build/test-artifacts/export-turned-labels-2x.png', PNG.sync.write(lp));
    // Ink in the top half of each label's box (where a label reading upwards ends).
    const inkAtEnd = cols.map((b) => {
      let n = 0;
      const x0 = Math.round((b[2] - dl2.view_rect[0]) * 2), x1 = Math.round((b[4] - dl2.view_rect[0]) * 2);
      const y0 = Math.round((b[3] - dl2.view_rect[1]) * 2), y1 = Math.round(y0 + (b[5] - b[3]) * 0.5);
      for (let y = Math.max(0, y0); y < Math.min(lp.height, y1); y++)
        for (let x = Math.max(0, x0); x < Math.min(lp.width, x1); x++) n += lp.data[(y * lp.width + x) * 4] > 120;
      return n;
    });
    check('a 2x PNG has every turned column label whole, to its end', cols.length === words.length &&
      inkAtEnd.every((n) => n > 20), `${cols.length} turned labels, ink at their ends ${inkAtEnd}`);
    await page.evaluate((f) => window.attnviz.load(f, 'translation10.json'), FILE);
    await page.evaluate(() => window.attnviz.command('step 10'));
    await frames(page, 4);

    // Bad arguments are refused with a reason.
    const bad = await page.evaluate(async () => {
      const out = [];
      for (const f of [() => window.attnviz.exportPng({ scale: 9 }), () => window.attnviz.exportGif({ stepMs: 1 })])
        out.push(await f().then(() => 'resolved', (e) => e.message));
      out.push(window.attnviz.command('save-png 0.5'), window.attnviz.command('save-webm 5'));
      return out;
    });
    check('bad scales and step times are refused with a reason', /between 1 and 4/.test(bad[0]) &&
      /stepMs/.test(bad[1]) && /between 1 and 4/.test(bad[2]) && /20\.\.60000/.test(bad[3]), JSON.stringify(bad));

    // The commands behind the File menu download files.
    for (const [cmd, re] of [['save-png 2', /@2x\.png$/], ['save-gif 50', /\.gif$/]]) {
      const dl = page.waitForEvent('download', { timeout: 60000 });
      await page.evaluate((c) => window.attnviz.command(c), cmd);
      const name = (await dl).suggestedFilename();
      check(`${cmd} downloads ${name}`, re.test(name));
    }
    // A head's PNG is named after its layer and head, so that each head's figure has its own file (a
    // file of several heads opens on the grid, whose PNG shows them all: the heatmap shows one).
    const h2 = [[0.5, 0.5], [0.25, 0.75]];
    await page.evaluate((f) => window.attnviz.load(f, 'two-heads.json'), { tokens: ['a', 'b'], layers: [{ heads: [h2, h2] }] });
    await page.evaluate(() => { window.attnviz.command('view heatmap'); window.attnviz.command('layer-head 0 1'); });
    await frames(page, 3);
    const dlHead = page.waitForEvent('download', { timeout: 60000 });
    await page.evaluate(() => window.attnviz.command('save-png 2'));
    const headName = (await dlHead).suggestedFilename();
    check(`a head's PNG says which head it is: ${headName}`, headName === 'attnviz-two-heads-layer0-head1@2x.png');
    // So does the Lines view's (it had no head in its name: two heads' figures overwrote each other).
    await page.evaluate(() => window.attnviz.command('view lines'));
    await frames(page, 3);
    const dlLines = page.waitForEvent('download', { timeout: 60000 });
    await page.evaluate(() => window.attnviz.command('save-png 2'));
    const linesName = (await dlLines).suggestedFilename();
    check(`the lines' PNG says which head it is: ${linesName}`, linesName === 'attnviz-two-heads-layer0-head1@2x.png');
    // The grid's PNG is every head, however far the grid was scrolled: 12 x 12 heads at 600 x 400
    // (a screen shows a few rows) come out as 12 rows of 12 thumbnails, without the selection's outline,
    // and the grid keeps its scroll.
    const flat = [[0.25, 0.25, 0.25, 0.25], [0.25, 0.25, 0.25, 0.25], [0.25, 0.25, 0.25, 0.25], [0.25, 0.25, 0.25, 0.25]];
    const layers12 = Array.from({ length: 12 }, () => ({ heads: Array.from({ length: 12 }, () => flat) }));
    await page.evaluate((f) => window.attnviz.load(f, 'heads144.json'), { tokens: ['a', 'b', 'c', 'd'], layers: layers12 });
    await page.evaluate(() => { window.attnviz.command('view grid'); window.attnviz.command('map 140'); });
    await frames(page, 4);
    await page.evaluate(() => window.attnviz.canvas.focus());  // the wheel scrolls a focused viewer
    await page.mouse.move(300, 250);
    for (let k = 0; k < 6; ++k) { await page.mouse.wheel(0, 120); await frames(page, 2); }
    const thumbsShown = (d) => d.heatmaps.map((x) => x.id).sort().join();
    const gridBefore = await page.evaluate(() => window.attnviz.describe());
    const gp = PNG.sync.read(Buffer.from((await blobBytes(page, 'exportPng', { scale: 1 })).bytes));
    fs.writeFileSync('build/test-artifacts/export-grid-144.png', PNG.sync.write(gp));
    const px = (x, y) => { const i = (y * gp.width + x) * 4; return [gp.data[i], gp.data[i + 1], gp.data[i + 2]]; };
    let bands = 0, inBand = false, outline = 0;
    for (let y = 0; y < gp.height; ++y) {
      let runs = 0, white = false;
      for (let x = 0; x < gp.width; ++x) {
        const [r, g, b] = px(x, y);
        const w = r > 240 && g > 240 && b > 240;
        if (w && !white) runs++;
        white = w;
        if (r < 100 && g > 180 && b > 235) outline++;
      }
      if (runs === 12 && !inBand) bands++;
      inBand = runs === 12;
    }
    await frames(page, 3);
    const gridAfter = await page.evaluate(() => window.attnviz.describe());
    check('the grid\'s PNG shows all 12 x 12 heads, scrolled or not, and no selection outline',
      gridBefore.grid.drawn < 144 && !thumbsShown(gridBefore).split(',').includes('thumb0') && bands === 12 &&
      outline === 0 && gp.height <= 400,
      `${gridBefore.grid.drawn} on screen; PNG ${gp.width}x${gp.height}: ${bands} rows of 12 white thumbnails, ${outline} outline pixels`);
    check('after the export the grid is still scrolled where it was', thumbsShown(gridAfter) === thumbsShown(gridBefore),
      `${thumbsShown(gridBefore)} | ${thumbsShown(gridAfter)}`);
    await page.evaluate((f) => window.attnviz.load(f, 'translation10.json'), FILE);
    await page.evaluate(() => window.attnviz.command('step 10'));
    await frames(page, 4);
    // The lines view saves its own SVG.
    await page.evaluate(() => window.attnviz.command('view lines'));
    await frames(page, 4);
    const dl = page.waitForEvent('download', { timeout: 30000 });
    await page.evaluate(() => window.attnviz.command('save-svg'));
    const svgFile = await (await dl).path();
    const svg = fs.readFileSync(svgFile, 'utf8');
    check('save-svg in the lines view writes the lines', /-lines\.svg$/.test((await dl).suggestedFilename()) &&
      (svg.match(/<line /g) || []).length > 10 && svg.includes('chat'), `${(svg.match(/<line /g) || []).length} lines`);
    // The steps view shows a file's own q and k as the product per dimension.
    const qk = { version: 2, sets: [{ name: 'enc', query_tokens: ['a', 'b'], key_tokens: ['x', 'y', 'z'],
      layers: [{ heads: [{ name: 'h0', weights: [[0.5, 0.25, 0.25], [0.2, 0.3, 0.5]],
        q: [[1, 0, 2, 0.3], [0.5, -1, 0, 1]], k: [[1, 1, 1, 0], [0, 2, -1, 1], [3, 0, 0.5, 0]] }] }] }] };
    await page.setViewportSize({ width: 900, height: 400 });
    await page.evaluate((f) => window.attnviz.load(f, 'qk.json'), qk);
    await page.evaluate(() => window.attnviz.command('view steps'));
    await frames(page, 6);
    const st = await page.evaluate(() => window.attnviz.describe().steps.qk);
    check('steps: q ∘ k of the file\'s own q and k, summing to q·k', st.source === 'file' && st.dims === 4 &&
      [3, -1.7, 4].every((v, j) => Math.abs(st.sums[j] - v) < 1e-5), JSON.stringify(st.sums));
    await screenshot(page, 'steps-neuron-file.png');
    check('no console errors', errors.length === 0, errors.join(' | '));
  } finally {
    await app.close();
  }
  // The File menu of the full app, for a person to look at.
  const full = await openApp('?view=heatmap', { width: 1100, height: 640 });
  try {
    await frames(full.page, 4);
    await full.page.mouse.click(20, 10);
    await frames(full.page, 4);
    await screenshot(full.page, 'exports-file-menu.png');
  } finally {
    await full.close();
  }
  code = summary();
  process.exit(code);
}

main().catch((e) => { console.error(e); process.exit(1); });
