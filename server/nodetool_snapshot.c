/*
 * nodetool_snapshot.c: nodetool's snapshot verbs (see nodetool_int.h):
 * snapshot, listsnapshots, clearsnapshot, over the storage engine's
 * snapshots (storage/snapshot.c).  Moved out of nodetool.c unchanged.
 */
#include "server/nodetool_int.h"
#include "server/config.h"
#include "common/alloc.h"
#include "common/util.h"
#include "cql/schema.h"
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- snapshots
 *
 * snapshot [-t tag] [-sf] [-cf table] [-kt ks.t,...] [--ttl duration]
 * [keyspaces...], listsnapshots [-nt], clearsnapshot [-t tag | --all]
 * [keyspaces...]: nodetool 4.1's arguments and messages over
 * st_table_snapshot & co (hard links in <table dir>/snapshots/<tag>/ with a
 * manifest.json).  Without keyspaces a snapshot covers every keyspace,
 * system ones included, as Cassandra's.  The flush before a snapshot runs
 * on the request loop (a few milliseconds for a test's memtables; -sf
 * skips it).  A snapshot with --ttl expires: the storage engine removes it
 * once its manifest's expires_at has passed (storage/snapshot.c).
 *
 * Where nodetool prints "Requested creating snapshot(s)..." before the
 * server refuses (an unknown keyspace, a TTL under the minimum), only the
 * refusal is printed here: cassette-tool prints a failed verb's whole
 * answer on stderr, so the line would not reach stdout anyway. */

/* The least TTL snapshot --ttl takes, in seconds: 60, or
 * CASSETTE_SNAPSHOT_MIN_ALLOWED_TTL_SECONDS, cassette's spelling of
 * Cassandra's system property cassandra.snapshot.min_allowed_ttl_seconds
 * (read at each snapshot, as CassandraRelevantProperties.getInt does). */
static long long snapshot_min_ttl_s(void)
{
    const char *v = getenv("CASSETTE_SNAPSHOT_MIN_ALLOWED_TTL_SECONDS");
    if (!v || !*v)
        return 60;
    char *end;
    errno = 0;
    long long n = strtoll(v, &end, 10);
    return errno || *end || n < INT32_MIN || n > INT32_MAX ? 60 : n;
}


typedef struct snap_target { sch_keyspace *k; sch_table *t; } snap_target;

/* Tables named by keyspaces / -cf / -kt; 200, or an error in o. */
static int snap_targets(srv *s, char **ks, int n_ks, const char *table, const char *kt, snap_target *out, int max,
                        int *n_out, cs_buf *o)
{
    sch_catalog *c = cql_ctx_catalog(s->cql);
    int n = 0;
    if (kt) {
        char *buf = cs_strdup(kt);   /* the whole list, however long */
        if (!buf) { nodetool__printf(o, "error: out of memory\n"); return 500; }
        char *save = NULL;
        int code = 200;
        for (char *e = strtok_r(buf, ",", &save); e && code == 200; e = strtok_r(NULL, ",", &save)) {
            char *dot = strchr(e, '.');
            if (dot) *dot = 0;
            sch_keyspace *k = sch_keyspace_find(c, e);
            if (!k) { nodetool__printf(o, "error: Keyspace %s does not exist\n", e); code = 500; break; }
            for (int j = 0; j < k->n_tables && n < max; j++)
                if (k->tables[j]->st && (!dot || !strcmp(k->tables[j]->name, dot + 1)))
                    out[n++] = (snap_target){ k, k->tables[j] };
            if (dot && !sch_table_find(c, e, dot + 1)) {
                nodetool__printf(o, "error: Table %s.%s does not exist\n", e, dot + 1);
                code = 500;
            }
        }
        cs_free(buf);
        *n_out = n;
        return code;
    }
    if (table && n_ks != 1) {
        nodetool__printf(o, "error: When specifying the table for a snapshot, you must specify one and only one keyspace\n");
        return 500;
    }
    for (int i = 0; i < n_ks; i++)
        if (!sch_keyspace_find(c, ks[i])) { nodetool__printf(o, "error: Keyspace %s does not exist\n", ks[i]); return 500; }
    if (table && !sch_table_find(c, ks[0], table)) {
        nodetool__printf(o, "error: Table %s.%s does not exist\n", ks[0], table);
        return 500;
    }
    for (int i = 0; i < sch_keyspace_count(c); i++) {
        sch_keyspace *k = sch_keyspace_at(c, i);
        bool want = n_ks == 0;
        for (int x = 0; x < n_ks; x++) want = want || !strcmp(ks[x], k->name);
        if (!want || k->is_virtual) continue;
        for (int j = 0; j < k->n_tables && n < max; j++)
            if (k->tables[j]->st && (!table || !strcmp(k->tables[j]->name, table)))
                out[n++] = (snap_target){ k, k->tables[j] };
    }
    *n_out = n;
    return 200;
}

