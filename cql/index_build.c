/*
 * index_build.c: background builds of secondary indexes and materialized
 * views (owner: index).  As in Cassandra, CREATE INDEX / CREATE MATERIALIZED
 * VIEW return at once (after an inline first slice, so small tables are
 * built when the statement returns); the rest of the build runs in slices on
 * the request loop (cql_background_step, called by a server timer), between
 * requests.  Writes during the build are maintained by cql_index_maintain as
 * usual (the index / view is in the catalog from the start); index queries
 * fail with Cassandra's INDEX_NOT_AVAILABLE read failure until the build is
 * done; views serve what is built so far, as Cassandra.
 *
 * Progress survives restarts: a hidden engine table (never in the catalog,
 * ks "system", name "cassette_index_builds", fixed id) holds one row per
 * build in progress: partition key = the index storage id or the view id,
 * one cell = kind, base table id and the last base partition key done.  The
 * row is written BEFORE the schema row (crash in between: the row names
 * nothing and is deleted), updated in the SAME commit log record as each
 * slice's entries, and deleted with the last slice.  At startup (first call)
 * the rows are read back and the builds resume after their last partition.
 *
 * Thread: the CQL request loop thread only.
 */
#include <string.h>
#include <stdlib.h>
#include <stdio.h>
#include "cql/index.h"
#include "common/hash.h"
#include "common/alloc.h"
#include "common/log.h"
#include "common/util.h"

int cql__index_build_step(cql_ctx *ctx, sch_table *t, sch_index *ix, sch_table *v, const uint8_t *after,
                          uint32_t after_len, bool have_after, int max_rows, st_mutation **out,
                          cs_buf *last, bool *done, int64_t *n_rows);

enum { BK_INDEX = 1, BK_VIEW = 2 };

static const uint8_t PROG_ID[16] = { 'c', 'a', 's', 's', 'e', 't', 't', 'e',
                                     '.', 'i', 'b', 'u', 'i', 'l', 'd', 1 };

typedef struct ibuild {
    uint8_t id[16];          /* index storage id / view table id */
    uint8_t base_id[16];
    int kind;                /* BK_* */
    cs_buf last;             /* last base partition key done */
    bool have_last;
    bool failed;             /* build error: stays unavailable (logged) */
    int64_t rows;
} ibuild;

typedef struct ibuilds {
    bool loaded;
    ibuild *v;
    int n, cap;
} ibuilds;

/* Rows per slice (CASSETTE_INDEX_BUILD_STEP_ROWS, for tests; default 1000). */
static int step_rows(void)
{
    const char *s = getenv("CASSETTE_INDEX_BUILD_STEP_ROWS");
    int n = s ? atoi(s) : 0;
    return n > 0 ? n : 1000;
}

/* ---------------------------------------------------------------- progress table */

static st_table *prog_table(st_engine *eng)
{
    st_table *t = st_table_find(eng, PROG_ID);
    if (t)
        return t;
    st_table_opts o;
    st_table_opts_defaults(&o);
    if (st_table_open(eng, PROG_ID, "system", "cassette_index_builds", &o, &t))
        return NULL;
    return t;
}

bool cql__index_build_owns_id(const uint8_t id[16])
{
    return memcmp(id, PROG_ID, 16) == 0;
}

int cql__index_build_open(st_engine *eng)
{
    return prog_table(eng) ? 0 : CS_EIO;
}

static void put_progress(st_mutation *m, st_table *pt, const ibuild *b)
{
    cs_buf v;
    cs_buf_init(&v);
    cs_buf_put_u8(&v, (uint8_t)b->kind);
    cs_buf_put(&v, b->base_id, 16);
    cs_buf_put_u8(&v, b->have_last);
    if (b->have_last && b->last.len)
        cs_buf_put(&v, b->last.p, b->last.len);
    st_mut_partition(m, pt, b->id, 16);
    st_mut_row(m, NULL, 0, 0);
    st_cell c;
    memset(&c, 0, sizeof c);
    c.col = 0;
    c.ts_us = cs_write_ts_us();
    c.val = v.p ? v.p : (const uint8_t *)"";
    c.val_len = (uint32_t)v.len;
    st_mut_cell(m, &c);
    cs_buf_destroy(&v);
}

