/*
 * test_server_msg.c: message bodies (server/msg.h).  Every request type is
 * encoded with the client-side encoder and decoded with the server decoder
 * (v3, v4, v5 layouts), then truncated at every byte; every response type is
 * encoded and decoded back; every error code's extra fields survive.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "common/alloc.h"
#include "common/arena.h"
#include "common/buf.h"
#include "common/err.h"
#include "server/frame.h"
#include "server/msg.h"

static size_t allocs_at_start;
static void setup(void) { allocs_at_start = cs_alloc_count(); }
static void teardown(void) { cr_assert_eq(cs_alloc_count(), allocs_at_start, "leak"); }
TestSuite(server_msg, .init = setup, .fini = teardown);

/* Decode body; expect success. The arena must be destroyed by the caller. */
static void decode_ok(uint8_t v, uint8_t op, const cs_buf *b, cs_arena *a, msg_request *m)
{
    cs_error e;
    cs_error_init(&e);
    int rc = msg_request_decode(v, op, b->p, b->len, a, m, &e);
    cr_assert_eq(rc, 0, "decode failed: %s", e.msg);
}

/* Every strict prefix of a request body must be refused with a protocol error. */
static void truncations_fail(uint8_t v, uint8_t op, const cs_buf *b)
{
    for (size_t cut = 0; cut < b->len; cut++) {
        cs_arena a;
        cs_arena_init(&a);
        msg_request m;
        cs_error e;
        cs_error_init(&e);
        int rc = msg_request_decode(v, op, b->p, cut, &a, &m, &e);
        cr_assert_eq(rc, CS_EUSER, "op %u cut %zu of %zu decoded", op, cut, b->len);
        cr_assert_eq(e.code, CS_ERR_PROTOCOL);
        cs_arena_destroy(&a);
    }
}

static bool val_eq(const cql_value *v, const char *s, int32_t len)
{
    return v->len == len && (len <= 0 || memcmp(v->p, s, (size_t)len) == 0);
}

Test(server_msg, startup_options_register_auth)
{
    cs_buf b;
    cs_buf_init(&b);
    /* StartupMessage upper-cases the keys into a HashMap: any case, the
     * last of a repeated key */
    msg_kv kv[] = { { "cql_version", 11, "3.0.0", 5 }, { "COMPRESSION", 11, "snappy", 6 },
                    { "Compression", 11, "lz4", 3 } };
    msg_put_startup(&b, kv, 3);
    cs_arena a;
    cs_arena_init(&a);
    msg_request m;
    decode_ok(4, OP_STARTUP, &b, &a, &m);
    size_t n;
    const char *v = msg_startup_get(&m, "COMPRESSION", &n);
    cr_assert(v && n == 3 && memcmp(v, "lz4", 3) == 0);
    v = msg_startup_get(&m, "CQL_VERSION", &n);
    cr_assert(v && n == 5 && memcmp(v, "3.0.0", 5) == 0);
    cr_assert_null(msg_startup_get(&m, "DRIVER_NAME", &n));
    truncations_fail(4, OP_STARTUP, &b);
    cs_arena_destroy(&a);

    cs_buf_reset(&b);
    decode_ok(4, OP_OPTIONS, &b, &a, &m);

    static const char *const ev[] = { "TOPOLOGY_CHANGE", "STATUS_CHANGE", "SCHEMA_CHANGE" };
    msg_put_register(&b, ev, 3);
    cs_arena_init(&a);
    decode_ok(4, OP_REGISTER, &b, &a, &m);
    cr_assert_eq(m.events, MSG_EV_TOPOLOGY | MSG_EV_STATUS | MSG_EV_SCHEMA);
    truncations_fail(4, OP_REGISTER, &b);
    cs_buf_reset(&b);
    static const char *const bad[] = { "NOPE" };
    msg_put_register(&b, bad, 1);
    cs_error e;
    cs_error_init(&e);
    cr_assert_eq(msg_request_decode(4, OP_REGISTER, b.p, b.len, &a, &m, &e), CS_EUSER);

    cs_buf_reset(&b);
    msg_put_auth_response(&b, (const uint8_t *)"\0cassandra\0cassandra", 20);
    decode_ok(4, OP_AUTH_RESPONSE, &b, &a, &m);
    cr_assert_eq(m.token_len, 20);
    cr_assert(memcmp(m.token + 1, "cassandra", 9) == 0);
    truncations_fail(4, OP_AUTH_RESPONSE, &b);
    cs_arena_destroy(&a);
    cs_buf_destroy(&b);
}

