/*
 * storage_int.h: types shared among the storage module only (never included outside
 * storage/).  Owner: storage engineer.
 *
 * In-memory data model (see docs/data-model.md):
 *   st__row   one row: clustering, flags, row marker, row deletion, complex
 *             deletions, cells sorted by (col, path).  Used by memtables
 *             (owning their bytes) and by reads (bytes in a scan arena).
 *   st__rt    a range tombstone over clustering bounds.
 *   st__part  a partition as materialized for a read or a flush.
 */
#ifndef CS_STORAGE_INT_H
#define CS_STORAGE_INT_H

#include "storage/storage.h"
#include "common/arena.h"
#include "common/buf.h"
#include "common/err.h"

#include <pthread.h>
#include <stdatomic.h>

/* ---------------------------------------------------------------- model */

typedef struct st__cdel {          /* complex (collection) deletion */
    uint32_t col;
    st_deletion d;
} st__cdel;

typedef struct st__row {
    const uint8_t *ck; uint32_t ck_len;
    uint8_t flags;                 /* ST_ROW_STATIC */
    st_liveness lv;                /* ts INT64_MIN = none */
    st_deletion del;               /* ts INT64_MIN = none */
    st__cdel *cdels; int n_cdels, cap_cdels;
    st_cell *cells; int n_cells, cap_cells;
} st__row;

typedef struct st__rt {            /* range tombstone */
    const uint8_t *start; uint32_t start_len; bool start_incl;
    const uint8_t *end; uint32_t end_len; bool end_incl;
    st_deletion d;
} st__rt;

typedef struct st__part {          /* a materialized partition (arena-backed) */
    const uint8_t *pk; uint32_t pk_len;
    int64_t token;
    st_deletion pdel;
    st__rt *rts; int n_rts, cap_rts;
    st__row *stat;                 /* static row or NULL */
    st__row **rows; int n_rows, cap_rows;   /* sorted by ck */
} st__part;

/* Ordering helpers. */
int st__key_cmp(int64_t t1, const uint8_t *k1, uint32_t l1, int64_t t2, const uint8_t *k2, uint32_t l2);
int st__bytes_cmp(const uint8_t *a, uint32_t al, const uint8_t *b, uint32_t bl);
int st__cell_order(const st_cell *a, const st_cell *b);     /* by (col, path) */
/* Reconciliation (Cassandra Cells.reconcile): returns the winner (a or b). */
const st_cell *st__cell_reconcile(const st_cell *a, const st_cell *b);
bool st__del_supersedes(st_deletion a, st_deletion b);      /* a wins over b */
st_deletion st__del_max(st_deletion a, st_deletion b);
bool st__lv_supersedes(st_liveness a, st_liveness b);
/* Bound tests for clustering keys (see storage.h st_bound). */
bool st__after_start(const uint8_t *ck, uint32_t n, const uint8_t *s, uint32_t sl, bool incl);
bool st__before_end(const uint8_t *ck, uint32_t n, const uint8_t *e, uint32_t el, bool incl);
bool st__rt_covers(const st__rt *rt, const uint8_t *ck, uint32_t n);

/* Row helpers: merge src into dst, copying bytes with arena a (NULL = cs_malloc,
 * counting bytes into *mem).  Return 0 or CS_ENOMEM. */
int st__row_merge(st__row *dst, const st__row *src, cs_arena *a, size_t *mem);
st__row *st__row_copy(const st__row *src, cs_arena *a);
void st__row_free_heap(st__row *r);  /* for rows allocated with a == NULL */
int st__part_add_rt(st__part *p, const st__rt *rt, cs_arena *a);
int st__part_add_row(st__part *p, st__row *r, cs_arena *a);

/* ---------------------------------------------------------------- mutation */

/* Mutation op stream (also the commit log payload, docs/format/commitlog.md). */
enum {
    ST__OP_PARTITION = 1,  /* id[16] uvarint pk_len pk */
    ST__OP_PDEL = 2,       /* svarint ts, svarint ldt */
    ST__OP_RT = 3,         /* u8 flags(1 start incl, 2 end incl) uvarint sl s uvarint el e ts ldt */
    ST__OP_ROW = 4,        /* u8 flags uvarint ck_len ck */
    ST__OP_LIVENESS = 5,   /* svarint ts, svarint ttl, svarint ldt */
    ST__OP_ROWDEL = 6,     /* svarint ts, svarint ldt */
    ST__OP_CDEL = 7,       /* uvarint col, svarint ts, svarint ldt */
    ST__OP_CELL = 8,       /* uvarint col u8 flags svarint ts ttl ldt uvarint pl p uvarint vl v */
};

