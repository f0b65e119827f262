/*
 * system_schema.c: the compiled-in definitions of the system keyspaces
 * (Cassandra 4.1's column names and types: db/SystemKeyspace.java,
 * schema/SchemaKeyspace.java, auth/AuthKeyspace.java,
 * tracing/TraceKeyspace.java, SystemDistributedKeyspace.java,
 * db/virtual/).  Owner: catalog.
 *
 * Storage: system_schema tables are real engine tables (ids = Cassandra's
 * TableId.forSystemTable).  The tables of `system` are computed
 * (system.local/peers/peers_v2) or empty, and so are system_auth,
 * system_distributed and system_traces for now: nothing writes them yet, and
 * every stored table costs directory creation at first start (the 10 ms
 * startup budget).  Flip a keyspace's SYS_VIRTUAL to SYS_STORED in
 * sys_keyspaces[] when auth or tracing needs real storage.  The rows describing the non-virtual system
 * keyspaces are written into system_schema once (and again whenever
 * SCH_SYSTEM_SCHEMA_GEN changes), so clients see them like Cassandra's.
 */
#include <string.h>
#include <stdio.h>

#include "cql/schema_int.h"
#include "common/alloc.h"
#include "common/log.h"

enum { SYS_STORED = 0, SYS_VIRTUAL = 1 };

typedef struct sys_table_def {
    const char *name;
    const char *cols;      /* "name type, name type" (types may contain commas inside <>) */
    const char *pk;        /* partition key columns, comma separated */
    const char *ck;        /* clustering columns, comma separated ("" = none) */
    const char *comment;
} sys_table_def;

typedef struct sys_ks_def {
    const char *name;
    int storage;           /* SYS_STORED or SYS_VIRTUAL for its tables */
    bool virtual_ks;       /* system_views, system_virtual_schema */
    const char *repl_class;/* NULL for virtual keyspaces */
    const char *rf;        /* SimpleStrategy replication_factor */
    int gc_grace_s;
    int flush_period_ms;
    const sys_table_def *tables;
    int n_tables;
} sys_ks_def;

/* ---------------------------------------------------------------- system_schema */
static const sys_table_def schema_tables[] = {
    { "keyspaces", "keyspace_name text, durable_writes boolean, replication frozen<map<text, text>>",
      "keyspace_name", "", "keyspace definitions" },
    { "tables",
      "keyspace_name text, table_name text, bloom_filter_fp_chance double, caching frozen<map<text, text>>, "
      "comment text, compaction frozen<map<text, text>>, compression frozen<map<text, text>>, memtable text, "
      "crc_check_chance double, dclocal_read_repair_chance double, default_time_to_live int, "
      "extensions frozen<map<text, blob>>, flags frozen<set<text>>, gc_grace_seconds int, id uuid, "
      "max_index_interval int, memtable_flush_period_in_ms int, min_index_interval int, "
      "read_repair_chance double, speculative_retry text, additional_write_policy text, cdc boolean, "
      "read_repair text",
      "keyspace_name", "table_name", "table definitions" },
    { "columns",
      "keyspace_name text, table_name text, column_name text, clustering_order text, column_name_bytes blob, "
      "kind text, position int, type text",
      "keyspace_name", "table_name, column_name", "column definitions" },
    { "dropped_columns",
      "keyspace_name text, table_name text, column_name text, dropped_time timestamp, kind text, type text",
      "keyspace_name", "table_name, column_name", "dropped column registry" },
    { "triggers", "keyspace_name text, table_name text, trigger_name text, options frozen<map<text, text>>",
      "keyspace_name", "table_name, trigger_name", "trigger definitions" },
    { "views",
      "keyspace_name text, view_name text, base_table_id uuid, base_table_name text, where_clause text, "
      "bloom_filter_fp_chance double, caching frozen<map<text, text>>, comment text, "
      "compaction frozen<map<text, text>>, compression frozen<map<text, text>>, memtable text, "
      "crc_check_chance double, dclocal_read_repair_chance double, default_time_to_live int, "
      "extensions frozen<map<text, blob>>, gc_grace_seconds int, id uuid, include_all_columns boolean, "
      "max_index_interval int, memtable_flush_period_in_ms int, min_index_interval int, "
      "read_repair_chance double, speculative_retry text, additional_write_policy text, cdc boolean, "
      "read_repair text",
      "keyspace_name", "view_name", "view definitions" },
    { "types", "keyspace_name text, type_name text, field_names frozen<list<text>>, field_types frozen<list<text>>",
      "keyspace_name", "type_name", "user defined type definitions" },
    { "functions",
      "keyspace_name text, function_name text, argument_types frozen<list<text>>, "
      "argument_names frozen<list<text>>, body text, language text, return_type text, "
      "called_on_null_input boolean",
      "keyspace_name", "function_name, argument_types", "user defined function definitions" },
    { "aggregates",
      "keyspace_name text, aggregate_name text, argument_types frozen<list<text>>, final_func text, "
      "initcond text, return_type text, state_func text, state_type text",
      "keyspace_name", "aggregate_name, argument_types", "user defined aggregate definitions" },
    { "indexes", "keyspace_name text, table_name text, index_name text, kind text, options frozen<map<text, text>>",
      "keyspace_name", "table_name, index_name", "secondary index definitions" },
};

