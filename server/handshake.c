/*
 * handshake.c: a connection's handshake (the C_NEW -> C_UNINIT -> C_AUTH
 * -> C_READY transitions of conn.c's state machine): the refusal of an
 * unsupported first version, STARTUP (CQL_VERSION, COMPRESSION, driver
 * name and version) and AUTH_RESPONSE under PasswordAuthenticator.
 * Owner: protocol.
 */
#include "server/conn_int.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "common/util.h"
#include "server/auth.h"
#include "server/frame.h"
#include "server/snappy.h"

/* The handshake is complete: list the connection in system_views.clients. */
static void become_ready(conn *c)
{
    c->state = C_READY;
    if (!c->listed) {
        c->listed = true;
        conn__exec_enter(c->s);            /* released by pump */
        cql_session_opened(c->s->cql, &c->session);
    }
}

/*
 * Refuse an unsupported protocol version on the first frame (invariant 2).
 * The stream id is read from bytes 2-3 as in a v3+ header (what Cassandra's
 * decoder and the shared bad-input corpus expect), also for v1/v2 whose
 * 8-byte header has a 1-byte stream.
 */
void conn__refuse_version(conn *c, const uint8_t *hdr)
{
    uint8_t v = hdr[0] & 0x7f;
    cs_error e;
    cs_error_init(&e);
    e.code = CS_ERR_PROTOCOL;
    if (v == 6 && !(hdr[1] & FRAME_FLAG_USE_BETA))
        /* Cassandra ProtocolVersion.decode: v6 is its beta version */
        snprintf(e.msg, sizeof e.msg, "Beta version of the protocol used (6/v6-beta), but USE_BETA flag is unset");
    else
        snprintf(e.msg, sizeof e.msg,
                 "Invalid or unsupported protocol version (%u); supported versions are (%s)", v,
                 SUPPORTED_TEXT);
    SRV_STAT_ADD(c->s->stats.errors, 1);
    SRV_STAT_ADD(c->s->stats.protocol_errors, 1);
    /* v1/v2 get their own version byte back (Cassandra answers an old
     * version in that version); anything else a v4 frame. */
    msg_write_error(&c->out, (v == 1 || v == 2) ? v : 4, (int16_t)cs_be16(hdr + 2), false, &e);
    conn__close(c, true);
}

/*
 * Check a STARTUP CQL_VERSION (Cassandra StartupMessage: parsed as
 * CassandraVersion "X.Y[.Z][-suffix]", must be >= 3.0.0).  Returns 0 if
 * fine, 1 if not a version, 2 if too old.
 */
static int cql_version_check(const char *v, size_t n)
{
    int parts[3] = { 0, 0, 0 }, np = 0;
    size_t i = 0;
    while (np < 3) {
        if (i >= n || v[i] < '0' || v[i] > '9')
            return 1;
        int x = 0;
        for (; i < n && v[i] >= '0' && v[i] <= '9'; i++)
            if (x < 100000000)
                x = x * 10 + (v[i] - '0');
        parts[np++] = x;
        if (i < n && v[i] == '.' && np < 3) {
            i++;
            continue;
        }
        break;
    }
    if (np < 2 || (i < n && v[i] != '-' && v[i] != '+'))
        return 1;
    return parts[0] >= 3 ? 0 : 2;
}

static void copy_opt(char *dst, size_t cap, const char *v, size_t n)
{
    if (n >= cap)
        n = cap - 1;
    memcpy(dst, v, n);
    dst[n] = '\0';
}

/* Order of two options by upper-cased key bytes (UTF8Type's order, the
 * map's). */
static int opt_cmp(const msg_kv *a, const msg_kv *b)
{
    size_t n = a->klen < b->klen ? a->klen : b->klen;
    for (size_t i = 0; i < n; i++) {
        int x = toupper((unsigned char)a->k[i]), y = toupper((unsigned char)b->k[i]);
        if (x != y)
            return x - y;
    }
    return a->klen < b->klen ? -1 : a->klen > b->klen;
}

/*
 * system_views.clients' client_options: STARTUP's options as ClientState
 * keeps them (keys upper-cased; of a key given twice the last), serialized
 * as a map<text, text> in key order.  Options that do not fit the session's
 * buffer are left out (drivers send a few hundred bytes).
 */
