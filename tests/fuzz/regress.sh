#!/bin/sh
# tests/fuzz/regress.sh FUZZ_BUILD_DIR: `make fuzz-regress`.  Every harness
# over its generated seeds and its committed regression inputs
# (tests/fuzz/regress/<harness>/, the reproducers of the bugs fuzzing
# found), without mutation (-runs=0): a few seconds in all.  Ends with
# "N passed, N failed" (one per harness), as tests/run_all.sh steps do.
set -u
cd "$(dirname "$0")/../.."
FZ=${1:-build/fuzz}
seeds=$(mktemp -d "${TMPDIR:-/tmp}/cassette-fuzz-seeds.XXXXXX")
trap 'rm -rf "$seeds"' EXIT INT TERM
sh tests/fuzz/seeds.sh "$FZ" "$seeds" >/dev/null
p=0
f=0
for bin in "$FZ"/fuzz_*; do
    [ -x "$bin" ] || continue
    name=$(basename "$bin" | sed 's/^fuzz_//')
    dirs="$seeds/$name"
    [ -d "tests/fuzz/regress/$name" ] && dirs="$dirs tests/fuzz/regress/$name"
    # shellcheck disable=SC2086
    if out=$("$bin" -runs=0 -timeout=30 $dirs 2>&1); then
        echo "$name: ok ($(echo "$out" | sed -n 's/.*INITED cov: \([0-9]*\) ft: \([0-9]*\).*/cov \1, ft \2/p'))"
        p=$((p + 1))
    else
        echo "$out" | grep -v '^INFO' | tail -n 30
        echo "$name: FAILED"
        f=$((f + 1))
    fi
done
echo "$p passed, $f failed"
[ "$f" -eq 0 ]
