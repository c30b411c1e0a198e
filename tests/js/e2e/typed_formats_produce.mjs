// Produces two typed topics for tests/e2e/typed_tables_protobuf_test.sh, schemas registered with
// @kafkajs/confluent-schema-registry against Floe's registry:
//   - PROTO_TOPIC: Protobuf values encoded by protobufjs (an encoder Floe does not share) and
//     framed here as Confluent's wire format documents it: magic 0, the 4-byte id, the message-
//     index path (zigzag varints: count, then indexes), the message. (The registry client's own
//     Protobuf encoding leaves the index path out, so it is not used for the bytes.) The message
//     is the 4th of the file, so its index path is [3], not the [0] shortcut.
//   - JSON_TOPIC: JSON values encoded by the registry client (magic, id, JSON text).
// Each topic gets realistic records (nested struct, array of structs, map, timestamp, enum,
// optional field, oneof/union, uint64, wrapper) and bad ones (cut, wrong index, wrong type), then
// a second schema version that adds a field (`channel`): the table gains a column, older rows
// read null there.
// Writes what it sent as JSON lines (topic, offset, table, reason, expected values) to OUT.
// usage: node typed_formats_produce.mjs REGISTRY_URL KAFKA_BROKER PROTO_TOPIC JSON_TOPIC OUT
import { SchemaRegistry, SchemaType } from '@kafkajs/confluent-schema-registry';
import { Kafka, logLevel } from 'kafkajs';
import protobuf from 'protobufjs';
import { appendFileSync } from 'node:fs';

const [registryUrl, broker, protoTopic, jsonTopic, out] = process.argv.slice(2);
const registry = new SchemaRegistry({ host: registryUrl },
  { [SchemaType.JSON]: { strict: false, validateFormats: false } });
const kafka = new Kafka({ clientId: 'typed-formats-e2e', brokers: [broker], logLevel: logLevel.NOTHING });
const deadline = setTimeout(() => { console.error('FAIL: typed_formats_produce timed out'); process.exit(1); }, 60000);

const protoSchema = `syntax = "proto3";
package e2e.typed;
import "google/protobuf/timestamp.proto";
import "google/protobuf/wrappers.proto";

message Address { string city = 1; string country = 2; }
message Customer { string name = 1; Address address = 2; }
message Item { string sku = 1; int32 qty = 2; sint64 price_cents = 3; }
message Order {
  int64 id = 1;
  Customer customer = 2;
  repeated Item items = 3;
  map<string, string> attrs = 4;
  int64 amount_cents = 5;
  google.protobuf.Timestamp ts = 6;
  Status status = 7;
  optional string note = 8;
  oneof payment { string card = 9; int64 voucher = 10; }
  google.protobuf.Int64Value hint = 11;
  uint64 big = 12;
  repeated int32 nums = 13;
  double score = 14;
  bool vip = 15;
}
enum Status { NEW = 0; PAID = 1; SHIPPED = 2; }
`;

const jsonSchema = {
  $schema: 'http://json-schema.org/draft-07/schema#', title: 'Order', type: 'object',
  properties: {
    id: { type: 'integer' },
    customer: { type: 'object', properties: { name: { type: 'string' }, address: { $ref: '#/definitions/Address' } } },
    items: { type: 'array', items: { type: 'object', properties: {
      sku: { type: 'string' }, qty: { type: 'integer' }, price: { type: 'number' } }, required: ['sku'] } },
    attrs: { type: 'object', additionalProperties: { type: 'string' } },
    amount: { type: 'number' },
    ts: { type: 'string', format: 'date-time' },
    day: { type: 'string', format: 'date' },
    status: { type: 'string', enum: ['NEW', 'PAID', 'SHIPPED'] },
    note: { type: ['null', 'string'] },
    payment: { oneOf: [{ type: 'string' }, { type: 'integer' }] },
    vip: { type: 'boolean' },
  },
  required: ['id'],
  definitions: { Address: { type: 'object', properties: { city: { type: 'string' }, country: { type: 'string' } } } },
};

