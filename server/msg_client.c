/*
 * msg_client.c: the client side of server/msg.h: request bodies encoded
 * (QUERY, PREPARE, EXECUTE, BATCH, STARTUP, REGISTER, AUTH_RESPONSE) and
 * response bodies decoded (ERROR with its extra fields, EVENT and RESULT
 * schema changes).  Used by cassette-bench, cassette-tool and the unit tests
 * that round-trip every message through server/msg.c.
 */
#include "server/msg.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "server/frame.h"

/* ------------------------------------------------------------ request encoders */

void msg_put_startup(cs_buf *b, const msg_kv *opts, int n)
{
    cs_buf_put_u16(b, (uint16_t)n);
    for (int i = 0; i < n; i++) {
        cs_buf_put_stringn(b, opts[i].k, opts[i].klen);
        cs_buf_put_stringn(b, opts[i].v, opts[i].vlen);
    }
}

static void put_value(cs_buf *b, const cql_value *v)
{
    if (v->len >= 0)
        cs_buf_put_bytes(b, v->p, v->len);
    else
        cs_buf_put_u32(b, (uint32_t)v->len);
}

static void put_values(cs_buf *b, const cql_value *v, int n, const char *const *names,
                       const size_t *name_lens)
{
    cs_buf_put_u16(b, (uint16_t)n);
    for (int i = 0; i < n; i++) {
        if (names)
            cs_buf_put_stringn(b, names[i], name_lens ? name_lens[i] : strlen(names[i]));
        put_value(b, &v[i]);
    }
}

static void put_flags(cs_buf *b, uint8_t version, uint32_t flags)
{
    if (version >= 5)
        cs_buf_put_u32(b, flags);
    else
        cs_buf_put_u8(b, (uint8_t)flags);
}

void msg_put_query_params(cs_buf *b, uint8_t version, const cql_params *p)
{
    uint32_t f = 0;
    if (p->n_values > 0)
        f |= MSG_QF_VALUES;
    if (p->n_values > 0 && p->names)
        f |= MSG_QF_NAMES;
    if (p->skip_metadata)
        f |= MSG_QF_SKIP_METADATA;
    if (p->page_size > 0)
        f |= MSG_QF_PAGE_SIZE;
    if (p->paging_state_len >= 0 && p->paging_state)
        f |= MSG_QF_PAGING_STATE;
    if (p->serial_consistency)
        f |= MSG_QF_SERIAL_CONSISTENCY;
    if (p->timestamp != INT64_MIN)
        f |= MSG_QF_DEFAULT_TIMESTAMP;
    if (version >= 5 && p->keyspace)
        f |= MSG_QF_KEYSPACE;
    if (version >= 5 && p->now_in_seconds)
        f |= MSG_QF_NOW_IN_SECONDS;
    cs_buf_put_u16(b, p->consistency);
    put_flags(b, version, f);
    if (f & MSG_QF_VALUES)
        put_values(b, p->values, p->n_values, (f & MSG_QF_NAMES) ? p->names : NULL, p->name_lens);
    if (f & MSG_QF_PAGE_SIZE)
        cs_buf_put_u32(b, (uint32_t)p->page_size);
    if (f & MSG_QF_PAGING_STATE)
        cs_buf_put_bytes(b, p->paging_state, p->paging_state_len);
    if (f & MSG_QF_SERIAL_CONSISTENCY)
        cs_buf_put_u16(b, p->serial_consistency);
    if (f & MSG_QF_DEFAULT_TIMESTAMP)
        cs_buf_put_u64(b, (uint64_t)p->timestamp);
    if (f & MSG_QF_KEYSPACE)
        cs_buf_put_string(b, p->keyspace);
    if (f & MSG_QF_NOW_IN_SECONDS)
        cs_buf_put_u32(b, (uint32_t)p->now_in_seconds);
}

void msg_put_query(cs_buf *b, uint8_t version, const char *q, size_t qlen, const cql_params *p)
{
    cs_buf_put_long_string(b, q, qlen);
    msg_put_query_params(b, version, p);
}

void msg_put_prepare(cs_buf *b, uint8_t version, const char *q, size_t qlen, const char *keyspace)
{
    cs_buf_put_long_string(b, q, qlen);
    if (version >= 5) {
        cs_buf_put_u32(b, keyspace ? 1 : 0);
        if (keyspace)
            cs_buf_put_string(b, keyspace);
    }
}

