#!/bin/sh
# select_states.sh: 50 x 16 point SELECT throughput and request-loop CPU per
# SELECT by data state, for one or two server binaries (an A/B on the same
# data).  Used for docs/performance.md's read-path passes.
#
#   sh bench/select_states.sh STATE BIN_A [BIN_B] [ROUNDS]
#
# STATE:
#   memtable  a fresh server with memtable_heap_space 4096MiB, a 200k-row
#             fill and 8 s of 50 x 16 INSERT over the kv preset's 1M keys
#             (every key in the memtable, overwritten ~4 times), then 6 s
#             of 50 x 16 SELECT; fresh data for every run
#   targets   the same with the default configuration: the state
#             bench/targets.sh reads in (8-10 sstables, compaction running)
#   sstables  one seed made by BIN_A as in "targets" but with the table's
#             autocompaction off (schema) and a flush at the end, then for
#             every run a copy of it (the same sstables each time), a 3 s
#             warm-up and 6 s measured
#
# Each run prints: binary, SELECT/s, loop CPU us per SELECT (utime+stime of
# the request loop thread over the measured run / SELECTs answered).  BIN_A
# and BIN_B alternate ROUNDS times (default 3).  Bound: 40 s per run.
set -eu
STATE=${1:?state: memtable, targets or sstables}
A=${2:?server binary}
BB=${3:-}
ROUNDS=${4:-3}
cd "$(dirname "$0")/.."
. bench/lib.sh
need_bench select_states
W=$(mktemp -d "${TMPDIR:-/tmp}/select_states.XXXXXX")
SP=
cleanup() { [ -n "$SP" ] && kill "$SP" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$W"; }
trap cleanup EXIT INT TERM

start() { # bin datadir config -> sets SP, PORT
    PORT=$(free_port)
    rm -f "$W/srv.log"
    "$1" --listen 127.0.0.1 --port "$PORT" --data-dir "$2" --config "$3" >"$W/srv.log" 2>&1 &
    SP=$!
    i=0
    while ! grep -q "listening on" "$W/srv.log" 2>/dev/null; do
        i=$((i + 1)); [ $i -gt 300 ] && { echo "server did not start" >&2; exit 1; }; sleep 0.05
    done
}
stop() { kill "$SP" 2>/dev/null || true; wait "$SP" 2>/dev/null || true; SP=; }
kv() { "$BENCH" run preset:kv -p "$PORT" "$@" --quiet >/dev/null; }
fill() { kv --ops insert=1 -n 200000; }
inserts() { kv --connections 50 --concurrency 16 --ops insert=1 --duration 8s; }
loop_cpu() { awk '{print $14 + $15}' "/proc/$SP/task/$SP/stat"; }
measure() { # label
    t0=$(loop_cpu)
    kv --connections 50 --concurrency 16 --ops read=1 --duration 6s --warmup 0 --json "$W/r.json"
    t1=$(loop_cpu)
    tck=$(getconf CLK_TCK)
    /usr/bin/python3 -c "
import json
d = json.load(open('$W/r.json'))['schemes'][0]
print('%s  %.0f SELECT/s  %.3f us loop per SELECT' % ('$1', d['throughput'], ($t1 - $t0) * 1e6 / $tck / d['ops_ok']))"
}

printf 'admin_port: 0\n' >"$W/default.yaml"
printf 'admin_port: 0\nmemtable_heap_space: 4096MiB\n' >"$W/big.yaml"

if [ "$STATE" = sstables ]; then
    start "$A" "$W/seed" "$W/default.yaml"
    fill
    /usr/bin/python3 - "$PORT" <<'PY'
import sys
from cassandra.cluster import Cluster
c = Cluster(['127.0.0.1'], port=int(sys.argv[1]))
s = c.connect()
s.execute("ALTER TABLE cassette_bench.kv WITH compaction = "
          "{'class': 'SizeTieredCompactionStrategy', 'enabled': 'false'}")
c.shutdown()
PY
    inserts
    stop   # a clean shutdown flushes the memtable
    echo "seed: $(ls "$W"/seed/data/cassette_bench/*/ | grep -c 'Data.db') sstables"
fi

for r in $(seq "$ROUNDS"); do
    for bin in $A $BB; do
        rm -rf "$W/run"
        case "$STATE" in
        memtable|targets)
            conf="$W/default.yaml"; [ "$STATE" = memtable ] && conf="$W/big.yaml"
            start "$bin" "$W/run" "$conf"
            fill; inserts ;;
        sstables)
            cp -a "$W/seed" "$W/run"
            start "$bin" "$W/run" "$W/default.yaml"
            kv --connections 50 --concurrency 16 --ops read=1 --duration 3s --warmup 0 ;;
        *) echo "select_states: unknown state $STATE" >&2; exit 2 ;;
        esac
        measure "$bin"
        stop
    done
done
