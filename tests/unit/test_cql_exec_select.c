/*
 * test_cql_exec_select.c: SELECT: slices (ASC/DESC, multi-column, mixed order), IN, tokens,
 * refusals and messages, filtering, statics, DISTINCT, aggregates, GROUP BY,
 * functions, JSON, tombstone thresholds, indexes, virtual tables, views.
 * Through cql_query / cql_prepare / cql_execute on a real engine in a temp
 * dir; results checked by decoding the RESULT body (test_cql_exec_harness.h).
 */
#include "test_cql_exec_harness.h"
#include "cql/metrics.h"

TestSuite(exec_select, .init = setup, .fini = teardown, .timeout = 120);

Test(exec_select, single_partition_slices)
{
    mkks();
    fill_kcv();
    result("SELECT * FROM t WHERE k = 1", "k|c|v\n1|0|10\n1|1|11\n1|2|12\n1|3|13\n1|4|14\n");
    rows("SELECT c FROM t WHERE k = 1 AND c > 1", "2\n3\n4\n");
    rows("SELECT c FROM t WHERE k = 1 AND c >= 1 AND c < 3", "1\n2\n");
    rows("SELECT c FROM t WHERE k = 1 AND c <= 1", "0\n1\n");
    rows("SELECT c FROM t WHERE k = 1 AND c = 3", "3\n");
    rows("SELECT c FROM t WHERE k = 1 AND c IN (4, 0, 2, 2)", "0\n2\n4\n");
    rows("SELECT c FROM t WHERE k = 1 LIMIT 2", "0\n1\n");
    rows("SELECT c FROM t WHERE k = 1 ORDER BY c DESC", "4\n3\n2\n1\n0\n");
    rows("SELECT c FROM t WHERE k = 1 AND c < 3 ORDER BY c DESC LIMIT 2", "2\n1\n");
    rows("SELECT c FROM t WHERE k = 1 AND c > 3 AND c < 2", "");
    rows("SELECT c FROM t WHERE k = 9", "");
    rows("SELECT c FROM t WHERE k = 1 AND c IN ()", "");
    rows("SELECT c FROM t WHERE k IN ()", "");
    rows("SELECT k, c FROM t WHERE k IN (2, 0) AND c = 1", "0|1\n2|1\n");
    rows("SELECT k, c FROM t WHERE k IN (2, 0) AND c > 2 PER PARTITION LIMIT 1", "0|3\n2|3\n");
    rows("SELECT c AS x, v FROM t WHERE k = 3 AND c = 0", "0|30\n");
    result("SELECT c AS x FROM t WHERE k = 3 AND c = 0", "x\n0\n");
    ok("CREATE TABLE cp (a int, b text, c int, PRIMARY KEY ((a, b), c))");
    ok("INSERT INTO cp (a, b, c) VALUES (1, 'x', 1)");
    ok("INSERT INTO cp (a, b, c) VALUES (1, 'y', 2)");
    ok("INSERT INTO cp (a, b, c) VALUES (2, 'x', 3)");
    ok("INSERT INTO cp (a, b, c) VALUES (2, 'y', 4)");
    rows("SELECT a, b, c FROM cp WHERE a IN (2, 1) AND b IN ('y', 'x')", "1|'x'|1\n1|'y'|2\n2|'x'|3\n2|'y'|4\n");
    rows("SELECT c FROM cp WHERE a = 2 AND b = 'y'", "4\n");
    fails("SELECT c FROM cp WHERE a = 2", "Cannot execute this query as it might involve data filtering");
    rows("SELECT c FROM cp WHERE a = 2 ALLOW FILTERING", "3\n4\n");
    rows("SELECT c FROM cp WHERE b = 'x' ALLOW FILTERING", "3\n1\n");   /* token order */
    /* a token range with some components: TokenFilter keeps the range and filters */
    fails("SELECT c FROM cp WHERE token(a, b) > token(2, 'x') AND b = 'x'", "Cannot execute this query as it might involve data filtering");
    rows("SELECT c FROM cp WHERE token(a, b) > token(2, 'x') AND b = 'x' ALLOW FILTERING", "1\n");
    rows("SELECT c FROM cp WHERE b = 'x' AND token(a, b) <= token(2, 'x') ALLOW FILTERING", "3\n");
}

Test(exec_select, range_scans_and_tokens)
{
    mkks();
    fill_kcv();
    /* full scan: token order of the int keys */
    rows("SELECT DISTINCT k FROM t", "1\n0\n2\n3\n");
    rows("SELECT k, c FROM t LIMIT 3", "1|0\n1|1\n1|2\n");
    rows("SELECT k, c FROM t PER PARTITION LIMIT 1", "1|0\n0|0\n2|0\n3|0\n");
    rows("SELECT token(k), k FROM t WHERE k = 1 AND c = 0", "-4069959284402364209|1\n");
    /* token() in a selection is TokenFct: any arguments of the key's types */
    rows("SELECT token(c), token(1) FROM t WHERE k = 0 AND c = 1", "-4069959284402364209|-4069959284402364209\n");
    fails("SELECT token(k, c) FROM t", "Invalid number of arguments in call to function system.token: 1 required but 2 provided");
    ok("CREATE TABLE tk (k1 uuid, k2 text, PRIMARY KEY ((k1, k2)))");
    fails("SELECT token(k2, k1) FROM tk", "Type error: k2 cannot be passed as argument 0 of function system.token of type uuid");
    fails("SELECT token(k1, 'x', k2) FROM tk", "Invalid number of arguments in call to function system.token: 2 required but 3 provided");
    rows("SELECT k FROM t WHERE token(k) > -4069959284402364209 PER PARTITION LIMIT 1", "0\n2\n3\n");
    rows("SELECT k FROM t WHERE token(k) >= -4069959284402364209 AND token(k) <= -4069959284402364209 PER PARTITION LIMIT 1", "1\n");
    rows("SELECT count(*) FROM t", "20\n");
    rows("SELECT k FROM t WHERE token(k) > token(1) PER PARTITION LIMIT 1", "0\n2\n3\n");
    rows("SELECT k FROM t WHERE token(k) <= token(1) PER PARTITION LIMIT 1", "1\n");
    rows("SELECT k FROM t WHERE k IN (0, 1, 2) AND token(k) > token(1) PER PARTITION LIMIT 1", "0\n2\n");
    rows("SELECT k FROM t WHERE k = 1 AND token(k) > token(1)", "");
    rows("SELECT k, c FROM t WHERE k IN (1, 2) AND c IN (1, 3) ORDER BY c DESC", "1|3\n2|3\n1|1\n2|1\n");
    rows("SELECT c FROM t WHERE k = 1 AND c IN (1, 3) ORDER BY c DESC", "3\n1\n");
    fails("SELECT k, count(*) FROM t PER PARTITION LIMIT 2", "PER PARTITION LIMIT is not allowed with aggregate queries.");
    fails("SELECT DISTINCT k FROM t PER PARTITION LIMIT 2", "PER PARTITION LIMIT is not allowed with SELECT DISTINCT queries");
    rows("SELECT k, count(*) FROM t GROUP BY k PER PARTITION LIMIT 2", "1|5\n0|5\n2|5\n3|5\n");
    rows("SELECT k, c, count(*) FROM t GROUP BY k, c PER PARTITION LIMIT 2 LIMIT 5", "1|0|1\n1|1|1\n0|0|1\n0|1|1\n2|0|1\n");
    /* a dropped then re-added column does not resurrect old cells */
    ok("ALTER TABLE t DROP v");
    ok("ALTER TABLE t ADD v int");
    rows("SELECT c, v FROM t WHERE k = 1 AND c < 2", "0|null\n1|null\n");
    ok("UPDATE t SET v = 5 WHERE k = 1 AND c = 1");
    rows("SELECT c, v FROM t WHERE k = 1 AND c < 2", "0|null\n1|5\n");
}

/* Multi-column relations refused as Cassandra 4.1 words them
 * (MultiColumnRelation, Tuples.Literal, MultiColumnRestriction). */
/* Found by fuzz_cql: ORDER BY over an IN on the partition key sorts the
 * rows it buffered; with none it called qsort(NULL, 0, ...), undefined
 * behaviour caught by UBSan (SANITIZE=address,undefined). */
Test(exec_select, in_order_by_with_no_rows)
{
    mkks();
    fill_kcv();
    rows("SELECT k, c, v FROM t WHERE k IN (1, 2) AND c >= 21 ORDER BY c DESC LIMIT 10", "");
    rows("SELECT k, c FROM t WHERE k IN (7, 8) ORDER BY c ASC", "");
    rows("SELECT k, c FROM t WHERE k IN (1, 2) AND c = 4 ORDER BY c DESC", "1|4\n2|4\n");
}

