// After the transactions e2e: the table's rows (DuckDB over the current data files) hold every
// committed value of the state file exactly once, no aborted ('a-…'), crashed ('crash-…') or
// fenced ('zombie…') record, and each row at a distinct (partition, offset).
// usage: check_txn_table.mjs FILES_JSON STATE_JSON
import { readFileSync } from 'node:fs';
import { DuckDBInstance } from '@duckdb/node-api';

const [filesJson, stateJson] = process.argv.slice(2);
const state = JSON.parse(readFileSync(stateJson, 'utf8'));
const want = [...state.committed, ...(state.late || [])];
const files = JSON.parse(readFileSync(filesJson, 'utf8')).files
  .filter((f) => f.path.includes('/txn_in/')).map((f) => `'${f.path}'`);
const fail = (m) => { console.error(`check_txn_table: ${m}`); process.exit(1); };
if (!files.length) fail('no data files');
const c = await (await DuckDBInstance.create(':memory:')).connect();
const src = `read_parquet([${files.join(',')}])`;
const rows = (await c.runAndReadAll(`SELECT "partition", "offset", decode(value) FROM ${src}`)).getRows();
const values = rows.map((r) => r[2]);
const keys = new Set(rows.map((r) => `${r[0]}:${r[1]}`));
if (keys.size !== rows.length) fail(`${rows.length} rows but ${keys.size} distinct (partition, offset)`);
const bad = values.filter((v) => /^(a-|crash-|zombie)/.test(v));
if (bad.length) fail(`${bad.length} aborted/crashed rows, e.g. ${bad.slice(0, 3)}`);
const missing = want.filter((v) => !values.includes(v));
if (missing.length) fail(`${missing.length} committed values missing, e.g. ${missing.slice(0, 3)}`);
if (values.length !== want.length) fail(`${values.length} rows, want ${want.length}`);
console.log(`check_txn_table: ${rows.length} rows, every committed value once, nothing aborted`);
