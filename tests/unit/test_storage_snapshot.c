/*
 * test_storage_snapshot.c: snapshots through storage.h (storage/snapshot.c):
 * auto_snapshot on TRUNCATE and DROP, manifests with created_at and
 * expires_at, listing, and the removal of expired snapshots at open and by
 * the cleanup thread; the manifest written atomically (a failed write
 * leaves no snapshot) and unreadable manifests kept, never expiring, as
 * Cassandra 4.1's TableSnapshot treats them.
 */
#define STORAGE_FIXTURE_TAG "st_snap"
#define STORAGE_FIXTURE_TID { 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3 }
#define STORAGE_FIXTURE_TABLE "r"
#define STORAGE_FIXTURE_ROWS
#include "test_storage_fixture.h"
#include "test_log_capture.h"
#include "storage/sstable_int.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>

TestSuite(storage_snapshot, .init = setup, .fini = teardown);

/* Reopen E over the same directories with cfg tweaked by the caller. */
static void reopen_with(const st_config *cfg)
{
    st_engine_close(E, false);
    cr_assert_eq(st_engine_open(cfg, &E), 0);
    cr_assert_eq(st_table_open(E, TID, "ks", "r", NULL, &T), 0);
}

Test(storage_snapshot, auto_snapshot_on_truncate_and_drop)
{
    st_config cfg;
    st_config_defaults(&cfg);
    cfg.data_dir = g_d; cfg.commitlog_dir = g_c;
    cfg.snapshot_on_truncate = true;
    reopen_with(&cfg);
    st_mutation *m = mut();
    st_mut_row(m, (const uint8_t *)"a", 1, 0);
    cell(m, 1, 10, "x");
    commit(m);
    char dir[600];
    snprintf(dir, sizeof dir, "%s", st_table_dir(T));
    cr_assert_eq(st_table_truncate(T), 0);
    char snaps[700];
    snprintf(snaps, sizeof snaps, "%s/snapshots", dir);
    char **names; int n;
    cr_assert_eq(vfs_list(snaps, &names, &n), 0);
    cr_assert_eq(n, 1);
    char p[1000];
    snprintf(p, sizeof p, "%s/%s/cs-1-TOC.txt", snaps, names[0]);
    vfs_list_free(names, n);
    cr_assert_geq(vfs_file_size(p), 0, "snapshot holds the flushed sstable");
    char got[64];
    dump(got, sizeof got, false, false, NULL);
    cr_assert_str_eq(got, "");
    m = mut();
    st_mut_row(m, (const uint8_t *)"b", 1, 0);
    cell(m, 1, 10, "y");
    commit(m);
    cr_assert_eq(st_table_drop(T), 0);
    cr_assert_eq(vfs_list(snaps, &names, &n), 0);
    cr_assert_eq(n, 2, "drop snapshot kept");
    vfs_list_free(names, n);
    cr_assert_null(st_table_find(E, TID));
}

/* The snapshot called tag in list v[0..n), or NULL. */
static const st_snapshot_info *find_snap(const st_snapshot_info *v, int n, const char *tag)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(v[i].tag, tag)) return &v[i];
    return NULL;
}

/* The manifest of T's snapshot tag, NUL-terminated, in out. */
static void read_manifest(const char *tag, char *out, size_t n)
{
    char p[1200];
    snprintf(p, sizeof p, "%s/snapshots/%s/manifest.json", st_table_dir(T), tag);
    uint8_t *b; size_t len;
    cr_assert_eq(vfs_read_all(p, &b, &len), 0, "%s", p);
    cr_assert_lt(len, n);
    memcpy(out, b, len);
    out[len] = 0;
    cs_free(b);
}

/* nodetool snapshot --ttl: the manifest's expires_at is created_at + TTL
 * (SnapshotManifest), listing shows both, a snapshot without a TTL has
 * "expires_at":null and never expires, and the sweep removes a snapshot
 * only once expires_at is strictly before its clock (TableSnapshot.isExpired). */