/* Side info: what the builder knows of the stream as it writes it, kept
 * beside the op stream for st_write's apply (memory only: the commit log
 * holds the stream alone, and replay decodes it; both must build the same
 * memtable).  One entry per PARTITION op and one per ROW op, in stream
 * order; offsets are into the op stream (side info is off past 4 GiB).  A
 * ROW op's "run" is the row-level ops (LIVENESS, ROWDEL, CDEL, CELL) right
 * after it, up to the next op of another kind: what a new packed row holds
 * (memtable.c row_insert_packed). */
typedef struct st__mrow {
    uint32_t run0;         /* offset of the run (the ROW op ends there, its clustering just before) */
    uint32_t ops_len;      /* bytes of the run */
    uint32_t n_cells;      /* CELL ops in it */
    uint32_t ck_len;       /* the ROW op's clustering bytes */
    int64_t min_ts;        /* smallest timestamp in the run (INT64_MAX: none; INT64_MIN ones skipped) */
    uint8_t flags;         /* the ROW op's flags (ST_ROW_*) */
} st__mrow;

typedef struct st__mpart {
    st_table *t;           /* the PARTITION op's table */
    uint32_t body;         /* offset just past the PARTITION op (its key ends there) */
    uint32_t pk_len;
    uint32_t row0, n_rows; /* its ROW ops' entries in rows[] */
} st__mpart;

struct st_mutation {
    cs_buf ops;            /* serialized op stream */
    st_table **tables; int n_tables, cap_tables;   /* tables referenced, in order */
    int err;               /* sticky */
    bool in_part, in_row;
    uint32_t n_ops;
    /* side info (above) */
    st__mpart *parts; uint32_t n_parts, cap_parts;
    st__mrow *rows; uint32_t n_rows, cap_rows;
    bool in_run;           /* row-level ops still extend the last ROW op's run */
    bool side_off;         /* side info incomplete (no memory): apply decodes the stream */
};

/* Decoded op, borrowed from the stream. */
typedef struct st__op {
    int kind;
    const uint8_t *id;
    const uint8_t *pk; uint32_t pk_len;
    st_deletion d;
    st__rt rt;
    const uint8_t *ck; uint32_t ck_len; uint8_t rflags;
    st_liveness lv;
    uint32_t col;
    st_cell cell;
} st__op;
/* Decode the next op; returns 1, 0 at end, CS_ECORRUPT on bad bytes.
 * Sets only kind and the fields of that kind (the rest keep what they
 * held). */
int st__op_next(cs_rd *r, st__op *op);

/* ---------------------------------------------------------------- btree */

typedef int (*st__btree_cmp)(const void *a, const void *b);
/* Order hint: hint(a) < hint(b) (unsigned) must imply cmp(a, b) < 0. */
typedef uint64_t (*st__btree_hint)(const void *item);
typedef struct st__bnode st__bnode;
typedef struct st__btree {
    st__bnode *root;
    st__btree_cmp cmp;
    st__btree_hint hint;   /* NULL: no hints */
    cs_arena *arena;       /* nodes come from here (freed with it) if set */
    size_t count;
    size_t mem;            /* bytes of nodes */
    int height;            /* levels (0 = empty) */
    st__bnode *spare[16];  /* preallocated so an insert never fails halfway */
    int n_spare;
} st__btree;
typedef struct st__biter { st__bnode *leaf; int idx; } st__biter;
typedef struct st__bpos { st__bnode *leaf; int idx; uint64_t kh; } st__bpos;   /* insert position */

void st__btree_init(st__btree *t, st__btree_cmp cmp);
void st__btree_init_hint(st__btree *t, st__btree_cmp cmp, st__btree_hint hint);
void st__btree_destroy(st__btree *t, void (*free_item)(void *));
/* Find an item equal to key (NULL if none). */
void *st__btree_get(const st__btree *t, const void *key);
/* Insert an item known to be absent.  0 or CS_ENOMEM. */
int st__btree_insert(st__btree *t, void *item);
/* Find an item equal to key; if absent, *pos gets where it belongs, for
 * st__btree_insert_at (valid until the tree next changes). */
