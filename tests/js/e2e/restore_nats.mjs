// What e2e.restore needs from the official clients (npm "nats", kafkajs), so that no Floe code
// judges Floe's restore:
//   fill URL N            ORDERS (orders.>) with N messages (varied subjects, headers of one and
//                         several values, none, empty and binary payloads) and KV bucket cfg
//                         (puts and deletes), object store files; purge URL: then a KV purge and a put
//   more URL FROM TO      publishes orders.after.<i> for i in [FROM, TO) (producers after the drill)
//   objects URL           object store bucket files read back, byte for byte
//   prepare URL           on an empty server: stream ORDERS (orders.>), KV bucket cfg, object store files, as the
//                         disaster drill recreates them
//   dump URL STREAM OUT   every message of STREAM as JSON lines {seq, subject, headers, data, time}
//   count URL STREAM      prints the stream's message count
//   compare ORIG RESTORED checks RESTORED (a dump) against ORIG (a dump): same messages in order
//                         (subject, headers, payload), Floe-Original-Timestamp = the original's
//                         time, every Nats-Msg-Id once
//   kafka BROKER TOPIC ORIG   reads TOPIC from the start with kafkajs and checks it against ORIG:
//                         key = subject, value = payload, headers = the original's plus
//                         Floe-Restore-Id (each once), timestamp = the original's time
//   kafka-fill BROKER TOPIC P N   a tiered topic of P partitions, N records (null keys and values too)
//   kafka-topic BROKER TOPIC P    creates TOPIC with P partitions
// Exit 0 when the check holds; problems are printed (at most 10).
import { connect, headers as natsHeaders } from 'nats';
import { Kafka, logLevel } from 'kafkajs';
import { readFileSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';

const [cmd, ...args] = process.argv.slice(2);
const enc = new TextEncoder();

const problems = [];
const problem = (m) => { if (problems.length < 10) console.log(`  ${m}`); problems.push(m); };

async function nats(url) {
  const nc = await connect({ servers: url, timeout: 5000 });
  return { nc, js: nc.jetstream(), jsm: await nc.jetstreamManager() };
}

// Headers as sorted [key, value] pairs, without the ones a restore adds.
const ours = new Set(['Nats-Msg-Id', 'Floe-Original-Timestamp', 'Floe-Restore-Id']);
function pairs(list) {
  return list.filter(([k]) => !ours.has(k)).sort((a, b) => (a[0] + '\0' + a[1] < b[0] + '\0' + b[1] ? -1 : 1));
}
// Object store bucket files: several chunks (128 KiB each), one, none, a name with spaces.
const objects = [['big.bin', 300 * 1024 + 17], ['small.txt', 10], ['empty', 0], ['dir/name with spaces', 1000]];
function objectBytes(name, size) { // deterministic, so a later process can check them
  const out = new Uint8Array(size);
  let x = 7;
  for (const c of name) x = (x * 31 + c.charCodeAt(0)) >>> 0;
  for (let i = 0; i < size; i++) { x = (x * 1103515245 + 12345) >>> 0; out[i] = x >>> 24; }
  return out;
}
const readDump = (f) => readFileSync(f, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));

