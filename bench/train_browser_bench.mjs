// Live training in the browser (headless Chromium): the Train tab's run in its Web Worker, from
// Start until the held-out exact match reaches 95% (or TRAIN_BENCH_MAX_S, default 300 s, passes).
// Prints the wall time against the worker's own compute time (Trainer::seconds, the single-thread
// training time) as a ratio measured in the same run, and the UI's frame CPU times meanwhile.
// As a person does: the Train tab opens (the view prepares the run: the worker starts, the epoch-0
// probe is drawn), it is looked at for TRAIN_BENCH_READ_S (default 2 s), then Train is pressed. The
// frames of the preparation are reported on their own line.
import { openApp } from '../tests/browser/lib.mjs';

const maxS = Number(process.env.TRAIN_BENCH_MAX_S || 300);
const readS = Number(process.env.TRAIN_BENCH_READ_S ?? 2);
const kind = process.argv[2] || 'bahdanau';
const app = await openApp('?view=train');
try {
  const { page } = app;
  const startSampling = () => page.evaluate(() => {
    window.frameMs = [];
    window.frameAt = [];
    if (window.sampling) return;
    window.sampling = true;
    // One sample per frame drawn: the viewer draws only when something changes, and a frame read
    // on several animation frames counted several times (three samples of one 20.7 ms frame).
    let seen = -1;
    const tick = () => {
      const n = window.attnviz.frameCount();
      if (n !== seen) {
        seen = n;
        window.frameMs.push(window.attnviz.frameCpuMs());
        window.frameAt.push(performance.now());
      }
      requestAnimationFrame(tick);
    };
    tick();
  });
  await startSampling();
  await page.evaluate((k) => window.attnviz.command(`train ${k}`), kind);
  const p0 = Date.now();
  await page.waitForFunction(() => { const t = window.attnviz.describe().train; return t.prepared && t.probes >= 1; },
    null, { timeout: 60000 });
  const probeS = (Date.now() - p0) / 1000;
  await page.waitForTimeout(readS * 1000);
  const prep = (await page.evaluate(() => window.frameMs)).slice().sort((a, b) => a - b);
  console.log(`train_browser_prepare model=${kind} epoch0_probe_s=${probeS.toFixed(2)} read_s=${readS} frames=${prep.length} ` +
    `cpu_ms_max=${prep.length ? prep[prep.length - 1].toFixed(2) : 'none'}`);
  await startSampling();
  await page.evaluate(() => window.attnviz.command('train start'));
  const t0 = Date.now();
  let d;
  const epochAt = [];  // page time at which each new epoch was first seen (the poll's resolution)
  for (;;) {
    await page.waitForTimeout(250);
    const now = await page.evaluate(() => [window.attnviz.describe().train, performance.now()]);
    if (d && now[0].epoch !== d.epoch) epochAt.push(now[1]);
    d = now[0];
    if (d.exact_match >= 0.95 || (Date.now() - t0) / 1000 > maxS) break;
  }
  const wall = (Date.now() - t0) / 1000;
  const [raw, at] = await page.evaluate(() => [window.frameMs, window.frameAt]);
  const ms = raw.slice().sort((a, b) => a - b);
  // The slowest frames, and how far each was from the nearest epoch end (a model read back and
  // published at the UI thread): tells an epoch-end cost from machine noise.
  const slow = raw.map((v, i) => [v, at[i]]).sort((a, b) => b[0] - a[0]).slice(0, 3).map(([v, t]) => {
    const near = epochAt.length ? Math.min(...epochAt.map((e) => Math.abs(e - t))) : Infinity;
    return `${v.toFixed(1)}ms@${(near / 1000).toFixed(2)}s_from_epoch_end`;
  });
  const q = (f) => ms[Math.min(ms.length - 1, Math.floor(ms.length * f))].toFixed(2);
  console.log(`train_browser model=${kind} where=${d.where} epochs=${d.epoch} exact_match=${d.exact_match.toFixed(3)} ` +
    `reached=${d.exact_match >= 0.95 ? 'yes' : 'no'} wall_s=${wall.toFixed(1)} compute_s=${d.seconds.toFixed(1)} ` +
    `wall_over_compute=${(wall / d.seconds).toFixed(3)} target=1.25`);
  console.log(`train_browser_frames frames=${ms.length} cpu_ms_median=${q(0.5)} p95=${q(0.95)} max=${q(1)} target_max=16 slowest=${slow.join(',')}`);
} finally {
  await app.close();
}
