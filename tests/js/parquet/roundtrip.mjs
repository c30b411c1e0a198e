// Independent readers check Floe's Parquet files: every value read back by DuckDB and by
// hyparquet must equal what Floe wrote, for every codec; DuckDB's parquet_metadata(),
// parquet_schema(), parquet_kv_metadata() and parquet_bloom_probe() must show the expected
// field ids, logical types, encodings, statistics, bloom filters and the figures Floe's writer
// reported (the summary Iceberg manifests are built from); hyparquet's readOffsetIndex() and
// readColumnIndex() must parse the page index of every column chunk, and its page locations,
// first rows, null pages, null counts, min/max and boundary order must match the pages' rows.
//
// usage: node roundtrip.mjs [DIR]
//   With FLOE_PARQUET_FIXTURES set (the parquet_fixtures program), runs it into
//   FLOE_PARQUET_OUT (or DIR) first; otherwise reads DIR/manifest.json as already written.

import { DuckDBInstance } from '@duckdb/node-api';
import { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects, readColumnIndex, readOffsetIndex } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

const dir = process.env.FLOE_PARQUET_OUT || process.argv[2] || '/tmp/floe-parquet-fixtures';
if (process.env.FLOE_PARQUET_FIXTURES) {
  execFileSync(process.env.FLOE_PARQUET_FIXTURES, [dir], { stdio: 'inherit' });
}
const manifest = JSON.parse(readFileSync(path.join(dir, 'manifest.json'), 'utf8'));

let passed = 0;
let failed = 0;
function check(ok, what) {
  if (ok) passed++;
  else {
    failed++;
    console.log(`FAIL: ${what}`);
  }
  return ok;
}

const enc = new TextEncoder();
function hex(bytes) {
  return Buffer.from(bytes).toString('hex');
}
// Any reader's value in the manifest's form: strings and bytes as hex, integers as decimal.
function norm(v) {
  if (v === null || v === undefined) return null;
  if (typeof v === 'string') return hex(enc.encode(v));
  if (typeof v === 'bigint' || typeof v === 'number') return v.toString();
  if (v instanceof Uint8Array) return hex(v);
  if (Array.isArray(v)) return v.map(norm);
  if (typeof v === 'object') {
    if (v.bytes instanceof Uint8Array) return hex(v.bytes);
    const o = {};
    for (const [k, x] of Object.entries(v)) o[k] = norm(x);
    return o;
  }
  throw new Error(`unexpected value type ${typeof v}`);
}
const columns = ['stream_key', 'segment_id', 'message_id', 'message_ts', 'kafka_timestamp', 'key', 'value',
  'headers', 'partition', 'offset'];
function normRow(r) {
  const o = {};
  for (const c of columns) {
    let v = norm(r[c]);
    if (c === 'headers' && v !== null) v = v.map((h) => ({ header_key: h.header_key, header_value: h.header_value ?? null }));
    o[c] = v;
  }
  return o;
}
function compareRows(what, got, want) {
  if (!check(got.length === want.length, `${what}: ${got.length} rows, expected ${want.length}`)) return;
  let bad = 0;
  for (let i = 0; i < want.length; i++) {
    const g = JSON.stringify(normRow(got[i]));
    const w = JSON.stringify(Object.fromEntries(columns.map((c) => [c, want[i][c]])));
    if (g !== w) {
      if (bad < 3) console.log(`  ${what} row ${i}:\n    got  ${g.slice(0, 400)}\n    want ${w.slice(0, 400)}`);
      bad++;
    }
  }
  check(bad === 0, `${what}: ${bad} of ${want.length} rows differ`);
}

// Byte-wise comparison of hex strings (unsigned lexicographic = comparing hex text).
const hexLess = (a, b) => a < b;
// DuckDB prints BLOB statistics with \xNN escapes for non-printable bytes and quotes.
function duckBlobHex(s) {
  const out = [];
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '\\' && s[i + 1] === 'x' && /^[0-9a-fA-F]{2}$/.test(s.slice(i + 2, i + 4))) {
      out.push(parseInt(s.slice(i + 2, i + 4), 16));
      i += 3;
    } else out.push(s.charCodeAt(i));
  }
  return hex(Uint8Array.from(out));
}

