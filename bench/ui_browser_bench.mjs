// UI frame-time benchmark in the browser (headless Chromium, WASM): App::Frame() CPU time as
// shown by the app's own readout (mean of the last 120 frames), for the viewer's performance
// cases. Prints one line per case. SwiftShader draws on the CPU too, so only the App::Frame()
// figure (not fps) is meaningful here.
import { openApp, frames } from '../tests/browser/lib.mjs';

const cases = [
  ['heatmap_4096x4096', '?example=big4096&view=heatmap'],
  ['grid_12x12_of_256', '?example=grid144&view=grid'],
  ['translate_default', '?view=translate'],
];
for (const [name, query] of cases) {
  const app = await openApp(query);
  try {
    await frames(app.page, 150);
    const d = await app.page.evaluate(() => window.attnviz.describe());
    const fps = await app.page.evaluate(() => new Promise((res) => {
      let n = 0; const t0 = performance.now();
      const tick = () => (++n >= 30 ? res(30000 / (performance.now() - t0)) : requestAnimationFrame(tick));
      requestAnimationFrame(tick);
    }));
    console.log(`ui_browser case=${name} frame_cpu_ms_mean120=${d.frame_cpu_ms.toFixed(3)} swiftshader_fps=${fps.toFixed(1)}`);
  } finally {
    await app.close();
  }
}
