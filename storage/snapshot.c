/*
 * snapshot.c: table snapshots (nodetool snapshot / listsnapshots /
 * clearsnapshot, and auto_snapshot's before TRUNCATE and DROP): hard links
 * of a table's live sstables in <table dir>/snapshots/<tag>/ with a
 * manifest.json, as Cassandra 4.1's (ColumnFamilyStore.createSnapshot,
 * SnapshotManifest).  Called from the request loops (nodetool) and from
 * st_table_truncate / st_table_drop.
 *
 * Expiring snapshots (nodetool snapshot --ttl, auto_snapshot_ttl): the
 * manifest's expires_at is created_at + the TTL; a snapshot whose
 * expires_at has passed is removed by st_engine_clear_expired_snapshots,
 * which runs (as Cassandra's SnapshotManager) when the engine opens and
 * then every snapshot_cleanup_period_ms on the engine's "snapcleanup"
 * thread.  The sweep lives here, in storage, rather than on a libuv timer
 * in server/: the snapshots are this module's files (it writes their
 * manifests), removing one is many unlinks that must not run on a request
 * loop, and a thread of its own is never held up behind a long compaction
 * (the compaction threads' idle wake-up would be).  Sweeping during
 * st_engine_open, before anything can list snapshots, means a restart never
 * shows one that expired while the node was down (Cassandra's first check
 * runs 5 s after start).
 *
 * Concurrency: the sweep reads a manifest and removes the directory with no
 * lock.  A snapshot being taken has no manifest until its links are made
 * (so is never swept half made); nodetool refuses a tag that still exists,
 * and clearsnapshot and the sweep removing the same directory at once only
 * leave one of them counting it.
 */
#include "storage/storage_int.h"
#include "storage/sstable_int.h"
#include "common/alloc.h"
#include "common/err.h"
#include "common/log.h"
#include "common/util.h"
#include "common/vfs.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void put_str(cs_buf *b, const char *s) { cs_buf_put(b, s, strlen(s)); }

static int write_file(const char *path, const void *p, size_t len)
{
    int fd = vfs_open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
    if (fd < 0) return fd;
    ssize_t w = vfs_write(fd, p, len);
    vfs_close(fd);
    return w < 0 ? (int)w : (size_t)w == len ? 0 : CS_EIO;
}

/* Hard links of t's live sstables in dir (created; flushed first unless
 * o->skip_flush), then manifest.json listing them, with Cassandra's
 * created_at and expires_at (created_at + the TTL, or null). */
static int snapshot_into(st_table *t, const char *dir, const st_snapshot_opts *o)
{
    int rc = o->skip_flush ? 0 : st__flush_table(t, true);
    if (rc) return rc;
    if ((rc = vfs_mkdirs(dir))) return rc;
    static const char *comps[] = { "Data.db", "Index.db", "Filter.db", "Statistics.db", "TOC.txt" };
    cs_buf man;
    cs_buf_init(&man);
    put_str(&man, "{\"files\":[");
    pthread_mutex_lock(&t->mu);
    for (int i = 0; i < t->n_ssts && !rc; i++)
        for (int c = 0; c < 5 && !rc; c++) {
            char from[4400], to[4500], name[64];
            snprintf(name, sizeof name, "cs-%" PRIu64 "-%s", sst__reader_gen(t->ssts[i]), comps[c]);
            snprintf(from, sizeof from, "%s/%s", t->dir, name);
            snprintf(to, sizeof to, "%s/%s", dir, name);
            if (link(from, to) != 0) { cs_last_errno = errno; rc = CS_EIO; }
            if (c == 0) {   /* the manifest names the data files */
                if (i) put_str(&man, ",");
                put_str(&man, "\"");
                put_str(&man, name);
                put_str(&man, "\"");
            }
        }
    pthread_mutex_unlock(&t->mu);
    int64_t created_ms = o->created_ms ? o->created_ms : cs_now_ms();
    char iso[40];
    cs_format_instant_ms(created_ms, iso, sizeof iso);
    put_str(&man, "],\"created_at\":\"");
    put_str(&man, iso);
    put_str(&man, "\",\"expires_at\":");
    if (o->has_ttl) {   /* SnapshotManifest: createdAt.plusSeconds(ttl) */
        cs_format_instant_ms(created_ms + o->ttl_s * 1000, iso, sizeof iso);
        put_str(&man, "\"");
        put_str(&man, iso);
        put_str(&man, "\"");
    } else {
        put_str(&man, "null");
    }
    put_str(&man, ",\"ephemeral\":false}\n");
    if (!rc) {
        char mp[4500];
        snprintf(mp, sizeof mp, "%s/manifest.json", dir);
        rc = man.err ? man.err : write_file(mp, man.p, man.len);
    }
    cs_buf_destroy(&man);
    if (rc) CS_ERROR("storage: snapshot of %s.%s into %s failed: %s", t->ks, t->name, dir, cs_strerror(rc));
    return rc;
}

