/*
 * test_cql_batch_size.c: the batch size behind batch_size_warn_threshold and
 * batch_size_fail_threshold (cql/batch_size.c), through cql_query on a real
 * engine: for each statement shape, the N of "Batch for [..] is of size N"
 * equals what Cassandra 4.1's IMutation.dataSize() gives, worked out by hand
 * in the comment of each case; the thresholds at their exact boundary; which
 * batches are checked at all (more than one mutation: one per keyspace and
 * partition key) and the unlogged batch's partition count.
 *
 * The terms of the arithmetic (cql/batch_size.c has the derivation):
 *   PU   partition update = rows + static row + 8 (partition deletion)
 *                           + range tombstones (4 + each: bounds + 12)
 *   row  clustering bytes + 8 liveness (16 expiring) + 13 row deletion
 *        + cells (16 + value + path) + complex columns (12 + their cells)
 *   the static row: 21 (8 + 13) when the batch writes none.
 * So an empty partition update is 8 + 21 = 29.
 */
#include "test_cql_fixture.h"

static void setup(void) { fixture_setup("batch_size"); }
static void teardown(void) { fixture_teardown(); }

/* Run q; 0 or CS_EUSER (g_err.msg).  The warnings go to g_warn. */
static int runq(const char *q)
{
    cql_result r;
    int rc = fixture_query(q, &r);
    cql_result_destroy(&r);
    return rc;
}

static void ok(const char *q)
{
    int rc = runq(q);
    cr_assert_eq(rc, 0, "%s -> %s", q, g_err.msg);
}

/* Thresholds in KiB (Cassandra's unit). */
static void thresholds(int warn_kb, int fail_kb)
{
    g_ctx->cfg.batch_size_warn_kb = warn_kb;
    g_ctx->cfg.batch_size_fail_kb = fail_kb;
}

/* N of the size warning of batch q, -1 without one (thresholds 0 and
 * 1 GiB: every checked batch warns). */
static long warned_size(const char *q)
{
    thresholds(0, 1 << 20);
    ok(q);
    const char *w = strstr(g_warn, " is of size ");
    if (!w)
        return -1;
    long n = strtol(w + strlen(" is of size "), NULL, 10);
    char tail[128];
    snprintf(tail, sizeof tail, " is of size %ld, exceeding specified threshold of 0 by %ld.", n, n);
    cr_assert(strstr(g_warn, tail) != NULL, "warn: %s", g_warn);
    return n;
}

/* The size of the partition updates of stmts: a logged batch of stmts and
 * one filler partition of its own (f, key 'filler': an INSERT of the key
 * alone, row 8 + 13 = 21, PU 21 + 21 + 8 = 50), so that there are two
 * mutations and the batch is checked. */
#define FILLER 50
static long size_of(const char *stmts)
{
    static char q[16384];
    snprintf(q, sizeof q, "BEGIN BATCH INSERT INTO f (k) VALUES ('filler'); %s APPLY BATCH", stmts);
    long n = warned_size(q);
    cr_assert_geq(n, FILLER, "%s: warn [%s]", stmts, g_warn);
    return n - FILLER;
}

/* The same for counter statements, the filler a counter partition of its
 * own (cf, key 'filler': row 8 + 13 + counter cell (16 + 36) = 73, PU
 * 73 + 21 + 8 = 102). */
#define CFILLER 102
static long counter_size_of(const char *stmts)
{
    static char q[16384];
    snprintf(q, sizeof q, "BEGIN COUNTER BATCH UPDATE cf SET n = n + 1 WHERE k = 'filler'; %s APPLY BATCH", stmts);
    long n = warned_size(q);
    cr_assert_geq(n, CFILLER, "%s: warn [%s]", stmts, g_warn);
    return n - CFILLER;
}

static void mkks(void)
{
    ok("CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}");
    ok("USE ks");
    ok("CREATE TABLE f (k text PRIMARY KEY)");
    ok("CREATE TABLE cf (k text PRIMARY KEY, n counter)");
}

TestSuite(batch_size, .init = setup, .fini = teardown, .timeout = 30);

