// KIP-368 with kafkajs: one producer (SCRAM-SHA-256, user alice) sends one record every 100 ms
// over sessions of floe.sasl.connections-max-reauth; kafkajs re-authenticates on its
// connection 1 s before each session ends (reauthenticationThreshold), so every send succeeds.
// Then the test deletes alice (it creates $FLOE_REAUTH_DIR/deleted): the producer's next
// re-authentication fails, and it must lose access within one session.
// Writes $FLOE_REAUTH_DIR/result.json: {"sent": n, "failed_before_delete": n, "refused_after_ms": ms}.
import fs from 'node:fs';
import path from 'node:path';
import kafkajs from 'kafkajs';
import { expect, run, sleep } from './common.mjs';

const { Kafka, logLevel } = kafkajs;
const dir = process.env.FLOE_REAUTH_DIR;
const topic = process.env.FLOE_REAUTH_TOPIC;
const seconds = Number(process.env.FLOE_REAUTH_SECONDS || 8);

run(async () => {
  const kafka = new Kafka({ clientId: 'js-reauth', brokers: [process.env.FLOE_BROKER], logLevel: logLevel.NOTHING,
                            reauthenticationThreshold: 1000, retry: { retries: 0 },
                            sasl: { mechanism: 'scram-sha-256', username: 'alice', password: 'alice-secret' } });
  const producer = kafka.producer({ retry: { retries: 0 } });
  await producer.connect();
  let sent = 0, failed = 0;
  const end = Date.now() + seconds * 1000;
  while (Date.now() < end) {
    try {
      await producer.send({ topic, acks: -1, messages: [{ value: `js-${sent}` }] });
      sent++;
    } catch (e) {
      failed++;
      console.error(`send ${sent} failed: ${e.message}`);
    }
    await sleep(100);
  }
  fs.writeFileSync(path.join(dir, 'phase1-done'), String(sent));
  // Wait (bounded) for the test to delete the user.
  for (let i = 0; i < 300 && !fs.existsSync(path.join(dir, 'deleted')); i++) await sleep(100);
  expect(fs.existsSync(path.join(dir, 'deleted')), 'the test never deleted the user');
  const deletedAt = Date.now();
  let refusedAfter = -1;
  while (Date.now() - deletedAt < 15000) {
    try {
      await producer.send({ topic, acks: -1, messages: [{ value: `js-after-${Date.now()}` }] });
    } catch (e) {
      refusedAfter = Date.now() - deletedAt;
      console.error(`refused after the delete: ${e.message}`);
      break;
    }
    await sleep(100);
  }
  await producer.disconnect().catch(() => {});
  fs.writeFileSync(path.join(dir, 'result.json'),
                   JSON.stringify({ sent, failed_before_delete: failed, refused_after_ms: refusedAfter }));
});
