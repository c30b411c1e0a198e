#!/usr/bin/python3
"""KIP-848 consumer group with a real client (tests/kip848/kip848_client: librdkafka 2.15.1,
group.protocol=consumer) against a running floe: 4 members over 16 partitions, a graceful leave,
a kill -9, a topic created later that matches the subscription regex, a static member
restart, a classic member of the same group id (refused), and a group on the range assignor.
Prints every settle time; fails when one exceeds 5 s or a record is lost or read twice
outside what the kill allows. With HTTP (host:port of floe's HTTP plane), also checks that
GET /v1/groups lists the members with their epochs and the partitions they own.
Usage: kip848_driver.py CLIENT BOOTSTRAP WORKDIR [HTTP]"""
import json
import os
import signal
import struct
import subprocess
import sys
import time
import urllib.request

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient

CLIENT, BOOTSTRAP, WORK = sys.argv[1:4]
HTTP = sys.argv[4] if len(sys.argv) > 4 else None
GROUP = 'kip848-e2e'
REGEX = r'^kip\..*'
MAIN, LATE = 'kip.main', 'kip.late'
PARTS = 16
SETTLE_LIMIT = 5.0
failures = []
settles = []


def check(ok, what):
    print(('ok   ' if ok else 'FAIL ') + what, flush=True)
    if not ok:
        failures.append(what)


class Member:
    def __init__(self, name, *extra):
        self.name = name
        self.path = os.path.join(WORK, name + '.out')
        self.err = open(os.path.join(WORK, name + '.err'), 'w')
        self.proc = subprocess.Popen([CLIENT, BOOTSTRAP, GROUP, REGEX, 'client.id=' + name] + list(extra),
                                     stdout=open(self.path, 'w'), stderr=self.err)
        self.alive = True

    def events(self):
        with open(self.path) as f:
            return [l.split() for l in f.read().splitlines() if l]

    def owned(self):
        own = set()
        for e in self.events():
            if e[0] == 'ASSIGN':
                own.add((e[2], int(e[3])))
            elif e[0] == 'REVOKE':
                own.discard((e[2], int(e[3])))
        return own

    def assigned_after(self, t_ms):
        return {(e[2], int(e[3])) for e in self.events() if e[0] == 'ASSIGN' and int(e[1]) >= t_ms}

    def records(self):
        return [(e[2], int(e[3]), int(e[4]), e[5] if len(e) > 5 else '') for e in self.events() if e[0] == 'REC']

    def stop(self):  # SIGTERM: a clean close (leave the group; static members leave with epoch -2)
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            check(False, f'{self.name} closes within 20 s')
        self.alive = False

    def kill(self):
        self.proc.kill()  # SIGKILL
        self.proc.wait()
        self.alive = False


members = []


def live():
    return [m for m in members if m.alive]


def partitions(*topics):
    return {(t, p) for t in topics for p in range(PARTS)}


def settle(what, want, since, balanced=True, limit=30.0):
    """Waits (bounded) until the live members' partitions are `want`, each owned once (and
    balanced: counts differ by at most one). Records the time from `since`."""
    deadline = time.time() + limit
    while time.time() < deadline:
        owned = [m.owned() for m in live()]
        union = set().union(*owned) if owned else set()
        once = sum(len(o) for o in owned) == len(union)
        sizes = [len(o) for o in owned]
        if union == want and once and (not balanced or max(sizes) - min(sizes) <= 1):
            took = time.time() - since
            settles.append((what, took))
            print(f'settle {what}: {took * 1000:.0f} ms ({", ".join(f"{m.name}={len(m.owned())}" for m in live())})',
                  flush=True)
            check(took < SETTLE_LIMIT, f'{what} settles in under {SETTLE_LIMIT:.0f} s')
            return True
        time.sleep(0.02)
    owned = {m.name: sorted(m.owned()) for m in live()}
    check(False, f'{what} settles (owned: {owned})')
    return False


produced = []


def produce(phase, topic, n):
    p = Producer({'bootstrap.servers': BOOTSTRAP, 'acks': 'all', 'linger.ms': 5})
    got = []

    def dr(err, msg):
        if err is None:
            got.append((msg.topic(), msg.partition(), msg.offset(), msg.value().decode()))

    for i in range(n):
        p.produce(topic, value=f'{phase}-{i:05d}'.encode(), partition=i % PARTS, on_delivery=dr)
        if i % 500 == 0:
            p.poll(0)
    p.flush(30)
    check(len(got) == n, f'{n} records of phase {phase} acknowledged on {topic} (got {len(got)})')
    produced.extend(got)
    return got


def all_read(limit=30.0):
    want = {(t, p, o) for t, p, o, _ in produced}
    deadline = time.time() + limit
    while time.time() < deadline:
        seen = {(t, p, o) for m in members for t, p, o, _ in m.records()}
        if want <= seen:
            return True
        time.sleep(0.05)
    missing = want - {(t, p, o) for m in members for t, p, o, _ in m.records()}
    print(f'missing {len(missing)} records, e.g. {sorted(missing)[:5]}')
    return False


