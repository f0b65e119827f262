/*
 * test_storage_snapshot.c: snapshots through storage.h (storage/snapshot.c):
 * auto_snapshot on TRUNCATE and DROP, manifests with created_at and
 * expires_at, listing, and the removal of expired snapshots at open and by
 * the cleanup thread.
 */
#define READ_FIXTURE_TAG "st_snap"
#include "test_storage_read_fixture.h"

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
