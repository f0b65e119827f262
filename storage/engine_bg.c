/*
 * engine_bg.c: background work: memtable flush, compaction scheduling,
 * back-pressure, commit log recycling triggers.  (Phase 1: flush is a no-op
 * placeholder until sstables land.)
 */
#include "storage/storage_int.h"
#include "storage/sstable_int.h"
#include "common/alloc.h"
#include "common/err.h"

#include <string.h>

int st__bg_start(st_engine *e) { (void)e; return 0; }
void st__bg_stop(st_engine *e) { (void)e; }
void st__bg_kick(st_engine *e) { (void)e; }
void st__wait_idle(st_table *t) { (void)t; }
void st__backpressure(st_engine *e) { (void)e; }
void st__maybe_flush(st_engine *e) { (void)e; }
int st__flush_table(st_table *t, bool wait) { (void)t; (void)wait; return 0; }
int st__table_load_sstables(st_table *t) { (void)t; return 0; }
void st__table_sst_unref_all(st_table *t) { (void)t; }

int st_table_flush(st_table *t) { return st__flush_table(t, true); }
int st_table_compact(st_table *t) { (void)t; return 0; }

int st_table_stats_get(st_table *t, st_table_stats *out)
{
    if (!t || !out) return CS_EINVAL;
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&t->mu);
    out->memtable_bytes = atomic_load(&t->mem->mem);
    out->memtable_cells = t->mem->cells;
    out->memtable_partitions = t->mem->parts.count;
    pthread_mutex_unlock(&t->mu);
    return 0;
}

int st_table_partition_histograms(st_table *t, st_histogram *bytes, st_histogram *cells)
{
    (void)t;
    if (bytes) memset(bytes, 0, sizeof *bytes);
    if (cells) memset(cells, 0, sizeof *cells);
    return 0;
}

int st_compactions_list(st_engine *e, st_compaction_info *out, int max) { (void)e; (void)out; (void)max; return 0; }

void sst_reader_ref(sst_reader *r) { (void)r; }
void sst_reader_unref(sst_reader *r) { (void)r; }
void sst__mark_obsolete(sst_reader *r) { (void)r; }
int sst_read_partition(sst_reader *r, int64_t token, const uint8_t *pk, uint32_t pk_len,
                       const st_slice *slices, int n_slices, st__part *p, cs_arena *a,
                       bool *bloom_negative) { return 0; }
int sst_next_key(sst_reader *r, int64_t token, const uint8_t *key, uint32_t klen, bool incl,
                 int64_t end_token, int64_t *out_token, const uint8_t **out_key, uint32_t *out_len,
                 cs_arena *a) { return 0; }
bool sst_may_contain_ck(sst_reader *r, const st_slice *slices, int n_slices) { return true; }
