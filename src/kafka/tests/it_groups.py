#!/usr/bin/python3
"""Consumer-group integration tests with real librdkafka members (group_member.c) and raw
sockets, against `floe serve`.
Usage: it_groups.py <test> <floe binary> <work dir> <group_member binary>

coop_group         cooperative-sticky group of 8 over 16 partitions: members join one by one,
                   one leaves cleanly, one is killed -9; each transition settles within a bound,
                   every partition ends up held exactly once, and every record produced during
                   the run is reported by exactly one member (members commit each record
                   synchronously before reporting it). Prints the settle times.
eager_group        the same with the eager range assignor.
static_membership  KIP-345: a static member restarted within its session keeps its assignment
                   with no rebalance; a second process with the same group.instance.id takes
                   over and the old one gets the fatal FENCED_INSTANCE_ID.
consumer_protocol  KIP-848 is advertised (ConsumerGroupHeartbeat 0-1, ConsumerGroupDescribe 0): a v0
                   join is named by the coordinator, v1 needs the member's own id, a version not
                   served gets a well-formed UNSUPPORTED_VERSION answer; librdkafka 2.0.x has no
                   group.protocol setting at all (the real client test is e2e.kip848).
"""
import collections
import os
import re
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import expect, main, run  # noqa: E402

KCAT = 'kcat'
HELPER = sys.argv[4] if len(sys.argv) > 4 else None


def kcat(b, *args, input=None, timeout=30, check=True):
    return run([KCAT, '-b', b.bootstrap, *args], input=input, timeout=timeout, check=check)


class Member:
    """A group_member process; its stdout lines are collected with their arrival time."""

    def __init__(self, b, work, name, group, topic, strategy, session_ms, instance=None):
        self.name = name
        self.err = open(os.path.join(work, f'{name}.stderr'), 'a')
        self.p = subprocess.Popen([HELPER, b.bootstrap, group, topic, strategy, str(session_ms),
                                   instance or ''],
                                  stdout=subprocess.PIPE, stderr=self.err, text=True)
        self.lines = []  # (time, line)
        self.log = open(os.path.join(work, f'{name}.stdout'), 'a')
        self.t = threading.Thread(target=self._pump, daemon=True)
        self.t.start()

    def _pump(self):
        for line in self.p.stdout:
            self.lines.append((time.time(), line.rstrip('\n')))
            self.log.write(f'{self.lines[-1][0]:.3f} {line}')
            self.log.flush()

    def snapshot(self):
        return list(self.lines)

    def assignment(self):
        """(time, partitions) of the latest ASSIGNMENT line, or None."""
        for t, l in reversed(self.snapshot()):
            if l.startswith('ASSIGNMENT '):
                return t, frozenset(int(x) for x in l.split()[2:])
        return None

    def assignment_events(self):
        return sum(1 for _, l in self.snapshot() if l.startswith('ASSIGNMENT '))

    def member_id(self):
        for _, l in reversed(self.snapshot()):
            if l.startswith('MEMBER '):
                return l.split(' ', 1)[1]
        return None

    def records(self):
        out = []
        for _, l in self.snapshot():
            if l.startswith('REC '):
                _, p, o, v = l.split(' ', 3)
                out.append((int(p), int(o), v))
        return out

    def lines_with(self, prefix):
        return [l for _, l in self.snapshot() if l.startswith(prefix)]

    def alive(self):
        return self.p.poll() is None

    def term(self, timeout=30):
        self.p.send_signal(signal.SIGTERM)
        self.p.wait(timeout=timeout)
        self.t.join(timeout=5)

    def kill(self):
        self.p.kill()
        self.p.wait(timeout=10)
        self.t.join(timeout=5)


def settled_at(members, partitions):
    """When the live members' latest assignments became a partition of all `partitions`
    (disjoint, complete, nobody empty while there are enough partitions), or None."""
    seen = set()
    when = 0.0
    for m in members:
        a = m.assignment()
        if a is None:
            return None
        t, parts = a
        if parts & seen:
            return None
        if not parts and len(members) <= len(partitions):
            return None
        seen |= parts
        when = max(when, t)
    return when if seen == set(partitions) else None


