/*
 * test_cql_describe.c: ALTER/TYPE/INDEX/VIEW DDL and DESCRIBE output
 * (Cassandra 4.1's exact CREATE statement text) over a real engine.
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
    cr_assert_eq(cql_ctx_new(v->eng, &cc, &v->ctx), 0);
}

static void env_close(env *v)
{
    cql_ctx_free(v->ctx);
    st_engine_close(v->eng, true);
}

static void env_init(env *v)
{
    memset(v, 0, sizeof *v);
    snprintf(v->dir, sizeof v->dir, "/tmp/cs_desc_XXXXXX");
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

static int run(env *v, const char *q, cs_error *e, cql_result *r)
{
    cs_error_init(e);
    cql_stmt *st = cql_parse(q, strlen(q), e);
    if (!st) return CS_EUSER;
    int rc = st->kind == STMT_DESCRIBE ? cql_exec_describe(v->ctx, &v->sess, st, NULL, r, e)
                                       : cql_exec_ddl(v->ctx, &v->sess, st, r, e);
    cql_stmt_free(st);
    return rc;
}

static void ok(env *v, const char *q)
{
    cs_error e;
    cql_result r;
    cql_result_init(&r);
    cr_assert_eq(run(v, q, &e, &r), 0, "%s -> %s", q, e.msg);
    cql_result_destroy(&r);
}

static void fails(env *v, const char *q, const char *msg)
{
    cs_error e;
    cql_result r;
    cql_result_init(&r);
    cr_assert_neq(run(v, q, &e, &r), 0, "%s should fail", q);
    if (msg) cr_assert_str_eq(e.msg, msg);
    cql_result_destroy(&r);
}

/* DESCRIBE body contains `needle`. */
static void describe_has(env *v, const char *q, const char *needle)
{
    cs_error e;
    cql_result r;
    cql_result_init(&r);
    cr_assert_eq(run(v, q, &e, &r), 0, "%s -> %s", q, e.msg);
    cr_assert_not_null(memmem(r.body.p, r.body.len, needle, strlen(needle)), "%s lacks:\n%s", q, needle);
    cql_result_destroy(&r);
}

static int count_row(void *arg, const uint8_t **vals, const int32_t *lens)
{
    (*(int *)arg)++;
    return 0;
}

static const char *table_text =
    "CREATE TABLE ks.t (\n"
    "    a int,\n"
    "    b text,\n"
    "    c int,\n"
    "    s int static,\n"
    "    w text,\n"
    "    v map<text, int>,\n"
    "    PRIMARY KEY ((a, b), c)\n"
    ") WITH CLUSTERING ORDER BY (c DESC)\n"
    "    AND additional_write_policy = '99p'\n"
    "    AND bloom_filter_fp_chance = 0.01\n"
    "    AND caching = {'keys': 'ALL', 'rows_per_partition': 'NONE'}\n"
    "    AND cdc = false\n"
    "    AND comment = 'it''s'\n"
    "    AND compaction = {'class': 'org.apache.cassandra.db.compaction.SizeTieredCompactionStrategy', 'max_threshold': '32', 'min_threshold': '4'}\n"
    "    AND compression = {'chunk_length_in_kb': '16', 'class': 'org.apache.cassandra.io.compress.LZ4Compressor'}\n"
    "    AND memtable = 'default'\n"
    "    AND crc_check_chance = 1.0\n"
    "    AND default_time_to_live = 0\n"
    "    AND extensions = {}\n"
    "    AND gc_grace_seconds = 864000\n"
    "    AND max_index_interval = 2048\n"
    "    AND memtable_flush_period_in_ms = 0\n"
    "    AND min_index_interval = 128\n"
    "    AND read_repair = 'BLOCKING'\n"
    "    AND speculative_retry = '99p';";

