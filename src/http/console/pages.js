// The console's read-only pages. Each takes (main, args, params), renders, and may return a
// cleanup function (stops its timers) called when the route changes.
import { enc, get, getAllowing } from './api.js';
import { miniSpark, sparkline, segmentsOf, timeline } from './chart.js';
import { fmtAge, fmtBytes, fmtNum, fmtTime, h, mount, table } from './dom.js';
import { setParams } from './route.js';

const sum = (xs) => xs.reduce((a, b) => a + b, 0);
const lowest = (p) => (p.remote_start !== null && p.remote_start !== undefined ? Math.min(p.remote_start, p.local_start) : p.local_start);

async function series(name, fn) {
  try {
    const r = await get(`/v1/metrics/series?name=${enc(name)}${fn ? `&fn=${fn}` : ''}`);
    return r.series[0].points;
  } catch (e) {
    if (e.status === 404) return [];
    throw e;
  }
}

function every(ms, fn) {
  let stopped = false;
  let timer = null;
  const tick = async () => {
    if (stopped) return;
    try { await fn(); } catch (e) { /* shown by the next full render */ }
    if (!stopped) timer = setTimeout(tick, ms);
  };
  timer = setTimeout(tick, ms);
  return () => { stopped = true; clearTimeout(timer); };
}

// ---- Overview ----
export async function overview(main) {
  const draw = async () => {
    const [ready, topics, brokers, inRate, outRate, offRate, lagRec, lagSec] = await Promise.all([
      getAllowing('/readyz', [503]), get('/v1/topics'), get('/v1/brokers').catch(() => null),
      series('floe_kafka_records_in_total', 'rate'), series('floe_kafka_records_out_total', 'rate'),
      series('floe_offload_records_total', 'rate'), series('floe_offload_lag_records', 'max'),
      series('floe_offload_lag_seconds', 'max')]);
    const parts = topics.topics.flatMap((t) => t.partitions.map((p) => ({ ...p, topic: t.name })));
    const worst = parts.reduce((w, p) => (!w || p.offload_lag_records > w.offload_lag_records ? p : w), null);
    const last = (pts) => (pts.length ? pts[pts.length - 1][1] : null);
    const comps = Object.entries(ready.components || {}).map(([name, c]) => ({ name, ...c }));
    mount(main,
      h('h1', {}, 'Overview'),
      h('div', { class: 'cards' },
        h('section', { class: 'card', 'aria-label': 'Readiness' }, h('div', { class: 'muted' }, 'Readiness'),
          h('div', { class: `value ${ready.status === 'ready' ? 'up' : 'down'}` }, ready.status)),
        h('section', { class: 'card', 'aria-label': 'Topics' }, h('div', { class: 'muted' }, 'Topics / partitions'),
          h('div', { class: 'value' }, `${topics.topics.length} / ${parts.length}`)),
        h('section', { class: 'card', 'aria-label': 'Worst lake lag' }, h('div', { class: 'muted' }, 'Worst lake lag'),
          h('div', { class: 'value', id: 'worst-lag' }, worst ? `${fmtNum(worst.offload_lag_records)} records` : '—'),
          worst ? h('div', { class: 'muted' }, `${worst.topic}-${worst.partition}; oldest waiting ${fmtAge(last(lagSec))}`) : null)),
      h('h2', {}, 'Last hour'),
      h('div', { class: 'cards' },
        h('section', { class: 'card' }, h('div', { class: 'muted' }, 'Produced records/s'), h('div', { class: 'value' }, fmtNum(last(inRate), 1)), sparkline('Produced records per second', inRate, 'rec/s')),
        h('section', { class: 'card' }, h('div', { class: 'muted' }, 'Fetched records/s'), h('div', { class: 'value' }, fmtNum(last(outRate), 1)), sparkline('Fetched records per second', outRate, 'rec/s')),
        h('section', { class: 'card' }, h('div', { class: 'muted' }, 'Offloaded records/s'), h('div', { class: 'value' }, fmtNum(last(offRate), 1)), sparkline('Records offloaded to Iceberg per second', offRate, 'rec/s')),
        h('section', { class: 'card' }, h('div', { class: 'muted' }, 'Worst lake lag (records)'), h('div', { class: 'value' }, fmtNum(last(lagRec))), sparkline('Worst partition lake lag in records', lagRec, 'records')),
        h('section', { class: 'card' }, h('div', { class: 'muted' }, 'Worst lake lag (seconds)'), h('div', { class: 'value' }, fmtAge(last(lagSec))), sparkline('Worst partition lake lag in seconds', lagSec, 's'))),
      h('h2', {}, 'Brokers'),
      brokers ? table('Brokers (as Metadata lists them)', [
        { label: 'Node', num: true, get: (b) => b.node_id },
        { label: 'Address', get: (b) => `${b.host}:${b.port}` },
        { label: 'This broker', get: (b) => (b.self ? 'yes' : '') },
      ], brokers.brokers) : h('p', { class: 'muted' }, 'Not visible to you (DESCRIBE on the cluster).'),
      h('h2', {}, 'Components (/readyz)'),
      table('Components', [
        { label: 'Component', get: (c) => c.name },
        { label: 'Status', get: (c) => h('span', { class: c.status }, c.status) },
        { label: 'Detail', get: (c) => c.message },
      ], comps));
  };
  await draw();
  return every(10000, draw);
}

