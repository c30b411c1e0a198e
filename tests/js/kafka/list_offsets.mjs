// ListOffsets by timestamp through kafkajs: the first offset whose timestamp is >= the asked time.
import { client, expect, run } from './common.mjs';

run(async () => {
  const kafka = client('lo');
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: 'lo', numPartitions: 1 }], waitForLeaders: true });
  const producer = kafka.producer();
  await producer.connect();
  const t0 = 1_760_000_000_000;
  // 10 batches of 10 messages; message n has timestamp t0 + n * 1000.
  for (let b = 0; b < 10; b++) {
    const messages = [];
    for (let i = 0; i < 10; i++) {
      const n = b * 10 + i;
      messages.push({ value: `m${n}`, timestamp: String(t0 + n * 1000) });
    }
    await producer.send({ topic: 'lo', messages });
  }
  await producer.disconnect();
  const ends = await admin.fetchTopicOffsets('lo');
  expect(ends[0].low === '0' && ends[0].high === '100', `low/high ${JSON.stringify(ends)}`);
  for (const n of [0, 1, 37, 50, 99]) {
    const r = await admin.fetchTopicOffsetsByTimestamp('lo', t0 + n * 1000);
    expect(r[0].offset === String(n), `timestamp of m${n} -> offset ${r[0].offset}`);
    const between = await admin.fetchTopicOffsetsByTimestamp('lo', t0 + n * 1000 - 500);
    expect(between[0].offset === String(n), `just before m${n} -> ${between[0].offset}`);
  }
  const after = await admin.fetchTopicOffsetsByTimestamp('lo', t0 + 1_000_000);
  expect(after[0].offset === '100' || after[0].offset === '-1',
         `after the last timestamp -> ${after[0].offset}`);
  await admin.disconnect();
});
