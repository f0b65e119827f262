/*
 * fuzz_conn.c: the connection state machine of server/conn.c, driven
 * whole: a client byte stream goes into one end of a socketpair whose other
 * end is a real connection (conn__accept) on a real libuv loop of a real
 * server (srv_init, one request loop) over a real CQL context and storage
 * engine in a tmpfs directory holding fuzz_cql's schema.  What the server
 * writes is read back from the client end and checked.
 *
 * The input:
 *   [u8 flags][u8 n][n x u16 read sizes][the client's byte stream]
 * The stream goes to the server in pieces: the i-th piece is read size i
 * long (0 counts as 1), the rest after the last size in one piece; after
 * each piece the loop runs until the server has read it and the connection
 * is quiet, so each piece is what one or more of the server's reads see
 * (every chunking of frame headers and bodies across reads).  Flags:
 *   0x01  PasswordAuthenticator (cassandra/cassandra) and the commit log in
 *         batch mode (replies to writes wait for the sync, conn.c
 *         invariant 7); otherwise AllowAllAuthenticator, periodic
 *   0x02  native_transport_max_frame_size 2 KiB (oversize frames,
 *         invariant 5) instead of 16 MiB
 *   0x04  one byte per piece (the read sizes are ignored)
 *   0x08  a slow reader: the socket buffers are a few KiB and the client
 *         reads replies only when the server stops reading (its own write
 *         would block, or the input it sent stays unread) and at the end:
 *         partial writes, uv_write, and back-pressure (invariant 9, at
 *         64 KiB of unsent replies in the fuzz build: Makefile FUZZ_CFLAGS)
 *   0x10  the client ends with shutdown(SHUT_WR) and waits for the server
 *         to close, instead of closing at once
 *   0x20  the client closes right after sending the last piece, replies
 *         unread (a write in flight, replies waiting for the commit log or
 *         queued): the second check below is skipped, the first applies
 *         to what was read before
 *   0x40  v5: the bytes after the first v5 STARTUP frame are segments
 *         whose CRCs the harness writes before sending (the lz4 form when
 *         that STARTUP's body names lz4), so that mutations reach the
 *         envelopes inside segments instead of failing the CRC checks
 *
 * Checked, beyond no crash, hang, leak or sanitizer report:
 *  - every byte the server writes belongs to a well-formed response frame:
 *    version byte 0x80 | the connection's version (the first frame's, v4
 *    for a refused one, v1/v2 for theirs), only the compression, tracing
 *    and warning flags (warnings from v4, compression only after the reply
 *    to STARTUP), a response opcode, the length equal to the body, a body
 *    that decodes (lz4 or snappy included) and whose message parses to its end
 *    (ERROR re-encodes to the same bytes, RESULT as fz_check_result, the
 *    others by their grammar); no partial frame once the connection is
 *    quiet;
 *  - every complete request frame gets exactly one reply on its stream (in
 *    order, unless replies wait for the commit log), as a client would
 *    frame the stream: a refused first version and a negative length get a
 *    ProtocolException and then the connection closes (FIN); an oversize
 *    frame gets InvalidRequest once its bytes have gone by; a frame of
 *    another version, a response, or an opcode that is not a request gets
 *    a ProtocolException; nothing else closes the connection;
 *  - no ServerError; EVENT frames only on stream -1;
 *  - the execution lock is released after every loop iteration, and once
 *    the client has closed the connection is freed (its close callbacks
 *    and pending replies done);
 *  - when an input changed the schema (or every 256 inputs, or every input
 *    with CASSETTE_FUZZ_RESET=1) the servers, contexts and engines are
 *    closed and every cs_malloc must have been freed.
 * CASSETTE_FUZZ_VERBOSE=1 prints every reply.
 */
#include <crypt.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/sockios.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include "common/alloc.h"
#include "common/arena.h"
#include "common/buf.h"
#include "common/err.h"
#include "common/hash.h"
#include "common/util.h"
#include "common/vfs.h"
#include "cql/exec.h"
#include "server/config.h"
#include "server/conn.h"
#include "server/frame.h"
#include "server/msg.h"
#include "storage/storage.h"
#include "tests/fuzz/fuzz_common.h"
#include "tests/fuzz/fuzz_cql_stmts.h"

#define CHECK(cond, ...) do { if (!(cond)) { fprintf(stderr, "fuzz_conn: check failed: %s: ", #cond); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); abort(); } } while (0)

enum {
    F_AUTH = 0x01, F_SMALL_FRAME = 0x02, F_BYTES = 0x04, F_SLOW_READER = 0x08, F_HALF_CLOSE = 0x10,
    F_ABORT = 0x20, F_SEG_CRC = 0x40,
};
#define SMALL_FRAME 2048
#define BIG_FRAME (16u << 20)
#define SETTLE_NS (10ull * 1000 * 1000 * 1000)    /* a connection quiet within 10 s, or a hang */

/* ------------------------------------------------------------ servers */

/* One server: config, engine, CQL context and srv on the shared loop. */
typedef struct env {
    const char *name;
    bool auth;                       /* PasswordAuthenticator, batch commit log */
    bool open;
    char dir[300];
    config cfg;
    st_engine *eng;
    cql_ctx *cql;
    srv server;
} env;

static uv_loop_t g_loop;
static env g_env[2] = { { .name = "allow" }, { .name = "password", .auth = true } };
static const char *g_dir;
static size_t g_alloc0;
static bool g_schema_changed, g_reset_each, g_verbose;
static unsigned g_inputs;
static char g_roles[256];            /* the roles file: cassandra/cassandra, bcrypt cost 4 */

static bool native_running(void *arg) { (void)arg; return true; }

/* Run the setup statements (fuzz_cql's schema) on a fresh context. */
static void env_schema(env *e)
{
    cql_session s;
    memset(&s, 0, sizeof s);
    s.protocol_version = 4;
    snprintf(s.user, sizeof s.user, "cassandra");
    cql_params p;
    msg_params_init(&p);
    for (size_t i = 0; i < sizeof fz_schema / sizeof *fz_schema; i++) {
        cql_result r;
        cql_result_init(&r);
        cs_error err;
        cs_error_init(&err);
        int rc = cql_query(e->cql, &s, fz_schema[i], strlen(fz_schema[i]), &p, &r, &err);
        CHECK(rc == 0, "setup %s: %s: %s", e->name, fz_schema[i], err.msg);
        cql_result_destroy(&r);
    }
    while (cql_background_step(e->cql) == 1) {}
}

