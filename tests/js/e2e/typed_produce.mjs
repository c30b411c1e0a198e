// Produces a typed topic's history for tests/e2e/typed_tables_test.sh: Avro values in Confluent's
// wire format, encoded by @kafkajs/confluent-schema-registry against Floe's registry, through
// five schema versions (v1; v2 adds a field; v3 promotes int -> long; v4 removes a field; v5
// changes a string to an int, which Iceberg cannot express), mixed with records that cannot be
// decoded (a wrong magic byte, an unknown schema id, a truncated payload, a 0x01 + GUID header
// id). Writes what it sent as JSON lines (offset, version, expected table, reason) to OUT.
// usage: node typed_produce.mjs REGISTRY_URL KAFKA_BROKER TOPIC OUT PHASE
//   PHASE 1: versions 1-2 and the bad records; PHASE 2: versions 3-5 (produced while offload runs).
import { SchemaRegistry, SchemaType } from '@kafkajs/confluent-schema-registry';
import { Kafka, logLevel } from 'kafkajs';
import { appendFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';

const [registryUrl, broker, topic, out, phase] = process.argv.slice(2);
const registry = new SchemaRegistry({ host: registryUrl });
const kafka = new Kafka({ clientId: 'typed-e2e', brokers: [broker], logLevel: logLevel.NOTHING });
const deadline = setTimeout(() => { console.error('FAIL: typed_produce timed out'); process.exit(1); }, 90000);
const subject = `${topic}-value`;

const address = { type: 'record', name: 'Address', fields: [
  { name: 'city', type: 'string' }, { name: 'country', type: 'string' }] };
const item = { type: 'record', name: 'Item', fields: [
  { name: 'sku', type: 'string' }, { name: 'qty', type: 'int' },
  { name: 'price', type: { type: 'bytes', logicalType: 'decimal', precision: 9, scale: 2 } }] };
const base = [
  { name: 'id', type: 'long' },
  { name: 'customer', type: { type: 'record', name: 'Customer', fields: [
    { name: 'name', type: 'string' }, { name: 'address', type: address }] } },
  { name: 'items', type: { type: 'array', items: item } },
  { name: 'attrs', type: { type: 'map', values: 'string' } },
  { name: 'amount', type: { type: 'bytes', logicalType: 'decimal', precision: 12, scale: 2 } },
  { name: 'ts', type: { type: 'long', logicalType: 'timestamp-millis' } },
  { name: 'status', type: { type: 'enum', name: 'Status', symbols: ['NEW', 'PAID', 'SHIPPED'] } },
  { name: 'note', type: ['null', 'string'], default: null },
  { name: 'payment', type: ['string', 'long'] },
  { name: 'score', type: 'float' },
  { name: 'vip', type: 'boolean' },
];
const record = (fields) => ({ type: 'record', name: 'Order', namespace: 'e2e.typed', fields });
const versions = {
  1: record(base),
  2: record([...base, { name: 'channel', type: ['null', 'string'], default: null }]),
};
// v3: qty int -> long (promotion), inside the array's struct.
const itemLong = { ...item, fields: item.fields.map((f) => (f.name === 'qty' ? { ...f, type: 'long' } : f)) };
versions[3] = record([...base.map((f) => (f.name === 'items' ? { ...f, type: { type: 'array', items: itemLong } } : f)),
  { name: 'channel', type: ['null', 'string'], default: null }]);
// v4: note removed.
versions[4] = record(versions[3].fields.filter((f) => f.name !== 'note'));
// v5: status becomes an int (string -> int: Iceberg has no such promotion).
versions[5] = record(versions[4].fields.map((f) => (f.name === 'status' ? { name: 'status', type: 'int' } : f)));

const countries = ['FR', 'DE', 'JP', 'BR'];
// Values the checker recomputes from the JSON lines: amount in cents, items, country.
function order(i, v) {
  const country = countries[i % countries.length];
  const cents = 1000 + (i * 37) % 5000;
  const o = {
    id: i,
    customer: { name: `c${i}`, address: { city: `city${i % 7}`, country } },
    items: Array.from({ length: i % 3 }, (_, k) => ({ sku: `s${k}`, qty: k + 1, price: dec(100 + k, 9) })),
    attrs: i % 2 ? { src: 'web', n: String(i) } : {},
    amount: dec(cents, 12),
    ts: 1700000000000 + i * 1000, // the registry client's avsc keeps logical types as their underlying type
    status: ['NEW', 'PAID', 'SHIPPED'][i % 3],
    note: i % 4 === 0 ? null : `note${i}`,
    payment: i % 2 ? `card-${i}` : i,
    score: i / 4,
    vip: i % 5 === 0,
  };
  if (v >= 2) o.channel = i % 3 === 0 ? null : 'app';
  if (v >= 4) delete o.note;
  if (v === 5) o.status = i % 3;
  return { o, expect: { id: i, country, cents, items: i % 3, vip: o.vip, version: v } };
}
// An Avro decimal: big-endian two's complement unscaled value (avsc takes a Buffer for bytes).
function dec(unscaled, _precision) {
  let hex = BigInt(unscaled).toString(16);
  if (hex.length % 2) hex = '0' + hex;
  let b = Buffer.from(hex, 'hex');
  if (b[0] & 0x80) b = Buffer.concat([Buffer.from([0]), b]);
  return b;
}

const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
await producer.connect();
async function send(value, meta) {
  const [r] = await producer.send({ topic, acks: -1, messages: [{ key: `k${meta.id ?? 'bad'}`, value }] });
  appendFileSync(out, JSON.stringify({ offset: Number(r.baseOffset), ...meta }) + '\n');
}

async function registerVersion(v, compatibility) {
  const { id } = await registry.register({ type: SchemaType.AVRO, schema: JSON.stringify(versions[v]) },
    compatibility ? { subject, compatibility } : { subject });
  return id;
}

if (phase === '1') {
  // The topic is created typed (a topic config of CreateTopics); tiering comes from the broker's
  // topic defaults.
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 1,
    configEntries: [{ name: 'floe.iceberg.mode', value: 'schema-id' }] }] });
  const [desc] = (await admin.describeConfigs({ includeSynonyms: false,
    resources: [{ type: 2, name: topic, configNames: ['floe.iceberg.mode'] }] })).resources;
  if (desc.configEntries[0]?.configValue !== 'schema-id') throw new Error(`DescribeConfigs: ${JSON.stringify(desc)}`);
  await admin.disconnect();
  const id1 = await registerVersion(1);
  for (let i = 0; i < 40; i++) {
    const { o, expect } = order(i, 1);
    await send(await registry.encode(id1, o), { table: 'main', schema_id: id1, ...expect });
  }
  // Bad records: each must land in the dead-letter table once, with its reason.
  const good = await registry.encode(id1, order(999, 1).o);
  await send(Buffer.concat([Buffer.from([0x07]), good.subarray(1)]), { table: 'dlq', reason: 'bad-magic-byte' });
  const unknown = Buffer.from(good);
  unknown.writeInt32BE(987654, 1);
  await send(unknown, { table: 'dlq', reason: 'unknown-schema-id' });
  await send(good.subarray(0, good.length - 6), { table: 'dlq', reason: 'decode-error' });
  await send(Buffer.concat([Buffer.from([0x01]), randomBytes(16), good.subarray(5)]), { table: 'dlq', reason: 'bad-magic-byte' });
  await send(Buffer.from([0x00, 0x00]), { table: 'dlq', reason: 'decode-error' }); // magic byte right, header cut
  const id2 = await registerVersion(2);
  for (let i = 40; i < 80; i++) {
    const { o, expect } = order(i, 2);
    await send(await registry.encode(id2, o), { table: 'main', schema_id: id2, ...expect });
  }
} else {
  for (const v of [3, 4]) {
    const id = await registerVersion(v);
    for (let i = v * 40; i < v * 40 + 40; i++) {
      const { o, expect } = order(i, v);
      await send(await registry.encode(id, o), { table: 'main', schema_id: id, ...expect });
    }
  }
  // v5 is incompatible for Iceberg (and for the registry's default BACKWARD: turn checks off).
  await fetch(`${registryUrl}/config/${subject}`, { method: 'PUT', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ compatibility: 'NONE' }) });
  const id5 = await registerVersion(5, 'NONE');
  for (let i = 200; i < 220; i++) {
    const { o, expect } = order(i, 5);
    await send(await registry.encode(id5, o), { table: 'dlq', reason: 'incompatible-schema', schema_id: id5, ...expect });
  }
  // And v4 again after it: records of a version the table holds still land typed.
  const id4 = await registerVersion(4, 'NONE');
  for (let i = 220; i < 240; i++) {
    const { o, expect } = order(i, 4);
    await send(await registry.encode(id4, o), { table: 'main', schema_id: id4, ...expect });
  }
  // A tombstone: a row of the main table whose typed columns are null.
  const [r] = await producer.send({ topic, acks: -1, messages: [{ key: 'tomb', value: null }] });
  appendFileSync(out, JSON.stringify({ offset: Number(r.baseOffset), table: 'main', tombstone: true }) + '\n');
}
await producer.disconnect();
clearTimeout(deadline);
console.log(`typed_produce: phase ${phase} sent`);
