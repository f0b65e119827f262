/*
 * prepared.c: the statement cache (parsed statements by query text) and the
 * prepared statement cache (by 16-byte MD5 id), plus the PREPARED result.
 * Owner: exec-read.  Thread: the request loop only (no locks).
 *
 * Ids follow Cassandra's QueryProcessor.computeId: MD5 of the query text,
 * prefixed with the keyspace when the statement is not keyspace-qualified and
 * a keyspace is in use, so the same text prepared under two keyspaces gets
 * two ids.  Cached statements are immutable ASTs; the executor resolves
 * their tables through cql__table_cached (exec.c), a memo checked against
 * the catalog version, so DDL never leaves a stale table behind.  The one
 * mutable part is st->exec_memo, the executor's memo of a statement's
 * analysis (cql_stmt_memo, exec_int.h), checked the same way.
 */
#include <stdio.h>
#include <string.h>
#include "cql/exec_int.h"
#include "cql/metrics.h"
#include "common/alloc.h"
#include "common/hash.h"

#define STMT_BUCKETS 1024
#define STMT_CACHE_MAX 2048
#define PREP_BUCKETS 4096
#define PREP_CACHE_MAX 20000

typedef struct stmt_ent {
    struct stmt_ent *next;
    char *text; size_t len;
    cql_stmt *stmt;
} stmt_ent;

struct cql_stmt_cache {
    stmt_ent *b[STMT_BUCKETS];
    int n;
};

typedef struct prep_ent {
    struct prep_ent *next;        /* bucket chain */
    struct prep_ent *older, *newer;   /* insertion order, for eviction */
    cql_prepared p;
} prep_ent;

struct cql_prepared_cache {
    prep_ent *b[PREP_BUCKETS];
    prep_ent *oldest, *newest;
    int n;
};

/* ---------------------------------------------------------------- statement cache */

static bool cacheable(const cql_stmt *st)
{
    switch (st->kind) {
    case STMT_SELECT: case STMT_INSERT: case STMT_UPDATE: case STMT_DELETE: case STMT_BATCH:
        return true;
    default:
        return false;
    }
}

cql_stmt *cql__stmt_cache_get(cql_ctx *ctx, const char *q, size_t qlen, bool *cached, cs_error *e)
{
    *cached = false;
    if (!ctx->stmts) {
        ctx->stmts = cs_calloc(1, sizeof(*ctx->stmts));
        if (!ctx->stmts) {
            cs_error_set(e, CS_ERR_SERVER, "out of memory");
            return NULL;
        }
    }
    cql_stmt_cache *c = ctx->stmts;
    uint32_t h = (uint32_t)cs_xxh64(q, qlen, 0) % STMT_BUCKETS;
    for (stmt_ent *it = c->b[h]; it; it = it->next) {
        if (it->len == qlen && !memcmp(it->text, q, qlen)) {
            *cached = true;
            return it->stmt;
        }
    }
    cql_stmt *st = cql_parse(q, qlen, e);
    if (!st)
        return NULL;
    if (!cacheable(st) || c->n >= STMT_CACHE_MAX)
        return st;
    stmt_ent *ent = cs_calloc(1, sizeof(*ent));
    char *t = cs_memdup(q, qlen ? qlen : 1);
    if (!ent || !t) {
        cs_free(ent);
        cs_free(t);
        return st;
    }
    ent->text = t;
    ent->len = qlen;
    ent->stmt = st;
    ent->next = c->b[h];
    c->b[h] = ent;
    c->n++;
    *cached = true;
    return st;
}

static void stmt_cache_clear(cql_stmt_cache *c)
{
    for (int i = 0; i < STMT_BUCKETS; i++) {
        stmt_ent *it = c->b[i];
        while (it) {
            stmt_ent *nx = it->next;
            cql_stmt_free(it->stmt);
            cs_free(it->text);
            cs_free(it);
            it = nx;
        }
        c->b[i] = NULL;
    }
    c->n = 0;
}

/* Called between requests: drop everything once the cache is full. */
void cql__stmt_cache_trim(cql_ctx *ctx)
{
    if (ctx->stmts && ctx->stmts->n >= STMT_CACHE_MAX)
        stmt_cache_clear(ctx->stmts);
}

/* ---------------------------------------------------------------- prepared cache */

static uint32_t id_hash(const uint8_t *id)
{
    return (uint32_t)(cs_be32(id) % PREP_BUCKETS);
}

