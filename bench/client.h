/*
 * client.h: cassette's own CQL native protocol client (v4), used by
 * cassette-bench and cassette-tool.  Two flavours:
 *   - bc_sync: a blocking connection for setup work (DDL, PREPARE, schema
 *     reads); one request at a time.
 *   - bc_async: libuv connections with many requests in flight (stream ids),
 *     writes coalesced per loop iteration, replies matched by stream id.
 *     Built for cassette-bench's hot path: no allocation per request, and
 *     replies are decoded only as far as a load generator needs (status,
 *     error, paging state, warnings; see bc_done_cb).
 * Framing comes from server/frame.h, so both sides share one codec.
 */
#ifndef CS_BENCH_CLIENT_H
#define CS_BENCH_CLIENT_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>
#include "common/buf.h"

/* A column/bind type as the [option] on the wire: id plus element ids. */
typedef struct bc_type { uint16_t id; uint16_t sub[2]; int n_sub; } bc_type;

typedef struct bc_result {
    int opcode;                 /* OP_RESULT or OP_ERROR */
    int err_code; char err_msg[512];
    int kind;                   /* RESULT kind */
    int n_cols; char **col_names; bc_type *col_types;
    int n_rows; const uint8_t **vals; int32_t *lens;   /* n_rows * n_cols, into body */
    uint8_t *paging_state; int32_t ps_len;             /* -1 if none */
    char **warnings; int n_warnings;
    uint8_t *body; size_t body_len;                    /* owned copy */
    /* PREPARED */
    uint8_t prep_id[64]; int prep_id_len;
    int n_binds; char **bind_names; bc_type *bind_types;
    uint64_t recv_ns;           /* async: cs_mono_ns() when the bytes holding the reply were read */
} bc_result;
void bc_result_destroy(bc_result *r);
/* Value at (row, col) as a C string copy for text columns (caller frees). */
char *bc_result_text(const bc_result *r, int row, int col);
int bc_result_col(const bc_result *r, const char *name);

typedef struct bc_sync { int fd; char err[640]; } bc_sync;
int bc_sync_connect(bc_sync *c, const char *host, int port, const char *user, const char *pass);
int bc_sync_query(bc_sync *c, const char *cql, int page_size, const uint8_t *ps, int32_t ps_len, bc_result *out);
int bc_sync_prepare(bc_sync *c, const char *cql, bc_result *out);
void bc_sync_close(bc_sync *c);

/* Skip the column specs of a ROWS result's metadata (flags and column
 * count already read, and the paging state): rd is left at the row count. */
void bc_skip_col_specs(cs_rd *r, uint32_t flags, int count);

/* Fill r->err_code and r->err_msg from an ERROR message body read by rd. */
void bc_decode_error(cs_rd *rd, bc_result *r);

/* Decode a RESULT/ERROR message body into r (copying the body). */
int bc_decode_response(int opcode, const uint8_t *msg, size_t len, const char **warnings, int n_warnings,
                       bc_result *r);

/* Message body encoders (requests). */
void bc_msg_query(cs_buf *b, const char *cql, uint16_t consistency, int page_size,
                  const uint8_t *ps, int32_t ps_len);
/* EXECUTE with values: vals[i]/lens[i] (len -1 = null). */
void bc_msg_execute(cs_buf *b, const uint8_t *id, int idlen, const uint8_t *const *vals,
                    const int32_t *lens, int n, uint16_t consistency, int page_size,
                    const uint8_t *ps, int32_t ps_len);

/* ---------------------------------------------------------------- async */
typedef struct bc_async bc_async;
/* Called once per request with the response, borrowed for the call.  Only
 * opcode, err_code/err_msg (errors), kind, paging_state/ps_len (ROWS; points
 * into the connection's input), n_rows (the ROWS count), warnings/n_warnings
 * and recv_ns are filled; rows and metadata are not decoded (n_cols = 0). */
typedef void (*bc_done_cb)(void *arg, const bc_result *resp);
typedef void (*bc_ready_cb)(bc_async *c, int status, void *arg);
int bc_async_open(uv_loop_t *loop, const char *host, int port, int max_inflight, const char *user,
                  const char *pass, bc_ready_cb ready, void *arg, bc_async **out);
/* Queue a request; opcode + message body.  Returns 0, or CS_EAGAIN if the
 * connection has max_inflight requests outstanding. */
int bc_async_send(bc_async *c, uint8_t opcode, const uint8_t *msg, size_t len, bc_done_cb cb, void *arg);
/* The same without a copy: bc_async_begin returns the connection's output
 * buffer (NULL if the connection is not ready or has no free stream); append
 * the message body (it starts at *body_off), then bc_async_commit (0, or an
 * error and the request is dropped) or bc_async_abort.  Nothing else may use
 * the connection in between. */
cs_buf *bc_async_begin(bc_async *c, size_t *body_off);
int bc_async_commit(bc_async *c, uint8_t opcode, bc_done_cb cb, void *arg);
void bc_async_abort(bc_async *c);
int bc_async_inflight(const bc_async *c);
bool bc_async_broken(const bc_async *c);
void bc_async_close(bc_async *c);

#endif
