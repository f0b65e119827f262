#!/bin/sh
# bench/ddl.sh [BIN] [RUNS]: CREATE TABLE, TRUNCATE and DROP TABLE round trip
# times on one raw-socket connection to a fresh server (empty data dir).
# With CASSETTE_CONTACT=host:port, measures that running server instead.
# Owner: infra.
set -eu
cd "$(dirname "$0")/.."
BIN=${1:-build/cassette}
RUNS=${2:-20}
exec /usr/bin/python3 - "$BIN" "$RUNS" <<'PY'
import os, sys
sys.path.insert(0, "bench")
import foundation_bench as fb
binary, runs = sys.argv[1], int(sys.argv[2])
c = os.environ.get("CASSETTE_CONTACT")
if c:
    h, _, p = c.rpartition(":")
    fb.bench_ddl(h, int(p), runs)
else:
    pr = fb.Proc(binary)
    try:
        fb.first_query("127.0.0.1", pr.port, pr.t0 + 60)
        fb.bench_ddl("127.0.0.1", pr.port, runs)
    finally:
        pr.stop()
PY
