// Typed rows checked by independent tools: avsc (an Avro implementation Floe does not share
// code with) encodes realistic records in Confluent's wire format, Floe's typed decoder
// (typed_rows_fixture) turns them into a typed Parquet file, and DuckDB reads that file back:
// the column types, every value of every row (nested struct, array of structs, map, decimals
// in bytes and fixed, timestamp-millis, date, enum, uuid, optional field, a 2-branch union),
// sums per group, field ids, and the bad records each reported with its reason.
//
// usage: FLOE_TYPED_FIXTURE=path/to/typed_rows_fixture node typed_rows.mjs [DIR]

import avro from 'avsc';
import { DuckDBInstance } from '@duckdb/node-api';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const dir = process.env.FLOE_TYPED_OUT || process.argv[2] || '/tmp/floe-typed-fixtures';
rmSync(dir, { recursive: true, force: true });
mkdirSync(dir, { recursive: true });

let passed = 0;
let failed = 0;
function check(ok, what) {
  if (ok) passed++;
  else {
    failed++;
    console.log(`FAIL: ${what}`);
  }
  return ok;
}
function eq(got, want, what) {
  const g = JSON.stringify(got);
  const w = JSON.stringify(want);
  return check(g === w, `${what}\n    got  ${g.slice(0, 600)}\n    want ${w.slice(0, 600)}`);
}

const v1 = {
  type: 'record', name: 'Order', namespace: 'shop', fields: [
    { name: 'id', type: 'long' },
    { name: 'customer', type: { type: 'record', name: 'Customer', fields: [
      { name: 'name', type: 'string' },
      { name: 'country', type: 'string' },
      { name: 'address', type: { type: 'record', name: 'Address', fields: [
        { name: 'city', type: 'string' },
        { name: 'zip', type: ['null', 'int'], default: null },
      ] } },
    ] } },
    { name: 'items', type: { type: 'array', items: { type: 'record', name: 'Item', fields: [
      { name: 'sku', type: 'string' },
      { name: 'qty', type: 'int' },
      { name: 'price', type: { type: 'fixed', name: 'Price', size: 4, logicalType: 'decimal', precision: 9, scale: 2 } },
    ] } } },
    { name: 'attrs', type: { type: 'map', values: 'string' } },
    { name: 'amount', type: { type: 'bytes', logicalType: 'decimal', precision: 12, scale: 2 } },
    { name: 'ts', type: { type: 'long', logicalType: 'timestamp-millis' } },
    { name: 'day', type: { type: 'int', logicalType: 'date' } },
    { name: 'status', type: { type: 'enum', name: 'Status', symbols: ['NEW', 'PAID', 'SHIPPED', 'RETURNED'] } },
    { name: 'note', type: ['null', 'string'], default: null },
    { name: 'ref', type: ['long', 'string'] },
    { name: 'uid', type: { type: 'string', logicalType: 'uuid' } },
    { name: 'score', type: 'double' },
  ],
};
// An older version without `note` and `score`: their columns are null for its records.
const v2 = { ...v1, fields: v1.fields.filter((f) => f.name !== 'note' && f.name !== 'score') };
const t1 = avro.Type.forSchema(v1);
const t2 = avro.Type.forSchema(v2);

// Big-endian two's complement of a BigInt in `len` bytes (or the fewest bytes when len is 0).
function twos(v, len) {
  let n = len;
  if (!n) {
    n = 1;
    while (v >= (1n << BigInt(8 * n - 1)) || v < -(1n << BigInt(8 * n - 1))) n++;
  }
  const b = Buffer.alloc(n);
  let u = BigInt.asUintN(8 * n, v);
  for (let i = n - 1; i >= 0; i--) {
    b[i] = Number(u & 0xffn);
    u >>= 8n;
  }
  return b;
}
function dec2(cents) {
  const neg = cents < 0n;
  const a = neg ? -cents : cents;
  return `${neg ? '-' : ''}${a / 100n}.${(a % 100n).toString().padStart(2, '0')}`;
}
function frame(id, payload) {
  const h = Buffer.alloc(5);
  h.writeUInt32BE(id, 1);
  return Buffer.concat([h, payload]);
}

