"""cassette-bench and cassette-tool against the real server (issue 6).

Each preset runs briefly (bounded op counts); the reports must hold the
figures the JSON contract promises, and the bench's partition picture must
agree with what the server itself reports (tablestats / tablehistograms).
"""

import json
import math
import os
import re
import struct
import subprocess
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import pytest

import cassette_harness as H

BUILD = os.path.dirname(H.binary_path())
BENCH = os.path.join(BUILD, "cassette-bench")
TOOL = os.path.join(BUILD, "cassette-tool")

pytestmark = pytest.mark.skipif(not H.is_cassette(), reason="needs the cassette binaries")


def admin_port(server):
    with open(server.log_path, "rb") as f:
        m = re.findall(rb"cassette admin on 127\.0\.0\.1:(\d+)", f.read())
    assert m, "server did not print its admin port"
    return int(m[-1])


def bench(server, *args, timeout=120):
    cmd = [BENCH] + list(args) + ["-h", server.host, "-p", str(server.port), "--quiet"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    return p


def tool(server, *args, timeout=60):
    cmd = [TOOL, "-h", "127.0.0.1", "-p", str(admin_port(server))] + list(args)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    s = H.Server(tmp_path_factory.mktemp("benchtool"))
    s.start(port=0)
    yield s
    s.stop()


def presets():
    out = subprocess.run([BENCH, "list"], capture_output=True, text=True, timeout=10).stdout
    return [l.split()[0] for l in out.splitlines()[1:] if l.strip()]


def test_list_names_the_presets():
    names = presets()
    for want in ["kv", "ts_day", "ts_slot", "ts_bucket", "likes", "notifications", "counters", "queue",
                 "sindex", "mview", "manual_index"]:
        assert want in names


# Presets whose queries need secondary indexes or materialized views, which
# are maintained only once issue 5 lands: their reads may fail today.
NEEDS_ISSUE_5 = {"sindex", "mview"}


@pytest.mark.parametrize("preset", ["kv", "ts_day", "ts_slot", "ts_bucket", "likes", "notifications",
                                    "counters", "queue", "wide", "manual_index", "sindex", "mview"])
def test_preset_runs_and_reports(srv, tmp_path, preset):
    out = tmp_path / "r.json"
    p = bench(srv, "run", "preset:" + preset, "-n", "400", "--connections", "2", "--concurrency", "4",
              "--json", str(out))
    assert p.returncode == 0, p.stderr
    doc = json.loads(out.read_text())
    (s,) = doc["schemes"]
    assert s["scheme"] == preset
    assert s["hosts"] == 1          # the ring read from system.local/peers: one node
    ops = s["operations"]
    assert "insert" in ops
    assert ops["insert"]["ops"] > 0
    assert ops["insert"]["errors"] == 0, s["errors_by_kind"]
    for name, op in ops.items():
        lat = op["latency_ms"]
        for k in ("p50", "p90", "p99", "p999", "max"):
            assert lat[k] >= 0
        if op["ops"]:
            assert lat["p50"] <= lat["p99"] <= lat["max"] + 1e-9
        if preset not in NEEDS_ISSUE_5:
            assert op["errors"] == 0, (name, s["errors_by_kind"])
    parts = s["partitions"]
    assert parts["count"] > 0
    assert 0 < parts["rows"]["p50"] <= parts["rows"]["p99"] <= parts["rows"]["max"]
    assert parts["bytes"]["max"] > 0
    assert parts["top"] and parts["top"][0]["share"] > 0
    ring = s["ring"]
    assert ring["nodes"] == 6 and ring["rf"] == 3
    assert ring["max_over_mean"] >= 1.0
    assert abs(sum(ring["node_load"]) - 3 * parts["total_ops"]) < 1e-6 * max(1, parts["total_ops"]) + 1


@pytest.fixture(scope="module")
def srv_rate(tmp_path_factory):
    # its own server: the partition counts of test_bench_partitions_agree_with_server
    # assume the kv table holds only the keys of the short runs
    s = H.Server(tmp_path_factory.mktemp("benchrate"))
    s.start(port=0)
    yield s
    s.stop()


@pytest.mark.parametrize("conns,conc", [(4, 1), (2, 8)])
def test_fixed_rate_keeps_the_schedule(srv_rate, tmp_path, conns, conc):
    # --rate: op i is due at i/rate; the run issues exactly -n ops at that
    # pace (not faster), every op answered, latencies from the due times.
    out = tmp_path / "rate.json"
    p = bench(srv_rate, "run", "preset:kv", "--ops", "insert=1", "-n", "3000", "--rate", "4000", "--warmup", "0.25s",
              "--connections", str(conns), "--concurrency", str(conc), "--json", str(out))
    assert p.returncode == 0, p.stderr
    doc = json.loads(out.read_text())
    assert doc["rate"] == 4000.0
    (s,) = doc["schemes"]
    ins = s["operations"]["insert"]
    assert s["errors"] == 0, s["errors_by_kind"]
    assert ins["ops"] == 2000            # 3000 ops, the first 0.25 s (1000) are warm-up
    # 2000 ops due over 0.5 s: the pacer does not run ahead of the schedule
    assert s["elapsed_s"] >= 0.49
    assert ins["throughput"] <= 4000 * 1.02
    lat = ins["latency_ms"]
    assert 0 < lat["p50"] <= lat["p99"] <= lat["max"] + 1e-9


def test_time_series_schemes_side_by_side(srv, tmp_path):
    html = tmp_path / "ts.html"
    js = tmp_path / "ts.json"
    p = bench(srv, "compare", "preset:ts_day", "preset:ts_slot", "preset:ts_bucket", "-n", "3000",
              "--ops", "insert=1", "--html", str(html), "--json", str(js))
    assert p.returncode == 0, p.stderr
    assert "side by side" in p.stdout
    doc = json.loads(js.read_text())
    by = {s["scheme"]: s for s in doc["schemes"]}
    assert set(by) == {"ts_day", "ts_slot", "ts_bucket"}
    # 3000 rows over 50 sensors on the simulated clock: slots split each day
    # partition in four, buckets cap partitions at 500 rows.
    assert by["ts_slot"]["partitions"]["count"] > by["ts_day"]["partitions"]["count"]
    assert by["ts_bucket"]["partitions"]["rows"]["max"] <= 500
    root = parse_page(html.read_text())
    assert {c.get("data-chart") for c in svgs(root, "cmp")} == CMP_CHARTS
    assert len(svgs(root, "detail")) == 3


def test_bench_partitions_agree_with_server(srv, tmp_path):
    # the table holds only this run's keys (the presets' runs above wrote others)
    c, sess = H.connect(srv.host, srv.port)
    try:
        sess.execute("TRUNCATE cassette_bench.kv")
    finally:
        c.shutdown()
    out = tmp_path / "kv.json"
    p = bench(srv, "run", "preset:kv", "-n", "600", "--ops", "insert=1", "--json", str(out))
    assert p.returncode == 0, p.stderr
    parts = json.loads(out.read_text())["schemes"][0]["partitions"]
    count = parts["count"]
    assert parts["rows_total"] == rows_of(srv, "SELECT count(*) FROM cassette_bench.kv")[0][0] == count
    t = tool(srv, "flush", "cassette_bench", "kv")
    assert t.returncode == 0, t.stderr
    st = tool(srv, "tablestats", "cassette_bench.kv")
    assert st.returncode == 0, st.stderr
    m = re.search(r"Number of partitions \(estimate\): (\d+)", st.stdout)
    assert m, st.stdout
    assert int(m.group(1)) == count
    h = tool(srv, "tablehistograms", "cassette_bench", "kv")
    assert h.returncode == 0, h.stderr
    assert "cassette_bench/kv histograms" in h.stdout
    mx = [l for l in h.stdout.splitlines() if l.startswith("Max")]
    assert mx and int(mx[0].split()[-1]) >= 1       # cells in the largest partition
    # the same numbers through CQL (system_views, as Cassandra 4.x)
    c, sess = H.connect(srv.host, srv.port)
    try:
        w = sess.execute("SELECT count FROM system_views.local_write_latency "
                         "WHERE keyspace_name = 'cassette_bench' AND table_name = 'kv'").one()
        assert w is not None and w.count >= 600
        m = re.search(r"Local write count: (\d+)", st.stdout)
        assert m and int(m.group(1)) == w.count
        d = sess.execute("SELECT mebibytes FROM system_views.disk_usage "
                         "WHERE keyspace_name = 'cassette_bench' AND table_name = 'kv'").one()
        assert d is not None and d.mebibytes >= 0
    finally:
        c.shutdown()


def test_toppartitions_sees_the_hot_partitions(srv):
    """Sampling while the bench writes: the ts_day scheme's partitions are
    (sensor, day) pairs, printed as nodetool does (components joined by ':')."""
    import threading
    res = {}
    t = threading.Thread(target=lambda: res.update(p=bench(srv, "run", "preset:ts_day", "--duration", "3s",
                                                            "--warmup", "0", "--ops", "insert=1")))
    t.start()
    import time
    time.sleep(0.5)
    top = tool(srv, "toppartitions", "cassette_bench", "ts_day", "1000")
    t.join()
    assert res["p"].returncode == 0, res["p"].stderr
    assert top.returncode == 0, top.stderr
    assert "WRITES Sampler:" in top.stdout and "READS Sampler:" in top.stdout
    rows = re.findall(r"^\t(\d+):(\d{4}-\d\d-\d\d)\s+(\d+)\s+0$", top.stdout, re.M)
    assert rows, top.stdout
    assert all(int(c) > 0 for _, _, c in rows)
    assert tool(srv, "toppartitions", "cassette_bench", "nope", "10").returncode != 0


def test_tool_verbs(srv):
    s = tool(srv, "status")
    assert s.returncode == 0 and re.search(r"^UN\s+127\.0\.0\.1", s.stdout, re.M), s.stdout
    i = tool(srv, "info")
    assert i.returncode == 0 and "Native Transport active: true" in i.stdout
    d = tool(srv, "describecluster")
    assert "org.apache.cassandra.dht.Murmur3Partitioner" in d.stdout
    assert tool(srv, "version").stdout.startswith("ReleaseVersion: 4.1")
    assert "pending tasks:" in tool(srv, "compactionstats").stdout
    assert tool(srv, "truncatehints").returncode == 0
    assert tool(srv, "flush").returncode == 0
    assert tool(srv, "compact", "cassette_bench", "kv").returncode == 0
    e = tool(srv, "getendpoints", "system", "local", "local")
    assert e.returncode == 0 and e.stdout.strip() == "127.0.0.1"
    bad = tool(srv, "tablehistograms", "nope", "nope")
    assert bad.returncode != 0
    assert tool(srv, "flush", "no_such_keyspace").returncode != 0
    m = tool(srv, "metrics").stdout
    assert "cassette_requests_total" in m
    # per-table series (Prometheus text): requests and latency by operation
    w = re.search(r'^cassette_table_requests_total\{keyspace="cassette_bench",table="kv",op="write"\} (\d+)$', m, re.M)
    assert w and int(w.group(1)) > 0, m[-2000:]
    inf = re.search(r'^cassette_table_latency_seconds_bucket\{keyspace="cassette_bench",table="kv",op="write",'
                    r'le="\+Inf"\} (\d+)$', m, re.M)
    assert inf and inf.group(1) == w.group(1)
    assert re.search(r'^cassette_table_sstables\{keyspace="cassette_bench",table="kv"\} \d+$', m, re.M)


# ------------------------------------------------------------ the HTML report

SVG = "{http://www.w3.org/2000/svg}"
CMP_CHARTS = {"latency", "throughput", "size_rows", "size_bytes", "node_load", "top_share", "op_latency"}
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class TagBalance(HTMLParser):
    """What a browser's parser sees: every element closed, in order."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.errors, self.external = [], [], []

    def handle_starttag(self, tag, attrs):
        for k, v in attrs:
            if k in ("src", "href") or (v and "url(" in v):
                self.external.append((tag, k, v))
        if tag == "script":
            self.external.append((tag, "", ""))
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.stack.pop()

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append("</%s> closes %s" % (tag, self.stack[-1:] or "nothing"))
        else:
            self.stack.pop()


def parse_page(page):
    """The page as an element tree; it must be well-formed for html.parser
    and for xml.etree, and self-contained."""
    tb = TagBalance()
    tb.feed(page)
    tb.close()
    assert not tb.errors and not tb.stack, (tb.errors, tb.stack)
    assert not tb.external, tb.external
    assert "@import" not in page and "url(" not in page
    return ET.fromstring(page)


def svgs(root, cls):
    return [e for e in root.iter(SVG + "svg") if cls in e.get("class", "").split()]


def chart(root, name, cls="cmp"):
    (c,) = [e for e in svgs(root, cls) if e.get("data-chart") == name]
    return c


def legend(svg):
    (g,) = [e for e in svg.iter(SVG + "g") if e.get("class") == "legend"]
    keys = [k for k in g if k.get("class") == "key"]
    return [(k.get("data-scheme"), "".join(k.find(SVG + "text").itertext())) for k in keys]


def summary(root):
    """{scheme: {column: (td element, data-v, text)}} of the summary table."""
    (t,) = [e for e in root.iter("table") if e.get("class") == "summary"]
    rows = {}
    for tr in t.iter("tr"):
        if tr.get("data-scheme") is None:
            continue
        rows[tr.get("data-scheme")] = {td.get("data-col"): (td, td.get("data-v"), "".join(td.itertext()))
                                       for td in tr.iter("td") if td.get("data-col")}
    return rows


def classes(td):
    return set(td.get("class", "").split())


def human(text):
    """A figure as the page prints it, back to a number (1.2k, 44.1 KiB, 4.33 ms, 0.5%, 1.17x, 1,881)."""
    t = text.replace(",", "").replace(" !", "").strip()
    for suf, mul in (("\u00b5s", 1e-3), ("ms", 1.0), ("KiB", 1024.0), ("MiB", 1024.0 ** 2), ("GiB", 1024.0 ** 3),
                     ("B", 1.0), ("s", 1e3), ("%", 0.01), ("x", 1.0)):
        if t.endswith(suf):
            return human(t[:-len(suf)]) * mul
    for suf, mul in (("k", 1e3), ("M", 1e6), ("G", 1e9)):
        if t.endswith(suf):
            return float(t[:-1]) * mul
    return float(t)


def y_scale(svg):
    """(y pixel of 0, y pixel of the axis top) from the y tick labels."""
    ticks = [(float(t.get("y")) - 4, "".join(t.itertext())) for t in svg.iter(SVG + "text")
             if t.get("class") == "ytick"]
    assert ticks[0][1] == "0"
    assert human(ticks[-1][1]) == pytest.approx(float(svg.get("data-ymax")))
    return ticks[0][0], ticks[-1][0]


def polyline(svg, scheme, series):
    (p,) = [e for e in svg.iter(SVG + "polyline")
            if e.get("data-scheme") == scheme and e.get("data-series") == series]
    return [tuple(map(float, xy.split(","))) for xy in p.get("points").split()]


def nice(v):
    """1, 2 or 5 times a power of ten."""
    m = v / 10 ** math.floor(math.log10(v))
    return any(abs(m - k) < 1e-9 for k in (1, 2, 5, 10))


@pytest.fixture(scope="module")
def ts_report(srv, tmp_path_factory):
    d = tmp_path_factory.mktemp("tsreport")
    html, js = d / "ts.html", d / "ts.json"
    # a count, not a duration: 32k inserts over 50 sensors put ~640 rows in each
    # day partition, past ts_bucket's 500-row cap, however fast the build runs
    # (2.5 s under the sanitizers once wrote fewer, and ts_bucket's larger run
    # then held the largest partition); the rate keeps each run over 2 s, so
    # the timeline has whole seconds to show
    p = bench(srv, "compare", "preset:ts_day", "preset:ts_slot", "preset:ts_bucket", "-n", "40000", "--rate", "15000",
              "--warmup", "0.3s", "--connections", "2", "--concurrency", "4", "--html", str(html), "--json", str(js))
    assert p.returncode == 0, p.stderr
    doc = json.loads(js.read_text())
    return parse_page(html.read_text()), doc, {s["scheme"]: s for s in doc["schemes"]}


def test_html_compare_legends_and_summary_match_the_json(ts_report):
    root, doc, by = ts_report
    names = [s["scheme"] for s in doc["schemes"]]
    assert names == ["ts_day", "ts_slot", "ts_bucket"]
    cmp = svgs(root, "cmp")
    assert {c.get("data-chart") for c in cmp} == CMP_CHARTS
    for c in cmp:   # every scheme, in order, in every comparison chart's legend
        assert legend(c) == [(n, n) for n in names], c.get("data-chart")
    rows = summary(root)
    assert list(rows) == names
    for n, s in by.items():
        r = rows[n]
        want = {"ops_s": "%.1f" % s["throughput"], "p50_ms": "%.4f" % s["latency_ms"]["p50"],
                "p99_ms": "%.4f" % s["latency_ms"]["p99"], "p999_ms": "%.4f" % s["latency_ms"]["p999"],
                "errors": str(s["errors"]), "partitions": str(s["partitions"]["count"]),
                "rows_p50": str(s["partitions"]["rows"]["p50"]), "rows_max": str(s["partitions"]["rows"]["max"]),
                "bytes_p99": str(s["partitions"]["bytes"]["p99"]), "bytes_max": str(s["partitions"]["bytes"]["max"]),
                "hot_share": "%.4f" % s["partitions"]["top"][0]["share"],
                "node_ratio": "%.4f" % s["ring"]["max_over_mean"]}
        for col, v in want.items():
            assert r[col][1] == v, (n, col, r[col][1], v)
            shown = human(r[col][2])    # what the reader sees rounds the same figure
            assert shown == pytest.approx(float(v), rel=0.006, abs=1e-4), (n, col, r[col][2], v)
        # the latency over all operations is no better than the best operation's
        assert s["latency_ms"]["p99"] >= min(op["latency_ms"]["p99"] for op in s["operations"].values()) - 1e-9


def test_html_marks_the_worst_and_best_scheme(ts_report):
    root, doc, by = ts_report
    rows = summary(root)
    cases = [("ops_s", lambda s: s["throughput"], -1), ("p99_ms", lambda s: s["latency_ms"]["p99"], +1),
             ("rows_max", lambda s: s["partitions"]["rows"]["max"], +1),
             ("bytes_max", lambda s: s["partitions"]["bytes"]["max"], +1)]
    marked = 0
    for col, val, worse in cases:
        vals = {n: val(s) for n, s in by.items()}
        worst = {n for n, v in vals.items() if v == (max if worse > 0 else min)(vals.values())}
        best = {n for n, v in vals.items() if v == (min if worse > 0 else max)(vals.values())}
        got_worst = {n for n, r in rows.items() if "worst" in classes(r[col][0])}
        got_best = {n for n, r in rows.items() if "best" in classes(r[col][0])}
        if len(set(vals.values())) == 1:
            assert not got_worst and not got_best, col
            continue
        assert got_worst == worst and got_best == best, (col, vals)
        marked += 1
    # day partitions hold every reading of a sensor's day: the largest by far
    assert "worst" in classes(rows["ts_day"]["rows_max"][0])
    assert marked >= 3
    # the partition-count column is not a better/worse figure
    assert not any(classes(r["partitions"][0]) & {"best", "worst"} for r in rows.values())
    # the findings name the largest partition's scheme first among the size findings
    (li,) = [e for e in root.iter("li") if e.get("data-finding") == "largest_partition"]
    assert li.get("data-scheme") == "ts_day"
    assert "{:,}".format(by["ts_day"]["partitions"]["rows"]["max"]) in "".join(li.itertext())


def test_html_latency_charts_share_one_axis(ts_report):
    root, doc, by = ts_report
    lat = [e for e in root.iter(SVG + "svg") if e.get("data-chart") == "latency"]
    assert len(lat) == 4                                  # the overlay and one per scheme
    ymaxes = {float(e.get("data-ymax")) for e in lat}
    assert len(ymaxes) == 1, ymaxes
    (ymax,) = ymaxes
    top = max(max(t["p99"], t["p50"]) for s in by.values() for t in s["timeline"])
    assert top <= ymax < 1.5 * top and nice(ymax / (len([1 for t in lat[0].iter(SVG + "text")
                                                             if t.get("class") == "ytick"]) - 1))
    for svg in lat:
        y0, ytop = y_scale(svg)
        for n, s in by.items():
            if svg.get("data-scheme") not in (None, n):
                continue
            assert s["timeline"], n
            for series in ("p99", "p50"):
                pts = polyline(svg, n, series)
                assert len(pts) == len(s["timeline"])
                for (x, y), t in zip(pts, s["timeline"]):
                    assert (y0 - y) / (y0 - ytop) * ymax == pytest.approx(t[series], abs=ymax * 0.004)
    thr = chart(root, "throughput")
    y0, ytop = y_scale(thr)
    ymax = float(thr.get("data-ymax"))
    assert ymax >= max(t["ops_per_s"] for s in by.values() for t in s["timeline"])
    for n, s in by.items():
        for (x, y), t in zip(polyline(thr, n, "ops_s"), s["timeline"]):
            assert (y0 - y) / (y0 - ytop) * ymax == pytest.approx(t["ops_per_s"], abs=ymax * 0.004)


def test_html_size_and_load_charts_follow_the_json(ts_report):
    root, doc, by = ts_report
    for name, key in (("size_rows", "rows_histogram_log2"), ("size_bytes", "bytes_histogram_log2")):
        c = chart(root, name)
        for n, s in by.items():
            bars = [b for b in c.iter(SVG + "rect") if b.get("class") == "bar" and b.get("data-scheme") == n]
            assert len(bars) == sum(1 for v in s["partitions"][key] if v), (name, n)
            assert sum(s["partitions"][key]) == s["partitions"]["count"]
        assert [l for l in c.iter(SVG + "line") if l.get("class") == "limit"]   # the limit is drawn
    nodes = chart(root, "node_load")
    for n, s in by.items():
        bars = [b for b in nodes.iter(SVG + "rect") if b.get("data-scheme") == n]
        assert len(bars) == s["ring"]["nodes"]
        # bar heights relative to the mean line
        y0, ytop = y_scale(nodes)
        ymax = float(nodes.get("data-ymax"))
        got = [(y0 - float(b.get("y"))) / (y0 - ytop) * ymax for b in bars]
        want = [v / s["ring"]["mean_load"] for v in s["ring"]["node_load"]]
        assert got == pytest.approx(want, abs=ymax * 0.004)
    top = chart(root, "top_share")
    for n, s in by.items():
        assert len(polyline(top, n, "top_share")) == len(s["partitions"]["top"])


ERR_PROFILE = """\
name: hh_errs
description: "keys <b>too</b> long & \\"quoted\\""
keyspace: hh_bench
keyspace_definition: |
  CREATE KEYSPACE IF NOT EXISTS hh_bench WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}
