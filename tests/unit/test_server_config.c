/*
 * test_server_config.c: the cassandra.yaml subset reader (server/config.h):
 * old `_in_ms/_in_kb/_in_mb` keys and 4.1 unit-suffixed values, lists,
 * quoting, comments, unknown keys (warned, not fatal), bad values.
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>
#include <stdio.h>
#include <string.h>

#include "common/alloc.h"
#include "common/err.h"
#include "server/config.h"

/* Test-only defaults in case the real ones are not linked (weak: the real
 * storage/cql definitions win when present). */
__attribute__((weak)) void st_config_defaults(st_config *c)
{
    memset(c, 0, sizeof *c);
    c->sync_period_ms = 10000;
    c->sync_group_window_ms = 15;
    c->segment_size = 32u << 20;
    c->memtable_space = 256u << 20;
    c->compaction_threads = 1;
    c->block_cache_size = (size_t)256 << 20;
}
__attribute__((weak)) void cql_config_defaults(cql_config *c)
{
    memset(c, 0, sizeof *c);
    c->tombstone_warn_threshold = 1000;
    c->tombstone_failure_threshold = 100000;
    c->batch_size_warn_kb = 5;
    c->batch_size_fail_kb = 50;
    c->num_tokens = 16;
    c->materialized_views_enabled = true;
}

static size_t allocs_at_start;
static void setup(void) { allocs_at_start = cs_alloc_count(); }
static void teardown(void) { cr_assert_eq(cs_alloc_count(), allocs_at_start, "leak"); }
TestSuite(server_config, .init = setup, .fini = teardown);

static int parse(config *c, const char *text)
{
    char err[256] = "";
    config_defaults(c);
    return config_parse(c, text, strlen(text), err, sizeof err);
}

Test(server_config, units)
{
    long long v;
    cr_assert_eq(config_parse_duration_ms("10000ms", 1, &v), 0);
    cr_assert_eq(v, 10000);
    cr_assert_eq(config_parse_duration_ms("10s", 1, &v), 0);
    cr_assert_eq(v, 10000);
    cr_assert_eq(config_parse_duration_ms("2m", 1, &v), 0);
    cr_assert_eq(v, 120000);
    cr_assert_eq(config_parse_duration_ms("1h", 1, &v), 0);
    cr_assert_eq(v, 3600000);
    cr_assert_eq(config_parse_duration_ms("15", 1, &v), 0);
    cr_assert_eq(v, 15);
    cr_assert_eq(config_parse_duration_ms("2000us", 1, &v), 0);
    cr_assert_eq(v, 2);
    cr_assert_eq(config_parse_duration_ms("ten", 1, &v), CS_EINVAL);
    cr_assert_eq(config_parse_duration_ms("10 parsecs", 1, &v), CS_EINVAL);
    cr_assert_eq(config_parse_size("16MiB", 1, &v), 0);
    cr_assert_eq(v, 16 << 20);
    cr_assert_eq(config_parse_size("5KiB", 1, &v), 0);
    cr_assert_eq(v, 5120);
    cr_assert_eq(config_parse_size("2GiB", 1, &v), 0);
    cr_assert_eq(v, 2LL << 30);
    cr_assert_eq(config_parse_size("100B", 1, &v), 0);
    cr_assert_eq(v, 100);
    cr_assert_eq(config_parse_size("32", 1 << 20, &v), 0);
    cr_assert_eq(v, 32 << 20);
    cr_assert_eq(config_parse_size("32MB", 1, &v), CS_EINVAL);
}