void msg_put_execute(cs_buf *b, uint8_t version, const uint8_t *id, size_t id_len,
                     const uint8_t *rmid, size_t rmid_len, const cql_params *p)
{
    cs_buf_put_stringn(b, (const char *)id, id_len);
    if (version >= 5)
        cs_buf_put_stringn(b, (const char *)rmid, rmid_len);
    msg_put_query_params(b, version, p);
}

void msg_put_batch(cs_buf *b, uint8_t version, uint8_t type, const cql_batch_item *items, int n,
                   const cql_params *p)
{
    bool names = n > 0 && items[0].names;
    cs_buf_put_u8(b, type);
    cs_buf_put_u16(b, (uint16_t)n);
    for (int i = 0; i < n; i++) {
        const cql_batch_item *it = &items[i];
        cs_buf_put_u8(b, it->prepared ? 1 : 0);
        if (it->prepared)
            cs_buf_put_stringn(b, (const char *)it->id, it->id_len);
        else
            cs_buf_put_long_string(b, it->query, it->query_len);
        put_values(b, it->values, it->n_values, names ? it->names : NULL, it->name_lens);
    }
    uint32_t f = 0;
    if (p->serial_consistency)
        f |= MSG_QF_SERIAL_CONSISTENCY;
    if (p->timestamp != INT64_MIN)
        f |= MSG_QF_DEFAULT_TIMESTAMP;
    if (names)
        f |= MSG_QF_NAMES;
    if (version >= 5 && p->keyspace)
        f |= MSG_QF_KEYSPACE;
    if (version >= 5 && p->now_in_seconds)
        f |= MSG_QF_NOW_IN_SECONDS;
    cs_buf_put_u16(b, p->consistency);
    put_flags(b, version, f);
    if (f & MSG_QF_SERIAL_CONSISTENCY)
        cs_buf_put_u16(b, p->serial_consistency);
    if (f & MSG_QF_DEFAULT_TIMESTAMP)
        cs_buf_put_u64(b, (uint64_t)p->timestamp);
    if (f & MSG_QF_KEYSPACE)
        cs_buf_put_string(b, p->keyspace);
    if (f & MSG_QF_NOW_IN_SECONDS)
        cs_buf_put_u32(b, (uint32_t)p->now_in_seconds);
}

void msg_put_register(cs_buf *b, const char *const *events, int n)
{
    frame_put_string_list(b, events, n);
}

void msg_put_auth_response(cs_buf *b, const uint8_t *tok, int32_t len)
{
    cs_buf_put_bytes(b, tok, len);
}

/* ------------------------------------------------------------ response decoders */

static void copy_str(char *dst, size_t cap, const char *s, size_t n)
{
    if (n >= cap)
        n = cap - 1;
    if (n)
        memcpy(dst, s, n);
    dst[n] = '\0';
}

/* Read a [string list] back into "a, b" form (the cs_error/cql_schema_change field). */
static void read_type_list(cs_rd *r, char *dst, size_t cap)
{
    uint16_t n = cs_rd_u16(r);
    size_t at = 0;
    dst[0] = '\0';
    for (int i = 0; i < n && !r->err; i++) {
        size_t len;
        const char *s = cs_rd_string(r, &len);
        if (r->err)
            break;
        int w = snprintf(dst + at, cap - at, "%s%.*s", i ? ", " : "", (int)len, s ? s : "");
        if (w < 0 || (size_t)w >= cap - at)
            at = cap - 1;
        else
            at += (size_t)w;
    }
}

