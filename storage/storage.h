/*
 * storage.h: the LSM engine's interface to the CQL layer (and tools/bench).
 *
 * The engine knows partitions, rows, cells, timestamps, TTLs and tombstones,
 * and orders everything by bytes.  It knows no CQL types:
 *   - a partition key is the serialized partition key (Cassandra's form: the
 *     raw value for a single-column key; for a composite key each component
 *     as u16 length, bytes, 0x00).  Partitions are ordered by
 *     (Murmur3 token of those bytes, then unsigned memcmp of the bytes).
 *   - a clustering key is a byte-comparable encoding produced by cql/types
 *     (DESC components already inverted): rows are ordered by memcmp.
 *     A static row has the empty clustering and flag ST_ROW_STATIC.
 *   - a column is a u32 id chosen by the schema (a hash of its name, so a
 *     dropped and re-added column keeps its id, like Cassandra's by-name cells).
 *   - a cell of a non-frozen collection (complex column) has a non-empty
 *     `path` (byte-comparable list timeuuid / set element / map key); a simple
 *     cell has an empty path.
 *
 * Threads: the engine is called from server loop thread(s) for reads and
 * writes; flush and compaction run on the engine's own background threads.
 * All functions are thread-safe unless noted.  Writes to one table are
 * applied in order; a mutation group is visible to readers all or nothing.
 *
 * Reconciliation (Cassandra 4.1's Cells.reconcile): higher timestamp wins;
 * on a tie a tombstone or an expiring cell beats a plain one, a tombstone
 * beats an expiring cell, then the larger local_deletion_time; then the
 * greater value (unsigned memcmp) wins.
 * Expiring cells whose expiry (ldt_s) <= now read as tombstones.
 * Counter cells are plain cells with ST_CELL_COUNTER: the CQL layer writes the
 * new total (read-modify-write under a per-table lock) with a strictly
 * increasing timestamp, so replay and compaction never double-count.
 *
 * Durability: st_write() appends one commit log record per call (atomic on
 * replay) and applies it to memtables before returning.  In `periodic` mode it
 * may be acknowledged at once; in `batch` and `group` modes the caller must
 * wait for the returned position to be synced: st_sync_wait() registers a
 * callback run on the caller's libuv loop once the commit log is fsynced past
 * that position (group commit shares one fsync among waiters).
 */
#ifndef CS_STORAGE_H
#define CS_STORAGE_H

#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>

typedef struct st_engine st_engine;
typedef struct st_table st_table;
typedef struct st_mutation st_mutation;
typedef struct st_scan st_scan;
struct uv_loop_s;

/* ---------------------------------------------------------------- config */

enum { ST_SYNC_PERIODIC = 0, ST_SYNC_BATCH = 1, ST_SYNC_GROUP = 2 };

typedef struct st_config {
    const char *data_dir;            /* sstables: <data_dir>/<ks>/<table>-<idhex>/ */
    const char *commitlog_dir;       /* segments */
    int sync_mode;                   /* ST_SYNC_* */
    int sync_period_ms;              /* periodic: fsync every N ms (default 10000) */
    int sync_group_window_ms;        /* group: max wait to batch fsyncs (default 15) */
    size_t segment_size;             /* commitlog_segment_size (default 32 MiB) */
    size_t commitlog_total_space;    /* flush oldest dirty tables past this (default 8 GiB) */
    size_t memtable_space;           /* memtable_heap_space total, flush largest past it (default 256 MiB) */
    int compaction_threads;          /* concurrent_compactors (default 1) */
    bool snapshot_on_truncate;       /* auto_snapshot (default false) */
    bool auto_snapshot_has_ttl;      /* auto_snapshot_ttl is set (default false: never expire) */
    int64_t auto_snapshot_ttl_s;     /* auto_snapshot_ttl: the truncate/drop snapshots' TTL */
    int snapshot_cleanup_period_ms;  /* how often expired snapshots are removed (default 60000:
                                        Cassandra's cassandra.snapshot.ttl_cleanup_period_seconds) */
    size_t block_cache_size;         /* file_cache_size: process-wide block cache capacity,
                                        grown lazily as blocks are read (default 256 MiB;
                                        0 disables; CASSETTE_BLOCK_CACHE_MB overrides) */
    uint64_t compaction_throughput;  /* compaction_throughput, bytes/s of input read by all
                                        compactions together; 0 = unthrottled (the default
                                        here; the server's is Cassandra's 64 MiB/s) */
} st_config;

void st_config_defaults(st_config *c);

/* ---------------------------------------------------------------- engine */

/* Open the engine: create directories, open the commit log.  Does NOT replay;
 * see st_engine_replay.  *out owned by caller, release with st_engine_close. */
int st_engine_open(const st_config *cfg, st_engine **out);
/* The data directory the engine was opened on (its own copy). */
const char *st_engine_data_dir(const st_engine *e);
/* Replay the commit log into tables already opened with st_table_open whose
 * id passes `want` (NULL = all open tables).  Records for tables not open are
 * skipped (call again after opening more tables).  Records already flushed to
 * a table's sstables are skipped by commit log position.  A torn or corrupt
 * tail is logged (file, offset, bytes dropped) and skipped.  After the last
 * replay call, call st_engine_replay_done() so segments can be recycled and
 * new writes go to a fresh segment. */
