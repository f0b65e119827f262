/*
 * storage_bench_kv.c: the three engine adapters of the storage micro-benchmark
 * (bench/storage_bench.c): cassette through storage/storage.h, LevelDB through
 * leveldb/c.h and RocksDB through rocksdb/c.h.  Owner: sbench.
 *
 * Each adapter maps the benchmark's (partition key, clustering key, value)
 * writes onto its engine:
 *   - cassette: one partition per pk, one row per ck (empty ck for the
 *     key/value workloads), one regular cell (column 1) plus the row marker
 *     an INSERT writes; one st_write (one commit log record) per put, or per
 *     batch for the wide-partition load.
 *   - LevelDB/RocksDB: key = pk || ck, one Put per put (WAL on, sync=false),
 *     one WriteBatch per batch.
 * Point reads, short scans and clustering slices are the natural operation of
 * each engine (see docs/storage-bench.md for the semantic differences).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <time.h>

#include <leveldb/c.h>
#include <rocksdb/c.h>

#include "bench/storage_bench.h"
#include "common/alloc.h"
#include "storage/storage.h"

/* ------------------------------------------------------------ cassette */

typedef struct cas_db {
    st_engine *e;
    st_table *t;
    st_mutation *batch;        /* open batch (NULL if none) */
    uint8_t last_pk[256];      /* partition currently open in batch */
    uint32_t last_pk_len;
    int64_t ts;                /* write timestamp counter */
    char data[512], clog[512];
} cas_db;

static const uint8_t CAS_TID[16] = { 0x5b, 0xe7, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14 };

static int cas_open(const char *dir, void **out)
{
    cas_db *d = cs_calloc(1, sizeof *d);
    if (!d) return -1;
    snprintf(d->data, sizeof d->data, "%s/data", dir);
    snprintf(d->clog, sizeof d->clog, "%s/commitlog", dir);
    st_config cfg;
    st_config_defaults(&cfg);
    cfg.data_dir = d->data;
    cfg.commitlog_dir = d->clog;
    cfg.sync_mode = ST_SYNC_PERIODIC;    /* like sync=false: fsync every 10 s */
    cfg.block_cache_size = (size_t)32 << 20;   /* the figures' cache (server default: 256 MiB) */
    int rc = st_engine_open(&cfg, &d->e);
    if (rc) { fprintf(stderr, "st_engine_open: %d\n", rc); cs_free(d); return -1; }
    st_table_opts o;
    st_table_opts_defaults(&o);          /* STCS, bloom 0.01 */
    rc = st_table_open(d->e, CAS_TID, "bench", "kv", &o, &d->t);
    if (!rc) rc = st_engine_replay(d->e, NULL, NULL);
    if (!rc) rc = st_engine_replay_done(d->e);
    if (rc) { fprintf(stderr, "st_table_open/replay: %d\n", rc); st_engine_close(d->e, false); cs_free(d); return -1; }
    d->ts = (int64_t)time(NULL) * 1000000;
    *out = d;
    return 0;
}

static void cas_close(void *h)
{
    cas_db *d = h;
    if (d->batch) st_mutation_free(d->batch);
    st_engine_close(d->e, true);
    cs_free(d);
}

/* Add one row (pk, ck) = val to mutation m. */
static void cas_add(cas_db *d, st_mutation *m, const uint8_t *pk, uint32_t pklen,
                    const uint8_t *ck, uint32_t cklen, const uint8_t *v, uint32_t vlen, bool newpart)
{
    int64_t ts = ++d->ts;
    if (newpart) st_mut_partition(m, d->t, pk, pklen);
    st_mut_row(m, ck, cklen, 0);
    st_mut_row_liveness(m, (st_liveness){ .ts_us = ts });
    st_cell c = { .col = 1, .ts_us = ts, .val = v, .val_len = vlen };
    st_mut_cell(m, &c);
}