/* The instant after "key": in a manifest's text: true and *ms if it is a
 * string that parses; false if null, missing or anything else. */
static bool manifest_instant(const char *p, size_t n, const char *key, int64_t *ms)
{
    size_t kl = strlen(key);
    for (size_t i = 0; i + kl + 2 < n; i++) {
        if (p[i] != '"' || memcmp(p + i + 1, key, kl) || p[i + 1 + kl] != '"') continue;
        size_t j = i + kl + 2;
        while (j < n && (p[j] == ' ' || p[j] == '\t' || p[j] == '\n' || p[j] == '\r' || p[j] == ':')) j++;
        if (j >= n || p[j] != '"') return false;
        size_t e = j + 1;
        while (e < n && p[e] != '"') e++;
        return e < n && cs_parse_instant_ms(p + j + 1, e - j - 1, ms) == 0;
    }
    return false;
}

/* created_at / expires_at of the manifest in dir, where it has them
 * (TableSnapshot.Builder.loadTimestampsFromManifest). */
static void manifest_read(const char *dir, bool *has_created, int64_t *created_ms, bool *has_expires,
                          int64_t *expires_ms)
{
    char mp[5200];
    snprintf(mp, sizeof mp, "%s/manifest.json", dir);
    uint8_t *b; size_t len;
    *has_created = *has_expires = false;
    if (vfs_read_all(mp, &b, &len) != 0) return;
    *has_created = manifest_instant((const char *)b, len, "created_at", created_ms);
    *has_expires = manifest_instant((const char *)b, len, "expires_at", expires_ms);
    cs_free(b);
}

/* auto_snapshot: flush, then hard-link every live sstable component into
 * <table dir>/snapshots/<ms>-<label>/ (Cassandra's truncate/drop snapshots),
 * expiring after auto_snapshot_ttl if one is set. */
int st__snapshot_auto(st_table *t, const char *label)
{
    const st_config *c = &t->e->cfg;
    st_snapshot_opts o = { .created_ms = cs_now_ms(), .has_ttl = c->auto_snapshot_has_ttl,
                           .ttl_s = c->auto_snapshot_ttl_s };
    char dir[4400];
    snprintf(dir, sizeof dir, "%s/snapshots/%lld-%s", t->dir, (long long)o.created_ms, label);
    return snapshot_into(t, dir, &o);
}

int st_table_snapshot(st_table *t, const char *tag, const st_snapshot_opts *opts)
{
    if (!t || !tag || !*tag || strchr(tag, '/') || !strcmp(tag, ".") || !strcmp(tag, "..")) return CS_EINVAL;
    static const st_snapshot_opts none;
    if (!opts) opts = &none;
    if (opts->has_ttl && (opts->ttl_s < 0 || opts->ttl_s >= INT32_MAX)) return CS_EINVAL;
    char dir[4400];
    snprintf(dir, sizeof dir, "%s/snapshots/%s", t->dir, tag);
    struct stat sb;
    if (stat(dir, &sb) == 0) return CS_EEXIST;
    return snapshot_into(t, dir, opts);
}

