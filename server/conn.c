/*
 * conn.c: one client connection of the native protocol server.  The
 * handshake's transitions (refuse_version, on_startup, on_auth_response
 * below) are in server/handshake.c; the struct and the helpers the two
 * files share in server/conn_int.h.
 *
 * State machine (one per connection; every transition is on the thread of
 * the request loop that owns the connection, see conn.h):
 *
 *                 first frame, version 3, 4 or 5
 *   C_NEW ────────────────────────────────────────► C_UNINIT
 *     │  first frame, any other version                 │  OPTIONS -> SUPPORTED (stays)
 *     │  -> ERROR 0x000A, close   (refuse_version)      │  STARTUP (on_startup)
 *     ▼                                                 ├───────────────► C_READY
 *   C_CLOSING ◄── framing error / oversize frame        │  AllowAll: READY     ▲
 *     ▲           (error frame, then close)             ▼                      │
 *     │                                             C_AUTH ──────────────────┘
 *     │                                  AUTH_RESPONSE ok -> AUTH_SUCCESS (on_auth_response)
 *     └── peer EOF / read error / srv_close (conn__close)
 *
 * Invariants:
 *  1. The protocol version is fixed by the first frame (C_NEW -> C_UNINIT);
 *     a later frame with another version gets a ProtocolException
 *     (Cassandra: "Invalid message version"); the connection stays open.
 *  2. An unsupported first version (0x42, 0x41, 6, 1, 2, ...) is answered
 *     with ERROR 0x000A on the request's stream, in a v4 frame (v1/v2 in a
 *     frame of their own version), then the connection closes.  Python
 *     then retries with the next lower version and Node with the error frame's
 *     version (clients.md §1; Cassandra ProtocolVersion.decode).
 *  3. Only OPTIONS and STARTUP are accepted in C_UNINIT, only AUTH_RESPONSE in
 *     C_AUTH, and everything but STARTUP in C_READY (Cassandra
 *     ServerConnection.validateNewMessage); others get a ProtocolException and
 *     the connection stays open, since framing is intact.
 *  4. Compression (lz4) applies to every frame after the reply to STARTUP, in
 *     both directions; the READY/AUTHENTICATE reply itself is uncompressed.
 *     v5 (spec v5 §2.3): after that reply both directions switch to segment
 *     framing (server/frame_seg.c), and lz4 then compresses segments, not
 *     envelopes.  Input: bytes read go to `raw`, and unframe_input moves
 *     the segments' payloads, which are envelopes, into `in`, where the
 *     v4 path takes them as they are (invariants 3, 5, 9 unchanged).  An
 *     envelope over one payload arrives in non-self-contained segments,
 *     gathered in `large` (`large_left` bytes still to come) and moved to
 *     `in` once whole, so self-contained segments may come between them
 *     and are taken at once, as Cassandra does (AbstractMessageHandler:
 *     a self-contained frame is processed while a large message is being
 *     assembled).  One over native_transport_max_frame_size goes straight
 *     to `in` to be skipped as it arrives (invariant 5), and then nothing
 *     may come between its segments.  A segment whose CRC fails, or
 *     whose payload is not what its flag says, is answered with a fatal
 *     ProtocolException on stream 0 and the connection closes (Cassandra
 *     CQLMessageHandler.processCorruptFrame: the payload may hold requests
 *     of many streams).  Output: envelopes are gathered in `out` as
 *     before and wrapped into segments by flush_now; `out_wire` counts the
 *     bytes at the front of `out` already in wire form (the unframed
 *     READY/AUTHENTICATE and what preceded it).
 *  5. A frame longer (header included) than native_transport_max_frame_size
 *     is skipped as its bytes arrive, never buffered, and once it has all
 *     gone by it is answered on its stream with an InvalidRequest "Request
 *     is too big: length N exceeds maximum allowed length M." (N counts the
 *     header); the connection goes on with the next frame (Cassandra's
 *     Envelope.Decoder discard mode).  A corrupt header (a negative body
 *     length) is answered with a ProtocolException and the connection is
 *     closed after the error is written: the byte stream can no longer be
 *     trusted.  Replies to the requests before it that wait for the commit
 *     log (invariant 7) are written first, as they would have been in
 *     periodic mode.  The close lingers (FIN, then input discarded until the
 *     peer closes or LINGER_MS) so the error is not lost to a RST.  Other
 *     connections are never affected.
 *  6. Replies are gathered in `out` and written once per loop iteration:
 *     flush() queues the connection on srv->flushq and a uv_check handle,
 *     after every read callback of the iteration has run, writes the commit
 *     log tail once (st_log_flush) and then each queued `out` with one
 *     uv_try_write (uv_write for what is left).  So pipelined requests cost
 *     one write per connection, and all the writes acknowledged in one
 *     iteration one commit log pwrite.  Output order within a connection is
 *     the order replies are produced; clients match replies by stream id.
 *  7. A reply that must wait for the commit log (cql_result.need_sync) is
 *     encoded at once into a pending record; st_sync_wait's callback appends
 *     it to `out`.  Each pending record holds a reference on the connection, so
 *     the struct outlives its handle until the last callback has run, and
 *     counts in sync_pending, which a close after an error waits for.
 *  8. The connection struct is freed only when its handle's close callback
 *     has run and no pending record references it.
 *  9. Back-pressure: a client that sends requests without reading replies
 *     cannot grow the server's memory without bound.  When unsent output
 *     (in flight + queued) exceeds MAX_PENDING_OUT, frame processing and
 *     reading stop; both resume when the write completes (on_write -> pump).
 * 10. Calls into cql/ (requests, tracing, system_views.clients registration)
 *     run under the execution lock (srv_exec_lock), taken at the first such
 *     call of a read batch and released by pump after the batch: one lock
 *     round trip per read, not per frame.  Reading, framing, the commit log
 *     tail write and reply writes run outside it, in parallel across loops.
 */
#include "server/conn_int.h"
#include "cql/trace.h"

#include <stdatomic.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/alloc.h"
#include "common/err.h"
#include "common/hash.h"
#include "common/log.h"
#include "common/util.h"
#include "server/frame.h"
#include "server/msg.h"
#include "server/snappy.h"

typedef struct write_req {
    uv_write_t req;
    conn *c;
    uint8_t *data;                   /* owned: cs_free in write_cb */
} write_req;

typedef struct pending_reply {
    conn *c;                         /* holds a reference (refs) */
    cs_buf frame;                    /* the complete encoded reply */
    uint64_t start_ns;               /* request start, for the latency histogram */
    /* A write's reply may time out (cql_result.write_type): then it is on
     * the loop's wto list until its sync or its deadline, whichever is
     * first; at the deadline the client gets WriteTimeout and the sync,
     * when it comes, only frees this. */
    const char *write_type;          /* static string; NULL: never times out */
    uint64_t deadline_ns;
    int16_t stream;
    uint16_t cl;
    bool timed_out, listed;
    struct pending_reply *wprev, *wnext;
} pending_reply;

