/*
 * msg.h: native protocol messages (spec v4 §4), the body inside a frame.
 * Owner: server/msg.c.  Users: server/conn.c (decode requests, encode
 * responses) and any client (bench/, tools/, unit tests) for the other
 * direction.  Stateless: no server state, no allocation outside the arena
 * the caller passes.
 *
 * Decoding never trusts a length from the wire: every [short]/[int] length
 * is checked against the bytes left before use, and a malformed body yields
 * a cs_error with code CS_ERR_PROTOCOL (Cassandra's ProtocolException) so the
 * server answers with an ERROR frame on the request's stream.
 */
#ifndef CS_SERVER_MSG_H
#define CS_SERVER_MSG_H

#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>

#include "common/arena.h"
#include "common/buf.h"
#include "common/err.h"
#include "cql/exec.h"

/* QUERY/EXECUTE/BATCH flags (spec v4 §4.1.4; [byte] up to v4, [int] in v5). */
enum {
    MSG_QF_VALUES = 0x01, MSG_QF_SKIP_METADATA = 0x02, MSG_QF_PAGE_SIZE = 0x04,
    MSG_QF_PAGING_STATE = 0x08, MSG_QF_SERIAL_CONSISTENCY = 0x10,
    MSG_QF_DEFAULT_TIMESTAMP = 0x20, MSG_QF_NAMES = 0x40,
    MSG_QF_KEYSPACE = 0x80, MSG_QF_NOW_IN_SECONDS = 0x100,   /* v5 */
};

/* Events a connection may REGISTER for (bit mask). */
enum { MSG_EV_TOPOLOGY = 1, MSG_EV_STATUS = 2, MSG_EV_SCHEMA = 4 };

/* One entry of a [string map]; pointers borrow from the request body. */
typedef struct msg_kv {
    const char *k; size_t klen;
    const char *v; size_t vlen;
} msg_kv;

/*
 * A decoded request.  Every pointer borrows from the frame body or from the
 * arena given to msg_request_decode; both must outlive the use of the request.
 * Strings that the CQL layer needs NUL-terminated (keyspace) are arena copies.
 */
typedef struct msg_request {
    uint8_t opcode;
    uint8_t version;
    /* STARTUP */
    msg_kv *options; int n_options;
    /* QUERY, PREPARE */
    const char *query; size_t query_len;
    const char *prepare_keyspace;             /* v5 PREPARE keyspace flag; NULL if absent */
    /* EXECUTE */
    const uint8_t *id; size_t id_len;
    const uint8_t *result_metadata_id; size_t result_metadata_id_len;   /* v5 */
    /* QUERY, EXECUTE, BATCH */
    cql_params params;
    /* BATCH */
    uint8_t batch_type;
    cql_batch_item *items; int n_items;
    /* REGISTER */
    int events;                               /* MSG_EV_* mask */
    /* AUTH_RESPONSE */
    const uint8_t *token; int32_t token_len;  /* -1: null */
} msg_request;

/*
 * Decode the body of a request with `opcode` sent at protocol `version`.
 * Returns 0, or CS_EUSER with e filled (CS_ERR_PROTOCOL, Cassandra's wording
 * where it has one), or CS_ENOMEM.  Like Cassandra, bytes after the end of
 * a message are ignored.
 */
int msg_request_decode(uint8_t version, uint8_t opcode, const uint8_t *body, size_t len,
                       cs_arena *a, msg_request *out, cs_error *e);

/* A look at an EXECUTE body without decoding it (a prefetch hint for the
 * requests buffered after the current one): the statement id and the first
 * positional values (up to max; NULL values have len -1).  Returns the
 * number of values stored (0 if the request has none), or -1 when the
 * body is not a plain EXECUTE with positional values that this reads
 * without an arena (named values, short body...).  Never an error: the
 * request itself is decoded by msg_request_decode when its turn comes. */