Test(batch_size, insert_update_ttl_timestamp)
{
    mkks();
    ok("CREATE TABLE t (k int, c int, v int, PRIMARY KEY (k, c))");
    ok("CREATE TABLE nock (k int PRIMARY KEY, v int)");
    /* row: c 4 + liveness 8 + deletion 13 + cell v (16 + 4) = 45; PU 45 + 29 = 74 */
    cr_assert_eq(size_of("INSERT INTO t (k, c, v) VALUES (1, 1, 1);"), 74);
    /* UPDATE: no row marker, but the empty liveness still counts 8: 74 */
    cr_assert_eq(size_of("UPDATE t SET v = 1 WHERE k = 1 AND c = 1;"), 74);
    /* TTL: the INSERT's liveness is expiring, 16: 45 + 8 = 53; PU 82 */
    cr_assert_eq(size_of("INSERT INTO t (k, c, v) VALUES (1, 1, 1) USING TTL 100;"), 82);
    /* an expiring cell is no larger (ttl and expiry always count): 74 */
    cr_assert_eq(size_of("UPDATE t USING TTL 100 SET v = 1 WHERE k = 1 AND c = 1;"), 74);
    /* USING TIMESTAMP changes nothing: 74 */
    cr_assert_eq(size_of("INSERT INTO t (k, c, v) VALUES (1, 1, 1) USING TIMESTAMP 5;"), 74);
    /* v = null: a tombstone cell, 16 + 0: row 4 + 8 + 13 + 16 = 41; PU 70 */
    cr_assert_eq(size_of("INSERT INTO t (k, c, v) VALUES (1, 1, null);"), 70);
    /* INSERT JSON: the missing v is null too: 70 */
    cr_assert_eq(size_of("INSERT INTO t JSON '{\"k\": 1, \"c\": 1}';"), 70);
    /* the key alone: row 4 + 8 + 13 = 25; PU 54 */
    cr_assert_eq(size_of("INSERT INTO t (k, c) VALUES (1, 1);"), 54);
    /* no clustering columns: the row's clustering is empty, 0 bytes:
     * row 8 + 13 + 20 = 41; PU 70 */
    cr_assert_eq(size_of("INSERT INTO nock (k, v) VALUES (1, 1);"), 70);
    /* two clusterings, IN: two rows (a repeated one is one): 2 x 45 + 29 = 119 */
    cr_assert_eq(size_of("UPDATE t SET v = 1 WHERE k = 1 AND c IN (1, 2, 1);"), 119);
    /* two partition keys: two partition updates, 2 x 74 = 148 */
    cr_assert_eq(size_of("UPDATE t SET v = 1 WHERE k IN (1, 2) AND c = 1;"), 148);
}

Test(batch_size, compound_clustering_and_static)
{
    mkks();
    ok("CREATE TABLE t3 (k int, a int, b text, v int, PRIMARY KEY (k, a, b)) WITH CLUSTERING ORDER BY (a DESC, b ASC)");
    ok("CREATE TABLE ts (k int, c int, s int STATIC, v int, PRIMARY KEY (k, c))");
    /* Clustering.dataSize(): the components' value bytes, 4 + 3 (no
     * lengths, DESC or not): row 7 + 8 + 13 + 20 = 48; PU 77 */
    cr_assert_eq(size_of("INSERT INTO t3 (k, a, b, v) VALUES (1, 1, 'xyz', 1);"), 77);
    /* an empty text component counts 0: row 4 + 8 + 13 + 20 = 45; PU 74 */
    cr_assert_eq(size_of("INSERT INTO t3 (k, a, b, v) VALUES (1, 1, '', 1);"), 74);
    /* static only: the static row 0 + 8 + 13 + 20 = 41 instead of the
     * empty one's 21, no regular row: 41 + 8 = 49 */
    cr_assert_eq(size_of("UPDATE ts SET s = 1 WHERE k = 1;"), 49);
    cr_assert_eq(size_of("INSERT INTO ts (k, s) VALUES (1, 1);"), 49);
    /* both rows: 45 + 41 + 8 = 94 (the 94 Cassandra's own
     * PartitionUpdateTest.testMutationSize asserts for this shape) */
    cr_assert_eq(size_of("INSERT INTO ts (k, c, s, v) VALUES (1, 1, 1, 1);"), 94);
    /* a row with its key only (liveness) and the static row:
     * (4 + 8 + 13) + 41 + 8 = 74 */
    cr_assert_eq(size_of("INSERT INTO ts (k, c, s) VALUES (1, 1, 1);"), 74);
    /* DELETE s: a tombstone in the static row: (21 + 16) + 8 = 45 */
    cr_assert_eq(size_of("DELETE s FROM ts WHERE k = 1;"), 45);
}

