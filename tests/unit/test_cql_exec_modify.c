/*
 * test_cql_exec_modify.c: the write side (INSERT/UPDATE/DELETE, collections,
 * counters, BATCH, LWT) through cql_query on a real engine in a temp dir,
 * read back with SELECT (cql_query) and directly with st_scan.
 */
#include "test_cql_fixture.h"

static void setup(void) { fixture_setup("exec_modify"); }
static void teardown(void) { fixture_teardown(); }

/* Run q; returns 0 or CS_EUSER (message in g_err.msg).  Rows are rendered
 * into out (one line per row, values separated by '|', via ctype_format_cql). */
static int runq(const char *q, char *out, size_t outn)
{
    cql_result r;
    int rc = fixture_query(q, &r);
    if (out) {
        out[0] = 0;
        size_t len = 0;
        cs_rd rd;
        cs_rd_init(&rd, r.body.p, r.body.len);
        if (rc == 0 && cs_rd_u32(&rd) == 2) {
            uint32_t flags = cs_rd_u32(&rd);
            int ncol = (int)cs_rd_u32(&rd);
            size_t n;
            if (flags & 2) cs_rd_bytes(&rd, NULL);
            if (flags & 1) { cs_rd_string(&rd, &n); cs_rd_string(&rd, &n); }
            ctype *types[64];
            for (int i = 0; i < ncol && i < 64; i++) {
                if (!(flags & 1)) { cs_rd_string(&rd, &n); cs_rd_string(&rd, &n); }
                const char *nm = cs_rd_string(&rd, &n);
                len += (size_t)snprintf(out + len, outn - len, "%s%.*s", i ? "|" : "", (int)n, nm);
                types[i] = ctype_decode_option(&rd);
            }
            len += (size_t)snprintf(out + len, outn - len, "\n");
            int nrows = (int)cs_rd_u32(&rd);
            for (int j = 0; j < nrows && !rd.err; j++) {
                for (int i = 0; i < ncol; i++) {
                    const uint8_t *vp = NULL;
                    int32_t vl = cs_rd_bytes(&rd, &vp);
                    cs_buf b;
                    cs_buf_init(&b);
                    if (!types[i]) cs_buf_put(&b, "?", 1);
                    else fmt(types[i], vp, vl, &b);
                    len += (size_t)snprintf(out + len, outn - len, "%s%.*s", i ? "|" : "", (int)b.len, (char *)b.p);
                    cs_buf_destroy(&b);
                }
                len += (size_t)snprintf(out + len, outn - len, "\n");
            }
            for (int i = 0; i < ncol && i < 64; i++)
                if (types[i]) ctype_unref(types[i]);
        }
    }
    cql_result_destroy(&r);
    return rc;
}

static void ok(const char *q)
{
    int rc = runq(q, NULL, 0);
    cr_assert_eq(rc, 0, "%s -> %s", q, g_err.msg);
}

static void fails(const char *q, const char *msg)
{
    int rc = runq(q, NULL, 0);
    cr_assert_neq(rc, 0, "%s should fail", q);
    cr_assert(strstr(g_err.msg, msg) != NULL, "%s: got [%s], want [%s]", q, g_err.msg, msg);
}

/* SELECT and compare the rendered rows (without the header line). */
static void rows(const char *q, const char *want)
{
    static char out[16384];
    int rc = runq(q, out, sizeof out);
    cr_assert_eq(rc, 0, "%s -> %s", q, g_err.msg);
    const char *body = strchr(out, '\n');
    body = body ? body + 1 : out;
    cr_assert_str_eq(body, want, "%s: got [%s] want [%s]", q, body, want);
}

/* Full output (header + rows). */
static void result(const char *q, const char *want)
{
    static char out[16384];
    int rc = runq(q, out, sizeof out);
    cr_assert_eq(rc, 0, "%s -> %s", q, g_err.msg);
    cr_assert_str_eq(out, want, "%s: got [%s] want [%s]", q, out, want);
}

static void mkks(void)
{
    ok("CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}");
    ok("USE ks");
}

TestSuite(exec_modify, .init = setup, .fini = teardown, .timeout = 30);

Test(exec_modify, insert_update_delete_basic)
{
    mkks();
    ok("CREATE TABLE t (k int, c int, v text, w int, PRIMARY KEY (k, c))");
    ok("INSERT INTO t (k, c, v, w) VALUES (1, 1, 'a', 10)");
    ok("INSERT INTO t (k, c, v) VALUES (1, 2, 'b')");
    ok("UPDATE t SET v = 'c' WHERE k = 1 AND c = 3");
    rows("SELECT k, c, v, w FROM t WHERE k = 1", "1|1|'a'|10\n1|2|'b'|null\n1|3|'c'|null\n");
    ok("DELETE w FROM t WHERE k = 1 AND c = 1");
    rows("SELECT k, c, v, w FROM t WHERE k = 1 AND c = 1", "1|1|'a'|null\n");
    /* UPDATE writes no row marker: nulling its only column removes the row. */
    ok("UPDATE t SET v = null WHERE k = 1 AND c = 3");
    rows("SELECT c FROM t WHERE k = 1", "1\n2\n");
    /* INSERT's row marker keeps the row. */
    ok("UPDATE t SET v = null WHERE k = 1 AND c = 2");
    rows("SELECT c, v FROM t WHERE k = 1", "1|'a'\n2|null\n");
    ok("DELETE FROM t WHERE k = 1 AND c = 1");
    rows("SELECT c FROM t WHERE k = 1", "2\n");
    ok("DELETE FROM t WHERE k = 1");
    rows("SELECT c FROM t WHERE k = 1", "");
}

Test(exec_modify, range_and_in_deletes)
{
    mkks();
    ok("CREATE TABLE t (k int, a int, b int, v int, PRIMARY KEY (k, a, b))");
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) {
            char q[200];
            snprintf(q, sizeof q, "INSERT INTO t (k, a, b, v) VALUES (1, %d, %d, %d)", a, b, a * 10 + b);
            ok(q);
        }
    ok("DELETE FROM t WHERE k = 1 AND a = 1");
    rows("SELECT v FROM t WHERE k = 1", "0\n1\n2\n20\n21\n22\n");
    ok("DELETE FROM t WHERE k = 1 AND a = 2 AND b > 0");
    rows("SELECT v FROM t WHERE k = 1", "0\n1\n2\n20\n");
    ok("DELETE FROM t WHERE k = 1 AND a = 0 AND b IN (0, 2)");
    rows("SELECT v FROM t WHERE k = 1", "1\n20\n");
    fails("DELETE v FROM t WHERE k = 1 AND a = 0", "Range deletions are not supported for specific columns");
    ok("INSERT INTO t (k, a, b, v) VALUES (2, 0, 0, 1)");
    ok("DELETE FROM t WHERE k IN (1, 2)");
    rows("SELECT v FROM t", "");
}