table: errs
table_definition: CREATE TABLE IF NOT EXISTS errs (k blob PRIMARY KEY, v int)
columnspec:
  - {name: k, size: uniform(60000..70000), population: uniform(1..100)}
  - {name: v, population: uniform(1..10)}
ops: {insert: 1}
"""

BIG_PROFILE = """\
name: hh_big
keyspace: hh_bench
keyspace_definition: |
  CREATE KEYSPACE IF NOT EXISTS hh_bench WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}
table: big
table_definition: CREATE TABLE IF NOT EXISTS big (k int, c timestamp, v int, PRIMARY KEY (k, c))
columnspec:
  - {name: k, population: uniform(1..2)}
  - {name: c, generator: clock, step_ms: 1}
  - {name: v, population: uniform(1..10)}
insert:
  rows: fixed(100)
ops: {insert: 1}
"""


def test_html_flags_errors_and_oversized_partitions(srv, tmp_path):
    # keys over 64 KiB fail on the server (errors); 2 partitions of ~120k rows
    # are over the 100k-row guidance
    (tmp_path / "errs.yaml").write_text(ERR_PROFILE)
    (tmp_path / "big.yaml").write_text(BIG_PROFILE)
    html, js = tmp_path / "eb.html", tmp_path / "eb.json"
    p = bench(srv, "compare", str(tmp_path / "errs.yaml"), str(tmp_path / "big.yaml"), "-n", "2400",
              "--connections", "2", "--concurrency", "4", "--html", str(html), "--json", str(js))
    assert p.returncode == 0, p.stderr
    page = html.read_text()
    root = parse_page(page)
    by = {s["scheme"]: s for s in json.loads(js.read_text())["schemes"]}
    errs, big = by["hh_errs"], by["hh_big"]
    assert errs["errors"] > 0 and big["errors"] == 0
    # one kind of error, whatever key length each message names
    (kind, n), = errs["errors_by_kind"].items()
    assert kind.startswith("insert: 0x2200 Key length of ") and n == errs["errors"], errs["errors_by_kind"]
    assert big["partitions"]["rows"]["max"] > 100000
    for what in ("rows", "bytes"):   # nearest rank: ordered even for two partitions
        q = big["partitions"][what]
        assert q["p50"] <= q["p99"] <= q["max"], (what, q)
    rows = summary(root)
    assert rows["hh_errs"]["errors"][1] == str(errs["errors"])
    assert "worst" in classes(rows["hh_errs"]["errors"][0])
    assert "over" in classes(rows["hh_big"]["rows_max"][0]) and rows["hh_big"]["rows_max"][2].endswith("!")
    assert "over" not in classes(rows["hh_big"]["bytes_max"][0])      # ~2 MiB: under 100 MiB
    assert "over" not in classes(rows["hh_errs"]["rows_max"][0])
    found = {(e.get("data-finding"), e.get("data-scheme"), e.get("class")) for e in root.iter("li")}
    assert ("over_limit", "hh_big", "bad") in found and ("errors", "hh_errs", "bad") in found
    # the profile's description and the server's messages arrive as text, not markup
    assert "<b>too</b>" not in page and "keys &lt;b&gt;too&lt;/b&gt; long &amp; &quot;quoted&quot;" in page
    (d,) = [e for e in root.iter("div") if e.get("class") == "detail" and e.get("data-scheme") == "hh_errs"]
    assert "keys <b>too</b> long & \"quoted\"" in "".join(d.itertext())
    assert "Key length of" in "".join(d.itertext())
    for c in svgs(root, "cmp"):
        assert [k for k, _ in legend(c)] == ["hh_errs", "hh_big"]


def test_html_single_scheme(srv, tmp_path):
    html, js = tmp_path / "kv.html", tmp_path / "kv.json"
    p = bench(srv, "run", "preset:kv", "--duration", "1.5s", "--warmup", "0.2s", "--connections", "2",
              "--concurrency", "4", "--html", str(html), "--json", str(js))
    assert p.returncode == 0, p.stderr
    root = parse_page(html.read_text())
    (s,) = json.loads(js.read_text())["schemes"]
    assert s["partitions"]["rows"]["max"] == 1                  # one row per partition
    rows = summary(root)
    assert list(rows) == ["kv"]
    assert rows["kv"]["ops_s"][1] == "%.1f" % s["throughput"]
    assert rows["kv"]["rows_max"][2] == "1"
    assert not any(classes(td) & {"best", "worst"} for td, _, _ in rows["kv"].values())
    for c in svgs(root, "cmp"):
        assert legend(c) == [("kv", "kv")]
    assert len(svgs(root, "detail")) == 1


# ---------------------------------------------------------------- cassandra-stress profiles
#
# docs/bench.md promises that cassandra-stress user profiles are read as
# they are.  Each test below is a profile of our own, checked against what
# cassandra-stress does with it (tools/stress: StressProfile.java,
# PartitionIterator.java, OptionDistribution.java, Generator.java), on the
# data the server holds afterwards and on the bench's own JSON figures.

KS = ("keyspace: sc\n"
      "keyspace_definition: |\n"
      "  CREATE KEYSPACE IF NOT EXISTS sc WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}\n")


def profile(tmp_path, name, body):
    path = tmp_path / (name + ".yaml")
    path.write_text(KS + body)
    return str(path)


def run_json(server, prof, *args):
    out = prof + ".%d.json" % len(os.listdir(os.path.dirname(prof)))
    p = bench(server, "run", prof, "--json", out, *args)
    assert p.returncode == 0, p.stderr
    (s,) = json.loads(open(out).read())["schemes"]
    return s


def rows_of(server, cql):
    c, sess = H.connect(server.host, server.port)
    try:
        return list(sess.execute(cql))
    finally:
        c.shutdown()


def test_stress_defaults_cluster_size_population(srv, tmp_path):
    """Without cluster:, a clustering column has one value per parent
    (stress's fixed(1)), so a partition has the product of the cluster
    counts as rows; text and blob values are 4 to 8 long (uniform(4..8))."""
    prof = profile(tmp_path, "shape", """table: shape
table_definition: |
  CREATE TABLE IF NOT EXISTS shape (p bigint, a int, b text, c bigint, d timestamp, v text, w blob,
    PRIMARY KEY (p, a, b, c, d))
columnspec:
  - name: p
    population: uniform(1..30)
  - name: a
    cluster: fixed(3)
  - name: c
    cluster: fixed(4)
insert:
  batchtype: UNLOGGED
queries:
  one:
    cql: SELECT * FROM shape WHERE p = ?
""")
    s = run_json(srv, prof, "-n", "300", "--ops", "insert=1")
    assert s["errors"] == 0, s["errors_by_kind"]
    parts = s["partitions"]
    # 3 x 1 x 4 x 1 rows in every partition, each written whole by one op (select fixed(1)/1)
    assert parts["rows"] == {"p50": 12, "p99": 12, "max": 12}
    rows = rows_of(srv, "SELECT * FROM sc.shape")
    keys = {r.p for r in rows}
    assert 25 <= len(keys) <= 30 and parts["count"] == len(keys)
    assert len(rows) == 12 * len(keys)
    for p in keys:
        mine = [r for r in rows if r.p == p]
        assert len({r.a for r in mine}) == 3
        for a in {r.a for r in mine}:
            under = [r for r in mine if r.a == a]
            assert len({r.b for r in under}) == 1 and len({r.c for r in under}) == 4
    for col in ("b", "v", "w"):
        lens = {len(getattr(r, col)) for r in rows}
        assert lens == {4, 5, 6, 7, 8}, (col, lens)


def test_stress_default_seed_population(srv, tmp_path):
    """A key column without population takes uniform(1..100B) seeded by the
    op's seed; the seeds are stress's -pop: seq(1..N) for inserts only, so
    N inserts write N partitions, and --pop seq=1..100 bounds them to 100."""
    body = """table: %s
table_definition: CREATE TABLE IF NOT EXISTS %s (k bigint PRIMARY KEY, v text)
queries:
  get:
    cql: SELECT * FROM %s WHERE k = ?
    fields: samerow
"""
    s = run_json(srv, profile(tmp_path, "seeds1", body % (("seeds1",) * 3)), "-n", "500", "--ops", "insert=1")
    assert s["partitions"]["count"] == 500
    assert len(rows_of(srv, "SELECT k FROM sc.seeds1")) == 500
    prof = profile(tmp_path, "seeds2", body % (("seeds2",) * 3))
    s = run_json(srv, prof, "-n", "2000", "--ops", "insert=1", "--pop", "seq=1..100")
    assert s["partitions"]["count"] == 100
    keys = [r.k for r in rows_of(srv, "SELECT k FROM sc.seeds2")]
    assert len(keys) == 100 and min(keys) >= 1 and max(keys) <= 100 * 10 ** 9
    # the same seeds read back what was written: every get finds its row
    s = run_json(srv, prof, "-n", "300", "--ops", "get=1", "--pop", "seq=1..100")
    assert s["operations"]["get"]["rows"] == 300


EXAMPLE_SHAPE = """table: %s
table_definition: |
  CREATE TABLE IF NOT EXISTS %s (name text, choice boolean, date timestamp, address inet, dbl double,
    lval bigint, ival int, uid timeuuid, value blob,
    PRIMARY KEY ((name, choice), date, address, dbl, lval, ival, uid))
columnspec:
  - name: name
    size: uniform(1..10)
    population: uniform(1..10)
  - name: date
    cluster: uniform(20..40)
  - name: lval
    population: gaussian(1..1000)
    cluster: uniform(1..4)
insert:
  partitions: %s
  batchtype: LOGGED
  select: uniform(1..10)/10
queries:
  simple1:
    cql: select * from %s where name = ? and choice = ? LIMIT 100
    fields: samerow
  range1:
    cql: select * from %s where name = ? and choice = ? and date >= ? LIMIT 100
    fields: multirow
"""


def check_example_shape(server, s, table):
    """Rows as stress lays them out: 20..40 dates per partition, 1..4 lval
    under each date (its own count), one value of each other clustering
    column under its parent; at most 40 x 4 rows."""
    assert s["errors"] == 0, s["errors_by_kind"]
    parts = s["partitions"]
    assert parts["count"] == 20                     # 10 names x 2 booleans
    rows = rows_of(server, "SELECT name, choice, date, address, lval, uid FROM sc.%s" % table)
    per = {}
    for r in rows:
        per.setdefault((r.name, r.choice), []).append(r)
    assert len(per) == 20
    sizes = sorted(len(v) for v in per.values())
    assert sizes[-1] == parts["rows"]["max"] and sizes[-1] <= 160 and sizes[0] >= 20
    lval_counts = set()
    for mine in per.values():
        dates = {r.date for r in mine}
        assert 20 <= len(dates) <= 40
        for d in dates:
            under = [r for r in mine if r.date == d]
            assert len({r.address for r in under}) == 1          # no cluster: fixed(1)
            n = len({r.lval for r in under})
            assert 1 <= n <= 4 and len(under) == n
            lval_counts.add(n)
    assert lval_counts == {1, 2, 3, 4}                            # drawn per date, not per partition


def test_stress_example_shape_single_partition_batches(srv, tmp_path):
    """A profile shaped like cqlstress-example.yaml (six clustering columns,
    two with cluster:) runs without errors: ~75 rows per partition, where
    cassette's old 10 values per clustering column made batches of 10^5
    rows that were all refused as too large."""
    prof = profile(tmp_path, "exshape", EXAMPLE_SHAPE % ("exshape", "exshape", "fixed(1)", "exshape", "exshape"))
    s = run_json(srv, prof, "-n", "600", "--ops", "ops(insert=2,simple1=1,range1=1)")
    assert s["operations"]["insert"]["ops"] > 250
    assert s["operations"]["simple1"]["rows"] > 0
    check_example_shape(srv, s, "exshape")


def configured_server(tmp_path_factory, name, yaml_text):
    """A server of its own with a cassandra.yaml holding yaml_text (a
    fixture body: yields the server, stops it after)."""
    d = tmp_path_factory.mktemp(name)
    conf = d / "cassandra.yaml"
    conf.write_text(yaml_text)
    s = H.Server(d, extra_args=["--config", str(conf)])
    s.start(port=0)
    yield s
    s.stop()


@pytest.fixture(scope="module")
def srv_big_batches(tmp_path_factory):
    # cqlstress-example's partitions: uniform(1..50) makes multi-partition
    # batches of ~1000 rows, ~65 KiB in Cassandra's dataSize terms: over its
    # default batch_size_fail_threshold (50 KiB), as on Apache Cassandra.
    yield from configured_server(tmp_path_factory, "bigbatch", "batch_size_fail_threshold: 4096KiB\n")


def test_stress_example_shape_multi_partition_batches(srv_big_batches, tmp_path):
    prof = profile(tmp_path, "exmulti", EXAMPLE_SHAPE % ("exmulti", "exmulti", "uniform(1..50)", "exmulti", "exmulti"))
    s = run_json(srv_big_batches, prof, "-n", "200", "--ops", "insert=1")
    assert s["operations"]["insert"]["ops"] == 200
    check_example_shape(srv_big_batches, s, "exmulti")


@pytest.fixture(scope="module")
def srv_small_batches(tmp_path_factory):
    # Batches spanning partitions over 1 KiB (Cassandra's dataSize) are
    # refused as "Batch too large"; the warn threshold is lowered too, as
    # Cassandra checks the fail threshold only past the warn one.
    yield from configured_server(tmp_path_factory, "smallbatch",
                                 "batch_size_warn_threshold: 1KiB\nbatch_size_fail_threshold: 1KiB\n")


REFUSED = """table: refused
table_definition: CREATE TABLE IF NOT EXISTS refused (k bigint, c int, v blob, PRIMARY KEY (k, c))
columnspec:
  - name: k
    population: uniform(1..300)
  - name: c
    cluster: fixed(8)
  - name: v
    size: fixed(60)
insert:
  partitions: uniform(1..6)
  batchtype: UNLOGGED
  select: uniform(1..8)/8
"""


def test_partition_picture_counts_acknowledged_writes_only(srv_small_batches, tmp_path):
    """Batches of 1 to 6 partitions, 1 to 8 rows each: the larger ones are
    refused ("Batch too large") and add none of their rows to the partition
    picture, which is then the table's, partition by partition (a partition
    a refused batch named may have been written by another op, or never),
    and what tablestats and tablehistograms report.  The bench counted the
    refused batches' rows too before the picture was kept on
    acknowledgement: 114 partitions, rows p50 8, for the server's 68, p50 5."""
    srv = srv_small_batches
    s = run_json(srv, profile(tmp_path, "refused", REFUSED), "-n", "150", "--ops", "insert=1", "--top", "100000")
    ins = s["operations"]["insert"]
    # no warm-up with -n: every op is acknowledged or counted under errors by kind
    assert ins["ops"] + ins["errors"] == 150 and s["errors"] == ins["errors"]
    assert ins["ops"] >= 20 and ins["errors"] >= 20, s["errors_by_kind"]
    assert s["errors_by_kind"] == {"insert: 0x2200 Batch too large": ins["errors"]}
    parts = s["partitions"]
    assert parts["counts"] == "acknowledged"
    rows = rows_of(srv, "SELECT k, c FROM sc.refused")
    per = {}
    for r in rows:
        per[r.k] = per.get(r.k, 0) + 1
    (count,) = rows_of(srv, "SELECT count(*) FROM sc.refused")[0]
    assert parts["count"] == len(per) and parts["rows_total"] == count == len(rows)
    # --top lists every partition (ops only grow: the list is exact); keys are big-endian bigints
    mine = {struct.unpack(">q", bytes.fromhex(t["key"][2:]))[0]: t["rows"] for t in parts["top"]}
    assert mine == per
    assert parts["total_ops"] == sum(t["ops"] for t in parts["top"])
    sizes = sorted(per.values())
    nearest = lambda p: sizes[math.ceil(len(sizes) * p) - 1]
    assert parts["rows"] == {"p50": nearest(0.5), "p99": nearest(0.99), "max": sizes[-1]}
    # the server's picture: one cell per row (stress's UPDATE writes v only)
    # and at most 8, where EstimatedHistogram's offsets are 1, 2, ..., 8, so
    # Cell Count's percentiles (nearest rank too) are the bench's exactly
    t = tool(srv, "flush", "sc", "refused")
    assert t.returncode == 0, t.stderr
    st = tool(srv, "tablestats", "sc.refused")
    m = re.search(r"Number of partitions \(estimate\): (\d+)", st.stdout)
    assert m and int(m.group(1)) == parts["count"], st.stdout
    h = tool(srv, "tablehistograms", "sc", "refused")
    assert h.returncode == 0, h.stderr
    cells = {l.split()[0]: int(l.split()[-1]) for l in h.stdout.splitlines() if re.match(r"(50%|99%|Max) ", l)}
    assert cells == {"50%": parts["rows"]["p50"], "99%": parts["rows"]["p99"], "Max": parts["rows"]["max"]}, h.stdout


