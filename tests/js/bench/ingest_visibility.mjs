// Publish-to-visible-in-Iceberg latency of a JetStream ingest source: publishes one message every
// INTERVAL ms for DURATION s to SUBJECT (nats.js, waiting for each publish ack, which gives its
// stream sequence) and polls floe's /v1/ingest every 20 ms; a message is visible once the
// source's committed_position (the mirror's offloaded marker, moved only after the Iceberg
// commit) passes its offset (sequence - 1). Prints p50, p99 and max in ms.
// usage: ingest_visibility.mjs NATS_URL SUBJECT HTTP_BASE SOURCE [INTERVAL_MS] [DURATION_S]
import { connect } from 'nats';

const [url, subject, http, source, intervalS, durationS] = process.argv.slice(2);
const interval = Number(intervalS ?? 20), duration = Number(durationS ?? 20) * 1000;
const nc = await connect({ servers: url });
const js = nc.jetstream();
const sentAt = new Map(); // offset -> ms before the publish
const latencies = [];
let visibleUpTo = -1, polling = true, lastSend = Date.now();
const poll = (async () => {
  while (polling || latencies.length < sentAt.size) {
    const r = await fetch(`${http}/v1/ingest`).then((x) => x.json());
    const s = r.sources.find((x) => x.name === source);
    const up = s && s.partitions.length ? s.partitions[0].committed_position : 0;
    const now = Date.now();
    if (visibleUpTo < 0) visibleUpTo = up; // what was there before this run
    for (; visibleUpTo < up; visibleUpTo++) {
      const t = sentAt.get(visibleUpTo);
      if (t !== undefined) latencies.push(now - t);
    }
    await new Promise((res) => setTimeout(res, 20));
    if (!polling && Date.now() - lastSend > 30000) break;
  }
})();
while (visibleUpTo < 0) await new Promise((res) => setTimeout(res, 5));
const payload = new Uint8Array(100).fill(97);
const start = Date.now();
for (let i = 0; Date.now() - start < duration; i++) {
  const due = start + i * interval;
  const wait = due - Date.now();
  if (wait > 0) await new Promise((res) => setTimeout(res, wait));
  const t = Date.now();
  const ack = await js.publish(subject, payload);
  sentAt.set(ack.seq - 1, t);
  lastSend = Date.now();
}
polling = false;
await poll;
await nc.close();
latencies.sort((a, b) => a - b);
const q = (p) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))];
console.log(`messages ${sentAt.size}, visible ${latencies.length}: p50 ${q(0.5)} ms, p99 ${q(0.99)} ms, max ${latencies[latencies.length - 1]} ms`);
