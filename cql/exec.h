/*
 * exec.h: the CQL layer's interface to the server.  Owner: cql/exec*.c.
 * Caller: server/conn.c (one request at a time, on the request loop thread).
 *
 * The server decodes frames; the CQL layer parses, executes and encodes the
 * RESULT body (spec v4 §4.2.5, starting with the [int] kind) into
 * cql_result.body.  Errors come back as a filled cs_error that the server
 * turns into an ERROR frame.  Schema changes are reported in cql_result so the
 * server can push EVENT SCHEMA_CHANGE to registered connections.
 */
#ifndef CS_CQL_EXEC_H
#define CS_CQL_EXEC_H

#include <stdint.h>
#include <stdbool.h>
#include <stdatomic.h>
#include "common/buf.h"
#include "common/err.h"
#include "storage/storage.h"

typedef struct cql_ctx cql_ctx;

#define CQL_TABLE_PROPERTIES 18   /* cql_table_property_name */

typedef struct cql_config {
    const char *cluster_name;          /* "Test Cluster" */
    const char *listen_address;        /* for system.local */
    int native_port;
    int num_tokens;                    /* 16 (Cassandra 4.1 default) */
    int tombstone_warn_threshold;      /* 1000 */
    int tombstone_failure_threshold;   /* 100000 */
    int batch_size_warn_kb;            /* 5 */
    int batch_size_fail_kb;            /* 50 */
    int unlogged_batch_across_partitions_warn_threshold; /* 10 */
    bool materialized_views_enabled;   /* true (cassette's default; Cassandra 4 disables) */
    bool user_defined_functions_enabled;
    bool sasi_indexes_enabled;         /* false, as 4.1; cassette has no SASI either way */
    bool password_authenticator;       /* authenticator: PasswordAuthenticator (else every session is anonymous) */
    bool cassandra_authorizer;         /* authorizer: CassandraAuthorizer (else AllowAllAuthorizer) */
    int64_t timeout_ms[10];            /* CQL_TIMEOUT_*: the request timeouts (cql_timeout_ms) */
    const char *config_text;           /* settings for system_views.settings (may be NULL) */
    /* Guardrails (cassandra.yaml; Cassandra 4.1's db/guardrails, applied to
     * ordinary users only: cql/guardrails.c).  Thresholds are
     * {warn, fail}, -1 = off; the flags are the *_enabled keys; consistency
     * level sets are bit (1 << code). */
    struct cql_guardrails {
        int keyspaces[2], tables[2], columns_per_table[2], secondary_indexes_per_table[2],
            materialized_views_per_table[2], page_size[2], partition_keys_in_select[2], fields_per_udt[2],
            items_per_collection[2], minimum_replication_factor[2], in_select_cartesian_product[2];
        int64_t collection_size[2];      /* bytes, -1 = off (a DataStorageSpec in cassandra.yaml) */
        /* table_properties_warned / _ignored / _disallowed: property indexes
         * (cql_table_property_name) in cassandra.yaml's order */
        uint8_t table_props[3][CQL_TABLE_PROPERTIES]; int n_table_props[3];
        bool allow_filtering, user_timestamps, group_by, drop_truncate_table, secondary_indexes,
             compact_tables, read_before_write_list_operations, uncompressed_tables;
        uint32_t read_cl_warned, read_cl_disallowed, write_cl_warned, write_cl_disallowed;
    } guard;
} cql_config;

void cql_config_defaults(cql_config *c);
/* ConsistencyLevel's name for its protocol code ("LOCAL_ONE"); NULL past
 * NODE_LOCAL. */
const char *cql_consistency_level_name(unsigned code);
/* A table property's name by its index in TableAttributes' keywords
 * (TableParams.Option's order, then "id"); NULL past the last. */
const char *cql_table_property_name(unsigned i);
/* "[a, b]": names[0..n) as a Java List prints them, into out[cap]. */
void cql_name_list(const char *const *names, int n, char *out, size_t cap);
/* Consistency levels (bit 1 << code) as Java prints their EnumSet:
 * "[ONE, ALL]". */
void cql_consistency_set_text(uint32_t bits, char *out, size_t cap);
/* Table properties (idx: cql_table_property_name indexes, in insertion
 * order) as Java prints a HashSet of their names (Cassandra's messages and
 * settings for the table_properties guardrail). */
void cql_table_props_text(const uint8_t *idx, int n, char *out, size_t cap);
/* The guardrails' thresholds, indexed by guardrail (cql_int.h CQL_GUARD_*):
 * the cassandra.yaml name before _warn_threshold / _fail_threshold, the
 * offset of its {warn, fail} pair in struct cql_guardrails (int, or
 * int64_t for a size in bytes), and whether it is a MinThreshold (values
 * below it trigger). */
