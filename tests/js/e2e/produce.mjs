// Produces N deterministic records (records.mjs) to a topic with kafkajs, acks=all, and exits
// non-zero unless every one was acknowledged.  usage: produce.mjs BROKER TOPIC FROM TO [PARTITIONS]
// PRODUCE_PER_PARTITION=1: one partition a send, idempotent (for a broker killed under the
// producer in a cluster: kafkajs 2.2 keeps the answers of the brokers that answered across its
// retries of a send, so a partition whose leader moved to a broker that had already answered
// for other partitions would be skipped, and a plain retry could append a batch twice).
import { Kafka, logLevel } from 'kafkajs';
import { makeRecord } from './records.mjs';

const [broker, topic, fromS, toS, partsS] = process.argv.slice(2);
const from = Number(fromS), to = Number(toS), partitions = Number(partsS ?? 1);
const kafka = new Kafka({ brokers: [broker], clientId: 'floe-e2e', logLevel: logLevel.ERROR, retry: { retries: 10 } });
const perPartition = process.env.PRODUCE_PER_PARTITION === '1';
const producer = kafka.producer(perPartition ? { allowAutoTopicCreation: true, idempotent: true, maxInFlightRequests: 1 }
                                             : { allowAutoTopicCreation: true });
await producer.connect();
const batch = Number(process.env.PRODUCE_BATCH ?? 500); // records a send (a smaller one: smaller batches in the log)
for (let i = from; i < to; i += batch) {
  const messages = [];
  for (let k = i; k < Math.min(to, i + batch); k++) {
    const r = makeRecord(k);
    messages.push({ key: r.key, value: r.value, headers: r.headers, partition: k % partitions });
  }
  if (!perPartition) { await producer.send({ topic, acks: -1, messages }); continue; }
  for (let p = 0; p < partitions; p++) {
    const some = messages.filter((m) => m.partition === p);
    if (some.length) await producer.send({ topic, acks: -1, messages: some });
  }
}
await producer.disconnect();
console.log(`produced ${to - from} records to ${topic}`);
