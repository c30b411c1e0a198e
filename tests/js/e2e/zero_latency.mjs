// Publishes N messages one at a time to a JetStream stream (each publish awaited, a few ms apart)
// while polling floe's /v1/ingest for the mirror's committed position (what the Iceberg table
// holds), and reports each message's time from its publish acknowledgement to the first poll
// that sees it committed. Then waits (bounded) for the offload to leave at most the stream's last
// message. The official NATS client (npm "nats") publishes; the same process clocks both sides.
// usage: zero_latency.mjs URL HTTP_HOSTPORT STREAM SUBJECT TOPIC N MAX_MS
//   prints "latency max=.. p50=.. p99=.. over=<count above MAX_MS>" and "stream messages=.."; exits 1
//   when a message took longer than MAX_MS or the stream keeps more than one message.
import { connect } from 'nats';

const [url, http, stream, subject, topic, nText, maxText] = process.argv.slice(2);
const n = Number(nText), maxMs = Number(maxText);
const nc = await connect({ servers: url, timeout: 5000 });
const js = nc.jetstream();
const jsm = await nc.jetstreamManager();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function committed() {
  try {
    const r = await fetch(`http://${http}/v1/ingest`);
    const d = await r.json();
    for (const s of d.sources) for (const p of s.partitions) if (p.topic === topic) return p.committed_position;
  } catch { /* floe busy: next poll */ }
  return -1;
}

const acked = new Map(); // seq -> ms of the publish acknowledgement
const seen = []; // [ms, committed position]
let done = false;
const poller = (async () => {
  while (!done) {
    const c = await committed();
    seen.push([Date.now(), c]);
    await sleep(20);
  }
})();
const enc = new TextEncoder();
for (let i = 1; i <= n; i++) {
  const a = await js.publish(subject, enc.encode(`z${i}`));
  acked.set(a.seq, Date.now());
  await sleep(3);
}
const deadline = Date.now() + 10000;
while (Date.now() < deadline && (seen.length === 0 || seen[seen.length - 1][1] < n)) await sleep(50);
done = true;
await poller;

const lat = [];
for (const [seq, t] of acked) {
  const hit = seen.find(([ms, c]) => ms >= t && c >= seq); // committed position = offset + 1 = seq
  lat.push(hit ? hit[0] - t : Infinity);
}
lat.sort((a, b) => a - b);
const q = (f) => lat[Math.min(lat.length - 1, Math.floor(f * lat.length))];
const over = lat.filter((x) => x > maxMs).length;
console.log(`latency max=${lat[lat.length - 1]} p50=${q(0.5)} p99=${q(0.99)} over=${over} of ${lat.length} ms`);

// Offload: once all is committed, the stream keeps at most its last message.
let info;
for (let i = 0; i < 50; i++) {
  info = await jsm.streams.info(stream);
  if (info.state.messages <= 1) break;
  await sleep(100);
}
console.log(`stream messages=${info.state.messages} first=${info.state.first_seq} last=${info.state.last_seq}`);
await nc.close();
process.exit(over === 0 && lat.length === n && info.state.messages <= 1 ? 0 : 1);
