/*
 * exec.c: the CQL layer's request entry points (cql_query, cql_prepare,
 * cql_execute, cql_batch) and statement dispatch.  Owner: exec-read.
 * Caller: server/conn.c on the single request loop thread.
 *
 * Per request:
 *   1. get a parsed statement: the statement cache (by query text) for QUERY,
 *      the prepared cache (by MD5 id, prepared.c) for EXECUTE;
 *   2. pick the effective keyspace: v5 per-query keyspace, the keyspace the
 *      statement was prepared under, or the session's;
 *   3. turn the bound values into positional values by marker index
 *      (NAMES_FOR_VALUES resolved by marker name) and check their count;
 *   4. check the consistency level; dispatch by statement kind.
 */
#include <stdio.h>
#include <stddef.h>
#include <string.h>
#include "cql/exec_int.h"
#include "cql/metrics.h"
#include "common/alloc.h"
#include "common/hash.h"

enum { CL_SERIAL = 0x0008, CL_LOCAL_SERIAL = 0x0009 };

/* ---------------------------------------------------------------- values */

/*
 * Resolve the request's values into an array indexed by marker index.
 * Positional values must match the marker count exactly (Cassandra's
 * "Invalid amount of bind variables"); named values are matched by marker
 * name, and a marker name used twice takes the same value.
 */
int cql__resolve_values(const cql_stmt *st, const cql_value *vals, int n_vals,
                        const char *const *names, const size_t *name_lens, cs_arena *a,
                        cql_value **out, cs_error *e)
{
    *out = NULL;
    if (!names || n_vals == 0) {
        if (n_vals != st->n_binds)
            return cs_error_set(e, CS_ERR_INVALID,
                                "Invalid amount of bind variables: expected %d, received %d",
                                st->n_binds, n_vals);
        *out = (cql_value *)vals;
        return 0;
    }
    cql_value *res = cs_arena_zalloc(a, sizeof(cql_value) * (size_t)(st->n_binds + 1));
    if (!res)
        return cs_error_set(e, CS_ERR_SERVER, "out of memory");
    int matched = 0;
    for (int i = 0; i < st->n_binds; i++) {
        const char *bn = st->bind_names ? st->bind_names[i] : NULL;
        res[i].len = CQL_UNSET;
        res[i].p = NULL;
        bool found = false;
        for (int j = 0; bn && j < n_vals; j++) {
            if (name_lens[j] == strlen(bn) && !memcmp(names[j], bn, name_lens[j])) {
                res[i] = vals[j];
                found = true;
                break;
            }
        }
        if (!found)
            return cs_error_set(e, CS_ERR_INVALID, "Invalid amount of bind variables: expected %d, received %d",
                                st->n_binds, n_vals);
        matched++;
    }
    (void)matched;
    *out = res;
    return 0;
}

/* ---------------------------------------------------------------- helpers */

static bool is_dml(cql_stmt_kind k)
{
    return k == STMT_INSERT || k == STMT_UPDATE || k == STMT_DELETE;
}

static bool stmt_is_lwt(const cql_stmt *st)
{
    switch (st->kind) {
    case STMT_INSERT: return st->u.insert.if_not_exists;
    case STMT_UPDATE: return st->u.update.if_exists || st->u.update.n_conds > 0;
    case STMT_DELETE: return st->u.del.if_exists || st->u.del.n_conds > 0;
    default: return false;
    }
}

/* The table name a statement refers to (NULL if none). */
const ast_qname *cql__stmt_table(const cql_stmt *st)
{
    switch (st->kind) {
    case STMT_SELECT: return &st->u.select.table;
    case STMT_INSERT: return &st->u.insert.table;
    case STMT_UPDATE: return &st->u.update.table;
    case STMT_DELETE: return &st->u.del.table;
    default: return NULL;
    }
}

static int check_consistency(const cql_stmt *st, const cql_params *p, cs_error *e)
{
    if (!p)
        return 0;
    bool serial = p->consistency == CL_SERIAL || p->consistency == CL_LOCAL_SERIAL;
    if (serial && is_dml(st->kind) && !stmt_is_lwt(st))
        return cs_error_set(e, CS_ERR_INVALID,
                            "You must use conditional updates for serializable writes");
    if (serial && st->kind == STMT_BATCH) {
        bool any = false;
        for (int i = 0; i < st->u.batch.n_stmts; i++)
            any |= stmt_is_lwt(st->u.batch.stmts[i]);
        if (!any)
            return cs_error_set(e, CS_ERR_INVALID,
                                "You must use conditional updates for serializable writes");
    }
    return 0;
}

