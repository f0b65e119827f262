/*
 * nodetool_sstables.c: nodetool's verbs on a table's sstables and
 * compactions (see nodetool_int.h): getsstables, garbagecollect, scrub,
 * verify, upgradesstables, get/setcompactionthreshold, stop,
 * get/setconcurrentcompactors.  Arguments, messages and exit codes are
 * nodetool 4.1's (tools/nodetool/<Verb>.java and the NodeProbe,
 * StorageService and ColumnFamilyStore methods behind them); the work is
 * the storage engine's (storage.h "maintenance").
 *
 * garbagecollect, scrub, verify and upgradesstables read or rewrite
 * every sstable of their tables: nodetool_run answers NODETOOL_ASYNC with
 * a job naming the tables (pinned on the loop by cql_admin_resolve), the
 * admin endpoint runs nodetool_job_work on libuv's thread pool and
 * replies with nodetool_job_finish once it is done, as nodetool waits for
 * Cassandra's.  The job's tables are resolved and every name checked
 * before anything runs.
 */
#include "server/nodetool_int.h"
#include "common/alloc.h"
#include "common/log.h"
#include "common/util.h"
#include "cql/exec.h"
#include "cql/schema.h"
#include "cql/types.h"
#include "storage/sstable.h"
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---------------------------------------------------------------- arguments */

/* Java's Integer.parseInt: 0 with *v, or -1 (nodetool then prints the
 * NumberFormatException's 'For input string: "x"'). */
static int parse_int(const char *a, int *v)
{
    char *end;
    errno = 0;
    long long x = strtoll(a, &end, 10);
    if (!*a || *end || errno || x < INT32_MIN || x > INT32_MAX || a[0] == ' ')
        return -1;
    *v = (int)x;
    return 0;
}

static int for_input_string(cs_buf *o, const char *a)
{
    char msg[600];
    snprintf(msg, sizeof msg, "For input string: \"%.500s\"", a);
    return nodetool__bad_use(o, msg);
}

/* airline's ParseArgumentsUnexpectedException. */
static int unexpected(cs_buf *o, char **extra, int n)
{
    char msg[1024];
    size_t k = (size_t)snprintf(msg, sizeof msg, "Found unexpected parameters: [");
    for (int i = 0; i < n && k < sizeof msg; i++)
        k += (size_t)snprintf(msg + k, sizeof msg - k, "%s%s", i ? ", " : "", extra[i]);
    if (k < sizeof msg)
        snprintf(msg + k, sizeof msg - k, "]");
    return nodetool__bad_use(o, msg);
}

/* The node's path of a file (Cassandra prints absolute ones). */
static void abs_path(const char *p, char *out, size_t n)
{
    char buf[PATH_MAX];
    snprintf(out, n, "%s", realpath(p, buf) ? buf : p);
}

/* A table of the catalog with storage, by name. */
static sch_table *storage_table(srv *s, const char *ks, const char *name)
{
    sch_table *t = sch_table_find(cql_ctx_catalog(s->cql), ks, name);
    return t && t->st && !t->is_virtual ? t : NULL;
}

/* NodeProbe.getCfsProxy's refusal: stderr and exit 1, no help hint (409:
 * see tools/tool.c). */
static int no_cfs(cs_buf *o, const char *ks, const char *table)
{
    nodetool__printf(o, "ColumnFamilyStore for %s/%s not found.\n", ks, table);
    return 409;
}

/* ---------------------------------------------------------------- getsstables */

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* The serialized partition key of t from nodetool's text: -hf hex
 * (ByteBufferUtil.hexToBytes), else partitionKeyType.fromString: the
 * type's text form, and for a composite key the components split at each
 * ':' not preceded by '\' ("\:" is a colon inside one), each as u16
 * length, bytes, 0 (CompositeType.fromString; fewer components than the
 * key has make a key no sstable holds).  0, or -1 with the message in err. */
static int key_bytes(const sch_table *t, const char *key, bool hex, cs_buf *out, char *err, size_t errn)
{
    if (hex) {
        size_t n = strlen(key);
        if (n % 2) {
            snprintf(err, errn, "An hex string representing bytes must have an even length");
            return -1;
        }
        for (size_t i = 0; i < n; i += 2) {
            int hi = hexval(key[i]), lo = hexval(key[i + 1]);
            if (hi < 0 || lo < 0) {
                snprintf(err, errn, "Non-hex characters in %s", key);
                return -1;
            }
            cs_buf_put_u8(out, (uint8_t)(hi << 4 | lo));
        }
        return out->err ? -1 : 0;
    }
    cs_error e;
    cs_error_init(&e);
    if (t->n_pk == 1) {
        if (ctype_from_string(t->pk[0]->type, key, strlen(key), out, &e) == 0)
            return out->err ? -1 : 0;
        snprintf(err, errn, "%s", cs_error_isset(&e) ? e.msg : "invalid key");
        return -1;
    }
    const char *p = key;
    for (int i = 0; *key; i++) {
        /* one component: up to an unescaped ':' */
        const char *q = p;
        while (*q && !(*q == ':' && (q == key || q[-1] != '\\')))
            q++;
        if (i >= t->n_pk) {
            snprintf(err, errn, "Index %d out of bounds for length %d", i, t->n_pk);
            return -1;
        }
        cs_buf text, v;
        cs_buf_init(&text);
        cs_buf_init(&v);
        for (const char *c = p; c < q; c++)
            if (!(c[0] == '\\' && c[1] == ':'))
                cs_buf_put_u8(&text, (uint8_t)*c);
        int rc = ctype_from_string(t->pk[i]->type, text.p ? (const char *)text.p : "", text.len, &v, &e);
        if (rc == 0 && v.len <= 0xffff) {
            cs_buf_put_u16(out, (uint16_t)v.len);
            cs_buf_put(out, v.p, v.len);
            cs_buf_put_u8(out, 0);
        } else {
            snprintf(err, errn, "%s", cs_error_isset(&e) ? e.msg : "component too long");
        }
        cs_buf_destroy(&text);
        cs_buf_destroy(&v);
        if (rc || v.len > 0xffff)
            return -1;
        if (!*q)
            break;
        p = q + 1;
    }
    return out->err ? -1 : 0;
}

