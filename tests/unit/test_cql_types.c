/*
 * test_cql_types.c: cql/types through types.h: type text parse/print, [option]
 * round trips, validation messages, literals, comparators, byte-comparable
 * encoding agreement (randomized, asc/desc, concatenated prefixes), format.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/util.h"
#include "cql/types.h"

/* ------------------------------------------------ helpers */

static ctype *P(const char *text)
{
    cs_error e;
    cs_error_init(&e);
    ctype *t = ctype_parse(text, "ks", NULL, NULL, &e);
    cr_assert(t, "parse %s: %s", text, e.msg);
    return t;
}

static char *S(const ctype *t)
{
    static char buf[8][512];
    static int k;
    cs_buf b;
    cs_buf_init(&b);
    ctype_to_cql(t, &b);
    char *o = buf[k++ % 8];
    snprintf(o, 512, "%.*s", (int)b.len, (const char *)b.p);
    cs_buf_destroy(&b);
    return o;
}

/* literal -> bytes; returns malloc'd copy in *out (cs_free) */
static int L(const char *type, lit_kind k, const char *text, cs_buf *out, cs_error *e)
{
    ctype *t = P(type);
    cs_error_init(e);
    int rc = ctype_from_literal(t, k, text, strlen(text), "k", out, e);
    ctype_unref(t);
    return rc;
}

static const char *fmt(const char *type, const uint8_t *v, size_t n, bool json)
{
    static char buf[4][1024];
    static int k;
    ctype *t = P(type);
    cs_buf b;
    cs_buf_init(&b);
    int rc = json ? ctype_format_json(t, v, n, &b) : ctype_format_cql(t, v, n, &b);
    cr_assert_eq(rc, 0, "format %s", type);
    char *o = buf[k++ % 4];
    snprintf(o, 1024, "%.*s", (int)b.len, (const char *)b.p);
    cs_buf_destroy(&b);
    ctype_unref(t);
    return o;
}

/* literal -> format_cql */
static const char *LF(const char *type, lit_kind k, const char *text)
{
    cs_buf b;
    cs_error e;
    cs_buf_init(&b);
    int rc = L(type, k, text, &b, &e);
    cr_assert_eq(rc, 0, "literal %s for %s: %s", text, type, e.msg);
    const char *o = fmt(type, b.p, b.len, false);
    cs_buf_destroy(&b);
    return o;
}

static const char *LERR(const char *type, lit_kind k, const char *text)
{
    static char msg[1024];
    cs_buf b;
    cs_error e;
    cs_buf_init(&b);
    int rc = L(type, k, text, &b, &e);
    cr_assert_neq(rc, 0, "literal %s for %s should fail", text, type);
    snprintf(msg, sizeof(msg), "%s", e.msg);
    cs_buf_destroy(&b);
    return msg;
}

static size_t g_alloc0;
static void setup(void) { g_alloc0 = cs_alloc_count(); }
static void teardown(void) { cr_expect_eq(cs_alloc_count(), g_alloc0, "leaked allocations"); }

TestSuite(types, .init = setup, .fini = teardown);

/* ------------------------------------------------ type text */

Test(types, parse_print)
{
    static const char *const same[] = {
        "int", "text", "ascii", "bigint", "blob", "boolean", "counter", "date", "decimal", "double",
        "duration", "float", "inet", "smallint", "time", "timestamp", "timeuuid", "tinyint", "uuid", "varint",
        "list<int>", "set<text>", "map<text, int>", "frozen<list<int>>", "frozen<map<int, frozen<list<text>>>>",
        "list<frozen<list<int>>>", "frozen<tuple<int, text>>", "map<frozen<tuple<int, frozen<list<int>>>>, blob>",
        "'org.example.MyType'",
    };
    for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++) {
        ctype *t = P(same[i]);
        cr_expect_str_eq(S(t), same[i]);
        ctype *t2 = P(S(t));
        cr_expect(ctype_equal(t, t2), "%s", same[i]);
        ctype_unref(t);
        ctype_unref(t2);
    }
    static const char *const conv[][2] = {
        { "varchar", "text" }, { "VARCHAR", "text" }, { "Map< Text ,INT >", "map<text, int>" },
        { "tuple<int,text>", "frozen<tuple<int, text>>" }, { "frozen<list<list<int>>>", "frozen<list<frozen<list<int>>>>" },
        { "tuple<list<int>>", "frozen<tuple<frozen<list<int>>>>" },
        { "'org.apache.cassandra.db.marshal.Int32Type'", "int" },
    };
    for (size_t i = 0; i < sizeof(conv) / sizeof(conv[0]); i++) {
        ctype *t = P(conv[i][0]);
        cr_expect_str_eq(S(t), conv[i][1], "%s", conv[i][0]);
        ctype_unref(t);
    }
}

static const ctype *lookup(void *arg, const char *ks, const char *name)
{
    return strcmp(ks, "ks") == 0 && strcmp(name, "addr") == 0 ? arg : NULL;
}

Test(types, parse_errors_and_udt)
{
    static const char *const bad[][2] = {
        { "list<list<int>>", "Non-frozen collections are not allowed inside collections: list<list<int>>" },
        { "frozen<int>", "frozen<> is only allowed on collections, tuples, and user-defined types (got int)" },
        { "list<counter>", "Counters are not allowed inside collections: list<counter>" },
        { "set<duration>", "Durations are not allowed inside sets: set<duration>" },
        { "nosuch", "Unknown type ks.nosuch" },
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cs_error e;
        cs_error_init(&e);
        cr_expect_null(ctype_parse(bad[i][0], "ks", NULL, NULL, &e));
        cr_expect_str_eq(e.msg, bad[i][1]);
    }
    cs_error e;
    cs_error_init(&e);
    cr_expect_null(ctype_parse("list<int", "ks", NULL, NULL, &e));
    cr_expect_eq(e.code, CS_ERR_SYNTAX);

    char *names[] = { "street", "Zip" };
    ctype *ft[] = { (ctype *)ctype_scalar(CT_VARCHAR), (ctype *)ctype_scalar(CT_INT) };
    ctype *u = ctype_new_udt("ks", "addr", names, ft, 2, false);
    cs_error_init(&e);
    ctype *t = ctype_parse("map<text, frozen<addr>>", "ks", lookup, u, &e);
    cr_assert(t, "%s", e.msg);
    cr_expect_str_eq(S(t), "map<text, frozen<addr>>");
    ctype_unref(t);
    cs_error_init(&e);
    t = ctype_parse("list<addr>", "ks", lookup, u, &e);
    cr_expect_null(t);
    cr_expect_str_eq(e.msg, "Non-frozen UDTs are not allowed inside collections: list<addr>");
    t = ctype_parse("addr", "ks", lookup, u, &e);
    cr_expect(ctype_is_multicell(t));
    cr_expect_str_eq(S(t), "addr");

    /* [option] round trip */
    ctype *m = P("map<frozen<tuple<int, text>>, frozen<list<frozen<list<int>>>>>");
    for (int i = 0; i < 2; i++) {
        ctype *x = i ? m : t;
        cs_buf b;
        cs_buf_init(&b);
        ctype_encode_option(x, &b);
        cs_rd r;
        cs_rd_init(&r, b.p, b.len);
        ctype *y = ctype_decode_option(&r);
        cr_assert(y);
        cr_expect_eq(cs_rd_left(&r), 0);
        cr_expect_eq(y->kind, x->kind);
        cr_expect_eq(y->n_sub, x->n_sub);
        ctype_unref(y);
        cs_buf_destroy(&b);
    }
    /* duration as custom before v5 */
    cs_buf b;
    cs_buf_init(&b);
    ctype_encode_option_v(ctype_scalar(CT_DURATION), 4, &b);
    cr_expect_eq(cs_be16(b.p), 0);
    cs_rd r;
    cs_rd_init(&r, b.p, b.len);
    ctype *d = ctype_decode_option(&r);
    cr_expect_eq(d->kind, CT_DURATION);
    cs_buf_destroy(&b);
    ctype_unref(m);
    ctype_unref(t);
    ctype_unref(u);
}

/* ------------------------------------------------ validation */

