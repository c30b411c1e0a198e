// The DuckDB peer of bench/typed: the same typed rows (the file typed_decode_bench wrote with
// --typed-out), loaded into an in-memory DuckDB table first, then written to Parquet by DuckDB
// with one thread and zstd; prints records/s as the bench prints its own.
// usage: node typed_duckdb_peer.mjs TYPED_PARQUET ROWS [RUNS]
import { DuckDBInstance } from '@duckdb/node-api';
import { rmSync, statSync } from 'node:fs';

const [path, rowsS, runsS] = process.argv.slice(2);
const rows = Number(rowsS), runs = Number(runsS ?? 3);
const db = await DuckDBInstance.create(':memory:');
const c = await db.connect();
await c.run('SET threads = 1');
await c.run(`CREATE TABLE t AS SELECT * FROM read_parquet('${path}')`);
const n = Number((await c.runAndReadAll('SELECT count(*) FROM t')).getRows()[0][0]);
if (n !== rows) { console.error(`typed_duckdb_peer: ${n} rows loaded, expected ${rows}`); process.exit(1); }
const out = `${path}.duckdb.parquet`;
let best = Infinity;
for (let i = 0; i < runs; i++) {
  rmSync(out, { force: true });
  const t0 = process.hrtime.bigint();
  await c.run(`COPY t TO '${out}' (FORMAT parquet, COMPRESSION zstd)`);
  best = Math.min(best, Number(process.hrtime.bigint() - t0) / 1e9);
}
const size = statSync(out).size;
rmSync(out, { force: true });
console.log(`  ${'DuckDB COPY TO parquet (peer)'.padEnd(34)} ${String(Math.round(rows / best)).padStart(12)} records/s   file ${(size / 1e6).toFixed(1).padStart(7)} MB   (best of ${runs}, threads=1, zstd, from memory)`);
