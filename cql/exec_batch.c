/*
 * exec_batch.c: write groups and BATCH (owner: exec-write).
 * Callers: exec.c (cql_exec_batch for the protocol BATCH message and for
 * BEGIN BATCH ... APPLY BATCH), exec_modify.c (single statements go through
 * the same path as a batch of one).
 *
 * Invariants:
 *   1. Every write request builds exactly ONE st_mutation and calls st_write
 *      once, so a LOGGED batch is one commit log record: atomic on replay and
 *      visible to readers all or nothing.  UNLOGGED and COUNTER batches get
 *      the same treatment (stronger than Cassandra, never weaker).
 *   2. Nothing is written unless every statement was validated and
 *      evaluated (cql__wplan_prepare) and, for LWTs, the conditions held.
 *   3. Statements without USING TIMESTAMP share the batch timestamp: BATCH
 *      USING TIMESTAMP, else the protocol default timestamp, else
 *      cs_write_ts_us() taken once per request.
 *   4. Durability: after st_write, r->need_sync/sync_pos are set when the
 *      engine's sync mode requires an fsync before the acknowledgement.
 *
 * Rules and messages follow Cassandra's BatchStatement (validate,
 * verifyBatchSize, verifyBatchType).
 */
#include <stdio.h>
#include "cql/metrics.h"
#include <stdlib.h>
#include <string.h>
#include "cql/modify_int.h"
#include "cql/index.h"   /* index hook (issue 5) */
#include "common/alloc.h"
#include "common/util.h"

/* ---------------------------------------------------------------- wbatch */

int cql__wbatch_init(cql_wbatch *b, cql_ctx *ctx, int32_t now_s)
{
    memset(b, 0, sizeof *b);
    b->ctx = ctx;
    b->now_s = now_s;
    b->cur_part = -1;
    cs_arena_init(&b->arena);
    /* the mutation of the previous write, emptied, when there is one (a
     * nested write group, e.g. during an index build, makes its own) */
    b->m = ctx->spare_mut ? ctx->spare_mut : st_mutation_new();
    ctx->spare_mut = NULL;
    return b->m ? 0 : CS_ENOMEM;
}

void cql__wbatch_destroy(cql_wbatch *b)
{
    if (b->m && b->ctx && !b->ctx->spare_mut) {
        st_mutation_reset(b->m);
        b->ctx->spare_mut = b->m;
    } else
        st_mutation_free(b->m);
    if (b->parts != &b->part1)
        cs_free(b->parts);
    cs_free(b->ctrs);
    cs_arena_destroy(&b->arena);
    memset(b, 0, sizeof *b);
}

static bool part_eq(const cql_wpart *p, const sch_table *t, const uint8_t *pk, uint32_t n)
{
    return p->t == t && p->pk_len == n && (n == 0 || memcmp(p->pk, pk, n) == 0);
}

int cql__wbatch_partition(cql_wbatch *b, const sch_table *t, const uint8_t *pk, uint32_t pk_len)
{
    int found = -1;
    if (b->cur_part >= 0 && part_eq(&b->parts[b->cur_part], t, pk, pk_len))
        found = b->cur_part;
    for (int i = 0; found < 0 && i < b->n_parts; i++)
        if (part_eq(&b->parts[i], t, pk, pk_len))
            found = i;
    if (found < 0) {
        if (b->n_parts == b->cap_parts) {
            if (b->cap_parts == 0) {           /* the common single partition: no allocation */
                b->parts = &b->part1;
                b->cap_parts = 1;
            } else {
                int nc = b->cap_parts == 1 ? 8 : b->cap_parts * 2;
                cql_wpart *n = cs_malloc((size_t)nc * sizeof *n);
                if (!n)
                    return CS_ENOMEM;
                memcpy(n, b->parts, (size_t)b->n_parts * sizeof *n);
                if (b->parts != &b->part1)
                    cs_free(b->parts);
                b->parts = n;
                b->cap_parts = nc;
            }
        }
        cql_wpart *p = &b->parts[b->n_parts];
        p->t = t;
        p->pk = cs_arena_memdup(&b->arena, pk, pk_len ? pk_len : 1);
        p->pk_len = pk_len;
        if (!p->pk)
            return CS_ENOMEM;
        found = b->n_parts++;   /* Cassandra's dataSize() does not count keys */
    }
    b->cur_part = found;
    st_mut_partition(b->m, t->st, pk, pk_len);
    return 0;
}