Test(types, validate_messages)
{
    static const struct { const char *type; const char *hex; const char *msg; } c[] = {
        { "int", "010203", "Expected 4 or 0 byte int (3)" },
        { "bigint", "01", "Expected 8 or 0 byte long (1)" },
        { "smallint", "", "Expected 2 bytes for a smallint (0)" },
        { "tinyint", "0102", "Expected 1 byte for a tinyint (2)" },
        { "boolean", "0102", "Expected 1 or 0 byte value (2)" },
        { "double", "01", "Expected 8 or 0 byte value for a double (1)" },
        { "float", "01", "Expected 4 or 0 byte value for a float (1)" },
        { "uuid", "01", "UUID should be 16 or 0 bytes (1)" },
        { "timestamp", "01", "Expected 8 or 0 byte long for date (1)" },
        { "date", "01", "Expected 4 byte long for date (1)" },
        { "time", "01", "Expected 8 byte long for time (1)" },
        { "text", "c328", "String didn't validate." },
        { "ascii", "41ff", "Invalid byte for ascii: -1" },
        { "inet", "010203", "Expected 4 or 16 byte inetaddress; got 010203" },
        { "decimal", "01", "Expected 0 or at least 4 bytes (1)" },
        { "timeuuid", "00000000000040000000000000000000", "Invalid version for TimeUUID type: 0x0" },
        { "list<int>", "0000000100000003010203", "Expected 4 or 0 byte int (3)" },
        { "list<int>", "00000001000000040102030405", "Unexpected extraneous bytes after list value" },
        { "list<int>", "00000002", "Not enough bytes to read a list" },
        { "frozen<tuple<int, int>>", "00000004000000010000", "Not enough bytes to read size of 1th component" },
    };
    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
        ctype *t = P(c[i].type);
        cs_buf b;
        cs_buf_init(&b);
        cr_assert_eq(ctype_hex_decode(c[i].hex, strlen(c[i].hex), &b), 0);
        cs_error e;
        cs_error_init(&e);
        cr_expect_eq(ctype_validate(t, b.p, b.len, &e), CS_EUSER, "%s %s", c[i].type, c[i].hex);
        cr_expect_str_eq(e.msg, c[i].msg);
        cr_expect_eq(e.code, CS_ERR_INVALID);
        cs_buf_destroy(&b);
        ctype_unref(t);
    }
    cs_error e;
    cs_error_init(&e);
    cr_expect_eq(ctype_validate(ctype_scalar(CT_INT), NULL, 0, &e), 0);
    cr_expect_eq(ctype_validate(ctype_scalar(CT_VARCHAR), (const uint8_t *)"h\xc3\xa9", 3, &e), 0);
    /* Cassandra's validator: modified-UTF-8 null and surrogates pass, truncation and C1 fail */
    static const char *const ok[] = { "\xc0\x80", "\xed\xa0\x80", "\xf0\x9f\x98\x80", "\xe2\x82\xac" };
    static const char *const bad[] = { "\xc1\x81", "\xe2\x82", "\xf0\x80\x80\x80", "\xe0\x80\x80", "\xff", "\x80" };
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
        cr_expect_eq(ctype_validate(ctype_scalar(CT_VARCHAR), (const uint8_t *)ok[i], strlen(ok[i]), &e), 0, "ok %zu", i);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cs_error_init(&e);
        cr_expect_eq(ctype_validate(ctype_scalar(CT_VARCHAR), (const uint8_t *)bad[i], strlen(bad[i]), &e), CS_EUSER, "bad %zu", i);
    }
}

/* ------------------------------------------------ literals */

Test(types, literal_round_trips)
{
    cr_expect_str_eq(LF("int", LIT_INTEGER, "42"), "42");
    cr_expect_str_eq(LF("int", LIT_INTEGER, "-2147483648"), "-2147483648");
    cr_expect_str_eq(LF("bigint", LIT_INTEGER, "9223372036854775807"), "9223372036854775807");
    cr_expect_str_eq(LF("bigint", LIT_INTEGER, "-9223372036854775808"), "-9223372036854775808");
    cr_expect_str_eq(LF("smallint", LIT_INTEGER, "-32768"), "-32768");
    cr_expect_str_eq(LF("tinyint", LIT_INTEGER, "127"), "127");
    cr_expect_str_eq(LF("counter", LIT_INTEGER, "5"), "5");
    cr_expect_str_eq(LF("varint", LIT_INTEGER, "-123456789012345678901234567890"), "-123456789012345678901234567890");
    cr_expect_str_eq(LF("varint", LIT_INTEGER, "0"), "0");
    cr_expect_str_eq(LF("varint", LIT_INTEGER, "128"), "128");
    cr_expect_str_eq(LF("varint", LIT_INTEGER, "-128"), "-128");
    cr_expect_str_eq(LF("decimal", LIT_FLOAT, "1.50"), "1.50");
    cr_expect_str_eq(LF("decimal", LIT_FLOAT, "-0.000001"), "-0.000001");
    cr_expect_str_eq(LF("decimal", LIT_FLOAT, "0.0000001"), "1E-7");
    cr_expect_str_eq(LF("decimal", LIT_FLOAT, "1e10"), "1E+10");
    cr_expect_str_eq(LF("decimal", LIT_INTEGER, "12345678901234567890"), "12345678901234567890");
    cr_expect_str_eq(LF("double", LIT_FLOAT, "1.5"), "1.5");
    cr_expect_str_eq(LF("double", LIT_FLOAT, "NaN"), "NaN");
    cr_expect_str_eq(LF("double", LIT_FLOAT, "-Infinity"), "-Infinity");
    cr_expect_str_eq(LF("double", LIT_INTEGER, "3"), "3.0");
    cr_expect_str_eq(LF("double", LIT_FLOAT, "1e20"), "1.0E20");
    cr_expect_str_eq(LF("double", LIT_FLOAT, "0.001"), "0.001");
    cr_expect_str_eq(LF("double", LIT_FLOAT, "0.0001"), "1.0E-4");
    cr_expect_str_eq(LF("float", LIT_FLOAT, "1.1"), "1.1");
    cr_expect_str_eq(LF("double", LIT_FLOAT, "4.9E-324"), "4.9E-324");
    cr_expect_str_eq(LF("float", LIT_FLOAT, "1.4E-45"), "1.4E-45");
    cr_expect_str_eq(LF("double", LIT_FLOAT, "1.7976931348623157E308"), "1.7976931348623157E308");
    cr_expect_str_eq(LF("double", LIT_FLOAT, "-0.0"), "-0.0");
    cr_expect_str_eq(LF("double", LIT_FLOAT, "1234567.0"), "1234567.0");
    cr_expect_str_eq(LF("double", LIT_FLOAT, "12345678.0"), "1.2345678E7");
    cr_expect_str_eq(LF("float", LIT_FLOAT, "3.4028235E38"), "3.4028235E38");
    cr_expect_str_eq(LF("boolean", LIT_BOOLEAN, "TRUE"), "true");
    cr_expect_str_eq(LF("text", LIT_STRING, "it's"), "'it''s'");
    cr_expect_str_eq(LF("ascii", LIT_STRING, "abc"), "'abc'");
    cr_expect_str_eq(LF("blob", LIT_HEX, "0xCAFE"), "0xcafe");
    cr_expect_str_eq(LF("blob", LIT_HEX, "0x"), "0x");
    cr_expect_str_eq(LF("inet", LIT_STRING, "127.0.0.1"), "'127.0.0.1'");
    cr_expect_str_eq(LF("inet", LIT_STRING, "::1"), "'0:0:0:0:0:0:0:1'");
    cr_expect_str_eq(LF("uuid", LIT_UUID, "550e8400-e29b-41d4-a716-446655440000"), "550e8400-e29b-41d4-a716-446655440000");
    cr_expect_str_eq(LF("timeuuid", LIT_UUID, "50554d6e-29bb-11e5-b345-feff819cdc9f"), "50554d6e-29bb-11e5-b345-feff819cdc9f");
    cr_expect_str_eq(LF("timestamp", LIT_STRING, "2011-02-03 04:05:06.789Z"), "'2011-02-03T04:05:06.789Z'");
    cr_expect_str_eq(LF("timestamp", LIT_STRING, "2011-02-03T04:05+0100"), "'2011-02-03T03:05:00.000Z'");
    cr_expect_str_eq(LF("timestamp", LIT_STRING, "2011-02-03"), "'2011-02-03T00:00:00.000Z'");
    cr_expect_str_eq(LF("timestamp", LIT_STRING, "2011-02-03 04:05:06+01:30"), "'2011-02-03T02:35:06.000Z'");
    cr_expect_str_eq(LF("timestamp", LIT_STRING, "2011-02-03 04:05:06 UTC"), "'2011-02-03T04:05:06.000Z'");
    cr_expect_str_eq(LF("timestamp", LIT_INTEGER, "1299038700000"), "'2011-03-02T04:05:00.000Z'");
    cr_expect_str_eq(LF("timestamp", LIT_INTEGER, "-1"), "'1969-12-31T23:59:59.999Z'");
    cr_expect_str_eq(LF("date", LIT_STRING, "2011-02-03"), "'2011-02-03'");
    cr_expect_str_eq(LF("date", LIT_STRING, "1969-12-31"), "'1969-12-31'");
    cr_expect_str_eq(LF("date", LIT_INTEGER, "2147483648"), "'1970-01-01'");
    cr_expect_str_eq(LF("date", LIT_INTEGER, "0"), "'-5877641-06-23'");
    cr_expect_str_eq(LF("date", LIT_STRING, "-0001-01-01"), "'-0001-01-01'");
    cr_expect_str_eq(LF("date", LIT_STRING, "+10000-01-01"), "'+10000-01-01'");
    cr_expect_str_eq(LERR("date", LIT_STRING, "+2000-01-01"), "Unable to coerce '+2000-01-01' to a formatted date (long)");
    cr_expect_str_eq(LERR("date", LIT_INTEGER, "-1"), "Unable to make unsigned int (for date) from: '-1'");
    cr_expect_str_eq(LERR("date", LIT_INTEGER, "4294967296"), "Unable to make unsigned int (for date) from: '4294967296'");
    cr_expect_str_eq(LF("date", LIT_INTEGER, "4294967295"), "'+5881580-07-11'");
    cr_expect_str_eq(LF("inet", LIT_STRING, "::ffff:1.2.3.4"), "'1.2.3.4'");
    cr_expect_str_eq(LF("timestamp", LIT_STRING, "2011-02-03T04:05:06.789123Z"), "'2011-02-03T04:05:06.789Z'");
    cr_expect_str_eq(LF("timestamp", LIT_STRING, "1900-01-01 00:00:00+0000"), "'1900-01-01T00:00:00.000Z'");
    cr_expect_str_eq(LF("timestamp", LIT_INTEGER, "-9223372036854775808"), "'+292275056-05-16T16:47:04.192Z'");
    cr_expect_str_eq(LF("timestamp", LIT_INTEGER, "9223372036854775807"), "'+292278994-08-17T07:12:55.807Z'");
    cr_expect_str_eq(LF("timestamp", LIT_INTEGER, "-62135596800000"), "'0001-01-01T00:00:00.000Z'");
    cr_expect_str_eq(LF("timestamp", LIT_INTEGER, "-62135596800001"), "'0001-12-31T23:59:59.999Z'");
    cr_expect_str_eq(LF("time", LIT_STRING, "08:12:54.123456789"), "'08:12:54.123456789'");
    cr_expect_str_eq(LF("time", LIT_STRING, "08:12:54"), "'08:12:54.000000000'");
    cr_expect_str_eq(LF("time", LIT_INTEGER, "1000"), "'00:00:00.000001000'");
    cr_expect_str_eq(LF("duration", LIT_DURATION, "1h30m"), "1h30m");
    cr_expect_str_eq(LF("duration", LIT_DURATION, "-1y2mo3d"), "-1y2mo3d");
    cr_expect_str_eq(LF("duration", LIT_DURATION, "P1Y2M3DT4H5M6S"), "1y2mo3d4h5m6s");
    cr_expect_str_eq(LF("duration", LIT_DURATION, "P2W"), "14d");
    cr_expect_str_eq(LF("duration", LIT_DURATION, "P0001-02-03T04:05:06"), "1y2mo3d4h5m6s");
    cr_expect_str_eq(LF("duration", LIT_DURATION, "1ms2us3ns"), "1ms2us3ns");
    cr_expect_str_eq(LF("duration", LIT_DURATION, "2147483647mo2147483647d9223372036854775807ns"),
                     "178956970y7mo2147483647d2562047h47m16s854ms775us807ns");
    cr_expect_str_eq(LF("duration", LIT_DURATION, "-2147483647mo2147483647d9223372036854775807ns"),
                     "-178956970y7mo2147483647d2562047h47m16s854ms775us807ns");
}

