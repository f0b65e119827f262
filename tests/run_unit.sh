#!/bin/sh
# tests/run_unit.sh BIN...: run each criterion unit-test binary and add up
# criterion's "Synthesis: Tested: X | Passing: Y | Failing: Z" lines.
# A binary that exits non-zero without a synthesis line (crash, sanitizer
# abort, timeout) counts as one failure.  A binary whose synthesis shows
# every test passing but which exits non-zero (e.g. a leak report at exit)
# also counts one failure.
# Last line of output: "N passed, N failed".  Exit 1 if anything failed.
# Env: UNIT_TIMEOUT (seconds per binary, default 300).  Owner: infra.
set -u
TMO=${UNIT_TIMEOUT:-300}
passed=0
failed=0
log=$(mktemp "${TMPDIR:-/tmp}/cassette-unit.XXXXXX")
trap 'rm -f "$log"' EXIT INT TERM

for bin in "$@"; do
    if [ ! -x "$bin" ]; then
        echo "unit: $bin: missing (build failed?)"
        failed=$((failed + 1))
        continue
    fi
    echo "== unit: $bin"
    # --jobs=2: the machine has two cores.
    timeout -k 10 "$TMO" "$bin" --jobs=2 >"$log" 2>&1
    rc=$?
    cat "$log"
    syn=$(grep -a 'Synthesis: Tested:' "$log" | tail -n 1)
    if [ -z "$syn" ]; then
        echo "unit: $bin: no criterion synthesis (exit $rc)"
        failed=$((failed + 1))
        continue
    fi
    t=$(echo "$syn" | sed -n 's/.*Tested: *\([0-9]*\).*/\1/p')
    p=$(echo "$syn" | sed -n 's/.*Passing: *\([0-9]*\).*/\1/p')
    f=$((t - p))
    passed=$((passed + p))
    failed=$((failed + f))
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        echo "unit: $bin: all tests passed but exit status $rc"
        failed=$((failed + 1))
    fi
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