const expectedIds = {
  stream_key: 1, segment_id: 2, message_id: 3, message_ts: 4, kafka_timestamp: 5, key: 6, value: 7, headers: 8,
  partition: 9, offset: 10, element: 11, header_key: 12, header_value: 13,
};
const codecName = { none: 'UNCOMPRESSED', snappy: 'SNAPPY', gzip: 'GZIP', lz4: 'LZ4_RAW', zstd: 'ZSTD' };
const intCols = new Set(['segment_id', 'message_ts', 'kafka_timestamp', 'partition', 'offset']);
const stringCols = new Set(['stream_key', 'message_id', 'headers.list.element.header_key']);

// Leaf entries of one column for a slice of expected rows: [value|null] per entry.
function leafEntries(rows, leaf) {
  const out = [];
  for (const r of rows) {
    if (leaf === 'headers.list.element.header_key' || leaf === 'headers.list.element.header_value') {
      const f = leaf.endsWith('header_key') ? 'header_key' : 'header_value';
      if (r.headers === null || r.headers.length === 0) out.push(null);
      else for (const h of r.headers) out.push(h[f]);
    } else out.push(r[leaf]);
  }
  return out;
}

const datasets = {};
for (const [name, file] of Object.entries(manifest.datasets)) {
  datasets[name] = readFileSync(file, 'utf8').split('\n').filter((l) => l.length > 0).map((l) => JSON.parse(l));
}

const db = await DuckDBInstance.create(':memory:');
const con = await db.connect();
await con.run('SET threads=1');
async function q(sql) {
  const r = await con.runAndReadAll(sql);
  return r.getRowObjectsJS();
}

