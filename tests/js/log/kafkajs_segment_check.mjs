// Independent check of the local tier's on-disk format with kafkajs's own RecordBatch v2 codec
// (a real Kafka client's encoder and decoder, not Floe's):
//   gen <batches.bin> <expected.json>  encode batches as kafkajs would send them (some gzip,
//                                      some idempotent, keys/nulls/headers)
//   verify <segment.log> <expected.json> [log-append-time]
//                                      decode the segment file Floe wrote with kafkajs's fetch
//                                      decoder; check offsets are contiguous from 0, the CRC
//                                      (kafkajs crc32C over attributes..end), and every record.
import { createRequire } from 'node:module'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const here = path.dirname(fileURLToPath(import.meta.url))
const require = createRequire(path.join(here, '..', 'package.json'))
const base = 'kafkajs/src/protocol/'
const { RecordBatch } = require(base + 'recordBatch/v0/index.js')
const Record = require(base + 'recordBatch/record/v0/index.js')
const decodeBatch = require(base + 'recordBatch/v0/decoder.js')
const crc32C = require(base + 'recordBatch/crc32C/index.js')
const Decoder = require(base + 'decoder.js')
const { Types: Compression } = require(base + 'message/compression/index.js')
const Long = require('kafkajs/src/utils/long.js')

function fail(msg) {
  console.error('FAIL: ' + msg)
  process.exit(1)
}

async function gen(outBin, outJson) {
  const bufs = []
  const expected = []
  let seq = 0
  const t0 = 1767225600000
  for (let b = 0; b < 40; b++) {
    const n = 1 + (b * 7) % 13
    const recs = []
    const enc = []
    for (let i = 0; i < n; i++) {
      const key = (b + i) % 5 === 0 ? null : `key-${b}-${i}`
      const value = (b + i) % 11 === 3 ? null : `{"b":${b},"i":${i},"pad":"${'x'.repeat((b * 31 + i) % 90)}"}`
      const headers = i % 3 === 0 ? { h1: `v${i}`, trace: `t-${b}` } : {}
      const ts = t0 + b * 100 + i * 3
      recs.push({ key, value, headers, ts })
      enc.push(Record({
        offsetDelta: i, timestampDelta: ts - (t0 + b * 100),
        key: key === null ? null : Buffer.from(key),
        value: value === null ? null : Buffer.from(value),
        headers,
      }))
    }
    const idempotent = b % 4 === 1
    const batch = await RecordBatch({
      compression: b % 3 === 2 ? Compression.GZIP : Compression.None,
      firstTimestamp: t0 + b * 100,
      maxTimestamp: t0 + b * 100 + (n - 1) * 3,
      lastOffsetDelta: n - 1,
      producerId: Long.fromValue(idempotent ? 4242 : -1),
      producerEpoch: idempotent ? 0 : -1,
      firstSequence: idempotent ? seq : -1,
      records: enc,
    })
    if (idempotent) seq += n
    bufs.push(batch.buffer)
    expected.push({ records: recs, idempotent })
  }
  fs.writeFileSync(outBin, Buffer.concat(bufs))
  fs.writeFileSync(outJson, JSON.stringify(expected))
}

async function verify(segPath, expJson, lat) {
  const buf = fs.readFileSync(segPath)
  const expected = JSON.parse(fs.readFileSync(expJson, 'utf8'))
  let pos = 0
  let next = 0
  let batches = 0
  while (pos < buf.length) {
    const len = buf.readInt32BE(pos + 8)
    const one = buf.subarray(pos, pos + 12 + len)
    const stored = one.readUInt32BE(17)
    if (crc32C(one.subarray(21)) !== stored) fail(`batch ${batches}: kafkajs crc32C disagrees`)
    const d = await decodeBatch(new Decoder(one))
    const exp = expected[batches]
    if (!exp) fail(`more batches than produced`)
    if (d.firstOffset !== String(next)) fail(`batch ${batches}: first offset ${d.firstOffset}, want ${next}`)
    if (d.records.length !== exp.records.length) fail(`batch ${batches}: ${d.records.length} records`)
    if (lat && d.timestampType !== 1) fail(`batch ${batches}: not LogAppendTime`)
    if (String(d.producerId) !== (exp.idempotent ? '4242' : '-1')) fail(`batch ${batches}: producer ${d.producerId}`)
    d.records.forEach((r, i) => {
      const e = exp.records[i]
      if (r.offset !== String(next + i)) fail(`record offset ${r.offset}, want ${next + i}`)
      const key = r.key === null ? null : r.key.toString()
      const value = r.value === null ? null : r.value.toString()
      if (key !== e.key) fail(`offset ${r.offset}: key ${key} != ${e.key}`)
      if (value !== e.value) fail(`offset ${r.offset}: value differs`)
      const hk = Object.keys(r.headers).sort().join(',')
      if (hk !== Object.keys(e.headers).sort().join(',')) fail(`offset ${r.offset}: headers ${hk}`)
      for (const k of Object.keys(e.headers))
        if (r.headers[k].toString() !== e.headers[k]) fail(`offset ${r.offset}: header ${k}`)
      if (!lat && r.timestamp !== String(e.ts)) fail(`offset ${r.offset}: timestamp ${r.timestamp} != ${e.ts}`)
    })
    next += d.records.length
    pos += 12 + len
    batches++
  }
  if (batches !== expected.length) fail(`decoded ${batches} batches, produced ${expected.length}`)
  console.log(`ok: ${batches} batches, ${next} records decoded by kafkajs from ${path.basename(segPath)}`)
}

const [mode, a, b, c] = process.argv.slice(2)
if (mode === 'gen') await gen(a, b)
else if (mode === 'verify') await verify(a, b, c === 'log-append-time')
else fail('usage: gen|verify ...')