/* getsstables [-hf] ks table key (GetSSTables, CFS.getSSTablesForKey):
 * one Data.db path a line, the live sstables whose index holds the key. */
static int do_getsstables(srv *s, char **args, int n, cs_buf *o)
{
    bool hex = false;
    char *pos[3];
    int np = 0;
    for (int i = 0; i < n; i++) {
        if (!strcmp(args[i], "-hf") || !strcmp(args[i], "--hex-format"))
            hex = true;
        else if (np < 3)
            pos[np++] = args[i];
        else
            np = 4;
    }
    if (np != 3)
        return nodetool__bad_use(o, "getsstables requires ks, cf and key args");
    sch_table *t = storage_table(s, pos[0], pos[1]);
    if (!t)
        return no_cfs(o, pos[0], pos[1]);
    cs_buf key;
    cs_buf_init(&key);
    char err[1100];
    if (key_bytes(t, pos[2], hex, &key, err, sizeof err)) {
        cs_buf_destroy(&key);
        nodetool__printf(o, "error: %s\n", key.err ? "out of memory" : err);
        return 500;
    }
    char **paths;
    int np2;
    int rc = st_table_sstables_for_key(t->st, key.p, (uint32_t)key.len, &paths, &np2);
    cs_buf_destroy(&key);
    if (rc) {
        nodetool__printf(o, "error: %s\n", cs_strerror(rc));
        return 500;
    }
    for (int i = 0; i < np2; i++) {
        char full[PATH_MAX + 1];
        abs_path(paths[i], full, sizeof full);
        nodetool__printf(o, "%s\n", full);
    }
    st_paths_free(paths, np2);
    return 200;
}

/* ---------------------------------------------------------------- jobs */

enum { JOB_GC, JOB_SCRUB, JOB_VERIFY, JOB_UPGRADE, JOB_REBUILD, JOB_IMPORT };

/* One keyspace's tables of a job. */
typedef struct job_ks {
    char name[256];
    cql_admin_target *t; int n;      /* pinned (cql_admin_release) */
    bool *counter;                   /* t[i] is a counter table (scrub) */
} job_ks;

struct nodetool_job {
    int kind;                        /* JOB_* */
    st_rewrite_opts ro;              /* GC, SCRUB, UPGRADE */
    bool snapshot;                   /* scrub: pre-scrub snapshot first (not -ns) */
    bool skip_corrupted;             /* scrub -s */
    bool check_version;              /* verify -c */
    int jobs, compactors;            /* -j, and concurrent_compactors when resolved */
    job_ks *ks; int n_ks;
    char rb_ks[256], rb_table[256];  /* rebuild_index: the table */
    char **rb_names; int n_rb;       /* ... and its indexes (cs_malloc'd) */
    st_import_opts imp;              /* import / refresh: how */
    char **imp_dirs; int n_imp;      /* ... from where (cs_malloc'd; none: the table's own, refresh) */
    int imp_loaded;                  /* ... how many sstables came in */
    cs_buf out;                      /* the answer, written by the work */
    int status;                      /* its HTTP status */
};

static void job_free(nodetool_job *j)
{
    for (int i = 0; i < j->n_ks; i++) {
        cql_admin_release(j->ks[i].t, j->ks[i].n);
        cs_free(j->ks[i].counter);
    }
    cs_free(j->ks);
    for (int i = 0; i < j->n_rb; i++)
        cs_free(j->rb_names[i]);
    cs_free(j->rb_names);
    for (int i = 0; i < j->n_imp; i++)
        cs_free(j->imp_dirs[i]);
    cs_free(j->imp_dirs);
    cs_buf_destroy(&j->out);
    cs_free(j);
}

/* A new job of `kind` with its output buffer; NULL after "error: out of
 * memory" in o (the verb then answers 500). */
static nodetool_job *job_new(int kind, cs_buf *o)
{
    nodetool_job *j = cs_calloc(1, sizeof *j);
    if (!j) {
        nodetool__printf(o, "error: out of memory\n");
        return NULL;
    }
    cs_buf_init(&j->out);
    j->kind = kind;
    return j;
}

/* Options of the four verbs: name, whether it takes a value. */
typedef struct opt_def { const char *name, *alt, *title; bool value; } opt_def;

static const opt_def *find_opt(const opt_def *defs, const char *a)
{
    for (const opt_def *d = defs; d->name; d++)
        if (!strcmp(a, d->name) || (d->alt && !strcmp(a, d->alt)))
            return d;
    return NULL;
}