/* Run a parsed statement with positional values. */
static int dispatch(cql_ctx *ctx, cql_session *s, cql_stmt *st, const cql_params *pp,
                    cql_result *r, cs_error *e)
{
    int rc = check_consistency(st, pp, e);
    if (rc)
        return rc;
    /* the authorize step (authz.c): DML and SELECT need it only under
     * CassandraAuthorizer, schema statements always (system keyspaces) */
    if ((ctx->cfg.cassandra_authorizer || (st->kind != STMT_SELECT && !is_dml(st->kind) && st->kind != STMT_BATCH)) &&
        st->kind != STMT_AUTH && (rc = cql__authorize(ctx, s, st, e)))
        return rc;
    ctx->requests++;
    switch (st->kind) {
    case STMT_SELECT:
        return cql__exec_select(ctx, s, st, pp, r, e);
    case STMT_INSERT:
    case STMT_UPDATE:
    case STMT_DELETE:
        return cql_exec_modify(ctx, s, st, pp, r, e);
    case STMT_BATCH: {
        int n = st->u.batch.n_stmts;
        cql_batch_entry *items = cs_calloc((size_t)(n ? n : 1), sizeof(*items));
        if (!items)
            return cs_error_set(e, CS_ERR_SERVER, "out of memory");
        for (int i = 0; i < n; i++) {
            items[i].stmt = st->u.batch.stmts[i];
            items[i].values = pp->values;
            items[i].n_values = pp->n_values;
        }
        rc = cql_exec_batch(ctx, s, st->u.batch.kind, &st->u.batch.using, items, n, pp, r, e);
        cs_free(items);
        return rc;
    }
    case STMT_USE:
        return cql_exec_use(ctx, s, st, r, e);
    case STMT_DESCRIBE:
        return cql_exec_describe(ctx, s, st, pp, r, e);
    default:
        return cql_exec_ddl(ctx, s, st, r, e);
    }
}

sch_table *cql__table_cached(cql_ctx *ctx, const ast_qname *qn, const char *session_ks,
                             cs_error *e)
{
    const char *ks = qn->ks ? qn->ks : (session_ks && session_ks[0] ? session_ks : NULL);
    cql_tcache_ent *ce = &ctx->tcache[((uintptr_t)qn >> 4) % CQL_TCACHE_SIZE];
    uint8_t ver[16];
    sch_version(ctx->cat, ver);
    /* The version check comes first: only then is ce->t known to be alive.
     * The names are compared too, since another statement may have been
     * allocated where an old one was freed. */
    if (ks && ce->qn == qn && ce->t && !memcmp(ce->ver, ver, 16) && !strcmp(ce->t->name, qn->name) &&
        !strcmp(ce->t->ks->name, ks))
        return ce->t;
    cs_error ignore;
    if (!e) {
        cs_error_init(&ignore);
        e = &ignore;
    }
    sch_table *t = sch_resolve_table(ctx->cat, qn->ks, qn->name, session_ks, e);
    if (t) {
        ce->qn = qn;
        ce->t = t;
        memcpy(ce->ver, ver, 16);
    }
    return t;
}

cql_stmt_memo *cql__stmt_memo_current(cql_ctx *ctx, const cql_stmt *st)
{
    cql_stmt_memo *m = st->exec_memo;
    if (!m)
        return NULL;
    uint8_t ver[16];
    sch_version(ctx->cat, ver);
    return !memcmp(m->ver, ver, 16) ? m : NULL;
}

cql_stmt_memo *cql__stmt_memo(cql_ctx *ctx, const cql_stmt *st, const sch_table *t)
{
    /* the version first: only then is m->t known to be alive */
    cql_stmt_memo *m = cql__stmt_memo_current(ctx, st);
    return m && m->t == t ? m : NULL;
}

