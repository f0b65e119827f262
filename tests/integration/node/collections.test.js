'use strict';
// Collections, tuples and user types through the Node.js driver (prepared
// and unprepared), plus the driver's UDT metadata.  Owner: infra.
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { startServer, keyspaceClient, cassandra } = require('./harness');

const t = cassandra.types;
const KS = 'node_coll';
let srv;
let client;

before(async () => {
  srv = await startServer();
  client = await keyspaceClient(srv, KS);
  await client.execute(`CREATE TYPE ${KS}.point (x int, y int, label text)`);
  await client.execute(`CREATE TABLE ${KS}.c (k int PRIMARY KEY, l list<int>, s set<text>, m map<text, int>, tu tuple<int, text>, p point, ps list<frozen<point>>)`);
});

after(async () => {
  if (client) await client.shutdown();
  if (srv) await srv.stop();
});

test('collections and tuples, prepared', async () => {
  await client.execute(`INSERT INTO ${KS}.c (k, l, s, m, tu) VALUES (?, ?, ?, ?, ?)`,
    [1, [3, 1, 3], ['b', 'a'], { z: 26, a: 1 }, new t.Tuple(7, 'seven')], { prepare: true });
  const r = (await client.execute(`SELECT l, s, m, tu FROM ${KS}.c WHERE k = ?`, [1], { prepare: true })).first();
  assert.deepEqual(r.l, [3, 1, 3]);
  assert.deepEqual(r.s, ['a', 'b']);
  assert.deepEqual(Object.entries(r.m), [['a', 1], ['z', 26]]);
  assert.equal(r.tu.get(0), 7);
  assert.equal(r.tu.get(1), 'seven');
});

test('element updates', async () => {
  await client.execute(`INSERT INTO ${KS}.c (k, l, m) VALUES (2, [1, 2], {'a': 1})`);
  await client.execute(`UPDATE ${KS}.c SET l = l + ?, m[?] = ? WHERE k = 2`, [[3], 'b', 2], { prepare: true });
  const r = (await client.execute(`SELECT l, m FROM ${KS}.c WHERE k = 2`)).first();
  assert.deepEqual(r.l, [1, 2, 3]);
  assert.deepEqual(r.m, { a: 1, b: 2 });
});

test('user types, values and metadata', async () => {
  await client.execute(`INSERT INTO ${KS}.c (k, p, ps) VALUES (?, ?, ?)`,
    [3, { x: 1, y: 2, label: 'one' }, [{ x: 3, y: 4, label: null }]], { prepare: true });
  const r = (await client.execute(`SELECT p, ps FROM ${KS}.c WHERE k = 3`)).first();
  assert.equal(r.p.x, 1);
  assert.equal(r.p.label, 'one');
  assert.equal(r.ps.length, 1);
  assert.equal(r.ps[0].y, 4);
  const udt = await client.metadata.getUdt(KS, 'point');
  assert.ok(udt, 'udt metadata');
  assert.deepEqual(udt.fields.map((f) => f.name), ['x', 'y', 'label']);
});
