/*
 * client_async.c: libuv CQL connections with many requests in flight.
 *
 * States: CONNECTING -> STARTING (STARTUP sent) [-> AUTH] -> READY -> BROKEN.
 * Requests are framed into `out` and written once per loop iteration from a
 * uv_check_t (started when `out` gets its first frame, so an iteration runs
 * only the checks of connections with something to send), so a burst of
 * sends becomes one write: uv_try_write first (the
 * usual case writes everything, no request object), and only a remainder goes
 * through uv_write from a second buffer (`wbuf`) while `out` keeps filling.
 * Replies are read into one growing buffer, many per read, and matched to
 * their stream id; stream ids are recycled through a free list.  Nothing is
 * allocated per request: the buffers keep their capacity, a request can be
 * built straight into `out` (bc_async_begin/commit), and replies are decoded
 * in place into one bc_result per connection (see bc_done_cb).
 */
#include "bench/client.h"
#include "common/alloc.h"
#include "common/err.h"
#include "common/util.h"
#include "server/frame.h"
#include <stdio.h>
#include <string.h>

enum { ST_CONNECTING, ST_STARTING, ST_AUTH, ST_READY, ST_BROKEN };

typedef struct pending { bc_done_cb cb; void *arg; } pending;

struct bc_async {
    uv_tcp_t tcp;              /* embedded handle; freed in close cb */
    uv_check_t check;          /* flushes `out` once per iteration; runs only while `out` has frames */
    bool check_on;
    uv_connect_t creq;
    uv_write_t wreq;           /* the one uv_write in flight (writing) */
    uv_loop_t *loop;
    int state;
    int max_inflight, inflight;
    pending *slots;            /* indexed by stream id */
    int16_t *free_ids; int n_free;
    cs_buf out;                /* frames waiting to be written */
    cs_buf wbuf;               /* frames being written by wreq */
    bool writing;
    cs_buf in;                 /* bytes read, not yet a whole frame */
    size_t build_start;        /* bc_async_begin: where the frame being built starts */
    bool building;
    bc_result res;             /* the reply handed to callbacks */
    bc_ready_cb ready; void *ready_arg;
    char *user, *pass;
    int closing_handles;
};

static void fail_all(bc_async *c, const char *why);

static void flush_out(bc_async *c);

static void on_write(uv_write_t *req, int status)
{
    bc_async *c = req->data;
    c->writing = false;
    cs_buf_reset(&c->wbuf);
    if (status < 0) {
        if (c->state != ST_BROKEN) {
            c->state = ST_BROKEN;
            fail_all(c, "write failed");
        }
        return;
    }
    flush_out(c);   /* what queued up meanwhile; the check may already have run */
}

static void flush_out(bc_async *c)
{
    if (!c->out.len || c->writing || c->state == ST_BROKEN)
        return;
    uv_buf_t b = uv_buf_init((char *)c->out.p, (unsigned)c->out.len);
    int n = uv_try_write((uv_stream_t *)&c->tcp, &b, 1);
    if (n >= 0 && (size_t)n == c->out.len) {
        cs_buf_reset(&c->out);
        return;
    }
    if (n < 0 && n != UV_EAGAIN) {
        c->state = ST_BROKEN;
        fail_all(c, "write failed");
        return;
    }
    if (n < 0)
        n = 0;
    /* the rest goes through uv_write from wbuf; out starts empty again */
    cs_buf t = c->wbuf;
    c->wbuf = c->out;
    c->out = t;
    cs_buf_reset(&c->out);
    b = uv_buf_init((char *)c->wbuf.p + n, (unsigned)(c->wbuf.len - (size_t)n));
    c->wreq.data = c;
    if (uv_write(&c->wreq, (uv_stream_t *)&c->tcp, &b, 1, on_write)) {
        cs_buf_reset(&c->wbuf);
        c->state = ST_BROKEN;
        fail_all(c, "write failed");
        return;
    }
    c->writing = true;
}