Test(storage_snapshot, snapshot_ttl_manifest_listing_and_expiry)
{
    st_mutation *m = mut();
    st_mut_row(m, (const uint8_t *)"a", 1, 0);
    cell(m, 1, 10, "x");
    commit(m);
    int64_t c = cs_now_ms();
    st_snapshot_opts o = { .has_ttl = true, .ttl_s = 3600, .created_ms = c };
    cr_assert_eq(st_table_snapshot(T, "hour", &o), 0);
    cr_assert_eq(st_table_snapshot(T, "keep", NULL), 0);
    st_snapshot_opts bad = { .has_ttl = true, .ttl_s = -1 };
    cr_assert_eq(st_table_snapshot(T, "neg", &bad), CS_EINVAL);
    cr_assert_eq(st_table_snapshot(T, "hour", &o), CS_EEXIST);

    char man[4096], want[200], iso[40], iso2[40];
    read_manifest("hour", man, sizeof man);
    cs_format_instant_ms(c, iso, sizeof iso);
    cs_format_instant_ms(c + 3600 * 1000, iso2, sizeof iso2);
    snprintf(want, sizeof want, "\"created_at\":\"%s\",\"expires_at\":\"%s\"", iso, iso2);
    cr_assert(strstr(man, want), "%s lacks %s", man, want);
    cr_assert(strstr(man, "\"files\":[\"cs-1-Data.db\"]"), "%s", man);
    read_manifest("keep", man, sizeof man);
    cr_assert(strstr(man, "\"expires_at\":null"), "%s", man);

    st_snapshot_info *v; int n;
    cr_assert_eq(st_table_snapshots(T, &v, &n), 0);
    cr_assert_eq(n, 2);
    const st_snapshot_info *h = find_snap(v, n, "hour"), *k = find_snap(v, n, "keep");
    cr_assert(h && k);
    cr_assert(h->expiring && !k->expiring);
    cr_assert_eq(h->created_ms, c);
    cr_assert_eq(h->expires_ms, c + 3600 * 1000);
    cr_assert_geq(k->created_ms, c);
    cs_free(v);

    cr_assert_eq(st_engine_clear_expired_snapshots(E, c + 3600 * 1000 - 1), 0);
    cr_assert_eq(st_engine_clear_expired_snapshots(E, c + 3600 * 1000), 0, "not yet: expires_at == now");
    cr_assert_eq(st_engine_clear_expired_snapshots(E, c + 3600 * 1000 + 1), 1);
    cr_assert_eq(st_engine_clear_expired_snapshots(E, INT64_MAX), 0, "no TTL: never expires");
    cr_assert_eq(st_table_snapshots(T, &v, &n), 0);
    cr_assert_eq(n, 1);
    cr_assert_str_eq(v[0].tag, "keep");
    cs_free(v);
    char got[64];
    dump(got, sizeof got, false, false, NULL);
    cr_assert_str_eq(got, "a:1=x,;", "the live data is untouched");
}

/* Expired snapshots go when the engine opens, in every table directory
 * under data_dir (a dropped table's kept snapshots too), and while it runs
 * every snapshot_cleanup_period_ms; auto_snapshot_ttl gives truncate's
 * snapshot its TTL. */
