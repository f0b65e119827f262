/*
 * engine.c: the engine object, tables, the write path and replay.
 *
 * Write path (st_write):
 *   barrier read lock ─> clog_append (one record) ─> st__apply to memtables
 *   ─> unlock ─> maybe schedule flushes.
 * A memtable switch (flush) takes the barrier write lock, so every record
 * before the switch position is inside the old memtable: the position can
 * then be stored in the sstable and used to skip records on replay.
 *
 * Replay: records whose end position is <= the table's replay_pos (the
 * largest commit log position stored in its sstables, or its truncation
 * position) are skipped.
 */
#include "storage/storage_int.h"
#include "storage/sstable_int.h"
#include "common/alloc.h"
#include "common/err.h"
#include "common/hash.h"
#include "common/log.h"
#include "common/util.h"
#include "common/vfs.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

void st_config_defaults(st_config *c)
{
    memset(c, 0, sizeof *c);
    c->data_dir = "data/data";
    c->commitlog_dir = "data/commitlog";
    c->sync_mode = ST_SYNC_PERIODIC;
    c->sync_period_ms = 10000;
    c->sync_group_window_ms = 15;
    c->segment_size = 32u << 20;
    c->commitlog_total_space = (size_t)8 << 30;
    c->memtable_space = 256u << 20;
    c->compaction_threads = 1;
    c->snapshot_on_truncate = false;
    c->snapshot_cleanup_period_ms = 60000;
    c->block_cache_size = (size_t)256 << 20;
}

void st_table_opts_defaults(st_table_opts *o)
{
    memset(o, 0, sizeof *o);
    o->gc_grace_s = 864000;
    o->bloom_fp_chance = 0.01;
    o->compaction = ST_COMPACT_STCS;
    o->min_threshold = 4;
    o->max_threshold = 32;
    o->twcs_window_s = 86400;
    o->twcs_expired_check_s = 600;
    o->lcs_sstable_size_mb = 160;
    o->lcs_fanout = 10;
    o->compaction_enabled = true;
    o->bucket_low = 0.5;
    o->bucket_high = 1.5;
    o->min_sstable_bytes = 50ll << 20;
    o->tombstone_threshold = 0.2;
    o->tombstone_interval_s = 86400;
    o->unchecked_tombstone = false;
    o->tombstone_compactions = true;
    o->min_index_interval = 128;
    o->flush_period_ms = 0;
}

/* ---------------------------------------------------------------- engine */

int st_engine_open(const st_config *cfg, st_engine **out)
{
    *out = NULL;
    if (!cfg || !cfg->data_dir || !cfg->commitlog_dir) return CS_EINVAL;
    st_engine *e = cs_calloc(1, sizeof *e);
    if (!e) return CS_ENOMEM;
    e->cfg = *cfg;
    if (e->cfg.segment_size < 4096) e->cfg.segment_size = 4096;
    if (e->cfg.memtable_space == 0) e->cfg.memtable_space = 256u << 20;
    if (e->cfg.commitlog_total_space == 0) e->cfg.commitlog_total_space = (size_t)8 << 30;
    e->data_dir = cs_strdup(cfg->data_dir);
    e->clog_dir = cs_strdup(cfg->commitlog_dir);
    e->cfg.data_dir = e->data_dir;
    e->cfg.commitlog_dir = e->clog_dir;
    pthread_rwlockattr_t ra;
    pthread_rwlockattr_init(&ra);
    pthread_rwlockattr_setkind_np(&ra, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&e->barrier, &ra);
    pthread_rwlockattr_destroy(&ra);
    pthread_mutex_init(&e->mu, NULL);
    pthread_cond_init(&e->cv, NULL);
    pthread_mutex_init(&e->cmp_rate_mu, NULL);
    atomic_init(&e->cmp_rate, cfg->compaction_throughput);
    atomic_init(&e->mem_total, 0);
    /* Flushed memtables' chunks serve the next memtables (a flush cycle's
     * worth at most; trimmed by the compaction thread when unused). */
    e->mt_pool = cs_chunk_pool_new(MT_CHUNK, e->cfg.memtable_space);
    st__cache_retain(cfg->block_cache_size);
    st__reaper_retain();
    int rc = (!e->data_dir || !e->clog_dir) ? CS_ENOMEM : vfs_mkdirs(e->data_dir);
    if (!rc) rc = clog_open(&e->cfg, &e->log);
    if (!rc) rc = st__bg_start(e);
    if (!rc) rc = st__snapshot_cleanup_start(e);
    if (rc) { st_engine_close(e, false); return rc; }
    *out = e;
    return 0;
}