/* ---------------------------------------------------------------- system */
static const sys_table_def system_tables[] = {
    { "IndexInfo", "table_name text, index_name text, value blob", "table_name", "index_name",
      "built column indexes" },
    { "available_ranges", "keyspace_name text, ranges set<blob>", "keyspace_name", "",
      "available keyspace/ranges during bootstrap/replace that are ready to be served" },
    { "available_ranges_v2", "keyspace_name text, full_ranges set<blob>, transient_ranges set<blob>",
      "keyspace_name", "", "available keyspace/ranges during bootstrap/replace that are ready to be served" },
    { "batches", "id timeuuid, mutations list<blob>, version int", "id", "", "batches awaiting replay" },
    { "built_views", "keyspace_name text, view_name text, status_replicated boolean", "keyspace_name",
      "view_name", "built views" },
    { "compaction_history",
      "id timeuuid, bytes_in bigint, bytes_out bigint, columnfamily_name text, compacted_at timestamp, "
      "keyspace_name text, rows_merged map<int, bigint>", "id", "", "week-long compaction history" },
    { "local",
      "key text, bootstrapped text, broadcast_address inet, broadcast_port int, cluster_name text, "
      "cql_version text, data_center text, gossip_generation int, host_id uuid, listen_address inet, "
      "listen_port int, native_protocol_version text, partitioner text, rack text, release_version text, "
      "rpc_address inet, rpc_port int, schema_version uuid, tokens set<text>, truncated_at map<uuid, blob>",
      "key", "", "information about the local node" },
    { "paxos",
      "row_key blob, cf_id uuid, in_progress_ballot timeuuid, in_progress_read_ballot timeuuid, "
      "most_recent_commit blob, most_recent_commit_at timeuuid, most_recent_commit_version int, "
      "proposal blob, proposal_ballot timeuuid, proposal_version int", "row_key", "cf_id",
      "in-progress paxos proposals" },
    { "paxos_repair_history", "keyspace_name text, table_name text, points frozen<list<tuple<blob, timeuuid>>>",
      "keyspace_name", "table_name", "Last successful paxos repairs by range" },
    { "peer_events", "peer inet, hints_dropped map<timeuuid, int>", "peer", "", "events related to peers" },
    { "peer_events_v2", "peer inet, peer_port int, hints_dropped map<timeuuid, int>", "peer", "peer_port",
      "events related to peers" },
    { "peers",
      "peer inet, data_center text, host_id uuid, preferred_ip inet, rack text, release_version text, "
      "rpc_address inet, schema_version uuid, tokens set<text>", "peer", "",
      "information about known peers in the cluster" },
    { "peers_v2",
      "peer inet, peer_port int, data_center text, host_id uuid, preferred_ip inet, preferred_port int, "
      "rack text, release_version text, native_address inet, native_port int, schema_version uuid, "
      "tokens set<text>", "peer", "peer_port", "information about known peers in the cluster" },
    { "prepared_statements", "prepared_id blob, logged_keyspace text, query_string text", "prepared_id", "",
      "prepared statements" },
    { "repairs",
      "parent_id timeuuid, started_at timestamp, last_update timestamp, repaired_at timestamp, state int, "
      "coordinator inet, coordinator_port int, participants set<inet>, participants_wp set<text>, "
      "ranges set<blob>, cfids set<uuid>", "parent_id", "", "repairs" },
    { "size_estimates",
      "keyspace_name text, table_name text, range_start text, range_end text, mean_partition_size bigint, "
      "partitions_count bigint", "keyspace_name", "table_name, range_start, range_end",
      "per-table primary range size estimates, table is deprecated in favor of table_estimates" },
    { "sstable_activity",
      "keyspace_name text, columnfamily_name text, generation int, rate_120m double, rate_15m double",
      "keyspace_name, columnfamily_name, generation", "", "historic sstable read rates" },
    { "sstable_activity_v2",
      "keyspace_name text, table_name text, id text, rate_120m double, rate_15m double",
      "keyspace_name, table_name, id", "", "historic sstable read rates" },
    { "table_estimates",
      "keyspace_name text, table_name text, range_type text, range_start text, range_end text, "
      "mean_partition_size bigint, partitions_count bigint", "keyspace_name",
      "table_name, range_type, range_start, range_end", "per-table range size estimates" },
    { "top_partitions",
      "keyspace_name text, table_name text, top_type text, top frozen<list<tuple<text, bigint>>>, "
      "last_update timestamp", "keyspace_name", "table_name, top_type", "Stores the top partitions" },
    { "transferred_ranges", "operation text, peer inet, keyspace_name text, ranges set<blob>",
      "operation, keyspace_name", "peer", "record of transferred ranges for streaming operation" },
    { "transferred_ranges_v2", "operation text, peer inet, peer_port int, keyspace_name text, ranges set<blob>",
      "operation, keyspace_name", "peer, peer_port", "record of transferred ranges for streaming operation" },
    { "view_builds_in_progress",
      "keyspace_name text, view_name text, start_token text, end_token text, last_token text, keys_built bigint",
      "keyspace_name", "view_name, start_token, end_token", "views builds current progress" },
};