const uint32_t srv_lat_bounds_us[SRV_LAT_BUCKETS - 1] = {
    50, 100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000, 1000000,
};

/* Count one CQL request's latency (from its frame to its queued reply). */
static void record_latency(srv_loop *s, uint64_t start_ns, uint64_t end_ns)
{
    uint64_t us = (end_ns - start_ns) / 1000;
    int i = 0;
    while (i < SRV_LAT_BUCKETS - 1 && us > srv_lat_bounds_us[i])
        i++;
    SRV_STAT_ADD(s->stats.lat_buckets[i], 1);
    SRV_STAT_ADD(s->stats.lat_sum_us, us);
    SRV_STAT_ADD(s->stats.lat_count, 1);
}

static void flush(conn *c);
static void pump(conn *c);

/* The execution lock (conn.h), taken at the first call into cql/ of a
 * read batch and released when the batch is processed (pump). */
void conn__exec_enter(srv_loop *l)
{
    if (!l->exec_held) {
        srv_exec_lock(l->server);
        l->exec_held = true;
    }
}

static void exec_leave(srv_loop *l)
{
    if (l->exec_held) {
        l->exec_held = false;
        srv_exec_unlock(l->server);
    }
}
static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf);
static void on_read(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf);

/* ------------------------------------------------------------ lifecycle */

static void conn_unref(conn *c)
{
    if (--c->refs > 0 || !c->handle_closed)
        return;
    cs_buf_destroy(&c->in);
    cs_buf_destroy(&c->raw);
    cs_buf_destroy(&c->seg_scratch);
    cs_buf_destroy(&c->large);
    cs_buf_destroy(&c->out);
    cs_arena_destroy(&c->arena);
    cs_free(c);
}

static void on_close(uv_handle_t *h)
{
    conn *c = (conn *)h;
    srv_loop *s = c->s;
    if (c->listed) {
        bool held = s->exec_held;
        conn__exec_enter(s);
        cql_session_closed(s->cql, &c->session);
        if (!held)
            exec_leave(s);
    }
    if (c->prev)
        c->prev->next = c->next;
    else
        s->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    SRV_STAT_ADD(s->n_conns, -1);
    atomic_fetch_sub(&s->server->n_conns, 1);
    c->handle_closed = true;
    c->refs++;
    conn_unref(c);
}

static void on_linger_closed(uv_handle_t *h)
{
    conn_unref(h->data);
}

static void on_linger_timeout(uv_timer_t *t)
{
    conn__close(t->data, false);
}

static void on_shutdown(uv_shutdown_t *req, int status)
{
    conn *c = req->data;
    if (status < 0)
        conn__close(c, false);
    conn_unref(c);
}

/*
 * Lingering close (invariant 5): the error reply is written, so send FIN and
 * keep reading (and discarding) until the peer closes or LINGER_MS passes.
 * Closing at once with unread input would make the kernel send RST, which
 * can destroy the error reply before the client reads it.
 */
static void begin_linger(conn *c)
{
    if (c->lingering || c->closed)
        return;
    c->lingering = true;
    uv_timer_init(c->s->loop, &c->linger);
    c->linger.data = c;
    c->timer_open = true;
    c->refs++;
    uv_timer_start(&c->linger, on_linger_timeout, LINGER_MS, 0);
    c->shut.data = c;
    if (uv_shutdown(&c->shut, (uv_stream_t *)&c->tcp, on_shutdown) != 0) {
        conn__close(c, false);
        return;
    }
    c->refs++;
    if (c->read_paused) {
        c->read_paused = false;
        uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
    }
}

void conn__close(conn *c, bool after_flush)
{
    if (c->closed)
        return;
    if (after_flush) {
        c->close_after_flush = true;
        c->state = C_CLOSING;
        if (c->out.len == 0 && !c->writing && c->sync_pending == 0)
            begin_linger(c);
        return;
    }
    c->closed = true;
    c->state = C_CLOSING;
    uv_read_stop((uv_stream_t *)&c->tcp);
    uv_close((uv_handle_t *)&c->tcp, on_close);
    if (c->timer_open) {
        c->timer_open = false;
        uv_close((uv_handle_t *)&c->linger, on_linger_closed);
    }
}

conn *conn__next(conn *c)
{
    return c->next;
}

/* ------------------------------------------------------------ output */

static void on_write(uv_write_t *req, int status)
{
    write_req *w = (write_req *)req;
    conn *c = w->c;
    cs_free(w->data);
    cs_free(w);
    c->writing = false;
    c->inflight = 0;
    if (status < 0) {
        conn__close(c, false);
    } else if (!c->closed) {
        flush(c);
        if (c->read_paused)
            pump(c);
    }
    conn_unref(c);
}

/* v5 (invariant 4): the envelopes after out_wire become segments. */
static void wrap_segments(conn *c)
{
    cs_buf w;
    cs_buf_init(&w);
    if (cs_buf_reserve(&w, c->out.len + c->out.len / 64 + 64) == 0) {
        cs_buf_put(&w, c->out.p, c->out_wire);
        frame_seg_wrap(&w, c->out.p + c->out_wire, c->out.len - c->out_wire, c->seg_lz4);
    } else if (!w.err) {
        w.err = CS_ENOMEM;
    }
    if (w.err) {
        c->out.err = w.err;
        cs_buf_destroy(&w);
        return;
    }
    cs_buf_destroy(&c->out);
    c->out = w;
    c->out_wire = c->out.len;
}

/*
 * Hand `out` to the kernel: uv_try_write first (no allocation on the common
 * path), then uv_write for the remainder, which takes the buffer's memory.
 */