def test_stress_distributions_and_ops_form(srv, tmp_path):
    """OptionDistribution's forms: ~ inverts, exp as stress scales it,
    gaussian with mean and stdev or with stdvrng, qextreme; seq() keys walk
    their range; ops(...) names queries case-insensitively, with the
    specname.op form."""
    prof = profile(tmp_path, "dists", """table: dists
table_definition: CREATE TABLE IF NOT EXISTS dists (k bigint PRIMARY KEY, e text, ie text, g text, q blob, n text)
columnspec:
  - name: k
    population: seq(1..400)
  - name: e
    size: exp(1..100)
  - name: ie
    size: ~exp(1..100)
  - name: g
    size: gaussian(1..100,30,3)
  - name: q
    size: qextreme(1..100,2,4)
  - name: n
    size: normal(10..20, 5)
queries:
  Simple1:
    cql: SELECT * FROM dists WHERE k = ?
    fields: samerow
""")
    s = run_json(srv, prof, "-n", "400", "--ops", "ops(sc.dists.insert=1)")
    assert s["errors"] == 0 and s["partitions"]["count"] == 400
    rows = rows_of(srv, "SELECT * FROM sc.dists")
    assert sorted(r.k for r in rows) == list(range(1, 401))

    def mean(col):
        return sum(len(getattr(r, col)) for r in rows) / len(rows)
    # exp(1..100): mean 99 / (0.5 ln 99) = 43 before the clamp, ~39 after;
    # ~exp mirrors it (101 - x)
    assert 34 < mean("e") < 44 and 57 < mean("ie") < 67
    glens = [len(r.g) for r in rows]
    assert 29 < mean("g") < 31 and min(glens) >= 18 and max(glens) <= 42
    assert all(1 <= len(r.q) <= 100 for r in rows)
    assert all(10 <= len(r.n) <= 20 for r in rows) and 14 < mean("n") < 15.5
    s = run_json(srv, prof, "-n", "300", "--ops", "ops(insert=1,SIMPLE1=2)")
    ops = s["operations"]
    assert set(ops) == {"insert", "simple1"} and ops["simple1"]["ops"] > 150
    assert ops["simple1"]["rows"] == ops["simple1"]["ops"]      # seq keys 1..300 exist