int st_table_snapshots(st_table *t, st_snapshot_info **out, int *n_out)
{
    *out = NULL;
    *n_out = 0;
    if (!t) return CS_EINVAL;
    char base[4400];
    snprintf(base, sizeof base, "%s/snapshots", t->dir);
    char **names; int n;
    if (vfs_list(base, &names, &n) != 0) return 0;   /* no snapshots directory: none */
    st_snapshot_info *v = n ? cs_calloc((size_t)n, sizeof *v) : NULL;
    int k = 0;
    for (int i = 0; i < n && (v || !n); i++) {
        char dir[4700];
        snprintf(dir, sizeof dir, "%s/%s", base, names[i]);
        struct stat sb;
        if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) continue;
        st_snapshot_info *si = &v[k];
        snprintf(si->tag, sizeof si->tag, "%s", names[i]);
        si->created_ms = (int64_t)sb.st_mtim.tv_sec * 1000 + sb.st_mtim.tv_nsec / 1000000;
        bool has_created;
        int64_t created_ms;
        manifest_read(dir, &has_created, &created_ms, &si->expiring, &si->expires_ms);
        char **files; int nf;
        if (vfs_list(dir, &files, &nf) == 0) {
            for (int f = 0; f < nf; f++) {
                char fp[5000];
                snprintf(fp, sizeof fp, "%s/%s", dir, files[f]);
                struct stat fs;
                if (stat(fp, &fs) != 0 || !S_ISREG(fs.st_mode)) continue;
                si->size_on_disk += (uint64_t)fs.st_size;
                if (fs.st_nlink == 1) si->true_size += (uint64_t)fs.st_size;   /* no live sstable shares it */
                if (!strcmp(files[f], "manifest.json"))   /* a manifest without created_at */
                    si->created_ms = (int64_t)fs.st_mtim.tv_sec * 1000 + fs.st_mtim.tv_nsec / 1000000;
            }
            vfs_list_free(files, nf);
        }
        if (has_created) si->created_ms = created_ms;
        k++;
    }
    vfs_list_free(names, n);
    if (n && !v) return CS_ENOMEM;
    *out = v;
    *n_out = k;
    return 0;
}

int st_table_clear_snapshots(st_table *t, const char *tag)
{
    if (!t) return CS_EINVAL;
    st_snapshot_info *v; int n;
    int rc = st_table_snapshots(t, &v, &n);
    if (rc) return rc;
    int removed = 0;
    for (int i = 0; i < n; i++) {
        if (tag && strcmp(tag, v[i].tag)) continue;
        char dir[4700];
        snprintf(dir, sizeof dir, "%s/snapshots/%s", t->dir, v[i].tag);
        if (vfs_rmtree(dir) == 0) removed++;
    }
    cs_free(v);
    return removed;
}

/* ---------------------------------------------------------------- expiry */

/* Remove the expired snapshots of one table directory; how many. */
static int clear_expired_in(const char *table_dir, int64_t now_ms)
{
    char base[4800];
    snprintf(base, sizeof base, "%s/snapshots", table_dir);
    char **tags; int n;
    if (vfs_list(base, &tags, &n) != 0) return 0;
    int removed = 0;
    for (int i = 0; i < n; i++) {
        char dir[5100];
        snprintf(dir, sizeof dir, "%s/%s", base, tags[i]);
        bool has_created, has_expires;
        int64_t created_ms, expires_ms;
        manifest_read(dir, &has_created, &created_ms, &has_expires, &expires_ms);
        /* TableSnapshot.isExpired: both times known, expires_at before now */
        if (!has_created || !has_expires || expires_ms >= now_ms) continue;
        char when[40];
        cs_format_instant_ms(expires_ms, when, sizeof when);
        int rc = vfs_rmtree(dir);
        if (rc == 0) {
            removed++;
            CS_DEBUG("storage: removed snapshot %s of %s, expired at %s", tags[i], table_dir, when);
        } else {
            CS_WARN("storage: cannot remove expired snapshot %s: %s", dir, cs_strerror(rc));
        }
    }
    vfs_list_free(tags, n);
    return removed;
}