static void env_open(env *e)
{
    snprintf(e->dir, sizeof e->dir, "%s/%s", g_dir, e->name);
    char d[400];
    snprintf(d, sizeof d, "%s/data", e->dir);
    vfs_mkdirs(d);
    snprintf(d, sizeof d, "%s/commitlog", e->dir);
    vfs_mkdirs(d);
    if (e->auth) {
        /* The default role, with a cheap hash: each wrong password the
         * fuzzer tries costs one bcrypt. */
        char path[500], text[400];
        snprintf(path, sizeof path, "%s/data/roles.cassette", e->dir);
        snprintf(text, sizeof text, "cassette-roles 2\ncassandra 1 1 %s -\n", g_roles);
        CHECK(fz_write_file(path, text, strlen(text)) == 0, "%s", path);
    }
    config_defaults(&e->cfg);
    e->cfg.authenticator = e->auth ? CONFIG_AUTH_PASSWORD : CONFIG_AUTH_ALLOW_ALL;
    e->cfg.request_loops = 1;
    config_finish(&e->cfg, e->dir);
    e->cfg.st.segment_size = 1 << 20;
    e->cfg.st.memtable_space = 4 << 20;
    e->cfg.st.block_cache_size = 1 << 20;
    e->cfg.st.snapshot_cleanup_period_ms = 1 << 30;   /* no sweep thread allocating beside an input */
    e->cfg.st.sync_mode = e->auth ? ST_SYNC_BATCH : ST_SYNC_PERIODIC;
    CHECK(st_engine_open(&e->cfg.st, &e->eng) == 0, "%s: engine open", e->name);
    e->cfg.cql.password_authenticator = e->auth;
    CHECK(cql_ctx_new(e->eng, &e->cfg.cql, &e->cql) == 0, "%s: cql context", e->name);
    env_schema(e);
    CHECK(srv_init(&e->server, &g_loop, 1, &e->cfg, e->eng, e->cql) == 0, "srv_init");
    cql_native_set(e->cql, "127.0.0.1", 9042, native_running, NULL);
    srv_loop_thread_begin(&e->server.loops[0]);
    e->open = true;
}

static void run_nowait(int times)
{
    for (int i = 0; i < times; i++)
        uv_run(&g_loop, UV_RUN_NOWAIT);
}

static void env_close(env *e)
{
    if (!e->open)
        return;
    srv_close(&e->server);
    run_nowait(4);
    CHECK(e->server.loops[0].n_conns == 0, "%s: connections left at close", e->name);
    srv_join(&e->server);
    srv_loop_thread_end(e->eng, &g_loop);
    run_nowait(4);
    cql_ctx_free(e->cql);
    st_engine_close(e->eng, false);
    config_destroy(&e->cfg);
    e->cql = NULL;
    e->eng = NULL;
    e->open = false;
    fz_empty_dir(e->dir);
}

/* Close every server; every allocation must be back. */
static void reset_all(void)
{
    for (int i = 0; i < 2; i++)
        env_close(&g_env[i]);
    cs_arena_cache_enable(false);    /* srv_loop_thread_begin's chunk cache */
    CHECK(cs_alloc_count() == g_alloc0, "%zu allocations not freed by the servers, contexts and engines",
          cs_alloc_count() - g_alloc0);
}

static env *env_get(bool auth)
{
    env *e = &g_env[auth ? 1 : 0];
    if (!e->open)
        env_open(e);
    return e;
}

/* ------------------------------------------------------------ the client */

typedef struct client {
    int fd;                          /* our end of the socketpair */
    bool eof;                        /* the server closed its end (read 0) */
    bool write_closed;               /* shutdown(SHUT_WR) or EPIPE */
    uint8_t *in;                     /* bytes the server wrote, not yet parsed */
    size_t in_len, in_cap;
    size_t total_in;
} client;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Read what the server wrote (non-blocking); returns the bytes read. */
static size_t client_read(client *cl)
{
    size_t got = 0;
    while (!cl->eof) {
        if (cl->in_cap - cl->in_len < 65536) {
            cl->in_cap = cl->in_cap * 2 + 65536;
            cl->in = realloc(cl->in, cl->in_cap);
            CHECK(cl->in != NULL, "realloc");
        }
        ssize_t r = recv(cl->fd, cl->in + cl->in_len, cl->in_cap - cl->in_len, MSG_DONTWAIT);
        if (r > 0) {
            cl->in_len += (size_t)r;
            cl->total_in += (size_t)r;
            got += (size_t)r;
        } else if (r == 0) {
            cl->eof = true;
        } else {
            CHECK(errno == EAGAIN || errno == EWOULDBLOCK || errno == ECONNRESET, "recv: %s", strerror(errno));
            if (errno == ECONNRESET)
                cl->eof = true;
            break;
        }
    }
    return got;
}

/* Bytes we sent that the server has not read yet (AF_UNIX: the send
 * queue holds them until the reader has consumed them). */
static int client_unread(const client *cl)
{
    int n = 0;
    if (ioctl(cl->fd, SIOCOUTQ, &n) != 0)
        return 0;
    return n;
}

/* ------------------------------------------------------------ what a client expects */

/* One reply a client framing the stream expects: its stream and, when
 * the framing alone decides it, the ERROR code (-1: any reply). */
typedef struct expect { int16_t stream; int code; } expect;

typedef struct model {
    expect *e;
    int n;
    bool close;                      /* the server closes after the last one */
    bool open;                       /* v5: a STARTUP may switch to segments; the replies past
                                        e[0..n) and the close are not modelled */
    uint8_t version;                 /* the connection's (0: none fixed) */
    uint8_t refuse_version;          /* a refused first frame's reply version */
} model;

static bool is_request_opcode(uint8_t op)
{
    return op == OP_STARTUP || op == OP_OPTIONS || op == OP_QUERY || op == OP_PREPARE ||
           op == OP_EXECUTE || op == OP_REGISTER || op == OP_BATCH || op == OP_AUTH_RESPONSE;
}

/* Frame the whole stream as conn.c's invariants 1, 2 and 5 say. */
static void model_build(model *m, const uint8_t *p, size_t n, size_t max_frame)
{
    m->n = 0;
    m->close = false;
    m->open = false;
    m->version = 0;
    m->refuse_version = 0;
    m->e = realloc(m->e, (n / FRAME_HEADER_LEN + 2) * sizeof *m->e);
    size_t off = 0;
    uint64_t discard = 0;
    int16_t discard_stream = 0;
    while (off < n) {
        if (discard > 0) {
            size_t k = n - off < discard ? n - off : (size_t)discard;
            off += k;
            discard -= k;
            if (discard == 0)
                m->e[m->n++] = (expect){ discard_stream, CS_ERR_INVALID };
            continue;
        }
        uint8_t v = p[off] & 0x7f;
        if (m->version == 0) {
            if (v != 3 && v != 4 && v != 5) {
                if (n - off >= 4) {
                    m->e[m->n++] = (expect){ (int16_t)cs_be16(p + off + 2), CS_ERR_PROTOCOL };
                    m->close = true;
                    m->refuse_version = (v == 1 || v == 2) ? v : 4;
                }
                return;
            }
            m->version = v;
        }
        if (n - off < FRAME_HEADER_LEN)
            return;
        int16_t stream = (int16_t)cs_be16(p + off + 2);
        uint32_t len = cs_be32(p + off + 5);
        if (len > 0x7fffffffu) {
            m->e[m->n++] = (expect){ stream, CS_ERR_PROTOCOL };
            m->close = true;
            return;
        }
        if ((uint64_t)len + FRAME_HEADER_LEN > max_frame) {
            discard = (uint64_t)len + FRAME_HEADER_LEN;
            discard_stream = stream;
            continue;
        }
        if (n - off - FRAME_HEADER_LEN < len)
            return;
        int code = -1;
        if (v != m->version || (p[off] & FRAME_DIR_RESPONSE) || !is_request_opcode(p[off + 4]))
            code = CS_ERR_PROTOCOL;
        m->e[m->n++] = (expect){ stream, code };
        off += FRAME_HEADER_LEN + len;
        if (m->version == 5 && code < 0 && p[off - FRAME_HEADER_LEN - len + 4] == OP_STARTUP) {
            /* whether it switches to segments is the STARTUP's content */
            m->open = true;
            return;
        }
    }
}

