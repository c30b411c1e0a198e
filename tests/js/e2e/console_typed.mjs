// A typed topic with two schema versions for the console's Lake page (tests/e2e/console_test.sh):
// Avro values in Confluent's wire format (magic 0, the schema id, Avro binary by avsc) against
// Floe's schema registry, which the bearer token guards. v1 is {id, name}; v2 adds `channel`.
// Each version is produced and waited for in the table (its committed position), so the table's
// metadata holds one schema per version.
// usage: node console_typed.mjs REGISTRY_URL HTTP_URL TOKEN BROKER TOPIC
import avro from 'avsc';
import { Kafka, logLevel } from 'kafkajs';

const [registryUrl, httpUrl, token, broker, topic] = process.argv.slice(2);
const deadline = setTimeout(() => { console.error('FAIL: console_typed timed out'); process.exit(1); }, 60000);
const auth = { Authorization: `Bearer ${token}` };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const v1 = { type: 'record', name: 'Visit', namespace: 'e2e.console', fields: [
  { name: 'id', type: 'long' }, { name: 'name', type: 'string' }] };
const v2 = { ...v1, fields: [...v1.fields, { name: 'channel', type: ['null', 'string'], default: null }] };

async function register(schema) {
  const r = await fetch(`${registryUrl}/subjects/${encodeURIComponent(`${topic}-value`)}/versions`, {
    method: 'POST', headers: { ...auth, 'Content-Type': 'application/vnd.schemaregistry.v1+json' },
    body: JSON.stringify({ schema: JSON.stringify(schema) }) });
  if (!r.ok) throw new Error(`register: ${r.status} ${await r.text()}`);
  return (await r.json()).id;
}
function encode(id, schema, value) {
  const body = avro.Type.forSchema(schema).toBuffer(value);
  const head = Buffer.alloc(5);
  head.writeUInt8(0, 0);
  head.writeInt32BE(id, 1);
  return Buffer.concat([head, body]);
}
async function offloaded(n) { // bounded: the table's position of partition 0 reaches n
  for (let i = 0; i < 150; i++) {
    const t = (await (await fetch(`${httpUrl}/v1/topics`, { headers: auth })).json()).topics.find((x) => x.name === topic);
    if (t && t.partitions[0].offloaded_up_to >= n) return;
    await sleep(200);
  }
  throw new Error(`${topic}: not offloaded up to ${n}`);
}

const kafka = new Kafka({ clientId: 'console-typed', brokers: [broker], logLevel: logLevel.NOTHING });
const admin = kafka.admin();
await admin.connect();
await admin.createTopics({ topics: [{ topic, numPartitions: 1, configEntries: [{ name: 'floe.iceberg.mode', value: 'schema-id' }] }] });
await admin.disconnect();
const producer = kafka.producer();
await producer.connect();
const id1 = await register(v1);
await producer.send({ topic, messages: [0, 1, 2].map((i) => ({ key: `v-${i}`, value: encode(id1, v1, { id: i, name: `n${i}` }) })) });
await offloaded(3);
const id2 = await register(v2);
await producer.send({ topic, messages: [3, 4, 5].map((i) => ({ key: `v-${i}`, value: encode(id2, v2, { id: i, name: `n${i}`, channel: 'web' }) })) });
await offloaded(6);
await producer.disconnect();
clearTimeout(deadline);
console.log(`${topic}: schema ids ${id1}, ${id2}; 6 records offloaded`);
