// A typed table through two independent Iceberg readers: iceberg-js loads it from Floe's Iceberg
// REST catalog (the schema with the `data` struct, field ids unique and unchanged across the
// schema versions evolution added), and icebird reads its rows (metadata, Avro manifests, Parquet
// through hyparquet) with the decoded fields.
// usage: typed_iceberg_check.mjs ICEBERG_REST_BASE WAREHOUSE_DIR NAMESPACE TABLE ROWS
import { serveWarehouse } from './warehouse_server.mjs';

if (!Promise.withResolvers) {
  Promise.withResolvers = () => {
    let resolve, reject;
    const promise = new Promise((a, b) => { resolve = a; reject = b; });
    return { promise, resolve, reject };
  };
}
const { IcebergRestCatalog } = await import('iceberg-js');
const { icebergRead } = await import('icebird');

const [baseUrl, warehouse, ns, table, rowsS] = process.argv.slice(2);
let failures = 0;
const ok = (cond, what) => {
  if (cond) console.log(`ok   ${what}`);
  else { console.log(`FAIL ${what}`); failures++; }
};

const catalog = new IcebergRestCatalog({ baseUrl });
const meta = await catalog.loadTable({ namespace: [ns], name: table });
const current = meta.schemas.find((s) => s['schema-id'] === meta['current-schema-id']);
const data = current.fields.find((f) => f.name === 'data');
ok(data && data.type.type === 'struct' && !data.required, 'iceberg-js: the current schema has an optional struct `data`');
const ids = [];
const walk = (t) => {
  if (!t || typeof t !== 'object') return;
  if (t.type === 'struct') for (const f of t.fields) { ids.push(f.id); walk(f.type); }
  if (t.type === 'list') { ids.push(t['element-id']); walk(t.element); }
  if (t.type === 'map') { ids.push(t['key-id'], t['value-id']); walk(t.value); }
};
walk({ type: 'struct', fields: current.fields });
ok(new Set(ids).size === ids.length, `iceberg-js: ${ids.length} field ids, all distinct`);
ok(Math.max(...ids) <= meta['last-column-id'], `iceberg-js: last-column-id ${meta['last-column-id']} covers them`);
ok(meta.schemas.length >= 3, `iceberg-js: ${meta.schemas.length} schema versions (raw, then evolved)`);
// A field keeps its id in every later schema.
const byPath = new Map();
let stable = true;
for (const s of meta.schemas) {
  const visit = (t, path) => {
    if (t?.type === 'struct') for (const f of t.fields) {
      const p = `${path}.${f.name}`;
      if (byPath.has(p) && byPath.get(p) !== f.id) stable = false;
      byPath.set(p, f.id);
      visit(f.type, p);
    }
  };
  visit({ type: 'struct', fields: s.fields }, '');
}
ok(stable, 'iceberg-js: every field keeps its id across schema versions');
const find = (t, name) => t.fields.find((f) => f.name === name);
ok(find(data.type, 'amount')?.type === 'decimal(12, 2)' || find(data.type, 'amount')?.type === 'decimal(12,2)',
  `iceberg-js: amount is ${find(data.type, 'amount')?.type}`);
ok(find(data.type, 'ts')?.type === 'timestamptz', `iceberg-js: ts is ${find(data.type, 'ts')?.type}`);

const files = await serveWarehouse(warehouse);
try {
  const rows = await icebergRead({ tableUrl: `${files.base}/${ns}/${table}` });
  ok(rows.length === Number(rowsS), `icebird: ${rows.length} rows (expected ${rowsS})`);
  const typed = rows.filter((r) => r.data);
  ok(typed.length > 0 && typed.every((r) => typeof r.data.customer?.address?.country === 'string'),
    `icebird: ${typed.length} rows with data.customer.address.country`);
} catch (e) {
  ok(false, `icebird: ${e.message}`);
} finally {
  files.close?.();
}
process.exit(failures ? 1 : 0);