/* Split nodetool's [options] [keyspace [tables...]]: each option found
 * goes to vals[its index in defs] (the value, or "" for a flag), the
 * rest to pos.  Returns 0, or an HTTP status with the message in o. */
static int split_args(char **args, int n, const opt_def *defs, const char **vals, char **pos, int *np, cs_buf *o)
{
    *np = 0;
    char *bad[32];
    int nbad = 0;
    for (int i = 0; i < n; i++) {
        const opt_def *d = args[i][0] == '-' ? find_opt(defs, args[i]) : NULL;
        if (d) {
            if (d->value && i + 1 >= n) {
                char m[160];
                snprintf(m, sizeof m, "Required values for option '%s' not provided", d->title);
                return nodetool__bad_use(o, m);
            }
            vals[d - defs] = d->value ? args[++i] : "";
        } else if (args[i][0] == '-' && args[i][1]) {
            if (nbad < 32) bad[nbad++] = args[i];
        } else {
            pos[(*np)++] = args[i];   /* pos holds n (<= NODETOOL_MAX_ARGS) */
        }
    }
    return nbad ? unexpected(o, bad, nbad) : 0;
}

/* The keyspaces and tables named (parseOptionalKeyspace with
 * KeyspaceSet.ALL, then getValidColumnFamilies) into the job, pinned;
 * indexes: a table's index tables too (upgradesstables' autoAddIndexes).
 * An unknown keyspace is nodetool's badUse (400); an unknown table is
 * Cassandra's IllegalArgumentException "Unknown keyspace/cf pair", which
 * each verb reports its way (unknown_code: 400 badUse or 500 error).
 * Returns 0 or the status, with the message in o. */
static int job_resolve(srv *s, nodetool_job *j, char **pos, int np, bool indexes, int unknown_code, cs_buf *o)
{
    sch_catalog *c = cql_ctx_catalog(s->cql);
    if (np) {
        sch_keyspace *k = sch_keyspace_find(c, pos[0]);
        if (!k || k->is_virtual) {
            char m[400];
            snprintf(m, sizeof m, "Keyspace [%.300s] does not exist.", pos[0]);
            return nodetool__bad_use(o, m);
        }
        for (int i = 1; i < np; i++)
            if (!storage_table(s, pos[0], pos[i])) {
                char m[600];
                snprintf(m, sizeof m, "Unknown keyspace/cf pair (%.250s.%.250s)", pos[0], pos[i]);
                if (unknown_code == 400)
                    return nodetool__bad_use(o, m);
                nodetool__printf(o, "error: %s\n", m);
                return unknown_code;
            }
    }
    int nk = sch_keyspace_count(c);
    j->ks = cs_calloc((size_t)nk + 1, sizeof *j->ks);
    if (!j->ks) {
        nodetool__printf(o, "error: out of memory\n");
        return 500;
    }
    for (int i = 0; i < nk; i++) {
        sch_keyspace *k = sch_keyspace_at(c, i);
        if (k->is_virtual || (np && strcmp(k->name, pos[0])))
            continue;
        job_ks *jk = &j->ks[j->n_ks];
        snprintf(jk->name, sizeof jk->name, "%s", k->name);
        cs_error e;
        cs_error_init(&e);
        int rc = cql_admin_resolve(s->cql, k->name, (const char **)pos + 1, np ? np - 1 : 0, &jk->t, &jk->n, &e);
        if (rc) {
            nodetool__printf(o, "error: %s\n", cs_error_isset(&e) ? e.msg : cs_strerror(rc));
            return 500;
        }
        j->n_ks++;
        /* cql_admin_resolve covers index tables ("ks.table.index"):
         * kept only where the verb takes them */
        jk->counter = cs_calloc((size_t)jk->n + 1, sizeof *jk->counter);
        if (!jk->counter) {
            nodetool__printf(o, "error: out of memory\n");
            return 500;
        }
        int kept = 0;
        for (int x = 0; x < jk->n; x++) {
            const char *tn = jk->t[x].name + strlen(k->name) + 1;
            if (!indexes && strchr(tn, '.')) {
                st_table_unpin(jk->t[x].st);
                continue;
            }
            char base[256];
            snprintf(base, sizeof base, "%.*s", (int)strcspn(tn, "."), tn);
            sch_table *t = sch_table_find(c, k->name, base);
            jk->counter[kept] = t && t->is_counter;
            jk->t[kept++] = jk->t[x];
        }
        jk->n = kept;
    }
    return 0;
}

/* NodeProbe.checkJobs (scrub, upgradesstables): a note per keyspace. */
static void check_jobs(nodetool_job *j)
{
    if (j->jobs > j->compactors)
        nodetool__printf(&j->out, "jobs (%d) is bigger than configured concurrent_compactors (%d) on the host, using "
                         "at most %d threads\n", j->jobs, j->compactors, j->compactors);
}

/* Verify one table: every live sstable through sst_verify (every block
 * and file checksum, key order, filter, row indexes); -c also its format
 * version first.  A path that fails but is no longer live was compacted
 * away meanwhile, and is skipped.  false after writing the error. */