// ---- Topics ----
// Each topic's produce rate over the last hour (floe_kafka_records_in_total{topic}), asked in
// batches of 50 names per request (a request head is bounded at 16 KiB).
const rateName = (topic) => `floe_kafka_records_in_total{topic="${topic.replace(/[\\"]/g, (c) => `\\${c}`).replace(/\n/g, '\\n')}"}`;
async function produceRates(names) {
  const out = new Map();
  for (let i = 0; i < names.length; i += 50) {
    const batch = names.slice(i, i + 50);
    const r = await get(`/v1/metrics/series?fn=rate&${batch.map((n) => `name=${enc(rateName(n))}`).join('&')}`);
    const byName = new Map(batch.map((n) => [rateName(n), n]));
    for (const x of r.series) if (byName.has(x.name)) out.set(byName.get(x.name), x.known ? x.points : null);
  }
  return out;
}

export async function topics(main, args, params) {
  const data = await get('/v1/topics');
  const rates = await produceRates(data.topics.map((t) => t.name));
  const lastOf = (pts) => (pts && pts.length ? pts[pts.length - 1][1] : null);
  const filter = h('input', { id: 'topic-filter', type: 'search', value: params.get('q') || '', placeholder: 'name contains…' });
  const body = h('div', {});
  const draw = () => {
    const q = filter.value.trim().toLowerCase();
    const rows = data.topics.filter((t) => t.name.toLowerCase().includes(q));
    mount(body, table(`${rows.length} of ${data.topics.length} topics`, [
      { label: 'Topic', get: (t) => h('a', { href: `#/topic/${enc(t.name)}` }, t.name) },
      { label: 'Partitions', num: true, get: (t) => t.partitions.length },
      { label: 'Produced records/s', num: true, get: (t) => h('span', { class: 'rate' },
        h('span', { class: 'rate-value', 'data-topic': t.name }, fmtNum(lastOf(rates.get(t.name)), 1)), ' ',
        miniSpark(`Produce rate of ${t.name}, last hour`, rates.get(t.name) || [])) },
      { label: 'Records (both tiers)', num: true, get: (t) => fmtNum(sum(t.partitions.map((p) => p.log_end - lowest(p)))) },
      { label: 'Local records', num: true, get: (t) => fmtNum(sum(t.partitions.map((p) => p.log_end - p.local_start))) },
      { label: 'Lake lag (records)', num: true, get: (t) => fmtNum(sum(t.partitions.map((p) => p.offload_lag_records))) },
      { label: 'Lake behind by', num: true, get: (t) => (t.remote_storage_enable ? fmtAge(Math.max(0, ...t.partitions.map((p) => p.offload_lag_seconds || 0))) : '—') },
      { label: 'Tiered', get: (t) => (t.remote_storage_enable ? 'yes' : 'no') },
      { label: 'Table', get: (t) => (t.remote_storage_enable ? h('a', { href: `#/lake/${enc(t.name)}` }, `${t.table.namespace}.${t.table.name}`) : '—') },
      { label: 'Data files', num: true, get: (t) => (t.table.state ? fmtNum(t.table.state.data_files) : '—') },
    ], rows, 'no topic matches'));
  };
  filter.addEventListener('input', () => { const p = new URLSearchParams(); if (filter.value) p.set('q', filter.value); setParams(p); draw(); });
  mount(main, h('h1', {}, 'Topics'),
    h('form', { class: 'filters', role: 'search', onsubmit: (e) => e.preventDefault() }, h('label', { for: 'topic-filter' }, 'Filter topics', filter)),
    body);
  draw();
}

