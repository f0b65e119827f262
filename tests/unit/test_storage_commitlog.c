/*
 * test_storage_commitlog.c: commit log edges and faults, B+tree checks.
 *  - records filling a segment to the byte, the next one opening a new segment
 *  - a corrupt record in a middle segment: that segment's tail dropped, later
 *    segments still replayed
 *  - oversized mutation -> CS_ETOOBIG; empty mutation; sticky builder errors
 *  - EIO on append -> st_write fails, nothing applied
 *  - EIO during flush -> error, data still readable and replayable
 *  - segments recycled after flush
 *  - B+tree: ordered inserts, random inserts, seeks both ways
 *  - batch mode gathering: a lone writer never waits, a gathering round
 *    starts at its bound, writers coming back quickly share one fsync, and
 *    no acknowledgement precedes the fsync covering its write; a writer on
 *    a deferring thread is never stranded in a gathering window
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "storage/storage.h"
#include "storage/storage_int.h"
#include "storage/commitlog.h"
#include "common/alloc.h"
#include "common/err.h"
#include "common/util.h"
#include "common/vfs.h"
#include "test_log_capture.h"

#include <uv.h>

#define STORAGE_FIXTURE_TAG "st_clog"
#define STORAGE_FIXTURE_TID { 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4 }
#include "test_storage_fixture.h"

static st_engine *eopen(size_t seg, st_table **t)
{
    st_config cfg;
    fixture_config(&cfg);
    cfg.segment_size = seg;
    st_engine *e;
    cr_assert_eq(st_engine_open(&cfg, &e), 0);
    cr_assert_eq(st_table_open(e, TID, "ks", "cl", NULL, t), 0);
    return e;
}

/* Write a row whose value makes the whole record exactly rec_bytes long. */
static st_clog_pos g_pos;
static int put(st_engine *e, st_table *t, uint32_t i, uint32_t vlen)
{
    static uint8_t v[70000];
    uint8_t ck[4] = { (uint8_t)(i >> 24), (uint8_t)(i >> 16), (uint8_t)(i >> 8), (uint8_t)i };
    st_mutation *m = st_mutation_new();
    st_mut_partition(m, t, (const uint8_t *)"pk", 2);
    st_mut_row(m, ck, 4, 0);
    st_cell c = { .col = 1, .ts_us = 5, .val = v, .val_len = vlen };
    st_mut_cell(m, &c);
    int rc = st_write(e, m, &g_pos);
    st_mutation_free(m);
    return rc;
}

static int rows(st_table *t)
{
    st_read_spec rs = { .pk = (const uint8_t *)"pk", .pk_len = 2 };
    st_scan *s;
    cr_assert_eq(st_scan_open(t, &rs, &s), 0);
    st_partition_view p;
    st_row_view r;
    int n = 0;
    if (st_scan_next_partition(s, &p) == 1) while (st_scan_next_row(s, &r) == 1) n++;
    st_scan_close(s);
    return n;
}

/* Files in the commit log directory whose names start with prefix. */
static int n_files(const char *prefix)
{
    char **names; int n;
    if (vfs_list(g_c, &names, &n)) return -1;
    int k = 0;
    for (int i = 0; i < n; i++) k += strncmp(names[i], prefix, strlen(prefix)) == 0;
    vfs_list_free(names, n);
    return k;
}
static int n_segments(void) { return n_files("CommitLog-"); }
static int n_spares(void) { return n_files("CommitLogSpare-"); }

/* Name of the k-th segment in id order (static buffer). */
static const char *nth_segment(int k)
{
    static char name[256];
    char **names; int n;
    cr_assert_eq(vfs_list(g_c, &names, &n), 0);
    uint64_t ids[64]; unsigned vers[64]; int m = 0;
    for (int i = 0; i < n && m < 64; i++) {
        unsigned v; unsigned long long id;
        if (sscanf(names[i], "CommitLog-%u-%llu.log", &v, &id) == 2) { ids[m] = id; vers[m++] = v; }
    }
    vfs_list_free(names, n);
    for (int i = 0; i < m; i++)
        for (int j = i + 1; j < m; j++)
            if (ids[j] < ids[i]) {
                uint64_t x = ids[i]; ids[i] = ids[j]; ids[j] = x;
                unsigned w = vers[i]; vers[i] = vers[j]; vers[j] = w;
            }
    cr_assert_lt(k, m);
    snprintf(name, sizeof name, "CommitLog-%u-%llu.log", vers[k], (unsigned long long)ids[k]);
    return name;
}

static void reopen_replay(st_engine **e, st_table **t, size_t seg)
{
    st_engine_close(*e, false);
    *e = eopen(seg, t);
    cr_assert_eq(st_engine_replay(*e, NULL, NULL), 0);
    cr_assert_eq(st_engine_replay_done(*e), 0);
}

TestSuite(storage_commitlog, .init = setup, .fini = teardown);

Test(storage_commitlog, exact_segment_fill)
{
    st_table *t;
    st_engine *e = eopen(4096, &t);
    /* Record overhead: 12 bytes framing; payload = ops.  Find payload size of a
     * 0-byte value, then size values so two records fill 4096 - 24 exactly. */
    st_clog_pos a, b;
    st_mutation *m = st_mutation_new();
    st_mut_partition(m, t, (const uint8_t *)"pk", 2);
    st_mut_row(m, (const uint8_t *)"\0\0\0\0", 4, 0);
    st_cell c = { .col = 1, .ts_us = 5, .val = NULL, .val_len = 0 };
    st_mut_cell(m, &c);
    cr_assert_eq(st_write(e, m, &a), 0);
    st_mutation_free(m);
    cr_assert_eq(put(e, t, 1, 0), 0);
    (void)b;
    /* Fill the rest of segment 1 exactly: medium records, then one sized to the byte. */
    uint64_t rec0 = a.offset - 24;                      /* a record with a 0-byte value */
    uint32_t i = 2;
    while (4096 - g_pos.offset > 2000) cr_assert_eq(put(e, t, i++, 1000), 0);
    uint64_t left = 4096 - g_pos.offset;
    /* A value of L >= 128 bytes adds L bytes plus one more length byte. */
    uint32_t vlen = (uint32_t)(left - rec0 - 1);
    cr_assert_eq(put(e, t, i++, vlen), 0);
    cr_assert_eq(g_pos.offset, 4096);
    uint64_t seg1 = g_pos.segment;
    cr_assert_eq(n_segments(), 1, "exactly full segment should not roll");
    cr_assert_eq(put(e, t, i++, 0), 0);
    cr_assert_eq(n_segments(), 2);
    cr_assert_eq(g_pos.segment, seg1 + 1);
    reopen_replay(&e, &t, 4096);
    cr_assert_eq(rows(t), (int)i);
    /* Oversized record (> segment/2). */
    cr_assert_eq(put(e, t, 4, 3000), CS_ETOOBIG);
    st_engine_close(e, false);
    cr_assert_eq(cs_alloc_count(), 0);
}

