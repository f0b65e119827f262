/*
 * commitlog_int.h: the commit log's state, shared only by storage/commitlog.c
 * (appends, segments, spares, syncing) and storage/commitlog_replay.c
 * (replay at open, cassette-tool commitlog dump).  Format:
 * docs/format/commitlog.md; invariants: the comment atop commitlog.c.
 */
#ifndef CS_COMMITLOG_INT_H
#define CS_COMMITLOG_INT_H

#include "storage/storage_int.h"
#include "storage/commitlog.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#define CLOG_MAGIC 0x43534C47u     /* "CSLG" */
#define CLOG_VERSION 2u
#define CLOG_HDR 24                 /* magic u32, version u32, id u64, flags u32, crc u32 */
#define CLOG_HDR_V1 20              /* version 1: magic, version, id, crc; CRCs unseeded */
#define CLOG_F_REUSED 1u            /* header flag: the file held earlier segments */
#define CLOG_REC_HDR 8              /* len u32, crc(len) u32 */
#define CLOG_REC_TRL 4              /* crc(payload) u32 */
#define ALLOC_MIN_SEGMENT (1u << 20)  /* smaller segments (tests) get no prepared spare */
#define GATHER_MAX_NS 200000u       /* batch-mode gathering bound (gather_plan) */
#define GATHER_SCORE_MAX 8          /* gather while gather_score > GATHER_SCORE_MAX / 2 */

typedef struct clog_hdr { uint8_t b[CLOG_HDR]; } clog_hdr;
_Static_assert(sizeof(clog_hdr) == 24, "commit log segment header is 24 bytes");

typedef struct clog_seg {
    uint64_t id;
    unsigned ver;                    /* format version (its file name says it) */
    uint32_t seed;                   /* record length CRCs start here (header CRC; 0 in v1) */
    int fd;                          /* -1 once closed */
    char *path;
    uint64_t size;                   /* bytes written */
    uint64_t zeroed;                 /* file zero-filled up to here (prealloc_ahead) */
    uint8_t (*dirty)[16]; int n_dirty, cap_dirty;
    bool old;                        /* from before open */
} clog_seg;

typedef struct clog_spare {          /* a retired segment file kept for reuse */
    char *path;                      /* CommitLogSpare-<id>.log */
    uint64_t len;                    /* file length */
} clog_spare;

typedef struct clog_notifier clog_notifier;
typedef struct clog_waiter {
    st_clog_pos pos;
    void (*cb)(void *);
    void *arg;
    clog_notifier *n;
    struct clog_waiter *next;
} clog_waiter;

struct clog_notifier {
    uv_async_t async;                /* first: handle->data = this */
    uv_check_t check;                /* kicks the sync thread after an iteration's writes */
    uv_idle_t idle;                  /* active with check: the next poll does not block */
    bool check_on;
    int open_handles;                /* freed when all three handles have closed */
    clog *l;
    uv_loop_t *loop;
    pthread_mutex_t mu;
    clog_waiter *ready;              /* completed, to run on the loop */
    clog_notifier *next;
};

struct clog {
    st_config cfg;
    char *dir;
    pthread_mutex_t mu;              /* segments, write position */
    clog_seg **segs; int n_segs, cap_segs;   /* oldest first; last is active unless none */
    uint64_t next_id;
    st_clog_pos written;
    _Atomic uint64_t total;          /* bytes of all segments: changed under mu (total_add), read without it */
    pthread_mutex_t fsync_mu;        /* held while fsyncing; taken before mu */
    int *pend_fd; int n_pend, cap_pend;   /* full segments not yet fsynced (under mu) */
    bool dir_dirty;                  /* a segment was created since the last sync (under mu) */
    clog_seg **doomed; int n_doomed, cap_doomed;   /* recycled, kept or unlinked by clog_reap (under mu) */
    clog_spare *spares; int n_spares, cap_spares;  /* newest last (under mu) */
    uint64_t spare_bytes, spare_max;               /* their total length, and its bound */
    bool closing;                                  /* clog_close began: no more spares (under mu) */
    uint8_t *wbuf; size_t wlen, wcap;   /* deferred tail of the active segment (under mu) */
    uint64_t woff;                   /* file offset of wbuf[0] */
    int werr;                        /* sticky error of a deferred write */
    pthread_mutex_t smu;             /* sync state below */
    pthread_cond_t scv;
    st_clog_pos synced;
    bool requested, stop;
    bool kicked;                     /* a waiter asked for a sync now (not deferred) */
    uint64_t n_syncs, n_waited;      /* fsync rounds and waiters they completed (under smu) */
    uint64_t sync_ns;                /* time spent in do_sync (sync thread only) */
    int n_pending;                   /* waiters registered, not yet completed (under smu) */
    int gather_target;               /* batch: waiters to gather before the next fsync (under smu) */
    uint64_t gather_until;           /* ... gathering at most until then, cs_mono_ns (under smu) */
    uint64_t gather_from, gather_hit;   /* when that target was set, and reached (0: not yet) */
    int gather_score;                /* recent targets reached within the bound (see gather_plan) */
    uint64_t n_targets, n_hits;      /* targets set, and reached within their bound (under smu) */
    uint64_t n_gathers, n_gather_to, gather_ns;   /* gathering rounds, timeouts, time (under smu) */
    clog_waiter *waiters;
    clog_notifier *notifiers;
    pthread_t thr;
    bool thr_started;
    pthread_cond_t acv;              /* wakes alloc_main (with mu) */
    pthread_t athr;
    bool athr_started;
    bool want_spare, astop;          /* a spare is wanted; alloc_main must exit (under mu) */
    uint64_t asked_id;               /* active segment that last asked for one (under mu) */
    bool alloc_warned;               /* a failure was logged; quiet until a success (under mu) */
    bool replay_done;
};

/* A segment file found in a directory: its id and format version. */
typedef struct clog__seg_name { uint64_t id; unsigned ver; } clog__seg_name;

/* dir/CommitLog-<ver>-<id>.log, cs_malloc'd (NULL: out of memory). */
char *clog__seg_path(const char *dir, unsigned ver, uint64_t id);
/* The segments in dir in id order (*out cs_malloc'd); with spares non-NULL
 * also the spare files, kept as spares of that log up to its bound. */
int clog__seg_list(const char *dir, clog *spares, clog__seg_name **out, int *n_out);
/* Record that table id wrote to s (kept until every such table flushed). */
void clog__seg_mark(clog_seg *s, const uint8_t id[16]);

#endif