async function loadTable(t) {
  try {
    return await get(`/iceberg/v1/namespaces/${enc(t.table.namespace)}/tables/${enc(t.table.name)}`);
  } catch (e) {
    if (e.status === 404) return null;
    throw e;
  }
}

function positionsOf(snap) {
  try { return JSON.parse((snap.summary || {})['floe.committed-positions'] || '{}'); } catch { return {}; }
}

// ---- One topic: the log <-> lake timeline per partition, snapshots as marks, configs ----
export async function topic(main, args) {
  const name = args[0];
  const data = await get('/v1/topics');
  const t = data.topics.find((x) => x.name === name);
  if (!t) { mount(main, h('h1', {}, name), h('p', { class: 'error' }, 'No such topic (or not visible to you).')); return; }
  const [meta, configs, rates] = await Promise.all([t.remote_storage_enable ? loadTable(t) : null, get(`/v1/topics/${enc(name)}/configs`), produceRates([name])]);
  const rate = rates.get(name) || [];
  const snaps = meta ? meta.metadata.snapshots || [] : [];
  const lastSnap = snaps.length ? snaps.reduce((a, b) => (a['timestamp-ms'] > b['timestamp-ms'] ? a : b)) : null;
  const marksFor = (p) => snaps.map((s) => ({ offset: positionsOf(s)[`${name}-${p}`], label: `snapshot ${s['snapshot-id']} (${(s.summary || {}).operation}) at ${fmtTime(s['timestamp-ms'])}` }))
    .filter((m) => typeof m.offset === 'number');
  mount(main,
    h('h1', {}, `Topic ${name}`),
    h('p', {}, h('a', { href: `#/messages/${enc(name)}` }, 'Browse messages'), ' · ',
      t.remote_storage_enable ? h('a', { href: `#/lake/${enc(name)}` }, `Table ${t.table.namespace}.${t.table.name}`) : 'not tiered'),
    h('div', { class: 'cards' },
      h('section', { class: 'card' }, h('div', { class: 'muted' }, 'Lake lag'), h('div', { class: 'value' }, `${fmtNum(sum(t.partitions.map((p) => p.offload_lag_records)))} records`)),
      h('section', { class: 'card' }, h('div', { class: 'muted' }, 'Lake freshness'), h('div', { class: 'value', id: 'freshness' },
        lastSnap ? `${fmtAge((Date.now() - lastSnap['timestamp-ms']) / 1000)} since the last commit` : 'no commit yet')),
      h('section', { class: 'card', id: 'produce-rate' }, h('div', { class: 'muted' }, 'Produced records/s'),
        h('div', { class: 'value' }, fmtNum(rate.length ? rate[rate.length - 1][1] : null, 1)),
        sparkline(`Produce rate of ${name} (records per second)`, rate, 'rec/s'))),
    h('h2', {}, 'Log ↔ lake timeline'),
    h('ul', { class: 'legend' },
      h('li', {}, h('span', { class: 'swatch lake' }), 'only in the lake'),
      h('li', {}, h('span', { class: 'swatch both' }), 'in both'),
      h('li', {}, h('span', { class: 'swatch local' }), 'only in the local log'),
      h('li', {}, '| a snapshot’s committed position')),
    t.partitions.map((p) => h('figure', { class: 'timeline', 'data-partition': p.partition },
      h('figcaption', {}, `Partition ${p.partition}`), timeline(p, marksFor(p.partition)))),
    h('table', { id: 'timeline-table' }, h('caption', {}, 'Offsets per tier (the timeline as a table)'),
      h('thead', {}, h('tr', {}, ['Partition', 'Lake start', 'Local start', 'Offloaded up to', 'Log end', 'Only lake', 'Both', 'Only local'].map((l) => h('th', { scope: 'col', class: 'num' }, l)))),
      h('tbody', {}, t.partitions.map((p) => {
        const s = segmentsOf(p);
        return h('tr', { 'data-partition': p.partition }, [p.partition, p.remote_start ?? '—', p.local_start, p.offloaded_up_to, p.log_end,
          s.lakeOnly[1] - s.lakeOnly[0], Math.max(0, s.both[1] - s.both[0]), Math.max(0, s.localOnly[1] - s.localOnly[0])].map((v) => h('td', { class: 'num' }, String(v))));
      }))),
    h('h2', {}, 'Snapshots'),
    table('Iceberg snapshots (newest first)', [
      { label: 'Snapshot', get: (s) => h('a', { href: `#/lake/${enc(name)}?snapshot=${s['snapshot-id']}` }, String(s['snapshot-id'])) },
      { label: 'Committed', get: (s) => fmtTime(s['timestamp-ms']) },
      { label: 'Operation', get: (s) => (s.summary || {}).operation },
      { label: 'Positions', get: (s) => JSON.stringify(positionsOf(s)) },
    ], [...snaps].reverse().slice(0, 50)),
    h('h2', {}, 'Configs'),
    table('Topic configs and where each comes from', [
      { label: 'Name', get: (c) => c.name },
      { label: 'Value', get: (c) => c.value },
      { label: 'Source', get: (c) => c.source },
    ], configs.configs.filter((c) => c.source !== 'default').concat(configs.configs.filter((c) => c.source === 'default'))));
}

