// Three kafkajs consumers share six partitions; when one leaves, the other two take over its
// partitions and keep consuming. Every message is processed; committed offsets cover the log.
import { client, expect, run, sleep, until } from './common.mjs';

run(async () => {
  const kafka = client('rebal');
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: 'rebal', numPartitions: 6 }], waitForLeaders: true });
  const producer = kafka.producer();
  await producer.connect();
  const produce = async (from, n) => {
    const messages = [];
    for (let i = from; i < from + n; i++) messages.push({ value: `m${i}`, partition: i % 6 });
    await producer.send({ topic: 'rebal', messages });
  };
  await produce(0, 120);

  const seen = new Set();
  const members = [];
  for (let i = 0; i < 3; i++) {
    const c = kafka.consumer({ groupId: 'rebal-group', sessionTimeout: 10000,
                               rebalanceTimeout: 10000, heartbeatInterval: 500 });
    const m = { c, assigned: [], joins: 0, count: 0 };
    c.on(c.events.GROUP_JOIN, (e) => {
      m.joins++;
      m.assigned = (e.payload.memberAssignment.rebal || []).slice().sort();
    });
    await c.connect();
    await c.subscribe({ topic: 'rebal', fromBeginning: true });
    await c.run({ eachMessage: async ({ message }) => { seen.add(message.value.toString()); m.count++; } });
    members.push(m);
  }
  await until('three members with two partitions each',
              () => members.every((m) => m.assigned.length === 2), 40000);
  const all = members.flatMap((m) => m.assigned).sort();
  expect(JSON.stringify(all) === JSON.stringify([0, 1, 2, 3, 4, 5]), `assignment ${all}`);
  await until('first 120 messages', () => seen.size >= 120);

  // One member leaves; the two others rebalance and cover all six partitions.
  const leaver = members.pop();
  await leaver.c.disconnect();
  await until('two members covering six partitions', () => {
    const a = members.flatMap((m) => m.assigned).sort();
    return JSON.stringify(a) === JSON.stringify([0, 1, 2, 3, 4, 5]);
  }, 40000);
  await produce(120, 120);
  await until('all 240 messages', () => seen.size >= 240);
  for (const m of members) expect(m.joins >= 2, `member rejoined (${m.joins} joins)`);
  for (const m of members) await m.c.disconnect();
  await producer.disconnect();

  // Offsets committed by the group reach the end of every partition.
  await sleep(200);
  const committed = await admin.fetchOffsets({ groupId: 'rebal-group', topics: ['rebal'] });
  const sum = committed[0].partitions.reduce((s, p) => s + Number(p.offset), 0);
  expect(sum === 240, `committed offsets sum to ${sum}`);
  const groups = await admin.listGroups();
  expect(groups.groups.some((g) => g.groupId === 'rebal-group'), 'listGroups shows the group');
  const desc = await admin.describeGroups(['rebal-group']);
  expect(desc.groups[0].state === 'Empty', `state after all left: ${desc.groups[0].state}`);
  await admin.deleteGroups(['rebal-group']);
  const after = await admin.listGroups();
  expect(!after.groups.some((g) => g.groupId === 'rebal-group'), 'deleted group gone');
  await admin.disconnect();
});
