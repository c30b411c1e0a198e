// Reads a chaos run's Iceberg table with DuckDB: the data files listed by tests/e2e/iceberg_files.py
// (catalog and Avro manifests read by Python). Prints JSON {"rows": [[partition, offset, value,
// stream_key], ...], "positions": {...}} (positions: the snapshot's floe.committed-positions).
// usage: table_read.mjs FILES_JSON
import { readFileSync } from 'node:fs';
import { DuckDBInstance } from '@duckdb/node-api';

const listing = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const files = listing.files.map((f) => f.path);
const out = { rows: [], positions: listing.positions ?? {}, files: files.length };
if (files.length > 0) {
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  const list = files.map((f) => `'${f}'`).join(',');
  const reader = await c.runAndReadAll(`SELECT "partition", "offset", decode(value) AS v, stream_key
                                          FROM read_parquet([${list}]) ORDER BY "partition", "offset"`);
  for (const r of reader.getRows()) out.rows.push([Number(r[0]), Number(r[1]), r[2] === null ? null : String(r[2]), String(r[3])]);
}
process.stdout.write(JSON.stringify(out) + '\n');
