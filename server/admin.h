/*
 * admin.h: a tiny HTTP/1.0 admin endpoint on 127.0.0.1 (config `admin_port`,
 * 0 disables), for cassette-tool, tests and Prometheus.  Owner:
 * server/admin.c.  Runs on the request loop thread, like the CQL layer it
 * calls, so flush/compact see a consistent catalog.
 *
 *   POST /flush?ks=KS&table=T[,T2]   nodetool flush   (no ks: every keyspace)
 *   POST /compact?ks=KS&table=T      nodetool compact
 *   GET  /metrics                    Prometheus text format
 *   GET  /status                     one JSON object
 */
#ifndef CS_SERVER_ADMIN_H
#define CS_SERVER_ADMIN_H

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
} admin;

void admin_init(admin *a, uv_loop_t *loop, srv *server);
/* 0 or a negative libuv error. */
int admin_listen(admin *a, const char *addr, int port);
void admin_close(admin *a);

#endif