def test_stress_refuses_what_stress_refuses(srv, tmp_path):
    base = """table: refused
table_definition: CREATE TABLE IF NOT EXISTS refused (k bigint PRIMARY KEY, v text)
%s
queries:
  q:
    cql: SELECT * FROM refused WHERE k = ?
    fields: %s
"""
    cases = [
        ("columnspec:\n  - name: v\n    clustering: fixed(2)", "samerow", "unknown key 'clustering' in columnspec"),
        ("insert:\n  batch_type: LOGGED", "samerow", "unknown key 'batch_type' in insert"),
        ("insert:\n  batchtype: SOMETIMES", "samerow", "batchtype must be LOGGED, UNLOGGED or COUNTER"),
        ("colunmspec: []", "samerow", "unknown key 'colunmspec' in the profile"),
        ("columnspec:\n  - name: v\n    size: uniform(5)", "samerow", "bad distribution 'uniform(5)'"),
        ("", "bothrows", "fields must be samerow or multirow"),
    ]
    for i, (extra, fields, want) in enumerate(cases):
        prof = profile(tmp_path, "refused%d" % i, base % (extra, fields))
        p = bench(srv, "run", prof, "-n", "10")
        assert p.returncode != 0 and want in p.stderr, (want, p.stderr)


def test_stress_row_population_update_and_counters(srv, tmp_path):
    """insert.row-population nulls the value columns past the ratio (in name
    order); stress writes with UPDATE, so a row without values does not
    exist, where cassette's insert.statement: insert writes a row marker;
    a counter is incremented by its column's value (here fixed(7))."""
    body = """table: %s
table_definition: CREATE TABLE IF NOT EXISTS %s (k bigint PRIMARY KEY, v4 text, v1 text, v3 text, v2 text)
columnspec:
  - name: k
    population: seq(1..50)
insert:
  row-population: %s
%s
queries:
  q:
    cql: SELECT * FROM %s WHERE k = ?
"""
    half = profile(tmp_path, "rphalf", body % ("rphalf", "rphalf", "fixed(1)/2", "", "rphalf"))
    run_json(srv, half, "-n", "50", "--ops", "insert=1")
    rows = rows_of(srv, "SELECT * FROM sc.rphalf")
    assert len(rows) == 50
    assert all(r.v1 and r.v2 and r.v3 is None and r.v4 is None for r in rows)
    none = profile(tmp_path, "rpnone", body % ("rpnone", "rpnone", "fixed(0)/1", "", "rpnone"))
    run_json(srv, none, "-n", "50", "--ops", "insert=1")
    assert rows_of(srv, "SELECT * FROM sc.rpnone") == []
    marker = profile(tmp_path, "rpins", body % ("rpins", "rpins", "fixed(0)/1", "  statement: insert", "rpins"))
    run_json(srv, marker, "-n", "50", "--ops", "insert=1")
    rows = rows_of(srv, "SELECT * FROM sc.rpins")
    assert len(rows) == 50 and all(r.v1 is None and r.v4 is None for r in rows)
    counters = profile(tmp_path, "cnt", """table: cnt
table_definition: CREATE TABLE IF NOT EXISTS cnt (k bigint, c int, n counter, PRIMARY KEY (k, c))
columnspec:
  - name: k
    population: fixed(1)
  - name: c
    cluster: fixed(3)
  - name: n
    population: fixed(7)
queries:
  q:
    cql: SELECT * FROM cnt WHERE k = ?
""")
    s = run_json(srv, counters, "-n", "50", "--ops", "insert=1")
    assert s["errors"] == 0, s["errors_by_kind"]
    assert sorted(r.n for r in rows_of(srv, "SELECT n FROM sc.cnt")) == [350, 350, 350]


