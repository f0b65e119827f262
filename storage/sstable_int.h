/*
 * sstable_int.h: sstable reader/writer internals shared among the storage module.
 * Owner: storage engineer.  The format is docs/format/sstable.md.
 */
#ifndef CS_SSTABLE_INT_H
#define CS_SSTABLE_INT_H

#include "storage/storage_int.h"
#include "storage/sstable.h"

/* Buckets of the partition size and cells-per-partition histograms
 * (MetadataCollector's defaults: up to 1.4e12 bytes and 4.1e9 cells). */
#define SST_SIZE_BUCKETS 150
#define SST_CELL_BUCKETS 118
/* The tombstone drop-time histogram (SSTable.TOMBSTONE_HISTOGRAM_BIN_SIZE,
 * TOMBSTONE_HISTOGRAM_TTL_ROUND_SECONDS; StreamingTombstoneHistogramBuilder). */
#define SST_DROP_BINS 100
#define SST_DROP_ROUND_S 60

/* Per-sstable statistics (Statistics.db). */
typedef struct sst_stats {
    int64_t min_ts, max_ts;              /* over all cells, markers, tombstones */
    int32_t max_ldt;                     /* latest local deletion/expiry time (INT32_MAX if any live non-expiring) */
    uint64_t partitions, rows, cells, tombstones;
    uint64_t droppable;                  /* tombstones (at write time) with ldt known */
    st_clog_pos clog_pos;                /* records < this are inside */
    int32_t level;                       /* LCS level */
    uint32_t min_ck_len, max_ck_len;
    uint8_t min_ck[256], max_ck[256];    /* truncated prefixes: min is a lower bound, max+ marks upper */
    bool ck_bounds;                      /* false: no row clustering seen */
    bool max_ck_truncated;
    /* Cassandra's EstimatedHistogram(150) and (118): buckets 0..n-1 count
     * values up to their offset (st_hist_offsets), bucket n values past
     * the last offset (overflow).  Statistics.db version 1 had 96 buckets
     * each and no overflow bucket: values past offset 95 counted in 95. */
    uint64_t size_hist[SST_SIZE_BUCKETS + 1], cell_hist[SST_CELL_BUCKETS + 1];
    uint64_t data_bytes;                 /* uncompressed */
    int64_t min_token, max_token;
    uint64_t ancestors[64]; int n_ancestors;   /* generations compacted into this one */
    /* Local deletion times of tombstones and TTL'd data (Cassandra's
     * TombstoneHistogram): points in seconds, rounded up to a multiple of
     * SST_DROP_ROUND_S, strictly increasing, at most SST_DROP_BINS (one
     * more while an insert merges the nearest two). */
    int32_t drop_pt[SST_DROP_BINS + 1]; uint64_t drop_cnt[SST_DROP_BINS + 1]; int n_drop;
} sst_stats;

/* Parsed row index of one wide partition, built on first use and kept for
 * the life of the reader (sst_reader.ri_slots). */
typedef struct sst_ri_run { const uint8_t *first, *last; uint32_t fl, ll; uint64_t off, len; } sst_ri_run;
typedef struct sst_ri {
    sst_ri_run *runs; uint32_t n;
    const uint8_t **bk; uint32_t *bl; int nb;   /* read windows: first clustering of every SST_WINDOW_RUNS-th run */
} sst_ri;

typedef struct sst_index_entry {
    int64_t token;
    const uint8_t *pk; uint32_t pk_len;
    uint32_t ri_slot;                    /* index into sst_reader.ri_slots (if n_ri) */
    uint64_t pos;                        /* logical (uncompressed) offset in data */
    uint64_t len;                        /* logical length of the partition */
    uint32_t n_ri;                       /* row index entries */
    const uint8_t *ri;                   /* row index bytes (inside idx buffer) */
    uint32_t ri_len;
    uint64_t hdr_len;                    /* bytes of pk, deletion, range tombstones, static row */
} sst_index_entry;

