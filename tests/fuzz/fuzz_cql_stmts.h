/*
 * fuzz_cql_stmts.h: the schema fuzz_cql sets up before each run of inputs,
 * and the statements both CQL harnesses write as seeds (each valid against
 * that schema, so mutations start from statements that run).
 */
#ifndef CS_TESTS_FUZZ_CQL_STMTS_H
#define CS_TESTS_FUZZ_CQL_STMTS_H

static const char *const fz_schema[] = {
    "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
    "USE ks",
    "CREATE TYPE udt (x int, y text, z frozen<list<int>>)",
    "CREATE TABLE t (k int, c int, v text, l list<int>, m map<text, int>, s set<blob>, st int static, "
    "PRIMARY KEY (k, c))",
    "CREATE TABLE ty (k text PRIMARY KEY, a ascii, b bigint, bl blob, bo boolean, d decimal, db double, "
    "du duration, f float, i inet, n int, si smallint, ti tinyint, ts timestamp, tu timeuuid, u uuid, "
    "vi varint, dt date, tm time, tup tuple<int, text>, fl frozen<list<int>>, ud frozen<udt>, "
    "fm frozen<map<int, frozen<set<text>>>>)",
    "CREATE TABLE w (a int, b text, c timestamp, d int, e blob, PRIMARY KEY ((a, b), c, d)) "
    "WITH CLUSTERING ORDER BY (c DESC, d ASC)",
    "CREATE TABLE cnt (k int PRIMARY KEY, n counter)",
    "CREATE TABLE ttl (k int, c text, v int, PRIMARY KEY (k, c)) WITH default_time_to_live = 1000",
    "CREATE TABLE cs (k int PRIMARY KEY, a int, b text) WITH COMPACT STORAGE",
    "CREATE TABLE cd (k int, c text, PRIMARY KEY (k, c)) WITH COMPACT STORAGE",
    "CREATE TABLE cv (k int, c1 int, c2 int, v blob, PRIMARY KEY (k, c1, c2)) WITH COMPACT STORAGE",
    "CREATE INDEX ON t (v)",
    "CREATE INDEX ON t (VALUES(m))",
    "CREATE MATERIALIZED VIEW mv AS SELECT k, c, v FROM t WHERE k IS NOT NULL AND c IS NOT NULL "
    "AND v IS NOT NULL PRIMARY KEY (v, k, c)",
    "INSERT INTO t (k, c, v, l, m, s, st) VALUES (1, 1, 'a', [1, 2], {'x': 1}, {0x01}, 7)",
    "INSERT INTO t (k, c, v) VALUES (1, 2, 'b')",
    "INSERT INTO t (k, c, v) VALUES (2, 1, 'a')",
    "INSERT INTO ty (k, a, b, bl, bo, d, db, du, f, i, n, si, ti, ts, tu, u, vi, dt, tm, tup, fl, ud, fm) "
    "VALUES ('r', 'asc', 1, 0xcafe, true, 1.5, 2.5, 1h2m, 3.5, '127.0.0.1', 4, 5, 6, '2020-01-01', "
    "now(), uuid(), 12345678901234567890, '2024-02-29', '12:34:56.789', (1, 'x'), [1, 2], "
    "{x: 1, y: 'y', z: [3]}, {1: {'a'}})",
    "INSERT INTO w (a, b, c, d, e) VALUES (1, 'x', '2020-01-01', 1, 0x00)",
    "UPDATE cnt SET n = n + 5 WHERE k = 1",
    "INSERT INTO cs (k, a, b) VALUES (1, 1, 'a')",
    "INSERT INTO cd (k, c) VALUES (1, 'a')",
    "INSERT INTO cv (k, c1, c2, v) VALUES (1, 1, 1, 0x01)",
};

/* Prepared at setup, in this order (EXECUTE picks one by index). */
static const char *const fz_prepared[] = {
    "INSERT INTO t (k, c, v, l, m, s, st) VALUES (?, ?, ?, ?, ?, ?, ?) USING TTL ? AND TIMESTAMP ?",
    "SELECT * FROM t WHERE k = ? AND c > ? LIMIT ?",
    ("INSERT INTO ty (k, a, b, bl, bo, d, db, du, f, i, n, si, ti, ts, tu, u, vi, dt, tm, tup, fl, ud, fm) "
     "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"),
    "SELECT * FROM ty WHERE k = ?",
    "UPDATE t SET l = l + ?, m[?] = ?, s = s - ?, v = ? WHERE k = ? AND c = ? IF v = ?",
    "SELECT a, c, d, e FROM w WHERE a = ? AND b = ? AND c >= ? AND (c, d) < (?, ?) ORDER BY c ASC",
    "UPDATE cnt SET n = n + ? WHERE k = ?",
    "DELETE l[?], m[?] FROM t WHERE k = ? AND c = ?",
    "SELECT * FROM t WHERE token(k) > ? AND v = ? ALLOW FILTERING",
    "SELECT json * FROM ty WHERE k IN ?",
    "INSERT INTO ty JSON ?",
    "SELECT v, writetime(v), ttl(v) FROM t WHERE k = :key AND c IN :cs",
    "SELECT * FROM mv WHERE v = ?",
    "SELECT count(*), max(c), sum(k) FROM t WHERE k = ? GROUP BY k",
};

