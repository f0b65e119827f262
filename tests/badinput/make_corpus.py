#!/usr/bin/env python3
"""Regenerate tests/badinput/frames/*.hex: malformed native-protocol frames.

Each file: '#' header lines, then the frame bytes as hex (whitespace free).
    # expect: 0x000A       an ERROR frame with this code must come back
                           (the server may close the connection after it)
    # expect: close        the server closes the connection, no frame needed
    # expect: any          any reply, or a close: only survival is checked
    # startup: yes         send a valid STARTUP first (and read READY)
    # half_close: yes      shut down our write side after sending
Run: /usr/bin/python3 tests/badinput/make_corpus.py   (owner: infra)
"""
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from rawcql import (OP_BATCH, OP_EXECUTE, OP_OPTIONS, OP_PREPARE, OP_QUERY,  # noqa: E402
                    OP_REGISTER, OP_STARTUP, STARTUP_BODY, frame, int32, long_string,
                    query_body, short, string, string_map)

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "frames")
CASES = []


def case(name, data, expect="0x000A", startup=False, half_close=False, why=""):
    CASES.append((name, data, expect, startup, half_close, why))


Q = b"SELECT key FROM system.local"
# -- header ------------------------------------------------------------------
case("version_1", frame(OP_OPTIONS, version=1, stream=1), why="protocol v1 is not supported")
case("version_2", frame(OP_STARTUP, STARTUP_BODY, version=2, stream=1), why="protocol v2 is not supported")
case("version_127", frame(OP_OPTIONS, version=0x7F, stream=1), why="no such version")
case("version_0", frame(OP_OPTIONS, version=0, stream=1), why="no such version")
case("response_direction", bytes([0x84]) + frame(OP_OPTIONS, stream=1)[1:],
     why="direction bit says response")
case("unknown_opcode", frame(0x20, stream=1), why="opcode 0x20 does not exist")
case("unknown_opcode_ff", frame(0xFF, b"\x00" * 4, stream=1), why="opcode 0xFF does not exist")
case("response_opcode_ready", frame(0x02, stream=1), why="READY is a response opcode")
case("response_opcode_result", frame(0x08, int32(1), stream=1, flags=0), startup=True,
     why="RESULT is a response opcode")
case("oversized_length", frame(OP_QUERY, b"", stream=1, length=0x7FFFFFFF), expect="any", half_close=True,
     why="body length far above the maximum frame size: skipped as it arrives and answered with "
         "InvalidRequest once it has all come (as Cassandra); here it never comes, and EOF ends it")
case("negative_length", frame(OP_QUERY, b"", stream=1, length=0xFFFFFFFF),
     why="length with the sign bit set")
case("length_256mb", frame(OP_QUERY, b"", stream=1, length=256 * 1024 * 1024 + 1), startup=True,
     expect="any", half_close=True,
     why="just above 256 MiB: skipped as it arrives, answered once it has all come; EOF ends it")
case("partial_header", frame(OP_OPTIONS, stream=1)[:5], expect="any", half_close=True,
     why="5 of 9 header bytes, then EOF")
case("truncated_body_eof", frame(OP_QUERY, query_body(Q), stream=1)[:20], expect="any",
     startup=True, half_close=True, why="header promises more bytes than ever arrive")
case("garbage", bytes.fromhex("deadbeefcafebabe0badf00d" * 6), expect="any",
     why="random bytes")
case("garbage_ascii", b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n", expect="any",
     why="an HTTP request")
# -- STARTUP -----------------------------------------------------------------
case("startup_truncated_map", frame(OP_STARTUP, short(1) + short(11) + b"CQL", stream=1),
     why="string map entry cut short inside the frame")
case("startup_map_count_too_big", frame(OP_STARTUP, short(50) + string("CQL_VERSION") + string("3.0.0"),
                                        stream=1), why="map says 50 entries, has one")
case("startup_no_cql_version", frame(OP_STARTUP, string_map({}), stream=1),
     why="CQL_VERSION is mandatory")
case("startup_bad_cql_version", frame(OP_STARTUP, string_map({"CQL_VERSION": "abc"}), stream=1),
     why="CQL_VERSION is not a version")
case("startup_old_cql_version", frame(OP_STARTUP, string_map({"CQL_VERSION": "2.0.0"}), stream=1),
     why="CQL_VERSION below 3.0.0")
case("startup_bad_compression", frame(OP_STARTUP, string_map({"CQL_VERSION": "3.0.0",
                                                              "COMPRESSION": "zip"}), stream=1),
     why="unknown compression algorithm")
