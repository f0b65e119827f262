/*
 * conn.h: the native protocol server: listener (server/loop.c) and client
 * connections (server/conn.c).  Everything here runs on ONE libuv loop
 * thread, the request loop, which also calls the (single-threaded) CQL layer.
 * Nothing is thread-safe; nothing needs to be.
 */
#ifndef CS_SERVER_CONN_H
#define CS_SERVER_CONN_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "common/arena.h"
#include "common/buf.h"
#include "cql/exec.h"
#include "server/config.h"
#include "storage/storage.h"

typedef struct conn conn;

/* Latency histogram bucket bounds (µs) for CQL requests, Prometheus-style
 * cumulative on output; the last bucket is +Inf. */
#define SRV_LAT_BUCKETS 14
extern const uint32_t srv_lat_bounds_us[SRV_LAT_BUCKETS - 1];

/* Counters for the admin endpoint / metrics. */
typedef struct srv_stats {
    uint64_t by_opcode[17];          /* requests per opcode (index = opcode) */
    uint64_t lat_buckets[SRV_LAT_BUCKETS];   /* QUERY/PREPARE/EXECUTE/BATCH, until the reply is queued */
    uint64_t lat_sum_us, lat_count;
    uint64_t connections_total;      /* accepted since start */
    uint64_t connections_rejected;   /* over max_connections */
    uint64_t requests;               /* frames answered */
    uint64_t errors;                 /* ERROR frames sent */
    uint64_t protocol_errors;        /* ProtocolException among them */
    uint64_t bytes_in, bytes_out;
} srv_stats;

/* Server-wide state: the listener and every live connection. */
typedef struct srv {
    uv_loop_t *loop;                 /* borrowed */
    uv_tcp_t tcp;                    /* listening socket */
    bool listening;                  /* tcp initialized and open */
    bool stopping;                   /* srv_close called: refuse new work */
    const config *cfg;               /* borrowed, outlives srv */
    st_engine *eng;                  /* borrowed */
    cql_ctx *cql;                    /* borrowed */
    conn *conns;                     /* doubly linked list of live connections */
    int n_conns;
    int port;                        /* bound port after srv_listen */
    char addr[64];                   /* bound numeric address after srv_listen */
    srv_stats stats;
    bool log_deferred;               /* st_defer_log_writes on: st_log_flush before replies */
    /* Replies are handed to the kernel once per loop iteration (conn.c
     * flush): connections with output wait in `flushq` for the check
     * handle, which writes the commit log tail once and then each reply. */
    uv_check_t flush_check;
    uv_idle_t flush_idle;            /* active while flushq is not empty: the poll must not block */
    bool flush_check_open;           /* flush_check and flush_idle initialized and not closed */
    conn *flushq;                    /* connections waiting for on_flush_check */
    /* cs_mono_ns at the last read or the end of the last CQL request (0:
     * unknown): the start of the next request of the same read, so each
     * request costs one clock read (conn.c on_cql_request). */
    uint64_t clock_ns;
    cs_buf spare_body;               /* a RESULT body buffer kept between requests */
} srv;

/* Prepare s (no handles opened yet). */
void srv_init(srv *s, uv_loop_t *loop, const config *cfg, st_engine *eng, cql_ctx *cql);
/* Bind and listen on addr:port (a numeric address or a host name; port 0
 * picks a free port).  s->addr and s->port receive the bound address.
 * Returns 0 or a negative libuv error. */
int srv_listen(srv *s, const char *addr, int port);
/* Stop accepting and close every connection.  Handles close asynchronously:
 * run the loop afterwards until it has no more handles of ours. */
void srv_close(srv *s);
/* Push EVENT SCHEMA_CHANGE (stream -1) to every connection registered for it. */
void srv_push_schema_change(srv *s, const cql_schema_change *c);

/* ------------------------------------------------ internal to server/ (conn.c <-> loop.c) */

/* Create a connection for an accepted client; it starts reading at once.
 * 0 or a negative error (the client is then closed). */
int conn__accept(srv *s);
/* Close a connection (after pending output if `after_flush`). */
void conn__close(conn *c, bool after_flush);
/* Write an EVENT frame if the connection registered for schema events. */
void conn__push_schema_change(conn *c, const cql_schema_change *ch);
conn *conn__next(conn *c);
/* Write every queued reply now and close the flush handle (srv_close). */
void conn__srv_close(srv *s);

#endif