/* Seed statements (run as QUERY). */
static const char *const fz_statements[] = {
    "SELECT * FROM t",
    "SELECT * FROM t WHERE k = 1",
    "SELECT k, c, v FROM t WHERE k IN (1, 2) AND c >= 1 ORDER BY c DESC LIMIT 10",
    "SELECT DISTINCT k, st FROM t",
    "SELECT * FROM t WHERE v = 'a'",
    "SELECT * FROM t WHERE m CONTAINS 1",
    "SELECT * FROM t WHERE token(k) > -100 AND token(k) <= 1000",
    "SELECT count(*) FROM t",
    "SELECT k, c, toJson(l), writetime(v), ttl(v) FROM t WHERE k = 1 AND c = 1",
    "SELECT * FROM t WHERE k = 1 AND (c) IN ((1), (2))",
    "SELECT * FROM t WHERE l CONTAINS 2 ALLOW FILTERING",
    "SELECT * FROM ty",
    "SELECT JSON * FROM ty",
    "SELECT k, blobAsText(bl), cast(n as text), toDate(ts), toUnixTimestamp(tu), dateOf(tu) FROM ty",
    "SELECT * FROM ty WHERE k = 'r' AND n = 4 ALLOW FILTERING",
    "SELECT ud.x, ud.y, tup FROM ty",
    "SELECT * FROM w WHERE a = 1 AND b = 'x' AND c > '2019-01-01' ORDER BY c ASC",
    "SELECT * FROM w WHERE a = 1 AND b = 'x' AND (c, d) >= ('2020-01-01', 0)",
    "SELECT * FROM mv WHERE v = 'a'",
    "SELECT * FROM cnt",
    "SELECT * FROM system.local",
    "SELECT keyspace_name, table_name FROM system_schema.tables",
    "SELECT * FROM system_schema.columns WHERE keyspace_name = 'ks'",
    "SELECT * FROM system_views.settings",
    "INSERT INTO t (k, c, v) VALUES (3, 1, 'c') IF NOT EXISTS",
    "INSERT INTO t (k, c, v) VALUES (4, 1, 'd') USING TTL 100 AND TIMESTAMP 12345",
    "INSERT INTO t JSON '{\"k\": 5, \"c\": 1, \"v\": \"j\", \"l\": [1], \"m\": {\"a\": 2}}'",
    "INSERT INTO ty (k, d, vi, du, i, fm) VALUES ('s', -0.000123e-5, -1, -1mo2d3h, '::1', {})",
    "UPDATE t SET v = 'z', l = [9] + l, m['y'] = 2, s = s + {0x02} WHERE k = 1 AND c = 1",
    "UPDATE t SET l[0] = 5 WHERE k = 1 AND c = 1",
    "UPDATE t SET st = 8 WHERE k = 1 IF st = 7",
    "UPDATE t SET v = 'q' WHERE k = 1 AND c = 2 IF EXISTS",
    "UPDATE cnt SET n = n - 1 WHERE k = 2",
    "UPDATE ty SET ud = {x: 2, y: 'b', z: []}, tup = (2, 'c') WHERE k = 'r'",
    "DELETE FROM t WHERE k = 2",
    "DELETE v, l[0], m['x'] FROM t WHERE k = 1 AND c = 1",
    "DELETE FROM t WHERE k = 1 AND c > 5 AND c <= 10",
    "DELETE FROM t USING TIMESTAMP 1 WHERE k = 1 AND c = 1 IF v = 'a'",
    "BEGIN BATCH INSERT INTO t (k, c, v) VALUES (1, 3, 'x'); UPDATE t SET st = 1 WHERE k = 1; APPLY BATCH",
    "BEGIN UNLOGGED BATCH USING TIMESTAMP 5 DELETE FROM t WHERE k = 7 AND c = 1; "
    "INSERT INTO w (a, b, c, d) VALUES (2, 'y', 1, 2); APPLY BATCH",
    "BEGIN COUNTER BATCH UPDATE cnt SET n = n + 1 WHERE k = 1; UPDATE cnt SET n = n + 2 WHERE k = 3; APPLY BATCH",
    "BEGIN BATCH UPDATE t SET v = 'y' WHERE k = 1 AND c = 1 IF v = 'a'; "
    "INSERT INTO t (k, c) VALUES (1, 9); APPLY BATCH",
    "TRUNCATE cnt",
    "ALTER TABLE t ADD n2 int",
    "ALTER TABLE t WITH comment = 'c' AND gc_grace_seconds = 10",
    "CREATE TABLE IF NOT EXISTS nt (a int PRIMARY KEY, b list<frozen<map<int, text>>>)",
    "CREATE TABLE tw (k int, c timeuuid, v int, PRIMARY KEY (k, c)) WITH compaction = "
    "{'class': 'TimeWindowCompactionStrategy', 'compaction_window_unit': 'MINUTES', 'compaction_window_size': 1}",
    "CREATE INDEX IF NOT EXISTS ON w (e)",
    "CREATE TYPE IF NOT EXISTS u2 (a int, b frozen<udt>)",
    "ALTER TYPE udt ADD w int",
    "DROP TABLE IF EXISTS nt",
    "DROP INDEX IF EXISTS t_v_idx",
    "CREATE FUNCTION IF NOT EXISTS f (x int) CALLED ON NULL INPUT RETURNS int LANGUAGE java AS 'return x;'",
    "DESCRIBE KEYSPACE ks",
    "DESCRIBE TABLE t",
    "SELECT * FROM cs WHERE k = 1",
    "UPDATE cs SET a = 2 WHERE k = 2",
    "DELETE b FROM cs WHERE k = 1",
    "INSERT INTO cs JSON '{\"k\": 3, \"b\": \"j\"}'",
    "INSERT INTO cd (k, c) VALUES (2, 'b') IF NOT EXISTS",
    "SELECT * FROM cd WHERE k = 1 AND c > ''",
    "UPDATE cv SET v = null WHERE k = 1 AND c1 = 1 AND c2 = 1",
    "SELECT * FROM cv WHERE k = 1 AND c1 = 1",
    "DESCRIBE TABLE cs",
    "DESCRIBE TABLES",
    "USE system",
    "LIST ROLES",
};

#endif