def wait_settled(members, partitions, since, bound, what, quiet=1.5):
    """Waits until the group holds every partition exactly once and no member reports a change
    for `quiet` seconds; returns the seconds from `since` to the moment it settled."""
    deadline = since + bound + quiet + 2
    while time.time() < deadline:
        at = settled_at(members, partitions)
        events = [m.assignment_events() for m in members]
        if at is not None:
            time.sleep(quiet)
            if [m.assignment_events() for m in members] == events:
                took = at - since
                expect(took <= bound, f'{what}: settled after {took:.2f} s, bound {bound} s')
                return took
            continue
        time.sleep(0.05)
    state = {m.name: (sorted(m.assignment()[1]) if m.assignment() else None) for m in members}
    raise AssertionError(f'{what}: not settled within {bound} s: {state}')


class Producer:
    """Produces sequence-numbered records in small acknowledged batches (one `kcat -P` per
    batch: kcat sends piped input only at its end) while `running` is set."""

    def __init__(self, b, topic, start, batch=20, pause=0.1):
        self.b, self.topic = b, topic
        self.next = start
        self.batch, self.pause = batch, pause
        self.running = threading.Event()
        self.idle = threading.Event()
        self.done = False
        self.error = None
        self.t = threading.Thread(target=self._run, daemon=True)
        self.t.start()

    def _run(self):
        while not self.done:
            if not self.running.is_set():
                self.idle.set()
                time.sleep(0.05)
                continue
            self.idle.clear()
            lines = ''.join(f'seq-{i}\n' for i in range(self.next, self.next + self.batch))
            r = run([KCAT, '-b', self.b.bootstrap, '-P', '-t', self.topic], input=lines, check=False)
            if r.returncode != 0:
                self.error = r.stderr[-500:]
                return
            self.next += self.batch
            time.sleep(self.pause)

    def stop(self):
        """Stops producing; returns once no batch is in flight."""
        self.running.clear()
        self.idle.wait(timeout=30)

    def finish(self):
        self.stop()
        self.done = True
        self.t.join(timeout=30)
        expect(self.error is None, f'producer failed: {self.error}')


def wait_reported(members, want, bound, what):
    deadline = time.time() + bound
    while time.time() < deadline:
        got = {v for m in members for _, _, v in m.records()}
        if want <= got:
            return
        time.sleep(0.1)
    got = {v for m in members for _, _, v in m.records()}
    missing = sorted(want - got, key=lambda v: int(v.split('-')[1]))
    raise AssertionError(f'{what}: {len(missing)} records not reported within {bound} s: {missing[:10]}')


