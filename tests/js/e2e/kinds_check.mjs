// Judges the Iceberg tables a JetStream source of several streams wrote, with DuckDB over the data
// files python3-avro listed (tests/e2e/iceberg_files.py -> WORKDIR/f_<table>.json), against
// NATS itself (the official client) and what nats_kinds.mjs recorded:
//  - every message of every stream is in its table once, at offset = sequence - 1 (key = subject
//    for a standard stream, the KV key for a KV bucket), and nothing else is;
//  - KV history: one row per operation at revision - 1, deletes and purges as tombstones (null
//    value) with their KV-Operation header; the README's "value of every key as of T" query
//    gives the state after the "before" phase for T taken between the phases;
//  - every object store object is rebuilt byte-for-byte by the README's query.
// usage: kinds_check.mjs URL WORKDIR T_MS PREFIX     prints "ok ..." lines; exits 1 on a mismatch
import { connect } from 'nats';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { DuckDBInstance } from '@duckdb/node-api';

const [url, work, tMs, prefix] = process.argv.slice(2);
const nc = await connect({ servers: url, timeout: 5000 });
const jsm = await nc.jetstreamManager();
const db = await DuckDBInstance.create(':memory:');
const c = await db.connect();
let failed = 0;
const ok = (cond, what) => {
  console.log(`${cond ? 'ok' : 'FAIL'} ${what}`);
  if (!cond) failed++;
};
const tableOf = (stream) => `${prefix}${stream}`.replace(/[.\-:]/g, '_');
const buf = (v) => (v === null || v === undefined ? null : Buffer.from(v.bytes ?? v));

// A view `t_<stream>` over the table's data files.
async function view(stream) {
  const f = `${work}/f_${tableOf(stream)}.json`;
  const files = existsSync(f) ? JSON.parse(readFileSync(f, 'utf8')).files.map((x) => x.path) : [];
  if (files.length === 0) throw new Error(`table ${tableOf(stream)} has no data files`);
  const list = files.map((p) => `'${p.replaceAll("'", "''")}'`).join(',');
  await c.run(`CREATE OR REPLACE VIEW "t_${stream}" AS SELECT * FROM read_parquet([${list}])`);
  return `"t_${stream}"`;
}
const rows = async (sql) => (await c.runAndReadAll(sql)).getRowObjects();

// 1. Every message in its table once.
for (const stream of ['ORDERS', 'ORDERS2', 'KV_cfg', 'KV_late', 'OBJ_files', 'OBJ_late']) {
  const t = await view(stream);
  const info = await jsm.streams.info(stream);
  const [dup] = await rows(`SELECT count(*) AS n, count(DISTINCT "offset") AS d, min("offset") AS lo,
                                   max("offset") AS hi FROM ${t}`);
  ok(Number(dup.n) === Number(dup.d), `${stream}: no offset twice (${dup.n} rows, ${dup.d} offsets)`);
  ok(Number(dup.n) === info.state.last_seq && Number(dup.lo) === 0 && Number(dup.hi) === info.state.last_seq - 1,
    `${stream}: one row per sequence 1..${info.state.last_seq} (rows ${dup.n}, offsets ${dup.lo}..${dup.hi})`);
  const byOffset = new Map();
  for (const r of await rows(`SELECT "offset", key, value FROM ${t}`)) byOffset.set(Number(r.offset), r);
  let same = 0, present = 0;
  for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) {
    let m;
    try { m = await jsm.streams.getMessage(stream, { seq }); } catch { continue; } // purged by a rollup
    present++;
    const r = byOffset.get(seq - 1);
    if (!r) continue;
    let key = m.subject;
    if (stream.startsWith('KV_')) key = m.subject.slice(`$KV.${stream.slice(3)}.`.length);
    const op = m.header?.get('KV-Operation') ?? '';
    const tomb = op === 'DEL' || op === 'PURGE';
    const value = buf(r.value);
    const keyOk = stream.startsWith('OBJ_') || buf(r.key).toString('utf8') === key;
    const valueOk = tomb ? value === null : value !== null && Buffer.compare(value, Buffer.from(m.data)) === 0;
    if (keyOk && valueOk) same++;
    else if (same + 5 > present) console.log(`  mismatch at seq ${seq}: ${m.subject}`);
  }
  ok(present > 0 && same === present, `${stream}: ${same}/${present} messages still in NATS identical in the table`);
}

