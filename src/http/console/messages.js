// Messages: a bounded server-side search across both tiers (/v1/topics/{topic}/search) streamed
// as Server-Sent Events (records and progress as the server reads), a cursor to go on, a live
// tail (the same stream with follow=true, from the search's tail cursor), JSON/text/hex views
// and NDJSON/CSV export.
import { download, enc, get, stream } from './api.js';
import { fmtTime, h, mount } from './dom.js';
import { setParams } from './route.js';

const FIELDS = ['partition', 'from', 'offset', 'ts', 'key', 'key-prefix', 'header', 'contains', 'json', 'json-op', 'json-value', 'from-ts', 'to-ts', 'limit', 'budget'];

function decodeBytes(text, encoding) {
  if (text === null || text === undefined) return null;
  if (encoding === 'base64') return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  return new TextEncoder().encode(text);
}

function show(value, encoding, view) {
  if (value === null || value === undefined) return h('span', { class: 'muted' }, 'null');
  if (view === 'hex') {
    const b = decodeBytes(value, encoding);
    return h('pre', {}, Array.from(b.slice(0, 4096), (x) => x.toString(16).padStart(2, '0')).join(' ') + (b.length > 4096 ? ' …' : ''));
  }
  if (encoding === 'base64') return h('pre', {}, `base64:${value}`);
  if (view === 'json') {
    try { return h('pre', {}, JSON.stringify(JSON.parse(value), null, 2)); } catch { /* not JSON: as text */ }
  }
  return h('pre', {}, value);
}

