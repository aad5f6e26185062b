#!/usr/bin/env bash
# Checks that our C++ sources match the repo's .clang-format (make format-check; make test runs it).
#   scripts/format_check.sh [--diff] [--list] [FILE...]
# Without FILEs: every *.h / *.cpp under src/, tests/ and bench/ (never third_party/, build/,
# node_modules/). Prints the files that differ and exits 1; --diff also prints what would change.
# scripts/format.sh (make format) rewrites them in place. --list prints the file list and exits.
# The formatter is Debian's clang-format 14 (scripts/setup.sh installs it); other versions
# format some constructs differently, so CI and `make format` should use the same one.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CLANG_FORMAT="${CLANG_FORMAT:-clang-format}"
EXPECTED_MAJOR=14

show_diff=0
list_only=0
files=()
for arg in "$@"; do
  case "$arg" in
    --diff) show_diff=1 ;;
    --list) list_only=1 ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    -*) echo "format-check: unknown option $arg" >&2; exit 2 ;;
    *) files+=("$arg") ;;
  esac
done

# Relative paths from the repo root, sorted, so the output is the same on every machine.
list_sources() {
  (cd "$ROOT" && find src tests bench \
      \( -name third_party -o -name build -o -name node_modules \) -prune -o \
      -type f \( -name '*.h' -o -name '*.cpp' \) -print 2>/dev/null | LC_ALL=C sort)
}
if [ ${#files[@]} -eq 0 ]; then
  mapfile -t files < <(list_sources)
  cd "$ROOT"  # the listed paths are relative to the root
fi
if [ $list_only = 1 ]; then
  printf '%s\n' "${files[@]}"
  exit 0
fi

if ! command -v "$CLANG_FORMAT" >/dev/null; then
  echo "format-check: '$CLANG_FORMAT' not found; install it with scripts/setup.sh (make setup) or apt-get install clang-format" >&2
  exit 2
fi
version="$("$CLANG_FORMAT" --version)"
major="$(sed -n 's/.*version \([0-9][0-9]*\)\..*/\1/p' <<<"$version")"
if [ "$major" != "$EXPECTED_MAJOR" ]; then
  echo "format-check: warning: $version; the house format is checked with clang-format $EXPECTED_MAJOR" >&2
fi
if [ ${#files[@]} -eq 0 ]; then
  echo "format-check: no C++ sources found" >&2
  exit 2
fi

bad=()
for f in "${files[@]}"; do
  # --dry-run -Werror: prints one warning per replacement and exits non-zero when any is needed.
  if out="$("$CLANG_FORMAT" --style=file --dry-run -Werror "$f" 2>&1)"; then continue; fi
  n="$(grep -c 'Wclang-format-violations' <<<"$out" || true)"
  if [ "$n" = 0 ]; then  # not a formatting difference: clang-format itself failed
    echo "format-check: clang-format failed on $f:" >&2
    echo "$out" >&2
    exit 2
  fi
  bad+=("$f")
  echo "  $f ($n place(s) to change)"
  if [ $show_diff = 1 ]; then
    "$CLANG_FORMAT" --style=file "$f" | diff -u --label "$f" --label "$f (formatted)" "$f" - || true
  fi
done

if [ ${#bad[@]} -gt 0 ]; then
  echo "format-check: ${#bad[@]} of ${#files[@]} file(s) differ from .clang-format (listed above)."
  echo "hint: \`make format\` fixes them (scripts/format.sh rewrites the files in place); --diff shows the changes."
  exit 1
fi
echo "format-check: ${#files[@]} file(s) match .clang-format"