void cql__wrow_start(cql_wrow *w)
{
    st_mut_row(w->b->m, w->ck, w->ck_len, w->is_static ? ST_ROW_STATIC : 0);
    w->mut_start = st_mutation_len(w->b->m);
}

/* MutationExceededMaxSizeException's message: the size (cassette's own
 * encoding of the mutation, where Cassandra gives its serialized size), the
 * limit, the keyspace and "table.key" of the partitions, as many as fit in
 * 1024 characters, then " and N more."  Cassandra lists the largest first;
 * here they come in statement order. */
static int oversized(cql_wbatch *b, cs_error *e)
{
    cs_buf keys;
    cs_buf_init(&keys);
    int listed = 0;
    for (int i = 0; i < b->n_parts; i++) {
        cs_buf one;
        cs_buf_init(&one);
        cs_buf_put(&one, b->parts[i].t->name, strlen(b->parts[i].t->name));
        cs_buf_put_u8(&one, '.');
        sch_partition_key_text(b->parts[i].t, b->parts[i].pk, b->parts[i].pk_len, &one);
        bool fits = keys.len == 0 || keys.len + one.len + 2 <= 1024;
        if (fits) {
            if (keys.len)
                cs_buf_put(&keys, ", ", 2);
            cs_buf_put(&keys, one.p, one.len);
            listed++;
        }
        cs_buf_destroy(&one);
        if (!fits)
            break;
    }
    int rc = cs_error_set(e, CS_ERR_INVALID, "Rejected an oversized mutation (%zu/%zu) for keyspace: %s. Top keys are: %.*s",
                          st_mutation_len(b->m), st_engine_max_mutation_bytes(b->ctx->eng),
                          b->n_parts ? b->parts[0].t->ks->name : "", (int)keys.len, keys.p ? (const char *)keys.p : "");
    if (listed < b->n_parts && e->msg[0]) {
        size_t l = strlen(e->msg);
        snprintf(e->msg + l, sizeof e->msg - l, " and %d more.", b->n_parts - listed);
    }
    cs_buf_destroy(&keys);
    return rc;
}

int cql__wbatch_commit(cql_wbatch *b, cql_result *r, cs_error *e)
{
    /* StorageProxy.mutate; a counter update then runs on the counter
     * mutation stage (CounterMutation.applyCounterMutation: the locks, then
     * the current values read, cassette having no counter cache) */
    bool traced = cql__tracing();
    const char *stage = b->n_ctrs > 0 ? CQL_TRACE_COUNTER_MUTATION : CQL_TRACE_MUTATION;
    if (traced) {
        if (!b->paxos)
            cql__trace(CQL_TRACE_NTR, b->atomic ? "Determining replicas for atomic batch" : "Determining replicas for mutation");
        if (b->n_ctrs > 0) {
            cql__trace(stage, "Acquiring counter locks");
            cql__trace(stage, "Reading %d counter values from the CF", b->n_ctrs);
        }
    }
    if (cql__counters_apply(b, e) < 0)
        return CS_EUSER;
    if (st_mutation_empty(b->m))
        return 0;
    /* index hook (issue 5, cql/index_maint.c): index entries and view rows
     * join the same mutation, so base, indexes and views commit together.
     * Every partition of m went through cql__wbatch_partition, so when none
     * of b->parts' tables has an index or a view there is nothing to do
     * (and the walk over m is skipped). */
    bool maint = false;
    for (int i = 0; i < b->n_parts && !maint; i++)
        maint = b->parts[i].t->n_indexes > 0 || b->parts[i].t->n_views > 0;
    if (maint && cql_index_maintain(b->ctx, b->m, b->now_s, e) < 0)
        return CS_EUSER;
    st_clog_pos pos = { 0, 0 };
    if (traced)                      /* CassandraKeyspaceWriteHandler */
        cql__trace(stage, "Appending to commitlog");
    int rc = st_write(b->ctx->eng, b->m, &pos);
    if (rc == CS_ETOOBIG)
        return oversized(b, e);
    for (int i = 0; traced && rc == 0 && i < b->n_parts; i++) {   /* Keyspace.applyInternal, per partition update */
        if (b->parts[i].t->n_views > 0)   /* its view rows (in the same mutation here) */
            cql__trace(stage, "Creating materialized view mutations from base table replica");
        cql__trace(stage, "Adding to %s memtable", b->parts[i].t->name);   /* CassandraTableWriteHandler */
    }
    if (rc == CS_EINVAL)
        return cs_error_set(e, CS_ERR_SERVER, "internal error: malformed mutation");
    if (rc < 0)
        return cs_error_set(e, CS_ERR_WRITE_FAILURE, "Operation failed - write error: %s", cs_strerror(rc));
    if (st_sync_needed(b->ctx->eng)) {
        r->need_sync = true;
        r->sync_pos = pos;
    }
    /* A table's write metrics count each partition update applied to it
     * (ColumnFamilyStore.apply: a batch of three partitions of t is three
     * writes, an UPDATE ... WHERE k IN (1, 2) two), with the request's
     * latency so far; nodetool toppartitions samples each. */
    uint64_t now = cs_mono_ns();
    uint64_t us = (now - (b->start_ns && b->start_ns <= now ? b->start_ns : now)) / 1000;
    r->end_ns = now;                        /* cql__run and the server reuse the read */
    for (int i = 0; i < b->n_parts; i++)
        cql_metrics_record(b->ctx, b->parts[i].t, 1, us, now, b->parts[i].pk, b->parts[i].pk_len);
    return 0;
}

