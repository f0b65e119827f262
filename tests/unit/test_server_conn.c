/*
 * test_server_conn.c: the connection state machine over real loopback
 * sockets, with a private stub of the CQL layer (below, test-only) so the
 * wire behaviour is tested on its own: version refusal, handshake, lz4,
 * auth, events, durable-write replies, pipelining, oversize and malformed
 * frames.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <poll.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include <uv.h>

#include "common/alloc.h"
#include "common/buf.h"
#include "common/err.h"
#include "server/conn.h"
#include "server/frame.h"
#include "server/msg.h"

/* ------------------------------------------------------------ CQL stub */

#define W __attribute__((weak))

W void cql_result_init(cql_result *r) { memset(r, 0, sizeof *r); cs_buf_init(&r->body); }
W void cql_result_destroy(cql_result *r)
{
    cs_buf_destroy(&r->body);
    for (int i = 0; i < r->n_warnings; i++)
        cs_free(r->warnings[i]);
    cs_free(r->warnings);
}

static int listed_sessions;
W void cql_session_opened(cql_ctx *ctx, cql_session *s) { listed_sessions++; }
W void cql_session_closed(cql_ctx *ctx, cql_session *s) { listed_sessions--; }

/* The role store's check: only cassandra/cassandra (the default role). */
W int cql_login(cql_ctx *ctx, const char *u, size_t ul, const char *p, size_t pl, cs_error *e)
{
    if (ul == 9 && !memcmp(u, "cassandra", 9) && pl == 9 && !memcmp(p, "cassandra", 9))
        return 0;
    return cs_error_set(e, CS_ERR_BAD_CREDENTIALS, "Provided username %.*s and/or password are incorrect", (int)ul, u);
}

/* "fail" -> SyntaxException; "ddl" -> schema change; "sync" -> need_sync;
 * "warn" -> one warning; anything else -> RESULT Void. */
W int cql_query(cql_ctx *ctx, cql_session *s, const char *q, size_t qlen, const cql_params *p,
                cql_result *r, cs_error *e)
{
    if (qlen == 4 && memcmp(q, "fail", 4) == 0)
        return cs_error_set(e, CS_ERR_SYNTAX, "line 1:0 no viable alternative at input 'fail'");
    if (qlen == 3 && memcmp(q, "ddl", 3) == 0) {
        r->schema_changed = true;
        strcpy(r->change.change_type, "CREATED");
        strcpy(r->change.target, "TABLE");
        strcpy(r->change.keyspace, "ks");
        strcpy(r->change.name, "t");
        cs_buf_put_u32(&r->body, RESULT_SCHEMA_CHANGE);
        msg_put_schema_change(&r->body, &r->change);
        return 0;
    }
    if (qlen == 4 && memcmp(q, "sync", 4) == 0) {
        r->need_sync = true;
        r->sync_pos.offset = 1;
    }
    if (qlen == 3 && memcmp(q, "big", 3) == 0) {
        cs_buf_put_u32(&r->body, RESULT_VOID);
        uint8_t *p = cs_buf_extend(&r->body, 1 << 20);   /* 1 MiB of padding */
        if (p)
            memset(p, 'x', 1 << 20);
        return 0;
    }
    if (qlen == 4 && memcmp(q, "warn", 4) == 0) {
        r->warnings = cs_malloc(sizeof(char *));
        r->warnings[0] = cs_strdup("careful");
        r->n_warnings = 1;
    }
    cs_buf_put_u32(&r->body, RESULT_VOID);
    return 0;
}
W int cql_prepare(cql_ctx *ctx, cql_session *s, const char *q, size_t qlen, const char *ks,
                  cql_result *r, cs_error *e)
{
    cs_buf_put_u32(&r->body, RESULT_VOID);
    return 0;
}
W int cql_execute(cql_ctx *ctx, cql_session *s, const uint8_t *id, size_t idlen,
                  const cql_params *p, cql_result *r, cs_error *e)
{
    cs_error_set(e, CS_ERR_UNPREPARED, "Prepared query with ID %02x not found", id[0]);
    memcpy(e->unprepared_id, id, idlen < 16 ? idlen : 16);
    e->unprepared_id_len = (int)(idlen < 16 ? idlen : 16);
    return CS_EUSER;
}
/* The hints the loop gave (prefetch_batch): per batch, the id's first
 * byte and the first value's first byte of each request. */
static int batch_ids[64][16], batch_vals[64][16], batch_n[64], n_batches;
W int cql_prefetch_batch(cql_ctx *ctx, const cql_prefetch_req *reqs, int n)
{
    if (n_batches < 64) {
        batch_n[n_batches] = n;
        for (int i = 0; i < n && i < 16; i++) {
            batch_ids[n_batches][i] = reqs[i].idlen ? reqs[i].id[0] : -1;
            batch_vals[n_batches][i] = reqs[i].n_vals > 0 && reqs[i].vals[0].len > 0 ? reqs[i].vals[0].p[0] : -1;
        }
        n_batches++;
    }
    return n;
}
W int cql_batch(cql_ctx *ctx, cql_session *s, uint8_t type, const cql_batch_item *items, int n,
                const cql_params *p, cql_result *r, cs_error *e)
{
    cs_buf_put_u32(&r->body, RESULT_VOID);
    return 0;
}

/* Only the request loop threads (server/loop.c) call these; stubbed so
 * the engine's st_sync_wait is not linked in over the stub below. */
W int st_engine_detach_loop(st_engine *e, struct uv_loop_s *loop) { return 0; }
W void st_defer_log_writes(bool on) {}
W int st_log_flush(st_engine *e) { return 0; }

/* Durable-write stub: the callback runs 20 ms later on the loop. */
typedef struct sync_wait { uv_timer_t t; void (*cb)(void *); void *arg; } sync_wait;
static void sync_closed(uv_handle_t *h) { cs_free(h); }
static void sync_fire(uv_timer_t *t)
{
    sync_wait *w = (sync_wait *)t;
    w->cb(w->arg);
    uv_close((uv_handle_t *)t, sync_closed);
}
W int st_sync_wait(st_engine *e, struct uv_loop_s *loop, st_clog_pos pos, void (*cb)(void *),
                   void *arg)
{
    sync_wait *w = cs_malloc(sizeof *w);
    w->cb = cb;
    w->arg = arg;
    uv_timer_init(loop, &w->t);
    uv_timer_start(&w->t, sync_fire, 20, 0);
    return 0;
}

/* ------------------------------------------------------------ server thread */

static config cfg;
static srv server;
static uv_loop_t loop;
static uv_async_t stop_async;
static pthread_t thread;
static int port;

static void on_stop(uv_async_t *a)
{
    srv_close(&server);
    uv_close((uv_handle_t *)a, NULL);
}

static void *run(void *arg)
{
    uv_run(&loop, UV_RUN_DEFAULT);
    return NULL;
}

static size_t allocs_at_start;

static void start_server(int auth, size_t max_frame)
{
    allocs_at_start = cs_alloc_count();
    memset(&cfg, 0, sizeof cfg);
    cfg.max_frame_size = max_frame;
    cfg.max_connections = -1;
    cfg.authenticator = auth;
    uv_loop_init(&loop);
    cr_assert_eq(srv_init(&server, &loop, 1, &cfg, (st_engine *)&cfg /* non-NULL: sync path */, NULL), 0);
    cr_assert_eq(srv_listen(&server, "127.0.0.1", 0), 0);
    port = server.port;
    uv_async_init(&loop, &stop_async, on_stop);
    pthread_create(&thread, NULL, run, NULL);
}