/* QUERY with every flag, in v3, v4 and v5 layouts. */
static void query_all_flags(uint8_t v)
{
    cql_value vals[3] = { { (const uint8_t *)"\0\0\0\1", 4 }, { NULL, CQL_NULL }, { NULL, CQL_UNSET } };
    const char *names[3] = { "a", "bb", "c" };
    size_t name_lens[3] = { 1, 2, 1 };
    cql_params p;
    msg_params_init(&p);
    p.consistency = 0x000A;
    p.values = vals;
    p.n_values = v >= 4 ? 3 : 2;
    p.names = names;
    p.name_lens = name_lens;
    p.skip_metadata = true;
    p.page_size = 5000;
    p.paging_state = (const uint8_t *)"PS";
    p.paging_state_len = 2;
    p.serial_consistency = 9;
    p.timestamp = 1234567890123456LL;
    if (v >= 5) {
        p.keyspace = "ks1";
        p.now_in_seconds = 42;
    }
    cs_buf b;
    cs_buf_init(&b);
    const char *q = "SELECT * FROM t WHERE a = :a";
    msg_put_query(&b, v, q, strlen(q), &p);
    cs_arena a;
    cs_arena_init(&a);
    msg_request m;
    decode_ok(v, OP_QUERY, &b, &a, &m);
    cr_assert_eq(m.query_len, strlen(q));
    cr_assert(memcmp(m.query, q, m.query_len) == 0);
    const cql_params *d = &m.params;
    cr_assert_eq(d->consistency, 0x000A);
    cr_assert_eq(d->n_values, p.n_values);
    cr_assert(val_eq(&d->values[0], "\0\0\0\1", 4));
    cr_assert_eq(d->values[1].len, CQL_NULL);
    if (v >= 4)
        cr_assert_eq(d->values[2].len, CQL_UNSET);
    cr_assert_not_null(d->names);
    cr_assert(d->name_lens[1] == 2 && memcmp(d->names[1], "bb", 2) == 0);
    cr_assert(d->skip_metadata);
    cr_assert_eq(d->page_size, 5000);
    cr_assert(d->paging_state_len == 2 && memcmp(d->paging_state, "PS", 2) == 0);
    cr_assert_eq(d->serial_consistency, 9);
    cr_assert_eq(d->timestamp, 1234567890123456LL);
    if (v >= 5) {
        cr_assert_str_eq(d->keyspace, "ks1");
        cr_assert_eq(d->now_in_seconds, 42);
        cr_assert(d->flags & (MSG_QF_KEYSPACE | MSG_QF_NOW_IN_SECONDS));
    } else {
        cr_assert_null(d->keyspace);
    }
    truncations_fail(v, OP_QUERY, &b);
    cs_arena_destroy(&a);
    cs_buf_destroy(&b);
}

Test(server_msg, query_v3) { query_all_flags(3); }
Test(server_msg, query_v4) { query_all_flags(4); }
Test(server_msg, query_v5) { query_all_flags(5); }

Test(server_msg, query_no_flags_defaults)
{
    cql_params p;
    msg_params_init(&p);
    cs_buf b;
    cs_buf_init(&b);
    msg_put_query(&b, 4, "SELECT 1", 8, &p);
    cr_assert_eq(b.len, 4 + 8 + 2 + 1);
    cs_arena a;
    cs_arena_init(&a);
    msg_request m;
    decode_ok(4, OP_QUERY, &b, &a, &m);
    cr_assert_eq(m.params.n_values, 0);
    cr_assert_eq(m.params.page_size, -1);
    cr_assert_eq(m.params.paging_state_len, -1);
    cr_assert_eq(m.params.timestamp, INT64_MIN);
    cr_assert_eq(m.params.serial_consistency, 0);
    cs_arena_destroy(&a);
    cs_buf_destroy(&b);
}

