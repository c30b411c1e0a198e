// Checks the typed tables of typed_formats_produce.mjs with DuckDB, value by value: every
// record in exactly one of a topic's two tables, each dead letter with its reason and detail,
// and every typed column of every good record equal to what was produced (nested struct, list
// of structs, map, timestamp, enum, optional field, oneof/union, uint64 as decimal(20,0),
// wrapper, repeated scalars), plus exact typed sums and the DuckDB types of the columns.
// usage: typed_formats_check.mjs SENT_JSONL PROTO_TOPIC PROTO_MAIN PROTO_DLQ JSON_TOPIC JSON_MAIN JSON_DLQ
// (*_MAIN / *_DLQ: live files listed by tests/e2e/iceberg_files.py)
import { readFileSync } from 'node:fs';
import { DuckDBInstance } from '@duckdb/node-api';

const [sentPath, protoTopic, protoMain, protoDlq, jsonTopic, jsonMain, jsonDlq] = process.argv.slice(2);
const sent = readFileSync(sentPath, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
const files = (p) => JSON.parse(readFileSync(p, 'utf8')).files.map((f) => `'${f.path}'`).join(',');
let failures = 0, checks = 0;
const check = (name, ok, detail = '') => {
  checks++;
  if (ok) console.log(`ok: ${name}`);
  else { console.error(`FAIL: ${name} ${detail}`); failures++; }
};
const db = await DuckDBInstance.create(':memory:');
const c = await db.connect();
const rows = async (sql) => (await c.runAndReadAll(sql)).getRowObjectsJson();
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

async function tables(topic, mainJson, dlqJson) {
  const main = `read_parquet([${files(mainJson)}], union_by_name=true)`;
  const dlq = `read_parquet([${files(dlqJson)}], union_by_name=true)`;
  const want = sent.filter((s) => s.topic === topic);
  const mainRows = await rows(`SELECT "offset", data FROM ${main} ORDER BY "offset"`);
  const dlqRows = await rows(`SELECT "offset", error_reason, error_detail FROM ${dlq} ORDER BY "offset"`);
  const mainBy = new Map(mainRows.map((r) => [Number(r.offset), r]));
  const dlqBy = new Map(dlqRows.map((r) => [Number(r.offset), r]));
  const wantMain = want.filter((s) => s.table === 'main'), wantDlq = want.filter((s) => s.table === 'dlq');
  check(`${topic}: the main table holds exactly the ${wantMain.length} good records`,
    mainRows.length === wantMain.length && mainBy.size === mainRows.length && wantMain.every((s) => mainBy.has(s.offset)),
    `${mainRows.length} rows`);
  check(`${topic}: the dead-letter table holds exactly the ${wantDlq.length} bad ones`,
    dlqRows.length === wantDlq.length && wantDlq.every((s) => dlqBy.has(s.offset)), `${dlqRows.length} rows`);
  const badReason = wantDlq.filter((s) => dlqBy.get(s.offset)?.error_reason !== s.reason
    || !String(dlqBy.get(s.offset)?.error_detail ?? '').includes(s.detail))
    .map((s) => `${s.offset}: want ${s.reason} "${s.detail}", got ${JSON.stringify(dlqBy.get(s.offset))}`);
  check(`${topic}: each dead letter has its reason and detail`, badReason.length === 0, badReason.slice(0, 3).join('; '));
  return { main, wantMain, mainBy };
}

// ---- Protobuf ----
{
  const { main, wantMain, mainBy } = await tables(protoTopic, protoMain, protoDlq);
  const bad = [];
  for (const s of wantMain) {
    const e = s.expect, d = mainBy.get(s.offset)?.data;
    if (!d) { bad.push(`${s.offset}: no data`); continue; }
    const got = {
      id: Number(d.id), name: d.customer?.name, city: d.customer?.address?.city, country: d.customer?.address?.country,
      items: (d.items ?? []).map((x) => ({ sku: x.sku, qty: x.qty, price_cents: Number(x.price_cents) })),
      attrs: Object.fromEntries((d.attrs ?? []).map((kv) => [kv.key, kv.value])),
      amount_cents: Number(d.amount_cents), ts: d.ts, status: d.status, note: d.note,
      card: d.payment?.card ?? null, voucher: d.payment?.voucher == null ? null : Number(d.payment.voucher),
      hint: d.hint == null ? null : Number(d.hint), big: String(d.big), nums: d.nums ?? [], score: d.score, vip: d.vip,
      channel: d.channel ?? null,
    };
    const want = { ...e, ts: new Date(e.ts_ms).toISOString(), channel: e.channel ?? null };
    delete want.ts_ms;
    // DuckDB prints TIMESTAMPTZ in the session zone; compare instants.
    got.ts = got.ts ? new Date(got.ts).toISOString() : null;
    const keys = Object.keys(want);
    const diff = keys.filter((k) => !same(got[k], want[k]));
    if (diff.length) bad.push(`${s.offset}: ${diff.map((k) => `${k} ${JSON.stringify(got[k])} != ${JSON.stringify(want[k])}`).join(', ')}`);
  }
  check(`${protoTopic}: every typed value equals what protobufjs encoded (${wantMain.length} records of 2 versions, 18 fields each)`,
    bad.length === 0, bad.slice(0, 3).join('; '));
  const types = Object.fromEntries((await rows(`SELECT column_name, column_type FROM (DESCRIBE SELECT data.* FROM ${main})`))
    .map((r) => [r.column_name, r.column_type]));
  check(`${protoTopic}: DuckDB types`, types.id === 'BIGINT' && types.ts === 'TIMESTAMP WITH TIME ZONE'
    && types.big === 'DECIMAL(20,0)' && types.status === 'VARCHAR' && types.hint === 'BIGINT'
    && types.items.startsWith('STRUCT(sku VARCHAR, qty INTEGER, price_cents BIGINT)[]')
    && types.attrs === 'MAP(VARCHAR, VARCHAR)' && types.payment === 'STRUCT(card VARCHAR, voucher BIGINT)'
    && types.nums === 'INTEGER[]' && types.vip === 'BOOLEAN', JSON.stringify(types));
  const sums = await rows(`SELECT data.customer.address.country AS country, sum(data.amount_cents) AS cents,
    sum(data.big) AS big FROM ${main} GROUP BY 1 ORDER BY 1`);
  const want = {};
  for (const s of wantMain) {
    const w = (want[s.expect.country] ??= { cents: 0, big: 0n });
    w.cents += s.expect.amount_cents;
    w.big += BigInt(s.expect.big);
  }
  check(`${protoTopic}: sum(amount_cents) and sum(big) GROUP BY country exact`,
    sums.length === Object.keys(want).length && sums.every((r) => Number(r.cents) === want[r.country].cents
      && BigInt(String(r.big).split('.')[0]) === want[r.country].big), JSON.stringify(sums));
}

// Version 2 added `channel`: a column of the files written after it, null in every earlier row
// (read across files with union_by_name).
for (const [topic, mainJson] of [[protoTopic, protoMain], [jsonTopic, jsonMain]]) {
  const main = `read_parquet([${files(mainJson)}], union_by_name=true)`;
  const [r] = await rows(`SELECT count(*) FILTER (WHERE data.channel IS NULL) AS nulls,
    count(*) FILTER (WHERE data.channel IS NOT NULL) AS set FROM ${main}`);
  const v2 = sent.filter((s) => s.topic === topic && s.table === 'main' && s.expect.channel != null).length;
  const v1 = sent.filter((s) => s.topic === topic && s.table === 'main' && s.expect.channel == null).length;
  check(`${topic}: the added field is a column: ${v2} rows set, ${v1} earlier rows null`,
    v2 === 20 && Number(r.set) === v2 && Number(r.nulls) === v1, JSON.stringify(r));
}

// ---- JSON ----
{
  const { main, wantMain, mainBy } = await tables(jsonTopic, jsonMain, jsonDlq);
  const bad = [];
  for (const s of wantMain) {
    const e = s.expect, d = mainBy.get(s.offset)?.data;
    if (!d) { bad.push(`${s.offset}: no data`); continue; }
    const got = {
      id: Number(d.id), name: d.customer?.name, city: d.customer?.address?.city, country: d.customer?.address?.country,
      items: (d.items ?? []).map((x) => ({ sku: x.sku, qty: Number(x.qty), price: x.price })),
      attrs: Object.fromEntries((d.attrs ?? []).map((kv) => [kv.key, kv.value])),
      amount: d.amount, ts: d.ts ? new Date(d.ts).toISOString() : null, day: d.day, status: d.status, note: d.note,
      payment: d.payment?.string ?? (d.payment?.integer == null ? null : Number(d.payment.integer)), vip: d.vip,
      channel: d.channel ?? null,
    };
    const want = {
      id: e.id, name: e.name, city: e.city, country: e.country,
      items: e.items.map((x) => ({ sku: x.sku, qty: x.qty, price: x.price_cents / 100 })), attrs: e.attrs,
      amount: e.amount_cents / 100, ts: new Date(e.ts_ms).toISOString(), day: new Date(e.ts_ms).toISOString().slice(0, 10),
      status: e.status, note: e.note, payment: e.card ?? e.voucher, vip: e.vip, channel: e.channel ?? null,
    };
    const diff = Object.keys(want).filter((k) => !same(got[k], want[k]));
    if (diff.length) bad.push(`${s.offset}: ${diff.map((k) => `${k} ${JSON.stringify(got[k])} != ${JSON.stringify(want[k])}`).join(', ')}`);
  }
  check(`${jsonTopic}: every typed value equals the JSON produced (${wantMain.length} records of 2 versions, 15 fields each)`,
    bad.length === 0, bad.slice(0, 3).join('; '));
  const types = Object.fromEntries((await rows(`SELECT column_name, column_type FROM (DESCRIBE SELECT data.* FROM ${main})`))
    .map((r) => [r.column_name, r.column_type]));
  check(`${jsonTopic}: DuckDB types`, types.id === 'BIGINT' && types.ts === 'TIMESTAMP WITH TIME ZONE'
    && types.day === 'DATE' && types.amount === 'DOUBLE' && types.attrs === 'MAP(VARCHAR, VARCHAR)'
    && types.payment === 'STRUCT(string VARCHAR, "integer" BIGINT)' && types.note === 'VARCHAR', JSON.stringify(types));
  const [n] = await rows(`SELECT count(*) AS n, sum(len(data.items)) AS items FROM ${main} WHERE data.status = 'PAID'`);
  const paid = wantMain.filter((s) => s.expect.status === 'PAID');
  check(`${jsonTopic}: typed filter and count (status = 'PAID')`, Number(n.n) === paid.length
    && Number(n.items) === paid.reduce((a, s) => a + s.expect.items.length, 0), JSON.stringify(n));
}

console.log(`typed_formats_check: ${checks - failures}/${checks} checks passed`);
process.exit(failures ? 1 : 0);