/* A constant for a tuple is read by TupleType.fromString (TupleTypeTest.testTupleFromString). */
Test(types, tuple_from_string)
{
    cr_expect_str_eq(LF("tuple<int, text>", LIT_STRING, "0:1"), "(0, '1')");
    cr_expect_str_eq(LF("tuple<int, text>", LIT_STRING, "1"), "(1, null)");   /* a shorter value */
    cr_expect_str_eq(LF("tuple<int, text>", LIT_STRING, "1:1\\:1"), "(1, '1:1')");
    cr_expect_str_eq(LF("tuple<int, text>", LIT_STRING, "@:1"), "(null, '1')");
    cr_expect_str_eq(LF("tuple<int, text>", LIT_STRING, "2:\\@"), "(2, '@')");
    cr_expect_str_eq(LF("tuple<int, text>", LIT_INTEGER, "7"), "(7, null)");
    cr_expect_str_eq(LERR("tuple<int, text>", LIT_STRING, "1:2:3"),
                     "Invalid tuple literal: too many elements. Type frozen<tuple<int, text>> expects 2 but got 3");
    cr_expect_str_eq(LERR("tuple<int, text>", LIT_STRING, "x:1"), "Unable to make int from 'x'");
}

Test(types, literal_errors)
{
    cr_expect_str_eq(LERR("int", LIT_STRING, "foo"), "Invalid STRING constant (foo) for \"k\" of type int");
    cr_expect_str_eq(LERR("text", LIT_INTEGER, "1"), "Invalid INTEGER constant (1) for \"k\" of type text");
    cr_expect_str_eq(LERR("blob", LIT_STRING, "00"), "Invalid STRING constant (00) for \"k\" of type blob");
    cr_expect_str_eq(LERR("list<int>", LIT_INTEGER, "1"), "Invalid INTEGER constant (1) for \"k\" of type list<int>");
    cr_expect_str_eq(LERR("int", LIT_INTEGER, "2147483648"), "Unable to make int from '2147483648'");
    cr_expect_str_eq(LERR("bigint", LIT_INTEGER, "9223372036854775808"), "Unable to make long from '9223372036854775808'");
    cr_expect_str_eq(LERR("smallint", LIT_INTEGER, "32768"), "Unable to make short from '32768'");
    cr_expect_str_eq(LERR("tinyint", LIT_INTEGER, "-129"), "Unable to make byte from '-129'");
    cr_expect_str_eq(LERR("int", LIT_FLOAT, "1.5"), "Invalid FLOAT constant (1.5) for \"k\" of type int");
    cr_expect_str_eq(LERR("decimal", LIT_FLOAT, "NaN"), "unable to make BigDecimal from 'NaN'");
    cr_expect_str_eq(LERR("timeuuid", LIT_UUID, "550e8400-e29b-41d4-a716-446655440000"),
                     "TimeUUID supports only version 1 UUIDs");
    cr_expect_str_eq(LERR("timestamp", LIT_STRING, "foo"), "Unable to parse a date/time from 'foo'");
    cr_expect_str_eq(LERR("date", LIT_STRING, "2011-02-30"), "Unable to coerce '2011-02-30' to a formatted date (long)");
    cr_expect_str_eq(LERR("time", LIT_STRING, "25:00:00"), "(TimeType) Unable to coerce '25:00:00' to a formatted time (long)");
    cr_expect_str_eq(LERR("inet", LIT_STRING, "1.2.3"), "Unable to make inet address from '1.2.3'");
    cr_expect_str_eq(LERR("blob", LIT_HEX, "0xabc"), "cannot parse 'abc' as hex bytes");
    cr_expect_str_eq(LERR("duration", LIT_DURATION, "1m1h"), "Invalid duration. The minutes should be after hours");
    cr_expect_str_eq(LERR("duration", LIT_DURATION, "1x"), "Unable to convert '1x' to a duration");
    cr_expect_str_eq(LERR("duration", LIT_INTEGER, "5"), "Unable to convert '5' to a duration");
    cr_expect_str_eq(LERR("ascii", LIT_STRING, "h\xc3\xa9"), "Invalid ASCII character in string literal: java.nio.charset.UnmappableCharacterException: Input length = 1");
}

/* ------------------------------------------------ comparators and byte-comparable */

static uint64_t g_rng = 88172645463325252ULL;
static uint64_t rnd(void)
{
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return g_rng;
}