typedef struct cql_guard_threshold_def { const char *name; size_t off; bool bytes, min; } cql_guard_threshold_def;
extern const cql_guard_threshold_def cql_guard_thresholds[];
extern const int cql_guard_n_thresholds;

/* The timeouts of cassandra.yaml, in ms, by nodetool gettimeout's type:
 * read_request_timeout (5000), range_request_timeout (10000),
 * write_request_timeout (2000), counter_write_request_timeout (5000),
 * cas_contention_timeout (1000), truncate_request_timeout (60000),
 * request_timeout (misc, 10000), internode_tcp_connect_timeout (2000),
 * internode_tcp_user_timeout (30000),
 * internode_streaming_tcp_user_timeout (300000).  All are kept, reported
 * (nodetool gettimeout, system_views.settings) and set (settimeout).  The
 * read and range ones end a SELECT that scans past them (ReadTimeout,
 * cql_sx.deadline_ns in select_int.h).  The write and counter write
 * ones end the wait of a write for its commit log sync (batch and group
 * modes) with WriteTimeout (cql_result.write_type, server/conn.c); the
 * write itself is applied, as a replica's would be (an applied LWT's
 * commit too).  TRUNCATE and an LWT's read run to completion, and a single
 * node opens no internode connection, so the others change nothing else. */
enum { CQL_TIMEOUT_READ, CQL_TIMEOUT_RANGE, CQL_TIMEOUT_WRITE, CQL_TIMEOUT_COUNTER_WRITE, CQL_TIMEOUT_CAS,
       CQL_TIMEOUT_TRUNCATE, CQL_TIMEOUT_MISC, CQL_TIMEOUT_INTERNODE_CONNECT, CQL_TIMEOUT_INTERNODE_USER,
       CQL_TIMEOUT_INTERNODE_STREAMING_USER, CQL_TIMEOUTS };
/* The settings name of a timeout ("read_request_timeout"), NULL past the last. */
const char *cql_timeout_name(int which);
int64_t cql_timeout_ms(cql_ctx *ctx, int which);
void cql_timeout_set(cql_ctx *ctx, int which, int64_t ms);

/* Open the CQL layer over an opened engine: create/load the system keyspaces,
 * replay the commit log (schema first, then user tables), load the schema.
 * *out owned by caller; cql_ctx_free() before st_engine_close(). */
int cql_ctx_new(st_engine *eng, const cql_config *cfg, cql_ctx **out);
void cql_ctx_free(cql_ctx *ctx);
/* Background work of the CQL layer (index and view builds, cql/index_build.c):
 * one slice, on the request loop thread, between requests (server timer).
 * Returns 1 while work remains, 0 when idle. */
int cql_background_step(cql_ctx *ctx);
struct sch_catalog *cql_ctx_catalog(cql_ctx *ctx);
st_engine *cql_ctx_engine(cql_ctx *ctx);

/* Per-connection state. */
/* What system_views.clients shows of a connection beyond its session,
 * owned by the server's connection (out of the session, which a request
 * with its own keyspace copies). */
typedef struct cql_client_info {
    /* STARTUP's options, keys upper-cased, serialized as a map<text, text>
     * sorted by key (client_options); options_len -1 = none.  Written
     * before the session is opened, then only read. */
    uint8_t options[1024]; int32_t options_len;
    /* The peer's host name (InetSocketAddress.getHostName: a reverse
     * lookup, done off the request loop), valid once hostname_set; the
     * address until then. */
    char hostname[256]; _Atomic bool hostname_set;
    _Atomic uint64_t request_count;    /* requests received in a valid state (request_count) */
} cql_client_info;

typedef struct cql_session {
    char keyspace[256];                /* USE; "" if none */
    int protocol_version;              /* 3, 4 or 5 */
    char client_addr[64];              /* for system_views.clients */
    char driver_name[64], driver_version[32];
    char user[256];                    /* the role logged in (PasswordAuthenticator); "" = anonymous */
    struct cql_client_info *client;    /* system_views.clients' extra columns; NULL: none */
    int loop_index;                    /* request loop serving it, 0 = the main one (system_views.queries) */
    void *server_conn;                 /* opaque back-pointer for the server */
} cql_session;

/* PasswordAuthenticator's check of a SASL PLAIN login against the role
 * store (cql/roles.h): 0, or CS_EUSER with e = 0x0100 and Cassandra's
 * wording ("Provided username X and/or password are incorrect", "X is not
 * permitted to log in").  Any thread. */
int cql_login(cql_ctx *ctx, const char *user, size_t ulen, const char *pass, size_t plen, cs_error *e);

