/*
 * commitlog.h: offline commit log access for tools (cassette-tool commitlog
 * dump) and tests.  Owner: storage engineer.  Format: docs/format/commitlog.md.
 */
#ifndef CS_COMMITLOG_H
#define CS_COMMITLOG_H

#include <stdint.h>
#include <stdio.h>

#include "storage/storage.h"

/* Print every record of one segment file (position, size, and each op:
 * table id, keys in hex, deletions, cells) and a final line with the record
 * count and any torn/corrupt tail.  Returns 0 if the whole file is sound,
 * CS_ECORRUPT if a bad header or record was found (the good records before
 * it are printed), CS_EIO / CS_ENOTFOUND if it cannot be read. */
/* A directory path dumps every segment in it, in id order (first error wins). */
int clog_dump(const char *segment_path, FILE *out);

/* Sync counters of an open commit log (tests, the shutdown log line). */
typedef struct clog clog;
typedef struct clog_sync_stats {
    uint64_t syncs;                  /* fsync rounds of the sync thread */
    uint64_t waited;                 /* waiters those rounds completed */
    uint64_t gathers;                /* batch rounds that waited for writers to gather */
    uint64_t gather_timeouts;        /* ... and started at the bound, short of the target */
    uint64_t gather_ns;              /* time spent gathering */
    st_clog_pos synced;              /* durable up to here */
} clog_sync_stats;
void clog_get_sync_stats(clog *l, clog_sync_stats *out);
int clog_spare_count(clog *l);   /* spares listed for reuse (tests) */

#endif
