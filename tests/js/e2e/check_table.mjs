// Checks a Floe table's data files with DuckDB against the records produce.mjs sent:
// every (partition, offset) once, no gaps, keys, values and headers byte-equal.
// usage: check_table.mjs FILES_JSON FROM TO PARTITIONS TOPIC
// FILES_JSON comes from tests/e2e/iceberg_files.py (catalog + Avro manifests, read by Python).
import { readFileSync } from 'node:fs';
import { DuckDBInstance } from '@duckdb/node-api';
import { makeRecord } from './records.mjs';

const [filesJson, fromS, toS, partsS, topic] = process.argv.slice(2);
const from = Number(fromS), to = Number(toS), partitions = Number(partsS);
const listing = JSON.parse(readFileSync(filesJson, 'utf8'));
const files = listing.files.map((f) => f.path);
const fail = (msg) => { console.error(`check_table: ${msg}`); process.exit(1); };
if (files.length === 0) fail('the table has no data files');

const db = await DuckDBInstance.create(':memory:');
const c = await db.connect();
const list = files.map((f) => `'${f}'`).join(',');
const reader = await c.runAndReadAll(`
  SELECT "partition", "offset", stream_key, key, value,
         [struct_pack(k := h.header_key, v := h.header_value) for h in coalesce(headers, [])] AS hs,
         message_id, message_ts, kafka_timestamp
  FROM read_parquet([${list}]) ORDER BY "partition", "offset"`);
const rows = reader.getRowObjects();
const expectedCount = to - from;
if (rows.length !== expectedCount) fail(`expected ${expectedCount} rows, DuckDB read ${rows.length}`);

// Records were sent round-robin over partitions: record i went to partition i % P, at the
// (i / P)-th offset of that partition (for from = 0).
const toBuf = (v) => (v === null ? null : Buffer.from(v.bytes ?? v));
const eq = (a, b) => (a === null || b === null ? a === b : Buffer.compare(a, b) === 0);
let checked = 0;
for (const row of rows) {
  const p = Number(row.partition), off = Number(row.offset);
  const i = off * partitions + p;
  const exp = makeRecord(i);
  const where = `partition ${p} offset ${off}`;
  if (row.stream_key !== `${topic}-${p}`) fail(`${where}: stream_key ${row.stream_key}`);
  if (row.message_id !== String(off)) fail(`${where}: message_id ${row.message_id}`);
  if (!eq(toBuf(row.key), exp.key)) fail(`${where}: key differs`);
  if (!eq(toBuf(row.value), exp.value)) fail(`${where}: value differs`);
  const hs = row.hs.items ?? row.hs;
  if (hs.length !== exp.headerList.length) fail(`${where}: ${hs.length} headers, expected ${exp.headerList.length}`);
  hs.forEach((h, k) => {
    const e = exp.headerList[k];
    const hv = h.entries ?? h;
    if (hv.k !== e[0] || !eq(toBuf(hv.v), e[1])) fail(`${where}: header ${k} differs`);
  });
  checked++;
}
// Every offset exactly once, per partition, without gaps.
const perPartition = new Map();
for (const row of rows) {
  const p = Number(row.partition);
  const next = perPartition.get(p) ?? 0;
  if (Number(row.offset) !== next) fail(`partition ${p}: offset ${row.offset} where ${next} was expected (gap or duplicate)`);
  perPartition.set(p, next + 1);
}
console.log(`check_table: ${checked} rows in ${files.length} file(s) match what was produced`);