static int cas_put(void *h, const uint8_t *pk, uint32_t pklen, const uint8_t *ck, uint32_t cklen,
                   const uint8_t *v, uint32_t vlen)
{
    cas_db *d = h;
    if (d->batch) {
        /* batches from the wide load: rows of one partition go together */
        bool np = pklen != d->last_pk_len || memcmp(pk, d->last_pk, pklen) != 0;
        if (np && pklen <= sizeof d->last_pk) { memcpy(d->last_pk, pk, pklen); d->last_pk_len = pklen; }
        cas_add(d, d->batch, pk, pklen, ck, cklen, v, vlen, np);
        return 0;
    }
    st_mutation *m = st_mutation_new();
    if (!m) return -1;
    cas_add(d, m, pk, pklen, ck, cklen, v, vlen, true);
    int rc = st_write(d->e, m, NULL);
    st_mutation_free(m);
    return rc ? -1 : 0;
}

static int cas_batch_begin(void *h)
{
    cas_db *d = h;
    d->batch = st_mutation_new();
    d->last_pk_len = UINT32_MAX;
    return d->batch ? 0 : -1;
}

static int cas_batch_end(void *h)
{
    cas_db *d = h;
    int rc = st_write(d->e, d->batch, NULL);
    st_mutation_free(d->batch);
    d->batch = NULL;
    return rc ? -1 : 0;
}

/* Point read of partition pk (its one row); returns 1 found, 0 not, <0 error. */
static int cas_get(void *h, const uint8_t *pk, uint32_t pklen)
{
    cas_db *d = h;
    st_read_spec rs = { .pk = pk, .pk_len = pklen };
    st_scan *s;
    if (st_scan_open(d->t, &rs, &s)) return -1;
    st_partition_view p;
    st_row_view r;
    int found = 0;
    if (st_scan_next_partition(s, &p) == 1 && st_scan_next_row(s, &r) == 1 && r.n_cells == 1)
        found = 1;
    st_scan_close(s);
    return found;
}

/* Short scan: n partitions in ring order from token `tok` (the KV engines
 * seek to a random key instead). Returns rows read. */
static int cas_scan(void *h, const uint8_t *start, uint32_t slen, int64_t tok, int n)
{
    cas_db *d = h;
    (void)start; (void)slen;
    st_read_spec rs = { .start_token = tok, .start_inclusive = true, .end_token = INT64_MAX };
    st_scan *s;
    if (st_scan_open(d->t, &rs, &s)) return -1;
    st_partition_view p;
    st_row_view r;
    int got = 0;
    while (got < n && st_scan_next_partition(s, &p) == 1)
        while (got < n && st_scan_next_row(s, &r) == 1) got++;
    st_scan_close(s);
    return got;
}

/* Clustering slice of partition pk: rows with ck >= lo, at most n. */
static int cas_slice(void *h, const uint8_t *pk, uint32_t pklen, const uint8_t *lo,
                     const uint8_t *hi, uint32_t cklen, int n)
{
    cas_db *d = h;
    st_slice sl = { .start = { lo, cklen, true }, .end = { hi, cklen, true } };
    st_read_spec rs = { .pk = pk, .pk_len = pklen, .slices = &sl, .n_slices = 1 };
    st_scan *s;
    if (st_scan_open(d->t, &rs, &s)) return -1;
    st_partition_view p;
    st_row_view r;
    int got = 0;
    if (st_scan_next_partition(s, &p) == 1)
        while (got < n && st_scan_next_row(s, &r) == 1) got++;
    st_scan_close(s);
    return got;
}

static int cas_flush(void *h)
{
    cas_db *d = h;
    return st_table_flush(d->t) ? -1 : 0;
}

static int cas_compact(void *h)
{
    cas_db *d = h;
    if (st_table_flush(d->t)) return -1;
    return st_table_compact(d->t) ? -1 : 0;
}

/* Wait until background compactions are done (bounded, 60 s). */
static void cas_settle(void *h)
{
    cas_db *d = h;
    st_table_stats s;
    for (int i = 0; i < 6000; i++) {
        if (st_table_stats_get(d->t, &s) || (s.pending_flushes == 0 && s.pending_compactions == 0)) break;
        struct timespec ts = { 0, 10000000 };
        nanosleep(&ts, NULL);
    }
}