Test(exec_select, multi_column_refusals)
{
    mkks();
    ok("CREATE TABLE mc (a int, b int, c int, d int, v int, PRIMARY KEY (a, b, c, d))");
    fails("SELECT * FROM mc WHERE a = 0 AND (d, c, b) = (1, 2, 3)",
          "Clustering columns must appear in the PRIMARY KEY order in multi-column relations: (d, c, b) = (1, 2, 3)");
    fails("SELECT * FROM mc WHERE a = 0 AND (b, b) = (1, 2)", "Column \"b\" appeared twice in a relation: (b, b) = (1, 2)");
    fails("SELECT * FROM mc WHERE a = 0 AND (b, c) > (1, 2, 3)", "Expected 2 elements in value tuple, but got 3: (1, 2, 3)");
    fails("SELECT * FROM mc WHERE a = 0 AND (b, c, d) IN ((1, 2))", "Expected 3 elements in value tuple, but got 2: (1, 2)");
    fails("SELECT * FROM mc WHERE a = 0 AND (b, c, d) = (1, 2, null)", "Invalid null value for column d");
    fails("SELECT * FROM mc WHERE a = 0 AND (b, c) IN ((1, 2), (3, null))", "Invalid null value in condition for columns: [b, c]");
    fails("SELECT * FROM mc WHERE a = 0 AND (b, c) > (1, null)", "Invalid null value in condition for column c");
    fails("SELECT * FROM mc WHERE (c, d) IN ((1, 2), (3, 4)) ALLOW FILTERING", "Multicolumn IN filters are not supported");
    fails("SELECT * FROM mc WHERE (c, d) > (1, 2) ALLOW FILTERING", "Multi-column slice restrictions cannot be used for filtering.");
    ok("INSERT INTO mc (a, b, c, d, v) VALUES (1, 1, 1, 1, 7)");
    rows("SELECT b, v FROM mc WHERE a = 1 AND (b) IN ((1), (1))", "1|7\n");
    rows("SELECT b, c, v FROM mc WHERE a = 1 AND (b, c) IN ((1, 1), (1, 1), (1, 2))", "1|1|7\n");
    /* ClusteringColumnRestrictions.mergeWith: as each restriction is added, before the partition key is judged */
    fails("SELECT * FROM mc WHERE a <= 11 AND b > 15 AND c >= 16",
          "Clustering column \"c\" cannot be restricted (preceding column \"b\" is restricted by a non-EQ relation)");
    fails("SELECT * FROM mc WHERE a = 1 AND c = 1 AND b > 1",
          "PRIMARY KEY column \"c\" cannot be restricted (preceding column \"b\" is restricted by a non-EQ relation)");
    ok("CREATE TABLE mcc (a int, b int, c frozen<list<int>>, PRIMARY KEY (a, b, c))");
    fails("SELECT * FROM mcc WHERE a = 1 AND b = 1 AND c CONTAINS KEY 1", "Cannot use CONTAINS KEY on non-map column c");
    fails("SELECT * FROM mcc WHERE a = 1 AND b CONTAINS 1", "Cannot use CONTAINS on non-collection column b");
    fails("SELECT * FROM mcc WHERE b > 20 AND c CONTAINS 2",
          "Clustering column \"c\" cannot be restricted (preceding column \"b\" is restricted by a non-EQ relation)");
}

Test(exec_select, clustering_multi_and_desc)
{
    mkks();
    ok("CREATE TABLE m (k int, a int, b int, v int, PRIMARY KEY (k, a, b)) WITH CLUSTERING ORDER BY (a DESC, b ASC)");
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) {
            char q[200];
            snprintf(q, sizeof q, "INSERT INTO m (k, a, b, v) VALUES (0, %d, %d, %d)", a, b, a * 10 + b);
            ok(q);
        }
    rows("SELECT v FROM m WHERE k = 0", "20\n21\n22\n10\n11\n12\n0\n1\n2\n");
    rows("SELECT v FROM m WHERE k = 0 AND a > 0", "20\n21\n22\n10\n11\n12\n");
    rows("SELECT v FROM m WHERE k = 0 AND a >= 1 AND a < 2", "10\n11\n12\n");
    rows("SELECT v FROM m WHERE k = 0 AND a = 1 AND b > 0", "11\n12\n");
    rows("SELECT v FROM m WHERE k = 0 AND a IN (0, 2) AND b < 2", "20\n21\n0\n1\n");
    rows("SELECT v FROM m WHERE k = 0 AND (a, b) = (1, 2)", "12\n");
    rows("SELECT v FROM m WHERE k = 0 AND (a, b) IN ((1, 2), (0, 0))", "12\n0\n");
    rows("SELECT v FROM m WHERE k = 0 ORDER BY a ASC, b DESC", "2\n1\n0\n12\n11\n10\n22\n21\n20\n");
    rows("SELECT v FROM m WHERE k = 0 AND a = 2 ORDER BY a ASC, b DESC LIMIT 2", "22\n21\n");
    ok("CREATE TABLE m2 (k int, a int, b int, v int, PRIMARY KEY (k, a, b))");
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) {
            char q[200];
            snprintf(q, sizeof q, "INSERT INTO m2 (k, a, b, v) VALUES (0, %d, %d, %d)", a, b, a * 10 + b);
            ok(q);
        }
    rows("SELECT v FROM m2 WHERE k = 0 AND (a, b) > (1, 1)", "12\n20\n21\n22\n");
    rows("SELECT v FROM m2 WHERE k = 0 AND a = 1 ORDER BY b DESC", "12\n11\n10\n");
    rows("SELECT v FROM m2 WHERE k = 0 AND a = 1 ORDER BY b DESC LIMIT 1", "12\n");
    /* mixed clustering order: tuple comparison by value, clustering order */
    ok("CREATE TABLE mx (p int, c1 int, c2 text, v int, PRIMARY KEY (p, c1, c2)) WITH CLUSTERING ORDER BY (c1 ASC, c2 DESC)");
    for (int a = 0; a < 3; a++)
        for (const char *b = "abc"; *b; b++) {
            char q[200];
            snprintf(q, sizeof q, "INSERT INTO mx (p, c1, c2, v) VALUES (0, %d, '%c', 1)", a, *b);
            ok(q);
        }
    rows("SELECT c1, c2 FROM mx WHERE p = 0 AND (c1, c2) > (1, 'b')", "1|'c'\n2|'c'\n2|'b'\n2|'a'\n");
    rows("SELECT c1, c2 FROM mx WHERE p = 0 AND (c1, c2) >= (1, 'b') AND (c1, c2) < (2, 'b')", "1|'c'\n1|'b'\n2|'a'\n");
    cr_assert_eq(paged_equals("SELECT c1, c2 FROM mx WHERE p = 0 AND (c1, c2) > (0, 'b')", 2), 4);
    rows("SELECT v FROM m2 WHERE k = 0 AND (a, b) >= (1, 1) AND (a, b) < (2, 1)", "11\n12\n20\n");
    /* slices of different lengths merge (MultiColumnRestriction.SliceRestriction.mergeWith) */
    rows("SELECT v FROM m2 WHERE k = 0 AND (a, b) > (1, 1) AND a < 2", "12\n");
    rows("SELECT v FROM m2 WHERE k = 0 AND a < 2 AND (a, b) > (1, 1)", "12\n");
    rows("SELECT v FROM m2 WHERE k = 0 AND (a, b) > (0, 1) AND (a) <= (1)", "2\n10\n11\n12\n");
    rows("SELECT v FROM m2 WHERE k = 0 AND (a) >= (1) AND (a, b) < (2, 1) ORDER BY a DESC, b DESC", "20\n12\n11\n10\n");
    fails("SELECT v FROM m2 WHERE k = 0 AND (a, b) > (0, 1) AND (a) > (1)", "More than one restriction was found for the start bound on a");
    fails("SELECT v FROM m2 WHERE k = 0 AND (a, b) > (0, 1) AND (b) < (1)",
          "Column \"b\" cannot be restricted by two inequalities not starting with the same column");
    fails("SELECT v FROM m2 WHERE k = 0 AND b > 1 AND (a, b) < (0, 1)",
          "Column \"b\" cannot be restricted by two inequalities not starting with the same column");
    fails("SELECT v FROM m2 WHERE k = 0 AND (a) = (1) AND (a) > (0)", "a cannot be restricted by more than one relation if it includes an Equal");
    fails("SELECT v FROM m2 WHERE k = 0 AND (a, b) = (1, 1) AND (a, b) > (0, 0)", "a ,b cannot be restricted by more than one relation if it includes an Equal");
    fails("SELECT v FROM m2 WHERE k = 0 AND (a, b) IN ((1, 1)) AND a > 0", "a cannot be restricted by more than one relation if it includes a IN");
    fails("SELECT v FROM m2 WHERE k = 0 AND (a, b) > (0, 0) AND a = 1",
          "Column \"a\" cannot be restricted by both an equality and an inequality relation");
    /* a merge leaves (a, b) > .. on b: the later (b) < .. meets it */
    fails("SELECT v FROM m2 WHERE k = 0 AND (a, b) > (0, 0) AND (a) < (1) AND (b) < (1)",
          "Column \"b\" cannot be restricted by two inequalities not starting with the same column");
    /* (a, b) = (..) after a gap filters column by column */
    ok("CREATE TABLE m3 (k int, a int, b int, c int, v int, PRIMARY KEY (k, a, b, c))");
    ok("INSERT INTO m3 (k, a, b, c, v) VALUES (0, 0, 1, 2, 3)");
    ok("INSERT INTO m3 (k, a, b, c, v) VALUES (0, 1, 1, 3, 4)");
    rows("SELECT v FROM m3 WHERE k = 0 AND (b, c) = (1, 2) ALLOW FILTERING", "3\n");
    fails("SELECT v FROM m3 WHERE k = 0 AND (b, c) IN ((1, 2)) ALLOW FILTERING", "Multicolumn IN filters are not supported");
    fails("SELECT v FROM m3 WHERE k = 0 AND (b) > (0) ALLOW FILTERING", "Multi-column slice restrictions cannot be used for filtering.");
    fails("SELECT v FROM m3 WHERE k = 0 AND c = 1 AND a > 0",
          "PRIMARY KEY column \"c\" cannot be restricted (preceding column \"a\" is restricted by a non-EQ relation)");
    rows("SELECT v FROM m2 WHERE k = 0 AND a = 1 AND (b) > (0)", "11\n12\n");
    fails("SELECT v FROM m2 WHERE k = 0 AND (b, a) > (0, 1)", "Clustering columns must appear in the PRIMARY KEY order in multi-column relations");
    fails("SELECT v FROM m2 WHERE k = 0 AND (k, a) > (0, 1)", "Multi-column relations can only be applied to clustering columns but was applied to: k");
}

