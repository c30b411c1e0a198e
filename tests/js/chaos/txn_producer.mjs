// Chaos workload: a transactional producer (acks=all, one transactional.id per process). Each
// transaction sends 1-3 unique values ("<proc>-<n>") to each of 1-2 partitions, then commits or,
// one time in four, aborts. History: send (invoke, with the transaction's number), txn_ack (the
// offsets the values were written at, not yet committed), then txn_commit or txn_abort
// (acknowledged: the outcome is known) or txn_fail (indeterminate: the transaction may have
// committed or not, but all of it or none of it). After a failure the producer is replaced by a
// new one with the same transactional.id (InitProducerId fences the old one and ends its open
// transaction); values are never resent.
// usage: txn_producer.mjs BROKERS TOPIC PARTITIONS PROC HISTORY STOP_FILE [PAUSE_MS]
import { client, history, stopped, sleep, deadline } from './common.mjs';

const [brokers, topic, partsS, proc, histPath, stopFile, pauseS] = process.argv.slice(2);
const partitions = Number(partsS), pauseMs = Number(pauseS ?? 5);
const h = history(histPath, proc);
const kafka = client(brokers, proc);
let producer = null;
let n = 0, txn = 0;
const connect = async () => {
  const p = kafka.producer({ transactionalId: `chaos-${proc}`, idempotent: true, maxInFlightRequests: 1,
                             transactionTimeout: 8000, allowAutoTopicCreation: false });
  await deadline(p.connect(), 15000, 'connect');
  return p;
};
while (!stopped(stopFile)) {
  if (!producer) {
    try { producer = await connect(); h.emit({ type: 'producer_up' }); } catch (e) {
      h.emit({ type: 'producer_down', error: String(e.message ?? e).slice(0, 200) });
      producer = null; await sleep(300); continue;
    }
  }
  const id = `${proc}/${txn++}`;
  const abort = txn % 4 === 0;
  const first = txn % partitions;
  const parts = txn % 3 === 0 ? [first, (first + 1) % partitions] : [first];
  let t = null;
  try {
    t = await deadline(producer.transaction(), 10000, 'begin');
    for (const partition of parts) {
      const values = [];
      for (let i = 0, k = 1 + ((txn + partition) % 3); i < k; i++) values.push(`${proc}-${n++}`);
      h.emit({ type: 'send', partition, values, txn: id });
      const md = await deadline(t.send({ topic, acks: -1, messages: values.map((v) => ({ value: v, partition })) }),
                                10000, 'send');
      const m = md.find((r) => r.partition === partition);
      if (!m || m.errorCode !== 0) throw new Error(`no ack for partition ${partition}: ${JSON.stringify(md)}`);
      const base = Number(m.baseOffset);
      h.emit({ type: 'txn_ack', partition, acks: values.map((v, i) => [base + i, v]), txn: id });
    }
    if (abort) {
      await deadline(t.abort(), 10000, 'abort');
      h.emit({ type: 'txn_abort', txn: id });
    } else {
      await deadline(t.commit(), 10000, 'commit');
      h.emit({ type: 'txn_commit', txn: id });
    }
  } catch (e) {
    h.emit({ type: 'txn_fail', txn: id, error: String(e.message ?? e).slice(0, 200) });
    const old = producer; producer = null;
    old.disconnect().catch(() => {});
  }
  if (pauseMs > 0) await sleep(pauseMs);
}
if (producer) await deadline(producer.disconnect(), 5000, 'disconnect').catch(() => {});
await h.close();
process.exit(0);
