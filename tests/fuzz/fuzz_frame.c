/*
 * fuzz_frame.c: what a hostile client (or server, for the client side)
 * controls on the wire: the input is a byte stream of native protocol
 * frames, read as server/conn.c reads them.
 *
 * For each complete frame: frame_header_parse, frame_body_decode (lz4, and
 * the compressed ones again as snappy bodies,
 * custom payload, tracing, warnings) with the server's default 16 MiB
 * limit, then for a request msg_request_decode at the frame's version
 * (3, 4 or 5; any other as 4) and opcode, and for an EXECUTE
 * msg_peek_execute.  For a response: msg_error_decode, msg_event_decode,
 * msg_schema_change_decode (the client side: cassette-bench and -tool).
 *
 * Checked beyond "no crash, no sanitizer report":
 *   - a decoding error is a ProtocolException (CS_EUSER, 0x000A) or
 *     CS_ENOMEM, never another code;
 *   - a decoded QUERY/PREPARE/EXECUTE/BATCH re-encoded by the client
 *     encoders (server/msg_client.c) decodes to the same request;
 *   - msg_peek_execute agrees with the full decoding on the id and values;
 *   - a decoded body re-framed with lz4 decodes to the same bytes;
 *   - every cs_malloc is freed (cs_alloc_count back to where it was).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/arena.h"
#include "common/buf.h"
#include "common/err.h"
#include "server/frame.h"
#include "server/msg.h"
#include "tests/fuzz/fuzz_common.h"

#define MAX_FRAME (16u << 20)          /* server/config.c default native_transport_max_frame_size */

#define CHECK(cond, ...) do { if (!(cond)) { fprintf(stderr, "fuzz_frame: check failed: %s: ", #cond); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); abort(); } } while (0)

/* ------------------------------------------------------------ comparisons */

static bool same_bytes(const void *a, size_t al, const void *b, size_t bl)
{
    return al == bl && (al == 0 || memcmp(a, b, al) == 0);
}

static void same_values(const cql_value *a, int na, const cql_value *b, int nb)
{
    CHECK(na == nb, "value count %d vs %d", na, nb);
    for (int i = 0; i < na; i++) {
        CHECK(a[i].len == b[i].len, "value %d length %d vs %d", i, a[i].len, b[i].len);
        if (a[i].len > 0)
            CHECK(memcmp(a[i].p, b[i].p, (size_t)a[i].len) == 0, "value %d bytes", i);
    }
}

static void same_names(const cql_params *a, const cql_params *b)
{
    if (!a->names || !b->names)
        return;
    for (int i = 0; i < a->n_values; i++)
        CHECK(same_bytes(a->names[i], a->name_lens[i], b->names[i], b->name_lens[i]), "name %d", i);
}

/* The parameters as the encoder sees them: absent and "absent-like" (page
 * size <= 0, an empty-but-flagged keyspace...) fields are the same. */
static void same_params(uint8_t opcode, const cql_params *a, const cql_params *b)
{
    CHECK(a->consistency == b->consistency, "consistency");
    CHECK(a->serial_consistency == b->serial_consistency, "serial consistency");
    CHECK(a->timestamp == b->timestamp, "timestamp");
    CHECK(a->now_in_seconds == b->now_in_seconds, "now_in_seconds");
    CHECK((a->keyspace == NULL) == (b->keyspace == NULL), "keyspace presence");
    if (a->keyspace)
        CHECK(strcmp(a->keyspace, b->keyspace) == 0, "keyspace");
    if (opcode == OP_BATCH)
        return;
    same_values(a->values, a->n_values, b->values, b->n_values);
    same_names(a, b);
    CHECK(a->skip_metadata == b->skip_metadata, "skip_metadata");
    CHECK((a->page_size > 0 ? a->page_size : -1) == (b->page_size > 0 ? b->page_size : -1), "page size");
    bool ap = a->paging_state && a->paging_state_len >= 0, bp = b->paging_state && b->paging_state_len >= 0;
    CHECK(ap == bp, "paging state presence");
    if (ap)
        CHECK(same_bytes(a->paging_state, (size_t)a->paging_state_len, b->paging_state,
                         (size_t)b->paging_state_len), "paging state");
}

