// Fills NATS JetStream with the three kinds of streams a JetStream ingest source mirrors, through
// the official NATS client (npm "nats"), and records what it wrote for kinds_check.mjs:
//   standard streams ORDERS (orders.>) and ORDERS2 (o2.>),
//   KV buckets cfg and late (puts, deletes, purges; every operation with its revision),
//   object stores files and late (random objects, several chunks, an empty one, an overwrite).
// usage: nats_kinds.mjs URL PHASE WORKDIR     PHASE: before | after | purge | crash | skip
//   WORKDIR/kv_ops.jsonl    one line per KV operation {bucket, key, rev, op, value (base64|null), phase}
//   WORKDIR/obj/<bucket>/<name>  every object's current bytes (overwrites replace the file)
import { connect } from 'nats';
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';

const [url, phase, work] = process.argv.slice(2);
const nc = await connect({ servers: url, timeout: 5000 });
const js = nc.jetstream();
const jsm = await nc.jetstreamManager();
const enc = new TextEncoder();

async function publish(subject, from, to) {
  for (let i = from; i <= to; i++) await js.publish(subject, enc.encode(`m${i}`));
}
async function kvOps(bucket, ops) {
  const kv = await js.views.kv(bucket, { history: 64 });
  for (const [op, key, value] of ops) {
    let rev;
    if (op === 'PUT') rev = await kv.put(key, enc.encode(value));
    else {
      if (op === 'DEL') await kv.delete(key);
      else await kv.purge(key);
      // delete/purge return nothing: the revision is the stream's last sequence now.
      rev = (await jsm.streams.info(`KV_${bucket}`)).state.last_seq;
    }
    const line = { bucket, key, rev, op, value: op === 'PUT' ? Buffer.from(value).toString('base64') : null, phase };
    appendFileSync(`${work}/kv_ops.jsonl`, JSON.stringify(line) + '\n');
  }
}
async function objPut(bucket, name, size) {
  const os = await js.views.os(bucket);
  const data = randomBytes(size);
  await os.putBlob({ name }, new Uint8Array(data));
  mkdirSync(`${work}/obj/${bucket}`, { recursive: true });
  writeFileSync(`${work}/obj/${bucket}/${encodeURIComponent(name)}`, data);
}

if (phase === 'before') {
  await jsm.streams.add({ name: 'ORDERS', subjects: ['orders.>'] });
  await publish('orders.created', 1, 100);
  await kvOps('cfg', [['PUT', 'a', 'a1'], ['PUT', 'b', 'b1'], ['PUT', 'c', 'c1'], ['PUT', 'a', 'a2'],
    ['PUT', 'dir.x', 'x1']]);
  await objPut('files', 'big.bin', 300 * 1024 + 17); // three chunks of 128 KiB
  await objPut('files', 'small.txt', 10);
  await objPut('files', 'empty', 0);
  await objPut('files', 'dir/name with spaces', 1000);
} else if (phase === 'after') {
  await jsm.streams.add({ name: 'ORDERS2', subjects: ['o2.>'] });
  await publish('o2.x', 1, 100);
  await publish('orders.updated', 101, 150);
  await kvOps('cfg', [['PUT', 'b', 'b2'], ['DEL', 'a'], ['PUT', 'c', 'c2'], ['PUT', 'a', 'a3'], ['DEL', 'dir.x']]);
  await kvOps('late', [['PUT', 'x', 'x1'], ['PUT', 'y', 'y1'], ['PUT', 'x', 'x2'], ['DEL', 'y']]);
  await objPut('files', 'big.bin', 200 * 1024 + 5); // an overwrite: the old chunks are purged
  await objPut('files', 'more.bin', 128 * 1024); // exactly one chunk
  await objPut('late', 'l.bin', 500 * 1024 + 1);
} else if (phase === 'purge') {
  await kvOps('cfg', [['PURGE', 'c'], ['PUT', 'd', 'd1']]);
  await kvOps('late', [['PURGE', 'x']]);
} else if (phase === 'crash') { // while floe is killed and restarted
  await objPut('files', 'during-crash.bin', 700 * 1024 + 3);
  await kvOps('cfg', [['PUT', 'e', 'e1'], ['DEL', 'b'], ['PUT', 'b', 'b3']]);
  await publish('orders.crash', 151, 650);
  await publish('o2.crash', 101, 300);
  await objPut('late', 'l.bin', 10); // an overwrite with a small object
} else if (phase === 'skip') { // while floe is stopped (SIGSTOP) with a consumer that has not fetched yet
  // Each put ends with a rollup of its metadata subject: nats-server 2.9 moves consumers past
  // the chunks they have not been delivered yet.
  await objPut('files', 'skipped.bin', 200 * 1024 + 9);
  await objPut('files', 'skipped-too.txt', 33);
} else {
  throw new Error(`unknown phase ${phase}`);
}
await nc.drain();
