/*
 * client.c: the CQL client used by bench and tools (see client.h).
 */
#include "bench/client.h"
#include "common/alloc.h"
#include "common/err.h"
#include "server/frame.h"
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define PROTO_V4 4
#define CL_ONE 0x0001

/* ------------------------------------------------------------ encoders */

static void put_string_map(cs_buf *b, const char *const *kv, int n)
{
    cs_buf_put_u16(b, (uint16_t)n);
    for (int i = 0; i < n; i++) {
        cs_buf_put_string(b, kv[2 * i]);
        cs_buf_put_string(b, kv[2 * i + 1]);
    }
}

static void put_query_params(cs_buf *b, uint16_t consistency, const uint8_t *const *vals, const int32_t *lens,
                             int n, int page_size, const uint8_t *ps, int32_t ps_len)
{
    uint8_t flags = 0;
    if (n > 0) flags |= 0x01;
    if (page_size > 0) flags |= 0x04;
    if (ps && ps_len >= 0) flags |= 0x08;
    cs_buf_put_u16(b, consistency);
    cs_buf_put_u8(b, flags);
    if (n > 0) {
        cs_buf_put_u16(b, (uint16_t)n);
        for (int i = 0; i < n; i++)
            cs_buf_put_bytes(b, vals[i], lens[i]);
    }
    if (page_size > 0)
        cs_buf_put_u32(b, (uint32_t)page_size);
    if (ps && ps_len >= 0)
        cs_buf_put_bytes(b, ps, ps_len);
}

void bc_msg_query(cs_buf *b, const char *cql, uint16_t consistency, int page_size, const uint8_t *ps,
                  int32_t ps_len)
{
    cs_buf_put_long_string(b, cql, strlen(cql));
    put_query_params(b, consistency, NULL, NULL, 0, page_size, ps, ps_len);
}

void bc_msg_execute(cs_buf *b, const uint8_t *id, int idlen, const uint8_t *const *vals, const int32_t *lens,
                    int n, uint16_t consistency, int page_size, const uint8_t *ps, int32_t ps_len)
{
    cs_buf_put_u16(b, (uint16_t)idlen);
    cs_buf_put(b, id, (size_t)idlen);
    put_query_params(b, consistency, vals, lens, n, page_size, ps, ps_len);
}

/* ------------------------------------------------------------ decoding */

static int read_option(cs_rd *r, bc_type *t)
{
    t->id = cs_rd_u16(r);
    t->n_sub = 0;
    size_t n;
    switch (t->id) {
    case 0x0000: cs_rd_string(r, &n); break;
    case 0x0020: case 0x0022: {
        bc_type e;
        read_option(r, &e);
        t->sub[0] = e.id;
        t->n_sub = 1;
        break;
    }
    case 0x0021: {
        bc_type k, v;
        read_option(r, &k);
        read_option(r, &v);
        t->sub[0] = k.id;
        t->sub[1] = v.id;
        t->n_sub = 2;
        break;
    }
    case 0x0030: {
        cs_rd_string(r, &n);
        cs_rd_string(r, &n);
        int nf = cs_rd_u16(r);
        for (int i = 0; i < nf && !r->err; i++) {
            bc_type f;
            cs_rd_string(r, &n);
            read_option(r, &f);
        }
        break;
    }
    case 0x0031: {
        int ne = cs_rd_u16(r);
        for (int i = 0; i < ne && !r->err; i++) {
            bc_type e;
            read_option(r, &e);
        }
        break;
    }
    default: break;
    }
    return r->err;
}

/* Metadata block of Rows / Prepared: flags, count, [paging state], specs. */
void bc_skip_col_specs(cs_rd *r, uint32_t flags, int count)
{
    size_t n;
    if (flags & 0x0004)   /* no metadata */
        return;
    if (flags & 0x0001) {
        cs_rd_string(r, &n);
        cs_rd_string(r, &n);
    }
    for (int i = 0; i < count && !r->err; i++) {
        if (!(flags & 0x0001)) {
            cs_rd_string(r, &n);
            cs_rd_string(r, &n);
        }
        cs_rd_string(r, &n);
        bc_type t;
        read_option(r, &t);
    }
}