static bool verify_table(nodetool_job *j, cql_admin_target *t)
{
    char **paths;
    int n;
    int rc = st_table_sstables(t->st, &paths, &n);
    if (rc) {
        nodetool__printf(&j->out, "error: %s\n", cs_strerror(rc));
        return false;
    }
    bool ok = true;
    for (int i = 0; i < n && ok; i++) {
        char full[PATH_MAX + 1];
        abs_path(paths[i], full, sizeof full);
        bool current = true;
        if (j->check_version && (rc = sst_format_current(paths[i], &current)) == 0 && !current) {
            /* Verifier.verify's check, with SSTableReader.toString */
            nodetool__printf(&j->out, "error: BigTableReader(path='%s') is not the latest version, run "
                             "upgradesstables\n", full);
            ok = false;
            break;
        }
        if (rc == 0)
            rc = sst_verify(paths[i], NULL);
        if (rc) {
            char **now;
            int nn;
            bool live = false;
            if (st_table_sstables(t->st, &now, &nn) == 0) {
                for (int x = 0; x < nn; x++)
                    live = live || !strcmp(now[x], paths[i]);
                st_paths_free(now, nn);
            }
            if (live) {
                /* DataIntegrityMetadata's words, as nodetool prints the root cause */
                CS_WARN("nodetool verify: %s: %s", full, cs_strerror(rc));
                nodetool__printf(&j->out, "error: Corrupted SSTable : %s\n", full);
                ok = false;
            }
        }
    }
    st_paths_free(paths, n);
    return ok;
}

static const char *job_op_name(const nodetool_job *j)
{
    return j->kind == JOB_GC ? "Remove deleted data" : j->kind == JOB_SCRUB ? "Scrub" : "Upgrade sstables";
}

/* import / refresh: each directory (or the table's own) into the table,
 * SSTableImporter's way: one whose sstables fail is listed, the others
 * are loaded; nodetool then prints the failed ones (stderr, exit 1). */
static void import_work(nodetool_job *j)
{
    cql_admin_target *t = &j->ks[0].t[0];
    int failed = 0;
    for (int i = 0; i < (j->n_imp ? j->n_imp : 1); i++) {
        int n = 0;
        int rc = st_table_import(t->st, j->n_imp ? j->imp_dirs[i] : NULL, &j->imp, &n);
        j->imp_loaded += n;
        if (rc && j->n_imp) {
            if (!failed++)
                nodetool__printf(&j->out, "Some directories failed to import, check server logs for details:\n");
            nodetool__printf(&j->out, "%s\n", j->imp_dirs[i]);
        } else if (rc) {   /* refresh: ColumnFamilyStore.loadNewSSTables throws */
            nodetool__printf(&j->out, "error: Failed importing sstables: %s\n", cs_strerror(rc));
            j->status = 500;
        }
    }
    if (failed)
        j->status = 409;
}

void nodetool_job_work(nodetool_job *j)
{
    j->status = 200;
    if (j->kind == JOB_IMPORT) {
        import_work(j);
        return;
    }
    for (int k = 0; k < j->n_ks && j->status == 200; k++) {
        job_ks *jk = &j->ks[k];
        if (j->kind == JOB_SCRUB || j->kind == JOB_UPGRADE)
            check_jobs(j);
        for (int i = 0; i < jk->n && j->status == 200; i++) {
            cql_admin_target *t = &jk->t[i];
            if (j->kind == JOB_VERIFY) {
                if (!verify_table(j, t))
                    j->status = 500;
                continue;
            }
            if (j->kind == JOB_SCRUB && j->snapshot) {
                /* ColumnFamilyStore.scrub: "pre-scrub-<ms>", without a flush */
                char tag[64];
                int64_t ms = cs_now_ms();
                snprintf(tag, sizeof tag, "pre-scrub-%lld", (long long)ms);
                st_snapshot_opts so = { .skip_flush = true, .created_ms = ms };
                int rc = st_table_snapshot(t->st, tag, &so);
                if (rc && rc != CS_EEXIST) {
                    nodetool__printf(&j->out, "error: snapshot %s of %s failed: %s\n", tag, t->name, cs_strerror(rc));
                    j->status = 500;
                    break;
                }
            }
            st_rewrite_opts ro = j->ro;
            ro.fail_corrupt = j->kind == JOB_SCRUB && jk->counter[i] && !j->skip_corrupted;
            st_rewrite_result res;
            int rc = st_table_rewrite(t->st, &ro, &res);
            if (rc == CS_ECANCELED) {
                /* CompactionInterruptedException's words */
                nodetool__printf(&j->out, "error: Compaction interrupted: %s(%s)\n", job_op_name(j), t->name);
                j->status = 500;
            } else if (rc == CS_ECORRUPT && ro.fail_corrupt) {
                nodetool__printf(&j->out, "error: An error occurred while scrubbing a partition of %s.  Skipping "
                                 "corrupt data in counter tables will result in undercounts for the affected counters "
                                 "(see CASSANDRA-2759 for more details), so by default the scrub will stop at this "
                                 "point.  If you would like to skip the row anyway and continue scrubbing, re-run the "
                                 "scrub with the --skip-corrupted option.\n", t->name);
                j->status = 500;
            } else if (rc) {
                nodetool__printf(&j->out, "error: %s of %s failed: %s\n", job_op_name(j), t->name, cs_strerror(rc));
                j->status = 500;
            } else if (res.dropped) {
                CS_WARN("nodetool scrub: %s: %llu unreadable partitions left out; the pre-scrub snapshot keeps them",
                        t->name, (unsigned long long)res.dropped);
            }
        }
    }
}