/* ---------------------------------------------------------------- batch rules */

static bool stmt_has_ts(const cql_stmt *st)
{
    switch (st->kind) {
    case STMT_INSERT: return st->u.insert.using.timestamp != NULL;
    case STMT_UPDATE: return st->u.update.using.timestamp != NULL;
    case STMT_DELETE: return st->u.del.using.timestamp != NULL;
    default: return false;
    }
}

/* Cassandra BatchStatement.validate, on prepared plans. */
static int batch_validate(int kind, bool ts_set, cql_wplan *pl, int n, cs_error *e)
{
    bool counters = false, non_counters = false, conds = false;
    for (int i = 0; i < n; i++) {
        if (pl[i].is_counter) counters = true; else non_counters = true;
        if (cql__wplan_is_lwt(&pl[i])) conds = true;
    }
    if (ts_set && conds)
        return cs_error_set(e, CS_ERR_INVALID, "Cannot provide custom timestamp for conditional BATCH");
    if (ts_set && kind == BATCH_COUNTER)
        return cs_error_set(e, CS_ERR_INVALID, "Cannot provide custom timestamp for counter BATCH");
    if (ts_set && counters)
        return cs_error_set(e, CS_ERR_INVALID, "Cannot provide custom timestamp for a BATCH containing counters");
    if (kind == BATCH_COUNTER && non_counters)
        return cs_error_set(e, CS_ERR_INVALID, "Cannot include non-counter statement in a counter batch");
    if (counters && non_counters)
        return cs_error_set(e, CS_ERR_INVALID, "Counter and non-counter mutations cannot exist in the same batch");
    if (kind == BATCH_LOGGED && counters)
        return cs_error_set(e, CS_ERR_INVALID, "Cannot include a counter statement in a logged batch");
    if (conds) {
        for (int i = 1; i < n; i++)
            if (pl[i].t != pl[0].t)
                return cs_error_set(e, CS_ERR_INVALID, "Batch with conditions cannot span multiple tables");
        for (int i = 0; i < n; i++) {
            const cql_where *a = &pl[i].w, *b = &pl[0].w;
            if (a->n_pks != 1 || b->n_pks != 1 || a->pks[0].len != b->pks[0].len ||
                memcmp(a->pks[0].p, b->pks[0].p, (size_t)a->pks[0].len) != 0)
                return cs_error_set(e, CS_ERR_INVALID, "Batch with conditions cannot span multiple partitions");
            if (a->n_cks > 1 || a->has_in_ck)
                return cs_error_set(e, CS_ERR_INVALID,
                                    "IN on the clustering key columns is not supported with conditional %s",
                                    pl[i].st->kind == STMT_DELETE ? "deletions" : "updates");
        }
    }
    return 0;
}

