# bench/lib.sh: what the bench scripts share; sourced (POSIX sh) after the
# script has changed to the repository root: . bench/lib.sh
# Owner: bench.

# need_bench NAME: set BENCH to the built cassette-bench, or tell NAME's
# user to build first (exit 2).
need_bench() {
    BENCH=build/cassette-bench
    [ -x "$BENCH" ] || { echo "$1: build first (make)" >&2; exit 2; }
}

# free_port: a port on 127.0.0.1 nobody listens on now.
free_port() {
    /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# cassette_port LOG PID: wait (10 s at most) until the server PID, started
# with --port 0 and its output in LOG, says where it listens; print the
# port.  If it exits or stays silent, say so, kill it and return 1.
cassette_port() {
    _n=0
    while ! grep -q "cassette listening on" "$1" 2>/dev/null; do
        _n=$((_n + 1))
        if [ "$_n" -gt 200 ] || ! kill -0 "$2" 2>/dev/null; then
            echo "cassette (pid $2) did not start; its log: $1" >&2
            kill "$2" 2>/dev/null || true
            return 1
        fi
        sleep 0.05
    done
    sed -n 's/^cassette listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$1" | head -n 1
}