static int read_metadata(cs_rd *r, int *n_cols, char ***names, bc_type **types, uint8_t **ps, int32_t *ps_len)
{
    uint32_t flags = cs_rd_u32(r);
    int count = (int)cs_rd_u32(r);
    if (r->err || count < 0 || count > 65535)
        return CS_ECORRUPT;
    if (ps)
        *ps_len = -1;
    if (flags & 0x0002) {
        const uint8_t *p;
        int32_t l = cs_rd_bytes(r, &p);
        if (ps && l >= 0) {
            *ps = cs_memdup(p, (size_t)l);
            *ps_len = l;
        }
    }
    *n_cols = count;
    if (flags & 0x0004) { /* no metadata */
        *names = NULL;
        *types = NULL;
        return r->err;
    }
    bool global = flags & 0x0001;
    size_t n;
    if (global) {
        cs_rd_string(r, &n);
        cs_rd_string(r, &n);
    }
    *names = cs_calloc((size_t)(count ? count : 1), sizeof(char *));
    *types = cs_calloc((size_t)(count ? count : 1), sizeof(bc_type));
    for (int i = 0; i < count && !r->err; i++) {
        if (!global) {
            cs_rd_string(r, &n);
            cs_rd_string(r, &n);
        }
        const char *s = cs_rd_string(r, &n);
        (*names)[i] = s ? cs_strndup(s, n) : cs_strdup("");
        read_option(r, &(*types)[i]);
    }
    return r->err;
}

void bc_result_destroy(bc_result *r)
{
    for (int i = 0; i < r->n_cols && r->col_names; i++)
        cs_free(r->col_names[i]);
    cs_free(r->col_names);
    cs_free(r->col_types);
    for (int i = 0; i < r->n_binds && r->bind_names; i++)
        cs_free(r->bind_names[i]);
    cs_free(r->bind_names);
    cs_free(r->bind_types);
    cs_free((void *)r->vals);
    cs_free(r->lens);
    cs_free(r->paging_state);
    for (int i = 0; i < r->n_warnings; i++)
        cs_free(r->warnings[i]);
    cs_free(r->warnings);
    cs_free(r->body);
    memset(r, 0, sizeof(*r));
}

void bc_decode_error(cs_rd *rd, bc_result *r)
{
    r->err_code = (int)cs_rd_u32(rd);
    size_t n;
    const char *m = cs_rd_string(rd, &n);
    snprintf(r->err_msg, sizeof(r->err_msg), "%.*s", m ? (int)n : 0, m ? m : "");
}