// ---- Consumer groups ----
export async function groups(main) {
  const draw = async () => {
    const data = await get('/v1/groups');
    const lagSeries = await Promise.all(data.groups.map((g) => series(`floe_group_lag_records{group="${g.group_id.replace(/[\\"]/g, (c) => `\\${c}`)}"}`, 'sum')));
    mount(main, h('h1', {}, 'Consumer groups'),
      data.groups.length ? null : h('p', { class: 'muted' }, 'No consumer groups.'),
      data.groups.map((g) => h('section', { class: 'group', 'data-group': g.group_id, 'aria-label': `Group ${g.group_id}` },
        h('h2', {}, `${g.group_id} `, h('span', { class: 'muted' }, `${g.state}${g.kind ? `, ${g.kind}` : ''}; lag ${fmtNum(g.lag_records)} records, ${fmtAge(g.max_lag_seconds)}`)),
        sparkline(`Lag of ${g.group_id} in records, last hour`, lagSeries[data.groups.indexOf(g)], 'records'),
        table('Members', [
          { label: 'Member', get: (m) => m.member_id },
          { label: 'Client', get: (m) => m.client_id },
          { label: 'Host', get: (m) => m.client_host },
          { label: 'Epoch', num: true, get: (m) => m.member_epoch ?? '—' },
          { label: 'Owns', get: (m) => (m.assignment ? m.assignment.map((a) => `${a.topic} [${a.partitions.join(', ')}]`).join('; ') || 'nothing' : '—') },
        ], g.members, 'no members'),
        table('Committed offsets and lag', [
          { label: 'Topic', get: (p) => p.topic },
          { label: 'Partition', num: true, get: (p) => p.partition },
          { label: 'Committed', num: true, get: (p) => p.committed_offset },
          { label: 'High watermark', num: true, get: (p) => p.high_watermark ?? '—' },
          { label: 'Lag (records)', num: true, get: (p) => h('span', { class: 'lag-records' }, String(p.lag_records ?? '—')) },
          { label: 'Lag (seconds)', num: true, get: (p) => h('span', { class: 'lag-seconds' }, p.lag_seconds === null ? '—' : p.lag_seconds.toFixed(1)) },
        ], g.partitions, 'nothing committed'))));
  };
  await draw();
  return every(10000, draw);
}