/* ------------------------------------------------------------ checking replies */

typedef struct got { int16_t stream; uint8_t opcode; int code; } got;

typedef struct checker {
    got *r;                          /* replies (EVENTs excluded), in arrival order */
    int n, cap;
    int frames;                      /* every frame, EVENTs included */
    bool compression_possible;       /* a READY or AUTHENTICATE has been seen */
    uint8_t version;                 /* what the version byte must say (0: the first frame's) */
    bool seg;                        /* v5: READY/AUTHENTICATE seen, the rest is segments */
    int seg_lz4;                     /* their form: -1 until the first header's CRC24 tells */
    cs_buf env;                      /* envelopes unframed from the segments, not yet checked */
    cs_buf scratch;
} checker;

static void check_error_body(uint8_t version, const uint8_t *b, size_t n, got *g)
{
    cs_error e;
    CHECK(msg_error_decode(version, b, n, &e) == 0, "stream %d: ERROR body does not decode", g->stream);
    g->code = e.code;
    CHECK(e.code != CS_ERR_SERVER, "stream %d: ServerError: %s", g->stream, e.msg);
    /* Every field read back and written again gives the same bytes: none
     * missing, none extra. */
    cs_buf again;
    cs_buf_init(&again);
    msg_put_error(&again, version, &e);
    CHECK(again.len == n && memcmp(again.p, b, n) == 0,
          "stream %d: ERROR 0x%04x body (%zu bytes) is not what its fields encode to (%zu bytes): %s",
          g->stream, (unsigned)e.code, n, again.len, e.msg);
    cs_buf_destroy(&again);
    if (g_verbose)
        fprintf(stderr, "  ERROR 0x%04x %s\n", (unsigned)e.code, e.msg);
}

/* A [string multimap] (SUPPORTED), to its end. */
static void check_supported(const uint8_t *b, size_t n)
{
    cs_rd r;
    cs_rd_init(&r, b, n);
    uint16_t k = cs_rd_u16(&r);
    for (uint16_t i = 0; i < k && !r.err; i++) {
        size_t len;
        cs_rd_string(&r, &len);
        uint16_t m = cs_rd_u16(&r);
        for (uint16_t j = 0; j < m && !r.err; j++)
            cs_rd_string(&r, &len);
    }
    CHECK(!r.err && cs_rd_left(&r) == 0, "SUPPORTED body");
}

/* Check the complete reply frame (envelope) at p[0..avail): returns its
 * length, or 0 if it is not all there. */
static size_t check_one(checker *ck, const uint8_t *p, size_t avail)
{
    if (avail < FRAME_HEADER_LEN)
        return 0;
    frame_header h;
    CHECK(frame_header_parse(p, &h) == 0, "reply %d: negative length", ck->frames);
    if (avail - FRAME_HEADER_LEN < h.length)
        return 0;
    const uint8_t *body = p + FRAME_HEADER_LEN;
    int idx = ck->frames++;
    CHECK(h.response, "reply %d: no response bit (0x%02x)", idx, p[0]);
    if (ck->version == 0)
        ck->version = h.version;
    CHECK(h.version == ck->version, "reply %d: version %u after %u", idx, h.version, ck->version);
    CHECK((h.flags & ~(FRAME_FLAG_COMPRESSION | FRAME_FLAG_TRACING | FRAME_FLAG_WARNING)) == 0,
          "reply %d: flags 0x%02x", idx, h.flags);
    CHECK(!(h.flags & FRAME_FLAG_COMPRESSION) || ck->compression_possible,
          "reply %d: compressed before the reply to STARTUP", idx);
    CHECK(!(h.flags & FRAME_FLAG_COMPRESSION) || h.version < 5, "reply %d: a compressed v5 envelope", idx);
    CHECK(!(h.flags & FRAME_FLAG_WARNING) || (h.version >= 4 && h.opcode == OP_RESULT),
          "reply %d: warnings on opcode %u at v%u", idx, h.opcode, h.version);
    CHECK(!(h.flags & FRAME_FLAG_TRACING) || h.opcode == OP_RESULT, "reply %d: tracing on opcode %u",
          idx, h.opcode);
    frame_body fb;
    int rc = frame_body_decode(&h, body, h.length, 1u << 30, &fb);
    if (rc != 0 && (h.flags & FRAME_FLAG_COMPRESSION)) {   /* the client's STARTUP may have named snappy */
        frame_body_destroy(&fb);
        rc = frame_body_decode_with(&h, body, h.length, 1u << 30, FRAME_COMP_SNAPPY, &fb);
    }
    CHECK(rc == 0, "reply %d (opcode %u, stream %d): body does not decode: %s", idx, h.opcode, h.stream,
          cs_strerror(rc));
    got g = { h.stream, h.opcode, -1 };
    if (g_verbose)
        fprintf(stderr, "reply %d: v%u stream %d %s flags 0x%02x, %zu bytes\n", idx, h.version, h.stream,
                msg_opcode_name(h.opcode), h.flags, fb.msg_len);
    char what[64];
    snprintf(what, sizeof what, "reply %d (stream %d)", idx, h.stream);
    cs_rd r;
    cs_rd_init(&r, fb.msg, fb.msg_len);
    size_t len;
    switch (h.opcode) {
    case OP_ERROR:
        check_error_body(h.version, fb.msg, fb.msg_len, &g);
        break;
    case OP_READY:
        CHECK(fb.msg_len == 0, "%s: READY with a body", what);
        if (!ck->compression_possible && h.version == 5)
            ck->seg = true;
        ck->compression_possible = true;
        break;
    case OP_AUTHENTICATE:
        CHECK(!(h.flags & FRAME_FLAG_COMPRESSION), "%s: AUTHENTICATE compressed", what);
        cs_rd_string(&r, &len);
        CHECK(!r.err && cs_rd_left(&r) == 0, "%s: AUTHENTICATE body", what);
        if (!ck->compression_possible && h.version == 5)
            ck->seg = true;
        ck->compression_possible = true;
        break;
    case OP_SUPPORTED:
        check_supported(fb.msg, fb.msg_len);
        break;
    case OP_AUTH_SUCCESS: {
        const uint8_t *t;
        cs_rd_bytes(&r, &t);
        CHECK(!r.err && cs_rd_left(&r) == 0, "%s: AUTH_SUCCESS body", what);
        break;
    }
    case OP_RESULT: {
        static fz_result fr;
        fz_check_result(what, h.version, fb.msg, fb.msg_len, &fr);
        if (fr.kind == RESULT_SCHEMA_CHANGE)
            g_schema_changed = true;
        break;
    }
    case OP_EVENT: {
        cql_schema_change c;
        CHECK(h.stream == -1, "%s: EVENT on a request's stream", what);
        CHECK(msg_event_decode(fb.msg, fb.msg_len, &c) == 0, "%s: EVENT body", what);
        g_schema_changed = true;
        break;
    }
    default:
        CHECK(false, "%s: opcode %u is not a response", what, h.opcode);
    }
    frame_body_destroy(&fb);
    if (h.opcode != OP_EVENT) {
        if (ck->n == ck->cap) {
            ck->cap = ck->cap * 2 + 64;
            ck->r = realloc(ck->r, (size_t)ck->cap * sizeof *ck->r);
        }
        ck->r[ck->n++] = g;
    }
    return FRAME_HEADER_LEN + h.length;
}

