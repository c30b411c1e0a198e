// Load for the schema registry benchmark: registration rate (sequential, then with CLIENTS in
// flight), then GET requests with CLIENTS concurrent keep-alive clients for SECONDS against
// each named target, printing requests/s and latency percentiles per target. The peer is
// measured by the same client in the same run.
// usage: node schema_registry_load.mjs REGISTRY_URL SCHEMAS CLIENTS SECONDS NAME=URL...
import http from 'node:http';

const [registry, schemasArg, clientsArg, secondsArg, ...targets] = process.argv.slice(2);
const nSchemas = Number(schemasArg), clients = Number(clientsArg), seconds = Number(secondsArg);
const agent = new http.Agent({ keepAlive: true, maxSockets: clients });

function request(url, method = 'GET', body = null) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, agent, headers: body ? { 'Content-Type': 'application/vnd.schemaregistry.v1+json',
      'Content-Length': Buffer.byteLength(body) } : {} }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    if (body) req.write(body);
    req.end();
  });
}
// Every schema new, and each a compatible evolution of the previous version of its subject (a
// field with a default), so registrations include a real BACKWARD check.
const schema = (i) => JSON.stringify({ schema: JSON.stringify({ type: 'record', name: 'B', namespace: 'bench',
  fields: [{ name: 'a', type: 'long' }, { name: `f${i}`, type: ['null', 'string'], default: null }] }) });

// Registration: sequential (one client), then concurrent, each into its own subjects.
let t0 = process.hrtime.bigint();
for (let i = 0; i < nSchemas; i++) {
  const r = await request(`${registry}/subjects/bench-seq-${i % 50}/versions`, 'POST', schema(i));
  if (r.status !== 200) throw new Error(`register: ${r.status} ${r.body}`);
}
let s = Number(process.hrtime.bigint() - t0) / 1e9;
console.log(`registration, 1 client:        ${(nSchemas / s).toFixed(0)} schemas/s (${nSchemas} new schemas)`);
t0 = process.hrtime.bigint();
let next = 0;
await Promise.all([...Array(clients)].map(async () => {
  while (next < nSchemas) {
    const i = nSchemas + next++;
    const r = await request(`${registry}/subjects/bench-par-${i % 50}/versions`, 'POST', schema(i));
    if (r.status !== 200) throw new Error(`register: ${r.status} ${r.body}`);
  }
}));
s = Number(process.hrtime.bigint() - t0) / 1e9;
console.log(`registration, ${clients} clients:       ${(nSchemas / s).toFixed(0)} schemas/s (${nSchemas} new schemas)`);

async function load(name, urlOf) {
  const lat = [];
  const end = Date.now() + seconds * 1000;
  let n = 0, errors = 0;
  const t = process.hrtime.bigint();
  await Promise.all([...Array(clients)].map(async () => {
    while (Date.now() < end) {
      const a = process.hrtime.bigint();
      const r = await request(urlOf(n++));
      lat.push(Number(process.hrtime.bigint() - a) / 1e3);
      if (r.status !== 200) errors++;
    }
  }));
  const el = Number(process.hrtime.bigint() - t) / 1e9;
  lat.sort((x, y) => x - y);
  const p = (q) => lat[Math.min(lat.length - 1, Math.floor(q * lat.length))].toFixed(0);
  console.log(`${name.padEnd(32)} ${(lat.length / el).toFixed(0).padStart(7)} req/s  p50 ${p(0.5)} us  p99 ${p(0.99)} us  ` +
    `p99.9 ${p(0.999)} us  (${lat.length} requests, ${clients} clients, ${errors} errors)`);
}
for (const t of targets) {
  const [name, url] = t.split('=');
  await load(name, url.includes('{id}') ? (i) => url.replace('{id}', String(1 + (i % (2 * nSchemas)))) : () => url);
}
