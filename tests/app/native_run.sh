#!/usr/bin/env bash
# The native desktop app, for real: GLFW + OpenGL ES 3 under Xvfb (Mesa), every view for 40
# frames; each screenshot must show the UI (many colours), not a blank window.
set -euo pipefail
APP="$1"; OUT="${2:-build/test-artifacts}"
mkdir -p "$OUT"
pass=0; fail=0
for view in heatmap lines grid steps compare translate train; do
  ex=translation; [ "$view" = grid ] && ex=multihead
  ppm="$OUT/native-$view.ppm"
  if xvfb-run -a -s "-screen 0 1280x800x24" "$APP" --example "$ex" --view "$view" --frames 40 --screenshot "$ppm" \
     && node "$(dirname "$0")/../../scripts/ppm2png.mjs" "$ppm" "${ppm%.ppm}.png" \
     && colours=$(node -e "
        const {PNG}=require('pngjs'); const p=PNG.sync.read(require('fs').readFileSync(process.argv[1]));
        const s=new Set(); for(let i=0;i<p.data.length;i+=4*7) s.add(p.data[i]<<16|p.data[i+1]<<8|p.data[i+2]);
        console.log(s.size)" "${ppm%.ppm}.png") && [ "$colours" -gt 20 ]; then
    echo "ok   native $view view draws ($colours colours)"; pass=$((pass+1))
  else
    echo "FAIL native $view view"; fail=$((fail+1))
  fi
  rm -f "$ppm"
done
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