def test_stress_multirow_and_token_range_queries(srv, tmp_path):
    """fields: samerow binds one row, multirow (stress's default) each
    clustering marker from its own row; token_range_queries read the ring's
    token ranges a page per op, following paging states."""
    prof = profile(tmp_path, "mr", """table: mr
table_definition: CREATE TABLE IF NOT EXISTS mr (p bigint, a bigint, b bigint, v text, PRIMARY KEY (p, a, b))
columnspec:
  - name: p
    population: uniform(1..20)
  - name: a
    cluster: fixed(5)
  - name: b
    cluster: fixed(5)
queries:
  same:
    cql: SELECT * FROM mr WHERE p = ? AND a = ? AND b = ?
    fields: samerow
  multi:
    cql: SELECT * FROM mr WHERE p = ? AND a = ? AND b = ?
    fields: multirow
  dflt:
    cql: SELECT * FROM mr WHERE p = ? AND a = ? AND b = ?
token_range_queries:
  scan:
    columns: '*'
    page_size: __PAGE__
""")
    text = open(prof).read()
    open(prof, "w").write(text.replace("__PAGE__", "5000"))
    s = run_json(srv, prof, "-n", "1000", "--ops", "insert=1", "--pop", "seq=1..1000")
    assert s["partitions"]["count"] == 20 and s["partitions"]["rows"] == {"p50": 25, "p99": 25, "max": 25}
    total = len(rows_of(srv, "SELECT p FROM sc.mr"))
    assert total == 500
    s = run_json(srv, prof, "-n", "900", "--ops", "same=1,multi=1,dflt=1", "--pop", "seq=1..1000")
    ops = s["operations"]
    assert ops["same"]["rows"] == ops["same"]["ops"] > 250
    # a and b from two random rows: the pair exists when b's row is under a (1 in 5)
    for q in ("multi", "dflt"):
        assert ops[q]["rows"] < 0.4 * ops[q]["ops"], (q, ops[q])
    # token ranges: (MIN, t0], (t0, t1], ... (t_last, MAX] of the node's tokens
    toks = sorted(int(t) for t in rows_of(srv, "SELECT tokens FROM system.local")[0].tokens)
    bounds = [-2 ** 63] + toks + [2 ** 63 - 1]
    keys = [r[0] for r in rows_of(srv, "SELECT token(p) FROM sc.mr")]
    per = [sum(1 for t in keys if lo < t <= hi) for lo, hi in zip(bounds, bounds[1:])]
    per = [n for (lo, hi), n in zip(zip(bounds, bounds[1:]), per) if hi > lo]
    # one page per range: one sweep of the ring reads every row once
    s = run_json(srv, prof, "-n", str(len(per)), "--ops", "scan=1", "--connections", "1", "--concurrency", "1")
    assert s["operations"]["scan"]["rows"] == total
    # small pages (none filled exactly by a range's last rows): a sweep takes
    # ceil(rows / page) ops per range, and reads every row once
    page = next(p for p in range(7, 60) if all(n % p for n in per if n))
    open(prof, "w").write(text.replace("__PAGE__", str(page)))
    sweep = sum(max(1, -(-n // page)) for n in per)
    assert sweep > len(per)
    s = run_json(srv, prof, "-n", str(2 * sweep), "--ops", "scan=1", "--connections", "1", "--concurrency", "1")
    assert s["errors"] == 0 and s["operations"]["scan"]["rows"] == 2 * total