Test(storage_commitlog, corrupt_middle_segment)
{
    st_table *t;
    st_engine *e = eopen(4096, &t);
    for (uint32_t i = 0; i < 100; i++) cr_assert_eq(put(e, t, i, 100), 0);
    st_engine_close(e, false);
    /* Corrupt one byte in the middle of the second segment. */
    char p[400];
    snprintf(p, sizeof p, "%s/%s", g_c, nth_segment(1));
    int fd = open(p, O_RDWR);
    cr_assert_geq(fd, 0);
    uint8_t x;
    cr_assert_eq(pread(fd, &x, 1, 2000), 1);
    x ^= 0xff;
    cr_assert_eq(pwrite(fd, &x, 1, 2000), 1);
    close(fd);
    e = eopen(4096, &t);
    cr_assert_eq(st_engine_replay(e, NULL, NULL), 0);
    st_engine_replay_done(e);
    int n = rows(t);
    cr_assert_lt(n, 100);
    cr_assert_gt(n, 80, "only segment 2's tail may be lost, got %d", n);
    st_engine_close(e, false);
    cr_assert_eq(cs_alloc_count(), 0);
}

Test(storage_commitlog, builder_errors)
{
    st_table *t;
    st_engine *e = eopen(1 << 20, &t);
    st_mutation *m = st_mutation_new();
    cr_assert(st_mutation_empty(m));
    cr_assert_eq(st_write(e, m, NULL), 0);
    st_mut_row(m, (const uint8_t *)"x", 1, 0);   /* row before partition: sticky error */
    st_mut_partition(m, t, (const uint8_t *)"pk", 2);
    cr_assert_eq(st_write(e, m, NULL), CS_EINVAL);
    st_mutation_free(m);
    m = st_mutation_new();
    st_mut_partition(m, t, (const uint8_t *)"pk", 2);
    st_mut_row(m, (const uint8_t *)"x", 1, ST_ROW_STATIC);   /* static row with a clustering */
    cr_assert_eq(st_write(e, m, NULL), CS_EINVAL);
    st_mutation_free(m);
    cr_assert_eq(rows(t), 0);
    st_engine_close(e, false);
    cr_assert_eq(cs_alloc_count(), 0);
}

static int g_fail_op;
static int fail_cb(int op, const char *path, void *arg)
{
    (void)path; (void)arg;
    return op == g_fail_op ? EIO : 0;
}

Test(storage_commitlog, io_errors)
{
    st_table *t;
    st_engine *e = eopen(1 << 20, &t);
    cr_assert_eq(put(e, t, 1, 10), 0);
    g_fail_op = VFS_OP_WRITE;
    vfs_set_fault(fail_cb, NULL);
    cr_assert_eq(put(e, t, 2, 10), CS_EIO);
    vfs_set_fault(NULL, NULL);
    cr_assert_eq(rows(t), 1, "a failed append must not be applied");
    cr_assert_eq(put(e, t, 3, 10), 0);
    /* Flush fails: data stays readable, error reported, replay recovers. */
    g_fail_op = VFS_OP_SYNC;
    vfs_set_fault(fail_cb, NULL);
    cr_assert_eq(st_table_flush(t), CS_EIO);
    vfs_set_fault(NULL, NULL);
    cr_assert_eq(rows(t), 2);
    /* The next flush publishes the failed memtable first, then the new one. */
    cr_assert_eq(put(e, t, 4, 10), 0);
    cr_assert_eq(st_table_flush(t), 0);
    st_table_stats ts;
    cr_assert_eq(st_table_stats_get(t, &ts), 0);
    cr_assert_eq(ts.sstable_count, 2);
    cr_assert_eq(ts.pending_flushes, 0);
    cr_assert_eq(rows(t), 3);
    reopen_replay(&e, &t, 1 << 20);
    cr_assert_eq(rows(t), 3);
    /* Flush fails, then a restart without a successful flush: replay recovers. */
    cr_assert_eq(put(e, t, 5, 10), 0);
    vfs_set_fault(fail_cb, NULL);
    cr_assert_eq(st_table_flush(t), CS_EIO);
    vfs_set_fault(NULL, NULL);
    reopen_replay(&e, &t, 1 << 20);
    cr_assert_eq(rows(t), 4);
    st_engine_close(e, false);
    cr_assert_eq(cs_alloc_count(), 0);
}

Test(storage_commitlog, segments_recycled_after_flush)
{
    st_table *t;
    st_engine *e = eopen(4096, &t);
    for (uint32_t i = 0; i < 200; i++) cr_assert_eq(put(e, t, i, 100), 0);
    int before = n_segments();
    cr_assert_gt(before, 5);
    cr_assert_eq(n_spares(), 0);
    cr_assert_eq(st_table_flush(t), 0);
    cr_assert_eq(n_segments(), 1, "all but the active segment recycled");
    cr_assert_eq(n_spares(), before - 1, "the recycled files are kept as spares");
    /* New segments are the spares, renamed: no file is created. */
    for (uint32_t i = 200; i < 260; i++) cr_assert_eq(put(e, t, i, 100), 0);
    cr_assert_gt(n_segments(), 2);
    cr_assert_eq(n_segments() + n_spares(), before, "%d segments, %d spares", n_segments(), n_spares());
    reopen_replay(&e, &t, 4096);
    cr_assert_eq(n_spares(), 0, "spares are deleted at close");
    cr_assert_eq(rows(t), 260);
    st_engine_close(e, true);
    cr_assert_eq(cs_alloc_count(), 0);
}

/* Run fn in a forked child that exits without closing anything, as if
 * killed (fn _exits non-zero on a failure); the files are then what a
 * crash leaves. */