Test(cql_describe, table_text_and_describe)
{
    size_t before = cs_alloc_count();
    env v;
    env_init(&v);
    ok(&v, "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}");
    ok(&v, "CREATE TABLE ks.t (a int, b text, c int, s int static, v map<text, int>, w text, PRIMARY KEY ((a, b), c)) "
           "WITH CLUSTERING ORDER BY (c DESC) AND comment = 'it''s'");
    sch_table *t = sch_table_find(cql_ctx_catalog(v.ctx), "ks", "t");
    cs_buf b;
    cs_buf_init(&b);
    sch__cql_table(t, false, &b);
    cr_assert_str_eq(sch__bufstr(&b), table_text);
    cs_buf_reset(&b);
    sch__cql_keyspace(t->ks, &b);
    cr_assert_str_eq(sch__bufstr(&b),
                     "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': '1'}  AND durable_writes = true;");
    cs_buf_destroy(&b);
    describe_has(&v, "DESCRIBE TABLE ks.t", table_text);
    describe_has(&v, "DESCRIBE KEYSPACES", "system_virtual_schema");
    describe_has(&v, "DESCRIBE KEYSPACE ks", "durable_writes = true;");
    describe_has(&v, "DESCRIBE CLUSTER", "Murmur3Partitioner");
    /* virtual rows: system.local has one row; sstable_tasks emits without error */
    int rows = 0;
    sch_table *loc = sch_table_find(cql_ctx_catalog(v.ctx), "system", "local");
    cr_assert_eq(loc->vtable_rows(v.ctx, loc, count_row, &rows), 0);
    cr_assert_eq(rows, 1);
    sch_table *tasks = sch_table_find(cql_ctx_catalog(v.ctx), "system_views", "sstable_tasks");
    cr_assert_eq(tasks->vtable_rows(v.ctx, tasks, count_row, &rows), 0);
    describe_has(&v, "DESCRIBE TABLE system_views.settings",
                 "/*\nWarning: Table system_views.settings is a virtual table and cannot be recreated with CQL.\n"
                 "Structure, for reference:\nVIRTUAL TABLE system_views.settings (\n    name text PRIMARY KEY,\n"
                 "    value text\n) WITH comment = 'current settings';\n*/");
    describe_has(&v, "DESCRIBE TABLE system.local", "CREATE TABLE system.local (\n    key text PRIMARY KEY,");
    fails(&v, "DESCRIBE TABLE ks.nope", "Table 'nope' not found in keyspace 'ks'");
    describe_has(&v, "DESCRIBE FULL SCHEMA", "CREATE TABLE system_schema.columns (");
    env_fini(&v);
    cr_assert_eq(cs_alloc_count(), before, "leaked %zu allocations", cs_alloc_count() - before);
}