Test(batch_size, deletions)
{
    mkks();
    ok("CREATE TABLE t (k int, c int, v int, PRIMARY KEY (k, c))");
    ok("CREATE TABLE t3 (k int, a int, b text, v int, PRIMARY KEY (k, a, b))");
    ok("CREATE TABLE nock (k int PRIMARY KEY, v int)");
    /* a row deletion: row 4 + 8 + 13 = 25 (the deletion's 13 count
     * whether or not there is one); PU 54 */
    cr_assert_eq(size_of("DELETE FROM t WHERE k = 1 AND c = 1;"), 54);
    /* a partition deletion: its 8 count whether or not there is one: 29 */
    cr_assert_eq(size_of("DELETE FROM t WHERE k = 1;"), 29);
    /* no clustering columns: a partition deletion too: 29 */
    cr_assert_eq(size_of("DELETE FROM nock WHERE k = 1;"), 29);
    /* a column: a tombstone cell: row 4 + 8 + 13 + 16 = 41; PU 70 */
    cr_assert_eq(size_of("DELETE v FROM t WHERE k = 1 AND c = 1;"), 70);
    /* a range: list 4 + (start 4 + end 4 + 12) = 24; PU 29 + 24 = 53 */
    cr_assert_eq(size_of("DELETE FROM t WHERE k = 1 AND c > 1 AND c <= 5;"), 53);
    /* an open range: the end bound has no values: 4 + (4 + 0 + 12) = 20; 49 */
    cr_assert_eq(size_of("DELETE FROM t WHERE k = 1 AND c > 5;"), 49);
    /* a clustering prefix: [a = 1, a = 1]: 4 + (4 + 4 + 12) = 24; 53 */
    cr_assert_eq(size_of("DELETE FROM t3 WHERE k = 1 AND a = 1;"), 53);
    /* a prefix and a slice: start (1, 'ab') 6, end (1) 4: 4 + 22 = 26; 55 */
    cr_assert_eq(size_of("DELETE FROM t3 WHERE k = 1 AND a = 1 AND b > 'ab';"), 55);
    /* IN then a slice: two ranges, 4 + 2 x (4 + 4 + 12) = 44; 73 */
    cr_assert_eq(size_of("DELETE FROM t3 WHERE k = 1 AND a IN (1, 2);"), 73);
    /* an empty range writes nothing, not even a partition update: the
     * filler's is the one mutation, and the batch is not checked */
    cr_assert_eq(warned_size("BEGIN BATCH INSERT INTO f (k) VALUES ('filler'); "
                             "DELETE FROM t WHERE k = 1 AND c > 5 AND c < 3; APPLY BATCH"), -1);
}

Test(batch_size, range_tombstones_normalized)
{
    mkks();
    ok("CREATE TABLE t (k int, c int, v int, PRIMARY KEY (k, c))");
    /* [1, 5]@10 then [3, 8]@20: the later one takes [3, 5]:
     * [1, 3)@10 [3, 8]@20: 4 + 2 x 20 = 44; PU 73 */
    cr_assert_eq(size_of("DELETE FROM t USING TIMESTAMP 10 WHERE k = 1 AND c >= 1 AND c <= 5;"
                         "DELETE FROM t USING TIMESTAMP 20 WHERE k = 1 AND c >= 3 AND c <= 8;"), 73);
    /* [1, 8]@10 then [3, 5]@20: split in three: 4 + 3 x 20 = 64; 93 */
    cr_assert_eq(size_of("DELETE FROM t USING TIMESTAMP 10 WHERE k = 1 AND c >= 1 AND c <= 8;"
                         "DELETE FROM t USING TIMESTAMP 20 WHERE k = 1 AND c >= 3 AND c <= 5;"), 93);
    /* [1, 8]@20 then [3, 5]@10: covered, nothing added: 4 + 20 = 24; 53 */
    cr_assert_eq(size_of("DELETE FROM t USING TIMESTAMP 20 WHERE k = 1 AND c >= 1 AND c <= 8;"
                         "DELETE FROM t USING TIMESTAMP 10 WHERE k = 1 AND c >= 3 AND c <= 5;"), 53);
    /* [1, 2]@5 [3, 4]@5 then [0, 10]@10: the new one in two pieces split
     * at the old start 3: [0, 3)@10 [3, 10]@10: 4 + 2 x 20 = 44; 73 */
    cr_assert_eq(size_of("DELETE FROM t USING TIMESTAMP 5 WHERE k = 1 AND c >= 1 AND c <= 2;"
                         "DELETE FROM t USING TIMESTAMP 5 WHERE k = 1 AND c >= 3 AND c <= 4;"
                         "DELETE FROM t USING TIMESTAMP 10 WHERE k = 1 AND c >= 0 AND c <= 10;"), 73);
    /* the same twice: one range: 53 */
    cr_assert_eq(size_of("DELETE FROM t WHERE k = 1 AND c > 1 AND c <= 5;"
                         "DELETE FROM t WHERE k = 1 AND c > 1 AND c <= 5;"), 53);
    /* a range and a partition deletion: both kept, 29 + 24 = 53 */
    cr_assert_eq(size_of("DELETE FROM t WHERE k = 1 AND c > 1 AND c <= 5; DELETE FROM t WHERE k = 1;"), 53);
}