const sb_engine sb_cassette = {
    "cassette", "LZ4 blocks (engine default)",
    cas_open, cas_close, cas_put, cas_batch_begin, cas_batch_end, cas_get, cas_scan, cas_slice,
    cas_flush, cas_compact, cas_settle,
};

/* ------------------------------------------------------------ shared KV helpers */

#define KV_MAXKEY 256

static uint32_t kv_key(uint8_t *k, const uint8_t *pk, uint32_t pklen, const uint8_t *ck, uint32_t cklen)
{
    memcpy(k, pk, pklen);
    if (cklen) memcpy(k + pklen, ck, cklen);
    return pklen + cklen;
}

/* ------------------------------------------------------------ LevelDB */

typedef struct ldb_db {
    leveldb_t *db;
    leveldb_options_t *o;
    leveldb_writeoptions_t *wo;
    leveldb_readoptions_t *ro;
    leveldb_writebatch_t *batch;
} ldb_db;

static int ldb_open(const char *dir, void **out)
{
    ldb_db *d = cs_calloc(1, sizeof *d);
    if (!d) return -1;
    d->o = leveldb_options_create();
    leveldb_options_set_create_if_missing(d->o, 1);   /* everything else default: snappy, 4 MiB memtable, 8 MiB cache */
    char *err = NULL;
    d->db = leveldb_open(d->o, dir, &err);
    if (err) { fprintf(stderr, "leveldb_open: %s\n", err); leveldb_free(err); leveldb_options_destroy(d->o); cs_free(d); return -1; }
    d->wo = leveldb_writeoptions_create();
    leveldb_writeoptions_set_sync(d->wo, 0);
    d->ro = leveldb_readoptions_create();
    *out = d;
    return 0;
}

static void ldb_close(void *h)
{
    ldb_db *d = h;
    leveldb_close(d->db);
    leveldb_options_destroy(d->o);
    leveldb_writeoptions_destroy(d->wo);
    leveldb_readoptions_destroy(d->ro);
    if (d->batch) leveldb_writebatch_destroy(d->batch);
    cs_free(d);
}

static int ldb_put(void *h, const uint8_t *pk, uint32_t pklen, const uint8_t *ck, uint32_t cklen,
                   const uint8_t *v, uint32_t vlen)
{
    ldb_db *d = h;
    uint8_t k[KV_MAXKEY];
    uint32_t kl = kv_key(k, pk, pklen, ck, cklen);
    if (d->batch) { leveldb_writebatch_put(d->batch, (char *)k, kl, (const char *)v, vlen); return 0; }
    char *err = NULL;
    leveldb_put(d->db, d->wo, (char *)k, kl, (const char *)v, vlen, &err);
    if (err) { fprintf(stderr, "leveldb_put: %s\n", err); leveldb_free(err); return -1; }
    return 0;
}

static int ldb_batch_begin(void *h)
{
    ldb_db *d = h;
    d->batch = leveldb_writebatch_create();
    return 0;
}

static int ldb_batch_end(void *h)
{
    ldb_db *d = h;
    char *err = NULL;
    leveldb_write(d->db, d->wo, d->batch, &err);
    leveldb_writebatch_destroy(d->batch);
    d->batch = NULL;
    if (err) { fprintf(stderr, "leveldb_write: %s\n", err); leveldb_free(err); return -1; }
    return 0;
}

static int ldb_get(void *h, const uint8_t *pk, uint32_t pklen)
{
    ldb_db *d = h;
    char *err = NULL;
    size_t vl = 0;
    char *v = leveldb_get(d->db, d->ro, (const char *)pk, pklen, &vl, &err);
    if (err) { leveldb_free(err); return -1; }
    if (!v) return 0;
    leveldb_free(v);
    return 1;
}

static int ldb_scan(void *h, const uint8_t *start, uint32_t slen, int64_t tok, int n)
{
    ldb_db *d = h;
    (void)tok;
    leveldb_iterator_t *it = leveldb_create_iterator(d->db, d->ro);
    int got = 0;
    for (leveldb_iter_seek(it, (const char *)start, slen); got < n && leveldb_iter_valid(it); leveldb_iter_next(it)) {
        size_t vl;
        (void)leveldb_iter_value(it, &vl);
        got++;
    }
    leveldb_iter_destroy(it);
    return got;
}

