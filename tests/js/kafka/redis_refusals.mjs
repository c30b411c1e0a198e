// What floe.local.type=redis refuses, seen from a Kafka client (kafkajs), each with a clear error
// and nothing written: a transactional producer's send (AddPartitionsToTxn answered
// UNSUPPORTED_FOR_MESSAGE_FORMAT), and a compacted topic (CreateTopics / AlterConfigs answered
// INVALID_CONFIG naming the tier). An idempotent producer on the same topic still works.
// usage: redis_refusals.mjs TOPIC   (FLOE_BROKER=host:port; TOPIC exists with 1+ partitions)
import { client, expect, run } from './common.mjs';

const [topic] = process.argv.slice(2);
const kafka = client('redis-refusals');

run(async () => {
  const admin = kafka.admin();
  await admin.connect();
  const before = await admin.fetchTopicOffsets(topic);
  const end0 = Number(before.find((p) => p.partition === 0).high);

  // Transactions: refused before any record is written.
  const tp = kafka.producer({ transactionalId: 'redis-txn', maxInFlightRequests: 1, idempotent: true,
                              retry: { retries: 2, initialRetryTime: 100 } });
  await tp.connect();
  const txn = await tp.transaction();
  let err = null;
  try {
    await txn.send({ topic, messages: [{ partition: 0, key: 'k', value: 'in-a-txn' }] });
  } catch (e) {
    err = e;
  }
  expect(err, 'a transactional send on the redis tier must fail');
  const type = err.type || (err.cause && err.cause.type) || String(err);
  console.log(`transactional send refused: ${type}`);
  expect(/UNSUPPORTED_FOR_MESSAGE_FORMAT/.test(type) || /UNSUPPORTED_FOR_MESSAGE_FORMAT/.test(String(err.cause)),
         `error type is UNSUPPORTED_FOR_MESSAGE_FORMAT, got ${type}`);
  try { await txn.abort(); } catch (_) { /* nothing was added */ }
  await tp.disconnect();

  // Idempotent, non-transactional produce still works; the transactional record is absent.
  const ip = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await ip.connect();
  await ip.send({ topic, acks: -1, messages: [{ partition: 0, key: 'k', value: 'idempotent' }] });
  await ip.disconnect();
  const after = await admin.fetchTopicOffsets(topic);
  const end1 = Number(after.find((p) => p.partition === 0).high);
  expect(end1 === end0 + 1, `only the idempotent record was appended (end ${end0} -> ${end1})`);

  // Compacted topics: refused at creation and by AlterConfigs.
  let cerr = null;
  try {
    await admin.createTopics({ waitForLeaders: false, topics: [{ topic: 'redis-compacted', numPartitions: 1,
      configEntries: [{ name: 'cleanup.policy', value: 'compact' }] }] });
  } catch (e) {
    cerr = e;
  }
  expect(cerr, 'creating a compacted topic on the redis tier must fail');
  const detail = JSON.stringify(cerr.errors || cerr.message);
  console.log(`compacted topic refused: ${detail}`);
  expect(/INVALID_CONFIG/.test(detail) || /floe.local.type=redis/.test(detail), `INVALID_CONFIG, got ${detail}`);
  const names = await admin.listTopics();
  expect(!names.includes('redis-compacted'), 'the compacted topic was not created');
  let aerr = null;
  try {
    await admin.alterConfigs({ validateOnly: false, resources: [{ type: 2, name: topic,
      configEntries: [{ name: 'cleanup.policy', value: 'compact' }] }] });
  } catch (e) {
    aerr = e;
  }
  expect(aerr, 'altering a topic to cleanup.policy=compact on the redis tier must fail');
  await admin.disconnect();
});