Test(storage_snapshot, snapshot_expiry_at_open_periodic_and_auto_ttl)
{
    st_mutation *m = mut();
    st_mut_row(m, (const uint8_t *)"a", 1, 0);
    cell(m, 1, 10, "x");
    commit(m);
    int64_t past = cs_now_ms() - 120 * 1000;
    st_snapshot_opts o = { .has_ttl = true, .ttl_s = 60, .created_ms = past };   /* expired a minute ago */
    cr_assert_eq(st_table_snapshot(T, "old", &o), 0);
    cr_assert_eq(st_table_snapshot(T, "keep", NULL), 0);
    /* A dropped table's directory holding only an expired snapshot. */
    char gone[700];
    snprintf(gone, sizeof gone, "%s/ks/dropped-00000000000000000000000000000000/snapshots/old", g_d);
    cr_assert_eq(vfs_mkdirs(gone), 0);
    char mp[800];
    snprintf(mp, sizeof mp, "%s/manifest.json", gone);
    FILE *f = fopen(mp, "w");
    cr_assert(f);
    fputs("{\"files\":[],\"created_at\":\"2020-01-01T00:00:00Z\",\"expires_at\":\"2020-01-02T00:00:00.5Z\"}", f);
    fclose(f);

    st_config cfg;
    st_config_defaults(&cfg);
    cfg.data_dir = g_d; cfg.commitlog_dir = g_c;
    reopen_with(&cfg);
    st_snapshot_info *v; int n;
    cr_assert_eq(st_table_snapshots(T, &v, &n), 0);
    cr_assert_eq(n, 1, "the expired snapshot was removed at open");
    cr_assert_str_eq(v[0].tag, "keep");
    cs_free(v);
    cr_assert_lt(vfs_file_size(mp), 0, "the dropped table's expired snapshot too");

    /* The cleanup thread, every 20 ms. */
    cfg.snapshot_cleanup_period_ms = 20;
    reopen_with(&cfg);
    cr_assert_eq(st_table_snapshot(T, "old2", &o), 0);
    for (int i = 0; i < 500; i++) {
        cr_assert_eq(st_table_snapshots(T, &v, &n), 0);
        bool there = find_snap(v, n, "old2") != NULL;
        cs_free(v);
        if (!there) break;
        usleep(10 * 1000);
    }
    cr_assert_eq(st_table_snapshots(T, &v, &n), 0);
    cr_assert_eq(n, 1, "the cleanup thread removed old2");
    cs_free(v);

    /* auto_snapshot_ttl: TRUNCATE's snapshot expires an hour after it is taken. */
    cfg.snapshot_cleanup_period_ms = 0;   /* the default */
    cfg.snapshot_on_truncate = true;
    cfg.auto_snapshot_has_ttl = true;
    cfg.auto_snapshot_ttl_s = 3600;
    reopen_with(&cfg);
    cr_assert_eq(st_table_truncate(T), 0);
    cr_assert_eq(st_table_snapshots(T, &v, &n), 0);
    cr_assert_eq(n, 2);
    const st_snapshot_info *t = strcmp(v[0].tag, "keep") ? &v[0] : &v[1];
    cr_assert(strstr(t->tag, "-truncated"), "%s", t->tag);
    cr_assert(t->expiring);
    cr_assert_eq(t->expires_ms - t->created_ms, 3600 * 1000);
    cs_free(v);
}

/* ---------------------------------------------------------------- manifest durability */

/* The vfs operations of this thread from the open of manifest.json.tmp on,
 * failing the first of kind fail_op with EIO. */
typedef struct op_rec {
    int op;
    char path[700];
    int64_t final_size, tmp_size;   /* at a rename: manifest.json's and manifest.json.tmp's sizes (<0: absent) */
} op_rec;
static struct {
    pthread_t thread;
    bool on;
    int fail_op, n;
    op_rec ops[16];
} g_rec;

static int record_cb(int op, const char *path, void *arg)
{
    (void)arg;
    if (!pthread_equal(pthread_self(), g_rec.thread)) return 0;   /* flush, compaction, commit log threads */
    if (op == VFS_OP_OPEN && path && strstr(path, "/manifest.json.tmp")) g_rec.on = true;
    if (!g_rec.on || g_rec.n == 16) return 0;
    op_rec *r = &g_rec.ops[g_rec.n++];
    r->op = op;
    snprintf(r->path, sizeof r->path, "%s", path ? path : "");
    if (op == VFS_OP_RENAME) {
        char fin[700];
        snprintf(fin, sizeof fin, "%.*s", (int)(strlen(r->path) - 4), r->path);   /* without ".tmp" */
        r->final_size = vfs_file_size(fin);
        r->tmp_size = vfs_file_size(r->path);
    }
    if (op == g_rec.fail_op) { g_rec.fail_op = 0; return EIO; }
    return 0;
}

