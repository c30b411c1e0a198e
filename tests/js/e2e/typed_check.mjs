// Checks a typed table and its dead-letter table with DuckDB against what typed_produce.mjs sent:
// every record in exactly one of the two tables; typed columns with the values produced (nested
// struct, array of structs, map, decimals, timestamp, enum, optional field, union, promotion,
// removed field); typed queries with exact sums; each bad record in the dead-letter table once with
// its reason; the raw value kept beside the typed columns.
// usage: typed_check.mjs SENT_JSONL MAIN_FILES_JSON DLQ_FILES_JSON
// (the *_FILES_JSON come from tests/e2e/iceberg_files.py: catalog + Avro manifests, read by Python)
import { readFileSync } from 'node:fs';
import { DuckDBInstance } from '@duckdb/node-api';

const [sentPath, mainJson, dlqJson] = process.argv.slice(2);
const sent = readFileSync(sentPath, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
const files = (p) => JSON.parse(readFileSync(p, 'utf8')).files.map((f) => `'${f.path}'`).join(',');
let failures = 0;
const check = (name, ok, detail = '') => {
  if (ok) console.log(`ok: ${name}`);
  else { console.error(`FAIL: ${name} ${detail}`); failures++; }
};

const db = await DuckDBInstance.create(':memory:');
const c = await db.connect();
const rows = async (sql) => (await c.runAndReadAll(sql)).getRowObjectsJson();
const main = `read_parquet([${files(mainJson)}], union_by_name=true)`;
const dlq = `read_parquet([${files(dlqJson)}], union_by_name=true)`;

// 1. Every record in exactly one table.
const mainRows = await rows(`SELECT "offset", data, octet_length(value) AS vlen, value IS NULL AS tomb FROM ${main} ORDER BY "offset"`);
const dlqRows = await rows(`SELECT "offset", error_reason, error_detail, schema_id, octet_length(value) AS vlen FROM ${dlq} ORDER BY "offset"`);
const mainBy = new Map(mainRows.map((r) => [Number(r.offset), r]));
const dlqBy = new Map(dlqRows.map((r) => [Number(r.offset), r]));
check('no offset twice in the main table', mainBy.size === mainRows.length, `${mainRows.length} rows, ${mainBy.size} offsets`);
check('no offset twice in the dead-letter table', dlqBy.size === dlqRows.length, `${dlqRows.length} rows, ${dlqBy.size} offsets`);
const both = [...mainBy.keys()].filter((o) => dlqBy.has(o));
check('no offset in both tables', both.length === 0, JSON.stringify(both.slice(0, 10)));
const wantMain = sent.filter((s) => s.table === 'main'), wantDlq = sent.filter((s) => s.table === 'dlq');
const missMain = wantMain.filter((s) => !mainBy.has(s.offset)).map((s) => s.offset);
const missDlq = wantDlq.filter((s) => !dlqBy.has(s.offset)).map((s) => s.offset);
check(`the main table holds the ${wantMain.length} decodable records`, missMain.length === 0 && mainRows.length === wantMain.length,
  `missing ${JSON.stringify(missMain.slice(0, 10))}, ${mainRows.length} rows`);
check(`the dead-letter table holds the ${wantDlq.length} others`, missDlq.length === 0 && dlqRows.length === wantDlq.length,
  `missing ${JSON.stringify(missDlq.slice(0, 10))}, ${dlqRows.length} rows`);

// 2. Reasons.
const badReason = wantDlq.filter((s) => dlqBy.get(s.offset)?.error_reason !== s.reason)
  .map((s) => `${s.offset}: want ${s.reason}, got ${dlqBy.get(s.offset)?.error_reason} (${dlqBy.get(s.offset)?.error_detail})`);
check('each dead letter has its reason', badReason.length === 0, badReason.slice(0, 5).join('; '));
const v5 = wantDlq.filter((s) => s.reason === 'incompatible-schema');
check('incompatible records carry their schema id', v5.every((s) => Number(dlqBy.get(s.offset)?.schema_id) === s.schema_id));

// 3. Typed values.
const typed = wantMain.filter((s) => !s.tombstone);
const wrong = [];
for (const s of typed) {
  const d = mainBy.get(s.offset)?.data;
  if (!d) { wrong.push(`${s.offset}: no data`); continue; }
  if (Number(d.id) !== s.id) wrong.push(`${s.offset}: id ${d.id}`);
  if (d.customer?.address?.country !== s.country) wrong.push(`${s.offset}: country ${JSON.stringify(d.customer)}`);
  if ((d.items ?? []).length !== s.items) wrong.push(`${s.offset}: items ${JSON.stringify(d.items)}`);
  if (Boolean(d.vip) !== s.vip) wrong.push(`${s.offset}: vip ${d.vip}`);
}
check(`typed columns of ${typed.length} rows hold what was produced`, wrong.length === 0, wrong.slice(0, 5).join('; '));
const tomb = wantMain.filter((s) => s.tombstone);
check('a tombstone is a main-table row with null typed columns and a null value',
  tomb.every((s) => mainBy.get(s.offset)?.tomb === true && mainBy.get(s.offset)?.data === null));

// 4. Typed SQL with exact results (decimals summed as decimals).
const sums = await rows(`SELECT data.customer.address.country AS country, sum(data.amount)::VARCHAR AS total, count(*) AS n
  FROM ${main} WHERE data IS NOT NULL GROUP BY 1 ORDER BY 1`);
const want = new Map();
for (const s of typed) {
  const w = want.get(s.country) ?? { cents: 0n, n: 0 };
  w.cents += BigInt(s.cents); w.n++;
  want.set(s.country, w);
}
const fmtCents = (c) => `${c / 100n}.${String(c % 100n).padStart(2, '0')}`;
const sumsOk = sums.length === want.size && sums.every((r) => {
  const w = want.get(r.country);
  return w && r.total === fmtCents(w.cents) && Number(r.n) === w.n;
});
check('SELECT country, sum(amount) GROUP BY country is exact', sumsOk,
  `${JSON.stringify(sums)} vs ${JSON.stringify([...want].map(([k, v]) => [k, fmtCents(v.cents), v.n]))}`);
const types = await rows(`SELECT typeof(data.amount) AS amount, typeof(data.ts) AS ts, typeof(data.status) AS status,
  typeof(data.items) AS items, typeof(data.attrs) AS attrs, typeof(data.vip) AS vip FROM ${main} WHERE data IS NOT NULL LIMIT 1`);
check('real types: decimal, timestamptz, enum as string, list of structs, map, boolean',
  types[0]?.amount === 'DECIMAL(12,2)' && /TIMESTAMP WITH TIME ZONE/.test(types[0]?.ts) && types[0]?.status === 'VARCHAR'
  && /STRUCT/.test(types[0]?.items) && /MAP/.test(types[0]?.attrs) && types[0]?.vip === 'BOOLEAN', JSON.stringify(types[0]));
const ts = await rows(`SELECT epoch_ms(data.ts) AS ms FROM ${main} WHERE data.id = 3`);
check('timestamp-millis read back to the millisecond', Number(ts[0]?.ms) === 1700000003000, JSON.stringify(ts));
const qty = await rows(`SELECT typeof(data.items[1].qty) AS t, sum(it.qty) AS q FROM ${main}, unnest(data.items) AS u(it)
  WHERE data IS NOT NULL GROUP BY 1`);
check('int promoted to long across versions (items[].qty is BIGINT, summed)', qty.length === 1 && qty[0].t === 'BIGINT', JSON.stringify(qty));
const attrs = await rows(`SELECT count(*) AS n FROM ${main} WHERE data.attrs['src'] = 'web'`);
check('map lookup', Number(attrs[0]?.n) === typed.filter((s) => s.id % 2 === 1).length, JSON.stringify(attrs));
const notes = await rows(`SELECT count(data.note) AS with_note, count(data.channel) AS with_channel FROM ${main}`);
const wantNotes = typed.filter((s) => s.version < 4 && s.id % 4 !== 0).length;
const wantChannel = typed.filter((s) => s.version >= 2 && s.id % 3 !== 0).length;
check('a removed field is null from then on, an added one null before',
  Number(notes[0]?.with_note) === wantNotes && Number(notes[0]?.with_channel) === wantChannel,
  `${JSON.stringify(notes)} want ${wantNotes}/${wantChannel}`);
const pay = await rows(`SELECT count(data.payment.string) AS s, count(data.payment.long) AS l FROM ${main}`);
check('a two-branch union is a struct with one field per branch',
  Number(pay[0]?.s) === typed.filter((s) => s.id % 2 === 1).length && Number(pay[0]?.l) === typed.filter((s) => s.id % 2 === 0).length,
  JSON.stringify(pay));

// 5. The raw value stays beside the typed columns (Kafka reads of offloaded offsets return it).
check('raw values kept in both tables', mainRows.every((r) => r.tomb || Number(r.vlen) > 0) && dlqRows.every((r) => Number(r.vlen) > 0));

if (failures) process.exit(1);
console.log(`typed_check: ${mainRows.length} typed rows, ${dlqRows.length} dead letters`);
