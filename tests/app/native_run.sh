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
# File > Save view as PNG (2x) through the command: drawn offscreen at twice the window's
# resolution, encoded by libpng, written to the working directory.
dir=$(mktemp -d)
if (cd "$dir" && xvfb-run -a -s "-screen 0 1280x800x24" "$APP" --example translation --view heatmap \
      --command "save-png 2" --frames 10 >/dev/null 2>&1) \
   && png=$(ls "$dir"/*@2x.png) \
   && size=$(node -e "
        const {PNG}=require('pngjs'); const p=PNG.sync.read(require('fs').readFileSync(process.argv[1]));
        const s=new Set(); for(let i=0;i<p.data.length;i+=4*7) s.add(p.data[i]<<16|p.data[i+1]<<8|p.data[i+2]);
        if (p.width < 1000 || p.height < 900 || s.size < 20) process.exit(1);  // the 5x5 figure at 2x
        console.log(p.width + 'x' + p.height + ', ' + s.size + ' colours')" "$png"); then
  echo "ok   native save-png 2 writes the figure at 2x ($size)"; pass=$((pass+1))
  cp "$png" "$OUT/native-export@2x.png"
else
  echo "FAIL native save-png 2"; fail=$((fail+1))
fi
rm -rf "$dir"
# The command line: --help is not an error; a bad value is a usage error (2); a file that cannot be
# opened says why, on stderr and in the window, and the app goes on.
if "$APP" --help | grep -q -- "--screenshot F.ppm"; then
  echo "ok   native --help prints the options and exits 0"; pass=$((pass+1))
else
  echo "FAIL native --help"; fail=$((fail+1))
fi
code=0; "$APP" --frames many 2>/dev/null || code=$?
if [ "$code" = 2 ]; then
  echo "ok   native --frames many is a usage error"; pass=$((pass+1))
else
  echo "FAIL native --frames many exited $code"; fail=$((fail+1))
fi
dir=$(mktemp -d)
if xvfb-run -a -s "-screen 0 1280x800x24" "$APP" "$dir/missing.npy" --frames 5 --describe "$dir/d.json" 2>"$dir/err" \
   && grep -q "missing.npy': No such file or directory" "$dir/err" \
   && grep -q "No such file or directory" "$dir/d.json"; then
  echo "ok   native: a missing file says why"; pass=$((pass+1))
else
  echo "FAIL native: a missing file: $(cat "$dir/err")"; fail=$((fail+1))
fi
rm -rf "$dir"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