/* ---------------------------------------------------------------- system_auth */
static const sys_table_def auth_tables[] = {
    { "network_permissions", "role text, dcs frozen<set<text>>", "role", "", "user network permissions" },
    { "resource_role_permissons_index", "resource text, role text", "resource", "role",
      "index of db resources to roles with permissions" },
    { "role_members", "role text, member text", "role", "member", "role memberships lookup table" },
    { "role_permissions", "role text, resource text, permissions set<text>", "role", "resource",
      "permissions granted to db roles" },
    { "roles", "role text, can_login boolean, is_superuser boolean, member_of set<text>, salted_hash text",
      "role", "", "role definitions" },
};

/* ---------------------------------------------------------------- system_distributed */
static const sys_table_def distributed_tables[] = {
    { "parent_repair_history",
      "parent_id timeuuid, keyspace_name text, columnfamily_names set<text>, started_at timestamp, "
      "finished_at timestamp, exception_message text, exception_stacktrace text, requested_ranges set<text>, "
      "successful_ranges set<text>, options map<text, text>", "parent_id", "", "Repair history" },
    { "partition_denylist", "ks_name text, table_name text, key blob", "ks_name, table_name", "key",
      "Partition keys which have been denied access" },
    { "repair_history",
      "keyspace_name text, columnfamily_name text, id timeuuid, parent_id timeuuid, range_begin text, "
      "range_end text, coordinator inet, coordinator_port int, participants set<inet>, "
      "participants_v2 set<text>, exception_message text, exception_stacktrace text, status text, "
      "started_at timestamp, finished_at timestamp", "keyspace_name, columnfamily_name", "id",
      "Repair history" },
    { "view_build_status", "keyspace_name text, view_name text, host_id uuid, status text",
      "keyspace_name, view_name", "host_id", "Materialized View build status" },
};

/* ---------------------------------------------------------------- system_traces */
static const sys_table_def traces_tables[] = {
    { "events",
      "session_id uuid, event_id timeuuid, activity text, source inet, source_elapsed int, source_port int, "
      "thread text", "session_id", "event_id", "tracing events" },
    { "sessions",
      "session_id uuid, client inet, command text, coordinator inet, coordinator_port int, duration int, "
      "parameters map<text, text>, request text, started_at timestamp", "session_id", "",
      "tracing sessions" },
};

/* ---------------------------------------------------------------- system_views
 * Cassandra 4.1's SystemViewsKeyspace, table by table: the same columns,
 * types, keys and comments (the metric tables and the internode tables
 * have none).  Rows: cql/vtables*.c. */
