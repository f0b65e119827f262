/*
 * import.c: nodetool import and refresh on the storage side (storage.h
 * st_table_import; Cassandra's SSTableImporter.importNewSSTables).
 *
 *   list the complete sstables of src (a TOC.txt) ─> verify each (option)
 *   ─> pause t's flushes and compactions ─> per sstable: a new generation,
 *   its Data, Index and Filter hard-linked (copied across file systems),
 *   Statistics.db written anew (level, ancestors, commit log position),
 *   TOC.txt last ─> open, add to t ─> the source's files removed (a move)
 *
 * Crash safety: the new sstable exists only once its TOC does (the
 * engine removes TOC-less components when it opens the table), and a
 * moved source is removed only after that, so a crash leaves the data in
 * the source, in the table, or briefly in both (the same cells twice
 * reconcile to the same result).  A failure part way removes the new
 * generation's files; the source was never changed.
 *
 * Why the statistics are rewritten: the ancestors name generations of the
 * table the sstable came from, and the engine deletes sstables named as
 * an ancestor of another when it opens a table (a finished compaction's
 * inputs); the commit log position is of another log, or of this one
 * long ago, and the engine's replay skips records at or before the
 * newest position of a table's sstables.
 *
 * Refresh (src NULL) takes sstables placed in the table's own directory:
 * not those open by a reader (st_table's sstables, and compaction inputs
 * not yet deleted: sst__data_file_open), and not while a flush or
 * compaction of the table could publish one (st__wait_idle first).
 */
#include "storage/sstable_int.h"
#include "common/alloc.h"
#include "common/err.h"
#include "common/log.h"
#include "common/vfs.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *const linked[] = { "Data.db", "Index.db", "Filter.db" };

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The generations of dir's complete sstables, ascending; for the table's
 * own directory (own) not those a reader has open.  *max (if max): the
 * highest generation any file of dir is named with (complete or not). */
static int list_gens(const char *dir, bool own, uint64_t **out, int *n_out, uint64_t *max)
{
    *out = NULL;
    *n_out = 0;
    uint64_t top = 0;
    char **names;
    int n;
    int rc = vfs_list(dir, &names, &n);
    if (rc) return rc;
    uint64_t *g = cs_calloc((size_t)n + 1, sizeof *g);
    if (!g) { vfs_list_free(names, n); return CS_ENOMEM; }
    int k = 0;
    char path[4400];
    for (int i = 0; i < n; i++) {
        uint64_t gen;
        int c = 0;
        const char *nm = strncmp(names[i], "tmp-", 4) ? names[i] : names[i] + 4;
        if (sscanf(nm, "cs-%" SCNu64 "-%n", &gen, &c) != 1 || c == 0) continue;
        if (gen > top) top = gen;
        if (nm != names[i] || strcmp(nm + c, "TOC.txt")) continue;   /* a temporary, or not the TOC */
        if (own) {
            snprintf(path, sizeof path, "%s/cs-%" PRIu64 "-Data.db", dir, gen);
            if (sst__data_file_open(path)) continue;
        }
        g[k++] = gen;
    }
    vfs_list_free(names, n);
    qsort(g, (size_t)k, sizeof *g, cmp_u64);
    if (max) *max = top;
    *out = g;
    *n_out = k;
    return 0;
}

/* Copy from into a new file to (fsynced). */
static int copy_file(const char *from, const char *to)
{
    int in = vfs_open(from, O_RDONLY, 0);
    if (in < 0) return in;
    int fd = vfs_open(to, O_WRONLY | O_CREAT | O_EXCL, 0644);   /* never over a file */
    if (fd < 0) { vfs_close(in); return fd; }
    enum { CHUNK = 1 << 20 };
    uint8_t *buf = cs_malloc(CHUNK);
    int rc = buf ? 0 : CS_ENOMEM;
    for (uint64_t off = 0; !rc;) {
        ssize_t r = vfs_pread(in, buf, CHUNK, off);
        if (r < 0) { rc = (int)r; break; }
        if (r == 0) break;
        ssize_t w = vfs_pwrite(fd, buf, (size_t)r, off);
        if (w < 0) { rc = (int)w; break; }
        off += (uint64_t)r;
    }
    cs_free(buf);
    if (!rc) rc = vfs_fsync(fd);
    vfs_close(fd);
    vfs_close(in);
    if (rc) vfs_unlink(to);
    return rc;
}

/* sst_verify each of dir's sstables gens[0..n): 0, or the first failure
 * (logged, naming the file). */
static int verify_gens(st_table *t, const char *dir, const uint64_t *gens, int n)
{
    char path[4400];
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/cs-%" PRIu64 "-Data.db", dir, gens[i]);
        int rc = sst_verify(path, NULL);
        if (rc) {
            CS_ERROR("storage: import into %s.%s: failed verifying sstable %s: %s", t->ks, t->name, path,
                     cs_strerror(rc));
            return rc;
        }
    }
    return 0;
}