Test(cql_describe, alter_type_index_view)
{
    env v;
    env_init(&v);
    sch_catalog *c = cql_ctx_catalog(v.ctx);
    ok(&v, "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}");
    ok(&v, "USE ks");
    ok(&v, "CREATE TYPE addr (street text, zip int)");
    fails(&v, "CREATE TYPE addr (x int)", "A user type with name 'addr' already exists");
    ok(&v, "CREATE TABLE p (id int PRIMARY KEY, home frozen<addr>, v int)");
    ok(&v, "CREATE TYPE zz (x int)");
    ok(&v, "CREATE TYPE aa (y frozen<zz>, z list<frozen<zz>>)");   /* loads only after zz */
    ok(&v, "CREATE KEYSPACE k2 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}");
    fails(&v, "CREATE TABLE k2.x (id int PRIMARY KEY, a frozen<ks.addr>)",
          "Statement on keyspace k2 cannot refer to a user type in keyspace ks; user types can only be used in the keyspace they are defined in");
    ok(&v, "ALTER TYPE addr ADD city text");
    cr_assert_eq(sch_type_find(c, "ks", "addr")->n_sub, 3);
    cr_assert_eq(sch_column_find(sch_table_find(c, "ks", "p"), "home")->type->n_sub, 3);
    fails(&v, "DROP TYPE addr", "Cannot drop user type 'ks.addr' as it is still used by tables p");
    ok(&v, "ALTER TABLE p ADD extra list<int>");
    cr_assert_not_null(sch_column_find(sch_table_find(c, "ks", "p"), "extra"));
    fails(&v, "ALTER TABLE p ADD v int", "Column with name 'v' already exists");
    ok(&v, "ALTER TABLE p DROP v");
    cr_assert_null(sch_column_find(sch_table_find(c, "ks", "p"), "v"));
    cr_assert_eq(sch_table_find(c, "ks", "p")->n_dropped, 1);
    fails(&v, "ALTER TABLE p DROP id", "Cannot drop PRIMARY KEY column id");
    ok(&v, "ALTER TABLE p WITH gc_grace_seconds = 100 AND comment = 'x'");
    cr_assert_eq(sch_table_find(c, "ks", "p")->gc_grace_s, 100);
    describe_has(&v, "DESCRIBE TABLE p WITH INTERNALS", "    v int\n) WITH ID = ");
    describe_has(&v, "DESCRIBE TABLE p WITH INTERNALS", "\nALTER TABLE ks.p DROP v USING TIMESTAMP ");
    ok(&v, "ALTER TABLE p RENAME id TO pid");
    cr_assert_not_null(sch_column_find(sch_table_find(c, "ks", "p"), "pid"));
    ok(&v, "CREATE TABLE q (k int, c int, x int, m map<int, int>, PRIMARY KEY (k, c))");
    ok(&v, "CREATE INDEX ON q (x)");
    ok(&v, "CREATE INDEX mi ON q (keys(m))");
    sch_table *q = sch_table_find(c, "ks", "q");
    cr_assert_eq(q->n_indexes, 2);
    cr_assert_str_eq(q->indexes[0]->name, "q_x_idx");
    cr_assert_str_eq(q->indexes[1]->target, "keys(m)");
    describe_has(&v, "DESCRIBE TABLE q", "CREATE INDEX q_x_idx ON ks.q (x);");
    fails(&v, "CREATE INDEX ON q (k)", NULL);
    ok(&v, "CREATE MATERIALIZED VIEW qv AS SELECT * FROM q WHERE x IS NOT NULL AND k IS NOT NULL AND c IS NOT NULL "
           "PRIMARY KEY (x, k, c)");
    sch_table *qv = sch_table_find(c, "ks", "qv");
    cr_assert(qv && qv->is_view);
    cr_assert_eq(q->n_views, 1);
    fails(&v, "DROP TABLE q", "Cannot drop a table when materialized views still depend on it (ks)");
    describe_has(&v, "DESCRIBE KEYSPACE ks", "CREATE MATERIALIZED VIEW ks.qv AS");
    describe_has(&v, "DESCRIBE MATERIALIZED VIEW qv", "    PRIMARY KEY (x, k, c)\n WITH CLUSTERING ORDER BY (k ASC, c ASC)\n    AND additional_write_policy");
    describe_has(&v, "DESCRIBE INDEX mi", "CREATE INDEX mi ON ks.q (keys(m));");
    describe_has(&v, "DESCRIBE TYPE addr", "CREATE TYPE ks.addr (\n    street text,\n    zip int,\n    city text\n);");
    describe_has(&v, "DESCRIBE TABLE q WITH INTERNALS", ") WITH ID = ");
    ok(&v, "ALTER MATERIALIZED VIEW qv WITH comment = 'view'");
    cr_assert_str_eq(sch_table_find(c, "ks", "qv")->comment, "view");
    fails(&v, "ALTER MATERIALIZED VIEW qv WITH default_time_to_live = 5", NULL);
    fails(&v, "ALTER TABLE qv WITH comment = 'x'", "Cannot use ALTER TABLE on a materialized view; use ALTER MATERIALIZED VIEW instead");
    fails(&v, "CREATE MATERIALIZED VIEW qv2 AS SELECT * FROM q WHERE x IS NOT NULL AND k IS NOT NULL PRIMARY KEY (x, k)",
          "Cannot create materialized view 'qv2' without primary key columns c from base table 'q'");

    /* persistence of all of it */
    env_close(&v);
    env_open(&v);
    c = cql_ctx_catalog(v.ctx);
    cr_assert_eq(sch_type_find(c, "ks", "addr")->n_sub, 3);
    cr_assert_not_null(sch_type_find(c, "ks", "aa"), "nested UDT reloaded in dependency order");
    cr_assert_eq(sch_type_find(c, "ks", "aa")->sub[0]->kind, CT_UDT);
    sch_table *p = sch_table_find(c, "ks", "p");
    cr_assert_neq(sch_dropped_us(p, sch__col_id("v")), INT64_MIN);
    cr_assert_eq(sch_dropped_us(p, sch__col_id("home")), INT64_MIN);
    cr_assert_not_null(p);
    cr_assert_eq(p->gc_grace_s, 100);
    cr_assert_eq(p->n_dropped, 1);
    cr_assert_not_null(sch_column_find(p, "pid"));
    q = sch_table_find(c, "ks", "q");
    cr_assert_eq(q->n_indexes, 2);
    cr_assert_eq(q->n_views, 1);
    cr_assert(sch_table_find(c, "ks", "qv")->view_base == q);
    v.sess.keyspace[0] = 0;
    ok(&v, "ALTER TABLE ks.q ADD y int");
    cr_assert_not_null(sch_column_find(sch_table_find(c, "ks", "qv"), "y"), "SELECT * views get added columns");
    ok(&v, "ALTER TABLE ks.q RENAME c TO cc");
    cr_assert_str_eq(sch_table_find(c, "ks", "qv")->view_where, "x IS NOT NULL AND k IS NOT NULL AND cc IS NOT NULL");
    cr_assert_not_null(sch_column_find(sch_table_find(c, "ks", "qv"), "cc"));
    ok(&v, "DROP MATERIALIZED VIEW ks.qv");
    ok(&v, "DROP INDEX ks.mi");
    ok(&v, "DROP TABLE ks.q");
    ok(&v, "DROP TABLE ks.p");
    ok(&v, "DROP TYPE ks.addr");
    fails(&v, "DROP TYPE ks.zz", "Cannot drop user type 'ks.zz' as it is still used by user types aa");
    ok(&v, "DROP TYPE ks.aa");
    ok(&v, "DROP TYPE ks.zz");
    env_fini(&v);
}

