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
 * Durability: a snapshot directory is complete once its manifest.json is
 * there.  snapshot_into makes the links first, then writes the manifest
 * with vfs_write_atomic (manifest.json.tmp, fsync, rename, fsync of the
 * snapshot directory), so after a crash the manifest is absent or whole,
 * never torn.  If any step fails the directory is removed again: no
 * snapshot is left without its manifest (and so without its expires_at).
 *
 * Unreadable manifests (not one whole JSON object with SnapshotManifest's
 * field types, e.g. a torn one from an older cassette or a hand edit) are
 * treated as Cassandra 4.1 treats them (TableSnapshot.Builder
 * .loadTimestampsFromManifest catches the parse error and logs a warning):
 * the snapshot has neither created_at nor expires_at, so it is listed with
 * its directory's mtime as the creation time, no expiration time, and is
 * never removed by the sweep (TableSnapshot.isExpired needs both times).
 * The sweep at engine open logs one warning per such manifest, as
 * Cassandra's loader does at start; the periodic sweeps stay quiet.
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
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void put_str(cs_buf *b, const char *s) { cs_buf_put(b, s, strlen(s)); }

/* Hard links of t's live sstables in dir (created; flushed first unless
 * o->skip_flush), then manifest.json listing them, with Cassandra's
 * created_at and expires_at (created_at + the TTL, or null), written
 * durably.  On failure dir is removed again. */
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
        rc = man.err ? man.err : vfs_write_atomic(mp, man.p, man.len);
    }
    cs_buf_destroy(&man);
    if (rc) {
        CS_ERROR("storage: snapshot of %s.%s into %s failed: %s", t->ks, t->name, dir, cs_strerror(rc));
        vfs_rmtree(dir);
    }
    return rc;
}

/* ---------------------------------------------------------------- manifests
 *
 * A manifest is read as Jackson reads it into SnapshotManifest: one JSON
 * object (anything after it is ignored, as Jackson's default); "created_at"
 * and "expires_at" are null or an ISO-8601 instant string, "files" null or
 * an array of scalars, other members any value.  Anything else, a torn
 * file included, makes the whole manifest unreadable.  Numbers as instants
 * (Jackson would take epoch seconds) are unreadable here: neither cassette
 * nor Cassandra writes them. */

typedef struct jcur { const uint8_t *p; size_t n, i; } jcur;

enum { MANIFEST_NONE, MANIFEST_BAD, MANIFEST_OK };

static void j_ws(jcur *c)
{
    while (c->i < c->n && (c->p[c->i] == ' ' || c->p[c->i] == '\t' || c->p[c->i] == '\n' || c->p[c->i] == '\r')) c->i++;
}

/* Whether the next character (after white space) is ch; consumed if so. */
static bool j_eat(jcur *c, char ch)
{
    j_ws(c);
    if (c->i >= c->n || c->p[c->i] != (uint8_t)ch) return false;
    c->i++;
    return true;
}

/* A string at c: its raw body (escapes undecoded) in *s, *len; *esc says
 * it has escapes.  False if c is not at a whole string. */
static bool j_string(jcur *c, const char **s, size_t *len, bool *esc)
{
    j_ws(c);
    if (c->i >= c->n || c->p[c->i] != '"') return false;
    size_t b = ++c->i;
    *esc = false;
    for (; c->i < c->n && c->p[c->i] != '"'; c->i++) {
        if (c->p[c->i] < 0x20) return false;
        if (c->p[c->i] == '\\') {
            *esc = true;
            if (++c->i >= c->n) return false;
        }
    }
    if (c->i >= c->n) return false;
    *s = (const char *)c->p + b;
    *len = c->i++ - b;
    return true;
}

/* A literal or number at c (its syntax checked loosely: the characters a
 * number can have); false if there is none. */
