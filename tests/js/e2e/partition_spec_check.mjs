// Checks a partitioned table's data files with DuckDB (issue 29): every file holds one stream
// key, and rows whose day (spec message_ts_day) or hour (message_ts_hour) is the file's
// partition value in the manifest; the rows per day over every file equal what was produced.
// usage: partition_spec_check.mjs FILES_JSON EXPECTED   (FILES_JSON from iceberg_files.py;
//        EXPECTED: "partition offset key value timestamp" lines, as partition_spec.mjs wrote them)
import { DuckDBInstance } from '@duckdb/node-api';
import { readFileSync } from 'node:fs';

const [filesJson, expectedPath] = process.argv.slice(2);
const files = JSON.parse(readFileSync(filesJson, 'utf8')).files;
const expected = readFileSync(expectedPath, 'utf8').trim().split('\n').map((l) => l.split(' '));
const fail = (msg) => { console.error(`FAIL: ${msg}`); process.exitCode = 1; };
const db = await DuckDBInstance.create(':memory:');
const c = await db.connect();
const list = `[${files.map((f) => `'${f.path}'`).join(',')}]`;
// Rows per day over every file, against what was produced.
const want = new Map();
for (const [, , , , ts] of expected) {
  const day = new Date(Number(ts)).toISOString().slice(0, 10);
  want.set(day, (want.get(day) ?? 0) + 1);
}
const perDay = await c.runAndReadAll(
  `SELECT strftime(make_timestamp(message_ts * 1000), '%Y-%m-%d') AS d, count(*)::INTEGER
   FROM read_parquet(${list}, hive_partitioning = false) GROUP BY d ORDER BY d`);
const got = new Map(perDay.getRows().map(([d, n]) => [String(d), Number(n)]));
if (JSON.stringify([...got].sort()) !== JSON.stringify([...want].sort()))
  fail(`rows per day ${JSON.stringify([...got])} != produced ${JSON.stringify([...want])}`);
else console.log(`rows per day: ${JSON.stringify([...got])}`);
// Each file: one stream key, and one day / hour equal to its partition value.
const hourText = (h) => { const d = new Date(h * 3600000).toISOString(); return `${d.slice(0, 10)}-${d.slice(11, 13)}`; };
for (const f of files) {
  const r = (await c.runAndReadAll(
    `SELECT count(DISTINCT stream_key)::INTEGER, min(stream_key),
            count(DISTINCT strftime(make_timestamp(message_ts * 1000), '%Y-%m-%d'))::INTEGER,
            min(strftime(make_timestamp(message_ts * 1000), '%Y-%m-%d')),
            count(DISTINCT message_ts // 3600000)::INTEGER, min(message_ts // 3600000)::BIGINT, count(*)::INTEGER
     FROM read_parquet('${f.path}')`)).getRows()[0];
  const [keys, key, days, day, hours, hour, rows] = r.map((v) => (typeof v === 'bigint' ? Number(v) : v));
  if (keys !== 1 || key !== f.stream_key && f.stream_key != null) fail(`${f.path}: ${keys} stream keys (${key})`);
  if (rows !== f.records) fail(`${f.path}: ${rows} rows, the manifest says ${f.records}`);
  const p = f.partition;
  if ('message_ts_day' in p) {
    if (days !== 1 || day !== p.message_ts_day) fail(`${f.path}: days ${days} (${day}) vs partition ${p.message_ts_day}`);
  } else if ('message_ts_hour' in p) {
    if (hours !== 1 || hour !== p.message_ts_hour) fail(`${f.path}: hours ${hours} (${hour}) vs partition ${p.message_ts_hour}`);
    if (!f.path.includes(`/message_ts_hour=${hourText(hour)}/`)) fail(`${f.path}: not under message_ts_hour=${hourText(hour)}`);
  } else if ('stream_key' in p) {
    if (p.stream_key !== key) fail(`${f.path}: stream_key partition ${p.stream_key} vs rows ${key}`);
  } else fail(`${f.path}: unexpected partition ${JSON.stringify(p)}`);
}
console.log(`${files.length} files checked`);