Test(exec_select, refusals)
{
    mkks();
    ok("CREATE TABLE p (k1 int, k2 int, c1 int, c2 int, v int, PRIMARY KEY ((k1, k2), c1, c2))");
    fails("SELECT * FROM p WHERE k1 = 1", "Cannot execute this query as it might involve data filtering");
    fails("SELECT * FROM p WHERE k1 = 1 AND k2 = 1 AND c2 = 1",
          "PRIMARY KEY column \"c2\" cannot be restricted as preceding column \"c1\" is not restricted");
    fails("SELECT * FROM p WHERE k1 = 1 AND k2 = 1 AND c1 > 1 AND c2 = 1",
          "Clustering column \"c2\" cannot be restricted (preceding column \"c1\" is restricted by a non-EQ relation)");
    fails("SELECT * FROM p WHERE k1 = 1 AND k2 = 1 AND v = 1", "Cannot execute this query as it might involve data filtering");
    fails("SELECT * FROM p WHERE c1 = 1", "ALLOW FILTERING");
    /* Cassandra 4.1 (SelectTest.testAllowFilteringOnPartitionKey): a partition key slice filters */
    fails("SELECT * FROM p WHERE k1 > 1 AND k2 = 1", "Cannot execute this query as it might involve data filtering");
    fails("SELECT * FROM p WHERE k1 > 1", "Cannot execute this query as it might involve data filtering");
    fails("SELECT * FROM p WHERE k1 = 1 AND k2 = 1 AND x = 1", "Undefined column name x");
    fails("SELECT x FROM p", "Undefined column name x in table ks.p");
    /* TableMetadata.getExistingColumn: names quoted as CQL needs them */
    fails("SELECT \"Xy\" FROM p", "Undefined column name \"Xy\" in table ks.p");
    fails("SELECT * FROM p WHERE k1 = 1 AND k2 = 1 ORDER BY zz", "Undefined column name zz in table ks.p");
    fails("CREATE INDEX ON p (zz)", "Undefined column name zz in table ks.p");
    fails("SELECT * FROM p ORDER BY c1 DESC", "ORDER BY is only supported when the partition key is restricted by an EQ or an IN.");
    fails("SELECT * FROM p WHERE k1 = 1 AND k2 = 1 ORDER BY v DESC", "Order by is currently only supported on the clustered columns of the PRIMARY KEY, got v");
    fails("SELECT * FROM p WHERE k1 = 1 AND k2 = 1 ORDER BY c2 DESC", "Order by currently only supports the ordering of columns following their declared order in the PRIMARY KEY");
    /* an IN of one value counts as = (SelectOrderByTest.testAllowSkippingEqualityAndSingleValueIn...) */
    ok("SELECT * FROM p WHERE k1 = 1 AND k2 = 1 AND c1 IN (1) ORDER BY c2 DESC");
    fails("SELECT * FROM p WHERE k1 = 1 AND k2 = 1 AND c1 IN (1, 2) ORDER BY c2 DESC",
          "Order by currently only supports the ordering of columns following their declared order in the PRIMARY KEY");
    fails("SELECT * FROM p WHERE k1 = 1 AND k2 = 1 ORDER BY c1 DESC, c2 ASC", "Unsupported order by relation");
    fails("SELECT * FROM p WHERE k1 = 1 AND k2 = 1 LIMIT 0", "LIMIT must be strictly positive");
    fails("SELECT * FROM p WHERE k1 = 'a' AND k2 = 1", "Invalid STRING constant (a) for \"k1\" of type int");
    fails("SELECT c1 FROM p WHERE k1 = 1 AND k2 = 1 AND c1 = 1 AND c1 = 2", "c1 cannot be restricted by more than one relation if it includes an Equal");
    fails("SELECT c1 FROM p WHERE k1 = 1 AND k2 = 1 AND c1 IN (1) AND c1 > 2", "c1 cannot be restricted by more than one relation if it includes a IN");
    fails("SELECT c1 FROM p WHERE k1 = 1 AND k2 = 1 AND c1 > 1 AND c1 = 2", "Column \"c1\" cannot be restricted by both an equality and an inequality relation");
    fails("SELECT c1 FROM p WHERE k1 = 1 AND k2 = 1 AND c1 > 1 AND c1 > 2", "More than one restriction was found for the start bound on c1");
    fails("SELECT DISTINCT c1 FROM p", "SELECT DISTINCT queries must only request partition key columns and/or static columns (not c1)");
    fails("SELECT DISTINCT k1 FROM p", "SELECT DISTINCT queries must request all the partition key columns (missing k2)");
    rows("SELECT DISTINCT k1 FROM p WHERE k1 = 1 AND k2 = 2", "");
    fails("SELECT DISTINCT k1, k2 FROM p WHERE v = 1 ALLOW FILTERING", "SELECT DISTINCT with WHERE clause only supports restriction by partition key and/or static columns.");
    rows("SELECT c2 FROM p WHERE k1 = 1 AND k2 = 1 AND c1 = 1 ORDER BY c2 DESC", "");
    fails("SELECT * FROM p WHERE token(k2, k1) > 0", "The token function arguments must be in the partition key order: k1, k2");
    fails("SELECT * FROM nope", "nope");
    fails("SELECT writetime(k1) FROM p", "Cannot use selection function writeTime on PRIMARY KEY part k1");
    rows("SELECT * FROM p WHERE k1 = 1 ALLOW FILTERING", "");
    rows("SELECT * FROM p WHERE k1 = 1 AND k2 = 1 AND c2 = 1 ALLOW FILTERING", "");
}

Test(exec_select, filtering)
{
    mkks();
    ok("CREATE TABLE f (k int, c int, v int, s int static, l list<int>, m map<text, int>, PRIMARY KEY (k, c))");
    ok("INSERT INTO f (k, c, v, l, m) VALUES (1, 1, 10, [1, 2], {'a': 1})");
    ok("INSERT INTO f (k, c, v, l, m) VALUES (1, 2, 20, [3], {'b': 2})");
    ok("INSERT INTO f (k, c, v, l, m) VALUES (2, 1, 10, [2], {'a': 3})");
    ok("UPDATE f SET s = 7 WHERE k = 2");
    rows("SELECT k, c FROM f WHERE v = 10 ALLOW FILTERING", "1|1\n2|1\n");
    rows("SELECT k, c FROM f WHERE k = 1 AND v > 10 ALLOW FILTERING", "1|2\n");
    rows("SELECT k, c FROM f WHERE l CONTAINS 2 ALLOW FILTERING", "1|1\n2|1\n");
    rows("SELECT k, c FROM f WHERE m CONTAINS KEY 'b' ALLOW FILTERING", "1|2\n");
    rows("SELECT k, c FROM f WHERE m['a'] = 3 ALLOW FILTERING", "2|1\n");
    rows("SELECT k, c FROM f WHERE s = 7 ALLOW FILTERING", "2|1\n");
    rows("SELECT k, c FROM f WHERE c = 2 ALLOW FILTERING", "1|2\n");
    rows("SELECT k, c FROM f WHERE v IN (20, 30) ALLOW FILTERING", "1|2\n");
    rows("SELECT l, m FROM f WHERE k = 1 AND c = 1", "[1, 2]|{'a': 1}\n");
    result("SELECT m['a'], m['z'] FROM f WHERE k = 1 AND c = 1", "m['a']|m['z']\n1|null\n");
    ok("INSERT INTO f (k, c, m) VALUES (3, 1, {'a': 1, 'b': 2, 'c': 3, 'd': 4})");
    rows("SELECT m['b'..'c'], m[..'a'], m['c'..] FROM f WHERE k = 3 AND c = 1", "{'b': 2, 'c': 3}|{'a': 1}|{'c': 3, 'd': 4}\n");
    fails("SELECT l[0] FROM f", "Element selection is only allowed on sets and maps, but l is a list");
    fails("SELECT * FROM f WHERE v != 1 ALLOW FILTERING", "Unsupported \"!=\" relation: v != 1");
    fails("SELECT * FROM f WHERE m != {'a': 1} ALLOW FILTERING", "Unsupported \"!=\" relation: m != {'a': 1}");
    fails("SELECT * FROM f WHERE k = 1 AND c != 3", "Unsupported \"!=\" relation: c != 3");
    fails("SELECT * FROM f WHERE k = 1 AND (c) != (3)", "Unsupported \"!=\" relation: (c) != (3)");
    fails("SELECT * FROM f WHERE (k, v) != (3, 4)", "Unsupported \"!=\" relation: (k, v) != (3, 4)");
    /* token(): every component, no duplicates, nothing else, then the order (TokenRelation) */
    fails("SELECT * FROM f WHERE token(k, c) > 0", "The token() function must contains only partition key components");
    fails("SELECT * FROM f WHERE token(c) > 0", "The token() function must be applied to all partition key components or none of them");
    fails("SELECT * FROM f WHERE token(k, k) > 0", "The token() function contains duplicate partition key components");
    /* TokenRestriction's merge rules (SelectOrderedPartitionerTest.testTokenFunctionWithSingleColumnPartitionKey) */
    fails("SELECT * FROM f WHERE token(k) >= token(1) AND token(k) > token(2)", "More than one restriction was found for the start bound on k");
    fails("SELECT * FROM f WHERE token(k) <= token(1) AND token(k) < token(2)", "More than one restriction was found for the end bound on k");
    fails("SELECT * FROM f WHERE token(k) > token(1) AND token(k) = token(2)",
          "Columns \"k\" cannot be restricted by both an equality and an inequality relation");
    fails("SELECT * FROM f WHERE token(k) = token(1) AND token(k) > token(2)",
          "k cannot be restricted by more than one relation if it includes an Equal");
    rows("SELECT k FROM f WHERE token(k) > token(1) AND token(k) <= token(1)", "");
    /* Cassandra 4.1 (SelectTest.testFilteringWithoutIndices*): a null in a
     * row filter is refused when the query runs, so after ALLOW FILTERING */
    fails("SELECT * FROM f WHERE v = null", "Cannot execute this query as it might involve data filtering");
    fails("SELECT * FROM f WHERE v = null ALLOW FILTERING", "Unsupported null value for column v");
    fails("SELECT * FROM f WHERE s > null ALLOW FILTERING", "Unsupported null value for column s");
    fails("SELECT * FROM f WHERE l CONTAINS null ALLOW FILTERING", "Unsupported null value for column l");
    fails("SELECT * FROM f WHERE m CONTAINS KEY null ALLOW FILTERING", "Unsupported null value for column m");
    fails("SELECT * FROM f WHERE m[null] = 2 ALLOW FILTERING", "Unsupported null map key for column m");
    fails("SELECT * FROM f WHERE m['a'] = null ALLOW FILTERING", "Unsupported null map value for column m");
    fails("SELECT * FROM f WHERE k = null", "Invalid null value in condition for column k");
    /* map entries: receivers checked in Cassandra's order */
    fails("SELECT * FROM f WHERE l[0] = 1 ALLOW FILTERING",
          "Indexes on list entries (l[index] = value) are not currently supported.");
    fails("SELECT * FROM f WHERE v[0] = 1 ALLOW FILTERING", "Column v cannot be used as a map");
    fails("SELECT * FROM f WHERE m['a'] > 1 ALLOW FILTERING", "Only EQ relations are supported on map entries");
    ok("CREATE TABLE ff (k int PRIMARY KEY, fm frozen<map<int, int>>, d duration, td tuple<int, duration>)");
    ok("CREATE TABLE fcnt (k int PRIMARY KEY, cnt counter)");
    fails("SELECT * FROM ff WHERE fm[1] = 6 ALLOW FILTERING",
          "Map-entry equality predicates on frozen map column fm are not supported");
    /* durations have no order */
    fails("SELECT * FROM ff WHERE d > 1s ALLOW FILTERING", "Slice restrictions are not supported on duration columns");
    fails("SELECT * FROM ff WHERE td <= (1, 2s) ALLOW FILTERING",
          "Slice restrictions are not supported on tuples containing durations");
    fails("SELECT * FROM fcnt WHERE cnt = null ALLOW FILTERING", "Invalid null value for counter increment/decrement");
}