static void table_free(st_table *t)
{
    if (!t) return;
    mt_unref(t->mem);
    for (int i = 0; i < t->n_flushing; i++) mt_unref(t->flushing[i]);
    cs_free(t->flushing);
    st__table_sst_unref_all(t);
    cs_free(t->ssts);
    cs_free(t->ks); cs_free(t->name); cs_free(t->dir);
    pthread_mutex_destroy(&t->mu);
    pthread_mutex_destroy(&t->floor_mu);
    pthread_cond_destroy(&t->cv);
    cs_free(t);
}

void st_engine_close(st_engine *e, bool flush_all)
{
    if (!e) return;
    if (flush_all && e->log) {
        pthread_mutex_lock(&e->mu);
        int n = e->n_tables;
        st_table **v = cs_malloc(sizeof *v * (size_t)(n ? n : 1));
        if (v && n) memcpy(v, e->tables, sizeof *v * (size_t)n);
        pthread_mutex_unlock(&e->mu);
        for (int i = 0; v && i < n; i++) {
            int rc = st__flush_table(v[i], true);
            if (rc) CS_ERROR("storage: flush of %s.%s on close failed: %s", v[i]->ks, v[i]->name, cs_strerror(rc));
        }
        cs_free(v);
    }
    st__snapshot_cleanup_stop(e);
    st__bg_stop(e);
    if (e->log) {
        if (flush_all) st__recycle(e);
        clog_close(e->log);
    }
    for (int i = 0; i < e->n_tables; i++) table_free(e->tables[i]);
    cs_free(e->tables);
    cs_chunk_pool_unref(e->mt_pool);   /* freed with the last memtable (the reaper may hold one) */
    pthread_rwlock_destroy(&e->barrier);
    pthread_mutex_destroy(&e->mu);
    pthread_cond_destroy(&e->cv);
    pthread_mutex_destroy(&e->cmp_rate_mu);
    cs_free(e->data_dir);
    cs_free(e->clog_dir);
    cs_free(e);
    st__reaper_release();
    mt_index_pool_trim(true);
    st__cache_release();
}

/* ---------------------------------------------------------------- tables */

st_table *st__table_find_locked(st_engine *e, const uint8_t id[16])
{
    for (int i = 0; i < e->n_tables; i++)
        if (!memcmp(e->tables[i]->id, id, 16)) return e->tables[i];
    return NULL;
}

st_table *st_table_find(st_engine *e, const uint8_t id[16])
{
    pthread_mutex_lock(&e->mu);
    st_table *t = st__table_find_locked(e, id);
    pthread_mutex_unlock(&e->mu);
    return t;
}

static void id_hex(const uint8_t id[16], char out[33])
{
    static const char hx[] = "0123456789abcdef";
    for (int i = 0; i < 16; i++) { out[2 * i] = hx[id[i] >> 4]; out[2 * i + 1] = hx[id[i] & 15]; }
    out[32] = 0;
}

/* Truncation record: <dir>/TRUNCATED holds the position (2 x u64 BE) + crc. */
static void load_truncated(st_table *t)
{
    char p[4200];
    snprintf(p, sizeof p, "%s/TRUNCATED", t->dir);
    uint8_t *b; size_t n;
    if (vfs_read_all(p, &b, &n)) return;
    if (n == 20 && cs_be32(b + 16) == cs_crc32c(0, b, 16)) {
        st_clog_pos pos = { cs_be64(b), cs_be64(b + 8) };
        if (st__pos_cmp(pos, t->replay_pos) > 0) t->replay_pos = pos;
    } else {
        CS_WARN("storage: %s: bad truncation record ignored", p);
    }
    cs_free(b);
}

static int save_truncated(st_table *t, st_clog_pos pos)
{
    return st__save_replay_floor(t, pos);
}

