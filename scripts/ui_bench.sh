#!/usr/bin/env bash
# UI frame-time benchmark (native, under Xvfb): CPU time of App::Frame() for the two
# performance cases of the viewer. Prints one line per case.
set -euo pipefail
cd "$(dirname "$0")/.."
APP=build/native/attnviz
run() {  # name, args...
  local name="$1"; shift
  local line
  line=$(xvfb-run -a -s "-screen 0 1280x800x24" "$APP" "$@" --frames 330 --frame-stats | grep '^frame_cpu_ms')
  echo "ui case=$name ${line#frame_cpu_ms }"
}
run heatmap_4096x4096 --example big4096 --view heatmap
run grid_12x12_of_256 --example grid144 --view grid
run translate_default --view translate
run lines_translation --example translation --view lines