static void run_killed(void (*fn)(void))
{
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        fn();
        _exit(0);
    }
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %d", st);
}

/* Open the engine and replay the commit log, its log captured in log[cap]. */
static st_engine *replay_logged(st_table **t, char *log, size_t cap)
{
    char lp[400];
    snprintf(lp, sizeof lp, "%s.log", g_dir);
    test_log_capture c;
    log_capture_begin(&c, lp);
    st_engine *e = eopen(4096, t);
    int rc = st_engine_replay(e, NULL, NULL);
    log_capture_end(&c, log, cap);
    cr_assert_eq(rc, 0);
    return e;
}

/* Rows written and flushed (their segments become spares), truncated; then
 * 40 rows go to reused segments. */
static void write_truncate_reuse(void)
{
    st_table *t;
    st_engine *e = eopen(4096, &t);
    for (uint32_t i = 0; i < 200; i++) if (put(e, t, i, 100)) _exit(2);
    if (st_table_flush(t) || n_spares() < 5) _exit(3);
    if (st_table_truncate(t)) _exit(4);
    int spares = n_spares();
    for (uint32_t i = 1000; i < 1040; i++) if (put(e, t, i, 100)) _exit(5);
    if (n_spares() >= spares) _exit(6);    /* the new rows went to reused files */
}

/* Records a reused file kept from its earlier segments are never replayed:
 * after a crash (write_truncate_reuse), replay finds exactly the 40 new
 * rows, and no warning: the old bytes are an expected end, not damage. */
Test(storage_commitlog, reused_segment_old_records_not_replayed)
{
    run_killed(write_truncate_reuse);
    char log[8192];
    st_table *t;
    st_engine *e = replay_logged(&t, log, sizeof log);
    cr_assert_eq(st_engine_replay_done(e), 0);
    cr_assert_eq(rows(t), 40, "only the rows written after the truncate");
    cr_assert(strstr(log, "WARN") == NULL, "%s", log);
    st_engine_close(e, false);
    cr_assert_eq(cs_alloc_count(), 0);
}

/* Rows flushed, then new rows until two more segments, reused files, are
 * in use. */
static void write_reuse_two(void)
{
    st_table *t;
    st_engine *e = eopen(4096, &t);
    for (uint32_t i = 0; i < 200; i++) if (put(e, t, i, 100)) _exit(2);
    if (st_table_flush(t)) _exit(3);
    uint64_t seg = g_pos.segment;
    for (uint32_t i = 1000; i < 1100 && g_pos.segment < seg + 2; i++) if (put(e, t, i, 100)) _exit(5);
}

/* In a reused segment, a damaged record followed by records of the same
 * segment is reported (naming the file and both offsets), not taken for
 * the end of the segment's records. */
Test(storage_commitlog, reused_segment_damage_reported)
{
    run_killed(write_reuse_two);
    /* The second segment of the new rows is a reused file: flip a byte in
     * its first record's length. */
    char p[400];
    snprintf(p, sizeof p, "%s/%s", g_c, nth_segment(1));
    int fd = open(p, O_RDWR);
    cr_assert_geq(fd, 0);
    uint8_t hdr[24], x;
    cr_assert_eq(pread(fd, hdr, 24, 0), 24);
    cr_assert_eq(hdr[19] & 1, 1, "a reused segment");
    cr_assert_eq(pread(fd, &x, 1, 24 + 2), 1);
    x ^= 0x40;
    cr_assert_eq(pwrite(fd, &x, 1, 24 + 2), 1);
    close(fd);
    char log[8192];
    st_table *t;
    st_engine *e = replay_logged(&t, log, sizeof log);
    cr_assert(strstr(log, "corrupt record length at offset 24") != NULL, "%s", log);
    cr_assert(strstr(log, "a record of this segment follows at offset") != NULL, "%s", log);
    cr_assert(strstr(log, nth_segment(1)) != NULL, "%s", log);
    st_engine_replay_done(e);
    st_engine_close(e, false);
    cr_assert_eq(cs_alloc_count(), 0);
}

static int icmp(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
    return x < y ? -1 : x > y;
}

/* A coarse order hint: many items share one (exercises the tie path). */
static uint64_t ihint(const void *a) { return (uint64_t)(uintptr_t)a >> 4; }

/* Inserts through st__btree_find_from with leaves hinted for a batch of
 * keys before any of them went in (st__btree_prefetch_many), so that
 * within a batch some hinted leaves have split (stale, the descent is
 * redone) and some not (taken): the tree holds every item in order, each
 * found where st__btree_find finds it. */
Test(storage_commitlog, btree_insert_from_hinted_leaves)
{
    for (int mode = 0; mode < 2; mode++) {
        st__btree t;
        if (mode) st__btree_init_hint(&t, icmp, ihint);
        else st__btree_init(&t, icmp);
        enum { N = 6000, B = 24 };
        int fresh = 0, stale = 0;
        for (int b = 0; b < N; b += B) {
            const void *keys[B];
            st__bleaf lf[B];
            memset(lf, 0, sizeof lf);
            for (int j = 0; j < B; j++) keys[j] = (const void *)(uintptr_t)(((b + j) * 7919 % N + 1) * 2);
            st__btree_prefetch_many(&t, keys, B, lf);
            for (int j = 0; j < B; j++) {
                st__bpos pos;
                if (lf[j].leaf) st__bleaf_fresh(&lf[j]) ? fresh++ : stale++;
                cr_assert_null(st__btree_find_from(&t, keys[j], &lf[j], &pos));
                cr_assert_eq(st__btree_insert_at(&t, &pos, (void *)keys[j]), 0);
            }
        }
        cr_assert(fresh > N / 2 && stale > 20, "fresh %d, stale %d", fresh, stale);
        cr_assert_eq(st__btree_check(&t), 0);
        cr_assert_eq(t.count, (size_t)N);
        st__biter it;
        st__btree_seek(&t, NULL, false, &it);
        for (uintptr_t want = 2; want <= 2 * N; want += 2, st__biter_next(&it))
            cr_assert_eq((uintptr_t)st__biter_get(&it), want);
        cr_assert_null(st__biter_get(&it));
        st__btree_destroy(&t, NULL);
    }
    cr_assert_eq(cs_alloc_count(), 0);
}