// An Iceberg type as text: primitives as named, struct<n fields>, list<e>, map<k, v>.
function typeName(t) {
  if (typeof t === 'string') return t;
  if (t.type === 'struct') return `struct<${t.fields.length} fields>`;
  if (t.type === 'list') return `list<${typeName(t.element)}>`;
  if (t.type === 'map') return `map<${typeName(t.key)}, ${typeName(t.value)}>`;
  return String(t.type);
}

// Every field of a schema, nested ones included, by path (data.user.id): [{id, path, type, required}].
function flatFields(fields, prefix = '') {
  const out = [];
  for (const f of fields || []) {
    const path = prefix ? `${prefix}.${f.name}` : f.name;
    out.push({ id: f.id, path, type: typeName(f.type), required: !!f.required });
    const t = f.type;
    if (t && t.type === 'struct') out.push(...flatFields(t.fields, path));
    else if (t && t.type === 'list' && t.element && t.element.type === 'struct') out.push(...flatFields(t.element.fields, `${path}[]`));
    else if (t && t.type === 'map' && t.value && t.value.type === 'struct') out.push(...flatFields(t.value.fields, `${path}{}`));
  }
  return out;
}

// A typed topic's columns: the fields of its `data` and `key_data` structs with Iceberg types.
function typedColumns(schema) {
  const typed = (schema.fields || []).filter((f) => (f.name === 'data' || f.name === 'key_data') && f.type && f.type.type === 'struct');
  if (!typed.length) return h('p', { class: 'muted', id: 'typed-columns' }, 'Untyped table: key and value are bytes (no data or key_data struct).');
  return h('div', { id: 'typed-columns' }, typed.map((f) => table(`Typed columns of ${f.name}`, [
    { label: 'Field id', num: true, get: (c) => c.id },
    { label: 'Column', get: (c) => c.path },
    { label: 'Iceberg type', get: (c) => c.type },
    { label: 'Required', get: (c) => (c.required ? 'yes' : 'no') },
  ], flatFields(f.type.fields, f.name))));
}

// Every schema of the table's metadata, oldest first, with the columns added and removed since
// the one before (matched by field id, so a rename is neither).
function schemaHistory(m) {
  const schemas = [...(m.schemas || [])].sort((a, b) => a['schema-id'] - b['schema-id']);
  const rows = schemas.map((s, i) => {
    const now = flatFields(s.fields);
    const before = i ? new Map(flatFields(schemas[i - 1].fields).map((f) => [f.id, f])) : new Map();
    const ids = new Set(now.map((f) => f.id));
    return {
      id: s['schema-id'], current: s['schema-id'] === m['current-schema-id'], columns: now.length,
      added: i ? now.filter((f) => !before.has(f.id)) : [],
      removed: i ? [...before.values()].filter((f) => !ids.has(f.id)) : [],
    };
  });
  const list = (fs) => (fs.length ? fs.map((f) => `${f.path} (${f.type})`).join(', ') : '—');
  return h('table', { id: 'schema-history' }, h('caption', {}, `${rows.length} schema version(s), oldest first`),
    h('thead', {}, h('tr', {}, ['Schema', 'Current', 'Columns', 'Added', 'Removed'].map((l, i) => h('th', { scope: 'col', class: i === 0 || i === 2 ? 'num' : null }, l)))),
    h('tbody', {}, rows.map((r) => h('tr', { 'data-schema': r.id, class: r.current ? 'current' : null },
      h('td', { class: 'num' }, String(r.id)), h('td', {}, r.current ? 'current' : ''), h('td', { class: 'num' }, String(r.columns)),
      h('td', { class: 'added' }, list(r.added)), h('td', { class: 'removed' }, list(r.removed))))));
}

