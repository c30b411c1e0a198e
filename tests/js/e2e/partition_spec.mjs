// Partition specs end to end (issue 29), with kafkajs: create a topic with configs, alter its
// configs (AlterConfigs), produce records with chosen CreateTime timestamps, read a config back.
// usage: partition_spec.mjs create BROKER TOPIC PARTITIONS SPEC      -> "<error code> <message>"
//        partition_spec.mjs alter BROKER TOPIC SPEC                  -> "<error code> <message>"
//        partition_spec.mjs describe BROKER TOPIC                    -> the topic's floe.iceberg.partition-spec
//        partition_spec.mjs produce BROKER TOPIC PARTITIONS FIRST_DAY DAYS N EXPECTED_FILE
//   produce: N records, record i on partition i % PARTITIONS at FIRST_DAY + (i % DAYS) days,
//   hour (i * 7) % 24, minute i % 60 (UTC; days interleave, so each segment spans several
//   partitions of a day or hour spec); appends "partition offset key value timestamp" per record
//   to EXPECTED_FILE, as kcat -f '%p %o %k %s %T\n' prints it (offsets from ListOffsets first).
import { Kafka, logLevel, ConfigResourceTypes } from 'kafkajs';
import { appendFileSync } from 'node:fs';

const [cmd, broker, topic, ...rest] = process.argv.slice(2);
const kafka = new Kafka({ brokers: [broker], clientId: 'floe-e2e-pspec', logLevel: logLevel.NOTHING,
                          retry: { retries: 3 } });
const protocolError = (e) => {
  for (let cur = e, depth = 0; cur && depth < 5; depth++) {
    if (Array.isArray(cur.errors) && cur.errors.length) cur = cur.errors[0];
    if (typeof cur.code === 'number') return cur;
    cur = cur.originalError ?? cur.cause;
  }
  return null;
};
const admin = kafka.admin();
await admin.connect();
try {
  if (cmd === 'create') {
    const [parts, spec] = rest;
    try {
      await admin.createTopics({ topics: [{ topic, numPartitions: Number(parts),
        configEntries: [{ name: 'floe.iceberg.partition-spec', value: spec }] }], waitForLeaders: true });
      console.log('0 created');
    } catch (e) {
      const p = protocolError(e);
      console.log(`${p ? p.code : -1} ${p ? `${p.type}: ${p.message}` : String(e)}`);
    }
  } else if (cmd === 'alter') {
    const [spec] = rest;
    try {
      await admin.alterConfigs({ validateOnly: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: topic,
        configEntries: [{ name: 'floe.iceberg.partition-spec', value: spec }] }] });
      console.log('0 altered');
    } catch (e) {
      const p = protocolError(e);
      console.log(`${p ? p.code : -1} ${p ? `${p.type}: ${p.message}` : String(e)}`);
    }
  } else if (cmd === 'describe') {
    const d = await admin.describeConfigs({ includeSynonyms: false,
      resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configNames: ['floe.iceberg.partition-spec'] }] });
    const e = d.resources[0].configEntries.find((c) => c.configName === 'floe.iceberg.partition-spec');
    console.log(e ? e.configValue : '(none)');
  } else if (cmd === 'produce') {
    const [partsS, firstDay, daysS, nS, expected] = rest;
    const parts = Number(partsS), days = Number(daysS), n = Number(nS);
    const next = [];
    for (let p = 0; p < parts; p++) {
      const o = await admin.fetchTopicOffsets(topic);
      next.push(Number(o.find((x) => x.partition === p).high));
    }
    const base = Date.parse(`${firstDay}T00:00:00Z`);
    const messages = [];
    let lines = '';
    for (let i = 0; i < n; i++) {
      const partition = i % parts;
      const ts = base + (i % days) * 86400000 + ((i * 7) % 24) * 3600000 + (i % 60) * 60000 + (i % 1000);
      const key = `k-${firstDay}-${i % 13}`, value = `v-${firstDay}-${i}-${'x'.repeat(i % 17)}`;
      messages.push({ partition, timestamp: String(ts), key, value });
      lines += `${partition} ${next[partition]++} ${key} ${value} ${ts}\n`;
    }
    const producer = kafka.producer({ allowAutoTopicCreation: false });
    await producer.connect();
    await producer.send({ topic, acks: -1, messages });
    await producer.disconnect();
    appendFileSync(expected, lines);
    console.log(`produced ${n} records to ${topic}`);
  } else {
    throw new Error(`unknown command ${cmd}`);
  }
} finally {
  await admin.disconnect();
}
