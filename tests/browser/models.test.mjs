// The translation model in the browser: the page opens on Translate with the pretrained
// Bahdanau model, the alignment fills in row by row, unknown words are flagged, and a fresh
// model trains live (loss falls, epochs complete) while the page keeps drawing.
import fs from 'node:fs';
import path from 'node:path';
import { openApp, frames, screenshot, check, summary, checkHeatmapPixels } from './lib.mjs';

const cmd = (page, c) => page.evaluate((x) => window.attnviz.command(x), c);
const describe = (page) => page.evaluate(() => window.attnviz.describe());

async function main() {
  const app = await openApp('');
  const { page, errors } = app;
  try {
    let d = await describe(page);
    check('the page opens on the Translate tab', d.view === 'translate', d.view);
    check('pretrained models are embedded', d.translate.models >= 3, String(d.translate.models));
    await page.waitForFunction(() => window.attnviz.describe().translate.emitted >= 5, null, { timeout: 30000 });
    d = await describe(page);
    check('"the european economic area" -> "la zone économique européenne"', d.translate.output === 'la zone économique européenne',
      d.translate.output);
    // Anti-diagonal: économique <- economic, européenne <- european.
    const h = d.heatmaps.find((x) => x.id === 'translation');
    const w = (r, c) => h.weights[r * h.cols + c];
    check('alignment: économique attends to economic', w(2, 2) > 0.5, w(2, 2).toFixed(3));
    check('alignment: européenne attends to european', w(3, 1) > 0.5, w(3, 1).toFixed(3));
    await cmd(page, 'numbers off');
    await frames(page, 3);
    const shot = await screenshot(page, 'translate.png');
    checkHeatmapPixels('translate heatmap', d, h, shot.png);
    await cmd(page, 'numbers on');

    // Word by word: right after Translate, fewer rows are shown than at the end.
    // Word by word: the command restarts the animation from no word emitted (checked in the
    // same task, before any frame could advance it), then words appear one by one.
    const started = await page.evaluate(() => {
      const err = window.attnviz.command('translate the green cars');
      return { err, emitted: window.attnviz.describe().translate.emitted };
    });
    check('translate command', started.err === '');
    check('decoding starts from the first word', started.emitted === 0, `emitted=${started.emitted}`);
    await page.waitForFunction(() => window.attnviz.describe().translate.emitted >= 3, null, { timeout: 30000 });
    d = await describe(page);
    check('"the green cars" is translated', d.translate.output.length > 0 && d.translate.ok, d.translate.output);
    const greenCars = d.translate.output;

    // Unknown words are flagged (with suggestions in the UI), not a crash.
    check('unknown word is accepted', (await cmd(page, 'translate the europian area')) === '');
    await frames(page, 3);
    d = await describe(page);
    check('unknown word is flagged', d.translate.unknown === 1, String(d.translate.unknown));
    const s2 = await screenshot(page, 'translate-unknown.png');
    if (process.env.ATTNVIZ_DOCS_DIR) fs.copyFileSync(s2.file, path.join(process.env.ATTNVIZ_DOCS_DIR, 'view-translate-unknown.png'));

    // A sentence typed as a student types it: click the box, select all, type, Enter. Space is a
    // shortcut (play / pause) outside text boxes; inside one it must stay a space.
    const box = d.translate.input_rect;
    check('describe() gives the sentence box', box[2] > box[0] && box[3] > box[1], JSON.stringify(box));
    await page.mouse.click((box[0] + box[2]) / 2, (box[1] + box[3]) / 2);
    // as a person waits for the caret: the box has the keyboard a frame or two after the click
    await page.waitForFunction(() => window.attnviz.describe().text_input, null, { timeout: 5000 }).catch(() => {});
    await page.keyboard.press('Control+A');
    await page.keyboard.type('the green cars', { delay: 15 });
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => window.attnviz.describe().translate.input === 'the green cars', null, { timeout: 15000 })
      .catch(() => {});
    await page.waitForFunction((o) => window.attnviz.describe().translate.output === o, greenCars, { timeout: 30000 }).catch(() => {});
    d = await describe(page);
    check('a typed sentence keeps its spaces', d.translate.input === 'the green cars', JSON.stringify(d.translate.input));
    check('a typed sentence is translated as the command translates it', d.translate.output === greenCars && d.translate.unknown === 0,
      `${d.translate.output} vs ${greenCars}`);

    // Copy and paste reach the system clipboard: a sentence copied from a paper pastes into the box
    // (Ctrl+V), and Ctrl+C in the box copies out (Emscripten's GLFW has no clipboard: both did nothing).
    // Each shortcut gets viewer frames of its own (imgui 1.86 takes one editing shortcut a frame).
    const settle = async () => {
      const f0 = await page.evaluate(() => window.attnviz.describe().frame);
      await page.waitForFunction((f) => window.attnviz.describe().frame >= f + 2, f0, { timeout: 10000 }).catch(() => {});
    };
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
    const paper = 'The agreement on the European Economic Area was signed in August 1992.';
    await page.evaluate((t) => navigator.clipboard.writeText(t), paper);
    await page.mouse.click((box[0] + box[2]) / 2, (box[1] + box[3]) / 2);
    await page.waitForFunction(() => window.attnviz.describe().text_input, null, { timeout: 5000 }).catch(() => {});
    await page.keyboard.press('Control+A');
    await settle();
    await page.keyboard.press('Control+V');
    await settle();
    await page.keyboard.press('Enter');  // translates, and the box lets go of the keyboard
    await page.waitForFunction((t) => { const d = window.attnviz.describe(); return !d.text_input && d.translate.input === t; },
      paper, { timeout: 15000 }).catch(() => {});
    await settle();
    d = await describe(page);
    check('the pointer over the sentence box is an I-beam', (await page.evaluate(() => window.attnviz.canvas.style.cursor)) === 'text',
      await page.evaluate(() => window.attnviz.canvas.style.cursor));
    check('Ctrl+V pastes the clipboard into the sentence box', d.translate.input === paper, JSON.stringify(d.translate.input));
    await page.evaluate(() => navigator.clipboard.writeText('nothing yet'));
    await page.mouse.click((box[0] + box[2]) / 2, (box[1] + box[3]) / 2);
    await page.waitForFunction(() => window.attnviz.describe().text_input, null, { timeout: 5000 }).catch(() => {});
    check('a click in the box gives it the keyboard', (await describe(page)).text_input === true);
    await page.keyboard.press('Control+A');
    await settle();
    await page.keyboard.press('Control+C');
    let copied = '';
    for (let i = 0; i < 30 && copied !== paper; ++i) {  // written in the frame after the key, asynchronously
      await page.waitForTimeout(100);
      copied = await page.evaluate(() => navigator.clipboard.readText());
    }
    check('Ctrl+C copies the box to the clipboard', copied === paper, JSON.stringify(copied));

    // Figure 3(a) of Bahdanau et al.: played word by word, then the final matrix pixel-checked, with the gold beside it.
    check('figure a', (await cmd(page, 'figure a')) === '');
    await page.waitForFunction(() => {
      const t = window.attnviz.describe().translate;
      return t.figure === 'a' && t.figure_exact !== undefined && t.emitted >= t.output.split(' ').length;
    }, null, { timeout: 60000 });
    await cmd(page, 'numbers off');
    await cmd(page, 'pause');
    await frames(page, 4);
    d = await describe(page);
    check('figure (a) is translated as the paper prints it', d.translate.figure_exact === true, d.translate.output);
    const fa = d.heatmaps.find((x) => x.id === 'translation');
    const shotA = await screenshot(page, 'figure-a.png');
    if (process.env.ATTNVIZ_DOCS_DIR) fs.copyFileSync(shotA.file, path.join(process.env.ATTNVIZ_DOCS_DIR, 'screenshot.png'));
    checkHeatmapPixels('figure (a) alignment', d, fa, shotA.png);
    const gold = d.heatmaps.find((x) => x.id === 'gold');
    check('the gold alignment is drawn beside it', !!gold && gold.cols === fa.cols);
    // The reversed "zone économique européenne" block: économique <- economic, européenne <- european.
    const src = 'the agreement on the european economic area was signed in august 1992 .'.split(' ');
    const tgt = d.translate.output.split(' ');
    const wa = (r, c) => fa.weights[r * fa.cols + c];
    const row = (word) => tgt.indexOf(word), col = (word) => src.indexOf(word);
    check('économique attends to economic', wa(row('économique'), col('economic')) > 0.4,
      String(wa(row('économique'), col('economic'))));
    check('européenne attends to european', wa(row('européenne'), col('european')) > 0.4,
      String(wa(row('européenne'), col('european'))));
    await cmd(page, 'numbers on');

    // Train: opening the tab prepares a run in the worker (paused, its epoch-0 probe drawn); Train
    // starts that run; a fresh model learns in a Web Worker while the page draws; frames stay short.
    await cmd(page, 'view train');
    await page.waitForFunction(() => { const t = window.attnviz.describe().train; return t.prepared && t.probes >= 1; },
      null, { timeout: 60000 });
    await page.waitForFunction(() => (window.attnviz.describe().heatmaps || []).some((h) => h.id === 'probe' && h.rows > 0),
      null, { timeout: 10000 }).catch(() => {});
    d = await describe(page);
    const probeMap = (d.heatmaps || []).find((h) => h.id === 'probe');
    check('the Train tab shows the untrained model\'s epoch-0 probe before Train is pressed',
      d.train.prepared && !d.train.running && d.train.probes === 1 && d.train.batches === 0 && !!probeMap && probeMap.rows > 0,
      JSON.stringify({ prepared: d.train.prepared, running: d.train.running, probes: d.train.probes, batches: d.train.batches, probe: !!probeMap }));
    await page.waitForTimeout(600);
    check('a prepared run trains nothing', (await describe(page)).train.batches === 0);
    check('train start', (await cmd(page, 'train start')) === '');
    d = await describe(page);
    check('train start starts the prepared run', !d.train.prepared && d.train.running, JSON.stringify(d.train).slice(0, 200));
    const t0 = Date.now();
    const frameCount = () => page.evaluate(() => window.attnviz.describe().frame);
    const f0 = await frameCount();
    // The worst frame's CPU time while training (the page's own work; SwiftShader's GPU time aside).
    await page.evaluate(() => {
      window.frameMs = [];  // one sample per frame drawn (frameCount moved), not per animation frame
      let seen = -1;
      const tick = () => {
        const n = window.attnviz.frameCount();
        if (n !== seen) seen = n, window.frameMs.push(window.attnviz.frameCpuMs());
        window.frameTick = requestAnimationFrame(tick);
      };
      tick();
    });
    // At least 60 frames: the 95th percentile of 20 was their slowest (CI of be44678: one frame of 21.6
    // ms among 19 of 0.5 ms median, on a machine running another browser test beside it).
    await page.waitForFunction(() => (window.attnviz.describe().train.batches || 0) >= 100 && window.frameMs.length >= 60,
      null, { timeout: 240000 });
    const secs = (Date.now() - t0) / 1000;
    const f1 = await frameCount();
    const counted = await page.evaluate(() => [window.attnviz.frameCount(), window.attnviz.describe().frame]);
    check('frameCount() is the frame describe() reports', counted[0] === counted[1], counted.join(' vs '));
    d = await describe(page);
    check('training runs in a Web Worker', d.train.where === 'worker' && d.train.runner_error === '',
      `${d.train.where} ${d.train.runner_error}`);
    check('training runs batches', d.train.batches >= 100, `${d.train.batches} batches in ${secs.toFixed(1)} s`);
    check('the page keeps drawing while training', f1 - f0 > 10, `${f1 - f0} frames in ${secs.toFixed(1)} s (SwiftShader)`);
    const ms = (await page.evaluate(() => { cancelAnimationFrame(window.frameTick); return window.frameMs; })).sort((a, b) => a - b);
    const p95 = ms[Math.floor(ms.length * 0.95)], worst = ms[ms.length - 1];
    check('UI frames stay short while training (95% of frames <= 16 ms CPU)', p95 <= 16,
      `${ms.length} frames: median ${ms[ms.length >> 1].toFixed(1)}, p95 ${p95.toFixed(1)}, worst ${worst.toFixed(1)} ms CPU`);
    check('training loss is falling', d.train.loss_recent < d.train.loss_first - 0.3,
      `first 10 batches ${d.train.loss_first.toFixed(3)} -> last 10 ${d.train.loss_recent.toFixed(3)}`);
    // Pause is taken within a slice: the batch count then stays put.
    // (Reports already posted may still arrive: wait until the count stood still for 0.4 s, at most
    // 5 s; a worker that kept training never gets there, nor past the 1.2 s after.)
    await cmd(page, 'train pause');
    let paused = -1;
    for (let i = 0, last = -2; i < 12; i++) {
      await page.waitForTimeout(400);
      paused = (await describe(page)).train.batches;
      if (paused === last) break;
      last = paused;
    }
    await page.waitForTimeout(1200);
    const later = (await describe(page)).train.batches;
    check('pause stops the worker', later === paused, `${paused} -> ${later} batches`);
    await cmd(page, 'train resume');
    await page.waitForFunction((p) => window.attnviz.describe().train.batches > p, paused, { timeout: 60000 });
    check('resume goes on', true);
    const s3 = await screenshot(page, 'train.png');
    if (process.env.ATTNVIZ_DOCS_DIR) fs.copyFileSync(s3.file, path.join(process.env.ATTNVIZ_DOCS_DIR, 'view-train.png'));
    check('no console errors', errors.length === 0, errors.slice(0, 3).join(' | '));
  } finally {
    await app.close();
  }
}

main().then(() => process.exit(summary()), (e) => { console.error(e); summary(); process.exit(1); });
