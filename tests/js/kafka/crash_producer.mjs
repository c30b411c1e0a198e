// Produces acks=all batches with an idempotent kafkajs producer for $FLOE_SECONDS seconds while
// the test harness kills and restarts the broker (or Redis), and writes every value whose send was
// acknowledged to $FLOE_ACKED (one per line). Sends that fail are retried with the same values.
// Topic $FLOE_TOPIC (default crash).
import { writeFileSync } from 'node:fs';
import kafkajs from 'kafkajs';

const { Kafka, logLevel } = kafkajs;
const kafka = new Kafka({ clientId: 'crash', brokers: [process.env.FLOE_BROKER], logLevel: logLevel.NOTHING,
                          retry: { retries: 30, initialRetryTime: 100, maxRetryTime: 1000 } });
const seconds = Number(process.env.FLOE_SECONDS || 6);
const acked = [];
let attempts = 0;
const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
const topic = process.env.FLOE_TOPIC || 'crash';
const end = Date.now() + seconds * 1000;
const guard = setTimeout(() => { writeFileSync(process.env.FLOE_ACKED, acked.join('\n') + '\n'); process.exit(0); },
                         (seconds + 40) * 1000);
await producer.connect();
for (let i = 0; Date.now() < end; i++) {
  const values = Array.from({ length: 10 }, (_, j) => `c-${i}-${j}`);
  for (;;) {
    attempts++;
    try {
      await producer.send({ topic, acks: -1, messages: values.map((v) => ({ value: v })) });
      acked.push(...values);
      break;
    } catch (e) {
      if (Date.now() > end + 30000) break;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}
writeFileSync(process.env.FLOE_ACKED, acked.join('\n') + '\n');
clearTimeout(guard);
console.log(`acked ${acked.length} values in ${attempts} sends`);
await producer.disconnect().catch(() => {});
process.exit(0);
