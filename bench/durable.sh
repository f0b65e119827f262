#!/bin/sh
# bench/durable.sh [BUILD_DIR] [SECONDS] [RUNS]: durable writes side by side
# (issue 3's group-commit target): 50 clients with one 100-byte write in
# flight each, every write acknowledged only after fdatasync.
#
#   redis:    redis-server --appendonly yes --appendfsync always,
#             redis-benchmark -c 50 -t set -d 100
#   cassette: commitlog_sync: batch (concurrent writers share one fsync) and
#             commitlog_sync: group with a 1 ms window, cassette-bench
#             preset:kv --connections 50 --concurrency 1 --ops insert=1,
#             and batch with one client (--connections 1: serial durable
#             latency, which batch-mode gathering must not lengthen)
# Runs alternate (redis, batch, group) RUNS times so that machine noise hits
# all three alike.  Prints a markdown table, one row per run, and the
# server's own "writes per sync" line from its shutdown log.
# Needs Debian's redis-server and redis-tools.  Binds 127.0.0.1, free ports,
# every run bounded in time.
set -eu
B=${1:-build}
SECS=${2:-10}
RUNS=${3:-3}
cd "$(dirname "$0")/.."
. bench/lib.sh
command -v redis-server >/dev/null && command -v redis-benchmark >/dev/null || {
    echo "durable: needs redis-server and redis-tools (apt-get install redis-server redis-tools)" >&2; exit 2; }
W=$(mktemp -d "${TMPDIR:-/tmp}/durable.XXXXXX")
RPID=; CPID=
cleanup() { for p in $RPID $CPID; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$W"; }
trap cleanup EXIT INT TERM

redis_run() { # -> SET/s
    port=$(free_port); rm -rf "$W/r"; mkdir -p "$W/r"
    redis-server --bind 127.0.0.1 --port "$port" --dir "$W/r" --appendonly yes --appendfsync always \
        --save '' --daemonize no >"$W/redis.log" 2>&1 &
    RPID=$!
    i=0; until redis-cli -p "$port" ping >/dev/null 2>&1; do i=$((i+1)); [ $i -gt 100 ] && break; sleep 0.05; done
    redis-benchmark -h 127.0.0.1 -p "$port" -c 50 -t set -d 100 -n $((SECS * 40000)) -q 2>/dev/null \
        | tr '\r' '\n' | awk '/requests per second/ {for (i=1;i<=NF;i++) if ($i=="requests") print $(i-1)}' | tail -1
    kill "$RPID"; wait "$RPID" 2>/dev/null || true; RPID=
}

cassette_run() { # MODE [CONNECTIONS] -> "ops/s p50 p99 per-sync-line"
    rm -rf "$W/c"; mkdir -p "$W/c"
    if [ "$1" = group ]; then
        printf 'commitlog_sync: group\ncommitlog_sync_group_window: 1ms\n' >"$W/c.yaml"
    else
        printf 'commitlog_sync: batch\n' >"$W/c.yaml"
    fi
    rm -f "$W/c.log"   # else the wait below may read the last run's line (and port) before the shell truncates it
    "$B/cassette" --config "$W/c.yaml" --listen 127.0.0.1 --port 0 --data-dir "$W/c/data" >"$W/c.log" 2>&1 &
    CPID=$!
    port=$(cassette_port "$W/c.log" "$CPID") || exit 1
    "$B/cassette-bench" run preset:kv -p "$port" --connections "${2:-50}" --concurrency 1 --ops insert=1 \
        --duration "${SECS}s" --json "$W/c.json" --quiet >/dev/null
    kill "$CPID"; wait "$CPID" 2>/dev/null || true; CPID=
    sync_line=$(grep -o 'commitlog: [0-9]* syncs.*' "$W/c.log" | tail -1 || true)
    /usr/bin/python3 -c "
import json; d = json.load(open('$W/c.json'))['schemes'][0]; l = d['operations']['insert']['latency_ms']
print('%.0f | %.3f / %.3f' % (d['throughput'], l['p50'], l['p99']))" | tr '\n' ' '
    echo "| ${sync_line:--}"
}

echo "# machine: $(nproc) vCPUs; load before: $(uptime | sed 's/.*load average: //')"
echo "| run | redis appendfsync always (SET/s) | cassette batch (INSERT/s) | batch p50 / p99 ms | batch sync log | cassette group 1 ms (INSERT/s) | group p50 / p99 ms | group sync log | batch, 1 client (INSERT/s) | 1 client p50 / p99 ms | 1 client sync log |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
r=1
while [ $r -le "$RUNS" ]; do
    rs=$(redis_run)
    cb=$(cassette_run batch)
    cg=$(cassette_run group)
    c1=$(cassette_run batch 1)
    echo "| $r | $rs | $cb | $cg | $c1 |"
    r=$((r + 1))
done
echo "# load after: $(uptime | sed 's/.*load average: //')"
