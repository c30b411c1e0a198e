#!/usr/bin/python3
"""Admin APIs that neither librdkafka 2.0 nor kafkajs send, over a raw socket against the real
broker, answers decoded by the independent Python reader of it_flexible.py (written from the
Kafka message definitions): ApiVersions ranges of the new APIs, CreatePartitions v3,
DeleteRecords v2, DescribeLogDirs v4, ElectLeaders v2, DescribeProducers v0 (after an
idempotent Produce), OffsetDelete v0 (classic), IncrementalAlterConfigs v1 and DescribeConfigs
v4 on the broker resource (synonyms, types, documentation), authorized operations in Metadata v12 /
DescribeCluster v1 / DescribeGroups v5, and Fetch v12 incremental fetch sessions (KIP-227).
Usage: it_admin_raw.py <floe binary> <work dir>"""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Broker, expect, fresh_dir  # noqa: E402
from it_flexible import Conn, R, TAGS, carr, cstr, uvarint  # noqa: E402
from it_kcat import batch  # noqa: E402

INT32_MIN = -2 ** 31


def classic_call(c, api, ver, body):
    """A request with header v1 (no tagged fields) and a response with header v0."""
    c.corr += 1
    frame = struct.pack('>hhi', api, ver, c.corr) + struct.pack('>h', 3) + b'raw' + body
    c.s.sendall(struct.pack('>i', len(frame)) + frame)
    n = struct.unpack('>i', c.recv(4))[0]
    data = c.recv(n)
    expect(struct.unpack('>i', data[:4])[0] == c.corr, 'correlation id')
    return data[4:]