/* Optional (server): report connections for system_views.clients.  The
 * session pointer must stay valid until cql_session_closed.  Owner: catalog
 * (ctx.c); without these calls the table reads empty. */
void cql_session_opened(cql_ctx *ctx, cql_session *s);
void cql_session_closed(cql_ctx *ctx, cql_session *s);

/* One bound value: len >= 0 bytes; -1 null; -2 unset (v4+). */
typedef struct cql_value { const uint8_t *p; int32_t len; } cql_value;
#define CQL_NULL (-1)
#define CQL_UNSET (-2)

/* QUERY/EXECUTE parameters, decoded by the server (spec v4 §4.1.4).
 * Everything borrowed from the request frame for the call's duration. */
typedef struct cql_params {
    uint16_t consistency;
    uint32_t flags;                    /* raw flags, for reference */
    cql_value *values; int n_values;
    const char **names; const size_t *name_lens;   /* NAMES_FOR_VALUES; NULL otherwise */
    bool skip_metadata;
    int32_t page_size;                 /* <= 0: no paging */
    const uint8_t *paging_state; int32_t paging_state_len;   /* len < 0: none */
    uint16_t serial_consistency;       /* 0 if absent */
    int64_t timestamp;                 /* INT64_MIN if absent */
    const char *keyspace;              /* v5 per-query keyspace, NULL if absent */
    int32_t now_in_seconds;            /* v5, 0 if absent */
    uint64_t start_ns;                 /* server: when the request started (cs_mono_ns); 0 = now */
} cql_params;

/* Schema change, for RESULT and EVENT (spec v4 §4.2.6). */
typedef struct cql_schema_change {
    char change_type[16];              /* CREATED UPDATED DROPPED */
    char target[16];                   /* KEYSPACE TABLE TYPE FUNCTION AGGREGATE */
    char keyspace[256];
    char name[256];                    /* table/type/function name; "" for KEYSPACE */
    char arg_types[512];               /* FUNCTION/AGGREGATE: comma-separated CQL types */
} cql_schema_change;

typedef struct cql_result {
    cs_buf body;                       /* RESULT body: [int kind] ... ; owned */
    char **warnings; int n_warnings;   /* client warnings (cs_malloc'd strings) */
    bool schema_changed; cql_schema_change change;
    bool need_sync; st_clog_pos sync_pos;   /* wait for commit log before replying */
    /* A write waiting for its sync ends with WriteTimeout (0x1100) if the
     * sync comes later than write_timeout_ms after the request's arrival:
     * its WriteType ("SIMPLE", "UNLOGGED_BATCH", "BATCH", "COUNTER"; an
     * applied LWT's commit: "SIMPLE"); NULL for replies that are never
     * timed out (schema changes). */
    const char *write_type; int64_t write_timeout_ms;
    uint64_t end_ns;                   /* cs_mono_ns when execution ended, if read; else 0 */
} cql_result;

