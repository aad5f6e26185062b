// The GL side of a heatmap upload in headless Chromium (docs/PERFORMANCE.md, "Half-float
// textures"): the same weights sent to a WebGL2 texture as R32F floats (until stop 33) and as R16F
// halves (since), alternating in one page, each call followed by a 1-pixel readPixels so that the
// GPU process (SwiftShader here) has taken the texels. The CPU work before the call (ScanRows; for
// halves also FloatsToHalves) is timed by attnviz_decode_bench. Prints, per shape,
//   upload impl=r32f|r16f cols=.. rows=.. median_ms=.. min_ms=.. samples=..
//   ratio impl=r16f vs=r32f cols=.. rows=.. ratio=..   (the R32F median over the R16F one: > 1 is faster)
//   node bench/upload_browser_bench.mjs
import { openApp } from '../tests/browser/lib.mjs';

const SHAPES = [[1024, 1024], [4096, 512], [4096, 4096]];
const SAMPLES = 9;

const { page, close } = await openApp('', { waitReady: false });
try {
  await page.goto('about:blank');  // no viewer drawing beside the bench
  const lines = await page.evaluate(async ([shapes, samples]) => {
    const canvas = document.createElement('canvas');
    const gl = canvas.getContext('webgl2');
    gl.getExtension('EXT_color_buffer_float');  // R32F and R16F framebuffers, for the read-back
    const fb = gl.createFramebuffer();
    const out = [];
    for (const [cols, rows] of shapes) {
      const n = cols * rows;
      const f32 = new Float32Array(n), f16 = new Uint16Array(n);
      for (let i = 0; i < n; i++) { f32[i] = Math.random() * 0.01; f16[i] = 0x2000 + (i % 4096); }
      const tex = { r32f: gl.createTexture(), r16f: gl.createTexture() };
      for (const [k, fmt, type] of [['r32f', gl.R32F, gl.FLOAT], ['r16f', gl.R16F, gl.HALF_FLOAT]]) {
        gl.bindTexture(gl.TEXTURE_2D, tex[k]);
        gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MIN_FILTER, gl.NEAREST);
        gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MAG_FILTER, gl.NEAREST);
        gl.texImage2D(gl.TEXTURE_2D, 0, fmt, cols, rows, 0, gl.RED, type, null);
      }
      const t = { r32f: [], r16f: [] };
      const px = new Float32Array(4);
      for (let s = 0; s < samples + 1; s++) {
        for (const k of s % 2 ? ['r16f', 'r32f'] : ['r32f', 'r16f']) {
          const t0 = performance.now();
          gl.bindTexture(gl.TEXTURE_2D, tex[k]);
          gl.pixelStorei(gl.UNPACK_ALIGNMENT, k === 'r32f' ? 4 : 2);
          gl.texSubImage2D(gl.TEXTURE_2D, 0, 0, 0, cols, rows, gl.RED, k === 'r32f' ? gl.FLOAT : gl.HALF_FLOAT,
                           k === 'r32f' ? f32 : f16);
          // Read one texel back through a framebuffer: the upload has been taken by then.
          gl.bindFramebuffer(gl.FRAMEBUFFER, fb);
          gl.framebufferTexture2D(gl.FRAMEBUFFER, gl.COLOR_ATTACHMENT0, gl.TEXTURE_2D, tex[k], 0);
          gl.readPixels(0, 0, 1, 1, gl.RGBA, gl.FLOAT, px);
          gl.bindFramebuffer(gl.FRAMEBUFFER, null);
          if (s > 0) t[k].push(performance.now() - t0);
          await new Promise((r) => setTimeout(r, 0));
        }
      }
      const med = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
      for (const k of ['r32f', 'r16f'])
        out.push(`upload impl=${k} cols=${cols} rows=${rows} median_ms=${med(t[k]).toFixed(2)} min_ms=${Math.min(...t[k]).toFixed(2)} samples=${t[k].length}`);
      out.push(`ratio impl=r16f vs=r32f cols=${cols} rows=${rows} ratio=${(med(t.r32f) / med(t.r16f)).toFixed(2)}`);
      gl.deleteTexture(tex.r32f);
      gl.deleteTexture(tex.r16f);
    }
    return out;
  }, [SHAPES, SAMPLES]);
  for (const l of lines) console.log(l);
} finally {
  await close();
}