static void ks_list(cs_buf *o, char **ks, int n)
{
    if (!n) { nodetool__printf(o, "[all keyspaces]"); return; }
    nodetool__printf(o, "[");
    for (int i = 0; i < n; i++) nodetool__printf(o, "%s%s", i ? ", " : "", ks[i]);
    nodetool__printf(o, "]");
}

static int do_snapshot(srv *s, char **args, int n, cs_buf *o)
{
    char tag[sizeof ((st_snapshot_info *)0)->tag];   /* a directory name: at most 255 bytes */
    snprintf(tag, sizeof tag, "%lld", (long long)cs_now_ms());   /* nodetool's default: the time in ms */
    bool tag_too_long = false;
    const char *table = NULL, *kt = NULL, *ttl = NULL;
    bool skip_flush = false;
    static char *ks[NODETOOL_MAX_ARGS]; int n_ks = 0;   /* the admin loop's own */
    for (int i = 0; i < n; i++) {
        const char *a = args[i];
        bool is_tag = !strcmp(a, "-t") || !strcmp(a, "--tag");
        bool is_table = !strcmp(a, "-cf") || !strcmp(a, "--column-family") || !strcmp(a, "--table");
        bool is_kt = !strcmp(a, "-kt") || !strcmp(a, "--kt-list") || !strcmp(a, "-kc") || !strcmp(a, "--kc.list");
        if ((is_tag || is_table || is_kt) && i + 1 >= n) {   /* airline names the option by its title */
            char m[80];
            snprintf(m, sizeof m, "Required values for option '%s' not provided", is_tag ? "tag" : is_table ? "table" : "ktlist");
            return nodetool__bad_use(o, m);
        }
        if (is_tag) tag_too_long = (size_t)snprintf(tag, sizeof tag, "%s", args[++i]) >= sizeof tag;
        else if (!strcmp(a, "-sf") || !strcmp(a, "--skip-flush")) skip_flush = true;
        else if (is_table) table = args[++i];
        else if (is_kt) kt = args[++i];
        else if (!strcmp(a, "--ttl")) {
            if (i + 1 >= n) return nodetool__bad_use(o, "Required values for option 'ttl' not provided");
            ttl = args[++i];
        }
        else if (a[0] != '-' && n_ks < NODETOOL_MAX_ARGS) ks[n_ks++] = args[i];
    }
    /* Snapshot.execute reads the TTL as a LongNanosecondsBound before
     * anything else and passes its toString on ("1h"; "5µs" as "5us"). */
    config_duration d;
    char ttl_text[48] = "", err[320];
    if (ttl) {
        if (config_duration_spec(ttl, CONFIG_NS, LLONG_MAX, &d, err, sizeof err)) return nodetool__bad_use(o, err);
        config_duration_format(&d, ttl_text, sizeof ttl_text);
    }
    if (!tag[0]) {   /* StorageService.takeSnapshot */
        nodetool__printf(o, "error: You must supply a snapshot name.\n");
        return 500;
    }
    if (tag_too_long) {   /* Cassandra fails to make the directory (ENAMETOOLONG) */
        nodetool__printf(o, "error: Snapshot name is longer than a directory name may be (%zu bytes)\n", sizeof tag - 1);
        return 500;
    }
    if (strchr(tag, ':') || strchr(tag, '/')) {
        nodetool__printf(o, "error: Snapshot name cannot contain %c\n", strchr(tag, ':') ? ':' : '/');
        return 500;
    }
    if (kt && (n_ks || table)) {
        nodetool__printf(o, "error: When specifying the Keyspace table list (using -kt,--kt-list,-kc,--kc.list), you must not "
                      "also specify keyspaces to snapshot\n");
        return 500;
    }
    /* StorageService.takeSnapshot: the TTL again, as an IntSecondsBound
     * (in seconds or a coarser unit, below 2^31 - 1 s), and at least the minimum. */
    int64_t ttl_s = 0;
    if (ttl) {
        if (config_duration_spec(ttl_text, CONFIG_S, INT32_MAX, &d, err, sizeof err)) return nodetool__bad_use(o, err);
        ttl_s = config_duration_to(&d, CONFIG_S);
        long long min_s = snapshot_min_ttl_s();
        if (ttl_s < min_s) {
            snprintf(err, sizeof err, "ttl for snapshot must be at least %lld seconds", min_s);
            return nodetool__bad_use(o, err);
        }
    }
    /* every table could be a target: no fixed cap (it was 512 tables) */
    sch_catalog *cat = cql_ctx_catalog(s->cql);
    int cap = 1;
    for (int i = 0; i < sch_keyspace_count(cat); i++) cap += sch_keyspace_at(cat, i)->n_tables;
    snap_target *tg = cs_calloc((size_t)cap, sizeof *tg);
    if (!tg) {
        nodetool__printf(o, "error: out of memory\n");
        return 500;
    }
    int nt = 0;
    int code = snap_targets(s, ks, n_ks, table, kt, tg, cap, &nt, o);
    if (code != 200) {
        cs_free(tg);
        return code;
    }
    for (int i = 0; i < nt; i++) {   /* every name is free before anything is linked */
        st_snapshot_info *v; int nv;
        if (st_table_snapshots(tg[i].t->st, &v, &nv) == 0) {
            for (int j = 0; j < nv; j++)
                if (!strcmp(v[j].tag, tag)) {
                    cs_free(v);
                    nodetool__printf(o, "error: Snapshot %s for %s already exists.\n", tag, tg[i].k->name);
                    cs_free(tg);
                    return 500;
                }
            cs_free(v);
        }
    }
    nodetool__printf(o, "Requested creating snapshot(s) for ");
    if (kt) nodetool__printf(o, "[%s]", kt);
    else ks_list(o, ks, n_ks);
    /* the options map prints as a Java HashMap: skipFlush before ttl */
    nodetool__printf(o, " with snapshot name [%s] and options {skipFlush=%s%s%s}\n", tag, skip_flush ? "true" : "false",
               ttl ? ", ttl=" : "", ttl_text);
    /* One creation time for every table, as takeSnapshot's creationTime. */
    st_snapshot_opts so = { .skip_flush = skip_flush, .has_ttl = ttl != NULL, .ttl_s = ttl_s,
                            .created_ms = cs_now_ms() };
    for (int i = 0; i < nt; i++) {
        int rc = st_table_snapshot(tg[i].t->st, tag, &so);
        if (rc) {
            nodetool__printf(o, "error: snapshot of %s.%s failed: %s\n", tg[i].k->name, tg[i].t->name, cs_strerror(rc));
            cs_free(tg);
            return 500;
        }
    }
    nodetool__printf(o, "Snapshot directory: %s\n", tag);
    cs_free(tg);
    return 200;
}