// ---- Lake: tables, one table's schema/spec/properties/snapshots/health/files ----
export async function lake(main, args, params) {
  const data = await get('/v1/topics');
  const tiered = data.topics.filter((t) => t.remote_storage_enable);
  if (!args[0]) {
    mount(main, h('h1', {}, 'Lake'), table('Tables', [
      { label: 'Table', get: (t) => h('a', { href: `#/lake/${enc(t.name)}` }, `${t.table.namespace}.${t.table.name}`) },
      { label: 'Topic', get: (t) => t.name },
      { label: 'Data files', num: true, get: (t) => (t.table.state ? fmtNum(t.table.state.data_files) : '—') },
      { label: 'Small files', num: true, get: (t) => (t.table.state ? fmtNum(t.table.state.small_data_files) : '—') },
      { label: 'Snapshots', num: true, get: (t) => (t.table.state ? fmtNum(t.table.state.snapshots) : '—') },
      { label: 'Metadata', num: true, get: (t) => (t.table.state ? fmtBytes(t.table.state.metadata_bytes) : '—') },
      { label: 'Location', get: (t) => t.table.location },
    ], tiered, 'no tiered topic'));
    return;
  }
  const t = tiered.find((x) => x.name === args[0]);
  if (!t) { mount(main, h('h1', {}, 'Lake'), h('p', { class: 'error' }, `No tiered topic ${args[0]}.`)); return; }
  const [meta, files] = await Promise.all([loadTable(t), get(`/v1/topics/${enc(t.name)}/table/files`)]);
  if (!meta) { mount(main, h('h1', {}, `Table ${t.table.name}`), h('p', {}, 'Nothing offloaded yet: the table does not exist.')); return; }
  const m = meta.metadata;
  const schema = (m.schemas || []).find((s) => s['schema-id'] === m['current-schema-id']) || { fields: [] };
  const spec = (m['partition-specs'] || []).find((s) => s['spec-id'] === m['default-spec-id']) || { fields: [] };
  const snaps = m.snapshots || [];
  const chosen = params.get('snapshot');
  const state = t.table.state;
  const totals = snaps.map((s) => [s['timestamp-ms'], Number((s.summary || {})['total-records'] || 0)]);
  mount(main,
    h('h1', {}, `Table ${t.table.namespace}.${t.table.name}`),
    h('p', { class: 'muted' }, `${m.location} · format v${m['format-version']} · topic `, h('a', { href: `#/topic/${enc(t.name)}` }, t.name)),
    h('h2', {}, 'Health'),
    state ? h('div', { class: 'cards' },
      h('section', { class: 'card' }, h('div', { class: 'muted' }, 'Data files (small)'), h('div', { class: 'value' }, `${fmtNum(state.data_files)} (${fmtNum(state.small_data_files)})`)),
      h('section', { class: 'card' }, h('div', { class: 'muted' }, 'Average file'), h('div', { class: 'value' }, fmtBytes(state.avg_data_file_bytes))),
      h('section', { class: 'card' }, h('div', { class: 'muted' }, 'Snapshots / metadata'), h('div', { class: 'value' }, `${fmtNum(state.snapshots)} / ${fmtBytes(state.metadata_bytes)}`))) : h('p', { class: 'muted' }, 'Not measured (maintenance disabled).'),
    state ? table('Last maintenance runs', [
      { label: 'Kind', get: (r) => r.kind },
      { label: 'At', get: (r) => fmtTime(r.at_ms) },
      { label: 'Seconds', num: true, get: (r) => r.seconds.toFixed(3) },
      { label: 'Result', get: (r) => h('span', { class: r.ok ? 'ok' : 'down' }, r.ok ? 'ok' : 'failed') },
      { label: 'Detail', get: (r) => r.detail },
    ], Object.entries(state.last_runs || {}).map(([kind, r]) => ({ kind, ...r })), 'none yet') : null,
    h('h2', {}, 'Schema'),
    table(`Schema ${schema['schema-id']} (${(m.schemas || []).length} in history)`, [
      { label: 'Id', num: true, get: (f) => f.id },
      { label: 'Name', get: (f) => f.name },
      { label: 'Type', get: (f) => typeName(f.type) },
      { label: 'Required', get: (f) => (f.required ? 'yes' : 'no') },
    ], schema.fields),
    typedColumns(schema),
    h('h2', {}, 'Schema history'),
    schemaHistory(m),
    h('h2', {}, 'Partition spec'),
    table(`Spec ${spec['spec-id']}`, [
      { label: 'Name', get: (f) => f.name },
      { label: 'Transform', get: (f) => f.transform },
      { label: 'Source field', num: true, get: (f) => f['source-id'] },
    ], spec.fields, 'unpartitioned'),
    h('h2', {}, 'Properties'),
    table('Table properties', [{ label: 'Key', get: (p) => p[0] }, { label: 'Value', get: (p) => p[1] }], Object.entries(m.properties || {})),
    h('h2', {}, 'Snapshots'),
    sparkline('Total records by snapshot time', totals, 'records'),
    table('Snapshot timeline (newest first)', [
      { label: 'Snapshot', get: (s) => (String(s['snapshot-id']) === chosen ? h('strong', {}, String(s['snapshot-id'])) : String(s['snapshot-id'])) },
      { label: 'Committed', get: (s) => fmtTime(s['timestamp-ms']) },
      { label: 'Operation', get: (s) => (s.summary || {}).operation },
      { label: 'Added records', num: true, get: (s) => fmtNum(Number((s.summary || {})['added-records'] || 0)) },
      { label: 'Total records', num: true, get: (s) => fmtNum(Number((s.summary || {})['total-records'] || 0)) },
      { label: 'Added files', num: true, get: (s) => fmtNum(Number((s.summary || {})['added-data-files'] || 0)) },
      { label: 'Total size', num: true, get: (s) => fmtBytes(Number((s.summary || {})['total-files-size'] || 0)) },
    ], [...snaps].reverse().slice(0, 100)),
    h('h2', {}, 'Files of the current snapshot'),
    chosen && String(files.snapshot_id) !== chosen ? h('p', { class: 'muted' }, `Snapshot ${chosen} is not the current one; the files listed are those of the current snapshot ${files.snapshot_id}.`) : null,
    table(`Snapshot ${files.snapshot_id}: ${fmtNum(files.records)} records`, [
      { label: 'Path', get: (f) => f.path },
      { label: 'Records', num: true, get: (f) => fmtNum(f.records) },
      { label: 'Bytes', num: true, get: (f) => fmtBytes(f.bytes) },
    ], files.files));
}

