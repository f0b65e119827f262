#!/bin/sh
# tests/fuzz/regress.sh FUZZ_BUILD_DIR: `make fuzz-regress`, and the fuzz
# step of tests/run_all.sh (make test).  For every harness
# FUZZ_BUILD_DIR/fuzz_<h> (docs/fuzzing.md), three kinds of test:
#   <h>/<input>  each committed regression input, tests/fuzz/regress/<h>/*
#                (the reproducers of the bugs fuzzing found), run alone;
#   <h>/seeds    the harness's generated seed corpus (seeds.sh), -runs=0;
#   <h>/mutate   a short mutation run from those seeds: FUZZ_MUTATE_S
#                seconds (default 3; 0 skips it), libFuzzer seed 1, the
#                harness's dictionary.  A failure here is a new bug: the
#                input is kept as FUZZ_BUILD_DIR/crashes/<h>-crash-<sha1>.
# A failure prints the test's name, the input, and the end of the report.
# Ends with "N passed, N failed", as tests/run_all.sh steps do.
set -u
cd "$(dirname "$0")/../.."
FZ=${1:-build/fuzz}
MUTATE_S=${FUZZ_MUTATE_S:-3}
seeds=$(mktemp -d "${TMPDIR:-/tmp}/cassette-fuzz-seeds.XXXXXX")
out=$(mktemp "${TMPDIR:-/tmp}/cassette-fuzz-out.XXXXXX")
trap 'rm -rf "$seeds" "$out"' EXIT INT TERM
if ! ls "$FZ"/fuzz_* >/dev/null 2>&1; then
    echo "no harness in $FZ (make fuzz)"
    echo "0 passed, 1 failed"
    exit 1
fi
sh tests/fuzz/seeds.sh "$FZ" "$seeds" >/dev/null
mkdir -p "$FZ/crashes"
p=0
f=0

# A harness that aborts leaves its scratch directory (fz_scratch_dir).
clean_scratch() {
    for d in /dev/shm/cassette-fuzz-"$1"-* /tmp/cassette-fuzz-"$1"-*; do
        [ -d "$d" ] || continue
        kill -0 "${d##*-}" 2>/dev/null || rm -rf "$d"
    done
}

# run NAME BIN ARGS...: one test; passes when the harness exits 0.
run() {
    name=$1
    shift
    if "$@" >"$out" 2>&1; then
        p=$((p + 1))
        return 0
    fi
    f=$((f + 1))
    clean_scratch "$h"
    echo "---- $name FAILED: $*"
    grep -v -e '^INFO' -e '^#[0-9]' -e '^MS:' -e '^\*\*\*' "$out" | tail -n 40
    return 1
}

for bin in "$FZ"/fuzz_*; do
    [ -x "$bin" ] || continue
    h=$(basename "$bin" | sed 's/^fuzz_//')
    np=$p
    nf=$f
    for input in tests/fuzz/regress/"$h"/*; do
        [ -f "$input" ] || continue
        run "$h/$(basename "$input")" "$bin" -timeout=30 "$input"
    done
    if run "$h/seeds" "$bin" -runs=0 -timeout=30 "$seeds/$h"; then
        cov=$(sed -n 's/.*INITED cov: \([0-9]*\) ft: \([0-9]*\).*/cov \1, ft \2/p' "$out")
    else
        cov="seeds failed"
    fi
    if [ "$MUTATE_S" -gt 0 ]; then
        dict=""
        case $h in
            cql|cql_parse) dict=-dict=tests/fuzz/cql.dict ;;
            conn) dict=-dict=tests/fuzz/conn.dict ;;
        esac
        rm -f "$FZ/crashes/$h"-*
        # shellcheck disable=SC2086
        if run "$h/mutate" "$bin" -seed=1 -max_total_time="$MUTATE_S" -timeout=30 $dict \
               -artifact_prefix="$FZ/crashes/$h-" "$seeds/$h"; then
            cov="$cov; mutated $(sed -n 's/^#\([0-9]*\).*DONE.*/\1/p' "$out" | tail -n 1) inputs"
        else
            for c in "$FZ/crashes/$h"-*; do
                [ -f "$c" ] || continue
                echo "     input kept as $c ($(wc -c <"$c") bytes); replay: $bin $c"
                od -An -tx1 -N 256 "$c" | sed 's/^/     /'
            done
        fi
    fi
    echo "$h: $((p - np)) passed, $((f - nf)) failed ($cov)"
done
echo "$p passed, $f failed"
[ "$f" -eq 0 ]