def main(binary, work):
    # Run by tests/e2e/with_redis.sh: the local tier is Redis Streams.
    redis_tier = 'floe.local.type=redis' in os.environ.get('E2E_EXTRA_SETS', '')
    fresh_dir(work)
    os.makedirs(work, exist_ok=True)
    b = Broker(binary, os.path.join(work, 'data'))
    b.start()
    try:
        c = Conn(b.port)
        r = c.call(18, 3, cstr('raw') + cstr('1.0') + TAGS, header_v0_response=True)
        expect(r.i16() == 0, 'ApiVersions error')
        apis = r.arr(lambda: (r.i16(), r.i16(), r.i16(), r.tags())[:3])
        ranges = {k: (lo, hi) for k, lo, hi in apis}
        for key, rng in {21: (0, 2), 35: (0, 4), 37: (0, 3), 43: (0, 2), 47: (0, 0), 61: (0, 0)}.items():
            expect(ranges.get(key) == rng, f'api {key} advertised {ranges.get(key)}, expected {rng}')

        # A topic with 2 partitions (CreateTopics v7).
        r = c.call(19, 7, carr([cstr('raw') + struct.pack('>ih', 2, 1) + carr([]) + carr([]) + TAGS])
                   + struct.pack('>i', 10000) + b'\x00' + TAGS)

        # ---- CreatePartitions v3 ----
        def create_partitions(topic, count, validate=False, assignments=None):
            asg = carr([carr([struct.pack('>i', x) for x in a]) + TAGS for a in assignments]) \
                if assignments is not None else b'\x00'
            r = c.call(37, 3, carr([cstr(topic) + struct.pack('>i', count) + asg + TAGS])
                       + struct.pack('>i', 5000) + (b'\x01' if validate else b'\x00') + TAGS)
            r.i32()
            res = r.arr(lambda: (r.cstr(), r.i16(), r.cstr(), r.tags())[:3])
            r.tags()
            r.done()
            return res[0]
        expect(create_partitions('raw', 3, validate=True)[1] == 0, 'validate only')
        expect(create_partitions('raw', 3, assignments=[[0], [0]])[1] == 39, 'wrong assignment count: 39')
        expect(create_partitions('raw', 3, assignments=[[0]])[1] == 0, 'grow to 3 with an assignment')
        res = create_partitions('raw', 2)
        expect(res[1] == 37 and 'partitions' in (res[2] or ''), f'INVALID_PARTITIONS with a message: {res}')
        expect(create_partitions('none', 2)[1] == 3, 'unknown topic')

        # ---- Metadata v12 / DescribeCluster v1 / DescribeGroups v5: authorized operations ----
        def metadata_ops(include):
            r = c.call(3, 12, carr([b'\x00' * 16 + cstr('raw') + TAGS]) + b'\x00' + (b'\x01' if include else b'\x00')
                       + TAGS)
            r.i32()
            r.arr(lambda: (r.i32(), r.cstr(), r.i32(), r.cstr(), r.tags()))
            r.cstr(), r.i32()
            ts = r.arr(lambda: (r.i16(), r.cstr(), r.uuid(), r.boolean(),
                                r.arr(lambda: (r.i16(), r.i32(), r.i32(), r.i32(), r.arr(r.i32), r.arr(r.i32),
                                               r.arr(r.i32), r.tags())),
                                r.i32(), r.tags()))
            r.tags()
            r.done()
            return len(ts[0][4]), ts[0][5]
        nparts, ops = metadata_ops(True)
        expect(nparts == 3, f'metadata lists 3 partitions: {nparts}')
        expect(ops == 3576, f'topic authorized operations without an authorizer: {ops}')
        expect(metadata_ops(False)[1] == INT32_MIN, 'not asked: INT32_MIN')
        r = c.call(60, 1, b'\x01' + b'\x01' + TAGS)
        r.i32(), r.i16(), r.cstr(), r.i8(), r.cstr(), r.i32()
        r.arr(lambda: (r.i32(), r.cstr(), r.i32(), r.cstr(), r.tags()))
        ops = r.i32()
        expect(ops == 8096, f'cluster authorized operations: {ops}')
        r = c.call(15, 5, carr([cstr('some-group')]) + b'\x01' + TAGS)
        r.i32()
        dg = r.arr(lambda: (r.i16(), r.cstr(), r.cstr(), r.cstr(), r.cstr(),
                            r.arr(lambda: (r.cstr(), r.cstr(), r.cstr(), r.cstr(), r.cbytes(), r.cbytes(), r.tags())),
                            r.i32(), r.tags())[6])
        expect(dg == [328], f'group authorized operations: {dg}')

        # ---- Produce (idempotent) so DescribeProducers has something to show ----
        r = c.call(22, 4, cstr(None) + struct.pack('>iqh', 60000, -1, -1) + TAGS)
        r.i32()
        err, pid, epoch = r.i16(), r.i64(), r.i16()
        expect(err == 0, 'InitProducerId')
        recs = batch([b'a', b'b', b'c'], pid=pid, epoch=epoch, seq=0)
        r = c.call(0, 9, cstr(None) + struct.pack('>hi', -1, 5000)
                   + carr([cstr('raw') + carr([struct.pack('>i', 0) + uvarint(len(recs) + 1) + recs + TAGS])
                           + TAGS]) + TAGS)
        more = batch([b'd', b'e'], pid=pid, epoch=epoch, seq=3)
        r = c.call(0, 9, cstr(None) + struct.pack('>hi', -1, 5000)
                   + carr([cstr('raw') + carr([struct.pack('>i', 0) + uvarint(len(more) + 1) + more + TAGS])
                           + TAGS]) + TAGS)
        r = c.call(61, 0, carr([cstr('raw') + carr([struct.pack('>i', 0), struct.pack('>i', 7)]) + TAGS]) + TAGS)
        r.i32()

        def producer():
            v = (r.i64(), r.i32(), r.i32(), r.i64(), r.i32(), r.i64())
            r.tags()
            return v
        dp = r.arr(lambda: (r.cstr(), r.arr(lambda: (r.i32(), r.i16(), r.cstr(), r.arr(producer), r.tags())[:4]),
                            r.tags())[:2])
        r.tags()
        r.done()
        p0, p7 = dp[0][1]
        expect(p0[1] == 0 and p0[3] == [(pid, epoch, 4, 1700000000000, -1, -1)], f'DescribeProducers {p0}')
        expect(p7[1] == 3, f'unknown partition {p7}')

        # ---- DeleteRecords v2 ----
        def delete_records(part, offset):
            r = c.call(21, 2, carr([cstr('raw') + carr([struct.pack('>iq', part, offset) + TAGS]) + TAGS])
                       + struct.pack('>i', 5000) + TAGS)
            r.i32()
            res = r.arr(lambda: (r.cstr(), r.arr(lambda: (r.i32(), r.i64(), r.i16(), r.tags())[:3]), r.tags())[:2])
            r.tags()
            r.done()
            return res[0][1][0]
        expect(delete_records(0, 2) == (0, 2, 0), 'delete below 2')
        expect(delete_records(0, 1) == (0, 2, 0), 'never moves back')
        expect(delete_records(0, 9)[2] == 1, 'past the high watermark: OFFSET_OUT_OF_RANGE')
        expect(delete_records(9, 0)[2] == 3, 'unknown partition')

        # ---- DescribeLogDirs v4 ----
        r = c.call(35, 4, b'\x00' + TAGS)
        r.i32()
        expect(r.i16() == 0, 'DescribeLogDirs error')

        def ldir():
            err, path = r.i16(), r.cstr()
            topics = r.arr(lambda: (r.cstr(), r.arr(lambda: (r.i32(), r.i64(), r.i64(), r.boolean(), r.tags())[:4]),
                                    r.tags())[:2])
            total, usable = r.i64(), r.i64()
            r.tags()
            return err, path, topics, total, usable
        dirs = r.arr(ldir)
        r.tags()
        r.done()
        expect(len(dirs) == 1 and dirs[0][0] == 0 and dirs[0][1].endswith('/log'), f'one log dir {dirs}')
        parts = dict((t, p) for t, p in dirs[0][2])['raw']
        expect(sorted(p[0] for p in parts) == [0, 1, 2], f'raw partitions {parts}')
        expect([p for p in parts if p[0] == 0][0][1] > 0, 'partition 0 has bytes')
        if redis_tier:
            # The Redis tier keeps no files in its log dir: the volume's size is unknown (-1, KIP-827).
            expect(dirs[0][3:] == (-1, -1), f'total/usable bytes on the Redis tier {dirs[0][3:]}')
        else:
            expect(dirs[0][3] > 0 and 0 <= dirs[0][4] <= dirs[0][3], f'total/usable bytes {dirs[0][3:]}')

        # ---- ElectLeaders v2 ----
        r = c.call(43, 2, b'\x00' + carr([cstr('raw') + carr([struct.pack('>i', 0), struct.pack('>i', 5)]) + TAGS])
                   + struct.pack('>i', 5000) + TAGS)
        r.i32()
        expect(r.i16() == 0, 'ElectLeaders error')
        el = r.arr(lambda: (r.cstr(), r.arr(lambda: (r.i32(), r.i16(), r.cstr(), r.tags())[:2]), r.tags())[:2])
        r.tags()
        r.done()
        expect(el == [('raw', [(0, 84), (5, 3)])], f'ELECTION_NOT_NEEDED / UNKNOWN_TOPIC_OR_PARTITION: {el}')

        # ---- OffsetDelete v0 (classic) ----
        r = c.call(8, 8, cstr('og') + struct.pack('>i', -1) + cstr('') + cstr(None)
                   + carr([cstr('raw') + carr([struct.pack('>iqi', 1, 5, -1) + cstr(None) + TAGS]) + TAGS]) + TAGS)

        def kstr(s):
            return struct.pack('>h', len(s)) + s.encode()
        body = classic_call(c, 47, 0, kstr('og') + struct.pack('>i', 1) + kstr('raw') + struct.pack('>iii', 2, 1, 2))
        err, _thr, ntop = struct.unpack('>hii', body[:10])
        expect(err == 0 and ntop == 1, f'OffsetDelete {err}')
        rest = body[10:]
        nlen = struct.unpack('>h', rest[:2])[0]
        np_ = struct.unpack('>i', rest[2 + nlen:6 + nlen])[0]
        parts = [struct.unpack('>ih', rest[6 + nlen + 6 * i:12 + nlen + 6 * i]) for i in range(np_)]
        expect(parts == [(1, 0), (2, 0)], f'OffsetDelete partitions {parts}')
        r = c.call(9, 8, carr([cstr('og') + carr([cstr('raw') + carr([struct.pack('>i', 1)]) + TAGS]) + TAGS])
                   + b'\x00' + TAGS)
        r.i32()
        gs = r.arr(lambda: (r.cstr(), r.arr(lambda: (r.cstr(), r.arr(lambda: (r.i32(), r.i64(), r.i32(), r.cstr(),
                                                                             r.i16(), r.tags())[:2]), r.tags())[:2]),
                            r.i16(), r.tags())[:2])
        expect(gs[0][1][0][1] == [(1, -1)], f'offset gone after OffsetDelete: {gs}')
        body = classic_call(c, 47, 0, kstr('nogroup') + struct.pack('>i', 0))
        expect(struct.unpack('>h', body[:2])[0] == 69, 'unknown group: GROUP_ID_NOT_FOUND')

        # ---- Fetch v12 incremental sessions (KIP-227) ----
        def fetch(session_id, epoch, parts=((0, 2),), forget=()):
            r = c.call(1, 12, struct.pack('>iiiibii', -1, 0, 1, 1 << 20, 0, session_id, epoch)
                       + (carr([cstr('raw') + carr([struct.pack('>iiqiqi', p, -1, o, -1, -1, 1 << 20) + TAGS
                                                    for p, o in parts]) + TAGS]) if parts else carr([]))
                       + (carr([cstr('raw') + carr([struct.pack('>i', p) for p in forget]) + TAGS]) if forget
                          else carr([]))
                       + cstr('') + TAGS)
            r.i32()
            err, sid = r.i16(), r.i32()

            def fpart():
                idx, perr, hw = r.i32(), r.i16(), r.i64()
                r.i64(), r.i64()
                r.arr(lambda: (r.i64(), r.i64(), r.tags()))
                r.i32()
                recs = r.cbytes()
                r.tags()
                return idx, perr, hw, len(recs or b'')
            topics = r.arr(lambda: (r.cstr(), r.arr(fpart), r.tags())[:2]) or []
            r.tags()
            r.done()
            return err, sid, topics
        err, sid, topics = fetch(0, -1)
        expect((err, sid) == (0, 0) and topics[0][1][0][:2] == (0, 0), f'sessionless full fetch {err} {sid} {topics}')
        err, sid, topics = fetch(0, 0, parts=((0, 5), (1, 0)))
        expect(err == 0 and sid != 0, f'a full fetch with epoch 0 opens a session: {err} {sid}')
        expect([p[0] for p in topics[0][1]] == [0, 1] and topics[0][1][0][2] == 5, f'full answer {topics}')
        err, sid2, topics = fetch(sid, 1, parts=())
        expect((err, sid2, topics) == (0, sid, []), f'incremental, nothing new: {err} {sid2} {topics}')
        recs = batch([b'news'])
        c.call(0, 9, cstr(None) + struct.pack('>hi', -1, 5000)
               + carr([cstr('raw') + carr([struct.pack('>i', 1) + uvarint(len(recs) + 1) + recs + TAGS]) + TAGS])
               + TAGS)
        err, _, topics = fetch(sid, 2, parts=())
        expect(err == 0 and len(topics) == 1 and [p[:3] for p in topics[0][1]] == [(1, 0, 1)]
               and topics[0][1][0][3] > 0, f'incremental: only partition 1, with its new record: {topics}')
        err, _, topics = fetch(sid, 3, parts=((1, 1),), forget=(0,))
        expect((err, topics) == (0, []), f'moved past it, partition 0 forgotten: {err} {topics}')
        expect(fetch(sid, 9, parts=())[0] == 71, 'wrong epoch: INVALID_FETCH_SESSION_EPOCH')
        expect(fetch(sid + 1, 1, parts=())[0] == 70, 'unknown session: FETCH_SESSION_ID_NOT_FOUND')
        expect(fetch(0, 3, parts=())[0] == 71, 'incremental epoch without a session: INVALID_FETCH_SESSION_EPOCH')
        err, sid3, topics = fetch(sid, -1)
        expect((err, sid3) == (0, 0) and topics, f'epoch -1 closes the session, answered in full: {err} {sid3}')
        expect(fetch(sid, 4, parts=())[0] == 70, 'a closed session is gone')

        # ---- IncrementalAlterConfigs v1 and DescribeConfigs v4 on the broker resource ----
        def incremental(ops, validate=False):
            r = c.call(44, 1, carr([b'\x04' + cstr('0') + carr([cstr(k) + struct.pack('>b', op) + cstr(v) + TAGS
                                                                for k, op, v in ops]) + TAGS])
                       + (b'\x01' if validate else b'\x00') + TAGS)
            r.i32()
            res = r.arr(lambda: (r.i16(), r.cstr(), r.i8(), r.cstr(), r.tags())[:2])
            r.tags()
            r.done()
            return res[0]

        def describe_broker(keys):
            r = c.call(32, 4, carr([b'\x04' + cstr('0') + carr([cstr(k) for k in keys]) + TAGS]) + b'\x01\x01' + TAGS)
            r.i32()

            def entry():
                name, value, ro, src, _sens = r.cstr(), r.cstr(), r.boolean(), r.i8(), r.boolean()
                syn = r.arr(lambda: (r.cstr(), r.cstr(), r.i8(), r.tags())[:3])
                ctype, doc = r.i8(), r.cstr()
                r.tags()
                return name, (value, ro, src, syn, ctype, doc)
            res = r.arr(lambda: (r.i16(), r.cstr(), r.i8(), r.cstr(), dict(r.arr(entry)), r.tags())[:5])
            r.tags()
            r.done()
            expect(res[0][0] == 0, f'DescribeConfigs broker error {res[0][:2]}')
            return res[0][4]
        expect(incremental([('log.segment.bytes', 0, '500000'), ('log.retention.ms', 1, None)]) == (0, None),
               'incremental set + delete on the broker')
        d = describe_broker(['log.segment.bytes', 'log.cleaner.min.cleanable.ratio', 'log.dirs'])
        value, ro, src, syn, ctype, doc = d['log.segment.bytes']
        expect((value, ro, src, ctype) == ('500000', False, 2, 3), f'log.segment.bytes {d["log.segment.bytes"]}')
        expect(syn[0] == ('log.segment.bytes', '500000', 2) and syn[-1][2] == 5, f'synonyms {syn}')
        expect(doc, 'documentation asked for and given')
        expect(d['log.cleaner.min.cleanable.ratio'][0] == '0.5' and d['log.cleaner.min.cleanable.ratio'][4] == 6,
               f'a double config {d["log.cleaner.min.cleanable.ratio"]}')
        expect(d['log.dirs'][1] is True and d['log.dirs'][2] == 4, f'log.dirs read-only {d["log.dirs"]}')
        expect(incremental([('log.dirs', 0, '/x')])[0] == 40, 'a read-only broker config: INVALID_CONFIG')
        expect(incremental([('log.cleanup.policy', 0, 'shred')])[0] == 40, 'an unknown policy: INVALID_CONFIG')
        if redis_tier:
            # No log cleaner on floe.local.type=redis: a compact default is refused there.
            expect(incremental([('log.cleanup.policy', 0, 'compact')], validate=True)[0] == 40,
                   'compact refused on the Redis tier')
        else:
            expect(incremental([('log.cleanup.policy', 0, 'compact')], validate=True) == (0, None), 'compact accepted')
        expect(incremental([('log.segment.bytes', 0, '600000')], validate=True) == (0, None), 'validate only')
        expect(describe_broker(['log.segment.bytes'])['log.segment.bytes'][0] == '500000', 'validate only changed nothing')

        expect(b.alive(), 'broker alive')
        print('admin_raw: PASS')
    finally:
        b.stop()


if __name__ == '__main__':
    main(sys.argv[1], sys.argv[2])
