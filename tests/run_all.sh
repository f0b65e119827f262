#!/bin/sh
# tests/run_all.sh BUILD_DIR: everything `make test` runs, in order:
#   0. static checks     (make check-layers, make lint-malloc)
#   1. unit tests        (criterion binaries BUILD_DIR/tests/test_*)
#   2. integration tests (pytest + node --test against BUILD_DIR/cassette)
#   3. crash tests       (kill -9 and restart BUILD_DIR/cassette)
#   4. fuzz regressions  (the libFuzzer harnesses built with clang in
#      BUILD_DIR/fuzz, then tests/fuzz/regress.sh: each committed
#      reproducer, each harness's seeds, a 3 s mutation run per harness)
#   5. a SANITIZE=address,undefined build in BUILD_DIR/san, then unit and
#      integration tests once more against it.
# Each step ends with "N passed, N failed"; the last line of this script is
# the sum over all steps.  Exit 1 if anything failed.
# Env: SKIP_FUZZ=1 skips step 4, SKIP_SAN=1 step 5.  Owner: infra.
set -u
cd "$(dirname "$0")/.."
B=${1:-build}
total_p=0
total_f=0
log=$(mktemp "${TMPDIR:-/tmp}/cassette-all.XXXXXX")
blog=$(mktemp "${TMPDIR:-/tmp}/cassette-build.XXXXXX")
trap 'rm -f "$log" "$blog"' EXIT INT TERM

# step NAME CMD...: run CMD, stream its output, add its closing counts.
step() {
    name=$1; shift
    echo "######## $name"
    "$@" 2>&1 | tee "$log"
    last=$(grep -aE '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
    if [ -z "$last" ]; then
        echo "$name: no summary line"
        total_f=$((total_f + 1))
        return
    fi
    p=$(echo "$last" | sed -n 's/^\([0-9]*\) passed.*/\1/p')
    f=$(echo "$last" | sed -n 's/.* \([0-9]*\) failed.*/\1/p')
    total_p=$((total_p + p))
    total_f=$((total_f + f))
    echo "######## $name: $p passed, $f failed"
}

unit_bins() { # BUILD_DIR -> the criterion binaries the Makefile builds
    for src in tests/unit/test_*.c; do
        [ -e "$src" ] || continue
        n=$(basename "$src" .c)
        echo "$1/tests/$n"
    done
}

static_checks() { # layering and raw-allocation lint, one "test" each
    sp=0; sf=0
    for target in check-layers lint-malloc; do
        if make --no-print-directory "$target"; then
            echo "$target: ok"; sp=$((sp + 1))
        else
            echo "$target: FAILED"; sf=$((sf + 1))
        fi
    done
    echo "$sp passed, $sf failed"
}

fuzz_regress() { # build the harnesses (clang), then every regression input
    t0=$(date +%s)
    if ! make -j2 --no-print-directory BUILD="$B" fuzz >"$blog" 2>&1; then
        grep -E 'error|Error' "$blog" | head -n 40
        echo "fuzz harness build failed (clang and libclang-rt-dev: make deps)"
        echo "0 passed, 1 failed"
        return
    fi
    t1=$(date +%s)
    echo "harnesses built in $((t1 - t0)) s"
    sh tests/fuzz/regress.sh "$B/fuzz"
    rc=$?
    echo "fuzz regressions run in $(( $(date +%s) - t1 )) s"
    return $rc
}

start=$(date +%s)
step "static checks" static_checks
# shellcheck disable=SC2046
step unit sh tests/run_unit.sh $(unit_bins "$B")
step integration sh tests/run_integration.sh "$B/cassette"
step crash sh tests/run_crash.sh "$B/cassette"
if [ "${SKIP_FUZZ:-0}" != 1 ]; then
    step "fuzz regressions" fuzz_regress
fi

case "$B" in */san|san) SKIP_SAN=1 ;; esac
if [ "${SKIP_SAN:-0}" != 1 ]; then
    echo "######## sanitizer build (SANITIZE=address,undefined) in $B/san"
    # -k: a unit test that does not build must not hide the others.
    # shellcheck disable=SC2046
    if make -k -j2 --no-print-directory SANITIZE=address,undefined BUILD="$B" all $(unit_bins "$B/san") >"$log" 2>&1; then
        tail -n 3 "$log"
    else
        grep -E 'error|Error' "$log" | grep -v '^cc ' | head -n 40
        echo "sanitizer build failed (what did build is still run)"
        total_f=$((total_f + 1))
    fi
    export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:print_summary=1}"
    export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
    export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$(pwd)/tests/lsan.supp:print_suppressions=0}"
    # shellcheck disable=SC2046
    step "unit (asan+ubsan)" sh tests/run_unit.sh $(unit_bins "$B/san")
    step "integration (asan+ubsan)" sh tests/run_integration.sh "$B/san/cassette"
fi

echo "######## total time $(( $(date +%s) - start )) s"
echo "$total_p passed, $total_f failed"
[ "$total_f" -eq 0 ]