/* Random serialized value of t into out (boundary-heavy). */
static void gen(const ctype *t, cs_buf *out, int depth)
{
    uint64_t r = rnd();
    bool empty_ok = t->kind != CT_DATE && t->kind != CT_TIME && t->kind != CT_SMALLINT && t->kind != CT_TINYINT &&
                    !ctype_is_collection(t) && t->kind != CT_TUPLE && t->kind != CT_UDT && t->kind != CT_EMPTY;
    if (empty_ok && r % 23 == 0)
        return;
    r = rnd();
    static const uint64_t specials[] = { 0, 1, (uint64_t)-1, 0x7FFFFFFFFFFFFFFFULL, 0x8000000000000000ULL,
                                         0x7F, 0x80, 0xFF, 0x7FFF, 0x8000, 0x7FFFFFFF, 0x80000000ULL };
    uint64_t x = r % 4 == 0 ? specials[rnd() % 12] : r % 4 == 1 ? rnd() % 7 : rnd();
    switch (t->kind) {
    case CT_TINYINT: cs_buf_put_u8(out, (uint8_t)x); break;
    case CT_SMALLINT: cs_buf_put_u16(out, (uint16_t)x); break;
    case CT_INT: case CT_DATE: cs_buf_put_u32(out, (uint32_t)x); break;
    case CT_BIGINT: case CT_COUNTER: case CT_TIMESTAMP: cs_buf_put_u64(out, x); break;
    case CT_TIME: cs_buf_put_u64(out, r % 3 ? x % 86400000000000ULL : x); break;
    case CT_BOOLEAN: cs_buf_put_u8(out, (uint8_t)(x % 3)); break;
    case CT_FLOAT: {
        static const float fs[] = { 0.0f, -0.0f, 1.0f, -1.0f, INFINITY, -INFINITY, NAN, 1e-40f, -1e-40f, 3.4e38f };
        float f = r % 3 == 0 ? fs[rnd() % 10] : (float)((int64_t)rnd() % 1000) / 7.0f;
        uint32_t u;
        memcpy(&u, &f, 4);
        if (r % 5 == 0)
            u = (uint32_t)rnd();
        cs_buf_put_u32(out, u);
        break;
    }
    case CT_DOUBLE: {
        static const double ds[] = { 0.0, -0.0, 1.0, -1.0, INFINITY, -INFINITY, NAN, 5e-324, -5e-324, 1.7e308 };
        double d = r % 3 == 0 ? ds[rnd() % 10] : (double)((int64_t)rnd() % 1000) / 7.0;
        uint64_t u;
        memcpy(&u, &d, 8);
        if (r % 5 == 0)
            u = rnd();
        cs_buf_put_u64(out, u);
        break;
    }
    case CT_UUID: case CT_TIMEUUID: {
        uint8_t b[16];
        for (int i = 0; i < 16; i++)
            b[i] = (uint8_t)(rnd() % (r % 2 ? 3 : 256));
        b[6] = (uint8_t)((b[6] & 0x0F) | (t->kind == CT_TIMEUUID ? 0x10 : (rnd() % 3) << 4));
        cs_buf_put(out, b, 16);
        break;
    }
    case CT_INET: {
        uint8_t b[16];
        size_t n = rnd() % 2 ? 4 : 16;
        for (size_t i = 0; i < n; i++)
            b[i] = (uint8_t)(rnd() % 3);
        cs_buf_put(out, b, n);
        break;
    }
    case CT_VARINT: case CT_DECIMAL: {
        if (t->kind == CT_DECIMAL)
            cs_buf_put_u32(out, (uint32_t)((int)(rnd() % 7) - 3));
        size_t n = 1 + rnd() % 12;
        for (size_t i = 0; i < n; i++)
            cs_buf_put_u8(out, (uint8_t)(i == 0 || rnd() % 2 ? rnd() : (rnd() % 2 ? 0 : 0xFF)));
        break;
    }
    case CT_ASCII: case CT_VARCHAR: case CT_BLOB: case CT_CUSTOM: {
        size_t n = rnd() % 6;
        for (size_t i = 0; i < n; i++)
            cs_buf_put_u8(out, (uint8_t)(t->kind == CT_BLOB ? (rnd() % 2 ? 0 : rnd()) : 'a' + rnd() % 3));
        break;
    }
    case CT_LIST: case CT_SET: case CT_MAP: {
        int n = (int)(rnd() % 4);
        cs_buf_put_u32(out, (uint32_t)n);
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < t->n_sub; j++) {
                size_t off = out->len;
                cs_buf_put_u32(out, 0);
                gen(t->sub[j], out, depth + 1);
                cs_buf_patch_u32(out, off, (uint32_t)(out->len - off - 4));
            }
        }
        break;
    }
    case CT_TUPLE: case CT_UDT: {
        int n = (int)(rnd() % (t->n_sub + 1));
        if (rnd() % 2)
            n = t->n_sub;
        for (int i = 0; i < n; i++) {
            if (rnd() % 5 == 0) {
                cs_buf_put_u32(out, 0xFFFFFFFFu);
                continue;
            }
            size_t off = out->len;
            cs_buf_put_u32(out, 0);
            gen(t->sub[i], out, depth + 1);
            cs_buf_patch_u32(out, off, (uint32_t)(out->len - off - 4));
        }
        break;
    }
    default:
        break;
    }
}

static int sgn(int x) { return (x > 0) - (x < 0); }

static int memcmp_len(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
    size_t m = an < bn ? an : bn;
    int c = m ? memcmp(a, b, m) : 0;
    return c ? sgn(c) : (an < bn ? -1 : an > bn);
}

static void check_type_bc(const char *tt, int iters)
{
    ctype *t = P(tt);
    for (int it = 0; it < iters; it++) {
        cs_buf a, b, ea, eb, da;
        cs_buf_init(&a);
        cs_buf_init(&b);
        cs_buf_init(&ea);
        cs_buf_init(&eb);
        cs_buf_init(&da);
        gen(t, &a, 0);
        gen(t, &b, 0);
        if (it % 7 == 0) {
            cs_buf_reset(&b);
            cs_buf_put(&b, a.p, a.len);
        }
        cs_error e;
        cs_error_init(&e);
        cr_assert_eq(ctype_validate(t, a.p, a.len, &e), 0, "%s gen invalid: %s", tt, e.msg);
        bool desc = it % 2;
        int c = ctype_compare(t, a.p, a.len, b.p, b.len);
        cr_assert_eq(sgn(ctype_compare(t, b.p, b.len, a.p, a.len)), -sgn(c), "%s antisymmetry", tt);
        cr_assert_eq(ctype_bc_encode(t, a.p, a.len, desc, &ea), 0, "%s encode", tt);
        cr_assert_eq(ctype_bc_encode(t, b.p, b.len, desc, &eb), 0);
        int m = memcmp_len(ea.p, ea.len, eb.p, eb.len);
        /* decimals keep their scale: equal values may encode differently (1.5, 1.50) */
        if (!(c == 0 && strstr(tt, "decimal")))
            cr_assert_eq(m, desc ? -sgn(c) : sgn(c), "%s: compare %d memcmp %d (desc %d) it %d", tt, c, m, desc, it);
        /* decode: self-delimiting with trailing garbage, value compares equal */
        cs_buf_put_u8(&ea, 0x40);
        cs_rd r;
        cs_rd_init(&r, ea.p, ea.len);
        cr_assert_eq(ctype_bc_decode(t, &r, desc, &da), 0, "%s decode", tt);
        cr_assert_eq(cs_rd_left(&r), 1, "%s decode length", tt);
        cr_assert_eq(ctype_compare(t, a.p, a.len, da.p, da.len), 0, "%s decoded value differs", tt);
        cs_buf_destroy(&a);
        cs_buf_destroy(&b);
        cs_buf_destroy(&ea);
        cs_buf_destroy(&eb);
        cs_buf_destroy(&da);
    }
    ctype_unref(t);
}

Test(types, bc_agrees_with_compare)
{
    static const char *const tts[] = {
        "tinyint", "smallint", "int", "bigint", "counter", "timestamp", "time", "date", "boolean", "float",
        "double", "uuid", "timeuuid", "inet", "varint", "decimal", "ascii", "text", "blob", "'x.Custom'",
        "frozen<list<int>>", "frozen<set<text>>", "frozen<map<int, blob>>", "frozen<tuple<int, text, double>>",
        "frozen<list<frozen<tuple<varint, frozen<list<decimal>>>>>>", "frozen<map<frozen<set<uuid>>, timeuuid>>",
    };
    for (size_t i = 0; i < sizeof(tts) / sizeof(tts[0]); i++)
        check_type_bc(tts[i], 3000);
}

/* Clustering keys of several components, with prefixes and bounds. */
Test(types, bc_multi_component)
{
    ctype *ts[3] = { P("int"), P("text"), P("frozen<tuple<int, double>>") };
    bool desc[3] = { false, true, false };
    enum { N = 300 };
    cs_buf keys[N];
    cs_buf vals[N][3];
    int ncomp[N];
    for (int i = 0; i < N; i++) {
        cs_buf_init(&keys[i]);
        ncomp[i] = 1 + (int)(rnd() % 3);
        for (int j = 0; j < 3; j++) {
            cs_buf_init(&vals[i][j]);
            gen(ts[j], &vals[i][j], 0);
        }
        for (int j = 0; j < ncomp[i]; j++) {
            cs_buf_put_u8(&keys[i], CK_COMPONENT);
            cr_assert_eq(ctype_bc_encode(ts[j], vals[i][j].p, vals[i][j].len, desc[j], &keys[i]), 0);
        }
    }
    for (int i = 0; i < N; i++) {
        for (int k = 0; k < N; k++) {
            int c = 0, j = 0;
            for (; j < ncomp[i] && j < ncomp[k] && !c; j++) {
                c = ctype_compare(ts[j], vals[i][j].p, vals[i][j].len, vals[k][j].p, vals[k][j].len);
                if (desc[j])
                    c = -c;
            }
            if (!c)
                c = ncomp[i] < ncomp[k] ? -1 : ncomp[i] > ncomp[k];
            int m = memcmp_len(keys[i].p, keys[i].len, keys[k].p, keys[k].len);
            cr_assert_eq(m, sgn(c), "keys %d %d", i, k);
            /* end-inclusive bound of a prefix sorts after every key it prefixes */
            if (ncomp[i] < ncomp[k] && memcmp(keys[i].p, keys[k].p, keys[i].len) == 0) {
                cs_buf bound;
                cs_buf_init(&bound);
                cs_buf_put(&bound, keys[i].p, keys[i].len);
                cs_buf_put_u8(&bound, CK_AFTER);
                cr_assert_eq(memcmp_len(bound.p, bound.len, keys[k].p, keys[k].len), 1);
                cs_buf_destroy(&bound);
            }
        }
    }
    for (int i = 0; i < N; i++) {
        cs_buf_destroy(&keys[i]);
        for (int j = 0; j < 3; j++)
            cs_buf_destroy(&vals[i][j]);
    }
    for (int j = 0; j < 3; j++)
        ctype_unref(ts[j]);
}

