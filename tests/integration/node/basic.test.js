'use strict';
// Node.js driver 4.10 against cassette: connect with default settings,
// keyspace/table DDL, insert/select with and without prepare, paging,
// batches, errors.  Owner: infra.
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { startServer, newClient, keyspaceClient, cassandra } = require('./harness');

let srv;
let client;
const KS = 'node_basic';

before(async () => {
  srv = await startServer();
  client = await keyspaceClient(srv, KS);
  await client.execute(`CREATE TABLE ${KS}.users (id int PRIMARY KEY, name text, score double)`);
  await client.execute(`CREATE TABLE ${KS}.feed (u int, ts int, body text, PRIMARY KEY (u, ts)) WITH CLUSTERING ORDER BY (ts DESC)`);
});

after(async () => {
  if (client) await client.shutdown();
  if (srv) await srv.stop();
});

test('negotiates protocol v4 and sees one host in datacenter1', async () => {
  const pv = client.controlConnection.protocolVersion;
  if (!srv.external) assert.equal(pv, 4);
  const hosts = client.hosts.values();
  assert.equal(hosts.length, 1);
  assert.equal(hosts[0].datacenter, 'datacenter1');
  const rs = await client.execute("SELECT release_version FROM system.local WHERE key='local'");
  assert.match(rs.first().release_version, /^4\./);
});

test('insert and select without prepare (literals and hinted parameters)', async () => {
  await client.execute(`INSERT INTO ${KS}.users (id, name, score) VALUES (1, 'ann', 1.5)`);
  await client.execute(`INSERT INTO ${KS}.users (id, name, score) VALUES (?, ?, ?)`, [2, 'bob', 2.5],
    { hints: ['int', 'text', 'double'] });
  const rs = await client.execute(`SELECT id, name, score FROM ${KS}.users WHERE id IN (1, 2)`);
  const rows = rs.rows.map((r) => [r.id, r.name, r.score]).sort((a, b) => a[0] - b[0]);
  assert.deepEqual(rows, [[1, 'ann', 1.5], [2, 'bob', 2.5]]);
});

test('insert and select with prepare', async () => {
  for (let i = 10; i < 20; i++) {
    await client.execute(`INSERT INTO ${KS}.users (id, name, score) VALUES (?, ?, ?)`, [i, 'u' + i, i / 2], { prepare: true });
  }
  const rs = await client.execute(`SELECT name, score FROM ${KS}.users WHERE id = ?`, [15], { prepare: true });
  assert.equal(rs.rowLength, 1);
  assert.equal(rs.first().name, 'u15');
  assert.equal(rs.first().score, 7.5);
  assert.deepEqual(rs.columns.map((c) => c.name), ['name', 'score']);
});

test('named parameters', async () => {
  await client.execute(`INSERT INTO ${KS}.users (id, name) VALUES (:id, :name)`, { id: 30, name: 'named' }, { prepare: true });
  const rs = await client.execute(`SELECT name FROM ${KS}.users WHERE id = :id`, { id: 30 }, { prepare: true });
  assert.equal(rs.first().name, 'named');
});

test('clustering DESC and paging with pageState', async () => {
  const q = `INSERT INTO ${KS}.feed (u, ts, body) VALUES (?, ?, ?)`;
  await Promise.all(Array.from({ length: 120 }, (_, i) => client.execute(q, [1, i, 'b' + i], { prepare: true })));
  const all = [];
  let pageState;
  do {
    const rs = await client.execute(`SELECT ts FROM ${KS}.feed WHERE u = ?`, [1], { prepare: true, fetchSize: 25, pageState });
    all.push(...rs.rows.map((r) => r.ts));
    pageState = rs.pageState;
  } while (pageState);
  assert.deepEqual(all, Array.from({ length: 120 }, (_, i) => 119 - i));
  let n = 0;
  for await (const row of client.stream(`SELECT ts FROM ${KS}.feed WHERE u = 1`, [], { fetchSize: 7 })) {
    assert.equal(row.ts, 119 - n);
    n++;
  }
  assert.equal(n, 120);
});

test('batch', async () => {
  await client.batch([
    { query: `INSERT INTO ${KS}.users (id, name) VALUES (?, ?)`, params: [40, 'b1'] },
    { query: `INSERT INTO ${KS}.users (id, name) VALUES (?, ?)`, params: [41, 'b2'] },
  ], { prepare: true });
  const rs = await client.execute(`SELECT id FROM ${KS}.users WHERE id IN (40, 41)`);
  assert.equal(rs.rowLength, 2);
});

test('errors carry Cassandra codes', async () => {
  await assert.rejects(client.execute('SELEC 1'), (e) => e.code === cassandra.types.responseErrorCodes.syntaxError);
  await assert.rejects(client.execute(`SELECT * FROM ${KS}.nope`), (e) => e.code === cassandra.types.responseErrorCodes.invalid);
  await assert.rejects(client.execute(`CREATE TABLE ${KS}.users (id int PRIMARY KEY)`),
    (e) => e.code === cassandra.types.responseErrorCodes.alreadyExists);
  // The client still works afterwards.
  const rs = await client.execute("SELECT key FROM system.local");
  assert.equal(rs.first().key, 'local');
});

test('USE keyspace through the client option', async () => {
  const c2 = newClient(srv, { keyspace: KS });
  try {
    await c2.connect();
    const rs = await c2.execute('SELECT name FROM users WHERE id = 1');
    assert.equal(rs.first().name, 'ann');
  } finally {
    await c2.shutdown();
  }
});
