#!/usr/bin/python3
"""Integration tests of the Kafka broker with kcat (librdkafka) and raw sockets.
Usage: it_kcat.py <test> <floe binary> <work dir>"""
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import expect, main, run  # noqa: E402

KCAT = 'kcat'


def kcat(b, *args, input=None, timeout=30, check=True):
    return run([KCAT, '-b', b.bootstrap, *args], input=input, timeout=timeout, check=check)


def consume_all(b, topic, *extra, fmt='%k|%s|%o\n'):
    r = kcat(b, '-C', '-t', topic, '-e', '-q', '-f', fmt, *extra)
    return [line for line in r.stdout.split('\n') if line]


# ---------------------------------------------------------------- kcat_basic
def kcat_basic(make, work):
    b = make()
    b.start()
    lines = ''.join(f'key{i}:value-{i}\n' for i in range(100))
    kcat(b, '-P', '-t', 'basic', '-K:', '-H', 'h1=one', '-H', 'h2=two', input=lines)
    got = consume_all(b, 'basic', '-o', 'beginning', fmt='%k|%s|%o|%h\n')
    expect(len(got) == 100, f'expected 100 records, got {len(got)}')
    for i, line in enumerate(got):
        expect(line == f'key{i}|value-{i}|{i}|h1=one,h2=two', f'record {i}: {line!r}')
    from50 = consume_all(b, 'basic', '-o', '50')
    expect(len(from50) == 50 and from50[0] == 'key50|value-50|50', f'from offset 50: {from50[:2]}')
    last5 = consume_all(b, 'basic', '-o', '-5')
    expect([l.split('|')[2] for l in last5] == ['95', '96', '97', '98', '99'], f'last 5: {last5}')
    # Null key and empty value round trip.
    kcat(b, '-P', '-t', 'basic', '-Z', input='novalue\n\n')
    md = json.loads(kcat(b, '-L', '-J').stdout)
    topics = {t['topic']: t for t in md['topics']}
    expect('basic' in topics, f'metadata topics: {list(topics)}')
    expect(len(topics['basic']['partitions']) == 1, 'one partition')
    expect(md['brokers'][0]['name'].endswith(f':{b.port}'), f'brokers: {md["brokers"]}')
    # Metadata of a single topic, auto-created on request.
    md2 = json.loads(kcat(b, '-L', '-J', '-t', 'auto-made').stdout)
    expect(md2['topics'][0]['topic'] == 'auto-made', f'auto-create: {md2["topics"]}')
    # acks=all and acks=0 both land.
    kcat(b, '-P', '-t', 'acks', '-X', 'acks=all', input='a\nb\nc\n')
    kcat(b, '-P', '-t', 'acks', '-X', 'acks=0', input='d\ne\n')
    got = consume_all(b, 'acks', '-o', 'beginning', fmt='%s\n')
    expect(got == ['a', 'b', 'c', 'd', 'e'], f'acks topic: {got}')


# ---------------------------------------------------------------- kcat_compression
def kcat_compression(make, work):
    b = make()
    b.start()
    for codec in ['none', 'gzip', 'snappy', 'lz4', 'zstd']:
        topic = f'z-{codec}'
        lines = ''.join(f'k{i % 17}:{codec}-payload-{i}-' + 'x' * (i % 50) + '\n' for i in range(2000))
        kcat(b, '-P', '-t', topic, '-K:', '-z', codec, '-X', 'linger.ms=20', '-H', f'codec={codec}',
             input=lines)
        got = consume_all(b, topic, '-o', 'beginning', fmt='%k:%s\n')
        want = [l for l in lines.split('\n') if l]
        expect(got == want, f'{codec}: {len(got)} records back, first mismatch '
               f'{next(((i, g, w) for i, (g, w) in enumerate(zip(got, want)) if g != w), None)}')
        # A consumer starting mid-batch gets exactly the records from that offset on.
        mid = consume_all(b, topic, '-o', '1234', fmt='%o\n')
        expect(mid[0] == '1234' and len(mid) == 2000 - 1234, f'{codec} from 1234: {mid[:3]}')


