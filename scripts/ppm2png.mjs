// Converts a binary PPM (P6), as written by `attnviz --screenshot`, to PNG: node scripts/ppm2png.mjs in.ppm out.png
import fs from 'node:fs';
import { PNG } from 'pngjs';
const buf = fs.readFileSync(process.argv[2]);
const header = buf.toString('latin1', 0, 64).match(/^P6\s+(\d+)\s+(\d+)\s+(\d+)\s/);
if (!header) { console.error('not a binary PPM'); process.exit(1); }
const all = header[0]; const w = Number(header[1]), h = Number(header[2]);
const png = new PNG({ width: w, height: h });
for (let i = 0; i < w * h; i++) {
  png.data[i * 4] = buf[all.length + i * 3];
  png.data[i * 4 + 1] = buf[all.length + i * 3 + 1];
  png.data[i * 4 + 2] = buf[all.length + i * 3 + 2];
  png.data[i * 4 + 3] = 255;
}
fs.writeFileSync(process.argv[3], PNG.sync.write(png));
