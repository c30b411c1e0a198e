// kafkajs against a cluster of floe brokers (tests/e2e/redis_cluster_test.sh).
//   produce <brokers> <topic> <prefix> <count> <acked-file> <partitions>
//     idempotent producer, acks=all, 10 records a send, each send to one partition (round robin);
//     a failed send is retried with the same values; every acknowledged value is written to
//     <acked-file>, one a line. One partition a send: kafkajs 2.2 keeps the answers of the brokers
//     that answered across its retries of a send, so a partition whose leader moved (a broker
//     died) to a broker that had already answered for other partitions would be skipped and the
//     send resolved without it (kafkajs pull request 1798).
//   consume <brokers> <topic> <group> <expect> <out-file> <seconds>
//     a consumer group member (auto commit) that writes every value it is given to <out-file>
//     and stops once it has seen <expect> distinct values or after <seconds>.
// <brokers> is a comma-separated bootstrap list.
import { appendFileSync, writeFileSync } from 'node:fs';
import kafkajs from 'kafkajs';

const { Kafka, logLevel } = kafkajs;
const [mode, brokers, topic, a3, a4, a5, a6] = process.argv.slice(2);
const kafka = new Kafka({ clientId: `cluster-${mode}`, brokers: brokers.split(','), logLevel: logLevel.NOTHING,
                          retry: { retries: 30, initialRetryTime: 100, maxRetryTime: 1000 } });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

if (mode === 'produce') {
  const [prefix, count, out, partitions] = [a3, Number(a4), a5, Number(a6 || 1)];
  const acked = [];
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  const deadline = Date.now() + 90000;
  for (let i = 0; i < count && Date.now() < deadline; i += 10) {
    const values = Array.from({ length: Math.min(10, count - i) }, (_, j) => `${prefix}-${i + j}`);
    while (Date.now() < deadline) {
      try {
        const partition = (i / 10) % partitions;
        await producer.send({ topic, acks: -1, messages: values.map((v) => ({ key: v, value: v, partition })) });
        acked.push(...values);
        break;
      } catch (e) {
        await sleep(200);
      }
    }
  }
  writeFileSync(out, acked.join('\n') + '\n');
  console.log(`acked ${acked.length} of ${count}`);
  await producer.disconnect().catch(() => {});
  process.exit(0);
} else if (mode === 'consume') {
  const [group, expect, out, seconds] = [a3, Number(a4), a5, Number(a6)];
  const t0 = Date.now();
  setTimeout(() => { console.log(`gave up after ${seconds + 20} s`); process.exit(2); }, (seconds + 20) * 1000);
  writeFileSync(out, '');
  const seen = new Set();
  const consumer = kafka.consumer({ groupId: group, sessionTimeout: 6000, heartbeatInterval: 500,
                                    rebalanceTimeout: 10000, maxWaitTimeInMs: 200 });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({ autoCommitInterval: 200, eachMessage: async ({ message }) => {
    const v = message.value.toString();
    appendFileSync(out, v + '\n');
    seen.add(v);
    if (seen.size >= expect) {
      // Exit right here: kafkajs 2.2's disconnect() was seen spinning at full CPU now and then
      // (timers starved, so no bounded wait helps), leaving the test waiting.
      console.log(`consumed ${seen.size} distinct values (expected ${expect}) in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
      process.exit(0);
    }
  } });
  await sleep(seconds * 1000); // the handler exits once every value was seen
  console.log(`consumed ${seen.size} distinct values (expected ${expect}) in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  // kafkajs's disconnect may wait long for a coordinator that was killed: bounded.
  await Promise.race([consumer.disconnect().catch(() => {}), sleep(5000)]);
  process.exit(seen.size >= expect ? 0 : 1);
} else {
  console.error(`unknown mode ${mode}`);
  process.exit(2);
}