static void stop_server(void)
{
    uv_async_send(&stop_async);
    pthread_join(thread, NULL);
    cr_assert_eq(uv_loop_close(&loop), 0);
    cr_assert_eq(server.n_conns, 0);
    srv_join(&server);
    cr_assert_eq(listed_sessions, 0, "system_views.clients registrations left");
    /* Every connection, buffer, pending reply and write request was freed. */
    cr_assert_eq(cs_alloc_count(), allocs_at_start, "%zu allocations leaked",
                 cs_alloc_count() - allocs_at_start);
}

static void setup(void) { start_server(CONFIG_AUTH_ALLOW_ALL, 1 << 20); }
static void teardown(void) { stop_server(); }
TestSuite(server_conn, .init = setup, .fini = teardown, .timeout = 20);

/* ------------------------------------------------------------ client helpers */

static int dial(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    cr_assert_eq(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    struct timeval tv = { 5, 0 };
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

static void send_all(int fd, const void *p, size_t n)
{
    const uint8_t *b = p;
    while (n > 0) {
        ssize_t w = write(fd, b, n);
        cr_assert_gt(w, 0);
        b += w;
        n -= (size_t)w;
    }
}

static bool recv_all(int fd, void *p, size_t n)
{
    uint8_t *b = p;
    while (n > 0) {
        ssize_t r = read(fd, b, n);
        if (r <= 0)
            return false;
        b += r;
        n -= (size_t)r;
    }
    return true;
}

/* Send a request frame with a raw body. */
static void send_req(int fd, uint8_t v, int16_t stream, uint8_t op, int compress, const cs_buf *body)
{
    cs_buf b;
    cs_buf_init(&b);
    frame_writer w;
    frame_begin(&w, &b, v, false, stream, op, 0, compress, NULL, NULL, 0);
    if (body)
        cs_buf_put(&b, body->p, body->len);
    frame_end(&w);
    send_all(fd, b.p, b.len);
    cs_buf_destroy(&b);
}

static void send_query(int fd, uint8_t v, int16_t stream, const char *q, int compress)
{
    cql_params p;
    msg_params_init(&p);
    cs_buf body;
    cs_buf_init(&body);
    msg_put_query(&body, v, q, strlen(q), &p);
    send_req(fd, v, stream, OP_QUERY, compress, &body);
    cs_buf_destroy(&body);
}

/* Append a STARTUP frame (stream 1) with options kv to out. */
static void put_startup(cs_buf *out, uint8_t v, const msg_kv *kv, int n)
{
    cs_buf body;
    cs_buf_init(&body);
    msg_put_startup(&body, kv, n);
    frame_writer w;
    frame_begin(&w, out, v, false, 1, OP_STARTUP, 0, false, NULL, NULL, 0);
    cs_buf_put(out, body.p, body.len);
    frame_end(&w);
    cs_buf_destroy(&body);
}

static void send_startup(int fd, uint8_t v, const char *compression)
{
    msg_kv kv[2] = { { "CQL_VERSION", 11, "3.0.0", 5 }, { "COMPRESSION", 11, compression,
                     compression ? strlen(compression) : 0 } };
    cs_buf b;
    cs_buf_init(&b);
    put_startup(&b, v, kv, compression ? 2 : 1);
    send_all(fd, b.p, b.len);
    cs_buf_destroy(&b);
}

typedef struct reply {
    frame_header h;
    uint8_t raw[FRAME_HEADER_LEN];
    cs_buf body;            /* decoded message */
    cs_error err;           /* when ERROR */
    int n_warnings;
} reply;

/* The compression of compressed replies (a snappy connection sets it). */
static int g_recv_comp = FRAME_COMP_LZ4;

/* Read one response frame; false on EOF. */
static bool recv_reply(int fd, reply *r)
{
    memset(r, 0, sizeof *r);
    cs_buf_init(&r->body);
    if (!recv_all(fd, r->raw, FRAME_HEADER_LEN))
        return false;
    cr_assert_eq(frame_header_parse(r->raw, &r->h), 0);
    cr_assert(r->h.response);
    uint8_t *raw = cs_malloc(r->h.length + 1);
    cr_assert(recv_all(fd, raw, r->h.length));
    frame_body fb;
    cr_assert_eq(frame_body_decode_with(&r->h, raw, r->h.length, 1 << 24, g_recv_comp, &fb), 0);
    cs_buf_put(&r->body, fb.msg, fb.msg_len);
    r->n_warnings = fb.n_warnings;
    if (r->h.opcode == OP_ERROR)
        cr_assert_eq(msg_error_decode(r->h.version, fb.msg, fb.msg_len, &r->err), 0);
    frame_body_destroy(&fb);
    cs_free(raw);
    return true;
}

static void reply_done(reply *r) { cs_buf_destroy(&r->body); }

static void expect(int fd, uint8_t op, int16_t stream)
{
    reply r;
    cr_assert(recv_reply(fd, &r), "EOF waiting for opcode %u", op);
    cr_assert_eq(r.h.opcode, op, "got opcode %u (%s)", r.h.opcode, r.err.msg);
    cr_assert_eq(r.h.stream, stream, "got stream %d, want %d", r.h.stream, stream);
    reply_done(&r);
}

static void expect_error(int fd, int16_t stream, int code, const char *msg_part)
{
    reply r;
    cr_assert(recv_reply(fd, &r), "EOF waiting for error");
    cr_assert_eq(r.h.opcode, OP_ERROR);
    cr_assert_eq(r.h.stream, stream);
    cr_assert_eq(r.err.code, code, "code %x: %s", r.err.code, r.err.msg);
    cr_assert(strstr(r.err.msg, msg_part) != NULL, "message: %s", r.err.msg);
    reply_done(&r);
}

static void expect_eof(int fd)
{
    uint8_t b;
    cr_assert_eq(read(fd, &b, 1), 0);
}

static int ready_conn(void)
{
    int fd = dial();
    send_startup(fd, 4, NULL);
    expect(fd, OP_READY, 1);
    return fd;
}

/* ------------------------------------------------------------ tests */

/* clients.md §1: 0x42, 0x41 and 6 are refused with Cassandra's message (for
 * 6 without USE_BETA: its beta message) on the request's stream in a v4
 * frame, then the connection closes. */
Test(server_conn, refuse_versions)
{
    static const uint8_t versions[] = { 0x42, 0x41, 6 };
    for (size_t i = 0; i < sizeof versions; i++) {
        int fd = dial();
        uint8_t hdr[9] = { versions[i], 0, 0, 7, OP_OPTIONS, 0, 0, 0, 0 };
        send_all(fd, hdr, sizeof hdr);
        reply r;
        cr_assert(recv_reply(fd, &r));
        cr_assert_eq(r.raw[0], 0x84);
        cr_assert_eq(r.h.stream, 7);
        cr_assert_eq(r.err.code, CS_ERR_PROTOCOL);
        char want[160];
        if (versions[i] == 6)
            snprintf(want, sizeof want, "Beta version of the protocol used (6/v6-beta), but USE_BETA flag is unset");
        else
            snprintf(want, sizeof want, "Invalid or unsupported protocol version (%u); supported "
                     "versions are (3/v3, 4/v4, 5/v5, 6/v6-beta)", versions[i]);
        cr_assert_str_eq(r.err.msg, want);
        reply_done(&r);
        expect_eof(fd);
        close(fd);
    }
    /* v1/v2: answered in their own version, after the 8 bytes of their header. */
    for (uint8_t v = 1; v <= 2; v++) {
        int fd = dial();
        uint8_t hdr[8] = { v, 0, 0, 9, OP_STARTUP, 0, 0, 0 };
        send_all(fd, hdr, sizeof hdr);
        reply r;
        cr_assert(recv_reply(fd, &r));
        cr_assert_eq(r.raw[0], 0x80 | v);
        cr_assert_eq(r.h.stream, 9);
        cr_assert_eq(r.err.code, CS_ERR_PROTOCOL);
        reply_done(&r);
        expect_eof(fd);
        close(fd);
    }
}

Test(server_conn, handshake_and_state_errors)
{
    int fd = dial();
    send_req(fd, 4, 3, OP_OPTIONS, false, NULL);
    reply r;
    cr_assert(recv_reply(fd, &r));
    cr_assert_eq(r.h.opcode, OP_SUPPORTED);
    cr_assert_eq(r.h.stream, 3);
    cr_assert(memmem(r.body.p, r.body.len, "COMPRESSION", 11) != NULL);
    cr_assert(memmem(r.body.p, r.body.len, "3.4.6", 5) != NULL);
    reply_done(&r);
    send_query(fd, 4, 4, "SELECT 1", false);
    expect_error(fd, 4, CS_ERR_PROTOCOL, "Unexpected message QUERY, expecting STARTUP or OPTIONS");
    send_startup(fd, 4, NULL);
    expect(fd, OP_READY, 1);
    send_query(fd, 4, 5, "SELECT 1", false);
    expect(fd, OP_RESULT, 5);
    send_query(fd, 4, 6, "fail", false);
    expect_error(fd, 6, CS_ERR_SYNTAX, "no viable alternative");
    send_startup(fd, 4, NULL);
    expect_error(fd, 1, CS_ERR_PROTOCOL, "already initialized");
    /* A later frame in another version: error, the connection stays usable. */
    send_query(fd, 3, 8, "SELECT 1", false);
    expect_error(fd, 8, CS_ERR_PROTOCOL, "Invalid message version. Got 3/v3 but previous "
                 "messages on this connection had version 4/v4");
    send_query(fd, 4, 9, "SELECT 1", false);
    expect(fd, OP_RESULT, 9);
    close(fd);
}

Test(server_conn, startup_checks)
{
    int fd = dial();
    cs_buf body;
    cs_buf_init(&body);
    msg_put_startup(&body, NULL, 0);
    send_req(fd, 4, 2, OP_STARTUP, false, &body);
    expect_error(fd, 2, CS_ERR_PROTOCOL, "Missing value CQL_VERSION in STARTUP message");
    cs_buf_reset(&body);
    msg_kv old = { "CQL_VERSION", 11, "2.0.0", 5 };
    msg_put_startup(&body, &old, 1);
    send_req(fd, 4, 3, OP_STARTUP, false, &body);
    expect_error(fd, 3, CS_ERR_PROTOCOL, "is not supported by the binary protocol");
    send_startup(fd, 4, "ZIP");
    expect_error(fd, 1, CS_ERR_PROTOCOL, "Unknown compression algorithm: zip");
    cs_buf_reset(&body);
    msg_kv notv = { "CQL_VERSION", 11, "abc", 3 };
    msg_put_startup(&body, &notv, 1);
    send_req(fd, 4, 4, OP_STARTUP, false, &body);
    expect_error(fd, 4, CS_ERR_PROTOCOL, "Invalid version value: abc");
    send_startup(fd, 3, NULL);   /* v3 now: the connection is v4 */
    expect_error(fd, 1, CS_ERR_PROTOCOL, "Invalid message version");
    cs_buf_destroy(&body);
    close(fd);
    fd = dial();
    send_startup(fd, 3, NULL);
    expect(fd, OP_READY, 1);
    send_query(fd, 3, 9, "SELECT 1", false);
    expect(fd, OP_RESULT, 9);
    close(fd);
}

/* A v4 connection whose STARTUP names alg: READY comes uncompressed; then
 * a compressed SELECT 1 (comp) gets a compressed VOID result on stream 11. */
static int compressed_conn(const char *alg, int comp)
{
    int fd = dial();
    send_startup(fd, 4, alg);
    reply r;
    cr_assert(recv_reply(fd, &r));
    cr_assert_eq(r.h.opcode, OP_READY);
    cr_assert_eq(r.h.flags & FRAME_FLAG_COMPRESSION, 0);
    reply_done(&r);
    g_recv_comp = comp;
    send_query(fd, 4, 11, "SELECT 1", comp);
    cr_assert(recv_reply(fd, &r));
    cr_assert_eq(r.h.opcode, OP_RESULT);
    cr_assert(r.h.flags & FRAME_FLAG_COMPRESSION);
    cr_assert_eq(r.body.len, 4);
    cr_assert_eq(cs_be32(r.body.p), RESULT_VOID);
    reply_done(&r);
    return fd;
}

Test(server_conn, lz4_both_ways)
{
    int fd = compressed_conn("lz4", FRAME_COMP_LZ4);
    send_query(fd, 4, 12, "fail", true);
    expect_error(fd, 12, CS_ERR_SYNTAX, "no viable");
    close(fd);
}

/* Snappy (Cassandra's SnappyCompressor, v3/v4): raw snappy bodies both
 * ways, a body that is not snappy refused, the connection going on; v5
 * refuses it as StartupMessage does. */
Test(server_conn, snappy_both_ways)
{
    int fd = compressed_conn("snappy", FRAME_COMP_SNAPPY);
    send_query(fd, 4, 12, "SELECT release_version FROM system.local", FRAME_COMP_SNAPPY);
    expect(fd, OP_RESULT, 12);
    send_query(fd, 4, 13, "SELECT 1", FRAME_COMP_LZ4);   /* an lz4 body on a snappy connection */
    expect_error(fd, 13, CS_ERR_PROTOCOL, "Provided frame does not appear to be Snappy compressed");
    send_query(fd, 4, 14, "fail", FRAME_COMP_SNAPPY);
    expect_error(fd, 14, CS_ERR_SYNTAX, "no viable");
    /* a snappy body whose length varint claims 2 MiB, over the 1 MiB limit */
    uint8_t f[9 + 4] = { 4, FRAME_FLAG_COMPRESSION, 0, 15, OP_QUERY, 0, 0, 0, 4, 0x80, 0x80, 0x80, 0x01 };
    send_all(fd, f, sizeof f);
    expect_error(fd, 15, CS_ERR_INVALID, "Request is too big: length 2097152 exceeds maximum allowed length 1048576.");
    send_query(fd, 4, 16, "SELECT key FROM system.local", FRAME_COMP_SNAPPY);
    expect(fd, OP_RESULT, 16);
    g_recv_comp = FRAME_COMP_LZ4;
    close(fd);
    fd = dial();
    send_startup(fd, 5, "snappy");
    expect_error(fd, 1, CS_ERR_PROTOCOL, "Snappy compression is not supported in protocol V5");
    close(fd);
}

/* An lz4 body that would decompress past the frame size limit is refused
 * like an oversize frame, and the connection goes on. */
Test(server_conn, lz4_body_too_big_when_decompressed)
{
    int fd = dial();
    send_startup(fd, 4, "lz4");
    expect(fd, OP_READY, 1);
    uint8_t f[9 + 8] = { 4, FRAME_FLAG_COMPRESSION, 0, 13, OP_QUERY, 0, 0, 0, 8 };
    cs_st32(f + 9, (2u << 20));                  /* claims 2 MiB > the 1 MiB limit */
    send_all(fd, f, sizeof f);
    expect_error(fd, 13, CS_ERR_INVALID, "Request is too big: length 2097152 exceeds maximum allowed length 1048576.");
    send_query(fd, 4, 14, "SELECT key FROM system.local", true);
    expect(fd, OP_RESULT, 14);
    close(fd);
}

Test(server_conn, compressed_frame_without_negotiation)
{
    int fd = ready_conn();
    send_query(fd, 4, 2, "SELECT 1", true);
    expect_error(fd, 2, CS_ERR_PROTOCOL, "compression");
    send_query(fd, 4, 3, "SELECT 1", false);
    expect(fd, OP_RESULT, 3);
    close(fd);
}

Test(server_conn, pipelined_requests_answered_by_stream)
{
    int fd = ready_conn();
    cs_buf all;
    cs_buf_init(&all);
    for (int i = 0; i < 200; i++) {
        cql_params p;
        msg_params_init(&p);
        frame_writer w;
        frame_begin(&w, &all, 4, false, (int16_t)(100 + i), OP_QUERY, 0, false, NULL, NULL, 0);
        msg_put_query(&all, 4, "SELECT 1", 8, &p);
        frame_end(&w);
    }
    send_all(fd, all.p, all.len);
    cs_buf_destroy(&all);
    for (int i = 0; i < 200; i++)
        expect(fd, OP_RESULT, (int16_t)(100 + i));
    close(fd);
}

/* The EXECUTEs buffered on a connection are shown to the executor in
 * batches of at most 16 before they run (prefetch_batch): each batch in
 * arrival order, without the QUERY among them, with each request's own id
 * and values; nearly every EXECUTE in some batch (all 40 frames go in one
 * send; were it cut into several reads, a batch that would start at a
 * read's last complete frame holds one request, and one is not hinted);
 * every request is still answered. */
Test(server_conn, buffered_executes_hinted_in_batches)
{
    int fd = ready_conn();
    cs_buf all;
    cs_buf_init(&all);
    n_batches = 0;
    for (int i = 0; i < 40; i++) {
        cql_params p;
        msg_params_init(&p);
        uint8_t id[16], val = (uint8_t)(i + 1);
        memset(id, 0x40 + i, sizeof id);
        cql_value v = { &val, 1 };
        p.values = &v;
        p.n_values = 1;
        frame_writer w;
        frame_begin(&w, &all, 4, false, (int16_t)(100 + i), i == 20 ? OP_QUERY : OP_EXECUTE, 0, false,
                    NULL, NULL, 0);
        if (i == 20)
            msg_put_query(&all, 4, "SELECT 1", 8, &p);
        else
            msg_put_execute(&all, 4, id, 16, NULL, 0, &p);
        frame_end(&w);
    }
    send_all(fd, all.p, all.len);
    cs_buf_destroy(&all);
    for (int i = 0; i < 40; i++)
        expect(fd, i == 20 ? OP_RESULT : OP_ERROR, (int16_t)(100 + i));
    close(fd);
    cr_assert(n_batches >= 3, "%d batches", n_batches);
    bool seen[40] = { false };
    for (int b = 0; b < n_batches; b++) {
        cr_assert(batch_n[b] >= 2 && batch_n[b] <= 16, "batch %d of %d", b, batch_n[b]);
        for (int k = 0; k < batch_n[b]; k++) {
            int i = batch_ids[b][k] - 0x40;
            cr_assert(i >= 0 && i < 40 && i != 20, "batch %d: request %d", b, i);
            cr_assert(k == 0 || i > batch_ids[b][k - 1] - 0x40, "batch %d out of order", b);
            cr_assert_eq(batch_vals[b][k], i + 1);
            seen[i] = true;
        }
    }
    int n_seen = 0;
    for (int i = 0; i < 40; i++)
        n_seen += seen[i];
    cr_assert(n_seen >= 37, "%d of 39 requests hinted", n_seen);
}

Test(server_conn, warnings_reach_the_client)
{
    int fd = ready_conn();
    send_query(fd, 4, 2, "warn", false);
    reply r;
    cr_assert(recv_reply(fd, &r));
    cr_assert_eq(r.h.opcode, OP_RESULT);
    cr_assert(r.h.flags & FRAME_FLAG_WARNING);
    cr_assert_eq(r.n_warnings, 1);
    reply_done(&r);
    close(fd);
}

Test(server_conn, durable_write_reply_waits_for_sync)
{
    int fd = ready_conn();
    send_query(fd, 4, 2, "sync", false);
    send_query(fd, 4, 3, "SELECT 1", false);
    expect(fd, OP_RESULT, 3);      /* the non-durable reply overtakes */
    expect(fd, OP_RESULT, 2);
    /* Closing with a sync reply pending must not crash or leak. */
    send_query(fd, 4, 4, "sync", false);
    close(fd);
    usleep(50000);
}

/* fuzz_conn (tests/fuzz/regress/conn/sync-reply-before-bad-header): a
 * corrupt header after a durable write, whose reply waits for the sync.
 * The write's reply is sent before the close, as in periodic mode; it used
 * to be dropped (the FIN went out first and the reply found the
 * connection shut). */
Test(server_conn, sync_reply_written_before_error_close)
{
    int fd = ready_conn();
    send_query(fd, 4, 2, "sync", false);
    uint8_t neg[] = { 4, 0, 0, 3, OP_OPTIONS, 0x80, 0, 0, 0 };
    send_all(fd, neg, sizeof neg);
    expect_error(fd, 3, CS_ERR_PROTOCOL, "Invalid frame body length");
    expect(fd, OP_RESULT, 2);
    expect_eof(fd);
    close(fd);
}

Test(server_conn, schema_change_event_pushed)
{
    int a = ready_conn(), b = ready_conn();
    static const char *const ev[] = { "SCHEMA_CHANGE" };
    cs_buf body;
    cs_buf_init(&body);
    msg_put_register(&body, ev, 1);
    send_req(a, 4, 5, OP_REGISTER, false, &body);
    expect(a, OP_READY, 5);
    cs_buf_destroy(&body);
    send_query(b, 4, 6, "ddl", false);
    reply r;
    cr_assert(recv_reply(b, &r));
    cr_assert_eq(r.h.opcode, OP_RESULT);
    cr_assert_eq(cs_be32(r.body.p), RESULT_SCHEMA_CHANGE);
    reply_done(&r);
    cr_assert(recv_reply(a, &r));
    cr_assert_eq(r.h.opcode, OP_EVENT);
    cr_assert_eq(r.h.stream, -1);
    cql_schema_change ch;
    cr_assert_eq(msg_event_decode(r.body.p, r.body.len, &ch), 0);
    cr_assert_str_eq(ch.change_type, "CREATED");
    cr_assert_str_eq(ch.target, "TABLE");
    cr_assert_str_eq(ch.name, "t");
    reply_done(&r);
    close(a);
    close(b);
}

/* An oversize frame (header included over native_transport_max_frame_size)
 * is skipped as it arrives and answered on its stream with InvalidRequest
 * once its last byte has gone by; the connection goes on (Cassandra's
 * Envelope.Decoder discard mode). */
Test(server_conn, oversize_frame_is_skipped_and_answered)
{
    int fd = ready_conn();
    size_t n = 3u << 20;
    uint8_t *frame = cs_calloc(1, FRAME_HEADER_LEN + n);
    frame[0] = 4;
    frame[3] = 43;
    frame[4] = OP_QUERY;
    cs_st32(frame + 5, (uint32_t)n);
    send_all(fd, frame, FRAME_HEADER_LEN + n);
    cs_free(frame);
    expect_error(fd, 43, CS_ERR_INVALID, "Request is too big: length 3145737 exceeds maximum allowed length 1048576.");
    send_query(fd, 4, 44, "SELECT key FROM system.local", false);
    expect(fd, OP_RESULT, 44);
    close(fd);
}

/* The header alone: nothing is answered until the claimed body has come
 * (it arrives in pieces here, with a request pipelined right behind it);
 * one byte over the limit counts, the exact limit does not. */
Test(server_conn, oversize_frame_answered_after_its_body)
{
    int fd = ready_conn();
    size_t limit = 1u << 20, n = limit - FRAME_HEADER_LEN + 1;   /* total = limit + 1 */
    uint8_t hdr[9] = { 4, 0, 0, 42, OP_QUERY, 0, 0, 0, 0 };
    cs_st32(hdr + 5, (uint32_t)n);
    send_all(fd, hdr, sizeof hdr);
    struct pollfd pf = { fd, POLLIN, 0 };
    cr_assert_eq(poll(&pf, 1, 200), 0, "a reply before the oversize body arrived");
    uint8_t *body = cs_calloc(1, n);
    send_all(fd, body, n / 2);
    cr_assert_eq(poll(&pf, 1, 100), 0, "a reply before the oversize body arrived");
    send_all(fd, body + n / 2, n - n / 2);
    cs_free(body);
    send_query(fd, 4, 45, "SELECT key FROM system.local", false);
    expect_error(fd, 42, CS_ERR_INVALID, "Request is too big: length 1048577 exceeds maximum allowed length 1048576.");
    expect(fd, OP_RESULT, 45);
    close(fd);
}

Test(server_conn, malformed_bodies_keep_connection)
{
    int fd = ready_conn();
    /* QUERY whose [long string] claims more bytes than the frame has. */
    uint8_t bad[] = { 4, 0, 0, 2, OP_QUERY, 0, 0, 0, 6, 0, 0, 0x10, 0, 'a', 'b' };
    send_all(fd, bad, sizeof bad);
    expect_error(fd, 2, CS_ERR_PROTOCOL, "Not enough bytes");
    /* Unknown and response-only opcodes. */
    uint8_t unk[] = { 4, 0, 0, 3, 0x2a, 0, 0, 0, 0 };
    send_all(fd, unk, sizeof unk);
    expect_error(fd, 3, CS_ERR_PROTOCOL, "Unknown opcode 42");
    uint8_t res[] = { 4, 0, 0, 4, OP_RESULT, 0, 0, 0, 0 };
    send_all(fd, res, sizeof res);
    expect_error(fd, 4, CS_ERR_PROTOCOL, "Unknown opcode");
    /* EXECUTE with an unknown id: UNPREPARED with the id. */
    cql_params p;
    msg_params_init(&p);
    cs_buf body;
    cs_buf_init(&body);
    uint8_t id[16] = { 0xee };
    msg_put_execute(&body, 4, id, 16, NULL, 0, &p);
    send_req(fd, 4, 5, OP_EXECUTE, false, &body);
    reply r;
    cr_assert(recv_reply(fd, &r));
    cr_assert_eq(r.err.code, CS_ERR_UNPREPARED);
    cr_assert_eq(r.err.unprepared_id_len, 16);
    cr_assert_eq(r.err.unprepared_id[0], 0xee);
    reply_done(&r);
    cs_buf_destroy(&body);
    send_query(fd, 4, 6, "SELECT 1", false);
    expect(fd, OP_RESULT, 6);
    close(fd);
}

Test(server_conn, garbage_does_not_disturb_others)
{
    int good = ready_conn();
    for (int round = 0; round < 20; round++) {
        int fd = dial();
        uint8_t junk[64];
        for (size_t i = 0; i < sizeof junk; i++)
            junk[i] = (uint8_t)(rand() & 0xff);
        if (round % 2)
            junk[0] = 4;          /* a plausible version byte, garbage after */
        send_all(fd, junk, sizeof junk);
        close(fd);
    }
    send_query(good, 4, 7, "SELECT 1", false);
    expect(good, OP_RESULT, 7);
    close(good);
}

Test(server_conn, byte_at_a_time)
{
    int fd = dial();
    cs_buf b;
    cs_buf_init(&b);
    msg_kv kv = { "CQL_VERSION", 11, "3.4.6", 5 };
    put_startup(&b, 4, &kv, 1);
    for (size_t i = 0; i < b.len; i++) {
        send_all(fd, b.p + i, 1);
        usleep(1000);
    }
    expect(fd, OP_READY, 1);
    cs_buf_destroy(&b);
    close(fd);
}

/* PasswordAuthenticator: AUTHENTICATE, bad credentials, then success. */
Test(server_conn_auth, sasl_plain, .init = NULL, .fini = NULL, .timeout = 20)
{
    start_server(CONFIG_AUTH_PASSWORD, 1 << 20);
    int fd = dial();
    send_startup(fd, 4, NULL);
    reply r;
    cr_assert(recv_reply(fd, &r));
    cr_assert_eq(r.h.opcode, OP_AUTHENTICATE);
    cr_assert(memmem(r.body.p, r.body.len, "org.apache.cassandra.auth.PasswordAuthenticator", 47));
    reply_done(&r);
    send_query(fd, 4, 2, "SELECT 1", false);
    expect_error(fd, 2, CS_ERR_PROTOCOL, "expecting SASL_RESPONSE");
    cs_buf body;
    cs_buf_init(&body);
    msg_put_auth_response(&body, (const uint8_t *)"\0cassandra\0wrong", 16);
    send_req(fd, 4, 3, OP_AUTH_RESPONSE, false, &body);
    expect_error(fd, 3, CS_ERR_BAD_CREDENTIALS,
                 "Provided username cassandra and/or password are incorrect");
    cs_buf_reset(&body);
    msg_put_auth_response(&body, (const uint8_t *)"\0cassandra\0cassandra", 20);
    send_req(fd, 4, 4, OP_AUTH_RESPONSE, false, &body);
    expect(fd, OP_AUTH_SUCCESS, 4);
    send_query(fd, 4, 5, "SELECT 1", false);
    expect(fd, OP_RESULT, 5);
    cs_buf_destroy(&body);
    close(fd);
    stop_server();
}

Test(server_conn_limits, max_connections, .timeout = 20)
{
    memset(&cfg, 0, sizeof cfg);
    start_server(CONFIG_AUTH_ALLOW_ALL, 1 << 20);
    cfg.max_connections = 1;
    int a = ready_conn();
    int b = dial();
    expect_eof(b);
    close(b);
    send_query(a, 4, 2, "SELECT 1", false);
    expect(a, OP_RESULT, 2);
    close(a);
    stop_server();
}

/* ------------------------------------------------------------ bad-input corpus */

#include <dirent.h>
#include <stdio.h>

/* Parse one .hex file of tests/badinput/frames: "# key: value" lines and hex. */
static bool load_hex(const char *path, cs_buf *data, char *expect, size_t cap, bool *startup,
                     bool *half_close)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    char line[1024];
    strcpy(expect, "any");
    *startup = *half_close = false;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#') {
            char k[64], v[64];
            if (sscanf(line, "# %63[^:]: %63s", k, v) == 2) {
                if (strcmp(k, "expect") == 0)
                    snprintf(expect, cap, "%s", v);
                else if (strcmp(k, "startup") == 0)
                    *startup = strcmp(v, "yes") == 0;
                else if (strcmp(k, "half_close") == 0)
                    *half_close = strcmp(v, "yes") == 0;
            }
            continue;
        }
        for (char *p = line; p[0] && p[1]; p += 2) {
            unsigned b;
            if (sscanf(p, "%2x", &b) != 1)
                break;
            cs_buf_put_u8(data, (uint8_t)b);
        }
    }
    fclose(f);
    return true;
}