struct sst_reader {
    atomic_int refs;
    char *base;                          /* <dir>/<gen>- prefix, files are base+"Data.db" etc */
    char *dir;
    uint64_t gen;
    int data_fd;
    bool in_open_files;                  /* (dev, ino) of Data.db registered (sst__data_file_open) */
    uint64_t dev, ino;
    const uint8_t *data_map;             /* Data.db mapped read-only (NULL: read with pread) */
    size_t data_map_len;
    uint8_t *idx_buf; size_t idx_len;    /* Index.db contents (entries point into it) */
    sst_index_entry *idx; uint64_t n_idx;
    int64_t *toks;                       /* idx[i].token, dense: searched instead of idx */
    int64_t *sum; uint64_t n_sum;        /* summary: toks[k * SST_SUMMARY_EVERY], searched first */
    _Atomic(sst_ri *) *ri_slots; uint32_t n_ri_slots;   /* parsed row indexes, lazily */
    uint64_t *chunks; uint64_t n_chunks; /* compressed offsets of blocks, n+1 entries */
    uint32_t block_size;
    uint64_t logical;                    /* uncompressed data length */
    atomic_uint_least64_t bloom_fp;      /* bloom false positives observed */
    atomic_uint_least64_t blocks_read;   /* data blocks decompressed (tests) */
    uint64_t cache_id;                   /* block cache key, unique per open */
    atomic_uint_least64_t bloom_checks;  /* bloom filter lookups */
    uint8_t *bloom; uint64_t bloom_bits; uint32_t bloom_k;
    uint32_t stats_version;              /* Statistics.db's (1 or SST_STATS_VERSION) */
    sst_stats st;
    uint64_t file_bytes;                 /* all components */
    int64_t created_ms;                  /* Data.db's modification time at open (SSTableReader.getCreationTimeFor) */
    atomic_bool obsolete;                /* delete files on last unref */
    atomic_bool compacting;
};

/* Open the sstable with prefix base (".../<gen>-"). */
int sst_reader_open(const char *dir, uint64_t gen, sst_reader **out);
/* The same for an sstable just written (sst_writer_finish), taking over
 * idx (cs_malloc'd, idx_len bytes: Index.db's contents as written) instead
 * of reading Index.db; freed on failure too. */
int sst__reader_open_written(const char *dir, uint64_t gen, uint8_t *idx, size_t idx_len, uint64_t cache_id,
                             sst_reader **out);
void sst_reader_ref(sst_reader *r);
static inline uint64_t sst__reader_gen(const sst_reader *r) { return r->gen; }
void sst_reader_unref(sst_reader *r);
void sst__mark_obsolete(sst_reader *r);
void sst__delete_files(const char *dir, uint64_t gen);
/* Does a reader (live, or obsolete and not yet freed) have this Data.db
 * file open (the same file: device and inode)? */
bool sst__data_file_open(const char *path);
/* Partitions of r whose token is in (start, end]; end INT64_MIN: to the end
 * of the ring. */
uint64_t sst_keys_in_range(sst_reader *r, int64_t start, int64_t end);
/* Read index entry i restricted to slices into p; 1 or <0. */
int sst__read_entry(sst_reader *r, uint64_t i, const st_slice *slices, int n_slices, st__part *p, cs_arena *a);
/* Read a partition restricted to slices; 1 found, 0 absent, <0 error. */
int sst_read_partition(sst_reader *r, int64_t token, const uint8_t *pk, uint32_t pk_len,
                       const st_slice *slices, int n_slices, st__part *p, cs_arena *a,
                       bool *bloom_negative);
/* Per-partition lookup memo for windowed reads (zero-initialize). */
typedef struct sst_pctx {
    int state; bool neg; uint64_t idx; void *ri;
    bool unverified;                     /* found by token alone: the read compares the key */
    bool point;                          /* a point read (cache admission, partial decode) */
    bool acct;                           /* the read counted (and traced) this sstable (storage/read.c) */
} sst_pctx;
/* Look up (token, pk) once for a windowed read: fills ctx (as the first
 * sst_read_partition_ctx would) and returns the partition's window
 * boundaries (borrowed from the reader; *n = 0 if absent or not wide). */
int sst_partition_lookup(sst_reader *r, int64_t token, const uint8_t *pk, uint32_t pk_len, sst_pctx *ctx,
                         const uint8_t *const **keys, const uint32_t **lens, int *n);
/* The first and last clustering of a wide partition found by a lookup
 * (ctx state 2), borrowed from the reader: 1, 0 when not found or not
 * wide, <0 on a corrupt row index. */