void cql_result_init(cql_result *r);
void cql_result_destroy(cql_result *r);
void cql_result_warn(cql_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* QUERY: returns 0 with r filled, or CS_EUSER with e filled. */
int cql_query(cql_ctx *ctx, cql_session *s, const char *q, size_t qlen,
              const cql_params *p, cql_result *r, cs_error *e);
/* PREPARE: RESULT Prepared (id = MD5 of keyspace-qualified text, as Cassandra). */
int cql_prepare(cql_ctx *ctx, cql_session *s, const char *q, size_t qlen,
                const char *keyspace, cql_result *r, cs_error *e);
/* EXECUTE: unknown id -> CS_EUSER with e = UNPREPARED (0x2500) carrying the id. */
int cql_execute(cql_ctx *ctx, cql_session *s, const uint8_t *id, size_t idlen,
                const cql_params *p, cql_result *r, cs_error *e);

/* A hint from the request loop: these EXECUTEs are buffered on a
 * connection and run next, in this order.  Those that are point SELECTs,
 * INSERTs, UPDATEs or DELETEs (naming a whole partition key by `=`) whose
 * memo is current have storage start loading what their lookups touch
 * first, all together, per run of two or more reads or writes on one
 * table (st_prefetch_reads, st_prefetch_writes).  Returns how many
 * requests were hinted (for tests).  No effect on any result; never an
 * error. */
#define CQL_PREFETCH_VALUES 8
typedef struct cql_prefetch_req {
    const uint8_t *id; size_t idlen;
    cql_value vals[CQL_PREFETCH_VALUES];
    int n_vals;
} cql_prefetch_req;
int cql_prefetch_batch(cql_ctx *ctx, const cql_prefetch_req *reqs, int n);

typedef struct cql_batch_item {
    bool prepared;                     /* kind 1 */
    const char *query; size_t query_len;     /* kind 0 */
    const uint8_t *id; size_t id_len;        /* kind 1 */
    cql_value *values; int n_values;
    const char **names; const size_t *name_lens;
} cql_batch_item;

/* BATCH (spec v4 §4.1.7): type 0 logged, 1 unlogged, 2 counter. */
int cql_batch(cql_ctx *ctx, cql_session *s, uint8_t type, const cql_batch_item *items,
              int n_items, const cql_params *p, cql_result *r, cs_error *e);

/* Admin operations (nodetool-like), for server/admin.c and tools.
 * cql_admin_flush / cql_admin_compact: resolve, run and release in one
 * call, on the loop thread (tests).  The admin endpoint splits them:
 * cql_admin_resolve on the loop thread names the storage tables (errors:
 * CS_ERR_INVALID for unknown names) and pins each (st_table_pin), so a
 * concurrent DROP cannot free them; cql_admin_run flushes or compacts them
 * on any thread (a table dropped meanwhile is a no-op); cql_admin_release
 * (any thread) unpins and frees the array. */
int cql_admin_flush(cql_ctx *ctx, const char *ks, const char **tables, int n_tables, cs_error *e);
int cql_admin_compact(cql_ctx *ctx, const char *ks, const char **tables, int n_tables, cs_error *e);
typedef struct cql_admin_target {
    st_table *st;                      /* pinned */
    char name[400];                    /* ks.table[.index], for messages */
} cql_admin_target;
int cql_admin_resolve(cql_ctx *ctx, const char *ks, const char **tables, int n_tables,
                      cql_admin_target **out, int *n_out, cs_error *e);
int cql_admin_run(cql_admin_target *v, int n, bool compact, cs_error *e);
void cql_admin_release(cql_admin_target *v, int n);

/* nodetool rebuild_index (cql/index_rebuild.c): empty the named
 * secondary indexes of ks.table (names as the index or "table.index";
 * unknown ones are skipped, as Cassandra's) and start building them again
 * from the table in the background; *started gets how many.  0, or
 * CS_EUSER with e: "Unknown keyspace ks" or "Unknown keyspace/cf pair
 * (ks.table)" (CS_ERR_INVALID).  cql_index_rebuilding: is one of them
 * still building (false once ks.table is gone)? */
int cql_index_rebuild(cql_ctx *ctx, const char *ks, const char *table, const char *const *names, int n, int *started,
                      cs_error *e);
bool cql_index_rebuilding(cql_ctx *ctx, const char *ks, const char *table, const char *const *names, int n);
/* The first of them whose build stopped on an error (then
 * cql_index_rebuilding no longer counts it), or NULL. */
const char *cql_index_rebuild_failed(cql_ctx *ctx, const char *ks, const char *table, const char *const *names,
                                     int n);

/* Node facts for admin tools (nodetool info/status/describecluster). */
typedef struct cql_node_info {
    char host_id[37];
    char schema_version[37];
    const char *cluster_name;
    const int64_t *tokens; int n_tokens;   /* borrowed, sorted */
    int64_t started_ms;
} cql_node_info;
void cql_node_info_get(cql_ctx *ctx, cql_node_info *out);

/* The server tells the CQL layer where the native transport listens and
 * how to ask whether it is running (system.local, gossip_info); running is
 * called on a request loop, arg borrowed for the context's life.  Until
 * then: the configured address and port, running. */
void cql_native_set(cql_ctx *ctx, const char *addr, int port, bool (*running)(void *arg), void *arg);

/* This node's gossip state (its Gossiper EndpointState), as nodetool
 * gossipinfo and system_views.gossip_info show it: the states a single
 * node publishes, by ApplicationState ordinal, their versions drawn from
 * one generator (1-20 at start, then one a second for the heartbeat; LOAD
 * republished every minute). */
#define CQL_GOSSIP_STATES 30                        /* ApplicationState values (4.1) */
#define CQL_GOSSIP_TOKENS 13                        /* TOKENS: a version, no value shown */
typedef struct cql_gossip {
    char address[64];                               /* listen address */
    int port;                                       /* storage port: 7000 */
    int generation, heartbeat;
    int version[CQL_GOSSIP_STATES];                 /* 0: the state is not published */
    char value[CQL_GOSSIP_STATES][96];
} cql_gossip;
void cql_gossip_get(cql_ctx *ctx, cql_gossip *out);
/* ApplicationState's name for an ordinal ("STATUS", "LOAD", ...). */
const char *cql_gossip_state_name(int ordinal);

#endif