Test(server_msg, unset_in_v3_is_null_and_bad_lengths)
{
    /* consistency ONE, flags VALUES, 1 value of length -2 */
    uint8_t body[] = { 0, 0, 0, 1, 'x', 0, 1, 0x01, 0, 1, 0xff, 0xff, 0xff, 0xfe };
    cs_arena a;
    cs_arena_init(&a);
    msg_request m;
    cs_error e;
    cs_error_init(&e);
    cr_assert_eq(msg_request_decode(3, OP_QUERY, body, sizeof body, &a, &m, &e), 0);
    cr_assert_eq(m.params.values[0].len, CQL_NULL);
    cr_assert_eq(msg_request_decode(4, OP_QUERY, body, sizeof body, &a, &m, &e), 0);
    cr_assert_eq(m.params.values[0].len, CQL_UNSET);
    body[13] = 0xfd;   /* -3: invalid in v4 */
    cr_assert_eq(msg_request_decode(4, OP_QUERY, body, sizeof body, &a, &m, &e), CS_EUSER);
    cr_assert_eq(e.code, CS_ERR_PROTOCOL);
    cr_assert(strstr(e.msg, "Invalid length for value") != NULL);
    /* A huge value length must not be trusted. */
    cs_error_init(&e);
    body[10] = 0x7f;
    cr_assert_eq(msg_request_decode(4, OP_QUERY, body, sizeof body, &a, &m, &e), CS_EUSER);
    /* A huge query string length. */
    uint8_t q[] = { 0x7f, 0xff, 0xff, 0xff, 'a' };
    cs_error_init(&e);
    cr_assert_eq(msg_request_decode(4, OP_QUERY, q, sizeof q, &a, &m, &e), CS_EUSER);
    /* Unknown consistency and unknown opcode. */
    uint8_t c[] = { 0, 0, 0, 0, 0, 0x12, 0 };
    cs_error_init(&e);
    cr_assert_eq(msg_request_decode(4, OP_QUERY, c, sizeof c, &a, &m, &e), CS_EUSER);
    cs_error_init(&e);
    cr_assert_eq(msg_request_decode(4, 0x33, c, sizeof c, &a, &m, &e), CS_EUSER);
    cr_assert_str_eq(e.msg, "Unknown opcode 51");
    /* Default timestamp Long.MIN_VALUE is out of bound, as Cassandra. */
    uint8_t t[] = { 0, 0, 0, 0, 0, 1, 0x20, 0x80, 0, 0, 0, 0, 0, 0, 0 };
    cs_error_init(&e);
    cr_assert_eq(msg_request_decode(4, OP_QUERY, t, sizeof t, &a, &m, &e), CS_EUSER);
    cr_assert(strstr(e.msg, "Out of bound timestamp") != NULL);
    cs_arena_destroy(&a);
}

Test(server_msg, prepare_execute)
{
    for (uint8_t v = 3; v <= 5; v++) {
        cs_buf b;
        cs_buf_init(&b);
        msg_put_prepare(&b, v, "INSERT INTO t (k) VALUES (?)", 28, v >= 5 ? "ks" : NULL);
        cs_arena a;
        cs_arena_init(&a);
        msg_request m;
        decode_ok(v, OP_PREPARE, &b, &a, &m);
        cr_assert_eq(m.query_len, 28);
        if (v >= 5)
            cr_assert_str_eq(m.prepare_keyspace, "ks");
        else
            cr_assert_null(m.prepare_keyspace);
        truncations_fail(v, OP_PREPARE, &b);

        cs_buf_reset(&b);
        uint8_t id[16], rmid[16];
        memset(id, 0xab, 16);
        memset(rmid, 0xcd, 16);
        cql_value val = { (const uint8_t *)"v", 1 };
        cql_params p;
        msg_params_init(&p);
        p.values = &val;
        p.n_values = 1;
        p.skip_metadata = true;
        p.timestamp = 5;
        msg_put_execute(&b, v, id, 16, rmid, 16, &p);
        decode_ok(v, OP_EXECUTE, &b, &a, &m);
        cr_assert(m.id_len == 16 && memcmp(m.id, id, 16) == 0);
        if (v >= 5)
            cr_assert(m.result_metadata_id_len == 16 && memcmp(m.result_metadata_id, rmid, 16) == 0);
        cr_assert_eq(m.params.n_values, 1);
        cr_assert(val_eq(&m.params.values[0], "v", 1));
        cr_assert(m.params.skip_metadata);
        cr_assert_eq(m.params.timestamp, 5);
        truncations_fail(v, OP_EXECUTE, &b);
        cs_arena_destroy(&a);
        cs_buf_destroy(&b);
    }
}

