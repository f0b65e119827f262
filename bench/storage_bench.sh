#!/bin/sh
# storage_bench.sh: run the storage micro-benchmark (cassette vs LevelDB vs
# RocksDB, docs/storage-bench.md).  Owner: sbench.
#   make storage-bench && sh bench/storage_bench.sh [flags...]
# Flags go to cassette-storage-bench (--keys N, --wide-rows N, --engines ...,
# --only kv|wide|bg|bg-kv|bg-wide; bg: flush and compaction MB/s, cassette
# only).  BUILD=build/x selects the build directory.
set -e
BIN=${BUILD:-build}/cassette-storage-bench
DIR=${SBENCH_DIR:-/tmp/cassette-storage-bench.$$}
if [ ! -x "$BIN" ]; then
    echo "$BIN not built: run 'make storage-bench' (needs libleveldb-dev librocksdb-dev)" >&2
    exit 1
fi
echo "# machine: $(nproc) vCPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "# load before: $(uptime | sed 's/.*load average/load average/')"
echo "# leveldb $(dpkg-query -W -f '${Version}' libleveldb-dev 2>/dev/null), rocksdb $(dpkg-query -W -f '${Version}' librocksdb-dev 2>/dev/null)"
echo "# data dir: $DIR ($(df -h /tmp | awk 'NR==2 {print $1}'))"
mkdir -p "$DIR"
trap 'rm -rf "$DIR"' EXIT
"$BIN" --dir "$DIR" "$@" 2>&1 | grep -v ' INFO '
echo "# load after: $(uptime | sed 's/.*load average/load average/')"