/* ---------------------------------------------------------------- table lists */

/* Java's String.hashCode.  Keyspace and table names are [A-Za-z0-9_]+
 * (exec_ddl.c, as Cassandra's), plus the quotes: ASCII, so each byte is one
 * UTF-16 code unit. */
static uint32_t java_string_hash(const uint8_t *s, size_t n)
{
    uint32_t h = 0;
    for (size_t i = 0; i < n; i++)
        h = 31 * h + s[i];
    return h;
}

typedef struct tname { size_t off, len; uint32_t bucket; int seq; } tname;

static int tname_cmp(const void *x, const void *y)
{
    const tname *a = x, *b = y;
    if (a->bucket != b->bucket)
        return a->bucket < b->bucket ? -1 : 1;
    return (a->seq > b->seq) - (a->seq < b->seq);
}

/* "[ks.t, ks.u]" of tables t[0..n) (distinct, in the order the batch first
 * names them) as Cassandra prints the HashSet<String> of their
 * TableMetadata.toString() it collects: names quoted where CQL needs it,
 * in the set's iteration order, which is by bucket ((h ^ h >>> 16) &
 * (capacity - 1); capacity 16, doubled while n is over 3/4 of it), then
 * insertion order within a bucket.  (Java turns a bucket of 9 names or more
 * into a tree; not modelled.)  Without memory for the ordering, the names
 * come in insertion order. */
static void table_list(const sch_table *const *t, int n, char *out, size_t outn)
{
    cs_buf b;
    cs_buf_init(&b);
    tname *v = n ? cs_malloc(sizeof *v * (size_t)n) : NULL;
    uint32_t cap = 16;
    while ((uint32_t)n > cap / 4 * 3)
        cap *= 2;
    for (int i = 0; i < n && v; i++) {
        v[i].off = b.len;
        cql_quote_ident(t[i]->ks->name, &b);
        cs_buf_put_u8(&b, '.');
        cql_quote_ident(t[i]->name, &b);
        v[i].len = b.len - v[i].off;
        uint32_t h = b.err ? 0 : java_string_hash(b.p + v[i].off, v[i].len);
        v[i].bucket = (h ^ (h >> 16)) & (cap - 1);
        v[i].seq = i;
    }
    bool sorted = v && !b.err;
    if (sorted)
        qsort(v, (size_t)n, sizeof *v, tname_cmp);
    size_t len = (size_t)snprintf(out, outn, "[");
    for (int i = 0; i < n && len < outn; i++) {
        if (sorted)
            len += (size_t)snprintf(out + len, outn - len, "%s%.*s", i ? ", " : "", (int)v[i].len,
                                    (const char *)b.p + v[i].off);
        else
            len += (size_t)snprintf(out + len, outn - len, "%s%s.%s", i ? ", " : "", t[i]->ks->name, t[i]->name);
    }
    if (len < outn)
        snprintf(out + len, outn - len, "]");
    cs_free(v);
    cs_buf_destroy(&b);
}

/* The distinct tables of the batch's partitions, first appearance first,
 * as table_list prints them; *count: how many. */
static void table_names(const cql_wbatch *b, char *out, size_t n, int *count)
{
    const sch_table *one[1];
    const sch_table **t = b->n_parts <= 1 ? one : cs_malloc(sizeof *t * (size_t)b->n_parts);
    *count = 0;
    if (!t) {
        snprintf(out, n, "[]");
        return;
    }
    for (int i = 0; i < b->n_parts; i++) {
        bool seen = false;
        for (int j = 0; j < *count && !seen; j++)
            seen = t[j] == b->parts[i].t;
        if (!seen)
            t[(*count)++] = b->parts[i].t;
    }
    table_list(t, *count, out, n);
    if (t != one)
        cs_free(t);
}

/* Distinct partition keys by bytes: across tables (Cassandra's keySet of
 * decorated keys, same_ks false) or per keyspace (its IMutations, one per
 * keyspace and key, same_ks true). */
/* Parts x and y write the same partition key (in the same keyspace too
 * when same_ks: one Mutation). */
static bool same_key(const cql_wpart *x, const cql_wpart *y, bool same_ks)
{
    return x->pk_len == y->pk_len && (!same_ks || x->t->ks == y->t->ks) &&
           (x->pk_len == 0 || memcmp(x->pk, y->pk, x->pk_len) == 0);
}