static void batch_roundtrip(uint8_t v, bool names)
{
    cql_value v1[2] = { { (const uint8_t *)"ab", 2 }, { NULL, CQL_NULL } };
    cql_value v2[1] = { { (const uint8_t *)"", 0 } };
    const char *n1[2] = { "x", "y" };
    size_t l1[2] = { 1, 1 };
    const char *n2[1] = { "z" };
    size_t l2[1] = { 1 };
    uint8_t id[16];
    memset(id, 7, sizeof id);
    cql_batch_item items[2] = {
        { .prepared = false, .query = "INSERT INTO t (a, b) VALUES (?, ?)", .query_len = 34,
          .values = v1, .n_values = 2, .names = names ? n1 : NULL, .name_lens = names ? l1 : NULL },
        { .prepared = true, .id = id, .id_len = 16, .values = v2, .n_values = 1,
          .names = names ? n2 : NULL, .name_lens = names ? l2 : NULL },
    };
    cql_params p;
    msg_params_init(&p);
    p.consistency = 6;
    p.serial_consistency = 8;
    p.timestamp = 99;
    cs_buf b;
    cs_buf_init(&b);
    msg_put_batch(&b, v, 1, items, 2, &p);
    cs_arena a;
    cs_arena_init(&a);
    msg_request m;
    decode_ok(v, OP_BATCH, &b, &a, &m);
    cr_assert_eq(m.batch_type, 1);
    cr_assert_eq(m.n_items, 2);
    cr_assert(!m.items[0].prepared && m.items[0].query_len == 34);
    cr_assert_eq(m.items[0].n_values, 2);
    cr_assert(val_eq(&m.items[0].values[0], "ab", 2));
    cr_assert_eq(m.items[0].values[1].len, CQL_NULL);
    cr_assert(m.items[1].prepared && m.items[1].id_len == 16 && m.items[1].id[3] == 7);
    cr_assert(val_eq(&m.items[1].values[0], "", 0));
    if (names)
        cr_assert(m.items[1].names && m.items[1].name_lens[0] == 1 && m.items[1].names[0][0] == 'z');
    else
        cr_assert_null(m.items[0].names);
    cr_assert_eq(m.params.consistency, 6);
    cr_assert_eq(m.params.serial_consistency, 8);
    cr_assert_eq(m.params.timestamp, 99);
    truncations_fail(v, OP_BATCH, &b);
    cs_arena_destroy(&a);
    cs_buf_destroy(&b);
}

Test(server_msg, batch_v3) { batch_roundtrip(3, false); }
Test(server_msg, batch_v4) { batch_roundtrip(4, false); }
Test(server_msg, batch_v4_names) { batch_roundtrip(4, true); }
Test(server_msg, batch_v5) { batch_roundtrip(5, false); }

Test(server_msg, batch_bad_kind_and_type)
{
    uint8_t body[] = { 0, 0, 1, 2, 0, 0, 0, 0, 0, 0, 0, 1, 0 };
    cs_arena a;
    cs_arena_init(&a);
    msg_request m;
    cs_error e;
    cs_error_init(&e);
    cr_assert_eq(msg_request_decode(4, OP_BATCH, body, sizeof body, &a, &m, &e), CS_EUSER);
    cr_assert(strstr(e.msg, "Invalid query kind in BATCH messages") != NULL, "%s", e.msg);
    body[0] = 3;
    cs_error_init(&e);
    cr_assert_eq(msg_request_decode(4, OP_BATCH, body, sizeof body, &a, &m, &e), CS_EUSER);
    cr_assert(strstr(e.msg, "Invalid BATCH message type") != NULL, "%s", e.msg);
    /* A query count far beyond the bytes present. */
    uint8_t many[] = { 0, 0xff, 0xff, 0, 0, 0, 0 };
    cs_error_init(&e);
    cr_assert_eq(msg_request_decode(4, OP_BATCH, many, sizeof many, &a, &m, &e), CS_EUSER);
    cs_arena_destroy(&a);
}

