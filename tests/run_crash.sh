#!/bin/sh
# tests/run_crash.sh BINARY: crash tests (tests/crash/test_*.py): the real
# server is killed with SIGKILL after acknowledging writes, restarted, and
# every acknowledged write must be readable (per commitlog sync mode).
# Last line: "N passed, N failed".  Exit 1 if anything failed.
# Owner: infra.
set -u
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-build/cassette}
[ $# -gt 0 ] && shift
case "$bin" in /*) ;; *) bin="$(pwd)/$bin" ;; esac
export CASSETTE_BIN="$bin"
PY=${PYTHON:-/usr/bin/python3}
if [ -z "${CASSETTE_CONTACT:-}" ] && [ ! -x "$bin" ]; then
    echo "crash: server binary $bin missing (build failed?)"
    echo "0 passed, 1 failed"
    exit 1
fi
TMO=${CRASH_TIMEOUT:-600}
passed=0
failed=0
out=$(mktemp "${TMPDIR:-/tmp}/cassette-crash.XXXXXX")
trap 'rm -f "$out" "$out.rc"' EXIT INT TERM

echo "== crash: $bin"
{ cd "$here/crash" && timeout -k 10 "$TMO" "$PY" -m pytest -p no:cacheprovider -rfE "$@" 2>&1
  echo $? >"$out.rc"; } | tee "$out"
rc=$(cat "$out.rc" 2>/dev/null || echo 2)
summ=$(grep -aE '^=+ .*( passed| failed| error| skipped| deselected| no tests ran).* in [0-9.]+s' "$out" | tail -n 1)
p=$(echo "$summ" | grep -oE '[0-9]+ passed' | grep -oE '[0-9]+' || true)
f=$(echo "$summ" | grep -oE '[0-9]+ failed' | grep -oE '[0-9]+' || true)
e=$(echo "$summ" | grep -oE '[0-9]+ errors?' | grep -oE '[0-9]+' || true)
passed=${p:-0}
failed=$((${f:-0} + ${e:-0}))
if [ "$rc" -ne 0 ] && [ "$rc" -ne 5 ] && [ "$failed" -eq 0 ]; then
    echo "pytest: exit status $rc without a failed test (interrupted, timeout or crash)"
    failed=1
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
