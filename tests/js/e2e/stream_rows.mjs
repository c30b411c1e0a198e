// Prints what DuckDB reads of one stream key in a Floe table's data files:
// "<rows> <min offset> <max offset> <distinct partitions>" (or "0" when it has no rows).
// usage: stream_rows.mjs FILES_JSON STREAM_KEY   (FILES_JSON from tests/e2e/iceberg_files.py)
import { readFileSync } from 'node:fs';
import { DuckDBInstance } from '@duckdb/node-api';

const [filesJson, streamKey] = process.argv.slice(2);
const files = JSON.parse(readFileSync(filesJson, 'utf8')).files.map((f) => f.path);
if (files.length === 0) { console.log('0'); process.exit(0); }
const db = await DuckDBInstance.create(':memory:');
const c = await db.connect();
const list = files.map((f) => `'${f.replaceAll("'", "''")}'`).join(',');
const key = streamKey.replaceAll("'", "''");
const r = await c.runAndReadAll(`
  SELECT count(*) AS n, min("offset") AS lo, max("offset") AS hi, count(DISTINCT "partition") AS parts,
         min("partition") AS p
  FROM read_parquet([${list}]) WHERE stream_key = '${key}'`);
const row = r.getRowObjects()[0];
if (Number(row.n) === 0) console.log('0');
else console.log(`${row.n} ${row.lo} ${row.hi} ${row.parts} ${row.p}`);