int bc_decode_response(int opcode, const uint8_t *msg, size_t len, const char **warnings, int n_warnings,
                       bc_result *r)
{
    memset(r, 0, sizeof(*r));
    r->ps_len = -1;
    r->opcode = opcode;
    r->body = cs_memdup(msg, len);
    r->body_len = len;
    if (n_warnings > 0) {
        r->warnings = cs_calloc((size_t)n_warnings, sizeof(char *));
        for (int i = 0; i < n_warnings; i++)
            r->warnings[i] = cs_strdup(warnings[i]);
        r->n_warnings = n_warnings;
    }
    cs_rd rd;
    cs_rd_init(&rd, r->body, len);
    if (opcode == OP_ERROR) {
        bc_decode_error(&rd, r);
        return 0;
    }
    if (opcode != OP_RESULT)
        return 0;
    r->kind = (int)cs_rd_u32(&rd);
    if (r->kind == RESULT_ROWS) {
        if (read_metadata(&rd, &r->n_cols, &r->col_names, &r->col_types, &r->paging_state, &r->ps_len))
            return CS_ECORRUPT;
        int32_t rows = (int32_t)cs_rd_u32(&rd);
        if (rd.err || rows < 0)
            return CS_ECORRUPT;
        size_t cells = (size_t)rows * (size_t)r->n_cols;
        if (cells > len)
            return CS_ECORRUPT;
        r->vals = cs_calloc(cells ? cells : 1, sizeof(uint8_t *));
        r->lens = cs_calloc(cells ? cells : 1, sizeof(int32_t));
        for (size_t i = 0; i < cells && !rd.err; i++)
            r->lens[i] = cs_rd_bytes(&rd, (const uint8_t **)&r->vals[i]);
        r->n_rows = rows;
        return rd.err ? CS_ECORRUPT : 0;
    }
    if (r->kind == RESULT_PREPARED) {
        size_t n;
        const char *id = cs_rd_string(&rd, &n);
        if (!id || n > sizeof(r->prep_id))
            return CS_ECORRUPT;
        memcpy(r->prep_id, id, n);
        r->prep_id_len = (int)n;
        /* v4 prepared metadata: flags, count, pk count + indexes, specs */
        uint32_t flags = cs_rd_u32(&rd);
        int count = (int)cs_rd_u32(&rd);
        int pkc = (int)cs_rd_u32(&rd);
        for (int i = 0; i < pkc && !rd.err; i++)
            cs_rd_u16(&rd);
        if (rd.err || count < 0 || count > 65535)
            return CS_ECORRUPT;
        bool global = flags & 1;
        if (global) {
            cs_rd_string(&rd, &n);
            cs_rd_string(&rd, &n);
        }
        r->n_binds = count;
        r->bind_names = cs_calloc((size_t)(count ? count : 1), sizeof(char *));
        r->bind_types = cs_calloc((size_t)(count ? count : 1), sizeof(bc_type));
        for (int i = 0; i < count && !rd.err; i++) {
            if (!global) {
                cs_rd_string(&rd, &n);
                cs_rd_string(&rd, &n);
            }
            const char *s = cs_rd_string(&rd, &n);
            r->bind_names[i] = s ? cs_strndup(s, n) : cs_strdup("");
            read_option(&rd, &r->bind_types[i]);
        }
        return rd.err ? CS_ECORRUPT : 0;
    }
    return 0;
}

char *bc_result_text(const bc_result *r, int row, int col)
{
    if (row < 0 || row >= r->n_rows || col < 0 || col >= r->n_cols)
        return NULL;
    size_t i = (size_t)row * (size_t)r->n_cols + (size_t)col;
    if (r->lens[i] < 0)
        return NULL;
    return cs_strndup((const char *)r->vals[i], (size_t)r->lens[i]);
}

int bc_result_col(const bc_result *r, const char *name)
{
    for (int i = 0; i < r->n_cols; i++)
        if (r->col_names && !strcmp(r->col_names[i], name))
            return i;
    return -1;
}

/* ------------------------------------------------------------ sync */

