// The relaxed-SIMD (FMA) kernel module in the browser: Chromium validates it (relaxed SIMD has
// shipped since Chromium 114), the glue registers its three tile variants next to the five
// SIMD128 ones, and describe() reports the tile the probe picked; the page logs no error (the
// module is compiled under the page's CSP, which allows 'wasm-unsafe-eval').
import { openApp, check, summary } from './lib.mjs';

const app = await openApp();
try {
  const d = await app.page.evaluate(() => window.attnviz.describe());
  const k = d.kernel || {};
  check('describe() has kernel.tile and kernel.isa', typeof k.tile === 'string' && typeof k.isa === 'string', JSON.stringify(k));
  check('kernel.tile is RxC', /^\d+x\d+$/.test(k.tile || ''), k.tile);
  check('kernel.isa is a WASM one', ['wasm-simd128', 'wasm-relaxed-simd'].includes(k.isa), k.isa);
  check('relaxed-SIMD variants registered (5 SIMD128 + 3 FMA)', k.variants === 8, `variants=${k.variants}`);

  // The probe in the page, once the kernels have been used past its full probes (describe() is a
  // use): its figures are GFLOP/s a CPU core can do, whatever the page's clock. With Chromium's
  // 100 us performance.now() every figure was 3.9e6, 39.3 or 19.7 and the pick was random (stop 47).
  const kp = await app.page.evaluate(async () => {
    for (let round = 0; round < 12; ++round) {
      for (let i = 0; i < 250; ++i) window.attnviz.describe();
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    return window.attnviz.describe().kernel;
  });
  const figures = (kp.probe || []).map((v) => v.gflops);
  const line = `tick=${kp.clock_tick_us}us reps=${kp.reps} probes=${kp.probes} ` +
    (kp.probe || []).map((v) => `${v.isa}:${v.tile}=${v.gflops}`).join(' ');
  console.log(`  probe in the page: ${line}`);
  check('full probes ran in the page', kp.probes >= 3, line);
  check('every variant timed, none absurdly fast (<= 400 GFLOP/s)',
        figures.length === 8 && figures.every((g) => g > 0 && g <= 400), line);
  check('a coarse clock gets repeated runs', !(kp.clock_tick_us > 2) || kp.reps > 1, line);
  // describe() rounds figures to 0.01; with 100 us ticks two variants can read the same number
  // of ticks, and the pick between them is the unrounded figure's
  const fastest = Math.max(...figures);
  const inUse = kp.probe.find((v) => v.tile === kp.tile && v.isa === kp.isa);
  check('the tile in use is (one of) the probe\'s fastest', inUse && inUse.gflops >= fastest - 0.011,
        `${kp.isa}:${kp.tile}=${inUse && inUse.gflops} vs fastest ${fastest}`);
  check('no console errors', app.errors.length === 0, app.errors.join(' | '));
} finally {
  await app.close();
}
process.exit(summary());
