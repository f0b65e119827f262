/*
 * presets.c: built-in workloads, written as ordinary profiles (the same YAML
 * a user can copy and edit).  The time-series presets share one simulated
 * clock (each insert op advances it by step_ms), so a 30-second run covers
 * days of sensor time and the day/slot/bucket schemes can be compared.
 *
 * They spell out what they relied on before cassette-bench took
 * cassandra-stress's defaults: a fresh seed per partition (pop: a uniform
 * seed over 10^15 values, not stress's seq/gaussian over the op count), the
 * INSERT statement (insert.statement; stress writes with UPDATE), UNLOGGED
 * batches (stress: LOGGED), counters incremented by 1 (population
 * fixed(1)).
 */
#include "bench/bench.h"
#include <string.h>

static const bench_preset presets[] = {
{ "kv", "key-value yardstick: 100-byte values, prepared point INSERT and SELECT",
"name: kv\n"
"pop: dist=uniform(1..1000000b)\n"
"keyspace: cassette_bench\n"
"keyspace_definition: |\n"
"  CREATE KEYSPACE IF NOT EXISTS cassette_bench WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}\n"
"table: kv\n"
"table_definition: CREATE TABLE IF NOT EXISTS kv (key blob PRIMARY KEY, value blob)\n"
"columnspec:\n"
"  - {name: key, size: fixed(16), population: uniform(1..1m)}\n"
"  - {name: value, size: fixed(100)}\n"
"insert:\n"
"  statement: insert\n"
"queries:\n"
"  read:\n"
"    cql: SELECT key, value FROM kv WHERE key = ?\n"
"    fields: samerow\n"
"ops: {insert: 1, read: 1}\n" },

{ "ts_day", "time series partitioned by (sensor, day): one partition per sensor per day",
"name: ts_day\n"
"pop: dist=uniform(1..1000000b)\n"
"keyspace: cassette_bench\n"
"keyspace_definition: |\n"
"  CREATE KEYSPACE IF NOT EXISTS cassette_bench WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}\n"
"table: ts_day\n"
"table_definition: |\n"
"  CREATE TABLE IF NOT EXISTS ts_day (sensor int, day date, ts timestamp, value double,\n"
"    PRIMARY KEY ((sensor, day), ts)) WITH CLUSTERING ORDER BY (ts DESC)\n"
"columnspec:\n"
"  - {name: sensor, population: uniform(1..50)}\n"
"  - {name: day, generator: day}\n"
"  - {name: ts, generator: clock, step_ms: 1000}\n"
"  - {name: value, population: uniform(1..1000)}\n"
"insert:\n"
"  statement: insert\n"
"queries:\n"
"  latest:\n"
"    cql: SELECT ts, value FROM ts_day WHERE sensor = ? AND day = ? LIMIT 1\n"
"    fields: samerow\n"
"  last_hour:\n"
"    cql: SELECT ts, value FROM ts_day WHERE sensor = ? AND day = ? AND ts >= ? AND ts <= ?\n"
"    fields: samerow\n"
"    window_ms: 3600000\n"
"ops: {insert: 8, latest: 1, last_hour: 1}\n" },

{ "ts_slot", "time series partitioned by (sensor, day, slot): each day split in 4 slots",
"name: ts_slot\n"
"pop: dist=uniform(1..1000000b)\n"
"keyspace: cassette_bench\n"
"keyspace_definition: |\n"
"  CREATE KEYSPACE IF NOT EXISTS cassette_bench WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}\n"
"table: ts_slot\n"
"table_definition: |\n"
"  CREATE TABLE IF NOT EXISTS ts_slot (sensor int, day date, slot int, ts timestamp, value double,\n"
"    PRIMARY KEY ((sensor, day, slot), ts)) WITH CLUSTERING ORDER BY (ts DESC)\n"
"columnspec:\n"
"  - {name: sensor, population: uniform(1..50)}\n"
"  - {name: day, generator: day}\n"
"  - {name: slot, generator: slot, slots: 4}\n"
"  - {name: ts, generator: clock, step_ms: 1000}\n"
"  - {name: value, population: uniform(1..1000)}\n"
"insert:\n"
"  statement: insert\n"
"queries:\n"
"  latest:\n"
"    cql: SELECT ts, value FROM ts_slot WHERE sensor = ? AND day = ? AND slot = ? LIMIT 1\n"
"    fields: samerow\n"
"  last_hour:\n"
"    cql: SELECT ts, value FROM ts_slot WHERE sensor = ? AND day = ? AND slot IN (0, 1, 2, 3) AND ts >= ? AND ts <= ?\n"
"    fields: samerow\n"
"    window_ms: 3600000\n"
"ops: {insert: 8, latest: 1, last_hour: 1}\n" },

{ "ts_bucket", "time series partitioned by (sensor, day, bucket), buckets of 500 rows, with a bucket dictionary table",
"name: ts_bucket\n"
"pop: dist=uniform(1..1000000b)\n"
"keyspace: cassette_bench\n"
"keyspace_definition: |\n"
"  CREATE KEYSPACE IF NOT EXISTS cassette_bench WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}\n"
"table: ts_bucket\n"
"table_definition: |\n"
"  CREATE TABLE IF NOT EXISTS ts_bucket (sensor int, day date, bucket int, ts timestamp, value double,\n"
"    PRIMARY KEY ((sensor, day, bucket), ts)) WITH CLUSTERING ORDER BY (ts DESC)\n"
"extra_definitions:\n"
"  - CREATE TABLE IF NOT EXISTS ts_bucket_dict (sensor int, day date, bucket int, PRIMARY KEY ((sensor, day), bucket))\n"
"extra_inserts:\n"
"  - INSERT INTO ts_bucket_dict (sensor, day, bucket) VALUES (?, ?, ?)\n"
"columnspec:\n"
"  - {name: sensor, population: uniform(1..50)}\n"
"  - {name: day, generator: day}\n"
"  - {name: bucket, generator: bucket, bucket_rows: 500}\n"
"  - {name: ts, generator: clock, step_ms: 1000}\n"
"  - {name: value, population: uniform(1..1000)}\n"
"insert:\n"
"  statement: insert\n"
"  batchtype: UNLOGGED\n"
"queries:\n"
"  latest:\n"
"    cql: SELECT ts, value FROM ts_bucket WHERE sensor = ? AND day = ? AND bucket = ? LIMIT 1\n"
"    fields: samerow\n"
"  last_hour:\n"
"    cql: SELECT ts, value FROM ts_bucket WHERE sensor = ? AND day = ? AND bucket = ? AND ts >= ? AND ts <= ?\n"
"    fields: samerow\n"
"    window_ms: 3600000\n"
"ops: {insert: 8, latest: 1, last_hour: 1}\n" },

{ "likes", "likes stored twice: by object and by user, read with IN on a partition key component",
"name: likes\n"
"pop: dist=uniform(1..1000000b)\n"
"keyspace: cassette_bench\n"
"keyspace_definition: |\n"
"  CREATE KEYSPACE IF NOT EXISTS cassette_bench WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}\n"
"table: likes_by_object\n"
"table_definition: CREATE TABLE IF NOT EXISTS likes_by_object (object_type text, object_id bigint, user_id bigint, liked_at timestamp, PRIMARY KEY ((object_type, object_id), user_id))\n"
"extra_definitions:\n"
"  - CREATE TABLE IF NOT EXISTS likes_by_user (user_id bigint, object_type text, object_id bigint, liked_at timestamp, PRIMARY KEY ((user_id, object_type), object_id))\n"
"extra_inserts:\n"
"  - INSERT INTO likes_by_user (user_id, object_type, object_id, liked_at) VALUES (?, ?, ?, ?)\n"
"columnspec:\n"
"  - {name: object_type, size: fixed(5), population: uniform(1..3)}\n"
"  - {name: object_id, population: zipf(1..100k)}\n"
"  - {name: user_id, population: uniform(1..100k), cluster: uniform(1..200)}\n"
"  - {name: liked_at, generator: clock, step_ms: 10}\n"
"insert:\n"
"  statement: insert\n"
"  batchtype: UNLOGGED\n"
"queries:\n"
"  likers:\n"
"    cql: SELECT user_id FROM likes_by_object WHERE object_type = ? AND object_id = ? LIMIT 100\n"
"    fields: samerow\n"
"  did_like:\n"
"    cql: SELECT object_id FROM likes_by_user WHERE user_id = ? AND object_type IN ('photo', 'post', 'video') AND object_id = ?\n"
"    fields: samerow\n"
"ops: {insert: 4, likers: 1, did_like: 1}\n" },

{ "notifications", "notifications by (user, shard), timeuuid DESC, read newest-first 20 per page",
"name: notifications\n"
"pop: dist=uniform(1..1000000b)\n"
"keyspace: cassette_bench\n"
"keyspace_definition: |\n"
"  CREATE KEYSPACE IF NOT EXISTS cassette_bench WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}\n"
"table: notifications\n"
"table_definition: |\n"
"  CREATE TABLE IF NOT EXISTS notifications (user_id bigint, shard int, id timeuuid, body text,\n"
"    PRIMARY KEY ((user_id, shard), id)) WITH CLUSTERING ORDER BY (id DESC)\n"
"columnspec:\n"
"  - {name: user_id, population: zipf(1..10k)}\n"
"  - {name: shard, population: uniform(0..3)}\n"
"  - {name: id, generator: timeuuid, step_ms: 100}\n"
"  - {name: body, size: uniform(40..200)}\n"
"insert:\n"
"  statement: insert\n"
"queries:\n"
"  inbox:\n"
"    cql: SELECT id, body FROM notifications WHERE user_id = ? AND shard = ? ORDER BY id DESC LIMIT 60\n"
"    fields: samerow\n"
"    pages: 3\n"
"    page_size: 20\n"
"ops: {insert: 3, inbox: 1}\n" },

{ "counters", "per-partition counters (page views per page per day)",
"name: counters\n"
"pop: dist=uniform(1..1000000b)\n"
"keyspace: cassette_bench\n"
"keyspace_definition: |\n"
"  CREATE KEYSPACE IF NOT EXISTS cassette_bench WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}\n"
"table: page_views\n"
"table_definition: CREATE TABLE IF NOT EXISTS page_views (page_id bigint, day date, views counter, PRIMARY KEY ((page_id), day))\n"
"columnspec:\n"
"  - {name: page_id, population: zipf(1..10k)}\n"
"  - {name: day, generator: day}\n"
"  - {name: views, population: fixed(1)}\n"
"insert:\n"
"  batchtype: COUNTER\n"
"queries:\n"
"  today:\n"
"    cql: SELECT views FROM page_views WHERE page_id = ? AND day = ?\n"
"    fields: samerow\n"
"ops: {insert: 5, today: 1}\n" },

{ "queue", "tombstone-heavy queue: messages inserted, consumed by delete, head read over tombstones",
"name: queue\n"
"pop: dist=uniform(1..1000000b)\n"
"keyspace: cassette_bench\n"
"keyspace_definition: |\n"
"  CREATE KEYSPACE IF NOT EXISTS cassette_bench WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}\n"
"table: queue\n"
"table_definition: CREATE TABLE IF NOT EXISTS queue (queue_id int, id timeuuid, payload text, PRIMARY KEY (queue_id, id))\n"
"columnspec:\n"
"  - {name: queue_id, population: uniform(1..4)}\n"
"  - {name: id, generator: timeuuid, step_ms: 1}\n"
"  - {name: payload, size: fixed(100)}\n"
"insert:\n"
"  statement: insert\n"
"queries:\n"
"  consume:\n"
"    cql: DELETE FROM queue WHERE queue_id = ? AND id = ?\n"
"    fields: samerow\n"
"    lag_ms: 0\n"
"  head:\n"
"    cql: SELECT id, payload FROM queue WHERE queue_id = ? LIMIT 1\n"
"    fields: samerow\n"
"ops: {insert: 2, consume: 2, head: 1}\n" },

{ "wide", "wide rows: 1000s of rows per partition, clustering slices",
"name: wide\n"
"pop: dist=uniform(1..1000000b)\n"
"keyspace: cassette_bench\n"
"keyspace_definition: |\n"
"  CREATE KEYSPACE IF NOT EXISTS cassette_bench WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}\n"
"table: wide\n"
"table_definition: CREATE TABLE IF NOT EXISTS wide (pk int, ck int, v text, PRIMARY KEY (pk, ck))\n"
"columnspec:\n"
"  - {name: pk, population: uniform(1..20)}\n"
"  - {name: ck, cluster: fixed(100k)}\n"
"  - {name: v, size: fixed(50)}\n"
"insert:\n"
"  statement: insert\n"
"  batchtype: UNLOGGED\n"
"  rows: fixed(10)\n"
"queries:\n"
"  slice:\n"
"    cql: SELECT ck, v FROM wide WHERE pk = ? AND ck >= ? LIMIT 100\n"
"    fields: samerow\n"
"ops: {insert: 1, slice: 1}\n" },

{ "sindex", "find users by email through a secondary index",
"name: sindex\n"
"pop: dist=uniform(1..1000000b)\n"
"keyspace: cassette_bench\n"
"keyspace_definition: |\n"
"  CREATE KEYSPACE IF NOT EXISTS cassette_bench WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}\n"
"table: users_si\n"
"table_definition: CREATE TABLE IF NOT EXISTS users_si (id bigint PRIMARY KEY, email text, name text)\n"
"extra_definitions:\n"
"  - CREATE INDEX IF NOT EXISTS users_si_email ON users_si (email)\n"
"columnspec:\n"
"  - {name: id, population: uniform(1..100k)}\n"
"  - {name: email, size: fixed(20), population: uniform(1..100k)}\n"
"  - {name: name, size: uniform(5..20)}\n"
"insert:\n"
"  statement: insert\n"
"queries:\n"
"  by_email:\n"
"    cql: SELECT id, name FROM users_si WHERE email = ?\n"
"    fields: samerow\n"
"ops: {insert: 1, by_email: 1}\n" },

{ "mview", "find users by email through a materialized view",
"name: mview\n"
"pop: dist=uniform(1..1000000b)\n"
"keyspace: cassette_bench\n"
"keyspace_definition: |\n"
"  CREATE KEYSPACE IF NOT EXISTS cassette_bench WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}\n"
"table: users_mv\n"
"table_definition: CREATE TABLE IF NOT EXISTS users_mv (id bigint PRIMARY KEY, email text, name text)\n"
"extra_definitions:\n"
"  - CREATE MATERIALIZED VIEW IF NOT EXISTS users_mv_by_email AS SELECT email, id, name FROM users_mv WHERE email IS NOT NULL AND id IS NOT NULL PRIMARY KEY (email, id)\n"
"columnspec:\n"
"  - {name: id, population: uniform(1..100k)}\n"
"  - {name: email, size: fixed(20), population: uniform(1..100k)}\n"
"  - {name: name, size: uniform(5..20)}\n"
"insert:\n"
"  statement: insert\n"
"queries:\n"
"  by_email:\n"
"    cql: SELECT id, name FROM users_mv_by_email WHERE email = ?\n"
"    fields: samerow\n"
"ops: {insert: 1, by_email: 1}\n" },

{ "manual_index", "find users by email through a hand-maintained index table",
"name: manual_index\n"
"pop: dist=uniform(1..1000000b)\n"
"keyspace: cassette_bench\n"
"keyspace_definition: |\n"
"  CREATE KEYSPACE IF NOT EXISTS cassette_bench WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}\n"
"table: users_mi\n"
"table_definition: CREATE TABLE IF NOT EXISTS users_mi (id bigint PRIMARY KEY, email text, name text)\n"
"extra_definitions:\n"
"  - CREATE TABLE IF NOT EXISTS users_mi_by_email (email text, id bigint, name text, PRIMARY KEY (email, id))\n"
"extra_inserts:\n"
"  - INSERT INTO users_mi_by_email (email, id, name) VALUES (?, ?, ?)\n"
"columnspec:\n"
"  - {name: id, population: uniform(1..100k)}\n"
"  - {name: email, size: fixed(20), population: uniform(1..100k)}\n"
"  - {name: name, size: uniform(5..20)}\n"
"insert:\n"
"  statement: insert\n"
"  batchtype: LOGGED\n"
"queries:\n"
"  by_email:\n"
"    cql: SELECT id, name FROM users_mi_by_email WHERE email = ?\n"
"    fields: samerow\n"
"ops: {insert: 1, by_email: 1}\n" },
};

const bench_preset *bench_presets(int *n)
{
    *n = (int)(sizeof(presets) / sizeof(presets[0]));
    return presets;
}

const bench_preset *bench_preset_find(const char *name)
{
    int n;
    const bench_preset *p = bench_presets(&n);
    for (int i = 0; i < n; i++)
        if (!strcmp(p[i].name, name))
            return &p[i];
    return NULL;
}