int sst_partition_ck_range(sst_reader *r, const sst_pctx *ctx, const uint8_t **first, uint32_t *fl,
                           const uint8_t **last, uint32_t *ll);
int sst_read_partition_ctx(sst_reader *r, int64_t token, const uint8_t *pk, uint32_t pk_len,
                           const st_slice *slices, int n_slices, st__part *p, cs_arena *a,
                           bool *bloom_negative, sst_pctx *ctx, cs_arena *ca);
int sst__read_entry_ri(sst_reader *r, uint64_t i, const st_slice *slices, int n_slices, st__part *p, cs_arena *a,
                       void **ri_cache, cs_arena *ca);
/* The first partition key after (token, key) (strictly after if !incl; key
 * NULL: from the first key of token), as st__key order: 1 with its token
 * (<= end_token), key bytes (borrowed from the reader) and *pos its index
 * entry; 0 if none (*pos = where it would be).  resume: *pos holds the
 * last call's answer and (token, key) has not gone back since, so the
 * answer is found by stepping from there (one step when the caller took
 * that key) instead of a search. */
int sst_next_key(sst_reader *r, int64_t token, const uint8_t *key, uint32_t klen, bool incl,
                 int64_t end_token, int64_t *out_token, const uint8_t **out_key, uint32_t *out_len,
                 uint64_t *pos, bool resume);
/* sst_partition_lookup when the caller already knows, from sst_next_key,
 * that the partition is index entry pos (found) or absent (!found). */
int sst_partition_known(sst_reader *r, bool found, uint64_t pos, sst_pctx *ctx,
                        const uint8_t *const **keys, const uint32_t **lens, int *n);
/* Start loading the cached bytes of index entry pos's partition start. */
void sst_prefetch_partition(sst_reader *r, uint64_t pos);
/* Start loading the bloom filter bytes a lookup of key hash h
 * (sst__bloom_hash) tests. */
void sst_prefetch_bloom(sst_reader *r, uint64_t h);
/* Hints for point lookups of n keys (tokens; bloom hashes hs) in the
 * sstables rs, newest first (at most SST_PREFETCH_READERS and
 * SST_PREFETCH_LOOKUPS used), after sst_prefetch_bloom of each: the
 * summary, token stretch and index entry each lookup will touch, stage by
 * stage for all the keys, sstable by sstable until one holds the key's
 * token; then that entry's block cache slot and cached bytes.  Changes
 * nothing; what each lookup found goes to out[key][sstable] (out may be
 * NULL) for sst_partition_hinted. */
#define SST_PREFETCH_READERS 8
#define SST_PREFETCH_LOOKUPS 32
void sst_prefetch_lookups(sst_reader *const *rs, int n_rs, const int64_t *tokens, const uint64_t *hs, int n,
                          sst_lookup_hint (*out)[SST_PREFETCH_READERS]);
/* sst_partition_lookup with a hint's answer h for r (h->rid == r's
 * cache_id, h->state not SST_HINT_NONE): the same ctx, statistics and
 * result, without the bloom test and index search. */
int sst_partition_hinted(sst_reader *r, const sst_lookup_hint *h, sst_pctx *ctx,
                         const uint8_t *const **keys, const uint32_t **lens, int *n);
/* First i in the sorted a[0, n) with a[i] >= v (n if none): interpolation,
 * galloping, then bisection (sstable_reader.c; exposed for its test). */
uint64_t sst__sorted_lower(const int64_t *a, uint64_t n, int64_t v);
bool sst_may_contain_ck(sst_reader *r, const st_slice *slices, int n_slices);
/* The index entry of (token, pk), or r->n_idx when the sstable has none. */
uint64_t sst__idx_find(sst_reader *r, int64_t token, const uint8_t *pk, uint32_t pk_len);
int sst_partition_bounds(sst_reader *r, int64_t token, const uint8_t *pk, uint32_t pk_len, cs_arena *a,
                         const uint8_t ***keys, uint32_t **lens, int *n);

/* Writer: partitions must be added in (token, key) order. */
typedef struct sst_writer sst_writer;
int sst_writer_open(const char *dir, uint64_t gen, double fp_chance, uint64_t expected_keys,
                    sst_writer **out);
