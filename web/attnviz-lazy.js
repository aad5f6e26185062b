// attnviz: reading big files into a viewer (docs/PERFORMANCE.md, "Big files"). attnviz-embed.js
// loads this file when a viewer first opens a file or a URL; a page may also include it itself.
//
//   AttnVizLazy.openFile(ctx, file)  a File/Blob: attention JSON/NPZ/NPY streamed into the viewer's
//                                    loader in 4 MiB pieces (File.slice); a safetensors file (or a .npy
//                                    too big to read whole) lazily: the viewer reads the ranges it
//                                    needs with File.slice()
//   AttnVizLazy.openUrl(ctx, url)    the same over HTTP: the response body streamed as it arrives
//                                    (Content-Length known); a .safetensors URL lazily, with HTTP Range
//                                    requests (a server without them: a whole download up to 512 MiB);
//                                    a .npy URL too, when the first Range request shows it too big to
//                                    read whole
//
// ctx = { Module, wake, openBytes, progressOverlay, element }: what the viewer lends.
// While a file streams, frames keep coming (a piece at a time, at most ~8 ms per frame), the app
// shows a progress window, and its Cancel button ends the load ("cancelled: ...").
(function (global) {
  'use strict';

  const PIECE = 4 << 20;  // bytes handed to the loader per call, at most: a few ms of copying and decoding
  // Bytes per call, sized at run time: a copy into fresh WASM pages pays their first touch, ~20 us a
  // 4 KiB page on a VM here (docs/PERFORMANCE.md, "Big files": 12-15 ms for 256 KiB), and a copy
  // into pages already touched is ~100x faster; the two come mixed, as a matrix ends and the next begins.
  const FEED_MIN = 16 << 10, FEED_START = 64 << 10, FEED_MAX = 256 << 10;
  const FEED_MS = 4;  // the work per call aimed at: four of them fit a 16 ms frame

  // The loader's call sizes: what FEED_MS covers at the slowest pace seen lately (it decays 2 % a
  // call), so a fast call into touched pages does not make the next one, into fresh pages, big.
  // window.attnvizFeedBytes = N fixes the size instead (benchmarks: the baseline).
  function feedPacer() {
    let slow = 0;  // ms per byte
    const fixed = global.attnvizFeedBytes > 0 ? global.attnvizFeedBytes : 0;
    return {
      bytes: fixed || FEED_START,
      took(n, ms) {
        if (stats.feed_ms.length < 100000) stats.feed_ms.push(ms);
        if (n <= 0 || fixed) return;
        slow = Math.max(ms / n, slow * 0.98);
        const want = slow > 0 ? FEED_MS / slow : FEED_MAX;
        this.bytes = Math.max(FEED_MIN, Math.min(FEED_MAX, Math.floor(want / 4096) * 4096));
      },
    };
  }

  const epochMs = () => performance.timeOrigin + performance.now();  // the same clock in the page and a worker
  // Gives the browser a turn (input, a frame if one is due) without waiting for a frame: a task, not
  // requestAnimationFrame, so a slow renderer (software WebGL) does not slow the reading down.
  const yieldToBrowser = () => new Promise((resolve) => {
    const ch = new MessageChannel();
    ch.port1.onmessage = () => resolve();
    ch.port2.postMessage(0);
  });

  // Bytes per File.slice() read of an eager file (in the page, and in the load worker's twin):
  // each read costs tens of ms on top of its bytes in Chromium, so a big file is read in a few big
  // slices: a quarter of the file, 4 to 32 MiB (the 151 MB .npy opens in 0.53-0.89 of the time it
  // takes with 4 MiB reads: bench/load_browser_bench.mjs, slices_vs_4mib, stop 22). Decoding still
  // goes a feed at a time. (window.attnvizSliceBytes overrides it: benchmarks.)
  const sliceBytes = (total) => (typeof window !== 'undefined' && window.attnvizSliceBytes) ||
    Math.max(PIECE, Math.min(32 << 20, Math.floor(total / 4 / 65536) * 65536));

  const nameOf = (url) => decodeURIComponent(String(url).split(/[?#]/)[0].split('/').pop() || 'download');

  // Figures for benchmarks: the last stream's pieces, the longest feed and the finishing call (which
  // parses the whole file when the page reads a JSON or NPZ itself), whether the load worker read it; the biggest lazy read and
  // how long it took to arrive; how long the last decoding between frames took; reads aborted; the
  // time a page-read stream waited for its reads and for its turns between frames (read_wait_ms,
  // yield_ms), and a worker load's time waiting for the worker (idle_ms); the last 64 reads' start
  // and end (performance.now()) and size. (window.attnvizMainThreadReads = true
  // before the first URL opens makes the page fetch Range requests itself, not in a worker: benchmarks.)
  // feed_ms: each loader call's time; longest_slice_ms: the most the page's thread worked between two
  // turns it gave the browser (frames), while a file loaded. reads_into_spare: Range reads the worker
  // made into a buffer the page had given back. bulk_reads: of worker_reads, parts of whole heads
  // (read by the second worker: lanes = 2 once both started; each of `reads` says its lane).
  const stats = { pieces: 0, feed_ms: [], longest_slice_ms: 0, longest_feed_ms: 0, feed_total_ms: 0, read_wait_ms: 0, yield_ms: 0, idle_ms: 0, finish_ms: 0, load_worker: false, biggest_read_bytes: 0, biggest_read_ms: 0, last_work_ms: 0,
    aborted_reads: 0, reads: [], worker_reads: 0, page_reads: 0, reads_into_spare: 0, bulk_reads: 0, lanes: 0 };

  // One load at a time per viewer: a file opened while another loads takes over the progress window,
  // and the older load stops without touching it (its calls would go to the new file's loader).
  const newLoad = (M) => (M.attnvizLoadToken = (M.attnvizLoadToken || 0) + 1);
  const superseded = (name) => `stopped loading ${name}: another file was opened`;

  // Streams the bytes that read(n) gives (a Uint8Array, or null at the end) into the viewer's loader.
  async function stream(ctx, name, total, read, stop) {
    const M = ctx.Module;
    const token = newLoad(M);
    const call = (fn, types, args) => {
      if (M.attnvizLoadToken !== token) throw new Error(superseded(name));
      return M.ccall(fn, 'string', types, args);
    };
    const abort = (message) => {
      if (M.attnvizLoadToken === token) M.ccall('attnviz_load_abort', null, ['string'], [message]);
      ctx.wake();
    };
    stats.pieces = 0;
    stats.feed_ms = [];
    stats.longest_slice_ms = 0;
    stats.longest_feed_ms = 0;
    stats.feed_total_ms = 0;
    stats.read_wait_ms = 0;
    stats.yield_ms = 0;
    stats.load_worker = false;
    let err = call('attnviz_load_begin', ['string', 'number'], [name, total]);
    ctx.wake();
    if (err) throw new Error(err);
    const buf = M._malloc(PIECE);
    if (!buf) {
      abort(`could not open ${name}: not enough memory`);
      throw new Error(`could not open ${name}: not enough memory`);
    }
    let frameStart = performance.now(), woke = 0;
    const pace = feedPacer();
    // The progress window is redrawn ~10 times a second, not every frame: a slow renderer (software
    // WebGL) would otherwise spend more time drawing it than the file takes to read.
    const progress = () => {
      const now = performance.now();
      if (now - woke > 100) {
        woke = now;
        ctx.Module.attnvizProgressFrame = true;
      }
    };
    try {
      for (;;) {
        let chunk;
        const waitStart = performance.now();
        stats.longest_slice_ms = Math.max(stats.longest_slice_ms, waitStart - frameStart);
        try {
          chunk = await read(PIECE);
          frameStart = performance.now();  // the wait gave the browser its turn
          stats.read_wait_ms += frameStart - waitStart;
        } catch (e) {
          const message = `could not open ${name}: ${e.message}`;
          abort(message);
          throw new Error(message);
        }
        if (!chunk) break;
        for (let at = 0; at < chunk.length;) {
          const part = chunk.subarray(at, Math.min(chunk.length, at + pace.bytes));
          M.HEAPU8.set(part, buf);  // HEAPU8 is looked up each time: the heap may have grown
          const t = performance.now();
          err = call('attnviz_load_feed', ['number', 'number'], [buf, part.length]);
          const ms = performance.now() - t;
          stats.longest_feed_ms = Math.max(stats.longest_feed_ms, ms);
          stats.feed_total_ms += ms;
          stats.pieces++;
          pace.took(part.length, ms);
          at += part.length;
          progress();
          if (err) {
            if (stop) stop();
            throw new Error(err);
          }
          if (performance.now() - frameStart > 8) {  // at most ~8 ms of work at a time
            const y0 = performance.now();
            stats.longest_slice_ms = Math.max(stats.longest_slice_ms, y0 - frameStart);
            await yieldToBrowser();
            frameStart = performance.now();
            stats.yield_ms += frameStart - y0;
          }
        }
      }
      const t = performance.now();
      err = call('attnviz_load_finish', [], []);
      stats.finish_ms = performance.now() - t;
      ctx.wake();
      if (err) throw new Error(err);
    } finally {
      M._free(buf);
    }
  }

  // ---- eager files read in a worker ------------------------------------------------------------
  // A file (or a URL's response body, transferred as a stream) of more than WORKER_MIN bytes is read and validated by a Web Worker with its own
  // WASM instance (web/attnviz-load-worker.js); the page's thread shows the progress, then copies
  // the document it hands over (io/attention_handover.h) into the viewer a piece at a time between
  // frames, and the worker ends. Where no worker can start (a policy without worker-src 'self',
  // scripts from file://), the page reads the file itself (stream, above). window.attnvizNoLoadWorker
  // = true makes the page read itself (benchmarks).
  const WORKER_MIN = 1 << 20;
  const FALLBACK = {};  // what workerLoad resolves to when no worker could start

  function loadWorkerUrl(M) {
    if (M.locateFile) return M.locateFile('attnviz-load-worker.js', '');
    return SCRIPT_URL ? new URL('attnviz-load-worker.js', SCRIPT_URL).href : '';
  }

  function workerLoad(ctx, name, total, start) {
    const M = ctx.Module;
    const url = typeof Worker === 'function' && !global.attnvizNoLoadWorker ? loadWorkerUrl(M) : '';
    if (!url) return Promise.resolve(FALLBACK);
    let w;
    try {
      w = new Worker(url);
    } catch (e) {
      return Promise.resolve(FALLBACK);
    }
    const token = newLoad(M);
    // "" or the app's message; another file opened meanwhile: that, and this load ends quietly.
    const call = (fn, types, args) => (M.attnvizLoadToken !== token ? superseded(name)
      : M.ccall(fn, 'string', types, args));
    stats.pieces = 0;
    stats.feed_ms = [];
    stats.longest_slice_ms = 0;
    stats.longest_feed_ms = 0;
    stats.feed_total_ms = 0;
    stats.load_worker = true;
    return new Promise((resolve, reject) => {
      const started = performance.now();
      let begun = false, heard = false, ended = false, buf = 0, received = 0, queue = Promise.resolve();
      const pace = feedPacer();  // bytes per call: sized at run time to ~4 ms of copying
      let woke = 0;
      const end = (err) => {
        if (ended) return;
        ended = true;
        clearInterval(poll);
        w.terminate();
        if (buf) M._free(buf);
        buf = 0;
        ctx.wake();
        if (err === FALLBACK) resolve(FALLBACK);
        else if (err) reject(err instanceof Error ? err : new Error(err));
        else resolve();
      };
      const fail = (message) => {  // the app's load ends with the message (it shows it)
        if (begun && M.attnvizLoadToken === token) M.ccall('attnviz_load_abort', null, ['string'], [message]);
        end(message);
      };
      // Cancel is seen within 100 ms even while the worker is deep in a parse: it is then ended.
      const poll = setInterval(() => {
        if (!begun || ended) return;
        const err = call('attnviz_load_progress', ['number'], [received]);
        if (err) end(err);
      }, 100);
      // idle_ms: how long the page had every piece copied and waited for the worker's next one.
      let idleSince = performance.now(), pending = 0;
      stats.idle_ms = 0;
      const feed = (piece, size, last) => {
        if (pending++ === 0) stats.idle_ms += performance.now() - idleSince;
        queue = queue.then(async () => {
          if (ended) return;
          let frameStart = performance.now();
          const bytes = new Uint8Array(piece, 0, size);
          for (let at = 0; at < bytes.length && !ended;) {
            // A matrix's bytes go straight where they belong (one copy); the skeleton and the
            // trailer through the loader.
            if (M.attnvizLoadToken !== token) { end(superseded(name)); return; }
            const dst = M._attnviz_load_room(), room = dst ? M._attnviz_load_room_size() : 0;
            const n = Math.min(bytes.length - at, pace.bytes, room || PIECE);
            const t = performance.now();
            let err;
            if (room) {
              M.HEAPU8.set(bytes.subarray(at, at + n), dst);
              err = call('attnviz_load_advance', ['number'], [n]);
            } else {
              M.HEAPU8.set(bytes.subarray(at, at + n), buf);
              err = call('attnviz_load_feed', ['number', 'number'], [buf, n]);
            }
            const ms = performance.now() - t;
            stats.longest_feed_ms = Math.max(stats.longest_feed_ms, ms);
            stats.feed_total_ms += ms;
            stats.pieces++;
            pace.took(n, ms);
            at += n;
            if (t - woke > 100) {  // the progress redrawn ~10 times a second (as in stream)
              woke = t;
              M.attnvizProgressFrame = true;
            }
            if (err) { end(err); return; }
            if (performance.now() - frameStart > 8) {
              stats.longest_slice_ms = Math.max(stats.longest_slice_ms, performance.now() - frameStart);
              await yieldToBrowser();
              frameStart = performance.now();
            }
          }
          stats.longest_slice_ms = Math.max(stats.longest_slice_ms, performance.now() - frameStart);
          if (ended) return;
          if (--pending === 0) idleSince = performance.now();
          w.postMessage({ ack: true, buffer: piece }, [piece]);  // reused by the worker
          if (last) {
            const t = performance.now();
            const err = call('attnviz_load_finish', [], []);
            stats.finish_ms = performance.now() - t;
            end(err || null);
          }
        });
      };
      w.onerror = (e) => {
        if (e.preventDefault) e.preventDefault();
        if (!heard) end(FALLBACK);  // the worker could not start here
        else fail(`could not open ${name}: the load worker failed (${e.message || 'unknown error'})`);
      };
      w.onmessage = (e) => {
        const m = e.data || {};
        if (ended) return;
        heard = true;
        if (m.error !== undefined) {
          if (m.startup) end(FALLBACK);
          else fail(`could not open ${name}: ${m.error}`);
        } else if (m.progress !== undefined) {
          received = m.progress;
          if (received >= total) stats.worker_read_ms = performance.now() - started;
          const err = call('attnviz_load_progress', ['number'], [received]);
          M.attnvizProgressFrame = true;
          if (err) end(err);
        } else if (m.handover !== undefined) {
          buf = M._malloc(PIECE);
          const err = buf ? call('attnviz_load_handover', ['number'], [m.handover])
            : `could not open ${name}: not enough memory`;
          if (err) { if (!buf) fail(err); else end(err); }
        } else if (m.piece) {
          feed(m.piece, m.size, m.last);
        }
      };
      try {
        if (start.file) start.slice = sliceBytes(start.file.size);
        w.postMessage(start, start.body ? [start.body] : []);
      } catch (e) {  // a response body that cannot be transferred here: the page reads it
        end(FALLBACK);
        return;
      }
      // The progress window shows at once (the worker's module takes a moment to start).
      const err = call('attnviz_load_begin', ['string', 'number'], [name, total]);
      ctx.wake();
      if (err) end(err);
      else {
        begun = true;
        call('attnviz_load_progress', ['number'], [0]);
      }
    });
  }

  // ---- lazily read safetensors ------------------------------------------------------------------
  // The viewer asks for byte ranges (attnviz_js_read); they come from File.slice() or HTTP Range
  // requests, are written into the WASM heap where it asked, and reported with attnviz_lazy_done.
  const FULL_DOWNLOAD_LIMIT = 512 << 20;  // a server without Range support: download files up to this whole
  let nextReader = 1;

  // True when the first bytes look like a safetensors file (LooksLikeSafetensors in io/safetensors.h).
  function looksLikeSafetensors(b, size) {
    if (b.length < 9 || size < 10 || b[8] !== 0x7b) return false;
    let n = 0;
    for (let i = 7; i >= 0; i--) n = n * 256 + b[i];
    return n >= 2 && n <= size - 8;
  }
  const isNpy = (b) => b.length >= 8 && b[0] === 0x93 && String.fromCharCode(...b.subarray(1, 6)) === 'NUMPY';
  // The bytes before the data: a safetensors file's 8-byte length + N; a .npy file's magic, version,
  // length and dict (version 1: a 2-byte length at 8, else 4 bytes).
  function headerLength(b) {
    if (isNpy(b)) return b.length < 12 ? 12 : (b[6] === 1 ? 10 + (b[8] | (b[9] << 8)) : 12 + (b[8] | (b[9] << 8) | (b[10] << 16)) + b[11] * 16777216);
    let n = 0;
    for (let i = 7; i >= 0; i--) n = n * 256 + b[i];
    return 8 + n;
  }
  // Whether the viewer reads a file lazily (attnviz_opens_lazily): asked of a .npy (from its header),
  // which is read lazily only when too big to read whole.
  function opensLazily(ctx, prefix, size) {
    const M = ctx.Module;
    const p = M._malloc(Math.max(1, prefix.length));
    M.HEAPU8.set(prefix, p);
    const yes = M.ccall('attnviz_opens_lazily', 'number', ['number', 'number', 'number'], [p, prefix.length, size]);
    M._free(p);
    return yes === 1;
  }

  function installReaders(ctx) {
    const M = ctx.Module;
    if (M.attnvizReaders) return;
    M.attnvizReaders = {};
    M.attnvizRead = (id, ticket, offset, size, dst, bulk) => {
      const r = M.attnvizReaders[id];
      if (r) r.read(ticket, offset, size, dst, bulk);
    };
    M.attnvizCancel = (id, ticket) => {
      const r = M.attnvizReaders[id];
      if (r) r.cancel(ticket);
    };
    M.attnvizClose = (id) => {
      const r = M.attnvizReaders[id];
      if (r) r.close();
      delete M.attnvizReaders[id];
    };
  }

  // A reader: range(offset, size, signal) -> Promise<Uint8Array>; reads start when the viewer asks. A
  // read the viewer cancels is aborted (its HTTP request too: the browser's few connections to the
  // server are not held by bytes nobody wants while the head now in view waits for one).
  function makeReader(ctx, name, range) {
    const M = ctx.Module, id = nextReader++;
    const r = { id, closed: false, cancelled: new Set(), reads: 0, bytes: 0, aborted: 0 };
    const controllers = new Map();  // ticket -> AbortController of a read under way
    r.cancel = (ticket) => {
      r.cancelled.add(ticket);
      const c = controllers.get(ticket);
      if (c) {
        controllers.delete(ticket);
        r.aborted++;
        stats.aborted_reads++;
        c.abort();
      }
    };
    r.close = () => {
      r.closed = true;
      for (const c of controllers.values()) c.abort();
      controllers.clear();
    };
    // Decoding runs between frames, ~8 ms at a time, as soon as a read ends (frames may be slow).
    let working = false;
    const work = async () => {
      if (working) return;
      working = true;
      const t0 = performance.now();
      try {
        while (!r.closed && M._attnviz_lazy_work(8)) await yieldToBrowser();
        stats.last_work_ms = performance.now() - t0;
      } finally {
        working = false;
        // One frame draws what came in (a full wake would draw several: with a software renderer
        // they would hold the page's thread while the next reads' bytes wait to be delivered).
        M.attnvizProgressFrame = true;
      }
    };
    const done = (ticket, err) => {
      if (r.closed) return;
      M.ccall('attnviz_lazy_done', null, ['number', 'number', 'string'], [id, ticket, err]);
      work();  // decodes between frames, then wakes the viewer to draw it
    };
    r.read = (ticket, offset, size, dst, bulk) => {
      r.reads++;
      const t0 = performance.now();
      const controller = typeof AbortController === 'function' ? new AbortController() : null;
      if (controller) controllers.set(ticket, controller);
      range(offset, size, controller && controller.signal, bulk).then((bytes) => {
        controllers.delete(ticket);
        const giveBack = () => { if (bytes.recycle) bytes.recycle(); };  // the worker's buffer, for its next read
        if (r.closed || r.cancelled.delete(ticket)) {  // the viewer no longer holds dst
          giveBack();
          return;
        }
        // The last 64 reads; a worker's also say when its request left, its headers came and its body
        // ended (page time), which tells a slow server or network from a busy page.
        const q = { start: t0, end: performance.now(), bytes: size, bulk: !!bulk, lane: bytes.lane };
        if (bytes.times) for (const k of ['sent', 'headers', 'body']) q[k] = bytes.times[k] - performance.timeOrigin;
        stats.reads.push(q);
        if (stats.reads.length > 64) stats.reads.shift();
        if (size >= stats.biggest_read_bytes) {
          stats.biggest_read_bytes = size;
          stats.biggest_read_ms = performance.now() - t0;
        }
        if (bytes.length !== size) {
          giveBack();
          done(ticket, `the response ended after ${bytes.length} of ${size} bytes`);
          return;
        }
        M.HEAPU8.set(bytes, dst);
        giveBack();
        r.bytes += size;
        done(ticket, '');
      }, (e) => {
        controllers.delete(ticket);
        if (r.closed || r.cancelled.delete(ticket)) return;
        done(ticket, e.message);
      });
    };
    M.attnvizReaders[id] = r;
    return r;
  }

  // An .npz the viewer may read lazily (attnviz_npz_prefix, io/lazy_npz.cpp): the page reads the
  // ranges its listing asks for (the end records and directory, the local headers, the tokens) and
  // asks again, a few times. The descriptor to open it with, or null to read it whole.
  const isZip = (b) => b.length >= 4 && b[0] === 0x50 && b[1] === 0x4b && b[2] === 3 && b[3] === 4;
  const NPZ_LAZY_MIN = 256 << 20;  // smaller ones are read whole (2^28 F16 weights are 512 MiB)
  async function npzPrefix(ctx, name, size, range, head) {
    const M = ctx.Module, tail = Math.max(0, size - 131072);
    const chunks = [[0, head], [tail, await range(tail, size - tail)]];
    for (let round = 0; round < 64; round++) {
      const total = chunks.reduce((n, c) => n + c[1].length, 0);
      const table = M._malloc(16 * chunks.length), data = M._malloc(Math.max(1, total));
      const offsets = new Float64Array(M.HEAPU8.buffer, table, 2 * chunks.length);
      let at = 0;
      chunks.forEach(([offset, bytes], i) => {
        offsets[2 * i] = offset;
        offsets[2 * i + 1] = bytes.length;
        M.HEAPU8.set(bytes, data + at);
        at += bytes.length;
      });
      const r = M.ccall('attnviz_npz_prefix', 'string', ['number', 'number', 'number', 'number'],
        [size, chunks.length, table, data]);
      M._free(table);
      M._free(data);
      if (r === 'whole') return null;
      if (r === 'ok') {
        const p = M.ccall('attnviz_npz_prefix_data', 'number', [], []);
        return M.HEAPU8.slice(p, p + M.ccall('attnviz_npz_prefix_size', 'number', [], []));
      }
      const need = /^need (\d+) (\d+)$/.exec(r);
      if (!need) {  // why it cannot be read lazily: on the status line too, as the viewer's own errors are
        const message = `could not open ${name}: ${r}`;
        M.ccall('attnviz_show_error', null, ['string'], [message]);
        ctx.wake();
        throw new Error(message);
      }
      // A little more than asked: the next member's header is often just after this one's.
      const offset = Number(need[1]), n = Math.min(size - offset, Math.max(Number(need[2]), 65536));
      chunks.push([offset, await range(offset, n)]);
    }
    throw new Error('npz: listing the archive took too many reads');
  }

  // Opens a reader's file in the viewer from its first bytes (the header), or an .npz's descriptor.
  async function openLazy(ctx, name, size, range, descriptor = null) {
    installReaders(ctx);
    let prefix = descriptor || await range(0, Math.min(size, 65536));
    const need = descriptor ? 0 : headerLength(prefix);
    if (need > prefix.length && need <= size) prefix = await range(0, need);
    const M = ctx.Module, reader = makeReader(ctx, name, range);
    const p = M._malloc(Math.max(1, prefix.length));
    M.HEAPU8.set(prefix, p);
    const err = M.ccall('attnviz_lazy_open', 'string', ['string', 'number', 'number', 'number', 'number'],
      [name, reader.id, size, p, prefix.length]);
    M._free(p);
    ctx.wake();
    if (err) throw new Error(err);
    return reader;
  }

  function fileRange(file) {
    return (offset, size) => file.slice(offset, offset + size).arrayBuffer().then((b) => new Uint8Array(b), () => {
      throw new Error('the file cannot be read any more (changed or removed since it was opened?)');
    });
  }

  function openFile(ctx, file) {
    const name = file.name || 'file';
    return file.slice(0, 65536).arrayBuffer().then(async (b) => {
      const head = new Uint8Array(b);
      if (looksLikeSafetensors(head, file.size) || (isNpy(head) && opensLazily(ctx, head, file.size)))
        return openLazy(ctx, name, file.size, fileRange(file));
      const npz = isZip(head) && file.size >= NPZ_LAZY_MIN ? await npzPrefix(ctx, name, file.size, fileRange(file), head) : null;
      if (npz) return openLazy(ctx, name, file.size, fileRange(file), npz);
      const inPage = () => {
        let at = 0;
        return stream(ctx, name, file.size, async (n) => {
          if (at >= file.size) return null;
          const bytes = new Uint8Array(await file.slice(at, Math.min(file.size, at + sliceBytes(file.size))).arrayBuffer());
          if (!bytes.length) throw new Error('the file became shorter while it was read');
          at += bytes.length;
          return bytes;
        });
      };
      if (file.size < WORKER_MIN) return inPage();
      return workerLoad(ctx, name, file.size, { file }).then((r) => (r === FALLBACK ? inPage() : r));
    });
  }

  // A response body of `size` bytes read into `buffer` (>= size bytes) with a BYOB reader: no new
  // buffer for each read (a fresh 2 MiB one, its pages touched for the first time and later collected,
  // made a read ~1.9x slower here: docs/PERFORMANCE.md, "Big files"). {buffer, length}, or null where
  // the body is not a byte stream (the caller then takes arrayBuffer()).
  async function readInto(res, buffer, size, what) {
    let reader;
    try {
      reader = res.body.getReader({ mode: 'byob' });
    } catch (e) {
      return null;
    }
    let b = buffer, n = 0;
    try {
      while (n < size) {
        const { done, value } = await reader.read(new Uint8Array(b, n, size - n));
        if (value) b = value.buffer;  // the buffer comes back with each read (transferred)
        if (done) break;
        n += value.byteLength;
      }
      if (n === size && !(await reader.read(new Uint8Array(1))).done) {
        reader.cancel().catch(() => {});
        throw new Error(`reading ${what}: the server sent more bytes than asked for`);
      }
    } catch (e) {
      if (/more bytes than asked/.test(e.message)) throw e;
      throw new Error(`reading ${what} failed: the response was cut short (${e.message})`);
    }
    return { buffer: b, length: n };
  }

  // One HTTP Range request: bytes [offset, offset + size) of a file of `total` bytes whose ETag or
  // Last-Modified was `version` when it was opened. An ArrayBuffer (or, given a spare buffer of at
  // least size bytes, {buffer, length}: the body read into it), or an Error that says what went wrong.
  async function rangeRequest(url, offset, size, total, version, signal, spare, at) {
    const bytes = `bytes ${offset}-${offset + size - 1}`;
    let res;
    try {
      // Not through the HTTP cache: the viewer keeps its own (a budget of heads), a model's file can be
      // far bigger than the browser's cache, and storing each response cost Chromium ~30 % of a 2 MiB
      // read here (docs/PERFORMANCE.md, "Big files"). It also means every byte comes from the file as it
      // is now, which the ETag check below then vouches for.
      res = await fetch(url, { mode: 'cors', cache: 'no-store', signal,
        headers: { Range: `bytes=${offset}-${offset + size - 1}` } });
    } catch (e) {
      throw new Error(`reading ${bytes} failed: the network failed (${e.message})`);
    }
    if (at) at.headers = epochMs();
    if (res.status !== 206) throw new Error(`reading ${bytes}: HTTP ${res.status} to a Range request`);
    const now = Number((/\/(\d+)\s*$/.exec(res.headers.get('Content-Range') || '') || [])[1]);
    const v = res.headers.get('ETag') || res.headers.get('Last-Modified') || '';
    if (now !== total || v !== version)
      throw new Error(`the file on the server changed since it was opened (${now} bytes, was ${total}); open it again`);
    if (spare && res.body) {
      const into = await readInto(res, spare, size, bytes);
      if (into) return into;
    }
    try {
      return await res.arrayBuffer();
    } catch (e) {
      throw new Error(`reading ${bytes} failed: the response was cut short (${e.message})`);
    }
  }

  // Range requests are made by a Web Worker running this same file when it can be started: a
  // response body is then read off the page's main thread, which a slow renderer keeps busy (software
  // WebGL: ~100 ms frames), and arrives as one transferred ArrayBuffer, which the page sends back once
  // it has copied the bytes into the viewer: the worker reads a later response into it (readInto).
  // Without a worker (this file's URL unknown, workers refused), the page fetches itself.
  const SCRIPT_URL = typeof document !== 'undefined' && document.currentScript ? document.currentScript.src : '';
  // Two workers, two lanes: the parts of whole heads read in the background ("bulk") go to one, and
  // the reads the view waits for (screen copies, rows in view, overviews) to the other. A worker
  // busy taking in a whole head's bytes (on a slow machine, tens of ms per task) then does not hold
  // back the request for the head just switched to: its fetch starts at once.
  let lanes;  // undefined: not tried yet; null: no worker (the page reads itself)
  function startLane(index) {
    let w;
    try {
      w = new Worker(SCRIPT_URL);
    } catch (e) {
      return null;
    }
    const pending = new Map();  // id -> {resolve, reject, fallback}
    let next = 1;
    const lane = { failed: false, index };
    w.onmessage = (e) => {
      const m = e.data, p = pending.get(m.id);
      if (!p) return;
      pending.delete(m.id);
      if (m.error !== undefined) {
        p.reject(new Error(m.error));
        return;
      }
      // The bytes; recycle() sends their buffer back to the worker, which reads the next response
      // of that size into it (call it once the bytes are copied, and use them no more).
      const bytes = new Uint8Array(m.buffer, 0, m.length === undefined ? m.buffer.byteLength : m.length);
      bytes.times = m.at;
      bytes.lane = lane.index;
      if (m.reused) stats.reads_into_spare++;
      bytes.recycle = () => {
        bytes.recycle = null;
        try {
          w.postMessage({ give: m.buffer }, [m.buffer]);
        } catch (err) { /* the worker is gone: the buffer is collected */ }
      };
      p.resolve(bytes);
    };
    w.onerror = () => {  // the worker could not start (e.g. a policy): later reads are the page's own
      lane.failed = true;
      lanes = null;
      for (const p of pending.values()) p.fallback();
      pending.clear();
    };
    lane.read = (url, offset, size, total, version, signal) => new Promise((resolve, reject) => {
      const id = next++;
      const fallback = () => rangeRequest(url, offset, size, total, version, signal)
        .then((b) => resolve(new Uint8Array(b)), reject);
      if (lane.failed) {
        fallback();
        return;
      }
      pending.set(id, { resolve, reject, fallback });
      if (signal) {
        signal.addEventListener('abort', () => {
          if (!pending.delete(id)) return;
          w.postMessage({ cancel: id });
          reject(new Error('cancelled'));
        });
      }
      w.postMessage({ id, url, offset, size, total, version });
    });
    return lane;
  }
  // The lane for a read (bulk: a part of a whole head), or null: the page reads itself.
  function rangeWorker(bulk) {
    if (lanes === undefined) {
      lanes = null;
      if (SCRIPT_URL && typeof Worker === 'function' && !global.attnvizMainThreadReads) {
        const view = startLane(0), background = view && startLane(1);
        if (view) lanes = [view, background || view];
        stats.lanes = view ? (background ? 2 : 1) : 0;
      }
    }
    return lanes ? lanes[bulk ? 1 : 0] : null;
  }

  // In a worker: answer the page's Range requests (above).
  if (typeof window === 'undefined' && typeof importScripts === 'function' && typeof postMessage === 'function') {
    const controllers = new Map();
    // Buffers the page sent back, read into again (at most SPARE_BYTES of them; the oldest go first).
    const SPARE_BYTES = 32 << 20;
    const spares = [];
    let spareBytes = 0;
    const takeSpare = (size) => {  // the smallest that holds size bytes
      let best = -1;
      for (let i = 0; i < spares.length; i++)
        if (spares[i].byteLength >= size && (best < 0 || spares[i].byteLength < spares[best].byteLength)) best = i;
      if (best < 0) return null;
      const b = spares.splice(best, 1)[0];
      spareBytes -= b.byteLength;
      return b;
    };
    global.onmessage = (e) => {
      const m = e.data;
      if (m.give) {
        spares.push(m.give);
        spareBytes += m.give.byteLength;
        while (spareBytes > SPARE_BYTES) spareBytes -= spares.shift().byteLength;
        return;
      }
      if (m.cancel) {
        const c = controllers.get(m.cancel);
        if (c) c.abort();
        controllers.delete(m.cancel);
        return;
      }
      const c = new AbortController();
      controllers.set(m.id, c);
      const spare = takeSpare(m.size);
      const at = { sent: epochMs() };  // when the request left, its headers came and its body ended (ms, the epoch)
      rangeRequest(m.url, m.offset, m.size, m.total, m.version, c.signal, spare || new ArrayBuffer(m.size), at).then((r) => {
        if (!controllers.delete(m.id)) return;
        at.body = epochMs();
        if (r instanceof ArrayBuffer) postMessage({ id: m.id, buffer: r, at }, [r]);
        else postMessage({ id: m.id, buffer: r.buffer, length: r.length, reused: !!spare, at }, [r.buffer]);
      }, (err) => {
        if (controllers.delete(m.id)) postMessage({ id: m.id, error: err.message });
      });
    };
  }

  // HTTP Range requests; the file must keep the size (and ETag / Last-Modified) it had when opened.
  // ifBig (a .npy URL): FALLBACK unless the server answers Range requests and the file is one the
  // viewer reads lazily (too big to read whole); the caller then streams it whole.
  async function openUrlLazy(ctx, url, ifBig = false) {
    const name = nameOf(url);
    const fail = (what) => new Error(`could not open ${url}: ${what}`);
    let first;
    try {
      first = await fetch(url, { mode: 'cors', cache: 'no-store', headers: { Range: 'bytes=0-65535' } });
    } catch (e) {
      if (ifBig) return FALLBACK;
      throw fail('the network failed or the server does not allow this page to read it (CORS: it must send ' +
        'Access-Control-Allow-Origin, and allow the Range header)');
    }
    if (ifBig && (first.status !== 206 || !first.ok)) {
      if (first.body) first.body.cancel().catch(() => {});
      return FALLBACK;
    }
    if (!first.ok) throw fail(`HTTP ${first.status} ${first.statusText}`.trim());
    if (first.status !== 206) {  // no Range support: the whole file, if it is small enough
      const total = Number(first.headers.get('Content-Length')) || 0;
      if (!total || total > FULL_DOWNLOAD_LIMIT) {
        if (first.body) first.body.cancel().catch(() => {});
        throw fail('the server does not answer HTTP Range requests, and the file is ' +
          (total ? `${(total / 1073741824).toFixed(1)} GiB` : 'of unknown size') +
          `, too big to download whole (over ${FULL_DOWNLOAD_LIMIT >> 20} MiB). Serve it with scripts/serve.mjs, ` +
          '`python3 -m attnviz serve`, or any server that answers Range requests.');
      }
      const progress = ctx.progressOverlay(ctx.element, url);
      let bytes;
      try {
        bytes = new Uint8Array(await first.arrayBuffer());
      } finally {
        progress.remove();
      }
      return openLazy(ctx, name, bytes.length, (offset, size) => Promise.resolve(bytes.subarray(offset, offset + size)));
    }
    const total = Number((/\/(\d+)\s*$/.exec(first.headers.get('Content-Range') || '') || [])[1]);
    if (!total) throw fail('the server answered the Range request without the file\'s size (Content-Range: bytes a-b/size)');
    const version = first.headers.get('ETag') || first.headers.get('Last-Modified') || '';
    const head = new Uint8Array(await first.arrayBuffer());
    if (ifBig && !isZip(head) && !opensLazily(ctx, head, total)) return FALLBACK;
    const one = (offset, size, signal, bulk) => {
      const w = rangeWorker(bulk);  // null once the workers failed to start: the page reads itself
      if (w) stats.worker_reads++, stats.bulk_reads += bulk ? 1 : 0;
      else stats.page_reads++;
      return w ? w.read(url, offset, size, total, version, signal)
        : rangeRequest(url, offset, size, total, version, signal).then((b) => new Uint8Array(b));
    };
    // One Range request per read: the viewer asks for a whole head (tens of MB) in 4 MiB parts, a
    // few at a time, and decodes the parts in while the rest arrive (LazyAttentionFile::kPartBytes).
    const range = (offset, size, signal, bulk) => (offset === 0 && size <= head.length
      ? Promise.resolve(head.subarray(0, size)) : one(offset, size, signal, bulk));
    if (ifBig && isZip(head)) {  // an .npz: lazily only if big and its attention is stored (np.savez)
      const npz = total >= NPZ_LAZY_MIN ? await npzPrefix(ctx, name, total, range, head) : null;
      return npz ? openLazy(ctx, name, total, range, npz) : FALLBACK;
    }
    return openLazy(ctx, name, total, range);
  }

  async function openUrl(ctx, url) {
    const path = String(url).split(/[?#]/)[0];
    if (/\.safetensors$/i.test(path)) return openUrlLazy(ctx, url);
    if (/\.np[yz]$/i.test(path)) {  // read lazily if too big to read whole (one Range request tells)
      const r = await openUrlLazy(ctx, url, true);
      if (r !== FALLBACK) return r;
    }
    const name = nameOf(url);
    let response = await ctx.fetchOk(url);  // errors say network/CORS or the HTTP status (attnviz-embed.js)
    const total = Number(response.headers.get('Content-Length')) || 0;
    const encoding = response.headers.get('Content-Encoding');
    if (!total || (encoding && encoding !== 'identity') || !response.body || !response.body.getReader) {
      // Size unknown (chunked or compressed): the whole body first, with a progress bar, as before.
      const progress = ctx.progressOverlay(ctx.element, url);
      try {
        const chunks = [];
        let received = 0;
        if (response.body && response.body.getReader) {
          const r = response.body.getReader();
          for (;;) {
            const { done, value } = await r.read();
            if (done) break;
            chunks.push(value);
            received += value.length;
            progress.set(total ? Math.min(1, received / total) : -1, received);
          }
        } else {
          chunks.push(new Uint8Array(await response.arrayBuffer()));
          received = chunks[0].length;
        }
        const bytes = new Uint8Array(received);
        let at = 0;
        for (const c of chunks) { bytes.set(c, at); at += c.length; }
        progress.remove();
        return ctx.openBytes(name, bytes);
      } catch (e) {
        progress.remove();
        throw e;
      }
    }
    if (total >= WORKER_MIN) {
      const r = await workerLoad(ctx, name, total, { body: response.body, total });
      if (r !== FALLBACK) return r;
      if (response.body.locked) {  // the worker took the body, then could not start: once more, in the page
        try {
          response = await ctx.fetchOk(url);
        } catch (e) {
          ctx.Module.ccall('attnviz_load_abort', null, ['string'], [e.message]);
          throw e;
        }
      }
    }
    const reader = response.body.getReader();
    return stream(ctx, name, total, async () => {
      const { done, value } = await reader.read();
      return done ? null : value;
    }, () => reader.cancel().catch(() => {}));
  }

  global.AttnVizLazy = { openFile: openFile, openUrl: openUrl, stream: stream, stats: stats, feedPacer: feedPacer };
})(typeof window !== 'undefined' ? window : globalThis);
