// What a drawn frame costs headless Chromium's software renderer (SwiftShader), the GPU process
// included (docs/PERFORMANCE.md, "Frames"): the page shows a heatmap and draws every frame
// (Module.attnvizDrawEveryFrame) for a few seconds, then is woken every frame with nothing new (frames that
// look like the last are kept). Prints the frames drawn per second and the CPU time per drawn frame of the renderer and
// of the GPU process (from /proc), and, with ATTNVIZ_WEB_APP_B=<another build's app folder>, the same
// for that build, the two alternating in one run (A B B A ...), with ratio lines. The floor, in the same
// run: a bare WebGL2 canvas of the page's size that only clears, every frame (what the compositor and
// the swap cost without any drawing).
// VIEW=grid-lazy: the grid of a lazily read 32 x 32-head safetensors file (1024 heads, 512 tokens, their
// 256 x 256 overviews; a sparse file written for the run, served with Range), measured once every
// thumbnail in view is drawn from its overview.
//   node bench/frame_browser_bench.mjs          (VIEW=grid|lines|...: another view of seed004; heatmap)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { serve } from '../scripts/serve.mjs';
import { write } from '../tests/big/safetensors.mjs';

const ROUNDS = 4, SECONDS = 2;
const VIEW = process.env.VIEW || 'heatmap';
const TICK = 100;  // clock ticks per second of /proc/<pid>/stat (Linux's USER_HZ)

// CPU seconds so far of Chromium's processes of a type (gpu-process, renderer), from /proc.
function cpuOf(type) {
  let ticks = 0;
  for (const pid of fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (!cmd.includes('chrom') || !cmd.includes(`--type=${type}`)) continue;
      const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      ticks += Number(f[11]) + Number(f[12]);  // utime, stime
    } catch { /* gone */ }
  }
  return ticks / TICK;
}

async function measure(page, every) {
  await page.evaluate((e) => {  // the viewer woken every animation frame, as an animation does
    const M = window.attnviz.module;
    M.attnvizDrawEveryFrame = e;
    window.woken = true;
    const tick = () => { if (window.woken) { M.attnvizWake = true; requestAnimationFrame(tick); } };
    requestAnimationFrame(tick);
  }, every);
  await page.waitForTimeout(300);
  const d0 = await page.evaluate(() => window.attnviz.describe());
  const g0 = cpuOf('gpu-process'), r0 = cpuOf('renderer'), t0 = Date.now();
  await page.waitForTimeout(SECONDS * 1000);
  const d1 = await page.evaluate(() => window.attnviz.describe());
  const g1 = cpuOf('gpu-process'), r1 = cpuOf('renderer'), t1 = Date.now();
  const frames = d1.frame - d0.frame, drawn = frames - (d1.frames_kept - d0.frames_kept);
  await page.evaluate(() => { window.attnviz.module.attnvizDrawEveryFrame = false; window.woken = false; });
  await page.waitForTimeout(100);
  return { fps: (frames * 1000) / (t1 - t0), drawn, gpu_ms: ((g1 - g0) * 1000) / Math.max(1, drawn),
    renderer_ms: ((r1 - r0) * 1000) / Math.max(1, drawn), gpu_share: (g1 - g0) / ((t1 - t0) / 1000) };
}

// The floor: a canvas that clears every frame, the frames counted by the page.
const FLOOR_PAGE = `<!doctype html><body style="margin:0"><canvas id=c style="display:block;width:100vw;height:100vh"></canvas><script>
const c = document.getElementById('c'); c.width = innerWidth; c.height = innerHeight;
const gl = c.getContext('webgl2'); window.drawn = 0;
const f = () => { gl.clearColor(0.1, 0.1, (window.drawn++ % 2) * 0.1, 1); gl.clear(gl.COLOR_BUFFER_BIT); requestAnimationFrame(f); };
requestAnimationFrame(f);
</script>`;

async function floor(browser, port) {
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  await page.goto(`http://127.0.0.1:${port}/floor.html`);
  await page.waitForTimeout(500);
  const f0 = await page.evaluate(() => window.drawn), g0 = cpuOf('gpu-process'), t0 = Date.now();
  await page.waitForTimeout(SECONDS * 1000);
  const f1 = await page.evaluate(() => window.drawn), g1 = cpuOf('gpu-process'), t1 = Date.now();
  await page.context().close();
  return { fps: ((f1 - f0) * 1000) / (t1 - t0), gpu_ms: ((g1 - g0) * 1000) / Math.max(1, f1 - f0) };
}

// VIEW=grid-lazy's file: 32 layers x 32 heads of 512 tokens, all holes (the overviews read as zeros:
// the shader's work does not depend on the weights), with stored statistics.
function writeLazyFile(dir) {
  const L = 32, H = 32, N = 512;
  const tokens = Array.from({ length: N }, (_, i) => `w${i}`);
  write(path.join(dir, 'grid.safetensors'), [{ name: 'grid', kind: 'self', tokens, layers: L, heads: H }], () => null, {},
    { screens: false, stats: (s, l, h) => [((l * H + h) * 389 % (L * H)) / 100, 0.5, 0.5, 0, 0.5, 1, 0.5, N] });
}

