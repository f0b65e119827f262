'use strict';
// Every CQL scalar type through the Node.js driver: prepared round trip,
// unprepared with type hints, nulls, and the types the driver reports in
// result metadata.  Owner: infra.
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { startServer, keyspaceClient, cassandra } = require('./harness');

const t = cassandra.types;
const KS = 'node_types';
let srv;
let client;

// type -> values (JS representations the driver binds and returns).
const VALUES = {
  ascii: ['', 'abc', "it's"],
  bigint: [t.Long.fromString('0'), t.Long.fromString('-9223372036854775808'), t.Long.fromString('9223372036854775807')],
  blob: [Buffer.alloc(0), Buffer.from('cafebabe', 'hex'), Buffer.from(Array.from({ length: 256 }, (_, i) => i))],
  boolean: [true, false],
  date: [t.LocalDate.fromString('1970-01-01'), t.LocalDate.fromString('2024-02-29'), t.LocalDate.fromString('0001-01-01'),
    t.LocalDate.fromString('9999-12-31')],
  decimal: [t.BigDecimal.fromString('0'), t.BigDecimal.fromString('-1.5'),
    t.BigDecimal.fromString('123456789012345678901234567890.123456789')],
  double: [0, 1.5, -2.25, Number.MAX_VALUE, Number.MIN_VALUE, Infinity, -Infinity],
  duration: [new t.Duration(0, 0, t.Long.ZERO), new t.Duration(14, 25, t.Long.fromString('18367008009010')),
    new t.Duration(-1, -2, t.Long.fromNumber(-3))],
  float: [0, 1.5, -2.25, 0.5, Infinity],
  inet: [t.InetAddress.fromString('127.0.0.1'), t.InetAddress.fromString('::1'),
    t.InetAddress.fromString('2001:db8::ff00:42:8329'), t.InetAddress.fromString('255.255.255.255')],
  int: [0, 1, -1, 2147483647, -2147483648],
  smallint: [0, 32767, -32768],
  text: ['', 'hello', 'héllo wörld ✓', '日本語', 'emoji \u{1F600}'],
  time: [t.LocalTime.fromString('00:00:00'), t.LocalTime.fromString('23:59:59.999999999'),
    t.LocalTime.fromString('12:34:56.789')],
  timestamp: [new Date(0), new Date('2020-01-01T12:30:45.123Z'), new Date('1969-12-31T23:59:59.999Z'),
    new Date('1900-01-01T00:00:00Z')],
  timeuuid: [t.TimeUuid.fromString('e1f5a2d0-5a4e-11ee-8c99-0242ac120002'), t.TimeUuid.now()],
  tinyint: [0, 127, -128],
  uuid: [t.Uuid.fromString('550e8400-e29b-41d4-a716-446655440000'), t.Uuid.random(),
    t.Uuid.fromString('00000000-0000-0000-0000-000000000000')],
  varint: [t.Integer.fromString('0'), t.Integer.fromString('-1'), t.Integer.fromString('123456789012345678901234567890'),
    t.Integer.fromString('-340282366920938463463374607431768211456')],
};
const TYPES = Object.keys(VALUES);

function same(a, b) {
  if (a === b) return true;
  if (a === null || b === null || a === undefined || b === undefined) return false;
  if (Buffer.isBuffer(a)) return Buffer.isBuffer(b) && a.equals(b);
  if (a instanceof Date) return b instanceof Date && a.getTime() === b.getTime();
  if (typeof a === 'number') return typeof b === 'number' && (a === b || (Number.isNaN(a) && Number.isNaN(b)));
  if (typeof a.equals === 'function') return a.equals(b);
  return String(a) === String(b);
}

before(async () => {
  srv = await startServer();
  client = await keyspaceClient(srv, KS);
  for (const ty of TYPES) {
    await client.execute(`CREATE TABLE ${KS}.t_${ty} (k int PRIMARY KEY, v ${ty})`);
  }
});

after(async () => {
  if (client) await client.shutdown();
  if (srv) await srv.stop();
});

for (const ty of TYPES) {
  test(`prepared round trip: ${ty}`, async () => {
    const vals = VALUES[ty];
    for (let i = 0; i < vals.length; i++) {
      await client.execute(`INSERT INTO ${KS}.t_${ty} (k, v) VALUES (?, ?)`, [i, vals[i]], { prepare: true });
    }
    for (let i = 0; i < vals.length; i++) {
      const rs = await client.execute(`SELECT v FROM ${KS}.t_${ty} WHERE k = ?`, [i], { prepare: true });
      assert.equal(rs.rowLength, 1, `${ty} k=${i} missing`);
      assert.ok(same(vals[i], rs.first().v), `${ty} k=${i}: wrote ${vals[i]}, read ${rs.first().v}`);
    }
    // Unprepared read: same values, and the reported column type.
    const rs = await client.execute(`SELECT k, v FROM ${KS}.t_${ty}`);
    assert.equal(rs.rowLength, vals.length);
    const typeCode = rs.columns[1].type.code;
    // Cassandra sends text as varchar, and duration (a v5 type id) as a
    // custom type in protocol v4.
    const want = ty === 'text' ? [t.dataTypes.text, t.dataTypes.varchar]
      : ty === 'duration' ? [t.dataTypes.duration, t.dataTypes.custom] : [t.dataTypes[ty]];
    assert.ok(want.includes(typeCode), `${ty}: type code ${typeCode}`);
    if (typeCode === t.dataTypes.custom) assert.match(String(rs.columns[1].type.info), /DurationType$/);
    for (const row of rs.rows) assert.ok(same(vals[row.k], row.v), `${ty} k=${row.k}`);
  });

  test(`unprepared with hints and nulls: ${ty}`, async () => {
    const v = VALUES[ty][1];
    await client.execute(`INSERT INTO ${KS}.t_${ty} (k, v) VALUES (?, ?)`, [100, v], { hints: ['int', ty] });
    await client.execute(`INSERT INTO ${KS}.t_${ty} (k, v) VALUES (?, ?)`, [101, null], { prepare: true });
    await client.execute(`INSERT INTO ${KS}.t_${ty} (k) VALUES (102)`);
    const rs = await client.execute(`SELECT k, v FROM ${KS}.t_${ty} WHERE k IN (100, 101, 102)`);
    const got = new Map(rs.rows.map((r) => [r.k, r.v]));
    assert.ok(same(v, got.get(100)), `${ty}: hinted value`);
    assert.equal(got.get(101), null);
    assert.equal(got.get(102), null);
  });
}

test('counter', async () => {
  await client.execute(`CREATE TABLE ${KS}.cnt (k int PRIMARY KEY, c counter)`);
  for (let i = 0; i < 5; i++) {
    await client.execute(`UPDATE ${KS}.cnt SET c = c + ? WHERE k = ?`, [t.Long.fromNumber(i), 1], { prepare: true });
  }
  await client.execute(`UPDATE ${KS}.cnt SET c = c - 3 WHERE k = 1`);
  const rs = await client.execute(`SELECT c FROM ${KS}.cnt WHERE k = 1`);
  assert.ok(rs.first().c.equals(t.Long.fromNumber(7)));
});