bool nodetool_job_continue(nodetool_job *j, srv *s)
{
    if (j->kind != JOB_IMPORT || !j->imp_loaded)
        return false;
    /* SecondaryIndexManager builds the indexes of sstables added without a
     * flush (imported, streamed) before addSSTables returns: here the
     * table's indexes are built again, and the answer waits for them. */
    sch_table *t = storage_table(s, j->rb_ks, j->rb_table);
    if (!t || !t->n_indexes)
        return false;
    char **names = cs_calloc((size_t)t->n_indexes, sizeof *names);
    if (!names)
        return false;
    int n = 0;
    for (int i = 0; i < t->n_indexes; i++)
        if ((names[n] = cs_strdup(t->indexes[i]->name)))
            n++;
    cs_error e;
    cs_error_init(&e);
    int started = 0;
    int rc = cql_index_rebuild(s->cql, j->rb_ks, j->rb_table, (const char *const *)names, n, &started, &e);
    if (rc || !started) {
        if (rc)
            CS_WARN("nodetool import: building the indexes of %s.%s: %s", j->rb_ks, j->rb_table,
                    cs_error_isset(&e) ? e.msg : cs_strerror(rc));
        for (int i = 0; i < n; i++)
            cs_free(names[i]);
        cs_free(names);
        return false;
    }
    j->rb_names = names;
    j->n_rb = n;
    return true;
}

bool nodetool_job_poll(nodetool_job *j, srv *s)
{
    if (j->kind != JOB_REBUILD && j->kind != JOB_IMPORT)
        return true;
    const char *const *names = (const char *const *)j->rb_names;
    if (cql_index_rebuilding(s->cql, j->rb_ks, j->rb_table, names, j->n_rb))
        return false;
    const char *bad = cql_index_rebuild_failed(s->cql, j->rb_ks, j->rb_table, names, j->n_rb);
    if (bad) {   /* buildIndexesBlocking's failure: the error nodetool prints */
        nodetool__printf(&j->out, "error: Failed to build index %s of %s.%s (see the server log)\n", bad, j->rb_ks,
                         j->rb_table);
        j->status = 500;
    }
    return true;
}

int nodetool_job_finish(nodetool_job *j, bool cancelled, cs_buf *out)
{
    int code = cancelled ? 500 : j->status;
    if (cancelled)
        nodetool__printf(out, "nodetool: the server is shutting down\n");
    else
        cs_buf_put(out, j->out.p, j->out.len);
    job_free(j);
    return code;
}

/* garbagecollect / scrub / verify / upgradesstables: options, names, the job. */
static int do_job(srv *s, int kind, char **args, int n, cs_buf *o, nodetool_job **out)
{
    static const opt_def gc_opts[] = { { "-g", "--granularity", "granularity", true },
                                       { "-j", "--jobs", "jobs", true }, { NULL, NULL, NULL, false } };
    static const opt_def scrub_opts[] = { { "-ns", "--no-snapshot", "disable_snapshot", false },
                                          { "-s", "--skip-corrupted", "skip_corrupted", false },
                                          { "-n", "--no-validate", "no_validate", false },
                                          { "-r", "--reinsert-overflowed-ttl", "reinsert_overflowed_ttl", false },
                                          { "-j", "--jobs", "jobs", true }, { NULL, NULL, NULL, false } };
    static const opt_def verify_opts[] = { { "-e", "--extended-verify", "extended_verify", false },
                                           { "-c", "--check-version", "check_version", false },
                                           { "-f", "--force", "override-disable", false },
                                           { "-d", "--dfp", "dfp", false },
                                           { "-r", "--rsc", "repair_status_change", false },
                                           { "-t", "--check-tokens", "check_owns_tokens", false },
                                           { "-q", "--quick", "quick", false }, { NULL, NULL, NULL, false } };
    static const opt_def up_opts[] = { { "-a", "--include-all-sstables", "include_all", false },
                                       { "-t", "--max-timestamp", "max_timestamp", true },
                                       { "-j", "--jobs", "jobs", true }, { NULL, NULL, NULL, false } };
    const opt_def *defs = kind == JOB_GC ? gc_opts : kind == JOB_SCRUB ? scrub_opts
                        : kind == JOB_VERIFY ? verify_opts : up_opts;
    const char *vals[8] = { 0 };
    char *pos[NODETOOL_MAX_ARGS];   /* every argument may be positional */
    int np, code = split_args(args, n, defs, vals, pos, &np, o);
    if (code)
        return code;
    nodetool_job *j = job_new(kind, o);
    if (!j)
        return 500;
    j->compactors = st_engine_concurrent_compactors(s->eng);
    j->jobs = kind == JOB_GC ? 1 : 2;
    const char *jobs = kind == JOB_GC ? vals[1] : kind == JOB_SCRUB ? vals[4] : kind == JOB_UPGRADE ? vals[2] : NULL;
    if (jobs && parse_int(jobs, &j->jobs)) {   /* airline's conversion of an int option */
        char m[300];
        snprintf(m, sizeof m, "jobs: can not convert \"%.200s\" to a int", jobs);
        job_free(j);
        return nodetool__bad_use(o, m);
    }
    if (kind == JOB_GC) {
        j->ro.op = ST_OP_GC;
        if (vals[0] && strcmp(vals[0], "ROW") && strcmp(vals[0], "CELL")) {
            /* airline's ParseOptionIllegalValueException: not a badUse in NodeTool */
            nodetool__printf(o, "error: Value for option 'granularity' was given as '%s' which is not in the list of "
                             "allowed values: [ROW, CELL]\n", vals[0]);
            job_free(j);
            return 500;
        }
        j->ro.gc_cells = vals[0] && !strcmp(vals[0], "CELL");
    } else if (kind == JOB_SCRUB) {
        j->ro.op = ST_OP_SCRUB;
        j->snapshot = !vals[0];
        j->skip_corrupted = vals[1] != NULL;
    } else if (kind == JOB_UPGRADE) {
        j->ro.op = ST_OP_UPGRADE;
        j->ro.all = vals[0] != NULL;
        if (vals[1]) {   /* -t: Data.db modified after it is left alone (ms) */
            char *end;
            errno = 0;
            long long ts = strtoll(vals[1], &end, 10);
            if (*end || !*vals[1] || errno) {
                char m[300];
                snprintf(m, sizeof m, "max_timestamp: can not convert \"%.200s\" to a long", vals[1]);
                job_free(j);
                return nodetool__bad_use(o, m);
            }
            j->ro.max_created_ms = ts == LLONG_MAX ? 0 : ts;
        }
    } else {
        if (!vals[2]) {   /* Verify.execute: stdout and exit 1 */
            nodetool__printf(o, "verify is disabled unless a [-f|--force] override flag is provided. See CASSANDRA-9947 "
                             "and CASSANDRA-17017 for details.\n");
            job_free(j);
            return 400;
        }
        j->check_version = vals[1] != NULL;
    }
    code = job_resolve(s, j, pos, np, kind == JOB_UPGRADE, kind == JOB_SCRUB ? 400 : 500, o);
    if (!code && kind == JOB_VERIFY && vals[5] && !vals[0]) {
        nodetool__printf(o, "Token verification requires --extended-verify\n");
        code = 400;
    }
    if (code) {
        job_free(j);
        return code;
    }
    *out = j;
    return NODETOOL_ASYNC;
}