static void put_done(st_mutation *m, st_table *pt, const uint8_t id[16])
{
    st_mut_partition(m, pt, id, 16);
    st_mut_partition_delete(m, (st_deletion){ cs_write_ts_us(), cs_now_s() });
}

/* Write m and push it to the commit log file (deferred log writes). */
static int write_now(cql_ctx *ctx, st_mutation *m)
{
    int rc = st_write(ctx->eng, m, NULL);
    if (rc == 0)
        rc = st_log_flush(ctx->eng);
    return rc;
}

/* ---------------------------------------------------------------- registry */

static ibuilds *reg(cql_ctx *ctx)
{
    if (!ctx->index_builds)
        ctx->index_builds = cs_calloc(1, sizeof(ibuilds));
    return ctx->index_builds;
}

static ibuild *find(ibuilds *B, const uint8_t id[16])
{
    for (int i = 0; B && i < B->n; i++)
        if (!memcmp(B->v[i].id, id, 16))
            return &B->v[i];
    return NULL;
}

static ibuild *add(ibuilds *B, const uint8_t id[16], const uint8_t base_id[16], int kind)
{
    ibuild *b = find(B, id);
    if (!b) {
        if (B->n == B->cap) {
            int nc = B->cap ? B->cap * 2 : 4;
            ibuild *nv = cs_realloc(B->v, sizeof(*nv) * (size_t)nc);
            if (!nv)
                return NULL;
            B->v = nv;
            B->cap = nc;
        }
        b = &B->v[B->n++];
        memset(b, 0, sizeof *b);
        cs_buf_init(&b->last);
    }
    memcpy(b->id, id, 16);
    memcpy(b->base_id, base_id, 16);
    b->kind = kind;
    cs_buf_reset(&b->last);
    b->have_last = false;
    b->failed = false;
    b->rows = 0;
    return b;
}

static void remove_at(ibuilds *B, int i)
{
    cs_buf_destroy(&B->v[i].last);
    memmove(&B->v[i], &B->v[i + 1], sizeof(*B->v) * (size_t)(B->n - i - 1));
    B->n--;
}

/* The objects a build names, or false if they are gone. */
static bool resolve(cql_ctx *ctx, const ibuild *b, sch_table **t, sch_index **ix, sch_table **v)
{
    *t = NULL; *ix = NULL; *v = NULL;
    uint8_t id[16];
    for (int k = 0; k < sch_keyspace_count(ctx->cat); k++) {
        sch_keyspace *ks = sch_keyspace_at(ctx->cat, k);
        for (int j = 0; j < ks->n_tables; j++) {
            sch_table *x = ks->tables[j];
            if (b->kind == BK_VIEW && x->is_view && !memcmp(x->id, b->id, 16) && x->view_base) {
                *v = x;
                *t = x->view_base;
                return true;
            }
            if (b->kind != BK_INDEX || memcmp(x->id, b->base_id, 16))
                continue;
            for (int i = 0; i < x->n_indexes; i++) {
                cql_index_table_id(x->indexes[i], id);
                if (!memcmp(id, b->id, 16)) {
                    *t = x;
                    *ix = x->indexes[i];
                    return true;
                }
            }
        }
    }
    return false;
}

/* First use: read the builds in progress back from the progress table
 * (after commit log replay) and delete the rows that name nothing. */
