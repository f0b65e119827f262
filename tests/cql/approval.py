"""Approval tests: run tests/cql/*.cql through the Python driver and compare
what comes back with the committed tests/cql/*.result.

A .cql file is a sequence of statements ending in ';' (comments with -- or
//).  Directives, on lines of their own:
    --@repeat N STATEMENT      run STATEMENT N times, {i} replaced by 0..N-1
                               (output: one line with the count)
    --@fetch_size N            page the next statement N rows at a time and
                               print each page
    --@nopaging                run the next statement without paging
Output per statement: the statement, then rows (or "ok"), the client
warnings, or the error as "error: <ExceptionClass>: <server message>".

Regenerate expected output with CASSETTE_APPROVE=1 (then read the diff: the
.result files are the spec, written so they would hold on Apache Cassandra).
"""

import datetime
import decimal
import ipaddress
import re
import uuid

from cassandra import DriverException
from cassandra.query import SimpleStatement
from cassandra.util import Date, Duration, OrderedMapSerializedKey, SortedSet, Time


def fmt(v):
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return "'" + v.replace("'", "''") + "'"
    if isinstance(v, (bytes, bytearray)):
        return "0x" + bytes(v).hex()
    if isinstance(v, datetime.datetime):
        return v.strftime("%Y-%m-%d %H:%M:%S.") + "%03dZ" % (v.microsecond // 1000)
    if isinstance(v, (Date, Time, Duration, decimal.Decimal, uuid.UUID)):
        return str(v)
    if isinstance(v, (ipaddress.IPv4Address, ipaddress.IPv6Address)):
        return str(v)
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, (list, tuple)) and not hasattr(v, "_fields"):
        o, c = ("[", "]") if isinstance(v, list) else ("(", ")")
        return o + ", ".join(fmt(x) for x in v) + c
    if isinstance(v, (set, frozenset, SortedSet)):
        return "{" + ", ".join(fmt(x) for x in v) + "}"
    if isinstance(v, (dict, OrderedMapSerializedKey)):
        return "{" + ", ".join("%s: %s" % (fmt(k), fmt(x)) for k, x in v.items()) + "}"
    if hasattr(v, "_fields"):   # UDT
        return "{" + ", ".join("%s: %s" % (f, fmt(getattr(v, f))) for f in v._fields) + "}"
    return str(v)


def split_statements(text):
    """Yield (directive, statement) pairs."""
    buf, directive = [], None
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("--@"):
            directive = s[3:]
            if directive.startswith("repeat"):
                yield directive, None
                directive = None
            continue
        if not buf and (not s or s.startswith("--") or s.startswith("//")):
            continue
        buf.append(line)
        text = " ".join(buf)
        in_batch = text.lstrip().upper().startswith("BEGIN") and not text.rstrip().upper().endswith("APPLY BATCH;")
        if in_string_count(text) % 2 == 0 and s.endswith(";") and not in_batch:
            yield directive, "\n".join(buf).strip()
            buf, directive = [], None
    if buf:
        yield directive, "\n".join(buf).strip()


def in_string_count(s):
    return s.count("'")


def server_message(e):
    m = re.search(r'message="(.*)"', str(e), re.S)
    return m.group(1) if m else str(e)


def run_script(session, text):
    out = []
    for directive, stmt in split_statements(text):
        if directive and directive.startswith("repeat"):
            _, n, tmpl = directive.split(None, 2)
            for i in range(int(n)):
                session.execute(tmpl.replace("{i}", str(i)))
            out.append("> %s  [x%s]" % (tmpl.replace("\n", " "), n))
            out.append("ok")
            continue
        fetch = None
        if directive and directive.startswith("fetch_size"):
            fetch = int(directive.split()[1])
        out.append(("> " if directive != "nopaging" else "> [no paging] ") + " ".join(stmt.split()))
        try:
            size = None if directive == "nopaging" else (fetch or 100000)
            rs = session.execute(SimpleStatement(stmt, fetch_size=size))
        except DriverException as e:
            out.append("error: %s: %s" % (type(e).__name__, server_message(e)))
            continue
        except Exception as e:  # noqa: BLE001 - server errors are the output
            out.append("error: %s: %s" % (type(e).__name__, server_message(e)))
            continue
        for w in rs.response_future.warnings or []:
            out.append("warning: " + w)
        cols = rs.column_names
        if not cols:
            out.append("ok")
            continue
        page = 1
        while True:
            rows = list(rs.current_rows)
            if fetch:
                out.append("-- page %d" % page)
            out.append(" | ".join(cols))
            for r in rows:
                out.append(" | ".join(fmt(x) for x in r))
            out.append("(%d rows)" % len(rows))
            if not fetch or not rs.has_more_pages:
                break
            rs.fetch_next_page()
            page += 1
    return "\n".join(out) + "\n"
