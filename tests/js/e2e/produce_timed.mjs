// Produces records with explicit partitions and CreateTime timestamps with kafkajs (acks=all),
// creating the topic with PARTITIONS partitions first when it does not exist; exits non-zero
// unless all are acknowledged.
// usage: produce_timed.mjs BROKER TOPIC PARTITIONS JSON   where JSON is [[partition, ts, key, value], ...]
import { Kafka, logLevel } from 'kafkajs';

const [broker, topic, partsS, json] = process.argv.slice(2);
const kafka = new Kafka({ brokers: [broker], clientId: 'floe-e2e', logLevel: logLevel.ERROR, retry: { retries: 10 } });
const admin = kafka.admin();
await admin.connect();
if (!(await admin.listTopics()).includes(topic))
  await admin.createTopics({ topics: [{ topic, numPartitions: Number(partsS) }], waitForLeaders: true });
await admin.disconnect();
const producer = kafka.producer({ allowAutoTopicCreation: false });
await producer.connect();
const messages = JSON.parse(json).map(([partition, ts, key, value]) => ({ partition, timestamp: String(ts), key, value }));
await producer.send({ topic, acks: -1, messages });
await producer.disconnect();
console.log(`produced ${messages.length} records to ${topic}`);