cql_stmt_memo *cql__stmt_memo_new(cql_ctx *ctx, const cql_stmt *cst, const sch_table *t, int n)
{
    cql_stmt *st = (cql_stmt *)cst;   /* only its memo field is written */
    cql_stmt_memo *m = st->exec_memo;
    if (!m || m->cap < n) {
        cs_free(m);
        st->exec_memo = m = cs_malloc(sizeof *m + sizeof m->items[0] * (size_t)(n > 0 ? n : 1));
        if (!m)
            return NULL;
        m->cap = n;
    }
    int cap = m->cap;
    memset(m, 0, sizeof *m);
    m->cap = cap;
    sch_version(ctx->cat, m->ver);
    m->t = t;
    return m;
}

/* Per-table request latency for nodetool and system_views (cql/metrics.c):
 * SELECT counts as a read (a range scan when no partition key is given).
 * Writes count per partition update, in cql__wbatch_commit. */
static void record_latency(cql_ctx *ctx, cql_session *s, const cql_stmt *st, uint64_t us, uint64_t now_ns)
{
    if (st->kind != STMT_SELECT)
        return;
    const ast_qname *qn = &st->u.select.table;
    int kind = st->u.select.n_where ? 0 : 2;
    /* Resolved by the execution that just succeeded, which checked the
     * statement's memo against that table and made it again when stale
     * (cql__wplan_prepare, exec_select.c): a current memo names the table. */
    const cql_stmt_memo *m = cql__stmt_memo_current(ctx, st);
    const sch_table *t = m ? m->t : NULL;
    if (!t)
        t = cql__table_cached(ctx, qn, s->keyspace, NULL);
    if (t)
        cql_metrics_record(ctx, t, kind, us, now_ns, NULL, 0);
}

/* Execute st with the request's values (names resolved here); prepared:
 * an EXECUTE (else a QUERY), counted as CQLMetrics counts them once the
 * values are bound. */
int cql__run(cql_ctx *ctx, cql_session *s, cql_stmt *st, const cql_params *p, bool prepared, cql_result *r,
             cs_error *e)
{
    cql_params pp;
    if (p)
        pp = *p;
    else {
        memset(&pp, 0, sizeof(pp));
        pp.consistency = 0x0001;
        pp.paging_state_len = -1;
        pp.timestamp = INT64_MIN;
    }
    cs_arena a;
    cs_arena_init(&a);
    cql_value *vals = NULL;
    int rc = cql__resolve_values(st, pp.values, pp.n_values, pp.names, pp.name_lens, &a, &vals, e);
    if (rc == 0) {
        cql_metrics_statement(ctx, prepared);
        pp.values = vals;
        pp.n_values = st->n_binds;
        pp.names = NULL;
        pp.name_lens = NULL;
        uint64_t t0 = pp.start_ns ? pp.start_ns : cs_mono_ns();
        rc = dispatch(ctx, s, st, &pp, r, e);
        if (rc == 0) {
            if (!r->end_ns)
                r->end_ns = cs_mono_ns();   /* the server reuses it (one clock read) */
            record_latency(ctx, s, st, (r->end_ns - t0) / 1000, r->end_ns);
        }
    }
    cs_arena_destroy(&a);
    if (rc == 0 && r->schema_changed) {
        cql__prepared_on_schema_change(ctx, &r->change);
        cql__authz_schema_changed(ctx, s, &r->change);
    }
    if (rc < 0 && !cs_error_isset(e))   /* internal failure without a message */
        cs_error_set(e, CS_ERR_SERVER, "%s", cs_strerror(rc));
    return rc < 0 ? CS_EUSER : rc;
}

/* A session copy using keyspace ks (v5 per-query keyspace, prepared keyspace).
 * Every EXECUTE of a statement prepared under another keyspace than the
 * connection's makes one (a client that prepares after USE on one
 * connection and executes on others), so the 256-byte keyspace array is
 * not copied whole: only ks and its NUL, then the fields after it. */
static cql_session *session_with_ks(cql_session *s, const char *ks, cql_session *tmp)
{
    if (!ks || !*ks || !strcmp(ks, s->keyspace))
        return s;
    size_t n = strlen(ks);
    if (n >= sizeof(tmp->keyspace))
        n = sizeof(tmp->keyspace) - 1;
    memcpy(tmp->keyspace, ks, n);
    tmp->keyspace[n] = '\0';
    _Static_assert(offsetof(cql_session, keyspace) == 0, "the keyspace array comes first");
    memcpy((char *)tmp + sizeof tmp->keyspace, (const char *)s + sizeof s->keyspace,
           sizeof *s - sizeof s->keyspace);
    return tmp;
}

