// Reads a Floe table with icebird (a pure-JavaScript Iceberg reader: metadata JSON, Avro
// manifests, Parquet through hyparquet), served over a local HTTP server with range requests,
// and checks the rows against what produce.mjs sent. Paths inside Floe's metadata are absolute
// file:// URIs; the only help icebird gets is a fetch that maps them onto the HTTP server.
// usage: icebird_check.mjs WAREHOUSE_DIR NAMESPACE TABLE COUNT PARTITIONS TOPIC
import { createServer } from 'node:http';
import { openSync, readSync, statSync, closeSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { icebergRead } from 'icebird';
import { makeRecord } from './records.mjs';

const [warehouse, ns, table, countS, partsS, topic] = process.argv.slice(2);
const root = resolve(warehouse);
const count = Number(countS), partitions = Number(partsS);
const fail = (m) => { console.error(`icebird_check: ${m}`); process.exit(1); };

const server = createServer((req, res) => {
  const path = join(root, decodeURIComponent(new URL(req.url, 'http://x').pathname));
  if (!path.startsWith(root)) { res.writeHead(403).end(); return; }
  let size;
  try { size = statSync(path).size; } catch { res.writeHead(404).end(); return; }
  let start = 0, end = size - 1, status = 200;
  const m = /^bytes=(\d*)-(\d*)$/.exec(req.headers.range ?? '');
  if (m) {
    if (m[1] === '') { start = Math.max(0, size - Number(m[2])); } else { start = Number(m[1]); if (m[2] !== '') end = Math.min(end, Number(m[2])); }
    status = 206;
  }
  const len = Math.max(0, end - start + 1);
  const buf = Buffer.alloc(len);
  const fd = openSync(path, 'r');
  readSync(fd, buf, 0, len, start);
  closeSync(fd);
  const headers = { 'content-length': String(len), 'accept-ranges': 'bytes' };
  if (status === 206) headers['content-range'] = `bytes ${start}-${end}/${size}`;
  res.writeHead(status, headers);
  res.end(req.method === 'HEAD' ? undefined : buf);
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const base = `http://127.0.0.1:${server.address().port}`;
const realFetch = globalThis.fetch;
globalThis.fetch = (url, init) => {
  let u = typeof url === 'string' ? url : url.url ?? String(url);
  if (u.startsWith(`file://${root}/`)) u = base + u.slice(`file://${root}`.length);
  return realFetch(u, init);
};

try {
  const rows = await icebergRead({ tableUrl: `${base}/${ns}/${table}` });
  if (rows.length !== count) fail(`icebird read ${rows.length} rows, expected ${count}`);
  const seen = new Set();
  // hyparquet (under icebird) hands un-annotated BYTE_ARRAY columns (Iceberg binary) back as
  // UTF-8-decoded strings; compare those with the same decoding of the bytes that were sent.
  const text = new TextDecoder();
  const eq = (a, b) => {
    if (a == null || b == null) return a == b;
    if (typeof a === 'string') return a === text.decode(b);
    return Buffer.compare(Buffer.from(a), b) === 0;
  };
  for (const row of rows) {
    const p = Number(row.partition), off = Number(row.offset);
    const id = `${p}/${off}`;
    if (seen.has(id)) fail(`row ${id} twice`);
    seen.add(id);
    const exp = makeRecord(off * partitions + p);
    if (row.stream_key !== `${topic}-${p}`) fail(`${id}: stream_key ${row.stream_key}`);
    if (!eq(row.key, exp.key)) fail(`${id}: key differs`);
    if (!eq(row.value, exp.value)) fail(`${id}: value differs: ${JSON.stringify(row.value)?.slice(0, 80)} vs ${exp.value}`);
    const hs = row.headers ?? [];
    if (hs.length !== exp.headerList.length) fail(`${id}: ${hs.length} headers, expected ${exp.headerList.length}`);
    hs.forEach((h, i) => {
      if (h.header_key !== exp.headerList[i][0] || !eq(h.header_value, exp.headerList[i][1])) fail(`${id}: header ${i} differs`);
    });
  }
  console.log(`icebird_check: icebird read ${rows.length} rows of ${ns}.${table}, each once, matching what was produced`);
} finally {
  server.close();
}
process.exit(0);