/* Every malformed frame of the shared corpus gets the expected answer and
 * leaves the server serving a separate connection. */
Test(server_conn, badinput_corpus)
{
    DIR *d = opendir("tests/badinput/frames");
    if (!d)
        cr_skip_test("run from the repository root to use tests/badinput/frames");
    int good = ready_conn();
    struct dirent *de;
    int n = 0;
    while ((de = readdir(d))) {
        size_t len = strlen(de->d_name);
        if (len < 5 || strcmp(de->d_name + len - 4, ".hex") != 0)
            continue;
        char path[512], want[64];
        snprintf(path, sizeof path, "tests/badinput/frames/%s", de->d_name);
        cs_buf data;
        cs_buf_init(&data);
        bool startup, half_close;
        cr_assert(load_hex(path, &data, want, sizeof want, &startup, &half_close));
        int fd = startup ? ready_conn() : dial();
        send_all(fd, data.p, data.len);
        if (half_close)
            shutdown(fd, SHUT_WR);
        if (strncmp(want, "0x", 2) == 0) {
            reply r;
            cr_assert(recv_reply(fd, &r), "%s: closed without an error", de->d_name);
            cr_assert_eq(r.h.opcode, OP_ERROR, "%s", de->d_name);
            cr_assert_eq(r.err.code, (int)strtol(want, NULL, 16), "%s: got 0x%04x %s", de->d_name,
                         r.err.code, r.err.msg);
            cr_assert_eq(r.h.stream, 1, "%s", de->d_name);
            reply_done(&r);
        }
        close(fd);
        cs_buf_destroy(&data);
        send_query(good, 4, 2, "SELECT 1", false);
        expect(good, OP_RESULT, 2);
        n++;
    }
    closedir(d);
    cr_assert_gt(n, 10);
    close(good);
}