Test(batch_size, rows_merged)
{
    mkks();
    ok("CREATE TABLE t (k int, c int, v text, w int, s set<int>, PRIMARY KEY (k, c))");
    /* one row written twice: merged, v reconciled: the later 'aaaa' wins:
     * row 4 + 8 + 13 + (16 + 4) = 45; PU 74 */
    cr_assert_eq(size_of("INSERT INTO t (k, c, v) VALUES (1, 1, 'aaaa') USING TIMESTAMP 10;"
                         "UPDATE t USING TIMESTAMP 5 SET v = 'bbbbbbbb' WHERE k = 1 AND c = 1;"), 74);
    /* the later 'bbbbbbbb' wins: 4 + 8 + 13 + 24 = 49; 78 */
    cr_assert_eq(size_of("INSERT INTO t (k, c, v) VALUES (1, 1, 'aaaa') USING TIMESTAMP 5;"
                         "UPDATE t USING TIMESTAMP 10 SET v = 'bbbbbbbb' WHERE k = 1 AND c = 1;"), 78);
    /* one timestamp (the batch's): the greater value wins: 78 */
    cr_assert_eq(size_of("INSERT INTO t (k, c, v) VALUES (1, 1, 'aaaa');"
                         "UPDATE t SET v = 'bbbbbbbb' WHERE k = 1 AND c = 1;"), 78);
    /* one timestamp, one expiring: the expiring cell wins (Cells.reconcile,
     * CASSANDRA-14592), the liveness is the INSERT's expiring one:
     * 4 + 16 + 13 + (16 + 4) = 53; 82 */
    cr_assert_eq(size_of("INSERT INTO t (k, c, v) VALUES (1, 1, 'aaaa') USING TTL 100;"
                         "UPDATE t SET v = 'bbbbbbbb' WHERE k = 1 AND c = 1;"), 82);
    /* different columns: both cells, one row: 4 + 8 + 13 + 20 + 20 = 65; 94 */
    cr_assert_eq(size_of("INSERT INTO t (k, c, v) VALUES (1, 1, 'aaaa');"
                         "UPDATE t SET w = 1 WHERE k = 1 AND c = 1;"), 94);
    /* two rows: 2 x 45 + 29 = 119 */
    cr_assert_eq(size_of("INSERT INTO t (k, c, v) VALUES (1, 1, 'aaaa');"
                         "INSERT INTO t (k, c, v) VALUES (1, 2, 'aaaa');"), 119);
    /* a later row deletion empties the liveness and drops the cell:
     * 4 + 8 + 13 = 25; 54 */
    cr_assert_eq(size_of("INSERT INTO t (k, c, v) VALUES (1, 1, 'aaaa') USING TIMESTAMP 10;"
                         "DELETE FROM t USING TIMESTAMP 20 WHERE k = 1 AND c = 1;"), 54);
    /* an expiring liveness emptied: 8, not 16: 54 */
    cr_assert_eq(size_of("INSERT INTO t (k, c, v) VALUES (1, 1, 'aaaa') USING TIMESTAMP 10 AND TTL 100;"
                         "DELETE FROM t USING TIMESTAMP 20 WHERE k = 1 AND c = 1;"), 54);
    /* an older row deletion shadows nothing: 4 + 8 + 13 + 20 = 45; 74 */
    cr_assert_eq(size_of("INSERT INTO t (k, c, v) VALUES (1, 1, 'aaaa') USING TIMESTAMP 30;"
                         "DELETE FROM t USING TIMESTAMP 20 WHERE k = 1 AND c = 1;"), 74);
    /* a set overwritten at 10 (complex deletion at 9), the row deleted at
     * 20: the deletion supersedes the complex one, the column goes:
     * 4 + 8 + 13 = 25; 54 */
    cr_assert_eq(size_of("UPDATE t USING TIMESTAMP 10 SET s = {1} WHERE k = 1 AND c = 1;"
                         "DELETE FROM t USING TIMESTAMP 20 WHERE k = 1 AND c = 1;"), 54);
    /* written at 30 (complex deletion at 29): it stays, with its cell:
     * 4 + 8 + 13 + 12 + (16 + 0 + 4) = 57; 86 */
    cr_assert_eq(size_of("UPDATE t USING TIMESTAMP 30 SET s = {1} WHERE k = 1 AND c = 1;"
                         "DELETE FROM t USING TIMESTAMP 20 WHERE k = 1 AND c = 1;"), 86);
}