#define LATENCY_COLS \
    "keyspace_name text, table_name text, count bigint, max_ms double, p50th_ms double, p99th_ms double, " \
    "per_second double"
#define HISTOGRAM_COLS "keyspace_name text, table_name text, count bigint, max double, p50th double, p99th double"
/* LocalRepairTables' stdColumns, with an id of the given type */
#define REPAIR_STD(id_type) \
    "id " id_type ", last_updated_at timestamp, completed boolean, duration_millis bigint, " \
    "failure_cause text, success_message text, state_init_timestamp timestamp, " \
    "state_success_timestamp timestamp, state_skipped_timestamp timestamp, state_failure_timestamp timestamp, "
static const sys_table_def views_tables[] = {
    { "batch_metrics", "name text, max bigint, p50th double, p999th double, p99th double", "name", "",
      "Metrics specific to batch statements" },
    { "caches",
      "name text, capacity_bytes bigint, entry_count int, hit_count bigint, hit_ratio double, "
      "recent_hit_rate_per_second bigint, recent_request_rate_per_second bigint, request_count bigint, "
      "size_bytes bigint", "name", "", "system caches" },
    { "clients",
      "address inet, port int, client_options map<text, text>, connection_stage text, driver_name text, "
      "driver_version text, hostname text, protocol_version int, request_count bigint, "
      "ssl_cipher_suite text, ssl_enabled boolean, ssl_protocol text, username text",
      "address", "port", "currently connected clients" },
    { "coordinator_read_latency", LATENCY_COLS, "keyspace_name, table_name", "", "" },
    { "coordinator_scan_latency", LATENCY_COLS, "keyspace_name, table_name", "", "" },
    { "coordinator_write_latency", LATENCY_COLS, "keyspace_name, table_name", "", "" },
    { "cql_metrics", "name text, value double", "name", "", "Metrics specific to CQL prepared statement caching" },
    { "credentials_cache_keys", "role text", "role", "", "keys in the credentials cache" },
    { "disk_usage", "keyspace_name text, table_name text, mebibytes bigint", "keyspace_name, table_name", "", "" },
    { "gossip_info",
      "address inet, port int, hostname text, generation int, heartbeat int, status text, load text, "
      "schema text, dc text, rack text, release_version text, removal_coordinator text, "
      "internal_ip text, rpc_address text, x_11_padding text, severity text, net_version text, "
      "host_id text, rpc_ready text, internal_address_and_port text, native_address_and_port text, "
      "status_with_port text, sstable_versions text, disk_usage text, x1 text, x2 text, x3 text, "
      "x4 text, x5 text, x6 text, x7 text, x8 text, x9 text, x10 text, status_version int, "
      "load_version int, schema_version int, dc_version int, rack_version int, "
      "release_version_version int, removal_coordinator_version int, internal_ip_version int, "
      "rpc_address_version int, x_11_padding_version int, severity_version int, "
      "net_version_version int, host_id_version int, tokens_version int, rpc_ready_version int, "
      "internal_address_and_port_version int, native_address_and_port_version int, "
      "status_with_port_version int, sstable_versions_version int, disk_usage_version int, "
      "x1_version int, x2_version int, x3_version int, x4_version int, x5_version int, x6_version int, "
      "x7_version int, x8_version int, x9_version int, x10_version int",
      "address", "port", "lists the gossip information for the cluster" },
    { "internode_inbound",
      "address inet, port int, dc text, rack text, corrupt_frames_recovered bigint, "
      "corrupt_frames_unrecovered bigint, error_bytes bigint, error_count bigint, expired_bytes bigint, "
      "expired_count bigint, processed_bytes bigint, processed_count bigint, received_bytes bigint, "
      "received_count bigint, scheduled_bytes bigint, scheduled_count bigint, throttled_count bigint, "
      "throttled_nanos bigint, using_bytes bigint, using_reserve_bytes bigint",
      "address, port", "dc, rack", "" },
    { "internode_outbound",
      "address inet, port int, dc text, rack text, active_connections bigint, connection_attempts bigint, "
      "error_bytes bigint, error_count bigint, expired_bytes bigint, expired_count bigint, "
      "overload_bytes bigint, overload_count bigint, pending_bytes bigint, pending_count bigint, "
      "sent_bytes bigint, sent_count bigint, successful_connection_attempts bigint, using_bytes bigint, "
      "using_reserve_bytes bigint",
      "address, port", "dc, rack", "" },
    { "jmx_permissions_cache_keys", "role text", "role", "", "keys in the JMX permissions cache" },
    { "local_read_latency", LATENCY_COLS, "keyspace_name, table_name", "", "" },
    { "local_scan_latency", LATENCY_COLS, "keyspace_name, table_name", "", "" },
    { "local_write_latency", LATENCY_COLS, "keyspace_name, table_name", "", "" },
    { "max_partition_size", "keyspace_name text, table_name text, mebibytes bigint", "keyspace_name, table_name",
      "", "" },
    { "network_permissions_cache_keys", "role text", "role", "", "keys in the network permissions cache" },
    { "pending_hints",
      "host_id uuid, address inet, dc text, files int, newest timestamp, oldest timestamp, port int, rack text, "
      "status text", "host_id", "", "Pending hints that this node has for other nodes" },
    { "permissions_cache_keys", "role text, resource text", "role, resource", "", "keys in the permissions cache" },
    { "queries", "thread_id text, queued_micros bigint, running_micros bigint, task text", "thread_id", "",
      "Lists currently running queries" },
    { "repair_jobs",
      REPAIR_STD("uuid")
      "status text, participants frozen<list<text>>, repair_id timeuuid, session_id timeuuid, "
      "keyspace_name text, table_name text, ranges frozen<list<text>>, state_start_timestamp timestamp, "
      "state_snapshot_start_timestamp timestamp, state_snapshot_complete_timestamp timestamp, "
      "state_validation_start_timestamp timestamp, state_validation_complete_timestamp timestamp, "
      "state_stream_start_timestamp timestamp", "id", "", "Repair job" },
    { "repair_participates",
      REPAIR_STD("timeuuid")
      "initiator text, tables frozen<set<text>>, ranges frozen<list<text>>, incremental boolean, "
      "global boolean, preview_kind text, repaired_at timestamp, validations frozen<set<uuid>>",
      "id", "", "Repair participate summary" },
    { "repair_sessions",
      REPAIR_STD("timeuuid")
      "status text, repair_id timeuuid, keyspace_name text, table_names frozen<list<text>>, "
      "ranges frozen<list<text>>, participants frozen<list<text>>, jobs frozen<set<uuid>>, "
      "state_start_timestamp timestamp, state_jobs_start_timestamp timestamp", "id", "", "Repair session" },
    { "repair_validations",
      REPAIR_STD("uuid")
      "status text, repair_id timeuuid, session_id timeuuid, keyspace_name text, table_name text, "
      "ranges frozen<list<text>>, initiator text, estimated_partitions bigint, estimated_total_bytes bigint, "
      "partitions_processed bigint, bytes_read bigint, progress_percentage float, "
      "state_start_timestamp timestamp, state_sending_trees_timestamp timestamp", "id", "", "Repair validation" },
    { "repairs",
      REPAIR_STD("timeuuid")
      "status text, command_id int, keyspace_name text, type text, sessions frozen<set<timeuuid>>, "
      "options_parallelism text, options_primary_range boolean, options_incremental boolean, "
      "options_trace boolean, options_job_threads int, options_subrange_repair boolean, "
      "options_pull_repair boolean, options_force_repair boolean, options_preview_kind text, "
      "options_optimise_streams boolean, options_ignore_unreplicated_keyspaces boolean, "
      "options_column_families frozen<set<text>>, options_data_centers frozen<set<text>>, "
      "options_hosts frozen<set<text>>, options_ranges frozen<set<text>>, table_names frozen<list<text>>, "
      "ranges frozen<list<frozen<list<text>>>>, unfiltered_ranges frozen<list<frozen<list<text>>>>, "
      "participants frozen<list<text>>, state_setup_timestamp timestamp, state_start_timestamp timestamp, "
      "state_prepare_start_timestamp timestamp, state_prepare_complete_timestamp timestamp, "
      "state_repair_start_timestamp timestamp, state_repair_complete_timestamp timestamp",
      "id", "", "Repair summary" },
    { "roles_cache_keys", "role text", "role", "", "keys in the roles cache" },
    { "rows_per_read", HISTOGRAM_COLS, "keyspace_name, table_name", "", "" },
    { "settings", "name text, value text", "name", "", "current settings" },
    { "sstable_tasks",
      "keyspace_name text, table_name text, task_id timeuuid, completion_ratio double, kind text, "
      "progress bigint, sstables int, total bigint, unit text", "keyspace_name", "table_name, task_id",
      "current sstable tasks" },
    { "streaming",
      "id timeuuid, follower boolean, operation text, peers frozen<list<text>>, status text, "
      "progress_percentage float, last_updated_at timestamp, duration_millis bigint, failure_cause text, "
      "success_message text, bytes_to_receive bigint, bytes_received bigint, bytes_to_send bigint, "
      "bytes_sent bigint, files_to_receive bigint, files_received bigint, files_to_send bigint, "
      "files_sent bigint, status_init_timestamp timestamp, status_start_timestamp timestamp, "
      "status_success_timestamp timestamp, status_failure_timestamp timestamp", "id", "", "" },
    { "system_properties", "name text, value text", "name", "", "Cassandra relevant system properties" },
    { "thread_pools",
      "name text, active_tasks int, active_tasks_limit int, blocked_tasks bigint, blocked_tasks_all_time bigint, "
      "completed_tasks bigint, pending_tasks int", "name", "", "" },
    { "tombstones_per_read", HISTOGRAM_COLS, "keyspace_name, table_name", "", "" },
};