static int distinct_keys(const cql_wbatch *b, bool same_ks)
{
    int n = 0;
    for (int i = 0; i < b->n_parts; i++) {
        bool seen = false;
        for (int j = 0; j < i && !seen; j++)
            seen = same_key(&b->parts[j], &b->parts[i], same_ks);
        if (!seen)
            n++;
    }
    return n;
}

/* verifyBatchSize + verifyBatchType: warnings, or "Batch too large".  Both
 * look only at batches of more than one mutation (one per keyspace and
 * partition key: two tables sharing a key in one keyspace are one), so a
 * single-partition batch pays for neither.  Thresholds of 0 are legal:
 * every such batch is over them. */
static int batch_thresholds(cql_ctx *ctx, int kind, const cql_wbatch *b, cql_result *r, cs_error *e)
{
    if (distinct_keys(b, true) <= 1)   /* "only warn for batches spanning mutations" (CASSANDRA-10876) */
        return 0;
    char names[1024];
    int n_tables;
    table_names(b, names, sizeof names, &n_tables);
    int64_t warn = (int64_t)ctx->cfg.batch_size_warn_kb * 1024;
    int64_t fail = (int64_t)ctx->cfg.batch_size_fail_kb * 1024;
    int64_t size = cql__wbatch_data_size(b);
    if (size < 0)
        return cs_error_set(e, CS_ERR_SERVER, size == CS_ENOMEM ? "out of memory"
                                                                : "internal error: unreadable mutation");
    if (size > warn) {
        if (size > fail)
            return cs_error_set(e, CS_ERR_INVALID, "Batch too large");
        cql_result_warn(r, "Batch for %s is of size %lld, exceeding specified threshold of %lld by %lld.",
                        names, (long long)size, (long long)warn, (long long)(size - warn));
    }
    int keys = distinct_keys(b, false);
    int thr = ctx->cfg.unlogged_batch_across_partitions_warn_threshold;
    if (kind != BATCH_LOGGED && keys > thr)
        cql_result_warn(r, "Unlogged batch covering %d partitions detected against table%s %s. "
                        "You should use a logged batch for atomicity, or asynchronous writes for performance.",
                        keys, n_tables == 1 ? "" : "s", names);
    return 0;
}

/* LOGGED batches on tables with gc_grace_seconds = 0 (batchlog TTL). */
static void low_gcgs_warning(int kind, cql_wplan *pl, int n, cql_result *r)
{
    if (kind != BATCH_LOGGED)
        return;
    const sch_table *one[1];
    const sch_table **t = n <= 1 ? one : cs_malloc(sizeof *t * (size_t)n);
    if (!t)
        return;
    int cnt = 0;
    for (int i = 0; i < n; i++) {
        if (pl[i].t->gc_grace_s != 0)
            continue;
        bool seen = false;
        for (int j = 0; j < cnt && !seen; j++)
            seen = t[j] == pl[i].t;
        if (!seen)
            t[cnt++] = pl[i].t;
    }
    if (cnt) {
        char names[1024];
        table_list(t, cnt, names, sizeof names);
        cql_result_warn(r, "Executing a LOGGED BATCH on table%s %s, configured with a gc_grace_seconds of 0. "
                        "The gc_grace_seconds is used to TTL batchlog entries, so setting gc_grace_seconds too "
                        "low on tables involved in an atomic batch might cause batchlog entries to expire "
                        "before being replayed.", cnt == 1 ? "" : "s", names);
    }
    if (t != one)
        cs_free(t);
}

/* ---------------------------------------------------------------- execution */