/* ---------------------------------------------------------------- QUERY */

/* Begin / end the running request (system_views.queries): pointers only,
 * the text is made when the table is read.  Its start is the request's
 * arrival (params->start_ns, the server's read of the frame, which the
 * latency histograms use too): one request loop runs a request as soon as
 * its read batch is decoded, so no clock read per request is spent on a
 * queueing time that is a few microseconds at most. */
static void running_begin(cql_ctx *ctx, cql_run_kind kind, const cql_session *s, const cql_params *p)
{
    cql_running *run = &ctx->running;
    uint64_t t = p && p->start_ns ? p->start_ns : cs_mono_ns();
    *run = (cql_running){ .kind = kind, .session = s, .params = p, .created_ns = t, .started_ns = t };
}

static void running_end(cql_ctx *ctx) { ctx->running.kind = CQL_RUN_NONE; }

int cql_query(cql_ctx *ctx, cql_session *s, const char *q, size_t qlen, const cql_params *p,
              cql_result *r, cs_error *e)
{
    bool cached = false;
    cql__stmt_cache_trim(ctx);
    if (cql__tracing())              /* QueryProcessor.getStatement */
        cql__trace(CQL_TRACE_NTR, "Parsing %.*s", (int)(qlen < 200 ? qlen : 200), q);
    cql_stmt *st = cql__stmt_cache_get(ctx, q, qlen, &cached, e);
    if (!st)
        return CS_EUSER;
    cql__trace(CQL_TRACE_NTR, "Preparing statement");
    cql_session tmp;
    cql_session *es = session_with_ks(s, p ? p->keyspace : NULL, &tmp);
    running_begin(ctx, CQL_RUN_QUERY, s, p);
    ctx->running.query = q;
    ctx->running.query_len = qlen;
    int rc = cql__run(ctx, es, st, p, false, r, e);
    running_end(ctx);
    if (st->kind == STMT_USE && es != s && rc == 0)
        memcpy(s->keyspace, es->keyspace, strlen(es->keyspace) + 1);   /* tmp holds only the string */
    if (!cached)
        cql_stmt_free(st);
    return rc;
}

/* ---------------------------------------------------------------- PREPARE / EXECUTE */

int cql_prepare(cql_ctx *ctx, cql_session *s, const char *q, size_t qlen, const char *keyspace,
                cql_result *r, cs_error *e)
{
    cql_session tmp;
    cql_session *es = session_with_ks(s, keyspace, &tmp);
    return cql__prepare(ctx, es, q, qlen, r, e);
}

int cql_execute(cql_ctx *ctx, cql_session *s, const uint8_t *id, size_t idlen,
                const cql_params *p, cql_result *r, cs_error *e)
{
    cql_prepared *ps = cql__prepared_find(ctx, id, idlen);
    if (!ps) {
        char hex[40] = "";
        for (size_t i = 0; i < idlen && i < 16; i++)
            snprintf(hex + 2 * i, 3, "%02x", id[i]);
        int rc = cs_error_set(e, CS_ERR_UNPREPARED,
                              "Prepared query with ID %s not found (either the query was not "
                              "prepared on this host (maybe the host has been restarted?) or you "
                              "have prepared too many queries and it has been evicted from the "
                              "internal cache)", hex);
        e->unprepared_id_len = (int)(idlen > 16 ? 16 : idlen);
        memcpy(e->unprepared_id, id, (size_t)e->unprepared_id_len);
        return rc;
    }
    cql_session tmp;
    cql_session *es = session_with_ks(s, ps->keyspace, &tmp);
    running_begin(ctx, CQL_RUN_EXECUTE, s, p);
    ctx->running.id = id;
    ctx->running.id_len = idlen;
    int rc = cql__run(ctx, es, ps->stmt, p, true, r, e);
    running_end(ctx);
    return rc;
}

/* ---------------------------------------------------------------- BATCH */

