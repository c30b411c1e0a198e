#!/usr/bin/python3
"""Flexible-version (KIP-482) requests against the real broker, over a raw socket, decoded by a
small Python reader written from the Kafka message definitions (compact strings/arrays, uvarint
lengths, tagged fields, request header v2, response header v1). Covers what librdkafka 2.0 and
kafkajs never send: Metadata v12, Produce v9 (and its KIP-467 record errors for keyless records
on a compacted topic), Fetch v13 (topic ids), ListOffsets v7, CreateTopics v7, DescribeCluster
v1, FindCoordinator v4, InitProducerId v4, OffsetCommit v8, OffsetFetch v8, JoinGroup v9 /
SyncGroup v5 / Heartbeat v4 / LeaveGroup v5, ApiVersions v3.
Usage: it_flexible.py <floe binary> <work dir>"""
import os
import socket
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Broker, expect, fresh_dir  # noqa: E402
from it_kcat import batch  # noqa: E402


def uvarint(n):
    out = b''
    while n >= 0x80:
        out += bytes([(n & 0x7F) | 0x80])
        n >>= 7
    return out + bytes([n])


def cstr(s):
    if s is None:
        return b'\x00'
    s = s.encode() if isinstance(s, str) else s
    return uvarint(len(s) + 1) + s


def carr(items):
    return uvarint(len(items) + 1) + b''.join(items)


TAGS = b'\x00'
# Run by tests/e2e/with_redis.sh: the local tier is Redis Streams (no compacted topics).
REDIS_TIER = 'floe.local.type=redis' in os.environ.get('E2E_EXTRA_SETS', '')


class R:
    """Reader of a flexible response body."""

    def __init__(self, data):
        self.d, self.p = data, 0

    def take(self, n):
        v = self.d[self.p:self.p + n]
        expect(len(v) == n, f'response truncated at {self.p}')
        self.p += n
        return v

    def i8(self): return struct.unpack('>b', self.take(1))[0]
    def i16(self): return struct.unpack('>h', self.take(2))[0]
    def i32(self): return struct.unpack('>i', self.take(4))[0]
    def i64(self): return struct.unpack('>q', self.take(8))[0]
    def boolean(self): return self.take(1) != b'\x00'
    def uuid(self): return self.take(16)

    def uv(self):
        n, shift = 0, 0
        while True:
            b = self.take(1)[0]
            n |= (b & 0x7F) << shift
            if not b & 0x80:
                return n
            shift += 7

    def cstr(self):
        n = self.uv()
        return None if n == 0 else self.take(n - 1).decode()

    def cbytes(self):
        n = self.uv()
        return None if n == 0 else self.take(n - 1)

    def arr(self, fn):
        n = self.uv()
        return None if n == 0 else [fn() for _ in range(n - 1)]

    def tags(self):
        for _ in range(self.uv()):
            self.uv()
            self.take(self.uv())

    def done(self):
        expect(self.p == len(self.d), f'{len(self.d) - self.p} unread bytes at the end')


class Conn:
    def __init__(self, port):
        self.s = socket.create_connection(('127.0.0.1', port), timeout=10)
        self.corr = 0

    def call(self, api, ver, body, header_v0_response=False):
        self.corr += 1
        hdr = struct.pack('>hhi', api, ver, self.corr) + struct.pack('>h', 4) + b'flex' + TAGS
        frame = hdr + body
        self.s.sendall(struct.pack('>i', len(frame)) + frame)
        n = struct.unpack('>i', self.recv(4))[0]
        data = self.recv(n)
        r = R(data)
        expect(r.i32() == self.corr, 'correlation id')
        if not header_v0_response:
            r.tags()
        return r

    def recv(self, n):
        out = b''
        while len(out) < n:
            chunk = self.s.recv(n - len(out))
            expect(chunk, 'connection closed')
            out += chunk
        return out


def record_values(data):
    """(offset, value) of every record in uncompressed v2 record batches."""
    def varint(at):
        v, shift = 0, 0
        while True:
            b = data[at]
            at += 1
            v |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                return (v >> 1) ^ -(v & 1), at
    out, at = [], 0
    while at + 61 <= len(data):
        base, length = struct.unpack('>qi', data[at:at + 12])
        end = at + 12 + length
        count = struct.unpack('>i', data[at + 57:at + 61])[0]
        pos = at + 61
        for _ in range(count):
            size, pos = varint(pos)
            rec_end = pos + size
            pos += 1  # attributes
            _, pos = varint(pos)  # timestamp delta
            delta, pos = varint(pos)
            klen, pos = varint(pos)
            pos += max(klen, 0)
            vlen, pos = varint(pos)
            out.append((base + delta, data[pos:pos + vlen] if vlen >= 0 else None))
            pos = rec_end
        at = end
    return out