static void put_f64(cs_buf *b, double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    cs_buf_put_u64(b, u);
}

Test(types, float_ordering_and_boundaries)
{
    double order[] = { -INFINITY, -1e308, -1.0, -5e-324, -0.0, 0.0, 5e-324, 1.0, 1e308, INFINITY, NAN };
    const ctype *t = ctype_scalar(CT_DOUBLE);
    for (size_t i = 0; i + 1 < sizeof(order) / sizeof(order[0]); i++) {
        cs_buf a, b;
        cs_buf_init(&a);
        cs_buf_init(&b);
        put_f64(&a, order[i]);
        put_f64(&b, order[i + 1]);
        cr_expect_lt(ctype_compare(t, a.p, a.len, b.p, b.len), 0, "%g < %g", order[i], order[i + 1]);
        cr_expect_lt(ctype_compare(t, NULL, 0, a.p, a.len), 0, "empty first");
        cs_buf_destroy(&a);
        cs_buf_destroy(&b);
    }
    /* two NaN bit patterns are equal */
    cs_buf a, b;
    cs_buf_init(&a);
    cs_buf_init(&b);
    cs_buf_put_u64(&a, 0x7ff8000000000000ULL);
    cs_buf_put_u64(&b, 0xfff8000000000001ULL);
    cr_expect_eq(ctype_compare(t, a.p, a.len, b.p, b.len), 0);
    cs_buf_destroy(&a);
    cs_buf_destroy(&b);
    /* decimals compare numerically: 1.5 == 1.50, -2 < 1e-10 */
    ctype *d = P("decimal");
    cs_buf x, y;
    cs_buf_init(&x);
    cs_buf_init(&y);
    cs_error e;
    cs_error_init(&e);
    ctype_from_literal(d, LIT_FLOAT, "1.5", 3, "k", &x, &e);
    ctype_from_literal(d, LIT_FLOAT, "1.50", 4, "k", &y, &e);
    cr_expect_eq(ctype_compare(d, x.p, x.len, y.p, y.len), 0);
    cs_buf_reset(&x);
    cs_buf_reset(&y);
    ctype_from_literal(d, LIT_FLOAT, "-2", 2, "k", &x, &e);
    ctype_from_literal(d, LIT_FLOAT, "1e-10", 5, "k", &y, &e);
    cr_expect_lt(ctype_compare(d, x.p, x.len, y.p, y.len), 0);
    cs_buf_destroy(&x);
    cs_buf_destroy(&y);
    ctype_unref(d);
}

Test(types, numeric_helpers)
{
    ctype *t = P("decimal");
    cs_buf a, b, r;
    cs_buf_init(&a);
    cs_buf_init(&b);
    cs_buf_init(&r);
    cs_error e;
    cs_error_init(&e);
    ctype_from_literal(t, LIT_FLOAT, "1.25", 4, "k", &a, &e);
    ctype_from_literal(t, LIT_FLOAT, "-10.5", 5, "k", &b, &e);
    cr_assert_eq(ctype_num_add(t, a.p, a.len, b.p, b.len, &r), 0);
    cr_expect_str_eq(fmt("decimal", r.p, r.len, false), "-9.25");
    cs_buf_reset(&a);
    cr_assert_eq(ctype_num_div_int(t, r.p, r.len, 2, &a), 0);
    cr_expect_str_eq(fmt("decimal", a.p, a.len, false), "-4.62");
    cr_expect_float_eq(ctype_num_to_double(t, r.p, r.len), -9.25, 1e-12);
    ctype_unref(t);
    cs_buf_reset(&a);
    cs_buf_reset(&b);
    cs_buf_reset(&r);
    t = P("varint");
    ctype_from_literal(t, LIT_INTEGER, "99999999999999999999", 20, "k", &a, &e);
    ctype_from_literal(t, LIT_INTEGER, "1", 1, "k", &b, &e);
    cr_assert_eq(ctype_num_add(t, a.p, a.len, b.p, b.len, &r), 0);
    cr_expect_str_eq(fmt("varint", r.p, r.len, false), "100000000000000000000");
    ctype_unref(t);
    cs_buf_destroy(&a);
    cs_buf_destroy(&b);
    cs_buf_destroy(&r);
}

/* ------------------------------------------------ JSON */

static const char *J(const char *type, const char *json)
{
    static char buf[4][1024];
    static int k;
    ctype *t = P(type);
    cs_buf b;
    cs_error e;
    cs_buf_init(&b);
    cs_error_init(&e);
    int rc = ctype_from_json(t, json, strlen(json), &b, &e);
    char *o = buf[k++ % 4];
    if (rc) {
        snprintf(o, 1024, "ERR %.900s", e.msg);
    } else {
        cs_buf f;
        cs_buf_init(&f);
        cr_assert_eq(ctype_format_json(t, b.p, b.len, &f), 0);
        snprintf(o, 1024, "%.*s", (int)f.len, (const char *)f.p);
        cs_buf_destroy(&f);
    }
    cs_buf_destroy(&b);
    ctype_unref(t);
    return o;
}

Test(types, json_round_trips)
{
    cr_expect_str_eq(J("int", "42"), "42");
    cr_expect_str_eq(J("int", "\"42\""), "42");
    cr_expect_str_eq(J("int", "3000000000"), "ERR Expected an int value, but got a Long: 3000000000");
    cr_expect_str_eq(J("int", "1.5"), "ERR Expected an int value, but got a Double: 1.5");
    cr_expect_str_eq(J("bigint", "3000000000"), "3000000000");
    cr_expect_str_eq(J("smallint", "12"), "12");
    cr_expect_str_eq(J("varint", "123456789012345678901234567890"), "123456789012345678901234567890");
    cr_expect_str_eq(J("decimal", "1.25"), "1.25");
    cr_expect_str_eq(J("decimal", "\"1.250\""), "1.250");
    cr_expect_str_eq(J("double", "1.5"), "1.5");
    cr_expect_str_eq(J("double", "\"NaN\""), "null");
    cr_expect_str_eq(J("float", "2"), "2.0");
    cr_expect_str_eq(J("boolean", "true"), "true");
    cr_expect_str_eq(J("boolean", "1"), "ERR Expected a boolean value, but got a Integer: 1");
    cr_expect_str_eq(J("text", "\"a\\\"b\\u00e9\\n\""), "\"a\\\"b\xc3\xa9\\n\"");
    cr_expect_str_eq(J("text", "1"), "ERR Expected a UTF-8 string, but got a Integer: 1");
    cr_expect_str_eq(J("blob", "\"0xcafe\""), "\"0xcafe\"");
    cr_expect_str_eq(J("blob", "\"cafe\""),
                     "ERR Value 'cafe' is not a valid blob representation: String representation of blob is missing 0x prefix: cafe");
    cr_expect_str_eq(J("timestamp", "0"), "\"1970-01-01 00:00:00.000Z\"");
    cr_expect_str_eq(J("timestamp", "\"2020-05-06 07:08:09.010+0000\""), "\"2020-05-06 07:08:09.010Z\"");
    cr_expect_str_eq(J("date", "\"2020-05-06\""), "\"2020-05-06\"");
    cr_expect_str_eq(J("time", "\"07:08:09\""), "\"07:08:09.000000000\"");
    cr_expect_str_eq(J("uuid", "\"550e8400-e29b-41d4-a716-446655440000\""), "\"550e8400-e29b-41d4-a716-446655440000\"");
    cr_expect_str_eq(J("inet", "\"10.0.0.1\""), "\"10.0.0.1\"");
    cr_expect_str_eq(J("duration", "\"1h\""), "\"1h\"");
    cr_expect_str_eq(J("list<int>", "[3, 1, 2]"), "[3, 1, 2]");
    cr_expect_str_eq(J("set<int>", "[3, 1, 2, 1]"), "[1, 2, 3]");
    cr_expect_str_eq(J("map<int, text>", "{\"2\": \"b\", \"1\": \"a\"}"), "{\"1\": \"a\", \"2\": \"b\"}");
    cr_expect_str_eq(J("map<text, int>", "{\"b\": 2, \"a\": 1}"), "{\"a\": 1, \"b\": 2}");
    cr_expect_str_eq(J("list<int>", "\"[1,2]\""), "[1, 2]");
    cr_expect_str_eq(J("list<int>", "[1, null]"), "ERR Invalid null element in list");
    cr_expect_str_eq(J("tuple<int, text>", "[1, null]"), "[1, null]");
    cr_expect_str_eq(J("tuple<int, text>", "[1]"), "ERR Tuple is missing items (expected 2): [1]");
    cr_expect_str_eq(J("int", "{"), "ERR Could not decode JSON string '{'");
}

