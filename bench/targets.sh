#!/bin/sh
# bench/targets.sh [BUILD_DIR]: every speed/memory target of issues 2, 3 and
# 6 in one run, back to back, for docs/performance.md "Targets at a glance":
# the yardstick twice (issue 6), durable writes twice (issue 3), the storage
# bench kv (cassette vs LevelDB) and bg (flush/compaction) sets (issue 3),
# startup and idle RSS (issue 2).  Takes about 5 minutes; run it on a quiet
# machine (it prints the load before and after).  Needs redis-server,
# redis-tools, libleveldb-dev and librocksdb-dev (for `make storage-bench`).
set -u
B=${1:-build}
cd "$(dirname "$0")/.."
echo "=== $(date -u +%H:%M) HEAD $(git rev-parse --short HEAD 2>/dev/null) load $(uptime | sed 's/.*average: //')"
echo "=== yardstick 1"; sh bench/yardstick.sh "$B" 10 2>&1 | tail -8
echo "=== yardstick 2"; sh bench/yardstick.sh "$B" 10 2>&1 | tail -8
echo "=== durable"; sh bench/durable.sh "$B" 10 2 2>&1 | tail -5
echo "=== storage bench kv"
make --no-print-directory BUILD="$B" storage-bench >/dev/null 2>&1
BUILD="$B" sh bench/storage_bench.sh --only kv --engines cassette,leveldb 2>&1 | sed -n '/^| workload/,$p'
echo "=== storage bench bg"; BUILD="$B" sh bench/storage_bench.sh --only bg 2>&1 | grep -v '^#'
echo "=== startup"; sh bench/startup.sh "$B/cassette" 10 2>&1 | tail -2
echo "=== end $(date -u +%H:%M) load $(uptime | sed 's/.*average: //')"