Test(server_config, cassandra_41_style)
{
    config c;
    const char *y =
        "# cassandra.yaml excerpt\n"
        "cluster_name: 'My Cluster'\n"
        "num_tokens: 256\n"
        "listen_address: localhost\n"
        "rpc_address: \"0.0.0.0\"   # everywhere\n"
        "native_transport_port: 9142\n"
        "data_file_directories:\n"
        "    - /var/lib/cassette/data\n"
        "    - /second/ignored\n"
        "commitlog_directory: /var/lib/cassette/commitlog\n"
        "commitlog_sync: periodic\n"
        "commitlog_sync_period: 10000ms\n"
        "commitlog_segment_size: 64MiB\n"
        "memtable_heap_space: 2048MiB\n"
        "file_cache_size: 512MiB\n"
        "native_transport_max_frame_size: 16MiB\n"
        "tombstone_warn_threshold: 500\n"
        "tombstone_failure_threshold: 50000\n"
        "batch_size_warn_threshold: 10KiB\n"
        "batch_size_fail_threshold: 100KiB\n"
        "authenticator: PasswordAuthenticator\n"
        "authorizer: CassandraAuthorizer\n"
        "materialized_views_enabled: false\n"
        "concurrent_compactors: 2\n"
        "auto_snapshot: true\n"
        "seed_provider:\n"
        "  - class_name: org.apache.cassandra.locator.SimpleSeedProvider\n"
        "    parameters:\n"
        "      - seeds: \"127.0.0.1:7000\"\n"
        "some_future_option: 42\n";
    cr_assert_eq(parse(&c, y), 0);
    cr_assert_str_eq(c.cluster_name, "My Cluster");
    cr_assert_eq(c.cql.num_tokens, 256);
    cr_assert_str_eq(c.listen_address, "localhost");
    cr_assert_str_eq(c.rpc_address, "0.0.0.0");
    cr_assert_eq(c.native_port, 9142);
    cr_assert_str_eq(c.data_dir, "/var/lib/cassette/data");
    cr_assert_str_eq(c.commitlog_dir, "/var/lib/cassette/commitlog");
    cr_assert_eq(c.st.sync_mode, ST_SYNC_PERIODIC);
    cr_assert_eq(c.st.sync_period_ms, 10000);
    cr_assert_eq(c.st.segment_size, 64u << 20);
    cr_assert_eq(c.st.memtable_space, 2048ull << 20);
    cr_assert_eq(c.st.block_cache_size, 512u << 20);
    cr_assert_eq(c.max_frame_size, 16u << 20);
    cr_assert_eq(c.cql.tombstone_warn_threshold, 500);
    cr_assert_eq(c.cql.tombstone_failure_threshold, 50000);
    cr_assert_eq(c.cql.batch_size_warn_kb, 10);
    cr_assert_eq(c.cql.batch_size_fail_kb, 100);
    cr_assert_eq(c.authenticator, CONFIG_AUTH_PASSWORD);
    cr_assert(c.cql.cassandra_authorizer);
    cr_assert(!c.cql.materialized_views_enabled);
    cr_assert_eq(c.st.compaction_threads, 2);
    cr_assert(c.st.snapshot_on_truncate);
    cr_assert_eq(c.warnings, 1);   /* some_future_option */
    config_finish(&c, "/base");
    cr_assert_str_eq(c.listen_address, "127.0.0.1");   /* resolved for system.local */
    cr_assert_str_eq(c.st.data_dir, "/var/lib/cassette/data");
    cr_assert_str_eq(c.cql.cluster_name, "My Cluster");
    cr_assert(strstr(c.cql.config_text, "cluster_name\tMy Cluster\n") != NULL);
    cr_assert(strstr(c.cql.config_text, "commitlog_segment_size\t64MiB\n") != NULL);
    cr_assert(strstr(c.cql.config_text, "memtable_heap_space\t2GiB\n") != NULL);
    cr_assert(strstr(c.cql.config_text, "file_cache_size\t512MiB\n") != NULL);
    cr_assert(strstr(c.cql.config_text, "data_file_directories\t[/var/lib/cassette/data]\n") != NULL);
    cr_assert(strstr(c.cql.config_text, "native_transport_max_frame_size\t16MiB\n") != NULL);
    cr_assert(strstr(c.cql.config_text, "batch_size_warn_threshold\t10KiB\n") != NULL);
    cr_assert(!c.admin_port_set);
    /* Sorted by name, one line per setting (system_views.settings order). */
    char prev[128] = "";
    for (const char *p = c.cql.config_text; *p;) {
        const char *tab = strchr(p, '\t'), *nl = strchr(p, '\n');
        cr_assert(tab && nl && tab < nl);
        char name[128];
        snprintf(name, sizeof name, "%.*s", (int)(tab - p), p);
        cr_assert_gt(strcmp(name, prev), 0, "%s after %s", name, prev);
        strcpy(prev, name);
        p = nl + 1;
    }
    config_destroy(&c);
}

