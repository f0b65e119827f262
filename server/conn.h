/*
 * conn.h: the native protocol server: listener and request loops
 * (server/loop.c) and client connections (server/conn.c).
 *
 * Threads: request_loops libuv loops (default 1).  Loop 0 accepts every
 * connection and hands it round-robin to a loop; a connection's reads,
 * frame decoding, replies and back-pressure all run on its loop's thread.
 * Every call into the (single-threaded) CQL layer runs under one execution
 * lock (srv.exec), taken once per connection read batch, so what runs in
 * parallel is the socket I/O and framing.  Per-loop state is touched only
 * by its thread; cross-loop work (accepted sockets, schema events, stop)
 * travels through each loop's inbox and uv_async handle.
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
    uint64_t write_timeouts;         /* writes answered WriteTimeout while waiting for their sync */
} srv_stats;

/* Add n to a counter owned by one loop thread; srv_stats_sum may read it
 * from another thread at the same time (relaxed atomics: plain moves). */
#define SRV_STAT_ADD(field, n) \
    __atomic_store_n(&(field), __atomic_load_n(&(field), __ATOMIC_RELAXED) + (n), __ATOMIC_RELAXED)

typedef struct srv srv;
typedef struct srv_msg srv_msg;

/*
 * One request loop: a libuv loop and the connections it owns.  Loop 0 is
 * the main loop (signals, admin endpoint, background timer, the listener);
 * loops 1..n-1 (request_loops > 1) each run on a thread of their own.  A
 * connection lives entirely on one loop: everything in this struct is
 * touched only by that loop's thread, except `stats` and `n_conns` (read
 * by other threads with relaxed atomics) and the inbox (under `mu`).
 */
typedef struct srv_loop {
    srv *server;                     /* owning server */
    int index;                       /* 0 = the main loop */
    uv_loop_t *loop;                 /* loop 0: borrowed; others: &own */
    const config *cfg;               /* borrowed, outlives srv */
    st_engine *eng;                  /* borrowed */
    cql_ctx *cql;                    /* borrowed: call only under the execution lock */
    bool stopping;                   /* closing: refuse new work */
    bool log_deferred;               /* st_defer_log_writes on: st_log_flush before replies */
    bool exec_held;                  /* this loop's thread holds srv.exec (conn.c) */
    conn *conns;                     /* doubly linked list of live connections */
    int n_conns;                     /* SRV_STAT_ADD only (read by the admin endpoint) */
    int lookups;                     /* peer host name lookups in flight (conn.c lookup_host);
                                        shutdown waits for them */
    srv_stats stats;                 /* SRV_STAT_ADD only */
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
    /* Polling (srv_loop_run): cs_mono_ns of the loop's last read with data
     * or reply batch written; how long after it the loop polls instead of
     * sleeping while it has replies waiting for a commit log sync
     * (commitlog_sync_wait_poll_us; 0: never); and how many such replies. */
    uint64_t active_ns, poll_ns;
    int sync_waits;
    /* Replies waiting for a sync that time out (write_request_timeout):
     * oldest first, and a timer for the earliest deadline among them
     * (conn.c wto_*); wto_at is the deadline it is set for, 0 = not set. */
    struct pending_reply *wto_head, *wto_tail;
    uv_timer_t wto_timer;
    bool wto_open;
    uint64_t wto_at;
    cs_buf spare_body;               /* a RESULT body buffer kept between requests */
    /* Cross-loop messages (loop.c): accepted sockets, schema events, stop. */
    uv_async_t wake;
    bool wake_open;                  /* under mu: uv_async_send allowed */
    bool stop_requested;             /* under mu */
    uv_mutex_t mu;
    srv_msg *inbox, *inbox_tail;     /* under mu, FIFO */
    uv_loop_t own;                   /* loops 1..n-1 */
    uv_thread_t thread;
    bool thread_started;
} srv_loop;

/* Server-wide state: the listener and the request loops. */
struct srv {
    uv_loop_t *loop;                 /* loop 0, borrowed */
    uv_tcp_t tcp;                    /* listening socket (on loop 0) */
    bool listening;                  /* tcp initialized and open */
    bool stopping;                   /* srv_close called: refuse new work */
    const config *cfg;               /* borrowed, outlives srv */
    st_engine *eng;                  /* borrowed */
    cql_ctx *cql;                    /* borrowed: call only under the execution lock */
    int port;                        /* bound port after srv_listen */
    char addr[64];                   /* bound numeric address after srv_listen */
    int n_loops;                     /* request_loops (>= 1) */
    srv_loop *loops;                 /* [n_loops]; loops[0] runs on `loop` */
    unsigned next_loop;              /* round-robin for accepted connections */
    _Atomic int n_conns;             /* live connections on every loop */
    /* nodetool disablebinary / drain: the listener closed and every client
     * connection with it; other loops read native_off when an accepted
     * socket reaches them. */
    _Atomic bool native_off;
    bool listener_closing;           /* uv_close of tcp not yet called back (loop 0) */
    bool drained;                    /* nodetool drain: never listens again */
    /* The execution lock: every call into cql/ (and so storage writes)
     * runs under it, so the CQL layer keeps its single-threaded design
     * while the loops read, decode and write in parallel.  An adaptive
     * mutex (a waiter spins briefly first): read batches are short. */
    uv_mutex_t exec;
};

