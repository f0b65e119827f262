/*
 * snapshot.c: table snapshots (nodetool snapshot / listsnapshots /
 * clearsnapshot, and auto_snapshot's before TRUNCATE and DROP): hard links
 * of a table's live sstables in <table dir>/snapshots/<tag>/ with a
 * manifest.json, as Cassandra 4.1's (ColumnFamilyStore.createSnapshot,
 * SnapshotManifest).  Called from the request loops (nodetool) and from
 * st_table_truncate / st_table_drop.
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
 * skip_flush), then manifest.json listing them, as Cassandra's snapshots
 * (its creation time is the manifest's). */
static int snapshot_into(st_table *t, const char *dir, bool skip_flush)
{
    int rc = skip_flush ? 0 : st__flush_table(t, true);
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
    char iso[40];
    cs_format_instant_ms(cs_now_ms(), iso, sizeof iso);
    put_str(&man, "],\"created_at\":\"");
    put_str(&man, iso);
    put_str(&man, "\",\"expires_at\":null,\"ephemeral\":false}\n");
    if (!rc) {
        char mp[4500];
        snprintf(mp, sizeof mp, "%s/manifest.json", dir);
        rc = man.err ? man.err : write_file(mp, man.p, man.len);
    }
    cs_buf_destroy(&man);
    if (rc) CS_ERROR("storage: snapshot of %s.%s into %s failed: %s", t->ks, t->name, dir, cs_strerror(rc));
    return rc;
}

/* auto_snapshot: flush, then hard-link every live sstable component into
 * <table dir>/snapshots/<ms>-<label>/ (Cassandra's truncate/drop snapshots). */
int st__snapshot_auto(st_table *t, const char *label)
{
    char dir[4400];
    snprintf(dir, sizeof dir, "%s/snapshots/%lld-%s", t->dir, (long long)cs_now_ms(), label);
    return snapshot_into(t, dir, false);
}

int st_table_snapshot(st_table *t, const char *tag, bool skip_flush)
{
    if (!t || !tag || !*tag || strchr(tag, '/') || !strcmp(tag, ".") || !strcmp(tag, "..")) return CS_EINVAL;
    char dir[4400];
    snprintf(dir, sizeof dir, "%s/snapshots/%s", t->dir, tag);
    struct stat sb;
    if (stat(dir, &sb) == 0) return CS_EEXIST;
    return snapshot_into(t, dir, skip_flush);
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
        char **files; int nf;
        if (vfs_list(dir, &files, &nf) == 0) {
            for (int f = 0; f < nf; f++) {
                char fp[5000];
                snprintf(fp, sizeof fp, "%s/%s", dir, files[f]);
                struct stat fs;
                if (stat(fp, &fs) != 0 || !S_ISREG(fs.st_mode)) continue;
                si->size_on_disk += (uint64_t)fs.st_size;
                if (fs.st_nlink == 1) si->true_size += (uint64_t)fs.st_size;   /* no live sstable shares it */
                if (!strcmp(files[f], "manifest.json"))
                    si->created_ms = (int64_t)fs.st_mtim.tv_sec * 1000 + fs.st_mtim.tv_nsec / 1000000;
            }
            vfs_list_free(files, nf);
        }
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
