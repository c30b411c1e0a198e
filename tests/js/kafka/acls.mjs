// kafkajs and ACLs over SASL_PLAINTEXT (PLAIN): the admin (a super user) manages ACLs with
// kafkajs's createAcls / describeAcls / deleteAcls; carol is refused a topic with kafkajs's
// TOPIC_AUTHORIZATION_FAILED until an ACL lets her write it, and refused again once it is deleted.
// $FLOE_BROKER is the SASL_PLAINTEXT listener; users admin and carol have passwords <name>-pw.
import kafkajs from 'kafkajs';
import { expect, run, sleep } from './common.mjs';

const { Kafka, logLevel, AclResourceTypes, AclOperationTypes, AclPermissionTypes, ResourcePatternTypes } = kafkajs;

function client(user) {
  return new Kafka({ clientId: `js-${user}`, brokers: [process.env.FLOE_BROKER], logLevel: logLevel.NOTHING,
                     retry: { retries: 1, initialRetryTime: 100 },
                     sasl: { mechanism: 'plain', username: user, password: `${user}-pw` } });
}

async function send(user) {
  const producer = client(user).producer();
  await producer.connect();
  try {
    await producer.send({ topic: 'js-acl', acks: -1, messages: [{ value: `from ${user}` }] });
    return 'ok';
  } catch (e) {
    return e.type ?? e.originalError?.type ?? e.cause?.type ?? `${e.name}: ${e.message}`;
  } finally {
    await producer.disconnect();
  }
}

run(async () => {
  const admin = client('admin').admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: 'js-acl', numPartitions: 1 }] });
  const refused = await send('carol');
  expect(refused === 'TOPIC_AUTHORIZATION_FAILED', `carol without an ACL: ${refused}`);
  const acl = { resourceType: AclResourceTypes.TOPIC, resourceName: 'js-', resourcePatternType: ResourcePatternTypes.PREFIXED,
                principal: 'User:carol', host: '*', operation: AclOperationTypes.WRITE,
                permissionType: AclPermissionTypes.ALLOW };
  await admin.createAcls({ acl: [acl] });
  const described = await admin.describeAcls({ resourceType: AclResourceTypes.TOPIC, resourceName: 'js-acl',
                                               resourcePatternType: ResourcePatternTypes.MATCH,
                                               operation: AclOperationTypes.ANY, permissionType: AclPermissionTypes.ANY });
  const found = described.resources.flatMap((r) => r.acls.map((a) => [r.resourceName, r.resourcePatternType, a.principal, a.operation]));
  expect(JSON.stringify(found) === JSON.stringify([['js-', ResourcePatternTypes.PREFIXED, 'User:carol', AclOperationTypes.WRITE]]),
         `describeAcls: ${JSON.stringify(found)}`);
  const allowed = await send('carol');
  expect(allowed === 'ok', `carol with WRITE on js-*: ${allowed}`);
  const deleted = await admin.deleteAcls({ filters: [{ ...acl, operation: AclOperationTypes.ANY }] });
  expect(deleted.filterResponses[0].matchingAcls.length === 1, `deleteAcls: ${JSON.stringify(deleted)}`);
  await sleep(50);
  const again = await send('carol');
  expect(again === 'TOPIC_AUTHORIZATION_FAILED', `carol after deleteAcls: ${again}`);
  await admin.disconnect();
  console.log('acls.mjs: ok');
});