/* Java's String.hashCode of UTF-8 text: over its UTF-16 code units (a byte
 * that does not start a valid sequence counts as U+FFFD, as Java's decoder
 * replaces it). */
static int32_t java_string_hash(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    uint32_t h = 0;
    while (*p) {
        uint32_t cp = 0xFFFD;
        int len = p[0] < 0x80 ? 1 : (p[0] & 0xE0) == 0xC0 ? 2 : (p[0] & 0xF0) == 0xE0 ? 3 : (p[0] & 0xF8) == 0xF0 ? 4 : 0;
        bool ok = len > 0;
        for (int i = 1; i < len && ok; i++) ok = (p[i] & 0xC0) == 0x80;
        if (ok) {
            cp = len == 1 ? p[0] : (uint32_t)(p[0] & (0x7F >> len));
            for (int i = 1; i < len; i++) cp = cp << 6 | (p[i] & 0x3F);
            static const uint32_t least[5] = { 0, 0, 0x80, 0x800, 0x10000 };
            if (cp < least[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) { cp = 0xFFFD; ok = false; }
        }
        p += ok ? len : 1;
        if (cp >= 0x10000) {
            h = 31 * h + (0xD800 + ((cp - 0x10000) >> 10));
            h = 31 * h + (0xDC00 + ((cp - 0x10000) & 0x3FF));
        } else {
            h = 31 * h + cp;
        }
    }
    return (int32_t)h;
}

/* The bucket of a String key in a java.util.HashMap of n keys as nodetool
 * receives it over JMX: HashMap.readObject sizes the table to max(16,
 * tableSizeFor((int)(n / 0.75f + 1))) and iteration goes bucket by bucket,
 * (h ^ h >>> 16) & (capacity - 1). */
static uint32_t java_hashmap_bucket(const char *key, int n)
{
    float fc = (float)n / 0.75f + 1.0f;
    uint32_t cap = 16;
    while (fc >= 16.0f && cap < (uint32_t)(int)fc) cap <<= 1;
    uint32_t h = (uint32_t)java_string_hash(key);
    return (h ^ (h >> 16)) & (cap - 1);
}

typedef struct snap_row { const st_snapshot_entry *e; uint32_t bucket; } snap_row;

static int snap_row_cmp(const void *a, const void *b)
{
    const snap_row *x = a, *y = b;
    if (x->bucket != y->bucket) return x->bucket < y->bucket ? -1 : 1;
    int c = strcmp(x->e->info.tag, y->e->info.tag);
    if (!c) c = strcmp(x->e->ks, y->e->ks);
    if (!c) c = strcmp(x->e->table, y->e->table);
    return c ? c : memcmp(x->e->id, y->e->id, 16);
}

static int tag_cmp(const void *a, const void *b)
{
    return strcmp(((const snap_row *)a)->e->info.tag, ((const snap_row *)b)->e->info.tag);
}

/* listsnapshots [-nt|--no-ttl]: ListSnapshots over
 * StorageService.getSnapshotDetails.  The rows are every snapshot on disk
 * (SnapshotLoader: dropped tables' kept snapshots too; -nt leaves out those
 * with a TTL).  "Expiration time" is the manifest's expires_at
 * (Instant.toString), empty for a snapshot without a TTL (a null in
 * Cassandra's TabularData).
 *
 * Order: getSnapshotDetails groups the rows in a HashMap keyed by tag, which
 * nodetool iterates in Java's HashMap order (java_hashmap_bucket); tags in
 * one bucket keep the server's insertion order there, which follows the
 * hash of TableSnapshot objects (absolute paths, times): cassette sorts
 * those by name.  Within a tag the rows come in that same TableSnapshot
 * hash order in Cassandra, so no order can match it; cassette sorts them by
 * keyspace, then table.
 *
 * "Total TrueDiskSpaceUsed" is StorageService.trueSnapshotsSize: only the
 * tables that exist, outside system and system_schema
 * (isLocalSystemKeyspace), counting their snapshots' sstable files that no
 * live sstable shares (Directories.SSTableSizeSummer: no manifest.json),
 * -nt or not; a dropped table's snapshots are listed but not counted. */
static int do_listsnapshots(srv *s, char **args, int n, cs_buf *o)
{
    bool no_ttl = false;
    for (int i = 0; i < n; i++)
        if (!strcmp(args[i], "-nt") || !strcmp(args[i], "--no-ttl")) no_ttl = true;
    nodetool__printf(o, "Snapshot Details: \n");
    st_snapshot_entry *v; int nv;
    int rc = st_engine_snapshots(s->eng, &v, &nv);
    if (rc) {
        nodetool__printf(o, "error: Error during list snapshot: %s\n", cs_strerror(rc));
        return 500;
    }
    snap_row *r = nv ? cs_calloc((size_t)nv, sizeof *r) : NULL;
    if (nv && !r) {
        cs_free(v);
        nodetool__printf(o, "error: Error during list snapshot: %s\n", cs_strerror(CS_ENOMEM));
        return 500;
    }
    uint64_t true_total = 0;
    int nr = 0;
    for (int i = 0; i < nv; i++) {
        bool local = !strcasecmp(v[i].ks, "system") || !strcasecmp(v[i].ks, "system_schema");
        if (!local && st_table_find(s->eng, v[i].id)) true_total += v[i].info.sstable_true_size;
        if (!(no_ttl && v[i].info.expiring)) r[nr++] = (snap_row){ .e = &v[i] };
    }
    if (nr == 0) {
        nodetool__printf(o, "There are no snapshots\n");
        cs_free(r);
        cs_free(v);
        return 200;
    }
    qsort(r, (size_t)nr, sizeof *r, tag_cmp);
    int n_tags = 0;
    for (int i = 0; i < nr; i++) n_tags += i == 0 || strcmp(r[i].e->info.tag, r[i - 1].e->info.tag);
    for (int i = 0; i < nr; i++) r[i].bucket = java_hashmap_bucket(r[i].e->info.tag, n_tags);
    qsort(r, (size_t)nr, sizeof *r, snap_row_cmp);
    /* Every row, each cell as wide as a snapshot tag can be (st_snapshot_info.tag). */
    enum { COLS = 7, CELL = sizeof r[0].e->info.tag };
    char (*cells)[COLS][CELL] = cs_calloc((size_t)nr + 1, sizeof *cells);
    if (!cells) {
        cs_free(r);
        cs_free(v);
        nodetool__printf(o, "error: Error during list snapshot: %s\n", cs_strerror(CS_ENOMEM));
        return 500;
    }
    static const char *head[COLS] = { "Snapshot name", "Keyspace name", "Column family name", "True size",
                                      "Size on disk", "Creation time", "Expiration time" };
    for (int col = 0; col < COLS; col++) snprintf(cells[0][col], CELL, "%s", head[col]);
    int rows = 1;
    for (int i = 0; i < nr; i++) {
        const st_snapshot_entry *e = r[i].e;
        char (*c)[CELL] = cells[rows++];
        snprintf(c[0], CELL, "%s", e->info.tag);
        snprintf(c[1], CELL, "%s", e->ks);
        snprintf(c[2], CELL, "%s", e->table);
        nodetool__human(e->info.true_size, c[3], CELL);
        nodetool__human(e->info.size_on_disk, c[4], CELL);
        cs_format_instant_ms(e->info.created_ms, c[5], CELL);
        if (e->info.expiring) cs_format_instant_ms(e->info.expires_ms, c[6], CELL);
        else c[6][0] = 0;
    }
    cs_free(r);
    cs_free(v);
    nodetool__table_print(o, &cells[0][0][0], CELL, rows, COLS);
    cs_free(cells);
    char tot[32];
    nodetool__human(true_total, tot, sizeof tot);
    nodetool__printf(o, "\nTotal TrueDiskSpaceUsed: %s\n\n", tot);
    return 200;
}

/* clearsnapshot [-t tag | --all] [keyspaces...]: ClearSnapshot over
 * StorageService.clearSnapshot, which walks the keyspace directories on
 * disk: dropped tables' snapshots go too, and a keyspace name with no
 * directory is no error.  An empty -t is no name (snapshotName.isEmpty()). */
static int do_clearsnapshot(srv *s, char **args, int n, cs_buf *o)
{
    const char *tag = NULL;
    bool all = false;
    static char *ks[NODETOOL_MAX_ARGS]; int n_ks = 0;   /* the admin loop's own */
    for (int i = 0; i < n; i++) {
        bool is_tag = !strcmp(args[i], "-t") || !strcmp(args[i], "--tag");
        if (is_tag && i + 1 >= n) return nodetool__bad_use(o, "Required values for option 'snapshot_name' not provided");
        if (is_tag) tag = args[++i];
        else if (!strcmp(args[i], "--all")) all = true;
        else if (args[i][0] != '-' && n_ks < NODETOOL_MAX_ARGS) ks[n_ks++] = args[i];
    }
    if (tag && !*tag) tag = NULL;
    if (!tag && !all) { nodetool__printf(o, "error: Specify snapshot name or --all\n"); return 500; }
    if (tag && all) { nodetool__printf(o, "error: Specify only one of snapshot name or --all\n"); return 500; }
    nodetool__printf(o, "Requested clearing snapshot(s) for ");
    ks_list(o, ks, n_ks);
    if (all) nodetool__printf(o, " with [all snapshots]\n");
    else nodetool__printf(o, " with snapshot name [%s]\n", tag);
    st_engine_clear_snapshots(s->eng, ks, n_ks, tag);
    return 200;
}

int nodetool__run_snapshot(srv *s, const char *verb, char **args, int n, cs_buf *o)
{
    if (!strcmp(verb, "snapshot")) return do_snapshot(s, args, n, o);
    if (!strcmp(verb, "listsnapshots")) return do_listsnapshots(s, args, n, o);
    if (!strcmp(verb, "clearsnapshot")) return do_clearsnapshot(s, args, n, o);
    return 0;
}
