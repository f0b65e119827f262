#!/bin/sh
# bench/insert_latency.sh [BIN] [N]: serial prepared INSERT latency (p50,
# p99, p99.9) on one raw-socket connection, one request in flight, against
# a fresh server (empty data dir, default commit log settings).
# With CASSETTE_CONTACT=host:port, measures that running server instead.
# Owner: infra.
set -eu
cd "$(dirname "$0")/.."
BIN=${1:-build/cassette}
N=${2:-10000}
exec /usr/bin/python3 - "$BIN" "$N" <<'PY'
import os, sys
sys.path.insert(0, "bench")
import foundation_bench as fb
binary, n = sys.argv[1], int(sys.argv[2])
c = os.environ.get("CASSETTE_CONTACT")
if c:
    h, _, p = c.rpartition(":")
    fb.bench_insert(h, int(p), n)
else:
    pr = fb.Proc(binary)
    try:
        fb.first_query("127.0.0.1", pr.port, pr.t0 + 60)
        fb.bench_insert("127.0.0.1", pr.port, n)
    finally:
        pr.stop()
PY