Test(exec_modify, ttl_and_timestamp)
{
    mkks();
    ok("CREATE TABLE t (k int PRIMARY KEY, v int, w int)");
    ok("INSERT INTO t (k, v) VALUES (1, 1) USING TIMESTAMP 1000");
    ok("INSERT INTO t (k, v) VALUES (1, 2) USING TIMESTAMP 999");
    rows("SELECT v FROM t WHERE k = 1", "1\n");
    rows("SELECT writetime(v) FROM t WHERE k = 1", "1000\n");
    ok("UPDATE t USING TTL 100 SET w = 5 WHERE k = 1");
    static char out[1024];
    cr_assert_eq(runq("SELECT ttl(w) FROM t WHERE k = 1", out, sizeof out), 0, "%s", g_err.msg);
    int ttl = atoi(strchr(out, '\n') + 1);
    cr_assert(ttl > 95 && ttl <= 100, "ttl %d", ttl);
    fails("INSERT INTO t (k, v) VALUES (2, 1) USING TTL 630720001",
          "ttl is too large. requested (630720001) maximum (630720000)");
    fails("INSERT INTO t (k, v) VALUES (2, 1) USING TTL -1", "A TTL must be greater or equal to 0, but was -1");
    ok("INSERT INTO t (k, v) VALUES (2, 1) USING TTL 0");
    rows("SELECT ttl(v) FROM t WHERE k = 2", "null\n");
    ok("DELETE FROM t USING TIMESTAMP 500 WHERE k = 1");
    rows("SELECT v FROM t WHERE k = 1", "1\n");
    ok("CREATE TABLE d (k int PRIMARY KEY, v int) WITH default_time_to_live = 1000");
    ok("INSERT INTO d (k, v) VALUES (1, 1)");
    cr_assert_eq(runq("SELECT ttl(v) FROM d WHERE k = 1", out, sizeof out), 0, "%s", g_err.msg);
    ttl = atoi(strchr(out, '\n') + 1);
    cr_assert(ttl > 990 && ttl <= 1000, "ttl %d", ttl);
    ok("INSERT INTO d (k, v) VALUES (2, 1) USING TTL 0");
    rows("SELECT ttl(v) FROM d WHERE k = 2", "null\n");
}

/* Found by fuzz_cql: a TTL under the 20-year maximum but reaching past
 * 2038-01-19 (INT32_MAX seconds) overflowed the cell's expiry time (UB; in
 * practice a negative time: the acknowledged write read back as expired).
 * Cassandra 4.1 refuses it (ExpirationDateOverflowHandling, REJECT). */
Test(exec_modify, ttl_past_2038_is_refused)
{
    mkks();
    ok("CREATE TABLE t (k int PRIMARY KEY, v int, l list<int>)");
    const char *msg = "Request on table ks.t with ttl of 630720000 seconds exceeds maximum supported "
                      "expiration date of 2038-01-19T03:14:06+00:00. In order to avoid this use a lower TTL, "
                      "change the expiration date overflow policy or upgrade to a version where this "
                      "limitation is fixed. See CASSANDRA-14092 for more details.";
    fails("INSERT INTO t (k, v) VALUES (1, 1) USING TTL 630720000", msg);
    fails("UPDATE t USING TTL 630720000 SET l = l + [1] WHERE k = 1", msg);
    fails("BEGIN BATCH INSERT INTO t (k, v) VALUES (2, 1) USING TTL 630720000; APPLY BATCH", msg);
    rows("SELECT k FROM t", "");
    ok("CREATE TABLE d (k int PRIMARY KEY, v int) WITH default_time_to_live = 630720000");
    fails("INSERT INTO d (k, v) VALUES (1, 1)", "Request on table ks.d with default ttl of 630720000 seconds");
    ok("INSERT INTO d (k, v) VALUES (1, 1) USING TTL 86400");
    ok("INSERT INTO d (k, v) VALUES (2, 1) USING TTL 0");
    rows("SELECT k, v FROM d", "1|1\n2|1\n");
}

Test(exec_modify, key_errors)
{
    mkks();
    ok("CREATE TABLE t (k int, c int, v int, PRIMARY KEY (k, c))");
    fails("INSERT INTO t (k, c, v) VALUES (null, 1, 1)", "Invalid null value");
    fails("INSERT INTO t (c, v) VALUES (1, 1)", "Some partition key parts are missing: k");
    fails("INSERT INTO t (k, v) VALUES (1, 1)", "Some clustering keys are missing: c");
    fails("INSERT INTO t (k, c, v) VALUES (1, 1)", "Unmatched column names/values");
    fails("INSERT INTO t (k, c, zz) VALUES (1, 1, 1)", "Undefined column name zz in table ks.t");
    fails("UPDATE t SET c = 1 WHERE k = 1 AND c = 1", "PRIMARY KEY part c found in SET part");
    fails("UPDATE t SET v = v + 1 WHERE k = 1 AND c = 1", "Invalid operation (v = v + 1) for non counter column v");
    fails("DELETE c FROM t WHERE k = 1 AND c = 1",
          "Invalid identifier c for deletion (should not be a PRIMARY KEY part)");
    /* A partition key slice (Cassandra 4.1 UpdateTest / DeleteTest): parts with no restriction first */
    fails("UPDATE t SET v = 1 WHERE k > 1 AND c = 1",
          "Only EQ and IN relation are supported on the partition key (unless you use the token() function) for UPDATE statements");
    fails("DELETE FROM t WHERE k > 1",
          "Only EQ and IN relation are supported on the partition key (unless you use the token() function) for DELETE statements");
    ok("CREATE TABLE t2 (a int, b int, c int, v int, PRIMARY KEY ((a, b), c))");
    fails("DELETE FROM t2 WHERE a > 1", "Some partition key parts are missing: b");
    fails("DELETE FROM t2 WHERE a = 1 AND b >= 1",
          "Only EQ and IN relation are supported on the partition key (unless you use the token() function) for DELETE statements");
    /* CONTAINS is refused first in an UPDATE or DELETE (StatementRestrictions) */
    ok("CREATE TABLE fc (k int, c frozen<list<int>>, v int, PRIMARY KEY (k, c))");
    fails("UPDATE fc SET v = 3 WHERE k = 1 AND c CONTAINS 1", "Cannot use UPDATE with CONTAINS");
    fails("DELETE FROM fc WHERE k = 1 AND c CONTAINS KEY 1", "Cannot use DELETE with CONTAINS KEY");
}