/* Put each block w writes from now on into the block cache too, while the
 * cache has free room (sst__cache_warm), under the id the finished
 * sstable's reader will have: a flush's or a compaction's output is read
 * soon after (recent writes), and would otherwise start cold. */
void sst_writer_warm_cache(sst_writer *w);
int sst_writer_add(sst_writer *w, const st__part *p);
/* The same in pieces, for partitions too big to materialize: begin (key,
 * deletion, range tombstones, static row of p), rows in order, end. */
int sst_writer_begin(sst_writer *w, const st__part *p);
int sst_writer_rows(sst_writer *w, st__row *const *rows, int n);
int sst_writer_end(sst_writer *w);
/* Append a row given as a memtable's packed ops (memtable.c, mt_row: its
 * LIVENESS / ROWDEL / CDEL / CELL ops as written, n_cells of them CELL
 * ops), encoded straight from their bytes when they have the shape one
 * write gives them (sstable_writer.c, "packed rows").  Returns 0, 1 if it
 * declines them (nothing written: decode the row and add it with
 * sst_writer_rows), or an error.  ck and ops are borrowed until
 * sst_writer_end. */
int sst_writer_row_ops(sst_writer *w, const uint8_t *ck, uint32_t ck_len, uint8_t flags,
                       const uint8_t *ops, uint32_t ops_len, uint32_t n_cells);
/* Finish: write index, filter, statistics, TOC; rename into place. */
int sst_writer_finish(sst_writer *w, st_clog_pos clog_pos, int level, sst_reader **out);
void sst_writer_set_ancestors(sst_writer *w, const uint64_t *gens, int n);
void sst_writer_abort(sst_writer *w);
uint64_t sst_writer_bytes(const sst_writer *w);

/* Block cache (block_cache.c). */
uint64_t sst__cache_new_id(void);
/* The first engine sizes the cache: cap bytes (CASSETTE_BLOCK_CACHE_MB
 * overrides; 0 disables); later engines share it. */
void st__cache_retain(size_t cap);
void st__cache_release(void);
/* Copy bytes [off, off+n) of cached block blk (whole length len) to dst. */
bool sst__cache_get(uint64_t rid, uint64_t blk, uint32_t len, uint32_t off, uint8_t *dst, uint32_t n);
void sst__cache_prefetch(uint64_t rid, uint64_t blk);              /* its slot, no lock */
void sst__cache_prefetch_bytes(uint64_t rid, uint64_t blk, uint32_t off, uint32_t n);   /* if cached */
void sst__cache_put(uint64_t rid, uint64_t blk, const uint8_t *src, uint32_t len);
uint8_t *sst__cache_slot(uint64_t rid, uint64_t blk, uint32_t len);   /* NULL: do not cache */
void sst__cache_insert(uint64_t rid, uint64_t blk, uint8_t *slot);   /* takes ownership */
/* A missed block took ns to load (read, check, decompress). */
void sst__cache_miss_time(uint64_t ns);
bool sst__cache_admit(uint64_t rid, uint64_t blk, uint32_t len);     /* a point read's miss: cache it? */
void sst__cache_slot_free(uint8_t *slot);
/* Cache block (rid, blk) as a copy of src's len bytes only if its shard has
 * room for it without evicting anything; it starts unmarked (first to go). */
void sst__cache_warm(uint64_t rid, uint64_t blk, const uint8_t *src, uint32_t len);
/* Drop every cached block of reader id rid (its sstable is gone): a scan
 * of the slot tables, for background threads. */
void sst__cache_forget(uint64_t rid);
/* Slabs made by the block cache's helper thread, asks that found none
 * ready, slabs ready now (block_cache.c "Slabs are faulted in"). */
void sst__cache_slab_stats(uint64_t *made, uint64_t *waited, int *spare);

/* Engine glue (engine_bg.c). */
int st__table_load_sstables(st_table *t);
/* Append r to t->ssts (caller holds t->mu); CS_ENOMEM. */
int st__push_sst(st_table *t, sst_reader *r);
/* Write dir/cs-<gen>-Statistics.db holding s (tmp name, fsync, rename):
 * the import's rewrite of an sstable's statistics. */