void *st__btree_find(const st__btree *t, const void *key, st__bpos *pos);
/* A leaf a descent chose for a key, and its split count then. */
typedef struct st__bleaf { const st__bnode *leaf; uint32_t splits; } st__bleaf;
/* st__btree_find starting from the leaf in hint (from
 * st__btree_prefetch_many on this tree) when that leaf has not split
 * since, else descending.  hint NULL: st__btree_find. */
void *st__btree_find_from(const st__btree *t, const void *key, const st__bleaf *hint, st__bpos *pos);
/* Has hint's leaf not split since (so st__btree_find_from starts there)? */
bool st__bleaf_fresh(const st__bleaf *hint);
/* A hint: descend to the leaves of n keys together (at most
 * ST__BTREE_PREFETCH_MAX), prefetching their paths; changes nothing.  The
 * leaves chosen go to leaves[0, n) unless it is NULL (the tree empty:
 * untouched). */
#define ST__BTREE_PREFETCH_MAX 32
void st__btree_prefetch_many(const st__btree *t, const void *const *keys, int n, st__bleaf *leaves);
/* Insert an absent item at pos from st__btree_find (one descent).  0 or CS_ENOMEM. */
int st__btree_insert_at(st__btree *t, const st__bpos *pos, void *item);
/* Position at the first item >= key (or > key if strict); key NULL = first. */
void st__btree_seek(const st__btree *t, const void *key, bool strict, st__biter *it);
/* Position at the last item <= key (< if strict); key NULL = last. */
void st__btree_seek_rev(const st__btree *t, const void *key, bool strict, st__biter *it);
void *st__biter_get(const st__biter *it);   /* NULL at end */
void st__biter_next(st__biter *it);
void st__biter_prev(st__biter *it);
int st__btree_check(const st__btree *t);    /* 0 if ordered and balanced */

/* ---------------------------------------------------------------- memtable */

typedef struct mt_partition mt_partition;   /* private to memtable.c */

typedef struct mt_memtable {
    pthread_rwlock_t lock;
    st__btree parts;                     /* mt_partition* by (token, pk) */
    atomic_size_t mem;                   /* bytes accounted */
    _Atomic uint64_t cells, n_rows;
    atomic_int refs;
    _Atomic int64_t min_ts;              /* smallest timestamp written (for purge; INT64_MAX: none) */
    uint64_t created_ns;                 /* cs_mono_ns at mt_new (memtable_flush_period_in_ms) */
    st_clog_pos first_pos;               /* first commit log record applied */
    st_clog_pos flush_pos;               /* switch position: records < this are inside */
    bool flush_failed;                   /* set under the table lock; retried before newer flushes */
    cs_arena slab;                       /* partitions, rows, cells (under lock, writers) */
    bool has_rts;                        /* some partition holds heap range tombstones */
    cs_arena nodes;                      /* B+tree nodes, apart from the data (denser for the TLB) */
    /* Hash index of the partitions by token (memtable.c, "partition
     * index"): `idx`, and while it grows the table it replaces, `idx_old`,
     * moved over a few slots per insert from slot `idx_moved` on. */
    struct mt_ptab { uint64_t *slots; unsigned bits; size_t count; } idx, idx_old;
    size_t idx_moved;
    unsigned idx_hint_bits;              /* first table's size (2^bits), from the memtable before */
    bool idx_off;                        /* no index (a pointer past 48 bits, or no memory): the tree answers */
    cs_chunk_pool *pool;                 /* the engine's: slab and node chunks (a reference; may be NULL) */
    uint64_t id;                         /* unique in the process (a freed memtable's address is not) */
    uint64_t hinted_parts;               /* writes that took their partition from the batch hint (tests) */
} mt_memtable;

/* What a write hint found in memtable mt_id: the key's partition, if the
 * memtable's index held it (an overwrite: no descent), else where the
 * descent ended (st__btree_find_from's leaf). */
typedef struct st__whint { uint64_t mt_id; st__bleaf leaf; struct mt_partition *part; } st__whint;

/* What a read hint's lookup of a key in one sstable found
 * (sst_prefetch_lookups), for the read that follows: the reader's cache_id
 * (unique in the process) and the answer. */