Test(batch_size, collections_and_udts)
{
    mkks();
    ok("CREATE TYPE u (a int, b text)");
    ok("CREATE TABLE tc (k int PRIMARY KEY, l list<int>, s set<text>, m map<text, int>, x u, "
       "fl frozen<list<int>>, fx frozen<u>)");
    /* append: complex column 12 + 2 cells (16 + value 4 + path: the
     * element's timeuuid, 16) = 12 + 72 = 84; row 8 + 13 + 84 = 105; PU 134 */
    cr_assert_eq(size_of("UPDATE tc SET l = l + [1, 2] WHERE k = 1;"), 134);
    /* prepend: the same */
    cr_assert_eq(size_of("UPDATE tc SET l = [1, 2] + l WHERE k = 1;"), 134);
    /* overwrite: the complex deletion (12, counted once either way): 134 */
    cr_assert_eq(size_of("UPDATE tc SET l = [1, 2] WHERE k = 1;"), 134);
    /* INSERT: liveness 8 + 13 + 12 + (16 + 4 + 16) = 69; PU 98 */
    cr_assert_eq(size_of("INSERT INTO tc (k, l) VALUES (1, [1]);"), 98);
    /* l = null: the complex deletion alone: 8 + 13 + 12 = 33; PU 62 */
    cr_assert_eq(size_of("UPDATE tc SET l = null WHERE k = 1;"), 62);
    /* set: paths are the elements, values empty: 12 + (16 + 2) + (16 + 3)
     * = 49; row 21 + 49 = 70; PU 99 */
    cr_assert_eq(size_of("UPDATE tc SET s = s + {'ab', 'cde'} WHERE k = 1;"), 99);
    /* map: path the key, value the value: 12 + (16 + 4 + 2) = 34; row 55; PU 84 */
    cr_assert_eq(size_of("UPDATE tc SET m = m + {'ab': 1} WHERE k = 1;"), 84);
    cr_assert_eq(size_of("UPDATE tc SET m['ab'] = 1 WHERE k = 1;"), 84);
    /* an element's tombstone: 12 + (16 + 2) = 30; row 51; PU 80 */
    cr_assert_eq(size_of("DELETE m['ab'] FROM tc WHERE k = 1;"), 80);
    cr_assert_eq(size_of("UPDATE tc SET s = s - {'ab'} WHERE k = 1;"), 80);
    /* the column: a complex deletion: 12; row 33; PU 62 */
    cr_assert_eq(size_of("DELETE m FROM tc WHERE k = 1;"), 62);
    /* add and remove one element at one timestamp: the tombstone wins,
     * one cell: 80 */
    cr_assert_eq(size_of("UPDATE tc SET s = s + {'ab'} WHERE k = 1; UPDATE tc SET s = s - {'ab'} WHERE k = 1;"), 80);
    /* overwrite (deletion at ts - 1, cell at ts) and DELETE s (deletion at
     * ts): the cell is shadowed, the deletion stays: 62 */
    cr_assert_eq(size_of("UPDATE tc SET s = {'ab'} WHERE k = 1; DELETE s FROM tc WHERE k = 1;"), 62);
    /* UDT: fields a (16 + 4 + path 2) and b (16 + 2 + 2) under 12:
     * 54; row 8 + 13 + 54 = 75; PU 104 */
    cr_assert_eq(size_of("INSERT INTO tc (k, x) VALUES (1, {a: 1, b: 'xy'});"), 104);
    /* a null field has no cell: 12 + 22 = 34; row 55; PU 84 */
    cr_assert_eq(size_of("INSERT INTO tc (k, x) VALUES (1, {a: 1});"), 84);
    /* one field: 12 + 22; row 8 + 13 + 34 = 55; PU 84 */
    cr_assert_eq(size_of("UPDATE tc SET x.a = 5 WHERE k = 1;"), 84);
    /* a field's tombstone: 12 + (16 + 2) = 30; row 51; PU 80 */
    cr_assert_eq(size_of("DELETE x.b FROM tc WHERE k = 1;"), 80);
    /* frozen list: one cell, the serialized value 4 + 2 x (4 + 4) = 20:
     * row 8 + 13 + 36 = 57; PU 86 */
    cr_assert_eq(size_of("INSERT INTO tc (k, fl) VALUES (1, [1, 2]);"), 86);
    /* frozen UDT: one cell, (4 + 4) + (4 + 2) = 14: row 8 + 13 + 30 = 51; PU 80 */
    cr_assert_eq(size_of("INSERT INTO tc (k, fx) VALUES (1, {a: 1, b: 'xy'});"), 80);
    /* list discard (read before write): the stored [1, 2, 1] loses both
     * 1s: 12 + 2 x (16 + 16) = 76; row 97; PU 126 */
    ok("UPDATE tc SET l = [1, 2, 1] WHERE k = 7");
    cr_assert_eq(size_of("UPDATE tc SET l = l - [1] WHERE k = 7;"), 126);
    /* by index (the list is [2] now): one tombstone: 12 + 32 = 44; row
     * 65; PU 94 */
    cr_assert_eq(size_of("DELETE l[0] FROM tc WHERE k = 7;"), 94);
}

