// Typed keys for tests/e2e/typed_keys_test.sh (floe.iceberg.key-mode=schema-id beside
// floe.iceberg.mode=schema-id).
// usage: node typed_keys.mjs produce REGISTRY_URL KAFKA_BROKER TOPIC OUT
//   Creates TOPIC with both modes, then produces Avro keys and values encoded by
//   @kafkajs/confluent-schema-registry against Floe's registry: key schema v1 (tenant, region
//   enum), v2 (adds shard), records without key, and keys that cannot be decoded (a wrong magic
//   byte, an unknown id) with good values. Writes what it sent as JSON lines to OUT.
// usage: node typed_keys.mjs check SENT_JSONL MAIN_FILES_JSON DLQ_FILES_JSON
//   DuckDB over the data files (lists from tests/e2e/iceberg_files.py): every record in exactly
//   one table, typed queries over key_data and data with exact sums, the raw key kept, each bad
//   key a dead letter with its reason and a detail that says it was the key.
import { SchemaRegistry, SchemaType } from '@kafkajs/confluent-schema-registry';
import { Kafka, logLevel } from 'kafkajs';
import { appendFileSync, readFileSync } from 'node:fs';

const [mode, ...args] = process.argv.slice(2);
const deadline = setTimeout(() => { console.error('FAIL: typed_keys timed out'); process.exit(1); }, 90000);

