// Chaos workload: a member of a consumer group, committing after every batch. History: join
// (a new generation of this member, with its assignment), poll (the records of one batch, in
// order), commit (acknowledged: the next offset to read) or commit_fail, crash (kafkajs restarts
// the consumer; a new join follows). ISOLATION is read_committed (the default) or read_uncommitted;
// every event carries the group and the isolation.
// usage: consumer.mjs BROKERS TOPIC GROUP PROC HISTORY STOP_FILE [ISOLATION]
import { client, history, stopped, sleep, deadline } from './common.mjs';

const [brokers, topic, group, proc, histPath, stopFile, isoArg] = process.argv.slice(2);
const iso = isoArg ?? 'read_committed';
const hist = history(histPath, proc);
const h = { emit: (ev) => hist.emit({ group, iso, ...ev }), close: hist.close };
const kafka = client(brokers, proc);
const consumer = kafka.consumer({ groupId: group, sessionTimeout: 6000, heartbeatInterval: 1000,
                                  rebalanceTimeout: 8000, maxWaitTimeInMs: 300, allowAutoTopicCreation: false,
                                  readUncommitted: iso === 'read_uncommitted' });
let gen = 0;
const { GROUP_JOIN, CRASH, STOP } = consumer.events;
consumer.on(GROUP_JOIN, (e) => {
  gen++;
  h.emit({ type: 'join', gen, member: e.payload.memberId, assignment: (e.payload.memberAssignment?.[topic] ?? []) });
});
consumer.on(CRASH, (e) => { gen++; h.emit({ type: 'crash', gen, error: String(e.payload.error?.message ?? e.payload.error).slice(0, 200) }); });
consumer.on(STOP, () => { gen++; h.emit({ type: 'stop', gen }); });
const run = async () => {
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    autoCommit: false,
    eachBatch: async ({ batch }) => {
      if (batch.messages.length === 0) return;
      const g = gen;
      const records = batch.messages.map((m) => [Number(m.offset), m.value === null ? null : m.value.toString()]);
      h.emit({ type: 'poll', gen: g, partition: batch.partition, records });
      const offset = records[records.length - 1][0] + 1;
      try {
        await deadline(consumer.commitOffsets([{ topic, partition: batch.partition, offset: String(offset) }]), 10000, 'commit');
        h.emit({ type: 'commit', gen: g, partition: batch.partition, offset });
      } catch (e) {
        h.emit({ type: 'commit_fail', gen: g, partition: batch.partition, offset, error: String(e.message ?? e).slice(0, 200) });
      }
    },
  });
};
for (;;) {
  try { await run(); break; } catch (e) {
    gen++; h.emit({ type: 'crash', gen, error: String(e.message ?? e).slice(0, 200) });
    await consumer.disconnect().catch(() => {});
    if (stopped(stopFile)) break;
    await sleep(500);
  }
}
while (!stopped(stopFile)) await sleep(200);
await deadline(consumer.disconnect(), 10000, 'disconnect').catch(() => {});
await h.close();
process.exit(0);
