// What a lazily read file's HTTP Range reads cost in headless Chromium (docs/PERFORMANCE.md, "Big
// files"): 2 MiB reads (a 1024^2 F16 screen copy) from scripts/serve.mjs on 127.0.0.1, made by a Web
// Worker as attnviz-lazy.js makes them, alternating within one page:
//   cache      through the HTTP cache (fetch's default) vs cache: 'no-store' (what attnviz-lazy.js asks)
//   frames     while the viewer is woken every animation frame with nothing new to show, with frames
//              that look like the last one kept (the default) vs every frame drawn
//              (Module.attnvizDrawEveryFrame), and with the viewer idle
// Each figure is the median of ROUNDS reads; the ratios compare medians from the same rounds.
//   node bench/range_browser_bench.mjs
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { serve } from '../scripts/serve.mjs';

const APP_DIR = process.env.ATTNVIZ_WEB_APP || 'build/web/app';
const ROUNDS = 9, READ = 2 << 20;

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attnviz-range-bench-'));
  fs.writeFileSync(path.join(dir, 'data.bin'), Buffer.alloc(8 * ROUNDS * READ, 7));  // 7 reads a round
  const app = await serve(APP_DIR, 0);
  const data = await serve(dir, 0, { cors: true });
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--use-angle=swiftshader', '--enable-unsafe-swiftshader', '--disable-quic'],
  });
  try {
    const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
    await page.goto(`http://127.0.0.1:${app.address().port}/?example=seed004&view=heatmap`);
    await page.waitForFunction(() => window.attnviz !== undefined, null, { timeout: 60000 });
    const r = await page.evaluate(async ({ url, rounds, size }) => {
      // way: 'plain' (the body as a new ArrayBuffer, dropped), 'transfer' (the same, transferred to
      // the page, as attnviz-lazy.js did until stop 28), 'pooled' (read with a BYOB reader into a buffer
      // the page sent back after the last read, and transferred to the page: attnviz-lazy.js since stop 28).
      const src = `let spare = [];
      onmessage = async (e) => {
        if (e.data.give) { spare.push(e.data.give); return; }
        const t = performance.now();
        const r = await fetch(e.data.url, { mode: 'cors', cache: e.data.cache,
          headers: { Range: 'bytes=' + e.data.at + '-' + (e.data.at + e.data.size - 1) } });
        let b, n;
        if (e.data.way === 'pooled') {
          b = spare.pop() || new ArrayBuffer(e.data.size);
          const reader = r.body.getReader({ mode: 'byob' });
          n = 0;
          while (n < b.byteLength) {
            const { done, value } = await reader.read(new Uint8Array(b, n));
            if (done) break;
            b = value.buffer;
            n += value.byteLength;
          }
        } else {
          b = await r.arrayBuffer();
          n = b.byteLength;
        }
        const ms = performance.now() - t;
        if (e.data.way === 'plain') postMessage({ ms, n }, []);
        else postMessage({ ms, n, b }, [b]);
      };`;
      const w = new Worker(URL.createObjectURL(new Blob([src], { type: 'text/javascript' })));
      let at = 0;
      const read = (cache, way = 'plain') => new Promise((res, rej) => {
        w.onmessage = (e) => {
          if (e.data.n !== size) { rej(new Error(`read ${e.data.n} bytes`)); return; }
          if (way === 'pooled') w.postMessage({ give: e.data.b }, [e.data.b]);  // back for the next read
          res(e.data.ms);
        };
        w.postMessage({ url, cache, at, size, way });
        at += size;
      });
      const M = window.attnviz.module;
      let woken = false;
      const tick = () => { if (woken) M.attnvizWake = true; requestAnimationFrame(tick); };
      tick();
      const sleep = (ms) => new Promise((res) => setTimeout(res, ms));
      const out = { default: [], no_store: [], transfer: [], pooled: [], idle: [], kept: [], every: [], kept_share: [] };
      await sleep(1000);
      for (let i = 0; i < rounds; i++) {
        out.default.push(await read('default'));
        out.no_store.push(await read('no-store'));
        if (i % 2) out.pooled.push(await read('no-store', 'pooled'));
        out.transfer.push(await read('no-store', 'transfer'));
        if (!(i % 2)) out.pooled.push(await read('no-store', 'pooled'));
        woken = false;
        await sleep(300);
        out.idle.push(await read('no-store'));
        woken = true;
        await sleep(200);
        const d0 = window.attnviz.describe();
        out.kept.push(await read('no-store'));
        const d1 = window.attnviz.describe();
        out.kept_share.push((d1.frames_kept - d0.frames_kept) / Math.max(1, d1.frame - d0.frame));
        M.attnvizDrawEveryFrame = true;
        await sleep(200);
        out.every.push(await read('no-store'));
        M.attnvizDrawEveryFrame = false;
        woken = false;
      }
      w.terminate();
      return out;
    }, { url: `http://127.0.0.1:${data.address().port}/data.bin`, rounds: ROUNDS, size: READ });
    const med = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
    const line = (k) => `${k}_ms=${med(r[k]).toFixed(0)} (${r[k].map((x) => x.toFixed(0)).join(',')})`;
    console.log(`range_read 2MiB worker ${line('default')} ${line('no_store')} ` +
      `ratio_default_vs_no_store=${(med(r.default) / med(r.no_store)).toFixed(2)}`);
    console.log(`range_read 2MiB worker_to_page ${line('transfer')} ${line('pooled')} ` +
      `ratio_new_buffer_vs_pooled=${(med(r.transfer) / med(r.pooled)).toFixed(2)}`);
    console.log(`range_read 2MiB woken_every_frame ${line('kept')} ${line('every')} ${line('idle')} ` +
      `ratio_every_vs_kept=${(med(r.every) / med(r.kept)).toFixed(2)} frames_kept_share=${med(r.kept_share).toFixed(2)}`);
  } finally {
    await browser.close();
    app.close();
    data.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => { console.error(e); process.exit(1); });
