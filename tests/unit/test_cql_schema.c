/*
 * test_cql_schema.c: the catalog over a real engine in a temp dir: system
 * keyspaces, DDL through cql_parse + cql_exec_ddl, persistence across a
 * close/reopen, key encodings.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cql/cql_int.h"
#include "cql/schema_int.h"
#include "common/alloc.h"

typedef struct env {
    char dir[256];
    st_engine *eng;
    cql_ctx *ctx;
    cql_session sess;
} env;

static void env_open(env *v)
{
    st_config sc;
    st_config_defaults(&sc);
    char data[300], clog[300];
    snprintf(data, sizeof data, "%s/data", v->dir);
    snprintf(clog, sizeof clog, "%s/commitlog", v->dir);
    sc.data_dir = data;
    sc.commitlog_dir = clog;
    cr_assert_eq(st_engine_open(&sc, &v->eng), 0);
    cql_config cc;
    cql_config_defaults(&cc);
    cc.config_text = "cluster_name: Test Cluster\nnum_tokens: 16\n";
    cr_assert_eq(cql_ctx_new(v->eng, &cc, &v->ctx), 0);
}

static void env_close(env *v)
{
    cql_ctx_free(v->ctx);
    st_engine_close(v->eng, true);
    v->ctx = NULL;
    v->eng = NULL;
}

static void env_init(env *v)
{
    memset(v, 0, sizeof *v);
    snprintf(v->dir, sizeof v->dir, "/tmp/cs_schema_XXXXXX");
    cr_assert_not_null(mkdtemp(v->dir));
    v->sess.protocol_version = 4;
    env_open(v);
}

static void env_fini(env *v)
{
    env_close(v);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", v->dir);
    cr_assert_eq(system(cmd), 0);
}

/* Run one statement through the catalog; returns rc, fills e. */
static int run(env *v, const char *q, cs_error *e, cql_result *r)
{
    cs_error_init(e);
    cql_stmt *st = cql_parse(q, strlen(q), e);
    if (!st) return CS_EUSER;
    int rc = cql_exec_ddl(v->ctx, &v->sess, st, r, e);
    cql_stmt_free(st);
    return rc;
}

static void ok(env *v, const char *q)
{
    cs_error e;
    cql_result r;
    cql_result_init(&r);
    int rc = run(v, q, &e, &r);
    cr_assert_eq(rc, 0, "%s -> %s", q, e.msg);
    cql_result_destroy(&r);
}

static void fails(env *v, const char *q, int code, const char *msg)
{
    cs_error e;
    cql_result r;
    cql_result_init(&r);
    int rc = run(v, q, &e, &r);
    cr_assert_neq(rc, 0, "%s should fail", q);
    cr_assert_eq(e.code, code, "%s: code %x (%s)", q, e.code, e.msg);
    if (msg) cr_assert_str_eq(e.msg, msg);
    cql_result_destroy(&r);
}

Test(cql_schema, system_keyspaces)
{
    env v;
    env_init(&v);
    sch_catalog *c = cql_ctx_catalog(v.ctx);
    cr_assert_not_null(sch_keyspace_find(c, "system"));
    cr_assert_not_null(sch_keyspace_find(c, "system_schema"));
    cr_assert_not_null(sch_keyspace_find(c, "system_views"));
    sch_table *local = sch_table_find(c, "system", "local");
    cr_assert_not_null(local);
    cr_assert(local->is_virtual);
    cr_assert_not_null(local->vtable_rows);
    cr_assert_eq(local->n_pk, 1);
    sch_table *cols = sch_table_find(c, "system_schema", "columns");
    cr_assert_not_null(cols);
    cr_assert_not_null(cols->st);
    cr_assert_eq(cols->n_ck, 2);
    cr_assert_str_eq(cols->ck[1]->name, "column_name");
    /* Cassandra's well-known id of system_schema.keyspaces */
    char s[37];
    cs_uuid u;
    memcpy(u.b, sch_table_find(c, "system_schema", "keyspaces")->id, 16);
    cs_uuid_format(&u, s);
    cr_assert_str_eq(s, "abac5682-dea6-31c5-b535-b3d6cffd0fb6");
    cr_assert_eq(v.ctx->n_tokens, 16);
    env_fini(&v);
}

