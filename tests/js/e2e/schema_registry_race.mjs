// Registers the same schemas through several registries at once (each URL gets the whole list,
// in its own order, with a few requests in flight), then checks the answers agree: one schema,
// one id, whoever registered it; distinct schemas, distinct ids; every subject's versions list
// exactly its schemas. Prints the id map as JSON on the last line.
// usage: node schema_registry_race.mjs COUNT URL...
import assert from 'node:assert/strict';

const [countArg, ...urls] = process.argv.slice(2);
const count = Number(countArg);
const deadline = setTimeout(() => { console.error('FAIL: timed out'); process.exit(1); }, 120000);
const schemas = [];
for (let i = 0; i < count; i++)
  schemas.push({ subject: `race-${i % 10}`, schema: JSON.stringify({ type: 'record', name: `R${i}`, namespace: 'race',
    fields: [{ name: 'f', type: 'int' }] }) });

async function register(url, s) {
  for (let attempt = 0; ; attempt++) {
    const r = await fetch(`${url}/subjects/${s.subject}/versions`, {
      method: 'POST', headers: { 'Content-Type': 'application/vnd.schemaregistry.v1+json' },
      body: JSON.stringify({ schema: s.schema }) });
    const body = await r.json();
    if (r.status === 200) return body.id;
    if (attempt >= 3) throw new Error(`${url}: ${r.status} ${JSON.stringify(body)}`);
  }
}

async function run(url, order) {
  const ids = new Array(count);
  let next = 0;
  const worker = async () => { while (next < order.length) { const i = order[next++]; ids[i] = await register(url, schemas[i]); } };
  await Promise.all([worker(), worker(), worker(), worker()]);
  return ids;
}

const orders = urls.map((_, k) => {
  const o = [...Array(count).keys()];
  if (k % 2) o.reverse();
  return o;
});
// Each subject holds unrelated records: compatibility NONE (the race is about ids, not levels).
const put = await fetch(`${urls[0]}/config`, { method: 'PUT', headers: { 'Content-Type': 'application/json' },
  body: JSON.stringify({ compatibility: 'NONE' }) });
assert.equal(put.status, 200);
const t0 = Date.now();
const results = await Promise.all(urls.map((u, k) => run(u, orders[k])));
const ms = Date.now() - t0;
for (let k = 1; k < results.length; k++) assert.deepEqual(results[k], results[0], `registry ${k} disagrees with 0`);
assert.equal(new Set(results[0]).size, count, 'distinct schemas got distinct ids');
for (const u of urls)
  for (let s = 0; s < 10; s++) {
    const v = await (await fetch(`${u}/subjects/race-${s}/versions`)).json();
    assert.equal(v.length, count / 10, `race-${s} has one version per schema at ${u}`);
  }
clearTimeout(deadline);
console.log(`${count * urls.length} registrations through ${urls.length} registries in ${ms} ms: consistent`);
console.log(JSON.stringify(results[0]));
