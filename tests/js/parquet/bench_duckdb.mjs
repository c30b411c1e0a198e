// DuckDB's side of bench/parquet: loads the rows from an uncompressed Parquet file into an
// in-memory table (untimed), then times `COPY t TO ... (FORMAT parquet, COMPRESSION c)` with
// one thread, into a file that does not exist yet. Prints "duckdb <codec> <wall seconds> <cpu seconds> <bytes>" per codec.
// usage: node bench_duckdb.mjs INPUT.parquet OUT_DIR TAG zstd,snappy
import { DuckDBInstance } from '@duckdb/node-api';
import { rmSync, statSync } from 'node:fs';

const [input, outDir, tag, codecs] = process.argv.slice(2);
const db = await DuckDBInstance.create(':memory:');
const con = await db.connect();
await con.run('SET threads=1');
await con.run(`CREATE TABLE t AS SELECT * FROM read_parquet('${input}')`);
for (const codec of codecs.split(',')) {
  const out = `${outDir}/duckdb-${tag}-${codec}.parquet`;
  // A fresh file, as Floe's side writes: replacing an existing one makes ext4 flush it
  // (auto_da_alloc), which would be timed.
  rmSync(out, { force: true });
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  await con.run(`COPY t TO '${out}' (FORMAT parquet, COMPRESSION ${codec})`);
  const secs = Number(process.hrtime.bigint() - t0) / 1e9;
  const c = process.cpuUsage(c0);
  const cpu = (c.user + c.system) / 1e6;
  console.log(`duckdb ${codec} ${secs.toFixed(4)} ${cpu.toFixed(4)} ${statSync(out).size}`);
}
