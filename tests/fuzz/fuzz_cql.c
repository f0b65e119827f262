/*
 * fuzz_cql.c: CQL requests against a real CQL context and storage engine
 * (in a tmpfs directory) holding a small schema (fuzz_cql_stmts.h): every
 * table shape, every type, collections, a UDT, counters, an index, a view.
 *
 * The input is a sequence of commands, each [u8 op][u16 length][bytes]:
 *   op % 5 == 0  QUERY: the bytes are the statement text (page size from
 *                op / 5: none, 1, 2 or 100)
 *   op % 5 == 1  PREPARE: the bytes are the statement text
 *   op % 5 == 2  EXECUTE: [u8 which][<query_parameters> of v4]: statement
 *                `which` of the prepared ones (the setup's, then the
 *                input's), its values and options decoded by server/msg.c
 *   op % 5 == 3  QUERY as a v4 QUERY body (text, then <query_parameters>)
 *   op % 5 == 4  BATCH as a v4 BATCH body; a prepared item's id is
 *                replaced by prepared statement id[0] % count
 * as conn.c would hand them to cql/exec.h after decoding a frame.  A
 * session starts each input at protocol v4 in keyspace ks.
 *
 * Checked: each request returns 0 with a RESULT body that parses (kinds 1
 * to 5, metadata, every row value valid for its column type, nothing
 * after), or CS_EUSER with an error code other than ServerError (0x0000)
 * and a message.  When an input changed the schema (or every input with
 * CASSETTE_FUZZ_RESET=1), or every 256 inputs, the context and engine are
 * closed and every cs_malloc must have been freed, then rebuilt.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/arena.h"
#include "common/buf.h"
#include "common/err.h"
#include "common/vfs.h"
#include "cql/exec.h"
#include "server/frame.h"
#include "server/msg.h"
#include "storage/storage.h"
#include "tests/fuzz/fuzz_common.h"
#include "tests/fuzz/fuzz_cql_stmts.h"

#define CHECK(cond, ...) do { if (!(cond)) { fprintf(stderr, "fuzz_cql: check failed: %s: ", #cond); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); abort(); } } while (0)

#define MAX_PREPARED 64

static const char *g_dir;
static st_engine *g_eng;
static cql_ctx *g_ctx;
static cql_session g_sess;
static size_t g_alloc0;
static uint8_t g_ids[MAX_PREPARED][16];
static int g_n_ids, g_n_setup_ids;
static bool g_schema_changed;
static unsigned g_inputs;
static bool g_reset_each;
static const char *g_cur;            /* the request being run, for messages */
static const char *g_text;           /* its statement text (may be NULL) */
static size_t g_text_len;
static bool g_verbose;               /* CASSETTE_FUZZ_VERBOSE=1: print each request's outcome */
static uint8_t g_ps[4096];           /* the paging state of the last Rows result */
static int32_t g_ps_len;             /* -1: none (no more pages) */

/* ------------------------------------------------------------ result checks */

/* Check a RESULT body (fz_check_result); returns the prepared id (kind 4)
 * in id, and keeps a Rows result's paging state in g_ps. */
static void check_result(const cql_result *res, uint8_t id[16], bool *have_id)
{
    CHECK(res->body.err == 0, "%s: result body error %d", g_cur, res->body.err);
    static fz_result fr;
    fz_check_result(g_cur, 4, res->body.p, res->body.len, &fr);
    if (fr.have_id) {
        memcpy(id, fr.id, 16);
        *have_id = true;
    }
    if (fr.ps_len >= 0) {
        memcpy(g_ps, fr.ps, (size_t)fr.ps_len);
        g_ps_len = fr.ps_len;
    }
    for (int i = 0; i < res->n_warnings; i++)
        CHECK(res->warnings[i] != NULL, "%s: warning %d", g_cur, i);
}