Test(storage_commitlog, btree_order_and_seek)
{
    for (int mode = 0; mode < 12; mode++) {
        st__btree t;
        if (mode & 4) st__btree_init_hint(&t, icmp, ihint);
        else st__btree_init(&t, icmp);
        /* the prefetch hint (descents of many keys together) on an empty
         * tree, and below on the full one (keys present and absent, equal
         * hints, more than it takes), changes nothing */
        const void *pk[ST__BTREE_PREFETCH_MAX + 8];
        for (int i = 0; i < ST__BTREE_PREFETCH_MAX + 8; i++) pk[i] = (const void *)(uintptr_t)(i * 613 % 10007 + 1);
        st__btree_prefetch_many(&t, pk, 3, NULL);
        int n = 5000;
        for (int i = 0; i < n; i++) {
            int order = mode & 3;
            uintptr_t v = order == 0 ? (uintptr_t)(i + 1) * 2 : order == 1 ? (uintptr_t)(n - i) * 2
                                                                           : (uintptr_t)((i * 7919) % n + 1) * 2;
            if (mode & 8) {
                /* one descent: find (absent) then insert at the position found */
                st__bpos pos;
                cr_assert_null(st__btree_find(&t, (void *)v, &pos));
                cr_assert_eq(st__btree_insert_at(&t, &pos, (void *)v), 0);
                cr_assert_eq((uintptr_t)st__btree_find(&t, (void *)v, &pos), v);
            } else {
                cr_assert_eq(st__btree_insert(&t, (void *)v), 0);
            }
        }
        st__btree_prefetch_many(&t, pk, ST__BTREE_PREFETCH_MAX + 8, NULL);
        st__btree_prefetch_many(&t, pk, 1, NULL);
        cr_assert_eq(st__btree_check(&t), 0);
        cr_assert_eq(t.count, (size_t)n);
        for (int k = 1; k <= 2 * n + 2; k += 7) {
            /* find from a hinted leaf (fresh: the tree did not change) */
            const void *key = (const void *)(uintptr_t)k;
            st__bleaf lf = { NULL, 0 };
            st__btree_prefetch_many(&t, &key, 1, &lf);
            st__bpos p1, p2;
            cr_assert_eq(st__btree_find_from(&t, key, &lf, &p1), st__btree_find(&t, key, &p2));
            cr_assert(p1.leaf == p2.leaf && p1.idx == p2.idx, "find_from %d", k);
            st__biter it;
            st__btree_seek(&t, (void *)(uintptr_t)k, false, &it);
            uintptr_t want = k < 2 ? 2 : (uintptr_t)((k + 1) / 2 * 2);
            void *got = st__biter_get(&it);
            if (want > (uintptr_t)2 * n) cr_assert_null(got);
            else cr_assert_eq((uintptr_t)got, want, "seek %d", k);
            st__btree_seek_rev(&t, (void *)(uintptr_t)k, true, &it);
            got = st__biter_get(&it);
            uintptr_t wr = (uintptr_t)((k - 1) / 2 * 2);
            if (k <= 2) cr_assert_null(got);
            else if (wr > (uintptr_t)2 * n) cr_assert_eq((uintptr_t)got, (uintptr_t)2 * n);
            else cr_assert_eq((uintptr_t)got, wr, "seek_rev %d", k);
            st__btree_seek(&t, (void *)(uintptr_t)k, true, &it);       /* first > k */
            got = st__biter_get(&it);
            uintptr_t ws = (uintptr_t)(k / 2 + 1) * 2;
            if (ws > (uintptr_t)2 * n) cr_assert_null(got);
            else cr_assert_eq((uintptr_t)got, ws, "seek strict %d", k);
            st__btree_seek_rev(&t, (void *)(uintptr_t)k, false, &it);  /* last <= k */
            got = st__biter_get(&it);
            uintptr_t wl = (uintptr_t)(k / 2) * 2;
            if (wl < 2) cr_assert_null(got);
            else if (wl > (uintptr_t)2 * n) cr_assert_eq((uintptr_t)got, (uintptr_t)2 * n);
            else cr_assert_eq((uintptr_t)got, wl, "seek_rev incl %d", k);
            st__bpos pos;
            void *f = st__btree_find(&t, (void *)(uintptr_t)k, &pos);
            if (k % 2 == 0 && k >= 2 && k <= 2 * n) cr_assert_eq((uintptr_t)f, (uintptr_t)k);
            else cr_assert_null(f);
        }
        st__btree_destroy(&t, NULL);
    }
    cr_assert_eq(cs_alloc_count(), 0);
}

/* Random byte flips anywhere in the segments: replay never crashes, keeps
 * the records before the damage, and the engine keeps working. */
Test(storage_commitlog, fuzz_replay, .timeout = 120)
{
    unsigned seed = 777;
    for (int round = 0; round < 30; round++) {
        vfs_rmtree(g_dir);
        st_table *t;
        st_engine *e = eopen(4096, &t);
        for (uint32_t i = 0; i < 60; i++) cr_assert_eq(put(e, t, i, 50 + i), 0);
        st_engine_close(e, false);
        char **names; int n;
        cr_assert_eq(vfs_list(g_c, &names, &n), 0);
        for (int f = 0; f < 3; f++) {
            char p[700];
            snprintf(p, sizeof p, "%s/%s", g_c, names[rand_r(&seed) % n]);
            int64_t sz = vfs_file_size(p);
            int fd = open(p, O_RDWR);
            off_t off = (off_t)(rand_r(&seed) % (unsigned)sz);
            uint8_t x;
            cr_assert_eq(pread(fd, &x, 1, off), 1);
            x ^= (uint8_t)(1 + rand_r(&seed) % 255);
            cr_assert_eq(pwrite(fd, &x, 1, off), 1);
            close(fd);
        }
        vfs_list_free(names, n);
        e = eopen(4096, &t);
        cr_assert_eq(st_engine_replay(e, NULL, NULL), 0);
        cr_assert_eq(st_engine_replay_done(e), 0);
        int got = rows(t);
        cr_assert_geq(got, 0);
        cr_assert_leq(got, 60);
        cr_assert_eq(put(e, t, 1000, 10), 0);
        cr_assert_eq(st_table_flush(t), 0);
        st_engine_close(e, false);
        cr_assert_eq(cs_alloc_count(), 0);
    }
}

/* A hand-made segment 1000: its header into seg; returns the CRC seed of
 * its records. */