case("startup_empty_body", frame(OP_STARTUP, b"", stream=1), why="no string map at all")
case("startup_twice", frame(OP_STARTUP, STARTUP_BODY, stream=1), startup=True,
     why="STARTUP on an initialized connection")
# -- before STARTUP ----------------------------------------------------------
case("query_before_startup", frame(OP_QUERY, query_body(Q), stream=1),
     why="QUERY before STARTUP")
case("prepare_before_startup", frame(OP_PREPARE, long_string(Q), stream=1),
     why="PREPARE before STARTUP")
case("register_before_startup", frame(OP_REGISTER, short(1) + string("SCHEMA_CHANGE"), stream=1),
     why="REGISTER before STARTUP")
# -- QUERY body --------------------------------------------------------------
case("query_empty_body", frame(OP_QUERY, b"", stream=1), startup=True, why="no [long string]")
case("query_negative_string_len", frame(OP_QUERY, int32(-5) + Q + short(1) + b"\x00", stream=1),
     startup=True, why="[long string] with a negative length")
case("query_string_too_long", frame(OP_QUERY, int32(1000) + Q, stream=1), startup=True,
     why="[long string] longer than the body")
case("query_missing_consistency", frame(OP_QUERY, long_string(Q), stream=1), startup=True,
     why="body ends after the query string")
case("query_bad_consistency", frame(OP_QUERY, long_string(Q) + short(0xFF) + b"\x00", stream=1),
     startup=True, why="consistency 0x00FF does not exist")
case("query_values_missing", frame(OP_QUERY, long_string(Q) + short(1) + b"\x01" + short(5), stream=1),
     startup=True, why="VALUES flag, 5 values announced, none present")
case("query_value_too_long", frame(OP_QUERY, long_string(Q) + short(1) + b"\x01" + short(1) + int32(99),
                                   stream=1), startup=True, why="a [bytes] value longer than the body")
case("query_bad_utf8", frame(OP_QUERY, long_string(b"SELECT \xff\xfe FROM x") + short(1) + b"\x00",
                             stream=1), startup=True, why="query text is not UTF-8")
case("query_page_size_missing", frame(OP_QUERY, long_string(Q) + short(1) + b"\x04", stream=1),
     startup=True, why="PAGE_SIZE flag without the page size")
case("query_compressed_flag", frame(OP_QUERY, query_body(Q), stream=1, flags=0x01), startup=True,
     expect="any", why="COMPRESSION flag without negotiated compression")
# -- PREPARE / EXECUTE / BATCH / REGISTER ------------------------------------
case("prepare_truncated", frame(OP_PREPARE, int32(50) + b"SEL", stream=1), startup=True,
     why="[long string] cut short")
case("execute_bad_id_len", frame(OP_EXECUTE, short(100) + b"\x01\x02", stream=1), startup=True,
     why="[short bytes] id longer than the body")
case("execute_unknown_id", frame(OP_EXECUTE, short(16) + b"\xab" * 16 + short(1) + b"\x00", stream=1),
     expect="0x2500", startup=True, why="well-formed EXECUTE of an id never prepared")
case("batch_truncated", frame(OP_BATCH, b"\x00" + short(3), stream=1), startup=True,
     why="BATCH announces 3 statements, has none")
case("batch_bad_type", frame(OP_BATCH, b"\x07" + short(0) + short(1) + b"\x00", stream=1), startup=True,
     expect="any", why="batch type 7")
case("register_unknown_event", frame(OP_REGISTER, short(1) + string("NO_SUCH_EVENT"), stream=1),
     startup=True, expect="any", why="unknown event type")
case("register_truncated", frame(OP_REGISTER, short(3) + string("SCHEMA_CHANGE"), stream=1),
     startup=True, why="list announces 3 strings, has one")


def main():
    os.makedirs(OUT, exist_ok=True)
    for f in os.listdir(OUT):
        if f.endswith(".hex"):
            os.unlink(os.path.join(OUT, f))
    for name, data, expect, startup, half_close, why in CASES:
        with open(os.path.join(OUT, name + ".hex"), "w") as f:
            f.write("# %s\n" % why)
            f.write("# expect: %s\n" % expect)
            if startup:
                f.write("# startup: yes\n")
            if half_close:
                f.write("# half_close: yes\n")
            h = data.hex()
            for i in range(0, len(h), 64):
                f.write(h[i:i + 64] + "\n")
    print("%d cases written to %s" % (len(CASES), OUT))


if __name__ == "__main__":
    main()