enum { SST_HINT_NONE = 0,   /* not looked up (or the token is not unique): look up */
       SST_HINT_NEG,        /* bloom negative */
       SST_HINT_FP,         /* bloom positive, no such token */
       SST_HINT_AT };       /* the token's one index entry is pos */
typedef struct sst_lookup_hint { uint64_t rid; uint64_t pos; uint8_t state; } sst_lookup_hint;
/* A read hint's lookups of one key, in the sstables a point read probes
 * first (read.c PREFETCH_SSTS). */
#define ST__RHINT_SSTS 6
typedef struct st__rhint { sst_lookup_hint s[ST__RHINT_SSTS]; } st__rhint;

/* Teardown off request threads (reaper.c): st__reap queues fn(arg) for the
 * helper if the caller is a foreground thread (st_foreground_thread) and
 * returns true; false means the caller runs it.  Teardown that must be
 * done when a call returns (TRUNCATE and DROP reclaim disk at once) clears
 * the flag around it (st__foreground saves it).  Engines retain the helper
 * while open; release waits for the queue. */
bool st__reap(void (*fn)(void *), void *arg);
/* Start fn(NULL) on a thread named `name` that blocks every signal (the
 * reaper, the block cache's slab helper). */
bool st__helper_start(pthread_t *th, void *(*fn)(void *), const char *name);
void st__reap_drain(void);
uint64_t st__reaped(void);
bool st__foreground(void);
void st__reaper_retain(void);
void st__reaper_release(void);

/* Compaction throttle (compaction.c): pay for `bytes` read at the engine's
 * compaction_throughput, sleeping if ahead of it (in slices, returning early
 * once *stop says so). */
void st__compaction_throttle(st_engine *e, uint64_t bytes, bool (*stop)(void *arg), void *arg);

/* MT_CHUNK: the slab's and the nodes' largest chunk, the size pool holds
 * (the engine's, shared by its memtables so a flushed memtable's memory
 * serves the next ones; NULL: none). */
#define MT_CHUNK ((size_t)1 << 20)
mt_memtable *mt_new(cs_chunk_pool *pool);
/* Size a fresh memtable's partition index for about n partitions (the
 * count of the memtable it replaces), before it is shared. */
void mt_expect_partitions(mt_memtable *m, size_t n);
/* The pool of recycled big index tables (memtable.c): make sure it has a
 * zeroed, resident table for a memtable expecting this many partitions
 * (a flush job, for the memtable after the one it flushes); free those
 * unused for a minute (all: every one); the bytes it holds. */
void mt_index_pool_prepare(size_t partitions);
void mt_index_pool_trim(bool all);
size_t mt_index_pool_bytes(void);
void mt_ref(mt_memtable *m);
void mt_unref(mt_memtable *m);
/* Apply one partition's ops (op stream from r positioned after the
 * PARTITION op) until the next PARTITION op or end.  Caller holds no lock. */
int mt_apply(mt_memtable *m, int64_t token, const uint8_t *pk, uint32_t pk_len, cs_rd *r, size_t *added);
/* mt_apply with the builder's side info for the partition's ROW ops
 * (st__mpart: rows[row0 .. row0 + n_rows)), which spares decoding a new
 * row's ops, and the write hint's descent for the key (wh, may be NULL;
 * used if it was made on m), which spares descending again.  rows and wh
 * NULL: same as mt_apply.  Same memtable either way. */
int mt_apply_side(mt_memtable *m, int64_t token, const uint8_t *pk, uint32_t pk_len, cs_rd *r,
                  const st__mrow *rows, uint32_t n_rows, const st__whint *wh, size_t *added);
/* The tokens of a hint's keys (at most ST_PREFETCH_KEYS) into tokens:
 * how many, 0 for none or a NULL key with a length. */
int st__hint_hash(const uint8_t *const *pks, const uint32_t *lens, int n, int64_t *tokens);
/* The tokens of the keys just hinted (st_prefetch_reads/writes), kept on
 * this thread in order for the requests that follow (read.c), with each
 * key's write hint wh[i] or read hint rh[i] (either may be NULL). */
void st__hint_tokens_put(const uint8_t *const *pks, const uint32_t *lens, const int64_t *tokens,
                         const st__whint *wh, const st__rhint *rh, int n);
/* pk's token: from the hinted keys when it is the next one or the one
 * after, else hashed.  wh and rh (either may be NULL) get the write hint's
 * descent and the read hint's lookups kept for pk, else zeroes. */
