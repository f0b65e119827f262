/*
 * admin.h: a tiny HTTP/1.0 admin endpoint on 127.0.0.1 (config `admin_port`,
 * 0 disables), for cassette-tool, tests and Prometheus.  Owner:
 * server/admin.c.  Runs on the (main) request loop thread, like the CQL
 * layer it calls, so names are resolved against a consistent catalog; the
 * flush or major compaction itself runs on libuv's thread pool and the
 * reply is sent once it is done (nodetool flush returns with the data on
 * disk), so requests on every connection are served meanwhile.
 *
 *   POST /flush?ks=KS&table=T[,T2]   nodetool flush   (no ks: every keyspace)
 *   POST /compact?ks=KS&table=T      nodetool compact
 *   GET  /nodetool/VERB?args=a,b     the other verbs (server/nodetool.h); those that
 *                                    rewrite or read every sstable (garbagecollect,
 *                                    scrub, verify, upgradesstables) run on the
 *                                    thread pool too, answered once done
 *   GET  /metrics                    Prometheus text format
 *   GET  /status                     one JSON object
 */
#ifndef CS_SERVER_ADMIN_H
#define CS_SERVER_ADMIN_H

#include <stdatomic.h>
#include <stdbool.h>
#include <uv.h>

#include "server/conn.h"

typedef struct admin {
    uv_loop_t *loop;                 /* borrowed */
    srv *server;                     /* borrowed: stats, CQL context */
    uv_tcp_t tcp;
    bool listening;
    int port;                        /* bound port */
    uint64_t started_ms;
    struct admin_job *jobs;          /* flushes/compactions and nodetool jobs in flight (loop thread) */
    int n_jobs;
    int n_polls;                     /* nodetool verbs waiting on the loop's own work (NODETOOL_POLL) */
    atomic_bool closing;             /* admin_close ran (read by workers) */
    char test_hold[512];             /* CASSETTE_TEST_ADMIN_HOLD (admin.c) */
} admin;

void admin_init(admin *a, uv_loop_t *loop, srv *server);
/* 0 or a negative libuv error. */
int admin_listen(admin *a, const char *addr, int port);
/* Stop listening; cancel flush/compact jobs not started yet. */
void admin_close(admin *a);
/* True while flush/compact jobs or nodetool waits are in flight (after
 * admin_close, keep running the loop until false: a worker may still use
 * the engine, a wait ends at its next tick). */
bool admin_busy(const admin *a);

#endif
