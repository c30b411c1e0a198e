// The cold-lookup peer of bench/lookups: DuckDB (one thread) answers "newest record with key K"
// over the same Parquet data files floe's Iceberg table holds, one query at a time with a
// prepared statement, for the first N keys of KEYS_FILE. Prints p50/p90/p99/max in ms.
// usage: lookups_duckdb.mjs DATA_DIR KEYS_FILE [N]
import { DuckDBInstance } from '@duckdb/node-api';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const [dataDir, keysFile, nS] = process.argv.slice(2);
const n = Number(nS ?? 500);
const files = [];
const walk = (d) => {
  for (const e of readdirSync(d, { withFileTypes: true })) {
    if (e.isDirectory()) walk(join(d, e.name));
    else if (e.name.endsWith('.parquet')) files.push(join(d, e.name));
  }
};
walk(dataDir);
if (!files.length) throw new Error(`no Parquet files under ${dataDir}`);
const keys = readFileSync(keysFile, 'utf8').split('\n').filter(Boolean).slice(0, n);
const db = await DuckDBInstance.create(':memory:');
const con = await db.connect();
await con.run('SET threads=1');
const list = files.map((f) => `'${f}'`).join(',');
const stmt = await con.prepare(
  `SELECT "offset", key, value FROM read_parquet([${list}]) WHERE key = $1 ORDER BY "offset" DESC LIMIT 1`);
const ms = [];
for (const k of keys) {
  stmt.bindVarchar(1, k);
  const t0 = process.hrtime.bigint();
  const r = await stmt.runAndReadAll();
  ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
  if (r.getRows().length !== 1) throw new Error(`DuckDB found no row for key ${k}`);
}
ms.sort((a, b) => a - b);
const p = (q) => ms[Math.min(ms.length - 1, Math.floor(q * ms.length))];
console.log(`${'peer: DuckDB, same Parquet files, 1 thread'.padEnd(44)} ${String(ms.length).padStart(7)} ` +
  `${p(0.5).toFixed(3).padStart(9)} ${p(0.9).toFixed(3).padStart(9)} ${p(0.99).toFixed(3).padStart(9)} ` +
  `${ms[ms.length - 1].toFixed(3).padStart(9)}  (${files.length} files)`);