// 2. KV history and tombstones: the table's rows for each bucket are the recorded operations.
const ops = readFileSync(`${work}/kv_ops.jsonl`, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
for (const bucket of ['cfg', 'late']) {
  const t = `"t_KV_${bucket}"`;
  const got = await rows(`SELECT "offset", decode(key) AS k, value,
      decode(list_filter(coalesce(headers, []), h -> h.header_key = 'KV-Operation')[1].header_value) AS op
    FROM ${t} ORDER BY "offset"`);
  const want = ops.filter((o) => o.bucket === bucket);
  const line = (o) => `${o.rev - 1} ${o.key} ${o.op} ${o.value === null ? 'null' : Buffer.from(o.value, 'base64')}`;
  const gotLines = got.map((r) => `${r.offset} ${r.k} ${r.op ?? 'PUT'} ${r.value === null ? 'null' : buf(r.value)}`);
  const wantLines = want.map(line);
  ok(JSON.stringify(gotLines) === JSON.stringify(wantLines),
    `KV ${bucket}: history of ${want.length} operations (offset = revision - 1, tombstones null with KV-Operation)`);
  if (JSON.stringify(gotLines) !== JSON.stringify(wantLines)) console.log({ gotLines, wantLines });
}
// The README's query: the value of every key as of T.
const asOf = await rows(`
  SELECT decode(key) AS key, decode(value) AS value
  FROM (SELECT key, value, row_number() OVER (PARTITION BY key ORDER BY "offset" DESC) AS rn
        FROM "t_KV_cfg" WHERE message_ts <= ${Number(tMs)})
  WHERE rn = 1 AND value IS NOT NULL ORDER BY key`);
const state = new Map();
for (const o of ops.filter((x) => x.bucket === 'cfg' && x.phase === 'before'))
  if (o.value === null) state.delete(o.key); else state.set(o.key, Buffer.from(o.value, 'base64').toString());
const wantAsOf = [...state.entries()].sort().map(([k, v]) => `${k}=${v}`).join(',');
const gotAsOf = asOf.map((r) => `${r.key}=${r.value}`).join(',');
ok(gotAsOf === wantAsOf, `KV cfg as of T: ${gotAsOf} (expected ${wantAsOf})`);

// 3. Objects rebuilt byte-for-byte by the README's query (chunks in offset order, joined to the
// object's latest metadata row by NUID).
for (const bucket of ['files', 'late']) {
  const t = `"t_OBJ_${bucket}"`;
  const names = readdirSync(`${work}/obj/${bucket}`).map(decodeURIComponent);
  const listed = await rows(`
    SELECT decode(key) AS name FROM ${t}
    WHERE list_contains(list_transform(coalesce(headers, []), h -> h.header_key), 'Floe-Obj-Name')
    GROUP BY key ORDER BY name`);
  ok(JSON.stringify(listed.map((r) => r.name)) === JSON.stringify([...names].sort()),
    `OBJ ${bucket}: objects named in the table: ${listed.map((r) => r.name).join(', ')}`);
  for (const name of names) {
    const chunks = await rows(`
      WITH hdr AS (
        SELECT *, map_from_entries(list_transform(coalesce(headers, []),
                                                  h -> {'k': h.header_key, 'v': decode(h.header_value)})) AS h
        FROM ${t}),
      meta AS (
        SELECT h['Floe-Obj-Nuid'] AS nuid, h['Floe-Obj-Deleted'] AS deleted FROM hdr
        WHERE h['Floe-Obj-Name'] = '${name.replaceAll("'", "''")}'
        ORDER BY "offset" DESC LIMIT 1),
      chunks AS (
        SELECT h['Floe-Obj-Nuid'] AS nuid, "offset", value,
               row_number() OVER (PARTITION BY h['Floe-Obj-Nuid'] ORDER BY "offset") - 1 AS chunk
        FROM hdr WHERE h['Floe-Obj-Name'] IS NULL AND h['Floe-Obj-Nuid'] IS NOT NULL)
      SELECT chunk, value FROM chunks JOIN meta USING (nuid)
      WHERE meta.deleted IS NULL ORDER BY chunk`);
    const rebuilt = Buffer.concat(chunks.map((r) => buf(r.value)));
    const want = readFileSync(`${work}/obj/${bucket}/${encodeURIComponent(name)}`);
    ok(Buffer.compare(rebuilt, want) === 0,
      `OBJ ${bucket}/${name}: rebuilt byte-for-byte from ${chunks.length} chunk row(s) (${rebuilt.length}/${want.length} bytes)`);
  }
}
await nc.close();
process.exit(failed ? 1 : 0);