/* ---------------------------------------------------------------- system_virtual_schema */
static const sys_table_def vschema_tables[] = {
    { "columns",
      "keyspace_name text, table_name text, column_name text, clustering_order text, column_name_bytes blob, "
      "kind text, position int, type text", "keyspace_name", "table_name, column_name",
      "virtual column definitions" },
    { "keyspaces", "keyspace_name text", "keyspace_name", "", "virtual keyspace definitions" },
    { "tables", "keyspace_name text, table_name text, comment text", "keyspace_name", "table_name",
      "virtual table definitions" },
};

#define TBL(a) a, (int)CS_ARRAY_LEN(a)
static const sys_ks_def sys_keyspaces[] = {
    { "system_schema", SYS_STORED, false, "org.apache.cassandra.locator.LocalStrategy", NULL, 604800, 3600000,
      TBL(schema_tables) },
    { "system", SYS_VIRTUAL, false, "org.apache.cassandra.locator.LocalStrategy", NULL, 0, 3600000,
      TBL(system_tables) },
    { "system_auth", SYS_VIRTUAL, false, "org.apache.cassandra.locator.SimpleStrategy", "1", 7776000, 0,
      TBL(auth_tables) },
    { "system_distributed", SYS_VIRTUAL, false, "org.apache.cassandra.locator.SimpleStrategy", "3", 864000, 0,
      TBL(distributed_tables) },
    { "system_traces", SYS_VIRTUAL, false, "org.apache.cassandra.locator.SimpleStrategy", "2", 0, 0,
      TBL(traces_tables) },
    { "system_views", SYS_VIRTUAL, true, NULL, NULL, 0, 0, TBL(views_tables) },
    { "system_virtual_schema", SYS_VIRTUAL, true, NULL, NULL, 0, 0, TBL(vschema_tables) },
};