static void record_begin(int fail_op)
{
    memset(&g_rec, 0, sizeof g_rec);
    g_rec.thread = pthread_self();
    g_rec.fail_op = fail_op;
    vfs_set_fault(record_cb, NULL);
}

/* One flushed row, so a snapshot links an sstable. */
static void one_flushed_row(void)
{
    st_mutation *m = mut();
    st_mut_row(m, (const uint8_t *)"a", 1, 0);
    cell(m, 1, 10, "x");
    commit(m);
    cr_assert_eq(st_table_flush(T), 0);
}

/* The manifest goes to manifest.json.tmp, is fsynced, renamed over
 * manifest.json (absent until then, and the temporary already whole), and
 * the snapshot directory is fsynced: a crash leaves no torn manifest. */
Test(storage_snapshot, manifest_written_atomically)
{
    one_flushed_row();
    st_snapshot_opts o = { .skip_flush = true, .has_ttl = true, .ttl_s = 60 };
    record_begin(0);
    int rc = st_table_snapshot(T, "atomic", &o);
    vfs_set_fault(NULL, NULL);
    cr_assert_eq(rc, 0);
    char dir[1000], mp[1100];
    snprintf(dir, sizeof dir, "%s/snapshots/atomic", st_table_dir(T));
    snprintf(mp, sizeof mp, "%s/manifest.json", dir);
    int64_t size = vfs_file_size(mp);
    cr_assert_gt(size, 0);
    static const int want[] = { VFS_OP_OPEN, VFS_OP_WRITE, VFS_OP_SYNC, VFS_OP_RENAME, VFS_OP_SYNC_DIR };
    cr_assert_eq(g_rec.n, 5, "%d operations", g_rec.n);
    for (int i = 0; i < 5; i++) cr_assert_eq(g_rec.ops[i].op, want[i], "operation %d is %d", i, g_rec.ops[i].op);
    cr_assert(strstr(g_rec.ops[3].path, "/atomic/manifest.json.tmp"), "%s", g_rec.ops[3].path);
    cr_assert_lt(g_rec.ops[3].final_size, 0, "manifest.json exists before the rename");
    cr_assert_eq(g_rec.ops[3].tmp_size, size, "the temporary is whole when renamed");
    cr_assert_str_eq(g_rec.ops[4].path, dir);
    char tmp[1200];
    snprintf(tmp, sizeof tmp, "%s.tmp", mp);
    cr_assert_lt(vfs_file_size(tmp), 0);
    char man[4096];
    read_manifest("atomic", man, sizeof man);
    cr_assert(strstr(man, "\"expires_at\":\"") && strstr(man, "}\n"), "%s", man);
}

/* Any failed step of the manifest's write fails the snapshot and removes
 * its directory (no snapshot without a manifest, which would never
 * expire), leaves no temporary, and the same tag can be taken again. */
Test(storage_snapshot, manifest_write_failure_leaves_no_snapshot)
{
    one_flushed_row();
    st_snapshot_opts o = { .skip_flush = true, .has_ttl = true, .ttl_s = 60 };
    static const int fail[] = { VFS_OP_OPEN, VFS_OP_WRITE, VFS_OP_SYNC, VFS_OP_RENAME, VFS_OP_SYNC_DIR };
    char dir[1000];
    snprintf(dir, sizeof dir, "%s/snapshots/f", st_table_dir(T));
    test_log_capture cap;
    char lp[400], log[4096];
    snprintf(lp, sizeof lp, "%s.log", g_dir);
    for (int i = 0; i < 5; i++) {
        log_capture_begin(&cap, lp);
        record_begin(fail[i]);
        int rc = st_table_snapshot(T, "f", &o);
        vfs_set_fault(NULL, NULL);
        log_capture_end(&cap, log, sizeof log);
        cr_assert_eq(rc, CS_EIO, "failing op %d: %d", fail[i], rc);
        cr_assert_eq(g_rec.fail_op, 0, "op %d was reached", fail[i]);
        cr_assert(strstr(log, "snapshot of ks.r into"), "%s", log);
        struct stat sb;
        cr_assert_neq(stat(dir, &sb), 0, "failing op %d: the snapshot directory is removed", fail[i]);
        st_snapshot_info *v; int n;
        cr_assert_eq(st_table_snapshots(T, &v, &n), 0);
        cr_assert_eq(n, 0);
        cs_free(v);
    }
    cr_assert_eq(st_table_snapshot(T, "f", &o), 0, "the tag is free again");
    char man[4096];
    read_manifest("f", man, sizeof man);
    cr_assert(strstr(man, "\"files\":[\"cs-1-Data.db\"]"), "%s", man);
}