static uint32_t seg_begin(cs_buf *seg)
{
    cs_buf_init(seg);
    cs_buf_put_u32(seg, 0x43534C47u);
    cs_buf_put_u32(seg, 2);
    cs_buf_put_u64(seg, 1000);
    cs_buf_put_u32(seg, 0);
    uint32_t seed = cs_crc32c(0, seg->p, seg->len);
    cs_buf_put_u32(seg, seed);
    return seed;
}

/* One record framed as the commit log frames it: length, its CRC, the
 * payload, the payload's CRC. */
static void seg_put_record(cs_buf *seg, uint32_t seed, const cs_buf *payload)
{
    uint8_t l[4];
    cs_st32(l, (uint32_t)payload->len);
    cs_buf_put(seg, l, 4);
    cs_buf_put_u32(seg, cs_crc32c(seed, l, 4));
    cs_buf_put(seg, payload->p, payload->len);
    cs_buf_put_u32(seg, cs_crc32c(0, payload->p, payload->len));
}

/* Write seg as the commit log directory's segment 1000 and free it. */
static void seg_write(cs_buf *seg)
{
    vfs_mkdirs(g_c);
    char p[400];
    snprintf(p, sizeof p, "%s/CommitLog-2-1000.log", g_c);
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    cr_assert_eq(write(fd, seg->p, seg->len), (ssize_t)seg->len);
    close(fd);
    cs_buf_destroy(seg);
}

/* A record whose payload is the op stream of one row (flags, clustering)
 * with one cell, partition "pk" of the fixture's table. */
static void put_row_record(cs_buf *seg, uint32_t seed, uint8_t rflags, const uint8_t *ck, uint32_t ck_len)
{
    cs_buf p;
    cs_buf_init(&p);
    cs_buf_put_u8(&p, 0x01);                   /* PARTITION */
    cs_buf_put(&p, TID, 16);
    cs_buf_put_uvarint(&p, 2);
    cs_buf_put(&p, "pk", 2);
    cs_buf_put_u8(&p, 0x04);                   /* ROW */
    cs_buf_put_u8(&p, rflags);
    cs_buf_put_uvarint(&p, ck_len);
    cs_buf_put(&p, ck, ck_len);
    cs_buf_put_u8(&p, 0x08);                   /* CELL col 1, ts 5, value "v" */
    cs_buf_put_uvarint(&p, 1);
    cs_buf_put_u8(&p, 0);
    cs_buf_put_svarint(&p, 5);
    cs_buf_put_svarint(&p, 0);
    cs_buf_put_svarint(&p, 0);
    cs_buf_put_uvarint(&p, 0);
    cs_buf_put_uvarint(&p, 1);
    cs_buf_put_u8(&p, 'v');
    seg_put_record(seg, seed, &p);
    cs_buf_destroy(&p);
}

/* Found by fuzz_commitlog: a record (CRCs intact) whose ROW op had flag
 * bits no writer sets, or the static flag with a clustering, was replayed
 * as it was: the memtable kept the bits, a flush dropped them, so the row
 * read differently before and after.  Such a record is undecodable:
 * logged and skipped like any other, and the records after it replay. */
Test(storage_commitlog, replay_refuses_undefined_row_flags)
{
    cs_buf seg;
    uint32_t seed = seg_begin(&seg);
    const uint8_t c1[4] = { 0, 0, 0, 1 }, c2[4] = { 0, 0, 0, 2 }, c3[4] = { 0, 0, 0, 3 };
    put_row_record(&seg, seed, 0xe4, c1, 4);        /* bits that mean nothing */
    put_row_record(&seg, seed, ST_ROW_STATIC, c2, 4); /* a static row has no clustering */
    put_row_record(&seg, seed, 0, c3, 4);           /* sound */
    seg_write(&seg);
    char log[8192];
    st_table *t;
    st_engine *e = replay_logged(&t, log, sizeof log);
    cr_assert_eq(st_engine_replay_done(e), 0);
    cr_assert_eq(rows(t), 1, "%s", log);
    cr_assert(strstr(log, "undecodable record at segment 1000") != NULL, "%s", log);
    st_engine_close(e, false);
    cr_assert_eq(cs_alloc_count(), 0);
}

/* A record is one mutation group, atomic on replay (storage.h): one whose
 * second partition does not decode is skipped whole, its first partition
 * too (it was applied up to the bad op). */
Test(storage_commitlog, replay_skips_an_undecodable_record_whole)
{
    cs_buf seg;
    uint32_t seed = seg_begin(&seg);
    /* partition "pk": a row and its cell; partition "pq": a cell before any row */
    cs_buf p;
    cs_buf_init(&p);
    for (int part = 0; part < 2; part++) {
        cs_buf_put_u8(&p, 0x01);
        cs_buf_put(&p, TID, 16);
        cs_buf_put_uvarint(&p, 2);
        cs_buf_put(&p, part ? "pq" : "pk", 2);
        if (!part) {
            cs_buf_put_u8(&p, 0x04);
            cs_buf_put_u8(&p, 0);
            cs_buf_put_uvarint(&p, 4);
            cs_buf_put(&p, "\0\0\0\1", 4);
        }
        cs_buf_put_u8(&p, 0x08);
        cs_buf_put_uvarint(&p, 1);
        cs_buf_put_u8(&p, 0);
        cs_buf_put_svarint(&p, 5);
        cs_buf_put_svarint(&p, 0);
        cs_buf_put_svarint(&p, 0);
        cs_buf_put_uvarint(&p, 0);
        cs_buf_put_uvarint(&p, 1);
        cs_buf_put_u8(&p, 'v');
    }
    seg_put_record(&seg, seed, &p);
    cs_buf_destroy(&p);
    seg_write(&seg);
    char log[8192];
    st_table *t;
    st_engine *e = replay_logged(&t, log, sizeof log);
    cr_assert_eq(st_engine_replay_done(e), 0);
    cr_assert_eq(rows(t), 0, "half of the record replayed: %s", log);
    cr_assert(strstr(log, "undecodable record at segment 1000") != NULL, "%s", log);
    st_engine_close(e, false);
    cr_assert_eq(cs_alloc_count(), 0);
}