static void load(cql_ctx *ctx, ibuilds *B)
{
    B->loaded = true;
    st_table *pt = prog_table(ctx->eng);
    if (!pt)
        return;
    st_read_spec sp;
    memset(&sp, 0, sizeof sp);
    sp.start_token = INT64_MIN;
    sp.start_inclusive = true;
    sp.end_token = INT64_MAX;
    st_scan *sc = NULL;
    if (st_scan_open(pt, &sp, &sc))
        return;
    st_mutation *dead = st_mutation_new();
    st_partition_view pv;
    while (st_scan_next_partition(sc, &pv) == 1) {
        if (pv.pk_len != 16)
            continue;
        st_row_view rv;
        while (st_scan_next_row(sc, &rv) == 1) {
            if (rv.n_cells < 1 || rv.cells[0].val_len < 18)
                continue;
            const uint8_t *p = rv.cells[0].val;
            ibuild *b = add(B, pv.pk, p + 1, p[0]);
            if (!b)
                continue;
            if (p[17]) {
                cs_buf_put(&b->last, p + 18, rv.cells[0].val_len - 18);
                b->have_last = true;
            }
            sch_table *t;
            sch_index *ix;
            sch_table *v;
            if (!resolve(ctx, b, &t, &ix, &v)) {
                if (dead)
                    put_done(dead, pt, pv.pk);
                remove_at(B, (int)(b - B->v));
            } else {
                CS_INFO("resuming the build of %s %s.%s", ix ? "index" : "view", t->ks->name,
                        ix ? ix->name : v->name);
            }
        }
    }
    st_scan_close(sc);
    if (dead && !st_mutation_empty(dead))
        write_now(ctx, dead);
    st_mutation_free(dead);
}

static ibuilds *loaded(cql_ctx *ctx)
{
    ibuilds *B = reg(ctx);
    if (B && !B->loaded)
        load(ctx, B);
    return B;
}

/* ---------------------------------------------------------------- API */

/* Register a build and persist its start (before the schema row). */
static int begin(cql_ctx *ctx, const uint8_t id[16], const uint8_t base_id[16], int kind, cs_error *e)
{
    ibuilds *B = loaded(ctx);
    st_table *pt = prog_table(ctx->eng);
    ibuild *b = B && pt ? add(B, id, base_id, kind) : NULL;
    if (!b)
        return cs_error_set(e, CS_ERR_SERVER, "Cannot start the index/view build");
    st_mutation *m = st_mutation_new();
    int rc = m ? 0 : CS_ENOMEM;
    if (rc == 0) {
        put_progress(m, pt, b);
        rc = write_now(ctx, m);
    }
    st_mutation_free(m);
    if (rc) {
        remove_at(B, (int)(b - B->v));
        return cs_error_set(e, CS_ERR_SERVER, "Cannot start the index/view build: %s", cs_strerror(rc));
    }
    return 0;
}

int cql__index_build_begin(cql_ctx *ctx, sch_index *ix, cs_error *e)
{
    uint8_t id[16];
    cql_index_table_id(ix, id);
    return begin(ctx, id, ix->table->id, BK_INDEX, e);
}

int cql__view_build_begin(cql_ctx *ctx, sch_table *v, cs_error *e)
{
    return begin(ctx, v->id, v->view_base->id, BK_VIEW, e);
}

void cql__index_build_cancel(cql_ctx *ctx, const uint8_t id[16])
{
    ibuilds *B = ctx->index_builds;
    ibuild *b = find(B, id);
    if (!b)
        return;
    remove_at(B, (int)(b - B->v));
    st_table *pt = prog_table(ctx->eng);
    st_mutation *m = pt ? st_mutation_new() : NULL;
    if (m) {
        put_done(m, pt, id);
        write_now(ctx, m);
    }
    st_mutation_free(m);
}

/* ix's build in the list, or NULL. */
static const ibuild *index_build(cql_ctx *ctx, const sch_index *ix)
{
    ibuilds *B = loaded(ctx);
    if (!B || B->n == 0)
        return NULL;
    uint8_t id[16];
    cql_index_table_id(ix, id);
    return find(B, id);
}

bool cql_index_is_building(cql_ctx *ctx, const sch_index *ix)
{
    return index_build(ctx, ix) != NULL;
}

bool cql_index_build_failed(cql_ctx *ctx, const sch_index *ix)
{
    const ibuild *b = index_build(ctx, ix);
    return b && b->failed;
}

