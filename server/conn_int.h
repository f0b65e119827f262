/*
 * conn_int.h: a connection's struct and the helpers shared by the files of
 * the connection code only: server/conn.c (framing, requests, replies,
 * lifecycle) and server/handshake.c (STARTUP, AUTH_RESPONSE, the refusal
 * of an unsupported first version).  The state machine and its invariants
 * are described at the top of conn.c.  Everything runs on the thread of
 * the request loop that owns the connection.  Owner: protocol.
 */
#ifndef CS_SERVER_CONN_INT_H
#define CS_SERVER_CONN_INT_H

#include "server/conn.h"
#include "server/msg.h"
#include "common/err.h"

enum { C_NEW, C_UNINIT, C_AUTH, C_READY, C_CLOSING };

#define READ_MIN_SPARE (16 * 1024)      /* free space offered to each read */
#define IDLE_BUF_KEEP (64 * 1024)       /* keep at most this much buffer when idle */
/* Stop reading above this much unsent output (invariant 9).  The fuzz
 * build lowers it (Makefile FUZZ_CFLAGS) so that fuzz_conn's small inputs
 * reach it. */
#ifndef CONN_MAX_PENDING_OUT
#define CONN_MAX_PENDING_OUT (16u << 20)
#endif
#define MAX_PENDING_OUT ((size_t)CONN_MAX_PENDING_OUT)
#define LINGER_MS 2000                  /* max wait for the peer's FIN after an error close */
#define SUPPORTED_TEXT "3/v3, 4/v4, 5/v5, 6/v6-beta"

struct conn {
    uv_tcp_t tcp;                    /* embedded handle; first member */
    srv_loop *s;                     /* owning loop (borrowed) */
    conn *prev, *next;               /* srv_loop.conns list */
    int state;                       /* C_* */
    uint8_t version;                 /* fixed by the first frame; 0 before */
    int compress;                    /* FRAME_COMP_* envelopes (v3/v4: lz4, snappy): negotiated and STARTUP answered */
    bool seg;                        /* v5 segment framing on, both directions (invariant 4) */
    bool seg_lz4;                    /* v5 segments are lz4-compressed */
    bool seg_switch;                 /* on_startup turned seg on: the rest of `in` is segments */
    bool closed;                     /* uv_close called */
    bool handle_closed;              /* close callback ran */
    bool close_after_flush;          /* close once `out` is written and no reply waits for a sync */
    bool lingering;                  /* FIN sent, draining input (begin_linger) */
    bool timer_open;                 /* `linger` initialized and not yet closed */
    uv_timer_t linger;               /* bounds the lingering close */
    uv_shutdown_t shut;              /* the FIN of a lingering close */
    bool writing;                    /* a uv_write is in flight */
    bool read_paused;                /* back-pressure: reading stopped (invariant 9) */
    size_t inflight;                 /* bytes of the uv_write in flight */
    int events;                      /* MSG_EV_* registered */
    bool listed;                     /* in system_views.clients (cql_session_opened) */
    int refs;                        /* pending sync replies, write in flight, pump on the stack,
                                        queued in srv->flushq */
    int sync_pending;                /* replies waiting for the commit log (invariant 7) */
    bool queued;                     /* in srv->flushq (invariant 6) */
    conn *qnext;                     /* next in srv->flushq */
    cs_buf in;                       /* unparsed input (envelopes) */
    cs_buf raw;                      /* v5: input segments not yet unframed */
    cs_buf seg_scratch;              /* v5: a decompressed segment payload */
    uint64_t large_left;             /* v5: bytes of a multi-segment envelope still to come */
    cs_buf large;                    /* v5: that envelope so far (not when large_direct) */
    bool large_direct;               /* v5: it is over max_frame_size: its bytes go to `in`, to be skipped */
    size_t out_wire;                 /* bytes at the front of `out` already in wire form (v5) */
    uint32_t id;                     /* names the connection in v5 framing errors (Netty's short channel id) */
    char seg_err[224];               /* v5: a bad segment's error, sent once the envelopes before it are answered */
    uint64_t discard;                /* bytes of an oversize frame still to skip (invariant 5) */
    uint64_t discard_total;          /* that frame's length, header included */
    int16_t discard_stream;          /* and its stream id */
    cs_buf out;                      /* replies not yet handed to the kernel */
    cs_arena arena;                  /* decoded requests of the current read */
    cql_session session;
    cql_client_info client;          /* session.client: options, host name, request count */
};

/* ---- conn.c, for handshake.c */

/* Take the execution lock for this read batch if not yet held (released
 * by pump after the batch; invariant 10). */
void conn__exec_enter(srv_loop *l);
/* Append an ERROR frame for e on `stream` (counted in the loop's stats). */
void conn__reply_error(conn *c, int16_t stream, const cs_error *e);
/* A ProtocolException with a printf message on `stream`. */
void conn__reply_protocol_error(conn *c, int16_t stream, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Append a reply frame of `opcode` with `body` (the connection's version
 * and compression). */
void conn__reply_frame(conn *c, int16_t stream, uint8_t opcode, const uint8_t *body, size_t len);

/* ---- handshake.c */

/* The first frame's version is not 3, 4 or 5 (invariant 2): ERROR 0x000A
 * on its stream, then close.  hdr: the frame's first 4 bytes. */
void conn__refuse_version(conn *c, const uint8_t *hdr);
/* STARTUP: CQL_VERSION and COMPRESSION checked as Cassandra's
 * StartupMessage, then READY or AUTHENTICATE (invariant 4). */
void conn__on_startup(conn *c, int16_t stream, const msg_request *m);
/* AUTH_RESPONSE: SASL PLAIN checked against the role store, then
 * AUTH_SUCCESS. */
void conn__on_auth_response(conn *c, int16_t stream, const msg_request *m);

#endif