static void on_check(uv_check_t *h)
{
    bc_async *c = h->data;
    uv_check_stop(&c->check);
    c->check_on = false;
    flush_out(c);   /* a remainder is on_write's to flush */
}

static void want_flush(bc_async *c)
{
    if (!c->check_on && c->state != ST_BROKEN) {
        uv_check_start(&c->check, on_check);
        c->check_on = true;
    }
}

static void send_frame(bc_async *c, int16_t stream, uint8_t opcode, const uint8_t *msg, size_t len)
{
    uint8_t *p = cs_buf_extend(&c->out, FRAME_HEADER_LEN + len);
    if (!p)
        return;
    want_flush(c);
    p[0] = 4;                  /* v4 request */
    p[1] = 0;
    cs_st16(p + 2, (uint16_t)stream);
    p[4] = opcode;
    cs_st32(p + 5, (uint32_t)len);
    memcpy(p + FRAME_HEADER_LEN, msg, len);
}

static void fail_all(bc_async *c, const char *why)
{
    bc_result *r = &c->res;
    memset(r, 0, sizeof(*r));
    r->opcode = OP_ERROR;
    r->err_code = -1;
    r->ps_len = -1;
    r->recv_ns = cs_mono_ns();
    snprintf(r->err_msg, sizeof(r->err_msg), "%s", why);
    for (int i = 0; i < c->max_inflight; i++) {
        if (c->slots[i].cb) {
            bc_done_cb cb = c->slots[i].cb;
            c->slots[i].cb = NULL;
            c->inflight--;
            cb(c->slots[i].arg, r);
        }
    }
}

/* Decode as much of a reply as bc_done_cb promises, in place. */
static int decode_lean(bc_result *r, uint8_t opcode, const uint8_t *msg, size_t len)
{
    r->opcode = opcode;
    r->err_code = 0;
    r->kind = 0;
    r->n_rows = 0;
    r->paging_state = NULL;
    r->ps_len = -1;
    cs_rd rd;
    cs_rd_init(&rd, msg, len);
    if (opcode == OP_ERROR) {
        bc_decode_error(&rd, r);
        return 0;
    }
    r->err_msg[0] = 0;
    if (opcode != OP_RESULT)
        return 0;
    r->kind = (int)cs_rd_u32(&rd);
    if (r->kind == RESULT_ROWS) {
        uint32_t flags = cs_rd_u32(&rd);
        int32_t count = (int32_t)cs_rd_u32(&rd);
        if (count < 0)
            return CS_ECORRUPT;
        if (flags & 0x0002) {   /* has more pages: the state comes first */
            const uint8_t *ps;
            int32_t l = cs_rd_bytes(&rd, &ps);
            if (l >= 0) {
                r->paging_state = (uint8_t *)ps;
                r->ps_len = l;
            }
        }
        /* the row count, after the column specs (the rows are not read) */
        bc_skip_col_specs(&rd, flags, count);
        int32_t rows = (int32_t)cs_rd_u32(&rd);
        if (rows < 0)
            return CS_ECORRUPT;
        r->n_rows = rows;
    }
    return rd.err ? CS_ECORRUPT : 0;
}

