'use strict';
// The Node.js driver's object Mapper (cassandra.mapping) against cassette,
// as an application uses it: model mappings with column and table-name
// mappings, insert/get/find/findAll/update/remove, find with query operators
// (q.in_, q.gte, q.lt), orderBy, limit and paging through the Mapper's
// result, LWT (ifNotExists, when/ifExists), TTL, a model over several
// tables (the Mapper picks the table whose keys the query names),
// mapWithQuery for a custom query, a mapper batch, and counters.  Owner: infra.
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { startServer, keyspaceClient, cassandra } = require('./harness');

const { Mapper, UnderscoreCqlToCamelCaseMappings, q } = cassandra.mapping;

let srv;
let client;
let mapper;
const KS = 'node_mapper';

before(async () => {
  srv = await startServer();
  client = await keyspaceClient(srv, KS);
  await client.execute(`CREATE TABLE ${KS}.users (user_id uuid PRIMARY KEY, display_name text, email text, logins int, tags set<text>)`);
  await client.execute(`CREATE TABLE ${KS}.videos (video_id uuid PRIMARY KEY, user_id uuid, added_date timestamp, title text)`);
  await client.execute(`CREATE TABLE ${KS}.user_videos (user_id uuid, added_date timestamp, video_id uuid, title text, ` +
    'PRIMARY KEY (user_id, added_date, video_id)) WITH CLUSTERING ORDER BY (added_date DESC, video_id ASC)');
  await client.execute(`CREATE TABLE ${KS}.page_counts (page text PRIMARY KEY, views counter)`);
  mapper = new Mapper(client, {
    models: {
      User: { keyspace: KS, tables: ['users'], mappings: new UnderscoreCqlToCamelCaseMappings() },
      // One model, two tables: by video id, and per user newest first.
      Video: { keyspace: KS, tables: ['videos', 'user_videos'], mappings: new UnderscoreCqlToCamelCaseMappings() },
      PageCount: { keyspace: KS, tables: ['page_counts'], columns: { page: 'path', views: 'views' } },
    },
  });
});

after(async () => {
  if (client) await client.shutdown();
  if (srv) await srv.stop();
});

const uuid = () => cassandra.types.Uuid.random();

test('insert, get, update with a camelCase mapping, remove', async () => {
  const users = mapper.forModel('User');
  const id = uuid();
  await users.insert({ userId: id, displayName: 'Ann', email: 'ann@x', logins: 1, tags: ['a'] });
  let u = await users.get({ userId: id });
  assert.equal(u.displayName, 'Ann');
  assert.equal(u.logins, 1);
  assert.deepEqual(u.tags, ['a']);
  await users.update({ userId: id, logins: 2, email: 'ann@y' });
  u = await users.get({ userId: id }, { fields: ['email', 'logins'] });
  assert.equal(u.email, 'ann@y');
  assert.equal(u.logins, 2);
  assert.equal(u.displayName, undefined);   // not fetched
  // update with the query-operator for collections
  await users.update({ userId: id, tags: q.append(['b']) });
  assert.deepEqual((await users.get({ userId: id })).tags, ['a', 'b']);
  await users.remove({ userId: id });
  assert.equal(await users.get({ userId: id }), null);
});

test('LWT: ifNotExists, when and ifExists report applied', async () => {
  const users = mapper.forModel('User');
  const id = uuid();
  let r = await users.insert({ userId: id, displayName: 'Kim', logins: 1 }, { ifNotExists: true });
  assert.equal(r.wasApplied(), true);
  r = await users.insert({ userId: id, displayName: 'Other', logins: 9 }, { ifNotExists: true });
  assert.equal(r.wasApplied(), false);
  // The first row carries the existing values, as Cassandra returns them.
  assert.equal(r.first().displayName, 'Kim');
  r = await users.update({ userId: id, logins: 2 }, { when: { logins: 1 } });
  assert.equal(r.wasApplied(), true);
  r = await users.update({ userId: id, logins: 3 }, { when: { logins: 1 } });
  assert.equal(r.wasApplied(), false);
  assert.equal(r.first().logins, 2);
  r = await users.update({ userId: uuid(), logins: 3 }, { ifExists: true });
  assert.equal(r.wasApplied(), false);
  r = await users.remove({ userId: id }, { ifExists: true });
  assert.equal(r.wasApplied(), true);
});

