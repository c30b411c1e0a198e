// kafkajs over SASL_SSL (SCRAM-SHA-512, SCRAM-SHA-256, PLAIN) and SSL with a client
// certificate; a wrong password is refused with kafkajs's SASL authentication error.
// $FLOE_SASL_SSL and $FLOE_SSL are the listeners, $FLOE_CERTS the directory of test certificates.
import fs from 'node:fs';
import path from 'node:path';
import kafkajs from 'kafkajs';
import { expect, run } from './common.mjs';

const { Kafka, logLevel } = kafkajs;
const certs = process.env.FLOE_CERTS;
const ca = [fs.readFileSync(path.join(certs, 'ca.pem'), 'utf8')];

function client(id, brokerAddr, extra) {
  return new Kafka({ clientId: id, brokers: [brokerAddr], logLevel: logLevel.NOTHING,
                     retry: { retries: 2, initialRetryTime: 100 }, ...extra });
}

async function roundtrip(kafka, topic) {
  const producer = kafka.producer();
  await producer.connect();
  const values = Array.from({ length: 20 }, (_, i) => `${topic}-${i}`);
  await producer.send({ topic, acks: -1, messages: values.map((value) => ({ value })) });
  await producer.disconnect();
  const consumer = kafka.consumer({ groupId: `${topic}-reader` });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const got = [];
  await new Promise((resolve, reject) => {
    const guard = setTimeout(() => reject(new Error(`${topic}: ${got.length} of 20 records`)), 30000);
    consumer.run({ eachMessage: async ({ message }) => {
      got.push(message.value.toString());
      if (got.length === values.length) { clearTimeout(guard); resolve(); }
    } });
  });
  await consumer.disconnect();
  expect(JSON.stringify(got) === JSON.stringify(values), `${topic}: ${got}`);
}

run(async () => {
  for (const mechanism of ['scram-sha-512', 'scram-sha-256', 'plain']) {
    const kafka = client(`js-${mechanism}`, process.env.FLOE_SASL_SSL,
                         { ssl: { ca }, sasl: { mechanism, username: 'alice', password: 'alice-secret' } });
    await roundtrip(kafka, `js-${mechanism}`);
  }
  const tls = client('js-ssl', process.env.FLOE_SSL, { ssl: {
    ca, cert: fs.readFileSync(path.join(certs, 'client.pem'), 'utf8'),
    key: fs.readFileSync(path.join(certs, 'client.key'), 'utf8') } });
  await roundtrip(tls, 'js-ssl');
  const wrong = client('js-wrong', process.env.FLOE_SASL_SSL,
                       { ssl: { ca }, sasl: { mechanism: 'scram-sha-512', username: 'alice', password: 'nope' } });
  const admin = wrong.admin();
  let err = null;
  try { await admin.connect(); await admin.listTopics(); } catch (e) { err = e; }
  expect(err && /SASL|[Aa]uthentication/.test(`${err.name} ${err.message}`), `wrong password: ${err}`);
  await admin.disconnect().catch(() => {});
});
