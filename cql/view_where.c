/*
 * view_where.c: a materialized view's WHERE clause beyond `IS NOT NULL`
 * (Cassandra lets primary key columns be restricted: `k = 1`, `c > 0`,
 * `k IN (...)`).  Owner: index.  Caller: index_maint.c, for every base row
 * it maintains a view for.
 *
 * The stored where_clause text is parsed back as `SELECT * FROM base WHERE
 * ...` and analysed by the executor's WHERE analysis (with filtering
 * allowed); IS NOT NULL relations are left out (the view key check already
 * requires non-null key columns).  A view whose clause holds only IS NOT
 * NULL relations is remembered (by id) so the common case costs nothing.
 */
#include <string.h>
#include <stdio.h>
#include "cql/index.h"
#include "common/util.h"
#include "cql/exec_int.h"
#include "common/alloc.h"
#include "common/hash.h"

/* Views known to have nothing but IS NOT NULL (small direct-mapped memo). */
static uint8_t g_plain[64][16];
static bool g_plain_set[64];

static int slot(const uint8_t id[16])
{
    return (int)(cs_xxh64(id, 16, 7) & 63);
}

/* Is ck inside one of the slices?  Same bound tests as storage's reads. */
static bool in_bound_slices(const cql_where *w, const uint8_t *ck, uint32_t n)
{
    if (w->n_slices == 0)
        return true;
    for (int i = 0; i < w->n_slices; i++) {
        const st_slice *s = &w->slices[i];
        if (s->start.len) {
            int c = cs_bytes_cmp(ck, n, s->start.key, s->start.len);
            if (s->start.inclusive ? c < 0 : c <= 0)
                continue;
        }
        if (s->end.len) {
            int c = cs_bytes_cmp(ck, n, s->end.key, s->end.len);
            if (s->end.inclusive ? c > 0 : c >= 0)
                continue;
        }
        return true;
    }
    return false;
}

int cql_view_where_match(cql_ctx *ctx, const sch_table *v, const cql_value *vals, const uint8_t *pk,
                         uint32_t pk_len, const uint8_t *ck, uint32_t ck_len, bool *match)
{
    *match = true;
    const sch_table *t = v->view_base;
    if (!t || !v->view_where || !*v->view_where)
        return 0;
    int sl = slot(v->id);
    if (g_plain_set[sl] && !memcmp(g_plain[sl], v->id, 16))
        return 0;
    cs_buf q;
    cs_buf_init(&q);
    cs_buf_put(&q, "SELECT * FROM \"", 15);
    for (const char *p = t->name; *p; p++) {
        cs_buf_put_u8(&q, (uint8_t)*p);
        if (*p == '"')
            cs_buf_put_u8(&q, '"');
    }
    cs_buf_put(&q, "\" WHERE ", 8);
    cs_buf_put(&q, v->view_where, strlen(v->view_where));
    cs_error e;
    cs_error_init(&e);
    if (q.err) {
        cs_buf_destroy(&q);
        return CS_ENOMEM;
    }
    cql_stmt *st = cql_parse((const char *)q.p, q.len, &e);
    cs_buf_destroy(&q);
    if (!st || st->kind != STMT_SELECT) {
        if (st)
            cql_stmt_free(st);
        /* the clause came from the parser: failing now means out of memory */
        return e.code == CS_ERR_SERVER ? CS_ENOMEM : 0;
    }
    const ast_select *sel = &st->u.select;
    ast_relation *rels[64];
    int n = 0;
    for (int i = 0; i < sel->n_where && n < 64; i++)
        if (sel->where[i]->op != OP_IS_NOT_NULL)
            rels[n++] = sel->where[i];
    int rc = 0;
    if (n == 0) {
        memcpy(g_plain[sl], v->id, 16);
        g_plain_set[sl] = true;
    } else {
        cs_arena a;
        cs_arena_init(&a);
        cql_eval ev;
        static cql_session sess;       /* none: terms are literals */
        sess.protocol_version = 4;
        snprintf(sess.keyspace, sizeof sess.keyspace, "%s", t->ks->name);
        cql__eval_init(&ev, ctx, &sess, t->ks->name, NULL, 0, &a);
        cql_where w;
        if (cql__where_analyze(&ev, t, rels, n, CQL_WHERE_SELECT, CQL_WHERE_ALLOW_FILTERING, &w, &e) == 0) {
            bool ok = !w.empty;
            if (ok && w.pk_all) {
                bool found = false;
                for (int i = 0; i < w.n_pks && !found; i++)
                    found = (uint32_t)w.pks[i].len == pk_len && !memcmp(w.pks[i].p, pk, pk_len);
                ok = found;
            }
            if (ok && w.ck_all) {
                bool found = false;
                for (int i = 0; i < w.n_cks && !found; i++)
                    found = (uint32_t)w.cks[i].len == ck_len && !memcmp(w.cks[i].p, ck, ck_len);
                ok = found;
            } else if (ok) {
                ok = in_bound_slices(&w, ck, ck_len);
            }
            for (int i = 0; ok && i < w.n_filters; i++)
                ok = cql__filter_match_row(&w.filters[i], t, vals);
            *match = ok;
        } else if (e.code == CS_ERR_SERVER) {
            rc = CS_ENOMEM;
        }
        cs_arena_destroy(&a);
    }
    cql_stmt_free(st);
    return rc;
}
