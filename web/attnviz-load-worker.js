// attnviz: an eager attention file (JSON, NPZ, NPY) read and validated in a Web Worker, with its
// own WASM instance (the worker module attnviz-train.wasm: src/platform/load_worker_exports.cpp),
// so the page's thread never parses. web/attnviz-lazy.js starts one worker per file and ends it
// when the file is open (its memory goes with it). No SharedArrayBuffer: no cross-origin isolation needed.
//
// page -> worker: {file: Blob} or {body: ReadableStream (transferred), total}; then {more: true}
//                 for each next piece of the handover
// worker -> page: {progress: bytes read}, {handover: total bytes}, {piece: ArrayBuffer (transferred),
//                 last}, {error, startup}: startup errors mean "this worker cannot run here"
/* global createAttnvizTrainer */
'use strict';

const PIECE = 4 << 20;  // bytes per read, per feed and per handover message
let M = null;
let startError = '';
try {
  importScripts('attnviz-train.js');
} catch (e) {
  startError = 'the load worker could not load attnviz-train.js: ' + e.message;
}
const ready = startError ? Promise.resolve() : createAttnvizTrainer({
  print: () => {},
  printErr: (t) => console.warn('attnviz load: ' + t),
}).then((m) => { M = m; }, (e) => { startError = 'the load worker could not start: ' + e; });

let cursor = null;  // where the next handover piece starts: {part, at, parts, left}
const call = (fn, types, args) => M.ccall(fn, 'string', types, args);

// Reads of a source: read(n) -> Uint8Array or null at the end; total bytes (0: unknown).
function fileSource(file) {
  let at = 0;
  return {
    total: file.size,
    async read(n) {
      if (at >= file.size) return null;
      let b;
      try {
        b = new Uint8Array(await file.slice(at, Math.min(file.size, at + n)).arrayBuffer());
      } catch (e) {
        throw new Error('the file cannot be read any more (changed or removed since it was opened?)');
      }
      if (!b.length) throw new Error('the file became shorter while it was read');
      at += b.length;
      return b;
    },
  };
}

// A response body the page transferred (a ReadableStream) of a known size.
function streamSource(body, total) {
  const reader = body.getReader();
  return {
    total,
    async read() {
      try {
        const { done, value } = await reader.read();
        return done ? null : value;
      } catch (e) {
        throw new Error(`the download was cut short (${e.message})`);
      }
    },
  };
}

async function parse(source) {
  let err = call('attnviz_parse_begin', ['number'], [source.total]);
  if (err) throw new Error(err);
  const buf = M._malloc(PIECE);
  if (!buf) throw new Error('not enough memory in the load worker');
  let received = 0, told = 0;
  try {
    for (let chunk; (chunk = await source.read(PIECE));) {
      for (let at = 0; at < chunk.length; at += PIECE) {
        const part = chunk.subarray(at, Math.min(chunk.length, at + PIECE));
        M.HEAPU8.set(part, buf);
        err = call('attnviz_parse_feed', ['number', 'number'], [buf, part.length]);
        if (err) throw new Error(err);
        received += part.length;
        const now = performance.now();
        if (now - told > 50) {
          told = now;
          postMessage({ progress: received });
        }
      }
    }
  } finally {
    M._free(buf);
  }
  if (received !== source.total) throw new Error(`the file ended after ${received} of ${source.total} bytes`);
  postMessage({ progress: received });
  err = call('attnviz_parse_finish', [], []);
  if (err) throw new Error(err);
  let total = 0;
  const parts = M._attnviz_handover_parts();
  for (let i = 0; i < parts; i++) total += M._attnviz_handover_part_size(i);
  cursor = { part: 0, at: 0, parts, left: total };
  postMessage({ handover: total });
}

// The next piece of the handover stream: up to PIECE bytes across the parts, copied out of the heap.
function sendPiece() {
  if (!cursor || cursor.left <= 0) return;
  const out = new Uint8Array(Math.min(PIECE, cursor.left));
  let filled = 0;
  while (filled < out.length) {
    const size = M._attnviz_handover_part_size(cursor.part), p = M._attnviz_handover_part(cursor.part);
    const take = Math.min(size - cursor.at, out.length - filled);
    out.set(M.HEAPU8.subarray(p + cursor.at, p + cursor.at + take), filled);
    filled += take;
    cursor.at += take;
    if (cursor.at === size) {
      cursor.part++;
      cursor.at = 0;
    }
  }
  cursor.left -= out.length;
  const last = cursor.left <= 0;
  if (last) {
    M._attnviz_parse_reset();
    cursor = null;
  }
  postMessage({ piece: out.buffer, last }, [out.buffer]);
}

self.onmessage = (e) => {
  const m = e.data || {};
  ready.then(async () => {
    if (!M) {
      postMessage({ error: startError || 'the load worker could not start', startup: true });
      return;
    }
    if (m.more) {
      sendPiece();
      return;
    }
    try {
      await parse(m.file ? fileSource(m.file) : streamSource(m.body, m.total));
    } catch (err) {
      M._attnviz_parse_reset();
      postMessage({ error: err.message });
    }
  });
};