int st_engine_replay(st_engine *e, bool (*want)(const uint8_t id[16], void *arg), void *arg);
int st_engine_replay_done(st_engine *e);
/* Flush all memtables (if flush_all), stop background threads, close files. */
void st_engine_close(st_engine *e, bool flush_all);

/* ---------------------------------------------------------------- tables */

enum { ST_COMPACT_STCS = 0, ST_COMPACT_TWCS = 1, ST_COMPACT_LCS = 2 };

typedef struct st_table_opts {
    int gc_grace_s;                  /* gc_grace_seconds (default 864000) */
    double bloom_fp_chance;          /* bloom_filter_fp_chance (default 0.01) */
    int compaction;                  /* ST_COMPACT_* */
    int min_threshold, max_threshold;/* STCS (4, 32) */
    int64_t twcs_window_s;           /* TWCS window (compaction_window_unit*size), default 1 day */
    int64_t twcs_expired_check_s;    /* TWCS expired_sstable_check_frequency_seconds (600) */
    int lcs_sstable_size_mb;         /* LCS sstable_size_in_mb (160) */
    int lcs_fanout;                  /* LCS fanout_size: level L holds fanout^L sstables' worth (10) */
    bool compaction_enabled;         /* 'enabled' option (true) */
    /* Size tiers (STCS, TWCS's newest window, LCS's L0): an sstable joins a
     * bucket whose average Data.db size it is within (low, high) times of,
     * or when both are under min_sstable_size (0.5, 1.5, 50 MiB). */
    double bucket_low, bucket_high;
    int64_t min_sstable_bytes;
    /* Single-sstable tombstone compactions (AbstractCompactionStrategy):
     * when no other compaction is due, an sstable whose estimated droppable
     * tombstone ratio exceeds tombstone_threshold (0.2), whose Data.db is
     * older than tombstone_interval_s (86400), and whose overlap with the
     * other sstables leaves enough of them droppable (skipped with
     * unchecked_tombstone, false) is compacted alone.  tombstone_compactions
     * false turns them off (TWCS unless one of the three options is set). */
    double tombstone_threshold;
    int64_t tombstone_interval_s;
    bool unchecked_tombstone;
    bool tombstone_compactions;
    int min_index_interval;          /* min_index_interval (128): the sampling of Cassandra's index summary */
    int flush_period_ms;             /* memtable_flush_period_in_ms: flush a non-empty memtable this old (0: never) */
} st_table_opts;

void st_table_opts_defaults(st_table_opts *o);

/* Open (or create) a table's storage: loads its sstables.  ks/name give the
 * directory <data>/<ks>/<name>-<idhex>.  Returns a handle owned by the engine
 * (valid until st_table_drop or st_engine_close). */
int st_table_open(st_engine *e, const uint8_t id[16], const char *ks, const char *name,
                  const st_table_opts *opts, st_table **out);
st_table *st_table_find(st_engine *e, const uint8_t id[16]);   /* NULL if not open */
/* ALTER TABLE WITH; min/max_threshold set by st_table_set_compaction_thresholds stay. */
int st_table_set_opts(st_table *t, const st_table_opts *opts);
/* TRUNCATE: discard memtables and sstables now (writes after it are kept). */
int st_table_truncate(st_table *t);
/* DROP: truncate, delete the table's files but its snapshots (auto_snapshot's
 * and nodetool's; the directory goes too when it has none), forget the
 * table; handle invalid after (unless pinned: see st_table_pin). */
int st_table_drop(st_table *t);
/* Flush memtable to an sstable now and wait for it (nodetool flush). */
int st_table_flush(st_table *t);
/* Major compaction of all sstables now and wait for it (nodetool compact).
 * Waits while a truncate or drop of t is in progress; on a dropped table
 * (pinned, see below) it does nothing and returns 0. */
int st_table_compact(st_table *t);
/* Pinning (additive; for work on another thread, e.g. the admin endpoint's
 * flush/compact on a worker thread): a pinned handle stays valid across
 * st_table_drop.  Pin on a thread that knows t is open (the thread that
 * would drop it); drop then does everything but free the handle, and the
 * last st_table_unpin frees it (on the unpinning thread).  On a dropped,
 * pinned table st_table_flush and st_table_compact return 0 at once
 * (nothing left to write), st_table_stats_get reports an empty table.
 * Unpin everything before st_engine_close. */
void st_table_pin(st_table *t);
void st_table_unpin(st_table *t);

/* ---------------------------------------------------------------- writes */

/* Cell flags. */
enum {
    ST_CELL_TOMBSTONE = 1,    /* deleted at ts; ldt_s = local deletion time */
    ST_CELL_EXPIRING = 2,     /* live until ldt_s (= write time + ttl_s) */
    ST_CELL_COUNTER = 4,      /* value is a big-endian int64 total */
};
/* Row flags. */
enum { ST_ROW_STATIC = 1 };

