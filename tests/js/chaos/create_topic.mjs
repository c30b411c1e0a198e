// Creates the chaos topic with its partition count (CreateTopics through kafkajs' admin client).
// usage: create_topic.mjs BROKERS TOPIC PARTITIONS
import { client, deadline } from './common.mjs';

const [brokers, topic, partsS] = process.argv.slice(2);
const admin = client(brokers, 'chaos-admin').admin();
await deadline(admin.connect(), 20000, 'admin connect');
await deadline(admin.createTopics({ topics: [{ topic, numPartitions: Number(partsS) }], waitForLeaders: true }), 30000, 'CreateTopics');
const md = await deadline(admin.fetchTopicMetadata({ topics: [topic] }), 20000, 'Metadata');
await admin.disconnect();
const n = md.topics[0].partitions.length;
console.log(`${topic}: ${n} partitions`);
process.exit(n === Number(partsS) ? 0 : 1);