Test(cql_schema, keyspace_table_lifecycle)
{
    env v;
    env_init(&v);
    sch_catalog *c = cql_ctx_catalog(v.ctx);
    ok(&v, "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}");
    sch_keyspace *k = sch_keyspace_find(c, "ks");
    cr_assert_not_null(k);
    cr_assert_str_eq(sch__kv_get(k->repl_k, k->repl_v, k->n_repl, "class"),
                     "org.apache.cassandra.locator.SimpleStrategy");
    fails(&v, "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
          CS_ERR_ALREADY_EXISTS, "Cannot add existing keyspace \"ks\"");
    ok(&v, "CREATE KEYSPACE IF NOT EXISTS ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}");
    ok(&v, "CREATE KEYSPACE k2 WITH replication = {'class': 'SimpleStrategy'}");   /* default_keyspace_rf */
    k = sch_keyspace_find(c, "k2");
    cr_assert_str_eq(sch__kv_get(k->repl_k, k->repl_v, k->n_repl, "replication_factor"), "1");
    fails(&v, "CREATE KEYSPACE k4 WITH replication = {'class': 'NetworkTopologyStrategy', 'dc9': 1}", CS_ERR_CONFIG,
          "Unrecognized strategy option {dc9} passed to NetworkTopologyStrategy for keyspace k4");
    fails(&v, "CREATE KEYSPACE k4 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 'x'}", CS_ERR_CONFIG,
          "For input string: \"x\"");
    ok(&v, "ALTER KEYSPACE k2 WITH replication = {'class': 'NetworkTopologyStrategy'}");
    k = sch_keyspace_find(c, "k2");
    cr_assert_str_eq(sch__kv_get(k->repl_k, k->repl_v, k->n_repl, "datacenter1"), "1");
    cr_assert_eq(k->n_repl, 2);
    ok(&v, "CREATE KEYSPACE k3 WITH replication = {'class': 'NetworkTopologyStrategy', 'replication_factor': 3} AND durable_writes = false");
    k = sch_keyspace_find(c, "k3");
    cr_assert_str_eq(sch__kv_get(k->repl_k, k->repl_v, k->n_repl, "datacenter1"), "3");
    cr_assert(!k->durable_writes);

    ok(&v, "CREATE TABLE ks.t (a int, b text, c int, s int static, v map<text, int>, PRIMARY KEY ((a, b), c)) "
           "WITH CLUSTERING ORDER BY (c DESC) AND comment = 'hi' AND compaction = {'class': 'LeveledCompactionStrategy'}");
    sch_table *t = sch_table_find(c, "ks", "t");
    cr_assert_not_null(t);
    cr_assert_eq(t->n_pk, 2);
    cr_assert_eq(t->n_ck, 1);
    cr_assert(t->ck[0]->desc);
    cr_assert_str_eq(t->cols[3].name, "s");
    cr_assert_eq(t->cols[3].kind, COL_STATIC);
    cr_assert_str_eq(t->comment, "hi");
    cr_assert_str_eq(sch__kv_get(t->compaction_k, t->compaction_v, t->n_compaction, "class"),
                     "org.apache.cassandra.db.compaction.LeveledCompactionStrategy");
    cr_assert_not_null(t->st);
    fails(&v, "CREATE TABLE ks.t (a int PRIMARY KEY)", CS_ERR_ALREADY_EXISTS,
          "Cannot add already existing table \"t\" to keyspace \"ks\"");
    fails(&v, "CREATE TABLE ks.u (a int PRIMARY KEY, s int static)", CS_ERR_INVALID,
          "Static columns are only useful (and thus allowed) if the table has at least one clustering column");
    fails(&v, "CREATE TABLE ks.u (a int PRIMARY KEY, c counter, d int)", CS_ERR_INVALID,
          "Cannot mix counter and non counter columns in the same table");
    fails(&v, "CREATE TABLE ks.u (a int PRIMARY KEY) WITH foo = 1", CS_ERR_SYNTAX, "Unknown property 'foo'");
    fails(&v, "CREATE TABLE nope.u (a int PRIMARY KEY)", CS_ERR_INVALID, "Keyspace 'nope' doesn't exist");
    fails(&v, "CREATE TABLE u (a int PRIMARY KEY)", CS_ERR_INVALID,
          "No keyspace has been specified. USE a keyspace, or explicitly specify keyspace.tablename");
    ok(&v, "USE ks");
    cr_assert_str_eq(v.sess.keyspace, "ks");
    fails(&v, "USE nope", CS_ERR_INVALID, "Keyspace 'nope' does not exist");
    ok(&v, "CREATE TABLE cnt (a int PRIMARY KEY, n counter)");
    cr_assert(sch_table_find(c, "ks", "cnt")->is_counter);
    fails(&v, "DROP TABLE ks.zz", CS_ERR_INVALID, "Table 'ks.zz' doesn't exist");
    ok(&v, "DROP TABLE IF EXISTS ks.zz");
    ok(&v, "DROP TABLE cnt");
    cr_assert_null(sch_table_find(c, "ks", "cnt"));
    fails(&v, "CREATE TABLE system.x (a int PRIMARY KEY)", CS_ERR_INVALID,
          "System keyspace 'system' is not user-modifiable");

    /* persistence */
    env_close(&v);
    env_open(&v);
    c = cql_ctx_catalog(v.ctx);
    t = sch_table_find(c, "ks", "t");
    cr_assert_not_null(t, "table survives restart");
    cr_assert_eq(t->n_pk, 2);
    cr_assert_eq(t->n_ck, 1);
    cr_assert(t->ck[0]->desc);
    cr_assert_str_eq(t->comment, "hi");
    cr_assert_eq(t->cols[3].kind, COL_STATIC);
    cr_assert_not_null(sch_keyspace_find(c, "k3"));
    cr_assert(!sch_keyspace_find(c, "k3")->durable_writes);
    cr_assert_null(sch_table_find(c, "ks", "cnt"));
    ok(&v, "DROP KEYSPACE k3");
    fails(&v, "DROP KEYSPACE k3", CS_ERR_INVALID, "Keyspace 'k3' doesn't exist");
    env_close(&v);
    env_open(&v);
    cr_assert_null(sch_keyspace_find(cql_ctx_catalog(v.ctx), "k3"));
    cr_assert_not_null(sch_table_find(cql_ctx_catalog(v.ctx), "ks", "t"));
    env_fini(&v);
}