/* Persist "records up to pos are never replayed into t" (TRUNCATED file):
 * used by TRUNCATE and when compaction drops sstables without output, so
 * their commit log position is not lost.  TRUNCATE (a request) and a
 * compaction thread can call it at once: floor_mu makes them write one
 * after the other, each the highest position so far, so the file never
 * goes back to a lower one (which would replay truncated records into the
 * table at the next start) and the two never share TRUNCATED.tmp. */
int st__save_replay_floor(st_table *t, st_clog_pos pos)
{
    pthread_mutex_lock(&t->floor_mu);
    pthread_mutex_lock(&t->mu);
    if (st__pos_cmp(t->replay_pos, pos) > 0) pos = t->replay_pos;
    t->replay_pos = pos;
    pthread_mutex_unlock(&t->mu);
    char p[4200];
    snprintf(p, sizeof p, "%s/TRUNCATED", t->dir);
    uint8_t b[20];
    cs_st64(b, pos.segment);
    cs_st64(b + 8, pos.offset);
    cs_st32(b + 16, cs_crc32c(0, b, 16));
    int rc = vfs_write_atomic(p, b, sizeof b);   /* TRUNCATED.tmp, fsync, rename, fsync of t->dir */
    pthread_mutex_unlock(&t->floor_mu);
    return rc;
}

int st_table_open(st_engine *e, const uint8_t id[16], const char *ks, const char *name,
                  const st_table_opts *opts, st_table **out)
{
    *out = NULL;
    if (!e || !id || !ks || !name) return CS_EINVAL;
    pthread_mutex_lock(&e->mu);
    st_table *t = st__table_find_locked(e, id);
    pthread_mutex_unlock(&e->mu);
    if (t) { *out = t; return 0; }
    t = cs_calloc(1, sizeof *t);
    if (!t) return CS_ENOMEM;
    t->e = e;
    memcpy(t->id, id, 16);
    pthread_mutex_init(&t->mu, NULL);
    pthread_mutex_init(&t->floor_mu, NULL);
    pthread_cond_init(&t->cv, NULL);
    if (opts) t->opts = *opts; else st_table_opts_defaults(&t->opts);
    char hex[33], buf[4200];
    id_hex(id, hex);
    snprintf(buf, sizeof buf, "%s/%s/%s-%s", e->data_dir, ks, name, hex);
    t->ks = cs_strdup(ks);
    t->name = cs_strdup(name);
    t->dir = cs_strdup(buf);
    t->mem = mt_new(e->mt_pool);
    t->next_gen = 1;
    int rc = (!t->ks || !t->name || !t->dir || !t->mem) ? CS_ENOMEM : vfs_mkdirs(t->dir);
    if (!rc) rc = st__table_load_sstables(t);
    if (rc) { table_free(t); return rc; }
    load_truncated(t);
    pthread_mutex_lock(&e->mu);
    st_table *other = st__table_find_locked(e, id);
    if (!other && e->n_tables == e->cap_tables) {
        int nc = e->cap_tables ? e->cap_tables * 2 : 16;
        st_table **n = cs_realloc(e->tables, (size_t)nc * sizeof *n);
        if (!n) rc = CS_ENOMEM; else { e->tables = n; e->cap_tables = nc; }
    }
    if (!other && !rc) e->tables[e->n_tables++] = t;
    pthread_mutex_unlock(&e->mu);
    if (other || rc) { table_free(t); *out = other; return rc; }
    *out = t;
    if (t->opts.flush_period_ms > 0) {   /* the flush thread times its next look (flush_periods) */
        pthread_mutex_lock(&e->mu);
        pthread_cond_broadcast(&e->cv);
        pthread_mutex_unlock(&e->mu);
    }
    return 0;
}

int st_table_set_opts(st_table *t, const st_table_opts *opts)
{
    if (!t || !opts) return CS_EINVAL;
    pthread_mutex_lock(&t->mu);
    int min_t = t->opts.min_threshold, max_t = t->opts.max_threshold;
    t->opts = *opts;
    if (t->thresholds_set) {   /* set by nodetool: kept, as Cassandra's CFS.reload keeps modified ones */
        t->opts.min_threshold = min_t;
        t->opts.max_threshold = max_t;
    }
    pthread_mutex_unlock(&t->mu);
    st__bg_kick(t->e);
    return 0;
}

