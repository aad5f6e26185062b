// Static file server for the built web app, bound to 127.0.0.1 only.
//   node scripts/serve.mjs [DIR] [PORT]     (PORT also from the environment; default 8000)
// Also importable: serve(dir, port, {cors}) -> Promise<http.Server> (port 0 picks a free one;
// cors: true lets pages of any origin read the files, as a data server for ?src= must; headers:
// extra response headers, e.g. a Content-Security-Policy for tests).
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const TYPES = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8', '.wasm': 'application/wasm', '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml', '.png': 'image/png', '.npz': 'application/octet-stream', '.bin': 'application/octet-stream',
};

export function serve(dir, port, { cors = false, headers = {} } = {}) {
  const root = path.resolve(dir);
  const server = http.createServer((req, res) => {
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
    fs.readFile(file, (err, data) => {
      if (err) {
        res.writeHead(404, { 'Content-Type': 'text/plain', ...(cors ? { 'Access-Control-Allow-Origin': '*' } : {}) })
          .end('not found: ' + rel);
        return;
      }
      res.writeHead(200, {
        'Content-Type': TYPES[path.extname(file)] || 'application/octet-stream',
        'Cache-Control': 'no-cache',
        ...(cors ? { 'Access-Control-Allow-Origin': '*' } : {}),
        ...headers,
      });
      res.end(data);
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