static int write_all(int fd, const uint8_t *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return CS_EIO;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int read_all(int fd, uint8_t *p, size_t n)
{
    while (n) {
        ssize_t r = read(fd, p, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return CS_EIO;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

/* One request/response round trip on the blocking connection. */
static int sync_roundtrip(bc_sync *c, uint8_t opcode, const cs_buf *msg, bc_result *out)
{
    cs_buf f;
    cs_buf_init(&f);
    frame_writer w;
    frame_begin(&w, &f, PROTO_V4, false, 1, opcode, 0, false, NULL, NULL, 0);
    cs_buf_put(&f, msg->p, msg->len);
    frame_end(&w);
    int rc = f.err ? f.err : write_all(c->fd, f.p, f.len);
    cs_buf_destroy(&f);
    if (rc) {
        snprintf(c->err, sizeof(c->err), "write failed: %s", strerror(errno));
        return rc;
    }
    for (;;) {
        uint8_t hdr[FRAME_HEADER_LEN];
        frame_header h;
        if (read_all(c->fd, hdr, sizeof(hdr)) || frame_header_parse(hdr, &h)) {
            snprintf(c->err, sizeof(c->err), "connection closed by server");
            return CS_EIO;
        }
        if (h.length > 256u * 1024 * 1024) {
            snprintf(c->err, sizeof(c->err), "frame too large (%u bytes)", h.length);
            return CS_ECORRUPT;
        }
        uint8_t *body = cs_malloc(h.length ? h.length : 1);
        if (!body || read_all(c->fd, body, h.length)) {
            cs_free(body);
            snprintf(c->err, sizeof(c->err), "connection closed by server");
            return CS_EIO;
        }
        if (h.stream < 0) { /* event: ignore */
            cs_free(body);
            continue;
        }
        frame_body fb;
        memset(&fb, 0, sizeof(fb));
        rc = frame_body_decode(&h, body, h.length, 256u * 1024 * 1024, &fb);
        if (!rc)
            rc = bc_decode_response(h.opcode, fb.msg, fb.msg_len, fb.warnings, fb.n_warnings, out);
        frame_body_destroy(&fb);
        cs_free(body);
        if (rc)
            snprintf(c->err, sizeof(c->err), "malformed response");
        else if (out->opcode == OP_ERROR)
            snprintf(c->err, sizeof(c->err), "error 0x%04x: %s", out->err_code, out->err_msg);
        return rc;
    }
}

int bc_sync_connect(bc_sync *c, const char *host, int port, const char *user, const char *pass)
{
    c->fd = -1;
    c->err[0] = 0;
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *ai;
    char ps[16];
    snprintf(ps, sizeof(ps), "%d", port);
    if (getaddrinfo(host, ps, &hints, &ai)) {
        snprintf(c->err, sizeof(c->err), "cannot resolve %s", host);
        return CS_EIO;
    }
    c->fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (c->fd < 0 || connect(c->fd, ai->ai_addr, ai->ai_addrlen)) {
        snprintf(c->err, sizeof(c->err), "cannot connect to %s:%d: %s", host, port, strerror(errno));
        freeaddrinfo(ai);
        if (c->fd >= 0) close(c->fd);
        c->fd = -1;
        return CS_EIO;
    }
    freeaddrinfo(ai);
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    cs_buf m;
    cs_buf_init(&m);
    const char *kv[] = { "CQL_VERSION", "3.0.0", "DRIVER_NAME", "cassette-client", "DRIVER_VERSION", "1.0" };
    put_string_map(&m, kv, 3);
    bc_result r;
    int rc = sync_roundtrip(c, OP_STARTUP, &m, &r);
    cs_buf_destroy(&m);
    if (!rc && r.opcode == OP_AUTHENTICATE) {
        bc_result_destroy(&r);
        cs_buf_init(&m);
        const char *u = user ? user : "cassandra", *pw = pass ? pass : "cassandra";
        size_t ul = strlen(u), pl = strlen(pw);
        cs_buf_put_u32(&m, (uint32_t)(ul + pl + 2));
        cs_buf_put_u8(&m, 0);
        cs_buf_put(&m, u, ul);
        cs_buf_put_u8(&m, 0);
        cs_buf_put(&m, pw, pl);
        rc = sync_roundtrip(c, OP_AUTH_RESPONSE, &m, &r);
        cs_buf_destroy(&m);
        if (!rc && r.opcode != OP_AUTH_SUCCESS) {
            snprintf(c->err, sizeof(c->err), "authentication failed: %s", r.err_msg);
            rc = CS_EINVAL;
        }
    } else if (!rc && r.opcode != OP_READY) {
        snprintf(c->err, sizeof(c->err), "STARTUP refused: %s", r.err_msg);
        rc = CS_EINVAL;
    }
    bc_result_destroy(&r);
    if (rc) {
        close(c->fd);
        c->fd = -1;
    }
    return rc;
}

int bc_sync_query(bc_sync *c, const char *cql, int page_size, const uint8_t *ps, int32_t ps_len, bc_result *out)
{
    cs_buf m;
    cs_buf_init(&m);
    bc_msg_query(&m, cql, CL_ONE, page_size, ps, ps_len);
    int rc = sync_roundtrip(c, OP_QUERY, &m, out);
    cs_buf_destroy(&m);
    return rc ? rc : out->opcode == OP_ERROR ? CS_EUSER : 0;
}

int bc_sync_prepare(bc_sync *c, const char *cql, bc_result *out)
{
    cs_buf m;
    cs_buf_init(&m);
    cs_buf_put_long_string(&m, cql, strlen(cql));
    int rc = sync_roundtrip(c, OP_PREPARE, &m, out);
    cs_buf_destroy(&m);
    return rc ? rc : out->opcode == OP_ERROR ? CS_EUSER : 0;
}

void bc_sync_close(bc_sync *c)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
}