def committed(tps):
    c = Consumer({'bootstrap.servers': BOOTSTRAP, 'group.id': GROUP, 'enable.auto.commit': False})
    try:
        return {(tp.topic, tp.partition): tp.offset for tp in c.committed([TopicPartition(t, p) for t, p in tps], timeout=10)}
    finally:
        c.close()


# 0. The topic and a first phase of records exist before anyone joins (read from the earliest).
produce('p0', MAIN, 800)

# 1. Four members join (m4 static).
t = time.time()
members.append(Member('m1'))
members.append(Member('m2'))
members.append(Member('m3'))
members.append(Member('m4', 'group.instance.id=static-4'))
settle('join of 4 members', partitions(MAIN), t)
produce('p1', MAIN, 1600)
check(all_read(), 'phase 1 read')

# 2. m2 leaves cleanly: its partitions move, revoked before they are given.
m2 = members[1]
t = time.time()
m2.stop()
settle('m2 leaves', partitions(MAIN), t)
produce('p2', MAIN, 1600)
check(all_read(), 'phase 2 read')

# 3. m3 is killed -9 right after reading a phase (its last offsets likely not committed yet).
m3 = members[2]
produce('p3', MAIN, 1600)
check(all_read(), 'phase 3 read')
m3_owned = m3.owned()
t = time.time()
m3.kill()
at_kill = committed(m3_owned)  # before the session times out: nobody else owns them yet
settle('m3 killed -9 (session timeout)', partitions(MAIN), t)
produce('p3b', MAIN, 1600)
check(all_read(), 'phase 3b read after the kill')

# 4. A topic created later that matches the regex joins the subscription.
t = time.time()
produce('p4', LATE, 800)
settle(f'{LATE} created later, matched by {REGEX}', partitions(MAIN, LATE), t)
check(all_read(), 'phase 4 read (the late topic)')

# 5. The static member restarts (clean close: epoch -2) and gets the same partitions back.
m4 = members[3]
kept = m4.owned()
t = time.time()
t_ms = int(t * 1000)
m4.stop()
m4b = Member('m4b', 'group.instance.id=static-4')
members.append(m4b)
deadline = time.time() + 30
while time.time() < deadline and m4b.owned() != kept:
    time.sleep(0.02)
took = time.time() - t
check(m4b.owned() == kept, f'the restarted static member owns its {len(kept)} partitions again')
print(f'settle static member restart: {took * 1000:.0f} ms', flush=True)
settles.append(('static restart', took))
check(took < SETTLE_LIMIT, f'static member restart settles in under {SETTLE_LIMIT:.0f} s')
others_got = set().union(*(m.assigned_after(t_ms) for m in live() if m is not m4b))
check(not (others_got & kept), f'no other member was given the static member\'s partitions meanwhile ({sorted(others_got & kept)[:4]})')
produce('p5', MAIN, 800)
produce('p5', LATE, 800)
check(all_read(), 'phase 5 read')

# 5b. /v1/groups shows the KIP-848 members as the coordinator sees them: one entry per live member
# (client.id = the member's name), each with its epoch and exactly the partitions it owns.
if HTTP:
    deadline = time.time() + 10
    want = {m.name: m.owned() for m in live()}
    shown = None
    while time.time() < deadline:
        with urllib.request.urlopen(f'http://{HTTP}/v1/groups', timeout=10) as r:
            g = next((g for g in json.load(r)['groups'] if g['group_id'] == GROUP), None)
        shown = g and {m['client_id']: {(a['topic'], p) for a in (m['assignment'] or []) for p in a['partitions']}
                       for m in g['members']}
        if shown == want:
            break
        time.sleep(0.2)
    check(shown == want, f'/v1/groups lists each KIP-848 member with the partitions it owns ({sorted((shown or {}).keys())})')
    check(g is not None and g['kind'] == 'consumer' and g['state'] == 'Stable'
          and all(isinstance(m['member_epoch'], int) and m['member_epoch'] > 0 for m in g['members']),
          f'/v1/groups: kind consumer, state Stable, member epochs ({g and g["state"]}, '
          f'{g and [m["member_epoch"] for m in g["members"]]})')

# 5c. DescribeGroups, the classic API older tools use (librdkafka 2.0.2's list_groups), shows the
# consumer group as Kafka does: protocol type consumer, the assignor as its protocol, and each
# member's owned partitions as a classic ConsumerProtocolAssignment (decoded here from the bytes).
def classic_assignment(b):
    at, out = 2, set()  # int16 version, then [topic, [partition]], then user data
    (n,) = struct.unpack_from('>i', b, at)
    at += 4
    for _ in range(n):
        (ln,) = struct.unpack_from('>h', b, at)
        topic = b[at + 2:at + 2 + ln].decode()
        at += 2 + ln
        (k,) = struct.unpack_from('>i', b, at)
        out |= {(topic, p) for p in struct.unpack_from(f'>{k}i', b, at + 4)}
        at += 4 + 4 * k
    return out