/* Literals whose elements their slots cannot take: Cassandra tests every
 * element's type first, with the enclosing literal's message (Lists /
 * Sets / Maps / Tuples / UserTypes .validateAssignableTo), refuses bind
 * markers inside collection literals, and nulls last. */
Test(exec_modify, literal_element_refusals)
{
    mkks();
    ok("CREATE TYPE addr (street text, zip int)");
    ok("CREATE TABLE lc (k int PRIMARY KEY, l list<int>, s set<text>, m map<int, text>, t tuple<int, text>, "
       "ll list<frozen<list<int>>>, st set<frozen<tuple<int, text, double>>>, a frozen<addr>)");
    fails("INSERT INTO lc (k, l) VALUES (1, ['abc'])", "Invalid list literal for l: value 'abc' is not of type int");
    fails("INSERT INTO lc (k, s) VALUES (1, {1})", "Invalid set literal for s: value 1 is not of type text");
    fails("INSERT INTO lc (k, m) VALUES (1, {'a': 'b'})", "Invalid map literal for m: key 'a' is not of type int");
    fails("INSERT INTO lc (k, m) VALUES (1, {1: 2})", "Invalid map literal for m: value 2 is not of type text");
    fails("INSERT INTO lc (k, t) VALUES (1, ('a', 'b'))", "Invalid tuple literal for t: component 0 is not of type int");
    fails("INSERT INTO lc (k, ll) VALUES (1, [[1], ['a']])",
          "Invalid list literal for ll: value ['a'] is not of type frozen<list<int>>");
    fails("INSERT INTO lc (k, st) VALUES (0, {(1, '1', 1.0, 1)})",
          "Invalid set literal for st: value (1, '1', 1.0, 1) is not of type frozen<tuple<int, text, double>>");
    fails("INSERT INTO lc (k, a) VALUES (1, {street: 1})", "Invalid user type literal for a: field street is not of type text");
    /* a value out of the type's range is not a type mismatch */
    fails("INSERT INTO lc (k, l) VALUES (1, [3000000000])", "Unable to make int from '3000000000'");
    /* order: a mismatch anywhere first, then a marker, then a null */
    fails("INSERT INTO lc (k, l) VALUES (1, [null, 'x'])", "Invalid list literal for l: value 'x' is not of type int");
    /* markers inside collection literals: tests/integration/test_bad_input.py */
    fails("INSERT INTO lc (k, l) VALUES (1, [1, null])", "null is not supported inside collections");
    ok("INSERT INTO lc (k, l, t) VALUES (1, [1, 2], (1, 'a'))");
    /* a type cast must be the receiver's type or value-compatible with it
     * (TypeCast.prepare; Cassandra UpdateTest.testTypeCasts) */
    ok("CREATE TABLE tcast (k int PRIMARY KEY, t text, a ascii, d double, i int, b blob)");
    ok("UPDATE tcast SET t = (ascii)'foo', a = (ascii)'foo', i = (int)3, d = (double)3, b = (int)3 WHERE k = 0");
    ok("UPDATE tcast SET t = (text)(ascii)'foo' WHERE k = 0");
    fails("UPDATE tcast SET a = (text)'foo' WHERE k = 0", "Cannot assign value (text)'foo' to a of type ascii");
    fails("UPDATE tcast SET d = (int)3 WHERE k = 0", "Cannot assign value (int)3 to d of type double");
    fails("UPDATE tcast SET i = (double)3 WHERE k = 0", "Cannot assign value (double)3 to i of type int");
}

/* A not-applied conditional batch with a static condition (Cassandra 4.1
 * InsertUpdateIfConditionStaticsTest.testStaticColumnsCas): alone, it
 * shows the partition's first live row; next to row conditions, no row
 * of its own. */
Test(exec_modify, lwt_batch_static_condition_rows)
{
    mkks();
    ok("CREATE TABLE sc (id int, k text, version int static, v text, PRIMARY KEY (id, k))");
    ok("INSERT INTO sc (id, k, version, v) VALUES (0, 'k1', 2, 'foo')");
    ok("INSERT INTO sc (id, k, version, v) VALUES (0, 'k2', 2, 'bar')");
    result("BEGIN BATCH UPDATE sc SET v = 'x' WHERE id = 0 AND k = 'k1'; "
           "UPDATE sc SET version = 3 WHERE id = 0 IF version = 1; APPLY BATCH",
           "[applied]|id|k|version\nfalse|0|'k1'|2\n");
    result("BEGIN BATCH UPDATE sc SET version = 4 WHERE id = 0 IF version = 2; "
           "UPDATE sc SET v = 'r1' WHERE id = 0 AND k = 'k1' IF v = 'foo'; "
           "UPDATE sc SET v = 'r2' WHERE id = 0 AND k = 'k2' IF v = 'x'; APPLY BATCH",
           "[applied]|id|k|version|v\nfalse|0|'k1'|2|'foo'\nfalse|0|'k2'|2|'bar'\n");
    /* no clustering row at all: the static row */
    ok("INSERT INTO sc (id, version) VALUES (1, 7)");
    result("BEGIN BATCH UPDATE sc SET version = 8 WHERE id = 1 IF version = 1; APPLY BATCH",
           "[applied]|id|k|version\nfalse|1|null|7\n");
}

/* Conditions on a whole non-frozen collection compare cell by cell
 * (Cassandra 4.1 InsertUpdateIfConditionCollectionsTest.
 * testNonFrozenEmptyCollection): a missing collection is an empty one,
 * below any other; a null value only for = and !=. */
