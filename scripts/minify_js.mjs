// scripts/minify_js.mjs FILE...: rewrites each JavaScript file in place without its comments and
// spaces (npm's terser, pinned by package-lock.json). Nothing is compressed or renamed: the same
// code, only shorter to download. The web build runs it on the copy of web/attnviz-embed.js in
// build/web/app, which is part of the bundle an embedding page downloads before its first frame
// (scripts/bundle_size.mjs): 26.6 KB, 9.1 KB gzipped, of which comments are most (stop 54). The
// source in web/ keeps them.
import fs from 'node:fs';
import { minify } from 'terser';

for (const file of process.argv.slice(2)) {
  const source = fs.readFileSync(file, 'utf8');
  let result;
  try {
    result = await minify(source, { compress: false, mangle: false, format: { comments: false } });
  } catch (e) {
    console.error(`minify_js: ${file}: ${e.message}${e.line ? ` (line ${e.line})` : ''}`);
    process.exit(1);
  }
  fs.writeFileSync(file, `${result.code}\n`);
}
