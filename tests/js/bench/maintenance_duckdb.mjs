// DuckDB over a table's data files, as listed by floe-bench-maintenance (small.json before
// compaction, compacted.json after): a count and a filtered scan (one key), each the best of
// --runs runs with a fresh connection, printed side by side.
//   node maintenance_duckdb.mjs SMALL_JSON COMPACTED_JSON [RUNS]
import { readFileSync } from 'node:fs';
import { DuckDBInstance } from '@duckdb/node-api';

const [smallJson, compactedJson, runsS] = process.argv.slice(2);
const runs = Number(runsS ?? 3);
const files = (p) => JSON.parse(readFileSync(p, 'utf8')).files.map((f) => `'${f.path}'`).join(',');

async function time(list, sql) {
  let best = Infinity, answer;
  for (let i = 0; i < runs; i++) {
    const db = await DuckDBInstance.create(':memory:');
    const c = await db.connect();
    const t0 = process.hrtime.bigint();
    const r = await c.runAndReadAll(sql.replace('FILES', `read_parquet([${list}])`));
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    answer = JSON.stringify(r.getRows(), (_, v) => (typeof v === 'bigint' ? v.toString() : v));
    best = Math.min(best, ms);
  }
  return { ms: best, answer };
}

const queries = {
  count: 'SELECT count(*) FROM FILES',
  'filtered scan (key = user-42)': "SELECT count(*), sum(octet_length(value)) FROM FILES WHERE key = 'user-42'::BLOB",
};
const small = files(smallJson), compacted = files(compactedJson);
const nSmall = small.split(',').length, nCompacted = compacted.split(',').length;
for (const [name, sql] of Object.entries(queries)) {
  const a = await time(small, sql), b = await time(compacted, sql);
  if (a.answer !== b.answer) { console.error(`${name}: answers differ: ${a.answer} vs ${b.answer}`); process.exit(1); }
  console.log(`DuckDB ${name}: ${a.ms.toFixed(1)} ms over ${nSmall} small files, ${b.ms.toFixed(1)} ms over ${nCompacted} compacted file(s) (${(a.ms / b.ms).toFixed(1)}x); answer ${a.answer}`);
}
