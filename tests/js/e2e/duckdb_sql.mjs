// Runs one SQL statement in DuckDB (in memory) and prints each row's values, tab-separated, one
// row a line: what `duckdb -c "<sql>"` would show, for tests that run a README's query.
// usage: duckdb_sql.mjs SQL
import { DuckDBInstance } from '@duckdb/node-api';

const [sql] = process.argv.slice(2);
const db = await DuckDBInstance.create(':memory:');
const c = await db.connect();
const reader = await c.runAndReadAll(sql);
for (const row of reader.getRows()) console.log(row.map((v) => String(v)).join('\t'));