let seed = 7;
function rnd(n) {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed % n;
}
const countries = ['DE', 'FR', 'JP', 'US', 'BR'];
const cities = ['Berlin', 'Paris', 'Tōkyō', 'New York', 'São Paulo'];
const statuses = ['NEW', 'PAID', 'SHIPPED', 'RETURNED'];
const N = 1500;
const records = [];
for (let i = 0; i < N; i++) {
  const c = rnd(5);
  const nItems = rnd(4);
  const items = [];
  for (let j = 0; j < nItems; j++) items.push({ sku: `S${i}-${j}`, qty: rnd(9) + 1, cents: BigInt(rnd(200000) - 50000) });
  const attrs = {};
  for (let j = 0; j < rnd(3); j++) attrs[`k${j}`] = `v${i}-${j}`;
  const cents = BigInt(rnd(10000000)) * (rnd(7) === 0 ? -1n : 1n) * 1000n + BigInt(rnd(1000));
  const hex = (i * 2654435761 % 4294967296).toString(16).padStart(8, '0');
  records.push({
    version: i % 10 === 9 ? 2 : 1,
    id: 1000000000000 + i,
    name: `customer ${i}`,
    country: countries[c],
    city: cities[c],
    zip: rnd(3) === 0 ? null : 10000 + rnd(80000),
    items,
    attrs,
    cents,
    ts: 1700000000000 + i * 61001 - (i % 7 === 0 ? 1800000000000 : 0), // some before 1970
    day: 19000 + rnd(1000),
    status: statuses[rnd(4)],
    note: rnd(2) ? `note ${i}` : null,
    ref: rnd(2) ? { long: 500 + i } : { string: `R-${i}` },
    uid: `${hex}-0000-4000-8000-${hex}${hex.slice(0, 4)}`,
    score: rnd(1000) / 8,
  });
}

const values = [];
for (const r of records) {
  const obj = {
    id: r.id,
    customer: { name: r.name, country: r.country, address: { city: r.city, zip: r.zip } },
    items: r.items.map((x) => ({ sku: x.sku, qty: x.qty, price: twos(x.cents, 4) })),
    attrs: r.attrs,
    amount: twos(r.cents, 0),
    ts: r.ts,
    day: r.day,
    status: r.status,
    ref: r.ref.long !== undefined ? r.ref.long : r.ref.string,
    uid: r.uid,
  };
  if (r.version === 1) {
    obj.note = r.note;
    obj.score = r.score;
  }
  values.push(frame(r.version, (r.version === 1 ? t1 : t2).toBuffer(obj)));
}
// Bad records, mixed in: a wrong magic byte, an unknown id, a truncated payload, and a value
// with a 0x01+GUID header (Confluent's newer header-id format, not the wire format decoded here).
const good = values[3];
const bad = [
  { at: 10, value: Buffer.concat([Buffer.from([2]), good.subarray(1)]), reason: 'bad-magic-byte' },
  { at: 20, value: frame(99, good.subarray(5)), reason: 'unknown-schema-id' },
  { at: 30, value: good.subarray(0, good.length - 3), reason: 'decode-error' },
  { at: 40, value: Buffer.concat([Buffer.from([1]), Buffer.alloc(16, 0xab), good.subarray(5)]), reason: 'bad-magic-byte' },
];
const all = [...values];
for (const b of bad) all.splice(b.at, 0, b.value);
const parts = [];
for (const v of all) {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(v.length);
  parts.push(len, v);
}
writeFileSync(path.join(dir, 'values.bin'), Buffer.concat(parts));
writeFileSync(path.join(dir, 'schemas.json'), JSON.stringify({ 1: JSON.stringify(v1), 2: JSON.stringify(v2) }));

if (!process.env.FLOE_TYPED_FIXTURE) throw new Error('FLOE_TYPED_FIXTURE is not set');
execFileSync(process.env.FLOE_TYPED_FIXTURE, [dir], { stdio: 'inherit' });
const result = JSON.parse(readFileSync(path.join(dir, 'result.json'), 'utf8'));
eq(result.rows, N, 'rows decoded');
eq(result.failures.map((f) => [f.index, f.reason]), bad.map((b) => [b.at, b.reason]), 'bad records and their reasons');

const db = await DuckDBInstance.create(':memory:');
const con = await db.connect();
async function q(sql) {
  const r = await con.runAndReadAll(sql);
  return r.getRowObjectsJS();
}
const file = path.join(dir, 'typed.parquet').replaceAll("'", "''");
await con.run(`CREATE VIEW t AS SELECT * FROM read_parquet('${file}')`);

// Column types as DuckDB reads them from the Parquet logical types.
const types = (await q(`SELECT typeof(id) AS "id", typeof(customer) AS "customer", typeof(items) AS "items", typeof(attrs) AS "attrs",
  typeof(amount) AS "amount", typeof(ts) AS "ts", typeof(day) AS "day", typeof(status) AS "status", typeof(note) AS "note", typeof(ref) AS "ref",
  typeof(uid) AS "uid", typeof(score) AS "score" FROM t LIMIT 1`))[0];
