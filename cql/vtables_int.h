/*
 * vtables_int.h: shared by the files computing virtual table rows
 * (vtables.c: system.*, system_auth, system_views' node tables,
 * system_virtual_schema; vtables_metrics.c: the metric tables;
 * vtables_node.c: gossip, running queries, auth cache keys).  Owner:
 * catalog.  Thread: the request loop, under the execution lock.
 *
 * Each rows callback (sch_vtable_rows_cb) builds whole rows with a vrow,
 * one value per column in the table's column order (unset columns are
 * null), and hands each to emit; the executor then filters, orders and
 * pages them.
 */
#ifndef CS_CQL_VTABLES_INT_H
#define CS_CQL_VTABLES_INT_H

#include <arpa/inet.h>
#include <string.h>

#include "common/buf.h"
#include "cql/schema_int.h"

typedef int (*emit_fn)(void *arg, const uint8_t **vals, const int32_t *lens);

#define VROW_MAX_COLS 80   /* gossip_info has 64 */

/* One row under construction: values by column index, bytes in `store`. */
typedef struct vrow {
    sch_table *t;
    cs_buf store;                       /* the values' bytes (the caller inits/destroys it) */
    size_t off[VROW_MAX_COLS];          /* where column i's value starts in store */
    int32_t len[VROW_MAX_COLS];         /* its length; -1 null */
} vrow;

static inline void vrow_begin(vrow *r, sch_table *t)
{
    r->t = t;
    cs_buf_reset(&r->store);
    for (int i = 0; i < t->n_cols && i < VROW_MAX_COLS; i++)
        r->len[i] = -1;
}

/* Set column col (by name; unknown names are ignored) to n bytes at p. */
static inline void vset(vrow *r, const char *col, const void *p, size_t n)
{
    for (int i = 0; i < r->t->n_cols && i < VROW_MAX_COLS; i++) {
        if (strcmp(r->t->cols[i].name, col) == 0) {
            r->off[i] = r->store.len;
            cs_buf_put(&r->store, p, n);
            r->len[i] = (int32_t)n;
            return;
        }
    }
}

static inline void vset_text(vrow *r, const char *col, const char *s) { vset(r, col, s, strlen(s)); }
static inline void vset_int(vrow *r, const char *col, int32_t v) { uint8_t b[4]; cs_st32(b, (uint32_t)v); vset(r, col, b, 4); }
static inline void vset_bigint(vrow *r, const char *col, int64_t v) { uint8_t b[8]; cs_st64(b, (uint64_t)v); vset(r, col, b, 8); }
static inline void vset_double(vrow *r, const char *col, double v) { uint8_t b[8]; cs_st_double(b, v); vset(r, col, b, 8); }
static inline void vset_bool(vrow *r, const char *col, bool v) { uint8_t b = v; vset(r, col, &b, 1); }

/* An inet column from numeric text (127.0.0.1 when it does not parse). */
static inline void vset_inet(vrow *r, const char *col, const char *addr)
{
    uint8_t b[16];
    if (addr && inet_pton(AF_INET, addr, b) == 1) vset(r, col, b, 4);
    else if (addr && inet_pton(AF_INET6, addr, b) == 1) vset(r, col, b, 16);
    else { b[0] = 127; b[1] = 0; b[2] = 0; b[3] = 1; vset(r, col, b, 4); }
}

/* Hand the row to emit; 0, the store's error, or emit's. */
static inline int vemit(vrow *r, emit_fn emit, void *arg)
{
    if (r->store.err) return r->store.err;
    if (r->t->n_cols > VROW_MAX_COLS) return CS_EINVAL;
    const uint8_t *vals[VROW_MAX_COLS];
    for (int i = 0; i < r->t->n_cols; i++)
        vals[i] = r->len[i] >= 0 ? r->store.p + r->off[i] : NULL;
    return emit(arg, vals, r->len);
}

/* ---------------------------------------------------------------- rows callbacks
 * vtables_metrics.c: the per-table metric tables, cql_metrics, batch_metrics. */
int cql__vt_local_read_latency(cql_ctx *ctx, sch_table *t, emit_fn emit, void *arg);
int cql__vt_local_write_latency(cql_ctx *ctx, sch_table *t, emit_fn emit, void *arg);
int cql__vt_local_scan_latency(cql_ctx *ctx, sch_table *t, emit_fn emit, void *arg);
int cql__vt_tombstones_per_read(cql_ctx *ctx, sch_table *t, emit_fn emit, void *arg);
int cql__vt_rows_per_read(cql_ctx *ctx, sch_table *t, emit_fn emit, void *arg);
int cql__vt_disk_usage(cql_ctx *ctx, sch_table *t, emit_fn emit, void *arg);
int cql__vt_max_partition_size(cql_ctx *ctx, sch_table *t, emit_fn emit, void *arg);
int cql__vt_cql_metrics(cql_ctx *ctx, sch_table *t, emit_fn emit, void *arg);
int cql__vt_batch_metrics(cql_ctx *ctx, sch_table *t, emit_fn emit, void *arg);

/* vtables_node.c: gossip_info, queries, the auth cache keys tables. */
int cql__vt_gossip_info(cql_ctx *ctx, sch_table *t, emit_fn emit, void *arg);
int cql__vt_queries(cql_ctx *ctx, sch_table *t, emit_fn emit, void *arg);
int cql__vt_credentials_cache_keys(cql_ctx *ctx, sch_table *t, emit_fn emit, void *arg);

#endif