# ---------------------------------------------------------------- kcat_group
def kcat_group(make, work):
    b = make(['--partitions', '4'])
    b.start()
    lines = ''.join(f'key{i}:v{i}\n' for i in range(400))
    kcat(b, '-P', '-t', 'gt', '-K:', '-X', 'partitioner=murmur2_random', input=lines)
    parts = consume_all(b, 'gt', '-o', 'beginning', fmt='%p\n')
    expect(len(set(parts)) == 4, f'records should spread over 4 partitions: {set(parts)}')
    # Each assignor librdkafka offers runs over the same classic JoinGroup/SyncGroup protocol.
    for strategy in ['range', 'roundrobin', 'cooperative-sticky']:
        total = len(consume_all(b, 'gt', '-o', 'beginning'))
        group_round(b, f'g-{strategy}', strategy, total)


class Member:
    """A `kcat -G` process whose stdout (records) and stderr (rebalance notes) are collected by
    reader threads, so the test can poll them while it runs."""

    def __init__(self, b, args):
        import threading
        self.p = subprocess.Popen([KCAT, '-b', b.bootstrap, *args], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        self.out, self.err = [], []
        self.threads = [threading.Thread(target=self._pump, args=(self.p.stdout, self.out), daemon=True),
                        threading.Thread(target=self._pump, args=(self.p.stderr, self.err), daemon=True)]
        for t in self.threads:
            t.start()

    @staticmethod
    def _pump(stream, sink):
        for line in stream:
            sink.append(line.rstrip('\n'))

    def assigned_now(self):
        """Partitions held now, replaying kcat's rebalance notes: eager "assigned:"/"revoked:"
        and cooperative "incremental assignment/revoke ... : t [p], ..."."""
        import re
        held = set()
        for l in list(self.err):
            if 'rebalanced' not in l:
                continue
            if 'incremental' in l:
                parts = set(re.findall(r'(\S+ \[\d+\])', l.rsplit('): ', 1)[-1]))
                held = held | parts if 'incremental assign' in l else held - parts
            elif 'assigned:' in l:
                held = set(re.findall(r'(\S+ \[\d+\])', l.split('assigned:', 1)[1]))
            elif 'revoked:' in l:
                held = set()
        return sorted(held)

    def stop(self):
        self.p.send_signal(signal.SIGTERM)  # kcat commits its offsets and leaves the group
        self.p.wait(timeout=20)
        for t in self.threads:
            t.join(timeout=5)


def group_round(b, group, strategy, total):
    common = ['-G', group, 'gt', '-u', '-f', '%k\n', '-X', 'auto.offset.reset=earliest',
              '-X', 'session.timeout.ms=6000', '-X', 'heartbeat.interval.ms=500',
              '-X', f'partition.assignment.strategy={strategy}']
    members = [Member(b, common) for _ in range(2)]
    # Bounded wait: every record consumed and both members holding partitions.
    deadline = time.time() + 40
    while time.time() < deadline:
        everything = len(set(members[0].out + members[1].out)) >= total
        if everything and all(m.assigned_now() for m in members):
            break
        time.sleep(0.2)
    holding = [m.assigned_now() for m in members]
    for m in members:
        m.stop()
    a, c = members[0].out, members[1].out
    expect(all(holding), f'{strategy}: both members hold partitions: {holding}')
    expect(sorted(holding[0] + holding[1]) == [f'gt [{p}]' for p in range(4)],
           f'{strategy}: the two members split the 4 partitions: {holding}')
    expect(len(set(a + c)) == total,
           f'{strategy}: members read {len(a)} + {len(c)} records, {len(set(a + c))} distinct, want {total}')
    # A new member of the same group resumes at the committed offsets: only new records.
    kcat(b, '-P', '-t', 'gt', '-K:', input=f'{strategy}-1:x\n{strategy}-2:y\n')
    m = Member(b, common)
    deadline = time.time() + 30
    while time.time() < deadline and len(m.out) < 2:
        time.sleep(0.2)
    time.sleep(1.0)  # anything replayed from before the commit would show up by now
    m.stop()
    again = sorted(m.out)
    expect(again == [f'{strategy}-1', f'{strategy}-2'], f'{strategy}: resumed consumer read {again[:10]} ({len(again)})')


# ---------------------------------------------------------------- restart
def restart(make, work):
    b = make()
    port = b.start()
    lines = ''.join(f'k{i}:v{i}\n' for i in range(1000))
    kcat(b, '-P', '-t', 'rt', '-K:', '-X', 'acks=all', '-X', 'linger.ms=5', input=lines)
    # A group member reads 400 records and commits on close.
    r = kcat(b, '-G', 'rg', 'rt', '-q', '-c', '400', '-f', '%o\n', '-X', 'auto.offset.reset=earliest')
    first = [l for l in r.stdout.split('\n') if l]
    expect(len(first) == 400, f'first member read {len(first)}')
    # More acks=all records, then a crash (SIGKILL) right after the acknowledgement.
    kcat(b, '-P', '-t', 'rt', '-K:', '-X', 'acks=all', input='after:crash\n')
    b.stop(signal.SIGKILL)
    b.start(port)
    got = consume_all(b, 'rt', '-o', 'beginning', fmt='%k:%s\n')
    want = [l for l in lines.split('\n') if l] + ['after:crash']
    expect(got == want, f'after restart: {len(got)} records (want {len(want)})')
    p = subprocess.Popen([KCAT, '-b', b.bootstrap, '-G', 'rg', 'rt', '-q', '-f', '%o\n'],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(5)
    p.send_signal(signal.SIGTERM)
    out, _ = p.communicate(timeout=15)
    rest = [int(l) for l in out.split('\n') if l]
    expect(rest == list(range(400, 1001)), f'resumed at {rest[:3]}..., {len(rest)} records')
    # A clean stop (SIGTERM) then start keeps everything too.
    expect(b.stop() == 0, 'clean stop exit code')
    b.start(port)
    expect(len(consume_all(b, 'rt', '-o', 'beginning')) == 1001, 'after clean restart')


# ---------------------------------------------------------------- bad_input
def crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def varint(v):
    v = (v << 1) ^ (v >> 63)
    out = b''
    while v >= 0x80:
        out += bytes([(v & 0x7F) | 0x80])
        v >>= 7
    return out + bytes([v])


def batch(values, pid=-1, epoch=-1, seq=-1):
    recs = b''
    for i, v in enumerate(values):
        body = b'\x00' + varint(0) + varint(i) + varint(-1) + varint(len(v)) + v + varint(0)
        recs += varint(len(body)) + body
    after_crc = struct.pack('>hiqqqhii', 0, len(values) - 1, 1700000000000, 1700000000000, pid, epoch,
                            seq, len(values)) + recs
    crc = crc32c(after_crc)
    inner = struct.pack('>ibI', -1, 2, crc) + after_crc
    return struct.pack('>qi', 0, len(inner)) + inner


def kstr(s):
    return struct.pack('>h', len(s)) + s


def request(api, ver, corr, body, client=b'raw'):
    frame = struct.pack('>hhi', api, ver, corr) + kstr(client) + body
    return struct.pack('>i', len(frame)) + frame


def produce_v3(topic, records):
    return (struct.pack('>h', -1) + struct.pack('>hi', 1, 5000) + struct.pack('>i', 1) + kstr(topic)
            + struct.pack('>i', 1) + struct.pack('>i', 0) + struct.pack('>i', len(records)) + records)


def recv_response(s, timeout=5):
    s.settimeout(timeout)
    head = b''
    while len(head) < 4:
        chunk = s.recv(4 - len(head))
        if not chunk:
            return None
        head += chunk
    n = struct.unpack('>i', head)[0]
    data = b''
    while len(data) < n:
        chunk = s.recv(n - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def closed_by_server(s, timeout=5):
    s.settimeout(timeout)
    try:
        while True:
            d = s.recv(4096)
            if not d:
                return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except socket.timeout:
        return False


def bad_input(make, work):
    b = make(['--max-request-bytes', str(1 << 20)])
    b.start()
    conn = lambda: socket.create_connection(('127.0.0.1', b.port), timeout=5)
    good = conn()
    good.sendall(request(18, 0, 1, b''))
    r = recv_response(good)
    expect(r is not None and struct.unpack('>ih', r[:6]) == (1, 0), 'ApiVersions v0 answers')

    # Pipelining: three requests in one write, answers in order.
    good.sendall(request(18, 1, 11, b'') + request(3, 1, 12, struct.pack('>i', 0))
                 + request(18, 2, 13, b''))
    corrs = [struct.unpack('>i', recv_response(good)[:4])[0] for _ in range(3)]
    expect(corrs == [11, 12, 13], f'pipelined answers in order: {corrs}')

    # Unknown API key and unsupported versions: UNSUPPORTED_VERSION (35), connection stays up.
    s = conn()
    s.sendall(request(999, 0, 2, b''))
    r = recv_response(s)
    expect(r is not None and struct.unpack('>ih', r[:6]) == (2, 35), f'unknown api: {r!r}')
    s.sendall(request(18, 9, 3, b''))
    r = recv_response(s)
    expect(r is not None and struct.unpack('>ih', r[:6]) == (3, 35), 'ApiVersions v9')
    expect(struct.unpack('>i', r[6:10])[0] == 43, 'ApiVersions error still lists the 43 APIs')
    s.sendall(request(0, 2, 4, b''))  # Produce v2: below the advertised range
    r = recv_response(s)
    expect(r is not None and struct.unpack('>ih', r[:6]) == (4, 35), 'Produce v2 refused')

    # A valid batch is accepted (and is read back by kcat below); a corrupt CRC is refused.
    ok = batch([b'raw-1', b'raw-2'])
    s.sendall(request(0, 3, 5, produce_v3(b'rawt', ok)))
    r = recv_response(s)
    expect(r is not None, 'produce answered')
    err = struct.unpack('>h', r[4 + 4 + 2 + 4 + 4 + 4:4 + 4 + 2 + 4 + 4 + 4 + 2])[0]
    expect(err == 3, f'unknown topic (no auto-create on produce): {err}')
    run(['kcat', '-b', b.bootstrap, '-L', '-t', 'rawt'])  # metadata auto-creates it
    s.sendall(request(0, 3, 6, produce_v3(b'rawt', ok)))
    r = recv_response(s)
    err = struct.unpack('>h', r[4 + 4 + 2 + 4 + 4 + 4:4 + 4 + 2 + 4 + 4 + 4 + 2])[0]
    expect(err == 0, f'valid raw batch accepted: {err}')
    bad = bytearray(ok)
    bad[-1] ^= 0xFF
    s.sendall(request(0, 3, 7, produce_v3(b'rawt', bytes(bad))))
    r = recv_response(s)
    err = struct.unpack('>h', r[4 + 4 + 2 + 4 + 4 + 4:4 + 4 + 2 + 4 + 4 + 4 + 2])[0]
    expect(err == 2, f'corrupt CRC gives CORRUPT_MESSAGE: {err}')
    got = run(['kcat', '-b', b.bootstrap, '-C', '-t', 'rawt', '-e', '-q', '-o', 'beginning']).stdout.split()
    expect(got == ['raw-1', 'raw-2'], f'only the valid batch landed: {got}')

    # Hostile connections: each is closed, none disturbs the others.
    cases = {
        'garbage': os.urandom(3000),
        'negative size': struct.pack('>i', -5) + b'xxxx',
        'oversized': struct.pack('>i', 50 << 20) + b'x' * 100,
        'lying array': request(3, 1, 8, struct.pack('>i', 0x7fffffff)),
        'lying string': request(0, 3, 9, struct.pack('>h', 30000) + b'ab'),
        'header too short': struct.pack('>i', 3) + b'\x00\x03\x00',
    }
    for name, payload in cases.items():
        h = conn()
        h.sendall(payload)
        expect(closed_by_server(h), f'{name}: connection should be closed')
        h.close()
    # Truncated frame: the client disappears mid-request.
    t = conn()
    t.sendall(struct.pack('>i', 1000) + b'\x00\x12' + b'\x00' * 20)
    t.close()
    # A slow client holding a half-sent request does not stall others.
    slow = conn()
    slow.sendall(struct.pack('>i', 500) + b'\x00')
    good.sendall(request(18, 0, 20, b''))
    r = recv_response(good)
    expect(r is not None and struct.unpack('>i', r[:4])[0] == 20, 'good client still served')
    run(['kcat', '-b', b.bootstrap, '-L'])
    # Hundreds of connections at once, each answered.
    many = [conn() for _ in range(300)]
    for i, m in enumerate(many):
        m.sendall(request(18, 0, 1000 + i, b''))
    for i, m in enumerate(many):
        r = recv_response(m)
        expect(r is not None and struct.unpack('>i', r[:4])[0] == 1000 + i, f'connection {i} answered')
    for m in many:
        m.close()
    expect(b.alive(), 'broker survived hostile input')
    slow.close()
    good.close()


# ---------------------------------------------------------------- idempotence
def produce_answer(r):
    """(error code, base offset) of the single partition in a Produce v3 response."""
    at = 4 + 4 + 2 + 4 + 4 + 4
    return struct.unpack('>hq', r[at:at + 10])


def idempotence(make, work):
    b = make()
    b.start()
    run(['kcat', '-b', b.bootstrap, '-L', '-t', 'idem'])  # auto-create
    s = socket.create_connection(('127.0.0.1', b.port), timeout=5)
    s.sendall(request(22, 0, 1, struct.pack('>hi', -1, 60000)))
    r = recv_response(s)
    _, _, err, pid, epoch = struct.unpack('>iihqh', r[:20])
    expect(err == 0 and pid >= 0 and epoch == 0, f'InitProducerId: {err} {pid} {epoch}')
    corr = [10]

    def send(values, seq, ep=epoch):
        corr[0] += 1
        s.sendall(request(0, 3, corr[0], produce_v3(b'idem', batch(values, pid, ep, seq))))
        return produce_answer(recv_response(s))
    expect(send([b'a', b'b'], 0) == (0, 0), 'first batch at offset 0')
    expect(send([b'a', b'b'], 0) == (0, 0), 'retried batch acknowledged with its original offset')
    expect(send([b'c'], 5)[0] == 45, 'sequence gap: OUT_OF_ORDER_SEQUENCE_NUMBER')
    expect(send([b'c'], 2) == (0, 2), 'next sequence appended at offset 2')
    expect(send([b'old'], 3, ep=-5 if epoch == 0 else epoch - 1)[0] in (47, 45, 87),
           'stale epoch refused')
    # A second InitProducerId gives a different producer id.
    s.sendall(request(22, 0, 99, struct.pack('>hi', -1, 60000)))
    pid2 = struct.unpack('>iihqh', recv_response(s)[:20])[3]
    expect(pid2 != pid, 'fresh producer id')
    got = run(['kcat', '-b', b.bootstrap, '-C', '-t', 'idem', '-e', '-q', '-o', 'beginning']).stdout.split()
    expect(got == ['a', 'b', 'c'], f'log holds each record once: {got}')
    # Producer ids stay unique across a restart.
    port = b.port
    b.stop()
    b.start(port)
    s = socket.create_connection(('127.0.0.1', b.port), timeout=5)
    s.sendall(request(22, 0, 1, struct.pack('>hi', -1, 60000)))
    pid3 = struct.unpack('>iihqh', recv_response(s)[:20])[3]
    expect(pid3 not in (pid, pid2), f'producer id reused after restart: {pid3}')


# ---------------------------------------------------------------- crash
def crash(make, work):
    """kill -9 the broker under a running acks=all idempotent producer (kafkajs), restart it on the
    same port: every acknowledged value is in the log afterwards."""
    b = make()
    port = b.start()
    kcat(b, '-L', '-t', 'crash')
    acked_file = os.path.join(work, 'acked.txt')
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..', 'tests', 'js',
                          'kafka', 'crash_producer.mjs')
    node = subprocess.Popen(['node', script], env={**os.environ, 'FLOE_BROKER': b.bootstrap,
                            'FLOE_ACKED': acked_file, 'FLOE_SECONDS': '6'},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(2.5)
    b.stop(signal.SIGKILL)
    time.sleep(0.5)
    b.start(port)
    out, err = node.communicate(timeout=90)
    expect(node.returncode == 0, f'producer script failed: {err[-2000:]}')
    acked = [l for l in open(acked_file).read().split('\n') if l]
    expect(len(acked) > 100, f'producer made progress: {out.strip()}')
    stored = consume_all(b, 'crash', '-o', 'beginning', fmt='%s\n')
    missing = set(acked) - set(stored)
    expect(not missing, f'{len(missing)} acknowledged values lost, e.g. {sorted(missing)[:5]}')
    dups = len(stored) - len(set(stored))
    print(f'crash: {len(acked)} acked values all present; {len(stored)} stored, {dups} duplicates '
          f'(from resends after failed acks); {out.strip()}')


if __name__ == '__main__':
    main({'kcat_basic': kcat_basic, 'kcat_compression': kcat_compression, 'kcat_group': kcat_group,
          'restart': restart, 'bad_input': bad_input,
          'idempotence': idempotence, 'crash': crash}, sys.argv)