# ---------------------------------------------------------------- coop_group
def coop_group(make, work, strategy='cooperative-sticky'):
    nparts, nmembers, bound = 16, 8, 15.0
    b = make(['--partitions', str(nparts)])
    b.start()
    topic, group = 'coop', f'g-{strategy}'
    kcat(b, '-P', '-t', topic, input=''.join(f'seq-{i}\n' for i in range(200)))
    prod = Producer(b, topic, 200)
    prod.running.set()
    everyone, live, figures = [], [], []
    for i in range(nmembers):
        t0 = time.time()
        m = Member(b, work, f'm{i}', group, topic, strategy, 6000)
        everyone.append(m)
        live.append(m)
        took = wait_settled(live, range(nparts), t0, bound, f'join of member {i + 1}')
        figures.append(('join', i + 1, took))
        print(f'member {i + 1} joined: settled in {took:.2f} s')
    expect(all(len(m.assignment()[1]) == 2 for m in live),
           f'8 members over 16 partitions hold 2 each: {[sorted(m.assignment()[1]) for m in live]}')

    # A clean leave (consumer close: LeaveGroup).
    leaver = live.pop(3)
    t0 = time.time()
    leaver.term()
    expect(leaver.lines_with('CLOSED'), 'the leaving member closed cleanly')
    took = wait_settled(live, range(nparts), t0, bound, 'clean leave')
    figures.append(('leave', len(live), took))
    print(f'member left cleanly: settled in {took:.2f} s')

    # kill -9: nothing in flight, so everything it reported is committed.
    prod.stop()
    wait_reported(everyone, {f'seq-{i}' for i in range(prod.next)}, 30, 'before the kill')
    victim = live.pop(4)
    t0 = time.time()
    victim.kill()
    prod.running.set()
    took = wait_settled(live, range(nparts), t0, bound, 'kill -9 (session.timeout.ms=6000)')
    figures.append(('kill', len(live), took))
    print(f'member killed: settled in {took:.2f} s')

    time.sleep(2)
    prod.finish()
    produced = {f'seq-{i}' for i in range(prod.next)}
    in_topic = set(kcat(b, '-C', '-t', topic, '-e', '-q', '-f', '%s\n').stdout.split())
    expect(in_topic == produced,
           f'topic holds {len(in_topic)} distinct records, {prod.next} produced')
    wait_reported(everyone, produced, 30, 'at the end')
    seen = collections.Counter(v for m in everyone for _, _, v in m.records())
    twice = [v for v, n in seen.items() if n > 1]
    expect(not twice, f'{len(twice)} records reported twice across the group: {twice[:10]}')
    at = collections.Counter((p, o) for m in everyone for p, o, _ in m.records())
    expect(all(n == 1 for n in at.values()), 'an offset was delivered twice')
    errs = [(m.name, l) for m in everyone for l in m.lines_with('FATAL')]
    expect(not errs, f'fatal errors: {errs}')
    final = [sorted(m.assignment()[1]) for m in live]
    expect(sorted(p for a in final for p in a) == list(range(nparts)),
           f'every partition held exactly once at the end: {final}')
    for m in live:
        m.term()
    joins = [t for k, _, t in figures if k == 'join']
    print(f'FIGURE {strategy} group of 8 members over 16 partitions: join max {max(joins):.2f} s '
          f'(mean {sum(joins) / len(joins):.2f} s), clean leave {figures[-2][2]:.2f} s, '
          f'kill -9 {figures[-1][2]:.2f} s (session.timeout.ms=6000); '
          f'{prod.next} records, each reported once')


# ---------------------------------------------------------------- static_membership
def generations(b, group):
    return len(re.findall(rf'group {re.escape(group)}: generation \d+', open(b.log.name).read()))


