// Produces N deterministic records (records.mjs) to a topic with kafkajs, acks=all, and exits
// non-zero unless every one was acknowledged.  usage: produce.mjs BROKER TOPIC FROM TO [PARTITIONS]
import { Kafka, logLevel } from 'kafkajs';
import { makeRecord } from './records.mjs';

const [broker, topic, fromS, toS, partsS] = process.argv.slice(2);
const from = Number(fromS), to = Number(toS), partitions = Number(partsS ?? 1);
const kafka = new Kafka({ brokers: [broker], clientId: 'floe-e2e', logLevel: logLevel.ERROR, retry: { retries: 10 } });
const producer = kafka.producer({ allowAutoTopicCreation: true });
await producer.connect();
const batch = Number(process.env.PRODUCE_BATCH ?? 500); // records a send (a smaller one: smaller batches in the log)
for (let i = from; i < to; i += batch) {
  const messages = [];
  for (let k = i; k < Math.min(to, i + batch); k++) {
    const r = makeRecord(k);
    messages.push({ key: r.key, value: r.value, headers: r.headers, partition: k % partitions });
  }
  await producer.send({ topic, acks: -1, messages });
}
await producer.disconnect();
console.log(`produced ${to - from} records to ${topic}`);