eq(types, {
  id: 'BIGINT',
  customer: 'STRUCT("name" VARCHAR, country VARCHAR, address STRUCT(city VARCHAR, zip INTEGER))',
  items: 'STRUCT(sku VARCHAR, qty INTEGER, price DECIMAL(9,2))[]',
  attrs: 'MAP(VARCHAR, VARCHAR)',
  amount: 'DECIMAL(12,2)',
  ts: 'TIMESTAMP WITH TIME ZONE',
  day: 'DATE',
  status: 'VARCHAR',
  note: 'VARCHAR',
  ref: 'STRUCT(long BIGINT, string VARCHAR)',
  uid: 'UUID',
  score: 'DOUBLE',
}, 'column types');

// Every row's scalar values.
const rows = await q(`SELECT id::VARCHAR id, customer.name AS name, customer.country AS country,
  customer.address.city AS city, customer.address.zip AS zip, amount::VARCHAR amount, epoch_ms(ts)::VARCHAR ts,
  day::VARCHAR AS "day", status, note, ref.long::VARCHAR AS ref_long, ref.string AS ref_string, uid::VARCHAR uid, score,
  len(items)::INTEGER AS n_items, cardinality(attrs)::INTEGER AS n_attrs FROM t ORDER BY id`);
const want = records.map((r) => ({
  id: String(r.id),
  name: r.name,
  country: r.country,
  city: r.city,
  zip: r.zip,
  amount: dec2(r.cents),
  ts: String(r.ts),
  day: new Date(r.day * 86400000).toISOString().slice(0, 10),
  status: r.status,
  note: r.version === 1 ? r.note : null,
  ref_long: r.ref.long !== undefined ? String(r.ref.long) : null,
  ref_string: r.ref.string ?? null,
  uid: r.uid,
  score: r.version === 1 ? r.score : null,
  n_items: r.items.length,
  n_attrs: Object.keys(r.attrs).length,
}));
eq(rows.length, want.length, 'row count');
let badRows = 0;
for (let i = 0; i < Math.min(rows.length, want.length); i++) {
  if (JSON.stringify(rows[i]) !== JSON.stringify(want[i])) {
    if (badRows < 3) eq(rows[i], want[i], `row ${i}`);
    badRows++;
  }
}
check(badRows === 0, `${badRows} rows differ`);

// The array of structs and the map, entry by entry.
const items = await q(`SELECT id::VARCHAR id, u.sku sku, u.qty qty, u.price::VARCHAR price
  FROM (SELECT id, unnest(items) u FROM t) ORDER BY id, sku`);
const wantItems = records.flatMap((r) => r.items.map((x) => ({ id: String(r.id), sku: x.sku, qty: x.qty, price: dec2(x.cents) })))
  .sort((a, b) => (a.id === b.id ? (a.sku < b.sku ? -1 : 1) : a.id < b.id ? -1 : 1));
eq(items, wantItems, 'items');
const attrs = await q(`SELECT id::VARCHAR id, unnest(map_keys(attrs)) k, unnest(map_values(attrs)) v FROM t ORDER BY id, k`);
const wantAttrs = records.flatMap((r) => Object.entries(r.attrs).map(([k, v]) => ({ id: String(r.id), k, v })));
eq(attrs, wantAttrs, 'map entries');

// Analytics without any decoding.
const byCountry = await q(`SELECT customer.country AS country, sum(amount)::VARCHAR AS total, count(*)::INTEGER AS n
  FROM t GROUP BY country ORDER BY country`);
const agg = new Map();
for (const r of records) {
  const a = agg.get(r.country) ?? { total: 0n, n: 0 };
  a.total += r.cents;
  a.n++;
  agg.set(r.country, a);
}
eq(byCountry, [...agg.entries()].sort().map(([country, a]) => ({ country, total: dec2(a.total), n: a.n })),
  'SELECT country, sum(amount) GROUP BY country');
const qty = await q(`SELECT status, sum(u.qty)::INTEGER q FROM (SELECT status, unnest(items) u FROM t) GROUP BY status ORDER BY status`);
const qagg = new Map();
for (const r of records) for (const x of r.items) qagg.set(r.status, (qagg.get(r.status) ?? 0) + x.qty);
eq(qty, [...qagg.entries()].sort().map(([status, q]) => ({ status, q })), 'sum(qty) over the array of structs by enum');

// Field ids on every node below the root.
const ids = await q(`SELECT name, field_id FROM parquet_schema('${file}')`);
check(ids.length > 20, `parquet_schema rows: ${ids.length}`);
const missing = ids.slice(1).filter((r) => r.field_id === null && r.name !== 'list' && r.name !== 'key_value');
eq(missing, [], 'nodes without a field id (other than the LIST/MAP repeated groups)');

console.log(`typed rows: ${passed} checks passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
