// kafkajs admin, beyond topics: createPartitions, deleteTopicRecords, every Kafka topic config
// (delete.retention.ms, message.format.version, ...), broker configs, errors as Kafka's.
import kafkajs from 'kafkajs';
import { client, expect, run, until } from './common.mjs';

const { ConfigResourceTypes } = kafkajs;

// Kafka's error name in whatever kafkajs wraps it: the error itself, per-topic or per-partition
// errors, or the original error of a retrier's wrapper.
const errType = (e) => {
  if (!e) return String(e);
  if (e.type) return e.type;
  if (e.errors && e.errors[0] && e.errors[0].type) return e.errors[0].type;
  if (e.partitions && e.partitions[0] && e.partitions[0].error) return errType(e.partitions[0].error);
  if (e.originalError) return errType(e.originalError);
  if (e.cause) return errType(e.cause);
  return String(e);
};
async function failsWith(what, type, fn) {
  let err = null;
  try { await fn(); } catch (e) { err = e; }
  expect(err !== null, `${what}: expected ${type}, it succeeded`);
  expect(errType(err) === type, `${what}: expected ${type}, got ${errType(err)} (${err && err.message})`);
  return err;
}

run(async () => {
  const kafka = client('admin-partitions');
  const admin = kafka.admin();
  await admin.connect();
  const producer = kafka.producer();
  await producer.connect();

  // ---- CreatePartitions ----
  await admin.createTopics({ topics: [{ topic: 'cp', numPartitions: 2 }], waitForLeaders: true });
  const parts = async (t) => (await admin.fetchTopicMetadata({ topics: [t] })).topics[0].partitions.length;
  await admin.createPartitions({ validateOnly: true, topicPartitions: [{ topic: 'cp', count: 4 }] });
  expect(await parts('cp') === 2, 'validateOnly adds no partition');
  await admin.createPartitions({ topicPartitions: [{ topic: 'cp', count: 4 }] });
  expect(await parts('cp') === 4, `four partitions after createPartitions: ${await parts('cp')}`);
  await failsWith('same count', 'INVALID_PARTITIONS',
    () => admin.createPartitions({ topicPartitions: [{ topic: 'cp', count: 4 }] }));
  await failsWith('fewer partitions', 'INVALID_PARTITIONS',
    () => admin.createPartitions({ topicPartitions: [{ topic: 'cp', count: 3 }] }));
  await failsWith('unknown topic', 'UNKNOWN_TOPIC_OR_PARTITION',
    () => admin.createPartitions({ topicPartitions: [{ topic: 'no-such-topic', count: 3 }] }));
  // The new partition takes records and serves them.
  await producer.send({ topic: 'cp', messages: [{ partition: 3, key: 'k3', value: 'on the new partition' }] });
  const cpOffsets = await admin.fetchTopicOffsets('cp');
  const p3 = cpOffsets.find((p) => p.partition === 3);
  expect(p3 && p3.high === '1' && p3.low === '0', `partition 3 offsets ${JSON.stringify(p3)}`);
  const c1 = kafka.consumer({ groupId: 'cp-reader' });
  await c1.connect();
  await c1.subscribe({ topic: 'cp', fromBeginning: true });
  const got = [];
  await c1.run({ eachMessage: async ({ partition, message }) => { got.push([partition, message.value.toString()]); } });
  await until('the record on partition 3', async () => got.length >= 1);
  await c1.disconnect();
  expect(got[0][0] === 3 && got[0][1] === 'on the new partition', `consumed ${JSON.stringify(got)}`);

  // ---- DeleteRecords ----
  await admin.createTopics({ topics: [{ topic: 'dr', numPartitions: 1 }], waitForLeaders: true });
  for (let i = 0; i < 10; i++) await producer.send({ topic: 'dr', messages: [{ value: `r${i}` }] });
  // (kafkajs looks the partition leader up in metadata it already holds.)
  await admin.fetchTopicMetadata({ topics: ['dr'] });
  await admin.deleteTopicRecords({ topic: 'dr', partitions: [{ partition: 0, offset: '4' }] });
  let drOffsets = await admin.fetchTopicOffsets('dr');
  expect(drOffsets[0].low === '4' && drOffsets[0].high === '10', `after deleting below 4: ${JSON.stringify(drOffsets)}`);
  const c2 = kafka.consumer({ groupId: 'dr-reader' });
  await c2.connect();
  await c2.subscribe({ topic: 'dr', fromBeginning: true });
  const read = [];
  await c2.run({ eachMessage: async ({ message }) => { read.push([Number(message.offset), message.value.toString()]); } });
  await until('six records from the new log start', async () => read.length >= 6);
  await c2.disconnect();
  expect(read[0][0] === 4 && read[0][1] === 'r4' && read.length === 6,
         `consumption from the beginning starts at the new log start: ${JSON.stringify(read)}`);
  await admin.deleteTopicRecords({ topic: 'dr', partitions: [{ partition: 0, offset: '-1' }] });
  drOffsets = await admin.fetchTopicOffsets('dr');
  expect(drOffsets[0].low === '10', `offset -1 deletes up to the high watermark: ${JSON.stringify(drOffsets)}`);
  await failsWith('delete past the high watermark', 'OFFSET_OUT_OF_RANGE',
    () => admin.deleteTopicRecords({ topic: 'dr', partitions: [{ partition: 0, offset: '99' }] }));

  // ---- Every Kafka topic config ----
  const all = {
    'cleanup.policy': 'delete', 'compression.type': 'zstd', 'delete.retention.ms': '3600000',
    'file.delete.delay.ms': '1000', 'flush.messages': '100000', 'flush.ms': '60000',
    'follower.replication.throttled.replicas': '0:0', 'index.interval.bytes': '8192',
    'leader.replication.throttled.replicas': '*', 'local.retention.bytes': '1000000',
    'local.retention.ms': '60000', 'max.compaction.lag.ms': '600000', 'max.message.bytes': '2000000',
    'message.downconversion.enable': 'false', 'message.format.version': '2.8-IV1',
    'message.timestamp.after.max.ms': '3600000', 'message.timestamp.before.max.ms': '7200000',
    'message.timestamp.difference.max.ms': '7200000', 'message.timestamp.type': 'CreateTime',
    'min.cleanable.dirty.ratio': '0.25', 'min.compaction.lag.ms': '1000', 'min.insync.replicas': '1',
    'preallocate': 'true', 'remote.storage.enable': 'false', 'retention.bytes': '100000000',
    'retention.ms': '86400000', 'segment.bytes': '10000000', 'segment.index.bytes': '1048576',
    'segment.jitter.ms': '10', 'segment.ms': '3600000', 'unclean.leader.election.enable': 'true',
  };
  const created = await admin.createTopics({ topics: [{ topic: 'allcfg',
    configEntries: Object.entries(all).map(([name, value]) => ({ name, value })) }] });
  expect(created === true, 'a topic with every Kafka topic config is created');
  const describe = async (type, name, includeSynonyms = false) => {
    const r = await admin.describeConfigs({ includeSynonyms, resources: [{ type, name }] });
    const out = {};
    for (const e of r.resources[0].configEntries) out[e.configName] = e;
    return out;
  };
  let cfg = await describe(ConfigResourceTypes.TOPIC, 'allcfg', true);
  for (const [k, v] of Object.entries(all)) {
    expect(cfg[k], `${k} is reported`);
    expect(cfg[k].configValue === v, `${k}: reported ${cfg[k].configValue}, set ${v}`);
    expect(cfg[k].configSource === 1 && cfg[k].isDefault === false, `${k} is a topic config (source ${cfg[k].configSource})`);
  }
  expect(cfg['retention.ms'].configSynonyms.length >= 2
         && cfg['retention.ms'].configSynonyms[0].configSource === 1
         && cfg['retention.ms'].configSynonyms.some((s) => s.configName === 'log.retention.ms' && s.configSource === 5),
         `retention.ms synonyms ${JSON.stringify(cfg['retention.ms'].configSynonyms)}`);
  // Defaults: a topic without overrides reports Kafka's defaults as DEFAULT_CONFIG.
  await admin.createTopics({ topics: [{ topic: 'plain' }] });
  cfg = await describe(ConfigResourceTypes.TOPIC, 'plain');
  expect(Object.keys(cfg).length >= 31, `every topic config described: ${Object.keys(cfg).length}`);
  expect(cfg['delete.retention.ms'].configValue === '86400000' && cfg['delete.retention.ms'].isDefault,
         `delete.retention.ms default ${JSON.stringify(cfg['delete.retention.ms'])}`);
  expect(cfg['message.format.version'].configValue === '3.0-IV1', 'message.format.version default');
  expect(cfg['min.cleanable.dirty.ratio'].configValue === '0.5', 'min.cleanable.dirty.ratio default');
  // Types are checked as Kafka does.
  for (const [name, value] of [['delete.retention.ms', 'soon'], ['min.cleanable.dirty.ratio', '1.5'],
                               ['message.format.version', 'banana'], ['preallocate', 'yes'],
                               ['min.insync.replicas', '0'], ['leader.replication.throttled.replicas', 'all']]) {
    await failsWith(`create with ${name}=${value}`, 'INVALID_CONFIG',
      () => admin.createTopics({ topics: [{ topic: 'badcfg', configEntries: [{ name, value }] }] }));
  }
  // (kafkajs drops the broker's error message; the librdkafka test checks that it names why.)
  await failsWith('cleanup.policy=shred', 'INVALID_CONFIG',
    () => admin.createTopics({ topics: [{ topic: 'badcfg', configEntries: [{ name: 'cleanup.policy', value: 'shred' }] }] }));
  // Compacted topics (Kafka Connect and Kafka Streams create them at start-up); refused on
  // floe.local.type=redis, which has no log cleaner (run by tests/e2e/with_redis.sh).
  if ((process.env.E2E_EXTRA_SETS || '').includes('floe.local.type=redis')) {
    await failsWith('a compacted topic on the Redis tier', 'INVALID_CONFIG', () => admin.createTopics({ topics: [{
      topic: 'compacted', configEntries: [{ name: 'cleanup.policy', value: 'compact,delete' }] }] }));
  } else {
    expect(await admin.createTopics({ topics: [{ topic: 'compacted',
      configEntries: [{ name: 'cleanup.policy', value: 'compact,delete' }] }] }) === true, 'a compacted topic is created');
    cfg = await describe(ConfigResourceTypes.TOPIC, 'compacted');
    expect(cfg['cleanup.policy'].configValue === 'compact,delete', `cleanup.policy ${cfg['cleanup.policy'].configValue}`);
  }
  // AlterConfigs with the configs that used to be refused.
  await admin.alterConfigs({ resources: [{ type: ConfigResourceTypes.TOPIC, name: 'plain', configEntries: [
    { name: 'delete.retention.ms', value: '1000' }, { name: 'message.format.version', value: '0.10.2' }] }] });
  cfg = await describe(ConfigResourceTypes.TOPIC, 'plain');
  expect(cfg['delete.retention.ms'].configValue === '1000' && cfg['message.format.version'].configValue === '0.10.2',
         'alterConfigs stores delete.retention.ms and message.format.version');
  await failsWith('alterConfigs on a missing topic', 'UNKNOWN_TOPIC_OR_PARTITION',
    () => admin.alterConfigs({ resources: [{ type: ConfigResourceTypes.TOPIC, name: 'missing',
      configEntries: [{ name: 'retention.ms', value: '1000' }] }] }));

  // ---- Broker configs ----
  let bc = await describe(ConfigResourceTypes.BROKER, '0');
  expect(bc['log.retention.ms'] && bc['log.retention.ms'].configValue === '604800000'
         && bc['log.retention.ms'].configSource === 5, `broker log.retention.ms ${JSON.stringify(bc['log.retention.ms'])}`);
  expect(bc['broker.id'] && bc['broker.id'].readOnly === true, 'broker.id is read-only');
  await admin.alterConfigs({ resources: [{ type: ConfigResourceTypes.BROKER, name: '0',
    configEntries: [{ name: 'log.retention.ms', value: '1234567' }] }] });
  bc = await describe(ConfigResourceTypes.BROKER, '0');
  expect(bc['log.retention.ms'].configValue === '1234567' && bc['log.retention.ms'].configSource === 2,
         `altered broker log.retention.ms ${JSON.stringify(bc['log.retention.ms'])}`);
  cfg = await describe(ConfigResourceTypes.TOPIC, 'cp');
  expect(cfg['retention.ms'].configValue === '1234567' && cfg['retention.ms'].configSource === 3,
         `a topic without override follows the dynamic broker default: ${JSON.stringify(cfg['retention.ms'])}`);
  await failsWith('altering broker.id', 'INVALID_CONFIG', () => admin.alterConfigs({ resources: [{
    type: ConfigResourceTypes.BROKER, name: '0', configEntries: [{ name: 'broker.id', value: '7' }] }] }));
  await failsWith('an invalid broker value', 'INVALID_CONFIG', () => admin.alterConfigs({ resources: [{
    type: ConfigResourceTypes.BROKER, name: '0', configEntries: [{ name: 'log.segment.bytes', value: '1' }] }] }));

  await producer.disconnect();
  await admin.disconnect();
});
