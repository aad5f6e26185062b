// The web bundle's size: what a page that embeds the viewer downloads before its first frame
// (attnviz.js, attnviz-embed.js, attnviz.css, attnviz.wasm), raw and gzipped (level 9). The rest loads
// on demand (the lazy reader, the exporters, the workers, the models). Used by bench/bundle_bench.mjs
// and the browser_bundle_budget test, which fails when the bundle grows past its budget.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

export const BUNDLE_FILES = ['attnviz.js', 'attnviz-embed.js', 'attnviz.css', 'attnviz.wasm'];
export const BUNDLE_BUDGET = { bytes: 1572864, gzip: 614400 };  // 1.5 MB, 600 KB gzipped

export function bundleSize(appDir) {
  const files = BUNDLE_FILES.map((f) => {
    const b = fs.readFileSync(path.join(appDir, f));
    return { file: f, bytes: b.length, gzip: zlib.gzipSync(b, { level: 9 }).length };
  });
  const bytes = files.reduce((s, f) => s + f.bytes, 0), gzip = files.reduce((s, f) => s + f.gzip, 0);
  return { files, bytes, gzip, ok: bytes <= BUNDLE_BUDGET.bytes && gzip <= BUNDLE_BUDGET.gzip };
}
