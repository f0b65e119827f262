"""Test values for every CQL scalar type (owner: infra).

VALUES[type]   Python values the driver binds (prepared) or formats into
               CQL text (simple statements), boundary values included.
LITERALS[type] (CQL literal text, the Python value it must read back as).
Expected values compare equal to what the Python driver 3.25 returns.
"""

import datetime
import decimal
import ipaddress
import math
import uuid

from cassandra.util import Date, Duration, Time

NS = 1
US = 1000
MS = 1000 * US
S = 1000 * MS

SCALAR_TYPES = [
    "ascii", "bigint", "blob", "boolean", "date", "decimal", "double", "duration",
    "float", "inet", "int", "smallint", "text", "time", "timestamp", "timeuuid",
    "tinyint", "uuid", "varint",
]

EPOCH = datetime.datetime(1970, 1, 1)

VALUES = {
    "ascii": ["", "a", "hello world", "it's", "~" * 200, "".join(chr(c) for c in range(32, 127))],
    "bigint": [0, 1, -1, 2**63 - 1, -2**63, 2**31, -2**31 - 1],
    "blob": [b"", b"\x00", b"\xca\xfe\xba\xbe", bytes(range(256)), b"\xff" * 1000],
    "boolean": [True, False],
    "date": [Date(0), Date(datetime.date(2024, 2, 29)), Date(datetime.date(1, 1, 1)),
             Date(datetime.date(9999, 12, 31)), Date(-2**31), Date(2**31 - 1), Date(-1)],
    "decimal": [decimal.Decimal("0"), decimal.Decimal("1.5"), decimal.Decimal("-1.5"),
                decimal.Decimal("123456789012345678901234567890.123456789"),
                decimal.Decimal("1E-10"), decimal.Decimal("-1E+20"),
                decimal.Decimal("0.000")],
    "double": [0.0, 1.5, -2.25, 1.7976931348623157e308, 5e-324, -1e-300,
               float("inf"), float("-inf"), 3.141592653589793],
    "duration": [Duration(0, 0, 0), Duration(14, 25, 5 * 3600 * S + 7 * S + 8 * MS + 9 * US + 10),
                 Duration(-1, -2, -3), Duration(0, 0, 1), Duration(2**31 - 1, 2**31 - 1, 2**63 - 1),
                 Duration(-2**31 + 1, -2**31 + 1, -2**63 + 1)],
    "float": [0.0, 1.5, -2.25, 3.4028234663852886e38, 1.401298464324817e-45,
              float("inf"), float("-inf"), 0.5],
    "inet": ["127.0.0.1", "0.0.0.0", "255.255.255.255", "::1", "2001:db8::ff00:42:8329",
             "fe80::1"],
    "int": [0, 1, -1, 2**31 - 1, -2**31],
    "smallint": [0, 1, -1, 2**15 - 1, -2**15],
    "text": ["", "hello", "héllo wörld ✓", "日本語のテキスト", "it's \"quoted\"", "x" * 10000,
             "emoji \U0001F600"],
    "time": [Time(0), Time(86399999999999), Time(datetime.time(12, 34, 56, 789000)),
             Time(1), Time(43200 * S)],
    "timestamp": [EPOCH, datetime.datetime(2020, 1, 1, 12, 30, 45, 123000),
                  datetime.datetime(1969, 12, 31, 23, 59, 59, 999000),
                  datetime.datetime(1900, 1, 1), datetime.datetime(9999, 12, 31, 23, 59, 59),
                  datetime.datetime(1, 1, 1)],
    # (not 9999-12-31 23:59:59.999: the driver reads milliseconds back
    # through a float and returns .998993)
    "timeuuid": [uuid.UUID("e1f5a2d0-5a4e-11ee-8c99-0242ac120002"),
                 uuid.UUID("00000000-0000-1000-8000-000000000000"),
                 uuid.uuid1()],
    "tinyint": [0, 1, -1, 127, -128],
    "uuid": [uuid.UUID("550e8400-e29b-41d4-a716-446655440000"), uuid.UUID(int=0),
             uuid.UUID(int=2**128 - 1), uuid.uuid4()],
    "varint": [0, 1, -1, 127, 128, -128, -129, 255, 256, 2**63, -2**63 - 1,
               123456789012345678901234567890, -(2**200), 2**1000],
}