/* rebuild_index ks table idx... (RebuildIndex, SecondaryIndexManager
 * .rebuildIndexesBlocking): the answer once the rebuilds are done (they
 * run on the loop between requests: NODETOOL_POLL).  An unknown table is
 * Cassandra's IllegalArgumentException (badUse), an unknown keyspace its
 * assertion (exit 2), an unknown index nothing. */
static int do_rebuild_index(srv *s, char **args, int n, cs_buf *o, nodetool_job **out)
{
    if (n < 3)
        return nodetool__bad_use(o, "rebuild_index requires ks, cf and idx args");
    cs_error e;
    cs_error_init(&e);
    int started;
    int rc = cql_index_rebuild(s->cql, args[0], args[1], (const char *const *)args + 2, n - 2, &started, &e);
    if (rc) {
        const char *msg = cs_error_isset(&e) ? e.msg : cs_strerror(rc);
        if (!strncmp(msg, "Unknown keyspace/cf pair", 24))
            return nodetool__bad_use(o, msg);
        nodetool__printf(o, "error: %s\n", msg);
        return 500;
    }
    if (!started)
        return 200;
    char **names = cs_calloc((size_t)n, sizeof *names);
    nodetool_job *j = names ? job_new(JOB_REBUILD, o) : NULL;
    if (!j) {
        if (!names)
            nodetool__printf(o, "error: out of memory\n");
        cs_free(names);
        return 500;
    }
    j->status = 200;
    j->rb_names = names;
    snprintf(j->rb_ks, sizeof j->rb_ks, "%s", args[0]);
    snprintf(j->rb_table, sizeof j->rb_table, "%s", args[1]);
    for (int i = 2; i < n; i++)
        if ((names[j->n_rb] = cs_strdup(args[i])))
            j->n_rb++;
    *out = j;
    return NODETOOL_POLL;
}

/* import [options] ks table dir... (Import, SSTableImporter) and refresh
 * ks table (Refresh, ColumnFamilyStore.loadNewSSTables: the table's own
 * directory, no verification).  The work leaves the loop
 * (NODETOOL_ASYNC); then, if sstables came in and the table has
 * secondary indexes, they are built again before the answer
 * (nodetool_job_continue, NODETOOL_POLL). */