def static_membership(make, work):
    nparts = 6
    b = make(['--partitions', str(nparts)])
    b.start()
    topic, group = 'st', 'g-static'
    kcat(b, '-P', '-t', topic, input=''.join(f'r{i}\n' for i in range(60)))
    session = 10000

    def member(name, inst):
        return Member(b, work, name, group, topic, 'range', session, instance=inst)

    t0 = time.time()
    ms = [member(f's{i}', f'inst-{i}') for i in range(3)]
    wait_settled(ms, range(nparts), t0, 20, 'three static members')
    gens = generations(b, group)
    before = {m.name: m.assignment()[1] for m in ms}
    events = {m.name: m.assignment_events() for m in ms}

    # Restart s1 (close: a static member does not send LeaveGroup) within its session.
    ms[1].term()
    t0 = time.time()
    s1 = member('s1-restarted', 'inst-1')
    deadline = t0 + 10
    while time.time() < deadline and not (s1.assignment() and s1.assignment()[1]):
        time.sleep(0.05)
    took = time.time() - t0
    expect(s1.assignment() and s1.assignment()[1] == before['s1'],
           f'restarted static member got {s1.assignment()} back, had {sorted(before["s1"])}')
    time.sleep(3)  # a rebalance would show up by now
    for m in (ms[0], ms[2]):
        expect(m.assignment_events() == events[m.name] and m.assignment()[1] == before[m.name],
               f'{m.name} saw a rebalance after the static restart: {m.snapshot()[-5:]}')
    expect(generations(b, group) == gens,
           f'no new generation after a static restart ({gens} -> {generations(b, group)})')
    print(f'static member restart: assignment back in {took:.2f} s, no rebalance')

    # A second process with s0's instance id: it takes over, the old one is fenced (fatal).
    t0 = time.time()
    twin = member('s0-twin', 'inst-0')
    deadline = t0 + 15
    while time.time() < deadline and ms[0].alive():
        time.sleep(0.05)
    fatal = ms[0].lines_with('FATAL')
    expect(not ms[0].alive() and ms[0].p.returncode == 3 and fatal,
           f'old s0 not fenced: alive={ms[0].alive()} lines={ms[0].snapshot()[-5:]}')
    expect('FENCED_INSTANCE_ID' in fatal[0], f'old s0 fatal error: {fatal[0]}')
    deadline = time.time() + 10
    while time.time() < deadline and not (twin.assignment() and twin.assignment()[1]):
        time.sleep(0.05)
    expect(twin.assignment() and twin.assignment()[1] == before['s0'],
           f'the new s0 got {twin.assignment()}, want {sorted(before["s0"])}')
    time.sleep(2)
    expect(ms[2].assignment_events() == events['s2'], 's2 saw a rebalance after the takeover')
    expect(generations(b, group) == gens, 'no new generation after the takeover')
    print(f'static takeover: old instance fenced after {time.time() - t0:.2f} s ({fatal[0]})')

    # LeaveGroup v3 by instance id (what an admin's "remove members" sends): inst-2 leaves,
    # an unknown instance gets UNKNOWN_MEMBER_ID; the group rebalances and inst-2's process,
    # told it is unknown, joins again as a new member.
    def s16(x):
        return struct.pack('>h', len(x)) + x
    body = s16(group.encode()) + struct.pack('>i', 2) + s16(b'') + s16(b'inst-2') + s16(b'') + s16(b'inst-x')
    frame = struct.pack('>hhi', 13, 3, 7) + s16(b'raw') + body
    with socket.create_connection(('127.0.0.1', b.port)) as sock:
        sock.sendall(struct.pack('>i', len(frame)) + frame)
        d = recv_frame(sock)
    corr, _, err, n = struct.unpack('>iihi', d[:14])
    i, results = 14, {}
    for _ in range(n):
        ln = struct.unpack('>h', d[i:i + 2])[0]
        i += 2 + ln
        ln = struct.unpack('>h', d[i:i + 2])[0]
        inst = d[i + 2:i + 2 + ln].decode()
        i += 2 + ln
        results[inst] = struct.unpack('>h', d[i:i + 2])[0]
        i += 2
    expect(corr == 7 and err == 0 and results == {'inst-2': 0, 'inst-x': 25},
           f'LeaveGroup v3 by instance id: error {err}, members {results}')
    t0 = time.time()
    wait_settled([twin, s1, ms[2]], range(nparts), t0, 15, 'after inst-2 was removed')
    expect(generations(b, group) > gens, 'removing a member by instance id rebalances the group')
    for m in (twin, s1, ms[2]):
        m.term()


# ---------------------------------------------------------------- consumer_protocol
def uvarint(n):
    out = b''
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out += bytes([byte | 0x80])
        else:
            return out + bytes([byte])


def cstr(s):
    return uvarint(len(s) + 1) + s if s is not None else b'\x00'


def recv_frame(s, timeout=5):
    s.settimeout(timeout)
    buf = b''
    while len(buf) < 4:
        chunk = s.recv(4 - len(buf))
        expect(chunk, 'connection closed')
        buf += chunk
    n = struct.unpack('>i', buf)[0]
    data = b''
    while len(data) < n:
        chunk = s.recv(n - len(data))
        expect(chunk, 'connection closed')
        data += chunk
    return data


def api_keys(s, corr):
    s.sendall(struct.pack('>ihhih', 10, 18, 0, corr, -1))
    d = recv_frame(s)
    expect(struct.unpack('>i', d[:4])[0] == corr, 'ApiVersions correlation id')
    err, n = struct.unpack('>hi', d[4:10])
    expect(err == 0, f'ApiVersions error {err}')
    return {struct.unpack('>h', d[10 + 6 * i:12 + 6 * i])[0] for i in range(n)}


def read_uvarint(d, i):
    shift = v = 0
    while True:
        b = d[i]
        i += 1
        v |= (b & 0x7F) << shift
        if not b & 0x80:
            return v, i
        shift += 7


