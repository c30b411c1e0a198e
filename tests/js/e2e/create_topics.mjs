// Creates topics one at a time with the kafkajs admin client (CreateTopics) and prints one line
// per topic: "<topic> <error code> <message>", 0 when created. Exits 0 once every request got
// an answer, whatever its code: the caller judges the codes.
// usage: create_topics.mjs BROKER TOPIC...
import { Kafka, logLevel } from 'kafkajs';

const [broker, ...topics] = process.argv.slice(2);
const kafka = new Kafka({ brokers: [broker], clientId: 'floe-e2e-admin', logLevel: logLevel.NOTHING,
                          retry: { retries: 2 } });
const admin = kafka.admin();
await admin.connect();
// The protocol error inside whatever kafkajs wrapped it in (retrier, aggregate of topic errors).
const protocolError = (e) => {
  for (let cur = e, depth = 0; cur && depth < 5; depth++) {
    if (Array.isArray(cur.errors) && cur.errors.length) cur = cur.errors[0];
    if (typeof cur.code === 'number') return cur;
    cur = cur.originalError ?? cur.cause;
  }
  return null;
};
for (const topic of topics) {
  try {
    const created = await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: false });
    // kafkajs answers false (instead of throwing) for TOPIC_ALREADY_EXISTS.
    console.log(`${topic} ${created ? 0 : 36} ${created ? 'created' : 'TOPIC_ALREADY_EXISTS'}`);
  } catch (e) {
    const p = protocolError(e);
    console.log(`${topic} ${p ? p.code : -1} ${p ? `${p.type}: ${p.message}` : String(e)}`);
  }
}
await admin.disconnect();
