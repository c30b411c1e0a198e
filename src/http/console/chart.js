// Hand-written SVG charts. Every chart comes with a <table> of its data (in a <details>), so
// screen readers and tests read the numbers, not the pixels. Colours come from CSS classes, so
// charts follow the light/dark theme.
import { h, fmtClock, fmtNum, fmtTime } from './dom.js';

// points: [[ms, value], ...]. A line over time with its min/max labelled.
export function sparkline(title, points, unit = '') {
  const W = 280, H = 64, P = 4;
  const values = points.map((p) => p[1]);
  const max = Math.max(1e-9, ...values, 0);
  const t0 = points.length ? points[0][0] : 0, t1 = points.length ? points[points.length - 1][0] : 1;
  const x = (t) => P + ((t - t0) / Math.max(1, t1 - t0)) * (W - 2 * P);
  const y = (v) => H - 14 - (v / max) * (H - 30);
  const line = points.map((p) => `${x(p[0]).toFixed(1)},${y(p[1]).toFixed(1)}`).join(' ');
  const svg = h('svg', { viewBox: `0 0 ${W} ${H}`, width: '100%', role: 'img', 'aria-label': `${title}: ${points.length} samples, latest ${values.length ? fmtNum(values[values.length - 1], 2) : 'none'} ${unit}` },
    h('line', { class: 'axis', x1: P, x2: W - P, y1: H - 14, y2: H - 14 }),
    points.length > 1 ? h('polyline', { class: 'line', points: line }) : null,
    h('text', { x: P, y: 10 }, `max ${fmtNum(max, 1)} ${unit}`),
    points.length ? h('text', { x: P, y: H - 2 }, fmtClock(t0)) : h('text', { x: P, y: H - 2 }, 'no samples yet'),
    points.length ? h('text', { x: W - P, y: H - 2, 'text-anchor': 'end' }, fmtClock(t1)) : null);
  return h('figure', { class: 'spark' }, svg,
    h('details', {}, h('summary', {}, `${title} as a table`),
      h('table', {}, h('caption', {}, title),
        h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'time'), h('th', { scope: 'col', class: 'num' }, unit || 'value'))),
        h('tbody', {}, points.map((p) => h('tr', {}, h('td', {}, fmtTime(p[0])), h('td', { class: 'num' }, fmtNum(p[1], 3))))))));
}

// A small line for a table cell: no labels; its aria-label says the latest value (the cell's
// text shows it too).
export function miniSpark(title, points) {
  const W = 90, H = 20;
  const max = Math.max(1e-9, ...points.map((p) => p[1]));
  const t0 = points.length ? points[0][0] : 0, t1 = points.length ? points[points.length - 1][0] : 1;
  const line = points.map((p) => `${(((p[0] - t0) / Math.max(1, t1 - t0)) * W).toFixed(1)},${(H - 2 - (p[1] / max) * (H - 4)).toFixed(1)}`).join(' ');
  return h('svg', { class: 'mini', viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: 'img',
    'aria-label': `${title}: ${points.length ? `latest ${fmtNum(points[points.length - 1][1], 2)}` : 'no samples yet'}` },
  h('line', { class: 'axis', x1: 0, x2: W, y1: H - 1, y2: H - 1 }),
  points.length > 1 ? h('polyline', { class: 'line', points: line }) : null);
}

// One partition's offsets per tier: [remote_start, local_start) only in the lake,
// [local_start, offloaded) in both, [max(local_start, offloaded), log_end) only local.
// marks: [{offset, label}] (snapshots by their committed position).
export function segmentsOf(p) {
  const end = p.log_end;
  const start = p.remote_start !== null && p.remote_start !== undefined ? Math.min(p.remote_start, p.local_start) : p.local_start;
  const off = Math.min(Math.max(p.offloaded_up_to, start), end);
  const lakeOnly = [start, Math.min(p.local_start, off)];
  const both = [Math.max(p.local_start, start), Math.max(Math.max(p.local_start, start), off)];
  const localOnly = [Math.max(p.local_start, off), end];
  return { start, end, lakeOnly, both, localOnly };
}

export function timeline(p, marks) {
  const W = 600, H = 40, P = 4;
  const s = segmentsOf(p);
  const span = Math.max(1, s.end - s.start);
  const x = (o) => P + ((o - s.start) / span) * (W - 2 * P);
  const seg = (cls, [a, b], label) => (b > a ? h('rect', { class: cls, x: x(a).toFixed(1), y: 6, width: Math.max(1, x(b) - x(a)).toFixed(1), height: 18 }, h('title', {}, `${label}: offsets ${a}–${b - 1}`)) : null);
  const svg = h('svg', { viewBox: `0 0 ${W} ${H}`, width: '100%', role: 'img',
    'aria-label': `Partition ${p.partition}: lake only ${s.lakeOnly[1] - s.lakeOnly[0]}, both ${s.both[1] - s.both[0]}, local only ${s.localOnly[1] - s.localOnly[0]} records` },
    h('rect', { class: 'seg-empty', x: P, y: 6, width: W - 2 * P, height: 18 }),
    seg('seg-lake', s.lakeOnly, 'only in the lake'),
    seg('seg-both', s.both, 'in the lake and the local log'),
    seg('seg-local', s.localOnly, 'only in the local log'),
    marks.filter((m) => m.offset >= s.start && m.offset <= s.end).map((m) =>
      h('line', { class: 'mark', x1: x(m.offset).toFixed(1), x2: x(m.offset).toFixed(1), y1: 2, y2: 28 }, h('title', {}, m.label))),
    h('text', { x: P, y: 38 }, String(s.start)),
    h('text', { x: W - P, y: 38, 'text-anchor': 'end' }, String(s.end)));
  return svg;
}