Test(exec_select, statics_and_distinct)
{
    mkks();
    ok("CREATE TABLE s (k int, c int, v int, st int static, PRIMARY KEY (k, c))");
    ok("UPDATE s SET st = 5 WHERE k = 1");
    ok("INSERT INTO s (k, c, v, st) VALUES (2, 1, 10, 6)");
    ok("INSERT INTO s (k, c, v) VALUES (2, 2, 20)");
    result("SELECT * FROM s WHERE k = 1", "k|c|st|v\n1|null|5|null\n");
    rows("SELECT * FROM s WHERE k = 2", "2|1|6|10\n2|2|6|20\n");
    rows("SELECT * FROM s WHERE k = 1 AND c = 1", "");
    rows("SELECT DISTINCT k, st FROM s", "1|5\n2|6\n");
    /* static-only partitions show up in full-partition queries */
    rows("SELECT k, c FROM s", "1|null\n2|1\n2|2\n");
    rows("SELECT k, c FROM s WHERE c > 0 ALLOW FILTERING", "2|1\n2|2\n");
    rows("SELECT count(*) FROM s", "3\n");
    rows("SELECT k, c, st FROM s", "1|null|5\n2|1|6\n2|2|6\n");
    rows("SELECT count(*) FROM s WHERE k = 2", "2\n");
}

/* Statics over several sstables: a query that fetches no static (a
 * clustering restriction, no static selected or filtered) skips the
 * static row and the sstables its slice misses, and answers the same as
 * one that does; static values never leak into the rows of one that
 * does not select them; paging through either returns every row once. */
Test(exec_select, statics_across_sstables_fetched_or_not)
{
    mkks();
    ok("CREATE TABLE ss (k int, c int, v int, st int static, PRIMARY KEY (k, c))");
    const char *tb[] = { "ss" };
    cs_error fe;
    cs_error_init(&fe);
    ok("INSERT INTO ss (k, c, v, st) VALUES (1, 1, 10, 5)");
    ok("UPDATE ss SET st = 9 WHERE k = 3");
    cr_assert_eq(cql_admin_flush(g_ctx, "ks", tb, 1, &fe), 0, "%s", fe.msg);
    for (int c = 5; c < 12; c++)
        okf("INSERT INTO ss (k, c, v) VALUES (1, %d, %d)", c, c * 10);
    cr_assert_eq(cql_admin_flush(g_ctx, "ks", tb, 1, &fe), 0, "%s", fe.msg);
    ok("UPDATE ss SET st = 6 WHERE k = 1");
    rows("SELECT c, v FROM ss WHERE k = 1 AND c > 9", "10|100\n11|110\n");
    rows("SELECT c, v, st FROM ss WHERE k = 1 AND c > 9", "10|100|6\n11|110|6\n");
    rows("SELECT c, st FROM ss WHERE k = 1 AND c < 2", "1|6\n");
    rows("SELECT c FROM ss WHERE k = 1 AND c > 9 AND st = 6 ALLOW FILTERING", "10\n11\n");
    rows("SELECT c FROM ss WHERE k = 1 AND c > 9 AND st = 5 ALLOW FILTERING", "");
    rows("SELECT count(*) FROM ss WHERE k = 1 AND c >= 5", "7\n");
    rows("SELECT max(st) FROM ss WHERE k = 1 AND c >= 5", "6\n");
    /* a static-only partition is a row only for a partition-level query */
    rows("SELECT k, c, v FROM ss WHERE k = 3", "3|null|null\n");
    rows("SELECT k, c, v FROM ss WHERE k = 3 AND c > 0", "");
    rows("SELECT k, c FROM ss WHERE k IN (1, 3) AND c > 10", "1|11\n");
    rows("SELECT c, v FROM ss WHERE k = 1 AND c > 5 ORDER BY c DESC LIMIT 2", "11|110\n10|100\n");
    cr_assert_eq(paged_equals("SELECT c, v FROM ss WHERE k = 1 AND c > 1", 2), 4);
    cr_assert_eq(paged_equals("SELECT * FROM ss WHERE k = 1 AND c > 1", 2), 4);
    cr_assert_geq(paged_equals("SELECT k, c, v FROM ss WHERE c > 1 ALLOW FILTERING", 3), 3);
}

/* IN on the partition key with ORDER BY: rows, groups and JSON rows are
 * sorted across the partitions before LIMIT (Cassandra 4.1
 * SelectGroupByTest.testGroupByWithoutPaging, with paging off). */
Test(exec_select, in_order_by_across_partitions)
{
    mkks();
    ok("CREATE TABLE g (a int, b int, c int, d int, e int, PRIMARY KEY (a, b, c, d))");
    ok("INSERT INTO g (a, b, c, d, e) VALUES (1, 2, 1, 3, 6)");
    ok("INSERT INTO g (a, b, c, d, e) VALUES (1, 2, 2, 6, 12)");
    ok("INSERT INTO g (a, b, c, d, e) VALUES (1, 4, 2, 12, 24)");
    ok("INSERT INTO g (a, b, c, d, e) VALUES (2, 2, 3, 3, 6)");
    ok("INSERT INTO g (a, b, c, d, e) VALUES (2, 4, 3, 6, 12)");
    ok("INSERT INTO g (a, b, c, d, e) VALUES (4, 8, 2, 12, 24)");
    rows("SELECT a, b, c, count(b), max(e) FROM g WHERE a IN (1, 2, 4) GROUP BY a, b ORDER BY b DESC, c DESC",
         "4|8|2|1|24\n2|4|3|1|12\n1|4|2|1|24\n2|2|3|1|6\n1|2|2|2|12\n");   /* a group shows its first row in query order (c DESC) */
    rows("SELECT a, b, count(b) FROM g WHERE a IN (1, 2, 4) GROUP BY a, b ORDER BY b DESC, c DESC LIMIT 2",
         "4|8|1\n2|4|1\n");
    rows("SELECT a, b, c, d FROM g WHERE a IN (1, 2, 4) ORDER BY b DESC, c DESC LIMIT 3", "4|8|2|12\n2|4|3|6\n1|4|2|12\n");
    rows("SELECT JSON a, b FROM g WHERE a IN (1, 4) ORDER BY b DESC LIMIT 2",
         "'{\"a\": 4, \"b\": 8}'\n'{\"a\": 1, \"b\": 4}'\n");
}