LITERALS = {
    "ascii": [("'abc'", "abc"), ("''", ""), ("'it''s'", "it's"), ("$$dollar 'quoted'$$", "dollar 'quoted'")],
    "bigint": [("-9223372036854775808", -2**63), ("9223372036854775807", 2**63 - 1), ("0", 0), ("-42", -42)],
    "blob": [("0x", b""), ("0xCAFEbabe", b"\xca\xfe\xba\xbe"), ("textAsBlob('hi')", b"hi"),
             ("bigintAsBlob(1)", b"\x00" * 7 + b"\x01")],
    "boolean": [("true", True), ("false", False), ("TRUE", True), ("False", False)],
    "date": [("'1970-01-01'", Date(0)), ("'2024-02-29'", Date(datetime.date(2024, 2, 29))),
             ("'-5877641-06-23'", Date(-2**31)), ("'+5881580-07-11'", Date(2**31 - 1)),
             ("'2147483648'", Date(0)), ("2147483649", Date(1))],
    "decimal": [("0", decimal.Decimal("0")), ("1.5", decimal.Decimal("1.5")), ("-1.5", decimal.Decimal("-1.5")),
                ("1E-10", decimal.Decimal("1E-10")), ("12345678901234567890.0123456789",
                                                      decimal.Decimal("12345678901234567890.0123456789"))],
    "double": [("1.5", 1.5), ("-2.25", -2.25), ("0", 0.0), ("1e10", 1e10), ("Infinity", float("inf")),
               ("-Infinity", float("-inf")), ("NaN", float("nan")), ("1.7976931348623157E308", 1.7976931348623157e308)],
    "duration": [("1y2mo3w4d5h6m7s8ms9us10ns", Duration(14, 25, 5 * 3600 * S + 6 * 60 * S + 7 * S + 8 * MS + 9 * US + 10)),
                 ("-1d", Duration(0, -1, 0)), ("P1Y2M", Duration(14, 0, 0)), ("PT1H30M", Duration(0, 0, 5400 * S)),
                 ("P2W", Duration(0, 14, 0)), ("P0001-02-03T04:05:06", Duration(14, 3, (4 * 3600 + 5 * 60 + 6) * S)),
                 ("1h", Duration(0, 0, 3600 * S)), ("0s", Duration(0, 0, 0))],
    "float": [("1.5", 1.5), ("-2.25", -2.25), ("0", 0.0), ("Infinity", float("inf")),
              ("NaN", float("nan")), ("0.5", 0.5)],
    "inet": [("'127.0.0.1'", "127.0.0.1"), ("'::1'", "::1"), ("'2001:db8::ff00:42:8329'", "2001:db8::ff00:42:8329"),
             ("'255.255.255.255'", "255.255.255.255")],
    "int": [("-2147483648", -2**31), ("2147483647", 2**31 - 1), ("0", 0), ("-0", 0)],
    "smallint": [("-32768", -2**15), ("32767", 2**15 - 1), ("0", 0)],
    "text": [("'héllo'", "héllo"), ("''", ""), ("'日本語'", "日本語"), ("'a''b'", "a'b"),
             ("$$multi\nline$$", "multi\nline")],
    "time": [("'00:00:00'", Time(0)), ("'23:59:59.999999999'", Time(86399999999999)),
             ("'12:34:56.789'", Time(datetime.time(12, 34, 56, 789000))), ("1000", Time(1000))],
    "timestamp": [("'2020-01-01 00:00:00+0000'", datetime.datetime(2020, 1, 1)),
                  ("'2020-01-01T12:30:45.123Z'", datetime.datetime(2020, 1, 1, 12, 30, 45, 123000)),
                  ("'1969-12-31T23:59:59.999+0000'", datetime.datetime(1969, 12, 31, 23, 59, 59, 999000)),
                  ("'2020-06-01 10:00:00+0200'", datetime.datetime(2020, 6, 1, 8, 0, 0)),
                  ("0", EPOCH), ("1600000000000", datetime.datetime(2020, 9, 13, 12, 26, 40)),
                  ("-1000", datetime.datetime(1969, 12, 31, 23, 59, 59))],
    "timeuuid": [("e1f5a2d0-5a4e-11ee-8c99-0242ac120002", uuid.UUID("e1f5a2d0-5a4e-11ee-8c99-0242ac120002")),
                 ("E1F5A2D0-5A4E-11EE-8C99-0242AC120002", uuid.UUID("e1f5a2d0-5a4e-11ee-8c99-0242ac120002"))],
    "tinyint": [("-128", -128), ("127", 127), ("0", 0)],
    "uuid": [("550e8400-e29b-41d4-a716-446655440000", uuid.UUID("550e8400-e29b-41d4-a716-446655440000")),
             ("00000000-0000-0000-0000-000000000000", uuid.UUID(int=0))],
    "varint": [("0", 0), ("-1", -1), ("123456789012345678901234567890", 123456789012345678901234567890),
               ("-123456789012345678901234567890", -123456789012345678901234567890),
               ("9223372036854775808", 2**63)],
}

# Literals that must be rejected (InvalidRequest, 0x2200) for the type.
BAD_LITERALS = {
    "int": ["2147483648", "-2147483649", "'1'", "1.5", "true"],
    "bigint": ["9223372036854775808", "'x'"],
    "smallint": ["32768", "-32769"],
    "tinyint": ["128", "-129"],
    "boolean": ["1", "'true'"],
    "uuid": ["'not-a-uuid'", "1"],
    "timeuuid": ["550e8400-e29b-41d4-a716-446655440000"],  # a v4 uuid is not a timeuuid
    "inet": ["'300.1.1.1'"],
    "date": ["'2020-13-01'", "'yesterday'"],
    "time": ["'25:00:00'", "'12:60:00'"],
    "timestamp": ["'not a time'"],
    "blob": ["'abc'", "0xABC"],
    "duration": ["'1x'", "1.5"],
    "ascii": ["'héllo'"],
}


def same(a, b):
    """Equality that treats NaN as equal to NaN and compares inet text as
    addresses (the driver returns the server's canonical text)."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, str) and isinstance(b, str) and ":" in a + b and "." not in a + b:
        try:
            return ipaddress.ip_address(a) == ipaddress.ip_address(b)
        except ValueError:
            pass
    if isinstance(a, decimal.Decimal) and isinstance(b, decimal.Decimal):
        # Same number and same scale (Cassandra keeps the scale).
        return a == b and a.as_tuple().exponent == b.as_tuple().exponent
    return a == b


def table_name(cql_type):
    return "t_" + cql_type
