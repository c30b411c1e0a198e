// DuckDB reads a Parquet file Floe encrypted (AES_GCM_V1, encrypted footer, every column with
// the footer key: the profile DuckDB supports) and must return exactly the rows Floe's own
// reader decrypted (flat_rows.json, written by pme_files). DuckDB must also refuse the file
// without a key and with a wrong one, so the file is really encrypted.
//
// usage: node encrypted_duckdb.mjs [DIR]
//   With FLOE_PME_FILES set (the pme_files program), runs it into FLOE_PME_OUT (or DIR) first.

import { DuckDBInstance } from '@duckdb/node-api';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

const dir = process.env.FLOE_PME_OUT || process.argv[2] || '/tmp/floe-pme-files';
if (process.env.FLOE_PME_FILES) execFileSync(process.env.FLOE_PME_FILES, [dir], { stdio: 'inherit' });
const manifest = JSON.parse(readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
const expected = JSON.parse(readFileSync(path.join(dir, 'flat_rows.json'), 'utf8'));
const entry = manifest.find((e) => e.file === 'flat_uniform.parquet');
const file = path.join(dir, entry.file);

let passed = 0;
let failed = 0;
function check(ok, what) {
  if (ok) passed++;
  else {
    failed++;
    console.log(`FAIL: ${what}`);
  }
  return ok;
}

const key = Buffer.from(entry.keys.footer, 'hex');
const db = await DuckDBInstance.create(':memory:');
const c = await db.connect();
// A 32-byte key: its base64 (44 characters) is not itself a valid key length, so DuckDB decodes it.
await c.run(`PRAGMA add_parquet_key('floe_footer', '${key.toString('base64')}')`);
await c.run(`PRAGMA add_parquet_key('wrong', '${Buffer.alloc(32, 7).toString('base64')}')`);

const sql = (k) => `SELECT id, name, score, flag, date_diff('day', DATE '1970-01-01', day) AS day, city
  FROM read_parquet('${file}', encryption_config={footer_key: '${k}'}) ORDER BY id`;
const got = (await c.runAndReadAll(sql('floe_footer'))).getRowObjectsJson();
check(got.length === expected.length, `DuckDB returned ${got.length} rows, Floe's reader ${expected.length}`);
let diffs = 0;
for (let i = 0; i < Math.min(got.length, expected.length); i++) {
  const g = got[i];
  const e = expected[i];
  const same =
    String(g.id) === e.id &&
    g.name === e.name &&
    (g.score === null ? e.score === null : Number(g.score) === e.score) &&
    g.flag === e.flag &&
    Number(g.day) === e.day &&
    g.city === e.city;
  if (!same && diffs++ < 5) console.log(`row ${i}: DuckDB ${JSON.stringify(g)}, Floe ${JSON.stringify(e)}`);
}
check(diffs === 0, `${diffs} rows differ between DuckDB and Floe's reader`);

// Aggregates over the whole file (every page of every row group decrypted by DuckDB).
const agg = (await c.runAndReadAll(`SELECT count(*) AS n, count(name) AS names, sum(id) AS ids,
  count(DISTINCT city) AS cities FROM read_parquet('${file}', encryption_config={footer_key: 'floe_footer'})`)).getRowObjectsJson()[0];
check(Number(agg.n) === expected.length, `count ${agg.n}`);
check(Number(agg.names) === expected.filter((r) => r.name !== null).length, `count(name) ${agg.names}`);
check(BigInt(agg.ids) === expected.reduce((a, r) => a + BigInt(r.id), 0n), `sum(id) ${agg.ids}`);
check(Number(agg.cities) === 5, `distinct cities ${agg.cities}`);

async function refused(q, what) {
  try {
    await c.runAndReadAll(q);
    check(false, `${what}: DuckDB read the file`);
  } catch (e) {
    check(true, what);
    console.log(`DuckDB refused ${what}: ${e.message.split('\n')[0]}`);
  }
}
await refused(`SELECT count(*) FROM read_parquet('${file}')`, 'no key');
await refused(sql('wrong'), 'a wrong key');

console.log(`parquet encryption (DuckDB): ${passed} passed, ${failed} failed, ${got.length} rows compared`);
process.exit(failed === 0 ? 0 : 1);