Test(exec_select, aggregates_and_group_by)
{
    mkks();
    ok("CREATE TABLE a (k int, c int, i int, b bigint, d double, f float, t text, vi varint, de decimal, PRIMARY KEY (k, c))");
    ok("INSERT INTO a (k, c, i, b, d, f, t, vi, de) VALUES (1, 1, 1, 10, 1.5, 0.5, 'x', 100, 1.5)");
    ok("INSERT INTO a (k, c, i, b, d, f, t, vi, de) VALUES (1, 2, 2, 20, 2.5, 1.5, 'y', 200, 2.5)");
    ok("INSERT INTO a (k, c, i, b, d, f, t) VALUES (1, 3, 4, 30, 3.0, 2.0, 'a')");
    ok("INSERT INTO a (k, c) VALUES (2, 1)");
    result("SELECT count(*), count(i), min(i), max(i), sum(i), avg(i) FROM a WHERE k = 1",
           "count|system.count(i)|system.min(i)|system.max(i)|system.sum(i)|system.avg(i)\n3|3|1|4|7|2\n");
    rows("SELECT sum(b), avg(b), sum(d), avg(d), min(t), max(t) FROM a WHERE k = 1", "60|20|7.0|2.3333333333333335|'a'|'y'\n");
    rows("SELECT sum(vi), avg(de) FROM a WHERE k = 1", "300|2.0\n");
    rows("SELECT count(*), min(i), sum(i) FROM a WHERE k = 3", "0|null|0\n");
    cr_assert_str_eq(g_warn, "");
    rows("SELECT k, count(*) FROM a GROUP BY k", "1|3\n2|1\n");
    cr_assert_str_eq(g_warn, "Aggregation query used without partition key\n");
    rows("SELECT count(*) FROM a WHERE k IN (1, 2)", "4\n");
    cr_assert_str_eq(g_warn, "Aggregation query used on multiple partition keys (IN restriction)\n");
    rows("SELECT k, c, max(i) FROM a WHERE k = 1 GROUP BY k, c LIMIT 2", "1|1|1\n1|2|2\n");
    fails("SELECT sum(t) FROM a", "Invalid call to function sum");
    fails("SELECT k, count(*) FROM a GROUP BY c", "Group by currently only support groups of columns following their declared order in the PRIMARY KEY");
    fails("SELECT k, count(*) FROM a GROUP BY i", "Group by is currently only supported on the columns of the PRIMARY KEY, got i");
    /* a column restricted by = may be skipped */
    rows("SELECT c, count(*) FROM a WHERE k = 1 GROUP BY c", "1|1\n2|1\n3|1\n");
    fails("SELECT c, count(*) FROM a WHERE k IN (1, 2) GROUP BY c", "Group by currently only support groups of columns following their declared order in the PRIMARY KEY");
    ok("CREATE TABLE g2 (a int, b int, c int, PRIMARY KEY ((a, b), c))");
    fails("SELECT count(*) FROM g2 GROUP BY a", "Group by is not supported on only a part of the partition key");
    fails("SELECT DISTINCT a, b FROM g2 GROUP BY a, b, c", "Grouping on clustering columns is not allowed for SELECT DISTINCT queries");
    /* functions over aggregates (FunctionSelector over aggregate arguments):
     * applied to the group's results, per group; a plain column beside
     * them takes the group's first row */
    rows("SELECT max(i) + 1, count(*) + 1, min(i) - max(i), sum(i) / count(*) FROM a WHERE k = 1", "5|4|-3|2\n");
    rows("SELECT k + max(c), CAST(count(*) AS int), blobAsInt(intAsBlob(max(i))), toJson(max(t)) FROM a WHERE k = 1",
         "4|3|4|'\"y\"'\n");
    rows("SELECT k, max(c) * 10 FROM a GROUP BY k", "1|30\n2|10\n");
    rows("SELECT k, c, count(*) + max(i) FROM a WHERE k = 1 GROUP BY k, c", "1|1|2\n1|2|3\n1|3|5\n");
    rows("SELECT max(i) + 1 FROM a WHERE k = 3", "null\n");
    rows("SELECT count(*) + 1 FROM a WHERE k = 3", "1\n");
    rows("SELECT count(*), 7, intAsBlob(1), k FROM a WHERE k = 3", "0|7|0x00000001|null\n");
    fails("SELECT count(max(i)) FROM a", "aggregate functions cannot be used as arguments of aggregate functions");
    fails("SELECT max(i + max(i)) FROM a", "aggregate functions cannot be used as arguments of aggregate functions");
    /* the JSON functions out of place, in FunctionResolver's words */
    fails("SELECT fromJson('1') FROM a", "fromJson() cannot be used in the selection clause of a SELECT statement");
    fails("SELECT * FROM a WHERE k = 1 AND c = toJson(1)", "toJson() may only be used within the selection clause of SELECT statements");
    fails("INSERT INTO a (k, c, t) VALUES (5, 1, toJson(1))", "toJson() may only be used within the selection clause of SELECT statements");
}

/* OperationFcts on varint and decimal: IntegerType's BigInteger and
 * DecimalType's BigDecimal arithmetic, with the wider type as the result
 * (varint with a floating operand: decimal), fixed-width operands entering
 * a decimal operation as BigDecimal.valueOf(double) ("2" is 2.0), division
 * at DecimalType's scale with HALF_UP and trailing zeros stripped, and the
 * failures as FunctionExecutionException (0x1400). */
Test(exec_select, varint_and_decimal_operators)
{
    mkks();
    ok("CREATE TABLE nums (k int PRIMARY KEY, vi varint, de decimal, f float, dd double)");
    ok("INSERT INTO nums (k, vi, de, f, dd) VALUES (1, 12345678901234567890, 3.14159, 1.5, 2.25)");
    rows("SELECT vi + 1, vi - k, vi * vi, vi / 7, vi % 7, -vi FROM nums WHERE k = 1",
         "12345678901234567891|12345678901234567889|152415787532388367501905199875019052100|"
         "1763668414462081127|1|-12345678901234567890\n");
    rows("SELECT de * 2, de + k, de - 1, de / 3, de % 1, -de FROM nums WHERE k = 1",
         "6.283180|4.14159|2.14159|1.04719666666666666666666666666667|0.14159|-3.14159\n");
    rows("SELECT vi * de, dd + vi, f + vi, vi * 1.5 FROM nums WHERE k = 1",
         "38785061379329506137.54510|12345678901234567892.25|12345678901234567891.5|18518518351851851835.0\n");
    rows("SELECT (decimal)1 / 3, (decimal)10 / 4, (decimal)2 / 0.5, (decimal)0 / 5 FROM nums WHERE k = 1",
         "0.33333333333333333333333333333333|2.5|4|0\n");
    rows("SELECT (decimal)7.5 % 2, (decimal)7 % 2.5, (decimal)100 % 0.5, (decimal)-7.5 % 2 FROM nums WHERE k = 1",
         "1.5|2.0|0|-1.5\n");
    rows("SELECT (varint)-7 / 2, (varint)-7 % 2, (varint)7 / -2, (decimal)1.00 * 2 FROM nums WHERE k = 1",
         "-3|-1|-3|2.000\n");
    rows("SELECT vi / 12345678901234567 FROM nums WHERE k = 1", "1000\n");
    /* float results: both operands toFloat() first (16777217 becomes
     * 16777216f), then float arithmetic; % is Java's fmod */
    rows("SELECT 16777217 + (float)1.0, 1e20 % 3.0, f % 0.4, -f FROM nums WHERE k = 1", "1.6777216E7|1.0|0.29999999999999993|-1.5\n");
    fails("SELECT vi / 0 FROM nums WHERE k = 1", "the operation 'varint / int' failed: BigInteger divide by zero");
    cr_assert_eq(g_err.code, CS_ERR_FUNCTION_FAILURE);
    cr_assert_str_eq(g_err.table, "_divide");
    cr_assert_str_eq(g_err.arg_types, "varint, int");
    fails("SELECT de % 0 FROM nums WHERE k = 1", "the operation 'decimal % int' failed: Division by zero");
    fails("SELECT (decimal)0 / 0 FROM nums WHERE k = 1", "failed: Division undefined");
    fails("SELECT de + (double)NaN FROM nums WHERE k = 1",
          "the operation 'decimal + double' failed: A NaN cannot be converted into a decimal");
    fails("SELECT k / 0 FROM nums WHERE k = 1", "the operation 'int / int' failed: / by zero");
    cr_assert_eq(g_err.code, CS_ERR_FUNCTION_FAILURE);
}

Test(exec_select, functions_writetime_ttl_json)
{
    mkks();
    ok("CREATE TABLE fn (k int PRIMARY KEY, v int, t text, ts timestamp, u timeuuid)");
    ok("INSERT INTO fn (k, v, t, ts, u) VALUES (1, 5, 'hi', '2021-01-02 03:04:05+0000', now()) USING TIMESTAMP 1234 AND TTL 1000");
    rows("SELECT writetime(v) FROM fn WHERE k = 1", "1234\n");
    static char out[4096];
    cr_assert_eq(run("SELECT ttl(v) FROM fn WHERE k = 1", NULL, out, sizeof out), 0);
    int ttl = atoi(body_of(out));
    cr_assert(ttl > 990 && ttl <= 1000, "ttl %d", ttl);
    rows("SELECT toJson(t), toJson(v) FROM fn WHERE k = 1", "'\"hi\"'|'5'\n");
    result("SELECT JSON k, t FROM fn WHERE k = 1", "[json]\n'{\"k\": 1, \"t\": \"hi\"}'\n");
    rows("SELECT JSON k AS \"Key\", count(*) FROM fn WHERE k = 1", "'{\"\\\"Key\\\"\": 1, \"count\": 1}'\n");
    rows("SELECT toUnixTimestamp(ts) FROM fn WHERE k = 1", "1609556645000\n");
    rows("SELECT CAST(v AS text), CAST(v AS double) FROM fn WHERE k = 1", "'5'|5.0\n");
    rows("SELECT blobAsInt(intAsBlob(v)) FROM fn WHERE k = 1", "5\n");
    ok("INSERT INTO fn (k, v, t, ts) VALUES (2, fromJson('7'), fromJson('\"x\"'), toTimestamp(now()))");
    rows("SELECT v, t FROM fn WHERE k = 2", "7|'x'\n");
    rows("SELECT k FROM fn WHERE k = 2 AND ts <= currentTimestamp() AND ts > '2020-01-01' ALLOW FILTERING", "2\n");
    fails("INSERT INTO fn (k, v) VALUES (3, fromJson('\"x\"'))", "");
    fails("SELECT nosuchfn(v) FROM fn", "Unknown function 'nosuchfn'");
    /* a term's function: FunctionCall.Raw.prepare's words */
    fails("INSERT INTO fn (k, v) VALUES (9, nosuchfn(1))", "Unknown function nosuchfn called");
    fails("SELECT v FROM fn WHERE k = nosuchfn(1)", "Unknown function nosuchfn called");
    /* two overloads: FunctionResolver finds no signature of two arguments; one: the count first */
    fails("SELECT toTimestamp(v, v) FROM fn", "Invalid call to function totimestamp, none of its type signatures match "
          "(known type signatures: system.totimestamp : (timeuuid) -> timestamp, system.totimestamp : (date) -> timestamp)");
    fails("SELECT dateOf(v, v) FROM fn", "Invalid number of arguments in call to function system.dateof: 1 required but 2 provided");
    fails("SELECT dateOf(v) FROM fn", "Type error: v cannot be passed as argument 0 of function system.dateof of type timeuuid");
    fails("SELECT intAsBlob(k), bigintAsBlob(v) FROM fn", "Type error: v cannot be passed as argument 0 of function system.bigintasblob of type bigint");
    fails("SELECT toUnixTimestamp(123) FROM fn", "Ambiguous call to function tounixtimestamp (can be matched by following "
          "signatures: system.tounixtimestamp : (timestamp) -> bigint, system.tounixtimestamp : (date) -> bigint): use type casts to disambiguate");
    rows("SELECT toDate(1), toTimestamp('2024-01-01'), blobAsInt(v) FROM fn WHERE k = 1", "'1970-01-01'|1704067200000|5\n");
    /* in terms: the resolver types the literal too */
    ok("INSERT INTO fn (k, ts) VALUES (77, toTimestamp('2024-01-02'))");
    rows("SELECT ts FROM fn WHERE k = 77", "1704153600000\n");
    fails("INSERT INTO fn (k, ts) VALUES (78, dateOf('x'))",
          "Type error: 'x' cannot be passed as argument 0 of function system.dateof of type timeuuid");
    fails("INSERT INTO fn (k, ts) VALUES (78, toTimestamp(1.5))",
          "Invalid call to function totimestamp, none of its type signatures match");
    result("SELECT v + 1, v * 2, v - 10, v / 2, v % 3, -v FROM fn WHERE k = 1",
           "v + 1|v * 2|v - 10|v / 2|v % 3|-v\n6|10|-5|2|2|-5\n");
    rows("SELECT v + 1.5 FROM fn WHERE k = 1", "6.5\n");
    fails("SELECT v / 0 FROM fn WHERE k = 1", "/ by zero");
    result("SELECT 1, 'a', (bigint)2 FROM fn WHERE k = 1", "1|'a'|(bigint)2\n1|'a'|2\n");
    {
        cql_result r;
        cql_result_init(&r);
        cs_error_init(&g_err);
        cr_assert_neq(cql_prepare(g_ctx, &g_sess, "SELECT ? FROM fn", 16, NULL, &r, &g_err), 0);
        cr_assert_str_eq(g_err.msg, "Cannot infer type for term ? in selection clause (try using a cast to force a type)");
        cql_result_destroy(&r);
    }
    rows("SELECT k FROM fn WHERE k = 1 AND u < now() ALLOW FILTERING", "1\n");
    rows("SELECT k FROM fn WHERE k = 1 AND u > maxTimeuuid('2030-01-01 00:00+0000') ALLOW FILTERING", "");
}