/* Every error code with extra fields survives encode + decode. */
Test(server_msg, error_codes_roundtrip)
{
    static const int codes[] = {
        CS_ERR_SERVER, CS_ERR_PROTOCOL, CS_ERR_BAD_CREDENTIALS, CS_ERR_UNAVAILABLE,
        CS_ERR_OVERLOADED, CS_ERR_IS_BOOTSTRAPPING, CS_ERR_TRUNCATE, CS_ERR_WRITE_TIMEOUT,
        CS_ERR_READ_TIMEOUT, CS_ERR_READ_FAILURE, CS_ERR_FUNCTION_FAILURE, CS_ERR_WRITE_FAILURE,
        CS_ERR_SYNTAX, CS_ERR_UNAUTHORIZED, CS_ERR_INVALID, CS_ERR_CONFIG, CS_ERR_ALREADY_EXISTS,
        CS_ERR_UNPREPARED,
    };
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        cs_error e;
        cs_error_init(&e);
        cs_error_set(&e, codes[i], "message %zu", i);
        e.cl = 4;
        e.received = 1;
        e.blockfor = 2;
        e.alive = 0;
        e.numfailures = 1;
        e.data_present = 1;
        strcpy(e.write_type, "BATCH");
        strcpy(e.keyspace, "ks");
        strcpy(e.table, "tbl");
        strcpy(e.arg_types, "int, map<int, text>");
        memset(e.unprepared_id, 0x5a, 16);
        e.unprepared_id_len = 16;
        cs_buf b;
        cs_buf_init(&b);
        msg_put_error(&b, 4, &e);
        cs_error d;
        cr_assert_eq(msg_error_decode(4, b.p, b.len, &d), 0, "code %x", codes[i]);
        cr_assert_eq(d.code, codes[i]);
        cr_assert_str_eq(d.msg, e.msg);
        switch (codes[i]) {
        case CS_ERR_UNAVAILABLE:
            cr_assert(d.cl == 4 && d.blockfor == 2 && d.alive == 0);
            break;
        case CS_ERR_WRITE_TIMEOUT:
            cr_assert(d.cl == 4 && d.received == 1 && d.blockfor == 2);
            cr_assert_str_eq(d.write_type, "BATCH");
            break;
        case CS_ERR_READ_TIMEOUT:
            cr_assert(d.cl == 4 && d.received == 1 && d.blockfor == 2 && d.data_present == 1);
            break;
        case CS_ERR_READ_FAILURE:
            cr_assert(d.numfailures == 1 && d.data_present == 1);
            break;
        case CS_ERR_WRITE_FAILURE:
            cr_assert(d.numfailures == 1);
            cr_assert_str_eq(d.write_type, "BATCH");
            break;
        case CS_ERR_FUNCTION_FAILURE:
            cr_assert_str_eq(d.keyspace, "ks");
            cr_assert_str_eq(d.table, "tbl");
            cr_assert_str_eq(d.arg_types, "int, map<int, text>");
            break;
        case CS_ERR_ALREADY_EXISTS:
            cr_assert_str_eq(d.keyspace, "ks");
            cr_assert_str_eq(d.table, "tbl");
            break;
        case CS_ERR_UNPREPARED:
            cr_assert(d.unprepared_id_len == 16 && d.unprepared_id[15] == 0x5a);
            break;
        default:
            /* No extra fields: the body ends after the message. */
            cr_assert_eq(b.len, 4 + 2 + strlen(e.msg));
            break;
        }
        /* Truncated error bodies are refused by the client-side decoder. */
        for (size_t cut = 0; cut < b.len; cut++)
            cr_assert_neq(msg_error_decode(4, b.p, cut, &d), 0, "code %x cut %zu", codes[i], cut);
        cs_buf_destroy(&b);
    }
}

/* READ_FAILURE as Cassandra sends it for a read that failed on this node:
 * v4 counts the failures; v5 maps the node's address to the reason code
 * (IPv4 and IPv6); an error naming no node sends an empty map. */