/* Function statements judge the keyspace first (AlterSchemaStatement.execute):
 * native functions live in `system` (UFTest.testFunctionCreationAndDrop). */
Test(cql_schema, function_statements)
{
    env v;
    env_init(&v);
    ok(&v, "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}");
    fails(&v, "DROP FUNCTION system.now", CS_ERR_INVALID, "System keyspace 'system' is not user-modifiable");
    fails(&v, "DROP FUNCTION IF EXISTS system.now", CS_ERR_INVALID, "System keyspace 'system' is not user-modifiable");
    fails(&v, "DROP AGGREGATE system_schema.max", CS_ERR_INVALID, "System keyspace 'system_schema' is not user-modifiable");
    fails(&v, "CREATE FUNCTION system.f (a int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE java AS 'return a;'",
          CS_ERR_INVALID, "System keyspace 'system' is not user-modifiable");
    fails(&v, "CREATE FUNCTION ks.f (a int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE java AS 'return a;'",
          CS_ERR_INVALID, "User-defined functions are disabled in cassandra.yaml - set user_defined_functions_enabled=true to enable");
    fails(&v, "DROP FUNCTION ks.f", CS_ERR_INVALID, "Function 'ks.f' doesn't exist");
    fails(&v, "DROP FUNCTION ks.f(int, frozen<list<text>>)", CS_ERR_INVALID, "Function 'ks.f(int, frozen<list<text>>)' doesn't exist");
    fails(&v, "DROP AGGREGATE ks.a()", CS_ERR_INVALID, "Aggregate 'ks.a()' doesn't exist");
    ok(&v, "DROP FUNCTION IF EXISTS ks.f");
    env_fini(&v);
}

/* Compaction sub-options: their values are validated as Cassandra 4.1's
 * strategies validate them (AbstractCompactionStrategy, SizeTiered-,
 * TimeWindow-, LeveledCompactionStrategy(Options), CompactionParams),
 * with its messages, as ConfigurationException; valid ones reach the
 * engine's options, and ALTER replaces them. */