want = {m.name: m.owned() for m in live()}
described, dg = None, None
deadline = time.time() + 10
while time.time() < deadline:
    dg = next(iter(AdminClient({'bootstrap.servers': BOOTSTRAP}).list_groups(GROUP, timeout=10)), None)
    described = dg and {m.client_id: classic_assignment(bytes(m.assignment)) for m in dg.members}
    if described == want:
        break
    time.sleep(0.2)
check(dg is not None and dg.protocol_type == 'consumer' and dg.state == 'Stable' and dg.protocol in ('uniform', 'range')
      and described == want,
      f'DescribeGroups (librdkafka 2.0.2) shows the consumer group: protocol type {dg and dg.protocol_type}, state '
      f'{dg and dg.state}, assignor {dg and dg.protocol}, each member\'s partitions '
      f'({sorted((described or {}).keys())} against {sorted(want.keys())})')

# 6. The same group id under the classic protocol is refused while the consumer group has
# members (librdkafka 2.0.2, classic JoinGroup: INCONSISTENT_GROUP_PROTOCOL).
classic_errors = []
c = Consumer({'bootstrap.servers': BOOTSTRAP, 'group.id': GROUP, 'session.timeout.ms': 6000,
              'error_cb': lambda e: classic_errors.append(e)})
c.subscribe([MAIN])
deadline = time.time() + 10
got_classic = None
while time.time() < deadline and got_classic is None:
    m = c.poll(0.2)
    if m is not None and m.error():
        classic_errors.append(m.error())
    if any('INCONSISTENT_GROUP_PROTOCOL' in str(e) or getattr(e, 'code', lambda: 0)() == 23 for e in classic_errors):
        got_classic = 'refused'
    elif c.assignment():
        got_classic = f'assigned {c.assignment()}'
c.close()
check(got_classic == 'refused', f'a classic member of the same group id is refused (INCONSISTENT_GROUP_PROTOCOL): {got_classic} {classic_errors[:2]}')

for m in live():
    m.stop()

# 7. group.remote.assignor=range in a second group: contiguous ranges of kip.main per member.
members_before = list(members)
members[:] = []
GROUP = 'kip848-e2e-range'
ra = Member('r1', 'group.remote.assignor=range')
rb = Member('r2', 'group.remote.assignor=range')
members.extend([ra, rb])
deadline = time.time() + 30
want_a = {(MAIN, p) for p in range(8)} | {(LATE, p) for p in range(8)}
want_b = {(MAIN, p) for p in range(8, 16)} | {(LATE, p) for p in range(8, 16)}
while time.time() < deadline and not ({frozenset(ra.owned()), frozenset(rb.owned())} == {frozenset(want_a), frozenset(want_b)}):
    time.sleep(0.05)
check({frozenset(ra.owned()), frozenset(rb.owned())} == {frozenset(want_a), frozenset(want_b)},
      f'range assignor: contiguous co-partitioned halves ({sorted(ra.owned())[:3]}..., {sorted(rb.owned())[:3]}...)')
for m in live():
    m.stop()
members[:] = members_before

# Every acknowledged record read; read twice only where the kill allows it.
reads = {}
for m in members:
    for tpc, p, o, v in m.records():
        reads.setdefault((tpc, p, o), []).append(m.name)
value_at = {(tp, p, o): v for tp, p, o, v in produced}
check(all(k in reads for k in value_at), f'every one of {len(value_at)} acknowledged records was read')
bad_values = [(k, v) for m in members for (tp, p, o, v) in m.records() for k in [(tp, p, o)] if value_at.get(k) != v]
check(not bad_values, f'every record read is the one produced at its offset ({bad_values[:3]})')
dups = {k: who for k, who in reads.items() if len(who) > 1}
# At-least-once around the kill, bounded by the committed offsets: a record is read twice only
# if m3 read it and it lies at or above m3's committed offset of its partition at the kill; and
# every record m3 read above that offset is read again by the new owner (which starts there).
allowed = {(tp, p, o) for tp, p, o, _ in m3.records() if (tp, p) in at_kill and o >= at_kill[(tp, p)]}
bad = {k: w for k, w in dups.items() if k not in allowed or len(w) != 2 or 'm3' not in w}
check(not bad, f'no record read twice outside the kill window ({len(bad)}: {sorted(bad.items())[:4]})')
check(set(dups) == allowed, f'the records m3 read above its committed offsets were read again ({len(allowed)} allowed, {len(dups)} read twice)')
print(f'records: {len(value_at)} acknowledged, {sum(len(w) for w in reads.values())} reads, '
      f'{len(dups)} read twice (m3 killed above committed offsets {dict(sorted(at_kill.items()))})')
errs = [(m.name, e) for m in members for e in m.events() if e[0] in ('COMMIT_ERR', 'ERR', 'REBALANCE_ERR', 'CLOSE_ERR')]
print(f'client errors reported: {errs[:10]}')
print('settles: ' + ', '.join(f'{w} {s * 1000:.0f} ms' for w, s in settles))
print(f'{len(failures)} failed')
sys.exit(1 if failures else 0)