static int ldb_slice(void *h, const uint8_t *pk, uint32_t pklen, const uint8_t *lo,
                     const uint8_t *hi, uint32_t cklen, int n)
{
    ldb_db *d = h;
    uint8_t k[KV_MAXKEY], e[KV_MAXKEY];
    uint32_t kl = kv_key(k, pk, pklen, lo, cklen), el = kv_key(e, pk, pklen, hi, cklen);
    leveldb_iterator_t *it = leveldb_create_iterator(d->db, d->ro);
    int got = 0;
    for (leveldb_iter_seek(it, (const char *)k, kl); got < n && leveldb_iter_valid(it); leveldb_iter_next(it)) {
        size_t il, vl;
        const char *ik = leveldb_iter_key(it, &il);
        if (il != el || memcmp(ik, e, el) > 0) break;
        (void)leveldb_iter_value(it, &vl);
        got++;
    }
    leveldb_iter_destroy(it);
    return got;
}

static int ldb_flush(void *h)
{
    /* LevelDB has no flush call; a compaction of an empty range still
     * compacts the memtable first. */
    ldb_db *d = h;
    leveldb_compact_range(d->db, "", 0, "", 0);
    return 0;
}

static int ldb_compact(void *h)
{
    ldb_db *d = h;
    leveldb_compact_range(d->db, NULL, 0, NULL, 0);
    return 0;
}

static void ldb_settle(void *h) { (void)h; }

const sb_engine sb_leveldb = {
    "leveldb", "Snappy (default)",
    ldb_open, ldb_close, ldb_put, ldb_batch_begin, ldb_batch_end, ldb_get, ldb_scan, ldb_slice,
    ldb_flush, ldb_compact, ldb_settle,
};

/* ------------------------------------------------------------ RocksDB */

typedef struct rdb_db {
    rocksdb_t *db;
    rocksdb_options_t *o;
    rocksdb_writeoptions_t *wo;
    rocksdb_readoptions_t *ro;
    rocksdb_writebatch_t *batch;
} rdb_db;

static int rdb_open(const char *dir, void **out)
{
    rdb_db *d = cs_calloc(1, sizeof *d);
    if (!d) return -1;
    d->o = rocksdb_options_create();
    rocksdb_options_set_create_if_missing(d->o, 1);   /* else default: snappy, 64 MiB memtable, 8 MiB cache */
    char *err = NULL;
    d->db = rocksdb_open(d->o, dir, &err);
    if (err) { fprintf(stderr, "rocksdb_open: %s\n", err); rocksdb_free(err); rocksdb_options_destroy(d->o); cs_free(d); return -1; }
    d->wo = rocksdb_writeoptions_create();
    rocksdb_writeoptions_set_sync(d->wo, 0);
    d->ro = rocksdb_readoptions_create();
    *out = d;
    return 0;
}

static void rdb_close(void *h)
{
    rdb_db *d = h;
    rocksdb_close(d->db);
    rocksdb_options_destroy(d->o);
    rocksdb_writeoptions_destroy(d->wo);
    rocksdb_readoptions_destroy(d->ro);
    if (d->batch) rocksdb_writebatch_destroy(d->batch);
    cs_free(d);
}

static int rdb_put(void *h, const uint8_t *pk, uint32_t pklen, const uint8_t *ck, uint32_t cklen,
                   const uint8_t *v, uint32_t vlen)
{
    rdb_db *d = h;
    uint8_t k[KV_MAXKEY];
    uint32_t kl = kv_key(k, pk, pklen, ck, cklen);
    if (d->batch) { rocksdb_writebatch_put(d->batch, (char *)k, kl, (const char *)v, vlen); return 0; }
    char *err = NULL;
    rocksdb_put(d->db, d->wo, (char *)k, kl, (const char *)v, vlen, &err);
    if (err) { fprintf(stderr, "rocksdb_put: %s\n", err); rocksdb_free(err); return -1; }
    return 0;
}

