#!/usr/bin/env bash
# Runs the libFuzzer targets of tests/fuzz (built by `make sanitize-build` into build/sanitize).
#   scripts/fuzz.sh [--time SECONDS] [--rss-mb MB] [--dir BUILD] [TARGET...]   fuzz (default: all, 300 s each)
#   scripts/fuzz.sh --regressions [--dir BUILD]                                 every seed, regression
#                                                                               and hostile-corpus file once
# Targets: npy npz json attention safetensors. Each run starts from its seeds (tests/fuzz/seeds/<t> and the
# io fixtures), uses tests/fuzz/<t>.dict, keeps what it learns in BUILD/fuzz-corpus/<t> and
# writes findings (crash-*, oom-*, timeout-*, leak-*) to BUILD/fuzz-findings/<t>/. A finding
# fails the run: fix it, then copy the file into tests/fuzz/regressions/<t>/ so it is replayed
# by every `make test`.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
TIME=300
RSS_MB=1024
DIR="$ROOT/build/sanitize"
REGRESSIONS=0
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --time) TIME="$2"; shift 2 ;;
    --rss-mb) RSS_MB="$2"; shift 2 ;;
    --dir) DIR="$2"; shift 2 ;;
    --regressions) REGRESSIONS=1; shift ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) targets+=("$1"); shift ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || targets=(npy npz json attention safetensors)
export ASAN_OPTIONS="detect_leaks=1:quarantine_size_mb=64:malloc_context_size=20"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"

seeds_of() {  # the read-only seed folders of a target
  case "$1" in
    npy) echo "tests/io/data" ;;
    npz) echo "tests/fuzz/seeds/npz tests/io/data tests/cli/data" ;;
    json) echo "tests/fuzz/seeds/json tests/fuzz/seeds/attention" ;;
    attention) echo "tests/fuzz/seeds/attention tests/io/data" ;;
    safetensors) echo "tests/fuzz/seeds/safetensors" ;;
  esac
}
hostile_of() {  # hostile-corpus files a target replays
  case "$1" in
    npy) ls tests/data/hostile/*.npy ;;
    npz) ls tests/data/hostile/*.npz ;;
    json) ls tests/data/hostile/*.json ;;
    attention) ls tests/data/hostile/*.npy tests/data/hostile/*.npz tests/data/hostile/*.json ;;
    safetensors) ls tests/data/hostile/*.safetensors 2>/dev/null || true ;;
  esac
}

status=0
for t in "${targets[@]}"; do
  bin="$DIR/fuzz_$t"
  if [ ! -x "$bin" ]; then
    echo "fuzz: $bin is missing: run 'make sanitize-build' first" >&2
    exit 2
  fi
  if [ $REGRESSIONS = 1 ]; then
    mapfile -t files < <(find tests/fuzz/regressions/"$t" $(seeds_of "$t") -type f ! -name '*.md' 2>/dev/null; hostile_of "$t")
    echo "== fuzz_$t: ${#files[@]} files once"
    if ! "$bin" -rss_limit_mb="$RSS_MB" -malloc_limit_mb="$RSS_MB" -timeout=10 "${files[@]}" >"$DIR/fuzz-regressions-$t.log" 2>&1; then
      tail -40 "$DIR/fuzz-regressions-$t.log"
      status=1
    fi
    continue
  fi
  work="$DIR/fuzz-corpus/$t"
  findings="$DIR/fuzz-findings/$t"
  mkdir -p "$work" "$findings"
  echo "== fuzz_$t for $TIME s (RSS limit $RSS_MB MB), corpus $work"
  # shellcheck disable=SC2046
  if ! "$bin" -max_total_time="$TIME" -rss_limit_mb="$RSS_MB" -malloc_limit_mb="$RSS_MB" -timeout=10 \
       -dict="tests/fuzz/$t.dict" -artifact_prefix="$findings/" -print_final_stats=1 \
       "$work" $(seeds_of "$t") >"$DIR/fuzz-$t.log" 2>&1; then
    tail -60 "$DIR/fuzz-$t.log"
    echo "fuzz_$t: FINDING in $findings (log $DIR/fuzz-$t.log); once fixed, copy it into tests/fuzz/regressions/$t/"
    status=1
  else
    grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb|^#[0-9]+.*DONE" "$DIR/fuzz-$t.log" | tr '\n' ' '
    echo
  fi
done
exit $status
