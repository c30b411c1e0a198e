// Partition specs end to end (issue 29): produces records with chosen CreateTime timestamps
// with kafkajs (acks=all) and writes what a reader must get back.
// usage: partition_spec.mjs BROKER TOPIC PARTITIONS FIRST_DAY DAYS N EXPECTED_FILE
//   N records, record i on partition i % PARTITIONS at FIRST_DAY + (i % DAYS) days, hour
//   (i * 7) % 24, minute i % 60 (UTC; days interleave, so each segment spans several partitions
//   of a day or hour spec); appends "partition offset key value timestamp" per record to
//   EXPECTED_FILE, as kcat -f '%p %o %k %s %T\n' prints it (offsets from ListOffsets first).
import { Kafka, logLevel } from 'kafkajs';
import { appendFileSync } from 'node:fs';

const [broker, topic, partsS, firstDay, daysS, nS, expected] = process.argv.slice(2);
const parts = Number(partsS), days = Number(daysS), n = Number(nS);
const kafka = new Kafka({ brokers: [broker], clientId: 'floe-e2e-pspec', logLevel: logLevel.ERROR,
                          retry: { retries: 5 } });
const admin = kafka.admin();
await admin.connect();
const high = await admin.fetchTopicOffsets(topic);
await admin.disconnect();
const next = [];
for (let p = 0; p < parts; p++) next.push(Number(high.find((x) => x.partition === p).high));
const base = Date.parse(`${firstDay}T00:00:00Z`);
const messages = [];
let lines = '';
for (let i = 0; i < n; i++) {
  const partition = i % parts;
  const ts = base + (i % days) * 86400000 + ((i * 7) % 24) * 3600000 + (i % 60) * 60000 + (i % 1000);
  const key = `k-${firstDay}-${i % 13}`, value = `v-${firstDay}-${i}-${'x'.repeat(i % 17)}`;
  messages.push({ partition, timestamp: String(ts), key, value });
  lines += `${partition} ${next[partition]++} ${key} ${value} ${ts}\n`;
}
const producer = kafka.producer({ allowAutoTopicCreation: false });
await producer.connect();
await producer.send({ topic, acks: -1, messages });
await producer.disconnect();
appendFileSync(expected, lines);
console.log(`produced ${n} records to ${topic}`);