Test(types, format_cql_collections)
{
    cr_expect_str_eq(J("frozen<map<text, frozen<list<int>>>>", "{\"k\": [1, 2]}"), "{\"k\": [1, 2]}");
    ctype *t = P("map<text, frozen<list<double>>>");
    cs_buf b, f;
    cs_error e;
    cs_buf_init(&b);
    cs_buf_init(&f);
    cs_error_init(&e);
    const char *js = "{\"it's\": [1.5, -0.0], \"a\": []}";
    cr_assert_eq(ctype_from_json(t, js, strlen(js), &b, &e), 0, "%s", e.msg);
    cr_assert_eq(ctype_format_cql(t, b.p, b.len, &f), 0);
    cr_expect_str_eq((cs_buf_put_u8(&f, 0), (const char *)f.p), "{'a': [], 'it''s': [1.5, -0.0]}");
    cs_buf_destroy(&b);
    cs_buf_destroy(&f);
    ctype_unref(t);
}

static const char *CAST(const char *from, lit_kind k, const char *lit, const char *to)
{
    static char buf[4][256];
    static int idx;
    ctype *f = P(from), *t = P(to);
    cs_buf a, b;
    cs_error e;
    cs_buf_init(&a);
    cs_buf_init(&b);
    cs_error_init(&e);
    cr_assert_eq(ctype_from_literal(f, k, lit, strlen(lit), "k", &a, &e), 0, "%s", e.msg);
    char *o = buf[idx++ % 4];
    if (ctype_num_cast(f, t, a.p, a.len, &b) != 0)
        snprintf(o, 256, "ERR");
    else
        snprintf(o, 256, "%s", fmt(to, b.p, b.len, false));
    cs_buf_destroy(&a);
    cs_buf_destroy(&b);
    ctype_unref(f);
    ctype_unref(t);
    return o;
}

Test(types, numeric_casts)
{
    cr_expect_str_eq(CAST("int", LIT_INTEGER, "300", "tinyint"), "44");
    cr_expect_str_eq(CAST("double", LIT_FLOAT, "1e30", "int"), "2147483647");
    cr_expect_str_eq(CAST("double", LIT_FLOAT, "-1.9", "bigint"), "-1");
    cr_expect_str_eq(CAST("double", LIT_FLOAT, "NaN", "int"), "0");
    cr_expect_str_eq(CAST("decimal", LIT_FLOAT, "-12.75", "int"), "-12");
    cr_expect_str_eq(CAST("decimal", LIT_FLOAT, "1.5e3", "bigint"), "1500");
    cr_expect_str_eq(CAST("float", LIT_FLOAT, "1.1", "decimal"), "1.1");
    cr_expect_str_eq(CAST("double", LIT_FLOAT, "0.1", "decimal"), "0.1");
    cr_expect_str_eq(CAST("double", LIT_FLOAT, "NaN", "decimal"), "ERR");
    cr_expect_str_eq(CAST("varint", LIT_INTEGER, "18446744073709551617", "bigint"), "1");
    cr_expect_str_eq(CAST("varint", LIT_INTEGER, "-5", "double"), "-5.0");
    cr_expect_str_eq(CAST("decimal", LIT_FLOAT, "2.5", "varint"), "2");
    cr_expect_str_eq(CAST("int", LIT_INTEGER, "7", "decimal"), "7");
    cr_expect_str_eq(CAST("bigint", LIT_INTEGER, "16777217", "float"), "1.6777216E7");
}

/* ------------------------------------------------ allocation failures */

static const ctype *oom_lookup(void *arg, const char *ks, const char *name)
{
    return strcmp(name, "addr") == 0 ? arg : NULL;
}

/* One run of a mix of operations; returns 0 if all succeeded. */
static int oom_run(const ctype *udt)
{
    int fails = 0;
    cs_error e;
    cs_error_init(&e);
    ctype *t = ctype_parse("map<frozen<tuple<int, frozen<addr>>>, frozen<list<decimal>>>", "ks", oom_lookup,
                           (void *)udt, &e);
    if (!t)
        return 1;
    const char *js = "{\"[1, {\\\"street\\\": \\\"x\\\", \\\"\\\\\\\"Zip\\\\\\\"\\\": 5}]\": [1.5, -2e3, 0.25]}";
    cs_buf v, enc, dec, f;
    cs_buf_init(&v);
    cs_buf_init(&enc);
    cs_buf_init(&dec);
    cs_buf_init(&f);
    cs_error_init(&e);
    if (ctype_from_json(t, js, strlen(js), &v, &e) != 0 || v.err)
        fails++;
    if (!fails) {
        ctype *ft = ctype_freeze(t);
        if (!ft)
            fails++;
        else {
            if (ctype_bc_encode(ft, v.p, v.len, true, &enc) != 0)
                fails++;
            else {
                cs_rd r;
                cs_rd_init(&r, enc.p, enc.len);
                if (ctype_bc_decode(ft, &r, true, &dec) != 0)
                    fails++;
                else if (ctype_compare(ft, v.p, v.len, dec.p, dec.len) != 0)
                    cr_assert_fail("decode after OOM retry differs");
            }
            ctype_unref(ft);
        }
    }
    if (!fails && (ctype_format_json(t, v.p, v.len, &f) != 0 || ctype_format_cql(t, v.p, v.len, &f) != 0))
        fails++;
    cs_buf_destroy(&v);
    cs_buf_destroy(&enc);
    cs_buf_destroy(&dec);
    cs_buf_destroy(&f);
    ctype_unref(t);
    return fails;
}

Test(types, alloc_failures)
{
    char *names[] = { "street", "Zip" };
    ctype *ft[] = { (ctype *)ctype_scalar(CT_VARCHAR), (ctype *)ctype_scalar(CT_INT) };
    ctype *u = ctype_new_udt("ks", "addr", names, ft, 2, false);
    cr_assert_eq(oom_run(u), 0, "clean run");
    size_t base = cs_alloc_count();
    for (long n = 1; n < 400; n++) {
        cs_alloc_fail_nth(n);
        int rc = oom_run(u);
        cs_alloc_fail_nth(0);
        cr_assert_eq(cs_alloc_count(), base, "leak with failure at allocation %ld", n);
        if (rc == 0 && n > 200)
            break;
    }
    ctype_unref(u);
}

static const char *OPT(const char *type, int version)
{
    static char buf[4][512];
    static int k;
    ctype *t = P(type);
    cs_buf b;
    cs_buf_init(&b);
    ctype_encode_option_v(t, version, &b);
    char *o = buf[k++ % 4];
    for (size_t i = 0; i < b.len && i < 250; i++)
        snprintf(o + 2 * i, 3, "%02x", b.p[i]);
    o[2 * (b.len < 250 ? b.len : 250)] = 0;
    cs_buf_destroy(&b);
    ctype_unref(t);
    return o;
}

Test(types, option_bytes)
{
    cr_expect_str_eq(OPT("int", 4), "0009");
    cr_expect_str_eq(OPT("map<text, int>", 4), "0021000d0009");
    cr_expect_str_eq(OPT("frozen<tuple<int, blob>>", 4), "0031000200090003");
    cr_expect_str_eq(OPT("set<frozen<list<uuid>>>", 4), "00220020000c");
    cr_expect_str_eq(OPT("duration", 5), "0015");
    /* duration before v5: CUSTOM 'org.apache.cassandra.db.marshal.DurationType' */
    cr_expect_str_eq(OPT("duration", 4), "0000002c6f72672e6170616368652e63617373616e6472612e64622e6d61727368616c2e4475726174696f6e54797065");
    cr_expect_str_eq(OPT("date", 3), "0000002e6f72672e6170616368652e63617373616e6472612e64622e6d61727368616c2e53696d706c654461746554797065");
    cr_expect_str_eq(OPT("'a.B'", 4), "00000003612e42");
}

