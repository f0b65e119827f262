/*
 * test_storage_read_fixture.h: an engine in a per-process temp dir with one
 * table T, mutation helpers for partition PK, and dump(): its rows as text,
 * read by a scan and by the point-read fast path, which must agree.  Shared
 * by test_storage_read.c and test_storage_snapshot.c; the including file
 * defines READ_FIXTURE_TAG (the temp dir name) first and registers
 * setup/teardown with its TestSuite.
 */
#ifndef CS_TEST_STORAGE_READ_FIXTURE_H
#define CS_TEST_STORAGE_READ_FIXTURE_H
#pragma GCC diagnostic ignored "-Wunused-function"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "storage/storage.h"
#include "storage/sstable_int.h"
#include "common/alloc.h"
#include "common/arena.h"
#include "common/err.h"
#include "common/hash.h"
#include "common/util.h"
#include "common/vfs.h"

static char g_dir[256], g_d[300], g_c[300];
static st_engine *E;
static st_table *T;
static const uint8_t TID[16] = { 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3 };
static int32_t NOW;

static void setup(void)
{
    snprintf(g_dir, sizeof g_dir, "/tmp/cs_%s_%d", READ_FIXTURE_TAG, (int)getpid());
    NOW = cs_now_s();
    vfs_rmtree(g_dir);
    snprintf(g_d, sizeof g_d, "%s/data", g_dir);
    snprintf(g_c, sizeof g_c, "%s/cl", g_dir);
    st_config cfg;
    st_config_defaults(&cfg);
    cfg.data_dir = g_d; cfg.commitlog_dir = g_c;
    cr_assert_eq(st_engine_open(&cfg, &E), 0);
    cr_assert_eq(st_table_open(E, TID, "ks", "r", NULL, &T), 0);
}

static void teardown(void)
{
    st_engine_close(E, false);
    vfs_rmtree(g_dir);
    cr_assert_eq(cs_alloc_count(), 0, "leak %zu", cs_alloc_count());
}

static const uint8_t PK[] = { 'k' };

static st_mutation *mut(void)
{
    st_mutation *m = st_mutation_new();
    st_mut_partition(m, T, PK, 1);
    return m;
}

static void commit(st_mutation *m)
{
    cr_assert_eq(st_write(E, m, NULL), 0);
    st_mutation_free(m);
}

static void cell(st_mutation *m, uint32_t col, int64_t ts, const char *v)
{
    st_cell c = { .col = col, .ts_us = ts, .val = (const uint8_t *)v, .val_len = (uint32_t)strlen(v) };
    st_mut_cell(m, &c);
}

/* One row as "ck:col=v,col=v;" text. */
static size_t fmt_row(char *out, size_t n, const st_row_view *r)
{
    size_t len = (size_t)snprintf(out, n, "%s%.*s:", (r->flags & ST_ROW_STATIC) ? "S" : "",
                                  (int)r->ck_len, (const char *)r->ck);
    if (r->liveness.ts_us != INT64_MIN) len += (size_t)snprintf(out + len, n - len, "m,");
    for (int i = 0; i < r->n_cells; i++)
        len += (size_t)snprintf(out + len, n - len, "%u%s%.*s=%.*s,", r->cells[i].col,
                                r->cells[i].path_len ? "/" : "", (int)r->cells[i].path_len,
                                (const char *)r->cells[i].path, (int)r->cells[i].val_len,
                                (const char *)r->cells[i].val);
    len += (size_t)snprintf(out + len, n - len, ";");
    return len;
}

/* Rows of partition pk read by a scan, as text; *found: next_partition said 1. */
static void dump_scan(const st_read_spec *rs, char *out, size_t n, st_scan_stats *stats, bool *found)
{
    st_scan *s;
    cr_assert_eq(st_scan_open(T, rs, &s), 0);
    st_partition_view p;
    size_t len = 0;
    out[0] = 0;
    *found = false;
    if (st_scan_next_partition(s, &p) == 1) {
        *found = true;
        st_row_view r;
        while (st_scan_next_row(s, &r) == 1) {
            len += fmt_row(out + len, n - len, &r);
            cr_assert_lt(len, n, "dump buffer too small");
        }
    }
    if (stats) *stats = *st_scan_stats_get(s);
    st_scan_close(s);
}