typedef struct st_cell {
    uint32_t col;             /* column id */
    uint8_t flags;            /* ST_CELL_* */
    int64_t ts_us;            /* write timestamp */
    int32_t ttl_s;            /* 0 unless expiring */
    int32_t ldt_s;            /* expiring: expiry time; tombstone: deletion time; else 0 */
    const uint8_t *path; uint32_t path_len;   /* complex cell path, borrowed */
    const uint8_t *val; uint32_t val_len;     /* value, borrowed */
} st_cell;

typedef struct st_deletion {  /* a tombstone: ts_us == INT64_MIN means none */
    int64_t ts_us;
    int32_t ldt_s;
} st_deletion;
#define ST_NO_DELETION ((st_deletion){ INT64_MIN, INT32_MAX })

typedef struct st_liveness {  /* the row marker INSERT writes; ts_us == INT64_MIN: none */
    int64_t ts_us;
    int32_t ttl_s;            /* 0 = not expiring */
    int32_t ldt_s;            /* expiry time when ttl_s > 0 */
} st_liveness;

/* A clustering bound for range tombstones and slices: a byte-comparable
 * clustering prefix, inclusive or exclusive.  len 0 with inclusive = unbounded. */
typedef struct st_bound {
    const uint8_t *key; uint32_t len;
    bool inclusive;
} st_bound;

/* Build a mutation group (one commit log record; may span partitions and
 * tables, for batches and index/view maintenance).  Everything passed is
 * copied.  Errors are sticky; st_write reports them. */
st_mutation *st_mutation_new(void);
void st_mutation_free(st_mutation *m);
/* Empty m for reuse (as if just made by st_mutation_new, its sticky error
 * cleared); keeps its buffers unless they grew large. */
void st_mutation_reset(st_mutation *m);
/* Start a partition update: all calls until the next st_mut_partition apply to it. */
void st_mut_partition(st_mutation *m, st_table *t, const uint8_t *pk, uint32_t pk_len);
void st_mut_partition_delete(st_mutation *m, st_deletion d);
void st_mut_range_delete(st_mutation *m, st_bound start, st_bound end, st_deletion d);
/* Start a row (flags ST_ROW_STATIC for the static row, then ck must be empty). */
void st_mut_row(st_mutation *m, const uint8_t *ck, uint32_t ck_len, uint8_t flags);
void st_mut_row_liveness(st_mutation *m, st_liveness l);
void st_mut_row_delete(st_mutation *m, st_deletion d);
/* Delete every cell of complex column `col` older than d (collection overwrite / delete). */
void st_mut_complex_delete(st_mutation *m, uint32_t col, st_deletion d);
void st_mut_cell(st_mutation *m, const st_cell *c);
bool st_mutation_empty(const st_mutation *m);
/* The cell that wins between two cells at the same path, by the rules
 * above (for callers overlaying a pending mutation on what they read). */
const st_cell *st_cell_reconcile(const st_cell *a, const st_cell *b);
/* Does a win over b?  A row marker (LivenessInfo.supersedes: the later
 * timestamp; on a tie the expiring one, then the later expiry) and a
 * deletion (the later timestamp, then the later local deletion time). */
bool st_liveness_supersedes(st_liveness a, st_liveness b);
bool st_deletion_supersedes(st_deletion a, st_deletion b);

/* Reading a mutation back (additive, for index/view maintenance in
 * cql/index_maint.c; implemented in storage/mutation_iter.c).  Ops come in
 * the order they were added.  *pos starts at 0; `end` bounds the walk (pass
 * st_mutation_len(m) taken before appending more).  Returns 1 with *op
 * filled (pointers borrowed from m: valid until m is modified), 0 at end,
 * <0 on error. */
enum { ST_MOP_PARTITION = 1, ST_MOP_PDEL, ST_MOP_RT, ST_MOP_ROW, ST_MOP_LIVENESS,
       ST_MOP_ROWDEL, ST_MOP_CDEL, ST_MOP_CELL };
typedef struct st_mut_op {
    int kind;                                  /* ST_MOP_* */
    const uint8_t *table_id;                   /* PARTITION */
    const uint8_t *pk; uint32_t pk_len;        /* PARTITION */
    st_deletion d;                             /* PDEL, RT, ROWDEL, CDEL */
    st_bound start, end;                       /* RT */
    const uint8_t *ck; uint32_t ck_len;        /* ROW */
    uint8_t row_flags;                         /* ROW */
    st_liveness lv;                            /* LIVENESS */
    uint32_t col;                              /* CDEL */
    st_cell cell;                              /* CELL */
} st_mut_op;
size_t st_mutation_len(const st_mutation *m);
int st_mutation_next_op(const st_mutation *m, size_t *pos, size_t end, st_mut_op *op);

typedef struct st_clog_pos { uint64_t segment; uint64_t offset; } st_clog_pos;

/* Append to the commit log and apply.  May block briefly for back-pressure
 * when memtables are over their cap.  *pos (may be NULL) receives the record's
 * end position for st_sync_wait.  Returns 0 or CS_E*. */
int st_write(st_engine *e, const st_mutation *m, st_clog_pos *pos);
/* True if the sync mode requires waiting before acknowledging. */
bool st_sync_needed(st_engine *e);
/* Deferred log writes for the calling thread (the server's request loop):
 * st_write then appends its commit log record to an in-memory tail, and
 * st_log_flush writes the whole tail with one system call.  The caller must
 * call st_log_flush before acknowledging any write (syncs, segment switches
 * and close also write the tail; in batch and group modes, where writes are
 * acknowledged after their sync, it returns at once).  Off by default. */
