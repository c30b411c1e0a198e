// Drives Floe's Iceberg REST catalog with an independent client (iceberg-js): config,
// namespaces, tables, create, commits (accepted, requirement failures, the exactly-once guard),
// and reads the Floe table with icebird through the metadata location the server returns.
// Every exchange is appended to EXCHANGES (JSON lines) for the OpenAPI schema check.
// usage: iceberg_rest_check.mjs BASE_URL EXCHANGES WAREHOUSE_DIR NAMESPACE TABLE ROWS
import { appendFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { serveWarehouse } from './warehouse_server.mjs';

// iceberg-js targets newer Node; Node 20 lacks Promise.withResolvers.
if (!Promise.withResolvers) {
  Promise.withResolvers = () => {
    let resolve, reject;
    const promise = new Promise((a, b) => { resolve = a; reject = b; });
    return { promise, resolve, reject };
  };
}
const { IcebergRestCatalog, IcebergError } = await import('iceberg-js');
const { icebergRead } = await import('icebird');

const [baseUrl, exchanges, warehouse, ns, table, rowsS] = process.argv.slice(2);
const expectedRows = Number(rowsS);
const root = resolve(warehouse);
let failures = 0;
const ok = (cond, what) => {
  if (cond) console.log(`ok   ${what}`);
  else { console.log(`FAIL ${what}`); failures++; }
};

// Every request the client makes, with the response as it saw it.
const realFetch = globalThis.fetch;
// Snapshot ids are 63-bit: JSON numbers in JavaScript lose their low digits. Requests carry
// them as "@big:<digits>" strings, written out here as the exact numbers; answers are read
// from the raw text (lastBody) where an id matters.
let lastBody = '';
const big = (digits) => `@big:${digits}`;
const recordingFetch = async (url, init = {}) => {
  if (typeof init.body === 'string') init = { ...init, body: init.body.replace(/"@big:(\d+)"/g, '$1') };
  const res = await realFetch(url, init);
  const body = await res.clone().text();
  lastBody = body;
  const u = new URL(String(url));
  appendFileSync(exchanges, JSON.stringify({ method: init.method ?? 'GET', path: u.pathname + u.search, status: res.status, body }) + '\n');
  return res;
};
const catalog = new IcebergRestCatalog({ baseUrl, fetch: recordingFetch });

async function expectError(promise, status, type, what) {
  try {
    await promise;
    ok(false, `${what}: expected ${status} ${type}, got success`);
    return null;
  } catch (e) {
    const good = e instanceof IcebergError && e.status === status && e.icebergType === type;
    ok(good, `${what}: ${e.status} ${e.icebergType}: ${e.message}`);
    return e;
  }
}

// Floe's own table, made by the storage worker.
const { namespaces } = await catalog.listNamespaces();
ok(namespaces.some((n) => n.namespace.join('.') === ns), `listNamespaces has ${ns}: ${JSON.stringify(namespaces)}`);
const nsMeta = await catalog.loadNamespaceMetadata({ namespace: [ns] });
ok(nsMeta && typeof nsMeta.properties === 'object', `loadNamespaceMetadata ${ns}`);
ok(await catalog.namespaceExists({ namespace: [ns] }), `namespaceExists ${ns}`);
ok(!(await catalog.namespaceExists({ namespace: ['no_such_ns'] })), 'namespaceExists no_such_ns is false');
const { identifiers: tables } = await catalog.listTables({ namespace: [ns] });
ok(tables.some((t) => t.name === table), `listTables has ${table}: ${JSON.stringify(tables)}`);
ok(await catalog.tableExists({ namespace: [ns], name: table }), `tableExists ${ns}.${table}`);
ok(!(await catalog.tableExists({ namespace: [ns], name: 'no_such_table' })), 'tableExists no_such_table is false');
await expectError(catalog.loadTable({ namespace: [ns], name: 'no_such_table' }), 404, 'NoSuchTableException', 'loadTable of a missing table');

const loaded = await catalog.loadTableResult({ namespace: [ns], name: table });
const rawLoaded = lastBody;
const location = loaded['metadata-location'];
const meta = loaded.metadata;
ok(typeof location === 'string' && location.startsWith('file://'), `loadTable gives metadata-location ${location}`);
const snap = meta.snapshots.find((s) => s['snapshot-id'] === meta['current-snapshot-id']);
ok(snap && snap.summary['floe.committed-positions'], 'current snapshot carries floe.committed-positions');

// icebird reads the table through the metadata location the server returned.
const files = await serveWarehouse(warehouse, realFetch);
const filesBase = files.base;
async function icebirdRows(metadataLocation) {
  const rel = metadataLocation.slice(`file://${root}`.length);
  const tableUrl = filesBase + rel.slice(0, rel.lastIndexOf('/metadata/'));
  const rows = await icebergRead({ tableUrl, metadataFileName: rel.slice(rel.lastIndexOf('/') + 1) });
  return rows;
}
try {
  const rows = await icebirdRows(location);
  const keys = new Set(rows.map((r) => `${r.partition}/${r.offset}`));
  ok(rows.length === expectedRows && keys.size === expectedRows,
     `icebird reads ${rows.length} rows (${keys.size} distinct) through ${location.slice(location.lastIndexOf('/') + 1)}, expected ${expectedRows}`);
} catch (e) {
  ok(false, `icebird read through the returned location: ${e.message}`);
}

// A compaction-like commit from outside: a new snapshot over the same manifest list that
// carries the positions forward is accepted; one that drops or moves them back is refused.
const id = { namespace: [ns], name: table };
const uuid = meta['table-uuid'];
const main = big(/"current-snapshot-id":(\d+)/.exec(rawLoaded)[1]);
const lastSeq = Number(/"last-sequence-number":(\d+)/.exec(rawLoaded)[1]);
const positions = JSON.parse(snap.summary['floe.committed-positions']);
const newSnapshot = (snapshotId, summary, parent = main, seq = lastSeq + 1) => ({
  'snapshot-id': snapshotId, 'parent-snapshot-id': parent, 'sequence-number': seq,
  'timestamp-ms': Date.now(), 'manifest-list': snap['manifest-list'], 'schema-id': meta['current-schema-id'],
  summary: { operation: 'replace', ...summary },
});
const commitOf = (snapshot) => ({
  requirements: [{ type: 'assert-table-uuid', uuid }, { type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': main }],
  updates: [{ action: 'add-snapshot', snapshot }, { action: 'set-snapshot-ref', 'ref-name': 'main', type: 'branch', 'snapshot-id': snapshot['snapshot-id'] }],
});
const dropped = await expectError(catalog.updateTable(id, commitOf(newSnapshot(7001, { operation: 'append' }))), 400, 'BadRequestException',
  'an append without floe.committed-positions is refused');
ok(dropped && /floe\.committed-positions/.test(dropped.message), 'the refusal names floe.committed-positions');
const back = Object.fromEntries(Object.entries(positions).map(([k, v]) => [k, v - 1]));
await expectError(catalog.updateTable(id, commitOf(newSnapshot(7002, { 'floe.committed-positions': JSON.stringify(back) }))),
  400, 'BadRequestException', 'a snapshot moving floe.committed-positions back is refused');
await expectError(catalog.updateTable(id, { requirements: [{ type: 'assert-table-uuid', uuid: '00000000-0000-0000-0000-000000000000' }], updates: [{ action: 'set-properties', updates: { a: 'b' } }] }),
  409, 'CommitFailedException', 'a wrong assert-table-uuid is a 409');
await expectError(catalog.updateTable(id, { requirements: [{ type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': 12345 }], updates: [{ action: 'set-properties', updates: { a: 'b' } }] }),
  409, 'CommitFailedException', 'a stale assert-ref-snapshot-id is a 409');
await expectError(catalog.updateTable(id, { requirements: [{ type: 'assert-current-schema-id', 'current-schema-id': 99 }], updates: [{ action: 'set-properties', updates: { a: 'b' } }] }),
  409, 'CommitFailedException', 'a wrong assert-current-schema-id is a 409');
const kept = { ...snap.summary };
delete kept.operation;
const accepted = await catalog.updateTable(id, {
  ...commitOf(newSnapshot(7003, { 'floe.committed-positions': snap.summary['floe.committed-positions'], 'total-records': kept['total-records'] ?? '0' })),
  updates: [...commitOf(newSnapshot(7003, { 'floe.committed-positions': snap.summary['floe.committed-positions'] })).updates,
    { action: 'set-properties', updates: { 'engine.note': 'compacted elsewhere' } }],
});
ok(accepted['metadata-location'] && accepted['metadata-location'] !== location, `a commit carrying the positions forward is accepted: ${accepted['metadata-location']}`);
ok(accepted.metadata['current-snapshot-id'] === 7003 && accepted.metadata.properties['engine.note'] === 'compacted elsewhere',
   'the committed metadata has the new snapshot on main and the property');
try {
  const rows = await icebirdRows(accepted['metadata-location']);
  ok(rows.length === expectedRows, `icebird reads ${rows.length} rows after the external commit`);
} catch (e) {
  ok(false, `icebird after the external commit: ${e.message}`);
}
await expectError(catalog.updateTable(id, commitOf(newSnapshot(7004, { 'floe.committed-positions': snap.summary['floe.committed-positions'] }))),
  409, 'CommitFailedException', 'replaying the same commit (main moved) is a 409');

// A compaction by an engine that does not know Floe's summary entry: positions carried forward.
const compaction = {
  requirements: [{ type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': 7003 }],
  updates: [{ action: 'add-snapshot', snapshot: newSnapshot(7005, {}, 7003, lastSeq + 2) },
    { action: 'set-snapshot-ref', 'ref-name': 'main', type: 'branch', 'snapshot-id': 7005 }],
};
const compacted = await catalog.updateTable(id, compaction);
const cur = compacted.metadata.snapshots.find((s) => s['snapshot-id'] === 7005);
ok(cur && cur.summary['floe.committed-positions'] === snap.summary['floe.committed-positions'],
   `a replace snapshot without the entry gets its parent's positions: ${cur && cur.summary['floe.committed-positions']}`);

// A table of another engine: create, commit properties, remove them.
await catalog.createNamespace({ namespace: ['ext'] });
await expectError(catalog.createNamespace({ namespace: ['ext'] }), 409, 'AlreadyExistsException', 'createNamespace twice');
const schema = { type: 'struct', 'schema-id': 0, fields: [
  { id: 1, name: 'id', type: 'long', required: true },
  { id: 2, name: 'msg', type: 'string', required: false },
  { id: 3, name: 'ts', type: 'timestamptz', required: false }] };
const created = await catalog.createTableResult({ namespace: ['ext'] }, {
  name: 'events', schema,
  'partition-spec': { 'spec-id': 0, fields: [{ 'source-id': 3, 'field-id': 1000, name: 'ts_day', transform: 'day' }] },
  'write-order': { 'order-id': 1, fields: [{ 'source-id': 1, transform: 'identity', direction: 'asc', 'null-order': 'nulls-first' }] },
  properties: { owner: 'e2e' },
});
ok(created['metadata-location'] && created.metadata['last-column-id'] === 3 && created.metadata.properties.owner === 'e2e',
   `createTable ext.events at ${created['metadata-location']}`);
await expectError(catalog.createTable({ namespace: ['ext'] }, { name: 'events', schema }), 409, 'AlreadyExistsException', 'createTable twice');
await expectError(catalog.createTable({ namespace: ['no_such_ns'] }, { name: 'x', schema }), 404, 'NoSuchNamespaceException', 'createTable in a missing namespace');
const evId = { namespace: ['ext'], name: 'events' };
const c1 = await catalog.updateTable(evId, {
  requirements: [{ type: 'assert-table-uuid', uuid: created.metadata['table-uuid'] }, { type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': null }],
  updates: [{ action: 'set-properties', updates: { 'write.format.default': 'parquet', temp: '1' } }],
});
ok(c1.metadata.properties.temp === '1', 'commit set-properties');
const c2 = await catalog.updateTable(evId, {
  requirements: [{ type: 'assert-last-assigned-field-id', 'last-assigned-field-id': 3 }, { type: 'assert-default-spec-id', 'default-spec-id': 0 }],
  updates: [{ action: 'remove-properties', removals: ['temp'] },
    { action: 'add-schema', schema: { ...schema, fields: [...schema.fields, { id: 4, name: 'extra', type: 'int', required: false }] } },
    { action: 'set-current-schema', 'schema-id': -1 }],
});
ok(!('temp' in c2.metadata.properties) && c2.metadata['current-schema-id'] === 1 && c2.metadata['last-column-id'] === 4,
   'commit remove-properties + add-schema + set-current-schema');
const { identifiers: evTables } = await catalog.listTables({ namespace: ['ext'] });
ok(evTables.length === 1 && evTables[0].name === 'events', 'listTables ext');
const reloaded = await catalog.loadTable(evId);
ok(reloaded['current-schema-id'] === 1, 'loadTable ext.events sees the commit');

files.close();
console.log(failures ? `${failures} check(s) failed` : 'all iceberg-js checks passed');
process.exit(failures ? 1 : 0);