Test(server_config, legacy_suffixes)
{
    config c;
    const char *y =
        "commitlog_sync: group\n"
        "commitlog_sync_period_in_ms: 2000\n"
        "commitlog_sync_group_window_in_ms: 7\n"
        "commitlog_sync_wait_poll_us: 0\n"
        "commitlog_segment_size_in_mb: 8\n"
        "memtable_heap_space_in_mb: 64\n"
        "file_cache_size_in_mb: 96\n"
        "native_transport_max_frame_size_in_mb: 4\n"
        "batch_size_warn_threshold_in_kb: 6\n"
        "batch_size_fail_threshold_in_kb: 60\n"
        "enable_materialized_views: true\n"
        "authenticator: org.apache.cassandra.auth.AllowAllAuthenticator\n"
        "data_file_directories: [/d1, /d2]\n";
    cr_assert_eq(parse(&c, y), 0);
    cr_assert_eq(c.st.sync_mode, ST_SYNC_GROUP);
    cr_assert_eq(c.st.sync_period_ms, 2000);
    cr_assert_eq(c.st.sync_group_window_ms, 7);
    cr_assert_eq(c.commitlog_sync_wait_poll_us, 0);
    cr_assert_eq(c.st.segment_size, 8u << 20);
    cr_assert_eq(c.st.memtable_space, 64u << 20);
    cr_assert_eq(c.st.block_cache_size, 96u << 20);
    cr_assert_eq(c.max_frame_size, 4u << 20);
    cr_assert_eq(c.cql.batch_size_warn_kb, 6);
    cr_assert_eq(c.cql.batch_size_fail_kb, 60);
    cr_assert(c.cql.materialized_views_enabled);
    cr_assert_eq(c.authenticator, CONFIG_AUTH_ALLOW_ALL);
    cr_assert_str_eq(c.data_dir, "/d1");
    cr_assert_eq(c.warnings, 0);
    config_finish(&c, NULL);
    cr_assert_str_eq(c.commitlog_dir, "./commitlog");
    config_destroy(&c);
}

/* min(512 MiB, heap / 4), heap = max(min(RAM/2, 1 GiB), min(RAM/4, 8 GiB)) */
Test(server_config, default_file_cache_size_follows_cassandra)
{
    const uint64_t gib = 1ull << 30, mib = 1ull << 20;
    cr_assert_eq(config_default_file_cache_size(24 * gib), 512 * mib);   /* heap 6 GiB */
    cr_assert_eq(config_default_file_cache_size(64 * gib), 512 * mib);   /* heap 8 GiB */
    cr_assert_eq(config_default_file_cache_size(4 * gib), 256 * mib);    /* heap 1 GiB */
    cr_assert_eq(config_default_file_cache_size(2 * gib), 256 * mib);    /* heap 1 GiB */
    cr_assert_eq(config_default_file_cache_size(1 * gib), 128 * mib);    /* heap 512 MiB */
}

Test(server_config, defaults_and_data_dir)
{
    config c;
    config_defaults(&c);
    cr_assert_eq(c.native_port, 9042);
    cr_assert_eq(c.max_frame_size, 16u << 20);
    cr_assert_str_eq(c.cluster_name, "Test Cluster");
    /* file_cache_size: Cassandra's default for this machine's memory */
    cr_assert_eq(c.st.block_cache_size,
                 config_default_file_cache_size((uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE)));
    cr_assert_eq(c.commitlog_sync_wait_poll_us, 200);
    config_finish(&c, "/tmp/x");
    cr_assert_str_eq(c.st.data_dir, "/tmp/x/data");
    cr_assert_str_eq(c.st.commitlog_dir, "/tmp/x/commitlog");
    config_destroy(&c);
}

/* An empty file (a cs_buf that never grew: NULL data) is a valid,
 * empty configuration. */
Test(server_config, empty_file)
{
    char path[] = "/tmp/cassette-empty-yaml-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    close(fd);
    config c;
    char err[256] = "";
    config_defaults(&c);
    cr_assert_eq(config_load(&c, path, err, sizeof err), 0, "%s", err);
    cr_assert_eq(c.native_port, 9042);
    unlink(path);
    config_destroy(&c);
}

/* compaction_throughput: a DataRateSpec (64MiB/s default, KiB/s, B/s), a
 * bare number in MiB/s, and the legacy compaction_throughput_mb_per_sec. */
Test(server_config, compaction_throughput)
{
    config c;
    config_defaults(&c);
    cr_assert_eq(c.st.compaction_throughput, 64u << 20, "Cassandra 4.1's default");
    config_destroy(&c);
    static const struct { const char *text; uint64_t want; } ok[] = {
        { "compaction_throughput: 16MiB/s\n", 16u << 20 },
        { "compaction_throughput: 1536KiB/s\n", 1536u << 10 },
        { "compaction_throughput: 1000B/s\n", 1000 },
        { "compaction_throughput: 0MiB/s\n", 0 },
        { "compaction_throughput: 8\n", 8u << 20 },
        { "compaction_throughput_mb_per_sec: 4\n", 4u << 20 },
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        cr_assert_eq(parse(&c, ok[i].text), 0, "%s", ok[i].text);
        cr_assert_eq(c.st.compaction_throughput, ok[i].want, "%s", ok[i].text);
        config_destroy(&c);
    }
}