/* Is path the table's own directory (refresh), by what it resolves to? */
static bool same_dir(const char *a, const char *b)
{
    struct stat x, y;
    return stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

/* Load src's sstable gen into t under a new generation; *r_out is it,
 * added to t.  The source is left as it was. */
static int import_one(st_table *t, const char *src, uint64_t gen, const st_import_opts *o, sst_reader **r_out)
{
    *r_out = NULL;
    sst_stats st;
    int rc = sst__stats_read(src, gen, &st);
    if (rc) {
        CS_ERROR("storage: import into %s.%s: cannot read the statistics of sstable %s/cs-%" PRIu64 ": %s", t->ks,
                 t->name, src, gen, cs_strerror(rc));
        return rc;
    }
    if (!o->keep_level) st.level = 0;
    st.n_ancestors = 0;
    st.clog_pos = (st_clog_pos){ 0, 0 };
    pthread_mutex_lock(&t->mu);
    uint64_t ng = t->next_gen++;
    pthread_mutex_unlock(&t->mu);
    char from[4400], to[4400];
    for (size_t i = 0; !rc && i < sizeof linked / sizeof linked[0]; i++) {
        snprintf(from, sizeof from, "%s/cs-%" PRIu64 "-%s", src, gen, linked[i]);
        snprintf(to, sizeof to, "%s/cs-%" PRIu64 "-%s", t->dir, ng, linked[i]);
        rc = o->copy ? copy_file(from, to) : vfs_link(from, to);
        if (rc && !o->copy) rc = copy_file(from, to);   /* another file system */
    }
    if (!rc) rc = sst__stats_write(t->dir, ng, &st);
    if (!rc) {
        snprintf(to, sizeof to, "%s/cs-%" PRIu64 "-TOC.txt", t->dir, ng);
        rc = vfs_write_atomic(to, SST_TOC_TEXT, sizeof SST_TOC_TEXT - 1);
    }
    sst_reader *r = NULL;
    if (!rc) rc = sst_reader_open(t->dir, ng, &r);
    if (!rc) {
        pthread_mutex_lock(&t->mu);
        rc = st__push_sst(t, r);
        pthread_mutex_unlock(&t->mu);
        if (rc) { sst_reader_unref(r); r = NULL; }
    }
    if (rc) {
        CS_ERROR("storage: import into %s.%s: sstable %s/cs-%" PRIu64 " as generation %" PRIu64 ": %s", t->ks, t->name,
                 src, gen, ng, cs_strerror(rc));
        sst__delete_files(t->dir, ng);
        return rc;
    }
    CS_INFO("storage: imported %s/cs-%" PRIu64 " into %s.%s as %s/cs-%" PRIu64, src, gen, t->ks, t->name, t->dir, ng);
    *r_out = r;
    return 0;
}

int st_table_import(st_table *t, const char *src, const st_import_opts *o, int *n_loaded)
{
    *n_loaded = 0;
    if (!t || !o) return CS_EINVAL;
    struct stat sb;
    if (src && (stat(src, &sb) != 0 || !S_ISDIR(sb.st_mode))) return CS_ENOTFOUND;
    bool own = src == NULL || same_dir(src, t->dir);
    const char *dir = own ? t->dir : src;
    uint64_t *gens = NULL;
    int n = 0, rc = 0;
    if (!own) {   /* verified before anything is moved (SSTableImporter) */
        if ((rc = list_gens(dir, false, &gens, &n, NULL))) return rc;
        if (o->verify && (rc = verify_gens(t, dir, gens, n))) { cs_free(gens); return rc; }
    }
    st__wait_idle(t);
    /* The table's directory, now that no flush or compaction can publish
     * into it: refresh's candidates, and new generations past every name
     * there, so none is one a file placed there (and not refreshed yet)
     * already has. */
    uint64_t *mine = NULL, tmax = 0;
    int nm = 0;
    rc = list_gens(t->dir, true, &mine, &nm, &tmax);
    if (own) { gens = mine; n = nm; } else cs_free(mine);
    if (!rc) {
        pthread_mutex_lock(&t->mu);
        if (t->next_gen <= tmax) t->next_gen = tmax + 1;
        pthread_mutex_unlock(&t->mu);
    }
    if (own && !rc && o->verify) rc = verify_gens(t, dir, gens, n);
    sst_reader **added = rc ? NULL : cs_calloc((size_t)n + 1, sizeof *added);
    if (!rc && !added) rc = CS_ENOMEM;
    int k = 0;
    for (int i = 0; !rc && i < n; i++) {
        rc = import_one(t, dir, gens[i], o, &added[k]);
        if (!rc) k++;
    }
    if (rc) {   /* the directory fails whole: what was added goes again */
        pthread_mutex_lock(&t->mu);
        for (int i = 0; i < k; i++) {
            for (int j = 0; j < t->n_ssts; j++)
                if (t->ssts[j] == added[i]) {
                    memmove(&t->ssts[j], &t->ssts[j + 1], sizeof *t->ssts * (size_t)(t->n_ssts - j - 1));
                    t->n_ssts--;
                    break;
                }
        }
        t->src_version++;
        pthread_mutex_unlock(&t->mu);
        for (int i = 0; i < k; i++) { sst__mark_obsolete(added[i]); sst_reader_unref(added[i]); }
        k = 0;
    } else if (own || !o->copy) {   /* a move: the source goes once the copies are in */
        for (int i = 0; i < n; i++) sst__delete_files(dir, gens[i]);
        vfs_fsync_dir(dir);
    }
    st__resume(t);
    if (k)
        st__bg_kick_table(t);   /* the background threads look at the table */
    cs_free(added);
    cs_free(gens);
    *n_loaded = k;
    return rc;
}