const countries = ['FR', 'DE', 'JP', 'BR'];
const N = 60;
// What both formats carry for record i (the checker recomputes nothing: it reads these).
function expected(i) {
  return {
    id: i, name: `c${i}`, city: `city${i % 7}`, country: countries[i % 4],
    items: Array.from({ length: i % 3 }, (_, k) => ({ sku: `s${k}`, qty: k + 1, price_cents: (k % 2 ? -1 : 1) * (100 + i) })),
    attrs: i % 2 ? { src: 'web', n: String(i) } : {},
    amount_cents: 1000 + (i * 37) % 5000,
    ts_ms: 1700000000000 + i * 1000,
    status: ['NEW', 'PAID', 'SHIPPED'][i % 3],
    note: i % 4 === 0 ? null : `note${i}`,
    card: i % 2 ? `card-${i}` : null, voucher: i % 2 ? null : i,
    hint: i % 5 === 0 ? null : i * 10,
    big: (18446744073709551615n - BigInt(i)).toString(),
    nums: Array.from({ length: i % 4 }, (_, k) => k - 1),
    score: i / 4,
    vip: i % 5 === 0,
  };
}

const protoSchemaV2 = protoSchema.replace('  bool vip = 15;\n', '  bool vip = 15;\n  string channel = 16;\n');
const jsonSchemaV2 = { ...jsonSchema, properties: { ...jsonSchema.properties, channel: { type: 'string' } } };
function compile(text) {
  const root = new protobuf.Root();
  for (const f of ['google/protobuf/timestamp.proto', 'google/protobuf/wrappers.proto'])
    root.addJSON(protobuf.common.get(f).nested);
  protobuf.parse(text, root, { keepCase: true });
  root.resolveAll();
  return root.lookupType('e2e.typed.Order');
}
let Order = compile(protoSchema);

function protoOrder(e) {
  const o = {
    id: e.id, customer: { name: e.name, address: { city: e.city, country: e.country } },
    items: e.items.map((x) => ({ sku: x.sku, qty: x.qty, price_cents: x.price_cents })),
    attrs: e.attrs, amount_cents: e.amount_cents,
    ts: { seconds: Math.floor(e.ts_ms / 1000), nanos: (e.ts_ms % 1000) * 1000000 },
    status: e.status, big: e.big, nums: e.nums, score: e.score, vip: e.vip,
  };
  if (e.note !== null) o.note = e.note;
  if (e.card !== null) o.card = e.card; else o.voucher = e.voucher;
  if (e.hint !== null) o.hint = { value: e.hint };
  if (e.channel != null) o.channel = e.channel;
  const msg = Order.fromObject(o);
  const err = Order.verify(msg);
  if (err) throw new Error(`protobufjs: ${err}`);
  return Buffer.from(Order.encode(msg).finish());
}
function zigzagVarint(n) {
  let z = n >= 0 ? n * 2 : -n * 2 - 1;
  const b = [];
  while (z >= 0x80) { b.push((z & 0x7f) | 0x80); z = Math.floor(z / 128); }
  b.push(z);
  return Buffer.from(b);
}
function framed(id, indexes, payload) {
  const h = Buffer.alloc(5);
  h.writeInt32BE(id, 1);
  const idx = indexes.length === 1 && indexes[0] === 0 ? [zigzagVarint(0)]
    : [zigzagVarint(indexes.length), ...indexes.map(zigzagVarint)];
  return Buffer.concat([h, ...idx, payload]);
}
function jsonOrder(e) {
  return {
    id: e.id, customer: { name: e.name, address: { city: e.city, country: e.country } },
    items: e.items.map((x) => ({ sku: x.sku, qty: x.qty, price: x.price_cents / 100 })),
    attrs: e.attrs, amount: e.amount_cents / 100,
    ts: new Date(e.ts_ms).toISOString(), day: new Date(e.ts_ms).toISOString().slice(0, 10),
    status: e.status, note: e.note, payment: e.card ?? e.voucher, vip: e.vip,
    ...(e.channel != null ? { channel: e.channel } : {}),
  };
}

