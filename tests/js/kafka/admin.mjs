// kafkajs admin: createTopics with configs, describeConfigs, alterConfigs, deleteTopics.
import kafkajs from 'kafkajs';
import { client, expect, run } from './common.mjs';

const { ConfigResourceTypes } = kafkajs;

run(async () => {
  const kafka = client('admin');
  const admin = kafka.admin();
  await admin.connect();
  const created = await admin.createTopics({
    topics: [{ topic: 'adm', numPartitions: 3,
               configEntries: [{ name: 'retention.ms', value: '3600000' },
                               { name: 'max.message.bytes', value: '200000' }] }],
    waitForLeaders: true });
  expect(created === true, 'topic created');
  const again = await admin.createTopics({ topics: [{ topic: 'adm' }] });
  expect(again === false, 'second create reports already exists');
  let bad = null;
  try {
    await admin.createTopics({ topics: [{ topic: 'bad-cfg', configEntries: [{ name: 'segment.bytes', value: 'lots' }] }] });
  } catch (e) { bad = e; }
  const badType = bad && (bad.errors ? bad.errors[0].type : bad.type);
  expect(badType === 'INVALID_CONFIG', `invalid config refused with INVALID_CONFIG: ${badType}`);

  const md = await admin.fetchTopicMetadata({ topics: ['adm'] });
  expect(md.topics[0].partitions.length === 3, 'three partitions');

  const describe = async () => {
    const r = await admin.describeConfigs({ includeSynonyms: false,
      resources: [{ type: ConfigResourceTypes.TOPIC, name: 'adm' }] });
    const entries = {};
    for (const e of r.resources[0].configEntries) entries[e.configName] = e;
    return entries;
  };
  let cfg = await describe();
  expect(cfg['retention.ms'].configValue === '3600000', `retention.ms ${cfg['retention.ms'].configValue}`);
  expect(cfg['retention.ms'].isDefault === false, 'retention.ms is an override');
  expect(cfg['max.message.bytes'].configValue === '200000', 'max.message.bytes');
  expect(cfg['segment.bytes'] && cfg['segment.bytes'].isDefault !== false, 'segment.bytes default');

  await admin.alterConfigs({ validateOnly: false, resources: [{ type: ConfigResourceTypes.TOPIC,
    name: 'adm', configEntries: [{ name: 'retention.ms', value: '7200000' },
                                 { name: 'remote.storage.enable', value: 'true' }] }] });
  cfg = await describe();
  expect(cfg['retention.ms'].configValue === '7200000', `altered retention.ms ${cfg['retention.ms'].configValue}`);
  expect(cfg['remote.storage.enable'].configValue === 'true', 'remote.storage.enable set');
  // AlterConfigs replaces the whole override set: max.message.bytes is back to its default.
  expect(cfg['max.message.bytes'].configValue !== '200000', 'non-incremental alter replaced overrides');

  // max.message.bytes is enforced on produce.
  await admin.alterConfigs({ resources: [{ type: ConfigResourceTypes.TOPIC, name: 'adm',
    configEntries: [{ name: 'max.message.bytes', value: '1000' }] }] });
  const producer = kafka.producer({ retry: { retries: 0 } });
  await producer.connect();
  let tooLarge = null;
  try {
    await producer.send({ topic: 'adm', messages: [{ value: 'x'.repeat(5000) }] });
  } catch (e) { tooLarge = e; }
  expect(tooLarge && /MESSAGE_TOO_LARGE|too large/i.test(String(tooLarge.type || tooLarge.message)),
         `oversized batch refused: ${tooLarge}`);
  await producer.send({ topic: 'adm', messages: [{ value: 'small' }] });
  await producer.disconnect();

  // LogAppendTime topics: the broker stamps the append time over the producer's timestamp.
  await admin.createTopics({ topics: [{ topic: 'lat', configEntries: [
    { name: 'message.timestamp.type', value: 'LogAppendTime' }] }], waitForLeaders: true });
  const before = Date.now();
  const p2 = kafka.producer();
  await p2.connect();
  const sent = await p2.send({ topic: 'lat', messages: [{ value: 'old', timestamp: '1000' }] });
  await p2.disconnect();
  expect(Number(sent[0].logAppendTime) >= before - 1000, `logAppendTime in the answer: ${sent[0].logAppendTime}`);
  const consumer = kafka.consumer({ groupId: 'lat-reader' });
  await consumer.connect();
  await consumer.subscribe({ topic: 'lat', fromBeginning: true });
  let ts = null;
  await consumer.run({ eachMessage: async ({ message }) => { ts = Number(message.timestamp); } });
  const end = Date.now() + 20000;
  while (ts === null && Date.now() < end) await new Promise((r) => setTimeout(r, 100));
  await consumer.disconnect();
  expect(ts !== null && ts >= before - 1000 && ts <= Date.now(), `consumed timestamp ${ts} is the append time`);

  await admin.deleteTopics({ topics: ['adm'] });
  const topics = await admin.listTopics();
  expect(!topics.includes('adm'), `deleted topic still listed: ${topics}`);
  let gone = null;
  try {
    await admin.describeConfigs({ includeSynonyms: false,
      resources: [{ type: ConfigResourceTypes.TOPIC, name: 'adm' }] });
  } catch (e) { gone = e; }
  expect(gone !== null, 'describeConfigs of a deleted topic fails');
  await admin.disconnect();
});