static void check_outcome(int rc, const cs_error *e, const cql_result *res, uint8_t id[16], bool *have_id)
{
    if (g_verbose)
        fprintf(stderr, "%s %.*s -> %s\n", g_cur, (int)(g_text_len < 300 ? g_text_len : 300),
                g_text ? g_text : "", rc == 0 ? "ok" : e->msg);
    if (rc == 0) {
        check_result(res, id, have_id);
        if (res->schema_changed)
            g_schema_changed = true;
        return;
    }
    CHECK(rc == CS_EUSER, "%s: returned %d (%s) instead of a user error", g_cur, rc, cs_strerror(rc));
    CHECK(e->code > 0 && e->msg[0], "%s: error code %d: %s", g_cur, e->code, e->msg);
}

/* ------------------------------------------------------------ the context */

static int run_query_once(const char *q, size_t n, const cql_params *p, uint8_t id[16], bool *have_id)
{
    cql_result res;
    cql_result_init(&res);
    cs_error e;
    cs_error_init(&e);
    g_text = q;
    g_text_len = n;
    int rc = cql_query(g_ctx, &g_sess, q, n, p, &res, &e);
    check_outcome(rc, &e, &res, id, have_id);
    cql_result_destroy(&res);
    return rc;
}

/* Run a request; while its result says there are more pages, fetch up to
 * three more with the paging state it returned (as a driver does). */
typedef int (*request_fn)(const void *arg, const cql_params *p);
static void with_pages(request_fn fn, const void *arg, const cql_params *p)
{
    g_ps_len = -1;
    int rc = fn(arg, p);
    cql_params next = *p;
    for (int page = 0; page < 3 && rc == 0 && g_ps_len >= 0; page++) {
        static uint8_t state[sizeof g_ps];
        memcpy(state, g_ps, (size_t)g_ps_len);
        next.paging_state = state;
        next.paging_state_len = g_ps_len;
        g_ps_len = -1;
        rc = fn(arg, &next);
    }
}

typedef struct query_arg { const char *q; size_t n; } query_arg;
static int query_fn(const void *arg, const cql_params *p)
{
    const query_arg *a = arg;
    uint8_t id[16];
    bool have = false;
    return run_query_once(a->q, a->n, p, id, &have);
}

static int run_query(const char *q, size_t n, const cql_params *p, uint8_t id[16], bool *have_id)
{
    if (p->page_size <= 0)
        return run_query_once(q, n, p, id, have_id);
    query_arg a = { q, n };
    with_pages(query_fn, &a, p);
    return 0;
}

static void ctx_open(void)
{
    g_alloc0 = cs_alloc_count();
    char d[300], c[300];
    snprintf(d, sizeof d, "%s/data", g_dir);
    snprintf(c, sizeof c, "%s/commitlog", g_dir);
    vfs_mkdirs(d);
    vfs_mkdirs(c);
    st_config cfg;
    st_config_defaults(&cfg);
    cfg.data_dir = d;
    cfg.commitlog_dir = c;
    cfg.segment_size = 1 << 20;
    cfg.memtable_space = 4 << 20;
    cfg.block_cache_size = 1 << 20;
    CHECK(st_engine_open(&cfg, &g_eng) == 0, "engine open");
    cql_config cc;
    cql_config_defaults(&cc);
    CHECK(cql_ctx_new(g_eng, &cc, &g_ctx) == 0, "cql context");
    memset(&g_sess, 0, sizeof g_sess);
    g_sess.protocol_version = 4;
    cql_params p;
    msg_params_init(&p);
    g_cur = "setup";
    for (size_t i = 0; i < sizeof fz_schema / sizeof *fz_schema; i++) {
        uint8_t id[16];
        bool have = false;
        CHECK(run_query(fz_schema[i], strlen(fz_schema[i]), &p, id, &have) == 0, "setup: %s", fz_schema[i]);
    }
    while (cql_background_step(g_ctx) == 1) {}
    g_n_ids = 0;
    for (size_t i = 0; i < sizeof fz_prepared / sizeof *fz_prepared; i++) {
        cql_result res;
        cql_result_init(&res);
        cs_error e;
        cs_error_init(&e);
        int rc = cql_prepare(g_ctx, &g_sess, fz_prepared[i], strlen(fz_prepared[i]), NULL, &res, &e);
        CHECK(rc == 0, "setup: prepare %s: %s", fz_prepared[i], e.msg);
        bool have = false;
        check_result(&res, g_ids[g_n_ids], &have);
        CHECK(have, "setup: no id");
        g_n_ids++;
        cql_result_destroy(&res);
    }
    g_n_setup_ids = g_n_ids;
}

