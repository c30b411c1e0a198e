// Produces records "r-<i>" from FROM on, acks=all, in small batches, until the broker goes
// away or TO is reached; after each acknowledged batch writes the next unacknowledged index to
// ACKED_FILE, so a crash test knows exactly which records were acknowledged.
// usage: produce_stream.mjs BROKER TOPIC FROM TO ACKED_FILE
import { writeFileSync } from 'node:fs';
import { Kafka, logLevel } from 'kafkajs';

const [broker, topic, fromS, toS, ackedFile] = process.argv.slice(2);
let next = Number(fromS);
const to = Number(toS);
const kafka = new Kafka({ brokers: [broker], clientId: 'floe-crash', logLevel: logLevel.NOTHING,
                          retry: { retries: 0 }, connectionTimeout: 2000, requestTimeout: 5000 });
const producer = kafka.producer({ allowAutoTopicCreation: true, retry: { retries: 0 } });
try {
  await producer.connect();
  while (next < to) {
    const n = Math.min(50, to - next);
    const messages = [];
    for (let i = next; i < next + n; i++) messages.push({ key: `k${i % 100}`, value: `r-${i}` });
    await producer.send({ topic, acks: -1, messages });
    next += n;
    writeFileSync(ackedFile, String(next));
  }
  await producer.disconnect();
} catch (e) {
  // The broker was killed: what is acknowledged is in ACKED_FILE.
}
process.exit(0);