bool cql_view_is_building(cql_ctx *ctx, const sch_table *v)
{
    ibuilds *B = loaded(ctx);
    return find(B, v->id) != NULL;
}

/* One slice of build i.  Returns 1 if the build is finished (removed). */
static int run_one(cql_ctx *ctx, ibuilds *B, int i, int max_rows)
{
    ibuild *b = &B->v[i];
    sch_table *t;
    sch_index *ix;
    sch_table *v;
    st_table *pt = prog_table(ctx->eng);
    if (!pt)
        return 0;
    if (!resolve(ctx, b, &t, &ix, &v)) {
        uint8_t id[16];
        memcpy(id, b->id, 16);
        cql__index_build_cancel(ctx, id);
        return 1;
    }
    if (ix && !cql_index_storage(ctx->eng, ix)) {
        b->failed = true;
        return 0;
    }
    st_mutation *m = NULL;
    bool done = false;
    cs_buf last;
    cs_buf_init(&last);
    int rc = cql__index_build_step(ctx, t, ix, v, b->last.p, (uint32_t)b->last.len, b->have_last, max_rows,
                                   &m, &last, &done, &b->rows);
    if (rc == 0 && last.len > 0) {       /* partition keys are never empty */
        cs_buf_reset(&b->last);
        cs_buf_put(&b->last, last.p, last.len);
        b->have_last = true;
        rc = b->last.err ? CS_ENOMEM : 0;
    }
    cs_buf_destroy(&last);
    if (rc == 0) {
        if (done)
            put_done(m, pt, b->id);
        else
            put_progress(m, pt, b);
        rc = write_now(ctx, m);
    }
    st_mutation_free(m);
    if (rc) {
        CS_ERROR("build of %s %s.%s failed: %s", ix ? "index" : "view", t->ks->name, ix ? ix->name : v->name,
                 cs_strerror(rc));
        b->failed = true;
        return 0;
    }
    if (done) {
        CS_INFO("built %s %s.%s (%lld rows)", ix ? "index" : "view", t->ks->name, ix ? ix->name : v->name,
                (long long)b->rows);
        remove_at(B, i);
        return 1;
    }
    return 0;
}

int cql_background_step(cql_ctx *ctx)
{
    ibuilds *B = ctx ? loaded(ctx) : NULL;
    if (!B)
        return 0;
    for (int i = 0; i < B->n; i++)
        if (!B->v[i].failed) {
            run_one(ctx, B, i, step_rows());
            break;
        }
    for (int i = 0; i < B->n; i++)
        if (!B->v[i].failed)
            return 1;
    return 0;
}

void cql_index_build_inline(cql_ctx *ctx)
{
    ibuilds *B = loaded(ctx);
    int budget = 5 * step_rows();
    for (int i = 0; B && i < B->n && budget > 0;) {
        if (B->v[i].failed) {
            i++;
            continue;
        }
        int64_t before = B->v[i].rows;
        if (run_one(ctx, B, i, budget))
            continue;
        int64_t done = i < B->n ? B->v[i].rows - before : 0;
        budget -= (int)(done > 0 ? done : 1);
        i++;
    }
}

void cql_index_builds_free(cql_ctx *ctx)
{
    ibuilds *B = ctx ? ctx->index_builds : NULL;
    if (!B)
        return;
    for (int i = 0; i < B->n; i++)
        cs_buf_destroy(&B->v[i].last);
    cs_free(B->v);
    cs_free(B);
    ctx->index_builds = NULL;
}

/* ---------------------------------------------------------------- system tables */

static int col_ix(const sch_table *t, const char *name)
{
    for (int i = 0; i < t->n_cols; i++)
        if (!strcmp(t->cols[i].name, name))
            return i;
    return -1;
}

