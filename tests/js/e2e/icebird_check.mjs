// Reads a Floe table with icebird (a pure-JavaScript Iceberg reader: metadata JSON, Avro
// manifests, Parquet through hyparquet), served over a local HTTP server with range requests,
// and checks the rows against what produce.mjs sent. Paths inside Floe's metadata are absolute
// file:// URIs; the only help icebird gets is a fetch that maps them onto the HTTP server.
// usage: icebird_check.mjs WAREHOUSE_DIR NAMESPACE TABLE COUNT PARTITIONS TOPIC
import { icebergRead } from 'icebird';
import { makeRecord } from './records.mjs';
import { serveWarehouse } from './warehouse_server.mjs';

const [warehouse, ns, table, countS, partsS, topic] = process.argv.slice(2);
const count = Number(countS), partitions = Number(partsS);
const fail = (m) => { console.error(`icebird_check: ${m}`); process.exit(1); };

const files = await serveWarehouse(warehouse);
const base = files.base;

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
  files.close();
}
process.exit(0);