Test(storage_commitlog, dump_segment)
{
    st_table *t;
    st_engine *e = eopen(1 << 20, &t);
    cr_assert_eq(put(e, t, 7, 3), 0);
    st_engine_close(e, false);
    char p[400];
    snprintf(p, sizeof p, "%s/%s", g_c, nth_segment(0));
    char *buf; size_t len;
    FILE *f = open_memstream(&buf, &len);
    cr_assert_eq(clog_dump(p, f), 0);
    fclose(f);
    cr_assert(strstr(buf, "record 0 ends at ") != NULL, "%s", buf);
    cr_assert(strstr(buf, "ck=00000007") != NULL, "%s", buf);
    free(buf);   /* raw-ok: open_memstream */
    cr_assert_eq(truncate(p, vfs_file_size(p) - 2), 0);
    f = open_memstream(&buf, &len);
    cr_assert_eq(clog_dump(p, f), CS_ECORRUPT);
    fclose(f);
    free(buf);   /* raw-ok: open_memstream */
    cr_assert_eq(cs_alloc_count(), 0);
}

/* The commit log directory is emptied while sstables remain: new records
 * must still replay (segment ids come from the clock, so they stay above
 * the positions stored in the sstables). */
Test(storage_commitlog, wiped_log_dir_keeps_new_writes)
{
    st_table *t;
    st_engine *e = eopen(1 << 20, &t);
    cr_assert_eq(put(e, t, 1, 10), 0);
    cr_assert_eq(st_table_flush(t), 0);
    st_engine_close(e, false);
    vfs_rmtree(g_c);
    usleep(2000);
    e = eopen(1 << 20, &t);
    cr_assert_eq(st_engine_replay(e, NULL, NULL), 0);
    cr_assert_eq(st_engine_replay_done(e), 0);
    cr_assert_eq(put(e, t, 2, 10), 0);
    reopen_replay(&e, &t, 1 << 20);
    cr_assert_eq(rows(t), 2);
    st_engine_close(e, false);
    cr_assert_eq(cs_alloc_count(), 0);
}

/* The segment allocator: once the active segment (1 MiB here) is half
 * full, a spare full of zeros appears before any segment was recycled;
 * the next segment is that file, renamed (no new file), and every record
 * written across the switch replays. */
Test(storage_commitlog, spare_prepared_before_switch, .timeout = 30)
{
    st_table *t;
    st_engine *e = eopen(1 << 20, &t);
    uint32_t i = 0;
    while (g_pos.offset <= (1 << 19)) cr_assert_eq(put(e, t, i++, 8000), 0);
    uint64_t seg1 = g_pos.segment;
    /* Listed (written and synced), not just created. */
    for (int k = 0; k < 10000 && clog_spare_count(e->log) == 0; k++) usleep(1000);
    cr_assert_eq(clog_spare_count(e->log), 1, "no spare prepared while the active segment is past half");
    cr_assert_eq(n_spares(), 1);
    cr_assert_eq(n_segments(), 1);
    char **names; int n;
    cr_assert_eq(vfs_list(g_c, &names, &n), 0);
    char spare[512] = "";
    for (int k = 0; k < n; k++)
        if (!strncmp(names[k], "CommitLogSpare-", 15)) snprintf(spare, sizeof spare, "%s/%s", g_c, names[k]);
    vfs_list_free(names, n);
    /* Its full length, all zeros (read as the end of a segment on replay). */
    uint8_t *buf; size_t len;
    cr_assert_eq(vfs_read_all(spare, &buf, &len), 0);
    cr_assert_eq(len, (size_t)1 << 20);
    size_t nz = 0;
    for (size_t k = 0; k < len; k++) nz += buf[k] != 0;
    cs_free(buf);
    cr_assert_eq(nz, 0);
    /* Past the end of the first segment: the spare becomes the second. */
    while (g_pos.segment == seg1) cr_assert_eq(put(e, t, i++, 8000), 0);
    cr_assert_eq(n_segments(), 2);
    cr_assert_eq(n_spares(), 0, "the prepared spare was taken");
    for (uint32_t k = 0; k < 20; k++) cr_assert_eq(put(e, t, i++, 100), 0);
    reopen_replay(&e, &t, 1 << 20);
    cr_assert_eq(rows(t), (int)i);
    st_engine_close(e, false);
    cr_assert_eq(cs_alloc_count(), 0);
}

/* A spare that cannot be made (here its file cannot be created: the hook
 * sees paths only at open) is given up with a warning and leaves no file;
 * writes go on, the next segment is a new file, and every record
 * replays. */
static int spare_full_cb(int op, const char *path, void *arg)
{
    (void)arg;
    return op == VFS_OP_OPEN && path && strstr(path, "CommitLogSpare-") ? ENOSPC : 0;
}

Test(storage_commitlog, spare_write_failure_is_harmless, .timeout = 30)
{
    st_table *t;
    st_engine *e = eopen(1 << 20, &t);
    test_log_capture cap;
    char log[8192];
    char path[400];
    snprintf(path, sizeof path, "%s/spare.log", g_dir);
    vfs_mkdirs(g_dir);
    log_capture_begin(&cap, path);
    vfs_set_fault(spare_full_cb, NULL);
    uint32_t i = 0;
    while (g_pos.offset <= (1 << 19)) cr_assert_eq(put(e, t, i++, 8000), 0);
    uint64_t seg1 = g_pos.segment;
    /* The allocator's attempt: a warning, then no spare file left. */
    bool warned = false;
    for (int k = 0; k < 10000 && !warned; k++) {
        usleep(1000);
        fflush(stderr);
        FILE *f = fopen(path, "r");
        if (f) {
            size_t n = fread(log, 1, sizeof log - 1, f);
            log[n] = 0;
            fclose(f);
            warned = strstr(log, "cannot prepare") != NULL;
        }
    }
    log_capture_end(&cap, log, sizeof log);
    cr_assert(warned, "no warning for the failed spare: %s", log);
    cr_assert_eq(clog_spare_count(e->log), 0);
    for (int k = 0; k < 1000 && n_spares() > 0; k++) usleep(1000);
    cr_assert_eq(n_spares(), 0, "the failed spare's file was left behind");
    while (g_pos.segment == seg1) cr_assert_eq(put(e, t, i++, 8000), 0);
    cr_assert_eq(n_segments(), 2);
    vfs_set_fault(NULL, NULL);
    reopen_replay(&e, &t, 1 << 20);
    cr_assert_eq(rows(t), (int)i);
    st_engine_close(e, false);
    cr_assert_eq(cs_alloc_count(), 0);
}

