// Chaos workload: an idempotent producer with acks=all. Each send carries 1-3 unique values
// ("<proc>-<n>") to one partition. History: send (invoke), ack (offsets per value) or fail (the
// values' fate is unknown: they may or may not be in the log). After a failure the producer is
// replaced by a new one (a new producer id): values are never resent, so any duplicate in the
// log is the broker's.
// usage: producer.mjs BROKERS TOPIC PARTITIONS PROC HISTORY STOP_FILE [PAUSE_MS]
import { client, history, stopped, sleep, deadline } from './common.mjs';

const [brokers, topic, partsS, proc, histPath, stopFile, pauseS] = process.argv.slice(2);
const partitions = Number(partsS), pauseMs = Number(pauseS ?? 2);
const h = history(histPath, proc);
const kafka = client(brokers, proc);
let producer = null;
let n = 0, sends = 0;
const connect = async () => {
  const p = kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
  await deadline(p.connect(), 10000, 'connect');
  return p;
};
while (!stopped(stopFile)) {
  if (!producer) {
    try { producer = await connect(); h.emit({ type: 'producer_up' }); } catch (e) {
      h.emit({ type: 'producer_down', error: String(e.message ?? e) });
      producer = null; await sleep(200); continue;
    }
  }
  const partition = sends++ % partitions;
  const k = 1 + (sends % 3);
  const values = [];
  for (let i = 0; i < k; i++) values.push(`${proc}-${n++}`);
  h.emit({ type: 'send', partition, values });
  try {
    const md = await deadline(producer.send({ topic, acks: -1, messages: values.map((v) => ({ value: v, partition })) }),
                              15000, 'send');
    const m = md.find((r) => r.partition === partition);
    if (!m || m.errorCode !== 0) throw new Error(`no ack for partition ${partition}: ${JSON.stringify(md)}`);
    const base = Number(m.baseOffset);
    h.emit({ type: 'ack', partition, acks: values.map((v, i) => [base + i, v]) });
  } catch (e) {
    h.emit({ type: 'fail', partition, values, error: String(e.message ?? e).slice(0, 200) });
    const old = producer; producer = null;
    old.disconnect().catch(() => {});
  }
  if (pauseMs > 0) await sleep(pauseMs);
}
if (producer) await deadline(producer.disconnect(), 5000, 'disconnect').catch(() => {});
await h.close();
process.exit(0);
