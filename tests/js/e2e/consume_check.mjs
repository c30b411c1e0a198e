// Consumes a topic from the beginning with kafkajs and checks every record against what
// produce.mjs sent (records.mjs): offsets 0.. per partition without gaps, keys, values and
// headers byte-equal. usage: consume_check.mjs BROKER TOPIC COUNT PARTITIONS
import { Kafka, logLevel } from 'kafkajs';
import { makeRecord } from './records.mjs';

const [broker, topic, countS, partsS] = process.argv.slice(2);
const count = Number(countS), partitions = Number(partsS);
const kafka = new Kafka({ brokers: [broker], clientId: 'floe-e2e-consumer', logLevel: logLevel.ERROR });
const consumer = kafka.consumer({ groupId: `check-${Date.now()}`, maxBytes: 8 << 20 });
const fail = (m) => { console.error(`consume_check: ${m}`); process.exit(1); };
const next = new Map();
let seen = 0;
const eq = (a, b) => (a === null || b === null ? a === b : Buffer.compare(a, b) === 0);
await consumer.connect();
await consumer.subscribe({ topic, fromBeginning: true });
const done = new Promise((resolve) => {
  consumer.run({
    eachBatch: async ({ batch }) => {
      const p = batch.partition;
      for (const m of batch.messages) {
        const off = Number(m.offset);
        const want = next.get(p) ?? 0;
        if (off !== want) fail(`partition ${p}: offset ${off} where ${want} was expected`);
        next.set(p, off + 1);
        const exp = makeRecord(off * partitions + p);
        if (!eq(m.key, exp.key)) fail(`partition ${p} offset ${off}: key differs`);
        if (!eq(m.value, exp.value)) fail(`partition ${p} offset ${off}: value differs`);
        const got = [];
        for (const [name, v] of Object.entries(m.headers ?? {})) for (const x of [].concat(v)) got.push([name, x]);
        if (got.length !== exp.headerList.length) fail(`partition ${p} offset ${off}: ${got.length} headers`);
        got.forEach(([n, v], i) => {
          if (n !== exp.headerList[i][0] || !eq(v, exp.headerList[i][1])) fail(`partition ${p} offset ${off}: header ${i} differs`);
        });
        if (++seen === count) resolve();
      }
    },
  });
});
const timer = setTimeout(() => fail(`timed out after ${seen} of ${count} records`), 60000);
await done;
clearTimeout(timer);
await consumer.disconnect();
console.log(`consume_check: ${seen} records from offset 0 match what was produced`);
process.exit(0);