/* Copy the next comma-separated item of *s (at <> depth 0) into out, trimmed. */
static bool next_item(const char **s, char *out, size_t cap)
{
    const char *p = *s;
    while (*p == ' ' || *p == ',') p++;
    if (!*p) return false;
    int depth = 0;
    size_t n = 0;
    while (*p && !(depth == 0 && *p == ',')) {
        if (*p == '<') depth++;
        else if (*p == '>') depth--;
        if (n + 1 < cap) out[n++] = *p;
        p++;
    }
    while (n > 0 && out[n - 1] == ' ') n--;
    out[n] = 0;
    *s = p;
    return true;
}

/* Position of name in a comma-separated list, or -1. */
static int list_pos(const char *list, const char *name)
{
    char item[128];
    int i = 0;
    while (next_item(&list, item, sizeof item)) {
        if (strcmp(item, name) == 0) return i;
        i++;
    }
    return -1;
}

static int define_table(sch_catalog *c, sch_keyspace *k, const sys_ks_def *kd, const sys_table_def *td)
{
    sch_table *t = sch__table_new(k, td->name);
    if (!t) return CS_ENOMEM;
    sch__system_table_id(k->name, td->name, t->id);
    cs_free(t->comment);
    t->comment = cs_strdup(td->comment);
    t->gc_grace_s = kd->gc_grace_s;
    t->memtable_flush_period_ms = kd->flush_period_ms;
    t->is_system = true;
    t->is_virtual = kd->storage == SYS_VIRTUAL;
    const char *s = td->cols;
    char item[256];
    int rc = 0;
    while (rc == 0 && next_item(&s, item, sizeof item)) {
        char *sp = strchr(item, ' ');
        if (!sp) { rc = CS_EINVAL; break; }
        *sp = 0;
        const char *name = item, *tytext = sp + 1;
        cs_error e;
        cs_error_init(&e);
        ctype *ty = ctype_parse(tytext, k->name, NULL, NULL, &e);
        if (!ty) {
            CS_ERROR("system table %s.%s: cannot parse type '%s' of %s: %s", k->name, td->name, tytext,
                     name, e.msg);
            rc = CS_EINVAL;
            break;
        }
        int pp = list_pos(td->pk, name), cp = list_pos(td->ck, name);
        sch_col_kind kind = pp >= 0 ? COL_PARTITION_KEY : cp >= 0 ? COL_CLUSTERING : COL_REGULAR;
        rc = sch__table_add_col(t, name, ty, kind, pp >= 0 ? pp : cp, false);
    }
    if (rc == 0) rc = sch__table_finish(t, NULL);
    if (rc == 0) rc = sch__ks_add_table(k, t);
    if (rc) { sch__table_free(t); return rc; }
    if (!t->is_virtual) {
        st_table_opts o;
        sch__table_st_opts(t, &o);
        rc = st_table_open(c->eng, t->id, k->name, t->name, &o, &t->st);
        if (rc) CS_ERROR("cannot open storage of %s.%s: %s", k->name, t->name, cs_strerror(rc));
    }
    return rc;
}