static int do_import(srv *s, char **args, int n, cs_buf *o, nodetool_job **out, bool refresh)
{
    static const opt_def defs[] = { { "-l", "--keep-level", "keep_level", false },
                                    { "-r", "--keep-repaired", "keep_repaired", false },
                                    { "-v", "--no-verify", "no_verify_sstables", false },
                                    { "-t", "--no-tokens", "no_verify_tokens", false },
                                    { "-c", "--no-invalidate-caches", "no_invalidate_caches", false },
                                    { "-q", "--quick", "quick", false },
                                    { "-e", "--extended-verify", "extended_verify", false },
                                    { "-p", "--copy-data", "copy_data", false },
                                    { NULL, NULL, NULL, false } };
    static const opt_def none[] = { { NULL, NULL, NULL, false } };
    const char *vals[8] = { 0 };
    char *pos[NODETOOL_MAX_ARGS];   /* every argument may be positional */
    int np;
    if (refresh)
        nodetool__printf(o, "nodetool refresh is deprecated, use nodetool import instead\n");
    int code = split_args(args, n, refresh ? none : defs, vals, pos, &np, o);
    if (code)
        return code;
    if (refresh && np != 2)
        return nodetool__bad_use(o, "refresh requires ks and cf args");
    if (!refresh && np < 3)
        return nodetool__bad_use(o, "import requires keyspace, table name and directories");
    if (refresh) {   /* Keyspace.open's assertion, then getColumnFamilyStore's refusal */
        sch_keyspace *k = sch_keyspace_find(cql_ctx_catalog(s->cql), pos[0]);
        if (!k || k->is_virtual) {
            nodetool__printf(o, "error: Unknown keyspace %s\n", pos[0]);
            return 500;
        }
        if (!storage_table(s, pos[0], pos[1])) {
            char m[600];
            snprintf(m, sizeof m, "Unknown keyspace/cf pair (%.250s.%.250s)", pos[0], pos[1]);
            return nodetool__bad_use(o, m);
        }
    } else if (!storage_table(s, pos[0], pos[1])) {
        return no_cfs(o, pos[0], pos[1]);
    }
    if (!refresh && vals[5])
        nodetool__printf(o, "Doing a quick import - skipping sstable verification and row cache invalidation\n");
    /* getSSTableListers: every directory must exist before anything moves */
    for (int i = 2; !refresh && i < np; i++) {
        struct stat sb;
        if (stat(pos[i], &sb) != 0 || !S_ISDIR(sb.st_mode)) {
            nodetool__printf(o, "error: Directory %s does not exist\n", pos[i]);
            return 500;
        }
    }
    nodetool_job *j = job_new(JOB_IMPORT, o);
    if (!j)
        return 500;
    cs_buf_put(&j->out, o->p, o->len);   /* the lines printed before the work */
    j->imp = (st_import_opts){ .keep_level = vals[0] != NULL, .verify = !refresh && !vals[2] && !vals[5],
                               .copy = vals[7] != NULL };
    snprintf(j->rb_ks, sizeof j->rb_ks, "%s", pos[0]);
    snprintf(j->rb_table, sizeof j->rb_table, "%s", pos[1]);
    if (!refresh) {
        j->imp_dirs = cs_calloc((size_t)np, sizeof *j->imp_dirs);
        for (int i = 2; j->imp_dirs && i < np; i++)
            if ((j->imp_dirs[j->n_imp] = cs_strdup(pos[i])))
                j->n_imp++;
        if (!j->imp_dirs || j->n_imp != np - 2) {
            job_free(j);
            nodetool__printf(o, "error: out of memory\n");
            return 500;
        }
    }
    cs_buf_reset(o);
    if ((code = job_resolve(s, j, pos, 2, false, 500, o))) {
        job_free(j);
        return code;
    }
    if (j->n_ks != 1 || j->ks[0].n != 1) {   /* the table went meanwhile */
        job_free(j);
        return no_cfs(o, pos[0], pos[1]);
    }
    *out = j;
    return NODETOOL_ASYNC;
}

/* ---------------------------------------------------------------- thresholds */

/* getcompactionthreshold ks table (GetCompactionThreshold). */
static int do_getcompactionthreshold(srv *s, char **args, int n, cs_buf *o)
{
    if (n != 2)
        return nodetool__bad_use(o, "getcompactionthreshold requires ks and cf args");
    sch_table *t = storage_table(s, args[0], args[1]);
    if (!t)
        return no_cfs(o, args[0], args[1]);
    int min_t, max_t;
    st_table_compaction_thresholds(t->st, &min_t, &max_t);
    nodetool__printf(o, "Current compaction thresholds for %s/%s: \n min = %d,  max = %d\n", args[0], args[1], min_t,
                     max_t);
    return 200;
}

/* setcompactionthreshold ks table min max (SetCompactionThreshold, then
 * ColumnFamilyStore.setCompactionThresholds): the table's live strategy
 * takes them, the schema keeps its own (ALTER TABLE leaves them too). */
static int do_setcompactionthreshold(srv *s, char **args, int n, cs_buf *o)
{
    if (n == 0)
        return nodetool__bad_use(o, "Required parameters are missing: <keyspace> <table> <minthreshold> <maxthreshold>");
    if (n != 4)
        return nodetool__bad_use(o, "setcompactionthreshold requires ks, cf, min, and max threshold args.");
    int min_t, max_t;
    if (parse_int(args[2], &min_t))
        return for_input_string(o, args[2]);
    if (parse_int(args[3], &max_t))
        return for_input_string(o, args[3]);
    if (min_t < 0 || max_t < 0)
        return nodetool__bad_use(o, "Thresholds must be positive integers");
    if (min_t > max_t)
        return nodetool__bad_use(o, "Min threshold cannot be greater than max.");
    if (min_t < 2 && max_t != 0)
        return nodetool__bad_use(o, "Min threshold must be at least 2");
    sch_table *t = storage_table(s, args[0], args[1]);
    if (!t)
        return no_cfs(o, args[0], args[1]);
    if (min_t == 0 || max_t == 0) {   /* validateCompactionThresholds, on the server */
        nodetool__printf(o, "error: Disabling compaction by setting min_compaction_threshold or "
                         "max_compaction_threshold to 0 is deprecated, set the compaction strategy option 'enabled' "
                         "to 'false' instead or use the nodetool command 'disableautocompaction'.\n");
        return 500;
    }
    st_table_set_compaction_thresholds(t->st, min_t, max_t);
    return 200;
}

