// attnviz: live training in a Web Worker, with its own WASM instance (attnviz-train.wasm).
// The page (src/platform/main_web.cpp) posts {run, text} commands; this posts back
// {run, report, model} messages, the model's bytes only when an epoch ended, or {run, error}.
// Training goes in slices of ~50 ms, so a pause or a new run is taken within one slice. Slices
// follow each other through a MessageChannel, not setTimeout (which waits >= 4 ms once nested).
/* global createAttnvizTrainer */
'use strict';
importScripts('attnviz-train.js');

let M = null;
let run = 0;
let queued = 0;  // the token of the queued slice (0: none); older tokens are stale
let tokens = 0;
const next = new MessageChannel();
next.port1.onmessage = (e) => { if (e.data === queued) slice(); };
const ready = createAttnvizTrainer({ print: () => {}, printErr: (t) => console.warn('attnviz train: ' + t) })
  .then((m) => { M = m; }, (e) => { self.postMessage({ run, error: 'the training worker could not start: ' + e }); });

function schedule() {
  if (!queued && M && M._attnviz_train_running()) {
    queued = ++tokens;
    next.port2.postMessage(queued);
  }
}

function slice() {
  queued = 0;
  const report = M.ccall('attnviz_train_slice', 'string', ['number'], [50]);
  if (report) {
    const n = M._attnviz_train_model_size();
    const model = n > 0 ? M.HEAPU8.slice(M._attnviz_train_model(), M._attnviz_train_model() + n) : null;
    self.postMessage({ run, report, model }, model ? [model.buffer] : []);
  }
  schedule();
}

self.onmessage = (e) => {
  const msg = e.data || {};
  ready.then(() => {
    if (!M) return;
    if (typeof msg.run === 'number') run = msg.run;
    const err = M.ccall('attnviz_train_handle', 'string', ['string'], [String(msg.text || '')]);
    if (err) self.postMessage({ run, error: err });
    // The first report after a start carries the epoch-0 probe, even when paused.
    slice();  // a queued slice, if any, goes stale: this one takes its place
  });
};