Test(server_msg, read_failure_reasonmap)
{
    const char *addrs[] = { "127.0.0.1", "::1", "" };
    for (int v = 4; v <= 5; v++)
        for (int i = 0; i < 3; i++) {
            cs_error e;
            cs_error_init(&e);
            cs_error_set(&e, CS_ERR_READ_FAILURE, "Operation failed - received 0 responses and 1 failures");
            e.cl = 1;
            e.blockfor = 1;
            e.numfailures = 1;
            strcpy(e.failure_endpoint, addrs[i]);
            e.failure_reason = 1;
            cs_buf b;
            cs_buf_init(&b);
            msg_put_error(&b, (uint8_t)v, &e);
            size_t fixed = 4 + 2 + strlen(e.msg) + 2 + 4 + 4 + 4 + 1;   /* code, msg, cl, received, blockfor, n, data_present */
            size_t want = fixed + (v == 5 && addrs[i][0] ? 1 + (i == 0 ? 4 : 16) + 2 : 0);
            cr_assert_eq(b.len, want, "v%d %s: %zu bytes", v, addrs[i], b.len);
            cs_error d;
            cr_assert_eq(msg_error_decode((uint8_t)v, b.p, b.len, &d), 0);
            cr_assert_eq(d.numfailures, v == 5 && !addrs[i][0] ? 0 : 1, "v%d %s", v, addrs[i]);
            if (v == 5 && addrs[i][0]) {
                cr_assert_str_eq(d.failure_endpoint, addrs[i]);
                cr_assert_eq(d.failure_reason, 1);
            }
            cs_buf_destroy(&b);
        }
}

Test(server_msg, events_and_schema_change)
{
    cql_schema_change cases[3] = {
        { "CREATED", "KEYSPACE", "ks1", "", "" },
        { "UPDATED", "TABLE", "ks1", "t1", "" },
        { "DROPPED", "FUNCTION", "ks1", "f", "int, frozen<map<int, text>>" },
    };
    for (int i = 0; i < 3; i++) {
        cs_buf b;
        cs_buf_init(&b);
        msg_put_event_schema_change(&b, &cases[i]);
        cql_schema_change d;
        cr_assert_eq(msg_event_decode(b.p, b.len, &d), 0);
        cr_assert_str_eq(d.change_type, cases[i].change_type);
        cr_assert_str_eq(d.target, cases[i].target);
        cr_assert_str_eq(d.keyspace, cases[i].keyspace);
        cr_assert_str_eq(d.name, cases[i].name);
        cr_assert_str_eq(d.arg_types, cases[i].arg_types);
        for (size_t cut = 0; cut < b.len; cut++)
            cr_assert_neq(msg_event_decode(b.p, cut, &d), 0);
        cs_buf_destroy(&b);
    }
}

Test(server_msg, supported_authenticate_tokens)
{
    cs_buf b;
    cs_buf_init(&b);
    for (int with_snappy = 1; with_snappy >= 0; with_snappy--) {
        cs_buf_reset(&b);
        msg_put_supported(&b, with_snappy);
        cs_rd r;
        cs_rd_init(&r, b.p, b.len);
        cr_assert_eq(cs_rd_u16(&r), 3);
        bool saw_compression = false;
        for (int i = 0; i < 3; i++) {
            size_t n;
            const char *k = cs_rd_string(&r, &n);
            if (n == 11 && memcmp(k, "COMPRESSION", 11) == 0) {
                saw_compression = true;
                /* OptionsMessage: snappy (when its library loads), then lz4 */
                cr_assert_eq(cs_rd_u16(&r), with_snappy ? 2 : 1);
                const char *v;
                if (with_snappy) {
                    v = cs_rd_string(&r, &n);
                    cr_assert(n == 6 && memcmp(v, "snappy", 6) == 0);
                }
                v = cs_rd_string(&r, &n);
                cr_assert(n == 3 && memcmp(v, "lz4", 3) == 0);
            } else {
                uint16_t nv = cs_rd_u16(&r);
                for (int j = 0; j < nv; j++)
                    cs_rd_string(&r, &n);
            }
        }
        cr_assert(saw_compression);
        cr_assert_eq(cs_rd_left(&r), 0);
    }
    cs_buf_reset(&b);
    msg_put_authenticate(&b, "org.apache.cassandra.auth.PasswordAuthenticator");
    cr_assert_eq(cs_be16(b.p), 47);
    cs_buf_reset(&b);
    msg_put_auth_token(&b, NULL, -1);
    cr_assert_eq(b.len, 4);
    cr_assert_eq(cs_be32(b.p), 0xffffffffu);
    cs_buf_destroy(&b);
}