int64_t st__hint_token(const uint8_t *pk, uint32_t len, st__whint *wh, st__rhint *rh);
/* sstable lookups this thread's point reads took from read hints (tests) */
uint64_t st__rhint_used(void);
/* Hints (skipped if a writer holds the lock).  For reads of n partitions
 * (at most ST__BTREE_PREFETCH_MAX): their index slots, then the
 * partitions the slots point to, then a one-row partition's row, its
 * mutable form, cells and values (or its packed bytes). */
void mt_prefetch_reads(mt_memtable *m, const int64_t *tokens, int n);
/* For writes of n partitions (at most ST__BTREE_PREFETCH_MAX): their
 * index slots and their paths in the partition tree, descended together. */
void mt_prefetch_writes(mt_memtable *m, const int64_t *tokens, const uint8_t *const *pks,
                        const uint32_t *lens, int n, st__whint *wh);
/* Copy the partition (rows within slices) into p using arena a.
 * Returns 1 found, 0 absent.  Takes the read lock. */
int mt_read_partition(mt_memtable *m, int64_t token, const uint8_t *pk, uint32_t pk_len,
                      const st_slice *slices, int n_slices, st__part *p, cs_arena *a);
/* A range scan's place in one memtable: the tree position of the key
 * mt_next_key last returned, good while the tree still holds `count`
 * partitions (a memtable's tree only ever changes by inserts). */
typedef struct mt_keycur {
    st__biter it;                        /* the last key returned */
    size_t count;                        /* parts.count when it was found */
    bool valid;                          /* it holds a position */
} mt_keycur;
/* Find the first partition key after (token, key) (strictly after if !incl);
 * key NULL = from the first key of token.  *out_key borrows the memtable's
 * bytes (valid while the caller holds a reference).  kc (may be NULL): a
 * scan's cursor; when it is valid and the tree unchanged, the key is found
 * from it without a descent: the cursor's key if it is after (token, key),
 * else the keys after it, in order (one step when the scan took the
 * cursor's key, as a merging scan does).  (token, key) must not go back.
 * Returns 1 found (with token <= end_token), 0 none. */
int mt_next_key(mt_memtable *m, int64_t token, const uint8_t *key, uint32_t klen, bool incl,
                int64_t end_token, int64_t *out_token, const uint8_t **out_key, uint32_t *out_len,
                mt_keycur *kc);
/* Does m hold partition (token, pk)?  Takes the read lock. */
bool mt_has_partition(mt_memtable *m, int64_t token, const uint8_t *pk, uint32_t pk_len);
int mt_check(mt_memtable *m);
size_t mt_partitions(mt_memtable *m);    /* partition count, under the read lock */
/* Where mt_foreach hands a memtable, partition by partition in order
 * (flush: engine_bg.c onto the sstable writer).  Each call returns 0 or an
 * error, which ends the walk with it.  Everything handed over borrows the
 * memtable's memory (valid while the memtable lives) except decoded rows
 * of packed ones (valid until the call returns). */
typedef struct mt_sink {
    /* A partition's key, deletion, range tombstones and static row (p's
     * rows empty); its rows and `end` follow. */
    int (*begin)(void *arg, const st__part *p);
    /* A row still packed: its clustering, ST_ROW_* flags and ops as they
     * were written (LIVENESS / ROWDEL / CDEL / CELL ops of the op stream,
     * n_cells of them CELL ops).  1 declines them: the row comes again
     * decoded through `rows`. */
    int (*packed)(void *arg, const uint8_t *ck, uint32_t ck_len, uint8_t flags,
                  const uint8_t *ops, uint32_t ops_len, uint32_t n_cells);
    int (*rows)(void *arg, st__row *const *rows, int n);    /* decoded rows, in order */
    int (*end)(void *arg);
    void *arg;
} mt_sink;
int mt_foreach(mt_memtable *m, const mt_sink *s);

/* ---------------------------------------------------------------- commit log */

typedef struct clog clog;
int clog_open(const st_config *cfg, clog **out);
void clog_close(clog *l);
/* Append a record; *end gets the end position.  Thread-safe. */
int clog_append(clog *l, const uint8_t *p, size_t n, const uint8_t (*ids)[16], int n_ids,
                st_clog_pos *end);
