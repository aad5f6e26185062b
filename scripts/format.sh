#!/usr/bin/env bash
# Formats our C++ sources in place with the repo's .clang-format (make format).
#   scripts/format.sh [FILE...]
# Without FILEs: the same files scripts/format_check.sh checks (*.h / *.cpp under src/, tests/,
# bench/; never third_party/, build/, node_modules/). Prints the files it changed.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CLANG_FORMAT="${CLANG_FORMAT:-clang-format}"

if ! command -v "$CLANG_FORMAT" >/dev/null; then
  echo "format: '$CLANG_FORMAT' not found; install it with scripts/setup.sh (make setup) or apt-get install clang-format" >&2
  exit 2
fi
files=("$@")
if [ ${#files[@]} -eq 0 ]; then
  mapfile -t files < <(bash "$ROOT/scripts/format_check.sh" --list)
  cd "$ROOT"
fi

changed=0
for f in "${files[@]}"; do
  before="$(cksum <"$f")"
  "$CLANG_FORMAT" --style=file -i "$f"
  if [ "$(cksum <"$f")" != "$before" ]; then
    echo "  formatted $f"
    changed=$((changed + 1))
  fi
done
echo "format: $changed of ${#files[@]} file(s) changed"
