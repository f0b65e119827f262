#!/bin/sh
# bench/startup.sh [BIN] [RUNS]: time from exec to the first answered query
# (raw-socket OPTIONS/STARTUP/QUERY as soon as the port accepts) with an
# empty data directory, and the idle RSS (VmRSS) 2 s later.
# A benchmark, not a test: it prints figures and never fails on them.
# Example: make && sh bench/startup.sh build/cassette 10
# Owner: infra.
set -eu
cd "$(dirname "$0")/.."
BIN=${1:-build/cassette}
RUNS=${2:-5}
exec /usr/bin/python3 bench/foundation_bench.py startup "$BIN" --runs "$RUNS"