static void flush_now(conn *c)
{
    if (c->closed || c->writing)
        return;
    if (c->out.err) {
        CS_ERROR("connection %s: reply encoding failed: %s", c->session.client_addr,
                 cs_strerror(c->out.err));
        conn__close(c, false);
        return;
    }
    if (c->seg && c->out.len > c->out_wire) {
        wrap_segments(c);
        if (c->out.err) {
            CS_ERROR("connection %s: v5 segment encoding failed: %s", c->session.client_addr,
                     cs_strerror(c->out.err));
            conn__close(c, false);
            return;
        }
    }
    if (c->out.len > 0) {
        /* Commit log records of the writes answered here reach the kernel
         * before their acknowledgements (storage.h st_defer_log_writes). */
        if (c->s->log_deferred)
            st_log_flush(c->s->eng);
        uv_buf_t b = uv_buf_init((char *)c->out.p, (unsigned)c->out.len);
        int n = uv_try_write((uv_stream_t *)&c->tcp, &b, 1);
        if (n == UV_EAGAIN)
            n = 0;
        if (n < 0) {
            conn__close(c, false);
            return;
        }
        SRV_STAT_ADD(c->s->stats.bytes_out, (uint64_t)n);
        c->out_wire = 0;             /* everything left goes below, already wrapped */
        if ((size_t)n == c->out.len) {
            c->out.len = 0;
            if (c->out.cap > IDLE_BUF_KEEP)
                cs_buf_destroy(&c->out);
        } else {
            write_req *w = cs_malloc(sizeof *w);
            if (!w) {
                conn__close(c, false);
                return;
            }
            size_t left = c->out.len - (size_t)n;
            memmove(c->out.p, c->out.p + n, left);
            c->out.len = left;
            size_t len;
            w->data = cs_buf_steal(&c->out, &len);
            w->c = c;
            uv_buf_t wb = uv_buf_init((char *)w->data, (unsigned)len);
            int rc = uv_write(&w->req, (uv_stream_t *)&c->tcp, &wb, 1, on_write);
            if (rc < 0) {
                cs_free(w->data);
                cs_free(w);
                conn__close(c, false);
                return;
            }
            SRV_STAT_ADD(c->s->stats.bytes_out, len);
            c->writing = true;
            c->inflight = len;
            c->refs++;
            return;
        }
    }
    if (c->close_after_flush && c->sync_pending == 0)
        begin_linger(c);
}

/*
 * Write every queued connection's output (invariant 6).  A connection that
 * stopped reading for back-pressure and whose output drained at once
 * resumes here (as in on_write); what it produces is queued again and
 * written before this returns, so nothing waits for another event.
 */
static void run_flushq(srv_loop *s)
{
    if (s->flushq && s->sync_waits > 0 && s->poll_ns)   /* only polling reads it (srv_loop_run) */
        s->active_ns = cs_mono_ns();
    while (s->flushq) {
        conn *c = s->flushq;
        s->flushq = c->qnext;
        c->qnext = NULL;
        c->queued = false;
        flush_now(c);
        if (!c->closed && c->read_paused && !c->writing)
            pump(c);
        conn_unref(c);
    }
    if (s->flush_check_open)
        uv_idle_stop(&s->flush_idle);
}

/* Nothing to do: an active idle handle only keeps the loop's poll from
 * blocking while connections wait in flushq (see flush()). */
static void on_flush_idle(uv_idle_t *h)
{
    (void)h;
}

static void on_flush_check(uv_check_t *h)
{
    run_flushq(h->data);
}

static void on_flush_check_closed(uv_handle_t *h)
{
    (void)h;
}

static void on_flush_idle(uv_idle_t *h);

/*
 * Replies are written once per loop iteration, after every read callback of
 * that iteration has run: the commit log tail of all the writes they answer
 * goes to the kernel with one pwrite (st_log_flush in flush_now, then a
 * no-op for the other connections) instead of one per connection.  The
 * check handle runs right after the poll phase.  A connection can also be
 * queued outside the poll phase (a write completed inside uv_write is
 * reported in the next iteration's pending phase, before the poll; timer
 * callbacks): then the idle handle, active while the queue is not empty,
 * makes that iteration's poll return at once instead of blocking until
 * the next event, so no reply waits for another event (a stuck pipelined
 * connection under back-pressure, test backpressure_on_unread_replies).
 * Without the handles (srv_close called), write at once.
 */
static void flush(conn *c)
{
    srv_loop *s = c->s;
    if (c->closed || c->writing)
        return;
    if (c->queued)
        return;
    if (!s->flush_check_open) {
        if (s->stopping || uv_check_init(s->loop, &s->flush_check) != 0) {
            flush_now(c);
            return;
        }
        uv_idle_init(s->loop, &s->flush_idle);   /* cannot fail (libuv) */
        s->flush_check.data = s;
        s->flush_idle.data = s;
        s->flush_check_open = true;
        uv_unref((uv_handle_t *)&s->flush_check);   /* never keep the loop alive */
        uv_unref((uv_handle_t *)&s->flush_idle);
        uv_check_start(&s->flush_check, on_flush_check);
    }
    uv_idle_start(&s->flush_idle, on_flush_idle);
    c->queued = true;
    c->qnext = s->flushq;
    s->flushq = c;
    c->refs++;
}

void conn__srv_close(srv_loop *s)
{
    run_flushq(s);
    cs_buf_destroy(&s->spare_body);
    if (s->flush_check_open) {
        s->flush_check_open = false;
        uv_close((uv_handle_t *)&s->flush_check, on_flush_check_closed);
        uv_close((uv_handle_t *)&s->flush_idle, on_flush_check_closed);
    }
    if (s->wto_open) {   /* the waiting writes are answered by their syncs */
        s->wto_open = false;
        s->wto_at = 0;
        uv_close((uv_handle_t *)&s->wto_timer, on_flush_check_closed);   /* a no-op */
    }
}

/*
 * cs_error_init for the per-request error, without zeroing the ~2 KB
 * struct for every request: msg is only ever written by the snprintf family
 * and read as a string, and the fields after it are read only for a
 * recorded error, which cs_error_set clears them for (common/err.c).
 */
static void error_init(cs_error *e)
{
    e->code = -1;
    e->msg[0] = '\0';
}

/* Append an ERROR frame for e on `stream`. */
void conn__reply_error(conn *c, int16_t stream, const cs_error *e)
{
    SRV_STAT_ADD(c->s->stats.errors, 1);
    if (e->code == CS_ERR_PROTOCOL)
        SRV_STAT_ADD(c->s->stats.protocol_errors, 1);
    msg_write_error(&c->out, c->version ? c->version : 4, stream, c->compress, e);
}

void conn__reply_protocol_error(conn *c, int16_t stream, const char *fmt, ...)
{
    cs_error e;
    cs_error_init(&e);
    e.code = CS_ERR_PROTOCOL;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e.msg, sizeof e.msg, fmt, ap);
    va_end(ap);
    conn__reply_error(c, stream, &e);
}

/* An oversize request (invariant 5): `len` is the frame's length, header
 * included, or an lz4 body's decompressed length. */
static void reply_too_big(conn *c, int16_t stream, uint64_t len)
{
    cs_error e;
    cs_error_init(&e);
    e.code = CS_ERR_INVALID;
    snprintf(e.msg, sizeof e.msg, "Request is too big: length %llu exceeds maximum allowed length %zu.",
             (unsigned long long)len, c->s->cfg->max_frame_size);
    conn__reply_error(c, stream, &e);
}

void conn__reply_frame(conn *c, int16_t stream, uint8_t opcode, const uint8_t *body, size_t len)
{
    msg_write_frame(&c->out, c->version, stream, opcode, c->compress, NULL, 0, body, len);
}

/* ------------------------------------------------------------ requests */

static void wto_unlink(srv_loop *s, pending_reply *p)
{
    if (!p->listed)
        return;
    if (p->wprev) p->wprev->wnext = p->wnext; else s->wto_head = p->wnext;
    if (p->wnext) p->wnext->wprev = p->wprev; else s->wto_tail = p->wprev;
    p->wprev = p->wnext = NULL;
    p->listed = false;
}

