// Shared bits of the kafkajs integration tests: the broker address comes from $FLOE_BROKER.
import kafkajs from 'kafkajs';

const { Kafka, logLevel } = kafkajs;

export const broker = process.env.FLOE_BROKER;
if (!broker) throw new Error('FLOE_BROKER not set');

export function client(id) {
  return new Kafka({ clientId: id, brokers: [broker], logLevel: logLevel.NOTHING,
                     retry: { retries: 8, initialRetryTime: 100 } });
}

export function expect(cond, msg) {
  if (!cond) throw new Error(`check failed: ${msg}`);
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export async function until(what, fn, timeoutMs = 30000) {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await fn()) return;
    await sleep(100);
  }
  throw new Error(`timed out waiting for ${what}`);
}

export function run(main) {
  const guard = setTimeout(() => { console.error('test timed out'); process.exit(2); }, 100000);
  main().then(() => { clearTimeout(guard); console.log('PASS'); process.exit(0); },
              (e) => { console.error(e); process.exit(1); });
}
