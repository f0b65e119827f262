'use strict';
// Node.js driver schema metadata (read lazily from system_schema):
// client.metadata.getTable for single and composite partition keys,
// clustering DESC, static columns, column types and table options.
// Owner: infra.
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { startServer, newClient, keyspaceClient, cassandra } = require('./harness');

const t = cassandra.types;
const KS = 'node_meta';
let srv;
let client;

before(async () => {
  srv = await startServer();
  client = await keyspaceClient(srv, KS, "{'class': 'NetworkTopologyStrategy', 'datacenter1': 1}");
  await client.execute(`CREATE TABLE ${KS}.simple (id uuid PRIMARY KEY, name text, n bigint) WITH comment = 'hello' AND default_time_to_live = 60 AND gc_grace_seconds = 1000`);
  await client.execute(`CREATE TABLE ${KS}.events (tenant text, day date, ts timeuuid, seq int, s text static, payload blob, PRIMARY KEY ((tenant, day), ts, seq)) WITH CLUSTERING ORDER BY (ts DESC, seq ASC)`);
});

after(async () => {
  if (client) await client.shutdown();
  if (srv) await srv.stop();
});

test('keyspace metadata', async () => {
  await client.metadata.refreshKeyspace(KS);
  const ks = client.metadata.keyspaces[KS];
  assert.ok(ks, 'keyspace in metadata');
  assert.match(ks.strategy, /NetworkTopologyStrategy$/);
  assert.equal(String(ks.strategyOptions.datacenter1), '1');
  assert.ok(client.metadata.keyspaces.system_schema, 'system_schema listed');
});

test('single partition key table', async () => {
  const tm = await client.metadata.getTable(KS, 'simple');
  assert.ok(tm, 'table found');
  assert.deepEqual(tm.partitionKeys.map((c) => c.name), ['id']);
  assert.deepEqual(tm.clusteringKeys, []);
  const cols = Object.fromEntries(tm.columns.map((c) => [c.name, c.type.code]));
  assert.equal(cols.id, t.dataTypes.uuid);
  assert.ok([t.dataTypes.text, t.dataTypes.varchar].includes(cols.name));
  assert.equal(cols.n, t.dataTypes.bigint);
  assert.equal(tm.comment, 'hello');
  assert.equal(tm.defaultTtl, 60);
  assert.equal(tm.gcGraceSeconds, 1000);
});

test('composite partition key, clustering DESC, static column', async () => {
  const tm = await client.metadata.getTable(KS, 'events');
  assert.ok(tm, 'table found');
  assert.deepEqual(tm.partitionKeys.map((c) => c.name), ['tenant', 'day']);
  assert.deepEqual(tm.clusteringKeys.map((c) => c.name), ['ts', 'seq']);
  assert.deepEqual(tm.clusteringOrder, ['DESC', 'ASC']);
  const byName = Object.fromEntries(tm.columns.map((c) => [c.name, c]));
  assert.equal(byName.day.type.code, t.dataTypes.date);
  assert.equal(byName.ts.type.code, t.dataTypes.timeuuid);
  assert.equal(byName.payload.type.code, t.dataTypes.blob);
  assert.equal(byName.s.isStatic, true);
  assert.equal(byName.payload.isStatic, false);
});

test('missing table resolves to null', async () => {
  const tm = await client.metadata.getTable(KS, 'nope');
  assert.equal(tm, null);
});

test('table created after connect is visible', async () => {
  await client.execute(`CREATE TABLE ${KS}.later (k int PRIMARY KEY, v map<text, int>)`);
  const tm = await client.metadata.getTable(KS, 'later');
  assert.ok(tm);
  const v = tm.columns.find((c) => c.name === 'v');
  assert.equal(v.type.code, t.dataTypes.map);
});

test('keyspace created by another client appears through pushed events', async () => {
  const other = newClient(srv);
  try {
    await other.connect();
    assert.equal(other.metadata.keyspaces.node_meta_pushed, undefined);
    await client.execute("CREATE KEYSPACE node_meta_pushed WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}");
    const deadline = Date.now() + 20000;
    while (!other.metadata.keyspaces.node_meta_pushed && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(other.metadata.keyspaces.node_meta_pushed, 'keyspace event reached the second client');
    await client.execute('DROP KEYSPACE node_meta_pushed');
    const deadline2 = Date.now() + 20000;
    while (other.metadata.keyspaces.node_meta_pushed && Date.now() < deadline2) {
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(other.metadata.keyspaces.node_meta_pushed, undefined);
  } finally {
    await other.shutdown();
  }
});