Test(exec_select, tombstone_thresholds)
{
    mkks();
    ok("CREATE TABLE tb (k int, c int, v int, PRIMARY KEY (k, c))");
    for (int c = 0; c < 30; c++) {
        okf("INSERT INTO tb (k, c, v) VALUES (1, %d, 1)", c);
        okf("DELETE FROM tb WHERE k = 1 AND c = %d", c);
    }
    ok("INSERT INTO tb (k, c, v) VALUES (1, 100, 1)");
    g_ctx->cfg.tombstone_warn_threshold = 10;
    g_ctx->cfg.tombstone_failure_threshold = 1000;
    rows("SELECT c FROM tb WHERE k = 1", "100\n");
    cr_assert(strstr(g_warn, "Read 1 live rows and ") && strstr(g_warn, "tombstone cells for query SELECT c FROM tb WHERE k = 1; token -4069959284402364209"),
              "warning: %s", g_warn);
    g_ctx->cfg.tombstone_failure_threshold = 20;
    cr_assert_neq(run("SELECT c FROM tb WHERE k = 1", NULL, NULL, 0), 0);
    cr_assert_eq(g_err.code, CS_ERR_READ_FAILURE);
    cr_assert_eq(g_err.numfailures, 1);
    cr_assert_eq(g_err.blockfor, 1);
}

/* read_request_timeout / range_request_timeout: a read still scanning at
 * its timeout ends with Cassandra's ReadTimeout.  A timeout of 0 ms is
 * past at the first clock reading (every CQL_DEADLINE_EVERY partitions or
 * rows), so a short read still answers and a long one never does. */
Test(exec_select, request_timeouts)
{
    mkks();
    ok("CREATE TABLE tw (k int, c int, v int, PRIMARY KEY (k, c))");
    ok("CREATE TABLE tk (k int PRIMARY KEY, v int)");
    ok("CREATE INDEX ON tk (v)");
    for (int c = 0; c < 300; c++) {
        okf("INSERT INTO tw (k, c, v) VALUES (1, %d, 1)", c);
        okf("INSERT INTO tk (k, v) VALUES (%d, 7)", c);
    }
    cql_timeout_set(g_ctx, CQL_TIMEOUT_READ, 0);
    rows("SELECT v FROM tw WHERE k = 1 AND c = 5", "1\n");             /* short: answers */
    rows("SELECT count(*) FROM tw WHERE k = 1 AND c < 100", "100\n");
    rows("SELECT count(*) FROM tk", "300\n");                          /* a range read: its own timeout */
    cr_assert_neq(run("SELECT count(*) FROM tw WHERE k = 1", NULL, NULL, 0), 0);
    cr_assert_eq(g_err.code, CS_ERR_READ_TIMEOUT, "code %x: %s", g_err.code, g_err.msg);
    cr_assert_str_eq(g_err.msg, "Operation timed out - received only 0 responses.");
    cr_assert_eq(g_err.received, 0);
    cr_assert_eq(g_err.blockfor, 1);
    cr_assert_eq(g_err.data_present, 0);
    cr_assert_neq(run("SELECT * FROM tw WHERE k IN (1, 2)", NULL, NULL, 0), 0);
    cr_assert_eq(g_err.code, CS_ERR_READ_TIMEOUT);
    cql_timeout_set(g_ctx, CQL_TIMEOUT_READ, 5000);
    cql_timeout_set(g_ctx, CQL_TIMEOUT_RANGE, 0);
    rows("SELECT count(*) FROM tw WHERE k = 1", "300\n");
    cr_assert_neq(run("SELECT count(*) FROM tk", NULL, NULL, 0), 0);
    cr_assert_eq(g_err.code, CS_ERR_READ_TIMEOUT);
    cr_assert_neq(run("SELECT k FROM tk WHERE v = 7", NULL, NULL, 0), 0);   /* an index read is a range read */
    cr_assert_eq(g_err.code, CS_ERR_READ_TIMEOUT);
    cr_assert_neq(run("SELECT k FROM tw WHERE v = 1 ALLOW FILTERING", NULL, NULL, 0), 0);
    cr_assert_eq(g_err.code, CS_ERR_READ_TIMEOUT);
    cql_node_metrics *nm = cql_node_metrics_get(g_ctx);
    cr_assert(nm && nm->read_timeouts == 2 && nm->range_timeouts == 3, "%llu %llu",
              nm ? (unsigned long long)nm->read_timeouts : 0ULL, nm ? (unsigned long long)nm->range_timeouts : 0ULL);
    cql_timeout_set(g_ctx, CQL_TIMEOUT_RANGE, 10000);
    rows("SELECT count(*) FROM tk", "300\n");
    rows("SELECT count(*) FROM tk WHERE v = 7", "300\n");
}

/* timestamp / date +/- duration (OperationFcts' TemporalOperationFunction):
 * months through a UTC calendar with the day clamped to the month's end,
 * days and milliseconds added; precision checks; operands as terms (with a
 * timestamp or date receiver) and as selectors; the refusal messages. */
Test(exec_select, temporal_arithmetic)
{
    mkks();
    ok("CREATE TABLE ta (p int, c timestamp, d date, v int, du duration, PRIMARY KEY (p, c))");
    ok("INSERT INTO ta (p, c, d, v, du) VALUES (1, '2024-01-31 10:00:00+0000', '2024-03-31', 1, 1mo)");
    ok("INSERT INTO ta (p, c, d) VALUES (2, '1969-12-31 23:00:00+0000', '1969-12-31')");
    /* timestamps render as ms since the epoch, dates quoted */
    rows("SELECT c + 1mo, d - 1mo, c + 1mo1d, d + 1y, c - 1h30m, c + du, d + du FROM ta WHERE p = 1",
         "1709200800000|'2024-02-29'|1709287200000|'2025-03-31'|1706689800000|1709200800000|'2024-04-30'\n");
    rows("SELECT c + 1h, d + 1d, d - 1d, c - 1y, c + -1d FROM ta WHERE p = 2",
         "0|'1970-01-01'|'1969-12-30'|-31539600000|-90000000\n");
    rows("SELECT c + du FROM ta WHERE p = 2", "null\n");    /* a null operand: null */
    fails("SELECT c + 1ms1us FROM ta WHERE p = 1", "The duration must have a millisecond precision. Was: 1ms1us");
    fails("SELECT d + 1h FROM ta WHERE p = 1", "The duration must have a day precision. Was: 1h");
    fails("SELECT d + 1d1ns FROM ta WHERE p = 1", "The duration must have a day precision. Was: 1d1ns");
    fails("SELECT 1d + c FROM ta WHERE p = 1", "the '+' operation is not supported between 1d and c");
    fails("SELECT v * c FROM ta WHERE p = 1", "the '*' operation is not supported between v and c");
    fails("SELECT du + 1d FROM ta WHERE p = 1", "the '+' operation is not supported between du and 1d");
    fails("SELECT c - d FROM ta WHERE p = 1", "the '-' operation is not supported between c and d");
    /* terms: the receiver types the operands */
    rows("SELECT v FROM ta WHERE p = 1 AND c = '2024-01-31 09:00:00+0000' + 1h", "1\n");
    rows("SELECT v FROM ta WHERE p = 1 AND c > '2024-02-01' - 15h", "1\n");
    rows("SELECT v FROM ta WHERE p = 1 AND c > '2024-02-01' - 13h", "");
    ok("INSERT INTO ta (p, c, d, v) VALUES (3, '2024-02-29' + 1y, '2024-02-29' + 1y, 3)");
    rows("SELECT c, d FROM ta WHERE p = 3", "1740700800000|'2025-02-28'\n");
    ok("INSERT INTO ta (p, c, d, v) VALUES (4, currentTimestamp() - 1h, currentDate() - 7d, 4)");
    rows("SELECT v FROM ta WHERE p = 4 AND c > currentTimestamp() - 2h AND c < currentTimestamp()", "4\n");
    rows("SELECT v FROM ta WHERE p = 4 AND c < currentTimestamp() - 2h", "");
    fails("UPDATE ta SET d = '2024-01-01' + 1h WHERE p = 5 AND c = 0", "The duration must have a day precision. Was: 1h");
    fails("UPDATE ta SET v = 1 + 1d WHERE p = 5 AND c = 0", "the '+' operation is not supported between 1 and 1d");
}

/* floor() (TimeFcts): timestamp, timeuuid, date and time flavours, a start
 * time, months through the calendar (Java's quirk kept: a months-only
 * floor is the start plus whole months, even past the time); GROUP BY a
 * function of the last clustering column, with its refusals. */