export async function messages(main, args, params) {
  const topics = (await get('/v1/topics')).topics;
  const settings = await get('/v1/console/settings').catch(() => ({ export: false }));
  const name = args[0] || (topics[0] && topics[0].name);
  if (!name) { mount(main, h('h1', {}, 'Messages'), h('p', { class: 'muted' }, 'No topics.')); return; }
  const t = topics.find((x) => x.name === name);
  const view = params.get('view') || 'json';

  const input = (id, label, attrs = {}) => {
    const el = h('input', { id: `f-${id}`, name: id, value: params.get(id) || '', ...attrs });
    return [el, h('label', { for: `f-${id}` }, label, el)];
  };
  const select = (id, label, options, dflt) => {
    const el = h('select', { id: `f-${id}`, name: id }, options.map(([v, l]) => h('option', { value: v, selected: (params.get(id) || dflt) === v }, l)));
    return [el, h('label', { for: `f-${id}` }, label, el)];
  };
  const [topicSel, topicLab] = select('topic', 'Topic', topics.map((x) => [x.name, x.name]), name);
  const [partSel, partLab] = select('partition', 'Partition', [['all', 'all'], ...(t ? t.partitions.map((p) => [String(p.partition), String(p.partition)]) : [])], 'all');
  const [fromSel, fromLab] = select('from', 'Start from', [['newest', 'newest'], ['oldest', 'oldest'], ['offset', 'an offset'], ['time', 'a time']], 'newest');
  const [offIn, offLab] = input('offset', 'Offset', { type: 'number', min: 0 });
  const [tsIn, tsLab] = input('ts', 'Time (ms or ISO)', { size: 22 });
  const [keyIn, keyLab] = input('key', 'Key equals');
  const [kpIn, kpLab] = input('key-prefix', 'Key prefix');
  const [hdrIn, hdrLab] = input('header', 'Header (N or N=V)');
  const [cIn, cLab] = input('contains', 'Value contains');
  const [jIn, jLab] = input('json', 'JSON pointer', { placeholder: '/user/id', size: 12 });
  const [jopSel, jopLab] = select('json-op', 'JSON test', [['', '(auto)'], ['eq', '=='], ['lt', '<'], ['gt', '>'], ['exists', 'exists']], '');
  const [jvIn, jvLab] = input('json-value', 'JSON value', { size: 8 });
  const [ftIn, ftLab] = input('from-ts', 'From time', { size: 22 });
  const [ttIn, ttLab] = input('to-ts', 'To time', { size: 22 });
  const [limIn, limLab] = input('limit', 'Limit', { type: 'number', min: 1, max: 1000, placeholder: '50' });
  const [budIn, budLab] = input('budget', 'Scan budget', { type: 'number', min: 1, placeholder: '10000' });
  const [viewSel, viewLab] = select('view', 'Show values as', [['json', 'JSON (pretty)'], ['text', 'text'], ['hex', 'hex']], 'json');
  const fields = { partition: partSel, from: fromSel, offset: offIn, ts: tsIn, key: keyIn, 'key-prefix': kpIn, header: hdrIn, contains: cIn, json: jIn, 'json-op': jopSel, 'json-value': jvIn, 'from-ts': ftIn, 'to-ts': ttIn, limit: limIn, budget: budIn };

  const status = h('p', { class: 'status', id: 'search-status', role: 'status', 'aria-live': 'polite' });
  const tbody = h('tbody', { id: 'records' });
  const results = h('table', { id: 'results' }, h('caption', {}, `Records of ${name}`),
    h('thead', {}, h('tr', {}, ['Partition', 'Offset', 'Time', 'Tier', 'Key', 'Value', 'Headers'].map((l) => h('th', { scope: 'col' }, l)))), tbody);
  const moreBtn = h('button', { type: 'button', id: 'more', disabled: true }, 'More');
  const tailBtn = h('button', { type: 'button', id: 'tail', 'aria-pressed': 'false' }, 'Live tail');
  const exportBtns = settings.export ? [
    h('button', { type: 'button', id: 'export-ndjson', onclick: () => doExport('ndjson') }, 'Export NDJSON'),
    h('button', { type: 'button', id: 'export-csv', onclick: () => doExport('csv') }, 'Export CSV')] : [];

  const toMs = (v) => (v === '' ? '' : /^\d+$/.test(v) ? v : String(Date.parse(v)));
  function query() {
    const q = new URLSearchParams();
    for (const f of FIELDS) {
      let v = fields[f].value.trim();
      if (!v) continue;
      if (f === 'ts' || f === 'from-ts' || f === 'to-ts') v = toMs(v);
      if (f === 'offset' && fromSel.value !== 'offset') continue;
      if (f === 'ts' && fromSel.value !== 'time') continue;
      q.set(f, v);
    }
    return q;
  }
  function saveState() {
    const p = new URLSearchParams();
    for (const f of FIELDS) if (fields[f].value.trim()) p.set(f, fields[f].value.trim());
    if (viewSel.value !== 'json') p.set('view', viewSel.value);
    setParams(p);
  }
  const row = (r) => h('tr', { 'data-offset': r.offset, 'data-partition': r.partition },
    h('td', { class: 'num' }, String(r.partition)), h('td', { class: 'num' }, String(r.offset)), h('td', {}, fmtTime(r.timestamp)),
    h('td', {}, r.tier), h('td', { class: 'key' }, show(r.key, r.key_encoding, 'text')), h('td', { class: 'value' }, show(r.value, r.value_encoding, viewSel.value)),
    h('td', {}, r.headers.map((x) => h('div', {}, `${x.key}: `, show(x.value, x.value_encoding, 'text')))));

  let cursor = null, tailCursor = null, tailAbort = null, busy = false;
  // Records of this search in the order the server gives them overall ((time, partition,
  // offset), newest first when reading backward); each event's slice is merged in.
  const key = (r) => [r.timestamp, r.partition, r.offset];
  const before = (a, b) => { const x = key(a), y = key(b); for (let i = 0; i < 3; ++i) if (x[i] !== y[i]) return x[i] < y[i]; return false; };
  async function run(more) {
    if (busy) return;
    busy = true;
    try {
      const q = query();
      if (more && cursor) q.set('cursor', cursor);
      q.set('stream', 'sse');
      const backward = more && cursor ? cursor.startsWith('b:') : (q.get('from') || 'newest') === 'newest';
      const shown = [];
      if (!more) tbody.replaceChildren();
      status.classList.remove('error');
      status.textContent = 'Searching…';
      let end = null;
      await stream(`/v1/topics/${enc(name)}/search?${q}`, (ev, d) => {
        if (ev === 'records') {
          for (const rec of d.records) {
            let i = shown.length;
            while (i > 0 && (backward ? before(shown[i - 1], rec) : before(rec, shown[i - 1]))) --i;
            shown.splice(i, 0, rec);
            const tr = row(rec);
            const at = tbody.children[tbody.children.length - shown.length + 1 + i];
            if (at) tbody.insertBefore(tr, at); else tbody.append(tr);
          }
        }
        if (ev === 'records' || ev === 'progress') status.textContent = `Searching… read ${d.scanned} of a budget of ${d.budget}; ${tbody.children.length} records shown.`;
        if (ev === 'error') throw new Error(d.error.message);
        if (ev === 'end') end = d;
      });
      if (!end) throw new Error('the search stream ended early');
      cursor = end.cursor;
      tailCursor = end.tail_cursor;
      moreBtn.disabled = !cursor || (!backward && end.done);
      status.textContent = `${tbody.children.length} records shown; this request read ${end.scanned} of a budget of ${end.budget}${end.done ? '; reached the end' : '; more to read (More)'}.`;
    } catch (e) {
      status.textContent = `Search failed: ${e.message}`;
      status.classList.add('error');
    } finally { busy = false; }
  }
  // The live tail: one stream (follow=true) from the tail cursor; the server ends it after
  // follow-seconds and it is opened again from where it stopped.
  async function tail(signal) {
    while (!signal.aborted && tailCursor) {
      const q = query();
      q.delete('from'); q.delete('offset'); q.delete('ts');
      q.set('cursor', tailCursor);
      q.set('stream', 'sse');
      // The newest records only: with no filter the server skips what the page could not keep.
      q.set('follow', 'newest');
      status.textContent = `Tailing: ${tbody.children.length} records shown.`;
      await stream(`/v1/topics/${enc(name)}/search?${q}`, (ev, d) => {
        if (ev === 'records') {
          // Only the newest 500 are kept, so a busy topic's slice (up to 2,000 records) builds
          // rows only for the records that stay on the page.
          for (const rec of d.records.slice(-500)) tbody.prepend(row(rec));
          while (tbody.children.length > 500) tbody.lastChild.remove();
          status.textContent = `Tailing: ${tbody.children.length} records shown${d.skipped ? `; ${d.skipped.toLocaleString('en-US')} older ones skipped (newest only)` : ''}.`;
        }
        if (d.cursor) tailCursor = d.cursor;
        if (ev === 'error') throw new Error(d.error.message);
      }, signal);
    }
  }
  function setTail(on) {
    tailBtn.setAttribute('aria-pressed', String(on));
    tailBtn.textContent = on ? 'Stop tail' : 'Live tail';
    if (tailAbort) tailAbort.abort();
    tailAbort = null;
    if (!on) return;
    tailAbort = new AbortController();
    tail(tailAbort.signal).catch((e) => { status.textContent = `Tail failed: ${e.message}`; });
  }
  async function doExport(format) {
    const q = query();
    q.set('format', format);
    try { await download(`/v1/topics/${enc(name)}/search?${q}`, `${name}.${format}`); } catch (e) { status.textContent = `Export failed: ${e.message}`; }
  }

  const form = h('form', { class: 'filters', role: 'search', 'aria-label': 'Search records', onsubmit: (e) => { e.preventDefault(); saveState(); setTail(false); run(false); } },
    topicLab, partLab, fromLab, offLab, tsLab, keyLab, kpLab, hdrLab, cLab, jLab, jopLab, jvLab, ftLab, ttLab, limLab, budLab, viewLab,
    h('button', { type: 'submit', id: 'search' }, 'Search'));
  topicSel.addEventListener('change', () => { location.hash = `#/messages/${enc(topicSel.value)}`; });
  viewSel.addEventListener('change', () => { saveState(); run(false); });
  moreBtn.addEventListener('click', () => run(true));
  tailBtn.addEventListener('click', () => setTail(tailBtn.getAttribute('aria-pressed') !== 'true'));
  mount(main, h('h1', {}, `Messages of ${name}`), form, h('div', { class: 'toolbar' }, moreBtn, tailBtn, exportBtns), status, results);
  // A hidden tab's tail pauses (its stream closed) and goes on from its cursor when the tab is
  // shown again: a browser holds at most 6 connections per origin over HTTP/1.1, and each tail
  // holds one, so tails in background tabs would leave new tabs waiting for a connection.
  let paused = false;
  const onVisibility = () => {
    const tailing = tailBtn.getAttribute('aria-pressed') === 'true';
    if (document.hidden && tailing && tailAbort) {
      tailAbort.abort(); tailAbort = null; paused = true;
      status.textContent = `Tail paused while this tab is hidden: ${tbody.children.length} records shown.`;
    } else if (!document.hidden && paused) {
      paused = false;
      if (tailing) setTail(true);
    }
  };
  document.addEventListener('visibilitychange', onVisibility);
  await run(false);
  return () => { document.removeEventListener('visibilitychange', onVisibility); setTail(false); };
}
