// Real clients against Floe's schema registry and Kafka listener:
// - @kafkajs/confluent-schema-registry registers Avro and JSON schemas, encodes records, kafkajs
//   produces them to Floe, consumes them back and the registry client decodes them (fetching the
//   schemas by id from Floe);
// - Protobuf: the registry client registers a .proto with nested messages; this script frames a
//   record in Confluent's documented wire format with a message-index list (0x00, 4-byte
//   big-endian id, zig-zag varint count and indexes, payload), checks the bytes byte-for-byte
//   against the format, sends them through Floe, reads them back unchanged, and decodes the
//   payload with protobufjs using the schema text Floe returns for that id and the message the
//   index path names.
// usage: node schema_registry_clients.mjs REGISTRY_URL KAFKA_BROKER
import { SchemaRegistry, SchemaType } from '@kafkajs/confluent-schema-registry';
import { Kafka, logLevel } from 'kafkajs';
import protobuf from 'protobufjs';
import assert from 'node:assert/strict';

const [registryUrl, broker] = process.argv.slice(2);
const registry = new SchemaRegistry({ host: registryUrl });
const kafka = new Kafka({ clientId: 'sr-e2e', brokers: [broker], logLevel: logLevel.NOTHING });
const deadline = setTimeout(() => { console.error('FAIL: timed out'); process.exit(1); }, 60000);

async function roundTrip(topic, messages) {
  const producer = kafka.producer();
  await producer.connect();
  await producer.send({ topic, messages });
  await producer.disconnect();
  const consumer = kafka.consumer({ groupId: `sr-e2e-${topic}` });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const got = [];
  await new Promise((resolve) => {
    consumer.run({ eachMessage: async ({ message }) => {
      got.push(message.value);
      if (got.length === messages.length) resolve();
    } });
  });
  await consumer.disconnect();
  return got;
}

// Avro.
const avroSchema = {
  type: 'record', name: 'Order', namespace: 'e2e',
  fields: [
    { name: 'id', type: 'long' },
    { name: 'customer', type: 'string' },
    { name: 'note', type: ['null', 'string'], default: null },
    { name: 'status', type: { type: 'enum', name: 'Status', symbols: ['NEW', 'PAID'] } },
  ],
};
const { id: avroId } = await registry.register({ type: SchemaType.AVRO, schema: JSON.stringify(avroSchema) },
  { subject: 'orders-value' });
assert.ok(avroId > 0);
const again = await registry.register({ type: SchemaType.AVRO, schema: JSON.stringify(avroSchema, null, 2) },
  { subject: 'orders-value' });
assert.equal(again.id, avroId, 'the same schema registered again keeps its id');
assert.equal(await registry.getLatestSchemaId('orders-value'), avroId);
const orders = [];
for (let i = 0; i < 20; i++)
  orders.push({ id: i, customer: `c-${i}`, note: i % 2 ? null : `n${i}`, status: i % 3 ? 'NEW' : 'PAID' });
const avroEncoded = await Promise.all(orders.map((o) => registry.encode(avroId, o)));
for (const b of avroEncoded) {
  assert.equal(b[0], 0);
  assert.equal(b.readInt32BE(1), avroId);
}
const fresh = new SchemaRegistry({ host: registryUrl }); // no cached schema: decode fetches by id
const avroBack = await roundTrip('sr-orders', avroEncoded.map((value, i) => ({ key: `k${i}`, value })));
const decoded = await Promise.all(avroBack.map((v) => fresh.decode(v)));
decoded.sort((a, b) => Number(a.id) - Number(b.id));
assert.deepEqual(decoded.map((o) => ({ ...o, id: Number(o.id) })), orders);
console.log(`avro: ${orders.length} records registered as id ${avroId}, produced, consumed, decoded`);

// An evolution the registry accepts (a field with a default), and one it refuses (409).
const v2 = { ...avroSchema, fields: [...avroSchema.fields, { name: 'total', type: 'double', default: 0 }] };
const { id: v2Id } = await registry.register({ type: SchemaType.AVRO, schema: JSON.stringify(v2) },
  { subject: 'orders-value' });
assert.notEqual(v2Id, avroId);
// A field the previous version wrote as a string, read as an int: no promotion exists.
const bad = { ...v2, fields: v2.fields.map((f) => (f.name === 'customer' ? { ...f, type: 'int' } : f)) };
await assert.rejects(registry.register({ type: SchemaType.AVRO, schema: JSON.stringify(bad) },
  { subject: 'orders-value' }), (e) => /incompatible/i.test(e.message) && e.status === 409);
console.log('avro: compatible evolution registered, incompatible one refused with 409');

// JSON Schema.
const jsonSchema = {
  $schema: 'http://json-schema.org/draft-07/schema#', type: 'object',
  properties: { sku: { type: 'string' }, qty: { type: 'integer', minimum: 0 } },
  required: ['sku'], additionalProperties: false,
};
const { id: jsonId } = await registry.register({ type: SchemaType.JSON, schema: JSON.stringify(jsonSchema) },
  { subject: 'items-value' });