int sst__stats_write(const char *dir, uint64_t gen, const sst_stats *s);
/* TOC.txt's text: every component, the TOC last. */
#define SST_TOC_TEXT "Data.db\nIndex.db\nFilter.db\nStatistics.db\nTOC.txt\n"
/* Read (and check) dir/cs-<gen>-Statistics.db alone into *out. */
int sst__stats_read(const char *dir, uint64_t gen, sst_stats *out);
void st__wait_idle(st_table *t);
void st__resume(st_table *t);
/* Compaction (compaction_pick.c): run the table's strategy until nothing
 * is due; the compactions it estimates are due (caller holds t->mu); and
 * whether a look may find one that only time made due (a tombstone
 * compaction, an sstable TWCS drops whole; caller holds t->mu). */
void st__compact_background(st_table *t);
uint64_t st__compaction_estimate(st_table *t);
bool st__compaction_check_due(st_table *t, int64_t now_ms);
/* compaction.c: merge in[0..n) (referenced by the caller and marked
 * compacting) into sstables at `level`, of target_bytes each (0: one),
 * recording the inputs as their ancestors, and swap them in; 0 (also when
 * a truncate made it stale) or an error, with the inputs kept. */
int st__compact_run(st_table *t, sst_reader **in, int n, int level, uint64_t target_bytes);
void st__backpressure(st_engine *e);
void st__recycle(st_engine *e);
/* st__recycle without the unlinking (clog_reap), for a caller that unlinks
 * later at lower priority. */
void st__recycle_segments(st_engine *e);
int st__save_replay_floor(st_table *t, st_clog_pos pos);
/* auto_snapshot before TRUNCATE / DROP (snapshot.c): <ms>-<label>. */
int st__snapshot_auto(st_table *t, const char *label);
/* Sweep expired snapshots now, then start / stop the thread sweeping every
 * snapshot_cleanup_period_ms (snapshot.c); stop is a no-op if not started. */
int st__snapshot_cleanup_start(st_engine *e);
void st__snapshot_cleanup_stop(st_engine *e);
/* Merge materialized partitions from several sources into out (arena a). */
int st__part_merge(st__part **in, int n, st__part *out, cs_arena *a);

/* A single-sstable rewrite (maintenance.c, st_table_rewrite): what
 * differs from a compaction when compaction.c merges it. */
typedef struct st__rewrite {
    int op;                              /* ST_OP_GC, ST_OP_UPGRADE or ST_OP_SCRUB */
    bool cell_level;                     /* GC: cells newer ones elsewhere shadow go too (-g CELL) */
    bool fail_corrupt;                   /* scrub: an unreadable partition fails the rewrite */
    sst_reader **shadow; int n_shadow;   /* GC: the table's other sstables (referenced by the caller) */
    int64_t min_ts;                      /* GC: the input's smallest timestamp (older shadows cannot shadow) */
    int64_t mem_min_ts;                  /* GC: the memtables' smallest timestamp when the rewrite began */
    uint64_t dropped;                    /* scrub: unreadable partitions left out */
} st__rewrite;
/* Rewrite in alone into one sstable at its level and swap it in
 * (compaction.c): GC purges as a compaction does, after
 * st__rewrite_shadow; upgrade and scrub keep every tombstone; scrub reads
 * every partition whole and leaves out those it cannot read.  0,
 * CS_ECANCELED (nodetool stop: nothing swapped) or an error. */
int st__compact_rewrite(st_table *t, sst_reader *in, st__rewrite *rw);
/* GC (maintenance.c): drop from p, the rewritten sstable's partition,
 * what the deletions in rw's shadow sstables delete (and with cell_level
 * the cells a winning version there overwrites), reading p's key from
 * each (rows within sl; NULL: p's rows).  Nothing of theirs is copied in.
 * max_purgeable (may be NULL) gets the key's own purge limit, as
 * Cassandra's CompactionController.getPurgeEvaluator(key): the smallest
 * timestamp of the memtables (mem_min_ts) and of the shadow sstables
 * whose index holds the key, for the whole partition (so a window's call
 * passes NULL).  0 or an error; no-op when rw is not GC. */
int st__rewrite_shadow(const st__rewrite *rw, st__part *p, const st_slice *sl, cs_arena *a,
                       int64_t *max_purgeable);

#endif