def consumer_protocol(make, work):
    b = make()
    b.start()
    s = socket.create_connection(('127.0.0.1', b.port))
    keys = api_keys(s, 1)
    expect(11 in keys and 14 in keys, 'classic JoinGroup/SyncGroup advertised')
    expect(68 in keys and 69 in keys, f'KIP-848 APIs advertised: {sorted(keys)}')

    def heartbeat(ver, corr, member):
        # ConsumerGroupHeartbeat: header v2 (client id, tags), then the flexible body.
        # group, member id, epoch 0 (join), instance, rack, rebalance timeout, topics, [v1: topic
        # regex], server assignor, owned partitions (none), tags.
        body = (cstr(b'g-848') + cstr(member) + struct.pack('>i', 0) + cstr(None) + cstr(None)
                + struct.pack('>i', 30000) + uvarint(2) + cstr(b't')
                + (cstr(None) if ver >= 1 else b'') + cstr(b'uniform') + uvarint(1) + b'\x00')
        frame = struct.pack('>hhi', 68, ver, corr) + struct.pack('>h', 3) + b'raw' + b'\x00' + body
        s.sendall(struct.pack('>i', len(frame)) + frame)
        d = recv_frame(s)
        expect(struct.unpack('>i', d[:4])[0] == corr, 'ConsumerGroupHeartbeat correlation id')
        expect(d[4] == 0, 'response header v1: empty tagged fields')
        throttle, err = struct.unpack('>ih', d[5:11])
        i = 11
        n, i = read_uvarint(d, i)
        msg = d[i:i + n - 1].decode() if n else None
        i += max(n - 1, 0)
        n, i = read_uvarint(d, i)
        member_id = d[i:i + n - 1].decode() if n else None
        i += max(n - 1, 0)
        epoch, interval = struct.unpack('>ii', d[i:i + 8])
        return err, msg, member_id, epoch, interval, d[i + 8:]

    # v0: the coordinator names a member that joins with an empty id.
    err, msg, member, epoch, interval, rest = heartbeat(0, 2, b'')
    expect(err == 0 and member and epoch >= 1 and interval > 0 and rest[0] == 1,
           f'v0 join: error {err} {msg!r}, member {member!r}, epoch {epoch}, interval {interval}, {rest.hex()}')
    # v1 (KIP-1082): the member names itself; an empty id is refused.
    err, msg, member, epoch, interval, rest = heartbeat(1, 3, b'')
    expect(err == 42 and msg and 'MemberId' in msg, f'v1 without a member id: error {err} {msg!r}, want INVALID_REQUEST (42)')
    # A version Floe does not serve gets UNSUPPORTED_VERSION in the API's own layout.
    s2 = socket.create_connection(('127.0.0.1', b.port))
    body = (cstr(b'g-848') + cstr(b'm') + struct.pack('>i', 0) + cstr(None) + cstr(None)
            + struct.pack('>i', 30000) + uvarint(2) + cstr(b't') + cstr(None) + cstr(b'uniform') + uvarint(1) + b'\x00')
    frame = struct.pack('>hhi', 68, 9, 5) + struct.pack('>h', 3) + b'raw' + b'\x00' + body
    s2.sendall(struct.pack('>i', len(frame)) + frame)
    d = recv_frame(s2)
    expect(struct.unpack('>ih', d[5:11])[1] == 35, f'ConsumerGroupHeartbeat v9: UNSUPPORTED_VERSION ({d[5:11].hex()})')
    s2.close()
    # The connection is still usable.
    expect(68 in api_keys(s, 9), 'ApiVersions after the heartbeats')
    s.close()

    # librdkafka: 2.0.x (Debian 12) has no group.protocol setting at all, so a consumer asking
    # for KIP-848 fails at configuration time; newer versions are not installed here.
    kv = run([KCAT, '-V'], check=False)
    ver = kv.stdout + kv.stderr
    m = re.search(r'librdkafka (\d+)\.(\d+)', ver)
    if m and (int(m.group(1)), int(m.group(2))) < (2, 4):
        r = kcat(b, '-G', 'g-848', 't', '-X', 'group.protocol=consumer', check=False, timeout=10)
        expect(r.returncode != 0 and 'No such configuration property: "group.protocol"' in r.stderr,
               f'librdkafka {m.group(0)}: group.protocol=consumer: rc {r.returncode} {r.stderr[-300:]}')
        print(f'{m.group(0)}: group.protocol=consumer is refused at configuration time')
    else:
        print(f'librdkafka newer than 2.3 ({m.group(0) if m else "?"}): config check skipped')


if __name__ == '__main__':
    main({'coop_group': coop_group,
          'eager_group': lambda make, work: coop_group(make, work, 'range'),
          'static_membership': static_membership, 'consumer_protocol': consumer_protocol},
         sys.argv)
