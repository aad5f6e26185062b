// The embed API: a lesson page with three viewers (seed 002 steps, seed 004 heatmap, the
// translation), each its own WASM instance and canvas; keys go only to the focused viewer.
import { openApp, frames, screenshot, check, summary, checkHeatmapPixels } from './lib.mjs';

async function main() {
  const app = await openApp('lesson.html', { height: 900, waitReady: false });
  const { page, errors } = app;
  try {
    await page.waitForFunction(() => window.lessonViewers !== undefined, null, { timeout: 30000 });
    await page.evaluate(() => window.lessonViewers.then((v) => { window.viewers = v; }));
    await page.waitForFunction(() => window.viewers && window.viewers.length === 3, null, { timeout: 60000 });
    const d = await page.evaluate(() => window.viewers.map((v) => v.describe()));
    check('three viewers mounted', d.length === 3);
    check('viewer 1 shows seed 002 step by step', d[0].example === 'seed002' && d[0].view === 'steps', `${d[0].example} ${d[0].view}`);
    check('viewer 1 shows the seed 002 weights', d[0].steps && Math.abs(d[0].steps.weights[3] - 0.8807971) < 1e-4);
    check('viewer 2 shows seed 004', d[1].example === 'seed004' && d[1].view === 'heatmap');
    check('viewer 3 shows the translation', d[2].view === 'translate');
    check('three separate canvases', (await page.$$('canvas')).length === 3);

    // Pixels of viewer 2's heatmap, offset by its canvas position on the page.
    await page.evaluate(() => window.viewers[1].command('numbers off'));
    await page.evaluate(() => window.viewers[1].canvas.scrollIntoView());
    await frames(page, 4);
    const rect = await page.evaluate(() => { const r = window.viewers[1].canvas.getBoundingClientRect(); return [r.left, r.top]; });
    const d2 = await page.evaluate(() => window.viewers[1].describe());
    const h = d2.heatmaps.find((x) => x.id === 'main');
    const shifted = { ...h, rect: [h.rect[0] + rect[0], h.rect[1] + rect[1], h.rect[2] + rect[0], h.rect[3] + rect[1]] };
    const shot = await screenshot(page, 'lesson-seed004.png');
    checkHeatmapPixels('embedded seed 004', d2, shifted, shot.png);

    // Keyboard: only the focused viewer reacts to Space.
    await page.evaluate(() => window.viewers[1].command('step 0'));
    await page.evaluate(() => window.viewers[0].command('step 0'));
    await page.evaluate(() => window.viewers[1].canvas.focus());
    // Pressed and released at once, between two frames: imgui 1.86 samples keys once per frame,
    // and the platform layer's KeyLatch must hold the tap down until a frame has seen it.
    const scrolled = await page.evaluate(() => window.scrollY);
    await page.keyboard.press('Space');
    await page.waitForFunction(() => { const t = window.viewers[1].describe().timeline; return t.step > 0 || t.playing; },
      null, { timeout: 15000 }).catch(() => {});
    await frames(page, 10);
    const after = await page.evaluate(() => window.viewers.map((v) => v.describe().timeline));
    check('Space plays the focused viewer', after[1].step > 0 || after[1].playing, JSON.stringify(after[1]));
    check('an unfocused viewer ignores it', after[0].step === 0 && !after[0].playing, JSON.stringify(after[0]));
    const scrolledAfter = await page.evaluate(() => window.scrollY);
    check('Space does not scroll the page under the focused viewer', scrolledAfter === scrolled, `${scrolled} -> ${scrolledAfter}`);
    check('no console errors', errors.length === 0, errors.slice(0, 3).join(' | '));
  } finally {
    await app.close();
  }
}

main().then(() => process.exit(summary()), (e) => { console.error(e); summary(); process.exit(1); });