// ---- Ingest ----
export async function ingest(main) {
  const draw = async () => {
    const data = await get('/v1/ingest');
    mount(main, h('h1', {}, 'Ingest'),
      data.sources.length ? null : h('p', { class: 'muted' }, 'No ingest sources configured.'),
      data.sources.map((s) => h('section', { 'aria-label': `Source ${s.name}` },
        h('h2', {}, `${s.name} `, h('span', { class: 'muted' }, `${s.type}, ${s.state}${s.paused ? ', paused' : ''}`)),
        s.last_error ? h('p', { class: 'error' }, `Last error at ${fmtTime(s.last_error_ms)}: ${s.last_error}`) : null,
        h('p', { class: 'muted' }, `errors ${s.errors}, pauses ${s.pauses}, local bytes ${fmtBytes(s.local_bytes)} of ${fmtBytes(s.max_local_bytes)}`),
        table('Partitions', [
          { label: 'Source topic', get: (p) => p.source_topic },
          { label: 'Topic', get: (p) => p.topic },
          { label: 'Partition', num: true, get: (p) => p.partition },
          { label: 'State', get: (p) => p.state },
          { label: 'Source position', num: true, get: (p) => p.source_position ?? '—' },
          { label: 'Local position', num: true, get: (p) => p.local_position },
          { label: 'Lag (records)', num: true, get: (p) => p.lag_records ?? '—' },
          { label: 'Lag', num: true, get: (p) => fmtAge(p.lag_seconds) },
        ], s.partitions))));
  };
  await draw();
  return every(10000, draw);
}