Test(types, bc_decimal_decodes_exactly)
{
    static const char *const c[][2] = { { "100", "100" }, { "1.50", "1.50" }, { "1e2", "1E+2" }, { "-0.001", "-0.001" },
                                        { "0.00", "0.00" }, { "-1E+20", "-1E+20" }, { "0E-3", "0.000" },
                                        { "12345678901234567890.5", "12345678901234567890.5" } };
    ctype *t = P("decimal");
    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
        cs_buf v, b, d;
        cs_error e;
        cs_buf_init(&v);
        cs_buf_init(&b);
        cs_buf_init(&d);
        cs_error_init(&e);
        cr_assert_eq(ctype_from_literal(t, LIT_FLOAT, c[i][0], strlen(c[i][0]), "k", &v, &e), 0);
        cr_assert_eq(ctype_bc_encode(t, v.p, v.len, false, &b), 0);
        cs_rd r;
        cs_rd_init(&r, b.p, b.len);
        cr_assert_eq(ctype_bc_decode(t, &r, false, &d), 0);
        cr_expect_str_eq(fmt("decimal", d.p, d.len, false), c[i][1]);
        cs_buf_destroy(&v);
        cs_buf_destroy(&b);
        cs_buf_destroy(&d);
    }
    ctype_unref(t);
}

/* ------------------------------------------------ fuzz: bad bytes never crash */

static ctype *rand_type(int depth)
{
    static const ctype_kind sc[] = { CT_ASCII, CT_BIGINT, CT_BLOB, CT_BOOLEAN, CT_COUNTER, CT_DECIMAL, CT_DOUBLE,
                                     CT_FLOAT, CT_INT, CT_TIMESTAMP, CT_UUID, CT_VARCHAR, CT_VARINT, CT_TIMEUUID,
                                     CT_INET, CT_DATE, CT_TIME, CT_SMALLINT, CT_TINYINT, CT_DURATION };
    uint64_t r = rnd() % 10;
    if (depth > 2 || r < 6)
        return (ctype *)ctype_scalar(sc[rnd() % (sizeof(sc) / sizeof(sc[0]))]);
    if (r < 9) {
        ctype_kind k = r == 6 ? CT_LIST : r == 7 ? CT_SET : CT_MAP;
        return ctype_new_collection(k, rand_type(depth + 1), k == CT_MAP ? rand_type(depth + 1) : NULL, true);
    }
    ctype *el[3];
    int n = 1 + (int)(rnd() % 3);
    for (int i = 0; i < n; i++)
        el[i] = rand_type(depth + 1);
    return ctype_new_tuple(el, n);
}

Test(types, fuzz_no_crash)
{
    for (int it = 0; it < 3000; it++) {
        ctype *t = rand_type(0);
        cs_buf v, o;
        cs_buf_init(&v);
        cs_buf_init(&o);
        gen(t, &v, 0);
        /* mutate: flip, truncate or extend */
        if (v.len && rnd() % 2)
            v.p[rnd() % v.len] ^= (uint8_t)(1u << (rnd() % 8));
        if (v.len && rnd() % 3 == 0)
            v.len = rnd() % v.len;
        if (rnd() % 5 == 0)
            cs_buf_put_u8(&v, (uint8_t)rnd());
        cs_error e;
        cs_error_init(&e);
        int valid = ctype_validate(t, v.p, v.len, &e) == 0;
        ctype_format_cql(t, v.p, v.len, &o);
        ctype_format_json(t, v.p, v.len, &o);
        (void)ctype_compare(t, v.p, v.len, v.p, v.len);
        cs_buf_reset(&o);
        int rc = ctype_bc_encode(t, v.p, v.len, rnd() % 2, &o);
        if (valid && t->kind != CT_DURATION && rc != 0) {
            /* only duration (anywhere inside) may refuse */
            cs_buf tt;
            cs_buf_init(&tt);
            ctype_to_cql(t, &tt);
            cs_buf_put_u8(&tt, 0);
            cr_assert(strstr((const char *)tt.p, "duration"), "bc refused a valid %s", tt.p);
            cs_buf_destroy(&tt);
        }
        /* decode random bytes */
        cs_buf d;
        cs_buf_init(&d);
        cs_rd r;
        cs_rd_init(&r, v.p, v.len);
        (void)ctype_bc_decode(t, &r, rnd() % 2, &d);
        cs_buf_destroy(&d);
        /* JSON from junk text */
        cs_buf_reset(&o);
        cs_error_init(&e);
        (void)ctype_from_json(t, (const char *)v.p, v.len, &o, &e);
        cs_buf_destroy(&v);
        cs_buf_destroy(&o);
        ctype_unref(t);
    }
}

Test(types, fuzz_type_text_and_option)
{
    static const char *const toks[] = { "list", "set", "map", "frozen", "tuple", "<", ">", ",", "int", "text", "'x.Y'",
                                        "\"Q\"", "counter", "duration", " ", "addr", ".", "ks", "" };
    for (int it = 0; it < 5000; it++) {
        char s[256] = "";
        int n = 1 + (int)(rnd() % 12);
        for (int i = 0; i < n; i++)
            strncat(s, toks[rnd() % (sizeof(toks) / sizeof(toks[0]))], sizeof(s) - strlen(s) - 1);
        cs_error e;
        cs_error_init(&e);
        ctype *t = ctype_parse(s, "ks", NULL, NULL, &e);
        if (t) {
            /* printed text parses back to the same type */
            cs_buf b;
            cs_buf_init(&b);
            ctype_to_cql(t, &b);
            cs_buf_put_u8(&b, 0);
            cs_error_init(&e);
            ctype *t2 = ctype_parse((const char *)b.p, "ks", NULL, NULL, &e);
            cr_assert(t2 && ctype_equal(t, t2), "%s -> %s: %s", s, b.p, e.msg);
            ctype_unref(t2);
            /* option round trip keeps kinds */
            cs_buf_reset(&b);
            ctype_encode_option(t, &b);
            cs_rd r;
            cs_rd_init(&r, b.p, b.len);
            ctype *t3 = ctype_decode_option(&r);
            cr_assert(t3 && t3->kind == t->kind);
            ctype_unref(t3);
            /* truncated options fail cleanly */
            for (size_t k = 0; k < b.len; k++) {
                cs_rd_init(&r, b.p, k);
                ctype *t4 = ctype_decode_option(&r);
                cr_assert_null(t4, "truncated option decoded");
            }
            cs_buf_destroy(&b);
            ctype_unref(t);
        } else {
            cr_assert(cs_error_isset(&e), "no error for %s", s);
        }
    }
}

/* ------------------------------------------------ aggregates */

static const char *AGG(const char *type, bool avg, const char *const *lits, int n)
{
    static char buf[4][256];
    static int idx;
    ctype *t = P(type);
    ctype_agg a;
    ctype_agg_init(&a, t, avg);
    for (int i = 0; i < n; i++) {
        cs_buf v;
        cs_error e;
        cs_buf_init(&v);
        cs_error_init(&e);
        lit_kind k = strpbrk(lits[i], ".eEN") ? LIT_FLOAT : LIT_INTEGER;
        cr_assert_eq(ctype_from_literal(t, k, lits[i], strlen(lits[i]), "k", &v, &e), 0, "%s", e.msg);
        cr_assert_eq(ctype_agg_add(&a, v.p, v.len), 0);
        cs_buf_destroy(&v);
    }
    cs_buf r;
    cs_buf_init(&r);
    cr_assert_eq(ctype_agg_result(&a, &r), 0);
    char *o = buf[idx++ % 4];
    snprintf(o, 256, "%s", fmt(type, r.p, r.len, false));
    cs_buf_destroy(&r);
    ctype_agg_destroy(&a);
    ctype_unref(t);
    return o;
}

Test(types, aggregates_like_cassandra)
{
    const char *big[] = { "2000000000", "2000000000" };
    cr_expect_str_eq(AGG("int", false, big, 2), "-294967296");       /* int sum wraps */
    cr_expect_str_eq(AGG("int", true, big, 2), "2000000000");        /* avg sums in long */
    const char *l[] = { "9223372036854775807", "9223372036854775807", "1" };
    cr_expect_str_eq(AGG("bigint", true, l, 3), "6148914691236517205"); /* BigInteger after overflow */
    const char *t8[] = { "100", "100" };
    cr_expect_str_eq(AGG("tinyint", false, t8, 2), "-56");
    cr_expect_str_eq(AGG("tinyint", true, t8, 2), "100");
    const char *d12[] = { "1", "2" };
    cr_expect_str_eq(AGG("decimal", true, d12, 2), "1");              /* running avg, HALF_EVEN at scale 0 */
    const char *d3[] = { "1.0", "2.0", "4.5" };
    cr_expect_str_eq(AGG("decimal", false, d3, 3), "7.5");
    cr_expect_str_eq(AGG("decimal", true, d3, 3), "2.5");
    const char *v[] = { "-7", "2" };
    cr_expect_str_eq(AGG("varint", true, v, 2), "-2");
    cr_expect_str_eq(AGG("varint", false, v, 2), "-5");
    const char *f[] = { "0.1", "0.2", "0.3" };
    cr_expect_str_eq(AGG("double", false, f, 3), "0.6");              /* Kahan: not 0.6000000000000001 */
    const char *inf[] = { "Infinity", "Infinity" };
    cr_expect_str_eq(AGG("double", false, inf, 2), "Infinity");
    const char *ov[] = { "1.7e308", "1.7e308" };
    cr_expect_str_eq(AGG("double", true, ov, 2), "1.7E308");          /* BigDecimal after overflow */
    cr_expect_str_eq(AGG("float", true, NULL, 0), "0.0");
    cr_expect_str_eq(AGG("decimal", false, NULL, 0), "0");
}