/* Re-encode a decoded request with the client encoders; decode it again. */
static void round_trip(uint8_t v, const msg_request *m)
{
    cs_buf b;
    cs_buf_init(&b);
    switch (m->opcode) {
    case OP_QUERY:
        msg_put_query(&b, v, m->query, m->query_len, &m->params);
        break;
    case OP_PREPARE:
        msg_put_prepare(&b, v, m->query, m->query_len, m->prepare_keyspace);
        break;
    case OP_EXECUTE:
        msg_put_execute(&b, v, m->id, m->id_len, m->result_metadata_id, m->result_metadata_id_len,
                        &m->params);
        break;
    case OP_BATCH:
        msg_put_batch(&b, v, m->batch_type, m->items, m->n_items, &m->params);
        break;
    default:
        return;
    }
    CHECK(b.err == 0, "encoder error %d", b.err);
    cs_arena a;
    cs_arena_init(&a);
    msg_request m2;
    cs_error e;
    cs_error_init(&e);
    int rc = msg_request_decode(v, m->opcode, b.p, b.len, &a, &m2, &e);
    CHECK(rc == 0, "re-encoded %s v%u does not decode: %d %s", msg_opcode_name(m->opcode), v, rc, e.msg);
    switch (m->opcode) {
    case OP_QUERY:
    case OP_PREPARE:
        CHECK(same_bytes(m->query, m->query_len, m2.query, m2.query_len), "query text");
        if (m->opcode == OP_PREPARE) {
            CHECK((m->prepare_keyspace == NULL) == (m2.prepare_keyspace == NULL), "prepare keyspace");
            break;
        }
        same_params(m->opcode, &m->params, &m2.params);
        break;
    case OP_EXECUTE:
        CHECK(same_bytes(m->id, m->id_len, m2.id, m2.id_len), "execute id");
        same_params(m->opcode, &m->params, &m2.params);
        break;
    case OP_BATCH:
        CHECK(m->batch_type == m2.batch_type, "batch type");
        CHECK(m->n_items == m2.n_items, "batch size");
        for (int i = 0; i < m->n_items; i++) {
            const cql_batch_item *x = &m->items[i], *y = &m2.items[i];
            CHECK(x->prepared == y->prepared, "item %d kind", i);
            if (x->prepared)
                CHECK(same_bytes(x->id, x->id_len, y->id, y->id_len), "item %d id", i);
            else
                CHECK(same_bytes(x->query, x->query_len, y->query, y->query_len), "item %d query", i);
            same_values(x->values, x->n_values, y->values, y->n_values);
        }
        same_params(m->opcode, &m->params, &m2.params);
        break;
    }
    cs_arena_destroy(&a);
    cs_buf_destroy(&b);
}

/* msg_peek_execute must agree with what msg_request_decode made of it. */
static void peek_agrees(uint8_t v, const uint8_t *body, size_t len, const msg_request *m, int rc)
{
    const uint8_t *id;
    size_t id_len;
    cql_value vals[CQL_PREFETCH_VALUES];
    int k = msg_peek_execute(v, body, len, &id, &id_len, vals, CQL_PREFETCH_VALUES);
    CHECK(k >= -1 && k <= CQL_PREFETCH_VALUES, "peek returned %d", k);
    if (k < 0 || rc != 0)
        return;
    CHECK(same_bytes(id, id_len, m->id, m->id_len), "peeked id");
    CHECK(k <= m->params.n_values, "peeked %d values of %d", k, m->params.n_values);
    for (int i = 0; i < k; i++) {
        /* v3 reads any negative length as null; the peek keeps it. */
        int32_t want = m->params.values[i].len;
        int32_t got = vals[i].len < 0 && v < 4 ? CQL_NULL : vals[i].len;
        CHECK(got == want, "peeked value %d length %d vs %d", i, got, want);
        if (want > 0)
            CHECK(memcmp(vals[i].p, m->params.values[i].p, (size_t)want) == 0, "peeked value %d", i);
    }
}

/* ------------------------------------------------------------ one frame */

