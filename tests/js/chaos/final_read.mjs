// The final read of a chaos run: every partition from offset 0 up to its high watermark, through
// Kafka (kafkajs, a fresh group that never commits, read_committed: aborted values never show). Prints JSON:
// {"partitions": {"<p>": {"low": L, "high": H, "records": [[offset, value], ...]}}, "complete": bool}
// usage: final_read.mjs BROKERS TOPIC TIMEOUT_MS
import { client, sleep, deadline } from './common.mjs';

const [brokers, topic, timeoutS] = process.argv.slice(2);
const kafka = client(brokers, 'chaos-final');
const admin = kafka.admin();
await deadline(admin.connect(), 20000, 'admin connect');
const offsets = await deadline(admin.fetchTopicOffsets(topic), 20000, 'ListOffsets');
await admin.disconnect();
const parts = {};
let pending = 0;
for (const o of offsets) {
  parts[o.partition] = { low: Number(o.low), high: Number(o.high), records: [] };
  if (Number(o.high) > 0) pending++;
}
const consumer = kafka.consumer({ groupId: `chaos-final-${process.pid}-${Date.now()}`, maxWaitTimeInMs: 300 });
await deadline(consumer.connect(), 20000, 'consumer connect');
await consumer.subscribe({ topic, fromBeginning: true });
let done = false;
const reached = new Set();
const reach = (partition, last) => {
  if (last >= parts[partition].high - 1 && !reached.has(partition)) {
    reached.add(partition);
    if (reached.size === pending) done = true;
  }
};
// A batch of control records only (a transaction's marker last in the partition) never reaches
// eachBatch; kafkajs reports its last offset in this event.
consumer.on(consumer.events.END_BATCH_PROCESS, (e) => reach(e.payload.partition, Number(e.payload.lastOffset)));
await consumer.run({
  autoCommit: false,
  eachBatch: async ({ batch }) => {
    const p = parts[batch.partition];
    for (const m of batch.messages) p.records.push([Number(m.offset), m.value === null ? null : m.value.toString()]);
    reach(batch.partition, p.records.length ? p.records[p.records.length - 1][0] : -1);
  },
});
const until = Date.now() + Number(timeoutS);
while (!done && Date.now() < until) await sleep(100);
await deadline(consumer.disconnect(), 10000, 'disconnect').catch(() => {});
// Exit only once the whole answer is written (stdout to a pipe is asynchronous).
process.stdout.write(JSON.stringify({ partitions: parts, complete: done }) + '\n', () => process.exit(0));