/* Take / release the execution lock.  Any code outside the connection path
 * that calls cql/ or mutates what it reads (admin endpoint, background
 * timer) must hold it while the server runs. */
void srv_exec_lock(srv *s);
void srv_exec_unlock(srv *s);
/* nodetool disablebinary (drained false) and drain (true), on loop 0's
 * thread: close the listener and every client connection on every loop.
 * srv_native_start listens again on the same address and port: 0, CS_EAGAIN
 * while the old listener is still closing, CS_EINVAL once drained, or a
 * libuv error.  srv_native_running: the listener is open. */
void srv_native_stop(srv *s, bool drained);
int srv_native_start(srv *s);
bool srv_native_running(const srv *s);
/* Sum of every loop's counters (any thread). */
void srv_stats_sum(const srv *s, srv_stats *out);

/* Prepare s for n_loops request loops (no handles opened yet); loop 0 is
 * `loop`, owned by the calling thread.  Returns 0 or CS_ENOMEM. */
int srv_init(srv *s, uv_loop_t *loop, int n_loops, const config *cfg, st_engine *eng, cql_ctx *cql);
/* Start the threads of loops 1..n-1 (after srv_listen).  0 or a negative
 * libuv error (then srv_close and srv_join as usual). */
int srv_start(srv *s);

/*
 * One iteration of loop l (on its thread), as uv_run(UV_RUN_ONCE), except
 * while replies of the loop wait for a commit log sync (batch and group
 * modes) and the loop's last activity (a read with data or a batch of
 * replies written) is less than commitlog_sync_wait_poll_us old: then the
 * poll does not block (UV_RUN_NOWAIT), so the thread stays on its CPU
 * instead of sleeping in epoll_wait.  The sync's completion and the
 * clients' next writes, due within about one fsync, are then picked up
 * without the wake-up of a sleeping thread (an inter-processor interrupt,
 * and on a VM whose idle vCPUs halt, an exit to the hypervisor).  Durable
 * writes of 50 clients in batch mode: +7-10% here (docs/performance.md).
 * Only then: at a fixed request rate, polling took the CPU a saturated
 * client needed (p99 3-9 ms became 26-113 ms).  ScyllaDB polls the same
 * way (--idle-poll-time-us, always).  Returns uv_run's result (non-zero
 * while the loop has active handles).
 */
int srv_loop_run(srv_loop *l);
/* The calling thread takes on / gives up loop l's request duty (loop 0 on
 * main's thread, the others in loop.c): request arenas reuse chunks
 * (arena.h), commit log records are deferred to one write per reply batch
 * (conn.c flush), obsolete sstables are torn down off this thread
 * (storage reaper.c).  srv_loop_thread_end first writes the log tail and
 * releases eng's sync notifier of the thread's uv loop; it takes no
 * srv_loop, since main.c calls it after srv_join has freed them.  Request
 * arenas stay cached until the caller disables them (after its last arena
 * is gone). */
void srv_loop_thread_begin(srv_loop *l);
void srv_loop_thread_end(st_engine *eng, uv_loop_t *loop);
/* Bind and listen on addr:port (a numeric address or a host name; port 0
 * picks a free port).  s->addr and s->port receive the bound address.
 * Returns 0 or a negative libuv error. */
int srv_listen(srv *s, const char *addr, int port);
/* Stop accepting and close every connection, on every loop.  Handles close
 * asynchronously: run loop 0 afterwards until loops[0].n_conns is 0, then
 * srv_join. */
void srv_close(srv *s);
/* Wait for loops 1..n-1 to finish (after srv_close) and free them. */
void srv_join(srv *s);
/* Push EVENT SCHEMA_CHANGE (stream -1) to every connection registered for it:
 * at once on the calling loop, through the inbox on the others. */
void srv_push_schema_change(srv *s, const cql_schema_change *c);

/* ------------------------------------------------ internal to server/ (conn.c <-> loop.c) */

/* Create a connection on loop l for an accepted client: fd < 0 accepts
 * from the listener (loop 0 only), fd >= 0 adopts a socket loop 0 accepted.
 * It starts reading at once.  0 or a negative error (the client is then
 * closed). */
int conn__accept(srv_loop *l, int fd);
/* Close a connection (after pending output if `after_flush`). */
void conn__close(conn *c, bool after_flush);
/* Write an EVENT frame if the connection registered for schema events. */
void conn__push_schema_change(conn *c, const cql_schema_change *ch);
conn *conn__next(conn *c);
/* Write every queued reply now and close the flush handle (srv_close). */
void conn__srv_close(srv_loop *l);

#endif
