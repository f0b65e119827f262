/*
 * sstable_int.h: sstable reader/writer internals shared among the storage module.
 * Owner: storage engineer.  The format is docs/format/sstable.md.
 */
#ifndef CS_SSTABLE_INT_H
#define CS_SSTABLE_INT_H

#include "storage/storage_int.h"
#include "storage/sstable.h"

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
    uint64_t size_hist[96], cell_hist[96];
    uint64_t data_bytes;                 /* uncompressed */
    int64_t min_token, max_token;
} sst_stats;

typedef struct sst_index_entry {
    int64_t token;
    const uint8_t *pk; uint32_t pk_len;
    uint64_t pos;                        /* logical (uncompressed) offset in data */
    uint64_t len;                        /* logical length of the partition */
    uint32_t n_ri;                       /* row index entries */
    const uint8_t *ri;                   /* row index bytes (inside idx buffer) */
    uint32_t ri_len;
} sst_index_entry;

struct sst_reader {
    atomic_int refs;
    char *base;                          /* <dir>/<gen>- prefix, files are base+"Data.db" etc */
    char *dir;
    uint64_t gen;
    int data_fd;
    uint8_t *idx_buf; size_t idx_len;    /* Index.db contents (entries point into it) */
    sst_index_entry *idx; uint64_t n_idx;
    uint64_t *chunks; uint64_t n_chunks; /* compressed offsets of blocks, n+1 entries */
    uint32_t block_size;
    uint8_t *bloom; uint64_t bloom_bits; uint32_t bloom_k;
    sst_stats st;
    uint64_t file_bytes;                 /* all components */
    atomic_bool obsolete;                /* delete files on last unref */
    atomic_bool compacting;
};

/* Open the sstable with prefix base (".../<gen>-"). */
int sst_reader_open(const char *dir, uint64_t gen, sst_reader **out);
void sst_reader_ref(sst_reader *r);
void sst_reader_unref(sst_reader *r);
void sst__mark_obsolete(sst_reader *r);
/* Read a partition restricted to slices; 1 found, 0 absent, <0 error. */
int sst_read_partition(sst_reader *r, int64_t token, const uint8_t *pk, uint32_t pk_len,
                       const st_slice *slices, int n_slices, st__part *p, cs_arena *a,
                       bool *bloom_negative);
int sst_next_key(sst_reader *r, int64_t token, const uint8_t *key, uint32_t klen, bool incl,
                 int64_t end_token, int64_t *out_token, const uint8_t **out_key, uint32_t *out_len,
                 cs_arena *a);
bool sst_may_contain_ck(sst_reader *r, const st_slice *slices, int n_slices);

/* Writer: partitions must be added in (token, key) order. */
typedef struct sst_writer sst_writer;
int sst_writer_open(const char *dir, uint64_t gen, double fp_chance, uint64_t expected_keys,
                    sst_writer **out);
int sst_writer_add(sst_writer *w, const st__part *p);
/* Finish: write index, filter, statistics, TOC; rename into place. */
int sst_writer_finish(sst_writer *w, st_clog_pos clog_pos, int level, sst_reader **out);
void sst_writer_abort(sst_writer *w);
uint64_t sst_writer_bytes(const sst_writer *w);

/* Engine glue (engine_bg.c). */
int st__table_load_sstables(st_table *t);
void st__wait_idle(st_table *t);
void st__backpressure(st_engine *e);
void st__recycle(st_engine *e);
/* Merge materialized partitions from several sources into out (arena a). */
int st__part_merge(st__part **in, int n, st__part *out, cs_arena *a);

#endif