int msg_peek_execute(uint8_t version, const uint8_t *body, size_t len, const uint8_t **id,
                     size_t *id_len, cql_value *vals, int max);

/* Look up a STARTUP option (any case: Cassandra upper-cases the keys; the
 * last of a repeated key). NULL if absent;
 * *vlen receives the length. */
const char *msg_startup_get(const msg_request *r, const char *key, size_t *vlen);

void msg_params_init(cql_params *p);   /* all-absent defaults (consistency ONE) */

/* ------------------------------------------------ response bodies (server side) */

/* ERROR body: [int] code, [string] message, then the code's extra fields (spec v4 §9). */
void msg_put_error(cs_buf *b, uint8_t version, const cs_error *e);
/* SUPPORTED: [string multimap] CQL_VERSION, COMPRESSION, PROTOCOL_VERSIONS;
 * COMPRESSION lists snappy (before lz4) only if `snappy`. */
void msg_put_supported(cs_buf *b, bool snappy);
/* AUTHENTICATE: [string] authenticator class name. */
void msg_put_authenticate(cs_buf *b, const char *cls);
/* AUTH_CHALLENGE / AUTH_SUCCESS: [bytes] token (len < 0: null). */
void msg_put_auth_token(cs_buf *b, const uint8_t *tok, int32_t len);
/* EVENT SCHEMA_CHANGE (spec v4 §4.2.6), and the same fields as RESULT kind 5. */
void msg_put_schema_change(cs_buf *b, const cql_schema_change *c);
void msg_put_event_schema_change(cs_buf *b, const cql_schema_change *c);

/*
 * Write a whole response frame to `out`: header, optional warnings, body
 * bytes, compression.  Returns out->err after the write (sticky).
 */
int msg_write_frame(cs_buf *out, uint8_t version, int16_t stream, uint8_t opcode, int compress,
                    const char *const *warnings, int n_warnings, const uint8_t *body, size_t len);
/* Build an ERROR frame straight from a cs_error. */
int msg_write_error(cs_buf *out, uint8_t version, int16_t stream, int compress, const cs_error *e);

/* ------------------------------------------------ request bodies (client side) */

void msg_put_startup(cs_buf *b, const msg_kv *opts, int n);
/* QUERY: [long string] query + query parameters. */
void msg_put_query(cs_buf *b, uint8_t version, const char *q, size_t qlen, const cql_params *p);
/* The <query_parameters> block shared by QUERY and EXECUTE (flags derived from p). */
void msg_put_query_params(cs_buf *b, uint8_t version, const cql_params *p);
void msg_put_prepare(cs_buf *b, uint8_t version, const char *q, size_t qlen, const char *keyspace);
void msg_put_execute(cs_buf *b, uint8_t version, const uint8_t *id, size_t id_len,
                     const uint8_t *rmid, size_t rmid_len, const cql_params *p);
void msg_put_batch(cs_buf *b, uint8_t version, uint8_t type, const cql_batch_item *items, int n,
                   const cql_params *p);
void msg_put_register(cs_buf *b, const char *const *events, int n);
void msg_put_auth_response(cs_buf *b, const uint8_t *tok, int32_t len);

/* ------------------------------------------------ response decoding (client side) */

/* ERROR body -> cs_error (code, message, extra fields).  0 or CS_ECORRUPT. */
int msg_error_decode(uint8_t version, const uint8_t *body, size_t len, cs_error *e);
/* EVENT body: SCHEMA_CHANGE only.  0, CS_ECORRUPT, or CS_EINVAL for another event type. */
int msg_event_decode(const uint8_t *body, size_t len, cql_schema_change *c);
/* <change_type><target><options> (RESULT kind 5 after its [int] kind). 0 or CS_ECORRUPT. */
int msg_schema_change_decode(const uint8_t *body, size_t len, cql_schema_change *c);

/* Name of an opcode ("QUERY"), for messages and logs; "UNKNOWN" otherwise. */
const char *msg_opcode_name(uint8_t opcode);

#endif