static void ctx_close(void)
{
    cql_ctx_free(g_ctx);
    st_engine_close(g_eng, false);
    g_ctx = NULL;
    g_eng = NULL;
    fz_empty_dir(g_dir);
    CHECK(cs_alloc_count() == g_alloc0, "%zu allocations not freed by the CQL context and engine",
          cs_alloc_count() - g_alloc0);
}

/* ------------------------------------------------------------ commands */

static void cmd_query_text(const uint8_t *b, size_t n, uint8_t op)
{
    static const int32_t pages[] = { -1, 1, 2, 100 };
    cql_params p;
    msg_params_init(&p);
    p.page_size = pages[(op / 5) % 4];
    uint8_t id[16];
    bool have = false;
    g_cur = "QUERY";
    run_query((const char *)b, n, &p, id, &have);
}

static void add_id(const uint8_t id[16])
{
    if (g_n_ids < MAX_PREPARED)
        memcpy(g_ids[g_n_ids++], id, 16);
    else
        memcpy(g_ids[g_n_setup_ids + (g_inputs % (MAX_PREPARED - g_n_setup_ids))], id, 16);
}

static void cmd_prepare(const uint8_t *b, size_t n)
{
    cql_result res;
    cql_result_init(&res);
    cs_error e;
    cs_error_init(&e);
    g_cur = "PREPARE";
    g_text = (const char *)b;
    g_text_len = n;
    int rc = cql_prepare(g_ctx, &g_sess, (const char *)b, n, NULL, &res, &e);
    uint8_t id[16];
    bool have = false;
    check_outcome(rc, &e, &res, id, &have);
    if (rc == 0) {
        CHECK(have, "PREPARE: no id");
        add_id(id);
    }
    cql_result_destroy(&res);
}

/* Decode a v4 request body as the server does; 0 or a protocol error. */
static int decode(uint8_t op, const uint8_t *b, size_t n, cs_arena *a, msg_request *m)
{
    cs_error e;
    cs_error_init(&e);
    int rc = msg_request_decode(4, op, b, n, a, m, &e);
    CHECK(rc == 0 || rc == CS_EUSER, "decode: %d", rc);
    return rc;
}

static int execute_fn(const void *arg, const cql_params *p)
{
    const msg_request *m = arg;
    cql_result res;
    cql_result_init(&res);
    cs_error e;
    cs_error_init(&e);
    g_cur = "EXECUTE";
    g_text = NULL;
    g_text_len = 0;
    int rc = cql_execute(g_ctx, &g_sess, m->id, m->id_len, p, &res, &e);
    uint8_t id[16];
    bool have = false;
    check_outcome(rc, &e, &res, id, &have);
    cql_result_destroy(&res);
    return rc;
}

static void cmd_execute(const uint8_t *b, size_t n)
{
    if (n < 1)
        return;
    const uint8_t *id = g_ids[b[0] % g_n_ids];
    /* EXECUTE body: [short bytes] id, then the query parameters. */
    uint8_t *body = malloc(n + 17);
    body[0] = 0;
    body[1] = 16;
    memcpy(body + 2, id, 16);
    memcpy(body + 18, b + 1, n - 1);
    cs_arena a;
    cs_arena_init(&a);
    msg_request m;
    if (decode(OP_EXECUTE, body, n + 17, &a, &m) == 0)
        with_pages(execute_fn, &m, &m.params);
    cs_arena_destroy(&a);
    free(body);
}

static void cmd_query_body(const uint8_t *b, size_t n)
{
    cs_arena a;
    cs_arena_init(&a);
    msg_request m;
    if (decode(OP_QUERY, b, n, &a, &m) == 0) {
        uint8_t id[16];
        bool have = false;
        g_cur = "QUERY body";
        run_query(m.query, m.query_len, &m.params, id, &have);
    }
    cs_arena_destroy(&a);
}