static void on_wto_timer(uv_timer_t *h);

/* Set the timer for `at` unless it is already set for that or earlier
 * (now: the clock, 0 = read it here if needed). */
static void wto_arm(srv_loop *s, uint64_t at, uint64_t now)
{
    if (s->wto_at && s->wto_at <= at)
        return;
    if (!now)
        now = cs_mono_ns();
    if (!s->wto_open) {
        if (s->stopping || uv_timer_init(s->loop, &s->wto_timer) != 0)
            return;
        s->wto_timer.data = s;
        s->wto_open = true;
        uv_unref((uv_handle_t *)&s->wto_timer);   /* never keep the loop alive */
    }
    uint64_t ms = at > now ? (at - now + 999999) / 1000000 : 0;
    uv_timer_start(&s->wto_timer, on_wto_timer, ms, 0);
    s->wto_at = at;
}

/*
 * The writes whose sync did not come by their deadline get WriteTimeout
 * (StorageProxy's WriteTimeoutException: "Operation timed out - received
 * only 0 responses.", the request's consistency, 0 of 1 acknowledgements,
 * its WriteType), as a coordinator does when its replica's commit log does
 * not answer in time; the write stays applied and becomes durable with the
 * sync.  The list is in arrival order, but a changed timeout or a counter
 * write's longer one means a later entry may be due first: each firing
 * looks at all of them (they are only the writes of one sync or two).
 */
static void on_wto_timer(uv_timer_t *h)
{
    srv_loop *s = h->data;
    uint64_t now = cs_mono_ns(), next = 0;
    s->wto_at = 0;
    for (pending_reply *p = s->wto_head, *n; p; p = n) {
        n = p->wnext;
        if (p->deadline_ns > now) {
            if (!next || p->deadline_ns < next)
                next = p->deadline_ns;
            continue;
        }
        wto_unlink(s, p);
        p->timed_out = true;
        conn *c = p->c;
        record_latency(s, p->start_ns, now);
        SRV_STAT_ADD(s->stats.write_timeouts, 1);
        if (c->closed)
            continue;
        cs_error e;
        cs_error_init(&e);
        cs_error_set(&e, CS_ERR_WRITE_TIMEOUT, "Operation timed out - received only 0 responses.");
        e.cl = p->cl;
        e.received = 0;
        e.blockfor = 1;
        snprintf(e.write_type, sizeof e.write_type, "%s", p->write_type);
        conn__reply_error(c, p->stream, &e);
        flush(c);
    }
    if (next)
        wto_arm(s, next, now);
}

static void on_sync_done(void *arg)
{
    pending_reply *p = arg;
    conn *c = p->c;
    c->s->sync_waits--;
    c->sync_pending--;
    wto_unlink(c->s, p);
    if (!p->timed_out) {
        record_latency(c->s, p->start_ns, cs_mono_ns());
        if (!c->closed) {
            cs_buf_put(&c->out, p->frame.p, p->frame.len);
            flush(c);
        }
    }
    cs_buf_destroy(&p->frame);
    cs_free(p);
    conn_unref(c);
}

/*
 * Encode the RESULT for a CQL call into `dst`: the body the CQL layer built,
 * plus its warnings in the frame's warning list.
 */
static void encode_result(conn *c, cs_buf *dst, int16_t stream, const cql_result *r,
                          const uint8_t *tracing_id)
{
    frame_writer w;
    frame_begin(&w, dst, c->version, true, stream, OP_RESULT, 0, c->compress, tracing_id,
                (const char *const *)r->warnings, c->version >= 4 ? r->n_warnings : 0);
    cs_buf_put(dst, r->body.p, r->body.len);
    frame_end(&w);
}

/* Reply to a finished CQL call: error, immediate RESULT, or a RESULT held
 * until the commit log is durable (invariant 7); then push schema events. */
static void finish_cql(conn *c, int16_t stream, int rc, cql_result *r, cs_error *e,
                       uint64_t start_ns, uint16_t cl, const uint8_t *tracing_id)
{
    srv_loop *s = c->s;
    if (rc == CS_EUSER || (rc != 0 && cs_error_isset(e))) {
        conn__reply_error(c, stream, e);
        s->clock_ns = cs_mono_ns();
        record_latency(s, start_ns, s->clock_ns);
        return;
    }
    if (rc != 0) {
        cs_error se;
        cs_error_init(&se);
        cs_error_set(&se, CS_ERR_SERVER, "java.lang.RuntimeException: %s", cs_strerror(rc));
        conn__reply_error(c, stream, &se);
        return;
    }
    if (r->need_sync && s->eng) {
        pending_reply *p = cs_malloc(sizeof *p);
        if (p) {
            memset(p, 0, sizeof *p);
            p->c = c;
            p->start_ns = start_ns;
            p->stream = stream;
            p->cl = cl;
            cs_buf_init(&p->frame);
            encode_result(c, &p->frame, stream, r, tracing_id);
            c->refs++;
            c->sync_pending++;
            s->sync_waits++;             /* before: the callback may run at once */
            bool timed = r->write_type && r->write_timeout_ms > 0 && !s->stopping;
            uint64_t deadline = start_ns + (uint64_t)r->write_timeout_ms * 1000000ull;
            if (timed) {
                p->write_type = r->write_type;
                p->deadline_ns = deadline;
                p->listed = true;     /* appended now: the sync's callback may run inside st_sync_wait */
                p->wprev = s->wto_tail;
                if (s->wto_tail) s->wto_tail->wnext = p; else s->wto_head = p;
                s->wto_tail = p;
            }
            if (st_sync_wait(s->eng, s->loop, r->sync_pos, on_sync_done, p) == 0) {
                if (timed && s->wto_head)   /* p may be gone: its callback can run inside st_sync_wait */
                    wto_arm(s, deadline, 0);
                goto events;
            }
            wto_unlink(s, p);
            s->sync_waits--;
            c->sync_pending--;
            c->refs--;
            cs_buf_destroy(&p->frame);
            cs_free(p);
        }
        cs_error se;
        cs_error_init(&se);
        cs_error_set(&se, CS_ERR_SERVER, "java.lang.RuntimeException: commit log sync failed");
        conn__reply_error(c, stream, &se);
        return;
    }
    encode_result(c, &c->out, stream, r, tracing_id);
    s->clock_ns = r->end_ns ? r->end_ns : cs_mono_ns();
    record_latency(s, start_ns, s->clock_ns);
events:
    if (r->schema_changed)
        srv_push_schema_change(s->server, &r->change);
}

/* A traced request (frame flag 0x02, spec v4 §2.2) becomes a trace session
 * in system_traces (cql/trace.c); the RESULT carries its id. */
