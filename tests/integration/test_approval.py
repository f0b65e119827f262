"""Approval tests (tests/cql/*.cql vs *.result), see tests/cql/approval.py.
CASSETTE_APPROVE=1 rewrites the .result files from the server's answers."""

import difflib
import glob
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
CQL_DIR = os.path.join(HERE, "..", "cql")
sys.path.insert(0, CQL_DIR)
import approval  # noqa: E402
import cassette_harness as H  # noqa: E402

SCRIPTS = sorted(glob.glob(os.path.join(CQL_DIR, "*.cql")))


@pytest.mark.parametrize("script", SCRIPTS, ids=[os.path.basename(s)[:-4] for s in SCRIPTS])
def test_approval(contact, script):
    # A connection of its own: the scripts USE keyspaces, which must not leak
    # into the shared session other tests use.
    cluster, session = H.connect(*contact)
    try:
        with open(script) as f:
            got = approval.run_script(session, f.read())
    finally:
        cluster.shutdown()
    expected_path = script[:-4] + ".result"
    if os.environ.get("CASSETTE_APPROVE") == "1":
        with open(expected_path, "w") as f:
            f.write(got)
        return
    assert os.path.exists(expected_path), "no %s: run with CASSETTE_APPROVE=1 and review it" % expected_path
    with open(expected_path) as f:
        want = f.read()
    if got != want:
        diff = "".join(difflib.unified_diff(want.splitlines(True), got.splitlines(True),
                                            "expected", "got"))
        pytest.fail("output differs from %s:\n%s" % (os.path.basename(expected_path), diff))
