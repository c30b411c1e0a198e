// kafkajs idempotent producer: every acknowledged message is in the log exactly once, in order.
import { client, expect, run, until } from './common.mjs';

run(async () => {
  const kafka = client('idem');
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: 'idem', numPartitions: 2 }], waitForLeaders: true });
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  const sent = [];
  for (let b = 0; b < 20; b++) {
    const messages = [];
    for (let i = 0; i < 25; i++) {
      const n = b * 25 + i;
      messages.push({ key: `k${n % 7}`, value: `v${n}`, partition: n % 2 });
      sent.push(`v${n}`);
    }
    const res = await producer.send({ topic: 'idem', acks: -1, messages });
    for (const r of res) expect(r.errorCode === 0, `send error ${JSON.stringify(r)}`);
  }
  await producer.disconnect();

  const consumer = kafka.consumer({ groupId: 'idem-reader' });
  await consumer.connect();
  await consumer.subscribe({ topic: 'idem', fromBeginning: true });
  const got = { 0: [], 1: [] };
  await consumer.run({ eachMessage: async ({ partition, message }) => {
    got[partition].push(message.value.toString());
  } });
  await until('all messages', () => got[0].length + got[1].length >= sent.length);
  await consumer.disconnect();
  for (const p of [0, 1]) {
    const want = sent.filter((v) => Number(v.slice(1)) % 2 === p);
    expect(JSON.stringify(got[p]) === JSON.stringify(want),
           `partition ${p}: ${got[p].length} records, want ${want.length}, in order, once`);
  }
  const offsets = await admin.fetchTopicOffsets('idem');
  const total = offsets.reduce((s, o) => s + Number(o.high), 0);
  expect(total === sent.length, `log holds ${total} records, sent ${sent.length}`);
  await admin.disconnect();
});