Test(server_msg, write_error_frame)
{
    cs_buf b;
    cs_buf_init(&b);
    cs_error e;
    cs_error_init(&e);
    cs_error_set(&e, CS_ERR_PROTOCOL, "Invalid or unsupported protocol version (66); "
                 "supported versions are (3/v3, 4/v4, 5/v5, 6/v6-beta)");
    cr_assert_eq(msg_write_error(&b, 4, 0, false, &e), 0);
    cr_assert_eq(b.p[0], 0x84);
    cr_assert_eq(b.p[4], OP_ERROR);
    cs_error d;
    cr_assert_eq(msg_error_decode(4, b.p + 9, b.len - 9, &d), 0);
    cr_assert_eq(d.code, 0x000A);
    cr_assert_str_eq(d.msg, e.msg);
    cs_buf_destroy(&b);
}

Test(server_msg, opcode_names)
{
    cr_assert_str_eq(msg_opcode_name(OP_QUERY), "QUERY");
    cr_assert_str_eq(msg_opcode_name(OP_AUTH_SUCCESS), "AUTH_SUCCESS");
    cr_assert_str_eq(msg_opcode_name(200), "UNKNOWN");
}

Test(server_msg, strings_must_be_utf8)
{
    static const char *const bad[] = { "SELECT \xff", "\xc0\x80", "\xed\xa0\x80", "\xf4\x90\x80\x80",
                                       "\xe2\x82" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cql_params p;
        msg_params_init(&p);
        cs_buf b;
        cs_buf_init(&b);
        msg_put_query(&b, 4, bad[i], strlen(bad[i]), &p);
        cs_arena a;
        cs_arena_init(&a);
        msg_request m;
        cs_error e;
        cs_error_init(&e);
        cr_assert_eq(msg_request_decode(4, OP_QUERY, b.p, b.len, &a, &m, &e), CS_EUSER, "case %zu", i);
        cr_assert_str_eq(e.msg, "Cannot decode string as UTF8");
        cs_arena_destroy(&a);
        cs_buf_destroy(&b);
    }
    cql_params p;
    msg_params_init(&p);
    cs_buf b;
    cs_buf_init(&b);
    const char *ok = "SELECT '\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80'";
    msg_put_query(&b, 4, ok, strlen(ok), &p);
    cs_arena a;
    cs_arena_init(&a);
    msg_request m;
    decode_ok(4, OP_QUERY, &b, &a, &m);
    cs_arena_destroy(&a);
    cs_buf_destroy(&b);
}

/* Random bodies and random mutations of valid bodies never crash the decoder
 * (run under SANITIZE=address,undefined to catch over-reads); seed printed. */
