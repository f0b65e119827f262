'use strict';
// harness.js: start/stop the cassette binary for the Node.js driver tests
// (node --test).  Mirrors ../cassette_harness.py: spawns
//   $CASSETTE_BIN --listen 127.0.0.1 --port 0 --data-dir <tmp>/data
// waits for "cassette listening on HOST:PORT" on stdout, and on stop()
// sends SIGTERM and requires exit 0 with no sanitizer report.
// CASSETTE_CONTACT=host:port uses a running node (e.g. Apache Cassandra 4.1).
// Owner: infra.
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const cassandra = require('cassandra-driver');

const REPO = path.resolve(__dirname, '..', '..', '..');
const SANITIZER_RE = /ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error:|SUMMARY: UndefinedBehaviorSanitizer/;

function startServer() {
  const contact = process.env.CASSETTE_CONTACT;
  if (contact) {
    const i = contact.lastIndexOf(':');
    return Promise.resolve({
      host: contact.slice(0, i), port: Number(contact.slice(i + 1)), external: true,
      stop: async () => {},
    });
  }
  const bin = process.env.CASSETTE_BIN || path.join(REPO, 'build', 'cassette');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cassette-node-'));
  const dataDir = path.join(dir, 'data');
  fs.mkdirSync(dataDir);
  const logPath = path.join(dir, 'server.log');
  const log = fs.openSync(logPath, 'a');
  // CASSETTE_ARGS: extra server arguments, as in ../cassette_harness.py
  // (e.g. "--request-loops 2"); split on spaces (no quoting needed here).
  const extra = (process.env.CASSETTE_ARGS || '').split(/\s+/).filter((a) => a);
  const proc = spawn(bin, ['--listen', '127.0.0.1', '--port', '0', '--data-dir', dataDir, ...extra],
    { stdio: ['ignore', 'pipe', log] });
  let exited = null;
  const exitPromise = new Promise((resolve) => {
    proc.on('exit', (code, signal) => { exited = { code, signal }; resolve(exited); });
  });
  // The end of the log, or the start of a sanitizer report if there is one.
  const logTail = () => {
    try {
      const lines = fs.readFileSync(logPath, 'utf8').split('\n');
      const i = lines.findIndex((l) => SANITIZER_RE.test(l));
      return (i >= 0 ? lines.slice(i, i + 60) : lines.slice(-40)).join('\n');
    } catch (e) { return ''; }
  };
  return new Promise((resolve, reject) => {
    let buf = '';
    let done = false;
    const timer = setTimeout(() => {
      if (!done) { done = true; proc.kill('SIGKILL'); reject(new Error('server did not start\n' + logTail())); }
    }, 60000);
    proc.on('error', (e) => { if (!done) { done = true; clearTimeout(timer); reject(e); } });
    proc.on('exit', () => {
      if (!done) { done = true; clearTimeout(timer); reject(new Error('server exited at start\n' + logTail())); }
    });
    proc.stdout.on('data', (d) => {
      fs.appendFileSync(logPath, d);
      buf += d.toString();
      const m = /cassette listening on ([0-9.]+):([0-9]+)/.exec(buf);
      if (m && !done) {
        done = true;
        clearTimeout(timer);
        resolve({
          host: m[1], port: Number(m[2]), proc, logPath, external: false,
          stop: async () => {
            if (exited === null) proc.kill('SIGTERM');
            const t = setTimeout(() => proc.kill('SIGKILL'), 60000);
            const r = await exitPromise;
            clearTimeout(t);
            const text = fs.readFileSync(logPath, 'utf8');
            if (r.code !== 0 || SANITIZER_RE.test(text)) {
              throw new Error(`server exit ${JSON.stringify(r)} after SIGTERM\n` + logTail());
            }
            fs.rmSync(dir, { recursive: true, force: true });
          },
        });
      }
    });
  });
}

function newClient(srv, opts) {
  return new cassandra.Client(Object.assign({
    contactPoints: [srv.host + ':' + srv.port],
    localDataCenter: 'datacenter1',
  }, opts || {}));
}

// A connected client of srv and a fresh keyspace ks (dropped first if it
// is there), SimpleStrategy RF 1 unless replication (a CQL map) is given.
async function keyspaceClient(srv, ks, replication) {
  const client = newClient(srv);
  await client.connect();
  await client.execute(`DROP KEYSPACE IF EXISTS ${ks}`);
  const rep = replication || "{'class': 'SimpleStrategy', 'replication_factor': 1}";
  await client.execute(`CREATE KEYSPACE ${ks} WITH replication = ${rep}`);
  return client;
}

module.exports = { startServer, newClient, keyspaceClient, cassandra };