st_clog_pos clog_current(clog *l);
bool clog_sync_needed(clog *l);
int clog_sync_wait(clog *l, struct uv_loop_s *loop, st_clog_pos pos, void (*cb)(void *), void *arg);
int clog_sync_now(clog *l);
void clog_reap(clog *l);   /* unlink segments dropped by clog_recycle */
void clog_defer(bool on);   /* this thread's appends go to a tail written by clog_flush */
int clog_flush(clog *l);    /* write that tail (one pwrite) */
int clog_detach_loop(clog *l, struct uv_loop_s *loop);
/* Recycle segments all of whose dirty tables report clean past the segment.
 * clean(id, arg) returns the table's flushed position (records < it are durable elsewhere);
 * unknown tables: return {UINT64_MAX,..} to mean "forget". */
void clog_recycle(clog *l, st_clog_pos (*clean)(const uint8_t id[16], void *arg), void *arg);
uint64_t clog_total_bytes(clog *l);
/* Oldest segment's dirty table ids (for flushing when over total space). */
int clog_oldest_dirty(clog *l, uint8_t (*ids)[16], int max);
/* Replay: iterate records of segments older than the active one. */
typedef int (*clog_replay_cb)(const uint8_t *p, size_t n, st_clog_pos pos, void *arg);
int clog_replay(clog *l, clog_replay_cb cb, void *arg);
/* After replay: old segments become recyclable once their tables flush. */
void clog_replay_mark(clog *l, uint64_t seg, const uint8_t id[16]);
void clog_replay_done(clog *l);

static inline int st__pos_cmp(st_clog_pos a, st_clog_pos b)
{
    if (a.segment != b.segment) return a.segment < b.segment ? -1 : 1;
    if (a.offset != b.offset) return a.offset < b.offset ? -1 : 1;
    return 0;
}

/* ---------------------------------------------------------------- engine */

typedef struct sst_reader sst_reader;

struct st_table {
    st_engine *e;
    uint8_t id[16];
    char *ks, *name, *dir;
    st_table_opts opts;
    pthread_mutex_t floor_mu;            /* one TRUNCATED writer at a time (st__save_replay_floor) */
    pthread_mutex_t mu;                  /* protects the fields below */
    pthread_cond_t cv;                   /* flush/compaction completion */
    mt_memtable *mem;                    /* active memtable */
    mt_memtable **flushing; int n_flushing, cap_flushing;
    sst_reader **ssts; int n_ssts, cap_ssts;
    st_clog_pos replay_pos;              /* records < this are in sstables or truncated */
    st_clog_pos clean_pos;               /* flushed position for segment recycling */
    uint64_t next_gen;                   /* next sstable generation */
    bool dropped;
    bool compacting;
    int flush_jobs;                      /* queued + running */
    uint64_t bytes_flushed, bytes_compacted, compactions_done;
    uint64_t memtable_switches;          /* Cassandra's MemtableSwitchCount (under mu) */
    atomic_bool autocompaction_off;      /* nodetool disableautocompaction (not persisted) */
    uint64_t bloom_checks, bloom_fp;
    uint64_t compact_done_bytes, compact_total_bytes;
    int compact_running;
    int paused;                          /* >0: no new compactions (truncate/drop) */
    uint64_t epoch;                      /* bumped by truncate: stale flush/compaction output is discarded */
    bool want_compact;                   /* compaction check requested */
    uint64_t cmp_done, cmp_total;        /* running compaction progress */
    int cmp_op;                          /* ST_OP_* of the running compaction (0: none) */
    bool cmp_stop;                       /* nodetool stop: the running compaction ends (st_engine_stop_compactions) */
    int rewrite_op;                      /* ST_OP_* of a running st_table_rewrite (0: none) */
    bool rewrite_stop;                   /* nodetool stop: that rewrite ends before its next sstable */
    bool thresholds_set;                 /* nodetool setcompactionthreshold: ALTER leaves min/max_threshold */
    bool flushing_now;
    _Atomic uint64_t src_version;        /* bumped when ssts[], mem or flushing[] change (compaction's purge sources) */
    int64_t last_expired_check_ms;       /* TWCS: last look for fully expired sstables (expired_sstable_check_frequency) */
    uint64_t flush_recheck_ns;           /* memtable_flush_period_in_ms: a clean memtable is looked at again then */
    int pins;                            /* st_table_pin holders */
    bool drop_done;                      /* dropped while pinned: the last unpin frees */
};

