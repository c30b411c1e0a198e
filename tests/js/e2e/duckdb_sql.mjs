// Runs one SQL statement in DuckDB (in memory) and prints each row's values, tab-separated, one
// row a line: what `duckdb -c "<sql>"` would show, for tests that run a README's query.
// usage: duckdb_sql.mjs SQL [SQL...]  (statements run in order on one connection, e.g. a PRAGMA
// first; the last one's rows are printed)
import { DuckDBInstance } from '@duckdb/node-api';

const sqls = process.argv.slice(2);
const db = await DuckDBInstance.create(':memory:');
const c = await db.connect();
for (const s of sqls.slice(0, -1)) await c.run(s);
const reader = await c.runAndReadAll(sqls[sqls.length - 1]);
for (const row of reader.getRows()) console.log(row.map((v) => String(v)).join('\t'));
