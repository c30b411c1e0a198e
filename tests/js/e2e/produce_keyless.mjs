// Produces one record without a key with kafkajs and prints how the broker answered:
// "refused <error type> <message>" or "accepted <offset>".  usage: produce_keyless.mjs BROKER TOPIC
import { Kafka, logLevel } from 'kafkajs';

const [broker, topic] = process.argv.slice(2);
const kafka = new Kafka({ brokers: [broker], clientId: 'floe-e2e', logLevel: logLevel.NOTHING, retry: { retries: 0 } });
const producer = kafka.producer({ allowAutoTopicCreation: false, retry: { retries: 0 } });
await producer.connect();
try {
  const r = await producer.send({ topic, acks: -1, messages: [{ value: 'no key from kafkajs' }] });
  console.log(`accepted ${r[0].baseOffset}`);
} catch (e) {
  const cause = e.type ? e : (e.originalError ?? e.cause ?? e);
  console.log(`refused ${cause.type ?? cause.name} ${cause.message}`);
}
await producer.disconnect();