static void trace_request(conn *c, const msg_request *m, int64_t started_us, uint64_t start_ns, int rc,
                          const cs_error *e, cs_uuid *id)
{
    static const char *names[] = { [OP_QUERY] = "Execute CQL3 query", [OP_PREPARE] = "Preparing CQL3 query",
                                   [OP_EXECUTE] = "Execute CQL3 prepared query", [OP_BATCH] = "Execute batch of CQL3 queries" };
    cql_trace_req t;
    memset(&t, 0, sizeof t);
    t.request = m->opcode < sizeof names / sizeof names[0] && names[m->opcode] ? names[m->opcode] : "Execute";
    if (m->opcode == OP_QUERY || m->opcode == OP_PREPARE) {
        t.query = m->query;
        t.query_len = m->query_len;
    }
    char ip[64];
    snprintf(ip, sizeof ip, "%s", c->session.client_addr);
    char *colon = strrchr(ip, ':');
    if (colon)
        *colon = 0;
    t.client = ip;
    t.started_us = started_us;
    t.duration_us = (cs_mono_ns() - start_ns) / 1000;
    t.consistency = m->params.consistency;
    t.outcome = rc != 0 ? (cs_error_isset(e) ? e->msg : cs_strerror(rc)) : NULL;
    cql_trace_record(c->s->cql, &t, id);
}

/* `ep` is the caller's initialized, unset error (a cs_error is ~2 KB, so one
 * initialization serves both the decoding and the execution). */
static void on_cql_request(conn *c, int16_t stream, msg_request *m, bool tracing, cs_error *ep)
{
    srv_loop *s = c->s;
    uint64_t start_ns = s->clock_ns ? s->clock_ns : cs_mono_ns();
    s->clock_ns = 0;                 /* set again by finish_cql on success */
    m->params.start_ns = start_ns;
    /* nodetool settraceprobability: a request the client did not trace is
     * traced anyway, its RESULT without the session id (Message.Request.execute) */
    bool sampled = !tracing && cql_trace_sampled(s->cql);
    int64_t started_us = tracing || sampled ? cs_now_us() : 0;
    cql_result r;
    cs_error e_;
    cs_error *pe = ep;
    if (cs_error_isset(pe)) {
        cs_error_init(&e_);
        pe = &e_;
    }
    conn__exec_enter(s);                   /* released by pump, after the read batch */
    if (tracing || sampled)
        cql_trace_begin(s->cql, started_us, start_ns);
    cql_result_init(&r);
    if (s->spare_body.cap) {         /* no allocation for the body */
        r.body = s->spare_body;
        cs_buf_init(&s->spare_body);
    }
    int rc;
    switch (m->opcode) {
    case OP_QUERY:
        rc = cql_query(s->cql, &c->session, m->query, m->query_len, &m->params, &r, pe);
        break;
    case OP_PREPARE:
        rc = cql_prepare(s->cql, &c->session, m->query, m->query_len, m->prepare_keyspace, &r, pe);
        break;
    case OP_EXECUTE:
        rc = cql_execute(s->cql, &c->session, m->id, m->id_len, &m->params, &r, pe);
        break;
    default:
        rc = cql_batch(s->cql, &c->session, m->batch_type, m->items, m->n_items, &m->params, &r,
                       pe);
        break;
    }
    cs_uuid trace_id;
    if (tracing || sampled)
        trace_request(c, m, started_us, start_ns, rc, pe, &trace_id);
    finish_cql(c, stream, rc, &r, pe, start_ns, m->params.consistency, tracing ? trace_id.b : NULL);
    if (!s->stopping && !r.body.err && r.body.cap <= IDLE_BUF_KEEP && !s->spare_body.cap) {
        s->spare_body = r.body;
        s->spare_body.len = 0;
        cs_buf_init(&r.body);
    }
    cql_result_destroy(&r);
}

static bool is_request_opcode(uint8_t op)
{
    return op == OP_STARTUP || op == OP_OPTIONS || op == OP_QUERY || op == OP_PREPARE ||
           op == OP_EXECUTE || op == OP_REGISTER || op == OP_BATCH || op == OP_AUTH_RESPONSE;
}

/* Invariant 3: which opcodes each state accepts. */
static bool check_state(conn *c, int16_t stream, uint8_t op)
{
    if (c->state == C_UNINIT && op != OP_STARTUP && op != OP_OPTIONS) {
        conn__reply_protocol_error(c, stream, "Unexpected message %s, expecting STARTUP or OPTIONS",
                             msg_opcode_name(op));
        return false;
    }
    if (c->state == C_AUTH && op != OP_AUTH_RESPONSE) {
        conn__reply_protocol_error(c, stream, "Unexpected message %s, expecting SASL_RESPONSE",
                             msg_opcode_name(op));
        return false;
    }
    if (c->state == C_READY && op == OP_STARTUP) {
        conn__reply_protocol_error(c, stream,
                             "Unexpected message STARTUP, the connection is already initialized");
        return false;
    }
    if (c->state == C_READY && op == OP_AUTH_RESPONSE) {
        conn__reply_protocol_error(c, stream, "Unexpected message AUTH_RESPONSE, the connection is "
                             "already authenticated");
        return false;
    }
    return true;
}