Test(exec_modify, lwt_collection_conditions)
{
    mkks();
    ok("CREATE TABLE lcc (k int PRIMARY KEY, l list<text>, s set<text>, fl frozen<list<text>>)");
    ok("INSERT INTO lcc (k, l) VALUES (0, null)");
    result("UPDATE lcc SET l = null WHERE k = 0 IF l = null", "[applied]\ntrue\n");
    result("UPDATE lcc SET l = null WHERE k = 0 IF l = []", "[applied]\ntrue\n");
    result("UPDATE lcc SET l = null WHERE k = 0 IF l != ['bar']", "[applied]\ntrue\n");
    result("UPDATE lcc SET l = null WHERE k = 0 IF l < ['a']", "[applied]\ntrue\n");
    result("UPDATE lcc SET l = null WHERE k = 0 IF l <= ['a']", "[applied]\ntrue\n");
    result("UPDATE lcc SET l = null WHERE k = 0 IF l > ['a']", "[applied]|l\nfalse|null\n");
    result("UPDATE lcc SET l = null WHERE k = 0 IF l >= ['a']", "[applied]|l\nfalse|null\n");
    result("UPDATE lcc SET l = null WHERE k = 0 IF s < {'a'}", "[applied]\ntrue\n");
    fails("UPDATE lcc SET l = null WHERE k = 0 IF l CONTAINS null", "Invalid comparison with null for operator \"CONTAINS\"");
    fails("UPDATE lcc SET l = null WHERE k = 0 IF l > null", "Invalid comparison with null for operator \">\"");
    /* a frozen collection is one value: null is below nothing */
    result("UPDATE lcc SET l = null WHERE k = 0 IF fl < ['a']", "[applied]|fl\nfalse|null\n");
    ok("UPDATE lcc SET l = ['b'] WHERE k = 0");
    result("UPDATE lcc SET s = {'x'} WHERE k = 0 IF l > ['a']", "[applied]\ntrue\n");
    result("UPDATE lcc SET s = {'x'} WHERE k = 0 IF l < ['a', 'b']", "[applied]|l\nfalse|['b']\n");
}

/* Conditional deletes that do not name a whole row (Cassandra 4.1
 * InsertUpdateIfConditionTest.testConditionalDelete), and conditions
 * Cassandra refuses as it prepares them. */
Test(exec_modify, condition_refusals)
{
    mkks();
    ok("CREATE TABLE cd (k text, i int, v text, s text static, PRIMARY KEY (k, i))");
    const char *whole = "DELETE statements must restrict all PRIMARY KEY columns with equality relations in order to "
                        "delete non static columns";
    fails("DELETE FROM cd WHERE k = 'k' IF EXISTS", whole);
    fails("DELETE FROM cd WHERE k = 'k' AND i > 0 IF EXISTS", whole);
    fails("DELETE FROM cd WHERE k = 'k' AND i > 0 IF v = 'foo'", whole);
    fails("DELETE v FROM cd WHERE k = 'k' IF s = 'foo'", whole);
    fails("DELETE s FROM cd WHERE k = 'k' IF v = 'foo'",
          "DELETE statements must restrict all PRIMARY KEY columns with equality relations in order to use IF "
          "condition on non static columns");
    ok("DELETE s FROM cd WHERE k = 'k' IF s = 'foo'");
    ok("CREATE TABLE dc (k int PRIMARY KEY, d duration, l list<duration>, v int, st set<int>)");
    fails("UPDATE dc SET v = 3 WHERE k = 0 IF d > 1s", "Slice conditions ( > ) are not supported on durations");
    fails("UPDATE dc SET v = 3 WHERE k = 0 IF d <= 1s", "Slice conditions ( <= ) are not supported on durations");
    fails("UPDATE dc SET v = 3 WHERE k = 0 IF l > [1s]",
          "Slice conditions are not supported on collections containing durations");
    fails("UPDATE dc SET v = 3 WHERE k = 0 IF l[0] < 1s", "Slice conditions ( < ) are not supported on durations");
    ok("UPDATE dc SET v = 3 WHERE k = 0 IF d = 1s");
    fails("UPDATE dc SET v = 3 WHERE k = 0 IF v[0] = 1", "Invalid element access syntax for non-collection column v");
    fails("UPDATE dc SET v = 3 WHERE k = 0 IF st[0] = 1", "Invalid element access syntax for set column st");
}

Test(exec_modify, collections)
{
    mkks();
    ok("CREATE TABLE t (k int PRIMARY KEY, s set<text>, m map<text, int>, l list<int>, fl frozen<list<int>>)");
    ok("INSERT INTO t (k, s, m, l, fl) VALUES (1, {'b', 'a'}, {'x': 1, 'y': 2}, [1, 2, 3], [9, 8])");
    rows("SELECT s, m, l, fl FROM t WHERE k = 1", "{'a', 'b'}|{'x': 1, 'y': 2}|[1, 2, 3]|[9, 8]\n");
    ok("UPDATE t SET s = s + {'c'}, m = m + {'z': 3}, l = l + [4] WHERE k = 1");
    ok("UPDATE t SET l = [0] + l WHERE k = 1");
    rows("SELECT s, m, l FROM t WHERE k = 1", "{'a', 'b', 'c'}|{'x': 1, 'y': 2, 'z': 3}|[0, 1, 2, 3, 4]\n");
    ok("UPDATE t SET s = s - {'a'}, m = m - {'x'}, l = l - [2] WHERE k = 1");
    rows("SELECT s, m, l FROM t WHERE k = 1", "{'b', 'c'}|{'y': 2, 'z': 3}|[0, 1, 3, 4]\n");
    ok("UPDATE t SET m['y'] = 20, l[1] = 10 WHERE k = 1");
    rows("SELECT m, l FROM t WHERE k = 1", "{'y': 20, 'z': 3}|[0, 10, 3, 4]\n");
    ok("DELETE m['z'], l[0], s['b'] FROM t WHERE k = 1");
    rows("SELECT s, m, l FROM t WHERE k = 1", "{'c'}|{'y': 20}|[10, 3, 4]\n");
    fails("UPDATE t SET l[7] = 1 WHERE k = 1", "List index 7 out of bound, list has size 3");
    ok("UPDATE t SET s = {'q'}, m = {'n': 1}, l = [5] WHERE k = 1");
    rows("SELECT s, m, l FROM t WHERE k = 1", "{'q'}|{'n': 1}|[5]\n");
    ok("DELETE s FROM t WHERE k = 1");
    rows("SELECT s FROM t WHERE k = 1", "null\n");
    fails("UPDATE t SET fl = fl + [1] WHERE k = 1", "for frozen collection column fl");
    fails("UPDATE t SET s[0] = 'x' WHERE k = 1", "for set column s");
    fails("UPDATE t SET l = l + [null] WHERE k = 1", "null");
    ok("UPDATE t SET l = [] WHERE k = 1");
    rows("SELECT l FROM t WHERE k = 1", "null\n");
    fails("UPDATE t SET l[0] = 1 WHERE k = 1", "Attempted to set an element on a list which is null");
}

/* A list operation sees the same statement's earlier operations on the row
 * (UpdateParameters.getPrefetchedRow merges the pending row;
 * CollectionsTest.testMultipleOperationOnListWithinTheSameQuery). */
