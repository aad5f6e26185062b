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
  check('no console errors', app.errors.length === 0, app.errors.join(' | '));
} finally {
  await app.close();
}
process.exit(summary());