/* One row: up to 8 columns by name (text values unless len given). */
typedef int (*cql__emit_fn)(void *arg, const uint8_t **vals, const int32_t *lens);
static int emit_row(sch_table *t, cql__emit_fn emit, void *arg, const char **names, const void **vals,
                    const int32_t *lens, int n)
{
    const uint8_t *v[64];
    int32_t l[64];
    if (t->n_cols > 64)
        return 0;
    for (int i = 0; i < t->n_cols; i++) {
        v[i] = NULL;
        l[i] = -1;
    }
    for (int j = 0; j < n; j++) {
        int i = col_ix(t, names[j]);
        if (i < 0)
            continue;
        v[i] = vals[j];
        l[i] = lens[j] >= 0 ? lens[j] : (int32_t)strlen(vals[j]);
    }
    return emit(arg, v, l);
}

/* system."IndexInfo": (keyspace, index) of every built index, as Cassandra's
 * SystemKeyspace.setIndexBuilt rows (table_name holds the keyspace name). */
int cql__index_info_rows(cql_ctx *ctx, sch_table *t, cql__emit_fn emit, void *arg)
{
    int rc = 0;
    for (int k = 0; rc == 0 && k < sch_keyspace_count(ctx->cat); k++) {
        sch_keyspace *ks = sch_keyspace_at(ctx->cat, k);
        for (int j = 0; rc == 0 && j < ks->n_tables; j++)
            for (int i = 0; rc == 0 && i < ks->tables[j]->n_indexes; i++) {
                sch_index *ix = ks->tables[j]->indexes[i];
                if (cql_index_is_building(ctx, ix))
                    continue;
                const char *names[] = { "table_name", "index_name" };
                const void *vals[] = { ks->name, ix->name };
                int32_t lens[] = { -1, -1 };
                rc = emit_row(t, emit, arg, names, vals, lens, 2);
            }
    }
    return rc;
}

/* system.built_views (built views) and system.view_builds_in_progress
 * (views being built: one range, the whole ring, keys_built so far). */
static int view_rows(cql_ctx *ctx, sch_table *t, cql__emit_fn emit, void *arg, bool building)
{
    int rc = 0;
    ibuilds *B = loaded(ctx);
    for (int k = 0; rc == 0 && k < sch_keyspace_count(ctx->cat); k++) {
        sch_keyspace *ks = sch_keyspace_at(ctx->cat, k);
        for (int j = 0; rc == 0 && j < ks->n_tables; j++) {
            sch_table *v = ks->tables[j];
            if (!v->is_view)
                continue;
            ibuild *b = find(B, v->id);
            if ((b != NULL) != building)
                continue;
            if (!building) {
                static const uint8_t yes = 1;
                const char *names[] = { "keyspace_name", "view_name", "status_replicated" };
                const void *vals[] = { ks->name, v->name, &yes };
                int32_t lens[] = { -1, -1, 1 };
                rc = emit_row(t, emit, arg, names, vals, lens, 3);
                continue;
            }
            char st[32], en[32], last[32];
            snprintf(st, sizeof st, "%lld", (long long)INT64_MIN);
            snprintf(en, sizeof en, "%lld", (long long)INT64_MAX);
            snprintf(last, sizeof last, "%lld", b->have_last ?
                     (long long)cs_murmur3_token(b->last.p, b->last.len) : (long long)INT64_MIN);
            uint8_t kb[8];
            uint64_t n = (uint64_t)b->rows;
            for (int i = 0; i < 8; i++)
                kb[i] = (uint8_t)(n >> (56 - 8 * i));
            const char *names[] = { "keyspace_name", "view_name", "start_token", "end_token", "last_token", "keys_built" };
            const void *vals[] = { ks->name, v->name, st, en, last, kb };
            int32_t lens[] = { -1, -1, -1, -1, -1, 8 };
            rc = emit_row(t, emit, arg, names, vals, lens, 6);
        }
    }
    return rc;
}

int cql__built_views_rows(cql_ctx *ctx, sch_table *t, cql__emit_fn emit, void *arg)
{
    return view_rows(ctx, t, emit, arg, false);
}

int cql__view_builds_rows(cql_ctx *ctx, sch_table *t, cql__emit_fn emit, void *arg)
{
    return view_rows(ctx, t, emit, arg, true);
}