int st_engine_clear_expired_snapshots(st_engine *e, int64_t now_ms)
{
    /* Every <data>/<keyspace>/<table>/snapshots/, open table or not: a
     * dropped table's directory keeps its snapshots (auto_snapshot), and
     * Cassandra's SnapshotLoader finds those too. */
    char **kss; int nks;
    if (!e || vfs_list(e->data_dir, &kss, &nks) != 0) return 0;
    int removed = 0;
    for (int i = 0; i < nks; i++) {
        char ksdir[4400];
        snprintf(ksdir, sizeof ksdir, "%s/%s", e->data_dir, kss[i]);
        char **tabs; int nt;
        if (vfs_list(ksdir, &tabs, &nt) != 0) continue;   /* not a directory */
        for (int j = 0; j < nt; j++) {
            char tdir[4700];
            snprintf(tdir, sizeof tdir, "%s/%s", ksdir, tabs[j]);
            removed += clear_expired_in(tdir, now_ms);
        }
        vfs_list_free(tabs, nt);
    }
    vfs_list_free(kss, nks);
    if (removed) CS_INFO("storage: removed %d expired snapshot director%s", removed, removed == 1 ? "y" : "ies");
    return removed;
}

/* The "snapcleanup" thread: a sweep every snapshot_cleanup_period_ms after
 * the last one ended (Cassandra's scheduleWithFixedDelay), until stopped. */
static void *cleanup_main(void *arg)
{
    st_engine *e = arg;
    int period_ms = e->cfg.snapshot_cleanup_period_ms;
    pthread_mutex_lock(&e->snap_mu);
    while (!e->snap_stop) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += period_ms / 1000;
        ts.tv_nsec += (long)(period_ms % 1000) * 1000000L;
        if (ts.tv_nsec >= 1000000000L) { ts.tv_sec++; ts.tv_nsec -= 1000000000L; }
        while (!e->snap_stop && pthread_cond_timedwait(&e->snap_cv, &e->snap_mu, &ts) != ETIMEDOUT) {}
        if (e->snap_stop) break;
        pthread_mutex_unlock(&e->snap_mu);
        st_engine_clear_expired_snapshots(e, cs_now_ms());
        pthread_mutex_lock(&e->snap_mu);
    }
    pthread_mutex_unlock(&e->snap_mu);
    return NULL;
}

int st__snapshot_cleanup_start(st_engine *e)
{
    if (e->cfg.snapshot_cleanup_period_ms <= 0) e->cfg.snapshot_cleanup_period_ms = 60000;
    pthread_mutex_init(&e->snap_mu, NULL);
    pthread_cond_init(&e->snap_cv, NULL);
    e->snap_stop = false;
    st_engine_clear_expired_snapshots(e, cs_now_ms());
    if (pthread_create(&e->snap_thread, NULL, cleanup_main, e) != 0) {
        pthread_cond_destroy(&e->snap_cv);
        pthread_mutex_destroy(&e->snap_mu);
        return CS_EIO;
    }
    pthread_setname_np(e->snap_thread, "snapcleanup");
    e->snap_running = true;
    return 0;
}

void st__snapshot_cleanup_stop(st_engine *e)
{
    if (!e->snap_running) return;
    pthread_mutex_lock(&e->snap_mu);
    e->snap_stop = true;
    pthread_cond_signal(&e->snap_cv);
    pthread_mutex_unlock(&e->snap_mu);
    pthread_join(e->snap_thread, NULL);
    pthread_cond_destroy(&e->snap_cv);
    pthread_mutex_destroy(&e->snap_mu);
    e->snap_running = false;
}