def main(binary, work):
    fresh_dir(work)
    os.makedirs(work, exist_ok=True)
    b = Broker(binary, os.path.join(work, 'data'))
    b.start()
    try:
        c = Conn(b.port)
        # ApiVersions v3: flexible body, but response header v0.
        r = c.call(18, 3, cstr('floe-test') + cstr('1.0') + TAGS, header_v0_response=True)
        expect(r.i16() == 0, 'ApiVersions error')
        apis = r.arr(lambda: (r.i16(), r.i16(), r.i16(), r.tags())[:3])
        r.i32()
        r.tags()
        r.done()
        ranges = {k: (lo, hi) for k, lo, hi in apis}
        expect(ranges[1] == (4, 13) and ranges[3] == (0, 12) and ranges[0] == (3, 9), f'ranges {ranges}')

        # CreateTopics v7 with a config; the answer carries the topic id and configs.
        r = c.call(19, 7, carr([cstr('flex') + struct.pack('>ih', 2, 1) + carr([])
                                + carr([cstr('retention.ms') + cstr('123456') + TAGS]) + TAGS])
                   + struct.pack('>i', 10000) + b'\x00' + TAGS)
        r.i32()

        def created():
            name, tid, err, msg = r.cstr(), r.uuid(), r.i16(), r.cstr()
            nparts, rf = r.i32(), r.i16()
            cfgs = r.arr(lambda: (r.cstr(), r.cstr(), r.boolean(), r.i8(), r.boolean(), r.tags())[:5])
            r.tags()
            return name, tid, err, nparts, rf, cfgs
        topics = r.arr(created)
        r.tags()
        r.done()
        name, tid, err, nparts, rf, cfgs = topics[0]
        expect(name == 'flex' and err == 0 and nparts == 2 and rf == 1, f'create: {topics[0][:5]}')
        expect(tid != b'\x00' * 16, 'topic id assigned')
        cfg = {k: (v, src) for k, v, ro, src, sens in cfgs}
        expect(cfg['retention.ms'] == ('123456', 1), f'retention.ms config: {cfg.get("retention.ms")}')

        # Metadata v12: by name, then by topic id (null name).
        def metadata(topic_entry):
            r = c.call(3, 12, carr([topic_entry]) + b'\x01' + b'\x00' + TAGS)
            r.i32()
            brokers = r.arr(lambda: (r.i32(), r.cstr(), r.i32(), r.cstr(), r.tags())[:3])
            cluster, controller = r.cstr(), r.i32()

            def topic():
                err, name, tid, internal = r.i16(), r.cstr(), r.uuid(), r.boolean()
                parts = r.arr(lambda: (r.i16(), r.i32(), r.i32(), r.i32(), r.arr(r.i32), r.arr(r.i32),
                                       r.arr(r.i32), r.tags())[:5])
                r.i32()
                r.tags()
                return err, name, tid, parts
            ts = r.arr(topic)
            r.tags()
            r.done()
            return brokers, cluster, controller, ts
        brokers, cluster, controller, ts = metadata(b'\x00' * 16 + cstr('flex') + TAGS)
        expect(brokers == [(0, '127.0.0.1', b.port)] and controller == 0, f'brokers {brokers}')
        expect(ts[0][0] == 0 and ts[0][1] == 'flex' and ts[0][2] == tid and len(ts[0][3]) == 2, f'topic {ts}')
        expect(ts[0][3][1][:3] == (0, 1, 0) and ts[0][3][1][4] == [0], f'partition 1 {ts[0][3][1]}')
        _, _, _, ts = metadata(tid + cstr(None) + TAGS)
        expect(ts[0][1] == 'flex' and ts[0][0] == 0, f'metadata by topic id: {ts}')

        # Produce v9 (compact records), twice, to partition 1.
        def produce(records, acks=-1):
            r = c.call(0, 9, cstr(None) + struct.pack('>hi', acks, 5000)
                       + carr([cstr('flex') + carr([struct.pack('>i', 1) + uvarint(len(records) + 1) + records + TAGS])
                               + TAGS]) + TAGS)

            def part():
                idx, err, base, lat, lso = r.i32(), r.i16(), r.i64(), r.i64(), r.i64()
                r.arr(lambda: (r.i32(), r.cstr(), r.tags()))
                msg = r.cstr()
                r.tags()
                return idx, err, base, msg
            resp = r.arr(lambda: (r.cstr(), r.arr(part), r.tags())[:2])
            r.i32()
            r.tags()
            r.done()
            return resp[0][1][0]
        b1 = batch([b'one', b'two'])
        b2 = batch([b'three'])
        expect(produce(b1)[:3] == (1, 0, 0), 'first produce at offset 0')
        expect(produce(b2)[:3] == (1, 0, 2), 'second produce at offset 2')

        # A compacted topic refuses keyless records: INVALID_RECORD (87) with KIP-467 record
        # errors, one per keyless record (its index in the batch), and nothing appended.
        r = c.call(19, 7, carr([cstr('flexc') + struct.pack('>ih', 1, 1) + carr([])
                                + carr([cstr('cleanup.policy') + cstr('compact') + TAGS]) + TAGS])
                   + struct.pack('>i', 10000) + b'\x00' + TAGS)
        r.i32()
        made = r.arr(created)
        if REDIS_TIER:
            # floe.local.type=redis has no log cleaner: the compacted topic is refused with
            # INVALID_CONFIG (40) (src/redis_tier/README.md); nothing to produce to.
            expect(made[0][2] == 40, f'compacted topic refused on the Redis tier: {made[0][:4]}')
        else:
            expect(made[0][2] == 0, f'create compacted topic: {made[0][:4]}')
            r = c.call(0, 9, cstr(None) + struct.pack('>hi', -1, 5000)
                       + carr([cstr('flexc') + carr([struct.pack('>i', 0) + uvarint(len(b1) + 1) + b1 + TAGS])
                               + TAGS]) + TAGS)

            def cpart():
                idx, err, base, lat, lso = r.i32(), r.i16(), r.i64(), r.i64(), r.i64()
                rec_errs = r.arr(lambda: (r.i32(), r.cstr(), r.tags())[:2])
                msg = r.cstr()
                r.tags()
                return err, base, rec_errs, msg
            resp = r.arr(lambda: (r.cstr(), r.arr(cpart), r.tags())[:2])
            r.i32()
            r.tags()
            r.done()
            err, base, rec_errs, msg = resp[0][1][0]
            expect(err == 87, f'keyless produce to a compacted topic: error {err}')
            expect([i for i, _ in rec_errs] == [0, 1], f'record errors name both records: {rec_errs}')
            expect(all('key' in (m or '') for _, m in rec_errs), f'record error messages: {rec_errs}')
            expect(msg and 'compact' in msg, f'partition error message: {msg}')

        # Fetch v13 by topic id: the stored batches come back (offsets patched, CRC unchanged).
        r = c.call(1, 13, struct.pack('>iiiibii', -1, 100, 1, 1 << 20, 0, 0, -1)
                   + carr([tid + carr([struct.pack('>iiqiqi', 1, -1, 0, -1, -1, 1 << 20) + TAGS]) + TAGS])
                   + carr([]) + cstr('') + TAGS)
        r.i32()
        expect(r.i16() == 0, 'fetch error')
        r.i32()

        def fpart():
            idx, err, hw, lso, lstart = r.i32(), r.i16(), r.i64(), r.i64(), r.i64()
            r.arr(lambda: (r.i64(), r.i64(), r.tags()))
            r.i32()
            recs = r.cbytes()
            r.tags()
            return idx, err, hw, lstart, recs
        resp = r.arr(lambda: (r.uuid(), r.arr(fpart), r.tags())[:2])
        r.tags()
        r.done()
        expect(resp[0][0] == tid, 'fetch answers by topic id')
        idx, err, hw, lstart, recs = resp[0][1][0]
        expect((idx, err, hw, lstart) == (1, 0, 3, 0), f'fetch partition {(idx, err, hw, lstart)}')
        if REDIS_TIER:
            # Redis keeps one stream entry per record and rebuilds batches from them: the same
            # records at the same offsets, batch boundaries not kept.
            got = record_values(recs)
            expect(got == [(0, b'one'), (1, b'two'), (2, b'three')], f'records as produced: {got}')
        else:
            expect(len(recs) == len(b1) + len(b2), f'fetched {len(recs)} bytes')
            expect(recs[16:len(b1)] == b1[16:] and recs[len(b1) + 16:] == b2[16:], 'records as produced')
            expect(struct.unpack('>q', recs[len(b1):len(b1) + 8])[0] == 2, 'second batch base offset 2')

        # Fetch v13 with an unknown topic id.
        r = c.call(1, 13, struct.pack('>iiiibii', -1, 0, 1, 1 << 20, 0, 0, -1)
                   + carr([b'\x01' * 16 + carr([struct.pack('>iiqiqi', 0, -1, 0, -1, -1, 1 << 20) + TAGS]) + TAGS])
                   + carr([]) + cstr('') + TAGS)
        r.i32(), r.i16(), r.i32()
        resp = r.arr(lambda: (r.uuid(), r.arr(fpart), r.tags())[:2])
        expect(resp[0][1][0][1] == 100, f'UNKNOWN_TOPIC_ID: {resp[0][1][0][1]}')

        # ListOffsets v7: latest, earliest, max timestamp.
        def list_offsets(ts):
            r = c.call(2, 7, struct.pack('>ib', -1, 0)
                       + carr([cstr('flex') + carr([struct.pack('>iiq', 1, -1, ts) + TAGS]) + TAGS]) + TAGS)
            r.i32()
            resp = r.arr(lambda: (r.cstr(), r.arr(lambda: (r.i32(), r.i16(), r.i64(), r.i64(), r.i32(), r.tags())[:5]),
                                  r.tags())[:2])
            r.tags()
            r.done()
            return resp[0][1][0]
        expect(list_offsets(-1)[3] == 3, 'latest offset')
        expect(list_offsets(-2)[3] == 0, 'earliest offset')
        mt = list_offsets(-3)
        expect(mt[1] == 0 and mt[2] == 1700000000000, f'max timestamp {mt}')

        # DescribeCluster v1, FindCoordinator v4, InitProducerId v4.
        r = c.call(60, 1, b'\x00' + b'\x01' + TAGS)
        r.i32()
        expect(r.i16() == 0, 'DescribeCluster error')
        r.cstr(), r.i8()
        expect(r.cstr() == 'floe', 'cluster id')
        r.i32()
        br = r.arr(lambda: (r.i32(), r.cstr(), r.i32(), r.cstr(), r.tags())[:3])
        r.i32()
        r.tags()
        r.done()
        expect(br == [(0, '127.0.0.1', b.port)], f'cluster brokers {br}')
        r = c.call(10, 4, b'\x00' + carr([cstr('g1'), cstr('g2')]) + TAGS)
        r.i32()
        co = r.arr(lambda: (r.cstr(), r.i32(), r.cstr(), r.i32(), r.i16(), r.cstr(), r.tags())[:5])
        r.tags()
        r.done()
        expect(co == [('g1', 0, '127.0.0.1', b.port, 0), ('g2', 0, '127.0.0.1', b.port, 0)], f'coordinators {co}')
        r = c.call(22, 4, cstr(None) + struct.pack('>iqh', 60000, -1, -1) + TAGS)
        r.i32()
        err, pid, epoch = r.i16(), r.i64(), r.i16()
        r.tags()
        r.done()
        expect(err == 0 and pid >= 0 and epoch == 0, f'InitProducerId {err} {pid} {epoch}')

        # Group: JoinGroup v9, SyncGroup v5, Heartbeat v4, OffsetCommit v8, OffsetFetch v8,
        # LeaveGroup v5, DescribeGroups v5, ListGroups v4.
        def join(member):
            r = c.call(11, 9, cstr('fg') + struct.pack('>ii', 6000, 6000) + cstr(member) + cstr(None)
                       + cstr('consumer') + carr([cstr('range') + cstr(b'meta') + TAGS]) + cstr(None) + TAGS)
            r.i32()
            err, gen, ptype, pname, leader, skip, mid = (r.i16(), r.i32(), r.cstr(), r.cstr(), r.cstr(),
                                                         r.boolean(), r.cstr())
            members = r.arr(lambda: (r.cstr(), r.cstr(), r.cbytes(), r.tags())[:3])
            r.tags()
            r.done()
            return err, gen, ptype, pname, leader, mid, members
        err, gen, ptype, pname, leader, mid, members = join('')
        expect(err == 0 and gen == 1 and ptype == 'consumer' and pname == 'range' and leader == mid,
               f'join {err} {gen} {ptype} {pname}')
        expect(members == [(mid, None, b'meta')], f'leader sees itself: {members}')
        r = c.call(14, 5, cstr('fg') + struct.pack('>i', gen) + cstr(mid) + cstr(None) + cstr('consumer')
                   + cstr('range') + carr([cstr(mid) + cstr(b'ASSIGN') + TAGS]) + TAGS)
        r.i32()
        err, ptype, pname, asg = r.i16(), r.cstr(), r.cstr(), r.cbytes()
        r.tags()
        r.done()
        expect((err, ptype, pname, asg) == (0, 'consumer', 'range', b'ASSIGN'), f'sync {err} {asg}')
        r = c.call(12, 4, cstr('fg') + struct.pack('>i', gen) + cstr(mid) + cstr(None) + TAGS)
        r.i32()
        expect(r.i16() == 0, 'heartbeat')
        r = c.call(8, 8, cstr('fg') + struct.pack('>i', gen) + cstr(mid) + cstr(None)
                   + carr([cstr('flex') + carr([struct.pack('>iqi', 1, 3, -1) + cstr('md') + TAGS]) + TAGS]) + TAGS)
        r.i32()
        oc = r.arr(lambda: (r.cstr(), r.arr(lambda: (r.i32(), r.i16(), r.tags())[:2]), r.tags())[:2])
        expect(oc == [('flex', [(1, 0)])], f'offset commit {oc}')
        r = c.call(8, 8, cstr('fg') + struct.pack('>i', gen + 5) + cstr(mid) + cstr(None)
                   + carr([cstr('flex') + carr([struct.pack('>iqi', 1, 9, -1) + cstr(None) + TAGS]) + TAGS]) + TAGS)
        r.i32()
        oc = r.arr(lambda: (r.cstr(), r.arr(lambda: (r.i32(), r.i16(), r.tags())[:2]), r.tags())[:2])
        expect(oc == [('flex', [(1, 22)])], f'stale generation: ILLEGAL_GENERATION {oc}')
        r = c.call(9, 8, carr([cstr('fg') + carr([cstr('flex') + carr([struct.pack('>i', 1), struct.pack('>i', 0)])
                                                   + TAGS]) + TAGS]) + b'\x00' + TAGS)
        r.i32()

        def group():
            gid = r.cstr()
            topics = r.arr(lambda: (r.cstr(), r.arr(lambda: (r.i32(), r.i64(), r.i32(), r.cstr(), r.i16(),
                                                            r.tags())[:5]), r.tags())[:2])
            err = r.i16()
            r.tags()
            return gid, topics, err
        gs = r.arr(group)
        r.tags()
        r.done()
        expect(gs == [('fg', [('flex', [(1, 3, -1, 'md', 0), (0, -1, -1, '', 0)])], 0)], f'offset fetch {gs}')
        r = c.call(15, 5, carr([cstr('fg')]) + b'\x00' + TAGS)
        r.i32()
        dg = r.arr(lambda: (r.i16(), r.cstr(), r.cstr(), r.cstr(), r.cstr(),
                            r.arr(lambda: (r.cstr(), r.cstr(), r.cstr(), r.cstr(), r.cbytes(), r.cbytes(), r.tags())[:6]),
                            r.i32(), r.tags())[:6])
        r.tags()
        r.done()
        expect(dg[0][:5] == (0, 'fg', 'Stable', 'consumer', 'range'), f'describe group {dg[0][:5]}')
        expect(dg[0][5][0][0] == mid and dg[0][5][0][5] == b'ASSIGN', f'member {dg[0][5]}')
        r = c.call(16, 4, carr([cstr('Stable')]) + TAGS)
        r.i32()
        expect(r.i16() == 0, 'list groups error')
        lg = r.arr(lambda: (r.cstr(), r.cstr(), r.cstr(), r.tags())[:3])
        expect(lg == [('fg', 'consumer', 'Stable')], f'list groups {lg}')
        r = c.call(13, 5, cstr('fg') + carr([cstr(mid) + cstr(None) + cstr('bye') + TAGS]) + TAGS)
        r.i32()
        err = r.i16()
        lm = r.arr(lambda: (r.cstr(), r.cstr(), r.i16(), r.tags())[:3])
        r.tags()
        r.done()
        expect(err == 0 and lm == [(mid, None, 0)], f'leave {err} {lm}')

        # DeleteTopics v6 by topic id; then Metadata says it is gone.
        r = c.call(20, 6, carr([cstr(None) + tid + TAGS]) + struct.pack('>i', 5000) + TAGS)
        r.i32()
        dt = r.arr(lambda: (r.cstr(), r.uuid(), r.i16(), r.cstr(), r.tags())[:3])
        expect(dt == [('flex', tid, 0)], f'delete topics {dt}')
        r = c.call(3, 12, carr([tid + cstr(None) + TAGS]) + b'\x00' + b'\x00' + TAGS)
        r.i32()
        r.arr(lambda: (r.i32(), r.cstr(), r.i32(), r.cstr(), r.tags()))
        r.cstr(), r.i32()
        err = r.arr(lambda: (r.i16(), r.cstr(), r.uuid(), r.boolean(),
                             r.arr(lambda: None), r.i32(), r.tags())[0])
        expect(err == [100], f'deleted topic id unknown: {err}')
        expect(b.alive(), 'broker alive')
        print('flexible: PASS')
    finally:
        b.stop()


if __name__ == '__main__':
    main(sys.argv[1], sys.argv[2])