/* The segment form, from the first header (both CRC24s are tried). */
static bool seg_form(checker *ck, const uint8_t *p, size_t n)
{
    if (ck->seg_lz4 >= 0)
        return true;
    if (n >= 6) {
        uint64_t h = (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16;
        uint32_t c = (uint32_t)p[3] | (uint32_t)p[4] << 8 | (uint32_t)p[5] << 16;
        if (frame_seg_crc24(h, 3) == c) {
            ck->seg_lz4 = 0;
            return true;
        }
    }
    if (n >= 8) {
        uint64_t h = 0;
        for (int i = 4; i >= 0; i--)
            h = h << 8 | p[i];
        uint32_t c = (uint32_t)p[5] | (uint32_t)p[6] << 8 | (uint32_t)p[7] << 16;
        CHECK(frame_seg_crc24(h, 5) == c, "the first segment's header fails both CRC24 forms");
        ck->seg_lz4 = 1;
        return true;
    }
    return false;
}

/* Parse and check every complete frame at the start of cl->in (v5: every
 * complete segment, and the envelopes in them); keep a partial one. */
static void check_frames(checker *ck, client *cl)
{
    size_t off = 0, k;
    while (!ck->seg && (k = check_one(ck, cl->in + off, cl->in_len - off)) > 0)
        off += k;
    while (ck->seg && seg_form(ck, cl->in + off, cl->in_len - off)) {
        frame_seg sg;
        int rc = frame_seg_decode(cl->in + off, cl->in_len - off, ck->seg_lz4 == 1, &ck->scratch, &sg);
        if (rc == 0)
            break;
        CHECK(rc == 1, "segment after %d replies: %s%s", ck->frames, cs_strerror(rc),
              sg.bad_header ? " (header CRC)" : sg.bad_lz4 ? " (lz4)" : " (payload CRC)");
        CHECK(sg.payload_len <= FRAME_SEG_MAX_PAYLOAD, "segment payload of %zu bytes", sg.payload_len);
        cs_buf_put(&ck->env, sg.payload, sg.payload_len);
        off += sg.size;
        size_t eo = 0;
        while ((k = check_one(ck, ck->env.p + eo, ck->env.len - eo)) > 0)
            eo += k;
        CHECK(!sg.self_contained || eo == ck->env.len, "a self-contained segment ends inside a reply");
        memmove(ck->env.p, ck->env.p + eo, ck->env.len - eo);
        ck->env.len -= eo;
    }
    memmove(cl->in, cl->in + off, cl->in_len - off);
    cl->in_len -= off;
}

static int cmp_stream(const void *a, const void *b)
{
    return *(const int16_t *)a - *(const int16_t *)b;
}

/* The replies against what the framing expects (see the top). */
static void check_against_model(const checker *ck, const model *m, bool ordered)
{
    if (m->close && m->refuse_version)
        CHECK(ck->version == m->refuse_version || ck->n == 0, "refusal in v%u, not v%u", ck->version,
              m->refuse_version);
    else if (m->version && ck->frames > 0)
        CHECK(ck->version == m->version, "replies in v%u on a v%u connection", ck->version, m->version);
    if (m->open)
        CHECK(ck->n >= m->n, "%d replies for the %d complete requests up to a v5 STARTUP", ck->n, m->n);
    else
        CHECK(ck->n == m->n, "%d replies for %d complete requests", ck->n, m->n);
    if (ordered) {
        for (int i = 0; i < m->n; i++) {
            CHECK(ck->r[i].stream == m->e[i].stream, "reply %d on stream %d, request on stream %d", i,
                  ck->r[i].stream, m->e[i].stream);
            CHECK(m->e[i].code < 0 || (ck->r[i].opcode == OP_ERROR && ck->r[i].code == m->e[i].code),
                  "reply %d (stream %d): opcode %u code 0x%04x, want ERROR 0x%04x", i, ck->r[i].stream,
                  ck->r[i].opcode, (unsigned)ck->r[i].code, (unsigned)m->e[i].code);
        }
        return;
    }
    int16_t *a = malloc((size_t)(m->n + 1) * sizeof *a), *b = malloc((size_t)(m->n + 1) * sizeof *b);
    for (int i = 0; i < m->n; i++) {
        a[i] = ck->r[i].stream;
        b[i] = m->e[i].stream;
    }
    qsort(a, (size_t)m->n, sizeof *a, cmp_stream);
    qsort(b, (size_t)m->n, sizeof *b, cmp_stream);
    CHECK(memcmp(a, b, (size_t)m->n * sizeof *a) == 0, "the replies' streams are not the requests'");
    free(a);
    free(b);
}

/* ------------------------------------------------------------ one connection */

/* Run the loop until the server has read everything sent, has nothing more
 * to write, and no reply waits for the commit log; read what it wrote
 * (the slow reader, `hold`: only once the server has stopped reading what
 * was sent for two iterations).  A connection that does not get there
 * within SETTLE_NS is a hang. */
static void settle(env *e, client *cl, checker *ck, bool hold)
{
    srv_loop *l = &e->server.loops[0];
    uint64_t start = now_ns();
    int quiet = 0, stalled = 0, last_unread = -1;
    while (quiet < 3) {
        bool waiting = l->sync_waits > 0;
        uv_run(&g_loop, waiting && l->conns ? UV_RUN_ONCE : UV_RUN_NOWAIT);
        CHECK(!l->exec_held, "the execution lock is held after a loop iteration");
        int unread = client_unread(cl);
        stalled = unread > 0 && unread == last_unread ? stalled + 1 : 0;
        last_unread = unread;
        size_t got = 0;
        if (!hold || stalled >= 2) {
            got = client_read(cl);
            check_frames(ck, cl);
        }
        bool busy = got > 0 || waiting || l->flushq != NULL || unread > 0;
        quiet = busy ? 0 : quiet + 1;
        if (waiting && !l->conns)
            usleep(100);             /* a closed connection's reply waits for the sync thread */
        CHECK(now_ns() - start < SETTLE_NS, "the connection did not settle in %llu s (sync waits %d, "
              "unread %d)", SETTLE_NS / 1000000000ull, l->sync_waits, client_unread(cl));
    }
}

/* Send one piece; when the socket is full, let the server read (and, for
 * the slow reader, read its replies so that it can go on). */
static void send_piece(env *e, client *cl, checker *ck, const uint8_t *p, size_t n, bool slow)
{
    while (n > 0 && !cl->write_closed) {
        ssize_t w = send(cl->fd, p, n, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (w > 0) {
            p += w;
            n -= (size_t)w;
            continue;
        }
        if (w < 0 && (errno == EPIPE || errno == ECONNRESET)) {
            cl->write_closed = true;     /* the server closed its end */
            break;
        }
        CHECK(w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK), "send: %s", strerror(errno));
        uv_run(&g_loop, UV_RUN_NOWAIT);
        if (slow) {
            client_read(cl);
            check_frames(ck, cl);
        }
    }
}

/* The client has closed: the connection must go, with its close callbacks
 * and the replies it had waiting for the commit log. */
static void wait_freed(srv_loop *l)
{
    uint64_t start = now_ns();
    while (l->conns || l->sync_waits > 0) {
        uv_run(&g_loop, UV_RUN_NOWAIT);
        CHECK(!l->exec_held, "the execution lock is held after a loop iteration");
        if (l->conns || l->sync_waits > 0)
            usleep(50);
        CHECK(now_ns() - start < SETTLE_NS, "the connection was not freed after the client closed");
    }
    run_nowait(1);
    CHECK(l->n_conns == 0 && l->flushq == NULL && !l->exec_held, "connection state left");
}

static void run_connection(env *e, uint8_t flags, const uint16_t *sizes, int n_sizes, const uint8_t *p, size_t n)
{
    static model m;
    static checker ck;
    ck.n = 0;
    ck.frames = 0;
    ck.compression_possible = false;
    ck.version = 0;
    ck.seg = false;
    ck.seg_lz4 = -1;
    cs_buf_reset(&ck.env);
    model_build(&m, p, n, e->cfg.max_frame_size);
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0, "socketpair: %s", strerror(errno));
    bool slow = flags & F_SLOW_READER;
    if (slow) {
        int sz = 4096;
        setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &sz, sizeof sz);
        setsockopt(sv[0], SOL_SOCKET, SO_RCVBUF, &sz, sizeof sz);
        setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sz, sizeof sz);
    }
    static client cl;
    cl.fd = sv[0];
    cl.eof = cl.write_closed = false;
    cl.in_len = cl.total_in = 0;
    srv_loop *l = &e->server.loops[0];
    CHECK(conn__accept(l, sv[1]) == 0, "conn__accept");
    bool abort_early = flags & F_ABORT;
    size_t off = 0;
    int i = 0;
    while (off < n) {
        size_t k = (flags & F_BYTES) ? 1 : i < n_sizes ? (sizes[i] ? sizes[i] : 1) : n - off;
        i++;
        if (k > n - off)
            k = n - off;
        send_piece(e, &cl, &ck, p + off, k, slow);
        off += k;
        if (off < n || !abort_early)
            settle(e, &cl, &ck, slow);
    }
    if (abort_early) {
        uv_run(&g_loop, UV_RUN_NOWAIT);
        close(cl.fd);
        wait_freed(l);
        cs_buf_destroy(&ck.env);
        cs_buf_destroy(&ck.scratch);
        return;
    }
    settle(e, &cl, &ck, false);
    CHECK(cl.in_len == 0 && ck.env.len == 0, "%zu bytes of a partial reply frame at the end (of %zu written)",
          cl.in_len + ck.env.len, cl.total_in);
    check_against_model(&ck, &m, !e->auth);
    CHECK(m.open || cl.eof == m.close, "the server %s the connection", cl.eof ? "closed" : "did not close");
    /* The client goes away; the connection must follow. */
    if (flags & F_HALF_CLOSE) {
        shutdown(cl.fd, SHUT_WR);
        uint64_t start = now_ns();
        while (!cl.eof) {
            uv_run(&g_loop, UV_RUN_NOWAIT);
            client_read(&cl);
            CHECK(now_ns() - start < SETTLE_NS, "no close after the client's FIN");
        }
    }
    close(cl.fd);
    wait_freed(l);
    cs_buf_destroy(&ck.env);
    cs_buf_destroy(&ck.scratch);
}