/* ---------------------------------------------------------------- batch gathering */

/* Batch mode with every fsync made slow (SYNC_DELAY_US) by the fault hook:
 * long enough that the test's own scheduling delays are small beside it. */
#define SYNC_DELAY_US 20000
static int slow_sync_cb(int op, const char *path, void *arg)
{
    (void)path; (void)arg;
    if (op == VFS_OP_SYNC) usleep(SYNC_DELAY_US);
    return 0;
}

static clog *batch_open(void)
{
    st_config cfg;
    fixture_config(&cfg);
    cfg.sync_mode = ST_SYNC_BATCH;
    clog *l;
    cr_assert_eq(clog_open(&cfg, &l), 0);
    return l;
}

typedef struct gw {
    clog *l;
    uv_loop_t *loop;
    st_clog_pos pos;
    uint64_t t_reg, t_done;          /* registered, acknowledged (cs_mono_ns) */
    int again;                       /* writes still to do (a serial client) */
    int done;
    int think_ms;                    /* > 0: the next write waits this long (uv timer) */
    uv_timer_t timer;
} gw;

static int g_acks;

static void gw_write(gw *w);
static void gw_timer_cb(uv_timer_t *t) { gw_write(t->data); }

/* The acknowledgement: never before an fsync covering the write. */
static void gw_cb(void *arg)
{
    gw *w = arg;
    clog_sync_stats st;
    clog_get_sync_stats(w->l, &st);
    cr_assert(st.synced.segment > w->pos.segment ||
              (st.synced.segment == w->pos.segment && st.synced.offset >= w->pos.offset),
              "acknowledged before its fsync");
    w->t_done = cs_mono_ns();
    w->done++;
    g_acks++;
    if (w->again > 0) {
        w->again--;
        if (w->think_ms > 0) uv_timer_start(&w->timer, gw_timer_cb, (uint64_t)w->think_ms, 0);
        else gw_write(w);
    }
}

static void gw_write(gw *w)
{
    static const uint8_t rec[100];
    cr_assert_eq(clog_append(w->l, rec, sizeof rec, NULL, 0, &w->pos), 0);
    w->t_reg = cs_mono_ns();
    cr_assert_eq(clog_sync_wait(w->l, w->loop, w->pos, gw_cb, w), 0);
}

static void batch_close(clog *l, uv_loop_t *loop)
{
    cr_assert_eq(clog_detach_loop(l, loop), 0);
    uv_run(loop, UV_RUN_NOWAIT);
    cr_assert_eq(uv_loop_close(loop), 0);
    clog_close(l);
    vfs_set_fault(NULL, NULL);
}

/* One serial writer: each write is the whole gathering target, so no round
 * ever waits for others, and every write costs one fsync. */
Test(storage_commitlog, batch_single_writer_not_delayed, .timeout = 60)
{
    clog *l = batch_open();
    vfs_set_fault(slow_sync_cb, NULL);
    uv_loop_t loop;
    uv_loop_init(&loop);
    gw w = { .l = l, .loop = &loop, .again = 19 };
    g_acks = 0;
    uint64_t t0 = cs_mono_ns();
    gw_write(&w);
    while (g_acks < 20) uv_run(&loop, UV_RUN_ONCE);
    uint64_t el = cs_mono_ns() - t0;
    clog_sync_stats st;
    clog_get_sync_stats(l, &st);
    cr_assert_eq(st.gathers, 0, "a lone writer waited for others %" PRIu64 " times", st.gathers);
    cr_assert_eq(st.waited, 20);
    cr_assert_eq(st.syncs, 20);
    cr_assert_geq(el, 20ull * SYNC_DELAY_US * 1000);
    batch_close(l, &loop);
    cr_assert_eq(cs_alloc_count(), 0);
}

/* Ten writers register while one fsync runs; the next round gathers for
 * them but the first writer never comes back: the round starts at the
 * bound (half a recent fsync, at most 200 us), not later.  A write after
 * the burst is not held longer than that either. */
Test(storage_commitlog, batch_gather_bounded, .timeout = 60)
{
    clog *l = batch_open();
    vfs_set_fault(slow_sync_cb, NULL);
    uv_loop_t loop;
    uv_loop_init(&loop);
    gw w[11];
    memset(w, 0, sizeof w);
    g_acks = 0;
    for (int i = 0; i < 10; i++) { w[i].l = l; w[i].loop = &loop; gw_write(&w[i]); }
    while (g_acks < 10) uv_run(&loop, UV_RUN_ONCE);
    clog_sync_stats st;
    clog_get_sync_stats(l, &st);
    cr_assert_eq(st.waited, 10);
    /* Writes that found an fsync running waited for at most one more. */
    cr_assert_leq(st.syncs, 2);
    for (int i = 0; i < 10; i++) {
        uint64_t lat = w[i].t_done - w[i].t_reg;
        cr_assert_lt(lat, (2ull * SYNC_DELAY_US + 200 + 100000) * 1000, "write %d: %" PRIu64 " ns", i, lat);
    }
    /* One more write: at most the bound, then one fsync. */
    w[10].l = l; w[10].loop = &loop;
    gw_write(&w[10]);
    while (g_acks < 11) uv_run(&loop, UV_RUN_ONCE);
    uint64_t lat = w[10].t_done - w[10].t_reg;
    cr_assert_lt(lat, (uint64_t)(SYNC_DELAY_US + 200 + 100000) * 1000, "%" PRIu64 " ns", lat);
    clog_get_sync_stats(l, &st);
    cr_assert_leq(st.gather_timeouts, st.gathers);
    if (st.gathers) cr_assert_lt(st.gather_ns / st.gathers, 100000000ull);
    batch_close(l, &loop);
    cr_assert_eq(cs_alloc_count(), 0);
}

/* Five serial clients whose next write follows each acknowledgement (like
 * 50 benchmark connections with one request in flight): after the first
 * rounds, every fsync covers all five, because the sync thread waits for
 * the writers it just acknowledged instead of starting a round for the few
 * that arrived during the previous one. */