/* ctype_num_big_op on varints against __int128 arithmetic: products of two
 * random longs, then (p + c) / y and (p + c) % y (BigInteger's truncation and
 * the dividend's sign) through the long-division path (divisors of one and
 * two limbs). */
static __int128 varint_i128(const uint8_t *v, size_t n)
{
    __int128 x = (v[0] & 0x80) ? -1 : 0;
    for (size_t i = 0; i < n; i++)
        x = (__int128)(((unsigned __int128)x << 8) | v[i]);
    return x;
}

static void big_op_ok(char op, const cs_buf *a, const cs_buf *b, cs_buf *out)
{
    const ctype *vi = ctype_scalar(CT_VARINT);
    const char *why = NULL;
    cs_buf_reset(out);
    int rc = ctype_num_big_op(op, vi, vi, a->p, a->len, vi, b ? b->p : NULL, b ? b->len : 0, out, &why);
    cr_assert_eq(rc, 0, "%c: %d %s", op, rc, why ? why : "");
}

Test(types, varint_operations_against_int128)
{
    const ctype *vi = ctype_scalar(CT_VARINT);
    srand(7);
    cs_buf x, y, c, p, pc, q, r;
    cs_buf_init(&x); cs_buf_init(&y); cs_buf_init(&c); cs_buf_init(&p);
    cs_buf_init(&pc); cs_buf_init(&q); cs_buf_init(&r);
    for (int i = 0; i < 3000; i++) {
        int64_t a = (int64_t)(((uint64_t)rand() << 40) ^ ((uint64_t)rand() << 20) ^ (uint64_t)rand());
        int64_t b = (int64_t)(((uint64_t)rand() << 33) ^ (uint64_t)rand()) >> (rand() % 60);
        if (a == INT64_MIN) a = 1;
        if (b == INT64_MIN) b = 2;
        if (rand() & 1) a = -a;
        if (rand() & 1) b = -b;
        if (b == 0) b = 3;
        int64_t k = (int64_t)(rand() % 1000000) - 500000;
        cs_buf_reset(&x); cs_buf_reset(&y); cs_buf_reset(&c);
        cr_assert_eq(ctype_num_from_int64(vi, a, &x), 0);
        cr_assert_eq(ctype_num_from_int64(vi, b, &y), 0);
        cr_assert_eq(ctype_num_from_int64(vi, k, &c), 0);
        big_op_ok('*', &x, &y, &p);
        __int128 want = (__int128)a * b;
        cr_assert(varint_i128(p.p, p.len) == want, "%lld * %lld", (long long)a, (long long)b);
        big_op_ok('+', &p, &c, &pc);
        __int128 n = want + k;
        cr_assert(varint_i128(pc.p, pc.len) == n);
        big_op_ok('/', &pc, &y, &q);
        big_op_ok('%', &pc, &y, &r);
        cr_assert(varint_i128(q.p, q.len) == n / b, "(%lld * %lld + %lld) / %lld", (long long)a, (long long)b,
                  (long long)k, (long long)b);
        cr_assert(varint_i128(r.p, r.len) == n % b);
        big_op_ok('-', &pc, &p, &q);
        cr_assert(varint_i128(q.p, q.len) == k);
        big_op_ok('n', &x, NULL, &q);
        cr_assert(varint_i128(q.p, q.len) == -(__int128)a);
    }
    const char *why = NULL;
    cs_buf_reset(&q);
    cs_buf_reset(&c);
    cr_assert_eq(ctype_num_from_int64(vi, 0, &c), 0);
    cr_assert_eq(ctype_num_big_op('/', vi, vi, x.p, x.len, vi, c.p, c.len, &q, &why), CS_EUSER);
    cr_assert_str_eq(why, "BigInteger divide by zero");
    cs_buf_destroy(&x); cs_buf_destroy(&y); cs_buf_destroy(&c); cs_buf_destroy(&p);
    cs_buf_destroy(&pc); cs_buf_destroy(&q); cs_buf_destroy(&r);
}

/* Long division of many-limb varints: q * b + r == a, |r| < |b|, r with the
 * sign of a, for products of up to 12 random longs by products of up to 6. */
Test(types, varint_long_division_identity)
{
    const ctype *vi = ctype_scalar(CT_VARINT);
    srand(11);
    cs_buf a, b, f, t, q, r, back;
    cs_buf_init(&a); cs_buf_init(&b); cs_buf_init(&f); cs_buf_init(&t);
    cs_buf_init(&q); cs_buf_init(&r); cs_buf_init(&back);
    for (int it = 0; it < 400; it++) {
        cs_buf *xs[2] = { &a, &b };
        for (int w = 0; w < 2; w++) {
            cs_buf_reset(xs[w]);
            cr_assert_eq(ctype_num_from_int64(vi, 1, xs[w]), 0);
            int k = 1 + rand() % (w ? 6 : 12);
            for (int i = 0; i < k; i++) {
                int64_t x = (int64_t)((((uint64_t)rand() << 33) ^ ((uint64_t)rand() << 11) ^ (uint64_t)rand()) |
                                      1u) >> (rand() % 30);
                if (x == INT64_MIN) x = 5;
                if (rand() & 1) x = -x;
                cs_buf_reset(&f);
                cr_assert_eq(ctype_num_from_int64(vi, x, &f), 0);
                big_op_ok('*', xs[w], &f, &t);
                cs_buf_reset(xs[w]);
                cs_buf_put(xs[w], t.p, t.len);
            }
        }
        big_op_ok('/', &a, &b, &q);
        big_op_ok('%', &a, &b, &r);
        big_op_ok('*', &q, &b, &t);
        big_op_ok('+', &t, &r, &back);
        cr_assert_eq(ctype_compare(vi, back.p, back.len, a.p, a.len), 0, "q * b + r != a at %d", it);
        bool rneg = r.len && (r.p[0] & 0x80), aneg = a.p[0] & 0x80, bneg = b.p[0] & 0x80;
        bool rzero = r.len == 1 && r.p[0] == 0;
        cr_assert(rzero || rneg == aneg, "remainder sign at %d", it);
        big_op_ok('n', &r, NULL, &t);     /* |r| < |b| */
        const cs_buf *ra = rneg ? &t : &r;
        cs_buf nb;
        cs_buf_init(&nb);
        big_op_ok('n', &b, NULL, &nb);
        const cs_buf *ba = bneg ? &nb : &b;
        cr_assert_lt(ctype_compare(vi, ra->p, ra->len, ba->p, ba->len), 0, "|r| >= |b| at %d", it);
        cs_buf_destroy(&nb);
    }
    cs_buf_destroy(&a); cs_buf_destroy(&b); cs_buf_destroy(&f); cs_buf_destroy(&t);
    cs_buf_destroy(&q); cs_buf_destroy(&r); cs_buf_destroy(&back);
}

/* A division whose quotient-limb estimate survives the two-limb correction
 * one too large, so algorithm D's add-back step runs (found by searching a
 * model of the algorithm), its negation, and halves of both (a shift of 1). */
Test(types, varint_division_add_back)
{
    const ctype *vi = ctype_scalar(CT_VARINT);
    static const char *const cases[][4] = {
        { "510423550381407695195061911149799800832", "39614081257132168796771975169", "12884901887",
          "39614081257132168786034556929" },
        { "-510423550381407695195061911149799800832", "39614081257132168796771975169", "-12884901887",
          "-39614081257132168786034556929" },
        { "255211775190703847597530955574899900416", "19807040628566084398385987584", "12884901888",
          "1073741824" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cs_buf v[4], q, r;
        cs_error e;
        cs_error_init(&e);
        for (int j = 0; j < 4; j++) {
            cs_buf_init(&v[j]);
            cr_assert_eq(ctype_from_string(vi, cases[i][j], strlen(cases[i][j]), &v[j], &e), 0, "%s", e.msg);
        }
        cs_buf_init(&q);
        cs_buf_init(&r);
        big_op_ok('/', &v[0], &v[1], &q);
        big_op_ok('%', &v[0], &v[1], &r);
        cr_assert_eq(ctype_compare(vi, q.p, q.len, v[2].p, v[2].len), 0, "quotient of case %zu", i);
        cr_assert_eq(ctype_compare(vi, r.p, r.len, v[3].p, v[3].len), 0, "remainder of case %zu", i);
        for (int j = 0; j < 4; j++)
            cs_buf_destroy(&v[j]);
        cs_buf_destroy(&q);
        cs_buf_destroy(&r);
    }
}