static void put_client_options(cql_client_info *ci, const msg_request *m)
{
    enum { MAX_OPTS = 64 };
    const msg_kv *sorted[MAX_OPTS];
    int n = 0;
    for (int i = m->n_options - 1; i >= 0 && n < MAX_OPTS; i--) {   /* the last of each key */
        const msg_kv *kv = &m->options[i];
        bool seen = false;
        for (int j = 0; j < n && !seen; j++)
            seen = opt_cmp(sorted[j], kv) == 0;
        if (!seen)
            sorted[n++] = kv;
    }
    for (int i = 1; i < n; i++)      /* insertion sort: a handful of options */
        for (int j = i; j > 0 && opt_cmp(sorted[j - 1], sorted[j]) > 0; j--) {
            const msg_kv *t = sorted[j];
            sorted[j] = sorted[j - 1];
            sorted[j - 1] = t;
        }
    uint8_t *o = ci->options;
    size_t cap = sizeof ci->options, len = 4;
    int kept = 0;
    for (int i = 0; i < n; i++) {
        const msg_kv *kv = sorted[i];
        size_t vlen = kv->v ? kv->vlen : 0;
        if (len + 8 + kv->klen + vlen > cap)
            continue;
        cs_st32(o + len, (uint32_t)kv->klen);
        for (size_t j = 0; j < kv->klen; j++)
            o[len + 4 + j] = (uint8_t)toupper((unsigned char)kv->k[j]);
        len += 4 + kv->klen;
        cs_st32(o + len, (uint32_t)vlen);
        if (vlen)
            memcpy(o + len + 4, kv->v, vlen);
        len += 4 + vlen;
        kept++;
    }
    cs_st32(o, (uint32_t)kept);
    ci->options_len = (int32_t)len;
}

void conn__on_startup(conn *c, int16_t stream, const msg_request *m)
{
    size_t n;
    const char *v = msg_startup_get(m, "CQL_VERSION", &n);
    if (!v) {
        conn__reply_protocol_error(c, stream, "Missing value CQL_VERSION in STARTUP message");
        return;
    }
    int vc = cql_version_check(v, n);
    if (vc == 1) {
        conn__reply_protocol_error(c, stream, "Invalid version value: %.*s", (int)CS_MIN(n, (size_t)64), v);
        return;
    }
    if (vc == 2) {
        conn__reply_protocol_error(c, stream,
                             "CQL version %.*s is not supported by the binary protocol "
                             "(supported version are >= 3.0.0)", (int)CS_MIN(n, (size_t)64), v);
        return;
    }
    bool lz4 = false, snappy = false;
    v = msg_startup_get(m, "COMPRESSION", &n);
    if (v) {
        if (n == 3 && strncasecmp(v, "lz4", 3) == 0) {
            lz4 = true;
        } else if (n == 6 && strncasecmp(v, "snappy", 6) == 0) {
            if (!srv_snappy_available()) {   /* StartupMessage: SnappyCompressor.instance == null */
                conn__reply_protocol_error(c, stream, "This instance does not support Snappy compression");
                return;
            }
            if (c->version >= 5) {   /* StartupMessage: v5 frames are lz4 segments */
                conn__reply_protocol_error(c, stream, "Snappy compression is not supported in protocol V5");
                return;
            }
            snappy = true;
        } else {
            char low[65];
            copy_opt(low, sizeof low, v, n);
            for (char *q = low; *q; q++)
                *q = (char)tolower((unsigned char)*q);
            conn__reply_protocol_error(c, stream, "Unknown compression algorithm: %s", low);
            return;
        }
    }
    put_client_options(&c->client, m);
    if ((v = msg_startup_get(m, "DRIVER_NAME", &n))) {   /* the version only with a name, as ClientState */
        copy_opt(c->session.driver_name, sizeof c->session.driver_name, v, n);
        if ((v = msg_startup_get(m, "DRIVER_VERSION", &n)))
            copy_opt(c->session.driver_version, sizeof c->session.driver_version, v, n);
    }
    if (c->s->cfg->authenticator == CONFIG_AUTH_PASSWORD) {
        cs_buf body;
        cs_buf_init(&body);
        msg_put_authenticate(&body, AUTH_PASSWORD_AUTHENTICATOR);
        conn__reply_frame(c, stream, OP_AUTHENTICATE, body.p, body.len);
        cs_buf_destroy(&body);
        c->state = C_AUTH;
    } else {
        conn__reply_frame(c, stream, OP_READY, NULL, 0);
        become_ready(c);
    }
    /* invariant 4: after the reply above */
    if (c->version >= 5) {
        c->out_wire = c->out.len;
        c->seg = c->seg_switch = true;
        c->seg_lz4 = lz4;
    } else {
        c->compress = lz4 ? FRAME_COMP_LZ4 : snappy ? FRAME_COMP_SNAPPY : FRAME_COMP_NONE;
    }
}

/* AUTH_RESPONSE: SASL PLAIN decoded by server/auth.c, the credentials
 * checked against the role store (cql_login: the store has its own lock,
 * so no execution lock is needed). */
void conn__on_auth_response(conn *c, int16_t stream, const msg_request *m)
{
    cs_error e;
    cs_error_init(&e);
    auth_plain a;
    if (auth_plain_decode(m->token, m->token_len, &a, &e) != 0 ||
        cql_login(c->s->cql, a.user, a.ulen, a.pass, a.plen, &e) != 0) {
        conn__reply_error(c, stream, &e);
        return;
    }
    size_t n = a.ulen < sizeof c->session.user - 1 ? a.ulen : sizeof c->session.user - 1;
    memcpy(c->session.user, a.user, n);
    c->session.user[n] = 0;
    cs_buf body;
    cs_buf_init(&body);
    msg_put_auth_token(&body, NULL, -1);
    conn__reply_frame(c, stream, OP_AUTH_SUCCESS, body.p, body.len);
    cs_buf_destroy(&body);
    become_ready(c);
}