static void cmd_batch(const uint8_t *b, size_t n)
{
    cs_arena a;
    cs_arena_init(&a);
    msg_request m;
    if (decode(OP_BATCH, b, n, &a, &m) == 0) {
        for (int i = 0; i < m.n_items; i++) {
            cql_batch_item *it = &m.items[i];
            if (it->prepared) {
                uint8_t k = it->id_len ? it->id[0] : 0;
                it->id = g_ids[k % g_n_ids];
                it->id_len = 16;
            }
        }
        cql_result res;
        cql_result_init(&res);
        cs_error e;
        cs_error_init(&e);
        g_cur = "BATCH";
        g_text = m.n_items && !m.items[0].prepared ? m.items[0].query : NULL;
        g_text_len = g_text ? m.items[0].query_len : 0;
        int rc = cql_batch(g_ctx, &g_sess, m.batch_type, m.items, m.n_items, &m.params, &res, &e);
        uint8_t id[16];
        bool have = false;
        check_outcome(rc, &e, &res, id, &have);
        cql_result_destroy(&res);
    }
    cs_arena_destroy(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    memset(&g_sess, 0, sizeof g_sess);
    g_sess.protocol_version = 4;
    snprintf(g_sess.keyspace, sizeof g_sess.keyspace, "ks");
    g_schema_changed = false;
    fz_in in = { data, size, 0 };
    int cmds = 0;
    while (fz_left(&in) > 0 && cmds++ < 64) {
        uint8_t op = fz_u8(&in);
        size_t n;
        const uint8_t *p = fz_chunk(&in, &n);
        /* An exact-size copy: over-reads of a request's bytes are caught. */
        uint8_t *b = malloc(n ? n : 1);
        memcpy(b, p, n);
        switch (op % 5) {
        case 0: cmd_query_text(b, n, op); break;
        case 1: cmd_prepare(b, n); break;
        case 2: cmd_execute(b, n); break;
        case 3: cmd_query_body(b, n); break;
        default: cmd_batch(b, n); break;
        }
        free(b);
    }
    for (int i = 0; i < 64 && cql_background_step(g_ctx) == 1; i++) {}
    if (g_schema_changed || g_reset_each || ++g_inputs % 256 == 0) {
        ctx_close();
        ctx_open();
    }
    return 0;
}

/* ------------------------------------------------------------ seeds */

static void put_cmd(cs_buf *b, uint8_t op, const void *p, size_t n)
{
    cs_buf_put_u8(b, op);
    cs_buf_put_u16(b, (uint16_t)n);
    cs_buf_put(b, p, n);
}

static void seed_buf(const char *name, int i, cs_buf *b)
{
    char nm[64];
    snprintf(nm, sizeof nm, "%s-%03d", name, i);
    fz_seed(nm, b->p, b->len);
    cs_buf_reset(b);
}

/* The <query_parameters> of an EXECUTE with values vals[0..n). */
static void put_exec(cs_buf *b, int which, const cql_value *vals, int n, int32_t page)
{
    cs_buf body;
    cs_buf_init(&body);
    cs_buf_put_u8(&body, (uint8_t)which);
    cql_params p;
    msg_params_init(&p);
    p.values = (cql_value *)vals;
    p.n_values = n;
    p.page_size = page;
    msg_put_query_params(&body, 4, &p);
    put_cmd(b, 2, body.p, body.len);
    cs_buf_destroy(&body);
}

#define V(s) { (const uint8_t *)(s), (int32_t)(sizeof(s) - 1) }
#define NUL { NULL, CQL_NULL }

static void write_seeds(void)
{
    cs_buf b;
    cs_buf_init(&b);
    int k = 0;
    for (size_t i = 0; i < sizeof fz_statements / sizeof *fz_statements; i++) {
        put_cmd(&b, (uint8_t)(i % 3 == 0 ? 5 : 0), fz_statements[i], strlen(fz_statements[i]));
        seed_buf("query", k++, &b);
    }
    for (size_t i = 0; i < sizeof fz_prepared / sizeof *fz_prepared; i++) {
        put_cmd(&b, 1, fz_prepared[i], strlen(fz_prepared[i]));
        seed_buf("prepare", (int)i, &b);
    }
    /* EXECUTE of each setup statement with plausible values. */
    const cql_value t_ins[] = { V("\0\0\0\x05"), V("\0\0\0\x01"), V("txt"),
                                V("\0\0\0\x02\0\0\0\x04\0\0\0\x01\0\0\0\x04\0\0\0\x02"),
                                V("\0\0\0\x01\0\0\0\x01m\0\0\0\x04\0\0\0\x07"), V("\0\0\0\x01\0\0\0\x01\xab"),
                                V("\0\0\0\x09"), V("\0\0\0\x64"), V("\0\0\0\0\0\0\0\x10") };
    put_exec(&b, 0, t_ins, 9, -1);
    seed_buf("execute", 0, &b);
    const cql_value t_sel[] = { V("\0\0\0\x01"), V("\0\0\0\0"), V("\0\0\0\x0a") };
    put_exec(&b, 1, t_sel, 3, 1);
    put_exec(&b, 1, t_sel, 3, -1);
    seed_buf("execute", 1, &b);
    const cql_value ty_ins[] = {
        V("key"), V("ascii"), V("\0\0\0\0\0\0\0\x2a"), V("\xca\xfe"), V("\x01"),
        V("\0\0\0\x02\x01\x23"), V("\x3f\xf8\0\0\0\0\0\0"), V("\x02\x04\x06"), V("\x3f\xc0\0\0"),
        V("\x7f\0\0\x01"), V("\0\0\0\x07"), V("\0\x08"), V("\x09"), V("\0\0\x01\x6f\x5e\x66\xe8\0"),
        V("\x11\x11\x11\x11\x22\x22\x11\xe1\x80\x00\x00\x00\x00\x00\x00\x01"),
        V("\x11\x11\x11\x11\x22\x22\x41\xe1\x80\x00\x00\x00\x00\x00\x00\x01"), V("\x01\x00\x00"),
        V("\x80\x00\x4d\xc1"), V("\0\0\x0b\x6c\x4a\x1a\x08\0"),
        V("\0\0\0\x04\0\0\0\x01\0\0\0\x01z"), V("\0\0\0\x01\0\0\0\x04\0\0\0\x05"),
        V("\0\0\0\x04\0\0\0\x01\0\0\0\x01q\0\0\0\x04\0\0\0\0"),
        V("\0\0\0\x01\0\0\0\x04\0\0\0\x01\0\0\0\x0b\0\0\0\x01\0\0\0\x03" "abc"),
    };
    put_exec(&b, 2, ty_ins, 23, -1);
    const cql_value ty_sel[] = { V("key") };
    put_exec(&b, 3, ty_sel, 1, -1);
    seed_buf("execute", 2, &b);
    const cql_value t_upd[] = { V("\0\0\0\x01\0\0\0\x04\0\0\0\x03"), V("k"), V("\0\0\0\x05"),
                                V("\0\0\0\x01\0\0\0\x01\x01"), V("new"), V("\0\0\0\x01"), V("\0\0\0\x01"),
                                V("a") };
    put_exec(&b, 4, t_upd, 8, -1);
    seed_buf("execute", 3, &b);
    const cql_value w_sel[] = { V("\0\0\0\x01"), V("x"), V("\0\0\0\0\0\0\0\0"),
                                V("\0\0\x01\x6f\x5e\x66\xe8\0"), V("\0\0\0\x05") };
    put_exec(&b, 5, w_sel, 5, 2);
    const cql_value cn[] = { V("\0\0\0\0\0\0\0\x03"), V("\0\0\0\x01") };
    put_exec(&b, 6, cn, 2, -1);
    const cql_value del[] = { V("\0\0\0\0"), V("x"), V("\0\0\0\x01"), V("\0\0\0\x01") };
    put_exec(&b, 7, del, 4, -1);
    seed_buf("execute", 4, &b);
    const cql_value tok[] = { V("\x80\0\0\0\0\0\0\0"), V("a") };
    put_exec(&b, 8, tok, 2, 1);
    const cql_value jin[] = { V("\0\0\0\x02\0\0\0\x01r\0\0\0\x03key") };
    put_exec(&b, 9, jin, 1, -1);
    const cql_value json[] = { V("{\"k\": \"j\", \"n\": 3, \"fl\": [1, 2], \"ud\": {\"x\": 1}, \"du\": \"1h\"}") };
    put_exec(&b, 10, json, 1, -1);
    seed_buf("execute", 5, &b);
    const cql_value named[] = { V("\0\0\0\x01"), V("\0\0\0\x02\0\0\0\x04\0\0\0\x01\0\0\0\x04\0\0\0\x02") };
    put_exec(&b, 11, named, 2, -1);
    const cql_value mv[] = { V("a") };
    put_exec(&b, 12, mv, 1, 1);
    const cql_value agg[] = { V("\0\0\0\x01") };
    put_exec(&b, 13, agg, 1, -1);
    seed_buf("execute", 6, &b);
    /* EXECUTE with named values, through the wire layout. */
    {
        cs_buf body;
        cs_buf_init(&body);
        cs_buf_put_u8(&body, 11);
        cql_params p;
        msg_params_init(&p);
        const char *names[2] = { "key", "cs" };
        size_t nl[2] = { 3, 2 };
        p.values = (cql_value *)named;
        p.n_values = 2;
        p.names = names;
        p.name_lens = nl;
        p.serial_consistency = 9;
        p.timestamp = 5;
        msg_put_query_params(&body, 4, &p);
        put_cmd(&b, 2, body.p, body.len);
        cs_buf_destroy(&body);
        seed_buf("execute", 7, &b);
    }
    /* QUERY bodies with values and paging. */
    {
        cs_buf body;
        cs_buf_init(&body);
        cql_params p;
        msg_params_init(&p);
        p.values = (cql_value *)t_sel;
        p.n_values = 3;
        p.page_size = 1;
        p.paging_state = (const uint8_t *)"\0\x04\0\0\0\x01\0";
        p.paging_state_len = 7;
        const char *q = fz_prepared[1];
        msg_put_query(&body, 4, q, strlen(q), &p);
        put_cmd(&b, 3, body.p, body.len);
        cs_buf_reset(&body);
        msg_params_init(&p);
        p.page_size = 1;
        msg_put_query(&body, 4, "SELECT * FROM t", 15, &p);
        put_cmd(&b, 3, body.p, body.len);
        seed_buf("query-body", 0, &b);
        /* BATCH: a text item and a prepared one. */
        cs_buf_reset(&body);
        uint8_t pid[16] = { 0 };
        cql_batch_item it[2] = {
            { .query = "INSERT INTO t (k, c, v) VALUES (?, ?, ?)", .query_len = 40,
              .values = (cql_value *)t_ins, .n_values = 3 },
            { .prepared = true, .id = pid, .id_len = 16, .values = (cql_value *)t_ins, .n_values = 9 },
        };
        msg_params_init(&p);
        msg_put_batch(&body, 4, 0, it, 2, &p);
        put_cmd(&b, 4, body.p, body.len);
        cs_buf_reset(&body);
        pid[0] = 6;
        it[1].values = (cql_value *)cn;
        it[1].n_values = 2;
        msg_put_batch(&body, 4, 2, &it[1], 1, &p);
        put_cmd(&b, 4, body.p, body.len);
        seed_buf("batch", 0, &b);
        cs_buf_destroy(&body);
    }
    /* PREPARE then EXECUTE of the input's own statement. */
    const char *q = "SELECT k, c FROM t WHERE k = ? AND c IN (?, ?)";
    put_cmd(&b, 1, q, strlen(q));
    put_exec(&b, (int)(sizeof fz_prepared / sizeof *fz_prepared), t_sel, 3, -1);
    seed_buf("prepare-execute", 0, &b);
    cs_buf_destroy(&b);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fz_quiet();
    if (fz_seed_dir()) {
        write_seeds();
        exit(0);
    }
    const char *r = getenv("CASSETTE_FUZZ_RESET");
    g_reset_each = r && r[0] == '1';
    const char *v = getenv("CASSETTE_FUZZ_VERBOSE");
    g_verbose = v && v[0] == '1';
    g_dir = fz_scratch_dir("cql");
    ctx_open();
    return 0;
}
