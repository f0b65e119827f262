/*
 * storage_bench.h: the engine adapter interface of the storage
 * micro-benchmark (cassette-storage-bench).  Owner: sbench.
 * bench/storage_bench.c runs the workloads; bench/storage_bench_kv.c holds
 * the cassette, LevelDB and RocksDB adapters.  Not part of `make all`.
 */
#ifndef CS_STORAGE_BENCH_H
#define CS_STORAGE_BENCH_H

#include <stdint.h>
#include <stdbool.h>

typedef struct sb_engine {
    const char *name;
    const char *compression;                 /* what the engine does by default */
    int (*open)(const char *dir, void **h);  /* fresh or existing directory */
    void (*close)(void *h);                  /* flushes memtables */
    /* one write of row (pk, ck) = v; ck may be empty */
    int (*put)(void *h, const uint8_t *pk, uint32_t pklen, const uint8_t *ck, uint32_t cklen,
               const uint8_t *v, uint32_t vlen);
    int (*batch_begin)(void *h);             /* puts until batch_end form one write */
    int (*batch_end)(void *h);
    int (*get)(void *h, const uint8_t *pk, uint32_t pklen);            /* 1 found, 0 not, <0 error */
    /* n entries in the engine's order from a random start: KV engines seek to
     * `start`, cassette starts at token `tok`.  Returns entries read. */
    int (*scan)(void *h, const uint8_t *start, uint32_t slen, int64_t tok, int n);
    /* rows lo..hi (inclusive, cklen bytes each) of partition pk, at most n */
    int (*slice)(void *h, const uint8_t *pk, uint32_t pklen, const uint8_t *lo,
                 const uint8_t *hi, uint32_t cklen, int n);
    int (*flush)(void *h);                   /* memtable to disk, wait */
    int (*compact)(void *h);                 /* flush + full compaction, wait */
    void (*settle)(void *h);                 /* wait for background compactions */
} sb_engine;

extern const sb_engine sb_cassette, sb_leveldb, sb_rocksdb;

/* Flush and compaction throughput of cassette (storage_bench_bg.c): data
 * sets kv (keys x vsize) and/or wide (wide_rows); stall: a paced writer
 * measures foreground write latency meanwhile.  0 or -1. */
int sb_run_bg(const char *root, long keys, long wide_rows, int vsize, const uint8_t *(*val_of)(long),
              uint64_t (*rnd)(void), bool kv, bool wide, bool stall);

#endif