static bool j_scalar(jcur *c)
{
    j_ws(c);
    static const char *lits[] = { "true", "false", "null" };
    for (int k = 0; k < 3; k++) {
        size_t l = strlen(lits[k]);
        if (c->n - c->i >= l && !memcmp(c->p + c->i, lits[k], l)) { c->i += l; return true; }
    }
    size_t b = c->i;
    while (c->i < c->n && (strchr("0123456789+-.eE", c->p[c->i]) && c->p[c->i])) c->i++;
    return c->i > b;
}

/* Any value at c, nested at most 64 deep. */
static bool j_value(jcur *c, int depth)
{
    j_ws(c);
    if (c->i >= c->n || depth > 64) return false;
    const char *s; size_t len; bool esc;
    uint8_t ch = c->p[c->i];
    if (ch == '"') return j_string(c, &s, &len, &esc);
    if (ch != '{' && ch != '[') return j_scalar(c);
    c->i++;
    char close = ch == '{' ? '}' : ']';
    if (j_eat(c, close)) return true;
    do {
        if (ch == '{' && (!j_string(c, &s, &len, &esc) || !j_eat(c, ':'))) return false;
        if (!j_value(c, depth + 1)) return false;
    } while (j_eat(c, ','));
    return j_eat(c, close);
}

/* Whether c is at null; consumed if so. */
static bool j_null(jcur *c)
{
    j_ws(c);
    if (c->n - c->i < 4 || memcmp(c->p + c->i, "null", 4)) return false;
    c->i += 4;
    return true;
}

/* An instant member's value: null (*has false) or a string
 * cs_parse_instant_ms takes. */
static bool j_instant(jcur *c, bool *has, int64_t *ms)
{
    if (j_null(c)) { *has = false; return true; }
    const char *s; size_t len; bool esc;
    if (!j_string(c, &s, &len, &esc) || esc || cs_parse_instant_ms(s, len, ms) != 0) return false;
    *has = true;
    return true;
}

/* "files": null or an array of scalars (Jackson coerces them to strings). */
static bool j_files(jcur *c)
{
    if (j_null(c)) return true;
    if (!j_eat(c, '[')) return false;
    if (j_eat(c, ']')) return true;
    do {
        j_ws(c);
        const char *s; size_t len; bool esc;
        if (c->i < c->n && c->p[c->i] == '"' ? !j_string(c, &s, &len, &esc) : !j_scalar(c)) return false;
    } while (j_eat(c, ','));
    return j_eat(c, ']');
}

/* Parse a manifest's text; false if it is unreadable (see above). */
static bool manifest_parse(const uint8_t *p, size_t n, bool *has_created, int64_t *created_ms, bool *has_expires,
                           int64_t *expires_ms)
{
    jcur c = { p, n, 0 };
    *has_created = *has_expires = false;
    if (!j_eat(&c, '{')) return false;
    if (j_eat(&c, '}')) return true;
    do {
        const char *k; size_t kl; bool esc;
        if (!j_string(&c, &k, &kl, &esc) || !j_eat(&c, ':')) return false;
        bool ok;
        if (kl == 10 && !memcmp(k, "created_at", 10)) ok = j_instant(&c, has_created, created_ms);
        else if (kl == 10 && !memcmp(k, "expires_at", 10)) ok = j_instant(&c, has_expires, expires_ms);
        else if (kl == 5 && !memcmp(k, "files", 5)) ok = j_files(&c);
        else ok = j_value(&c, 1);
        if (!ok) return false;
    } while (j_eat(&c, ','));
    return j_eat(&c, '}');
}

/* created_at / expires_at of the manifest in dir, where it has them
 * (TableSnapshot.Builder.loadTimestampsFromManifest): MANIFEST_NONE (no
 * manifest.json), MANIFEST_BAD (unreadable: neither time) or MANIFEST_OK. */