/* Write len bytes of p as the manifest of T's snapshot tag (a directory
 * made here), then set the directory's mtime to mtime_s. */
static void plant_manifest(const char *tag, const void *p, size_t len, int64_t mtime_s)
{
    char dir[1000], mp[1100];
    snprintf(dir, sizeof dir, "%s/snapshots/%s", st_table_dir(T), tag);
    cr_assert_eq(vfs_mkdirs(dir), 0);
    snprintf(mp, sizeof mp, "%s/manifest.json", dir);
    FILE *f = fopen(mp, "wb");
    cr_assert(f);
    cr_assert_eq(fwrite(p, 1, len, f), len);
    fclose(f);
    struct timespec ts[2] = { { .tv_sec = mtime_s }, { .tv_sec = mtime_s } };
    cr_assert_eq(utimensat(AT_FDCWD, dir, ts, 0), 0);
}

/* A manifest that is not one whole JSON object of SnapshotManifest's
 * fields (torn at any byte, garbage, a wrong type) is unreadable, as in
 * Cassandra 4.1 (TableSnapshot.Builder.loadTimestampsFromManifest): the
 * snapshot is listed with its directory's mtime and no expiration, never
 * expires, the sweep does not fail over it and warns once per manifest
 * (at open; here called directly).  Readable ones with members in any
 * order, unknown members and trailing bytes still expire. */