Test(batch_size, counters)
{
    mkks();
    ok("CREATE TABLE cn (k int, c int, a counter, b counter, PRIMARY KEY (k, c))");
    /* a counter update cell: 16 + 36 (CounterContext.createUpdate):
     * row 4 + 8 + 13 + 52 = 77; PU 106 */
    cr_assert_eq(counter_size_of("UPDATE cn SET a = a + 1 WHERE k = 1 AND c = 1;"), 106);
    /* the same counter twice: merged into one update: 106 */
    cr_assert_eq(counter_size_of("UPDATE cn SET a = a + 1 WHERE k = 1 AND c = 1;"
                                 "UPDATE cn SET a = a - 5 WHERE k = 1 AND c = 1;"), 106);
    /* two counters: 77 + 52 = 129; PU 158 */
    cr_assert_eq(counter_size_of("UPDATE cn SET a = a + 1, b = b + 2 WHERE k = 1 AND c = 1;"), 158);
    /* whatever the stored total, the update is 36 bytes */
    ok("UPDATE cn SET a = a + 123456789 WHERE k = 1 AND c = 1");
    cr_assert_eq(counter_size_of("UPDATE cn SET a = a + 1 WHERE k = 1 AND c = 1;"), 106);
    /* a tombstone beats the increment: row 4 + 8 + 13 + 16 = 41; PU 70 */
    cr_assert_eq(counter_size_of("UPDATE cn SET a = a + 1 WHERE k = 1 AND c = 1;"
                                 "DELETE a FROM cn WHERE k = 1 AND c = 1;"), 70);
}

Test(batch_size, indexes_and_views_not_counted)
{
    mkks();
    ok("CREATE TABLE tv (k int, c int, v int, PRIMARY KEY (k, c))");
    /* row 4 + 8 + 13 + 20 = 45; PU 74 */
    cr_assert_eq(size_of("INSERT INTO tv (k, c, v) VALUES (1, 1, 1);"), 74);
    ok("CREATE INDEX ON tv (v)");
    ok("CREATE MATERIALIZED VIEW mv AS SELECT * FROM tv WHERE v IS NOT NULL AND k IS NOT NULL "
       "AND c IS NOT NULL PRIMARY KEY (v, k, c)");
    /* verifyBatchSize sees the base mutations only: still 74 */
    cr_assert_eq(size_of("INSERT INTO tv (k, c, v) VALUES (2, 1, 1);"), 74);
}

Test(batch_size, which_batches_are_checked)
{
    mkks();
    ok("CREATE TABLE a (k int PRIMARY KEY, v int)");
    ok("CREATE TABLE b (k int PRIMARY KEY, v int)");
    ok("CREATE KEYSPACE ks2 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}");
    ok("CREATE TABLE ks2.a (k int PRIMARY KEY, v int)");
    /* one partition: one mutation, not checked */
    cr_assert_eq(warned_size("BEGIN BATCH INSERT INTO a (k, v) VALUES (1, 1); "
                             "UPDATE a SET v = 2 WHERE k = 1; APPLY BATCH"), -1);
    /* two tables, one key, one keyspace: one Mutation, not checked */
    cr_assert_eq(warned_size("BEGIN BATCH INSERT INTO a (k, v) VALUES (1, 1); "
                             "INSERT INTO b (k, v) VALUES (1, 1); APPLY BATCH"), -1);
    /* one key in two keyspaces: two mutations: 2 x (8 + 13 + 20 + 29) = 140 */
    cr_assert_eq(warned_size("BEGIN BATCH INSERT INTO a (k, v) VALUES (1, 1); "
                             "INSERT INTO ks2.a (k, v) VALUES (1, 1); APPLY BATCH"), 140);
    /* two keys: checked, and a key shared by two tables counted in both
     * partition updates: 3 x 70 = 210 */
    cr_assert_eq(warned_size("BEGIN UNLOGGED BATCH INSERT INTO a (k, v) VALUES (1, 1); "
                             "INSERT INTO b (k, v) VALUES (1, 1); INSERT INTO a (k, v) VALUES (2, 1); "
                             "APPLY BATCH"), 210);
    /* a statement outside a batch is never checked, even over two keys */
    cr_assert_eq(warned_size("UPDATE a SET v = 2 WHERE k IN (1, 2)"), -1);
    cr_assert_eq(warned_size("INSERT INTO a (k, v) VALUES (1, 1)"), -1);
}