void st_defer_log_writes(bool on);
/* The calling thread serves requests (the server's request loops): when it
 * drops the last reference to an obsolete sstable or a flushed memtable,
 * the teardown (unmap, unlink, free: milliseconds for big ones) runs on a
 * helper thread instead (reaper.c).  Off by default; st_engine_close
 * waits for handed-off teardown, so nothing outlives the engine. */
void st_foreground_thread(bool on);
int st_log_flush(st_engine *e);
/* Call cb(arg) on `loop` (via uv_async) once the log is durable past pos.
 * Calls cb at once if already durable.  Must be called on loop's thread. */
int st_sync_wait(st_engine *e, struct uv_loop_s *loop, st_clog_pos pos,
                 void (*cb)(void *arg), void *arg);

/* Release the engine's notification handle on `loop` (one uv_async_t per
 * loop that ever called st_sync_wait): fsyncs the log, runs that loop's
 * pending st_sync_wait callbacks, and uv_closes the handle so the loop can
 * be closed.  Call on loop's thread before leaving the loop (e.g. at
 * shutdown, then run the loop once more for the close callback).  Without
 * it, st_engine_close closes the handle from the closing thread, which is
 * only safe once the loop no longer runs, and frees it only if the loop
 * runs again.  Returns 0 or the fsync error. */
int st_engine_detach_loop(st_engine *e, struct uv_loop_s *loop);

/* ---------------------------------------------------------------- reads */

/* Which rows of a partition to read. */
typedef struct st_slice { st_bound start, end; } st_slice;

/* What a single-partition read did with each sstable whose key range holds
 * the key (Cassandra's View.select for one key), for a traced query: set
 * st_read_spec.trace and the read fills it (cleared first; ignored by
 * multi-partition scans).  The sstables' order is the read's own. */
enum {
    ST_PROBE_SLICE,          /* min/max clustering miss the slices, not opened */
    ST_PROBE_BLOOM,          /* the bloom filter said absent */
    ST_PROBE_INDEX_MISS,     /* bloom positive, the partition index had no entry */
    ST_PROBE_FOUND,          /* the partition was read */
    ST_PROBE_COVERED,        /* not read: newer sources settled the row */
};
#define ST_TRACE_PROBES 32
typedef struct st_sst_probe {
    uint64_t gen;            /* the sstable's number, as in its file names */
    int64_t max_ts;          /* its newest timestamp (Cassandra orders reads by it) */
    uint8_t outcome;         /* ST_PROBE_* */
    bool slice_miss;         /* its min/max clustering miss the slices */
    bool tombstones;         /* it may hold tombstones */
    bool deleted;            /* FOUND: the partition has a partition deletion there */
    uint32_t index_entries;  /* FOUND: the partition's row index entries, 0 when it has none */
} st_sst_probe;
typedef struct st_read_trace {
    st_sst_probe probes[ST_TRACE_PROBES];
    int n;                   /* probes kept (the first ST_TRACE_PROBES) */
    int n_ssts;              /* sstables whose key range holds the key */
} st_read_trace;

typedef struct st_read_spec {
    /* Partition range, in ring order.  For a single-partition read set
     * pk/pk_len (others ignored).  Otherwise scan from (start_token, start_key)
     * — start_key NULL means from the first key of start_token — to end_token
     * inclusive; start_inclusive says whether the exact start key is included.
     * Full ring: start_token = INT64_MIN, end_token = INT64_MAX. */
    const uint8_t *pk; uint32_t pk_len;
    int64_t start_token; const uint8_t *start_key; uint32_t start_key_len;
    bool start_inclusive;
    int64_t end_token;
    /* Clustering slices within each partition, sorted and non-overlapping
     * (in forward order); n_slices 0 = all rows. */
    const st_slice *slices; int n_slices;
    bool reversed;            /* return rows in descending clustering order */
    bool include_static;      /* return the static row first */
    int32_t now_s;            /* for TTL expiry; 0 = now */
    bool with_tombstones;     /* return dead rows too (for tools); default false */
    /* Tombstone budget (paged reads): 0 = unlimited.  Once the scan's
     * stats.tombstones reaches it, the scan stops at a row boundary and
     * st_scan_next_partition / st_scan_next_row return ST_SCAN_BUDGET; the
     * rows scanned before that point have been returned, and
     * st_scan_budget_pos says where to resume. */
    uint64_t max_tombstones;
    /* Once the scan has produced a live clustering row, this budget
     * replaces max_tombstones (0 = keep max_tombstones): a caller can let
     * an empty page scan far but end a page holding rows early. */
    uint64_t max_tombstones_live;
    /* st_read_point of a partition without clustering columns whose caller
     * reads only the row marker and these simple (not multi-cell, not
     * counter) columns: ids, at most 64; n_cover 0 = off.  The memtables
     * are read, then the sstables newest first by max timestamp, and the
     * read stops once a live row marker and a cell of every listed column
     * are newer than everything in the sstables left (Cassandra's
     * timestamp-ordered read, SinglePartitionReadCommand
     * .queryMemtableAndSSTablesInTimestampOrder).  Other columns of the row
     * may then be missing from the result.  Ignored with slices or
     * with_tombstones. */
    const uint32_t *cover_cols; int n_cover;
    /* A traced single-partition read: what it did per sstable (NULL: off). */
    st_read_trace *trace;
} st_read_spec;

