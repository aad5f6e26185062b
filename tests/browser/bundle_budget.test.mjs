// The web bundle stays within its budget (1.5 MB, 600 KB gzipped: docs/PERFORMANCE.md, "Web bundle"):
// what an embedding page downloads before its first frame. It drifted over twice unnoticed while
// only bench/bundle_bench.mjs printed it (stops 25 and 40); now the build that grows it fails here.
import fs from 'node:fs';
import path from 'node:path';
import { APP_DIR, check, summary } from './lib.mjs';
import { BUNDLE_BUDGET, bundleSize } from '../../scripts/bundle_size.mjs';

const size = bundleSize(APP_DIR);
const kb = (n) => `${(n / 1024).toFixed(1)} KB`;
for (const f of size.files) console.log(`  ${f.file}: ${kb(f.bytes)}, ${kb(f.gzip)} gzipped`);
check('the bundle is within its size budget', size.bytes <= BUNDLE_BUDGET.bytes,
  `${kb(size.bytes)} of ${kb(BUNDLE_BUDGET.bytes)}`);
check('the bundle is within its gzipped budget', size.gzip <= BUNDLE_BUDGET.gzip,
  `${kb(size.gzip)} of ${kb(BUNDLE_BUDGET.gzip)}`);
// The files are the real ones, not stubs: the wasm module starts with its magic number and holds the app.
const magic = fs.readFileSync(path.join(APP_DIR, 'attnviz.wasm')).subarray(0, 4).toString('latin1');
check('attnviz.wasm is a WebAssembly module of the app', magic === '\0asm' && size.files[3].bytes > 500 * 1024,
  kb(size.files[3].bytes));
process.exit(summary());
