// Reads every data file a table listing names (tests/e2e/iceberg_files.py: catalog + Avro
// manifests, read by Python) with hyparquet alone, and checks the rows against what
// produce.mjs sent: every (partition, offset) of [0, COUNT) once, keys, values and headers
// byte-equal. Prints a digest of the row multiset so runs can be compared.
// usage: hyparquet_check.mjs FILES_JSON COUNT PARTITIONS TOPIC
import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { asyncBufferFromFile, parquetReadObjects } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { makeRecord } from './records.mjs';

const [filesJson, countS, partsS, topic] = process.argv.slice(2);
const count = Number(countS), partitions = Number(partsS);
const fail = (m) => { console.error(`hyparquet_check: ${m}`); process.exit(1); };
const files = JSON.parse(readFileSync(filesJson, 'utf8')).files.map((f) => f.path.replace(/^file:\/\//, ''));
if (files.length === 0) fail('the table has no data files');

const str = (v) => (typeof v === 'string' ? v : new TextDecoder().decode(v));
const eq = (a, b) => (a == null || b == null ? a == b : Buffer.compare(Buffer.from(a), b) === 0);
const seen = new Uint8Array(count);
const lines = [];
let rows = 0;
for (const path of files) {
  const file = await asyncBufferFromFile(path);
  const objs = await parquetReadObjects({ file, compressors, utf8: false });
  for (const row of objs) {
    const p = Number(row.partition), off = Number(row.offset);
    const i = off * partitions + p;
    const id = `${p}/${off}`;
    if (!(i >= 0 && i < count)) fail(`${id}: outside the ${count} records produced`);
    if (seen[i]) fail(`${id}: twice`);
    seen[i] = 1;
    rows++;
    const exp = makeRecord(i);
    if (str(row.stream_key) !== `${topic}-${p}`) fail(`${id}: stream_key differs`);
    if (!eq(row.key, exp.key)) fail(`${id}: key differs`);
    if (!eq(row.value, exp.value)) fail(`${id}: value differs`);
    const hs = row.headers ?? [];
    if (hs.length !== exp.headerList.length) fail(`${id}: ${hs.length} headers, expected ${exp.headerList.length}`);
    hs.forEach((h, k) => {
      if (str(h.header_key) !== exp.headerList[k][0] || !eq(h.header_value, exp.headerList[k][1]))
        fail(`${id}: header ${k} differs`);
    });
    lines.push(`${p} ${off} ${row.key ? Buffer.from(row.key).toString('hex') : '-'} ${row.value ? Buffer.from(row.value).toString('hex') : '-'}`);
  }
}
if (rows !== count) fail(`read ${rows} rows, expected ${count}`);
lines.sort();
const digest = createHash('sha256').update(lines.join('\n')).digest('hex');
console.log(`hyparquet_check: ${rows} rows in ${files.length} file(s) match what was produced; multiset ${digest.slice(0, 16)}`);
