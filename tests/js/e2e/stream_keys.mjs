// Prints the stream keys of a Floe table's data files, as DuckDB reads them from the Parquet
// files themselves, as JSON {"<stream_key>": rows}.
// usage: stream_keys.mjs FILES_JSON   (FILES_JSON from tests/e2e/iceberg_files.py)
import { readFileSync } from 'node:fs';
import { DuckDBInstance } from '@duckdb/node-api';

const listing = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const files = listing.files.map((f) => f.path);
if (files.length === 0) { console.log('{}'); process.exit(0); }
const db = await DuckDBInstance.create(':memory:');
const c = await db.connect();
const list = files.map((f) => `'${f.replaceAll("'", "''")}'`).join(',');
const rows = (await c.runAndReadAll(
  `SELECT stream_key, count(*) AS n FROM read_parquet([${list}]) GROUP BY stream_key ORDER BY stream_key`)).getRowObjects();
const out = {};
for (const r of rows) out[r.stream_key] = Number(r.n);
console.log(JSON.stringify(out));
