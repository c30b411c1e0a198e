// Kafka transactions (KIP-98) against floe with kafkajs's transactional producer.
// usage: transactions.mjs PHASE STATE_JSON   (FLOE_BROKER=host:port)
//   main:  committed and aborted transactions interleaved on two partitions (+ plain records),
//          read_committed vs read_uncommitted consumers, an open transaction held back from
//          read_committed, consume-transform-produce with sendOffsets, a zombie producer fenced.
//          Writes the expected committed values to STATE_JSON.
//   open:  opens a transaction, sends crash-* records to both partitions, prints OPEN and waits
//          (the test kills floe with -9 meanwhile).
//   after: (after the restart and the transaction timeout) read_committed and read_uncommitted
//          consumers from offset 0 see exactly the committed values of STATE_JSON (aborted data
//          is absent from either once it is read from Iceberg, and always from read_committed).
import { readFileSync, writeFileSync } from 'node:fs';
import { client, expect, sleep, until, run } from './common.mjs';

const [phase, stateFile, mode] = process.argv.slice(2);
const topic = 'txn-in';
const out = 'txn-out';
const kafka = client(`txn-${phase}`);

async function readAll(groupId, t, readUncommitted, want, timeoutMs = 30000) {
  const consumer = kafka.consumer({ groupId, readUncommitted, maxWaitTimeInMs: 200 });
  await consumer.connect();
  await consumer.subscribe({ topic: t, fromBeginning: true });
  const seen = [];
  await consumer.run({ eachMessage: async ({ partition, message }) => {
    seen.push({ partition, offset: Number(message.offset), value: message.value.toString() });
  } });
  try {
    await until(`${groupId}: ${want} records`, async () => seen.length >= want, timeoutMs);
    await sleep(1000); // anything more than expected would show up here
  } finally {
    await consumer.disconnect();
  }
  return seen;
}

const sorted = (a) => [...a].sort();
function sameSet(got, want, what) {
  const g = sorted(got), w = sorted(want);
  const extra = g.filter((v) => !w.includes(v)), missing = w.filter((v) => !g.includes(v));
  expect(extra.length === 0 && missing.length === 0 && g.length === w.length,
         `${what}: ${g.length} values (want ${w.length}); extra ${extra.slice(0, 5)}; missing ${missing.slice(0, 5)}`);
}

