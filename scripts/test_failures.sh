#!/usr/bin/env bash
# Prints, after a failed `ctest`, what each failed test said about its failure: gtest's failure
# lines with the lines around them, sanitizer reports and the last lines of other output. ctest
# prints every line of a failed test's output in the middle of the run; this digest comes last,
# where a CI log cut to its head and tail still shows it.
# Usage: scripts/test_failures.sh [build folder, default build/native]
set -uo pipefail
dir="${1:-build/native}/Testing/Temporary"
[[ -f "$dir/LastTestsFailed.log" && -f "$dir/LastTest.log" ]] || exit 0
echo "=== what the failed tests said ==="
while IFS=: read -r _ name; do
  [[ -n "$name" ]] || continue
  echo "--- $name"
  # The test's output: from its "N/M Testing: name" line to its "<end of output>".
  out=$(awk -v name="$name" '
    $0 ~ "^[0-9]+/[0-9]+ Testing: " name "$" { on = 1; next }
    on && /^<end of output>/ { exit }
    on { print }' "$dir/LastTest.log")
  pattern="Failure$|^\[  FAILED  \]|ERROR: AddressSanitizer|runtime error:|Assertion|Error:|error:"
  if grep -q -E "$pattern" <<<"$out"; then
    grep -E -A 5 "$pattern" <<<"$out" | head -n 60
  else
    tail -n 15 <<<"$out"
  fi
done <"$dir/LastTestsFailed.log"