if (mode === 'produce') {
  const [registryUrl, broker, topic, out] = args;
  const registry = new SchemaRegistry({ host: registryUrl });
  const kafka = new Kafka({ clientId: 'typed-keys-e2e', brokers: [broker], logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 1, configEntries: [
    { name: 'floe.iceberg.mode', value: 'schema-id' }, { name: 'floe.iceberg.key-mode', value: 'schema-id' }] }] });
  const [desc] = (await admin.describeConfigs({ includeSynonyms: false,
    resources: [{ type: 2, name: topic, configNames: ['floe.iceberg.key-mode'] }] })).resources;
  if (desc.configEntries[0]?.configValue !== 'schema-id') throw new Error(`DescribeConfigs: ${JSON.stringify(desc)}`);
  await admin.disconnect();

  const keyFields = [{ name: 'tenant', type: 'string' },
    { name: 'region', type: { type: 'enum', name: 'Region', symbols: ['EU', 'US', 'APAC'] } }];
  const keyV1 = { type: 'record', name: 'SaleKey', namespace: 'e2e.keys', fields: keyFields };
  const keyV2 = { ...keyV1, fields: [...keyFields, { name: 'shard', type: ['null', 'int'], default: null }] };
  const value = { type: 'record', name: 'Sale', namespace: 'e2e.keys', fields: [
    { name: 'qty', type: 'int' },
    { name: 'amount', type: { type: 'bytes', logicalType: 'decimal', precision: 9, scale: 2 } }] };
  const reg = async (subject, schema) =>
    (await registry.register({ type: SchemaType.AVRO, schema: JSON.stringify(schema) }, { subject })).id;
  const vid = await reg(`${topic}-value`, value);
  const kid1 = await reg(`${topic}-key`, keyV1);

  const producer = kafka.producer({ allowAutoTopicCreation: false, idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  const send = async (key, val, expect) => {
    const [r] = await producer.send({ topic, acks: -1, messages: [{ key, value: val }] });
    appendFileSync(out, JSON.stringify({ offset: Number(r.baseOffset), keylen: key ? key.length : null, ...expect }) + '\n');
  };
  const regions = ['EU', 'US', 'APAC'];
  const sale = (i) => ({ qty: i % 5 + 1, cents: 100 + (i * 13) % 900 });
  const encodeValue = async (s) => registry.encode(vid, { qty: s.qty, amount: decimalBytes(s.cents) });
  for (let i = 0; i < 60; i++) {
    const s = sale(i);
    const k = { tenant: `t${i % 3}`, region: regions[i % 3] };
    await send(await registry.encode(kid1, k), await encodeValue(s), { table: 'main', tenant: k.tenant, shard: null, ...s });
  }
  const kid2 = await reg(`${topic}-key`, keyV2);
  for (let i = 60; i < 90; i++) {
    const s = sale(i);
    const k = { tenant: `t${i % 3}`, region: regions[i % 3], shard: i % 4 };
    await send(await registry.encode(kid2, k), await encodeValue(s), { table: 'main', tenant: k.tenant, shard: k.shard, ...s });
  }
  // No key: a null key_data, the value typed.
  for (let i = 90; i < 95; i++) await send(null, await encodeValue(sale(i)), { table: 'main', tenant: null, shard: null, ...sale(i) });
  // Keys that cannot be decoded send the whole record to the dead letters.
  const good = await registry.encode(kid1, { tenant: 'tx', region: 'EU' });
  await send(Buffer.concat([Buffer.from([0x07]), good.subarray(1)]), await encodeValue(sale(95)), { table: 'dlq', reason: 'bad-magic-byte' });
  const unknown = Buffer.from(good);
  unknown.writeInt32BE(987654, 1);
  await send(unknown, await encodeValue(sale(96)), { table: 'dlq', reason: 'unknown-schema-id' });
  await send(good.subarray(0, good.length - 2), await encodeValue(sale(97)), { table: 'dlq', reason: 'decode-error' });
  await producer.disconnect();
  console.log('typed_keys: sent');
} else if (mode === 'check') {
  const { DuckDBInstance } = await import('@duckdb/node-api');
  const [sentPath, mainJson, dlqJson] = args;
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

  const wantMain = sent.filter((s) => s.table === 'main'), wantDlq = sent.filter((s) => s.table === 'dlq');
  const mainRows = await rows(`SELECT "offset", octet_length(key) AS klen FROM ${main} ORDER BY "offset"`);
  const got = mainRows.map((r) => Number(r.offset)).join(','), want = wantMain.map((s) => s.offset).join(',');
  check(`the main table holds the ${wantMain.length} records whose key and value decode, once each`, got === want, `${got} vs ${want}`);
  const klen = new Map(mainRows.map((r) => [Number(r.offset), r.klen === null ? null : Number(r.klen)]));
  check('the raw key is kept beside key_data', wantMain.every((s) => klen.get(s.offset) === s.keylen));

  // Typed query over both columns: per tenant, rows, sum(qty), sum(amount) (exact decimals).
  const perTenant = await rows(`SELECT key_data.tenant AS t, count(*) AS n, sum(data.qty) AS q, sum(data.amount) AS a
    FROM ${main} GROUP BY 1 ORDER BY 1 NULLS LAST`);
  const expect = new Map();
  for (const s of wantMain) {
    const e = expect.get(s.tenant) ?? { n: 0, q: 0, a: 0 };
    e.n++; e.q += s.qty; e.a += s.cents;
    expect.set(s.tenant, e);
  }
  const wantTenants = [...expect.entries()].sort((x, y) => (x[0] === null) - (y[0] === null) || String(x[0]).localeCompare(String(y[0])));
  const fmtRow = (t, n, q, a) => `${t}:${n}:${q}:${(a / 100).toFixed(2)}`;
  const gotT = perTenant.map((r) => fmtRow(r.t, Number(r.n), Number(r.q), Math.round(Number(r.a) * 100))).join(' ');
  const wantT = wantTenants.map(([t, e]) => fmtRow(t, e.n, e.q, e.a)).join(' ');
  check('SELECT key_data.tenant, count(*), sum(data.qty), sum(data.amount) ... GROUP BY 1 is exact', gotT === wantT, `${gotT} vs ${wantT}`);
  const [shards] = await rows(`SELECT sum(key_data.shard) AS s, count(key_data.shard) AS n, count(*) FILTER (WHERE key_data IS NULL) AS nokey,
    count(*) FILTER (WHERE key_data.region = 'US') AS us FROM ${main}`);
  const wantShards = wantMain.filter((s) => s.shard !== null);
  check('the key schema evolved: shard summed over v2 keys, null before',
    Number(shards.s) === wantShards.reduce((x, s) => x + s.shard, 0) && Number(shards.n) === wantShards.length,
    JSON.stringify(shards));
  check('records without key have a null key_data', Number(shards.nokey) === wantMain.filter((s) => s.tenant === null).length);
  check('enums of keys are strings', Number(shards.us) === 30, JSON.stringify(shards));

  const dlqRows = await rows(`SELECT "offset", error_reason, error_detail FROM ${dlq} ORDER BY "offset"`);
  const dlqBy = new Map(dlqRows.map((r) => [Number(r.offset), r]));
  check(`the dead-letter table holds the ${wantDlq.length} records with bad keys`,
    dlqRows.length === wantDlq.length && wantDlq.every((s) => dlqBy.has(s.offset)), JSON.stringify(dlqRows));
  const bad = wantDlq.filter((s) => dlqBy.get(s.offset)?.error_reason !== s.reason || !dlqBy.get(s.offset)?.error_detail?.startsWith('key: '));
  check('each has its reason and a detail naming the key', bad.length === 0, JSON.stringify(bad.map((s) => dlqBy.get(s.offset))));
  if (failures) process.exit(1);
} else {
  console.error('usage: typed_keys.mjs produce|check ...');
  process.exit(2);
}
clearTimeout(deadline);

function decimalBytes(cents) {
  // Avro decimal: big-endian two's complement of the unscaled value (4 bytes hold these).
  const b = Buffer.alloc(4);
  b.writeInt32BE(cents);
  return b;
}
