#!/bin/sh
# bench/yardstick.sh [BUILD_DIR] [SECONDS]: cassette vs redis-benchmark, same
# machine, same run (issue 6's throughput targets).  Prints a markdown table.
#
#   redis:    redis-benchmark SET/GET, 100-byte values, -c 50 (one request in
#             flight per connection) and -c 50 -P 16 (16 in flight)
#   cassette: cassette-bench preset:kv (prepared 100-byte INSERT / point
#             SELECT), --connections 50 --concurrency 1 and 16; each 50 x 1
#             max run is followed by a run at a fixed rate of half of it,
#             for the p99, INSERT and SELECT.
# Needs Debian's redis-server and redis-tools.  Everything binds to
# 127.0.0.1 on free ports; every run is bounded in time.
set -eu
B=${1:-build}
SECS=${2:-10}
cd "$(dirname "$0")/.."
. bench/lib.sh
command -v redis-server >/dev/null && command -v redis-benchmark >/dev/null || {
    echo "yardstick: needs redis-server and redis-tools (apt-get install redis-server redis-tools)" >&2; exit 2; }
W=$(mktemp -d "${TMPDIR:-/tmp}/yardstick.XXXXXX")
cleanup() { kill "$CPID" "$RPID" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$W"; }
trap cleanup EXIT INT TERM

RPORT=$(free_port)
redis-server --bind 127.0.0.1 --port "$RPORT" --save '' --appendonly no --daemonize no >"$W/redis.log" 2>&1 &
RPID=$!
"$B/cassette" --listen 127.0.0.1 --port 0 --data-dir "$W/data" >"$W/cassette.log" 2>&1 &
CPID=$!
CPORT=$(cassette_port "$W/cassette.log" "$CPID") || exit 1
sleep 0.3

N=$((SECS * 100000))
redis_rate() { # args... -> "SET GET" requests/s
    redis-benchmark -h 127.0.0.1 -p "$RPORT" -d 100 -t set,get -n "$N" -q "$@" 2>/dev/null \
        | tr '\r' '\n' | awk '/requests per second/ {for (i=1;i<=NF;i++) if ($i=="requests") print $(i-1)}' | tr '\n' ' '
}
r1=$(redis_rate -c 50)
r16=$(redis_rate -c 50 -P 16)

json_field() { /usr/bin/python3 -c "import json,sys; d=json.load(open('$1'))['schemes'][0]; print($2)"; }
kv() { # name conns conc ops [extra] -> json path
    out="$W/$1.json"
    "$B/cassette-bench" run preset:kv -p "$CPORT" --connections "$2" --concurrency "$3" --ops "$4" \
        --duration "${SECS}s" --json "$out" --quiet ${5:-} >/dev/null
    echo "$out"
}
"$B/cassette-bench" run preset:kv -p "$CPORT" --ops insert=1 -n 200000 --quiet >/dev/null   # fill
# Each fixed-rate run follows the max run it halves, on the same data: the
# 50 x 16 INSERT run adds ~4M writes (several sstables, more than the block
# cache holds), after which a point SELECT costs ~1.7x the loop CPU, so
# "half of max" measured before it would be ~85% of max after it.
ins1=$(kv ins1 50 1 insert=1)
max=$(json_field "$ins1" "d['throughput']")
half=$(/usr/bin/python3 -c "print(int($max/2))")
rate=$(kv rate 50 1 insert=1 "--rate $half")
get1=$(kv get1 50 1 read=1)
gmax=$(json_field "$get1" "d['throughput']")
ghalf=$(/usr/bin/python3 -c "print(int($gmax/2))")
grate=$(kv grate 50 1 read=1 "--rate $ghalf")
ins16=$(kv ins16 50 16 insert=1); get16=$(kv get16 50 16 read=1)

f() { json_field "$1" "'%.0f' % d['throughput']"; }
p() { json_field "$1" "'%.3f / %.3f' % (d['operations']['$2']['latency_ms']['p50'], d['operations']['$2']['latency_ms']['p99'])"; }
set -- $r1; rs1=$1; rg1=$2
set -- $r16; rs16=$1; rg16=$2
echo "| workload | redis-benchmark (req/s) | cassette (ops/s) | ratio | cassette p50 / p99 ms |"
echo "|---|---|---|---|---|"
ratio() { /usr/bin/python3 -c "print('%.2fx' % ($1 / $2))"; }
echo "| 50 conns x 1 in flight: SET vs prepared INSERT | $rs1 | $(f "$ins1") | $(ratio "$(f "$ins1")" "$rs1") | $(p "$ins1" insert) |"
echo "| 50 conns x 1 in flight: GET vs prepared SELECT | $rg1 | $(f "$get1") | $(ratio "$(f "$get1")" "$rg1") | $(p "$get1" read) |"
echo "| 50 conns x 16 in flight: SET -P 16 vs INSERT | $rs16 | $(f "$ins16") | $(ratio "$(f "$ins16")" "$rs16") | $(p "$ins16" insert) |"
echo "| 50 conns x 16 in flight: GET -P 16 vs SELECT | $rg16 | $(f "$get16") | $(ratio "$(f "$get16")" "$rg16") | $(p "$get16" read) |"
echo "| INSERT at a fixed $half/s (half of max), CO-corrected | - | $(f "$rate") | - | $(p "$rate" insert) |"
echo "| SELECT at a fixed $ghalf/s (half of max), CO-corrected | - | $(f "$grate") | - | $(p "$grate" read) |"