Test(server_msg, fuzz_request_decoder)
{
    unsigned seed = 12345;
    cr_log_info("seed %u", seed);
    srand(seed);
    static const uint8_t ops[] = { OP_STARTUP, OP_OPTIONS, OP_QUERY, OP_PREPARE, OP_EXECUTE,
                                   OP_BATCH, OP_REGISTER, OP_AUTH_RESPONSE };
    /* Valid seeds to mutate. */
    cs_buf seeds[4];
    for (int i = 0; i < 4; i++)
        cs_buf_init(&seeds[i]);
    cql_value vals[2] = { { (const uint8_t *)"abcd", 4 }, { NULL, CQL_UNSET } };
    cql_params p;
    msg_params_init(&p);
    p.values = vals;
    p.n_values = 2;
    p.page_size = 100;
    p.timestamp = 7;
    msg_put_query(&seeds[0], 4, "SELECT * FROM t WHERE k = ?", 27, &p);
    msg_put_execute(&seeds[1], 4, (const uint8_t *)"0123456789abcdef", 16, NULL, 0, &p);
    cql_batch_item it = { .query = "INSERT INTO t (k) VALUES (?)", .query_len = 28, .values = vals,
                          .n_values = 1 };
    msg_put_batch(&seeds[2], 4, 0, &it, 1, &p);
    msg_kv kv = { "CQL_VERSION", 11, "3.0.0", 5 };
    msg_put_startup(&seeds[3], &kv, 1);
    static const uint8_t seed_ops[] = { OP_QUERY, OP_EXECUTE, OP_BATCH, OP_STARTUP };
    uint8_t buf[512];
    for (int iter = 0; iter < 200000; iter++) {
        size_t n;
        uint8_t op;
        uint8_t v = (uint8_t)(3 + rand() % 3);
        if (iter % 2) {
            n = (size_t)(rand() % 64);
            for (size_t i = 0; i < n; i++)
                buf[i] = (uint8_t)rand();
            op = ops[rand() % (int)sizeof ops];
        } else {
            int s = rand() % 4;
            n = seeds[s].len;
            memcpy(buf, seeds[s].p, n);
            for (int k = 0; k < 1 + rand() % 3; k++)
                buf[rand() % (int)n] = (uint8_t)rand();
            n = (size_t)rand() % (n + 1);
            op = seed_ops[s];
        }
        /* Decode from an exact-size heap copy so over-reads are caught. */
        uint8_t *copy = cs_malloc(n ? n : 1);
        memcpy(copy, buf, n);
        cs_arena a;
        cs_arena_init(&a);
        msg_request m;
        cs_error e;
        cs_error_init(&e);
        int rc = msg_request_decode(v, op, copy, n, &a, &m, &e);
        cr_assert(rc == 0 || (rc == CS_EUSER && e.code == CS_ERR_PROTOCOL) || rc == CS_ENOMEM);
        cs_arena_destroy(&a);
        cs_free(copy);
    }
    for (int i = 0; i < 4; i++)
        cs_buf_destroy(&seeds[i]);
}

/* msg_peek_execute (the request loop's look at the next request): the id and
 * the first positional values of an EXECUTE, v3-v5; -1 for named values and
 * for every truncation that leaves the values unreadable; 0 without values. */
Test(server_msg, peek_execute)
{
    for (uint8_t v = 3; v <= 5; v++) {
        uint8_t id[16], rmid[16];
        memset(id, 0x5a, 16);
        memset(rmid, 0x11, 16);
        cql_value vals[3] = { { (const uint8_t *)"abc", 3 }, { NULL, CQL_NULL }, { (const uint8_t *)"", 0 } };
        cql_params p;
        msg_params_init(&p);
        p.values = vals;
        p.n_values = 3;
        p.page_size = 5000;
        cs_buf b;
        cs_buf_init(&b);
        msg_put_execute(&b, v, id, 16, rmid, 16, &p);
        const uint8_t *pid;
        size_t pid_len;
        cql_value got[2];
        cr_assert_eq(msg_peek_execute(v, b.p, b.len, &pid, &pid_len, got, 2), 2, "v%u", v);
        cr_assert(pid_len == 16 && memcmp(pid, id, 16) == 0);
        cr_assert(got[0].len == 3 && memcmp(got[0].p, "abc", 3) == 0);
        cr_assert_eq(got[1].len, CQL_NULL);
        /* cut anywhere before the second value ends: never more than it read */
        for (size_t cut = 0; cut < b.len; cut++) {
            int n = msg_peek_execute(v, b.p, cut, &pid, &pid_len, got, 2);
            cr_assert(n <= 2, "v%u cut %zu", v, cut);
            if (n > 0)
                cr_assert(got[0].len == 3 && memcmp(got[0].p, "abc", 3) == 0, "v%u cut %zu", v, cut);
        }
        cr_assert_eq(msg_peek_execute(v, b.p, 10, &pid, &pid_len, got, 2), -1);
        /* named values: not read */
        const char *names[3] = { "a", "b", "c" };
        size_t lens[3] = { 1, 1, 1 };
        p.names = names;
        p.name_lens = lens;
        cs_buf_reset(&b);
        msg_put_execute(&b, v, id, 16, rmid, 16, &p);
        cr_assert_eq(msg_peek_execute(v, b.p, b.len, &pid, &pid_len, got, 2), -1);
        /* no values */
        p.names = NULL;
        p.n_values = 0;
        cs_buf_reset(&b);
        msg_put_execute(&b, v, id, 16, rmid, 16, &p);
        cr_assert_eq(msg_peek_execute(v, b.p, b.len, &pid, &pid_len, got, 2), 0);
        cs_buf_destroy(&b);
    }
}
