/*
 * result.c: RESULT message bodies (spec v4 §4.2.5) and cql_result lifecycle.
 * Owner: exec-read.  Callers: every executor and the catalog (via cql_int.h).
 *
 * The Rows writer streams rows straight into r->body.  Two things are only
 * known at the end: the row count (patched in place) and the paging state,
 * which the spec puts inside the metadata, between columns_count and the
 * column specs; cql_rows_end inserts it there by moving the column specs.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stddef.h>
#include <string.h>
#include "cql/cql_int.h"
#include "common/alloc.h"

enum {
    ROWS_FLAG_GLOBAL_TABLES_SPEC = 0x0001,
    ROWS_FLAG_HAS_MORE_PAGES = 0x0002,
    ROWS_FLAG_NO_METADATA = 0x0004,
};
enum { KIND_VOID = 1, KIND_ROWS = 2, KIND_SET_KEYSPACE = 3, KIND_SCHEMA_CHANGE = 5 };

void cql_result_init(cql_result *r)
{
    /* Everything but the ~1 KB schema change, which is only read when
     * schema_changed is set and is cleared by whoever sets it (result.c,
     * exec_ddl.c): its strings are just emptied. */
    memset(r, 0, offsetof(cql_result, change));
    r->change.change_type[0] = r->change.target[0] = r->change.keyspace[0] = '\0';
    r->change.name[0] = r->change.arg_types[0] = '\0';
    memset((char *)r + offsetof(cql_result, need_sync), 0, sizeof(*r) - offsetof(cql_result, need_sync));
    cs_buf_init(&r->body);
}

void cql_result_destroy(cql_result *r)
{
    cs_buf_destroy(&r->body);
    for (int i = 0; i < r->n_warnings; i++)
        cs_free(r->warnings[i]);
    cs_free(r->warnings);
    r->warnings = NULL;
    r->n_warnings = 0;
}