async function main() {
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 2 }, { topic: out, numPartitions: 1 }] });
  const committed = [], aborted = [];
  const producer = kafka.producer({ transactionalId: 'tx-main', maxInFlightRequests: 1, idempotent: true,
                                    transactionTimeout: 30000 });
  const plain = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  await plain.connect();
  // 12 transactions over both partitions, every third aborted, plain records in between.
  for (let i = 0; i < 12; ++i) {
    const abort = i % 3 === 1;
    const txn = await producer.transaction();
    for (let p = 0; p < 2; ++p) {
      const values = Array.from({ length: 5 }, (_, j) => `${abort ? 'a' : 'c'}-${i}-${p}-${j}`);
      await txn.send({ topic, messages: values.map((value) => ({ partition: p, value })) });
      (abort ? aborted : committed).push(...values);
    }
    const pv = `plain-${i}`;
    await plain.send({ topic, messages: [{ partition: i % 2, value: pv }] });
    committed.push(pv);
    if (abort) await txn.abort(); else await txn.commit();
  }

  // An open transaction is held back from read_committed (the last stable offset stops it),
  // and so are the plain records after it; both appear once it commits.
  const held = await producer.transaction();
  await held.send({ topic, messages: [{ partition: 0, value: 'held-0' }, { partition: 1, value: 'held-1' }] });
  await plain.send({ topic, messages: [{ partition: 0, value: 'after-held' }] });
  let rc = await readAll('rc-1', topic, false, committed.length);
  sameSet(rc.map((r) => r.value), committed, 'read_committed while a transaction is open');
  const ru = await readAll('ru-1', topic, true, committed.length + aborted.length + 3);
  sameSet(ru.map((r) => r.value), [...committed, ...aborted, 'held-0', 'held-1', 'after-held'],
          'read_uncommitted sees everything');
  await held.commit();
  committed.push('held-0', 'held-1', 'after-held');
  rc = await readAll('rc-2', topic, false, committed.length);
  sameSet(rc.map((r) => r.value), committed, 'read_committed after the commit');
  // Offsets of the committed records are those of the log (gaps where markers/aborted are).
  const byValue = new Map(ru.map((r) => [r.value, r]));
  for (const r of rc)
    if (byValue.has(r.value))
      expect(byValue.get(r.value).offset === r.offset && byValue.get(r.value).partition === r.partition,
             `${r.value} at the same offset for both isolation levels`);

  // Consume-transform-produce: each input record becomes one output record, and the input
  // offset is committed in the same transaction (TxnOffsetCommit).
  const ctp = kafka.producer({ transactionalId: 'tx-ctp', maxInFlightRequests: 1, idempotent: true });
  await ctp.connect();
  const group = 'ctp-group';
  const consumer = kafka.consumer({ groupId: group, maxWaitTimeInMs: 200 });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  let done = 0;
  const lastOffset = new Map();
  await consumer.run({ autoCommit: false, eachMessage: async ({ partition, message }) => {
    const txn = await ctp.transaction();
    await txn.send({ topic: out, messages: [{ partition: 0, value: `x-${message.value.toString()}` }] });
    await txn.sendOffsets({ consumerGroupId: group, topics: [{ topic, partitions: [
      { partition, offset: String(Number(message.offset) + 1) }] }] });
    await txn.commit();
    lastOffset.set(partition, Number(message.offset) + 1);
    ++done;
  } });
  await until('consume-transform-produce of every committed record', async () => done >= committed.length, 60000);
  await consumer.disconnect();
  const offsets = await admin.fetchOffsets({ groupId: group, topics: [topic] });
  for (const p of offsets[0].partitions)
    expect(Number(p.offset) === lastOffset.get(p.partition),
           `group offset of partition ${p.partition} is ${p.offset}, want ${lastOffset.get(p.partition)}`);
  const xs = await readAll('rc-out', out, false, committed.length);
  sameSet(xs.map((r) => r.value), committed.map((v) => `x-${v}`), 'transformed records, once each');

  // A zombie: a second producer with the same transactional id fences the first; the first's
  // open transaction is aborted and its later sends and commit fail.
  const z1 = kafka.producer({ transactionalId: 'tx-zombie', maxInFlightRequests: 1, idempotent: true,
                              retry: { retries: 1 } });
  await z1.connect();
  const zt = await z1.transaction();
  await zt.send({ topic, messages: [{ partition: 1, value: 'zombie-1' }] });
  const z2 = kafka.producer({ transactionalId: 'tx-zombie', maxInFlightRequests: 1, idempotent: true });
  await z2.connect();
  const t2 = await z2.transaction(); // kafkajs sends InitProducerId here: this fences z1
  let fenced = null;
  try {
    await zt.send({ topic, messages: [{ partition: 1, value: 'zombie-2' }] });
    await zt.commit();
  } catch (e) {
    fenced = e;
  }
  expect(fenced, 'the fenced producer could not commit');
  console.log(`zombie refused: ${fenced.type || fenced.name}: ${fenced.message}`);
  await t2.send({ topic, messages: [{ partition: 1, value: 'fresh-1' }] });
  await t2.commit();
  committed.push('fresh-1');
  rc = await readAll('rc-3', topic, false, committed.length);
  sameSet(rc.map((r) => r.value), committed, 'read_committed after the zombie');
  expect(!rc.some((r) => r.value.startsWith('zombie')), 'no zombie record is visible');
  await Promise.allSettled([z1.disconnect(), z2.disconnect(), ctp.disconnect(), producer.disconnect(),
                           plain.disconnect(), admin.disconnect()]);
  writeFileSync(stateFile, JSON.stringify({ committed }));
  console.log(`main: ${committed.length} committed, ${aborted.length} aborted values`);
}

async function openTxn() {
  const producer = kafka.producer({ transactionalId: 'tx-crash', maxInFlightRequests: 1, idempotent: true,
                                    transactionTimeout: 4000 });
  await producer.connect();
  const txn = await producer.transaction();
  for (let p = 0; p < 2; ++p)
    await txn.send({ topic, messages: Array.from({ length: 20 }, (_, j) => ({ partition: p, value: `crash-${p}-${j}` })) });
  console.log('OPEN');
  await sleep(60000); // killed by the test
}

async function after() {
  const state = JSON.parse(readFileSync(stateFile, 'utf8'));
  // After the timeout abort, more committed data moves the last stable offset on.
  const producer = kafka.producer({ transactionalId: 'tx-after', maxInFlightRequests: 1, idempotent: true });
  await producer.connect();
  const txn = await producer.transaction();
  await txn.send({ topic, messages: [{ partition: 0, value: `late-${mode}-0` }, { partition: 1, value: `late-${mode}-1` }] });
  await txn.commit();
  await producer.disconnect();
  // Every committed value so far: the main phase's and the late ones of earlier phases.
  state.late = [...(state.late || []), `late-${mode}-0`, `late-${mode}-1`];
  const want = [...state.committed, ...state.late];
  writeFileSync(stateFile, JSON.stringify(state));
  const rc = await readAll(`rc-after-${mode}`, topic, false, want.length);
  sameSet(rc.map((r) => r.value), want, `read_committed after the crash (${mode})`);
  const ru = await readAll(`ru-after-${mode}`, topic, true, want.length);
  const ruValues = ru.map((r) => r.value);
  if (mode === 'iceberg') {
    // Everything below the local start comes from Iceberg rows: aborted records are gone for
    // read_uncommitted too.
    sameSet(ruValues, want, 'read_uncommitted from Iceberg');
  } else {
    expect(want.every((v) => ruValues.includes(v)), 'read_uncommitted sees every committed value');
  }
  console.log(`after (${mode}): ${rc.length} read_committed, ${ru.length} read_uncommitted`);
}

run(phase === 'main' ? main : phase === 'open' ? openTxn : after);