/* ---------------------------------------------------------------- format */
#define SST_DATA_MAGIC 0x43534454u   /* "CSDT" */
#define SST_INDEX_MAGIC 0x43534958u  /* "CSIX" */
#define SST_FILTER_MAGIC 0x43534246u /* "CSBF" */
#define SST_STATS_MAGIC 0x43535354u  /* "CSST" */
#define SST_VERSION 1u
#define SST_STATS_VERSION 3u         /* Statistics.db: 2 = histograms of 150 and 118 buckets + overflow;
                                        3 = drop times in bins of SST_DROP_ROUND_S (were days) */
#define SST_FILE_HDR 16              /* magic u32, version u32, u32 param, u32 reserved */
#define SST_BLOCK_HDR 12             /* comp_len u32 (bit 31: stored raw), raw_len u32, crc u32 */
#define SST_BLOCK_SIZE 4096u         /* default uncompressed block size */
#define SST_ROW_INDEX_EVERY 4096u    /* row index entry every ~4 KiB of a wide partition */
#define SST_ROW_INDEX_MIN 65536u     /* partitions with fewer row bytes carry no row index */
#define SST_WINDOW_RUNS 16u          /* reads of a wide partition go ~16 runs (~64 KiB) at a time */
#define SST_RAW_FLAG 0x80000000u
#define SST_SUMMARY_EVERY 32u        /* in-memory index summary: one token per 32 index entries */

/* On-disk row flags (never renumber). */
enum { SST_ROW_PRESENT = 1, SST_ROW_HAS_LV = 2, SST_ROW_HAS_DEL = 4, SST_ROW_IS_STATIC = 8 };
/* On-disk partition flags. */
enum { SST_PART_HAS_DEL = 1, SST_PART_HAS_STATIC = 2 };

void sst__encode_row(cs_buf *b, const st__row *r);
/* Decode one row (after its flags byte, given in flags). */
int sst__decode_row(cs_rd *rd, uint8_t flags, st__row *r, cs_arena *a);
/* The drop-time histogram's estimate of its items with a local deletion
 * time at or before gc_before (TombstoneHistogram.sum: whole bins up to it,
 * interpolated across the bin pair around it). */
double sst__droppable_before(const sst_stats *s, int32_t gc_before);
/* StatsMetadata.getEstimatedDroppableTombstoneRatio: that estimate over
 * the cell count estimate (cell histogram mean() * count()); 0 without cells. */
double sst__droppable_ratio(const sst_stats *s, int32_t gc_before);
/* Add n items at histogram point pt (a multiple of SST_DROP_ROUND_S) to
 * s's bins, merging the two nearest once SST_DROP_BINS are exceeded
 * (StreamingTombstoneHistogramBuilder.DataHolder). */
void sst__drop_bins_add(sst_stats *s, int32_t pt, uint64_t n);
/* A local deletion time's histogram point: rounded up to SST_DROP_ROUND_S. */
int32_t sst__drop_point(int32_t ldt);
/* Count v in counts[0..n] (n offsets; counts[n]: past off[n - 1]). */
void sst__hist_add(uint64_t *counts, const uint64_t *off, int n, uint64_t v);
/* EstimatedHistogram's count() and mean() (ceil; the overflow bucket
 * left out) of counts[0..n]; min() and max() are st_hist_min/max. */
uint64_t sst__hist_count(const uint64_t *counts, int n);
uint64_t sst__hist_mean(const uint64_t *counts, const uint64_t *off, int n);
char *sst__path(const char *dir, uint64_t gen, const char *comp, bool tmp);
uint64_t sst__bloom_hash(const uint8_t *pk, uint32_t n);
bool sst__bloom_test(const uint8_t *bits, uint64_t nbits, uint32_t k, uint64_t h);
/* Start loading the bytes sst__bloom_test(bits, nbits, k, h) reads. */
void sst__bloom_prefetch(const uint8_t *bits, uint64_t nbits, uint32_t k, uint64_t h);
/* Read logical range [pos, pos+len) of the data file, verifying block CRCs. */
int sst__read_range(sst_reader *r, uint64_t pos, uint64_t len, cs_arena *a, const uint8_t **out);
/* Decode the partition header at rd: pk, flags, deletion, rts, static row. */
int sst__decode_part_header(cs_rd *rd, st__part *p, cs_arena *a);
