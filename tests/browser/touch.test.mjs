// The page on a phone: a 390 x 800 touch screen at 2x. The sidebar is hidden, every tap on a tab
// switches the view (imgui 1.86 ignored a tap while another tab was hovered: only the first tap
// worked, see PressAfterMove), and a tap in Translate's sentence box, on screen, gives it the keyboard.
import { openApp, frames, screenshot, check, summary } from './lib.mjs';

const describe = (page) => page.evaluate(() => window.attnviz.describe());

async function main() {
  const app = await openApp('?view=translate', { width: 390, height: 800, dpr: 2, touch: true });
  const { page, errors } = app;
  try {
    await frames(page, 4);
    let d = await describe(page);
    check('no sidebar on a phone', d.sidebar === false);
    const box = d.translate.input_rect;
    check('the sentence box is on screen', box[0] >= 0 && box[2] <= 390 && box[2] - box[0] >= 150, JSON.stringify(box));
    const tabs = d.tabs;
    check('seven view tabs', tabs.length === 7, JSON.stringify(tabs.map((t) => t.view)));
    const seen = [];
    for (const name of ['lines', 'grid', 'heatmap', 'steps', 'translate']) {
      const t = tabs.find((x) => x.view === name);
      await page.touchscreen.tap((t.rect[0] + t.rect[2]) / 2, (t.rect[1] + t.rect[3]) / 2);
      await page.waitForFunction((v) => window.attnviz.describe().view === v, name, { timeout: 5000 }).catch(() => {});
      seen.push((await describe(page)).view);
    }
    check('every tap on a tab switches the view', seen.join(' ') === 'lines grid heatmap steps translate', seen.join(' '));
    await page.touchscreen.tap((box[0] + box[2]) / 2, (box[1] + box[3]) / 2);
    await page.waitForFunction(() => window.attnviz.describe().text_input, null, { timeout: 5000 }).catch(() => {});
    check('a tap in the sentence box gives it the keyboard', (await describe(page)).text_input === true);
    await screenshot(page, 'phone-translate.png');
    check('no console errors', errors.length === 0, errors.slice(0, 3).join(' | '));
  } finally {
    await app.close();
  }
}

main().then(() => process.exit(summary()), (e) => { console.error(e); summary(); process.exit(1); });