/* Replace memtables with a fresh one and drop all sstables; records up to
 * the current commit log position will not be replayed. */
int st_table_truncate(st_table *t)
{
    if (!t) return CS_EINVAL;
    st_engine *e = t->e;
    if (e->cfg.snapshot_on_truncate && !t->dropped) {
        int rc = st__snapshot_auto(t, "truncated");
        if (rc) return rc;
    }
    st__wait_idle(t);
    pthread_rwlock_wrlock(&e->barrier);
    /* Nothing to truncate (no memtable content, none flushing, no
     * sstables): every commit log record of t is below its replay floor
     * already (flushed into sstables that are gone, whose compaction saved
     * the floor, or truncated), so the TRUNCATED marker and its fsyncs are
     * skipped.  Test suites truncate every table between tests, most of
     * them empty. */
    pthread_mutex_lock(&t->mu);
    bool empty = t->n_ssts == 0 && t->n_flushing == 0 && mt_partitions(t->mem) == 0;
    pthread_mutex_unlock(&t->mu);
    if (empty) {
        pthread_rwlock_unlock(&e->barrier);
        st__resume(t);
        return 0;
    }
    st_clog_pos pos = clog_current(e->log);
    mt_memtable *fresh = mt_new(e->mt_pool);
    if (!fresh) { pthread_rwlock_unlock(&e->barrier); st__resume(t); return CS_ENOMEM; }
    pthread_mutex_lock(&t->mu);
    mt_memtable *old = t->mem;
    t->mem = fresh;
    mt_memtable **fl = t->flushing;
    int nfl = t->n_flushing;
    t->flushing = NULL; t->n_flushing = t->cap_flushing = 0;
    sst_reader **ssts = t->ssts;
    int n = t->n_ssts;
    t->ssts = NULL; t->n_ssts = t->cap_ssts = 0;
    t->replay_pos = pos;
    t->epoch++;
    t->src_version++;
    pthread_mutex_unlock(&t->mu);
    pthread_rwlock_unlock(&e->barrier);
    int rc = save_truncated(t, pos);
    /* TRUNCATE and DROP reclaim disk before they return, even on a request
     * loop (which otherwise hands teardown to the reaper). */
    bool fg = st__foreground();
    st_foreground_thread(false);
    size_t freed = atomic_load(&old->mem);
    mt_unref(old);
    for (int i = 0; i < nfl; i++) {
        size_t b = atomic_load(&fl[i]->mem);
        freed += b;
        atomic_fetch_sub(&e->mem_flushing, b);
        mt_unref(fl[i]);
    }
    cs_free(fl);
    atomic_fetch_sub(&e->mem_total, freed);
    for (int i = 0; i < n; i++) { sst__mark_obsolete(ssts[i]); sst_reader_unref(ssts[i]); }
    cs_free(ssts);
    st_foreground_thread(fg);
    st__resume(t);
    st__recycle(e);
    return rc;
}

int st_table_drop(st_table *t)
{
    if (!t) return CS_EINVAL;
    st_engine *e = t->e;
    if (e->cfg.snapshot_on_truncate) st__snapshot_auto(t, "dropped");
    pthread_mutex_lock(&t->mu);
    t->dropped = true;     /* no second snapshot from truncate */
    pthread_mutex_unlock(&t->mu);
    int rc = st_table_truncate(t);
    st__wait_idle(t);
    pthread_mutex_lock(&e->mu);
    for (int i = 0; i < e->n_tables; i++)
        if (e->tables[i] == t) { e->tables[i] = e->tables[--e->n_tables]; break; }
    pthread_mutex_unlock(&e->mu);
    size_t m = atomic_load(&t->mem->mem);
    atomic_fetch_sub(&e->mem_total, m);
    /* Keep the snapshots, auto_snapshot's and nodetool's alike (Cassandra
     * drops only the sstables: ColumnFamilyStore.invalidate); without any,
     * the whole directory goes. */
    char snaps[4400];
    snprintf(snaps, sizeof snaps, "%s/snapshots", t->dir);
    char **tags; int n_tags;
    bool keep = vfs_list(snaps, &tags, &n_tags) == 0;
    if (keep) {
        keep = n_tags > 0;
        vfs_list_free(tags, n_tags);
    }
    if (keep) {
        char **names; int n;
        if (vfs_list(t->dir, &names, &n) == 0) {
            for (int i = 0; i < n; i++) {
                if (!strcmp(names[i], "snapshots")) continue;
                char p[4400];
                snprintf(p, sizeof p, "%s/%s", t->dir, names[i]);
                vfs_unlink(p);
            }
            vfs_list_free(names, n);
        }
    } else {
        vfs_rmtree(t->dir);
    }
    pthread_mutex_lock(&t->mu);
    bool pinned = t->pins > 0;
    t->drop_done = pinned;
    pthread_mutex_unlock(&t->mu);
    if (!pinned) table_free(t);
    st__recycle(e);
    return rc;
}