static int rdb_batch_begin(void *h)
{
    rdb_db *d = h;
    d->batch = rocksdb_writebatch_create();
    return 0;
}

static int rdb_batch_end(void *h)
{
    rdb_db *d = h;
    char *err = NULL;
    rocksdb_write(d->db, d->wo, d->batch, &err);
    rocksdb_writebatch_destroy(d->batch);
    d->batch = NULL;
    if (err) { fprintf(stderr, "rocksdb_write: %s\n", err); rocksdb_free(err); return -1; }
    return 0;
}

static int rdb_get(void *h, const uint8_t *pk, uint32_t pklen)
{
    rdb_db *d = h;
    char *err = NULL;
    size_t vl = 0;
    char *v = rocksdb_get(d->db, d->ro, (const char *)pk, pklen, &vl, &err);
    if (err) { rocksdb_free(err); return -1; }
    if (!v) return 0;
    rocksdb_free(v);
    return 1;
}

static int rdb_scan(void *h, const uint8_t *start, uint32_t slen, int64_t tok, int n)
{
    rdb_db *d = h;
    (void)tok;
    rocksdb_iterator_t *it = rocksdb_create_iterator(d->db, d->ro);
    int got = 0;
    for (rocksdb_iter_seek(it, (const char *)start, slen); got < n && rocksdb_iter_valid(it); rocksdb_iter_next(it)) {
        size_t vl;
        (void)rocksdb_iter_value(it, &vl);
        got++;
    }
    rocksdb_iter_destroy(it);
    return got;
}

static int rdb_slice(void *h, const uint8_t *pk, uint32_t pklen, const uint8_t *lo,
                     const uint8_t *hi, uint32_t cklen, int n)
{
    rdb_db *d = h;
    uint8_t k[KV_MAXKEY], e[KV_MAXKEY];
    uint32_t kl = kv_key(k, pk, pklen, lo, cklen), el = kv_key(e, pk, pklen, hi, cklen);
    rocksdb_iterator_t *it = rocksdb_create_iterator(d->db, d->ro);
    int got = 0;
    for (rocksdb_iter_seek(it, (const char *)k, kl); got < n && rocksdb_iter_valid(it); rocksdb_iter_next(it)) {
        size_t il, vl;
        const char *ik = rocksdb_iter_key(it, &il);
        if (il != el || memcmp(ik, e, el) > 0) break;
        (void)rocksdb_iter_value(it, &vl);
        got++;
    }
    rocksdb_iter_destroy(it);
    return got;
}

static int rdb_flush(void *h)
{
    rdb_db *d = h;
    rocksdb_flushoptions_t *fo = rocksdb_flushoptions_create();
    rocksdb_flushoptions_set_wait(fo, 1);
    char *err = NULL;
    rocksdb_flush(d->db, fo, &err);
    rocksdb_flushoptions_destroy(fo);
    if (err) { fprintf(stderr, "rocksdb_flush: %s\n", err); rocksdb_free(err); return -1; }
    return 0;
}

static int rdb_compact(void *h)
{
    rdb_db *d = h;
    if (rdb_flush(h)) return -1;
    rocksdb_compact_range(d->db, NULL, 0, NULL, 0);
    return 0;
}

/* Wait (bounded, 60 s) until RocksDB reports no pending compaction work. */
static void rdb_settle(void *h)
{
    rdb_db *d = h;
    for (int i = 0; i < 6000; i++) {
        uint64_t pend = 0, run = 0;
        if (!rocksdb_property_int(d->db, "rocksdb.compaction-pending", &pend) &&
            !rocksdb_property_int(d->db, "rocksdb.num-running-compactions", &run) && !pend && !run)
            break;
        struct timespec ts = { 0, 10000000 };
        nanosleep(&ts, NULL);
    }
}

const sb_engine sb_rocksdb = {
    "rocksdb", "Snappy (default)",
    rdb_open, rdb_close, rdb_put, rdb_batch_begin, rdb_batch_end, rdb_get, rdb_scan, rdb_slice,
    rdb_flush, rdb_compact, rdb_settle,
};