Test(exec_select, floor_and_group_by_time)
{
    mkks();
    ok("CREATE TABLE fl (s text, ts timestamp, d date, tm time, u timeuuid, v int, PRIMARY KEY (s, ts))");
    ok("INSERT INTO fl (s, ts, d, tm, u, v) VALUES ('a', '2016-09-27 16:10:00+0000', '2016-09-27', '16:10:00', "
       "50554d6e-29bb-11e5-b345-feff819cdc9f, 1)");
    ok("INSERT INTO fl (s, ts, d, tm, v) VALUES ('a', '2016-09-27 16:12:00+0000', '2016-09-29', '16:12:00', 2)");
    ok("INSERT INTO fl (s, ts, d, tm, v) VALUES ('a', '2016-09-27 17:02:00+0000', '2016-10-05', '17:02:00', 3)");
    ok("INSERT INTO fl (s, ts, v) VALUES ('b', '2016-09-27 16:10:00+0000', 10)");
    /* 2016-09-27 16:00 = 1474992000000; dates and times quoted */
    rows("SELECT floor(ts, 1h), floor(ts, 5m), floor(ts, 2h, '2016-09-27 15:00:00+0000'), floor(d, 1w), "
         "floor(tm, 30m), floor(ts, 1mo), floor(d, 1mo, '2016-01-31') FROM fl WHERE s = 'a'",
         "1474992000000|1474992600000|1474988400000|'2016-09-22'|'16:00:00.000000000'|1472688000000|'2016-09-30'\n"
         "1474992000000|1474992600000|1474988400000|'2016-09-29'|'16:00:00.000000000'|1472688000000|'2016-09-30'\n"
         "1474995600000|1474995600000|1474995600000|'2016-09-29'|'17:00:00.000000000'|1472688000000|'2016-10-31'\n");
    rows("SELECT floor(u, 1d) FROM fl WHERE s = 'a' LIMIT 1", "1436832000000\n");
    rows("SELECT floor(d, 1w) FROM fl WHERE s = 'b'", "null\n");
    fails("SELECT floor(ts, 1us) FROM fl", "The floor cannot be computed for the 1us duration as precision is below 1 millisecond");
    fails("SELECT floor(ts, 1h, '2020-01-01') FROM fl", "The floor function starting time is greater than the provided time");
    fails("SELECT floor(ts, -1h) FROM fl", "Negative durations are not supported by the floor function");
    fails("SELECT floor(d, 1h) FROM fl WHERE s = 'a'",
          "The floor on date values cannot be computed for the 1h duration as precision is below 1 day");
    fails("SELECT floor(tm, 2d) FROM fl WHERE s = 'a'",
          "For time values, the floor can only be computed for durations smaller that a day");
    fails("SELECT floor(v, 1h) FROM fl",
          "Invalid call to function floor, none of its type signatures match (known type signatures: "
          "system.floor : (timestamp, duration) -> timestamp, system.floor : (timestamp, duration, timestamp) -> timestamp, ");
    rows("SELECT v FROM fl WHERE s = 'a' AND ts >= floor('2016-09-27 17:30:00+0000', 1h)", "3\n");
    /* GROUP BY a function of the last clustering column */
    rows("SELECT s, floor(ts, 1h), count(*), sum(v) FROM fl WHERE s = 'a' GROUP BY s, floor(ts, 1h)",
         "'a'|1474992000000|2|3\n'a'|1474995600000|1|3\n");
    rows("SELECT count(*) FROM fl WHERE s = 'a' GROUP BY floor(ts, 30m)", "2\n1\n");   /* s restricted by = */
    rows("SELECT s, count(*) FROM fl GROUP BY s, floor(ts, 1d)", "'a'|3\n'b'|1\n");
    cr_assert_geq(paged_equals("SELECT s, floor(ts, 1h), count(*) FROM fl GROUP BY s, floor(ts, 1h)", 1), 3);
    fails("SELECT count(*) FROM fl GROUP BY s, floor(ts, 1h), ts",
          "Functions are only supported on the last element of the GROUP BY clause");
    /* a second function: getAggregationSpecFactory goes on from the first's column */
    fails("SELECT count(*) FROM fl GROUP BY s, floor(ts, 1h), floor(ts, 2h)",
          "Group by currently only support groups of columns following their declared order in the PRIMARY KEY");
    /* on two clustering columns the last function wins, the first column groups by its values */
    ok("CREATE TABLE fl2 (p int, c1 timestamp, c2 timestamp, PRIMARY KEY (p, c1, c2))");
    ok("INSERT INTO fl2 (p, c1, c2) VALUES (1, '2016-09-27 16:00:00+0000', '2016-09-27 16:01:00+0000')");
    ok("INSERT INTO fl2 (p, c1, c2) VALUES (1, '2016-09-27 16:00:00+0000', '2016-09-27 16:02:00+0000')");
    ok("INSERT INTO fl2 (p, c1, c2) VALUES (1, '2016-09-27 16:30:00+0000', '2016-09-27 16:03:00+0000')");
    rows("SELECT count(*) FROM fl2 WHERE p = 1 GROUP BY p, floor(c1, 1h), floor(c2, 1h)", "2\n1\n");
    rows("SELECT count(*) FROM fl2 WHERE p = 1 GROUP BY p, floor(c1, 1h)", "3\n");
    fails("SELECT count(*) FROM fl GROUP BY s, max(ts)",
          "Aggregate functions are not supported within the GROUP BY clause, got: system.max");
    fails("SELECT count(*) FROM fl GROUP BY s, floor(v, 1h)", "Invalid call to function floor");
    fails("SELECT count(*) FROM fl GROUP BY s, floor(ts, 1h, ts)",
          "GROUP BY functions accept only one clustering column as parameter, got: ts,ts");
    fails("SELECT count(*) FROM fl GROUP BY floor(ts, 1h)",
          "Group by currently only support groups of columns following their declared order in the PRIMARY KEY");
    fails("SELECT count(*) FROM fl GROUP BY s, toUnixTimestamp(d)", "Group by functions are only supported on clustering columns, got d");
    fails("SELECT count(*) FROM fl GROUP BY s, toDate(d)", "Invalid call to function todate, none of its type signatures match");
    fails("SELECT count(*) FROM fl GROUP BY s, 1h", "Group by is currently only supported on the columns of the PRIMARY KEY, got 1h");
}

/* CAST in a selection as Selectable.WithCast resolves it among CastFcts'
 * castAs<type> functions: an exact input, else the one input that takes
 * the column's values (a timestamp is a bigint to castAsVarint, a varint to
 * castAsBigint); Number conversions (float to decimal through
 * Float.toString); the messages for no function, no match, two matches. */
Test(exec_select, casts_as_cassandra)
{
    mkks();
    ok("CREATE TABLE cs (k int PRIMARY KEY, ts timestamp, f float, dc decimal, b boolean, bl blob, t text, a ascii, "
       "du duration, l list<int>, n double)");
    ok("INSERT INTO cs (k, ts, f, dc, b, bl, t, a, du, l, n) VALUES (1, '2024-05-01 10:20:30.456+0000', 1.5, 1.50, "
       "true, 0xcafe, 'x', 'y', 1h, [1], NaN)");
    rows("SELECT CAST(f AS decimal), CAST(f AS int), CAST(dc AS bigint), CAST(ts AS bigint), CAST(ts AS varint), "
         "CAST(k AS varint), CAST(a AS text), CAST(ts AS text), CAST(ts AS date) FROM cs",
         "1.5|1|1|1714558830456|1714558830456|1|'y'|'2024-05-01T10:20:30.456Z'|'2024-05-01'\n");
    fails("SELECT CAST(k AS blob) FROM cs", "k cannot be cast to blob");
    fails("SELECT CAST(b AS int) FROM cs", "Invalid call to function system.castAsInt, none of its type signatures match "
          "(known type signatures: system.castAsInt : (tinyint) -> int, system.castAsInt : (smallint) -> int, "
          "system.castAsInt : (bigint) -> int, system.castAsInt : (float) -> int, system.castAsInt : (double) -> int, "
          "system.castAsInt : (decimal) -> int, system.castAsInt : (counter) -> int, system.castAsInt : (varint) -> int)");
    fails("SELECT CAST(ts AS int) FROM cs", "Ambiguous call to function system.castAsInt (can be matched by following "
          "signatures: system.castAsInt : (bigint) -> int, system.castAsInt : (varint) -> int): use type casts to disambiguate");
    fails("SELECT CAST(bl AS text) FROM cs", "Invalid call to function system.castAsText, none of its type signatures match");
    fails("SELECT CAST(t AS ascii) FROM cs", "Invalid call to function system.castAsAscii, none of its type signatures match");
    fails("SELECT CAST(du AS text) FROM cs", "Invalid call to function system.castAsText");
    fails("SELECT CAST(l AS text) FROM cs", "Invalid call to function system.castAsText");
    cr_assert_neq(run("SELECT CAST(n AS decimal) FROM cs", NULL, NULL, 0), 0);
    cr_assert_eq(g_err.code, CS_ERR_FUNCTION_FAILURE);
    cr_assert_str_eq(g_err.msg, "execution of 'system.castAsDecimal[double]' failed: java.lang.NumberFormatException: "
                     "Character N is neither a decimal digit number, decimal point, nor \"e\" notation exponential mark.");
}

Test(exec_select, secondary_index_restrictions)
{
    mkks();
    ok("CREATE TABLE ix (k int, c int, v int, w int, s set<int>, PRIMARY KEY (k, c))");
    ok("CREATE INDEX ON ix (v)");
    ok("CREATE INDEX ON ix (values(s))");
    ok("INSERT INTO ix (k, c, v, w, s) VALUES (1, 1, 5, 1, {1, 2})");
    ok("INSERT INTO ix (k, c, v, w, s) VALUES (2, 1, 5, 2, {3})");
    ok("INSERT INTO ix (k, c, v, w) VALUES (2, 2, 6, 2)");
    rows("SELECT k, c FROM ix WHERE v = 5", "1|1\n2|1\n");
    rows("SELECT k, c FROM ix WHERE k = 2 AND v = 5", "2|1\n");
    rows("SELECT k, c FROM ix WHERE s CONTAINS 3", "2|1\n");
    fails("SELECT k, c FROM ix WHERE v = 5 AND w = 1", "ALLOW FILTERING");
    fails("SELECT k, c FROM ix WHERE v > 5", "ALLOW FILTERING");
    fails("SELECT k, c FROM ix WHERE w = 1", "ALLOW FILTERING");
}