// Opens url and waits until every thumbnail in view is drawn from its overview.
async function openLazyGrid(page, url) {
  await page.evaluate(async (u) => {
    const v = window.attnviz;
    await v.openUrl(u);
    v.command('view grid');
    const t0 = performance.now();
    for (;;) {
      const d = v.describe();
      if (d.grid && d.grid.drawn > 0 && d.grid.waiting === 0 && d.grid.overviews_shown >= d.grid.drawn) return;
      if (performance.now() - t0 > 60000) throw new Error('grid not filled in: ' + JSON.stringify(d.grid));
      await new Promise((res) => requestAnimationFrame(res));
    }
  }, url);
}

async function main() {
  const dirs = [process.env.ATTNVIZ_WEB_APP || 'build/web/app'];
  if (process.env.ATTNVIZ_WEB_APP_B) dirs.push(process.env.ATTNVIZ_WEB_APP_B);
  const apps = await Promise.all(dirs.map((d) => serve(d, 0)));
  const floorDir = fs.mkdtempSync(path.join(os.tmpdir(), 'attnviz-frame-bench-'));
  fs.writeFileSync(path.join(floorDir, 'floor.html'), FLOOR_PAGE);
  const floorApp = await serve(floorDir, 0);
  let lazyUrl = null, data = null;
  if (VIEW === 'grid-lazy') {
    writeLazyFile(floorDir);
    data = await serve(floorDir, 0, { cors: true });
    lazyUrl = `http://127.0.0.1:${data.address().port}/grid.safetensors`;
  }
  const floors = [];
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--use-angle=swiftshader', '--enable-unsafe-swiftshader', '--disable-quic'],
  });
  const tags = dirs.length > 1 ? ['A', 'B'] : ['A'];
  const out = tags.map(() => ({ every: [], kept: [] }));
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (let k = 0; k < apps.length; k++) {
        const i = round % 2 ? apps.length - 1 - k : k;  // A B B A ...
        const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
        await page.goto(`http://127.0.0.1:${apps[i].address().port}/?example=seed004&view=${lazyUrl ? 'grid' : VIEW}`);
        await page.waitForFunction(() => window.attnviz !== undefined, null, { timeout: 60000 });
        if (lazyUrl) await openLazyGrid(page, lazyUrl);
        await page.waitForTimeout(500);
        // The frame's ImGui draw commands (a build without describe().draw: none given).
        out[i].draw = await page.evaluate(() => JSON.stringify(window.attnviz.describe().draw || null));
        out[i].every.push(await measure(page, true));
        out[i].kept.push(await measure(page, false));
        await page.context().close();
      }
      floors.push(await floor(browser, floorApp.address().port));
    }
  } finally {
    await browser.close();
    for (const a of apps) a.close();
    floorApp.close();
    if (data) data.close();
    fs.rmSync(floorDir, { recursive: true, force: true });
  }
  const med = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
  const f = (x) => x.toFixed(1);
  for (let i = 0; i < apps.length; i++) {
    const e = out[i].every, id = out[i].kept;
    console.log(`frame_browser build=${tags[i]} (${dirs[i]}) view=${VIEW} every_frame_drawn fps=${f(med(e.map((x) => x.fps)))} ` +
      `gpu_process_ms_per_drawn_frame=${f(med(e.map((x) => x.gpu_ms)))} (${e.map((x) => f(x.gpu_ms)).join(',')}) ` +
      `renderer_ms_per_drawn_frame=${f(med(e.map((x) => x.renderer_ms)))} gpu_process_cores=${med(e.map((x) => x.gpu_share)).toFixed(2)} ` +
      `draw=${out[i].draw}`);
    console.log(`frame_browser build=${tags[i]} woken_frames_kept fps=${f(med(id.map((x) => x.fps)))} drawn=${id.map((x) => x.drawn).join(',')} ` +
      `gpu_process_cores=${med(id.map((x) => x.gpu_share)).toFixed(2)}`);
  }
  const floorMs = med(floors.map((x) => x.gpu_ms));
  console.log(`frame_browser floor (a WebGL2 canvas that only clears) fps=${f(med(floors.map((x) => x.fps)))} ` +
    `gpu_process_ms_per_frame=${f(floorMs)} (${floors.map((x) => f(x.gpu_ms)).join(',')})`);
  for (let i = 0; i < apps.length; i++) {
    console.log(`frame_browser ratio build=${tags[i]}_vs_floor gpu_process_ms_per_drawn_frame=` +
      `${(med(out[i].every.map((x) => x.gpu_ms)) / floorMs).toFixed(2)} (1: a frame costs no more than clearing the canvas)`);
  }
  if (apps.length > 1) {
    const m = (i, k) => med(out[i].every.map((x) => x[k]));
    console.log(`frame_browser ratio A_vs_B gpu_process_ms_per_drawn_frame=${(m(0, 'gpu_ms') / m(1, 'gpu_ms')).toFixed(2)} ` +
      `fps=${(m(0, 'fps') / m(1, 'fps')).toFixed(2)} (fps > 1, gpu < 1: A draws frames for less)`);
  }
}

main().catch((e) => { console.error(e); process.exit(1); });
