// After a crash test: the table's rows hold each (partition, offset) once with no gaps, and
// every acknowledged record r-0 .. r-(ACKED-1) at least once (unacknowledged sends retried by
// the test's producer may appear twice in the log, each at its own offset, as Kafka allows).
// usage: check_crash.mjs FILES_JSON ACKED
import { readFileSync } from 'node:fs';
import { DuckDBInstance } from '@duckdb/node-api';

const [filesJson, ackedS] = process.argv.slice(2);
const acked = Number(ackedS);
const files = JSON.parse(readFileSync(filesJson, 'utf8')).files.map((f) => `'${f.path}'`);
const fail = (m) => { console.error(`check_crash: ${m}`); process.exit(1); };
if (!files.length) fail('no data files');
const c = await (await DuckDBInstance.create(':memory:')).connect();
const src = `read_parquet([${files.join(',')}])`;
const [[rows, distinct, minOff, maxOff]] = (await c.runAndReadAll(
  `SELECT count(*), count(DISTINCT "offset"), min("offset"), max("offset") FROM ${src}`)).getRows();
if (rows !== distinct) fail(`${rows} rows but ${distinct} distinct offsets: duplicates`);
if (minOff !== 0n || maxOff !== rows - 1n) fail(`offsets ${minOff}..${maxOff} for ${rows} rows: gaps`);
const [[missing]] = (await c.runAndReadAll(`
  SELECT count(*) FROM range(${acked}) t(i)
  WHERE 'r-' || i::VARCHAR NOT IN (SELECT decode(value) FROM ${src})`)).getRows();
if (missing !== 0n) fail(`${missing} acknowledged record(s) missing from the table`);
console.log(`check_crash: ${rows} rows, offsets 0..${maxOff} once each, all ${acked} acknowledged records present`);