/* Handle one complete frame whose header passed the framing checks. */
static void on_frame(conn *c, const frame_header *h, const uint8_t *body)
{
    srv_loop *s = c->s;
    /* Only a CQL request leaves srv.clock_ns set (at its end): any other
     * frame (STARTUP with password hashing, errors...) makes the next
     * request read the clock. */
    uint64_t clock_ns = s->clock_ns;
    s->clock_ns = 0;
    SRV_STAT_ADD(s->stats.requests, 1);
    if (h->opcode < CS_ARRAY_LEN(s->stats.by_opcode))
        SRV_STAT_ADD(s->stats.by_opcode[h->opcode], 1);
    if (h->version != c->version) {
        /* Cassandra PreV5Handlers.ProtocolDecoder; the framing is the same
         * 9-byte header, so the connection stays usable. */
        conn__reply_protocol_error(c, h->stream, "Invalid message version. Got %u/v%u but previous "
                             "messages on this connection had version %u/v%u", h->version,
                             h->version, c->version, c->version);
        return;
    }
    if (h->response || !is_request_opcode(h->opcode)) {
        conn__reply_protocol_error(c, h->stream, "Unknown opcode %u", h->opcode);
        return;
    }
    if ((h->flags & FRAME_FLAG_COMPRESSION) && !c->compress) {
        conn__reply_protocol_error(c, h->stream, "Received compressed frame but compression was not "
                             "negotiated");
        return;
    }
    if (!check_state(c, h->stream, h->opcode))
        return;
    frame_body fb;
    int rc = frame_body_decode_with(h, body, h->length, s->cfg->max_frame_size, c->compress, &fb);
    if (rc != 0) {
        frame_body_destroy(&fb);
        if (rc == CS_ETOOBIG) {
            /* a body decompressing past the limit: refused like an
             * oversize frame (InvalidRequest), the connection goes on. */
            reply_too_big(c, h->stream, fb.ulen);
        } else if (c->compress == FRAME_COMP_SNAPPY && rc == CS_ECORRUPT && (h->flags & FRAME_FLAG_COMPRESSION))
            conn__reply_protocol_error(c, h->stream, "Provided frame does not appear to be Snappy compressed");
        else
            conn__reply_protocol_error(c, h->stream, "Invalid frame body: %s", cs_strerror(rc));
        return;
    }
    msg_request m;
    cs_error e;
    error_init(&e);
    rc = msg_request_decode(c->version, h->opcode, fb.msg, fb.msg_len, &c->arena, &m, &e);
    if (rc != 0) {
        if (rc != CS_EUSER)
            cs_error_set(&e, CS_ERR_SERVER, "java.lang.OutOfMemoryError: %s", cs_strerror(rc));
        conn__reply_error(c, h->stream, &e);
    } else {
        /* Dispatcher: counted once decoded and valid in the connection's
         * state, before it runs (only this thread writes it) */
        atomic_store_explicit(&c->client.request_count,
                              atomic_load_explicit(&c->client.request_count, memory_order_relaxed) + 1,
                              memory_order_relaxed);
        switch (h->opcode) {
        case OP_OPTIONS: {
            cs_buf body;
            cs_buf_init(&body);
            msg_put_supported(&body, !srv_snappy_known_missing());
            conn__reply_frame(c, h->stream, OP_SUPPORTED, body.p, body.len);
            cs_buf_destroy(&body);
            break;
        }
        case OP_STARTUP:
            conn__on_startup(c, h->stream, &m);
            break;
        case OP_AUTH_RESPONSE:
            conn__on_auth_response(c, h->stream, &m);
            break;
        case OP_REGISTER:
            c->events |= m.events;
            conn__reply_frame(c, h->stream, OP_READY, NULL, 0);
            break;
        default:
            s->clock_ns = clock_ns;
            on_cql_request(c, h->stream, &m, (h->flags & FRAME_FLAG_TRACING) != 0, &e);
            break;
        }
    }
    frame_body_destroy(&fb);
}

/* ------------------------------------------------------------ input */

/* Drop the first `off` bytes of b (input taken); an emptied buffer over
 * IDLE_BUF_KEEP gives its memory back. */
static void consume(cs_buf *b, size_t off)
{
    size_t left = b->len - off;
    if (off > 0 && left > 0)
        memmove(b->p, b->p + off, left);
    b->len = left;
    if (left == 0 && b->cap > IDLE_BUF_KEEP)
        cs_buf_destroy(b);
}

/* The complete frame with header h at `at` in `in`, if a plain EXECUTE
 * with positional values: its id and first values into *q (a look, not
 * a decoding: the request is decoded in turn); else false. */
static bool peek_execute(const conn *c, size_t at, const frame_header *h, cql_prefetch_req *q)
{
    if (h->opcode != OP_EXECUTE || h->response || h->version != c->version ||
        (h->flags & (FRAME_FLAG_COMPRESSION | FRAME_FLAG_CUSTOM_PAYLOAD)))
        return false;
    q->n_vals = msg_peek_execute(c->version, c->in.p + at + FRAME_HEADER_LEN, h->length, &q->id,
                                 &q->idlen, q->vals, CQL_PREFETCH_VALUES);
    return q->n_vals >= 0;
}

/* Before running the frames buffered from `off`: the EXECUTEs among the
 * next PREFETCH_BATCH complete ones are shown to the executor together
 * (cql_prefetch_batch), so the cache misses of their lookups load while
 * the ones before them run, and overlap one another.  Returns the offset
 * after the last frame looked at. */
#define PREFETCH_BATCH 16
static size_t prefetch_batch(conn *c, size_t off)
{
    size_t at[PREFETCH_BATCH];
    frame_header h[PREFETCH_BATCH];
    int n = 0;
    while (n < PREFETCH_BATCH && c->in.len - off >= FRAME_HEADER_LEN &&
           frame_header_parse(c->in.p + off, &h[n]) == 0 && c->in.len - off - FRAME_HEADER_LEN >= h[n].length) {
        at[n] = off;
        off += FRAME_HEADER_LEN + h[n++].length;
    }
    if (n < 2)              /* one request in flight: nothing to overlap */
        return off;
    cql_prefetch_req q[PREFETCH_BATCH];
    int k = 0;
    for (int i = 0; i < n; i++)
        k += peek_execute(c, at[i], &h[i], &q[k]);
    if (k > 1)
        cql_prefetch_batch(c->s->cql, q, k);
    return off;
}

/*
 * Parse and handle every complete frame in `in`.  Framing errors answer and
 * close (invariant 5); returns when more bytes are needed.
 */
static void process_input(conn *c)
{
    size_t off = 0, hinted = 0;      /* frames before `hinted` were hinted */
    const size_t max = c->s->cfg->max_frame_size;
    while (c->state != C_CLOSING && c->in.len - off >= 1 &&
           c->out.len + c->inflight <= MAX_PENDING_OUT) {
        const uint8_t *p = c->in.p + off;
        size_t avail = c->in.len - off;
        if (c->discard > 0) {
            size_t k = avail < c->discard ? avail : (size_t)c->discard;
            off += k;
            c->discard -= k;
            if (c->discard == 0)
                reply_too_big(c, c->discard_stream, c->discard_total);
            continue;
        }
        uint8_t v = p[0] & 0x7f;
        if (c->state == C_NEW) {
            /* An unsupported version is refused as soon as its stream id has
             * arrived: a v1/v2 client's header is only 8 bytes long. */
            if (v != 3 && v != 4 && v != 5) {
                if (avail >= 4)
                    conn__refuse_version(c, p);
                break;
            }
            c->version = v;
            c->session.protocol_version = v;
            c->state = C_UNINIT;
        }
        if (avail < FRAME_HEADER_LEN)
            break;
        frame_header h;
        if (frame_header_parse(p, &h) != 0) {
            conn__reply_protocol_error(c, (int16_t)cs_be16(p + 2), "Invalid frame body length %u",
                                 cs_be32(p + 5));
            conn__close(c, true);
            break;
        }
        if ((uint64_t)h.length + FRAME_HEADER_LEN > max) {
            c->discard = c->discard_total = (uint64_t)h.length + FRAME_HEADER_LEN;
            c->discard_stream = h.stream;
            continue;                /* skipped by the branch above */
        }
        if (avail < FRAME_HEADER_LEN + (size_t)h.length) {
            /* Make room for the whole frame so the next read completes it. */
            if (off > 0) {
                memmove(c->in.p, c->in.p + off, avail);
                c->in.len = avail;
                off = 0;
            }
            if (cs_buf_reserve(&c->in, FRAME_HEADER_LEN + (size_t)h.length - avail) != 0) {
                conn__close(c, false);
                return;
            }
            break;
        }
        if (c->state == C_READY && off >= hinted)
            hinted = prefetch_batch(c, off);
        on_frame(c, &h, p + FRAME_HEADER_LEN);
        off += FRAME_HEADER_LEN + h.length;
        if (c->seg_switch) {
            /* v5: what follows STARTUP is segments (invariant 4). */
            c->seg_switch = false;
            cs_buf_put(&c->raw, c->in.p + off, c->in.len - off);
            c->in.len = off;
            if (c->raw.err) {
                conn__close(c, false);
                return;
            }
            break;
        }
    }
    if (c->closed)
        return;
    consume(&c->in, off);
    cs_arena_destroy(&c->arena);
    cs_arena_init(&c->arena);
}