Test(exec_modify, list_ops_see_earlier_ops_of_the_statement)
{
    mkks();
    ok("CREATE TABLE t (k int PRIMARY KEY, l list<int>)");
    ok("INSERT INTO t (k, l) VALUES (1, [1, 2, 3, 4])");
    ok("UPDATE t SET l[2] = 7, l[2] = 8 WHERE k = 1");   /* same cell, same timestamp: the greater value */
    rows("SELECT l FROM t WHERE k = 1", "[1, 2, 8, 4]\n");
    ok("DELETE l[2], l[2] FROM t WHERE k = 1");          /* the second one removes the shifted element */
    rows("SELECT l FROM t WHERE k = 1", "[1, 2]\n");
    ok("UPDATE t SET l = l + [3, 4], l[3] = 7 WHERE k = 1");
    rows("SELECT l FROM t WHERE k = 1", "[1, 2, 3, 7]\n");
    fails("UPDATE t SET l[4] = 5, l = l + [9] WHERE k = 1", "List index 4 out of bound, list has size 4");
    ok("UPDATE t SET l[2] = 7, l = l - [7] WHERE k = 1");
    rows("SELECT l FROM t WHERE k = 1", "[1, 2]\n");
    fails("UPDATE t SET l = l - [2], l[1] = 4 WHERE k = 1", "List index 1 out of bound, list has size 1");
    ok("UPDATE t SET l = [5, 6], l[1] = 9 WHERE k = 1");   /* sees the new value, not the old */
    rows("SELECT l FROM t WHERE k = 1", "[5, 9]\n");
}

/* Found by fuzz_cql: a list element deleted by index from a row that does
 * not exist copied its (no) stored cells with memcpy(v, NULL, 0), undefined
 * behaviour caught by UBSan (SANITIZE=address,undefined). */
Test(exec_modify, list_element_ops_on_absent_row)
{
    mkks();
    ok("CREATE TABLE t (k int, c int, v text, l list<int>, PRIMARY KEY (k, c))");
    fails("DELETE l[0] FROM t WHERE k = 0 AND c = 1", "Attempted to delete an element from a list which is null");
    fails("UPDATE t SET l[0] = 1 WHERE k = 0 AND c = 1", "Attempted to set an element on a list which is null");
    ok("UPDATE t SET l = l - [1] WHERE k = 0 AND c = 1");
    rows("SELECT l FROM t WHERE k = 0", "");
}

Test(exec_modify, udt_and_static)
{
    mkks();
    ok("CREATE TYPE addr (street text, zip int)");
    ok("CREATE TABLE t (k int, c int, s int STATIC, a addr, v int, PRIMARY KEY (k, c))");
    ok("INSERT INTO t (k, s) VALUES (1, 7)");
    rows("SELECT k, c, s, v FROM t WHERE k = 1", "1|null|7|null\n");
    ok("INSERT INTO t (k, c, v, a) VALUES (1, 1, 1, {street: 'x', zip: 5})");
    ok("UPDATE t SET a.zip = 6 WHERE k = 1 AND c = 1");
    rows("SELECT c, s, a FROM t WHERE k = 1", "1|7|{street: 'x', zip: 6}\n");
    ok("DELETE a.street FROM t WHERE k = 1 AND c = 1");
    rows("SELECT a FROM t WHERE k = 1 AND c = 1", "{street: null, zip: 6}\n");
    ok("UPDATE t SET s = 8 WHERE k = 1");
    rows("SELECT c, s FROM t WHERE k = 1", "1|8\n");
    ok("DELETE s FROM t WHERE k = 1");
    rows("SELECT c, s FROM t WHERE k = 1", "1|null\n");
}

Test(exec_modify, counters)
{
    mkks();
    ok("CREATE TABLE c (k int PRIMARY KEY, a counter, b counter)");
    ok("UPDATE c SET a = a + 5, b = b - 2 WHERE k = 1");
    ok("UPDATE c SET a = a + 1 WHERE k = 1");
    rows("SELECT a, b FROM c WHERE k = 1", "6|-2\n");
    fails("INSERT INTO c (k, a) VALUES (1, 1)",
          "INSERT statements are not allowed on counter tables, use UPDATE instead");
    fails("UPDATE c SET a = 3 WHERE k = 1",
          "Cannot set the value of counter column a (counters can only be incremented/decremented, not set)");
    fails("UPDATE c USING TTL 10 SET a = a + 1 WHERE k = 1", "Cannot provide custom TTL for counter updates");
    fails("UPDATE c USING TIMESTAMP 10 SET a = a + 1 WHERE k = 1",
          "Cannot provide custom timestamp for counter updates");
    ok("BEGIN COUNTER BATCH UPDATE c SET a = a + 1 WHERE k = 1; UPDATE c SET a = a + 1 WHERE k = 1; "
       "UPDATE c SET b = b + 1 WHERE k = 2; APPLY BATCH");
    rows("SELECT k, a, b FROM c WHERE k IN (1, 2)", "1|8|-2\n2|null|1\n");
    fails("BEGIN BATCH UPDATE c SET a = a + 1 WHERE k = 1; APPLY BATCH",
          "Cannot include a counter statement in a logged batch");
    ok("CREATE TABLE n (k int PRIMARY KEY, v int)");
    fails("BEGIN COUNTER BATCH INSERT INTO n (k, v) VALUES (1, 1); APPLY BATCH",
          "Cannot include non-counter statement in a counter batch");
    ok("DELETE a FROM c WHERE k = 1");
    rows("SELECT a, b FROM c WHERE k = 1", "null|-2\n");
    /* Cassandra: a counter tombstone wins over later increments. */
    ok("UPDATE c SET a = a + 1, b = b + 1 WHERE k = 1");
    rows("SELECT a, b FROM c WHERE k = 1", "null|-1\n");
}

