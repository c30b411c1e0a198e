// Prints every row of a Floe table's data files (read by DuckDB), one line per row, ordered by
// partition and offset, in the same form as kcat -f '%p %o %k %s %T %h\n' prints records, so a
// test can compare a table with what a Kafka client reads (duplicates and gaps show as lines).
// usage: table_dump.mjs FILES_JSON
// FILES_JSON comes from tests/e2e/iceberg_files.py (catalog + Avro manifests, read by Python).
import { readFileSync } from 'node:fs';
import { DuckDBInstance } from '@duckdb/node-api';

const [filesJson] = process.argv.slice(2);
const files = JSON.parse(readFileSync(filesJson, 'utf8')).files.map((f) => f.path);
if (files.length === 0) process.exit(0);
const db = await DuckDBInstance.create(':memory:');
const c = await db.connect();
const list = files.map((f) => `'${f}'`).join(',');
const reader = await c.runAndReadAll(`
  SELECT "partition", "offset", key, value, kafka_timestamp,
         [struct_pack(k := h.header_key, v := h.header_value) for h in coalesce(headers, [])] AS hs
  FROM read_parquet([${list}]) ORDER BY "partition", "offset"`);
const text = (v) => (v === null ? '' : Buffer.from(v.bytes ?? v).toString('utf8'));
const out = [];
for (const row of reader.getRowObjects()) {
  const hs = (row.hs.items ?? row.hs).map((h) => {
    const hv = h.entries ?? h;
    return `${hv.k}=${text(hv.v)}`;
  });
  out.push(`${row.partition} ${row.offset} ${text(row.key)} ${text(row.value)} ${row.kafka_timestamp} ${hs.join(',')}`);
}
if (out.length) console.log(out.join('\n'));
