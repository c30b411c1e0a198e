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


// ---------------------------------------------------------------- typed table (issue 29)
// Every Iceberg type nested at depth 3 (parquet_fixtures' typed_schema_node): values read back
// exactly by DuckDB (typed SQL, decimals as text, times as microseconds) and by hyparquet
// (decimals of more than 15 digits compared as the doubles hyparquet makes of them; exactness
// of those comes from DuckDB and Floe's own reader); logical types and field ids in
// parquet_schema(); statistics in parquet_metadata() (decimals ordered as signed numbers); the
// page index of every chunk with exact page bounds for the flat columns.
if (manifest.typed) {
  const T = manifest.typed;
  const want = readFileSync(T.rows, 'utf8').split('\n').filter((l) => l.length > 0).map((l) => JSON.parse(l));
  const agg = T.agg;
  // Canonical JSON: keys sorted, floats' special values as strings.
  const fl = (x) => {
    if (x === null || x === undefined) return null;
    if (typeof x === 'string') return x;
    if (Number.isNaN(x)) return 'NaN';
    if (x === Infinity) return 'Infinity';
    if (x === -Infinity) return '-Infinity';
    if (Object.is(x, -0)) return '-0';
    return x;
  };
  const canon = (v) => {
    if (v === undefined) return null;
    if (typeof v === 'bigint') return v.toString();
    if (Array.isArray(v)) return v.map(canon);
    if (v !== null && typeof v === 'object') {
      const o = {};
      for (const k of Object.keys(v).sort()) o[k] = canon(v[k]);
      return o;
    }
    return v;
  };
  const floatCols = ['f32', 'f64'];
  const fixFloats = (r) => {
    for (const c of floatCols) r[c] = fl(r[c]);
    if (r.rec && r.rec.items) for (const it of r.rec.items) it.w = fl(it.w);
    return r;
  };
  const wantCanon = want.map((r) => JSON.stringify(canon(fixFloats({ ...r }))));
  function compareTyped(what, rows) {
    if (!check(rows.length === want.length, `${what}: ${rows.length} rows, expected ${want.length}`)) return;
    let bad = 0;
    for (let i = 0; i < rows.length; i++) {
      const g = JSON.stringify(canon(fixFloats(rows[i])));
      if (g !== wantCanon[i]) {
        if (bad < 3) console.log(`  ${what} row ${i}:\n    got  ${g.slice(0, 1200)}\n    want ${wantCanon[i].slice(0, 1200)}`);
        bad++;
      }
    }
    check(bad === 0, `${what}: ${bad} of ${want.length} rows differ`);
  }
  const dec = (s) => { // decimal text -> [unscaled BigInt, scale]
    const neg = s.startsWith('-');
    const [a, b = ''] = (neg ? s.slice(1) : s).split('.');
    const v = BigInt(a + b);
    return [neg ? -v : v, b.length];
  };
  const decText = (v, scale) => {
    const neg = v < 0n;
    let d = (neg ? -v : v).toString().padStart(scale + 1, '0');
    return (neg ? '-' : '') + d.slice(0, d.length - scale) + (scale ? '.' + d.slice(d.length - scale) : '');
  };

  for (const f of T.files) {
    const what = path.basename(f.path);
    // --- every value, DuckDB
    const duck = await q(`SELECT id::VARCHAR AS id, flag, f32, f64,
        dec9::VARCHAR AS dec9, dec18::VARCHAR AS dec18, dec38::VARCHAR AS dec38,
        (day - DATE '1970-01-01')::VARCHAR AS day,
        datediff('microsecond', TIME '00:00:00', tod)::VARCHAR AS tod,
        epoch_us(ts)::VARCHAR AS ts, epoch_us(tstz)::VARCHAR AS tstz,
        uid::VARCHAR AS uid, kind, lower(hex(fx3)) AS fx3, lower(hex(bin)) AS bin, name, doc::VARCHAR AS doc,
        CASE WHEN rec IS NULL THEN NULL ELSE {'label': rec.label, 'items': list_transform(rec.items,
          lambda x: {'n': x.n::VARCHAR, 'w': x.w, 'tags': x.tags})} END AS rec,
        list_transform(map_entries(attrs), lambda e: {'key': e.key, 'value': CASE WHEN e.value IS NULL THEN NULL ELSE
          {'score': e.value.score::VARCHAR, 'seen': epoch_us(e.value.seen)::VARCHAR, 'on': e.value."on"} END}) AS attrs
      FROM read_parquet('${f.path}', file_row_number=true) ORDER BY file_row_number`);
    compareTyped(`${what} duckdb`, duck);

    // --- every value, hyparquet (decimals as its doubles)
    const file = await asyncBufferFromFile(f.path);
    const hy = await parquetReadObjects({
      file, compressors, utf8: false,
      parsers: {
        dateFromDays: (d) => String(d),
        timestampFromMicroseconds: (us) => String(us),
        jsonFromBytes: (b) => b && new TextDecoder().decode(b),
      },
    });
    const hyRows = hy.map((r) => {
      const o = { ...r };
      o.kind = r.kind == null ? null : new TextDecoder().decode(r.kind);
      o.fx3 = hex(r.fx3);
      o.bin = r.bin == null ? null : hex(r.bin);
      o.tod = r.tod == null ? null : String(r.tod);
      for (const c of ['dec9', 'dec18', 'dec38']) o[c] = r[c] ?? null;
      o.rec = r.rec == null ? null : { label: r.rec.label, items: r.rec.items == null ? null : r.rec.items.map((it) => ({ n: it.n == null ? null : String(it.n), w: it.w ?? null, tags: it.tags ?? null })) };
      o.attrs = r.attrs == null ? null : Object.entries(r.attrs).map(([k, v]) => ({
        key: k, value: v == null ? null : { score: v.score ?? null, seen: v.seen ?? null, on: v.on } }));
      return o;
    });
    // Decimals: hyparquet's double against the exact text (one rounding of the division).
    const close = (got, text) => {
      if (text === null) return got === null;
      if (typeof got !== 'number') return false;
      const x = Number(text);
      return Math.abs(got - x) <= Math.abs(x) * 4e-16;
    };
    let decBad = 0;
    hyRows.forEach((r, i) => {
      for (const c of ['dec9', 'dec18', 'dec38']) {
        if (!close(r[c], want[i][c])) { if (decBad++ < 3) console.log(`  ${what} hyparquet row ${i} ${c}: ${r[c]} vs ${want[i][c]}`); }
        r[c] = want[i][c];
      }
      for (const kv of r.attrs ?? []) {
        const w = (want[i].attrs ?? []).find((x) => x.key === kv.key);
        if (kv.value && w && w.value) {
          if (!close(kv.value.score, w.value.score)) decBad++;
          kv.value.score = w.value.score;
        }
      }
    });
    check(decBad === 0, `${what}: hyparquet decimals differ in ${decBad} values`);
    compareTyped(`${what} hyparquet`, hyRows);

    // --- typed SQL over the file
    const one = async (sql) => (await q(sql))[0];
    const src = `read_parquet('${f.path}')`;
    const sums = await one(`SELECT sum(dec9)::VARCHAR AS s9, sum(dec18)::VARCHAR AS s18, sum(dec38)::VARCHAR AS s38,
        min(dec38)::VARCHAR AS mn38, max(dec38)::VARCHAR AS mx38, count(*) FILTER (WHERE flag) AS trues,
        epoch_us(min(ts))::VARCHAR AS tsmin, epoch_us(max(ts))::VARCHAR AS tsmax,
        epoch_us(min(tstz))::VARCHAR AS tstzmin, epoch_us(max(tstz))::VARCHAR AS tstzmax FROM ${src}`);
    check(sums.s9 === agg.sum_dec9 && sums.s18 === agg.sum_dec18 && sums.s38 === agg.sum_dec38,
      `${what}: decimal sums ${sums.s9}/${sums.s18}/${sums.s38}, expected ${agg.sum_dec9}/${agg.sum_dec18}/${agg.sum_dec38}`);
    check(sums.mn38 === agg.min_dec38 && sums.mx38 === agg.max_dec38, `${what}: decimal(38) min/max ${sums.mn38}/${sums.mx38}`);
    check(Number(sums.trues) === agg.true_flags, `${what}: ${sums.trues} true flags, expected ${agg.true_flags}`);
    check(sums.tsmin === agg.ts_min && sums.tsmax === agg.ts_max && sums.tstzmin === agg.tstz_min && sums.tstzmax === agg.tstz_max,
      `${what}: timestamp min/max ${sums.tsmin}..${sums.tsmax} / ${sums.tstzmin}..${sums.tstzmax}`);
    const un = await one(`SELECT count(*) AS items, sum(x.n)::VARCHAR AS nsum FROM (SELECT unnest(rec.items) AS x FROM ${src})`);
    check(Number(un.items) === agg.items && un.nsum === agg.items_n_sum, `${what}: unnest ${un.items} items, sum ${un.nsum}; expected ${agg.items}, ${agg.items_n_sum}`);
    const tags = await one(`SELECT count(t) AS n FROM (SELECT unnest(x.tags) AS t FROM (SELECT unnest(rec.items) AS x FROM ${src}))`);
    check(Number(tags.n) === agg.tags, `${what}: ${tags.n} tags, expected ${agg.tags}`);
    const look = await q(`SELECT id::VARCHAR AS sid, (attrs['k-2']).score::VARCHAR AS score FROM ${src}
        WHERE list_contains(map_keys(attrs), 'k-2') ORDER BY id`);
    check(JSON.stringify(look.map((r) => [r.sid, r.score])) === JSON.stringify([...agg.lookup_k2].sort((a, b) => Number(a[0]) - Number(b[0]))),
      `${what}: map lookups of k-2 differ (${look.length} rows, expected ${agg.lookup_k2.length})`);

    // --- schema: field ids, physical and logical types
    const schema = await q(`SELECT name, type, type_length, repetition_type, converted_type, logical_type, field_id, scale, precision FROM parquet_schema('${f.path}')`);
    const ids = { id: 1, flag: 2, f32: 3, f64: 4, dec9: 5, dec18: 6, dec38: 7, day: 8, tod: 9, ts: 10, tstz: 11, uid: 12, kind: 13, fx3: 14,
      bin: 15, name: 16, doc: 17, rec: 18, label: 19, items: 20, n: 22, w: 23, tags: 24, attrs: 26, key: 27, value: 28, score: 29, seen: 30, on: 31 };
    const by = {};
    for (const s of schema) {
      if (s.name === 'list' || s.name === 'key_value' || s.name === 'typed') {
        check(s.field_id === null, `${what}: ${s.name} has field id ${s.field_id}`);
        continue;
      }
      if (s.name === 'element') continue; // two of them: 21 (struct) and 25 (string), below
      check(Number(s.field_id) === ids[s.name], `${what}: ${s.name} field_id ${s.field_id}, expected ${ids[s.name]}`);
      by[s.name] = s;
    }
    const elems = schema.filter((s) => s.name === 'element').map((s) => Number(s.field_id));
    check(JSON.stringify(elems) === '[21,25]', `${what}: element field ids ${elems}`);
    const expectType = {
      flag: ['BOOLEAN', null, null], f32: ['FLOAT', null, null], f64: ['DOUBLE', null, null],
      dec9: ['INT32', 'DECIMAL', /Decimal.*scale=2, precision=9/], dec18: ['INT64', 'DECIMAL', /Decimal.*scale=4, precision=18/],
      dec38: ['FIXED_LEN_BYTE_ARRAY', 'DECIMAL', /Decimal.*scale=10, precision=38/], day: ['INT32', 'DATE', /Date/],
      tod: ['INT64', 'TIME_MICROS', /Time.*isAdjustedToUTC=0.*MICROS=MicroSeconds/],
      ts: ['INT64', 'TIMESTAMP_MICROS', /Timestamp.*isAdjustedToUTC=0.*MICROS=MicroSeconds/],
      tstz: ['INT64', 'TIMESTAMP_MICROS', /Timestamp.*isAdjustedToUTC=1.*MICROS=MicroSeconds/],
      uid: ['FIXED_LEN_BYTE_ARRAY', null, /UUID/], kind: ['BYTE_ARRAY', 'ENUM', /Enum/], fx3: ['FIXED_LEN_BYTE_ARRAY', null, null],
      bin: ['BYTE_ARRAY', null, null], name: ['BYTE_ARRAY', 'UTF8', /String/], doc: ['BYTE_ARRAY', 'JSON', /Json/],
      items: [null, 'LIST', /List/], tags: [null, 'LIST', /List/], attrs: [null, 'MAP', /Map/], key: ['BYTE_ARRAY', 'UTF8', /String/],
      score: ['INT32', 'DECIMAL', /Decimal/], seen: ['INT64', 'TIMESTAMP_MICROS', /isAdjustedToUTC=1/], on: ['BOOLEAN', null, null],
    };
    for (const [n, [t, ct, lt]] of Object.entries(expectType)) {
      const s = by[n];
      check(s && s.type === t && s.converted_type === ct && (lt === null ? s.logical_type === null : lt.test(s.logical_type ?? '')),
        `${what}: ${n} is ${s && s.type}/${s && s.converted_type}/${s && s.logical_type}`);
    }
    check(Number(by.dec38.type_length) === 16 && Number(by.uid.type_length) === 16 && Number(by.fx3.type_length) === 3, `${what}: fixed lengths`);
    check(Number(by.dec38.scale) === 10 && Number(by.dec38.precision) === 38 && Number(by.dec9.scale) === 2, `${what}: decimal scale/precision`);
    check(by.attrs.repetition_type === 'OPTIONAL' && by.key.repetition_type === 'REQUIRED' && by.value.repetition_type === 'OPTIONAL', `${what}: map levels`);
    const types = await one(`SELECT typeof(dec38) t38, typeof(tstz) tz, typeof(ts) t, typeof(tod) tt, typeof(uid) u, typeof(attrs) m, typeof(rec) r FROM ${src} LIMIT 1`);
    check(types.t38 === 'DECIMAL(38,10)' && types.tz === 'TIMESTAMP WITH TIME ZONE' && types.t === 'TIMESTAMP' && types.tt === 'TIME' && types.u === 'UUID' &&
      /^MAP\(VARCHAR, STRUCT/.test(types.m) && /^STRUCT\("?label"? VARCHAR, items STRUCT/.test(types.r), `${what}: DuckDB types ${JSON.stringify(types)}`);

    // --- statistics per chunk (parquet_metadata) against the rows of each row group
    const meta = await q(`SELECT * FROM parquet_metadata('${f.path}') ORDER BY row_group_id, column_id`);
    let first = 0;
    const totals = {};
    for (let rg = 0; rg < f.row_group_rows.length; rg++) {
      const rows = want.slice(first, first + f.row_group_rows[rg]);
      first += f.row_group_rows[rg];
      const chunks = meta.filter((m) => Number(m.row_group_id) === rg);
      check(chunks.length === 25, `${what}: rg ${rg} has ${chunks.length} chunks`);
      for (const m of chunks) {
        const leaf = m.path_in_schema.split(', ').join('.');
        const t = (totals[leaf] ??= { size: 0, values: 0, nulls: 0 });
        t.size += Number(m.total_compressed_size);
        t.values += Number(m.num_values);
        t.nulls += Number(m.stats_null_count);
      }
      const st = Object.fromEntries(chunks.map((m) => [m.path_in_schema, m]));
      const decMinMax = (c) => {
        const vs = rows.map((r) => r[c]).filter((x) => x !== null).map((x) => dec(x)[0]);
        const sc = { dec9: 2, dec18: 4, dec38: 10 }[c];
        return [decText(vs.reduce((a, b) => (b < a ? b : a)), sc), decText(vs.reduce((a, b) => (b > a ? b : a)), sc)];
      };
      for (const c of ['dec9', 'dec18', 'dec38']) {
        const [mn, mx] = decMinMax(c);
        check(st[c].stats_min_value === mn && st[c].stats_max_value === mx, `${what}: rg ${rg} ${c} stats ${st[c].stats_min_value}/${st[c].stats_max_value}, expected ${mn}/${mx}`);
      }
      const flags = rows.map((r) => r.flag).filter((x) => x !== null);
      check(st.flag.stats_min_value === String(flags.some((x) => !x) ? false : true) && st.flag.stats_max_value === String(flags.some((x) => x)),
        `${what}: rg ${rg} flag stats ${st.flag.stats_min_value}/${st.flag.stats_max_value}`);
      const f64 = rows.map((r) => r.f64).filter((x) => typeof x === 'number');
      check(Number(st.f64.stats_min_value) === Math.min(...f64) && Number(st.f64.stats_max_value) === Math.max(...f64),
        `${what}: rg ${rg} f64 stats ${st.f64.stats_min_value}/${st.f64.stats_max_value}`);
      const uids = rows.map((r) => r.uid).filter((x) => x !== null).sort();
      check(st.uid.stats_min_value === uids[0] && st.uid.stats_max_value === uids[uids.length - 1], `${what}: rg ${rg} uuid stats`);
      const fx = rows.map((r) => r.fx3).sort();
      check(duckBlobHex(st.fx3.stats_min_value) === fx[0] && duckBlobHex(st.fx3.stats_max_value) === fx[fx.length - 1],
        `${what}: rg ${rg} fixed[3] stats ${st.fx3.stats_min_value}/${st.fx3.stats_max_value} (unsigned order)`);
      check(Number(st.f32.stats_null_count) === rows.filter((r) => r.f32 === null).length, `${what}: rg ${rg} f32 null count`);
    }
    // The writer's summary (Iceberg's metrics) agrees with the file; its decimal(38) bounds
    // decode (16-byte big-endian two's complement) to the signed extremes.
    for (const c of f.columns) {
      const t = totals[c.path] ?? { size: 0, values: 0, nulls: 0 };
      check(t.size === c.compressed_size && t.values === c.num_values && t.nulls === c.null_count,
        `${what}: summary of ${c.path} (${c.compressed_size}/${c.num_values}/${c.null_count}) differs from the file (${JSON.stringify(t)})`);
    }
    const be = (h) => { let v = BigInt('0x' + h); if (parseInt(h.slice(0, 2), 16) >= 128) v -= 1n << BigInt(h.length * 4); return v; };
    const s38 = f.columns.find((c) => c.path === 'dec38');
    check(decText(be(s38.min), 10) === agg.min_dec38 && decText(be(s38.max), 10) === agg.max_dec38, `${what}: summary dec38 bounds`);
    check(f.columns.every((c) => c.field_id !== null), `${what}: a summary column without field id`);

    // --- page index of every chunk (hyparquet parses it); exact page bounds of flat columns
    const bytes = readFileSync(f.path);
    const view = (off, len) => ({ view: new DataView(bytes.buffer, bytes.byteOffset + Number(off), Number(len)), offset: 0 });
    const hyMeta = await parquetMetadataAsync(file);
    const le = (b, signed) => { const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
      return b.length === 4 ? BigInt(signed ? dv.getInt32(0, true) : dv.getUint32(0, true)) : dv.getBigInt64(0, true); };
    const keyOf = { // expected value -> comparable; raw plain bytes -> the same
      id: [(x) => BigInt(x), (b) => le(b, true)], day: [(x) => BigInt(x), (b) => le(b, true)], tod: [(x) => BigInt(x), (b) => le(b, true)],
      ts: [(x) => BigInt(x), (b) => le(b, true)], tstz: [(x) => BigInt(x), (b) => le(b, true)],
      dec9: [(x) => dec(x)[0], (b) => le(b, true)], dec18: [(x) => dec(x)[0], (b) => le(b, true)], dec38: [(x) => dec(x)[0], (b) => be(hex(b))],
      flag: [(x) => (x ? 1 : 0), (b) => b[0]], uid: [(x) => x.replaceAll('-', ''), (b) => hex(b)], fx3: [(x) => x, (b) => hex(b)],
      bin: [(x) => x, (b) => hex(b)], name: [(x) => hex(enc.encode(x)), (b) => hex(b)], kind: [(x) => hex(enc.encode(x)), (b) => hex(b)],
      f64: [(x) => x, (b) => new DataView(b.buffer, b.byteOffset, 8).getFloat64(0, true)],
      f32: [(x) => x, (b) => new DataView(b.buffer, b.byteOffset, 4).getFloat32(0, true)],
    };
    const numKey = (x) => (x === '-0' ? -0 : x === 'Infinity' ? Infinity : x === '-Infinity' ? -Infinity : x === 'NaN' ? NaN : x);
    let rgFirst = 0;
    for (let rg = 0; rg < hyMeta.row_groups.length; rg++) {
      const group = hyMeta.row_groups[rg];
      const nrows = Number(group.num_rows);
      const rows = want.slice(rgFirst, rgFirst + nrows);
      rgFirst += nrows;
      group.columns.forEach((cc, ci) => {
        const leaf = cc.meta_data.path_in_schema.join('.');
        const where = `${what}: rg ${rg} ${leaf} page index`;
        if (!check(cc.offset_index_offset !== undefined, `${where}: no offset index`)) return;
        const oi = readOffsetIndex(view(cc.offset_index_offset, cc.offset_index_length));
        const locs = oi.page_locations;
        const pages = locs.map((l, p) => rows.slice(Number(l.first_row_index), p + 1 < locs.length ? Number(locs[p + 1].first_row_index) : nrows));
        // Floats: a page whose values are all NaN has no bounds, so the chunk has no ColumnIndex.
        let nanOnly = false;
        if (leaf === 'f32' || leaf === 'f64')
          nanOnly = pages.some((pr) => { const v = pr.map((r) => r[leaf]).filter((x) => x !== null); return v.length > 0 && v.every((x) => x === 'NaN'); });
        if (nanOnly) {
          check(cc.column_index_offset === undefined, `${where}: a NaN-only page, yet a column index`);
          return;
        }
        if (!check(cc.column_index_offset !== undefined, `${where}: no column index`)) return;
        const cix = readColumnIndex(view(cc.column_index_offset, cc.column_index_length), { type: 'BYTE_ARRAY' }, { stringFromBytes: (b) => b });
        check(cix.null_pages.length === locs.length, `${where}: ${cix.null_pages.length} pages, offset index ${locs.length}`);
        const k = keyOf[leaf];
        if (!k) return;
        const isFloat = leaf === 'f32' || leaf === 'f64';
        const lt = (a, b) => a < b;
        pages.forEach((pr, p) => {
          let vals = pr.map((r) => r[leaf]).filter((x) => x !== null);
          check(cix.null_pages[p] === (vals.length === 0), `${where}: page ${p} null_pages`);
          if (isFloat) vals = vals.map(numKey).filter((x) => !Number.isNaN(x));
          if (vals.length === 0) return;
          const ks = vals.map(k[0]);
          let mn = ks.reduce((a, b) => (lt(b, a) ? b : a));
          let mx = ks.reduce((a, b) => (lt(a, b) ? b : a));
          const gmn = k[1](cix.min_values[p]);
          const gmx = k[1](cix.max_values[p]);
          if (isFloat) {
            // zero bounds: the min written as -0.0, the max as +0.0
            if (mn === 0) check(Object.is(gmn, -0), `${where}: page ${p} zero min not -0.0`);
            if (mx === 0) check(Object.is(gmx, 0), `${where}: page ${p} zero max not +0.0`);
            check(gmn === mn && gmx === mx, `${where}: page ${p} bounds ${gmn}/${gmx}, expected ${mn}/${mx}`);
          } else {
            check(gmn === mn && gmx === mx, `${where}: page ${p} bounds ${gmn}/${gmx}, expected ${mn}/${mx}`);
          }
        });
      });
    }
  }
}

console.log(`parquet independent readers: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
