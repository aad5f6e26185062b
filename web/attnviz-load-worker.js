// attnviz: an eager attention file (JSON, NPZ, NPY) read and validated in a Web Worker, with its
// own WASM instance (the worker module attnviz-train.wasm: src/platform/load_worker_exports.cpp),
// so the page's thread never parses. web/attnviz-lazy.js starts one worker per file and ends it
// when the file is open (its memory goes with it). No SharedArrayBuffer: no cross-origin isolation needed.
//
// page -> worker: {file: Blob, slice: bytes per read} or {body: ReadableStream (transferred),
//                 total}; then {ack, buffer}
//                 for each piece it copied in (the buffer transferred back)
// worker -> page: {progress: bytes read}, {handover: about this many bytes}, {piece: ArrayBuffer
//                 (transferred), size, last}, {error, startup}: startup errors mean "this worker
//                 cannot run here"
/* global createAttnvizTrainer */
'use strict';

const PIECE = 4 << 20;  // bytes per feed and per handover message (at most), per body read
const MIN_PIECE = 256 << 10;  // while reading, handed over once this much is ready
const MAX_OUTSTANDING = 4;  // pieces sent and not yet acknowledged by the page
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

const call = (fn, types, args) => M.ccall(fn, 'string', types, args);

// Reads of a source: read(n) -> Uint8Array or null at the end; total bytes (0: unknown). A file
// is read `slice` bytes at a time (the page's choice: a few big reads, see sliceBytes there).
function fileSource(file, slice) {
  let at = 0;
  return {
    total: file.size,
    async read(n) {
      if (at >= file.size) return null;
      let b;
      try {
        b = new Uint8Array(await file.slice(at, Math.min(file.size, at + (slice || n))).arrayBuffer());
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

// The handover: pieces of up to PIECE bytes, sent as parts become ready (a bare .npy: head by head
// while it streams in; a little-endian float32 one: the file's own bytes), at most two
// unacknowledged; the page sends each piece's buffer back with its acknowledgement, and it is reused
// (fresh memory costs page faults).
let cursor = null;  // {part, at}: where the next piece of the parts starts
let outstanding = 0, credit = null;
const pool = [];
let stageBuf = null, stageLen = 0;  // passed-on floats gathered into a PIECE buffer

function acknowledged(buffer) {
  outstanding--;
  if (buffer && buffer.byteLength === PIECE && pool.length < MAX_OUTSTANDING) pool.push(buffer);
  if (credit) {
    const c = credit;
    credit = null;
    c();
  }
}

const freshPiece = () => new Uint8Array(pool.length ? pool.pop() : new ArrayBuffer(PIECE));

async function post(buffer, size, last) {
  while (outstanding >= MAX_OUTSTANDING) await new Promise((r) => { credit = r; });
  outstanding++;
  postMessage({ piece: buffer, size, last }, [buffer]);
}

// Bytes of the parts ready to send from the cursor on.
function readyBytes() {
  const ready = M._attnviz_handover_ready();
  let n = 0;
  for (let i = cursor.part; i < ready; i++) n += M._attnviz_handover_part_size(i) - (i === cursor.part ? cursor.at : 0);
  return n;
}

// Sends the ready parts: whole pieces while reading (or anything, when `now`), all at the end (`final`).
async function pump(final, now) {
  if (!cursor) {
    if (!M._attnviz_handover_ready()) return;
    cursor = { part: 0, at: 0 };
    postMessage({ handover: M._attnviz_handover_estimate() });
  }
  for (;;) {
    const ready = readyBytes();
    if (ready === 0 || (!final && !now && ready < MIN_PIECE)) return;
    const size = Math.min(PIECE, ready);
    const out = freshPiece();
    let filled = 0;
    while (filled < size) {
      const n = M._attnviz_handover_part_size(cursor.part), p = M._attnviz_handover_part(cursor.part);
      const take = Math.min(n - cursor.at, size - filled);
      out.set(M.HEAPU8.subarray(p + cursor.at, p + cursor.at + take), filled);
      filled += take;
      cursor.at += take;
      if (cursor.at === n) {
        cursor.part++;
        cursor.at = 0;
      }
    }
    const last = final && readyBytes() === 0;
    await post(out.buffer, size, last);
    if (last) return;
  }
}

// Passed-on floats (a little-endian float32 .npy): gathered into whole pieces.
async function stage(bytes) {
  for (let at = 0; at < bytes.length;) {
    if (!stageBuf) {
      stageBuf = freshPiece();
      stageLen = 0;
    }
    const n = Math.min(PIECE - stageLen, bytes.length - at);
    stageBuf.set(bytes.subarray(at, at + n), stageLen);
    stageLen += n;
    at += n;
    if (stageLen === PIECE) await flushStage();
  }
}

async function flushStage() {
  if (!stageBuf) return;
  const b = stageBuf;
  stageBuf = null;
  await post(b.buffer, stageLen, false);
}

async function parse(source) {
  let err = call('attnviz_parse_begin', ['number'], [source.total]);
  if (err) throw new Error(err);
  const buf = M._malloc(PIECE);
  if (!buf) throw new Error('not enough memory in the load worker');
  let received = 0, told = 0, raw = -1;
  // One read ahead: the next slice arrives while this one is checked and handed over.
  const readAhead = () => {
    const p = source.read(PIECE);
    p.catch(() => {});  // awaited below; not an unhandled rejection if the parse fails first
    return p;
  };
  let next = readAhead();
  try {
    for (let chunk; (chunk = await next);) {
      next = readAhead();
      const chunkStart = received;
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
      if (raw < 0 && !cursor) {
        raw = M._attnviz_parse_raw_offset();
        if (raw >= 0) await pump(false, true);  // the skeleton first
      }
      // The floats of a little-endian float32 .npy go on as they are (checked here: the trailer,
      // sent only once every head passed, is what makes the page take them); else decoded heads.
      if (raw >= 0) await stage(chunk.subarray(Math.max(0, raw - chunkStart)));
      else await pump(false, false);
    }
  } finally {
    M._free(buf);
  }
  if (received !== source.total) throw new Error(`the file ended after ${received} of ${source.total} bytes`);
  postMessage({ progress: received });
  err = call('attnviz_parse_finish', [], []);
  if (err) throw new Error(err);
  await flushStage();
  await pump(true, false);
  M._attnviz_parse_reset();
}

self.onmessage = (e) => {
  const m = e.data || {};
  ready.then(async () => {
    if (!M) {
      postMessage({ error: startError || 'the load worker could not start', startup: true });
      return;
    }
    if (m.ack) {
      acknowledged(m.buffer);
      return;
    }
    try {
      await parse(m.file ? fileSource(m.file, m.slice) : streamSource(m.body, m.total));
    } catch (err) {
      M._attnviz_parse_reset();
      postMessage({ error: err.message });
    }
  });
};