/* DESCRIBE pages by row offset: follow the paging state until the end and
 * count rows; a schema change in between invalidates the state. */
Test(cql_describe, paging)
{
    env v;
    env_init(&v);
    cs_error e;
    cql_stmt *st = cql_parse("DESCRIBE KEYSPACES", 18, &e);
    cr_assert_not_null(st);
    uint8_t ps[64], first[64];
    int32_t ps_len = -1, first_len = -1;
    int total = 0, pages = 0;
    for (;;) {
        cql_params p;
        memset(&p, 0, sizeof p);
        p.page_size = 3;
        p.paging_state = ps_len >= 0 ? ps : NULL;
        p.paging_state_len = ps_len;
        cql_result r;
        cql_result_init(&r);
        cs_error_init(&e);
        cr_assert_eq(cql_exec_describe(v.ctx, &v.sess, st, &p, &r, &e), 0, "%s", e.msg);
        cs_rd rd;
        cs_rd_init(&rd, r.body.p, r.body.len);
        cr_assert_eq(cs_rd_u32(&rd), 2);                 /* Rows */
        uint32_t flags = cs_rd_u32(&rd);
        uint32_t ncols = cs_rd_u32(&rd);
        cr_assert_eq(ncols, 3);
        ps_len = -1;
        if (flags & 0x0002) {
            const uint8_t *pp;
            ps_len = cs_rd_bytes(&rd, &pp);
            cr_assert(ps_len > 0 && ps_len <= (int32_t)sizeof ps);
            memcpy(ps, pp, (size_t)ps_len);
            if (first_len < 0) { memcpy(first, ps, (size_t)ps_len); first_len = ps_len; }
        }
        if (flags & 0x0001) { size_t n; cs_rd_string(&rd, &n); cs_rd_string(&rd, &n); }
        for (uint32_t i = 0; i < ncols; i++) {
            size_t n;
            if (!(flags & 0x0001)) { cs_rd_string(&rd, &n); cs_rd_string(&rd, &n); }
            cs_rd_string(&rd, &n);
            cs_rd_u16(&rd);                                /* varchar option */
        }
        total += (int)cs_rd_u32(&rd);
        pages++;
        cql_result_destroy(&r);
        if (ps_len < 0) break;
        cr_assert_lt(pages, 20);
    }
    cr_assert_eq(total, sch_keyspace_count(cql_ctx_catalog(v.ctx)));
    cr_assert_gt(pages, 2);
    /* a stale paging state after DDL */
    cql_params p;
    memset(&p, 0, sizeof p);
    p.page_size = 3;
    cql_result r;
    cql_result_init(&r);
    cs_error_init(&e);
    cr_assert_eq(cql_exec_describe(v.ctx, &v.sess, st, &p, &r, &e), 0);
    cql_result_destroy(&r);
    ok(&v, "CREATE KEYSPACE kx WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}");
    cr_assert_gt(first_len, 0);
    p.paging_state = first;       /* valid before the CREATE KEYSPACE, stale after */
    p.paging_state_len = first_len;
    cql_result_init(&r);
    cs_error_init(&e);
    cr_assert_neq(cql_exec_describe(v.ctx, &v.sess, st, &p, &r, &e), 0);
    cr_assert_str_eq(e.msg, "The schema has changed since the previous page of the DESCRIBE statement was computed. Please retry DESCRIBE.");
    cql_result_destroy(&r);
    cql_stmt_free(st);
    env_fini(&v);
}