if (cmd === 'fill') {
  const [url, n] = [args[0], Number(args[1])];
  const { nc, js, jsm } = await nats(url);
  await jsm.streams.add({ name: 'ORDERS', subjects: ['orders.>'] });
  const pending = [];
  for (let i = 0; i < n; i++) {
    const subject = `orders.${i % 5}.${i % 2 ? 'created' : 'paid'}`;
    let data = enc.encode(`order ${i}`);
    if (i % 11 === 0) data = new Uint8Array(0);
    else if (i % 7 === 0) data = new Uint8Array(randomBytes(1 + (i % 2000)));
    let h;
    if (i % 4 !== 0) {
      h = natsHeaders();
      h.append('X-Order', String(i));
      if (i % 3 === 0) { h.append('X-Multi', 'a'); h.append('X-Multi', `b${i}`); }
    }
    pending.push(js.publish(subject, data, h ? { headers: h } : undefined));
    if (pending.length >= 256) await Promise.all(pending.splice(0));
  }
  await Promise.all(pending);
  const kv = await js.views.kv('cfg', { history: 64 });
  await kv.put('a', enc.encode('a1'));
  await kv.put('b', enc.encode('b1'));
  await kv.put('a', enc.encode('a2'));
  await kv.delete('b');
  await kv.put('dir.x', enc.encode('x1'));
  await kv.put('c', enc.encode('c1'));
  await kv.put('c', enc.encode('c2'));
  const os = await js.views.os('files');
  for (const [name, size] of objects) await os.putBlob({ name }, objectBytes(name, size));
  await nc.close();
} else if (cmd === 'purge') {
  // Once the table holds c1 and c2: a purge is a rollup, NATS drops c's history, the table keeps it.
  const { nc, js } = await nats(args[0]);
  const kv = await js.views.kv('cfg', { history: 64 });
  await kv.purge('c');
  await kv.put('b', enc.encode('b2'));
  await nc.close();
} else if (cmd === 'more') {
  // After the drill: producers carry on.
  const [url, from, to] = [args[0], Number(args[1]), Number(args[2])];
  const { nc, js } = await nats(url);
  for (let i = from; i < to; i++) await js.publish(`orders.after.${i}`, enc.encode(`after ${i}`));
  await nc.close();
} else if (cmd === 'prepare') {
  const { nc, js, jsm } = await nats(args[0]);
  await jsm.streams.add({ name: 'ORDERS', subjects: ['orders.>'] });
  await js.views.kv('cfg', { history: 64 });
  await js.views.os('files');
  await nc.close();
} else if (cmd === 'objects') {
  // Every object of bucket files read back by the client, byte for byte.
  const { nc, js } = await nats(args[0]);
  const os = await js.views.os('files');
  for (const [name, size] of objects) {
    const got = await os.getBlob(name);
    const want = objectBytes(name, size);
    if (!got) problem(`object ${name}: missing`);
    else if (Buffer.compare(Buffer.from(got), Buffer.from(want)) !== 0) problem(`object ${name}: ${got.length} bytes differ`);
  }
  console.log(`  ${objects.length} objects read back: ${problems.length} problem(s)`);
  await nc.close();
} else if (cmd === 'dump') {
  const [url, stream, out] = args;
  const { nc, jsm } = await nats(url);
  const info = await jsm.streams.info(stream);
  const lines = [];
  for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
    let m;
    try { m = await jsm.streams.getMessage(stream, { seq }); } catch { continue; } // deleted
    const hs = [];
    if (m.header) for (const k of m.header.keys()) for (const v of m.header.values(k)) hs.push([k, v]);
    lines.push(JSON.stringify({ seq, subject: m.subject, headers: hs, data: Buffer.from(m.data).toString('base64'),
                                time: m.time.getTime() }));
  }
  writeFileSync(out, lines.join('\n') + '\n');
  console.log(`  ${stream}: ${lines.length} messages dumped`);
  await nc.close();
} else if (cmd === 'count') {
  const { nc, jsm } = await nats(args[0]);
  console.log((await jsm.streams.info(args[1])).state.messages);
  await nc.close();
} else if (cmd === 'compare') {
  const [a, b] = [readDump(args[0]), readDump(args[1])];
  if (a.length !== b.length) problem(`${args[1]}: ${b.length} messages, the original ${a.length}`);
  const ids = new Set();
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const [o, r] = [a[i], b[i]];
    if (o.subject !== r.subject) problem(`#${i}: subject ${r.subject}, the original ${o.subject}`);
    if (o.data !== r.data) problem(`#${i} (${o.subject}): payload differs`);
    const [ho, hr] = [JSON.stringify(pairs(o.headers)), JSON.stringify(pairs(r.headers))];
    if (ho !== hr) problem(`#${i}: headers ${hr}, the original ${ho}`);
    const ts = r.headers.filter(([k]) => k === 'Floe-Original-Timestamp').map(([, v]) => Number(v));
    if (ts.length !== 1 || ts[0] !== o.time) problem(`#${i}: Floe-Original-Timestamp ${ts}, the original time ${o.time}`);
    const id = r.headers.filter(([k]) => k === 'Nats-Msg-Id').map(([, v]) => v);
    if (id.length !== 1 || ids.has(id[0])) problem(`#${i}: Nats-Msg-Id ${id} (missing, several or seen before)`);
    ids.add(id[0]);
  }
  console.log(`  ${b.length} restored messages checked against ${a.length} originals: ${problems.length} problem(s)`);
} else if (cmd === 'kafka') {
  const [broker, topic, origFile] = args;
  const orig = readDump(origFile);
  const kafka = new Kafka({ brokers: [broker], clientId: 'floe-e2e-restore', logLevel: logLevel.NOTHING });
  const consumer = kafka.consumer({ groupId: `restore-check-${Date.now()}` });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const got = [];
  let idle;
  const done = new Promise((resolve) => {
    const arm = () => { clearTimeout(idle); idle = setTimeout(resolve, 3000); };
    arm();
    consumer.run({ eachMessage: async ({ message }) => { got.push(message); arm(); } });
  });
  await Promise.race([done, new Promise((r) => setTimeout(r, 30000))]);
  await consumer.disconnect();
  if (got.length !== orig.length) problem(`${topic}: ${got.length} records, the original ${orig.length}`);
  const ids = new Set();
  for (let i = 0; i < Math.min(got.length, orig.length); i++) {
    const [o, r] = [orig[i], got[i]];
    if (r.key?.toString() !== o.subject) problem(`#${i}: key ${r.key}, the original subject ${o.subject}`);
    if ((r.value ?? Buffer.alloc(0)).toString('base64') !== o.data) problem(`#${i}: value differs`);
    if (Number(r.timestamp) !== o.time) problem(`#${i}: timestamp ${r.timestamp}, the original ${o.time}`);
    const hs = [];
    for (const [k, v] of Object.entries(r.headers ?? {}))
      for (const x of Array.isArray(v) ? v : [v]) hs.push([k, x.toString()]);
    const [ho, hr] = [JSON.stringify(pairs(o.headers)), JSON.stringify(pairs(hs))];
    if (ho !== hr) problem(`#${i}: headers ${hr}, the original ${ho}`);
    const id = hs.filter(([k]) => k === 'Floe-Restore-Id').map(([, v]) => v);
    if (id.length !== 1 || ids.has(id[0])) problem(`#${i}: Floe-Restore-Id ${id} (missing, several or seen before)`);
    ids.add(id[0]);
  }
  console.log(`  ${got.length} records of ${topic} checked against ${orig.length} originals: ${problems.length} problem(s)`);
} else if (cmd === 'kafka-fill') {
  // A tiered topic of P partitions with N records: keys (some null), values (some null: tombstones,
  // some empty), headers (some repeated), explicit timestamps.
  const [broker, topic, parts, n] = [args[0], args[1], Number(args[2]), Number(args[3])];
  const kafka = new Kafka({ brokers: [broker], clientId: 'floe-e2e-restore', logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: parts, configEntries: [
    { name: 'remote.storage.enable', value: 'true' }, { name: 'segment.ms', value: '500' }] }] });
  await admin.disconnect();
  const producer = kafka.producer();
  await producer.connect();
  const t0 = 1796270400000;
  for (let i = 0; i < n; i += 100) {
    const messages = [];
    for (let j = i; j < Math.min(n, i + 100); j++)
      messages.push({ partition: j % parts, key: j % 9 === 0 ? null : `k${j % 37}`,
                      value: j % 13 === 0 ? null : j % 17 === 0 ? '' : `value ${j}`,
                      timestamp: String(t0 + j * 3),
                      headers: j % 2 ? { h: [`x${j}`, 'y'], other: String(j) } : undefined });
    await producer.send({ topic, messages });
  }
  await producer.disconnect();
} else if (cmd === 'kafka-topic') {
  const [broker, topic, parts] = [args[0], args[1], Number(args[2])];
  const admin = new Kafka({ brokers: [broker], clientId: 'floe-e2e-restore', logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  if (!(await admin.createTopics({ topics: [{ topic, numPartitions: parts }] }))) problem(`${topic} exists`);
  await admin.disconnect();
} else {
  console.error(`unknown command ${cmd}`);
  process.exit(2);
}
process.exit(problems.length ? 1 : 0);