const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
await producer.connect();
async function send(topic, value, meta) {
  const [r] = await producer.send({ topic, acks: -1, messages: [{ key: `k${meta.expect?.id ?? 'bad'}`, value }] });
  appendFileSync(out, JSON.stringify({ topic, offset: Number(r.baseOffset), ...meta }) + '\n');
}

const admin = kafka.admin();
await admin.connect();
await admin.createTopics({ topics: [protoTopic, jsonTopic].map((topic) => ({ topic, numPartitions: 1,
  configEntries: [{ name: 'floe.iceberg.mode', value: 'schema-id' }] })) });
await admin.disconnect();

const { id: pid } = await registry.register({ type: SchemaType.PROTOBUF, schema: protoSchema },
  { subject: `${protoTopic}-value` });
const { id: jid } = await registry.register({ type: SchemaType.JSON, schema: JSON.stringify(jsonSchema) },
  { subject: `${jsonTopic}-value` });

for (let i = 0; i < N; i++) {
  const e = expected(i);
  await send(protoTopic, framed(pid, [3], protoOrder(e)), { table: 'main', schema_id: pid, expect: e });
  await send(jsonTopic, await registry.encode(jid, jsonOrder(e)), { table: 'main', schema_id: jid, expect: e });
  if (i % 20 === 7) {
    // Bad records among the good ones.
    const good = protoOrder(e);
    await send(protoTopic, framed(pid, [3], Buffer.concat([good, Buffer.from([0x12, 0x50])])),
      { table: 'dlq', reason: 'decode-error', detail: 'length 80 with 0 bytes left' });
    await send(protoTopic, framed(pid, [9], good), { table: 'dlq', reason: 'decode-error', detail: 'name no message' });
    await send(protoTopic, framed(pid, [3], Buffer.from([0x0a, 0x01, 0x78])),
      { table: 'dlq', reason: 'decode-error', detail: 'field `id`: wire type 2, not 0' });
    const h = Buffer.alloc(5);
    h.writeInt32BE(jid, 1);
    await send(jsonTopic, Buffer.concat([h, Buffer.from(JSON.stringify({ ...jsonOrder(e), id: `x${i}` }))]),
      { table: 'dlq', reason: 'decode-error', detail: 'field `id`: expected integer, got string' });
    await send(jsonTopic, Buffer.concat([h, Buffer.from('{"id": 1, "items": [')]),
      { table: 'dlq', reason: 'decode-error', detail: '' });
  }
}
// Version 2 of both subjects: a new field. (JSON Schema's rules call a property added to an open
// content model incompatible: checks are turned off for that subject.)
const { id: pid2 } = await registry.register({ type: SchemaType.PROTOBUF, schema: protoSchemaV2 },
  { subject: `${protoTopic}-value` });
await fetch(`${registryUrl}/config/${jsonTopic}-value`, { method: 'PUT', headers: { 'Content-Type': 'application/json' },
  body: JSON.stringify({ compatibility: 'NONE' }) });
const { id: jid2 } = await registry.register({ type: SchemaType.JSON, schema: JSON.stringify(jsonSchemaV2) },
  { subject: `${jsonTopic}-value`, compatibility: 'NONE' });
if (pid2 === pid || jid2 === jid) throw new Error('version 2 got the id of version 1');
Order = compile(protoSchemaV2);
for (let i = N; i < N + 20; i++) {
  const e = { ...expected(i), channel: i % 2 ? 'app' : 'web' };
  await send(protoTopic, framed(pid2, [3], protoOrder(e)), { table: 'main', schema_id: pid2, expect: e });
  await send(jsonTopic, await registry.encode(jid2, jsonOrder(e)), { table: 'main', schema_id: jid2, expect: e });
}
await producer.disconnect();
clearTimeout(deadline);
console.log(`typed_formats_produce: sent ${N} + 20 (version 2) records and bad ones to each of ${protoTopic}, ${jsonTopic}`);