struct st_engine {
    st_config cfg;
    char *data_dir, *clog_dir;
    clog *log;
    pthread_rwlock_t barrier;            /* writes: read lock; memtable switch: write lock */
    pthread_mutex_t mu;                  /* tables array, job queue */
    pthread_cond_t cv;
    st_table **tables; int n_tables, cap_tables;
    atomic_size_t mem_total;             /* all memtables (active + flushing) */
    atomic_size_t mem_flushing;          /* memtables being flushed */
    cs_chunk_pool *mt_pool;              /* memtable chunks (mt_new); NULL if it could not be made */
    _Atomic uint64_t cmp_rate;           /* compaction_throughput, bytes/s (0: unthrottled) */
    pthread_mutex_t cmp_rate_mu;
    uint64_t cmp_rate_next_ns;           /* when the reads paid so far are paid for (cs_mono_ns) */
    uint64_t mt_pool_trim_ns;            /* last cs_chunk_pool_trim (compaction thread) */
    bool replaying;
    uint64_t replay_applied;       /* partition updates a replay pass applied (its log line) */
    atomic_bool closing;                 /* st__bg_stop; read under t->mu by compactions */
    pthread_t threads[8]; int n_threads; /* [0] flushes, the others compact (n_threads changes under prio_mu) */
    atomic_int cmp_concurrent;           /* concurrent_compactors: compaction threads 1..this take work */
    struct st__job *jobs;                /* queue head */
    int64_t last_compaction_check_ms;
    /* Background thread priority (engine_bg.c, "priority"). */
    pthread_mutex_t prio_mu;             /* policy changes of threads[] */
    atomic_bool bg_idle_ok;              /* SCHED_IDLE can be left again (root, CAP_SYS_NICE or RLIMIT_NICE) */
    atomic_bool bg_idle[8];              /* threads[i] runs under SCHED_IDLE */
    atomic_int bg_urgent[2];             /* callers waiting on a flush [0] / a compaction [1] */
    atomic_uint_fast64_t bp_waits, bp_ns; /* writers held by st__backpressure, and for how long */
    atomic_uint_fast64_t bg_switch_ns;   /* when mem_flushing last rose from 0 */
    pthread_mutex_t rate_mu;             /* bg_base_* */
    uint64_t bg_base_ns;                 /* the writers' rate is measured from here (st__bg_mem_pressure) */
    size_t bg_base_active;               /* active memtable bytes then */
    atomic_uint_fast64_t bg_mark;        /* mem_total >> 20 at the last pressure estimate */
    /* Expired snapshot removal (snapshot.c). */
    pthread_t snap_thread;               /* "snapcleanup" */
    bool snap_running;                   /* snap_thread started */
    pthread_mutex_t snap_mu;             /* snap_stop */
    pthread_cond_t snap_cv;
    bool snap_stop;                      /* st__snapshot_cleanup_stop */
};

st_table *st__table_find_locked(st_engine *e, const uint8_t id[16]);
/* Apply an op stream (a whole record) to memtables.  replay: skip tables by position. */
int st__apply(st_engine *e, const uint8_t *p, size_t n, bool replay, st_clog_pos pos,
              bool (*want)(const uint8_t id[16], void *arg), void *arg);
/* Switch the table's memtable and queue (or run) a flush. wait: block until done. */
int st__flush_table(st_table *t, bool wait);
void st__maybe_flush(st_engine *e);
/* Background jobs (engine_bg.c). */
int st__bg_start(st_engine *e);
void st__bg_stop(st_engine *e);
void st__bg_kick(st_engine *e);             /* every table: look for compactions now */
void st__bg_kick_table(st_table *t);        /* t only (its want_compact, under the engine's mu) */
/* A caller starts (+1) / stops (-1) waiting synchronously for background
 * work: kind 0 a flush, 1 a compaction.  Raises those threads to normal
 * priority while anyone waits. */
void st__bg_urgent(st_engine *e, int kind, int delta);
/* Flush urgency from memory: over 3/4 of memtable_space, or writers would
 * reach back-pressure within 4 s at their rate since the last switch
 * (engine_bg.c BG_HORIZON_NS). */
bool st__bg_mem_pressure(st_engine *e);
void st__table_sst_unref_all(st_table *t);

#endif