// ---- Cluster (read-only): brokers, the leases and who leads what ----
const hidden = (e) => (e.status === 403 ? null : Promise.reject(e));
export async function cluster(main) {
  const [brokers, c] = await Promise.all([get('/v1/brokers').catch(hidden), get('/v1/cluster').catch(hidden)]);
  if (!c) { mount(main, h('h1', {}, 'Cluster'), h('p', { class: 'muted' }, 'Not visible to you (DESCRIBE on the cluster).')); return; }
  const inS = (ms) => (ms ? fmtAge((ms - c.now_ms) / 1000) : '—');
  const lease = c.storage_worker_lease;
  mount(main, h('h1', {}, 'Cluster'),
    h('p', { id: 'cluster-kind' }, c.single_broker
      ? `Single broker (embedded local tier): broker ${c.node_id} leads every partition, coordinates every group and runs the storage worker; there are no shared leases.`
      : `Brokers sharing the Redis tier; this is broker ${c.node_id}. Leaders and coordinators follow rendezvous hashing over the live brokers.`),
    h('h2', {}, 'Brokers'),
    brokers ? table('Brokers (as Metadata lists them)', [
      { label: 'Node', num: true, get: (b) => b.node_id },
      { label: 'Address', get: (b) => `${b.host}:${b.port}` },
      { label: 'This broker', get: (b) => (b.self ? 'yes' : '') },
    ], brokers.brokers) : null,
    c.single_broker ? [
      h('h2', {}, 'Storage worker lease'),
      table('The storage worker’s lease (a file in the data directory)', [
        { label: 'Holder', get: (l) => l.holder },
        { label: 'Expires', get: (l) => fmtTime(l.expires_ms) },
        { label: 'Held', get: (l) => (l.held ? 'yes' : 'no (expired)') },
      ], lease ? [lease] : [], 'none (the storage worker is off or has not run)'),
    ] : [
      h('h2', {}, 'Live brokers (registry heartbeats)'),
      table('Registry', [
        { label: 'Node', num: true, get: (b) => b.node_id },
        { label: 'This broker', get: (b) => (b.self ? 'yes' : '') },
        { label: 'Heartbeat expires in', num: true, get: (b) => inS(b.heartbeat_expires_ms) },
      ], c.registry, 'none seen yet'),
      h('h2', {}, 'Partitions: leaders and storage-worker leases'),
      c.leases_error ? h('p', { class: 'error' }, `Leases unreadable: ${c.leases_error}`) : null,
      c.partitions_truncated ? h('p', { class: 'muted' }, `The first ${c.partitions.length} partitions.`) : null,
      table('Partitions', [
        { label: 'Topic', get: (p) => p.topic },
        { label: 'Partition', num: true, get: (p) => p.partition },
        { label: 'Leader', num: true, get: (p) => p.leader },
        { label: 'Lease holder', get: (p) => (p.offload_lease ? p.offload_lease.holder || '—' : '—') },
        { label: 'Epoch', num: true, get: (p) => (p.offload_lease ? p.offload_lease.epoch : '—') },
        { label: 'Lease expires in', num: true, get: (p) => (p.offload_lease && p.offload_lease.held ? inS(p.offload_lease.expires_ms) : 'free') },
      ], c.partitions, 'no partitions'),
      h('h2', {}, 'Group coordinators'),
      table('Groups', [
        { label: 'Group', get: (g) => g.group_id },
        { label: 'Coordinator', num: true, get: (g) => g.coordinator },
      ], c.groups, 'no groups'),
    ]);
}

// ---- Security (read-only): SCRAM users (names and mechanisms, never secrets) and ACLs ----
export async function security(main) {
  const [users, acls] = await Promise.all([get('/v1/security/users').catch(hidden), get('/v1/security/acls').catch(hidden)]);
  if (!users || !acls) { mount(main, h('h1', {}, 'Security'), h('p', { class: 'muted' }, 'Not visible to you (DESCRIBE on the cluster).')); return; }
  mount(main, h('h1', {}, 'Security'),
    h('h2', {}, 'Users'),
    table('SASL/SCRAM users and their mechanisms', [
      { label: 'User', get: (u) => u.name },
      { label: 'Mechanisms', get: (u) => u.mechanisms.join(', ') },
    ], users.users, 'no SCRAM user'),
    h('h2', {}, 'ACLs'),
    h('p', { id: 'acl-mode' }, acls.strict ? 'Strict: a resource no ACL names is refused.' : 'Open: a resource no ACL names is allowed.',
      ' Super users: ', acls.super_users.length ? acls.super_users.join(', ') : 'none', '.'),
    table('ACL bindings', [
      { label: 'Principal', get: (a) => a.principal },
      { label: 'Permission', get: (a) => a.permission },
      { label: 'Operation', get: (a) => a.operation },
      { label: 'Resource', get: (a) => `${a.resource_type}:${a.pattern}:${a.resource_name}` },
      { label: 'Host', get: (a) => a.host },
    ], acls.acls, 'no ACL'));
}