Test(exec_select, virtual_tables)
{
    mkks();
    fill_kcv();
    rows("SELECT key, cluster_name FROM system.local WHERE key = 'local'", "'local'|'Test Cluster'\n");
    rows("SELECT key FROM system.local WHERE key = 'nope'", "");
    rows("SELECT column_name, kind FROM system_virtual_schema.columns WHERE keyspace_name = 'system_views' AND table_name = 'clients' AND column_name < 'd'",
         "'address'|'partition_key'\n'client_options'|'regular'\n'connection_stage'|'regular'\n");
    rows("SELECT column_name FROM system_virtual_schema.columns WHERE keyspace_name = 'system_views' AND table_name = 'clients' AND column_name IN ('port', 'hostname')",
         "'hostname'\n'port'\n");
    paged_equals("SELECT * FROM system_virtual_schema.columns", 7);
    paged_equals("SELECT keyspace_name, table_name FROM system_virtual_schema.tables", 3);
    rows("SELECT count(*) FROM system_virtual_schema.columns WHERE keyspace_name = 'system_views' AND table_name = 'clients'", "13\n");
}

/* Views are maintained by the index module (index_maint.c); reads go
 * through the view's own storage like any table. */
Test(exec_select, materialized_view_reads)
{
    mkks();
    ok("CREATE TABLE base (k int, c int, v int, w text, PRIMARY KEY (k, c))");
    ok("CREATE MATERIALIZED VIEW bv AS SELECT * FROM base WHERE v IS NOT NULL AND k IS NOT NULL AND c IS NOT NULL "
       "PRIMARY KEY (v, k, c) WITH CLUSTERING ORDER BY (k DESC, c ASC)");
    ok("CREATE MATERIALIZED VIEW bw AS SELECT k, c, w FROM base WHERE w IS NOT NULL AND k IS NOT NULL AND c IS NOT NULL "
       "PRIMARY KEY (w, k, c)");
    ok("INSERT INTO base (k, c, v, w) VALUES (0, 1, 10, 'a')");
    ok("INSERT INTO base (k, c, v, w) VALUES (1, 1, 10, 'a')");
    ok("INSERT INTO base (k, c, v) VALUES (1, 2, 20)");
    ok("INSERT INTO base (k, c, w) VALUES (2, 1, 'b')");
    result("SELECT * FROM bv WHERE v = 10", "v|k|c|w\n10|1|1|'a'\n10|0|1|'a'\n");
    rows("SELECT k, c FROM bv WHERE v = 10 ORDER BY k ASC", "0|1\n1|1\n");
    rows("SELECT k, c FROM bv WHERE v = 20", "1|2\n");
    rows("SELECT count(*) FROM bv", "3\n");
    rows("SELECT w, k FROM bw WHERE w = 'a'", "'a'|0\n'a'|1\n");
    rows("SELECT w, k, c FROM bw WHERE w IN ('b', 'a')", "'a'|0|1\n'a'|1|1\n'b'|2|1\n");
    paged_equals("SELECT * FROM bv", 1);
    ok("UPDATE base SET v = 20 WHERE k = 0 AND c = 1");
    rows("SELECT k, c FROM bv WHERE v = 20", "1|2\n0|1\n");
}

/* Multi-column slices over clustering columns of mixed orders, random
 * bounds of every length (and after an equality prefix), against a model
 * of the tuple comparison: SELECT returns exactly the rows in range, in
 * clustering order, and DELETE with the same restriction removes exactly
 * those rows (it used to delete the first column's whole coarse range). */
typedef struct mx_rel { int first, lo_n, hi_n; int lo[3], hi[3]; bool lo_incl, hi_incl; int eq; } mx_rel;

static int mx_tcmp(const int *row, const int *b, int n)
{
    for (int i = 0; i < n; i++)
        if (row[i] != b[i]) return row[i] < b[i] ? -1 : 1;
    return 0;
}

static bool mx_match(const int r[3], const mx_rel *q)
{
    if (q->first == 1 && r[0] != q->eq) return false;
    const int *t = r + q->first;
    if (q->lo_n) { int c = mx_tcmp(t, q->lo, q->lo_n); if (c < 0 || (c == 0 && !q->lo_incl)) return false; }
    if (q->hi_n) { int c = mx_tcmp(t, q->hi, q->hi_n); if (c > 0 || (c == 0 && !q->hi_incl)) return false; }
    return true;
}

static void mx_tuple(char *out, size_t n, const char *names[], int first, int k, const int *v, bool vals)
{
    size_t len = 0;
    len += (size_t)snprintf(out + len, n - len, "(");
    for (int i = 0; i < k; i++)
        len += (size_t)snprintf(out + len, n - len, "%s%s", i ? ", " : "", vals ? "" : names[first + i]),
        len += vals ? (size_t)snprintf(out + len, n - len, "%d", v[i]) : 0;
    snprintf(out + len, n - len, ")");
}

Test(exec_select, mixed_order_tuple_slices_select_and_delete)
{
    mkks();
    static const char *names[] = { "a", "b", "c" };
    unsigned seed = 20261202;
    for (int order = 0; order < 8; order++) {
        char q[600], exp[4096], w[300], t1[64], t2[64];
        bool desc[3] = { order & 1, (order >> 1) & 1, (order >> 2) & 1 };
        snprintf(q, sizeof q, "CREATE TABLE mo%d (p int, a int, b int, c int, v int, PRIMARY KEY (p, a, b, c)) "
                 "WITH CLUSTERING ORDER BY (a %s, b %s, c %s)", order,
                 desc[0] ? "DESC" : "ASC", desc[1] ? "DESC" : "ASC", desc[2] ? "DESC" : "ASC");
        ok(q);
        /* the 27 rows in clustering order */
        int rows_in_order[27][3], nr = 0;
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                for (int k = 0; k < 3; k++) {
                    int *r = rows_in_order[nr++];
                    r[0] = desc[0] ? 2 - i : i; r[1] = desc[1] ? 2 - j : j; r[2] = desc[2] ? 2 - k : k;
                }
        for (int p = 0; p < 2; p++)
            for (int i = 0; i < 27; i++) {
                snprintf(q, sizeof q, "INSERT INTO mo%d (p, a, b, c, v) VALUES (%d, %d, %d, %d, 0)", order, p,
                         rows_in_order[i][0], rows_in_order[i][1], rows_in_order[i][2]);
                ok(q);
            }
        for (int it = 0; it < 120; it++) {
            mx_rel r;
            memset(&r, 0, sizeof r);
            r.first = rand_r(&seed) % 4 == 0 ? 1 : 0;
            r.eq = (int)(rand_r(&seed) % 3);
            int width = 3 - r.first;
            do {
                r.lo_n = (int)(rand_r(&seed) % (unsigned)(width + 1));
                r.hi_n = (int)(rand_r(&seed) % (unsigned)(width + 1));
            } while ((r.lo_n < 2 && r.hi_n < 2) || (r.lo_n && r.hi_n && r.lo_n != width && r.hi_n != width));
            for (int i = 0; i < 3; i++) { r.lo[i] = (int)(rand_r(&seed) % 4) - 1 + (i == 0); r.hi[i] = (int)(rand_r(&seed) % 4); }
            r.lo_incl = rand_r(&seed) & 1;
            r.hi_incl = rand_r(&seed) & 1;
            size_t wl = 0;
            if (r.first == 1) wl += (size_t)snprintf(w + wl, sizeof w - wl, " AND a = %d", r.eq);
            if (r.lo_n) {
                mx_tuple(t1, sizeof t1, names, r.first, r.lo_n, r.lo, false);
                mx_tuple(t2, sizeof t2, names, r.first, r.lo_n, r.lo, true);
                wl += (size_t)snprintf(w + wl, sizeof w - wl, " AND %s %s %s", t1, r.lo_incl ? ">=" : ">", t2);
            }
            if (r.hi_n) {
                mx_tuple(t1, sizeof t1, names, r.first, r.hi_n, r.hi, false);
                mx_tuple(t2, sizeof t2, names, r.first, r.hi_n, r.hi, true);
                wl += (size_t)snprintf(w + wl, sizeof w - wl, " AND %s %s %s", t1, r.hi_incl ? "<=" : "<", t2);
            }
            size_t el = 0;
            exp[0] = 0;
            for (int i = 0; i < 27; i++)
                if (mx_match(rows_in_order[i], &r))
                    el += (size_t)snprintf(exp + el, sizeof exp - el, "%d|%d|%d\n", rows_in_order[i][0],
                                           rows_in_order[i][1], rows_in_order[i][2]);
            snprintf(q, sizeof q, "SELECT a, b, c FROM mo%d WHERE p = 0%s", order, w);
            rows(q, exp);
            /* DELETE the same range from partition 1, then read what is left */
            snprintf(q, sizeof q, "DELETE FROM mo%d WHERE p = 1%s", order, w);
            ok(q);
            el = 0;
            exp[0] = 0;
            for (int i = 0; i < 27; i++)
                if (!mx_match(rows_in_order[i], &r))
                    el += (size_t)snprintf(exp + el, sizeof exp - el, "%d|%d|%d\n", rows_in_order[i][0],
                                           rows_in_order[i][1], rows_in_order[i][2]);
            snprintf(q, sizeof q, "SELECT a, b, c FROM mo%d WHERE p = 1", order);
            rows(q, exp);
            for (int i = 0; i < 27; i++) {
                snprintf(q, sizeof q, "INSERT INTO mo%d (p, a, b, c, v) VALUES (1, %d, %d, %d, 0)", order,
                         rows_in_order[i][0], rows_in_order[i][1], rows_in_order[i][2]);
                ok(q);
            }
        }
    }
}