/* F_SEG_CRC: write the CRCs of the segments after the first v5 STARTUP
 * frame of p[0..n) in place. */
static void fix_segment_crcs(uint8_t *p, size_t n)
{
    size_t off = 0;
    bool lz4 = false;
    for (;;) {
        if (n - off < FRAME_HEADER_LEN || (p[off] & 0x7f) != 5)
            return;
        uint32_t len = cs_be32(p + off + 5);
        if (len > n - off - FRAME_HEADER_LEN)
            return;
        bool startup = p[off + 4] == OP_STARTUP;
        if (startup)
            lz4 = memmem(p + off + FRAME_HEADER_LEN, len, "lz4", 3) != NULL;
        off += FRAME_HEADER_LEN + len;
        if (startup)
            break;
    }
    static const uint8_t seed[4] = { 0xFA, 0x2D, 0x55, 0xCA };
    const size_t hn = lz4 ? 5 : 3;
    while (n - off >= hn + 3) {
        uint64_t h = 0;
        for (size_t i = hn; i-- > 0;)
            h = h << 8 | p[off + i];
        uint32_t c = frame_seg_crc24(h, (int)hn);
        for (size_t i = 0; i < 3; i++)
            p[off + hn + i] = (uint8_t)(c >> (8 * i));
        size_t plen = (size_t)(h & FRAME_SEG_MAX_PAYLOAD);
        off += hn + 3;
        if (n - off < plen + 4)
            return;
        uint32_t pc = cs_crc32(cs_crc32(0, seed, 4), p + off, plen);
        for (size_t i = 0; i < 4; i++)
            p[off + plen + i] = (uint8_t)(pc >> (8 * i));
        off += plen + 4;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_in in = { data, size, 0 };
    uint8_t flags = fz_u8(&in);
    int n_sizes = fz_u8(&in);
    uint16_t sizes[256];
    for (int i = 0; i < n_sizes; i++)
        sizes[i] = fz_u16(&in);
    env *e = env_get(flags & F_AUTH);
    e->cfg.max_frame_size = (flags & F_SMALL_FRAME) ? SMALL_FRAME : BIG_FRAME;
    g_schema_changed = false;
    if (g_verbose)
        fprintf(stderr, "input: flags 0x%02x, %d read sizes, %zu bytes\n", flags, n_sizes, fz_left(&in));
    if (flags & F_SEG_CRC) {
        size_t n = fz_left(&in);
        uint8_t *copy = malloc(n ? n : 1);
        memcpy(copy, in.p + in.pos, n);
        fix_segment_crcs(copy, n);
        run_connection(e, flags, sizes, n_sizes, copy, n);
        free(copy);
    } else {
        run_connection(e, flags, sizes, n_sizes, in.p + in.pos, fz_left(&in));
    }
    for (int i = 0; i < 64 && cql_background_step(e->cql) == 1; i++) {}
    if (g_schema_changed || g_reset_each || ++g_inputs % 256 == 0)
        reset_all();
    return 0;
}

/* ------------------------------------------------------------ seeds */

/* A client's byte stream, built with the project's encoders. */
typedef struct sb {
    cs_buf s;
    uint8_t v;                       /* frame version */
    bool lz4;                        /* compress request bodies (after STARTUP's reply) */
    int16_t stream;                  /* the next stream id */
} sb;

static void sb_frame(sb *b, uint8_t op, const cs_buf *body, uint8_t flags)
{
    frame_writer w;
    frame_begin(&w, &b->s, b->v, false, b->stream++, op, flags, b->lz4, NULL, NULL, 0);
    if (body)
        cs_buf_put(&b->s, body->p, body->len);
    frame_end(&w);
}

static void sb_options(sb *b) { sb_frame(b, OP_OPTIONS, NULL, 0); }

static void sb_startup(sb *b, const msg_kv *kv, int n)
{
    cs_buf body;
    cs_buf_init(&body);
    msg_put_startup(&body, kv, n);
    sb_frame(b, OP_STARTUP, &body, 0);
    cs_buf_destroy(&body);
}

#define KV(k, v) { k, sizeof(k) - 1, v, sizeof(v) - 1 }
static const msg_kv py_startup[] = { KV("CQL_VERSION", "3.4.6"), KV("DRIVER_NAME", "DataStax Python Driver"),
                                     KV("DRIVER_VERSION", "3.25.0") };
static const msg_kv py_startup_lz4[] = { KV("CQL_VERSION", "3.4.6"), KV("COMPRESSION", "lz4"),
                                         KV("DRIVER_NAME", "DataStax Python Driver"),
                                         KV("DRIVER_VERSION", "3.25.0") };
static const msg_kv node_startup[] = { KV("CQL_VERSION", "3.0.0"),
                                       KV("DRIVER_NAME", "Apache Cassandra Node.js Driver"),
                                       KV("DRIVER_VERSION", "4.10.0"),
                                       KV("CLIENT_ID", "6f1c8d2e-3b4a-4c5d-8e9f-0a1b2c3d4e5f") };

static void sb_query_p(sb *b, const char *q, const cql_params *p, uint8_t flags)
{
    cs_buf body;
    cs_buf_init(&body);
    msg_put_query(&body, b->v, q, strlen(q), p);
    sb_frame(b, OP_QUERY, &body, flags);
    cs_buf_destroy(&body);
}

/* A QUERY at consistency `cl` and page size `page` (-1: none). */
static void sb_query(sb *b, const char *q, uint16_t cl, int32_t page)
{
    cql_params p;
    msg_params_init(&p);
    p.consistency = cl;
    p.page_size = page;
    sb_query_p(b, q, &p, 0);
}

static void sb_register(sb *b)
{
    static const char *const ev[] = { "TOPOLOGY_CHANGE", "STATUS_CHANGE", "SCHEMA_CHANGE" };
    cs_buf body;
    cs_buf_init(&body);
    msg_put_register(&body, ev, 3);
    sb_frame(b, OP_REGISTER, &body, 0);
    cs_buf_destroy(&body);
}

static void sb_prepare(sb *b, const char *q)
{
    cs_buf body;
    cs_buf_init(&body);
    msg_put_prepare(&body, b->v, q, strlen(q), NULL);
    sb_frame(b, OP_PREPARE, &body, 0);
    cs_buf_destroy(&body);
}

static void sb_execute(sb *b, const uint8_t id[16], const cql_value *vals, int n, bool skip_meta)
{
    cql_params p;
    msg_params_init(&p);
    p.values = (cql_value *)vals;
    p.n_values = n;
    p.skip_metadata = skip_meta;
    p.page_size = 5000;
    cs_buf body;
    cs_buf_init(&body);
    msg_put_execute(&body, b->v, id, 16, NULL, 0, &p);
    sb_frame(b, OP_EXECUTE, &body, 0);
    cs_buf_destroy(&body);
}

static void sb_auth(sb *b, const char *user, const char *pass)
{
    char tok[128];
    int n = snprintf(tok, sizeof tok, "%c%s%c%s", 0, user, 0, pass);
    cs_buf body;
    cs_buf_init(&body);
    msg_put_auth_response(&body, (const uint8_t *)tok, n);
    sb_frame(b, OP_AUTH_RESPONSE, &body, 0);
    cs_buf_destroy(&body);
}

/* v5: the frames from `at` on become segments. */
static void sb_segments(sb *b, size_t at, bool lz4)
{
    cs_buf w;
    cs_buf_init(&w);
    frame_seg_wrap(&w, b->s.p + at, b->s.len - at, lz4);
    b->s.len = at;
    cs_buf_put(&b->s, w.p, w.len);
    cs_buf_destroy(&w);
}

/* Write seed `name`: [flags][n sizes][sizes][stream]. */
static void sb_seed(sb *b, const char *name, uint8_t flags, const uint16_t *sizes, int n)
{
    cs_buf f;
    cs_buf_init(&f);
    cs_buf_put_u8(&f, flags);
    cs_buf_put_u8(&f, (uint8_t)n);
    for (int i = 0; i < n; i++)
        cs_buf_put_u16(&f, sizes[i]);
    cs_buf_put(&f, b->s.p, b->s.len);
    fz_seed(name, f.p, f.len);
    cs_buf_destroy(&f);
}

static void sb_init(sb *b, uint8_t v)
{
    cs_buf_init(&b->s);
    b->v = v;
    b->lz4 = false;
    b->stream = 0;
}

static void sb_reset(sb *b, uint8_t v)
{
    cs_buf_destroy(&b->s);
    sb_init(b, v);
}

/* The prepared statements the seeds execute, and their ids (as the
 * context computes them: md5 of the qualified text). */
static const char *const seed_prepared[] = {
    "SELECT * FROM ks.t WHERE k = ? AND c > ? LIMIT ?",
    "INSERT INTO ks.t (k, c, v) VALUES (?, ?, ?)",
    "UPDATE ks.cnt SET n = n + ? WHERE k = ?",
};
static uint8_t seed_ids[3][16];

static void seed_ids_get(void)
{
    env *e = env_get(false);
    cql_session s;
    memset(&s, 0, sizeof s);
    s.protocol_version = 4;
    for (int i = 0; i < 3; i++) {
        cql_result r;
        cql_result_init(&r);
        cs_error err;
        cs_error_init(&err);
        CHECK(cql_prepare(e->cql, &s, seed_prepared[i], strlen(seed_prepared[i]), NULL, &r, &err) == 0,
              "seed prepare: %s", err.msg);
        static fz_result fr;
        fz_check_result("seed prepare", 4, r.body.p, r.body.len, &fr);
        CHECK(fr.have_id, "seed prepare: no id");
        memcpy(seed_ids[i], fr.id, 16);
        cql_result_destroy(&r);
    }
}

#define V(s) { (const uint8_t *)(s), (int32_t)(sizeof(s) - 1) }

static const char *const py_schema_queries[] = {
    "SELECT * FROM system_schema.keyspaces", "SELECT * FROM system_schema.tables",
    "SELECT * FROM system_schema.columns", "SELECT * FROM system_schema.types",
    "SELECT * FROM system_schema.functions", "SELECT * FROM system_schema.aggregates",
    "SELECT * FROM system_schema.triggers", "SELECT * FROM system_schema.indexes",
    "SELECT * FROM system_schema.views", "SELECT * from system_virtual_schema.keyspaces",
    "SELECT * from system_virtual_schema.tables", "SELECT * from system_virtual_schema.columns",
};

static void write_seeds(void)
{
    seed_ids_get();
    sb b;
    sb_init(&b, 4);
    static const uint16_t odd[] = { 1, 8, 9, 3, 200, 2, 17, 1 };

    /* Python driver's control connection at v4 (clients.md §1, §3). */
    sb_options(&b);
    sb_startup(&b, py_startup, 3);
    sb_register(&b);
    sb_query(&b, "SELECT * FROM system.peers_v2", 1, -1);
    sb_query(&b, "SELECT * FROM system.local WHERE key='local'", 1, -1);
    for (size_t i = 0; i < sizeof py_schema_queries / sizeof *py_schema_queries; i++)
        sb_query(&b, py_schema_queries[i], 1, -1);
    sb_seed(&b, "py-v4-control", 0, NULL, 0);
    sb_seed(&b, "py-v4-control-cut", 0, odd, 8);
    sb_seed(&b, "py-v4-control-slow", F_SLOW_READER, NULL, 0);
    sb_seed(&b, "py-v4-control-abort", F_SLOW_READER | F_ABORT, NULL, 0);

    /* Python's version negotiation: OPTIONS at 0x42, 0x41 and 5, refused. */
    static const uint8_t tries[] = { 0x42, 0x41, 5 };
    for (int i = 0; i < 3; i++) {
        sb_reset(&b, tries[i]);
        sb_options(&b);
        sb_startup(&b, py_startup, 3);
        char name[32];
        snprintf(name, sizeof name, "py-refused-v%02x", tries[i]);
        sb_seed(&b, name, 0, NULL, 0);
    }
    /* ... and a v1 client's 8-byte header. */
    sb_reset(&b, 1);
    static const uint8_t v1[] = { 0x01, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00, 0x00 };
    cs_buf_put(&b.s, v1, sizeof v1);
    sb_seed(&b, "v1-options", 0, NULL, 0);

    /* Python pool connection with lz4, a keyspace and user queries at
     * LOCAL_ONE, page size 5000 and a client timestamp (flags 0x24). */
    sb_reset(&b, 4);
    sb_options(&b);
    sb_startup(&b, py_startup_lz4, 4);
    b.lz4 = true;
    sb_query(&b, "USE \"ks\"", 1, -1);
    cql_params p;
    msg_params_init(&p);
    p.consistency = 0x000A;
    p.page_size = 5000;
    p.timestamp = 1700000000000000;
    sb_query_p(&b, "SELECT * FROM t WHERE k = 1", &p, 0);
    sb_query_p(&b, "INSERT INTO t (k, c, v) VALUES (3, 3, 'lz4')", &p, 0);
    sb_prepare(&b, seed_prepared[0]);
    const cql_value sel[] = { V("\0\0\0\x01"), V("\0\0\0\0"), V("\0\0\0\x0a") };
    sb_execute(&b, seed_ids[0], sel, 3, true);
    sb_options(&b);
    sb_seed(&b, "py-v4-lz4", 0, NULL, 0);
    sb_seed(&b, "py-v4-lz4-bytes", F_BYTES, NULL, 0);

    /* Node.js driver: STARTUP first (at 0x42, then v4), OPTIONS, its
     * control queries, REGISTER. */
    sb_reset(&b, 0x42);
    sb_startup(&b, node_startup, 4);
    sb_seed(&b, "node-refused-v42", 0, NULL, 0);
    sb_reset(&b, 4);
    sb_startup(&b, node_startup, 4);
    sb_options(&b);
    sb_query(&b, "SELECT * FROM system.local WHERE key='local'", 1, -1);
    sb_query(&b, "SELECT * FROM system.peers", 1, -1);
    sb_query(&b, "SELECT * FROM system_schema.keyspaces", 1, -1);
    sb_query(&b, "SELECT * FROM system_virtual_schema.keyspaces", 1, -1);
    sb_register(&b);
    sb_seed(&b, "node-v4", 0, NULL, 0);

    /* v3: STARTUP, QUERY, PREPARE and EXECUTE (no pk indexes in PREPARED). */
    sb_reset(&b, 3);
    sb_options(&b);
    sb_startup(&b, py_startup, 3);
    sb_query(&b, "SELECT k, c, v FROM ks.t", 1, 2);
    sb_prepare(&b, seed_prepared[0]);
    sb_execute(&b, seed_ids[0], sel, 3, false);
    sb_query(&b, "SELECT * FROM ks.ty", 1, -1);
    sb_seed(&b, "v3", 0, NULL, 0);

    /* PREPARE and pipelined EXECUTEs (the loop's prefetch hints), a BATCH
     * of a text and a prepared item, a counter batch. */
    sb_reset(&b, 4);
    sb_startup(&b, py_startup, 3);
    sb_prepare(&b, seed_prepared[0]);
    sb_prepare(&b, seed_prepared[1]);
    sb_prepare(&b, seed_prepared[2]);
    const cql_value ins[] = { V("\0\0\0\x07"), V("\0\0\0\x01"), V("seven") };
    for (int i = 0; i < 4; i++) {
        sb_execute(&b, seed_ids[1], ins, 3, false);
        sb_execute(&b, seed_ids[0], sel, 3, true);
    }
    {
        cql_batch_item it[2] = {
            { .query = seed_prepared[1], .query_len = strlen(seed_prepared[1]),
              .values = (cql_value *)ins, .n_values = 3 },
            { .prepared = true, .id = seed_ids[1], .id_len = 16, .values = (cql_value *)ins, .n_values = 3 },
        };
        cql_params bp;
        msg_params_init(&bp);
        cs_buf body;
        cs_buf_init(&body);
        msg_put_batch(&body, 4, 0, it, 2, &bp);
        sb_frame(&b, OP_BATCH, &body, 0);
        cs_buf_reset(&body);
        const cql_value cn[] = { V("\0\0\0\0\0\0\0\x02"), V("\0\0\0\x01") };
        cql_batch_item ct = { .prepared = true, .id = seed_ids[2], .id_len = 16, .values = (cql_value *)cn,
                              .n_values = 2 };
        msg_put_batch(&body, 4, 2, &ct, 1, &bp);
        sb_frame(&b, OP_BATCH, &body, 0);
        cs_buf_destroy(&body);
    }
    sb_seed(&b, "prepare-execute-batch", 0, NULL, 0);
    sb_seed(&b, "prepare-execute-batch-sync", F_AUTH, NULL, 0);   /* refused: not authenticated */

    /* PasswordAuthenticator: STARTUP, AUTHENTICATE, AUTH_RESPONSE, then
     * writes whose replies wait for the (batch) commit log sync. */
    sb_reset(&b, 4);
    sb_options(&b);
    sb_startup(&b, py_startup, 3);
    sb_auth(&b, "cassandra", "cassandra");
    sb_query(&b, "INSERT INTO ks.t (k, c, v) VALUES (4, 4, 'durable')", 1, -1);
    sb_prepare(&b, seed_prepared[1]);
    sb_execute(&b, seed_ids[1], ins, 3, false);
    sb_query(&b, "SELECT * FROM system_views.clients", 1, -1);
    sb_seed(&b, "auth", F_AUTH, NULL, 0);
    sb_seed(&b, "auth-cut", F_AUTH, odd, 8);
    sb_seed(&b, "auth-abort", F_AUTH | F_ABORT, NULL, 0);
    sb_reset(&b, 4);
    sb_startup(&b, py_startup_lz4, 4);
    b.lz4 = true;
    sb_auth(&b, "cassandra", "wrong");
    sb_auth(&b, "cassandra", "cassandra");
    sb_query(&b, "SELECT * FROM system_auth.roles", 1, -1);
    sb_seed(&b, "auth-lz4-retry", F_AUTH, NULL, 0);

    /* Tracing, REGISTER then DDL (RESULT kind 5 and the pushed EVENT),
     * warnings (an unlogged batch over two partitions). */
    sb_reset(&b, 4);
    sb_startup(&b, py_startup, 3);
    sb_register(&b);
    msg_params_init(&p);
    sb_query_p(&b, "SELECT * FROM ks.t WHERE k = 1", &p, FRAME_FLAG_TRACING);
    sb_query(&b, "CREATE TABLE ks.fz (k int PRIMARY KEY, v text)", 1, -1);
    sb_query(&b, "ALTER TABLE ks.fz ADD w int", 1, -1);
    sb_query(&b, "DROP TABLE ks.fz", 1, -1);
    sb_query(&b, "BEGIN UNLOGGED BATCH INSERT INTO ks.t (k, c) VALUES (8, 1); "
                 "INSERT INTO ks.t (k, c) VALUES (9, 1); APPLY BATCH", 1, -1);
    sb_seed(&b, "tracing-ddl-events", 0, NULL, 0);

    /* cqlsh: page size 100, serial consistency SERIAL (flags 0x34). */
    sb_reset(&b, 4);
    sb_options(&b);
    sb_startup(&b, py_startup, 3);
    msg_params_init(&p);
    p.consistency = 1;
    p.page_size = 100;
    p.serial_consistency = 8;
    p.timestamp = 1700000000000001;
    sb_query_p(&b, "describe keyspaces;", &p, 0);
    sb_query_p(&b, "SELECT * FROM ks.t;", &p, 0);
    sb_seed(&b, "cqlsh", 0, NULL, 0);

    /* Protocol errors that keep the connection: a request before STARTUP,
     * STARTUP twice, another version, a response, an unknown opcode, a
     * compressed frame without compression, a bad body. */
    sb_reset(&b, 4);
    sb_query(&b, "SELECT * FROM ks.t", 1, -1);
    sb_startup(&b, py_startup, 3);
    sb_startup(&b, py_startup, 3);
    b.v = 3;
    sb_options(&b);
    b.v = 4;
    static const uint8_t bad[] = {
        0x84, 0x00, 0x00, 0x30, 0x08, 0x00, 0x00, 0x00, 0x00,               /* a RESULT from the client */
        0x04, 0x00, 0x00, 0x31, 0x42, 0x00, 0x00, 0x00, 0x00,               /* opcode 0x42 */
        0x04, 0x01, 0x00, 0x32, 0x07, 0x00, 0x00, 0x00, 0x05, 0, 0, 0, 9, 0, /* compressed, not negotiated */
        0x04, 0x00, 0x00, 0x33, 0x07, 0x00, 0x00, 0x00, 0x02, 0xff, 0xff,   /* a QUERY body cut short */
    };
    cs_buf_put(&b.s, bad, sizeof bad);
    sb_options(&b);
    sb_seed(&b, "protocol-errors", 0, NULL, 0);

    /* An oversize frame (2 KiB limit) skipped as it arrives, then more
     * requests; an lz4 body announcing more than the limit. */
    sb_reset(&b, 4);
    sb_startup(&b, py_startup_lz4, 4);
    {
        char big[3000];
        memset(big, 'x', sizeof big - 1);
        memcpy(big, "SELECT '", 8);
        memcpy(big + sizeof big - 20, "' FROM system.local", 19);
        big[sizeof big - 1] = 0;
        b.lz4 = false;
        sb_query(&b, big, 1, -1);
        b.lz4 = true;
        sb_query(&b, big, 1, -1);
    }
    sb_options(&b);
    sb_seed(&b, "oversize", F_SMALL_FRAME, NULL, 0);
    static const uint16_t few[] = { 100, 1000, 7 };
    sb_seed(&b, "oversize-cut", F_SMALL_FRAME | F_HALF_CLOSE, few, 3);

    /* A negative body length: ProtocolException, then the close. */
    sb_reset(&b, 4);
    sb_options(&b);
    static const uint8_t neg[] = { 0x04, 0x00, 0x00, 0x07, 0x05, 0x80, 0x00, 0x00, 0x00 };
    cs_buf_put(&b.s, neg, sizeof neg);
    sb_options(&b);
    sb_seed(&b, "negative-length", 0, NULL, 0);

    /* v5 as Python 3.25 speaks it: OPTIONS and STARTUP unframed, then
     * segments (conn.c invariant 4): uncompressed and lz4, a message over
     * one payload, one with a CRC broken. */
    for (int lz4 = 0; lz4 < 2; lz4++) {
        sb_reset(&b, 5);
        sb_options(&b);
        sb_startup(&b, lz4 ? py_startup_lz4 : py_startup, lz4 ? 4 : 3);
        size_t at = b.s.len;
        sb_query(&b, "SELECT * FROM system.local WHERE key='local'", 1, -1);
        sb_query(&b, "SELECT * FROM system.peers_v2", 1, -1);
        sb_register(&b);
        sb_prepare(&b, seed_prepared[1]);
        sb_segments(&b, at, lz4);
        sb_seed(&b, lz4 ? "py-v5-lz4" : "py-v5", 0, NULL, 0);
        sb_seed(&b, lz4 ? "py-v5-lz4-crc" : "py-v5-crc", F_SEG_CRC, NULL, 0);
    }
    sb_reset(&b, 5);
    sb_startup(&b, py_startup, 3);
    size_t at = b.s.len;
    char *big = malloc(140000);
    memset(big, ' ', 139999);
    memcpy(big, "SELECT key FROM system.local", 28);
    big[139999] = '\0';
    sb_query(&b, big, 1, -1);
    free(big);
    sb_query(&b, "SELECT key FROM system.local", 1, -1);
    sb_segments(&b, at, false);
    static const uint16_t cut[] = { 50, 60000, 3 };
    sb_seed(&b, "py-v5-large-message", 0, cut, 3);
    sb_seed(&b, "py-v5-large-message-crc", F_SEG_CRC | F_SMALL_FRAME, cut, 3);
    b.s.p[at + 4] ^= 0x10;           /* the first segment's header CRC */
    sb_seed(&b, "py-v5-bad-crc", 0, NULL, 0);
    cs_buf_destroy(&b.s);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_quiet();
    signal(SIGPIPE, SIG_IGN);
    const char *r = getenv("CASSETTE_FUZZ_RESET");
    g_reset_each = r && r[0] == '1';
    const char *v = getenv("CASSETTE_FUZZ_VERBOSE");
    g_verbose = v && v[0] == '1';
    g_dir = fz_scratch_dir("conn");
    CHECK(uv_loop_init(&g_loop) == 0, "uv_loop_init");
    /* bcrypt cost 4 for cassandra's password (a login that misses the
     * memo runs one bcrypt: ~1 ms instead of ~70 ms at cost 10). */
    char salt[64];
    struct crypt_data cd;
    memset(&cd, 0, sizeof cd);
    CHECK(crypt_gensalt_rn("$2a$", 4, NULL, 0, salt, sizeof salt) != NULL, "gensalt");
    const char *h = crypt_rn("cassandra", salt, &cd, sizeof cd);
    CHECK(h && h[0] == '$', "crypt");
    snprintf(g_roles, sizeof g_roles, "%s", h);
    g_alloc0 = cs_alloc_count();
    if (fz_seed_dir()) {
        write_seeds();
        reset_all();
        exit(0);
    }
    return 0;
}