Test(storage_snapshot, unreadable_manifest_is_kept_and_never_expires)
{
    one_flushed_row();
    st_snapshot_opts o = { .skip_flush = true, .has_ttl = true, .ttl_s = 60, .created_ms = 1577836800000LL };
    cr_assert_eq(st_table_snapshot(T, "whole", &o), 0);   /* 2020-01-01, expired a minute later */
    char whole[4096];
    read_manifest("whole", whole, sizeof whole);
    size_t close = (size_t)(strrchr(whole, '}') - whole);
    const int64_t MT = 1609459200;   /* 2021-01-01T00:00:00Z: the planted directories' mtime */
    int bad = 0;
    for (size_t k = 0; k <= close; k++) {   /* every torn prefix: the closing brace not yet written */
        char tag[32];
        snprintf(tag, sizeof tag, "torn%03zu", k);
        plant_manifest(tag, whole, k, MT);
        bad++;
    }
    static const char *const garbage[] = {
        "\x01\x02\xff not json",
        "[]",
        "null",
        "{\"created_at\":\"yesterday\",\"expires_at\":\"2020-01-02T00:00:00Z\"}",
        "{\"created_at\":1577836800,\"expires_at\":\"2020-01-02T00:00:00Z\"}",
        "{\"created_at\":\"2020-01-01T00:00:00Z\" \"expires_at\":\"2020-01-02T00:00:00Z\"}",
        "{\"files\":{\"a\":1},\"created_at\":\"2020-01-01T00:00:00Z\",\"expires_at\":\"2020-01-02T00:00:00Z\"}",
        "{\"files\":[],\"created_at\":\"2020-01-01T00:00:00Z\",\"expires_at\":\"2020-01-02T00:00:00Z\",}",
    };
    for (size_t g = 0; g < sizeof garbage / sizeof garbage[0]; g++) {
        char tag[32];
        snprintf(tag, sizeof tag, "garbage%zu", g);
        plant_manifest(tag, garbage[g], strlen(garbage[g]), MT);
        bad++;
    }
    static const char reordered[] = " {\"expires_at\" : \"2020-01-02T00:00:00.5Z\", \"x\":[1,{\"y\":null},\"}\"],"
                                    "\"files\":null,\"created_at\":\"2020-01-01T00:00:00Z\"}\n trailing";
    plant_manifest("reordered", reordered, sizeof reordered - 1, MT);
    static const char no_ttl[] = "{\"files\":[\"cs-1-Data.db\"],\"created_at\":\"2020-01-01T00:00:00Z\",\"expires_at\":null}";
    plant_manifest("no_ttl", no_ttl, sizeof no_ttl - 1, MT);

    st_snapshot_info *v; int n;
    cr_assert_eq(st_table_snapshots(T, &v, &n), 0);
    cr_assert_eq(n, bad + 3);
    for (int i = 0; i < n; i++) {
        bool unreadable = !strncmp(v[i].tag, "torn", 4) || !strncmp(v[i].tag, "garbage", 7);
        if (!unreadable) continue;
        cr_assert(!v[i].expiring, "%s", v[i].tag);
        cr_assert_eq(v[i].created_ms, MT * 1000, "%s: created at the directory's mtime", v[i].tag);
    }
    const st_snapshot_info *nt = find_snap(v, n, "no_ttl");
    cr_assert(nt && !nt->expiring && nt->created_ms == 1577836800000LL);
    cs_free(v);

    test_log_capture cap;
    char lp[400];
    static char log[1 << 16];
    snprintf(lp, sizeof lp, "%s.log", g_dir);
    log_capture_begin(&cap, lp);
    int removed = st_engine_clear_expired_snapshots(E, cs_now_ms());
    log_capture_end(&cap, log, sizeof log);
    cr_assert_eq(removed, 2, "whole and reordered expire, nothing else");
    int warns = 0;
    for (const char *p = log; (p = strstr(p, "cannot read the manifest of snapshot")); p++) warns++;
    cr_assert_eq(warns, bad, "%d warnings for %d unreadable manifests", warns, bad);
    log_capture_begin(&cap, lp);
    removed = st_engine_clear_expired_snapshots(E, INT64_MAX);
    log_capture_end(&cap, log, sizeof log);
    cr_assert_eq(removed, 0, "never expire");
    cr_assert_eq(st_table_snapshots(T, &v, &n), 0);
    cr_assert_eq(n, bad + 1);
    cr_assert_null(find_snap(v, n, "whole"));
    cr_assert_null(find_snap(v, n, "reordered"));
    cs_free(v);
}

/* ---------------------------------------------------------------- every snapshot on disk */

/* DROP without auto_snapshot keeps the table's nodetool snapshots (as
 * Cassandra's, which removes only the sstables); st_engine_snapshots
 * lists open and dropped tables' snapshots with keyspace, table and id
 * from the directory names, and skips directories that are not
 * <word>/<word>-<32 hex>; sstable_true_size leaves the manifest out;
 * st_engine_clear_snapshots reaches dropped tables' snapshots. */
