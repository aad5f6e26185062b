// attnviz exports in the browser (loaded on first use by attnviz-embed.js; docs/EMBED.md):
//   png(viewer, {scale})        the view drawn at 1x-4x, encoded by the page's canvas (toBlob)
//   gif(viewer, {stepMs, scale}) one frame per decoding step, encoded by npm's gifenc
//   webm(viewer, {stepMs, scale}) the same frames through MediaRecorder, each held stepMs
// No eval, no workers: it runs under the strict Content-Security-Policy the viewer supports.
import { GIFEncoder, applyPalette, quantize } from './gifenc.esm.js';

let nextId = 1;

// The view drawn at `scale` in the next frame, as an ImageData (cropped to the view's area).
export function capture(viewer, scale = 1) {
  const Module = viewer.module;
  const id = nextId++;
  return new Promise((resolve, reject) => {
    Module.attnvizCaptures = Module.attnvizCaptures || {};
    Module.attnvizCaptures[id] = { resolve, reject };
    const err = Module.ccall('attnviz_capture', 'string', ['number', 'number'], [Number(scale), id]);
    if (err) {
      delete Module.attnvizCaptures[id];
      reject(new Error(err));
    }
    Module.attnvizWake = true;
  });
}

function canvasOf(image) {
  const c = document.createElement('canvas');
  c.width = image.width;
  c.height = image.height;
  c.getContext('2d').putImageData(image, 0, 0);
  return c;
}

export async function png(viewer, { scale = 1 } = {}) {
  const image = await capture(viewer, scale);
  return new Promise((resolve, reject) => canvasOf(image).toBlob(
    (b) => (b ? resolve(b) : reject(new Error('the canvas could not encode a PNG'))), 'image/png'));
}

// One ImageData per animation step: rows 1..count while decoding, frames 0..count-1 otherwise
// (a view without animation gives one frame). The step shown before is restored.
export async function stepFrames(viewer, scale = 1) {
  const t = viewer.describe().timeline;
  const first = t.mode === 'decoding' ? 1 : 0;
  const last = Math.max(first, t.mode === 'decoding' ? t.count : t.count - 1);
  const saved = t.step, playing = t.playing;
  viewer.pause();
  const frames = [];
  try {
    for (let k = first; k <= last; k++) {
      const err = viewer.command('step ' + k);
      if (err) throw new Error(err);
      frames.push(await capture(viewer, scale));
    }
  } finally {
    viewer.command('step ' + saved);
    if (playing) viewer.play();
  }
  // Every frame the size of the first (the view's area does not change between steps; be safe).
  const { width, height } = frames[0];
  return frames.map((f) => (f.width === width && f.height === height ? f
    : canvasOf(f).getContext('2d').getImageData(0, 0, width, height)));
}

function checkStep(stepMs) {
  const ms = Number(stepMs);
  if (!(ms >= 20 && ms <= 60000)) throw new Error('stepMs must be between 20 and 60000');
  return ms;
}

export async function gif(viewer, { stepMs = 700, scale = 1 } = {}) {
  const ms = checkStep(stepMs);
  const frames = await stepFrames(viewer, scale);
  const { width, height } = frames[0];
  // One palette for the whole clip, from every frame (rows of every 4th pixel keep it quick).
  const sample = new Uint8ClampedArray(frames.length * Math.ceil(width * height / 4) * 4);
  let n = 0;
  for (const f of frames) for (let i = 0; i < f.data.length; i += 16) sample.set(f.data.subarray(i, i + 4), 4 * n++);
  const palette = quantize(sample.subarray(0, 4 * n), 256);
  const enc = GIFEncoder();
  frames.forEach((f, k) => enc.writeFrame(applyPalette(f.data, palette), width, height,
    { palette, delay: k === frames.length - 1 ? Math.max(ms, 2000) : ms, repeat: 0 }));
  enc.finish();
  return new Blob([enc.bytes()], { type: 'image/gif' });
}

const sleepUntil = (t) => new Promise((r) => setTimeout(r, Math.max(0, t - performance.now())));

// One recording: a MediaRecorder on an opaque 2D canvas, one requestFrame() per step at
// start + k * ms and a last one at the end. Returns the WebM and how late the most delayed
// frame was given (a busy main thread delays timers; the file's times are the capture times).
async function recordOnce(frames, ms) {
  const canvas = document.createElement('canvas');  // opaque: no alpha plane in the video
  canvas.width = frames[0].width;
  canvas.height = frames[0].height;
  const ctx = canvas.getContext('2d', { alpha: false });
  const stream = canvas.captureStream(0);  // before the first drawing, which would be a frame of its own
  const track = stream.getVideoTracks()[0];
  const type = ['video/webm;codecs=vp9', 'video/webm;codecs=vp8', 'video/webm'].find((t) => MediaRecorder.isTypeSupported(t));
  if (!type) throw new Error('this browser cannot record WebM');
  const rec = new MediaRecorder(stream, { mimeType: type, videoBitsPerSecond: 4e6 });
  const chunks = [];
  rec.ondataavailable = (e) => { if (e.data && e.data.size) chunks.push(e.data); };
  const stopped = new Promise((resolve) => { rec.onstop = resolve; });
  rec.start();
  // The recorder and its encoder start up before the first frame is given (nothing is recorded
  // until requestFrame), so their start-up does not delay the first steps.
  await sleepUntil(performance.now() + 300);
  const start = performance.now();
  let late = 0;
  const give = async (k, image) => {
    await sleepUntil(start + k * ms);
    ctx.putImageData(image, 0, 0);  // also for the last frame: an unchanged canvas gives no frame
    late = Math.max(late, performance.now() - (start + k * ms));
    track.requestFrame();
  };
  for (let k = 0; k < frames.length; k++) await give(k, frames[k]);
  await give(frames.length, frames[frames.length - 1]);  // the last step's end
  await sleepUntil(performance.now() + 300);  // the encoder takes the last frame before the stop
  rec.stop();
  await stopped;
  track.stop();
  return { blob: new Blob(chunks, { type: 'video/webm' }), late };
}

// The frames are captured first, then played into the recorder: every step lasts stepMs in the
// file whatever the page's frame rate. A recording whose timers ran more than 25 ms late is made
// again (up to three times; the most punctual is kept).
export async function webm(viewer, { stepMs = 700, scale = 1 } = {}) {
  const ms = checkStep(stepMs);
  if (typeof MediaRecorder === 'undefined') throw new Error('this browser has no MediaRecorder');
  const frames = await stepFrames(viewer, scale);
  let best = null;
  for (let attempt = 0; attempt < 3 && !(best && best.late <= 25); attempt++) {
    const r = await recordOnce(frames, ms);
    if (!best || r.late < best.late) best = r;
  }
  return best.blob;
}

export function download(blob, name) {
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = name;
  document.body.appendChild(a);
  a.click();
  setTimeout(() => { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
}