static int manifest_read(const char *dir, bool *has_created, int64_t *created_ms, bool *has_expires,
                         int64_t *expires_ms)
{
    char mp[5200];
    snprintf(mp, sizeof mp, "%s/manifest.json", dir);
    uint8_t *b; size_t len;
    *has_created = *has_expires = false;
    int rc = vfs_read_all(mp, &b, &len);
    if (rc == CS_ENOTFOUND) return MANIFEST_NONE;
    if (rc) return MANIFEST_BAD;
    bool ok = manifest_parse(b, len, has_created, created_ms, has_expires, expires_ms);
    cs_free(b);
    if (!ok) *has_created = *has_expires = false;
    return ok ? MANIFEST_OK : MANIFEST_BAD;
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

/* The snapshots in table_dir/snapshots/ (none without that directory), as
 * st_table_snapshots describes them.  0 or CS_ENOMEM. */
static int dir_snapshots(const char *table_dir, st_snapshot_info **out, int *n_out)
{
    *out = NULL;
    *n_out = 0;
    char base[4400];
    snprintf(base, sizeof base, "%s/snapshots", table_dir);
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
        /* TableSnapshot.getCreatedAt: the directory's mtime without a readable created_at */
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
                if (fs.st_nlink != 1) continue;   /* a live sstable shares it */
                si->true_size += (uint64_t)fs.st_size;
                if (!strncmp(files[f], "cs-", 3)) si->sstable_true_size += (uint64_t)fs.st_size;
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

int st_table_snapshots(st_table *t, st_snapshot_info **out, int *n_out)
{
    *out = NULL;
    *n_out = 0;
    return t ? dir_snapshots(t->dir, out, n_out) : CS_EINVAL;
}

/* Whether s is a Java regex \w+ ([A-Za-z0-9_]+). */
static bool word(const char *s, size_t n)
{
    if (!n) return false;
    for (size_t i = 0; i < n; i++)
        if (!(s[i] == '_' || (s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z')))
            return false;
    return true;
}

/* A table directory's name, <table>-<32 lowercase hex id>: the table name
 * in name (of cap bytes) and the id; false for any other name. */
static bool table_dir_name(const char *d, char *name, size_t cap, uint8_t id[16])
{
    size_t n = strlen(d);
    if (n < 34 || d[n - 33] != '-' || n - 33 >= cap || !word(d, n - 33)) return false;
    for (int i = 0; i < 16; i++) {
        int v = 0;
        for (int j = 0; j < 2; j++) {
            char c = d[n - 32 + 2 * i + j];
            if (c >= '0' && c <= '9') v = v * 16 + (c - '0');
            else if (c >= 'a' && c <= 'f') v = v * 16 + (c - 'a' + 10);
            else return false;
        }
        id[i] = (uint8_t)v;
    }
    memcpy(name, d, n - 33);
    name[n - 33] = 0;
    return true;
}

int st_engine_snapshots(st_engine *e, st_snapshot_entry **out, int *n_out)
{
    *out = NULL;
    *n_out = 0;
    if (!e) return CS_EINVAL;
    char **kss; int nks;
    if (vfs_list(e->data_dir, &kss, &nks) != 0) return 0;
    st_snapshot_entry *v = NULL;
    int n = 0, cap = 0, rc = 0;
    for (int i = 0; i < nks && !rc; i++) {
        size_t kl = strlen(kss[i]);
        if (!word(kss[i], kl) || kl >= sizeof v->ks) continue;
        char ksdir[4400];
        snprintf(ksdir, sizeof ksdir, "%s/%s", e->data_dir, kss[i]);
        char **tabs; int nt;
        if (vfs_list(ksdir, &tabs, &nt) != 0) continue;   /* not a directory */
        for (int j = 0; j < nt && !rc; j++) {
            char name[sizeof v->table];
            uint8_t id[16];
            if (!table_dir_name(tabs[j], name, sizeof name, id)) continue;
            char tdir[4700];
            snprintf(tdir, sizeof tdir, "%s/%s", ksdir, tabs[j]);
            st_snapshot_info *si; int ns;
            if ((rc = dir_snapshots(tdir, &si, &ns))) break;
            if (n + ns > cap) {
                int nc = cap ? cap : 16;
                while (nc < n + ns) nc *= 2;
                st_snapshot_entry *nv = cs_realloc(v, (size_t)nc * sizeof *v);
                if (!nv) { cs_free(si); rc = CS_ENOMEM; break; }
                v = nv;
                cap = nc;
            }
            for (int x = 0; x < ns; x++) {
                st_snapshot_entry *en = &v[n++];
                snprintf(en->ks, sizeof en->ks, "%s", kss[i]);
                snprintf(en->table, sizeof en->table, "%s", name);
                memcpy(en->id, id, 16);
                en->info = si[x];
            }
            cs_free(si);
        }
        vfs_list_free(tabs, nt);
    }
    vfs_list_free(kss, nks);
    if (rc) { cs_free(v); return rc; }
    *out = v;
    *n_out = n;
    return 0;
}

/* Remove the snapshot tag (NULL: every one) of the table directory
 * table_dir; how many snapshot directories went. */
static int clear_in(const char *table_dir, const char *tag)
{
    st_snapshot_info *v; int n;
    if (dir_snapshots(table_dir, &v, &n)) return 0;
    int removed = 0;
    for (int i = 0; i < n; i++) {
        if (tag && strcmp(tag, v[i].tag)) continue;
        char dir[4700];
        snprintf(dir, sizeof dir, "%s/snapshots/%s", table_dir, v[i].tag);
        if (vfs_rmtree(dir) == 0) removed++;
    }
    cs_free(v);
    return removed;
}

int st_table_clear_snapshots(st_table *t, const char *tag)
{
    return t ? clear_in(t->dir, tag) : CS_EINVAL;
}

int st_engine_clear_snapshots(st_engine *e, char *const *kss, int n_ks, const char *tag)
{
    char **dirs; int nd;
    if (!e) return CS_EINVAL;
    if (vfs_list(e->data_dir, &dirs, &nd) != 0) return 0;
    int removed = 0;
    for (int i = 0; i < nd; i++) {
        bool want = n_ks == 0;
        for (int k = 0; k < n_ks && !want; k++) want = !strcmp(kss[k], dirs[i]);
        if (!want) continue;
        char ksdir[4400];
        snprintf(ksdir, sizeof ksdir, "%s/%s", e->data_dir, dirs[i]);
        char **tabs; int nt;
        if (vfs_list(ksdir, &tabs, &nt) != 0) continue;   /* not a directory */
        for (int j = 0; j < nt; j++) {
            char tdir[4700];
            snprintf(tdir, sizeof tdir, "%s/%s", ksdir, tabs[j]);
            removed += clear_in(tdir, tag);
            char name[256];
            uint8_t id[16];
            if (table_dir_name(tabs[j], name, sizeof name, id) && !st_table_find(e, id)) {
                /* a dropped table's directory goes with its last snapshot */
                char snaps[4800];
                snprintf(snaps, sizeof snaps, "%s/snapshots", tdir);
                rmdir(snaps);
                rmdir(tdir);
            }
        }
        vfs_list_free(tabs, nt);
    }
    vfs_list_free(dirs, nd);
    return removed;
}

/* ---------------------------------------------------------------- expiry */

/* Remove the expired snapshots of one table directory; how many.  warn:
 * log each unreadable manifest (the sweep at open). */
static int clear_expired_in(const char *table_dir, int64_t now_ms, bool warn)
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
        if (manifest_read(dir, &has_created, &created_ms, &has_expires, &expires_ms) == MANIFEST_BAD && warn)
            CS_WARN("storage: cannot read the manifest of snapshot %s in %s: the snapshot is kept and never expires",
                    tags[i], table_dir);
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

/* Every table directory's expired snapshots; how many were removed. */
static int sweep(st_engine *e, int64_t now_ms, bool warn)
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
            removed += clear_expired_in(tdir, now_ms, warn);
        }
        vfs_list_free(tabs, nt);
    }
    vfs_list_free(kss, nks);
    if (removed) CS_INFO("storage: removed %d expired snapshot director%s", removed, removed == 1 ? "y" : "ies");
    return removed;
}

int st_engine_clear_expired_snapshots(st_engine *e, int64_t now_ms) { return sweep(e, now_ms, true); }

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
        sweep(e, cs_now_ms(), false);
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