static void handle_frame(bc_async *c, const frame_header *h, const uint8_t *body)
{
    frame_body fb;
    bc_result *r = &c->res;
    if (frame_body_decode(h, body, h->length, 256u * 1024 * 1024, &fb) ||
        decode_lean(r, h->opcode, fb.msg, fb.msg_len)) {
        frame_body_destroy(&fb);
        c->state = ST_BROKEN;
        fail_all(c, "malformed response");
        return;
    }
    r->warnings = (char **)fb.warnings;
    r->n_warnings = fb.n_warnings;
    if (c->state == ST_STARTING || c->state == ST_AUTH) {
        if (h->opcode == OP_AUTHENTICATE && c->state == ST_STARTING) {
            cs_buf m;
            cs_buf_init(&m);
            const char *u = c->user ? c->user : "cassandra", *p = c->pass ? c->pass : "cassandra";
            size_t ul = strlen(u), pl = strlen(p);
            cs_buf_put_u32(&m, (uint32_t)(ul + pl + 2));
            cs_buf_put_u8(&m, 0);
            cs_buf_put(&m, u, ul);
            cs_buf_put_u8(&m, 0);
            cs_buf_put(&m, p, pl);
            send_frame(c, 0, OP_AUTH_RESPONSE, m.p, m.len);
            cs_buf_destroy(&m);
            c->state = ST_AUTH;
        } else if (h->opcode == OP_READY || h->opcode == OP_AUTH_SUCCESS) {
            c->state = ST_READY;
            c->ready(c, 0, c->ready_arg);
        } else {
            c->state = ST_BROKEN;
            c->ready(c, CS_EINVAL, c->ready_arg);
        }
    } else if (h->stream >= 0 && h->stream < c->max_inflight && c->slots[h->stream].cb) {
        pending p = c->slots[h->stream];
        c->slots[h->stream].cb = NULL;
        c->free_ids[c->n_free++] = h->stream;
        c->inflight--;
        p.cb(p.arg, r);
    }
    r->warnings = NULL;
    r->n_warnings = 0;
    frame_body_destroy(&fb);
}

static void on_alloc(uv_handle_t *h, size_t sugg, uv_buf_t *buf)
{
    bc_async *c = h->data;
    if (cs_buf_reserve(&c->in, 65536)) {
        buf->base = NULL;
        buf->len = 0;
        return;
    }
    buf->base = (char *)c->in.p + c->in.len;
    buf->len = c->in.cap - c->in.len;
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
    bc_async *c = s->data;
    if (n < 0) {
        bool was_ready = c->state == ST_READY;
        c->state = ST_BROKEN;
        uv_read_stop(s);
        fail_all(c, "connection closed");
        if (!was_ready)
            c->ready(c, CS_EIO, c->ready_arg);
        return;
    }
    c->in.len += (size_t)n;
    /* one clock read per read: the completion time of every reply in it */
    c->res.recv_ns = cs_mono_ns();
    size_t off = 0;
    while (c->in.len - off >= FRAME_HEADER_LEN) {
        frame_header h;
        if (frame_header_parse(c->in.p + off, &h) || h.length > 256u * 1024 * 1024) {
            c->state = ST_BROKEN;
            fail_all(c, "bad frame from server");
            return;
        }
        if (c->in.len - off < FRAME_HEADER_LEN + h.length)
            break;
        handle_frame(c, &h, c->in.p + off + FRAME_HEADER_LEN);
        off += FRAME_HEADER_LEN + h.length;
        if (c->state == ST_BROKEN)
            return;
    }
    if (off) {
        memmove(c->in.p, c->in.p + off, c->in.len - off);
        c->in.len -= off;
    }
}

static void on_connect(uv_connect_t *req, int status)
{
    bc_async *c = req->data;
    if (status) {
        c->state = ST_BROKEN;
        c->ready(c, CS_EIO, c->ready_arg);
        return;
    }
    uv_tcp_nodelay(&c->tcp, 1);
    uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
    cs_buf m;
    cs_buf_init(&m);
    cs_buf_put_u16(&m, 1);
    cs_buf_put_string(&m, "CQL_VERSION");
    cs_buf_put_string(&m, "3.0.0");
    send_frame(c, 0, OP_STARTUP, m.p, m.len);
    cs_buf_destroy(&m);
    c->state = ST_STARTING;
}

