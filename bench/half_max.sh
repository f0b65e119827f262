#!/bin/sh
# half_max.sh: the yardstick's fixed-rate INSERT (50 connections x 1 in
# flight at half of the max just measured, latency corrected for
# coordinated omission) for one or two server binaries, with the server's
# threads sampled every 100 ms, so a bad p99 can be told apart: the flush
# at normal priority, the loop waiting for a CPU, the machine itself.
# Used for docs/performance.md "Nineteenth pass".
#
#   sh bench/half_max.sh BIN_A [BIN_B] [ROUNDS]
#
# Each run: a fresh server, a 200k-row fill, 10 s of 50 x 1 INSERT at max,
# then 10 s at half of it (the measured run), as bench/yardstick.sh does.
# Each run prints one line: binary, the rate, p50 / p99 / max ms, the p99
# of each second, vmstat's steal per second, how many 100 ms samples the
# flush thread was busy (>20 ms of CPU) and how many of them it ran at
# normal priority (SCHED_OTHER, not SCHED_IDLE), and the request loop's
# run delay (runnable, not running) summed over those samples.  With
# KEEP=1 the work directory (JSON reports, samples) is kept and named.
# BIN_A and BIN_B alternate ROUNDS times (default 3).  Bound: ~40 s a run.
set -eu
A=${1:?server binary}
BB=${2:-}
ROUNDS=${3:-3}
cd "$(dirname "$0")/.."
. bench/lib.sh
need_bench half_max
PY=/usr/bin/python3

# Sampler: per thread of each pid, every 100 ms for $2 s: time, tid, name,
# minflt, utime, stime (ticks), run and wait ns (schedstat), policy.
SAMPLER='
import os, sys, time
pids = [int(x) for x in sys.argv[1].split(",")]; secs = float(sys.argv[2]); out = open(sys.argv[3], "w")
t0 = time.time()
while time.time() - t0 < secs:
    now = time.time() - t0
    for pid in pids:
        try: tids = os.listdir("/proc/%d/task" % pid)
        except OSError: continue
        for tid in tids:
            try:
                b = "/proc/%d/task/%s/" % (pid, tid)
                comm = open(b + "comm").read().strip().replace(" ", "_")
                st = open(b + "stat").read().rsplit(")", 1)[1].split()
                ss = open(b + "schedstat").read().split()
                out.write("%.2f %s %s %s %s %s %s %s %s\n" % (now, tid, comm, st[7], st[11], st[12], ss[0], ss[1], st[38]))
            except OSError:
                pass
    time.sleep(0.1)
'
SUMMARY='
import sys, json, collections
w, tag = sys.argv[1], sys.argv[2]
d = json.load(open(w + "/rate.json"))["schemes"][0]
l = d["operations"]["insert"]["latency_ms"]
st = [int(x.split()[-2]) for x in open(w + "/vm").readlines()[3:]]
rows = collections.defaultdict(list)
for x in open(w + "/samp"):
    p = x.split()
    rows[p[2]].append((float(p[0]), int(p[6]), int(p[7]), int(p[8])))
fl, lp = rows.get("flush", []), rows.get("cassette", [])
busy = [i for i in range(1, len(fl)) if fl[i][1] - fl[i - 1][1] > 2e7]
normal = sum(1 for i in busy if fl[i][3] == 0)
wait = sum(lp[i][2] - lp[i - 1][2] for i in busy if i < len(lp)) / 1e6
print("%s %.0f/s p50 %.3f p99 %.3f max %.1f ms | p99 per s %s | steal %s | flush busy %d x 100 ms, %d at normal priority, loop run delay in them %.0f ms" % (
    tag, d["throughput"], l["p50"], l["p99"], l["max"], " ".join("%.1f" % t["p99"] for t in d["timeline"]), st, len(busy), normal, wait))
'

run() { # binary tag
    W=$(mktemp -d "${TMPDIR:-/tmp}/half_max.XXXXXX")
    "$1" --listen 127.0.0.1 --port 0 --data-dir "$W/data" >"$W/log" 2>&1 &
    CPID=$!
    P=$(cassette_port "$W/log" "$CPID") || exit 1
    "$BENCH" run preset:kv -p "$P" --ops insert=1 -n 200000 --quiet >/dev/null
    "$BENCH" run preset:kv -p "$P" --connections 50 --concurrency 1 --ops insert=1 --duration 10s \
        --json "$W/max.json" --quiet >/dev/null
    H=$($PY -c "import json; print(int(json.load(open('$W/max.json'))['schemes'][0]['throughput'] / 2))")
    "$BENCH" run preset:kv -p "$P" --connections 50 --concurrency 1 --ops insert=1 --duration 10s \
        --rate "$H" --json "$W/rate.json" --quiet >/dev/null &
    BP=$!
    vmstat 1 11 >"$W/vm" &
    VP=$!
    $PY -c "$SAMPLER" "$CPID,$BP" 12 "$W/samp"
    wait $BP
    kill $VP 2>/dev/null || true
    kill $CPID; wait $CPID 2>/dev/null || true
    $PY -c "$SUMMARY" "$W" "$2"
    if [ "${KEEP:-0}" = 1 ]; then echo "  kept $W"; else rm -rf "$W"; fi
}

r=0
while [ $r -lt "$ROUNDS" ]; do
    run "$A" A
    [ -n "$BB" ] && run "$BB" B
    r=$((r + 1))
done
