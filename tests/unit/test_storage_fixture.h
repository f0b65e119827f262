/*
 * test_storage_fixture.h: the storage unit tests' one fixture, included by
 * every tests/unit/test_storage_*.c.  Each test runs in a process of its own
 * (criterion), so the per-process temp dir is the test's alone.
 *
 * The including file defines, before the #include:
 *   STORAGE_FIXTURE_TAG          the temp dir's name: /tmp/cs_<tag>_<pid>
 *   STORAGE_FIXTURE_TID          the table id, as an initializer: TID
 * and, to have the engine or a table opened for every test:
 *   STORAGE_FIXTURE_TABLE        the table name open_table uses ("t" if unset)
 *   STORAGE_FIXTURE_OPEN_ENGINE  setup opens E with the default config;
 *                                teardown closes it and checks that every
 *                                allocation was freed
 *   STORAGE_FIXTURE_OPEN_TABLE   the same, and T (open_table) in E
 *   STORAGE_FIXTURE_ROWS         with OPEN_TABLE: helpers writing partition
 *                                PK of T and dump(), its rows as text read
 *                                by a scan and by the point-read fast path
 *                                (which must agree); NOW is the clock at setup
 * and registers setup/teardown with its TestSuite (or calls fixture_dirs
 * itself).
 *
 * Directories: g_dir, with the engine's data in g_d (g_dir/data) and its
 * commit log in g_c (g_dir/cl); setup makes them fresh, teardown removes
 * them and clears the vfs fault hook.
 */
#ifndef CS_TEST_STORAGE_FIXTURE_H
#define CS_TEST_STORAGE_FIXTURE_H
#pragma GCC diagnostic ignored "-Wunused-function"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "storage/storage.h"
#include "common/alloc.h"
#include "common/arena.h"
#include "common/err.h"
#include "common/hash.h"
#include "common/util.h"
#include "common/vfs.h"

#ifndef STORAGE_FIXTURE_TABLE
#define STORAGE_FIXTURE_TABLE "t"
#endif
#if defined(STORAGE_FIXTURE_ROWS) && !defined(STORAGE_FIXTURE_OPEN_TABLE)
#define STORAGE_FIXTURE_OPEN_TABLE
#endif
#if defined(STORAGE_FIXTURE_OPEN_TABLE) && !defined(STORAGE_FIXTURE_OPEN_ENGINE)
#define STORAGE_FIXTURE_OPEN_ENGINE
#endif

static char g_dir[256], g_d[300], g_c[300];
static const uint8_t TID[16] = STORAGE_FIXTURE_TID;

/* Flip (xor 0x5a) the byte in the middle of the file at path: a corruption
 * inside a data block for the corruption tests. */
static void flip_middle_byte(const char *path)
{
    int64_t sz = vfs_file_size(path);
    int fd = vfs_open(path, O_RDWR, 0);
    cr_assert_geq(fd, 0, "%s", path);
    uint8_t b;
    cr_assert_eq(vfs_pread(fd, &b, 1, (uint64_t)sz / 2), 1);
    b ^= 0x5a;
    cr_assert_eq(vfs_pwrite(fd, &b, 1, (uint64_t)sz / 2), 1);
    vfs_close(fd);
}

/* g_dir, g_d and g_c for this process, removed if left from an earlier run. */
static void fixture_dirs(void)
{
    snprintf(g_dir, sizeof g_dir, "/tmp/cs_%s_%d", STORAGE_FIXTURE_TAG, (int)getpid());
    vfs_rmtree(g_dir);
    snprintf(g_d, sizeof g_d, "%s/data", g_dir);
    snprintf(g_c, sizeof g_c, "%s/cl", g_dir);
}

/* The default engine config over g_d and g_c, for the caller to adjust. */
static void fixture_config(st_config *cfg)
{
    st_config_defaults(cfg);
    cfg->data_dir = g_d;
    cfg->commitlog_dir = g_c;
}

/* The engine over g_d and g_c (kept across reopens), in sync mode `mode`,
 * with commit log segments of `seg` bytes (0: default). */
static st_engine *open_engine(int mode, size_t seg)
{
    st_config cfg;
    fixture_config(&cfg);
    cfg.sync_mode = mode;
    if (seg) cfg.segment_size = seg;
    st_engine *e;
    cr_assert_eq(st_engine_open(&cfg, &e), 0);
    return e;
}

/* Table ks.STORAGE_FIXTURE_TABLE, id TID, in e. */
static st_table *open_table(st_engine *e)
{
    st_table *t;
    cr_assert_eq(st_table_open(e, TID, "ks", STORAGE_FIXTURE_TABLE, NULL, &t), 0);
    return t;
}

#ifdef STORAGE_FIXTURE_OPEN_ENGINE
static st_engine *E;
#endif
#ifdef STORAGE_FIXTURE_OPEN_TABLE
static st_table *T;
#endif
#ifdef STORAGE_FIXTURE_ROWS
static int32_t NOW;
#endif

static void setup(void)
{
    fixture_dirs();
#ifdef STORAGE_FIXTURE_ROWS
    NOW = cs_now_s();
#endif
#ifdef STORAGE_FIXTURE_OPEN_ENGINE
    st_config cfg;
    fixture_config(&cfg);
    cr_assert_eq(st_engine_open(&cfg, &E), 0);
#endif
#ifdef STORAGE_FIXTURE_OPEN_TABLE
    T = open_table(E);
#endif
}

static void teardown(void)
{
#ifdef STORAGE_FIXTURE_OPEN_ENGINE
    st_engine_close(E, false);
#endif
    vfs_set_fault(NULL, NULL);
    vfs_rmtree(g_dir);
#ifdef STORAGE_FIXTURE_OPEN_ENGINE
    cr_assert_eq(cs_alloc_count(), 0, "leak %zu", cs_alloc_count());
#endif
}

#ifdef STORAGE_FIXTURE_ROWS
/* ---------------------------------------------------------------- rows of T */

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

#endif