static void reframe(const frame_header *h, const frame_body *fb)
{
    /* The message bytes, framed again with lz4 (as the server's replies
     * are), must decode to the same bytes. */
    cs_buf out;
    cs_buf_init(&out);
    frame_writer w;
    frame_begin(&w, &out, h->version, false, h->stream, h->opcode, 0, true, NULL, NULL, 0);
    cs_buf_put(&out, fb->msg, fb->msg_len);
    frame_end(&w);
    CHECK(out.err == 0, "frame_end %d", out.err);
    frame_header h2;
    CHECK(frame_header_parse(out.p, &h2) == 0, "re-framed header");
    CHECK(h2.length == out.len - FRAME_HEADER_LEN, "re-framed length");
    frame_body fb2;
    int rc = frame_body_decode(&h2, out.p + FRAME_HEADER_LEN, h2.length, MAX_FRAME, &fb2);
    CHECK(rc == 0, "re-framed body: %d", rc);
    CHECK(same_bytes(fb->msg, fb->msg_len, fb2.msg, fb2.msg_len), "re-framed message bytes");
    frame_body_destroy(&fb2);
    cs_buf_destroy(&out);
}

static void request(const frame_header *h, const frame_body *fb)
{
    uint8_t v = h->version >= 3 && h->version <= 5 ? h->version : 4;
    cs_arena a;
    cs_arena_init(&a);
    msg_request m;
    cs_error e;
    cs_error_init(&e);
    int rc = msg_request_decode(v, h->opcode, fb->msg, fb->msg_len, &a, &m, &e);
    CHECK(rc == 0 || (rc == CS_EUSER && e.code == CS_ERR_PROTOCOL && e.msg[0]) || rc == CS_ENOMEM,
          "%s v%u: rc %d code %d", msg_opcode_name(h->opcode), v, rc, e.code);
    if (h->opcode == OP_EXECUTE)
        peek_agrees(v, fb->msg, fb->msg_len, &m, rc);
    if (rc == 0) {
        if (h->opcode == OP_STARTUP) {
            size_t n;
            (void)msg_startup_get(&m, "CQL_VERSION", &n);
            (void)msg_startup_get(&m, "COMPRESSION", &n);
        }
        round_trip(v, &m);
    }
    cs_arena_destroy(&a);
}

static void response(const frame_header *h, const frame_body *fb)
{
    uint8_t v = h->version >= 3 && h->version <= 5 ? h->version : 4;
    cs_error e;
    cql_schema_change c;
    switch (h->opcode) {
    case OP_ERROR:
        (void)msg_error_decode(v, fb->msg, fb->msg_len, &e);
        CHECK(memchr(e.msg, 0, sizeof e.msg) != NULL, "error message not terminated");
        break;
    case OP_EVENT:
        (void)msg_event_decode(fb->msg, fb->msg_len, &c);
        break;
    case OP_RESULT:
        if (fb->msg_len >= 4 && cs_be32(fb->msg) == RESULT_SCHEMA_CHANGE)
            (void)msg_schema_change_decode(fb->msg + 4, fb->msg_len - 4, &c);
        break;
    default:
        break;
    }
    for (int i = 0; i < fb->n_warnings; i++)
        (void)strlen(fb->warnings[i]);
}

/* The bytes of one frame's body in a heap block of their exact size, so an
 * over-read past the body is an ASan report even mid-input. */
