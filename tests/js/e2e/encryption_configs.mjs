// The encryption topic configs through a Kafka client (kafkajs): CreateTopics with them,
// AlterConfigs setting them, DescribeConfigs reporting them. Prints one line per step, the
// caller judges: "create <topic> <code> <message>", "alter <topic> <code> <message>",
// "describe <topic> <name>=<value>".
// usage: encryption_configs.mjs BROKER PREFIX
import kafkajs from 'kafkajs';
const { Kafka, logLevel, ConfigResourceTypes } = kafkajs;

const [broker, prefix] = process.argv.slice(2);
const kafka = new Kafka({ brokers: [broker], clientId: 'floe-e2e-enc', logLevel: logLevel.NOTHING,
                          retry: { retries: 1 } });
const admin = kafka.admin();
await admin.connect();
const protocolError = (e) => {
  for (let cur = e, depth = 0; cur && depth < 5; depth++) {
    if (Array.isArray(cur.errors) && cur.errors.length) cur = cur.errors[0];
    if (typeof cur.code === 'number') return cur;
    cur = cur.originalError ?? cur.cause;
  }
  return null;
};
const report = (what, topic, e) => {
  if (!e) return console.log(`${what} ${topic} 0 ok`);
  const p = protocolError(e);
  console.log(`${what} ${topic} ${p ? p.code : -1} ${p ? `${p.type}: ${p.message}` : String(e)}`);
};
const create = async (topic, configEntries) => {
  try {
    await admin.createTopics({ topics: [{ topic, numPartitions: 1, configEntries }], waitForLeaders: false });
    report('create', topic, null);
  } catch (e) { report('create', topic, e); }
};
const alter = async (topic, configEntries) => {
  try {
    await admin.alterConfigs({ validateOnly: false,
                               resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configEntries }] });
    report('alter', topic, null);
  } catch (e) { report('alter', topic, e); }
};
const describe = async (topic) => {
  const d = await admin.describeConfigs({ includeSynonyms: false,
                                          resources: [{ type: ConfigResourceTypes.TOPIC, name: topic }] });
  for (const c of d.resources[0].configEntries)
    if (c.configName.startsWith('floe.iceberg.encryption')) console.log(`describe ${topic} ${c.configName}=${c.configValue}`);
};

await create(`${prefix}-uniform`, [{ name: 'floe.iceberg.encryption', value: 'uniform' }]);
await create(`${prefix}-bad`, [{ name: 'floe.iceberg.encryption', value: 'everything' }]);
await create(`${prefix}-plain`, []);
await describe(`${prefix}-plain`);
await alter(`${prefix}-plain`, [{ name: 'floe.iceberg.encryption', value: 'columns' },
                                { name: 'floe.iceberg.encryption.columns', value: 'key,value' },
                                { name: 'floe.iceberg.encryption.footer', value: 'plaintext' },
                                { name: 'floe.iceberg.encryption.algorithm', value: 'AES_GCM_CTR_V1' }]);
await describe(`${prefix}-plain`);
await admin.disconnect();
