/*
 * config.h: cassette.yaml / cassandra.yaml reader.  Owner: server/config.c.
 * Caller: server/main.c at startup (single thread), before the engine opens.
 *
 * Reads the YAML subset Cassandra's own config file uses at top level:
 * `key: value` scalars (plain, 'single' or "double" quoted), block lists
 * (`key:` then `  - item` lines), flow lists (`[a, b]`), comments.  Nested
 * maps (seed_provider, ...) are skipped.  Cassandra 4.1 accepts both the old
 * names with a unit suffix (`commitlog_sync_period_in_ms: 10000`) and the new
 * ones with a unit in the value (`commitlog_sync_period: 10s`, `16MiB`); so do
 * we.  Unknown keys are logged as warnings, never fatal.
 */
#ifndef CS_SERVER_CONFIG_H
#define CS_SERVER_CONFIG_H

#include <stddef.h>
#include <stdbool.h>

#include "common/buf.h"
#include "cql/exec.h"
#include "storage/storage.h"

enum { CONFIG_AUTH_ALLOW_ALL = 0, CONFIG_AUTH_PASSWORD = 1 };
#define CONFIG_MAX_REQUEST_LOOPS 64
#define CONFIG_DEFAULT_SYNC_WAIT_POLL_US 200   /* commitlog_sync_wait_poll_us (server/conn.h srv_loop_run) */
#define CONFIG_MAX_SYNC_WAIT_POLL_US 1000000

typedef struct config {
    st_config st;                     /* engine settings; strings point into this struct */
    cql_config cql;                   /* CQL settings; strings point into this struct */
    char cluster_name[256];
    char listen_address[256];
    char rpc_address[256];            /* where the native transport listens */
    int native_port;                  /* native_transport_port (9042) */
    size_t max_frame_size;            /* native_transport_max_frame_size (16 MiB) */
    int max_connections;              /* native_transport_max_concurrent_connections (-1: no limit) */
    int authenticator;                /* CONFIG_AUTH_* */
    int admin_port;                   /* cassette: HTTP admin on 127.0.0.1 (7199; 0 disables) */
    int request_loops;                /* cassette: request loop threads (1; 0: one per CPU) */
    int request_loops_effective;      /* request_loops with 0 resolved (config_finish) */
    int commitlog_sync_wait_poll_us;            /* cassette: a loop with writes waiting for a commit log sync polls this long after activity */
    bool hinted_handoff_enabled;      /* hinted_handoff_enabled (true): nodetool statushandoff; a single
                                         node has no peer to keep hints for */
    char data_dir[1024];              /* first of data_file_directories ("" = not set) */
    char commitlog_dir[1024];         /* commitlog_directory ("" = not set) */
    bool admin_port_set;              /* admin_port given explicitly */
    char guard_bad_property[160];     /* "key\tname": a table_properties_* entry that is no property */
    char auto_snapshot_ttl[32];       /* auto_snapshot_ttl as DurationSpec prints it ("" = not set) */
    cs_buf settings;                  /* "name\tvalue\n" lines (effective values, sorted),
                                         NUL-terminated: cql.config_text */
    int warnings;                     /* unknown keys / bad values seen */
} config;

/* Defaults as Cassandra 4.1's (with cassette's noted exceptions). */
void config_defaults(config *c);
/* Cassandra 4.1's default file_cache_size on a machine with ram_bytes of
 * memory: min(512 MiB, max heap / 4), the max heap being cassandra-env.sh's
 * default, max(min(RAM / 2, 1 GiB), min(RAM / 4, 8 GiB)). */
size_t config_default_file_cache_size(uint64_t ram_bytes);
/* Read a YAML file over the current values.  Returns 0, CS_EIO (file cannot be
 * read; cs_last_errno) or CS_EINVAL (a known key has a bad value: err says
 * which).  Unknown keys only warn. */
int config_load(config *c, const char *path, char *err, size_t errlen);
/* Parse YAML text (the same as config_load, for tests). */
int config_parse(config *c, const char *text, size_t len, char *err, size_t errlen);
/* Set one key from a string value (also used by the parser). 0, CS_ENOTFOUND
 * (unknown key) or CS_EINVAL. */
int config_set(config *c, const char *key, const char *value);
/* Fill the derived fields: data_dir/commitlog_dir default to <base>/data and
 * <base>/commitlog (base NULL: "."), st.* and cql.* string pointers, the
 * settings text.  Call once after loading and command-line overrides. */
void config_finish(config *c, const char *base);
void config_destroy(config *c);

/* Unit parsers, exported for tests: "10000ms", "10s", "1h" -> ms; "16MiB",
 * "512KiB", "1024B" -> bytes.  `def_unit_*` applies to a bare number.
 * 0 or CS_EINVAL. */
int config_parse_duration_ms(const char *s, long long def_unit_ms, long long *out);
int config_parse_size(const char *s, long long def_unit_bytes, long long *out);

/* Cassandra 4.1's DurationSpec (config/DurationSpec.java), as nodetool
 * snapshot --ttl and auto_snapshot_ttl read it: "<digits><unit>", the unit
 * one of d h m s ms us µs ns (case matters, nothing else allowed).  The
 * units are numbered as Java's TimeUnit.  config_duration_spec also checks,
 * as the bounded subclasses' String constructors do, that the unit is not
 * finer than min_unit and the value in min_unit is below max
 * (LongNanosecondsBound: CONFIG_NS, INT64_MAX; IntSecondsBound: CONFIG_S,
 * INT32_MAX).  0, or CS_EINVAL with Cassandra's message in err. */
enum { CONFIG_NS, CONFIG_US, CONFIG_MS, CONFIG_S, CONFIG_MIN, CONFIG_H, CONFIG_D };
typedef struct config_duration {
    long long quantity;
    int unit;                         /* CONFIG_NS..CONFIG_D */
} config_duration;
int config_duration_spec(const char *s, int min_unit, long long max, config_duration *out, char *err,
                         size_t errlen);
/* d in unit, saturating at LLONG_MAX as TimeUnit.convert does. */
long long config_duration_to(const config_duration *d, int unit);
/* DurationSpec.toString: quantity and symbol ("1h"; µs is written "us"). */
void config_duration_format(const config_duration *d, char *out, size_t n);

#endif