Test(storage_commitlog, batch_gather_merges_writers, .timeout = 60)
{
    setenv("CASSETTE_COMMITLOG_GATHER_MAX_US", "1000000", 1);   /* bound: half an fsync */
    clog *l = batch_open();
    vfs_set_fault(slow_sync_cb, NULL);
    uv_loop_t loop;
    uv_loop_init(&loop);
    gw w[5];
    memset(w, 0, sizeof w);
    g_acks = 0;
    for (int i = 0; i < 5; i++) { w[i].l = l; w[i].loop = &loop; w[i].again = 11; gw_write(&w[i]); }
    while (g_acks < 60) uv_run(&loop, UV_RUN_ONCE);
    clog_sync_stats st;
    clog_get_sync_stats(l, &st);
    cr_assert_eq(st.waited, 60);
    /* Without gathering: about two rounds per write (21+ rounds). */
    cr_assert_leq(st.syncs, 15, "%" PRIu64 " rounds for 60 writes of 5 writers", st.syncs);
    cr_assert_gt(st.gathers, 0);
    cr_assert_lt(st.gather_timeouts, st.gathers);
    batch_close(l, &loop);
    unsetenv("CASSETTE_COMMITLOG_GATHER_MAX_US");
    cr_assert_eq(cs_alloc_count(), 0);
}

/* Two writers, one of which comes back only 5 ms after its acknowledgement,
 * far beyond the bound (200 us): rounds that gather for it start at the
 * bound with the other writer alone instead of waiting the 5 ms. */
Test(storage_commitlog, batch_gather_slow_writer_bounded, .timeout = 60)
{
    clog *l = batch_open();
    vfs_set_fault(slow_sync_cb, NULL);
    uv_loop_t loop;
    uv_loop_init(&loop);
    gw w[2];
    memset(w, 0, sizeof w);
    g_acks = 0;
    for (int i = 0; i < 2; i++) {
        w[i].l = l; w[i].loop = &loop; w[i].again = 19;
        uv_timer_init(&loop, &w[i].timer);
        w[i].timer.data = &w[i];
    }
    w[1].think_ms = 5;
    gw_write(&w[0]);
    gw_write(&w[1]);
    while (g_acks < 40) uv_run(&loop, UV_RUN_ONCE);
    clog_sync_stats st;
    clog_get_sync_stats(l, &st);
    cr_assert_eq(st.waited, 40);
    cr_assert_gt(st.gathers, 0);
    cr_assert_gt(st.gather_timeouts, 0);
    cr_assert_lt(st.gather_ns / st.gathers, 3000000ull, "%" PRIu64 " ns per gathering round",
                 st.gather_ns / st.gathers);
    for (int i = 0; i < 2; i++) uv_close((uv_handle_t *)&w[i].timer, NULL);
    batch_close(l, &loop);
    cr_assert_eq(cs_alloc_count(), 0);
}

/* A writer on a deferring thread (like the server's loop, which kicks the
 * sync thread from a uv_check handle after each iteration) comes back
 * while the sync thread idles inside a gathering window waiting for a
 * second writer that never returns: the kick must still wake it (the
 * round starts at the bound), not leave the write waiting for ever. */
Test(storage_commitlog, batch_gather_deferring_writer_not_stranded, .timeout = 30)
{
    setenv("CASSETTE_COMMITLOG_GATHER_MAX_US", "1000000", 1);   /* bound: half an fsync */
    clog *l = batch_open();
    vfs_set_fault(slow_sync_cb, NULL);
    clog_defer(true);
    uv_loop_t loop;
    uv_loop_init(&loop);
    gw w[2];
    memset(w, 0, sizeof w);
    g_acks = 0;
    for (int i = 0; i < 2; i++) { w[i].l = l; w[i].loop = &loop; }
    w[0].again = 5;
    gw_write(&w[0]);
    gw_write(&w[1]);
    while (g_acks < 7) uv_run(&loop, UV_RUN_ONCE);
    clog_sync_stats st;
    clog_get_sync_stats(l, &st);
    cr_assert_eq(st.waited, 7);
    clog_defer(false);
    batch_close(l, &loop);
    unsetenv("CASSETTE_COMMITLOG_GATHER_MAX_US");
    cr_assert_eq(cs_alloc_count(), 0);
}

/* The TRUNCATED marker of ks.cl, by walking g_d (the table directory's name
 * has its id); its 20 bytes into b, false if there is none. */
static bool truncated_marker(uint8_t b[20])
{
    char cmd[700];
    snprintf(cmd, sizeof cmd, "find %s -name TRUNCATED -type f", g_d);
    FILE *f = popen(cmd, "r");
    char path[600] = "";
    bool found = f && fgets(path, sizeof path, f) != NULL;
    if (f) pclose(f);
    if (!found) return false;
    path[strcspn(path, "\n")] = 0;
    FILE *m = fopen(path, "rb");
    bool ok = m && fread(b, 1, 20, m) == 20;
    if (m) fclose(m);
    return ok;
}

/* TRUNCATE of an empty table (no memtable content, no sstables) leaves the
 * replay floor and its file alone (a never-written table gets none); a
 * table with rows truncates as before, and after a crash only the rows
 * written after it come back. */
static void write_truncate_empty(void)
{
    st_table *t;
    st_engine *e = eopen(4096, &t);
    uint8_t b[20];
    if (st_table_truncate(t) || truncated_marker(b)) _exit(2);   /* empty from the start */
    for (uint32_t i = 0; i < 50; i++) if (put(e, t, i, 100)) _exit(3);
    if (st_table_truncate(t) || !truncated_marker(b)) _exit(4);
    uint8_t again[20];
    if (st_table_truncate(t) || !truncated_marker(again) || memcmp(b, again, 20)) _exit(5);   /* empty: kept */
    for (uint32_t i = 100; i < 110; i++) if (put(e, t, i, 100)) _exit(6);
    if (st_table_flush(t) || st_table_truncate(t)) _exit(7);   /* an sstable: truncated */
    if (!truncated_marker(again) || !memcmp(b, again, 20)) _exit(8);
    for (uint32_t i = 200; i < 207; i++) if (put(e, t, i, 100)) _exit(9);
}

Test(storage_commitlog, truncate_of_an_empty_table_keeps_its_floor)
{
    run_killed(write_truncate_empty);
    char log[8192];
    st_table *t;
    st_engine *e = replay_logged(&t, log, sizeof log);
    cr_assert_eq(st_engine_replay_done(e), 0);
    cr_assert_eq(rows(t), 7, "only the rows written after the last truncate");
    st_engine_close(e, false);
    cr_assert_eq(cs_alloc_count(), 0);
}