Test(cql_schema, compaction_option_values)
{
    env v;
    env_init(&v);
    sch_catalog *c = cql_ctx_catalog(v.ctx);
    ok(&v, "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}");
#define STCS(opts) "CREATE TABLE ks.u (k int PRIMARY KEY) WITH compaction = {'class': 'SizeTieredCompactionStrategy', " opts "}"
#define LCS(opts) "CREATE TABLE ks.u (k int PRIMARY KEY) WITH compaction = {'class': 'LeveledCompactionStrategy', " opts "}"
#define TWCS(opts) "CREATE TABLE ks.u (k int PRIMARY KEY) WITH compaction = {'class': 'TimeWindowCompactionStrategy', " opts "}"
    static const struct { const char *q, *msg; } bad[] = {
        { STCS("'tombstone_threshold': '-1'"), "tombstone_threshold must be greater than 0, but was -1.000000" },
        { STCS("'tombstone_threshold': 'abc'"), "abc is not a parsable int (base10) for tombstone_threshold" },
        { STCS("'tombstone_compaction_interval': '-5'"), "tombstone_compaction_interval must be greater than 0, but was -5" },
        { STCS("'tombstone_compaction_interval': '1.5'"), "1.5 is not a parsable int (base10) for tombstone_compaction_interval" },
        { STCS("'unchecked_tombstone_compaction': 'yes'"),
          "'unchecked_tombstone_compaction' should be either 'true' or 'false', not 'yes'" },
        { STCS("'log_all': 'maybe'"), "'log_all' should either be 'true' or 'false', not maybe" },
        { STCS("'enabled': 'on'"), "enabled should either be 'true' or 'false', not on" },
        { STCS("'min_sstable_size': '-1'"), "min_sstable_size must be non negative: -1" },
        { STCS("'min_sstable_size': '1k'"), "1k is not a parsable int (base10) for min_sstable_size" },
        { STCS("'bucket_low': 'x'"), "x is not a parsable float for bucket_low" },
        { STCS("'bucket_high': '0.5'"), "bucket_high value (0.5) is less than or equal to the bucket_low value (0.5)" },
        { STCS("'bucket_low': '2', 'bucket_high': '1'"), "bucket_high value (1.0) is less than or equal to the bucket_low value (2.0)" },
        { STCS("'min_threshold': '-1'"), "Invalid value -1 for 'min_threshold' compaction sub-option - must be an integer" },
        { STCS("'max_threshold': 'many'"), "Invalid value many for 'max_threshold' compaction sub-option - must be an integer" },
        { STCS("'min_threshold': '0'"), "Disabling compaction by setting compaction thresholds to 0 has been removed, "
                                        "set the compaction option 'enabled' to false instead." },
        { STCS("'min_threshold': '1'"), "Min compaction threshold cannot be less than 2 (got 1)" },
        { STCS("'min_threshold': '40'"), "Min compaction threshold (got 40) cannot be greater than max compaction threshold (got 32)" },
        { STCS("'provide_overlapping_tombstones': 'all'"),
          "Invalid value ALL for 'provide_overlapping_tombstones' compaction sub-option - must be one of the following [NONE, ROW, CELL]." },
        { STCS("'fanout_size': '4'"), "Properties specified [fanout_size] are not understood by SizeTieredCompactionStrategy" },
        { STCS("'bucket_high': '0.1', 'nope': '1'"), "bucket_high value (0.1) is less than or equal to the bucket_low value (0.5)" },
        { LCS("'sstable_size_in_mb': '0'"), "sstable_size_in_mb must be larger than 0, but was 0" },
        { LCS("'sstable_size_in_mb': 'big'"), "big is not a parsable int (base10) for sstable_size_in_mb" },
        { LCS("'fanout_size': '0'"), "fanout_size must be larger than 0, but was 0" },
        /* LeveledCompactionStrategy.validateOptions names the sstable size's value here */
        { LCS("'fanout_size': 'ten'"), "1 is not a parsable int (base10) for fanout_size" },
        { LCS("'sstable_size_in_mb': '64', 'fanout_size': 'ten'"), "64 is not a parsable int (base10) for fanout_size" },
        { LCS("'bucket_low': '3'"), "bucket_high value (1.5) is less than or equal to the bucket_low value (3.0)" },
        { TWCS("'compaction_window_unit': 'WEEKS'"), "WEEKS is not valid for compaction_window_unit" },
        { TWCS("'compaction_window_unit': 'hours'"), "hours is not valid for compaction_window_unit" },
        { TWCS("'compaction_window_size': '0'"), "0 must be greater than 1 for compaction_window_size" },
        { TWCS("'compaction_window_size': 'x'"), "x is not a parsable int (base10) for compaction_window_size" },
        { TWCS("'timestamp_resolution': 'DAYS'"), "DAYS is not valid for timestamp_resolution" },
        { TWCS("'expired_sstable_check_frequency_seconds': '-1'"),
          "expired_sstable_check_frequency_seconds must not be negative, but was -1" },
        { TWCS("'unsafe_aggressive_sstable_expiration': 'sure'"), "unsafe_aggressive_sstable_expiration is not 'true' or 'false' (sure)" },
        { TWCS("'unsafe_aggressive_sstable_expiration': 'true'"),
          "unsafe_aggressive_sstable_expiration is requested but not allowed, restart cassandra with "
          "-Dcassandra.allow_unsafe_aggressive_sstable_expiration=true to allow it" },
        { TWCS("'tombstone_threshold': '-0.5'"), "tombstone_threshold must be greater than 0, but was -0.500000" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) fails(&v, bad[i].q, CS_ERR_CONFIG, bad[i].msg);
    cr_assert_null(sch_table_find(c, "ks", "u"));
    /* Java's number syntax: whitespace, a suffix, an exponent */
    ok(&v, STCS("'tombstone_threshold': ' 0.5f ', 'bucket_low': '2e-1', 'bucket_high': '3', 'min_sstable_size': '+1024', "
                "'tombstone_compaction_interval': '1', 'unchecked_tombstone_compaction': 'TRUE', 'min_threshold': '2', "
                "'max_threshold': '8'"));
    st_table_opts o;
    sch__table_st_opts(sch_table_find(c, "ks", "u"), &o);
    cr_assert_eq(o.compaction, ST_COMPACT_STCS);
    cr_assert_float_eq(o.tombstone_threshold, 0.5, 1e-9);
    cr_assert_float_eq(o.bucket_low, 0.2, 1e-9);
    cr_assert_float_eq(o.bucket_high, 3.0, 1e-9);
    cr_assert_eq(o.min_sstable_bytes, 1024);
    cr_assert_eq(o.tombstone_interval_s, 1);
    cr_assert(o.unchecked_tombstone && o.tombstone_compactions);
    cr_assert(o.min_threshold == 2 && o.max_threshold == 8);
    ok(&v, "ALTER TABLE ks.u WITH compaction = {'class': 'LeveledCompactionStrategy', 'fanout_size': 4, "
           "'sstable_size_in_mb': 8, 'bucket_high': '2'} AND memtable_flush_period_in_ms = 60000");
    sch__table_st_opts(sch_table_find(c, "ks", "u"), &o);
    cr_assert(o.compaction == ST_COMPACT_LCS && o.lcs_fanout == 4 && o.lcs_sstable_size_mb == 8);
    cr_assert_float_eq(o.bucket_high, 2.0, 1e-9);
    cr_assert_float_eq(o.tombstone_threshold, 0.2, 1e-6, "ALTER replaces the map: defaults again");
    cr_assert_eq(o.tombstone_interval_s, 86400);
    cr_assert_eq(o.min_sstable_bytes, 50ll << 20);
    cr_assert_eq(o.flush_period_ms, 60000);
    fails(&v, "ALTER TABLE ks.u WITH compaction = {'class': 'LeveledCompactionStrategy', 'fanout_size': -2}", CS_ERR_CONFIG,
          "fanout_size must be larger than 0, but was -2");
    sch__table_st_opts(sch_table_find(c, "ks", "u"), &o);
    cr_assert_eq(o.lcs_fanout, 4, "a refused ALTER changes nothing");
    /* TWCS: tombstone compactions only with one of their options given
     * other than 'false' (TimeWindowCompactionStrategy's constructor) */
    ok(&v, "CREATE TABLE ks.w1 (k int PRIMARY KEY) WITH compaction = {'class': 'TimeWindowCompactionStrategy'}");
    sch__table_st_opts(sch_table_find(c, "ks", "w1"), &o);
    cr_assert(o.compaction == ST_COMPACT_TWCS && !o.tombstone_compactions && o.twcs_expired_check_s == 600);
    ok(&v, "CREATE TABLE ks.w2 (k int PRIMARY KEY) WITH compaction = {'class': 'TimeWindowCompactionStrategy', "
           "'unchecked_tombstone_compaction': 'false', 'expired_sstable_check_frequency_seconds': 5}");
    sch__table_st_opts(sch_table_find(c, "ks", "w2"), &o);
    cr_assert(!o.tombstone_compactions && o.twcs_expired_check_s == 5);
    ok(&v, "CREATE TABLE ks.w3 (k int PRIMARY KEY) WITH compaction = {'class': 'TimeWindowCompactionStrategy', "
           "'tombstone_threshold': '0.3'}");
    sch__table_st_opts(sch_table_find(c, "ks", "w3"), &o);
    cr_assert(o.tombstone_compactions);
    cr_assert_float_eq(o.tombstone_threshold, (double)0.3f, 1e-12, "a Java float");
    ok(&v, "CREATE TABLE ks.off (k int PRIMARY KEY) WITH compaction = {'class': 'SizeTieredCompactionStrategy', 'enabled': 'FALSE'}");
    sch__table_st_opts(sch_table_find(c, "ks", "off"), &o);
    cr_assert(!o.compaction_enabled, "Boolean.parseBoolean ignores case");
#undef STCS
#undef LCS
#undef TWCS
    env_fini(&v);
}

Test(cql_schema, identity_persists)
{
    env v;
    env_init(&v);
    cs_uuid h = v.ctx->host_id;
    int64_t t0 = v.ctx->tokens[0];
    env_close(&v);
    env_open(&v);
    cr_assert_eq(memcmp(h.b, v.ctx->host_id.b, 16), 0);
    cr_assert_eq(t0, v.ctx->tokens[0]);
    env_fini(&v);
}

Test(cql_schema, partition_key_encoding)
{
    env v;
    env_init(&v);
    ok(&v, "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}");
    ok(&v, "CREATE TABLE ks.t (a int, b text, c int, PRIMARY KEY ((a, b), c))");
    sch_table *t = sch_table_find(cql_ctx_catalog(v.ctx), "ks", "t");
    uint8_t a[4] = { 0, 0, 0, 1 };
    cql_value vals[2] = { { a, 4 }, { (const uint8_t *)"xy", 2 } };
    cs_buf b;
    cs_buf_init(&b);
    cr_assert_eq(sch_partition_key(t, vals, &b), 0);
    static const uint8_t want[] = { 0, 4, 0, 0, 0, 1, 0, 0, 2, 'x', 'y', 0 };
    cr_assert_eq(b.len, sizeof want);
    cr_assert_eq(memcmp(b.p, want, sizeof want), 0);
    cql_value back[2];
    cr_assert_eq(sch_partition_key_split(t, b.p, b.len, back), 0);
    cr_assert_eq(back[1].len, 2);
    cr_assert_eq(memcmp(back[1].p, "xy", 2), 0);
    cs_buf_destroy(&b);
    env_fini(&v);
}

Test(cql_schema, clustering_key_encoding)
{
    env v;
    env_init(&v);
    ok(&v, "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}");
    ok(&v, "CREATE TABLE ks.t (k int, c1 int, c2 text, v int, PRIMARY KEY (k, c1, c2)) WITH CLUSTERING ORDER BY (c1 ASC, c2 DESC)");
    sch_table *t = sch_table_find(cql_ctx_catalog(v.ctx), "ks", "t");
    uint8_t one[4] = { 0, 0, 0, 1 }, two[4] = { 0, 0, 0, 2 };
    cql_value a[2] = { { one, 4 }, { (const uint8_t *)"b", 1 } };
    cql_value b[2] = { { two, 4 }, { (const uint8_t *)"a", 1 } };
    cql_value c[2] = { { one, 4 }, { (const uint8_t *)"c", 1 } };
    cs_buf ka, kb, kc;
    cs_buf_init(&ka); cs_buf_init(&kb); cs_buf_init(&kc);
    cr_assert_eq(sch_clustering_key(t, a, 2, &ka), 0);
    cr_assert_eq(sch_clustering_key(t, b, 2, &kb), 0);
    cr_assert_eq(sch_clustering_key(t, c, 2, &kc), 0);
    cr_assert_eq(ka.p[0], CK_COMPONENT);
    /* c1 ascending: (1, *) < (2, *); c2 descending: (1,'c') < (1,'b') */
    size_t n = ka.len < kb.len ? ka.len : kb.len;
    cr_assert_lt(memcmp(ka.p, kb.p, n), 0);
    n = ka.len < kc.len ? ka.len : kc.len;
    cr_assert_gt(memcmp(ka.p, kc.p, n), 0);
    /* decode back */
    cs_buf store;
    cs_buf_init(&store);
    size_t off[2];
    int32_t len[2];
    cr_assert_eq(sch_clustering_decode(t, ka.p, ka.len, &store, off, len), 0);
    cr_assert_eq(len[0], 4);
    cr_assert_eq(memcmp(store.p + off[0], one, 4), 0);
    cr_assert_eq(len[1], 1);
    cr_assert_eq(store.p[off[1]], 'b');
    /* a prefix decodes the missing components as null */
    cs_buf_reset(&store);
    cs_buf pre;
    cs_buf_init(&pre);
    cr_assert_eq(sch_clustering_key(t, a, 1, &pre), 0);
    cr_assert_eq(sch_clustering_decode(t, pre.p, pre.len, &store, off, len), 0);
    cr_assert_eq(len[1], -1);
    cs_buf_destroy(&pre); cs_buf_destroy(&store);
    cs_buf_destroy(&ka); cs_buf_destroy(&kb); cs_buf_destroy(&kc);
    env_fini(&v);
}

Test(cql_schema, truncate_alter_keyspace_and_no_leaks)
{
    size_t before = cs_alloc_count();
    env v;
    env_init(&v);
    sch_catalog *c = cql_ctx_catalog(v.ctx);
    uint8_t ver0[16], ver1[16];
    sch_version(c, ver0);
    ok(&v, "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}");
    sch_version(c, ver1);
    cr_assert_neq(memcmp(ver0, ver1, 16), 0, "schema version changes with DDL");
    ok(&v, "ALTER KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 2} AND durable_writes = false");
    sch_keyspace *k = sch_keyspace_find(c, "ks");
    cr_assert_str_eq(sch__kv_get(k->repl_k, k->repl_v, k->n_repl, "datacenter1"), "2");
    cr_assert(!k->durable_writes);
    fails(&v, "ALTER KEYSPACE system WITH durable_writes = false", CS_ERR_INVALID,
          "System keyspace 'system' is not user-modifiable");
    fails(&v, "ALTER KEYSPACE nope WITH durable_writes = false", CS_ERR_INVALID, "Keyspace 'nope' doesn't exist");
    ok(&v, "CREATE TABLE ks.t (k int PRIMARY KEY, v int) WITH compaction = {'class': 'TimeWindowCompactionStrategy', "
           "'compaction_window_unit': 'HOURS', 'compaction_window_size': 2}");
    st_table_opts o;
    sch__table_st_opts(sch_table_find(c, "ks", "t"), &o);
    cr_assert_eq(o.compaction, ST_COMPACT_TWCS);
    cr_assert_eq(o.twcs_window_s, 7200);
    ok(&v, "TRUNCATE ks.t");
    ok(&v, "TRUNCATE TABLE ks.t");
    fails(&v, "TRUNCATE ks.nope", CS_ERR_INVALID, "table nope does not exist");
    fails(&v, "CREATE TABLE ks.u (k int PRIMARY KEY) WITH compaction = {'class': 'Nope'}", CS_ERR_CONFIG,
          "Unable to find compaction strategy class 'org.apache.cassandra.db.compaction.Nope'");
    ok(&v, "CREATE TABLE ks.sr (k int PRIMARY KEY) WITH speculative_retry = '99.50PERCENTILE' AND additional_write_policy = 'none'");
    cr_assert_str_eq(sch_table_find(c, "ks", "sr")->speculative_retry, "99.5p");
    cr_assert_str_eq(sch_table_find(c, "ks", "sr")->additional_write_policy, "NEVER");
    ok(&v, "ALTER TABLE ks.sr WITH speculative_retry = '25ms'");
    cr_assert_str_eq(sch_table_find(c, "ks", "sr")->speculative_retry, "25ms");
    fails(&v, "ALTER TABLE ks.sr WITH speculative_retry = 'soon'", CS_ERR_CONFIG,
          "Invalid value soon for option 'speculative_retry'");
    fails(&v, "CREATE TABLE ks.u (k int PRIMARY KEY) WITH compaction = {'class': 'LeveledCompactionStrategy', 'foo': 1}",
          CS_ERR_CONFIG, "Properties specified [foo] are not understood by LeveledCompactionStrategy");
    fails(&v, "CREATE TABLE ks.u (k int, c int, PRIMARY KEY (k, c)) WITH CLUSTERING ORDER BY (k DESC)", CS_ERR_INVALID,
          "Only clustering key columns can be defined in CLUSTERING ORDER directive: [k] are not clustering columns");
    fails(&v, "CREATE TABLE ks.u (k int, v int)", CS_ERR_INVALID,
          "No PRIMARY KEY specifed for table 'u' (exactly one required)");
    fails(&v, "CREATE TABLE ks.u (k list<int> PRIMARY KEY)", CS_ERR_INVALID,
          "Invalid non-frozen collection type list<int> for PRIMARY KEY column 'k'");
    /* column ids are 32-bit name hashes: a collision is refused, and ALTER rolls back */
    fails(&v, "CREATE TABLE ks.coll (k int PRIMARY KEY, c102101 int, c333857 int)", CS_ERR_INVALID,
          "Column names 'c102101' and 'c333857' collide in this implementation's column id space; rename one");
    ok(&v, "CREATE TABLE ks.coll (k int PRIMARY KEY, c102101 int)");
    fails(&v, "ALTER TABLE ks.coll ADD c333857 int", CS_ERR_INVALID, NULL);
    cr_assert_eq(sch_table_find(c, "ks", "coll")->n_cols, 2);
    ok(&v, "ALTER TABLE ks.coll ADD other int");
    cr_assert_eq(sch_table_find(c, "ks", "coll")->n_cols, 3);
    ok(&v, "DROP KEYSPACE ks");
    env_fini(&v);
    cr_assert_eq(cs_alloc_count(), before, "leaked %zu allocations", cs_alloc_count() - before);
}

/* Fail the Nth allocation of a DDL statement for N = 1, 2, ...: every run
 * must either succeed or report an error, never crash. */
Test(cql_schema, ddl_under_allocation_failures)
{
    env v;
    env_init(&v);
    ok(&v, "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}");
    ok(&v, "CREATE TYPE ks.u (a int, b text)");
    static const char *const stmts[] = {
        "CREATE TABLE ks.t%d (a int, b text, c int, s int static, m map<text, int>, x frozen<u>, PRIMARY KEY ((a, b), c)) "
        "WITH CLUSTERING ORDER BY (c DESC) AND comment = 'c'",
        "ALTER TABLE ks.base ADD n%d int",
        "CREATE INDEX i%d ON ks.base (v)",
        "DESCRIBE KEYSPACE ks",
    };
    ok(&v, "CREATE TABLE ks.base (k int PRIMARY KEY, v int)");
    int id = 0;
    for (size_t s = 0; s < CS_ARRAY_LEN(stmts); s++) {
        for (int n = 1; n < 400; n++) {
            char q[512];
            snprintf(q, sizeof q, stmts[s], ++id);
            cs_error e;
            cs_error_init(&e);
            cql_stmt *st = cql_parse(q, strlen(q), &e);
            cr_assert_not_null(st, "%s: %s", q, e.msg);
            cql_result r;
            cql_result_init(&r);
            cs_alloc_fail_nth(n);
            int rc = st->kind == STMT_DESCRIBE ? cql_exec_describe(v.ctx, &v.sess, st, NULL, &r, &e)
                                               : cql_exec_ddl(v.ctx, &v.sess, st, &r, &e);
            cs_alloc_fail_nth(0);
            cql_result_destroy(&r);
            cql_stmt_free(st);
            (void)rc;
        }
    }
    /* the catalog still works and persists */
    ok(&v, "CREATE TABLE ks.after (k int PRIMARY KEY)");
    env_close(&v);
    env_open(&v);
    cr_assert_not_null(sch_table_find(cql_ctx_catalog(v.ctx), "ks", "after"));
    env_fini(&v);
}

Test(cql_schema, java_double_text)
{
    static const struct { double d; const char *s; } cases[] = {
        { 0.01, "0.01" }, { 1.0, "1.0" }, { 0.1, "0.1" }, { 0.0001, "1.0E-4" }, { 0.00015, "1.5E-4" },
        { 12345678.0, "1.2345678E7" }, { 0.5, "0.5" }, { 100.0, "100.0" }, { 0.0, "0.0" },
    };
    for (size_t i = 0; i < CS_ARRAY_LEN(cases); i++) {
        cs_buf b;
        cs_buf_init(&b);
        sch__put_double(&b, cases[i].d);
        cr_assert_str_eq(sch__bufstr(&b), cases[i].s);
        cs_buf_destroy(&b);
    }
}

/* Damaged schema rows (a key column with an impossible position, a type
 * that does not parse) must not crash startup: the table is skipped. */
Test(cql_schema, damaged_schema_rows)
{
    env v;
    env_init(&v);
    ok(&v, "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}");
    ok(&v, "CREATE TABLE ks.bad (a int PRIMARY KEY, v int)");
    ok(&v, "CREATE TABLE ks.good (a int PRIMARY KEY, v int)");
    sch_catalog *c = cql_ctx_catalog(v.ctx);
    sch_table *cols = sch_table_find(c, "system_schema", "columns");
    st_mutation *m = st_mutation_new();
    const char *names[2][2] = { { "bad", "zz" }, { "bad", "ww" } };
    for (int i = 0; i < 2; i++) {
        cql_value ck[2] = { { (const uint8_t *)names[i][0], 3 }, { (const uint8_t *)names[i][1], 2 } };
        cs_buf k;
        cs_buf_init(&k);
        cr_assert_eq(sch_clustering_key(cols, ck, 2, &k), 0);
        st_mut_partition(m, cols->st, (const uint8_t *)"ks", 2);
        st_mut_row(m, k.p, (uint32_t)k.len, 0);
        int64_t ts = cs_write_ts_us();
        st_mut_row_liveness(m, (st_liveness){ ts, 0, 0 });
        uint8_t pos[4] = { 0, 0, 0, 7 };
        const char *kind = "partition_key", *type = i ? "no_such_type<" : "int";
        st_cell ce = { 0 };
        ce.ts_us = ts;
        ce.col = sch__col_id("kind"); ce.val = (const uint8_t *)kind; ce.val_len = (uint32_t)strlen(kind);
        st_mut_cell(m, &ce);
        ce.col = sch__col_id("position"); ce.val = pos; ce.val_len = 4;
        st_mut_cell(m, &ce);
        ce.col = sch__col_id("type"); ce.val = (const uint8_t *)type; ce.val_len = (uint32_t)strlen(type);
        st_mut_cell(m, &ce);
        cs_buf_destroy(&k);
    }
    cr_assert_eq(st_write(v.eng, m, NULL), 0);
    st_mutation_free(m);
    env_close(&v);
    env_open(&v);
    c = cql_ctx_catalog(v.ctx);
    cr_assert_null(sch_table_find(c, "ks", "bad"), "damaged table skipped");
    cr_assert_not_null(sch_table_find(c, "ks", "good"));
    env_fini(&v);
}