/* A point read (st_read_point) as text, one row at a time by f. */
typedef size_t (*row_text_fn)(char *out, size_t n, const st_row_view *r, const void *arg);

static void point_text(const st_read_spec *rs, row_text_fn f, const void *arg, char *out, size_t n,
                       st_scan_stats *stats, bool *found)
{
    cs_arena a;
    cs_arena_init(&a);
    st_point pt;
    int rc = st_read_point(T, rs, &a, &pt);
    cr_assert_geq(rc, 0);
    if (found) *found = rc == 1;
    size_t len = 0;
    out[0] = 0;
    for (int i = 0; rc == 1 && i < pt.n_rows; i++) {
        len += f(out + len, n - len, &pt.rows[i], arg);
        cr_assert_lt(len, n, "dump buffer too small");
    }
    if (rc == 1) cr_assert(pt.part.pk_len == rs->pk_len && !memcmp(pt.part.pk, rs->pk, rs->pk_len));
    if (stats) *stats = pt.stats;
    cs_arena_destroy(&a);
}

static size_t fmt_row_text(char *out, size_t n, const st_row_view *r, const void *arg)
{
    (void)arg;
    return fmt_row(out, n, r);
}

/* The same through the point-read fast path (st_read_point). */
static void dump_point(const st_read_spec *rs, char *out, size_t n, st_scan_stats *stats, bool *found)
{
    point_text(rs, fmt_row_text, NULL, out, n, stats, found);
}

/* Scan and fast path must agree on rows, presence and stats. */
static void dump_spec(const st_read_spec *rs, char *out, size_t n, st_scan_stats *stats)
{
    static char fast[1 << 20];
    st_scan_stats s1, s2;
    bool f1, f2;
    dump_scan(rs, out, n, &s1, &f1);
    dump_point(rs, fast, sizeof fast, &s2, &f2);
    cr_assert_str_eq(fast, out, "st_read_point differs from the scan");
    cr_assert_eq(f1, f2, "st_read_point: found %d, scan %d", f2, f1);
    cr_assert(!memcmp(&s1, &s2, sizeof s1), "st_read_point stats differ: tomb %lu/%lu rows %lu/%lu read %lu/%lu skipped %lu/%lu",
              (unsigned long)s2.tombstones, (unsigned long)s1.tombstones, (unsigned long)s2.rows, (unsigned long)s1.rows,
              (unsigned long)s2.sstables_read, (unsigned long)s1.sstables_read,
              (unsigned long)s2.sstables_skipped, (unsigned long)s1.sstables_skipped);
    if (stats) *stats = s1;
}

/* Rows of partition PK as "ck:col=v,col=v;" text (scan and fast path). */
static void dump(char *out, size_t n, bool stat, bool rev, st_scan_stats *stats)
{
    st_read_spec rs = { .pk = PK, .pk_len = 1, .include_static = stat, .reversed = rev, .now_s = NOW };
    dump_spec(&rs, out, n, stats);
}

/* Same result before and after a flush and after a major compaction. */
static void expect(const char *want, bool stat, bool rev)
{
    char got[2048];
    dump(got, sizeof got, stat, rev, NULL);
    cr_assert_str_eq(got, want, "memtable");
    cr_assert_eq(st_table_flush(T), 0);
    dump(got, sizeof got, stat, rev, NULL);
    cr_assert_str_eq(got, want, "after flush");
    cr_assert_eq(st_table_compact(T), 0);
    dump(got, sizeof got, stat, rev, NULL);
    cr_assert_str_eq(got, want, "after compaction");
}

#endif