void st_table_pin(st_table *t)
{
    pthread_mutex_lock(&t->mu);
    t->pins++;
    pthread_mutex_unlock(&t->mu);
}

void st_table_unpin(st_table *t)
{
    pthread_mutex_lock(&t->mu);
    bool last = --t->pins == 0 && t->drop_done;
    pthread_mutex_unlock(&t->mu);
    if (last) table_free(t);
}

/* ---------------------------------------------------------------- writes */

/* The memtable a record at pos applies to in t, referenced (the caller
 * unrefs it), or NULL: t dropped, or for replay, not wanted or already in
 * its sstables. */
static mt_memtable *apply_target(st_table *t, bool replay, st_clog_pos pos,
                                 bool (*want)(const uint8_t id[16], void *arg), void *arg)
{
    mt_memtable *m = NULL;
    pthread_mutex_lock(&t->mu);
    bool skip = replay && ((want && !want(t->id, arg)) || st__pos_cmp(pos, t->replay_pos) <= 0);
    if (!skip && !t->dropped) {
        m = t->mem;
        mt_ref(m);
        if (st__pos_cmp(pos, m->first_pos) < 0) m->first_pos = pos;
    }
    pthread_mutex_unlock(&t->mu);
    return m;
}

/* st_write's apply of mu (a record at pos) with the builder's side info
 * (storage_int.h st__mpart, st__mrow): each partition's table, key and
 * ops come from its entry, new rows' runs are copied; nothing is decoded
 * but the ops that reconcile into rows already there.  Builds the
 * memtables st__apply builds from the same bytes. */
static int apply_side(st_engine *e, const st_mutation *mu, st_clog_pos pos)
{
    cs_rd r;
    cs_rd_init(&r, mu->ops.p, mu->ops.len);
    for (uint32_t i = 0; i < mu->n_parts; i++) {
        const st__mpart *sp = &mu->parts[i];
        mt_memtable *m = apply_target(sp->t, false, pos, NULL, NULL);
        if (!m) continue;              /* dropped: the next entry says where its ops start */
        const uint8_t *pk = sp->pk_len ? mu->ops.p + sp->body - sp->pk_len : NULL;
        st__whint wh;                  /* the batch hint's token and descent, usually */
        int64_t token = st__hint_token(pk, sp->pk_len, &wh, NULL);
        size_t added = 0;
        r.pos = sp->body;
        int rc = mt_apply_side(m, token, pk, sp->pk_len, &r, &mu->rows[sp->row0], sp->n_rows, &wh, &added);
        atomic_fetch_add(&e->mem_total, added);
        mt_unref(m);
        if (rc) return rc;
    }
    return 0;
}

/* Apply a record's ops.  For replay, skip tables not wanted or whose
 * sstables already hold this record.  Not replaying, arg may be the
 * st_mutation the record came from: with its side info apply_side does
 * the work, else its tables are looked up there first (sparing the engine
 * mutex, which background threads also take). */
/* Does the op stream of a record read back from the commit log decode, in
 * the shape mt_apply takes (a PARTITION first, row-level ops only after a
 * ROW of their partition)?  Replay checks the whole record before applying
 * any of it, so that a record is applied all or nothing (storage.h). */