/* Returned by st_scan_next_partition / st_scan_next_row when the
 * tombstone budget (st_read_spec.max_tombstones) is exhausted. */
#define ST_SCAN_BUDGET 2

/* A row as returned: reconciled, tombstones applied, expired cells dropped.
 * All pointers borrowed until the next st_scan_* call. */
typedef struct st_row_view {
    const uint8_t *ck; uint32_t ck_len;
    uint8_t flags;            /* ST_ROW_STATIC */
    st_liveness liveness;     /* row marker, ts INT64_MIN if none live */
    const st_cell *cells;     /* live cells, sorted by (col, path) */
    int n_cells;
} st_row_view;

typedef struct st_partition_view {
    const uint8_t *pk; uint32_t pk_len;
    int64_t token;
    st_deletion deletion;     /* partition tombstone (informational) */
} st_partition_view;

typedef struct st_scan_stats {
    uint64_t tombstones;      /* tombstones scanned (cells, rows, ranges, partitions) */
    uint64_t rows;            /* live rows returned */
    uint64_t sstables_read;   /* sstables holding the partition, read (SSTablesPerReadHistogram) */
    uint64_t sstables_skipped;/* by bloom filter (or its false positive), min/max clustering or a settled row */
} st_scan_stats;

int st_scan_open(st_table *t, const st_read_spec *spec, st_scan **out);
/* Advance to the next partition having live data (or any, with_tombstones).
 * Returns 1 and fills *p, 0 at end, <0 on error (CS_ECORRUPT names the file in the log). */
int st_scan_next_partition(st_scan *s, st_partition_view *p);
/* Next live row of the current partition (static row first if requested).
 * Returns 1, 0 at end of partition, <0 on error. */
int st_scan_next_row(st_scan *s, st_row_view *r);
const st_scan_stats *st_scan_stats_get(const st_scan *s);
/* After ST_SCAN_BUDGET: the last position scanned, in output order.
 * (*token, *pk) is the partition; *ck is the last clustering key scanned in
 * it (resume strictly after it, or before it when reversed), or NULL when
 * the whole partition was scanned (resume with the next partition).
 * Pointers borrowed until st_scan_close.  Returns 0, or CS_EINVAL when the
 * budget was not hit. */
int st_scan_budget_pos(const st_scan *s, int64_t *token, const uint8_t **pk, uint32_t *pk_len,
                       const uint8_t **ck, uint32_t *ck_len);
/* Change the tombstone budget of an open scan (compared with the scan's
 * stats.tombstones; 0 = unlimited).  A budget already spent stops the scan
 * at the next row or partition that adds a tombstone. */
void st_scan_set_max_tombstones(st_scan *s, uint64_t max);
void st_scan_close(st_scan *s);

/* Point read (additive): the rows of one partition (spec->pk set) as a
 * single-partition scan would return them (st_scan_open + next_partition +
 * next_row: same merge, tombstones, TTLs, slices, order, stats), without a
 * scan object: everything it returns is allocated in the caller's arena a
 * and stays valid until a is destroyed; nothing else is allocated per read
 * besides block cache fills.  For bounded reads (a key/value lookup, a
 * slice): a wide partition read without slices is materialized whole, so
 * callers that stream or page, or that need a tombstone budget
 * (max_tombstones must be 0 here: CS_EINVAL otherwise), use st_scan.
 * Returns 1 with *out filled when the partition has rows to return (or
 * exists, with with_tombstones), 0 when not (out->stats still filled), <0
 * on error. */
struct cs_arena;
typedef struct st_point {
    st_partition_view part;   /* pk is a copy in the arena */
    st_row_view *rows;        /* static row first (include_static), then in (reversed) order */
    int n_rows;
    st_scan_stats stats;
} st_point;
int st_read_point(st_table *t, const st_read_spec *spec, struct cs_arena *a, st_point *out);

/* Hints, for a caller that knows which partitions it will read or write
 * next (the request loop sees the requests buffered on a connection
 * before it runs them): start loading the memory those lookups will touch
 * first, so their cache misses overlap other work and one another.
 * Change nothing; any table, any keys; at most ST_PREFETCH_KEYS are used.
 *
 * st_prefetch_reads: for point reads of partitions pks, in this order:
 * the memtable's index slots, the partitions and one-row partitions' rows
 * they point to, the newest sstables' bloom filter bytes and, for two
 * keys or more, their lookups in those sstables; the reads that follow on
 * this thread reuse the keys' tokens and those lookups' answers.
 * st_prefetch_writes: for writes: the index slots and the paths of the
 * memtable's partition tree to where they are or would go, descended
 * together (a write reads no sstable). */
#define ST_PREFETCH_KEYS 32
void st_prefetch_reads(st_table *t, const uint8_t *const *pks, const uint32_t *lens, int n);
void st_prefetch_writes(st_table *t, const uint8_t *const *pks, const uint32_t *lens, int n);

