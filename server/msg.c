/*
 * msg.c: native protocol message bodies (spec v4 §4, v3 §4, v5 §4 where the
 * layouts differ).  Requests are decoded here for the server and encoded for
 * clients; responses the other way round.  Every length read from the wire
 * goes through cs_rd (common/buf.h), which refuses to read past the end, and
 * counts are checked against the bytes left before any array is allocated.
 *
 * Error wording follows Cassandra's transport/ (CBUtil.java, QueryOptions.java,
 * BatchMessage.java) so drivers and tests see the same ProtocolException text.
 */
#include "server/msg.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "common/util.h"
#include "server/frame.h"

/* ------------------------------------------------------------ helpers */

static int proto_err(cs_error *e, const char *what)
{
    return cs_error_set(e, CS_ERR_PROTOCOL, "%s", what);
}

/*
 * Strict UTF-8 check (no overlongs, no surrogates, max U+10FFFF), as Java's
 * decoder that Cassandra's CBUtil.readString uses: a string that fails is a
 * ProtocolException there, so it is one here.
 */
static bool utf8_valid(const char *str, size_t n)
{
    const uint8_t *p = (const uint8_t *)str, *end = p + n;
    while (p < end) {
        uint8_t c = *p;
        if (c < 0x80) {
            p++;
            continue;
        }
        int len;
        uint32_t cp;
        if (c >= 0xc2 && c <= 0xdf) { len = 2; cp = c & 0x1f; }
        else if (c >= 0xe0 && c <= 0xef) { len = 3; cp = c & 0x0f; }
        else if (c >= 0xf0 && c <= 0xf4) { len = 4; cp = c & 0x07; }
        else return false;
        if (end - p < len)
            return false;
        for (int i = 1; i < len; i++) {
            if ((p[i] & 0xc0) != 0x80)
                return false;
            cp = (cp << 6) | (p[i] & 0x3f);
        }
        if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
            (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
            return false;
        p += len;
    }
    return true;
}

static int check_utf8(const char *s, size_t n, cs_error *e)
{
    if (s && !utf8_valid(s, n))
        return proto_err(e, "Cannot decode string as UTF8");
    return 0;
}

/* A [value] (spec v4 §3): n >= 0 bytes, -1 null, -2 unset (v4+).  In v3 any
 * negative length is null, as Cassandra's CBUtil.readBoundValue. */
static int read_value(cs_rd *r, uint8_t version, cql_value *v, cs_error *e)
{
    int32_t n = (int32_t)cs_rd_u32(r);
    if (r->err)
        return proto_err(e, "Not enough bytes to read a value");
    if (n < 0) {
        if (version < 4 || n == -1) {
            v->p = NULL; v->len = CQL_NULL;
            return 0;
        }
        if (n == -2) {
            v->p = NULL; v->len = CQL_UNSET;
            return 0;
        }
        return cs_error_set(e, CS_ERR_PROTOCOL, "Invalid length for value: %d", n);
    }
    v->p = cs_rd_take(r, (size_t)n);
    if (!v->p)
        return proto_err(e, "Not enough bytes to read a value");
    v->len = n;
    return 0;
}

static int read_consistency(cs_rd *r, uint16_t *cl, cs_error *e)
{
    *cl = cs_rd_u16(r);
    if (r->err)
        return proto_err(e, "Not enough bytes to read a consistency level");
    if (*cl > 11)
        return cs_error_set(e, CS_ERR_PROTOCOL, "Unknown code %u for a consistency level", *cl);
    return 0;
}

/*
 * Read n values (each optionally preceded by a [string] name) into arena
 * arrays.  Each value takes at least 4 bytes, so n is checked against the
 * bytes left before allocating.
 */
static int read_values(cs_rd *r, uint8_t version, bool names, cs_arena *a, cql_value **vals,
                       int *n_vals, const char ***pnames, const size_t **pname_lens, cs_error *e)
{
    uint16_t n = cs_rd_u16(r);
    if (r->err)
        return proto_err(e, "Not enough bytes to read the number of values");
    *n_vals = n;
    *vals = NULL;
    if (pnames) { *pnames = NULL; *pname_lens = NULL; }
    if (n == 0)
        return 0;
    if ((size_t)n * (names ? 6u : 4u) > cs_rd_left(r))
        return proto_err(e, "Not enough bytes to read the values");
    cql_value *v = cs_arena_alloc(a, n * sizeof *v);
    const char **nm = names ? cs_arena_alloc(a, n * sizeof *nm) : NULL;
    size_t *nl = names ? cs_arena_alloc(a, n * sizeof *nl) : NULL;
    if (!v || (names && (!nm || !nl)))
        return CS_ENOMEM;
    for (int i = 0; i < n; i++) {
        if (names) {
            nm[i] = cs_rd_string(r, &nl[i]);
            if (r->err)
                return proto_err(e, "Not enough bytes to read a value name");
            if (check_utf8(nm[i], nl[i], e))
                return CS_EUSER;
            if (!nm[i])
                nm[i] = "";
        }
        int rc = read_value(r, version, &v[i], e);
        if (rc)
            return rc;
    }
    *vals = v;
    if (names) { *pnames = nm; *pname_lens = nl; }
    return 0;
}

static const char *arena_string(cs_rd *r, cs_arena *a)
{
    size_t n;
    const char *s = cs_rd_string(r, &n);
    if (r->err)
        return NULL;
    return cs_arena_strndup(a, s ? s : "", n);
}

void msg_params_init(cql_params *p)
{
    memset(p, 0, sizeof *p);
    p->consistency = 1;
    p->page_size = -1;
    p->paging_state_len = -1;
    p->timestamp = INT64_MIN;
}

/*
 * The flags and optional fields after <consistency> (QUERY/EXECUTE) or after
 * the queries (BATCH).  `batch` limits the fields to the ones BATCH has.
 */
static int read_params_tail(cs_rd *r, uint8_t version, bool batch, cs_arena *a, cql_params *p,
                            cs_error *e)
{
    uint32_t flags = version >= 5 ? cs_rd_u32(r) : cs_rd_u8(r);
    if (r->err)
        return proto_err(e, "Not enough bytes to read the query flags");
    p->flags = flags;
    int rc;
    if (!batch) {
        if (flags & MSG_QF_VALUES) {
            rc = read_values(r, version, (flags & MSG_QF_NAMES) != 0, a, &p->values, &p->n_values,
                             &p->names, &p->name_lens, e);
            if (rc)
                return rc;
        }
        p->skip_metadata = (flags & MSG_QF_SKIP_METADATA) != 0;
        if (flags & MSG_QF_PAGE_SIZE) {
            p->page_size = (int32_t)cs_rd_u32(r);
            if (r->err)
                return proto_err(e, "Not enough bytes to read the page size");
        }
        if (flags & MSG_QF_PAGING_STATE) {
            p->paging_state_len = cs_rd_bytes(r, &p->paging_state);
            if (r->err)
                return proto_err(e, "Not enough bytes to read the paging state");
            if (p->paging_state_len < 0) {
                p->paging_state = NULL;
                p->paging_state_len = -1;
            }
        }
    }
    if (flags & MSG_QF_SERIAL_CONSISTENCY) {
        rc = read_consistency(r, &p->serial_consistency, e);
        if (rc)
            return rc;
    }
    if (flags & MSG_QF_DEFAULT_TIMESTAMP) {
        int64_t ts = (int64_t)cs_rd_u64(r);
        if (r->err)
            return proto_err(e, "Not enough bytes to read the default timestamp");
        if (ts == INT64_MIN)
            return cs_error_set(e, CS_ERR_PROTOCOL,
                                "Out of bound timestamp, must be in [%lld, %lld] (got %lld)",
                                (long long)(INT64_MIN + 1), (long long)INT64_MAX, (long long)ts);
        p->timestamp = ts;
    }
    if (version >= 5 && (flags & MSG_QF_KEYSPACE)) {
        p->keyspace = arena_string(r, a);
        if (!p->keyspace)
            return r->err ? proto_err(e, "Not enough bytes to read the keyspace") : CS_ENOMEM;
    }
    if (version >= 5 && (flags & MSG_QF_NOW_IN_SECONDS)) {
        p->now_in_seconds = (int32_t)cs_rd_u32(r);
        if (r->err)
            return proto_err(e, "Not enough bytes to read now_in_seconds");
    }
    return 0;
}

static int read_query_params(cs_rd *r, uint8_t version, cs_arena *a, cql_params *p, cs_error *e)
{
    msg_params_init(p);
    int rc = read_consistency(r, &p->consistency, e);
    return rc ? rc : read_params_tail(r, version, false, a, p, e);
}

/* ------------------------------------------------------------ request decoders */

static int dec_startup(cs_rd *r, cs_arena *a, msg_request *m, cs_error *e)
{
    uint16_t n = cs_rd_u16(r);
    if (r->err)
        return proto_err(e, "Not enough bytes to read the STARTUP options");
    if ((size_t)n * 4 > cs_rd_left(r))
        return proto_err(e, "Not enough bytes to read the STARTUP options");
    m->options = n ? cs_arena_alloc(a, n * sizeof *m->options) : NULL;
    if (n && !m->options)
        return CS_ENOMEM;
    for (int i = 0; i < n; i++) {
        msg_kv *kv = &m->options[i];
        kv->k = cs_rd_string(r, &kv->klen);
        kv->v = cs_rd_string(r, &kv->vlen);
        if (r->err)
            return proto_err(e, "Not enough bytes to read the STARTUP options");
        if (check_utf8(kv->k, kv->klen, e) || check_utf8(kv->v, kv->vlen, e))
            return CS_EUSER;
    }
    m->n_options = n;
    return 0;
}

static int dec_query(cs_rd *r, uint8_t version, cs_arena *a, msg_request *m, cs_error *e)
{
    m->query = cs_rd_long_string(r, &m->query_len);
    if (r->err)
        return proto_err(e, "Not enough bytes to read the query string");
    if (check_utf8(m->query, m->query_len, e))
        return CS_EUSER;
    if (!m->query)
        m->query = "";
    return read_query_params(r, version, a, &m->params, e);
}

static int dec_prepare(cs_rd *r, uint8_t version, cs_arena *a, msg_request *m, cs_error *e)
{
    m->query = cs_rd_long_string(r, &m->query_len);
    if (r->err)
        return proto_err(e, "Not enough bytes to read the query string");
    if (check_utf8(m->query, m->query_len, e))
        return CS_EUSER;
    if (!m->query)
        m->query = "";
    if (version >= 5) {
        uint32_t flags = cs_rd_u32(r);
        if (r->err)
            return proto_err(e, "Not enough bytes to read the PREPARE flags");
        if (flags & 0x01) {
            m->prepare_keyspace = arena_string(r, a);
            if (!m->prepare_keyspace)
                return r->err ? proto_err(e, "Not enough bytes to read the keyspace") : CS_ENOMEM;
        }
    }
    return 0;
}

static int dec_execute(cs_rd *r, uint8_t version, cs_arena *a, msg_request *m, cs_error *e)
{
    size_t n;
    m->id = (const uint8_t *)cs_rd_string(r, &n);   /* [short bytes] has the [string] layout */
    m->id_len = n;
    if (r->err)
        return proto_err(e, "Not enough bytes to read the prepared statement id");
    if (version >= 5) {
        m->result_metadata_id = (const uint8_t *)cs_rd_string(r, &n);
        m->result_metadata_id_len = n;
        if (r->err)
            return proto_err(e, "Not enough bytes to read the result metadata id");
    }
    return read_query_params(r, version, a, &m->params, e);
}

int msg_peek_execute(uint8_t version, const uint8_t *body, size_t len, const uint8_t **id,
                     size_t *id_len, cql_value *vals, int max)
{
    cs_rd r;
    cs_rd_init(&r, body, len);
    *id = (const uint8_t *)cs_rd_string(&r, id_len);
    if (version >= 5) {
        size_t n;
        (void)cs_rd_string(&r, &n);           /* result metadata id */
    }
    (void)cs_rd_u16(&r);                      /* consistency */
    uint32_t flags = version >= 5 ? cs_rd_u32(&r) : cs_rd_u8(&r);
    if (r.err || !*id)
        return -1;
    if (!(flags & MSG_QF_VALUES))
        return 0;
    if (flags & MSG_QF_NAMES)
        return -1;
    int n = cs_rd_u16(&r), k = 0;
    for (; k < n && k < max && !r.err; k++) {
        const uint8_t *p;
        vals[k].len = cs_rd_bytes(&r, &p);
        vals[k].p = p;
    }
    return r.err ? -1 : k;
}

/*
 * BATCH (spec v4 §4.1.7).  The names flag comes after the queries, so the
 * queries are scanned twice: once to find the flags, once to decode.
 */
static int dec_batch_items(cs_rd *r, uint8_t version, bool names, cs_arena *a, msg_request *m,
                           cs_error *e)
{
    for (int i = 0; i < m->n_items; i++) {
        cql_batch_item *it = &m->items[i];
        memset(it, 0, sizeof *it);
        uint8_t kind = cs_rd_u8(r);
        if (r->err)
            return proto_err(e, "Not enough bytes to read a BATCH query");
        if (kind == 0) {
            it->query = cs_rd_long_string(r, &it->query_len);
            if (!it->query)
                it->query = "";
        } else if (kind == 1) {
            size_t n;
            it->prepared = true;
            it->id = (const uint8_t *)cs_rd_string(r, &n);
            it->id_len = n;
        } else {
            return cs_error_set(e, CS_ERR_PROTOCOL,
                                "Invalid query kind in BATCH messages. Must be 0 or 1 but got %u",
                                kind);
        }
        if (r->err)
            return proto_err(e, "Not enough bytes to read a BATCH query");
        if (!it->prepared && check_utf8(it->query, it->query_len, e))
            return CS_EUSER;
        int rc = read_values(r, version, names, a, &it->values, &it->n_values, &it->names,
                             &it->name_lens, e);
        if (rc)
            return rc;
    }
    return 0;
}

static int dec_batch(cs_rd *r, uint8_t version, cs_arena *a, msg_request *m, cs_error *e)
{
    m->batch_type = cs_rd_u8(r);
    uint16_t n = cs_rd_u16(r);
    if (r->err)
        return proto_err(e, "Not enough bytes to read the BATCH header");
    if (m->batch_type > 2)
        return cs_error_set(e, CS_ERR_PROTOCOL, "Invalid BATCH message type %u", m->batch_type);
    /* Each query takes at least 1 (kind) + 2 (id or...) + 2 (n values) bytes. */
    if ((size_t)n * 5 > cs_rd_left(r))
        return proto_err(e, "Not enough bytes to read the BATCH queries");
    m->n_items = n;
    m->items = n ? cs_arena_alloc(a, n * sizeof *m->items) : NULL;
    if (n && !m->items)
        return CS_ENOMEM;
    /* Pass 1 (without names) only to locate the tail; redo with names if flagged. */
    size_t start = r->pos;
    cs_error tmp;
    cs_error_init(&tmp);
    bool names = false;
    int rc = dec_batch_items(r, version, false, a, m, &tmp);
    if (rc == 0) {
        msg_params_init(&m->params);
        rc = read_consistency(r, &m->params.consistency, &tmp);
        if (rc == 0)
            rc = read_params_tail(r, version, true, a, &m->params, &tmp);
        if (rc == 0 && (m->params.flags & MSG_QF_NAMES))
            names = true;
    }
    if (rc != 0 || names) {
        /* Either malformed, or the values carry names: decode with names. */
        cs_rd again;
        cs_rd_init(&again, r->p, r->len);
        again.pos = start;
        cs_error e2;
        cs_error_init(&e2);
        rc = dec_batch_items(&again, version, true, a, m, &e2);
        if (rc == 0) {
            msg_params_init(&m->params);
            rc = read_consistency(&again, &m->params.consistency, &e2);
            if (rc == 0)
                rc = read_params_tail(&again, version, true, a, &m->params, &e2);
            if (rc == 0 && !(m->params.flags & MSG_QF_NAMES))
                rc = proto_err(&e2, "Malformed BATCH message");
        }
        if (rc != 0) {
            *e = names ? e2 : tmp;
            return rc == CS_ENOMEM ? rc : CS_EUSER;
        }
        *r = again;
    }
    return 0;
}

static int dec_register(cs_rd *r, msg_request *m, cs_error *e)
{
    uint16_t n = cs_rd_u16(r);
    if (r->err)
        return proto_err(e, "Not enough bytes to read the REGISTER events");
    for (int i = 0; i < n; i++) {
        size_t len;
        const char *s = cs_rd_string(r, &len);
        if (r->err)
            return proto_err(e, "Not enough bytes to read the REGISTER events");
        if (check_utf8(s, len, e))
            return CS_EUSER;
        if (len == 15 && memcmp(s, "TOPOLOGY_CHANGE", 15) == 0)
            m->events |= MSG_EV_TOPOLOGY;
        else if (len == 13 && memcmp(s, "STATUS_CHANGE", 13) == 0)
            m->events |= MSG_EV_STATUS;
        else if (len == 13 && memcmp(s, "SCHEMA_CHANGE", 13) == 0)
            m->events |= MSG_EV_SCHEMA;
        else
            return cs_error_set(e, CS_ERR_PROTOCOL, "Invalid value '%.*s' for Type",
                                (int)CS_MIN(len, (size_t)100), s ? s : "");
    }
    return 0;
}

int msg_request_decode(uint8_t version, uint8_t opcode, const uint8_t *body, size_t len,
                       cs_arena *a, msg_request *out, cs_error *e)
{
    memset(out, 0, sizeof *out);
    out->opcode = opcode;
    out->version = version;
    out->token_len = -1;
    msg_params_init(&out->params);
    cs_rd r;
    cs_rd_init(&r, body, len);
    switch (opcode) {
    case OP_STARTUP: return dec_startup(&r, a, out, e);
    case OP_OPTIONS: return 0;
    case OP_QUERY: return dec_query(&r, version, a, out, e);
    case OP_PREPARE: return dec_prepare(&r, version, a, out, e);
    case OP_EXECUTE: return dec_execute(&r, version, a, out, e);
    case OP_BATCH: return dec_batch(&r, version, a, out, e);
    case OP_REGISTER: return dec_register(&r, out, e);
    case OP_AUTH_RESPONSE:
        out->token_len = cs_rd_bytes(&r, &out->token);
        if (r.err)
            return proto_err(e, "Not enough bytes to read the SASL token");
        if (out->token_len < 0) {
            out->token = NULL;
            out->token_len = -1;
        }
        return 0;
    default:
        return cs_error_set(e, CS_ERR_PROTOCOL, "Unknown opcode %u", opcode);
    }
}

const char *msg_startup_get(const msg_request *r, const char *key, size_t *vlen)
{
    /* StartupMessage upper-cases the keys into a HashMap: any case matches,
     * and of a key given twice the last one counts */
    size_t kl = strlen(key);
    for (int i = r->n_options - 1; i >= 0; i--) {
        const msg_kv *kv = &r->options[i];
        if (kv->klen == kl && strncasecmp(kv->k, key, kl) == 0) {
            *vlen = kv->vlen;
            return kv->v ? kv->v : "";
        }
    }
    return NULL;
}

/* ------------------------------------------------------------ response bodies */

/* Put a comma-separated type list as a [string list], splitting only at
 * top-level commas ("map<int, text>, int" is two types). */
static void put_type_list(cs_buf *b, const char *s)
{
    const char *items[64];
    size_t lens[64];
    int n = 0, depth = 0;
    const char *start = s;
    for (const char *p = s;; p++) {
        if (*p == '<' || *p == '(')
            depth++;
        else if ((*p == '>' || *p == ')') && depth > 0)
            depth--;
        if (*p == '\0' || (*p == ',' && depth == 0)) {
            const char *a = start, *z = p;
            while (a < z && *a == ' ')
                a++;
            while (z > a && z[-1] == ' ')
                z--;
            if ((z > a || *p == ',') && n < 64) {
                items[n] = a;
                lens[n++] = (size_t)(z - a);
            }
            if (*p == '\0')
                break;
            start = p + 1;
        }
    }
    cs_buf_put_u16(b, (uint16_t)n);
    for (int i = 0; i < n; i++)
        cs_buf_put_stringn(b, items[i], lens[i]);
}
/* The failures of a READ_/WRITE_FAILURE: v3/v4 count them ([int]); v5
 * maps each failed replica ([inetaddr]) to its reason code ([short]), here
 * this node when the error names it (cs_error.failure_endpoint). */
static void put_failures(cs_buf *b, const cs_error *e, int version)
{
    if (version < 5) {
        cs_buf_put_u32(b, (uint32_t)e->numfailures);
        return;
    }
    uint8_t a[16];
    int n = 0;
    if (e->failure_endpoint[0] && inet_pton(AF_INET, e->failure_endpoint, a) == 1) n = 4;
    else if (e->failure_endpoint[0] && inet_pton(AF_INET6, e->failure_endpoint, a) == 1) n = 16;
    cs_buf_put_u32(b, n ? 1u : 0u);
    if (n) {
        cs_buf_put_u8(b, (uint8_t)n);
        cs_buf_put(b, a, (size_t)n);
        cs_buf_put_u16(b, e->failure_reason);
    }
}


void msg_put_error(cs_buf *b, uint8_t version, const cs_error *e)
{
    int code = e->code < 0 ? CS_ERR_SERVER : e->code;
    cs_buf_put_u32(b, (uint32_t)code);
    cs_buf_put_string(b, e->msg);
    switch (code) {
    case CS_ERR_UNAVAILABLE:
        cs_buf_put_u16(b, e->cl);
        cs_buf_put_u32(b, (uint32_t)e->blockfor);   /* required */
        cs_buf_put_u32(b, (uint32_t)e->alive);
        break;
    case CS_ERR_WRITE_TIMEOUT:
        cs_buf_put_u16(b, e->cl);
        cs_buf_put_u32(b, (uint32_t)e->received);
        cs_buf_put_u32(b, (uint32_t)e->blockfor);
        cs_buf_put_string(b, e->write_type[0] ? e->write_type : "SIMPLE");
        break;
    case CS_ERR_READ_TIMEOUT:
        cs_buf_put_u16(b, e->cl);
        cs_buf_put_u32(b, (uint32_t)e->received);
        cs_buf_put_u32(b, (uint32_t)e->blockfor);
        cs_buf_put_u8(b, e->data_present);
        break;
    case CS_ERR_READ_FAILURE:
        cs_buf_put_u16(b, e->cl);
        cs_buf_put_u32(b, (uint32_t)e->received);
        cs_buf_put_u32(b, (uint32_t)e->blockfor);
        put_failures(b, e, version);
        cs_buf_put_u8(b, e->data_present);
        break;
    case CS_ERR_WRITE_FAILURE:
        cs_buf_put_u16(b, e->cl);
        cs_buf_put_u32(b, (uint32_t)e->received);
        cs_buf_put_u32(b, (uint32_t)e->blockfor);
        put_failures(b, e, version);
        cs_buf_put_string(b, e->write_type[0] ? e->write_type : "SIMPLE");
        break;
    case CS_ERR_FUNCTION_FAILURE:
        cs_buf_put_string(b, e->keyspace);
        cs_buf_put_string(b, e->table);
        put_type_list(b, e->arg_types);
        break;
    case CS_ERR_ALREADY_EXISTS:
        cs_buf_put_string(b, e->keyspace);
        cs_buf_put_string(b, e->table);
        break;
    case CS_ERR_UNPREPARED: {
        int n = e->unprepared_id_len;
        if (n < 0 || n > (int)sizeof e->unprepared_id)
            n = 0;
        cs_buf_put_stringn(b, (const char *)e->unprepared_id, (size_t)n);
        break;
    }
    default:
        break;
    }
}

void msg_put_supported(cs_buf *b, bool snappy)
{
    static const char *const cqlv[] = { "3.4.6" };
    static const char *const comp[] = { "snappy", "lz4" };   /* OptionsMessage's order */
    static const char *const vers[] = { "3/v3", "4/v4", "5/v5" };
    static const char *const keys[] = { "CQL_VERSION", "COMPRESSION", "PROTOCOL_VERSIONS" };
    const char *const *const vals[] = { cqlv, snappy ? comp : comp + 1, vers };
    const int nv[] = { 1, snappy ? 2 : 1, 3 };
    frame_put_string_multimap(b, keys, vals, nv, 3);
}

void msg_put_authenticate(cs_buf *b, const char *cls)
{
    cs_buf_put_string(b, cls);
}

void msg_put_auth_token(cs_buf *b, const uint8_t *tok, int32_t len)
{
    cs_buf_put_bytes(b, tok, len);
}

/* <change_type><target><options> (spec v4 §4.2.6). */
void msg_put_schema_change(cs_buf *b, const cql_schema_change *c)
{
    cs_buf_put_string(b, c->change_type);
    cs_buf_put_string(b, c->target);
    cs_buf_put_string(b, c->keyspace);
    if (strcmp(c->target, "KEYSPACE") == 0)
        return;
    cs_buf_put_string(b, c->name);
    if (strcmp(c->target, "FUNCTION") == 0 || strcmp(c->target, "AGGREGATE") == 0)
        put_type_list(b, c->arg_types);
}

void msg_put_event_schema_change(cs_buf *b, const cql_schema_change *c)
{
    cs_buf_put_string(b, "SCHEMA_CHANGE");
    msg_put_schema_change(b, c);
}

int msg_write_frame(cs_buf *out, uint8_t version, int16_t stream, uint8_t opcode, int compress,
                    const char *const *warnings, int n_warnings, const uint8_t *body, size_t len)
{
    frame_writer w;
    frame_begin(&w, out, version, true, stream, opcode, 0, compress, NULL, warnings, n_warnings);
    if (len)
        cs_buf_put(out, body, len);
    frame_end(&w);
    return out->err;
}

int msg_write_error(cs_buf *out, uint8_t version, int16_t stream, int compress, const cs_error *e)
{
    frame_writer w;
    frame_begin(&w, out, version, true, stream, OP_ERROR, 0, compress, NULL, NULL, 0);
    msg_put_error(out, version, e);
    frame_end(&w);
    return out->err;
}

const char *msg_opcode_name(uint8_t opcode)
{
    static const char *const names[] = {
        "ERROR", "STARTUP", "READY", "AUTHENTICATE", "CREDENTIALS", "OPTIONS", "SUPPORTED",
        "QUERY", "RESULT", "PREPARE", "EXECUTE", "REGISTER", "EVENT", "BATCH",
        "AUTH_CHALLENGE", "AUTH_RESPONSE", "AUTH_SUCCESS",
    };
    return opcode < CS_ARRAY_LEN(names) ? names[opcode] : "UNKNOWN";
}