Test(batch_size, threshold_boundaries)
{
    mkks();
    ok("CREATE TABLE kv (k int PRIMARY KEY, v text)");
    /* each INSERT: row 8 + 13 + (16 + len) = 37 + len; PU 66 + len.  Two
     * of them: 132 + len1 + len2. */
    static char q[8192];
    char v1[1100], v2[1100];
    int lens[][2] = { { 446, 446 }, { 446, 447 }, { 958, 958 }, { 958, 959 } };
    thresholds(1, 2);
    for (int i = 0; i < 4; i++) {
        memset(v1, 'x', (size_t)lens[i][0]);
        v1[lens[i][0]] = 0;
        memset(v2, 'y', (size_t)lens[i][1]);
        v2[lens[i][1]] = 0;
        snprintf(q, sizeof q, "BEGIN BATCH INSERT INTO kv (k, v) VALUES (%d, '%s'); "
                 "INSERT INTO kv (k, v) VALUES (%d, '%s'); APPLY BATCH", 10 * i, v1, 10 * i + 1, v2);
        int rc = runq(q);
        switch (i) {
        case 0:   /* 1024 = the warning threshold: nothing */
            cr_assert_eq(rc, 0, "%s", g_err.msg);
            cr_assert_eq(g_warn[0], 0, "warn: %s", g_warn);
            break;
        case 1:   /* 1025: the warning */
            cr_assert_eq(rc, 0, "%s", g_err.msg);
            cr_assert_str_eq(g_warn, "Batch for [ks.kv] is of size 1025, exceeding specified threshold "
                                     "of 1024 by 1.\n");
            break;
        case 2:   /* 2048 = the failure threshold: a warning only */
            cr_assert_eq(rc, 0, "%s", g_err.msg);
            cr_assert_str_eq(g_warn, "Batch for [ks.kv] is of size 2048, exceeding specified threshold "
                                     "of 1024 by 1024.\n");
            break;
        case 3:   /* 2049: refused, nothing written */
            cr_assert_neq(rc, 0);
            cr_assert_str_eq(g_err.msg, "Batch too large");
            break;
        }
    }
    thresholds(5, 50);
}

Test(batch_size, unlogged_partitions_counted_once)
{
    mkks();
    ok("CREATE TABLE a (k int PRIMARY KEY, v int)");
    ok("CREATE TABLE b (k int PRIMARY KEY, v int)");
    thresholds(5, 50);
    /* keys 0..10 over two tables, 0..5 in both: 11 distinct partition keys
     * (a DecoratedKey set): over the threshold of 10 */
    char q[8192];
    size_t n = (size_t)snprintf(q, sizeof q, "BEGIN UNLOGGED BATCH ");
    for (int i = 0; i <= 10; i++)
        n += (size_t)snprintf(q + n, sizeof q - n, "INSERT INTO a (k, v) VALUES (%d, 0); ", i);
    for (int i = 0; i <= 5; i++)
        n += (size_t)snprintf(q + n, sizeof q - n, "INSERT INTO b (k, v) VALUES (%d, 0); ", i);
    snprintf(q + n, sizeof q - n, "APPLY BATCH");
    ok(q);
    cr_assert(strstr(g_warn, "Unlogged batch covering 11 partitions detected against tables ") != NULL,
              "warn: %s", g_warn);
    /* keys 0..9 in both: 10, not over */
    n = (size_t)snprintf(q, sizeof q, "BEGIN UNLOGGED BATCH ");
    for (int i = 0; i <= 9; i++)
        n += (size_t)snprintf(q + n, sizeof q - n, "INSERT INTO a (k, v) VALUES (%d, 0); "
                              "INSERT INTO b (k, v) VALUES (%d, 0); ", i, i);
    snprintf(q + n, sizeof q - n, "APPLY BATCH");
    ok(q);
    cr_assert(strstr(g_warn, "Unlogged batch") == NULL, "warn: %s", g_warn);
}

/* The tables of the warnings are Cassandra's HashSet<String> of
 * "ks.table" (names quoted as CQL needs them) printed: in its iteration
 * order, by bucket of the Java hash (worked out with Python's
 * str.encode('utf-16-be') and the HashMap rules), not the batch's order. */