/* Invariant 9: a client that never reads cannot make the server buffer
 * unbounded output; once it reads, every reply arrives. */
Test(server_conn, backpressure_on_unread_replies)
{
    int fd = ready_conn();
    int rcv = 64 * 1024;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof rcv);
    cs_buf all;
    cs_buf_init(&all);
    for (int i = 0; i < 100; i++) {
        cql_params p;
        msg_params_init(&p);
        frame_writer w;
        frame_begin(&w, &all, 4, false, (int16_t)i, OP_QUERY, 0, false, NULL, NULL, 0);
        msg_put_query(&all, 4, "big", 3, &p);
        frame_end(&w);
    }
    send_all(fd, all.p, all.len);
    cs_buf_destroy(&all);
    usleep(300 * 1000);
    size_t used = cs_alloc_used();
    cr_assert_lt(used, 48u << 20, "server buffered %zu bytes of replies", used);
    for (int i = 0; i < 100; i++) {
        reply r;
        cr_assert(recv_reply(fd, &r), "reply %d missing", i);
        cr_assert_eq(r.h.stream, i);
        cr_assert_eq(r.body.len, 4 + (1u << 20));
        reply_done(&r);
    }
    close(fd);
}

Test(server_conn, cql_version_forms)
{
    static const struct { const char *v; int ok; } cases[] = {
        { "3.0.0", 1 }, { "3.4.6", 1 }, { "3.4", 1 }, { "4.0.0-beta1", 1 },
        { "99999999999999999999.0.0", 1 }, { "2.99.9", 0 }, { "3", 0 }, { "3.x", 0 }, { "", 0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int fd = dial();
        msg_kv kv = { "CQL_VERSION", 11, cases[i].v, strlen(cases[i].v) };
        cs_buf body;
        cs_buf_init(&body);
        msg_put_startup(&body, &kv, 1);
        send_req(fd, 4, 1, OP_STARTUP, false, &body);
        cs_buf_destroy(&body);
        reply r;
        cr_assert(recv_reply(fd, &r));
        cr_assert_eq(r.h.opcode, cases[i].ok ? OP_READY : OP_ERROR, "%s: %s", cases[i].v, r.err.msg);
        reply_done(&r);
        close(fd);
    }
}

/* ------------------------------------------------------------ protocol v5 */

/* A v5 client's reader: segments off the socket, envelopes out. */
typedef struct v5rd {
    int fd;
    bool lz4;
    cs_buf env;             /* unframed envelope bytes not yet taken */
    cs_buf scratch;
    int segments, self_contained;
} v5rd;

static void v5rd_init(v5rd *r, int fd, bool lz4)
{
    memset(r, 0, sizeof *r);
    r->fd = fd;
    r->lz4 = lz4;
    cs_buf_init(&r->env);
    cs_buf_init(&r->scratch);
}

static void v5rd_destroy(v5rd *r)
{
    cs_buf_destroy(&r->env);
    cs_buf_destroy(&r->scratch);
}

/* Read one segment and append its payload; false on EOF. */
static bool v5rd_segment(v5rd *r)
{
    size_t hn = r->lz4 ? 8 : 6;
    uint8_t buf[8 + 4 + FRAME_SEG_MAX_PAYLOAD];
    if (!recv_all(r->fd, buf, hn))
        return false;
    size_t len = ((size_t)buf[0] | (size_t)buf[1] << 8 | (size_t)buf[2] << 16) & FRAME_SEG_MAX_PAYLOAD;
    cr_assert(recv_all(r->fd, buf + hn, len + 4));
    frame_seg sg;
    cr_assert_eq(frame_seg_decode(buf, hn + len + 4, r->lz4, &r->scratch, &sg), 1);
    cs_buf_put(&r->env, sg.payload, sg.payload_len);
    r->segments++;
    r->self_contained += sg.self_contained;
    return true;
}

/* One reply envelope from the segments; false on EOF. */
static bool v5_recv(v5rd *r, reply *out)
{
    while (r->env.len < FRAME_HEADER_LEN || r->env.len < FRAME_HEADER_LEN + cs_be32(r->env.p + 5))
        if (!v5rd_segment(r))
            return false;
    memset(out, 0, sizeof *out);
    cs_buf_init(&out->body);
    memcpy(out->raw, r->env.p, FRAME_HEADER_LEN);
    cr_assert_eq(frame_header_parse(out->raw, &out->h), 0);
    cr_assert(out->h.response);
    cr_assert_eq(out->h.version, 5);
    frame_body fb;
    cr_assert_eq(frame_body_decode(&out->h, r->env.p + FRAME_HEADER_LEN, out->h.length, 1 << 24, &fb), 0);
    cs_buf_put(&out->body, fb.msg, fb.msg_len);
    if (out->h.opcode == OP_ERROR)
        cr_assert_eq(msg_error_decode(5, fb.msg, fb.msg_len, &out->err), 0);
    frame_body_destroy(&fb);
    size_t used = FRAME_HEADER_LEN + out->h.length;
    memmove(r->env.p, r->env.p + used, r->env.len - used);
    r->env.len -= used;
    return true;
}

static void v5_expect(v5rd *r, uint8_t op, int16_t stream)
{
    reply x;
    cr_assert(v5_recv(r, &x), "EOF waiting for opcode %u", op);
    cr_assert_eq(x.h.opcode, op, "got opcode %u (%s)", x.h.opcode, x.err.msg);
    cr_assert_eq(x.h.stream, stream);
    reply_done(&x);
}

static void v5_expect_error(v5rd *r, int16_t stream, int code, const char *part)
{
    reply x;
    cr_assert(v5_recv(r, &x), "EOF waiting for an error");
    cr_assert_eq(x.h.opcode, OP_ERROR, "got opcode %u", x.h.opcode);
    cr_assert_eq(x.h.stream, stream);
    cr_assert_eq(x.err.code, code, "code %x: %s", x.err.code, x.err.msg);
    cr_assert(strstr(x.err.msg, part) != NULL, "message: %s", x.err.msg);
    reply_done(&x);
}

/* A QUERY envelope (v5 [int] flags) appended to b. */
static void put_query5(cs_buf *b, int16_t stream, const char *q)
{
    cql_params p;
    msg_params_init(&p);
    frame_writer w;
    frame_begin(&w, b, 5, false, stream, OP_QUERY, 0, false, NULL, NULL, 0);
    msg_put_query(b, 5, q, strlen(q), &p);
    frame_end(&w);
}

/* Envelopes in env sent as segments. */
static void v5_send(int fd, const cs_buf *env, bool lz4)
{
    cs_buf w;
    cs_buf_init(&w);
    frame_seg_wrap(&w, env->p, env->len, lz4);
    cr_assert_eq(w.err, 0);
    send_all(fd, w.p, w.len);
    cs_buf_destroy(&w);
}

static void v5_query(int fd, int16_t stream, const char *q, bool lz4)
{
    cs_buf env;
    cs_buf_init(&env);
    put_query5(&env, stream, q);
    v5_send(fd, &env, lz4);
    cs_buf_destroy(&env);
}

/* A v5 QUERY of ~300 kB ("SELECT 1" padded with spaces): three segments. */
static void put_long_select5(cs_buf *b, int16_t stream)
{
    char *q = cs_malloc(300001);
    memset(q, ' ', 300000);
    memcpy(q, "SELECT 1", 8);
    q[300000] = '\0';
    put_query5(b, stream, q);
    cs_free(q);
}

/* A v5 QUERY envelope whose body is n zero bytes (over the 1 MiB limit). */
static void put_oversize5(cs_buf *b, int16_t stream, size_t n)
{
    uint8_t *p = cs_buf_extend(b, FRAME_HEADER_LEN + n);
    cr_assert_not_null(p);
    memset(p, 0, FRAME_HEADER_LEN + n);
    p[0] = 5;
    cs_st16(p + 2, (uint16_t)stream);
    p[4] = OP_QUERY;
    cs_st32(p + 5, (uint32_t)n);
}

/* OPTIONS and STARTUP unframed, the READY unframed, then segments. */
static int v5_conn(const char *compression)
{
    int fd = dial();
    send_req(fd, 5, 2, OP_OPTIONS, false, NULL);
    reply r;
    cr_assert(recv_reply(fd, &r));
    cr_assert_eq(r.raw[0], 0x85);
    cr_assert_eq(r.h.opcode, OP_SUPPORTED);
    cr_assert(memmem(r.body.p, r.body.len, "5/v5", 4) != NULL);
    reply_done(&r);
    send_startup(fd, 5, compression);
    cr_assert(recv_reply(fd, &r));
    cr_assert_eq(r.raw[0], 0x85);
    cr_assert_eq(r.h.opcode, OP_READY);
    reply_done(&r);
    return fd;
}

/* Spec v5 §2: envelopes packed in self-contained segments both ways, an
 * envelope longer than a payload cut into non-self-contained ones. */
Test(server_conn, v5_segments_both_ways)
{
    int fd = v5_conn(NULL);
    v5rd rd;
    v5rd_init(&rd, fd, false);
    v5_query(fd, 5, "SELECT 1", false);
    v5_expect(&rd, OP_RESULT, 5);
    cr_assert_eq(rd.segments, 1);
    cr_assert_eq(rd.self_contained, 1);
    /* three requests in one segment: three replies, packed in one segment */
    cs_buf env;
    cs_buf_init(&env);
    put_query5(&env, 6, "SELECT 1");
    put_query5(&env, 7, "fail");
    put_query5(&env, 8, "warn");
    v5_send(fd, &env, false);
    v5_expect(&rd, OP_RESULT, 6);
    v5_expect_error(&rd, 7, CS_ERR_SYNTAX, "no viable alternative");
    v5_expect(&rd, OP_RESULT, 8);
    cr_assert_eq(rd.segments, 2);
    /* a 1 MiB reply: nine segments that are not self-contained */
    v5_query(fd, 9, "big", false);
    v5_expect(&rd, OP_RESULT, 9);
    cr_assert_eq(rd.segments, 2 + 9);
    cr_assert_eq(rd.self_contained, 2);
    /* a 300 kB request in three segments */
    cs_buf_reset(&env);
    put_long_select5(&env, 10);
    cr_assert_gt(env.len, 2 * FRAME_SEG_MAX_PAYLOAD);
    v5_send(fd, &env, false);
    v5_expect(&rd, OP_RESULT, 10);
    /* OPTIONS after the handshake is framed too */
    cs_buf_reset(&env);
    frame_writer w;
    frame_begin(&w, &env, 5, false, 11, OP_OPTIONS, 0, false, NULL, NULL, 0);
    frame_end(&w);
    v5_send(fd, &env, false);
    v5_expect(&rd, OP_SUPPORTED, 11);
    cs_buf_destroy(&env);
    v5rd_destroy(&rd);
    close(fd);
}

/* COMPRESSION lz4 under v5: segments are compressed, envelopes are not. */
Test(server_conn, v5_lz4_segments)
{
    int fd = v5_conn("lz4");
    v5rd rd;
    v5rd_init(&rd, fd, true);
    v5_query(fd, 3, "SELECT 1", true);
    reply x;
    cr_assert(v5_recv(&rd, &x));
    cr_assert_eq(x.h.opcode, OP_RESULT);
    cr_assert_eq(x.h.flags & FRAME_FLAG_COMPRESSION, 0);
    reply_done(&x);
    v5_query(fd, 4, "big", true);
    v5_expect(&rd, OP_RESULT, 4);
    v5_query(fd, 5, "fail", true);
    v5_expect_error(&rd, 5, CS_ERR_SYNTAX, "no viable");
    v5rd_destroy(&rd);
    close(fd);
}

/* STARTUP and the first segment in one write: what follows STARTUP in the
 * same read is taken as segments. */
Test(server_conn, v5_segment_in_the_startup_read)
{
    int fd = dial();
    cs_buf all, env;
    cs_buf_init(&all);
    cs_buf_init(&env);
    msg_kv kv = { "CQL_VERSION", 11, "3.0.0", 5 };
    put_startup(&all, 5, &kv, 1);
    put_query5(&env, 2, "SELECT 1");
    frame_seg_wrap(&all, env.p, env.len, false);
    send_all(fd, all.p, all.len);
    expect(fd, OP_READY, 1);
    v5rd rd;
    v5rd_init(&rd, fd, false);
    v5_expect(&rd, OP_RESULT, 2);
    v5rd_destroy(&rd);
    cs_buf_destroy(&all);
    cs_buf_destroy(&env);
    close(fd);
}

/* A corrupt segment is fatal (Cassandra CQLMessageHandler.processCorruptFrame):
 * ProtocolException on stream 0, in a segment, then the close.  Other
 * connections go on. */
Test(server_conn, v5_corrupt_segments_close)
{
    int other = v5_conn(NULL);
    for (int kind = 0; kind < 5; kind++) {
        int fd = v5_conn(NULL);
        cs_buf env, seg;
        cs_buf_init(&env);
        cs_buf_init(&seg);
        put_query5(&env, 4, "SELECT 1");
        const char *want;
        if (kind == 0) {            /* header CRC */
            frame_seg_put(&seg, env.p, env.len, true, false);
            seg.p[3] ^= 0x01;
            want = "invalid, unrecoverable CRC mismatch detected in frame header. Read ";
        } else if (kind == 1) {     /* payload CRC */
            frame_seg_put(&seg, env.p, env.len, true, false);
            seg.p[6 + 9] ^= 0x01;
            want = "invalid, unrecoverable CRC mismatch detected in frame body. Read ";
        } else if (kind == 2) {     /* a self-contained segment with half an envelope */
            frame_seg_put(&seg, env.p, env.len - 3, true, false);
            want = "does not hold whole messages";
        } else if (kind == 3) {     /* a large message's first segment without the header */
            frame_seg_put(&seg, env.p, 5, false, false);
            want = "less than a message header";
        } else {                    /* a large message's segment longer than the message */
            cs_buf_put(&env, "xyz", 3);
            frame_seg_put(&seg, env.p, env.len, false, false);
            want = "Invalid frame: a large message of";
        }
        send_all(fd, seg.p, seg.len);
        v5rd rd;
        v5rd_init(&rd, fd, false);
        v5_expect_error(&rd, 0, CS_ERR_PROTOCOL, want);
        expect_eof(fd);
        v5rd_destroy(&rd);
        cs_buf_destroy(&env);
        cs_buf_destroy(&seg);
        close(fd);
    }
    v5rd rd;
    v5rd_init(&rd, other, false);
    v5_query(other, 9, "SELECT 1", false);
    v5_expect(&rd, OP_RESULT, 9);
    v5rd_destroy(&rd);
    close(other);
}

/* A self-contained segment between the segments of a multi-segment
 * request is taken at once, and the large request once whole (Cassandra's
 * AbstractMessageHandler does the same); between those of an oversize
 * request, which is skipped as it arrives, it is still refused. */
Test(server_conn, v5_self_contained_between_large_segments)
{
    int fd = v5_conn(NULL);
    cs_buf big, small, wire;
    cs_buf_init(&big);
    cs_buf_init(&small);
    cs_buf_init(&wire);
    put_long_select5(&big, 10);
    size_t cut1 = FRAME_SEG_MAX_PAYLOAD, cut2 = 2 * FRAME_SEG_MAX_PAYLOAD;
    cr_assert_gt(big.len, cut2);
    frame_seg_put(&wire, big.p, cut1, false, false);
    put_query5(&small, 11, "SELECT 1");
    frame_seg_put(&wire, small.p, small.len, true, false);
    frame_seg_put(&wire, big.p + cut1, cut2 - cut1, false, false);
    cs_buf_reset(&small);
    put_query5(&small, 12, "warn");
    put_query5(&small, 13, "SELECT 1");
    frame_seg_put(&wire, small.p, small.len, true, false);
    frame_seg_put(&wire, big.p + cut2, big.len - cut2, false, false);
    send_all(fd, wire.p, wire.len);
    v5rd rd;
    v5rd_init(&rd, fd, false);
    v5_expect(&rd, OP_RESULT, 11);
    v5_expect(&rd, OP_RESULT, 12);
    v5_expect(&rd, OP_RESULT, 13);
    v5_expect(&rd, OP_RESULT, 10);
    v5_query(fd, 14, "SELECT 1", false);   /* and the connection goes on */
    v5_expect(&rd, OP_RESULT, 14);
    v5rd_destroy(&rd);
    close(fd);

    /* oversize: its bytes are skipped as they come, nothing may come between */
    fd = v5_conn(NULL);
    size_t n = 2u << 20;
    cs_buf_reset(&big);
    put_oversize5(&big, 21, n);
    cs_buf_reset(&wire);
    frame_seg_put(&wire, big.p, FRAME_SEG_MAX_PAYLOAD, false, false);
    cs_buf_reset(&small);
    put_query5(&small, 22, "SELECT 1");
    frame_seg_put(&wire, small.p, small.len, true, false);
    send_all(fd, wire.p, wire.len);
    v5rd_init(&rd, fd, false);
    v5_expect_error(&rd, 0, CS_ERR_PROTOCOL, "a self-contained frame arrived before the last frame of a large message");
    expect_eof(fd);
    v5rd_destroy(&rd);
    close(fd);
    cs_buf_destroy(&big);
    cs_buf_destroy(&small);
    cs_buf_destroy(&wire);
}

/* An envelope over native_transport_max_frame_size in non-self-contained
 * segments: skipped as it arrives, answered on its stream, and the
 * connection goes on, as in v4 (invariant 5). */
Test(server_conn, v5_oversize_message_skipped)
{
    int fd = v5_conn(NULL);
    size_t n = 2u << 20;
    cs_buf env;
    cs_buf_init(&env);
    put_oversize5(&env, 21, n);
    put_query5(&env, 22, "SELECT 1");
    v5_send(fd, &env, false);
    v5rd rd;
    v5rd_init(&rd, fd, false);
    v5_expect_error(&rd, 21, CS_ERR_INVALID, "Request is too big: length 2097161 exceeds maximum allowed length 1048576.");
    v5_expect(&rd, OP_RESULT, 22);
    v5rd_destroy(&rd);
    cs_buf_destroy(&env);
    close(fd);
}

/* The requests of the segments before a corrupt one are answered first,
 * in order, then the error and the close (Cassandra decodes frames in
 * order and fails at the corrupt one). */
Test(server_conn, v5_requests_before_a_corrupt_segment_answered)
{
    int fd = v5_conn(NULL);
    cs_buf env, all;
    cs_buf_init(&env);
    cs_buf_init(&all);
    put_query5(&env, 3, "SELECT 1");
    put_query5(&env, 4, "warn");
    frame_seg_wrap(&all, env.p, env.len, false);
    cs_buf_reset(&env);
    put_query5(&env, 5, "SELECT 1");
    frame_seg_wrap(&all, env.p, env.len, false);
    cs_buf_reset(&env);
    put_query5(&env, 6, "SELECT 1");
    frame_seg_wrap(&all, env.p, env.len, false);
    all.p[all.len - 1] ^= 0x80;       /* the third segment's CRC32 */
    send_all(fd, all.p, all.len);
    v5rd rd;
    v5rd_init(&rd, fd, false);
    v5_expect(&rd, OP_RESULT, 3);
    v5_expect(&rd, OP_RESULT, 4);
    v5_expect(&rd, OP_RESULT, 5);
    v5_expect_error(&rd, 0, CS_ERR_PROTOCOL, "unrecoverable CRC mismatch detected in frame body");
    expect_eof(fd);
    v5rd_destroy(&rd);
    cs_buf_destroy(&env);
    cs_buf_destroy(&all);
    close(fd);
}
