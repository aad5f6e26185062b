// Static file server for the built web app, bound to 127.0.0.1 only.
//   node scripts/serve.mjs [DIR] [PORT]     (PORT also from the environment; default 8000)
// Also importable: serve(dir, port, {cors}) -> Promise<http.Server> (port 0 picks a free one;
// cors: true lets pages of any origin read the files, as a data server for ?src= must; headers:
// extra response headers, e.g. a Content-Security-Policy for tests; ranges: false answers Range
// requests with the whole file, as a server without Range support does, for tests).
// Files are streamed, and single HTTP Range requests (bytes=a-b, a-, -n) are answered with 206 and
// the bytes asked for, so a lazily read safetensors file of many GB is served a head at a time.
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const TYPES = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8', '.wasm': 'application/wasm', '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml', '.png': 'image/png', '.npz': 'application/octet-stream', '.bin': 'application/octet-stream',
  '.npy': 'application/octet-stream', '.safetensors': 'application/octet-stream',
};
const CORS = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Allow-Headers': 'Range',
  'Access-Control-Expose-Headers': 'Content-Range, Content-Length, Accept-Ranges, ETag, Last-Modified',
};

// [start, end] (inclusive) of a "bytes=a-b" header for a file of `size` bytes; null: the whole file
// (no header, or several ranges); 'bad': unsatisfiable.
export function parseRange(header, size) {
  if (!header) return null;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return header.includes(',') ? null : 'bad';
  let start, end;
  if (m[1] === '') {  // the last n bytes
    start = Math.max(0, size - Number(m[2]));
    end = size - 1;
  } else {
    start = Number(m[1]);
    end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  }
  if (start >= size || end < start) return 'bad';
  return [start, end];
}

export function serve(dir, port, { cors = false, headers = {}, ranges = true } = {}) {
  const root = path.resolve(dir);
  const server = http.createServer((req, res) => {
    const common = { 'Cache-Control': 'no-cache', ...(cors ? CORS : {}) };
    if (req.method === 'OPTIONS') {  // a CORS preflight (the Range header)
      res.writeHead(204, { ...common, 'Access-Control-Allow-Methods': 'GET, HEAD' }).end();
      return;
    }
    let rel;
    try {
      rel = decodeURIComponent(new URL(req.url, 'http://127.0.0.1').pathname);
    } catch {
      res.writeHead(400).end('bad request');
      return;
    }
    if (rel.endsWith('/')) rel += 'index.html';
    const file = path.join(root, rel);
    if (!file.startsWith(root + path.sep) && file !== root) {
      res.writeHead(403).end('forbidden');
      return;
    }
    fs.stat(file, (err, st) => {
      if (err || !st.isFile()) {
        res.writeHead(404, { 'Content-Type': 'text/plain', ...(cors ? CORS : {}) }).end('not found: ' + rel);
        return;
      }
      const meta = {
        ...common,
        'Content-Type': TYPES[path.extname(file)] || 'application/octet-stream',
        'ETag': `"${st.size.toString(16)}-${Math.floor(st.mtimeMs).toString(16)}"`,
        'Last-Modified': st.mtime.toUTCString(),
        ...(ranges ? { 'Accept-Ranges': 'bytes' } : {}),
        ...headers,
      };
      const range = ranges ? parseRange(req.headers.range, st.size) : null;
      if (range === 'bad') {
        res.writeHead(416, { ...meta, 'Content-Range': `bytes */${st.size}` }).end();
        return;
      }
      const [start, end] = range || [0, st.size - 1];
      res.writeHead(range ? 206 : 200, {
        ...meta,
        'Content-Length': String(st.size ? end - start + 1 : 0),
        ...(range ? { 'Content-Range': `bytes ${start}-${end}/${st.size}` } : {}),
      });
      if (req.method === 'HEAD' || st.size === 0) {
        res.end();
        return;
      }
      const stream = fs.createReadStream(file, { start, end, highWaterMark: 1 << 20 });
      stream.on('error', () => res.destroy());
      res.on('close', () => stream.destroy());
      stream.pipe(res);
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const dir = process.argv[2] || 'build/web/app';
  const port = Number(process.argv[3] || process.env.PORT || 8000);
  if (!fs.existsSync(path.join(dir, 'index.html'))) {
    console.error(`attnviz: ${dir}/index.html not found; build the web app first (make run does)`);
    process.exit(1);
  }
  serve(dir, port).then((s) => {
    console.log(`attnviz is being served at http://127.0.0.1:${s.address().port}/  (Ctrl+C to stop)`);
  }).catch((e) => {
    console.error(`attnviz: cannot listen on 127.0.0.1:${port}: ${e.code || e.message}` +
      (e.code === 'EADDRINUSE' ? ' (port in use; try PORT=8001 make run)' : ''));
    process.exit(1);
  });
}
