"""rawcql: a minimal native-protocol v4 client over a plain socket.

Used where a driver would get in the way: malformed frames
(test_bad_input.py) and benchmarks without driver overhead (bench/*.sh).
Only what those need: build any frame (valid or not), read one frame,
decode ERROR bodies, and STARTUP / QUERY / PREPARE / EXECUTE helpers.
Spec: native_protocol_v4.spec sections 2 (frame), 3 (notations), 4.
Owner: infra.
"""

import socket
import struct
import time

OP_ERROR, OP_STARTUP, OP_READY, OP_AUTHENTICATE = 0x00, 0x01, 0x02, 0x03
OP_OPTIONS, OP_SUPPORTED, OP_QUERY, OP_RESULT = 0x05, 0x06, 0x07, 0x08
OP_PREPARE, OP_EXECUTE, OP_REGISTER, OP_EVENT, OP_BATCH = 0x09, 0x0A, 0x0B, 0x0C, 0x0D

ERR_SERVER, ERR_PROTOCOL, ERR_BAD_CREDENTIALS = 0x0000, 0x000A, 0x0100
ERR_SYNTAX, ERR_UNAUTHORIZED, ERR_INVALID, ERR_CONFIG = 0x2000, 0x2100, 0x2200, 0x2300
ERR_ALREADY_EXISTS, ERR_UNPREPARED = 0x2400, 0x2500

CL_ONE = 0x0001
CL_LOCAL_ONE = 0x000A


# -- notations (spec v4 section 3) -------------------------------------------
def short(n):
    return struct.pack(">H", n)


def int32(n):
    return struct.pack(">i", n)


def string(s):
    b = s.encode() if isinstance(s, str) else s
    return short(len(b)) + b


def long_string(s):
    b = s.encode() if isinstance(s, str) else s
    return int32(len(b)) + b


def short_bytes(b):
    return short(len(b)) + b


def value(b):
    """[bytes]: None is null (-1)."""
    if b is None:
        return int32(-1)
    return int32(len(b)) + b


def string_map(d):
    out = short(len(d))
    for k, v in d.items():
        out += string(k) + string(v)
    return out


def frame(opcode, body=b"", stream=0, version=4, flags=0, length=None):
    """One request frame.  length overrides the header's body length (to
    build frames whose header lies)."""
    if length is None:
        length = len(body)
    return struct.pack(">BBhBI", version, flags, stream, opcode, length) + body


def query_body(cql, consistency=CL_ONE, values=None, page_size=None, paging_state=None):
    flags = 0
    tail = b""
    if values is not None:
        flags |= 0x01
        tail += short(len(values)) + b"".join(value(v) for v in values)
    if page_size is not None:
        flags |= 0x04
        tail += int32(page_size)
    if paging_state is not None:
        flags |= 0x08
        tail += value(paging_state)
    return long_string(cql) + short(consistency) + bytes([flags]) + tail


def execute_body(prepared_id, values=(), consistency=CL_ONE):
    flags = 0x01 if values else 0
    tail = b""
    if values:
        tail = short(len(values)) + b"".join(value(v) for v in values)
    return short_bytes(prepared_id) + short(consistency) + bytes([flags]) + tail


STARTUP_BODY = string_map({"CQL_VERSION": "3.0.0"})


# -- responses ---------------------------------------------------------------
class Frame:
    def __init__(self, version, flags, stream, opcode, body):
        self.version, self.flags, self.stream, self.opcode, self.body = \
            version, flags, stream, opcode, body

    def error(self):
        """(code, message) of an ERROR frame, else None."""
        if self.opcode != OP_ERROR:
            return None
        code = struct.unpack_from(">i", self.body, 0)[0]
        n = struct.unpack_from(">H", self.body, 4)[0]
        return code, self.body[6:6 + n].decode("utf-8", "replace")

    def result_kind(self):
        if self.opcode != OP_RESULT:
            return None
        return struct.unpack_from(">i", self.body, 0)[0]

    def prepared_id(self):
        assert self.result_kind() == 4, self
        n = struct.unpack_from(">H", self.body, 4)[0]
        return self.body[6:6 + n]

    def __repr__(self):
        e = self.error()
        return "Frame(v=0x%02x stream=%d op=0x%02x len=%d%s)" % (
            self.version, self.stream, self.opcode, len(self.body),
            " error=0x%04x %r" % e if e else "")


class Closed(Exception):
    """The server closed the connection."""


class Conn:
    def __init__(self, host, port, timeout=10.0):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""
        self.stream = 0

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self.close()

    def send(self, data):
        self.sock.sendall(data)

    def _fill(self, n):
        while len(self.buf) < n:
            try:
                chunk = self.sock.recv(65536)
            except ConnectionResetError:
                chunk = b""
            if not chunk:
                raise Closed("connection closed by server")
            self.buf += chunk

    def recv(self):
        """Next frame (events included).  Raises Closed or socket.timeout."""
        self._fill(9)
        version, flags, stream, opcode, length = struct.unpack_from(">BBhBI", self.buf, 0)
        self._fill(9 + length)
        body = self.buf[9:9 + length]
        self.buf = self.buf[9 + length:]
        return Frame(version & 0x7F, flags, stream, opcode, body)

    def request(self, opcode, body=b"", version=4, flags=0):
        """Send one request on a fresh stream id and return its response,
        skipping events (stream -1)."""
        self.stream = (self.stream + 1) % 32768
        s = self.stream
        self.send(frame(opcode, body, stream=s, version=version, flags=flags))
        while True:
            f = self.recv()
            if f.stream == s:
                return f

    def closed_within(self, timeout=2.0):
        """True if the server closes the connection within timeout (any
        frames sent before the close are discarded)."""
        old = self.sock.gettimeout()
        self.sock.settimeout(timeout)
        deadline = time.monotonic() + timeout
        try:
            while time.monotonic() < deadline:
                try:
                    if not self.sock.recv(65536):
                        return True
                except ConnectionResetError:
                    return True
                except socket.timeout:
                    return False
            return False
        finally:
            self.sock.settimeout(old)

    # -- conveniences --------------------------------------------------------
    def startup(self):
        f = self.request(OP_STARTUP, STARTUP_BODY)
        assert f.opcode == OP_READY, f
        return f

    def query(self, cql, **kw):
        return self.request(OP_QUERY, query_body(cql, **kw))

    def prepare(self, cql):
        f = self.request(OP_PREPARE, long_string(cql))
        assert f.opcode == OP_RESULT, f
        return f.prepared_id()

    def execute(self, prepared_id, values=(), consistency=CL_ONE):
        return self.request(OP_EXECUTE, execute_body(prepared_id, values, consistency))


def connect(host, port, timeout=10.0):
    """A connected Conn after STARTUP/READY."""
    c = Conn(host, port, timeout)
    c.startup()
    return c