test('TTL on insert: the cell expires', async () => {
  const users = mapper.forModel('User');
  const id = uuid();
  await users.insert({ userId: id, displayName: 'tmp' }, { ttl: 3600 });
  const rs = await client.execute(`SELECT ttl(display_name) AS t FROM ${KS}.users WHERE user_id = ?`, [id], { prepare: true });
  assert.ok(rs.first().t > 3590 && rs.first().t <= 3600);
  await users.insert({ userId: id, displayName: 'gone' }, { ttl: 1 });
  await new Promise((res) => setTimeout(res, 2100));
  assert.equal(await users.get({ userId: id }), null);
});

test('one model over two tables: find by user newest first, operators, paging', async () => {
  const videos = mapper.forModel('Video');
  const owner = uuid();
  const base = Date.UTC(2026, 11, 1);
  const ids = [];
  for (let i = 0; i < 30; i++) {
    const v = { videoId: uuid(), userId: owner, addedDate: new Date(base + i * 60000), title: 'v' + i };
    ids.push(v.videoId);
    // The document covers both tables' primary keys: the Mapper writes
    // both in one logged batch.
    await videos.insert(v);
  }
  // By video id: the videos table.
  const one = await videos.get({ videoId: ids[3] });
  assert.equal(one.title, 'v3');
  // By user id: only user_videos has it as a key; its clustering order is
  // newest first.
  let res = await videos.find({ userId: owner });
  let all = res.toArray();
  assert.equal(all.length, 30);
  assert.equal(all[0].title, 'v29');
  assert.equal(all[29].title, 'v0');
  // Operators on the clustering column, ascending order and a limit.
  res = await videos.find({ userId: owner, addedDate: q.and(q.gte(new Date(base + 10 * 60000)), q.lt(new Date(base + 15 * 60000))) },
    { orderBy: { addedDate: 'asc' }, limit: 3 });
  assert.deepEqual(res.toArray().map((v) => v.title), ['v10', 'v11', 'v12']);
  // Paging: fetchSize with a pageState, as an API handler pages.
  const seen = [];
  let pageState;
  do {
    res = await videos.find({ userId: owner }, { fetchSize: 7, pageState });
    for (const v of res) seen.push(v.title);
    pageState = res.pageState;
  } while (pageState);
  assert.equal(seen.length, 30);
  assert.equal(new Set(seen).size, 30);
  assert.equal(seen[0], 'v29');
  // q.in_ on the partition key.
  res = await videos.find({ videoId: q.in_([ids[0], ids[1], ids[2]]) });
  assert.deepEqual(res.toArray().map((v) => v.title).sort(), ['v0', 'v1', 'v2']);
});

test('findAll, mapWithQuery, counters through the mapper', async () => {
  const users = mapper.forModel('User');
  await client.execute(`TRUNCATE ${KS}.users`);
  for (let i = 0; i < 5; i++) await users.insert({ userId: uuid(), displayName: 'n' + i, logins: i });
  // A mapper batch: several items, one logged BATCH.
  await mapper.batch([
    users.batching.insert({ userId: uuid(), displayName: 'b1', logins: 100 }),
    users.batching.insert({ userId: uuid(), displayName: 'b2', logins: 101 }),
  ]);
  let all = (await users.findAll()).toArray();
  assert.equal(all.length, 7);
  await client.execute(`DELETE FROM ${KS}.users WHERE user_id IN ?`,
    [all.filter((u) => u.logins >= 100).map((u) => u.userId)], { prepare: true });
  all = (await users.findAll()).toArray();
  assert.equal(all.length, 5);
  assert.deepEqual(all.map((u) => u.logins).sort(), [0, 1, 2, 3, 4]);

  const byName = users.mapWithQuery(`SELECT display_name, logins FROM ${KS}.users WHERE logins >= ? ALLOW FILTERING`,
    (doc) => [doc.min]);
  const many = (await byName({ min: 3 })).toArray();
  assert.deepEqual(many.map((u) => u.displayName).sort(), ['n3', 'n4']);

  const pages = mapper.forModel('PageCount');
  for (let i = 0; i < 4; i++) await pages.update({ path: '/home', views: q.incr(1) });
  await pages.update({ path: '/home', views: q.decr(2) });
  const pc = await pages.get({ path: '/home' });
  assert.equal(pc.views.toString(), '2');
});
