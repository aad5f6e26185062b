#!/usr/bin/env bash
# Token labels in nine scripts in the desktop app under Xvfb (fontconfig + FreeType + HarfBuzz):
# each label box of tests/data/multiscript.json has ink and does not look like the replacement
# glyph (a reference run over '?', U+FFFD and a private-use character). Rows are horizontal; the
# window is narrow enough that the column labels are rotated.
set -euo pipefail
APP="$1"; OUT="${2:-build/test-artifacts}"
HERE="$(cd "$(dirname "$0")" && pwd)"; ROOT="$HERE/../.."
mkdir -p "$OUT"
run() {  # file name
  xvfb-run -a -s "-screen 0 1000x760x24" "$APP" --view heatmap --frames 40 --command "numbers off" --command "view heatmap" \
    --screenshot "$OUT/native-labels-$2.ppm" --describe "$OUT/native-labels-$2.json" "$1"
  node "$ROOT/scripts/ppm2png.mjs" "$OUT/native-labels-$2.ppm" "$OUT/native-labels-$2.png"
  rm -f "$OUT/native-labels-$2.ppm"
}
run "$ROOT/tests/data/multiscript.json" scripts
run "$ROOT/tests/data/replacement_glyphs.json" reference
node -e "const d=JSON.parse(require('fs').readFileSync(process.argv[1],'utf8'));
  if (d.label_backend !== 'freetype') { console.log('FAIL label back end is ' + d.label_backend); process.exit(1); }
  console.log('ok   label back end freetype, ' + d.label_cache.entries + ' labels cached')" "$OUT/native-labels-scripts.json"
node "$HERE/labels_check.mjs" "$OUT/native-labels-scripts.png" "$OUT/native-labels-scripts.json" \
  "$OUT/native-labels-reference.png" "$OUT/native-labels-reference.json"