static bool ops_decode(const uint8_t *p, size_t n)
{
    cs_rd r;
    cs_rd_init(&r, p, n);
    st__op op;
    int k;
    bool part = false, row = false;
    while ((k = st__op_next(&r, &op)) == 1) {
        switch (op.kind) {
        case ST__OP_PARTITION: part = true; row = false; break;
        case ST__OP_PDEL: case ST__OP_RT: if (!part) return false; break;
        case ST__OP_ROW: if (!part) return false; row = true; break;
        default: if (!row) return false; break;
        }
    }
    return k == 0;
}

int st__apply(st_engine *e, const uint8_t *p, size_t n, bool replay, st_clog_pos pos,
              bool (*want)(const uint8_t id[16], void *arg), void *arg)
{
    const st_mutation *mu = replay ? NULL : arg;
    if (mu && !mu->side_off && mu->ops.p == p && mu->ops.len == n) return apply_side(e, mu, pos);
    if (replay && !ops_decode(p, n)) return CS_ECORRUPT;
    cs_rd r;
    cs_rd_init(&r, p, n);
    st__op op;
    int k;
    int rc = 0;
    while ((k = st__op_next(&r, &op)) == 1) {
        if (op.kind != ST__OP_PARTITION) { rc = CS_ECORRUPT; break; }
        st_table *t = NULL;
        if (mu) {
            /* st_write: the mutation names its tables; no engine lock needed. */
            for (int i = 0; i < mu->n_tables && !t; i++)
                if (!memcmp(mu->tables[i]->id, op.id, 16)) t = mu->tables[i];
        }
        if (!t) {
            pthread_mutex_lock(&e->mu);
            t = st__table_find_locked(e, op.id);
            pthread_mutex_unlock(&e->mu);
        }
        mt_memtable *m = t ? apply_target(t, replay, pos, want, arg) : NULL;
        if (m) {
            size_t added = 0;
            int64_t token = cs_murmur3_token(op.pk, op.pk_len);
            rc = mt_apply(m, token, op.pk, op.pk_len, &r, &added);
            atomic_fetch_add(&e->mem_total, added);
            mt_unref(m);
            if (replay) {
                clog_replay_mark(e->log, pos.segment, t->id);
                e->replay_applied++;
            }
            if (rc) break;
        } else {
            /* Skip this partition's ops. */
            while (cs_rd_left(&r) && r.p[r.pos] != ST__OP_PARTITION) {
                k = st__op_next(&r, &op);
                if (k <= 0) { rc = k < 0 ? k : 0; break; }
            }
            if (rc) break;
        }
    }
    if (k < 0) rc = k;
    return rc;
}

_Static_assert(ST_PREFETCH_KEYS <= ST__BTREE_PREFETCH_MAX, "a batch of write hints fits one descent");

void st_prefetch_writes(st_table *t, const uint8_t *const *pks, const uint32_t *lens, int n)
{
    int64_t tokens[ST_PREFETCH_KEYS];
    if (!t || (n = st__hint_hash(pks, lens, n, tokens)) == 0) return;
    st__whint wh[ST_PREFETCH_KEYS] = { { 0 } };
    pthread_mutex_lock(&t->mu);
    if (!t->dropped) mt_prefetch_writes(t->mem, tokens, pks, lens, n, wh);
    pthread_mutex_unlock(&t->mu);
    st__hint_tokens_put(pks, lens, tokens, wh, NULL, n);
}

