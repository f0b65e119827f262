#!/bin/sh
# Dependencies point down only: common <- storage <- cql <- server.
# Fails if a lower layer includes a higher one.
rc=0
check() { # dir forbidden...
  d=$1; shift
  for f in $(find "$d" -name '*.[ch]'); do
    for up in "$@"; do
      if grep -nE "#include \"$up/" "$f" >/dev/null; then echo "layer violation: $f includes $up/"; rc=1; fi
    done
  done
}
check common storage cql server tools bench
check storage cql server tools bench
check cql server tools bench
exit $rc