/* ---------------------------------------------------------------- stats */

typedef struct st_table_stats {
    uint64_t memtable_bytes, memtable_cells, memtable_partitions;
    uint64_t sstable_count, sstable_bytes;       /* live sstables, on-disk bytes */
    uint64_t partitions_estimate;
    uint64_t bytes_flushed, bytes_compacted;
    uint64_t pending_flushes, pending_compactions;
    uint64_t compactions_done;
    uint64_t max_partition_bytes, mean_partition_bytes, min_partition_bytes;
    uint64_t droppable_tombstones;               /* estimate (droppable_estimate rounded) */
    double droppable_estimate;                   /* tombstones past gc_grace_seconds, from the sstables'
                                                    drop-time histograms (TableMetrics.DroppableTombstoneRatio's
                                                    numerator) */
    double bloom_fp_ratio;                        /* observed */
    uint64_t bloom_false_positives, bloom_checks;
    int32_t sstables_per_level[8];               /* LCS */
    uint64_t sstables_bytes_per_level[8];         /* LCS: on-disk bytes */
    uint64_t data_bytes, uncompressed_bytes;     /* live Data.db bytes, and their data uncompressed */
    uint64_t cells_estimate;                     /* cells in live sstables (cell count histograms) */
    uint64_t sstable_rows;                       /* rows in live sstables (their statistics' row counts) */
    uint64_t memtable_switches;                  /* memtables switched for a flush since the table opened */
    uint64_t bloom_disk_bytes, bloom_mem_bytes;  /* Filter.db files; filters held in memory */
    uint64_t index_mem_bytes;                    /* partition index arrays held in memory */
    uint64_t chunk_offsets_bytes;                /* block offset tables held in memory */
} st_table_stats;
int st_table_stats_get(st_table *t, st_table_stats *out);
/* The live sstables whose partitions' tokens reach into (start, end]
 * (end INT64_MIN: to the end of the ring), as Cassandra's View.select of a
 * key range; a partition range read's trace counts them. */
int st_table_sstables_in_range(st_table *t, int64_t start, int64_t end);

/* Engine-wide figures for thread pool views (nodetool tpstats,
 * system_views.thread_pools): the flush and compaction threads, flushes
 * and compactions running, queued and done since open, and how often
 * writers waited for flushes (back-pressure). */
typedef struct st_engine_stats {
    int flush_threads, compaction_threads;
    int flushes_running, compactions_running;
    uint64_t flushes_queued, compactions_pending;    /* pending: the strategies' estimates */
    uint64_t flushes_done, compactions_done;
    uint64_t backpressure_waits;
} st_engine_stats;
void st_engine_stats_get(st_engine *e, st_engine_stats *out);

/* The process-wide block cache (file_cache_size; Cassandra's chunk cache):
 * capacity and bytes held, blocks held, lookups and hits since start. */
typedef struct st_block_cache_stats {
    uint64_t capacity_bytes, size_bytes, entries, hits, requests;
    uint64_t miss_ns, misses_timed;   /* time loading missed blocks, since start */
} st_block_cache_stats;
void st_block_cache_stats_get(st_block_cache_stats *out);

/* nodetool snapshot / listsnapshots / clearsnapshot: hard links of the
 * table's live sstables in <table dir>/snapshots/<tag>/ with a
 * manifest.json (flushed first unless skip_flush; CS_EEXIST if the tag is
 * taken, CS_EINVAL for a tag with '/' or a TTL outside [0, 2^31 - 1)).
 * opts NULL: flushed, created now, never expires.  The list is cs_malloc'd
 * (cs_free); true_size counts the files no live sstable shares any more;
 * created_ms and expires_ms come from the manifest (created_ms from the
 * snapshot directory's mtime if it has none or cannot be read: no
 * expires_ms then either).  Clear removes tag (NULL: every snapshot) and
 * returns how many it removed. */
typedef struct st_snapshot_opts {
    bool skip_flush;                 /* nodetool -sf: the memtables are not flushed first */
    bool has_ttl;                    /* nodetool --ttl: the snapshot expires */
    int64_t ttl_s;                   /* expires_at = created_at + ttl_s */
    int64_t created_ms;              /* created_at (0: now); one nodetool snapshot gives all its tables one */
} st_snapshot_opts;
typedef struct st_snapshot_info {
    char tag[256];
    uint64_t size_on_disk, true_size;
    uint64_t sstable_true_size;      /* true_size of its sstable files alone (no manifest.json) */
    int64_t created_ms;
    bool expiring;                   /* the manifest has an expires_at */
    int64_t expires_ms;              /* when expiring */
} st_snapshot_info;
int st_table_snapshot(st_table *t, const char *tag, const st_snapshot_opts *opts);
int st_table_snapshots(st_table *t, st_snapshot_info **out, int *n);
int st_table_clear_snapshots(st_table *t, const char *tag);
/* Every snapshot on disk, open tables' and dropped tables' alike (a
 * dropped table's directory keeps its snapshots): each
 * <data_dir>/<ks>/<table>-<32 hex id>/snapshots/<tag>/ whose keyspace and
 * table names are word characters, as Cassandra 4.1's SnapshotLoader finds
 * them.  The list is cs_malloc'd (cs_free), in no particular order; 0 or
 * CS_ENOMEM.  Thread-safe. */