cql_prepared *cql__prepared_find(cql_ctx *ctx, const uint8_t *id, size_t idlen)
{
    if (!ctx->prepared || idlen != 16)
        return NULL;
    for (prep_ent *it = ctx->prepared->b[id_hash(id)]; it; it = it->next)
        if (!memcmp(it->p.id, id, 16))
            return &it->p;
    return NULL;
}

int cql__prepared_count(cql_ctx *ctx) { return ctx->prepared ? ctx->prepared->n : 0; }

static void prep_unlink(cql_prepared_cache *c, prep_ent *pe)
{
    prep_ent **pp = &c->b[id_hash(pe->p.id)];
    while (*pp && *pp != pe)
        pp = &(*pp)->next;
    if (*pp)
        *pp = pe->next;
    if (pe->older)
        pe->older->newer = pe->newer;
    else
        c->oldest = pe->newer;
    if (pe->newer)
        pe->newer->older = pe->older;
    else
        c->newest = pe->older;
    c->n--;
    cql_stmt_free(pe->p.stmt);
    cs_free(pe->p.keyspace);
    cs_free(pe);
}

void cql_exec_caches_free(cql_ctx *ctx)
{
    if (ctx->stmts) {
        stmt_cache_clear(ctx->stmts);
        cs_free(ctx->stmts);
        ctx->stmts = NULL;
    }
    if (ctx->prepared) {
        while (ctx->prepared->oldest)
            prep_unlink(ctx->prepared, ctx->prepared->oldest);
        cs_free(ctx->prepared);
        ctx->prepared = NULL;
    }
}

/* Does statement st (prepared under keyspace pks) use table ks.name (any
 * table of ks when name is NULL)? */
static bool stmt_uses(const cql_stmt *st, const char *pks, const char *ks, const char *name)
{
    if (st->kind == STMT_BATCH) {
        for (int i = 0; i < st->u.batch.n_stmts; i++)
            if (stmt_uses(st->u.batch.stmts[i], pks, ks, name))
                return true;
        return false;
    }
    const ast_qname *qn = cql__stmt_table(st);
    if (!qn)
        return false;
    const char *sks = qn->ks ? qn->ks : pks;
    if (!sks || strcmp(sks, ks) != 0)
        return false;
    return !name || !strcmp(qn->name, name);
}

/*
 * After a schema change, forget the prepared statements it invalidates, as
 * Cassandra's QueryProcessor does (onAlterTable / onDropTable /
 * onDropKeyspace): their next EXECUTE gets UNPREPARED and the driver
 * prepares again, receiving the new result metadata.
 */
void cql__prepared_on_schema_change(cql_ctx *ctx, const cql_schema_change *ch)
{
    cql_prepared_cache *c = ctx->prepared;
    if (!c)
        return;
    const char *name = NULL;
    if (!strcmp(ch->target, "TABLE") && (!strcmp(ch->change_type, "UPDATED") || !strcmp(ch->change_type, "DROPPED")))
        name = ch->name;
    else if (!(!strcmp(ch->target, "KEYSPACE") && !strcmp(ch->change_type, "DROPPED")))
        return;
    prep_ent *pe = c->oldest;
    while (pe) {
        prep_ent *nx = pe->newer;
        if (stmt_uses(pe->p.stmt, pe->p.keyspace, ch->keyspace, name))
            prep_unlink(c, pe);
        pe = nx;
    }
}

/* ---------------------------------------------------------------- PREPARED result */

/* Bind variable metadata (spec v4 §4.2.5.4): flags, count, pk_indexes (v4+),
 * global table spec when all markers share one table, column specs. */
static void put_bind_metadata(cs_buf *b, const cql_bind_info *bi, int version)
{
    bool global = bi->n > 0;
    for (int i = 1; i < bi->n; i++)
        if (strcmp(bi->specs[i].ks, bi->specs[0].ks) || strcmp(bi->specs[i].table, bi->specs[0].table))
            global = false;
    cs_buf_put_u32(b, global ? 1 : 0);
    cs_buf_put_u32(b, (uint32_t)bi->n);
    if (version >= 4) {
        cs_buf_put_u32(b, (uint32_t)bi->n_pk);
        for (int i = 0; i < bi->n_pk; i++)
            cs_buf_put_u16(b, bi->pk_index[i]);
    }
    if (global) {
        cs_buf_put_string(b, bi->specs[0].ks);
        cs_buf_put_string(b, bi->specs[0].table);
    }
    for (int i = 0; i < bi->n; i++) {
        if (!global) {
            cs_buf_put_string(b, bi->specs[i].ks);
            cs_buf_put_string(b, bi->specs[i].table);
        }
        cs_buf_put_string(b, bi->specs[i].name);
        ctype_encode_option_v(bi->specs[i].type, version, b);
    }
}