/* ---------------------------------------------------------------- stop */

/* stop [-id ID] [TYPE] (Stop, CompactionManager.stopCompaction): TYPE one
 * of 4.1's OperationType names.  cassette runs compactions (COMPACTION:
 * background and major), garbagecollect, scrub and upgradesstables;
 * other types have nothing running here to stop.  -id names a compaction
 * by the id compactionstats shows (the table's id here). */
static int do_stop(srv *s, char **args, int n, cs_buf *o)
{
    static const char *const types[] = { "COMPACTION", "VALIDATION", "KEY_CACHE_SAVE", "ROW_CACHE_SAVE",
                                         "COUNTER_CACHE_SAVE", "CLEANUP", "SCRUB", "UPGRADE_SSTABLES",
                                         "INDEX_BUILD", "TOMBSTONE_COMPACTION", "UNKNOWN", "ANTICOMPACTION",
                                         "VERIFY", "FLUSH", "STREAM", "WRITE", "VIEW_BUILD", "INDEX_SUMMARY",
                                         "RELOCATE", "GARBAGE_COLLECT" };
    const char *type = "UNKNOWN", *id = NULL;
    char *extra[32];
    int nextra = 0, ntype = 0;
    for (int i = 0; i < n; i++) {
        if (!strcmp(args[i], "-id") || !strcmp(args[i], "--compaction-id")) {
            if (i + 1 >= n)
                return nodetool__bad_use(o, "Required values for option 'compactionId' not provided");
            id = args[++i];
        } else if (ntype++ == 0) {
            type = args[i];
        } else if (nextra < 32) {
            extra[nextra++] = args[i];
        }
    }
    if (nextra)
        return unexpected(o, extra, nextra);
    bool known = false;
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        known = known || !strcmp(type, types[i]);
    if (!known) {
        char m[300];
        snprintf(m, sizeof m, "compaction_type: can not convert \"%.200s\" to a OperationType", type);
        return nodetool__bad_use(o, m);
    }
    if (id && *id) {   /* stopById: every kind, of that compaction */
        cs_uuid u;
        if (cs_uuid_parse(id, strlen(id), &u) == 0)
            st_engine_stop_compactions(s->eng, ST_OP_COMPACTION | ST_OP_GC | ST_OP_UPGRADE | ST_OP_SCRUB, u.b);
        return 200;
    }
    int ops = !strcmp(type, "COMPACTION") ? ST_OP_COMPACTION : !strcmp(type, "GARBAGE_COLLECT") ? ST_OP_GC
            : !strcmp(type, "UPGRADE_SSTABLES") ? ST_OP_UPGRADE : !strcmp(type, "SCRUB") ? ST_OP_SCRUB : 0;
    if (ops)
        st_engine_stop_compactions(s->eng, ops, NULL);
    return 200;
}

/* ---------------------------------------------------------------- concurrent compactors */

static int do_setconcurrentcompactors(srv *s, char **args, int n, cs_buf *o)
{
    if (n == 0)
        return nodetool__bad_use(o, "Required parameters are missing: concurrent_compactors");
    if (n > 1)
        return unexpected(o, args + 1, n - 1);
    int v;
    if (parse_int(args[0], &v)) {
        char m[300];
        snprintf(m, sizeof m, "concurrent_compactors: can not convert \"%.200s\" to a Integer", args[0]);
        return nodetool__bad_use(o, m);
    }
    if (v <= 0)
        return nodetool__bad_use(o, "concurrent_compactors should be great than 0.");
    st_engine_set_concurrent_compactors(s->eng, v);
    return 200;
}

/* ---------------------------------------------------------------- dispatch */

int nodetool__run_sstables(srv *s, const char *verb, char **args, int n, cs_buf *o, nodetool_job **job)
{
    if (!strcmp(verb, "getsstables")) return do_getsstables(s, args, n, o);
    if (!strcmp(verb, "garbagecollect")) return do_job(s, JOB_GC, args, n, o, job);
    if (!strcmp(verb, "scrub")) return do_job(s, JOB_SCRUB, args, n, o, job);
    if (!strcmp(verb, "verify")) return do_job(s, JOB_VERIFY, args, n, o, job);
    if (!strcmp(verb, "upgradesstables")) return do_job(s, JOB_UPGRADE, args, n, o, job);
    if (!strcmp(verb, "getcompactionthreshold")) return do_getcompactionthreshold(s, args, n, o);
    if (!strcmp(verb, "setcompactionthreshold")) return do_setcompactionthreshold(s, args, n, o);
    if (!strcmp(verb, "stop")) return do_stop(s, args, n, o);
    if (!strcmp(verb, "getconcurrentcompactors")) {
        nodetool__printf(o, "Current concurrent compactors in the system is: \n%d\n",
                         st_engine_concurrent_compactors(s->eng));
        return 200;
    }
    if (!strcmp(verb, "setconcurrentcompactors")) return do_setconcurrentcompactors(s, args, n, o);
    if (!strcmp(verb, "rebuild_index")) return do_rebuild_index(s, args, n, o, job);
    if (!strcmp(verb, "import")) return do_import(s, args, n, o, job, false);
    if (!strcmp(verb, "refresh")) return do_import(s, args, n, o, job, true);
    return 0;
}