typedef struct st_snapshot_entry {
    char ks[256], table[256];        /* from the directory names */
    uint8_t id[16];                  /* the table's id */
    st_snapshot_info info;
} st_snapshot_entry;
int st_engine_snapshots(st_engine *e, st_snapshot_entry **out, int *n);
/* nodetool clearsnapshot: remove the snapshot tag (NULL: every snapshot)
 * from every table directory of the keyspace directories named in
 * kss[0..n_ks) (none: all of them), dropped tables' included, as 4.1's
 * StorageService.clearSnapshot walks the directories on disk (a name with
 * no directory is no error).  A dropped table's directory left empty is
 * removed.  Returns how many snapshot directories went. */
int st_engine_clear_snapshots(st_engine *e, char *const *kss, int n_ks, const char *tag);
/* Remove every snapshot whose manifest's expires_at is before now_ms, in
 * any table directory under data_dir (dropped tables' too); returns how
 * many.  A snapshot whose manifest cannot be read is kept, with a warning.  The engine runs it itself when it opens and then every
 * snapshot_cleanup_period_ms on its own thread; tests call it with their
 * own clock.  Thread-safe. */
int st_engine_clear_expired_snapshots(st_engine *e, int64_t now_ms);

/* nodetool disable/enableautocompaction: background compactions of t stop
 * (the running one finishes) or resume; explicit compactions still run.
 * Not persisted: a restart starts with autocompaction on, as Cassandra. */
void st_table_set_autocompaction(st_table *t, bool on);
bool st_table_autocompaction(const st_table *t);

/* system.size_estimates / table_estimates (Cassandra's SizeEstimatesRecorder):
 * partitions in the token range (start, end] summed over t's sstables
 * (a partition in several sstables counts in each; memtables are not
 * counted, as in Cassandra), and the mean partition size (uncompressed
 * bytes) of all its sstables.  end INT64_MIN means the end of the ring. */
void st_table_size_estimate(st_table *t, int64_t start, int64_t end, uint64_t *partitions, uint64_t *mean_size);

/* nodetool get/setcompactionthroughput: the cap on the bytes all
 * compactions read per second (on disk: compressed), as Cassandra's
 * compaction rate limiter (CompactionManager.compactionRateLimiterAcquire):
 * a compaction pays for what it read every 64 partitions, with up to one
 * second of unused rate saved up.  0 = unthrottled.  Takes effect at once,
 * for running compactions too; not persisted. */
void st_engine_set_compaction_throughput(st_engine *e, uint64_t bytes_per_s);
uint64_t st_engine_compaction_throughput(st_engine *e);
/* The largest mutation st_write takes (half a commit log segment, as
 * Cassandra's max_mutation_size defaults); larger ones are CS_ETOOBIG. */
size_t st_engine_max_mutation_bytes(st_engine *e);

/* ---------------------------------------------------------------- maintenance (maintenance.c) */

/* Kinds of compaction, for nodetool stop and compactionstats (bits). */
enum { ST_OP_COMPACTION = 1, ST_OP_GC = 2, ST_OP_UPGRADE = 4, ST_OP_SCRUB = 8 };

/* nodetool garbagecollect / upgradesstables / scrub: rewrite t's live
 * sstables one at a time, each alone, into one new sstable at its level,
 * as Cassandra's single-sstable operations (CompactionManager
 * performGarbageCollection / performSSTableRewrite / performScrub).
 * Waits for t's running compaction, and no other compaction of t starts
 * until it returns; sstables flushed meanwhile are not rewritten.
 *   ST_OP_GC: oldest maximum timestamp first; a partition loses what the
 *     deletions in t's other sstables delete (gc_cells, -g CELL: also the
 *     cells a winning version there overwrites), then tombstones and
 *     expired cells are purged as a compaction purges them.
 *   ST_OP_UPGRADE: largest first; only sstables not at the current format
 *     version (Statistics.db's), unless all; nothing purged.
 *   ST_OP_SCRUB: every sstable, each partition read whole with its block
 *     checksums; one that cannot be read is left out (logged; counted in
 *     dropped), or fails the rewrite with fail_corrupt; nothing purged.
 * Returns 0 (also on a dropped, pinned t), CS_ECANCELED when nodetool
 * stop ended it (the sstables rewritten before stay so), or an error
 * (those rewritten before stay too). */
typedef struct st_rewrite_opts {
    int op;                          /* ST_OP_GC, ST_OP_UPGRADE or ST_OP_SCRUB */
    bool gc_cells;                   /* GC: cell granularity */
    bool all;                        /* UPGRADE: every sstable (-a) */
    int64_t max_created_ms;          /* UPGRADE: only sstables whose Data.db is older (mtime, ms; 0: any) */
    bool fail_corrupt;               /* SCRUB: an unreadable partition is an error */
} st_rewrite_opts;
typedef struct st_rewrite_result {
    int sstables;                    /* rewritten */
    uint64_t dropped;                /* SCRUB: unreadable partitions left out */
} st_rewrite_result;
int st_table_rewrite(st_table *t, const st_rewrite_opts *o, st_rewrite_result *res);

