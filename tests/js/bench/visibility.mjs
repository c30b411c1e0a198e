// Produce-to-visible-in-Iceberg latency: sends one record every INTERVAL ms for DURATION s with
// kafkajs (acks=all) and polls floe's /v1/topics every 20 ms; a record is visible once the
// partition's offloaded-up-to marker (moved only after the Iceberg commit) passes its offset.
// usage: visibility.mjs BROKER HTTP_BASE TOPIC [INTERVAL_MS] [DURATION_S]
import { Kafka, logLevel } from 'kafkajs';

const [broker, http, topic, intervalS, durationS] = process.argv.slice(2);
const interval = Number(intervalS ?? 50), duration = Number(durationS ?? 20) * 1000;
const kafka = new Kafka({ brokers: [broker], clientId: 'floe-visibility', logLevel: logLevel.ERROR });
const producer = kafka.producer();
await producer.connect();
const sentAt = new Map(); // offset -> ms when produced (before the send)
let visibleUpTo = 0, polling = true;
const latencies = [];
const poll = (async () => {
  while (polling || visibleUpTo < sentAt.size) {
    const r = await fetch(`${http}/v1/topics`).then((x) => x.json());
    const t = r.topics.find((x) => x.name === topic);
    const up = t ? t.partitions[0].offloaded_up_to : 0;
    const now = Date.now();
    for (; visibleUpTo < up; visibleUpTo++) {
      const s = sentAt.get(visibleUpTo);
      if (s !== undefined) latencies.push(now - s);
    }
    await new Promise((r) => setTimeout(r, 20));
    if (!polling && Date.now() - lastSend > 60000) break;
  }
})();
let lastSend = Date.now();
const start = Date.now();
while (Date.now() - start < duration) {
  const t0 = Date.now();
  const [res] = await producer.send({ topic, acks: -1, messages: [{ value: `v-${t0}` }] });
  sentAt.set(Number(res.baseOffset), t0);
  lastSend = Date.now();
  await new Promise((r) => setTimeout(r, Math.max(0, interval - (Date.now() - t0))));
}
polling = false;
await poll;
await producer.disconnect();
latencies.sort((a, b) => a - b);
const pct = (p) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))];
console.log(`visibility ${latencies.length} records, one per ${interval} ms: produce-to-visible-in-Iceberg p50 ${pct(0.5)} ms, p99 ${pct(0.99)} ms, max ${latencies[latencies.length - 1]} ms`);
process.exit(0);