/* DurationSpec as nodetool snapshot --ttl reads it: LongNanosecondsBound
 * first (config/DurationSpec.java), then IntSecondsBound; messages as
 * Cassandra's. */
Test(server_config, duration_spec_as_cassandra)
{
    static const struct { const char *in; int min; long long max; const char *fmt; long long secs; } ok[] = {
        { "1h", CONFIG_NS, LLONG_MAX, "1h", 3600 },
        { "30m", CONFIG_NS, LLONG_MAX, "30m", 1800 },
        { "2d", CONFIG_S, INT32_MAX, "2d", 172800 },
        { "007s", CONFIG_S, INT32_MAX, "7s", 7 },
        { "5\xc2\xb5s", CONFIG_NS, LLONG_MAX, "5us", 0 },
        { "1500ms", CONFIG_NS, LLONG_MAX, "1500ms", 1 },
        { "0s", CONFIG_S, INT32_MAX, "0s", 0 },
        { "2147483646s", CONFIG_S, INT32_MAX, "2147483646s", 2147483646 },
        { "106751d", CONFIG_NS, LLONG_MAX, "106751d", 106751LL * 86400 },
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        config_duration d;
        char err[320] = "", f[48];
        cr_assert_eq(config_duration_spec(ok[i].in, ok[i].min, ok[i].max, &d, err, sizeof err), 0, "%s: %s",
                     ok[i].in, err);
        config_duration_format(&d, f, sizeof f);
        cr_assert_str_eq(f, ok[i].fmt);
        cr_assert_eq(config_duration_to(&d, CONFIG_S), ok[i].secs, "%s", ok[i].in);
    }
    static const char *const units_ns = "[NANOSECONDS, MICROSECONDS, MILLISECONDS, SECONDS, MINUTES, HOURS, DAYS]";
    static const struct { const char *in; int min; long long max; const char *msg; } bad[] = {
        { "1x", CONFIG_NS, LLONG_MAX, "Invalid duration: 1x Accepted units:%s where case matters and only "
                                      "non-negative values." },
        { "1H", CONFIG_NS, LLONG_MAX, "Invalid duration: 1H Accepted units:%s where case matters and only "
                                      "non-negative values." },
        { "-1h", CONFIG_NS, LLONG_MAX, "Invalid duration: -1h Accepted units:%s where case matters and only "
                                       "non-negative values." },
        { "1.5h", CONFIG_NS, LLONG_MAX, "Invalid duration: 1.5h Accepted units:%s where case matters and only "
                                        "non-negative values." },
        { "h", CONFIG_NS, LLONG_MAX, "Invalid duration: h Accepted units:%s where case matters and only "
                                     "non-negative values." },
        { "1h ", CONFIG_NS, LLONG_MAX, "Invalid duration: 1h  Accepted units:%s where case matters and only "
                                       "non-negative values." },
        { "99999999999999999999s", CONFIG_NS, LLONG_MAX, "For input string: \"99999999999999999999\"" },
        { "106752d", CONFIG_NS, LLONG_MAX, "Invalid duration: 106752d. It shouldn't be more than "
                                           "9223372036854775806 in nanoseconds" },
        { "500ms", CONFIG_S, INT32_MAX, "Invalid duration: 500ms Accepted units:[SECONDS, MINUTES, HOURS, DAYS]" },
        { "2147483647s", CONFIG_S, INT32_MAX, "Invalid duration: 2147483647s. It shouldn't be more than "
                                              "2147483646 in seconds" },
        { "30000d", CONFIG_S, INT32_MAX, "Invalid duration: 30000d. It shouldn't be more than 2147483646 in "
                                         "seconds" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        config_duration d;
        char err[320] = "", want[320];
        snprintf(want, sizeof want, bad[i].msg, units_ns);
        cr_assert_eq(config_duration_spec(bad[i].in, bad[i].min, bad[i].max, &d, err, sizeof err), CS_EINVAL,
                     "%s", bad[i].in);
        cr_assert_str_eq(err, want);
    }
}

/* auto_snapshot_ttl (4.1): an IntSecondsBound; listed in the settings. */
Test(server_config, auto_snapshot_ttl)
{
    config c;
    cr_assert_eq(parse(&c, "auto_snapshot: true\n"), 0);
    cr_assert(!c.st.auto_snapshot_has_ttl);
    config_finish(&c, "/tmp");
    cr_assert_null(strstr((const char *)c.settings.p, "auto_snapshot_ttl"));
    config_destroy(&c);
    cr_assert_eq(parse(&c, "auto_snapshot_ttl: 30d\n"), 0);
    cr_assert(c.st.auto_snapshot_has_ttl);
    cr_assert_eq(c.st.auto_snapshot_ttl_s, 30 * 86400);
    config_finish(&c, "/tmp");
    cr_assert(strstr((const char *)c.settings.p, "auto_snapshot_ttl\t30d\n"));
    config_destroy(&c);
}

Test(server_config, bad_values_are_errors)
{
    static const char *const bad[] = {
        "commitlog_sync: sometimes\n", "native_transport_port: ninety\n",
        "commitlog_sync_period: 10 fortnights\n", "auto_snapshot: maybe\n",
        "authenticator: KerberosAuthenticator\n", "authorizer: LdapAuthorizer\n", "memtable_heap_space: 12XB\n",
        "commitlog_sync_wait_poll_us: -1\n", "commitlog_sync_wait_poll_us: 1000001\n",
        "commitlog_sync_wait_poll_us: fast\n", "compaction_throughput: 64MiB\n",
        "compaction_throughput: 64MB/s\n", "compaction_throughput: -1MiB/s\n",
        "auto_snapshot_ttl: 30\n", "auto_snapshot_ttl: 10ms\n", "auto_snapshot_ttl: 1 h\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        config c;
        char err[256] = "";
        config_defaults(&c);
        cr_assert_eq(config_parse(&c, bad[i], strlen(bad[i]), err, sizeof err), CS_EINVAL, "%s", bad[i]);
        cr_assert(strstr(err, "line 1") != NULL, "%s", err);
        config_destroy(&c);
    }
    config c;
    char err[256];
    config_defaults(&c);
    cr_assert_eq(config_load(&c, "/nonexistent/cassandra.yaml", err, sizeof err), CS_EIO);
    config_destroy(&c);
}

Test(server_config, cassandra_authorizer_needs_an_authenticator)
{
    config c;
    char err[256] = "";
    config_defaults(&c);
    const char *y = "authorizer: org.apache.cassandra.auth.CassandraAuthorizer\n";
    cr_assert_eq(config_parse(&c, y, strlen(y), err, sizeof err), CS_EINVAL);
    cr_assert_str_eq(err, "AllowAllAuthenticator can't be used with CassandraAuthorizer");
    config_destroy(&c);
    config_defaults(&c);
    y = "authorizer: AllowAllAuthorizer\n";
    cr_assert_eq(config_parse(&c, y, strlen(y), err, sizeof err), 0);
    cr_assert(!c.cql.cassandra_authorizer);
    config_destroy(&c);
}

/* DatabaseDescriptor.checkForLowestAcceptedTimeouts: the seven request
 * timeouts under 10 ms are raised to 10 ms; the internode ones are not. */
Test(server_config, request_timeouts_floored_at_10ms)
{
    config c;
    cr_assert_eq(parse(&c, "read_request_timeout: 1ms\n"
                           "range_request_timeout: 9ms\n"
                           "write_request_timeout_in_ms: 0\n"
                           "counter_write_request_timeout: 2000us\n"
                           "cas_contention_timeout: 10ms\n"
                           "truncate_request_timeout: 5ms\n"
                           "request_timeout: 3ms\n"
                           "internode_tcp_connect_timeout: 2ms\n"), 0);
    const int64_t want[] = { 10, 10, 10, 10, 10, 10, 10 };
    for (int i = CQL_TIMEOUT_READ; i <= CQL_TIMEOUT_MISC; i++)
        cr_assert_eq(c.cql.timeout_ms[i], want[i], "%d: %lld", i, (long long)c.cql.timeout_ms[i]);
    cr_assert_eq(c.cql.timeout_ms[CQL_TIMEOUT_INTERNODE_CONNECT], 2);
    config_destroy(&c);
    cr_assert_eq(parse(&c, "read_request_timeout: 11ms\n"), 0);
    cr_assert_eq(c.cql.timeout_ms[CQL_TIMEOUT_READ], 11);
    config_destroy(&c);
}