/* A bad v5 segment (invariant 4): recorded, and unframing stops before it;
 * pump answers it once the envelopes of the segments before it are. */
static void seg_fail(conn *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void seg_fail(conn *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->seg_err, sizeof c->seg_err, fmt, ap);
    va_end(ap);
}

/* Whether `in` holds a complete envelope that process_input would take
 * (it stopped for back-pressure). */
static bool envelope_buffered(const conn *c)
{
    frame_header h;
    if (c->discard > 0 || c->in.len < FRAME_HEADER_LEN)
        return false;
    return frame_header_parse(c->in.p, &h) != 0 || c->in.len - FRAME_HEADER_LEN >= h.length;
}

/* The recorded segment error: fatal, on stream 0, then close (Cassandra
 * CQLMessageHandler.processCorruptFrame). */
static void seg_fatal(conn *c)
{
    cs_error e;
    cs_error_init(&e);
    e.code = CS_ERR_PROTOCOL;
    snprintf(e.msg, sizeof e.msg, "%s", c->seg_err);
    conn__reply_error(c, 0, &e);
    conn__close(c, true);
}

/* Whether p[0..n) is whole envelopes (a corrupt length is left for
 * process_input to answer). */
static bool whole_envelopes(const uint8_t *p, size_t n)
{
    size_t at = 0;
    while (at < n) {
        frame_header h;
        if (n - at < FRAME_HEADER_LEN)
            return false;
        if (frame_header_parse(p + at, &h) != 0)
            return true;
        if ((uint64_t)h.length > n - at - FRAME_HEADER_LEN)
            return false;
        at += FRAME_HEADER_LEN + h.length;
    }
    return true;
}

/*
 * v5 (invariant 4): move the payloads of the complete segments in `raw`
 * into `in`.  A self-contained segment must hold whole envelopes; it may
 * come between the segments of a multi-segment envelope unless that one
 * is oversize (invariant 4); a non-self-contained run must end exactly
 * with its envelope.
 */
static void unframe_input(conn *c)
{
    size_t off = 0;
    while (c->state != C_CLOSING && !c->seg_err[0] && off < c->raw.len) {
        frame_seg seg;
        int rc = frame_seg_decode(c->raw.p + off, c->raw.len - off, c->seg_lz4, &c->seg_scratch, &seg);
        if (rc == 0)
            break;
        if (rc == CS_ENOMEM) {
            conn__close(c, false);
            return;
        }
        if (rc < 0) {
            if (seg.bad_lz4)
                seg_fail(c, "%08x invalid, lz4 payload of a frame does not decompress to its length", c->id);
            else
                seg_fail(c, "%08x invalid, unrecoverable CRC mismatch detected in frame %s. Read %d, Computed %d",
                          c->id, seg.bad_header ? "header" : "body", seg.read_crc, seg.computed_crc);
            break;
        }
        off += seg.size;
        if (seg.self_contained) {
            if (c->large_left > 0 && c->large_direct) {
                seg_fail(c, "Invalid frame: a self-contained frame arrived before the last frame of "
                          "a large message (%llu bytes still expected)", (unsigned long long)c->large_left);
                break;
            }
            if (!whole_envelopes(seg.payload, seg.payload_len)) {
                seg_fail(c, "Invalid frame: a self-contained frame of %zu bytes does not hold whole messages",
                          seg.payload_len);
                break;
            }
        } else if (c->large_left == 0) {
            if (seg.payload_len < FRAME_HEADER_LEN) {
                seg_fail(c, "Invalid frame: the first frame of a large message holds %zu bytes, "
                          "less than a message header", seg.payload_len);
                break;
            }
            uint64_t total = FRAME_HEADER_LEN + (uint64_t)cs_be32(seg.payload + 5);
            if (total < seg.payload_len) {
                seg_fail(c, "Invalid frame: a large message of %llu bytes in a frame of %zu bytes",
                          (unsigned long long)total, seg.payload_len);
                break;
            }
            c->large_left = total - seg.payload_len;
            c->large_direct = total > c->s->cfg->max_frame_size;
        } else {
            if (seg.payload_len > c->large_left) {
                seg_fail(c, "Invalid frame: %zu bytes in a frame of a large message that expects %llu more",
                          seg.payload_len, (unsigned long long)c->large_left);
                break;
            }
            c->large_left -= seg.payload_len;
        }
        cs_buf *dst = seg.self_contained || c->large_direct ? &c->in : &c->large;
        cs_buf_put(dst, seg.payload, seg.payload_len);
        if (dst->err) {
            conn__close(c, false);
            return;
        }
        if (dst == &c->large && c->large_left == 0) {   /* whole: after what is in `in` already */
            if (c->in.len == 0) {
                cs_buf t = c->in;
                c->in = c->large;
                c->large = t;
            } else {
                cs_buf_put(&c->in, c->large.p, c->large.len);
                if (c->in.err) {
                    conn__close(c, false);
                    return;
                }
            }
            cs_buf_reset(&c->large);
            if (c->large.cap > IDLE_BUF_KEEP)
                cs_buf_destroy(&c->large);
        }
    }
    if (c->closed)
        return;
    consume(&c->raw, off);
    if (c->seg_scratch.cap > IDLE_BUF_KEEP)
        cs_buf_destroy(&c->seg_scratch);
}

/*
 * Handle buffered input and write the replies; apply back-pressure
 * (invariant 9): stop reading while unsent output is over MAX_PENDING_OUT,
 * and resume (re-processing input already buffered) once it drains.
 */
