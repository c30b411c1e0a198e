// A tiny DOM helper: h('tag', {attrs}, ...children). Strings become text nodes (never HTML),
// so data shown from the broker cannot inject markup. Attributes starting with "on" are
// listeners; `false`/`null` attributes are left out. SVG tags are created in the SVG namespace.
const SVG = 'http://www.w3.org/2000/svg';
const SVG_TAGS = new Set(['svg', 'g', 'path', 'rect', 'line', 'text', 'title', 'polyline', 'circle']);

export function h(tag, attrs, ...children) {
  const el = SVG_TAGS.has(tag) ? document.createElementNS(SVG, tag) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === false || v === null || v === undefined) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

export function mount(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

// Preferences kept in localStorage (not secrets): theme and time zone.
export const prefs = {
  get utc() { return localStorage.getItem('floe.tz') !== 'local'; },
  set utc(v) { localStorage.setItem('floe.tz', v ? 'utc' : 'local'); },
  get theme() { return localStorage.getItem('floe.theme') || 'system'; },
  set theme(v) { localStorage.setItem('floe.theme', v); },
};

const pad = (n, w = 2) => String(n).padStart(w, '0');
export function fmtTime(ms) {
  if (ms === null || ms === undefined || ms < 0) return '—';
  const d = new Date(ms);
  if (prefs.utc) return d.toISOString().replace('T', ' ').replace('Z', ' UTC');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}
export function fmtClock(ms) {
  const d = new Date(ms);
  return prefs.utc ? `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}` : `${pad(d.getHours())}:${pad(d.getMinutes())}`;
}
export function fmtNum(n, digits = 0) {
  if (n === null || n === undefined || Number.isNaN(n)) return '—';
  return Number(n).toLocaleString('en-US', { maximumFractionDigits: digits });
}
export function fmtBytes(n) {
  if (n === null || n === undefined) return '—';
  const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < u.length - 1) { n /= 1024; i++; }
  return `${n.toFixed(i ? 1 : 0)} ${u[i]}`;
}
export function fmtAge(seconds) {
  if (seconds === null || seconds === undefined) return '—';
  if (seconds < 60) return `${seconds.toFixed(1)} s`;
  if (seconds < 3600) return `${(seconds / 60).toFixed(1)} min`;
  return `${(seconds / 3600).toFixed(1)} h`;
}

// A <table> from column specs [{label, num?, get(row) -> node|string}] and rows.
export function table(caption, cols, rows, empty = 'None.') {
  if (!rows.length) return h('p', { class: 'muted' }, `${caption}: ${empty}`);
  return h('table', {},
    h('caption', {}, caption),
    h('thead', {}, h('tr', {}, cols.map((c) => h('th', { scope: 'col', class: c.num ? 'num' : null }, c.label)))),
    h('tbody', {}, rows.map((r) => h('tr', {}, cols.map((c) => h('td', { class: c.num ? 'num' : null }, c.get(r)))))));
}