static void one_frame(const frame_header *h, const uint8_t *body)
{
    uint8_t *copy = malloc(h->length ? h->length : 1);
    memcpy(copy, body, h->length);
    frame_body fb;
    int rc = frame_body_decode(h, copy, h->length, MAX_FRAME, &fb);
    CHECK(rc == 0 || rc == CS_ECORRUPT || rc == CS_ETOOBIG || rc == CS_ENOMEM, "body rc %d", rc);
    if (rc == 0) {
        CHECK(fb.msg_len <= MAX_FRAME, "message of %zu bytes", fb.msg_len);
        if (h->response)
            response(h, &fb);
        else
            request(h, &fb);
        reframe(h, &fb);
    }
    frame_body_destroy(&fb);
    /* the same bytes as a snappy connection's body (raw snappy) */
    if (h->flags & FRAME_FLAG_COMPRESSION) {
        rc = frame_body_decode_with(h, copy, h->length, MAX_FRAME, FRAME_COMP_SNAPPY, &fb);
        CHECK(rc == 0 || rc == CS_ECORRUPT || rc == CS_ETOOBIG || rc == CS_ENOMEM, "snappy body rc %d", rc);
        if (rc == 0)
            CHECK(fb.msg_len <= MAX_FRAME, "snappy message of %zu bytes", fb.msg_len);
        frame_body_destroy(&fb);
    }
    free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t base = cs_alloc_count();
    size_t off = 0;
    while (size - off >= FRAME_HEADER_LEN) {
        frame_header h;
        if (frame_header_parse(data + off, &h) != 0)
            break;                               /* the server closes the connection */
        if ((uint64_t)h.length + FRAME_HEADER_LEN > MAX_FRAME)
            break;                               /* skipped unread (conn.c invariant 5) */
        if (h.length > size - off - FRAME_HEADER_LEN)
            break;                               /* incomplete: waits for more */
        one_frame(&h, data + off + FRAME_HEADER_LEN);
        off += FRAME_HEADER_LEN + h.length;
    }
    CHECK(cs_alloc_count() == base, "%zu allocations not freed", cs_alloc_count() - base);
    return 0;
}

/* ------------------------------------------------------------ seeds */

static void seed_frame(const char *name, uint8_t v, uint8_t opcode, uint8_t flags, bool response,
                       bool compress, const cs_buf *body)
{
    cs_buf out;
    cs_buf_init(&out);
    frame_writer w;
    frame_begin(&w, &out, v, response, 1, opcode, flags, compress, NULL, NULL, 0);
    cs_buf_put(&out, body->p, body->len);
    frame_end(&w);
    char nm[128];
    snprintf(nm, sizeof nm, "%s-v%u%s", name, v, compress ? "-lz4" : "");
    fz_seed(nm, out.p, out.len);
    cs_buf_destroy(&out);
}