Test(exec_modify, batches)
{
    mkks();
    ok("CREATE TABLE t (k int, c int, v int, PRIMARY KEY (k, c))");
    ok("BEGIN BATCH INSERT INTO t (k, c, v) VALUES (1, 1, 1); UPDATE t SET v = 2 WHERE k = 1 AND c = 2; "
       "DELETE FROM t WHERE k = 1 AND c = 3; APPLY BATCH");
    rows("SELECT c, v FROM t WHERE k = 1", "1|1\n2|2\n");
    ok("BEGIN BATCH USING TIMESTAMP 100 INSERT INTO t (k, c, v) VALUES (2, 1, 1); APPLY BATCH");
    rows("SELECT writetime(v) FROM t WHERE k = 2", "100\n");
    fails("BEGIN BATCH USING TIMESTAMP 100 INSERT INTO t (k, c, v) VALUES (2, 1, 1) USING TIMESTAMP 5; APPLY BATCH",
          "Timestamp must be set either on BATCH or individual statements");
    /* Unlogged batch over many partitions: warning. */
    char q[8192];
    size_t n = (size_t)snprintf(q, sizeof q, "BEGIN UNLOGGED BATCH ");
    for (int i = 0; i < 12; i++)
        n += (size_t)snprintf(q + n, sizeof q - n, "INSERT INTO t (k, c, v) VALUES (%d, 0, 0); ", 100 + i);
    snprintf(q + n, sizeof q - n, "APPLY BATCH");
    ok(q);
    cr_assert(strstr(g_warn, "Unlogged batch covering 12 partitions detected against table [ks.t]. "
                             "You should use a logged batch for atomicity, or asynchronous writes for performance.") != NULL,
              "warn: %s", g_warn);
    /* Size thresholds: 5 KiB warn, 50 KiB fail. */
    ok("CREATE TABLE b (k int PRIMARY KEY, v text)");
    char big[3000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = 0;
    static char q2[80000];
    n = (size_t)snprintf(q2, sizeof q2, "BEGIN BATCH ");
    for (int i = 0; i < 3; i++)
        n += (size_t)snprintf(q2 + n, sizeof q2 - n, "INSERT INTO b (k, v) VALUES (%d, '%s'); ", i, big);
    snprintf(q2 + n, sizeof q2 - n, "APPLY BATCH");
    ok(q2);
    cr_assert(strstr(g_warn, "Batch for [ks.b] is of size ") != NULL, "warn: %s", g_warn);
    cr_assert(strstr(g_warn, ", exceeding specified threshold of 5120 by ") != NULL, "warn: %s", g_warn);
    n = (size_t)snprintf(q2, sizeof q2, "BEGIN BATCH ");
    for (int i = 0; i < 20; i++)
        n += (size_t)snprintf(q2 + n, sizeof q2 - n, "INSERT INTO b (k, v) VALUES (%d, '%s'); ", i + 10, big);
    snprintf(q2 + n, sizeof q2 - n, "APPLY BATCH");
    fails(q2, "Batch too large");
    rows("SELECT v FROM b WHERE k = 15", "");
    /* Thresholds of 0 (legal in Cassandra): every checked batch is over them. */
    g_ctx->cfg.batch_size_warn_kb = 0;
    ok("BEGIN BATCH INSERT INTO b (k, v) VALUES (1, 'a'); INSERT INTO b (k, v) VALUES (2, 'a'); APPLY BATCH");
    cr_assert(strstr(g_warn, ", exceeding specified threshold of 0 by ") != NULL, "warn: %s", g_warn);
    g_ctx->cfg.batch_size_fail_kb = 0;
    fails("BEGIN BATCH INSERT INTO b (k, v) VALUES (1, 'a'); INSERT INTO b (k, v) VALUES (2, 'a'); APPLY BATCH",
          "Batch too large");
    g_ctx->cfg.batch_size_warn_kb = 5;
    g_ctx->cfg.batch_size_fail_kb = 50;
}

Test(exec_modify, lwt)
{
    mkks();
    ok("CREATE TABLE t (k int, c int, s int STATIC, v int, m map<text, int>, PRIMARY KEY (k, c))");
    result("INSERT INTO t (k, c, v) VALUES (1, 1, 1) IF NOT EXISTS", "[applied]\ntrue\n");
    result("INSERT INTO t (k, c, v) VALUES (1, 1, 2) IF NOT EXISTS", "[applied]|k|c|s|m|v\nfalse|1|1|null|null|1\n");
    result("UPDATE t SET v = 3 WHERE k = 1 AND c = 1 IF v = 1", "[applied]\ntrue\n");
    result("UPDATE t SET v = 4 WHERE k = 1 AND c = 1 IF v = 1", "[applied]|v\nfalse|3\n");
    result("UPDATE t SET v = 4 WHERE k = 1 AND c = 1 IF v > 2 AND v < 10", "[applied]\ntrue\n");
    result("UPDATE t SET v = 5 WHERE k = 1 AND c = 1 IF v IN (1, 2, 4)", "[applied]\ntrue\n");
    result("UPDATE t SET v = 6 WHERE k = 1 AND c = 2 IF EXISTS", "[applied]\nfalse\n");
    result("UPDATE t SET v = 6 WHERE k = 1 AND c = 2 IF v = 1", "[applied]\nfalse\n");
    result("UPDATE t SET m = {'a': 1} WHERE k = 1 AND c = 1 IF m = null", "[applied]\ntrue\n");
    result("UPDATE t SET v = 7 WHERE k = 1 AND c = 1 IF m['a'] = 1", "[applied]\ntrue\n");
    result("UPDATE t SET s = 1 WHERE k = 1 IF s = null", "[applied]\ntrue\n");
    result("DELETE FROM t WHERE k = 1 AND c = 1 IF v != 7", "[applied]|v\nfalse|7\n");
    result("DELETE FROM t WHERE k = 1 AND c = 1 IF EXISTS", "[applied]\ntrue\n");
    rows("SELECT c FROM t WHERE k = 1 AND c = 1", "");
    fails("UPDATE t USING TIMESTAMP 5 SET v = 1 WHERE k = 1 AND c = 1 IF v = 1",
          "Cannot provide custom timestamp for conditional updates");
    fails("UPDATE t SET v = 1 WHERE k IN (1, 2) AND c = 1 IF v = 1",
          "IN on the partition key is not supported with conditional updates");
    fails("UPDATE t SET v = 1 WHERE k = 1 AND c = 1 IF v < null", "Invalid comparison with null for operator \"<\"");
    /* Conditional batch on one partition. */
    result("BEGIN BATCH INSERT INTO t (k, c, v) VALUES (1, 5, 5) IF NOT EXISTS; "
           "UPDATE t SET v = 6 WHERE k = 1 AND c = 6; APPLY BATCH", "[applied]\ntrue\n");
    rows("SELECT c, v FROM t WHERE k = 1", "5|5\n6|6\n");
    fails("BEGIN BATCH INSERT INTO t (k, c, v) VALUES (1, 5, 5) IF NOT EXISTS; "
          "INSERT INTO t (k, c, v) VALUES (2, 5, 5); APPLY BATCH",
          "Batch with conditions cannot span multiple partitions");
    fails("BEGIN BATCH INSERT INTO t (k, c, v) VALUES (1, 5, 5) IF NOT EXISTS; "
          "UPDATE t SET v = 1 WHERE k = 1 AND c = 5 IF EXISTS; APPLY BATCH",
          "Cannot mix IF EXISTS and IF NOT EXISTS conditions for the same row");
    fails("BEGIN BATCH INSERT INTO t (k, c, v) VALUES (1, 5, 5) IF NOT EXISTS; "
          "UPDATE t SET v = 1 WHERE k = 1 AND c = 5 IF v = 1; APPLY BATCH",
          "Cannot mix IF conditions and IF NOT EXISTS for the same row");
    /* A batch's not-applied result carries the primary key columns. */
    result("BEGIN BATCH UPDATE t SET v = 9 WHERE k = 1 AND c = 5 IF v = 4; "
           "UPDATE t SET v = 9 WHERE k = 1 AND c = 6 IF v = 6; APPLY BATCH",
           "[applied]|k|c|v\nfalse|1|5|5\nfalse|1|6|6\n");
    /* Only the static row exists: Cassandra reads the static columns for
     * the result only when the statement writes one or a condition names
     * one (CQL3CasRequest.columnsToRead; InsertUpdateIfConditionTest.
     * testConditionalDelete), so IF EXISTS on a regular row alone shows
     * nothing, and the static row when a static column is written too. */
    ok("INSERT INTO t (k, s) VALUES (3, 3)");
    result("UPDATE t SET v = 1 WHERE k = 3 AND c = 1 IF EXISTS", "[applied]\nfalse\n");
    result("DELETE FROM t WHERE k = 3 AND c = 1 IF EXISTS", "[applied]\nfalse\n");
    result("UPDATE t SET v = 1, s = 4 WHERE k = 3 AND c = 1 IF EXISTS", "[applied]|k|c|s|m|v\nfalse|3|null|3|null|null\n");
    result("DELETE v FROM t WHERE k = 3 AND c = 1 IF s = 9", "[applied]|s\nfalse|3\n");
}

Test(exec_modify, insert_json)
{
    mkks();
    ok("CREATE TABLE t (k int, c text, v int, l list<int>, PRIMARY KEY (k, c))");
    ok("INSERT INTO t JSON '{\"k\": 1, \"c\": \"a\", \"v\": 3, \"l\": [1, 2]}'");
    rows("SELECT k, c, v, l FROM t", "1|'a'|3|[1, 2]\n");
    fails("INSERT INTO t JSON 'null'", "Got null for INSERT JSON values");   /* JsonTest.testInsertJsonSyntax */
    fails("INSERT INTO t JSON ' null '", "Got null for INSERT JSON values");
    ok("INSERT INTO t JSON '{\"k\": 1, \"c\": \"a\"}' DEFAULT UNSET");
    rows("SELECT v FROM t", "3\n");
    ok("INSERT INTO t JSON '{\"k\": 1, \"c\": \"a\"}'");
    rows("SELECT v, l FROM t", "null|null\n");
    fails("INSERT INTO t JSON '{\"k\": 1, \"c\": \"a\", \"zz\": 1}'",
          "JSON values map contains unrecognized column: zz");
}

/* The commit log record is one per statement/batch; check cells directly. */
Test(exec_modify, storage_cells)
{
    mkks();
    ok("CREATE TABLE t (k int PRIMARY KEY, v int)");
    ok("INSERT INTO t (k, v) VALUES (1, 1) USING TTL 50 AND TIMESTAMP 42");
    sch_table *t = sch_table_find(g_ctx->cat, "ks", "t");
    cr_assert_not_null(t);
    uint8_t pk[4] = { 0, 0, 0, 1 };
    st_read_spec spec;
    memset(&spec, 0, sizeof spec);
    spec.pk = pk;
    spec.pk_len = 4;
    st_scan *s;
    cr_assert_eq(st_scan_open(t->st, &spec, &s), 0);
    st_partition_view pv;
    cr_assert_eq(st_scan_next_partition(s, &pv), 1);
    st_row_view rv;
    cr_assert_eq(st_scan_next_row(s, &rv), 1);
    cr_assert_eq(rv.liveness.ts_us, 42);
    cr_assert_eq(rv.liveness.ttl_s, 50);
    cr_assert_eq(rv.n_cells, 1);
    cr_assert_eq(rv.cells[0].ts_us, 42);
    cr_assert_eq(rv.cells[0].ttl_s, 50);
    cr_assert(rv.cells[0].flags & ST_CELL_EXPIRING);
    st_scan_close(s);
}

/* A batch survives a restart through commit log replay (one record). */
Test(exec_modify, replay_after_restart)
{
    mkks();
    ok("CREATE TABLE t (k int, c int, v int, s set<int>, PRIMARY KEY (k, c))");
    ok("BEGIN BATCH INSERT INTO t (k, c, v, s) VALUES (1, 1, 1, {1, 2}); "
       "UPDATE t SET v = 2, s = s + {3} WHERE k = 2 AND c = 2; APPLY BATCH");
    fixture_close();
    fixture_open();
    ok("USE ks");
    rows("SELECT k, c, v, s FROM t WHERE k IN (1, 2)", "1|1|1|{1, 2}\n2|2|2|{3}\n");
}

/* In batch sync mode the result asks the server to wait for the fsync. */
Test(exec_modify, need_sync_in_batch_mode)
{
    fixture_close();
    fixture_open_with("2", ST_SYNC_BATCH);
    mkks();
    ok("CREATE TABLE t (k int PRIMARY KEY, v int)");
    cql_result r;
    cql_result_init(&r);
    cs_error_init(&g_err);
    const char *q = "INSERT INTO t (k, v) VALUES (1, 1)";
    cr_assert_eq(cql_query(g_ctx, &g_sess, q, strlen(q), NULL, &r, &g_err), 0, "%s", g_err.msg);
    cr_assert(r.need_sync);
    cr_assert(r.sync_pos.offset > 0 || r.sync_pos.segment > 0);
    cql_result_destroy(&r);
}

/* Range tombstones on a DESC clustering column, and TTLs on collection
 * elements added by UPDATE. */
Test(exec_modify, desc_ranges_and_element_ttl)
{
    mkks();
    ok("CREATE TABLE t (k int, c int, v int, PRIMARY KEY (k, c)) WITH CLUSTERING ORDER BY (c DESC)");
    for (int i = 0; i < 6; i++) {
        char q[200];
        snprintf(q, sizeof q, "INSERT INTO t (k, c, v) VALUES (1, %d, %d)", i, i);
        ok(q);
    }
    ok("DELETE FROM t WHERE k = 1 AND c >= 2 AND c < 4");
    rows("SELECT c FROM t WHERE k = 1", "5\n4\n1\n0\n");
    ok("DELETE FROM t WHERE k = 1 AND c > 4");
    rows("SELECT c FROM t WHERE k = 1", "4\n1\n0\n");
    ok("CREATE TABLE l (k int PRIMARY KEY, s set<int>)");
    ok("UPDATE l USING TTL 100 SET s = s + {1, 2} WHERE k = 1");
    ok("UPDATE l SET s = s + {3} WHERE k = 1");
    sch_table *t = sch_table_find(g_ctx->cat, "ks", "l");
    cr_assert_not_null(t);
    uint8_t pk[4] = { 0, 0, 0, 1 };
    st_read_spec spec;
    memset(&spec, 0, sizeof spec);
    spec.pk = pk;
    spec.pk_len = 4;
    st_scan *s;
    cr_assert_eq(st_scan_open(t->st, &spec, &s), 0);
    st_partition_view pv;
    cr_assert_eq(st_scan_next_partition(s, &pv), 1);
    st_row_view rv;
    cr_assert_eq(st_scan_next_row(s, &rv), 1);
    cr_assert_eq(rv.n_cells, 3);
    cr_assert_eq(rv.cells[0].ttl_s, 100);
    cr_assert_eq(rv.cells[1].ttl_s, 100);
    cr_assert_eq(rv.cells[2].ttl_s, 0);
    cr_assert_eq(rv.liveness.ts_us, INT64_MIN, "UPDATE writes no row marker");
    st_scan_close(s);
    rows("SELECT s FROM l WHERE k = 1", "{1, 2, 3}\n");
}

/* Tombstones are real cells: a null write shadows older data and is visible
 * to a tombstone-aware scan. */
Test(exec_modify, null_writes_tombstones)
{
    mkks();
    ok("CREATE TABLE t (k int PRIMARY KEY, v int, l list<int>)");
    ok("INSERT INTO t (k, v, l) VALUES (1, 1, [1]) USING TIMESTAMP 10");
    ok("INSERT INTO t (k, v, l) VALUES (1, null, null) USING TIMESTAMP 20");
    rows("SELECT v, l FROM t WHERE k = 1", "null|null\n");
    ok("INSERT INTO t (k, v) VALUES (1, 5) USING TIMESTAMP 15");
    rows("SELECT v FROM t WHERE k = 1", "null\n");
    sch_table *t = sch_table_find(g_ctx->cat, "ks", "t");
    uint8_t pk[4] = { 0, 0, 0, 1 };
    st_read_spec spec;
    memset(&spec, 0, sizeof spec);
    spec.pk = pk;
    spec.pk_len = 4;
    spec.with_tombstones = true;
    st_scan *s;
    cr_assert_eq(st_scan_open(t->st, &spec, &s), 0);
    st_partition_view pv;
    cr_assert_eq(st_scan_next_partition(s, &pv), 1);
    st_row_view rv;
    cr_assert_eq(st_scan_next_row(s, &rv), 1);
    bool tomb = false;
    for (int i = 0; i < rv.n_cells; i++)
        if ((rv.cells[i].flags & ST_CELL_TOMBSTONE) && rv.cells[i].ts_us == 20)
            tomb = true;
    cr_assert(tomb, "tombstone cell at ts 20");
    st_scan_close(s);
    /* Appending then discarding the only element leaves the list null. */
    ok("INSERT INTO t (k, v) VALUES (2, 7)");
    ok("UPDATE t SET l = l + [1] WHERE k = 2");
    ok("UPDATE t SET l = l - [1] WHERE k = 2");
    rows("SELECT v, l FROM t WHERE k = 2", "7|null\n");
}

/* LWT on list elements, UDT fields and statics together. */
Test(exec_modify, lwt_elements)
{
    mkks();
    ok("CREATE TYPE u (a int, b text)");
    ok("CREATE TABLE t (k int, c int, s int STATIC, l list<int>, x u, PRIMARY KEY (k, c))");
    ok("INSERT INTO t (k, c, s, l, x) VALUES (1, 1, 5, [10, 20], {a: 1, b: 'z'})");
    result("UPDATE t SET l[0] = 11 WHERE k = 1 AND c = 1 IF l[1] = 20 AND x.a = 1 AND s >= 5", "[applied]\ntrue\n");
    result("UPDATE t SET l[0] = 12 WHERE k = 1 AND c = 1 IF l[0] = 10", "[applied]|l\nfalse|[11, 20]\n");
    result("UPDATE t SET l[0] = 12 WHERE k = 1 AND c = 1 IF l[5] = null", "[applied]\ntrue\n");
    result("UPDATE t SET s = 6 WHERE k = 1 IF s IN (1, 2)", "[applied]|s\nfalse|5\n");
    result("UPDATE t SET s = 6 WHERE k = 1 IF s != 5", "[applied]|s\nfalse|5\n");
    rows("SELECT s, l, x FROM t WHERE k = 1", "5|[12, 20]|{a: 1, b: 'z'}\n");
    fails("UPDATE t SET s = 6 WHERE k = 1 IF k = 1", "PRIMARY KEY column 'k' cannot have IF conditions");
}

/* Fail the Nth allocation for every N along the write paths: each statement
 * either succeeds or reports an error; nothing crashes or leaks, and the
 * table stays readable. */
Test(exec_modify, oom_stepping)
{
    mkks();
    ok("CREATE TABLE t (k int, c int, s int STATIC, v int, l list<int>, m map<text, int>, PRIMARY KEY (k, c))");
    ok("CREATE TABLE cn (k int PRIMARY KEY, a counter)");
    static const char *stmts[] = {
        "BEGIN BATCH INSERT INTO t (k, c, v, l, m) VALUES (1, 1, 1, [1, 2], {'a': 1}); "
        "UPDATE t SET l = l + [3], s = 4 WHERE k = 1 AND c = 2; DELETE FROM t WHERE k = 2 AND c > 3; APPLY BATCH",
        "UPDATE t SET l[0] = 5, m = m - {'a'} WHERE k = 1 AND c = 1",
        "UPDATE t SET v = 2 WHERE k = 1 AND c = 1 IF v = 1 AND m['a'] = null",
        "INSERT INTO t (k, c, v) VALUES (1, 1, 1) IF NOT EXISTS",
        "UPDATE cn SET a = a + 1 WHERE k IN (1, 2)",
    };
    int failed = 0;
    for (size_t i = 0; i < CS_ARRAY_LEN(stmts); i++) {
        for (long n = 1; n < 300; n++) {
            cs_alloc_fail_nth(n);
            int rc = runq(stmts[i], NULL, 0);
            cs_alloc_fail_nth(0);
            failed += rc != 0;
        }
    }
    cr_assert(failed > 0);
    rows("SELECT k, c FROM t WHERE k = 1", "1|1\n1|2\n");
}
