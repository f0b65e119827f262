#!/bin/sh
# tests/run_integration.sh BINARY: integration tests against the real server.
#   1. pytest over tests/integration (Debian's /usr/bin/python3 and its
#      python3-cassandra driver); each test module starts BINARY itself.
#   2. node's built-in runner over tests/integration/node/*.test.js with the
#      npm cassandra-driver from tests/integration/node_modules.
#   3. go test over tests/integration/go with Debian's gocql, against one
#      server started here.
# Last line: "N passed, N failed" (pytest errors count as failures, pytest's
# exit 5 "no tests collected" counts as nothing).  Exit 1 if anything failed.
# Env: CASSETTE_CONTACT=host:port runs the tests against an already running
# server (e.g. Apache Cassandra 4.1) instead of starting BINARY.
# Owner: infra.
set -u
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-build/cassette}
[ $# -gt 0 ] && shift
case "$bin" in /*) ;; *) bin="$(pwd)/$bin" ;; esac
export CASSETTE_BIN="$bin"
PY=${PYTHON:-/usr/bin/python3}
if [ -z "${CASSETTE_CONTACT:-}" ] && [ ! -x "$bin" ]; then
    echo "integration: server binary $bin missing (build failed?)"
    echo "0 passed, 1 failed"
    exit 1
fi
TMO=${INTEGRATION_TIMEOUT:-900}
passed=0
failed=0
out=$(mktemp "${TMPDIR:-/tmp}/cassette-int.XXXXXX")
trap 'rm -f "$out" "$out.tap" "$out.rc" "$out.go"' EXIT INT TERM

# count_pytest FILE RC: add pytest's summary counts to passed/failed.
count_pytest() {
    summ=$(grep -aE '^=+ .*( passed| failed| error| skipped| deselected| no tests ran).* in [0-9.]+s' "$1" | tail -n 1)
    p=$(echo "$summ" | grep -oE '[0-9]+ passed' | grep -oE '[0-9]+' || true)
    f=$(echo "$summ" | grep -oE '[0-9]+ failed' | grep -oE '[0-9]+' || true)
    e=$(echo "$summ" | grep -oE '[0-9]+ errors?' | grep -oE '[0-9]+' || true)
    passed=$((passed + ${p:-0}))
    failed=$((failed + ${f:-0} + ${e:-0}))
    if [ "$2" -ne 0 ] && [ "$2" -ne 5 ] && [ "${f:-0}" -eq 0 ] && [ "${e:-0}" -eq 0 ]; then
        echo "pytest: exit status $2 without a failed test (interrupted, timeout or crash)"
        failed=$((failed + 1))
    fi
}

echo "== integration (pytest): $bin"
{ cd "$here/integration" && timeout -k 10 "$TMO" "$PY" -m pytest -p no:cacheprovider -rfE "$@" 2>&1
  echo $? >"$out.rc"; } | tee "$out"
rc=$(cat "$out.rc" 2>/dev/null || echo 2)
count_pytest "$out" "$rc"

if ls "$here"/integration/node/*.test.js >/dev/null 2>&1; then
    echo "== integration (node --test): $bin"
    if [ ! -d "$here/integration/node_modules/cassandra-driver" ]; then
        echo "node: cassandra-driver missing: run make deps"
        failed=$((failed + 1))
    else
        (cd "$here/integration" && timeout -k 10 "$TMO" node --test \
            --test-reporter=spec --test-reporter-destination=stdout \
            --test-reporter=tap --test-reporter-destination="$out.tap" \
            node/*.test.js 2>&1)
        nrc=$?
        np=$(grep -aE '^# pass [0-9]+' "$out.tap" | tail -n 1 | grep -oE '[0-9]+')
        nf=$(grep -aE '^# fail [0-9]+' "$out.tap" | tail -n 1 | grep -oE '[0-9]+')
        nc=$(grep -aE '^# cancelled [0-9]+' "$out.tap" | tail -n 1 | grep -oE '[0-9]+')
        passed=$((passed + ${np:-0}))
        failed=$((failed + ${nf:-0} + ${nc:-0}))
        if [ "$nrc" -ne 0 ] && [ "${nf:-0}" -eq 0 ] && [ "${nc:-0}" -eq 0 ]; then
            echo "node: exit status $nrc without a failed test"
            failed=$((failed + 1))
        fi
    fi
fi

# 3. Go: gocql (Debian's golang-github-gocql-gocql-dev, GOPATH mode, no
#    network) over tests/integration/go, against a server started here
#    (or CASSETTE_CONTACT).  Skipped, with a line saying so, without go.
if command -v go >/dev/null 2>&1 && [ -d /usr/share/gocode/src/github.com/gocql/gocql ]; then
    echo "== integration (go test, gocql): $bin"
    gdir=$(mktemp -d "${TMPDIR:-/tmp}/cassette-go.XXXXXX")
    contact=${CASSETTE_CONTACT:-}
    gpid=
    if [ -z "$contact" ]; then
        "$bin" --listen 127.0.0.1 --port 0 --data-dir "$gdir/data" >"$gdir/server.log" 2>&1 &
        gpid=$!
        i=0
        while ! grep -q "^cassette listening on" "$gdir/server.log" 2>/dev/null; do
            i=$((i + 1)); [ $i -gt 400 ] && break; sleep 0.05
        done
        gport=$(sed -n 's/^cassette listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$gdir/server.log" | head -1)
        contact="127.0.0.1:${gport:-0}"
    fi
    (cd "$here/integration/go" && GO111MODULE=off GOPATH="$gdir/gopath:/usr/share/gocode" \
        GOCACHE="${TMPDIR:-/tmp}/cassette-gocache" GOFLAGS= CASSETTE_CONTACT="$contact" \
        timeout -k 10 "$TMO" go test -v -count=1 . 2>&1) | tee "$out.go"
    if [ -n "$gpid" ]; then
        kill "$gpid" 2>/dev/null; wait "$gpid" 2>/dev/null
        if grep -qE "ERROR|runtime error|Sanitizer" "$gdir/server.log"; then
            echo "go: server log has errors:"; grep -E "ERROR|runtime error|Sanitizer" "$gdir/server.log" | head -20
            failed=$((failed + 1))
        fi
    fi
    gp=$(grep -acE '^--- PASS' "$out.go")
    gf=$(grep -acE '^--- FAIL' "$out.go")
    passed=$((passed + gp))
    failed=$((failed + gf))
    if [ "$gp" -eq 0 ] && [ "$gf" -eq 0 ]; then
        echo "go: no test ran (build failed?)"
        failed=$((failed + 1))
    fi
    rm -rf "$gdir" "$out.go"
else
    echo "== integration (go test): skipped, no go or gocql (make deps installs them)"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