Test(batch_size, table_lists_in_hashset_order)
{
    mkks();
    ok("CREATE TABLE b (k int PRIMARY KEY, v int) WITH gc_grace_seconds = 0");
    ok("CREATE TABLE a (k int PRIMARY KEY, v int) WITH gc_grace_seconds = 0");
    ok("CREATE TABLE \"Big\" (k int PRIMARY KEY, v int)");
    /* buckets: ks.a 9, ks.b 14; each partition update 8 + 13 + 20 + 29 = 70 */
    thresholds(0, 1 << 20);
    ok("BEGIN BATCH INSERT INTO b (k, v) VALUES (1, 1); INSERT INTO a (k, v) VALUES (2, 1); APPLY BATCH");
    cr_assert(strstr(g_warn, "Executing a LOGGED BATCH on tables [ks.a, ks.b], configured with a "
                             "gc_grace_seconds of 0.") != NULL, "warn: %s", g_warn);
    cr_assert(strstr(g_warn, "\nBatch for [ks.a, ks.b] is of size 140, exceeding specified threshold of 0 by 140.\n")
              != NULL, "warn: %s", g_warn);
    /* a conditional batch builds no mutations that way (executeWithConditions):
     * no low gc_grace warning, whether it applies or not */
    ok("BEGIN BATCH INSERT INTO a (k, v) VALUES (3, 1) IF NOT EXISTS; INSERT INTO a (k, v) VALUES (3, 2); APPLY BATCH");
    cr_assert(strstr(g_warn, "LOGGED BATCH") == NULL, "warn: %s", g_warn);
    /* ks."Big" 6 */
    ok("BEGIN BATCH INSERT INTO \"Big\" (k, v) VALUES (1, 1); INSERT INTO \"Big\" (k, v) VALUES (2, 1); "
       "UPDATE \"Big\" SET v = 2 WHERE k = 1; APPLY BATCH");
    cr_assert_str_eq(g_warn, "Batch for [ks.\"Big\"] is of size 140, exceeding specified threshold of 0 by 140.\n");
    ok("BEGIN UNLOGGED BATCH INSERT INTO a (k, v) VALUES (1, 1); INSERT INTO \"Big\" (k, v) VALUES (2, 1); APPLY BATCH");
    cr_assert_str_eq(g_warn, "Batch for [ks.\"Big\", ks.a] is of size 140, exceeding specified threshold of 0 by 140.\n");
    /* the unlogged warning's list: the same set */
    thresholds(5, 50);
    char q[8192];
    size_t n = (size_t)snprintf(q, sizeof q, "BEGIN UNLOGGED BATCH ");
    for (int i = 0; i <= 10; i++)
        n += (size_t)snprintf(q + n, sizeof q - n, "INSERT INTO %s (k, v) VALUES (%d, 0); ", i % 2 ? "a" : "b", i);
    snprintf(q + n, sizeof q - n, "APPLY BATCH");
    ok(q);
    cr_assert(strstr(g_warn, "Unlogged batch covering 11 partitions detected against tables [ks.a, ks.b]. ") != NULL,
              "warn: %s", g_warn);
    /* 12 tables: capacity 16; 13: the set has grown to 32 buckets */
    for (int i = 0; i < 13; i++) {
        snprintf(q, sizeof q, "CREATE TABLE t%d (k int PRIMARY KEY, v int)", i);
        ok(q);
    }
    const char *want[] = {
        "[ks.t6, ks.t7, ks.t8, ks.t9, ks.t0, ks.t1, ks.t2, ks.t10, ks.t3, ks.t4, ks.t5, ks.t11]",
        "[ks.t10, ks.t12, ks.t11, ks.t6, ks.t7, ks.t8, ks.t9, ks.t0, ks.t1, ks.t2, ks.t3, ks.t4, ks.t5]",
    };
    for (int m = 12; m <= 13; m++) {
        n = (size_t)snprintf(q, sizeof q, "BEGIN BATCH ");
        for (int i = 0; i < m; i++)
            n += (size_t)snprintf(q + n, sizeof q - n, "INSERT INTO t%d (k, v) VALUES (%d, 0); ", i, i);
        snprintf(q + n, sizeof q - n, "APPLY BATCH");
        thresholds(0, 1 << 20);
        ok(q);
        char w[512];
        snprintf(w, sizeof w, "Batch for %s is of size %d, exceeding specified threshold of 0 by %d.\n",
                 want[m - 12], 70 * m, 70 * m);
        cr_assert_str_eq(g_warn, w);
    }
    thresholds(5, 50);
}