int msg_error_decode(uint8_t version, const uint8_t *body, size_t len, cs_error *e)
{
    cs_rd r;
    cs_rd_init(&r, body, len);
    cs_error_init(e);
    e->code = (int)cs_rd_u32(&r);
    size_t n;
    const char *s = cs_rd_string(&r, &n);
    if (r.err)
        return CS_ECORRUPT;
    copy_str(e->msg, sizeof e->msg, s ? s : "", n);
    switch (e->code) {
    case CS_ERR_UNAVAILABLE:
        e->cl = cs_rd_u16(&r);
        e->blockfor = (int32_t)cs_rd_u32(&r);
        e->alive = (int32_t)cs_rd_u32(&r);
        break;
    case CS_ERR_WRITE_TIMEOUT:
    case CS_ERR_READ_TIMEOUT:
    case CS_ERR_READ_FAILURE:
    case CS_ERR_WRITE_FAILURE:
        e->cl = cs_rd_u16(&r);
        e->received = (int32_t)cs_rd_u32(&r);
        e->blockfor = (int32_t)cs_rd_u32(&r);
        if (e->code == CS_ERR_READ_FAILURE || e->code == CS_ERR_WRITE_FAILURE) {
            e->numfailures = (int32_t)cs_rd_u32(&r);
            if (version >= 5) {                     /* reasonmap: <endpoint><failurecode> */
                int32_t k = e->numfailures;
                if (k < 0 || (size_t)k * 7 > cs_rd_left(&r))
                    return CS_ECORRUPT;
                for (int32_t i = 0; i < k && !r.err; i++) {
                    uint8_t alen = cs_rd_u8(&r);
                    const uint8_t *a = cs_rd_take(&r, alen);
                    uint16_t reason = cs_rd_u16(&r);
                    if (i == 0 && a && (alen == 4 || alen == 16)) {   /* the first failed replica */
                        inet_ntop(alen == 4 ? AF_INET : AF_INET6, a, e->failure_endpoint, sizeof e->failure_endpoint);
                        e->failure_reason = reason;
                    }
                }
            }
        }
        if (e->code == CS_ERR_READ_TIMEOUT || e->code == CS_ERR_READ_FAILURE) {
            e->data_present = cs_rd_u8(&r);
        } else {
            s = cs_rd_string(&r, &n);
            if (!r.err)
                copy_str(e->write_type, sizeof e->write_type, s ? s : "", n);
        }
        break;
    case CS_ERR_FUNCTION_FAILURE:
        s = cs_rd_string(&r, &n);
        if (!r.err)
            copy_str(e->keyspace, sizeof e->keyspace, s ? s : "", n);
        s = cs_rd_string(&r, &n);
        if (!r.err)
            copy_str(e->table, sizeof e->table, s ? s : "", n);
        read_type_list(&r, e->arg_types, sizeof e->arg_types);
        break;
    case CS_ERR_ALREADY_EXISTS:
        s = cs_rd_string(&r, &n);
        if (!r.err)
            copy_str(e->keyspace, sizeof e->keyspace, s ? s : "", n);
        s = cs_rd_string(&r, &n);
        if (!r.err)
            copy_str(e->table, sizeof e->table, s ? s : "", n);
        break;
    case CS_ERR_UNPREPARED:
        s = cs_rd_string(&r, &n);
        if (!r.err) {
            if (n > sizeof e->unprepared_id)
                return CS_ECORRUPT;
            memcpy(e->unprepared_id, s, n);
            e->unprepared_id_len = (int)n;
        }
        break;
    default:
        break;
    }
    return r.err ? CS_ECORRUPT : 0;
}

/* <change_type><target><options>, shared by EVENT and RESULT kind 5. */
int msg_schema_change_decode(const uint8_t *body, size_t len, cql_schema_change *c)
{
    cs_rd r;
    cs_rd_init(&r, body, len);
    memset(c, 0, sizeof *c);
    size_t n;
    const char *s = cs_rd_string(&r, &n);
    if (!r.err)
        copy_str(c->change_type, sizeof c->change_type, s ? s : "", n);
    s = cs_rd_string(&r, &n);
    if (!r.err)
        copy_str(c->target, sizeof c->target, s ? s : "", n);
    s = cs_rd_string(&r, &n);
    if (!r.err)
        copy_str(c->keyspace, sizeof c->keyspace, s ? s : "", n);
    if (r.err)
        return CS_ECORRUPT;
    if (strcmp(c->target, "KEYSPACE") == 0)
        return 0;
    s = cs_rd_string(&r, &n);
    if (!r.err)
        copy_str(c->name, sizeof c->name, s ? s : "", n);
    if (strcmp(c->target, "FUNCTION") == 0 || strcmp(c->target, "AGGREGATE") == 0)
        read_type_list(&r, c->arg_types, sizeof c->arg_types);
    return r.err ? CS_ECORRUPT : 0;
}

int msg_event_decode(const uint8_t *body, size_t len, cql_schema_change *c)
{
    cs_rd r;
    cs_rd_init(&r, body, len);
    memset(c, 0, sizeof *c);
    size_t n;
    const char *s = cs_rd_string(&r, &n);
    if (r.err)
        return CS_ECORRUPT;
    if (n != 13 || memcmp(s, "SCHEMA_CHANGE", 13) != 0)
        return CS_EINVAL;
    return msg_schema_change_decode(body + r.pos, len - r.pos, c);
}