int bc_async_open(uv_loop_t *loop, const char *host, int port, int max_inflight, const char *user,
                  const char *pass, bc_ready_cb ready, void *arg, bc_async **out)
{
    struct sockaddr_storage sa;
    if (uv_ip4_addr(host, port, (struct sockaddr_in *)&sa) &&
        uv_ip6_addr(host, port, (struct sockaddr_in6 *)&sa))
        return CS_EINVAL;
    if (max_inflight < 1) max_inflight = 1;
    if (max_inflight > 32767) max_inflight = 32767;
    bc_async *c = cs_calloc(1, sizeof(*c));
    if (!c)
        return CS_ENOMEM;
    c->loop = loop;
    c->max_inflight = max_inflight;
    c->slots = cs_calloc((size_t)max_inflight, sizeof(pending));
    c->free_ids = cs_calloc((size_t)max_inflight, sizeof(int16_t));
    for (int i = max_inflight - 1; i >= 0; i--)
        c->free_ids[c->n_free++] = (int16_t)i;
    cs_buf_init(&c->out);
    cs_buf_init(&c->wbuf);
    cs_buf_init(&c->in);
    c->res.ps_len = -1;
    c->ready = ready;
    c->ready_arg = arg;
    c->user = user ? cs_strdup(user) : NULL;
    c->pass = pass ? cs_strdup(pass) : NULL;
    uv_tcp_init(loop, &c->tcp);
    c->tcp.data = c;
    uv_check_init(loop, &c->check);
    c->check.data = c;
    c->creq.data = c;
    c->state = ST_CONNECTING;
    if (uv_tcp_connect(&c->creq, &c->tcp, (struct sockaddr *)&sa, on_connect)) {
        c->state = ST_BROKEN;
    }
    *out = c;
    return 0;
}

int bc_async_send(bc_async *c, uint8_t opcode, const uint8_t *msg, size_t len, bc_done_cb cb, void *arg)
{
    if (c->state != ST_READY)
        return CS_EIO;
    if (!c->n_free)
        return CS_EAGAIN;
    int16_t id = c->free_ids[--c->n_free];
    c->slots[id].cb = cb;
    c->slots[id].arg = arg;
    c->inflight++;
    send_frame(c, id, opcode, msg, len);
    return 0;
}

cs_buf *bc_async_begin(bc_async *c, size_t *body_off)
{
    if (c->state != ST_READY || !c->n_free || c->building)
        return NULL;
    c->build_start = c->out.len;
    if (!cs_buf_extend(&c->out, FRAME_HEADER_LEN)) {
        c->out.len = c->build_start;
        c->out.err = 0;
        return NULL;
    }
    c->building = true;
    *body_off = c->out.len;
    return &c->out;
}

int bc_async_commit(bc_async *c, uint8_t opcode, bc_done_cb cb, void *arg)
{
    c->building = false;
    if (c->out.err) {
        bc_async_abort(c);
        return CS_ENOMEM;
    }
    int16_t id = c->free_ids[--c->n_free];
    c->slots[id].cb = cb;
    c->slots[id].arg = arg;
    c->inflight++;
    uint8_t *p = c->out.p + c->build_start;
    p[0] = 4;
    p[1] = 0;
    cs_st16(p + 2, (uint16_t)id);
    p[4] = opcode;
    cs_st32(p + 5, (uint32_t)(c->out.len - c->build_start - FRAME_HEADER_LEN));
    want_flush(c);
    return 0;
}

void bc_async_abort(bc_async *c)
{
    c->building = false;
    c->out.len = c->build_start;
    c->out.err = 0;
}

int bc_async_inflight(const bc_async *c) { return c->inflight; }
bool bc_async_broken(const bc_async *c) { return c->state == ST_BROKEN; }

static void on_handle_closed(uv_handle_t *h)
{
    bc_async *c = h->data;
    if (--c->closing_handles)
        return;
    cs_buf_destroy(&c->out);
    cs_buf_destroy(&c->wbuf);
    cs_buf_destroy(&c->in);
    cs_free(c->slots);
    cs_free(c->free_ids);
    cs_free(c->user);
    cs_free(c->pass);
    cs_free(c);
}

void bc_async_close(bc_async *c)
{
    fail_all(c, "connection closed by client");
    c->state = ST_BROKEN;
    c->closing_handles = 2;
    uv_check_stop(&c->check);
    uv_close((uv_handle_t *)&c->check, on_handle_closed);
    uv_close((uv_handle_t *)&c->tcp, on_handle_closed);
}