/* nodetool stop: the compactions and rewrites running now whose kind is
 * in ops (ST_OP_* bits), of the table table_id (NULL: of every table),
 * end at their next check (every 64 partitions, and within 0.1 s while
 * throttled), their output discarded; a background compaction is picked
 * again at its table's next compaction check (a flush, a threshold
 * change), as in Cassandra.  Returns how many were asked to stop. */
int st_engine_stop_compactions(st_engine *e, int ops, const uint8_t *table_id);

/* nodetool getsstables: the Data.db paths of t's live sstables whose
 * partition index holds pk (memtables are not looked at), by generation;
 * no bloom filter test and nothing counted.  As st_table_sstables. */
int st_table_sstables_for_key(st_table *t, const uint8_t *pk, uint32_t len, char ***paths, int *n);

/* nodetool import / refresh (Cassandra's SSTableImporter): load the
 * complete sstables (cs-<gen>-* with a TOC.txt) found in src into t, each
 * under a new generation of t, with its Statistics.db rewritten: level 0
 * unless keep_level, no ancestors (they name generations of another
 * table), no commit log position (replay of this node's log never skips
 * a record for them).  src NULL: the table's own directory, its sstables
 * the table does not have open (refresh; flushes and compactions of t
 * wait meanwhile, so none of their outputs is taken).  verify: sst_verify
 * each first, and one that fails leaves the whole directory as it was
 * (CS_ECORRUPT, logged naming the file).  copy: src keeps its files;
 * else they are moved (renamed; copied, then removed, across file
 * systems), and put back if the import fails part way.  *n_loaded: how
 * many were loaded.  CS_ENOTFOUND: src is not a directory. */
typedef struct st_import_opts {
    bool keep_level, verify, copy;
} st_import_opts;
int st_table_import(st_table *t, const char *src, const st_import_opts *o, int *n_loaded);

/* nodetool set/getcompactionthreshold: t's min_threshold and
 * max_threshold in use, set without the schema (Cassandra's
 * ColumnFamilyStore.setCompactionThresholds): they stay across ALTER
 * TABLE (st_table_set_opts) until the table is opened again; a
 * compaction check follows. */
void st_table_set_compaction_thresholds(st_table *t, int min_threshold, int max_threshold);
void st_table_compaction_thresholds(st_table *t, int *min_threshold, int *max_threshold);

/* nodetool get/setconcurrentcompactors: how many compactions may run at
 * once (the compaction threads that take work; more are started as
 * needed, up to ST_MAX_COMPACTION_THREADS).  n > 0; the value asked for
 * is what the getter returns, even past the cap. */
#define ST_MAX_COMPACTION_THREADS 7
void st_engine_set_concurrent_compactors(st_engine *e, int n);
int st_engine_concurrent_compactors(st_engine *e);

/* Partition size histogram (bytes and cells), for tablehistograms:
 * fills up to n buckets (Cassandra's EstimatedHistogram offsets). */
/* Summed over the table's sstables: n offsets (150 for partition sizes,
 * 118 for cells per partition, as Cassandra's), counts[0..n], counts[n]
 * the values past offsets[n - 1] (EstimatedHistogram's overflow bucket). */
typedef struct st_histogram { uint64_t offsets[150]; uint64_t counts[151]; int n; } st_histogram;
/* EstimatedHistogram's min() and max() of counts[0..n] over n offsets
 * (counts[n]: past the last): min is one past the offset below the first
 * bucket used (0 for bucket 0), max the last used bucket's offset or
 * INT64_MAX when counts[n] is used; 0 when all are empty.  cql/hist.c's
 * EstimatedHistogram views call these too. */
uint64_t st_hist_min(const uint64_t *counts, const uint64_t *off, int n);
/* EstimatedHistogram.newOffsets without zeros: the first n (>= 1)
 * offsets 1, 2, 3, ... each round(prev * 1.2) or prev + 1. */
void st_hist_offsets(uint64_t *off, int n);
uint64_t st_hist_max(const uint64_t *counts, const uint64_t *off, int n);
int st_table_partition_histograms(st_table *t, st_histogram *bytes, st_histogram *cells);

/* Compaction progress for compactionstats; returns count filled. */
typedef struct st_compaction_info {
    uint8_t table_id[16]; char ks[64]; char table[64];
    char kind[32];               /* Cassandra's OperationType: "Compaction", "Flush", "Remove deleted data",
                                    "Upgrade sstables", "Scrub" */
    uint64_t done_bytes, total_bytes;
} st_compaction_info;
int st_compactions_list(st_engine *e, st_compaction_info *out, int max);

/* ---------------------------------------------------------------- tools */

/* The table's directory (<data>/<ks>/<table>-<idhex>), borrowed while the
 * table is open. */
const char *st_table_dir(const st_table *t);
/* Paths of the table's live sstables' Data.db files (for sstable dump /
 * verify, see storage/sstable.h): *paths is a cs_malloc'd array of cs_malloc'd
 * strings; free with st_paths_free. */
int st_table_sstables(st_table *t, char ***paths, int *n);
void st_paths_free(char **paths, int n);

#endif