int cql__exec_writes(cql_ctx *ctx, cql_session *s, int kind, const ast_using *using,
                     const cql_batch_entry *items, int n_items, const cql_params *p,
                     cql_result *r, cs_error *e)
{
    /* One clock read when the server picks the timestamp: "now" is its
     * second (cs_write_ts_us only ever runs ahead of the clock by the few
     * microseconds it needs to stay unique). */
    bool client_ts = p && p->timestamp != INT64_MIN;
    int64_t batch_ts = client_ts ? p->timestamp : cs_write_ts_us();
    int32_t now_s = p && p->now_in_seconds > 0 ? p->now_in_seconds
                  : client_ts ? cs_now_s() : (int32_t)(batch_ts / 1000000);
    bool ts_set = false;
    int rc = CS_EUSER;
    cs_arena arena;
    cs_arena_init(&arena);
    cql_wbatch b;
    bool b_init = false;
    /* cql__wplan_prepare initializes each plan (none is read before); a
     * single statement's plan lives here */
    cql_wplan one, *one_ptr;
    cql_wplan *plans = n_items <= 1 ? &one : cs_arena_alloc(&arena, sizeof *plans * (size_t)n_items);
    cql_wplan **pptr = n_items <= 1 ? &one_ptr : cs_arena_alloc(&arena, sizeof *pptr * (size_t)n_items);
    if (!plans || !pptr) {
        cs_error_set(e, CS_ERR_SERVER, "out of memory");
        goto out;
    }
    if (kind >= 0 && using) {
        if (using->ttl) {
            cs_error_set(e, CS_ERR_INVALID, "Global TTL on the BATCH statement is not supported.");
            goto out;
        }
        if (using->timestamp) {
            cql_eval ev;
            cql__eval_init(&ev, ctx, s, NULL, n_items ? items[0].values : NULL,
                           n_items ? items[0].n_values : 0, &arena);
            cql_value v;
            if (cql__term_eval(&ev, using->timestamp, ctype_scalar(CT_BIGINT), "[timestamp]", &v, e) < 0)
                goto out;
            if (v.len == CQL_NULL) {
                cs_error_set(e, CS_ERR_INVALID, "Invalid null value of timestamp");
                goto out;
            }
            if (v.len == 8) {
                batch_ts = (int64_t)cs_be64(v.p);
                ts_set = true;
            }
        }
    }
    for (int i = 0; i < n_items; i++) {
        cql_stmt *st = items[i].stmt;
        if (st->kind != STMT_INSERT && st->kind != STMT_UPDATE && st->kind != STMT_DELETE) {
            cs_error_set(e, CS_ERR_INVALID, "Invalid statement in batch: only UPDATE, INSERT and DELETE statements are allowed.");
            goto out;
        }
        if (ts_set && stmt_has_ts(st)) {
            cs_error_set(e, CS_ERR_INVALID, "Timestamp must be set either on BATCH or individual statements");
            goto out;
        }
        if (stmt_has_ts(st) &&   /* guardrail user_timestamps: ModificationStatement.validate */
            cql__guard_flag(ctx, s, ctx->cfg.guard.user_timestamps, "user_timestamps",
                            "User provided timestamps (USING TIMESTAMP)", e))
            goto out;
        cql_eval ev;
        cql_session *is = s;
        if (items[i].keyspace && *items[i].keyspace && strcmp(items[i].keyspace, s->keyspace)) {
            /* a prepared statement keeps the keyspace it was prepared under */
            cql_session *copy = cs_arena_alloc(&arena, sizeof(*copy));
            if (!copy) {
                cs_error_set(e, CS_ERR_SERVER, "out of memory");
                goto out;
            }
            *copy = *s;
            snprintf(copy->keyspace, sizeof(copy->keyspace), "%s", items[i].keyspace);
            is = copy;
        }
        cql__eval_init(&ev, ctx, is, NULL, items[i].values, items[i].n_values, &arena);
        if (cql__wplan_prepare(&ev, st, batch_ts, now_s, &plans[i], e) < 0)
            goto out;
        pptr[i] = &plans[i];
    }
    if (kind >= 0 && batch_validate(kind, ts_set, plans, n_items, e) < 0)
        goto out;
    if (p && p->consistency < 32 && cql__guard_applies(ctx, s)) {   /* guardrail write_consistency_levels: execute */
        unsigned serial = p->serial_consistency ? p->serial_consistency : 0x0008;   /* SERIAL by default */
        if (cql__guard_cl(ctx, s, r, true, (1u << p->consistency) | (serial < 32 ? 1u << serial : 0), e))
            goto out;
    }
    for (int i = 0; i < n_items && cql__guard_applies(ctx, s); i++) {   /* in_select_cartesian_product, as the
                                                                         * keys and clusterings are built */
        const cql_where *w = &plans[i].w;
        if ((w->has_in_pk && w->pk_all &&
             cql__guard_in_product(ctx, s, r, w->pk_raw, w->n_pk_raw, "partition key", e)) ||
            (w->has_in_ck && w->ck_all &&
             cql__guard_in_product(ctx, s, r, w->ck_raw, w->n_ck_raw, "clustering key", e)))
            goto out;
    }

    bool lwt = false;
    for (int i = 0; i < n_items; i++)
        if (cql__wplan_is_lwt(&plans[i]))
            lwt = true;
    bool applied = true;
    cql_paxos_trace pt;
    memset(&pt, 0, sizeof pt);
    if (lwt && cql__lwt_check(pptr, n_items, kind >= 0, now_s,
                              s ? s->protocol_version : 4, r, &applied, &pt, e) < 0)
        goto out;
    if (lwt && !applied) {   /* doPaxos: the empty update is proposed, not committed */
        cql__paxos_trace_propose(&pt, NULL);
        cql__paxos_trace_end(&pt, false);
    }
    if (cql__wbatch_init(&b, ctx, now_s) < 0) {
        cs_error_set(e, CS_ERR_SERVER, "out of memory");
        goto out;
    }
    b_init = true;
    b.start_ns = p ? p->start_ns : 0;
    b.session = s;
    b.result = r;
    if (applied) {
        if (kind >= 0 && !lwt)   /* BatchStatement.getMutations: not on the conditional path */
            low_gcgs_warning(kind, plans, n_items, r);
        for (int i = 0; i < n_items; i++)
            if (cql__wplan_apply(&b, &plans[i], e) < 0)
                goto out;
        if (kind >= 0 && !lwt && batch_thresholds(ctx, kind, &b, r, e) < 0)
            goto out;
        /* BatchStatement.updatePartitionsPerBatchMetrics: the batch's
         * mutations (one per keyspace and key), conditional batches not */
        if (kind >= 0 && !lwt && b.n_parts)
            cql_metrics_batch(ctx, kind, distinct_keys(&b, true));
        /* BatchStatement.executeWithoutConditions: a logged batch of more
         * than one mutation goes through StorageProxy.mutateAtomically */
        b.atomic = kind == BATCH_LOGGED && !lwt && b.n_parts > 1 && distinct_keys(&b, true) > 1;
        b.paxos = lwt;
        if (lwt) {   /* proposed, accepted, then committed by PaxosState (its mutation applied) */
            bool empty = st_mutation_empty(b.m);
            cql__paxos_trace_propose(&pt, empty ? NULL : b.m);
            if (!empty)
                cql__paxos_trace_commit(&pt, b.m);
        }
        if (cql__wbatch_commit(&b, r, e) < 0)
            goto out;
        if (lwt)
            cql__paxos_trace_end(&pt, true);
        if (r->need_sync) {   /* StorageProxy's WriteType and timeout for the write; an applied LWT
                               * waits as commitPaxos does: SIMPLE, the commit consistency */
            bool many = false;   /* more than one mutation (keyspace and key) */
            for (int i = 1; i < b.n_parts && !many; i++)
                many = !same_key(&b.parts[i], &b.parts[0], true);
            bool counter = b.n_ctrs > 0;
            for (int i = 0; i < b.n_parts && !counter; i++)
                counter = b.parts[i].t->is_counter;
            r->write_type = counter ? "COUNTER" : lwt ? "SIMPLE" : kind == BATCH_LOGGED && many ? "BATCH"
                          : many ? "UNLOGGED_BATCH" : "SIMPLE";
            r->write_timeout_ms = cql_timeout_ms(ctx, counter ? CQL_TIMEOUT_COUNTER_WRITE : CQL_TIMEOUT_WRITE);
        }
    }
    if (!lwt)
        cql_result_void(r);
    rc = 0;
out:
    if (b_init)
        cql__wbatch_destroy(&b);
    cs_arena_destroy(&arena);
    return rc;
}

int cql_exec_batch(cql_ctx *ctx, cql_session *s, ast_batch_kind kind, const ast_using *using,
                   const cql_batch_entry *items, int n_items, const cql_params *p,
                   cql_result *r, cs_error *e)
{
    return cql__exec_writes(ctx, s, (int)kind, using, items, n_items, p, r, e);
}