/* Define every system keyspace and open the storage of the stored ones. */
int sch__define_system(sch_catalog *c)
{
    for (size_t i = 0; i < CS_ARRAY_LEN(sys_keyspaces); i++) {
        const sys_ks_def *kd = &sys_keyspaces[i];
        sch_keyspace *k = sch__keyspace_new(kd->name);
        if (!k) return CS_ENOMEM;
        k->is_system = true;
        k->is_virtual = kd->virtual_ks;
        if (kd->repl_class) {
            sch__kv_set(&k->repl_k, &k->repl_v, &k->n_repl, "class", kd->repl_class);
            if (kd->rf) sch__kv_set(&k->repl_k, &k->repl_v, &k->n_repl, "replication_factor", kd->rf);
        }
        int rc = sch__keyspace_add(c, k);
        if (rc) { sch__keyspace_free(k); return rc; }
        for (int j = 0; j < kd->n_tables; j++) {
            rc = define_table(c, k, kd, &kd->tables[j]);
            if (rc) return rc;
        }
    }
    static const char *const ss_names[SS_COUNT] = {
        "keyspaces", "tables", "columns", "dropped_columns", "triggers", "views", "types",
        "functions", "aggregates", "indexes",
    };
    for (int i = 0; i < SS_COUNT; i++) {
        c->ss[i] = sch_table_find(c, "system_schema", ss_names[i]);
        if (!c->ss[i]) return CS_EINVAL;
    }
    return 0;
}

/* Write the system_schema rows describing the (non-virtual) system
 * keyspaces, replacing older ones.  The caller decides when (first start or
 * a new SCH_SYSTEM_SCHEMA_GEN). */
int sch__write_system_rows(sch_catalog *c)
{
    st_mutation *m = st_mutation_new();
    if (!m) return CS_ENOMEM;
    int64_t ts_del = cs_write_ts_us();
    int64_t ts = cs_write_ts_us();
    for (int i = 0; i < c->n_ks; i++) {
        sch_keyspace *k = c->ks[i];
        if (!k->is_system || k->is_virtual) continue;
        sch__rows_keyspace_drop(c, m, k->name, ts_del);
        sch__rows_keyspace(c, m, k, ts);
        for (int j = 0; j < k->n_tables; j++) sch__rows_table(c, m, k->tables[j], INT64_MIN, ts);
    }
    int rc = st_write(c->eng, m, NULL);
    st_mutation_free(m);
    return rc;
}
