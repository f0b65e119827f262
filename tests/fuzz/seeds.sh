#!/bin/sh
# tests/fuzz/seeds.sh FUZZ_BUILD_DIR OUT_DIR: write every harness's seed
# corpus into OUT_DIR/<harness>/ (docs/fuzzing.md).  Seeds are generated,
# never committed: each harness builds its own with the project's encoders
# and writers (CASSETTE_FUZZ_SEEDS), so they follow format changes; the
# frame harness also gets tests/badinput/frames/*.hex and the parser the
# statements of tests/cql/*.cql.
set -eu
cd "$(dirname "$0")/../.."
FZ=${1:-build/fuzz}
OUT=${2:-$FZ/seeds}
for bin in "$FZ"/fuzz_*; do
    [ -x "$bin" ] || continue
    name=$(basename "$bin" | sed 's/^fuzz_//')
    rm -rf "${OUT:?}/$name"
    mkdir -p "$OUT/$name"
    CASSETTE_FUZZ_SEEDS="$OUT/$name" "$bin" >/dev/null 2>&1
done
if [ -d "$OUT/frame" ]; then
    for f in tests/badinput/frames/*.hex; do
        grep -v '^#' "$f" | tr -d ' \n' | xxd -r -p > "$OUT/frame/badinput-$(basename "$f" .hex)"
    done
fi
if [ -d "$OUT/cql_parse" ]; then
    python3 - "$OUT/cql_parse" tests/cql/*.cql <<'PY'
import os, sys
out = sys.argv[1]
for path in sys.argv[2:]:
    text = "\n".join(l for l in open(path) if not l.strip().startswith("--"))
    stmts, batch = [], None
    for s in (x.strip() for x in text.split(";")):
        if not s:
            continue
        if batch is not None:
            batch += "; " + s
            if s.upper().startswith("APPLY BATCH"):
                stmts.append(batch)
                batch = None
        elif s.upper().startswith("BEGIN"):
            batch = s
        else:
            stmts.append(s)
    base = os.path.basename(path)[:-4]
    for i, s in enumerate(stmts):
        with open(os.path.join(out, "%s-%02d" % (base, i)), "w") as f:
            f.write(s)
PY
fi
for d in "$OUT"/*; do
    echo "$(basename "$d"): $(ls "$d" | wc -l) seeds"
done