int st_write(st_engine *e, const st_mutation *m, st_clog_pos *pos)
{
    if (!e || !m) return CS_EINVAL;
    if (m->err) return m->err;
    if (m->ops.err) return CS_ENOMEM;   /* the builder's buffer failed to grow */
    if (m->n_ops == 0) {
        if (pos) *pos = clog_current(e->log);
        return 0;
    }
    st__backpressure(e);
    uint8_t stack_ids[8][16];          /* most mutations touch one table */
    uint8_t (*ids)[16] = m->n_tables <= 8 ? stack_ids : cs_malloc(16 * (size_t)m->n_tables);
    if (!ids) return CS_ENOMEM;
    int n_ids = 0;
    for (int i = 0; i < m->n_tables; i++) {
        if (m->tables[i]->dropped) { if (ids != stack_ids) cs_free(ids); return CS_ENOTFOUND; }
        bool dup = false;
        for (int j = 0; j < n_ids && !dup; j++) dup = !memcmp(ids[j], m->tables[i]->id, 16);
        if (!dup) memcpy(ids[n_ids++], m->tables[i]->id, 16);
    }
    pthread_rwlock_rdlock(&e->barrier);
    st_clog_pos end;
    int rc = clog_append(e->log, m->ops.p, m->ops.len, (const uint8_t (*)[16])ids, n_ids, &end);
    if (!rc) rc = st__apply(e, m->ops.p, m->ops.len, false, end, NULL, (void *)m);
    pthread_rwlock_unlock(&e->barrier);
    if (ids != stack_ids) cs_free(ids);
    if (!rc && pos) *pos = end;
    if (!rc) st__maybe_flush(e);
    return rc;
}

bool st_sync_needed(st_engine *e) { return e && clog_sync_needed(e->log); }

int st_sync_wait(st_engine *e, struct uv_loop_s *loop, st_clog_pos pos, void (*cb)(void *arg), void *arg)
{
    if (!e) return CS_EINVAL;
    return clog_sync_wait(e->log, loop, pos, cb, arg);
}

int st_engine_detach_loop(st_engine *e, struct uv_loop_s *loop)
{
    if (!e || !loop) return CS_EINVAL;
    return clog_detach_loop(e->log, loop);
}

/* ---------------------------------------------------------------- replay */

typedef struct replay_ctx {
    st_engine *e;
    bool (*want)(const uint8_t id[16], void *arg);
    void *arg;
    uint64_t records, bad;
} replay_ctx;

static int replay_cb(const uint8_t *p, size_t n, st_clog_pos pos, void *arg)
{
    replay_ctx *c = arg;
    int rc = st__apply(c->e, p, n, true, pos, c->want, c->arg);
    c->records++;
    if (rc == CS_ECORRUPT) {
        c->bad++;
        CS_WARN("commitlog: undecodable record at segment %" PRIu64 " offset %" PRIu64 " skipped",
                pos.segment, pos.offset);
        return 0;
    }
    return rc;
}

int st_engine_replay(st_engine *e, bool (*want)(const uint8_t id[16], void *arg), void *arg)
{
    if (!e) return CS_EINVAL;
    replay_ctx c = { e, want, arg, 0, 0 };
    e->replaying = true;
    e->replay_applied = 0;
    int rc = clog_replay(e->log, replay_cb, &c);
    e->replaying = false;
    /* one line per pass: the server replays the system tables first, then
     * the user tables once their schema is loaded, each pass reading every
     * record and applying the partition updates of the tables open for it */
    CS_INFO("commitlog: read %" PRIu64 " records, replayed %" PRIu64 " partition updates into the %s", c.records,
            e->replay_applied, want ? "selected tables" : "open tables");
    st__maybe_flush(e);
    return rc;
}

int st_engine_replay_done(st_engine *e)
{
    if (!e) return CS_EINVAL;
    clog_replay_done(e->log);
    st__recycle(e);
    return 0;
}

/* Position before which every record of table id is in sstables (or the
 * table is gone), used by segment recycling. */
static st_clog_pos clean_pos(const uint8_t id[16], void *arg)
{
    st_engine *e = arg;
    st_clog_pos all = { UINT64_MAX, UINT64_MAX };
    st_table *t = st__table_find_locked(e, id);
    if (!t) return all;
    pthread_mutex_lock(&t->mu);
    st_clog_pos p = all;
    if (t->n_flushing > 0) p = t->flushing[0]->first_pos;
    else if (t->mem->first_pos.segment != UINT64_MAX) p = t->mem->first_pos;
    pthread_mutex_unlock(&t->mu);
    return p;
}

void st__recycle_segments(st_engine *e)
{
    pthread_rwlock_wrlock(&e->barrier);
    pthread_mutex_lock(&e->mu);
    clog_recycle(e->log, clean_pos, e);
    pthread_mutex_unlock(&e->mu);
    pthread_rwlock_unlock(&e->barrier);
}

void st__recycle(st_engine *e)
{
    st__recycle_segments(e);
    clog_reap(e->log);
}
