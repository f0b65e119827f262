"""The server binary's command line and startup failures: each bad start
ends with a message and a non-zero exit status, never a crash (cassette
only: these run the binary directly)."""

import os
import socket
import subprocess

import pytest

import cassette_harness as H

pytestmark = pytest.mark.skipif(not H.is_cassette(), reason="runs the cassette binary")


def run(args, timeout=30):
    return subprocess.run([H.binary_path()] + args, capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


def assert_clean_failure(p):
    assert p.returncode > 0, "exit %s (negative: killed by a signal)\n%s" % (p.returncode, p.stderr)
    assert p.stderr.strip() or p.stdout.strip(), "no message"
    assert "Sanitizer" not in p.stderr and "runtime error" not in p.stderr, p.stderr


def test_help():
    p = run(["--help"])
    assert p.returncode == 0
    assert "--data-dir" in p.stdout and "--port" in p.stdout


def test_unknown_option():
    assert_clean_failure(run(["--no-such-option"]))


def test_missing_option_value(tmp_path):
    assert_clean_failure(run(["--data-dir", str(tmp_path), "--port"]))


@pytest.mark.parametrize("port", ["99999", "-1", "abc"])
def test_bad_port(tmp_path, port):
    assert_clean_failure(run(["--listen", "127.0.0.1", "--port", port, "--data-dir", str(tmp_path)]))


def test_data_dir_is_a_file(tmp_path):
    f = tmp_path / "file"
    f.write_text("not a directory")
    assert_clean_failure(run(["--listen", "127.0.0.1", "--port", "0", "--data-dir", str(f)]))


def test_port_in_use(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        port = s.getsockname()[1]
        assert_clean_failure(run(["--listen", "127.0.0.1", "--port", str(port), "--data-dir", str(tmp_path)]))


def test_missing_config_file(tmp_path):
    assert_clean_failure(run(["--config", str(tmp_path / "nope.yaml"), "--port", "0",
                              "--data-dir", str(tmp_path)]))


def test_bad_config_value(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("commitlog_sync: sometimes\n")
    assert_clean_failure(run(["--config", str(cfg), "--port", "0", "--data-dir", str(tmp_path / "d")]))


def test_second_server_on_same_data_dir(tmp_path):
    """Two servers must not share a data directory: the second refuses."""
    s = H.Server(tmp_path)
    s.start()
    try:
        try:
            p = run(["--listen", "127.0.0.1", "--port", "0", "--data-dir", s.data_dir], timeout=10)
        except subprocess.TimeoutExpired:
            pytest.fail("a second server started over a data directory in use (no lock): "
                        "both would write the same commit log")
        assert_clean_failure(p)
        assert s.alive()
    finally:
        s.stop()
    assert os.path.isdir(s.data_dir)