static void write_seeds(void)
{
    static const uint8_t id[16] = "0123456789abcdef";
    cql_value vals[3] = { { (const uint8_t *)"abcd", 4 }, { NULL, CQL_NULL }, { NULL, CQL_UNSET } };
    const char *names[3] = { "k", "v", "w" };
    size_t name_lens[3] = { 1, 1, 1 };
    for (uint8_t v = 3; v <= 5; v++)
        for (int z = 0; z < 2; z++) {
            bool lz = z == 1;
            cs_buf b;
            cs_buf_init(&b);
            msg_kv kv[2] = { { "CQL_VERSION", 11, "3.0.0", 5 }, { "COMPRESSION", 11, "lz4", 3 } };
            msg_put_startup(&b, kv, 2);
            seed_frame("startup", v, OP_STARTUP, 0, false, lz, &b);
            cs_buf_reset(&b);
            seed_frame("options", v, OP_OPTIONS, 0, false, lz, &b);
            cql_params p;
            msg_params_init(&p);
            p.values = vals;
            p.n_values = 3;
            p.page_size = 100;
            p.paging_state = (const uint8_t *)"\x01\x02";
            p.paging_state_len = 2;
            p.serial_consistency = 9;
            p.timestamp = 12345;
            p.skip_metadata = true;
            if (v >= 5) { p.keyspace = "ks"; p.now_in_seconds = 77; }
            msg_put_query(&b, v, "SELECT * FROM ks.t WHERE k = ?", 30, &p);
            seed_frame("query", v, OP_QUERY, 0, false, lz, &b);
            cs_buf_reset(&b);
            p.names = names;
            p.name_lens = name_lens;
            msg_put_query(&b, v, "INSERT INTO t (k, v, w) VALUES (:k, :v, :w)", 43, &p);
            seed_frame("query-names", v, OP_QUERY, FRAME_FLAG_TRACING, false, lz, &b);
            cs_buf_reset(&b);
            msg_put_prepare(&b, v, "SELECT * FROM t WHERE k = ?", 27, v >= 5 ? "ks" : NULL);
            seed_frame("prepare", v, OP_PREPARE, 0, false, lz, &b);
            cs_buf_reset(&b);
            p.names = NULL;
            p.name_lens = NULL;
            msg_put_execute(&b, v, id, 16, id, 16, &p);
            seed_frame("execute", v, OP_EXECUTE, 0, false, lz, &b);
            cs_buf_reset(&b);
            cql_batch_item it[2] = {
                { .query = "INSERT INTO t (k) VALUES (?)", .query_len = 28, .values = vals, .n_values = 2 },
                { .prepared = true, .id = id, .id_len = 16, .values = vals, .n_values = 1 },
            };
            msg_put_batch(&b, v, 1, it, 2, &p);
            seed_frame("batch", v, OP_BATCH, 0, false, lz, &b);
            cs_buf_reset(&b);
            it[0].names = it[1].names = names;
            it[0].name_lens = it[1].name_lens = name_lens;
            msg_put_batch(&b, v, 0, it, 2, &p);
            seed_frame("batch-names", v, OP_BATCH, 0, false, lz, &b);
            cs_buf_reset(&b);
            const char *ev[3] = { "SCHEMA_CHANGE", "STATUS_CHANGE", "TOPOLOGY_CHANGE" };
            msg_put_register(&b, ev, 3);
            seed_frame("register", v, OP_REGISTER, 0, false, lz, &b);
            cs_buf_reset(&b);
            msg_put_auth_response(&b, (const uint8_t *)"\0cassandra\0cassandra", 20);
            seed_frame("auth", v, OP_AUTH_RESPONSE, 0, false, lz, &b);
            cs_buf_reset(&b);
            /* custom payload before a QUERY */
            cs_buf_put_u16(&b, 1);
            cs_buf_put_string(&b, "key");
            cs_buf_put_bytes(&b, "val", 3);
            msg_params_init(&p);
            msg_put_query(&b, v, "SELECT key FROM system.local", 28, &p);
            seed_frame("query-payload", v, OP_QUERY, FRAME_FLAG_CUSTOM_PAYLOAD, false, lz, &b);
            cs_buf_reset(&b);
            /* responses */
            cs_error e;
            cs_error_init(&e);
            cs_error_set(&e, CS_ERR_WRITE_FAILURE, "Operation failed");
            snprintf(e.failure_endpoint, sizeof e.failure_endpoint, "127.0.0.1");
            msg_put_error(&b, v, &e);
            seed_frame("error", v, OP_ERROR, 0, true, lz, &b);
            cs_buf_reset(&b);
            cs_error_init(&e);
            cs_error_set(&e, CS_ERR_FUNCTION_FAILURE, "failed");
            snprintf(e.keyspace, sizeof e.keyspace, "ks");
            snprintf(e.arg_types, sizeof e.arg_types, "int, map<int, text>");
            msg_put_error(&b, v, &e);
            seed_frame("error-func", v, OP_ERROR, 0, true, lz, &b);
            cs_buf_reset(&b);
            cql_schema_change c;
            memset(&c, 0, sizeof c);
            snprintf(c.change_type, sizeof c.change_type, "CREATED");
            snprintf(c.target, sizeof c.target, "FUNCTION");
            snprintf(c.keyspace, sizeof c.keyspace, "ks");
            snprintf(c.name, sizeof c.name, "f");
            snprintf(c.arg_types, sizeof c.arg_types, "int, text");
            msg_put_event_schema_change(&b, &c);
            seed_frame("event", v, OP_EVENT, 0, true, lz, &b);
            cs_buf_reset(&b);
            cs_buf_put_u32(&b, RESULT_SCHEMA_CHANGE);
            msg_put_schema_change(&b, &c);
            seed_frame("result-schema", v, OP_RESULT, 0, true, lz, &b);
            cs_buf_destroy(&b);
        }
    /* a response with tracing id and warnings */
    cs_buf out;
    cs_buf_init(&out);
    frame_writer w;
    const char *warn[2] = { "Aggregation query used without partition key", "w2" };
    frame_begin(&w, &out, 4, true, 3, OP_RESULT, 0, true, id, warn, 2);
    cs_buf_put_u32(&out, RESULT_VOID);
    frame_end(&w);
    fz_seed("result-warnings-v4-lz4", out.p, out.len);
    cs_buf_destroy(&out);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fz_quiet();
    if (fz_seed_dir()) {
        write_seeds();
        exit(0);
    }
    return 0;
}
