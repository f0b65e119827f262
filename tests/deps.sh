#!/bin/sh
# tests/deps.sh: `make deps`.  Installs what the build and the tests need and
# is a fast no-op (well under a second) when everything is already there.
#   Debian packages: build libraries (libsnappy-dev: the native protocol's
#                    Snappy compression, which drivers may ask for; the server
#                    dlopens libsnappy.so.1 on first use), criterion,
#                    the Python driver + pytest (python3-snappy for its snappy),
#                    what cqlsh needs (python3-tz, python3-tzlocal), the
#                    Go driver gocql with the Go toolchain (tests/integration/go),
#                    and clang with its compiler-rt (libFuzzer, ASan, UBSan)
#                    for the fuzz harnesses (make fuzz, docs/fuzzing.md):
#                    clang-14 only recommends libclang-rt-14-dev, which
#                    --no-install-recommends would leave out; llvm for
#                    llvm-symbolizer (Debian's compiler-rt looks for
#                    /usr/bin/llvm-symbolizer-14 only: without it a fuzz
#                    failure's stack has addresses, no file:line).
#   Node.js:         nodejs from Debian; npm only if no `npm` exists at all
#                    (some machines carry node+npm outside Debian, and
#                    Debian's npm package conflicts with them).
#   npm modules:     cassandra-driver pinned in tests/integration/package.json
#                    + package-lock.json, installed with `npm ci` into
#                    tests/integration/node_modules.
# Owner: infra.
set -eu

cd "$(dirname "$0")/.."

PKGS="libuv1-dev liblz4-dev libsnappy-dev libxxhash-dev libcrypt-dev libcriterion-dev python3-cassandra \
python3-pytest python3-lz4 python3-snappy python3-tz python3-tzlocal libyaml-dev \
golang-go golang-github-gocql-gocql-dev clang libclang-rt-dev llvm"
# `sh tests/deps.sh run` (make run): only what building and running the
# server needs: no test drivers, no Go toolchain, no npm.
RUN_ONLY=false
if [ "${1:-}" = run ]; then
    RUN_ONLY=true
    PKGS="libuv1-dev liblz4-dev libsnappy-dev libxxhash-dev libcrypt-dev libyaml-dev"
fi

missing=""
for p in $PKGS; do
    st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    case "$st" in *"ok installed") ;; *) missing="$missing $p" ;; esac
done
if ! $RUN_ONLY && ! command -v node >/dev/null 2>&1; then
    missing="$missing nodejs"
fi
if ! $RUN_ONLY && ! command -v npm >/dev/null 2>&1; then
    missing="$missing npm"
fi

if [ -n "$missing" ]; then
    echo "deps: installing:$missing"
    SUDO=""
    if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
    $SUDO apt-get update -qq
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing
fi

# npm modules: reinstall only when package-lock.json changed since the last
# `npm ci` (a copy of it is kept inside node_modules as the stamp).
NI=tests/integration
if ! $RUN_ONLY && [ -f "$NI/package-lock.json" ]; then
    if ! cmp -s "$NI/package-lock.json" "$NI/node_modules/.cassette-lock" 2>/dev/null \
       || [ ! -f "$NI/node_modules/cassandra-driver/package.json" ]; then
        echo "deps: npm ci in $NI"
        (cd "$NI" && npm ci --no-audit --no-fund --loglevel=error)
        cp "$NI/package-lock.json" "$NI/node_modules/.cassette-lock"
    fi
fi
exit 0