const items = [{ sku: 'a', qty: 1 }, { sku: 'b', qty: 2 }, { sku: 'c' }];
const jsonEncoded = await Promise.all(items.map((o) => registry.encode(jsonId, o)));
await assert.rejects(registry.encode(jsonId, { qty: 1 }), 'a record the schema refuses is not encoded');
const jsonBack = await roundTrip('sr-items', jsonEncoded.map((value) => ({ value })));
const jsonDecoded = await Promise.all(jsonBack.map((v) => new SchemaRegistry({ host: registryUrl }).decode(v)));
jsonDecoded.sort((a, b) => a.sku.localeCompare(b.sku));
assert.deepEqual(jsonDecoded, items);
console.log(`json: ${items.length} records registered as id ${jsonId}, produced, consumed, decoded`);

// Protobuf with message indexes.
const proto = `syntax = "proto3";
package e2e;
message Envelope {
  string source = 1;
  message Shipment {
    string tracking = 1;
    int64 weight_grams = 2;
    repeated string parcels = 3;
  }
}
message Other { int32 x = 1; }
`;
const { id: protoId } = await registry.register({ type: SchemaType.PROTOBUF, schema: proto },
  { subject: 'shipments-value' });
// The schema as Floe returns it for that id.
const byId = await (await fetch(`${registryUrl}/schemas/ids/${protoId}`)).json();
assert.equal(byId.schemaType, 'PROTOBUF');
const root = protobuf.parse(byId.schema).root;
// Message index path [0, 0]: the first message's first nested message (e2e.Envelope.Shipment).
const path = [0, 0];
const top = root.lookup('e2e').nestedArray.filter((t) => t instanceof protobuf.Type);
const Shipment = top[path[0]].nestedArray.filter((t) => t instanceof protobuf.Type)[path[1]];
assert.equal(Shipment.fullName, '.e2e.Envelope.Shipment');
const value = { tracking: 'ZX-1', weightGrams: 1500, parcels: ['p1', 'p2'] };
const payload = Buffer.from(Shipment.encode(Shipment.create(value)).finish());
const zigzag = (n) => (n << 1) ^ (n >> 31);
const varint = (n) => { const out = []; while (n > 0x7f) { out.push((n & 0x7f) | 0x80); n >>>= 7; } out.push(n); return out; };
const indexes = Buffer.from([...varint(zigzag(path.length)), ...path.flatMap((i) => varint(zigzag(i)))]);
const idBytes = Buffer.alloc(4);
idBytes.writeUInt32BE(protoId);
const framed = Buffer.concat([Buffer.from([0]), idBytes, indexes, payload]);
// Byte for byte: magic 0, id big-endian, count 2 -> zigzag 4, index 0 -> 0, index 0 -> 0, payload.
const expectedHead = Buffer.from([0x00, (protoId >>> 24) & 0xff, (protoId >>> 16) & 0xff, (protoId >>> 8) & 0xff,
  protoId & 0xff, 0x04, 0x00, 0x00]);
assert.deepEqual(framed.subarray(0, 8), expectedHead);
// The payload is protobuf's own encoding: field 1 (tag 0x0a) "ZX-1", field 2 (0x10) 1500, field 3 (0x1a) x2.
assert.deepEqual(payload, Buffer.from([0x0a, 0x04, 0x5a, 0x58, 0x2d, 0x31, 0x10, 0xdc, 0x0b,
  0x1a, 0x02, 0x70, 0x31, 0x1a, 0x02, 0x70, 0x32]));
// The common case [0] is written as the single byte 0.
assert.deepEqual(Buffer.from([...varint(zigzag(1)), ...varint(zigzag(0))]), Buffer.from([0x02, 0x00]));
const [protoBack] = await roundTrip('sr-shipments', [{ value: framed }]);
assert.deepEqual(protoBack, framed, 'the framed record comes back byte for byte');
// Decode as a reader would: id -> schema from Floe, index list -> message, payload.
assert.equal(protoBack[0], 0);
const readId = protoBack.readUInt32BE(1);
let pos = 5;
const readVarint = () => { let shift = 0, v = 0, b; do { b = protoBack[pos++]; v |= (b & 0x7f) << shift; shift += 7; } while (b & 0x80); return v; };
const unzig = (n) => (n >>> 1) ^ -(n & 1);
const count = unzig(readVarint());
const readPath = [];
for (let i = 0; i < count; i++) readPath.push(unzig(readVarint()));
assert.deepEqual(readPath, path);
const schemaText = (await (await fetch(`${registryUrl}/schemas/ids/${readId}`)).json()).schema;
const r2 = protobuf.parse(schemaText).root;
const t0 = r2.lookup('e2e').nestedArray.filter((t) => t instanceof protobuf.Type)[readPath[0]];
const msgType = t0.nestedArray.filter((t) => t instanceof protobuf.Type)[readPath[1]];
const msg = msgType.toObject(msgType.decode(protoBack.subarray(pos)), { longs: Number });
assert.deepEqual(msg, value);
console.log(`protobuf: id ${protoId}, message indexes [${path}] framed, sent, read back and decoded`);

clearTimeout(deadline);
console.log('schema registry clients: ok');