for (const f of manifest.files) {
  const what = path.basename(f.path);
  const want = datasets[f.dataset];

  // --- values, DuckDB
  const duckRows = await q(`SELECT * EXCLUDE (file_row_number) FROM read_parquet('${f.path}', file_row_number=true) ORDER BY file_row_number`);
  compareRows(`${what} duckdb`, duckRows, want);

  // --- values, hyparquet
  const file = await asyncBufferFromFile(f.path);
  const hyRows = await parquetReadObjects({ file, compressors, utf8: false });
  compareRows(`${what} hyparquet`, hyRows, want);
  const hyMeta = await parquetMetadataAsync(file);
  check(Number(hyMeta.num_rows) === want.length, `${what}: hyparquet sees ${hyMeta.num_rows} rows`);
  check(hyMeta.created_by === 'floe version 0.1.0', `${what}: created_by ${hyMeta.created_by}`);

  // --- schema: field ids and types
  const schema = await q(`SELECT name, type, repetition_type, converted_type, logical_type, field_id FROM parquet_schema('${f.path}')`);
  for (const s of schema) {
    if (s.name === 'table' || s.name === 'list') {
      check(s.field_id === null, `${what}: ${s.name} has field id ${s.field_id}`);
      continue;
    }
    check(Number(s.field_id) === expectedIds[s.name], `${what}: ${s.name} field_id ${s.field_id}, expected ${expectedIds[s.name]}`);
  }
  const byName = Object.fromEntries(schema.map((s) => [s.name, s]));
  for (const c of ['stream_key', 'message_id', 'header_key'])
    check(byName[c].converted_type === 'UTF8' && /String/.test(byName[c].logical_type ?? ''), `${what}: ${c} is not a STRING`);
  for (const c of ['key', 'value', 'header_value'])
    check(byName[c].type === 'BYTE_ARRAY' && byName[c].logical_type === null && byName[c].converted_type === null, `${what}: ${c} is not plain binary`);
  check(byName.headers.converted_type === 'LIST' && /List/.test(byName.headers.logical_type ?? ''), `${what}: headers is not a LIST`);
  check(byName.list.repetition_type === 'REPEATED' && byName.element.repetition_type === 'REQUIRED', `${what}: LIST is not 3-level`);
  check(byName.partition.type === 'INT32' && byName.offset.type === 'INT64', `${what}: integer types`);

  // --- column chunk metadata per row group
  const meta = await q(`SELECT * FROM parquet_metadata('${f.path}') ORDER BY row_group_id, column_id`);
  const rgCount = f.row_group_rows.length;
  check(meta.length === rgCount * 11, `${what}: ${meta.length} column chunks, expected ${rgCount * 11}`);
  let first = 0;
  const totals = {};
  for (let rg = 0; rg < rgCount; rg++) {
    const rows = want.slice(first, first + f.row_group_rows[rg]);
    first += f.row_group_rows[rg];
    const chunks = meta.filter((m) => Number(m.row_group_id) === rg);
    check(Number(chunks[0].row_group_num_rows) === rows.length, `${what}: row group ${rg} rows`);
    const start = chunks[0].dictionary_page_offset ?? chunks[0].data_page_offset;
    check(Number(start) === f.split_offsets[rg], `${what}: row group ${rg} starts at ${start}, split offset ${f.split_offsets[rg]}`);
    for (const m of chunks) {
      const leaf = m.path_in_schema.split(', ').join('.');
      const short = leaf.split('.').pop();
      const t = (totals[leaf] ??= { size: 0, values: 0, nulls: 0 });
      t.size += Number(m.total_compressed_size);
      t.values += Number(m.num_values);
      t.nulls += Number(m.stats_null_count);
      check(m.compression === codecName[f.codec], `${what}: ${leaf} compression ${m.compression}`);
      const encs = m.encodings.split(', ');
      if (intCols.has(short)) check(encs.includes('DELTA_BINARY_PACKED'), `${what}: ${leaf} encodings ${m.encodings}`);
      if (short === 'stream_key' || (f.dataset === 'gen' && short === 'header_key'))
        check(encs.includes('RLE_DICTIONARY') && m.dictionary_page_offset !== null, `${what}: ${leaf} not dictionary-encoded (${m.encodings})`);
      if (short === 'value' && rows.length > 1000) check(encs.includes('PLAIN'), `${what}: ${leaf} encodings ${m.encodings}`);
      const entries = leafEntries(rows, leaf);
      check(Number(m.num_values) === entries.length, `${what}: rg ${rg} ${leaf} num_values ${m.num_values}, expected ${entries.length}`);
      const present = entries.filter((e) => e !== null);
      check(Number(m.stats_null_count) === entries.length - present.length, `${what}: rg ${rg} ${leaf} null count ${m.stats_null_count}, expected ${entries.length - present.length}`);
      if (present.length === 0) continue;
      if (intCols.has(short)) {
        const nums = present.map((x) => BigInt(x));
        const mn = nums.reduce((a, b) => (b < a ? b : a));
        const mx = nums.reduce((a, b) => (b > a ? b : a));
        check(BigInt(m.stats_min_value) === mn && BigInt(m.stats_max_value) === mx,
          `${what}: rg ${rg} ${leaf} min/max ${m.stats_min_value}/${m.stats_max_value}, expected ${mn}/${mx}`);
      } else {
        const mn = present.reduce((a, b) => (hexLess(b, a) ? b : a));
        const mx = present.reduce((a, b) => (hexLess(a, b) ? b : a));
        const toHex = (s) => (stringCols.has(leaf) ? hex(enc.encode(s)) : duckBlobHex(s));
        const smin = m.stats_min_value === null ? null : toHex(m.stats_min_value);
        const smax = m.stats_max_value === null ? null : toHex(m.stats_max_value);
        if (m.min_is_exact) check(smin === mn, `${what}: rg ${rg} ${leaf} exact min differs`);
        else check(smin !== null && mn.startsWith(smin) && smin.length < mn.length, `${what}: rg ${rg} ${leaf} truncated min is not a prefix`);
        if (smax === null) check(/^(ff)+$/.test(mx.slice(0, 128)), `${what}: rg ${rg} ${leaf} max missing`);
        else if (m.max_is_exact) check(smax === mx, `${what}: rg ${rg} ${leaf} exact max differs`);
        else check(!hexLess(smax, mx) && smax !== mx && smax.length <= 128, `${what}: rg ${rg} ${leaf} truncated max is not an upper bound`);
      }
    }
    // bloom filter on key: present keys never excluded; absent keys mostly excluded
    const keyChunk = chunks.find((m) => m.path_in_schema === 'key');
    // Only printable-ASCII keys: DuckDB's parquet_bloom_probe() passes BLOB probes through text,
    // so it reports other bytes as excluded even for files DuckDB wrote itself (checked with
    // DuckDB 1.5 on its own COPY output). Floe's own reader checks binary keys (unit tests).
    const printable = (h) => /^([2-7][0-9a-f])*$/.test(h) && !/7f/.test(h);
    const keys = [...new Set(rows.map((r) => r.key).filter((k) => k !== null && printable(k)))];
    if (keys.length > 0 && f.codec === 'zstd') {
      check(keyChunk.bloom_filter_offset !== null && Number(keyChunk.bloom_filter_length) > 0, `${what}: rg ${rg} key has no bloom filter`);
      const sample = keys.filter((_, i) => i % Math.max(1, Math.floor(keys.length / 25)) === 0).slice(0, 25);
      let excluded = 0;
      for (const k of sample) {
        const r = await q(`SELECT bloom_filter_excludes FROM parquet_bloom_probe('${f.path}', 'key', from_hex('${k}')) WHERE row_group_id = ${rg}`);
        if (r[0].bloom_filter_excludes) excluded++;
      }
      check(excluded === 0, `${what}: rg ${rg} bloom filter excludes ${excluded} present keys`);
      let absentExcluded = 0;
      for (let i = 0; i < 25; i++) {
        const r = await q(`SELECT bloom_filter_excludes FROM parquet_bloom_probe('${f.path}', 'key', 'absent-key-${i}'::BLOB) WHERE row_group_id = ${rg}`);
        if (r[0].bloom_filter_excludes) absentExcluded++;
      }
      check(absentExcluded >= 22, `${what}: rg ${rg} bloom filter excludes only ${absentExcluded} of 25 absent keys`);
    }
  }
  // Floe's own summary (what Iceberg's manifest gets) agrees with what DuckDB reads.
  for (const c of f.columns) {
    const t = totals[c.path] ?? { size: 0, values: 0, nulls: 0 };
    check(t.size === c.compressed_size && t.values === c.num_values && t.nulls === c.null_count,
      `${what}: summary of ${c.path} (${c.compressed_size}/${c.num_values}/${c.null_count}) differs from the file (${JSON.stringify(t)})`);
  }
  // --- page index (ColumnIndex + OffsetIndex), parsed by hyparquet
  {
    const bytes = readFileSync(f.path);
    const view = (off, len) => ({ view: new DataView(bytes.buffer, bytes.byteOffset + Number(off), Number(len)), offset: 0 });
    const leaves = hyMeta.schema.filter((e) => !e.num_children);
    let rgFirst = 0;
    for (let rg = 0; rg < hyMeta.row_groups.length; rg++) {
      const group = hyMeta.row_groups[rg];
      const nrows = Number(group.num_rows);
      const rows = want.slice(rgFirst, rgFirst + nrows);
      rgFirst += nrows;
      group.columns.forEach((cc, ci) => {
        const md = cc.meta_data;
        const leaf = md.path_in_schema.join('.');
        const short = leaf.split('.').pop();
        const where = `${what}: rg ${rg} ${leaf} page index`;
        if (!check(cc.offset_index_offset !== undefined && cc.column_index_offset !== undefined, `${where} missing`)) return;
        const oi = readOffsetIndex(view(cc.offset_index_offset, cc.offset_index_length));
        const cix = readColumnIndex(view(cc.column_index_offset, cc.column_index_length), leaves[ci], { stringFromBytes: (b) => b });
        const locs = oi.page_locations;
        const n = locs.length;
        check(n > 0 && cix.null_pages.length === n && cix.min_values.length === n && cix.max_values.length === n &&
          cix.null_counts.length === n, `${where}: ${n} locations, ${cix.null_pages.length} null_pages`);
        // Locations: the data pages back to back from data_page_offset to the chunk end.
        const start = Number(md.dictionary_page_offset ?? md.data_page_offset);
        check(Number(locs[0].offset) === Number(md.data_page_offset), `${where}: first page at ${locs[0].offset}, data_page_offset ${md.data_page_offset}`);
        check(Number(locs[0].first_row_index) === 0, `${where}: first page starts at row ${locs[0].first_row_index}`);
        for (let p = 1; p < n; p++) {
          check(Number(locs[p].offset) === Number(locs[p - 1].offset) + locs[p - 1].compressed_page_size, `${where}: page ${p} not right after page ${p - 1}`);
          check(Number(locs[p].first_row_index) > Number(locs[p - 1].first_row_index), `${where}: page ${p} first row`);
        }
        check(Number(locs[n - 1].offset) + locs[n - 1].compressed_page_size === start + Number(md.total_compressed_size), `${where}: last page does not end the chunk`);
        // Per page: the rows it holds, their entries' nulls and bounds.
        let ascending = true;
        let prev = null;
        for (let p = 0; p < n; p++) {
          const r0 = Number(locs[p].first_row_index);
          const r1 = p + 1 < n ? Number(locs[p + 1].first_row_index) : nrows;
          const entries = leafEntries(rows.slice(r0, r1), leaf);
          const present = entries.filter((e) => e !== null);
          check(Number(cix.null_counts[p]) === entries.length - present.length, `${where}: page ${p} null count ${cix.null_counts[p]}, expected ${entries.length - present.length}`);
          check(cix.null_pages[p] === (present.length === 0), `${where}: page ${p} null_pages ${cix.null_pages[p]}`);
          if (present.length === 0) continue;
          if (intCols.has(short)) {
            const nums = present.map((x) => BigInt(x));
            const mn = nums.reduce((a, b) => (b < a ? b : a));
            const mx = nums.reduce((a, b) => (b > a ? b : a));
            check(BigInt(cix.min_values[p]) === mn && BigInt(cix.max_values[p]) === mx, `${where}: page ${p} min/max ${cix.min_values[p]}/${cix.max_values[p]}, expected ${mn}/${mx}`);
            if (prev && (BigInt(cix.min_values[p]) < prev[0] || BigInt(cix.max_values[p]) < prev[1])) ascending = false;
            prev = [BigInt(cix.min_values[p]), BigInt(cix.max_values[p])];
          } else {
            const mn = present.reduce((a, b) => (hexLess(b, a) ? b : a));
            const mx = present.reduce((a, b) => (hexLess(a, b) ? b : a));
            const smin = hex(cix.min_values[p]);
            const smax = hex(cix.max_values[p]);
            check(mn.startsWith(smin) && smin.length <= 128, `${where}: page ${p} min ${smin.slice(0, 40)} is not a prefix of ${mn.slice(0, 40)}`);
            check(!hexLess(smax, mx) && (smax.length <= 128 || smax === mx), `${where}: page ${p} max is not an upper bound`);
          }
        }
        if (short === 'offset') check(cix.boundary_order === 'ASCENDING' && ascending, `${where}: boundary order ${cix.boundary_order}`);
        if (intCols.has(short) && ascending) check(cix.boundary_order === 'ASCENDING', `${where}: ascending pages marked ${cix.boundary_order}`);
      });
    }
  }

  const kv = await q(`SELECT decode(key) AS k, decode(value) AS v FROM parquet_kv_metadata('${f.path}')`);
  if (f.dataset === 'edge') check(kv.some((r) => r.k === 'floe.test' && r.v === 'edge'), `${what}: key-value metadata missing`);
}

console.log(`parquet independent readers: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