int cql_batch(cql_ctx *ctx, cql_session *s, uint8_t type, const cql_batch_item *items,
              int n_items, const cql_params *p, cql_result *r, cs_error *e)
{
    if (type > 2)
        return cs_error_set(e, CS_ERR_PROTOCOL, "Invalid BATCH message type %d", type);
    cql_session tmp;
    cql_session *es = session_with_ks(s, p ? p->keyspace : NULL, &tmp);
    cs_arena a;
    cs_arena_init(&a);
    cql_batch_entry *ents = cs_arena_zalloc(&a, sizeof(*ents) * (size_t)(n_items ? n_items : 1));
    cql_stmt **owned = cs_arena_zalloc(&a, sizeof(*owned) * (size_t)(n_items ? n_items : 1));
    int rc = 0;
    if (!ents || !owned)
        rc = cs_error_set(e, CS_ERR_SERVER, "out of memory");
    for (int i = 0; rc == 0 && i < n_items; i++) {
        const cql_batch_item *it = &items[i];
        cql_stmt *st;
        if (it->prepared) {
            cql_prepared *ps = cql__prepared_find(ctx, it->id, it->id_len);
            if (!ps) {
                char hex[40] = "";
                for (size_t k = 0; k < it->id_len && k < 16; k++)
                    snprintf(hex + 2 * k, 3, "%02x", it->id[k]);
                rc = cs_error_set(e, CS_ERR_UNPREPARED,
                                  "Prepared query with ID %s not found (either the query was not "
                                  "prepared on this host (maybe the host has been restarted?) or "
                                  "you have prepared too many queries and it has been evicted "
                                  "from the internal cache)", hex);
                e->unprepared_id_len = (int)(it->id_len > 16 ? 16 : it->id_len);
                memcpy(e->unprepared_id, it->id, (size_t)e->unprepared_id_len);
                break;
            }
            st = ps->stmt;
            ents[i].keyspace = ps->keyspace;
        } else {
            bool cached = false;
            st = cql__stmt_cache_get(ctx, it->query, it->query_len, &cached, e);
            if (!st) {
                rc = CS_EUSER;
                break;
            }
            if (!cached)
                owned[i] = st;
        }
        if (!is_dml(st->kind)) {
            rc = cs_error_set(e, CS_ERR_INVALID,
                              "Invalid statement in batch: only UPDATE, INSERT and DELETE "
                              "statements are allowed.");
            break;
        }
        cql_value *vals = NULL;
        rc = cql__resolve_values(st, it->values, it->n_values, it->names, it->name_lens, &a,
                                 &vals, e);
        if (rc)
            break;
        if (ctx->cfg.cassandra_authorizer && (rc = cql__authorize(ctx, es, st, e)))
            break;
        ents[i].stmt = st;
        ents[i].values = vals;
        ents[i].n_values = st->n_binds;
    }
    if (rc == 0) {
        cql_params pp;
        if (p)
            pp = *p;
        else {
            memset(&pp, 0, sizeof(pp));
            pp.consistency = 1;
            pp.paging_state_len = -1;
            pp.timestamp = INT64_MIN;
        }
        pp.values = NULL;
        pp.n_values = 0;
        pp.names = NULL;
        pp.name_lens = NULL;
        bool serial = pp.consistency == CL_SERIAL || pp.consistency == CL_LOCAL_SERIAL;
        bool any_lwt = false;
        for (int i = 0; i < n_items; i++)
            any_lwt |= stmt_is_lwt(ents[i].stmt);
        if (serial && !any_lwt)
            rc = cs_error_set(e, CS_ERR_INVALID,
                              "You must use conditional updates for serializable writes");
        else {
            ctx->requests++;
            running_begin(ctx, CQL_RUN_BATCH, s, p);
            ctx->running.items = items;
            ctx->running.n_items = n_items;
            rc = cql_exec_batch(ctx, es, (ast_batch_kind)type, NULL, ents, n_items, &pp, r, e);
            running_end(ctx);
        }
    }
    for (int i = 0; i < n_items; i++)
        if (owned && owned[i])
            cql_stmt_free(owned[i]);
    cs_arena_destroy(&a);
    return rc;
}

/* Called by cql_ctx_free (ctx.c): release the executor's caches. */
void cql_exec_ctx_destroy(cql_ctx *ctx)
{
    cql_exec_caches_free(ctx);
    cql__select_meta_free(ctx);
    cql__sel_memo_free(ctx);
    st_mutation_free(ctx->spare_mut);
    ctx->spare_mut = NULL;
}