/* Append a client warning (carried in the response frame's warning list). */
void cql_result_warn(cql_result *r, const char *fmt, ...)
{
    char tmp[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    char **nw = cs_realloc(r->warnings, sizeof(char *) * (size_t)(r->n_warnings + 1));
    if (!nw)
        return;
    r->warnings = nw;
    char *s = cs_strdup(tmp);
    if (!s)
        return;
    r->warnings[r->n_warnings++] = s;
}

void cql_result_void(cql_result *r)
{
    cs_buf_reset(&r->body);
    cs_buf_put_u32(&r->body, KIND_VOID);
}

void cql_result_set_keyspace(cql_result *r, const char *ks)
{
    cs_buf_reset(&r->body);
    cs_buf_put_u32(&r->body, KIND_SET_KEYSPACE);
    cs_buf_put_string(&r->body, ks);
}

/* Schema_change result (spec v4 §4.2.5.5); also records the change so the
 * server can push the matching EVENT.  arg_types is comma-separated. */
void cql_result_schema_change(cql_result *r, const char *change, const char *target,
                              const char *ks, const char *name, const char *arg_types)
{
    cs_buf *b = &r->body;
    cs_buf_reset(b);
    cs_buf_put_u32(b, KIND_SCHEMA_CHANGE);
    cs_buf_put_string(b, change);
    cs_buf_put_string(b, target);
    cs_buf_put_string(b, ks);
    bool is_fn = !strcmp(target, "FUNCTION") || !strcmp(target, "AGGREGATE");
    if (strcmp(target, "KEYSPACE") != 0)
        cs_buf_put_string(b, name ? name : "");
    if (is_fn) {
        /* [string list] of argument types */
        const char *a = arg_types ? arg_types : "";
        int n = 0;
        if (*a) {
            n = 1;
            for (const char *q = a; *q; q++)
                if (*q == ',')
                    n++;
        }
        cs_buf_put_u16(b, (uint16_t)n);
        const char *s = a;
        for (int i = 0; i < n; i++) {
            const char *e = strchr(s, ',');
            size_t len = e ? (size_t)(e - s) : strlen(s);
            while (len && *s == ' ') {
                s++;
                len--;
            }
            cs_buf_put_stringn(b, s, len);
            s = e ? e + 1 : s + len;
        }
    }
    r->schema_changed = true;
    memset(&r->change, 0, sizeof(r->change));
    snprintf(r->change.change_type, sizeof(r->change.change_type), "%s", change);
    snprintf(r->change.target, sizeof(r->change.target), "%s", target);
    snprintf(r->change.keyspace, sizeof(r->change.keyspace), "%s", ks ? ks : "");
    snprintf(r->change.name, sizeof(r->change.name), "%s", name ? name : "");
    snprintf(r->change.arg_types, sizeof(r->change.arg_types), "%s", arg_types ? arg_types : "");
}

/* ---------------------------------------------------------------- Rows */

void cql_rows_begin(cql_rows *w, cql_result *r, int version, const char *ks, const char *table,
                    int n_cols, bool no_metadata)
{
    memset(w, 0, sizeof(*w));
    w->r = r;
    w->n_cols = n_cols;
    w->no_metadata = no_metadata;
    w->version = version;
    cs_buf *b = &r->body;
    cs_buf_reset(b);
    cs_buf_put_u32(b, KIND_ROWS);
    w->flags_off = b->len;
    cs_buf_put_u32(b, no_metadata ? ROWS_FLAG_NO_METADATA : ROWS_FLAG_GLOBAL_TABLES_SPEC);
    cs_buf_put_u32(b, (uint32_t)n_cols);
    w->ps_insert_off = b->len;
    if (!no_metadata) {
        cs_buf_put_string(b, ks ? ks : "");
        cs_buf_put_string(b, table ? table : "");
    }
    if (no_metadata || n_cols == 0) {
        w->count_off = b->len;
        cs_buf_put_u32(b, 0);
    }
}

void cql_rows_col(cql_rows *w, const char *name, const ctype *type)
{
    if (w->cols_added >= w->n_cols)
        return;
    w->cols_added++;
    if (!w->no_metadata) {
        cs_buf_put_string(&w->r->body, name);
        ctype_encode_option_v(type, w->version, &w->r->body);
    }
    if (w->cols_added == w->n_cols && !w->count_off) {
        w->count_off = w->r->body.len;
        cs_buf_put_u32(&w->r->body, 0);
    }
}

/* One cell value of the current row; rows are n_cols consecutive values. */
void cql_rows_value(cql_rows *w, const uint8_t *p, int32_t len)
{
    if (w->cols_added < w->n_cols)       /* metadata skipped or incomplete */
        w->cols_added = w->n_cols;
    if (!w->count_off) {
        w->count_off = w->r->body.len;
        cs_buf_put_u32(&w->r->body, 0);
    }
    cs_buf_put_bytes(&w->r->body, p, len < 0 ? -1 : len);
    w->cols_added++;
    if (w->n_cols > 0)
        w->n_rows = (w->cols_added - w->n_cols) / w->n_cols;
}

void cql_rows_end(cql_rows *w, const uint8_t *paging_state, int32_t ps_len)
{
    cs_buf *b = &w->r->body;
    if (!w->count_off) {
        w->count_off = b->len;
        cs_buf_put_u32(b, 0);
    }
    if (b->err)
        return;
    cs_buf_patch_u32(b, w->count_off, (uint32_t)w->n_rows);
    if (ps_len >= 0) {
        uint32_t flags = cs_be32(b->p + w->flags_off) | ROWS_FLAG_HAS_MORE_PAGES;
        cs_buf_patch_u32(b, w->flags_off, flags);
        size_t ins = 4 + (size_t)ps_len;
        size_t tail = b->len - w->ps_insert_off;
        if (!cs_buf_extend(b, ins))
            return;
        memmove(b->p + w->ps_insert_off + ins, b->p + w->ps_insert_off, tail);
        cs_st32(b->p + w->ps_insert_off, (uint32_t)ps_len);
        if (ps_len)
            memcpy(b->p + w->ps_insert_off + 4, paging_state, (size_t)ps_len);
    }
}