Test(storage_snapshot, engine_lists_dropped_tables_snapshots)
{
    one_flushed_row();
    cr_assert_eq(st_table_snapshot(T, "manual", NULL), 0);
    static const uint8_t TID2[16] = { 0xab, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 0xef };
    st_table *t2;
    cr_assert_eq(st_table_open(E, TID2, "ks2", "other", NULL, &t2), 0);
    cr_assert_eq(st_table_snapshot(t2, "empty", NULL), 0);
    char odd[700];   /* not a table directory: skipped */
    snprintf(odd, sizeof odd, "%s/ks/not-a-table/snapshots/x", g_d);
    cr_assert_eq(vfs_mkdirs(odd), 0);
    snprintf(odd, sizeof odd, "%s/k-s/t-03030303030303030303030303030303/snapshots/x", g_d);
    cr_assert_eq(vfs_mkdirs(odd), 0);

    st_snapshot_info *v; int n;
    cr_assert_eq(st_table_snapshots(T, &v, &n), 0);
    cr_assert_eq(n, 1);
    cr_assert_eq(v[0].sstable_true_size, 0, "every sstable file is shared with the live set");
    cr_assert_gt(v[0].true_size, 0, "the manifest is the snapshot's own");
    cs_free(v);

    char dir[600];
    snprintf(dir, sizeof dir, "%s", st_table_dir(T));
    cr_assert_eq(st_table_drop(T), 0);   /* auto_snapshot is off */
    T = NULL;
    char snaps[700];
    snprintf(snaps, sizeof snaps, "%s/snapshots/manual/manifest.json", dir);
    cr_assert_gt(vfs_file_size(snaps), 0, "the manual snapshot outlives DROP");
    snprintf(snaps, sizeof snaps, "%s/cs-1-Data.db", dir);
    cr_assert_lt(vfs_file_size(snaps), 0, "the live sstables are gone");

    st_snapshot_entry *en; int ne;
    cr_assert_eq(st_engine_snapshots(E, &en, &ne), 0);
    cr_assert_eq(ne, 2);
    const st_snapshot_entry *a = strcmp(en[0].ks, "ks") ? &en[1] : &en[0], *b = a == en ? &en[1] : &en[0];
    cr_assert_str_eq(a->ks, "ks");
    cr_assert_str_eq(a->table, "r");
    cr_assert(!memcmp(a->id, TID, 16));
    cr_assert_str_eq(a->info.tag, "manual");
    cr_assert_eq(a->info.true_size, a->info.size_on_disk, "nothing shared once dropped");
    cr_assert_gt(a->info.sstable_true_size, 0);
    cr_assert_lt(a->info.sstable_true_size, a->info.true_size, "the manifest is not an sstable file");
    cr_assert_str_eq(b->ks, "ks2");
    cr_assert_str_eq(b->table, "other");
    cr_assert(!memcmp(b->id, TID2, 16));
    cr_assert_str_eq(b->info.tag, "empty");
    cs_free(en);

    /* clearsnapshot: only the keyspaces named; a dropped table's directory
     * goes with its last snapshot, an open table's stays. */
    char *other[] = { "ks2", "nope" }, *ks[] = { "ks" };
    cr_assert_eq(st_engine_clear_snapshots(E, other, 2, "manual"), 0);
    cr_assert_eq(st_engine_clear_snapshots(E, ks, 1, "manual"), 1);
    struct stat sb;
    cr_assert_neq(stat(dir, &sb), 0, "%s", dir);
    cr_assert_eq(st_engine_clear_snapshots(E, NULL, 0, NULL), 3, "t2's and the two odd directories' x");
    cr_assert_eq(stat(st_table_dir(t2), &sb), 0, "an open table keeps its directory");
    cr_assert_eq(st_engine_snapshots(E, &en, &ne), 0);
    cr_assert_eq(ne, 0);
    cs_free(en);

    /* A table dropped without snapshots leaves no directory. */
    cr_assert_eq(st_table_snapshot(t2, "again", NULL), 0);
    snprintf(dir, sizeof dir, "%s", st_table_dir(t2));
    cr_assert_eq(st_table_clear_snapshots(t2, NULL), 1);
    cr_assert_eq(st_table_drop(t2), 0);
    cr_assert_neq(stat(dir, &sb), 0, "%s", dir);
}

/* The sstable files (cs-*) in dir. */
static int count_sstable_files(const char *dir)
{
    char **names; int n, k = 0;
    if (vfs_list(dir, &names, &n)) return -1;
    for (int i = 0; i < n; i++) k += !strncmp(names[i], "cs-", 3);
    vfs_list_free(names, n);
    return k;
}

/* nodetool import / refresh (storage/import.c): a snapshot's sstable
 * loaded back under a new generation with its statistics rewritten, the
 * source moved (or kept with copy), a corrupt directory refused whole and
 * left as it was, the table's open sstables never loaded twice, and the
 * result there after a reopen. */