static void pump(conn *c)
{
    c->refs++;                       /* a sync callback may not free us mid-loop */
    for (;;) {
        size_t before = c->in.len + c->raw.len;
        if (c->seg && c->raw.len > 0)
            unframe_input(c);
        process_input(c);
        if (c->seg_err[0] && c->state != C_CLOSING && !c->closed && !envelope_buffered(c))
            seg_fatal(c);
        exec_leave(c->s);
        flush(c);
        if (c->closed || c->state == C_CLOSING)
            break;
        bool over = c->out.len + c->inflight > MAX_PENDING_OUT;
        if (over) {
            if (!c->read_paused) {
                c->read_paused = true;
                uv_read_stop((uv_stream_t *)&c->tcp);
            }
            break;
        }
        if (c->read_paused) {
            c->read_paused = false;
            if (uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) != 0) {
                conn__close(c, false);
                break;
            }
        }
        /* Stopped early for back-pressure but the output drained at once:
         * go on with the frames already buffered; stop when no progress. */
        if ((c->in.len == 0 && c->raw.len == 0) || c->in.len + c->raw.len == before)
            break;
    }
    conn_unref(c);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    conn *c = (conn *)h;
    (void)suggested;
    cs_buf *b = c->seg ? &c->raw : &c->in;
    if (b->cap - b->len < READ_MIN_SPARE && cs_buf_reserve(b, READ_MIN_SPARE) != 0) {
        *buf = uv_buf_init(NULL, 0);
        return;
    }
    *buf = uv_buf_init((char *)b->p + b->len, (unsigned)(b->cap - b->len));
}

static void on_read(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf)
{
    conn *c = (conn *)st;
    (void)buf;
    if (nread < 0) {
        conn__close(c, false);
        return;
    }
    if (nread == 0)
        return;
    SRV_STAT_ADD(c->s->stats.bytes_in, (uint64_t)nread);
    if (c->state == C_CLOSING)
        return;                      /* lingering: input is discarded */
    if (c->seg)
        c->raw.len += (size_t)nread;
    else
        c->in.len += (size_t)nread;
    c->s->clock_ns = c->s->active_ns = cs_mono_ns();   /* start of this read's first request */
    pump(c);
    c->s->clock_ns = 0;              /* never reused after this callback */
}

/* ------------------------------------------------------------ accept / events */

/* A loopback peer's name comes from the hosts file when system_views.clients
 * is read (cql/vtables.c); any other peer's is looked up here, at accept. */
static bool is_loopback(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET)
        return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
    const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
    return IN6_IS_ADDR_LOOPBACK(a) ||
           (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
}

/* A remote peer's host name for system_views.clients (Cassandra's
 * InetSocketAddress.getHostName, a reverse lookup) from libuv's thread
 * pool, so a slow resolver never holds the loop (and a server with only
 * loopback clients never starts the pool: its threads cost ~0.2 MiB of
 * RSS).  The request holds a reference on the connection; the loop's
 * shutdown waits for it (srv_loop.lookups). */
typedef struct host_lookup {
    uv_getnameinfo_t req;
    conn *c;
} host_lookup;

static void on_host_name(uv_getnameinfo_t *req, int status, const char *host, const char *service)
{
    host_lookup *hl = req->data;
    conn *c = hl->c;
    if (status == 0 && host && *host) {
        snprintf(c->client.hostname, sizeof c->client.hostname, "%s", host);
        atomic_store_explicit(&c->client.hostname_set, true, memory_order_release);
    }
    c->s->lookups--;
    cs_free(hl);
    conn_unref(c);
}

static void lookup_host(conn *c, const struct sockaddr *sa)
{
    host_lookup *hl = cs_calloc(1, sizeof *hl);
    if (!hl)
        return;                      /* the address stands for the name */
    hl->c = c;
    hl->req.data = hl;
    c->refs++;
    c->s->lookups++;
    if (uv_getnameinfo(c->s->loop, &hl->req, on_host_name, sa, 0) != 0) {
        c->s->lookups--;
        c->refs--;
        cs_free(hl);
    }
}

int conn__accept(srv_loop *s, int fd)
{
    conn *c = cs_calloc(1, sizeof *c);
    if (!c) {
        if (fd >= 0)
            close(fd);
        return CS_ENOMEM;
    }
    c->s = s;
    c->state = C_NEW;
    c->id = (uint32_t)cs_xxh64(&c, sizeof c, (uint64_t)cs_mono_ns());
    cs_buf_init(&c->in);
    cs_buf_init(&c->raw);
    cs_buf_init(&c->seg_scratch);
    cs_buf_init(&c->large);
    cs_buf_init(&c->out);
    cs_arena_init(&c->arena);
    c->session.server_conn = c;
    c->session.loop_index = s->index;
    c->session.client = &c->client;
    c->client.options_len = -1;
    uv_tcp_init(s->loop, &c->tcp);
    c->next = s->conns;
    if (s->conns)
        s->conns->prev = c;
    s->conns = c;
    SRV_STAT_ADD(s->n_conns, 1);
    int total = atomic_fetch_add(&s->server->n_conns, 1) + 1;
    SRV_STAT_ADD(s->stats.connections_total, 1);
    int rc;
    if (fd < 0) {
        rc = uv_accept((uv_stream_t *)&s->server->tcp, (uv_stream_t *)&c->tcp);
    } else {
        rc = uv_tcp_open(&c->tcp, fd);
        if (rc != 0)
            close(fd);
    }
    if (rc == 0 && s->cfg->max_connections >= 0 && total > s->cfg->max_connections) {
        SRV_STAT_ADD(s->stats.connections_rejected, 1);
        CS_WARN("connection rejected: %d connections open (native_transport_max_concurrent_connections)",
                total - 1);
        rc = UV_ECONNREFUSED;
    }
    if (rc != 0) {
        conn__close(c, false);
        return rc;
    }
    uv_tcp_nodelay(&c->tcp, 1);
    /* Only an IP peer is named (an AF_UNIX peer, fuzz_conn's socketpair,
     * fills just its family: the rest of ss is not an address). */
    struct sockaddr_storage ss;
    int len = sizeof ss;
    if (uv_tcp_getpeername(&c->tcp, (struct sockaddr *)&ss, &len) == 0 &&
        (ss.ss_family == AF_INET6 || ss.ss_family == AF_INET)) {
        char ip[48] = "";
        int port = 0;
        if (ss.ss_family == AF_INET6) {
            uv_ip6_name((struct sockaddr_in6 *)&ss, ip, sizeof ip);
            port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
        } else {
            uv_ip4_name((struct sockaddr_in *)&ss, ip, sizeof ip);
            port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
        }
        snprintf(c->session.client_addr, sizeof c->session.client_addr, "%s:%d", ip, port);
        if (!is_loopback((const struct sockaddr *)&ss))
            lookup_host(c, (const struct sockaddr *)&ss);
    }
    rc = uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
    if (rc != 0)
        conn__close(c, false);
    return rc;
}

void conn__push_schema_change(conn *c, const cql_schema_change *ch)
{
    if (c->closed || c->state != C_READY || !(c->events & MSG_EV_SCHEMA))
        return;
    frame_writer w;
    frame_begin(&w, &c->out, c->version, true, -1, OP_EVENT, 0, c->compress, NULL, NULL, 0);
    msg_put_event_schema_change(&c->out, ch);
    frame_end(&w);
    flush(c);
}