static bool stmt_qualified(const cql_stmt *st)
{
    const ast_qname *qn = cql__stmt_table(st);
    if (qn)
        return qn->ks != NULL;
    if (st->kind == STMT_BATCH) {
        for (int i = 0; i < st->u.batch.n_stmts; i++) {
            const ast_qname *q2 = cql__stmt_table(st->u.batch.stmts[i]);
            if (q2 && !q2->ks)
                return false;
        }
        return true;
    }
    return false;
}

/*
 * PREPARE: parse, resolve every bind marker's receiver (this also checks the
 * table and columns exist, as Cassandra does at prepare time), remember the
 * statement under its id and answer RESULT Prepared.
 */
int cql__prepare(cql_ctx *ctx, cql_session *s, const char *q, size_t qlen, cql_result *r,
                 cs_error *e)
{
    cql_stmt *st = cql_parse(q, qlen, e);
    if (!st)
        return CS_EUSER;
    cql_bind_info bi;
    memset(&bi, 0, sizeof(bi));
    int rc = cql__bind_info(ctx, s, st, &bi, e);
    cs_buf meta;
    cs_buf_init(&meta);
    if (rc == 0) {
        if (st->kind == STMT_SELECT)
            rc = cql__select_metadata(ctx, s, st, &meta, e);
        else {
            cs_buf_put_u32(&meta, 0x0004);   /* NO_METADATA */
            cs_buf_put_u32(&meta, 0);
        }
    }
    if (rc) {
        cql__bind_info_destroy(&bi);
        cs_buf_destroy(&meta);
        cql_stmt_free(st);
        return rc;
    }
    /* id = md5([keyspace] ++ query) */
    uint8_t id[16];
    {
        cs_buf h;
        cs_buf_init(&h);
        if (!stmt_qualified(st) && s->keyspace[0])
            cs_buf_put(&h, s->keyspace, strlen(s->keyspace));
        cs_buf_put(&h, q, qlen);
        cs_md5(h.p ? h.p : (const uint8_t *)"", h.len, id);
        cs_buf_destroy(&h);
    }
    if (!ctx->prepared)
        ctx->prepared = cs_calloc(1, sizeof(*ctx->prepared));
    cql_prepared_cache *c = ctx->prepared;
    cql_prepared *old = c ? cql__prepared_find(ctx, id, 16) : NULL;
    if (c && !old) {
        while (c->n >= PREP_CACHE_MAX && c->oldest) {
            prep_unlink(c, c->oldest);   /* evicted for room (a schema change's removals are not) */
            cql_node_metrics *nm = cql_node_metrics_get(ctx);
            if (nm)
                nm->prepared_evicted++;
        }
        prep_ent *pe = cs_calloc(1, sizeof(*pe));
        if (pe) {
            memcpy(pe->p.id, id, 16);
            pe->p.stmt = st;
            pe->p.keyspace = cs_strdup(s->keyspace);
            uint32_t h = id_hash(id);
            pe->next = c->b[h];
            c->b[h] = pe;
            pe->older = c->newest;
            if (c->newest)
                c->newest->newer = pe;
            else
                c->oldest = pe;
            c->newest = pe;
            c->n++;
            st = NULL;
        }
    }
    if (st)
        cql_stmt_free(st);

    cs_buf *b = &r->body;
    cs_buf_reset(b);
    cs_buf_put_u32(b, 4);
    cs_buf_put_u16(b, 16);
    cs_buf_put(b, id, 16);
    if (s->protocol_version >= 5) {
        uint8_t mid[16];
        cs_md5(meta.p ? meta.p : (const uint8_t *)"", meta.len, mid);
        cs_buf_put_u16(b, 16);
        cs_buf_put(b, mid, 16);
    }
    put_bind_metadata(b, &bi, s->protocol_version ? s->protocol_version : 4);
    cs_buf_put(b, meta.p, meta.len);
    cql__bind_info_destroy(&bi);
    cs_buf_destroy(&meta);
    return 0;
}