Test(storage_snapshot, import_snapshot_back)
{
    st_mutation *m = mut();
    st_mut_row(m, (const uint8_t *)"a", 1, 0);
    cell(m, 1, 10, "x");
    st_mut_row(m, (const uint8_t *)"b", 1, 0);
    cell(m, 1, 11, "y");
    commit(m);
    char want[256], got[256];
    dump(want, sizeof want, false, false, NULL);
    st_snapshot_opts so = { 0 };
    cr_assert_eq(st_table_snapshot(T, "s", &so), 0);
    char snap[700], copy[800];
    snprintf(snap, sizeof snap, "%s/snapshots/s", st_table_dir(T));
    cr_assert_eq(count_sstable_files(snap), 5);
    cr_assert_eq(st_table_truncate(T), 0);
    dump(got, sizeof got, false, false, NULL);
    cr_assert_str_eq(got, "");

    /* a corrupt copy: refused whole, nothing moved */
    snprintf(copy, sizeof copy, "%s/../bad", g_d);
    cr_assert_eq(vfs_mkdirs(copy), 0);
    char **names; int n;
    cr_assert_eq(vfs_list(snap, &names, &n), 0);
    for (int i = 0; i < n; i++) {
        if (strncmp(names[i], "cs-", 3)) continue;
        char a[1200], b[1200];
        snprintf(a, sizeof a, "%s/%s", snap, names[i]);
        snprintf(b, sizeof b, "%s/%s", copy, names[i]);
        uint8_t *p; size_t len;
        cr_assert_eq(vfs_read_all(a, &p, &len), 0);
        if (strstr(names[i], "Data.db")) p[len - 1] ^= 0xFF;
        cr_assert_eq(vfs_write_atomic(b, p, len), 0);
        cs_free(p);
    }
    vfs_list_free(names, n);
    st_import_opts o = { .verify = true };
    int loaded = -1;
    cr_assert_eq(st_table_import(T, copy, &o, &loaded), CS_ECORRUPT);
    cr_assert_eq(loaded, 0);
    cr_assert_eq(count_sstable_files(copy), 5);
    cr_assert_eq(count_sstable_files(st_table_dir(T)), 0);
    cr_assert_eq(st_table_import(T, "/no/such/dir", &o, &loaded), CS_ENOTFOUND);

    /* copy: the snapshot keeps its files; then a move empties it */
    o.copy = true;
    cr_assert_eq(st_table_import(T, snap, &o, &loaded), 0);
    cr_assert_eq(loaded, 1);
    cr_assert_eq(count_sstable_files(snap), 5);
    dump(got, sizeof got, false, false, NULL);
    cr_assert_str_eq(got, want);
    o.copy = false;
    cr_assert_eq(st_table_import(T, snap, &o, &loaded), 0);
    cr_assert_eq(loaded, 1);
    cr_assert_eq(count_sstable_files(snap), 0);
    dump(got, sizeof got, false, false, NULL);
    cr_assert_str_eq(got, want, "the same cells twice read once");
    /* refresh: both are open, nothing to load */
    cr_assert_eq(st_table_import(T, NULL, &o, &loaded), 0);
    cr_assert_eq(loaded, 0);
    cr_assert_eq(count_sstable_files(st_table_dir(T)), 10);
    /* the rewritten statistics: no ancestors, no commit log position, level 0 */
    char **paths; int np;
    cr_assert_eq(st_table_sstables(T, &paths, &np), 0);
    cr_assert_eq(np, 2);
    for (int i = 0; i < np; i++) {
        char *slash = strrchr(paths[i], '/');
        uint64_t gen = strtoull(slash + 4, NULL, 10);
        *slash = 0;
        sst_reader *r;
        cr_assert_eq(sst_reader_open(paths[i], gen, &r), 0);
        cr_assert_eq(r->st.n_ancestors, 0);
        cr_assert_eq(r->st.level, 0);
        cr_assert(r->st.clog_pos.segment == 0 && r->st.clog_pos.offset == 0);
        sst_reader_unref(r);
    }
    st_paths_free(paths, np);
    st_config cfg;
    st_config_defaults(&cfg);
    cfg.data_dir = g_d; cfg.commitlog_dir = g_c;
    reopen_with(&cfg);
    dump(got, sizeof got, false, false, NULL);
    cr_assert_str_eq(got, want);
}
