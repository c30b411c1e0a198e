#!/usr/bin/python3
"""ACLs end to end: `floe serve` with a SASL_PLAINTEXT and a PLAINTEXT listener (so ACLs are
strict: no matching ACL, no access), users made with `floe users`, ACLs made with `floe acls`
(server down and running) and with CreateAcls / DeleteAcls. For each API family a user without
the ACL is refused with Kafka's error code and a user with it succeeds: kcat (librdkafka) for
produce, fetch, metadata and consumer groups; a raw SASL PLAIN connection with a Python reader
of the flexible versions (it_flexible's) for the exact codes of every other API.
Usage: it_acls.py <floe binary> <work dir>"""
import json
import os
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import expect, fresh_dir, run  # noqa: E402
from it_flexible import R, TAGS, carr, cstr  # noqa: E402
from it_kcat import batch  # noqa: E402
from it_security import SecBroker, floe_users, kcat  # noqa: E402
import socket  # noqa: E402

TOPIC_AUTH, GROUP_AUTH, CLUSTER_AUTH, TXN_AUTH = 29, 30, 31, 53


class SaslConn:
    """A raw Kafka connection authenticated with SASL PLAIN (SaslHandshake v1, SaslAuthenticate v2)."""

    def __init__(self, port, user, password):
        self.s = socket.create_connection(('127.0.0.1', port), timeout=10)
        self.corr = 0
        r = self.call(17, 1, struct.pack('>h', 5) + b'PLAIN', flexible=False)
        expect(r.i16() == 0, 'SaslHandshake')
        token = b'\x00' + user.encode() + b'\x00' + password.encode()
        r = self.call(36, 2, cstr(token) + TAGS)
        err = r.i16()
        expect(err == 0, f'SaslAuthenticate {user}: {err} {r.cstr()}')

    def call(self, api, ver, body, flexible=True):
        self.corr += 1
        hdr = struct.pack('>hhi', api, ver, self.corr) + struct.pack('>h', 3) + b'acl'
        if flexible:
            hdr += TAGS
        frame = hdr + body
        self.s.sendall(struct.pack('>i', len(frame)) + frame)
        n = struct.unpack('>i', self.recv(4))[0]
        r = R(self.recv(n))
        expect(r.i32() == self.corr, 'correlation id')
        if flexible:
            r.tags()
        return r

    def recv(self, n):
        out = b''
        while len(out) < n:
            chunk = self.s.recv(n - len(out))
            expect(chunk, 'connection closed')
            out += chunk
        return out


# ---- requests (flexible versions) and the error codes of their answers ----

def produce(c, topic, records):
    r = c.call(0, 9, cstr(None) + struct.pack('>hi', 1, 5000)
               + carr([cstr(topic) + carr([struct.pack('>i', 0) + cstr(records) + TAGS]) + TAGS]) + TAGS)

    def part():
        idx, err = r.i32(), r.i16()
        r.i64(), r.i64(), r.i64()
        r.arr(lambda: (r.i32(), r.cstr(), r.tags()))
        r.cstr()
        r.tags()
        return err
    return r.arr(lambda: (r.cstr(), r.arr(part), r.tags())[1])[0][0]


def list_offsets(c, topic):
    r = c.call(2, 7, struct.pack('>ib', -1, 0) + carr([cstr(topic) + carr([struct.pack('>iiq', 0, -1, -1) + TAGS])
                                                     + TAGS]) + TAGS)
    r.i32()
    return r.arr(lambda: (r.cstr(), r.arr(lambda: (r.i32(), r.i16(), r.i64(), r.i64(), r.i32(), r.tags())[1]),
                          r.tags())[1])[0][0]


def fetch(c, topic_id):
    r = c.call(1, 13, struct.pack('>iiiibii', -1, 0, 1, 1 << 20, 0, 0, -1)
               + carr([topic_id + carr([struct.pack('>iiqiqi', 0, -1, 0, -1, -1, 1 << 20) + TAGS]) + TAGS])
               + carr([]) + cstr('') + TAGS)
    r.i32(), r.i16(), r.i32()

    def fpart():
        idx, err = r.i32(), r.i16()
        r.i64(), r.i64(), r.i64()
        r.arr(lambda: (r.i64(), r.i64(), r.tags()))
        r.i32()
        r.cbytes()
        r.tags()
        return err
    return r.arr(lambda: (r.uuid(), r.arr(fpart), r.tags())[1])[0][0]


def metadata(c, topics):
    """Metadata v12: {name: (error, topic id)}; topics None: every topic."""
    body = (b'\x00' if topics is None else carr([b'\x00' * 16 + cstr(t) + TAGS for t in topics]))
    r = c.call(3, 12, body + b'\x00' + b'\x00' + TAGS)
    r.i32()
    r.arr(lambda: (r.i32(), r.cstr(), r.i32(), r.cstr(), r.tags()))
    r.cstr(), r.i32()

    def topic():
        err, name, tid, _ = r.i16(), r.cstr(), r.uuid(), r.boolean()
        r.arr(lambda: (r.i16(), r.i32(), r.i32(), r.i32(), r.arr(r.i32), r.arr(r.i32), r.arr(r.i32), r.tags()))
        r.i32()
        r.tags()
        return name, (err, tid)
    return dict(r.arr(topic))


def create_topic(c, name):
    r = c.call(19, 7, carr([cstr(name) + struct.pack('>ih', 1, 1) + carr([]) + carr([]) + TAGS])
               + struct.pack('>i', 10000) + b'\x00' + TAGS)
    r.i32()
    return r.arr(lambda: (r.cstr(), r.uuid(), r.i16()))[0][2]


def delete_topic(c, name):
    r = c.call(20, 6, carr([cstr(name) + b'\x00' * 16 + TAGS]) + struct.pack('>i', 5000) + TAGS)
    r.i32()
    return r.arr(lambda: (r.cstr(), r.uuid(), r.i16()))[0][2]


def describe_configs(c, rtype, name):
    r = c.call(32, 4, carr([struct.pack('>b', rtype) + cstr(name) + b'\x00' + TAGS]) + b'\x00\x00' + TAGS)
    r.i32()
    n = r.uv() - 1
    expect(n == 1, 'one DescribeConfigs result')
    return r.i16()


def alter_configs(c, rtype, name, key, value):
    r = c.call(44, 1, carr([struct.pack('>b', rtype) + cstr(name) + carr([cstr(key) + b'\x00' + cstr(value) + TAGS])
                            + TAGS]) + b'\x00' + TAGS)
    r.i32()
    return r.arr(lambda: (r.i16(), r.cstr(), r.i8(), r.cstr(), r.tags())[0])[0]


def find_coordinator(c, group):
    r = c.call(10, 4, b'\x00' + carr([cstr(group)]) + TAGS)
    r.i32()
    return r.arr(lambda: (r.cstr(), r.i32(), r.cstr(), r.i32(), r.i16(), r.cstr(), r.tags())[4])[0]


def offset_commit(c, group, topic):
    r = c.call(8, 8, cstr(group) + struct.pack('>i', -1) + cstr('') + cstr(None)
               + carr([cstr(topic) + carr([struct.pack('>iqi', 0, 1, -1) + cstr(None) + TAGS]) + TAGS]) + TAGS)
    r.i32()
    return r.arr(lambda: (r.cstr(), r.arr(lambda: (r.i32(), r.i16(), r.tags())[1]), r.tags())[1])[0][0]


def offset_fetch(c, group, topic):
    """(group error, partition error, offset)."""
    r = c.call(9, 8, carr([cstr(group) + carr([cstr(topic) + carr([struct.pack('>i', 0)]) + TAGS]) + TAGS])
               + b'\x00' + TAGS)
    r.i32()

    def group_entry():
        r.cstr()
        topics = r.arr(lambda: (r.cstr(), r.arr(lambda: (r.i32(), r.i64(), r.i32(), r.cstr(), r.i16(),
                                                        r.tags())), r.tags())[1])
        err = r.i16()
        r.tags()
        return err, topics
    err, topics = r.arr(group_entry)[0]
    if not topics:
        return err, None, None
    p = topics[0][0]
    return err, p[4], p[1]


def describe_group(c, group):
    r = c.call(15, 5, carr([cstr(group)]) + b'\x00' + TAGS)
    r.i32()
    return r.arr(lambda: (r.i16(), r.cstr(), r.cstr(), r.cstr(), r.cstr(),
                          r.arr(lambda: (r.cstr(), r.cstr(), r.cstr(), r.cstr(), r.cbytes(), r.cbytes(), r.tags())),
                          r.i32(), r.tags())[0])[0]


def list_groups(c):
    r = c.call(16, 4, carr([]) + TAGS)
    r.i32()
    expect(r.i16() == 0, 'ListGroups error')
    return [g for g, _, _ in r.arr(lambda: (r.cstr(), r.cstr(), r.cstr(), r.tags())[:3])]


def delete_group(c, group):
    r = c.call(42, 2, carr([cstr(group)]) + TAGS)
    r.i32()
    return r.arr(lambda: (r.cstr(), r.i16(), r.tags())[1])[0]


def delete_records(c, topic, before):
    r = c.call(21, 2, carr([cstr(topic) + carr([struct.pack('>iq', 0, before) + TAGS]) + TAGS])
               + struct.pack('>i', 5000) + TAGS)
    r.i32()
    return r.arr(lambda: (r.cstr(), r.arr(lambda: (r.i32(), r.i64(), r.i16(), r.tags())[2]), r.tags())[1])[0][0]


def init_producer_id(c, transactional_id=None):
    r = c.call(22, 4, cstr(transactional_id) + struct.pack('>iqh', 60000, -1, -1) + TAGS)
    r.i32()
    return r.i16()


def describe_cluster(c):
    r = c.call(60, 1, b'\x00' + b'\x01' + TAGS)
    r.i32()
    return r.i16()


def describe_log_dirs(c):
    r = c.call(35, 4, b'\x00' + TAGS)
    r.i32()
    return r.i16()


def scram_describe(c):
    r = c.call(50, 0, b'\x00' + TAGS)
    r.i32()
    return r.i16()


def scram_delete(c, user):
    r = c.call(51, 0, carr([cstr(user) + struct.pack('>b', 1) + TAGS]) + carr([]) + TAGS)
    r.i32()
    return r.arr(lambda: (r.cstr(), r.i16(), r.cstr(), r.tags())[1])[0]


def acl_entry(rtype, name, pattern, principal, host, op, perm):
    return (struct.pack('>b', rtype) + cstr(name) + struct.pack('>b', pattern) + cstr(principal) + cstr(host)
            + struct.pack('>bb', op, perm) + TAGS)


def create_acls(c, entries):
    r = c.call(30, 3, carr([acl_entry(*e) for e in entries]) + TAGS)
    r.i32()
    return r.arr(lambda: (r.i16(), r.cstr(), r.tags())[:2])


def acl_filter(rtype=1, name=None, pattern=1, principal=None, host=None, op=1, perm=1):
    return (struct.pack('>b', rtype) + cstr(name) + struct.pack('>b', pattern) + cstr(principal) + cstr(host)
            + struct.pack('>bb', op, perm))


def describe_acls(c, **kw):
    """(error, [(type, name, pattern, principal, host, op, perm)])."""
    r = c.call(29, 3, acl_filter(**kw) + TAGS)
    r.i32()
    err, _ = r.i16(), r.cstr()
    out = []
    for rt, name, pt, acls in r.arr(lambda: (r.i8(), r.cstr(), r.i8(),
                                             r.arr(lambda: (r.cstr(), r.cstr(), r.i8(), r.i8(), r.tags())[:4]),
                                             r.tags())[:4]):
        out += [(rt, name, pt, *a) for a in acls]
    r.tags()
    r.done()
    return err, sorted(out)


def delete_acls(c, filters):
    r = c.call(31, 3, carr([acl_filter(**f) + TAGS for f in filters]) + TAGS)
    r.i32()
    res = r.arr(lambda: (r.i16(), r.cstr(),
                         r.arr(lambda: (r.i16(), r.cstr(), r.i8(), r.cstr(), r.i8(), r.cstr(), r.cstr(), r.i8(),
                                        r.i8(), r.tags())[2:9]), r.tags())[::2])
    r.tags()
    r.done()
    return res


def main(binary, work):
    fresh_dir(work)
    os.makedirs(work, exist_ok=True)
    b = SecBroker(binary, work, ['SASL_PLAINTEXT', 'PLAINTEXT'], ['floe.security.super-users=User:admin'])
    for user in ['admin', 'alice', 'bob', 'carol']:
        r = floe_users(binary, b.data_dir, 'add', user, '--iterations', '4096', password=f'{user}-pw\n')
        expect(r.returncode == 0, f'users add {user}: {r.stderr}')

    def acls(*args, check=True):
        r = run([binary, 'acls', *args, '--set', f'floe.data-dir={b.data_dir}'], check=False)
        expect(not check or r.returncode == 0, f'floe acls {args}: {r.returncode} {r.stderr}')
        if args[0] != 'list':
            time.sleep(0.25)  # a running broker re-reads acls.json within 100 ms
        return r
    # While the server is down: alice may write and read `orders`, use group g1.
    acls('add', '--allow', 'User:alice', '--operation', 'WRITE', '--operation', 'READ', '--topic', 'orders')
    acls('add', '--allow', 'User:alice', '--operation', 'READ', '--group', 'g1')
    listed = acls('list').stdout
    expect('User:alice has ALLOW permission for operations: WRITE from hosts: * on TOPIC:LITERAL:orders' in listed
           and 'GROUP:LITERAL:g1' in listed, f'acls list (server down): {listed}')
    r = acls('add', '--allow', 'alice', '--topic', 'x', check=False)
    expect(r.returncode == 2 and 'Type:name' in r.stderr, f'bad principal: {r.stderr}')
    r = acls('add', '--allow', 'User:alice', '--operation', 'FLY', '--topic', 'x', check=False)
    expect(r.returncode == 2 and 'FLY' in r.stderr, f'bad operation: {r.stderr}')

    def props(user):
        return {'security.protocol': 'SASL_PLAINTEXT', 'sasl.mechanisms': 'PLAIN', 'sasl.username': user,
                'sasl.password': f'{user}-pw'}
    try:
        b.start()
        sb = b.bootstrap('SASL_PLAINTEXT')
        port = b.ports['SASL_PLAINTEXT']
        admin, alice, bob = (SaslConn(port, u, f'{u}-pw') for u in ['admin', 'alice', 'bob'])
        expect(create_topic(admin, 'orders') == 0, 'admin (super user) creates orders')

        # ---- produce: bob refused, alice accepted (kcat and raw) ----
        lines = ''.join(f'k{i}:v{i}\n' for i in range(20))
        r = kcat(sb, props('bob'), '-P', '-t', 'orders', '-K:', input=lines, check=False)
        expect(r.returncode != 0 and 'authoriz' in r.stderr.lower(), f'bob produce: {r.returncode} {r.stderr[-300:]}')
        kcat(sb, props('alice'), '-P', '-t', 'orders', '-K:', input=lines)
        expect(produce(bob, 'orders', batch([b'x'])) == TOPIC_AUTH, 'bob Produce: TOPIC_AUTHORIZATION_FAILED')
        expect(produce(alice, 'orders', batch([b'x'])) == 0, 'alice Produce')

        # ---- fetch / list offsets ----
        tid = metadata(admin, ['orders'])['orders'][1]
        expect(fetch(bob, tid) == TOPIC_AUTH, 'bob Fetch')
        expect(fetch(alice, tid) == 0, 'alice Fetch')
        expect(list_offsets(bob, 'orders') == TOPIC_AUTH, 'bob ListOffsets')
        expect(list_offsets(alice, 'orders') == 0, 'alice ListOffsets')
        got = kcat(sb, props('alice'), '-C', '-t', 'orders', '-o', 'beginning', '-c', '20', '-e', '-q',
                   '-f', '%k:%s\n').stdout
        expect(got == lines, f'alice reads back what she wrote: {got[:80]}')
        r = kcat(sb, props('bob'), '-C', '-t', 'orders', '-o', 'beginning', '-e', '-q', check=False)
        expect(r.returncode != 0 or not r.stdout.strip(), f'bob consumes nothing: {r.stdout[:200]}')

        # ---- metadata: unauthorized topics are hidden from a full listing, refused by name ----
        expect(create_topic(admin, 'secret') == 0, 'admin creates secret')
        expect(set(metadata(alice, None)) == {'orders'}, f'alice lists only orders: {metadata(alice, None)}')
        expect(set(metadata(bob, None)) == set(), f'bob lists nothing: {metadata(bob, None)}')
        expect(set(metadata(admin, None)) == {'orders', 'secret'}, 'admin lists both')
        expect(metadata(bob, ['orders'])['orders'][0] == TOPIC_AUTH, 'bob Metadata(orders)')
        md = json.loads(kcat(sb, props('alice'), '-L', '-J').stdout)
        expect([t['topic'] for t in md['topics']] == ['orders'], f'kcat -L as alice: {md["topics"]}')
        # Auto-creation needs CREATE: bob's Metadata for a new topic is refused and creates nothing.
        expect(metadata(bob, ['bob-new'])['bob-new'][0] == TOPIC_AUTH, 'bob auto-create refused')
        expect('bob-new' not in metadata(admin, None), 'nothing auto-created for bob')

        # ---- consumer groups and offsets ----
        expect(find_coordinator(bob, 'g1') == GROUP_AUTH, 'bob FindCoordinator(g1)')
        expect(find_coordinator(alice, 'g1') == 0, 'alice FindCoordinator(g1)')
        expect(offset_commit(bob, 'g1', 'orders') == GROUP_AUTH, 'bob OffsetCommit(g1)')
        expect(offset_commit(alice, 'g1', 'orders') == 0, 'alice OffsetCommit(g1)')
        expect(offset_fetch(bob, 'g1', 'orders')[0] == GROUP_AUTH, 'bob OffsetFetch(g1)')
        expect(offset_fetch(alice, 'g1', 'orders') == (0, 0, 1), f'alice OffsetFetch {offset_fetch(alice, "g1", "orders")}')
        expect(describe_group(bob, 'g1') == GROUP_AUTH, 'bob DescribeGroups(g1)')
        expect(describe_group(alice, 'g1') == 0, 'alice DescribeGroups(g1)')
        expect(delete_group(alice, 'g1') == GROUP_AUTH, 'alice DeleteGroups(g1) without DELETE')
        # A kcat balanced consumer (JoinGroup, SyncGroup, Heartbeat, OffsetCommit, LeaveGroup) in g1.
        r = kcat(sb, {**props('alice'), 'auto.offset.reset': 'earliest'}, '-G', 'g1', 'orders', '-c', '21', '-e',
                 '-q', '-f', '%s\n', timeout=60)
        expect(len(r.stdout.split()) >= 20, f'alice consumes in g1: {r.stdout[:100]}')
        r = kcat(sb, {**props('bob'), 'auto.offset.reset': 'earliest'}, '-G', 'g1', 'orders', '-c', '1', '-e',
                 check=False, timeout=30)
        expect(r.returncode != 0 and 'authoriz' in r.stderr.lower(), f'bob in g1: {r.stderr[-300:]}')
        expect(list_groups(bob) == [] and 'g1' in list_groups(alice) and 'g1' in list_groups(admin), 'ListGroups')

        # ---- deny wins over allow; prefixed patterns; hosts ----
        acls('add', '--deny', 'User:alice', '--operation', 'READ', '--topic', 'ord', '--resource-pattern-type',
             'prefixed')
        expect(fetch(alice, tid) == TOPIC_AUTH, 'a prefixed DENY beats the literal ALLOW (broker re-reads acls.json)')
        expect(produce(alice, 'orders', batch([b'y'])) == 0, 'the DENY of READ leaves WRITE')
        acls('remove', '--deny', 'User:alice', '--operation', 'READ', '--topic', 'ord', '--resource-pattern-type',
             'prefixed')
        expect(fetch(alice, tid) == 0, 'removed DENY: alice reads again')
        acls('add', '--allow', 'User:bob', '--operation', 'READ', '--topic', 'orders', '--host', '10.9.9.9')
        expect(fetch(bob, tid) == TOPIC_AUTH, 'an ACL for another host does not apply')

        # ---- create / delete topics: CREATE on the cluster or the topic; DELETE on it ----
        expect(create_topic(bob, 'bob-t') == TOPIC_AUTH, 'bob CreateTopics')
        acls('add', '--allow', 'User:bob', '--operation', 'CREATE', '--operation', 'DELETE', '--topic', 'bob-',
             '--resource-pattern-type', 'prefixed')
        expect(create_topic(bob, 'bob-t') == 0, 'bob CreateTopics(bob-t) with CREATE on bob-*')
        expect(create_topic(bob, 'other-t') == TOPIC_AUTH, 'bob CreateTopics outside his prefix')
        expect(delete_topic(alice, 'bob-t') == TOPIC_AUTH, 'alice DeleteTopics(bob-t)')
        expect(delete_topic(bob, 'bob-t') == 0, 'bob DeleteTopics(bob-t)')

        # ---- configs ----
        expect(describe_configs(bob, 2, 'orders') == TOPIC_AUTH, 'bob DescribeConfigs(topic)')
        expect(describe_configs(bob, 4, '0') == CLUSTER_AUTH, 'bob DescribeConfigs(broker)')
        expect(alter_configs(bob, 2, 'orders', 'retention.ms', '86400000') == TOPIC_AUTH, 'bob AlterConfigs')
        acls('add', '--allow', 'User:bob', '--operation', 'ALTER_CONFIGS', '--topic', 'orders')
        expect(describe_configs(bob, 2, 'orders') == 0, 'ALTER_CONFIGS implies DESCRIBE_CONFIGS')
        expect(alter_configs(bob, 2, 'orders', 'retention.ms', '86400000') == 0, 'bob AlterConfigs with ALTER_CONFIGS')
        expect(alter_configs(bob, 4, '0', 'retention.ms', '86400000') == CLUSTER_AUTH, 'bob broker AlterConfigs')

        # ---- delete records, producer ids, cluster APIs ----
        expect(delete_records(alice, 'orders', 1) == TOPIC_AUTH, 'alice DeleteRecords without DELETE')
        acls('add', '--allow', 'User:alice', '--operation', 'DELETE', '--topic', 'orders')
        expect(delete_records(alice, 'orders', 1) == 0, 'alice DeleteRecords with DELETE')
        expect(init_producer_id(bob) == CLUSTER_AUTH, 'bob InitProducerId (no WRITE anywhere)')
        expect(init_producer_id(alice) == 0, 'alice InitProducerId (WRITE on a topic)')
        # Transactions: WRITE on the transactional id.
        expect(init_producer_id(bob, 'tx-bob') == TXN_AUTH, 'bob InitProducerId(tx-bob) without WRITE on it')
        acls('add', '--allow', 'User:bob', '--operation', 'WRITE', '--transactional-id', 'tx-bob')
        expect(init_producer_id(bob, 'tx-bob') == 0, 'bob InitProducerId(tx-bob) with WRITE on the transactional id')
        expect(init_producer_id(bob, 'tx-other') == TXN_AUTH, 'bob InitProducerId(tx-other)')
        expect(describe_cluster(bob) == CLUSTER_AUTH and describe_cluster(admin) == 0, 'DescribeCluster')
        expect(describe_log_dirs(bob) == CLUSTER_AUTH and describe_log_dirs(admin) == 0, 'DescribeLogDirs')

        # ---- SCRAM credential APIs: DESCRIBE / ALTER on the cluster ----
        expect(scram_describe(bob) == CLUSTER_AUTH and scram_describe(admin) == 0, 'DescribeUserScramCredentials')
        expect(scram_delete(bob, 'alice') == CLUSTER_AUTH, 'bob AlterUserScramCredentials')
        r = floe_users(binary, b.data_dir, 'list')
        expect('alice\t' in r.stdout, 'alice still has her credentials')

        # ---- ACL APIs: DESCRIBE / ALTER on the cluster ----
        expect(describe_acls(bob)[0] == CLUSTER_AUTH, 'bob DescribeAcls')
        expect(create_acls(bob, [(2, 'x', 3, 'User:bob', '*', 2, 3)]) == [(CLUSTER_AUTH, 'Cluster authorization failed.')],
               'bob CreateAcls')
        expect(delete_acls(bob, [{}])[0][0] == CLUSTER_AUTH, 'bob DeleteAcls')
        res = create_acls(admin, [(2, 'audit', 3, 'User:bob', '*', 3, 3), (2, 'audit', 3, 'bob', '*', 3, 3),
                                  (4, 'other', 3, 'User:bob', '*', 7, 3), (3, 'grp', 4, 'User:bob', '*', 8, 2)])
        expect([e for e, _ in res] == [0, 42, 42, 0], f'CreateAcls results: {res}')
        err, found = describe_acls(admin, rtype=2, name='audit', pattern=3)
        expect(err == 0 and found == [(2, 'audit', 3, 'User:bob', '*', 3, 3)], f'DescribeAcls literal: {found}')
        err, found = describe_acls(admin, rtype=2, name='orders', pattern=2, principal='User:alice')
        expect(err == 0 and {f[5] for f in found} == {3, 4, 6}, f'DescribeAcls MATCH for alice on orders: {found}')
        expect('User:bob has ALLOW permission for operations: READ from hosts: * on TOPIC:LITERAL:audit'
               in acls('list', '--topic', 'audit').stdout, 'floe acls list sees CreateAcls (server running)')
        expect(create_topic(admin, 'audit') == 0, 'admin creates audit')
        bob2 = SaslConn(port, 'bob', 'bob-pw')
        expect(list_offsets(bob2, 'audit') == 0, 'bob may describe audit (READ implies DESCRIBE)')
        res = delete_acls(admin, [{'rtype': 2, 'name': 'audit', 'pattern': 3}, {'rtype': 3, 'pattern': 4}])
        expect(res[0][0] == 0 and res[0][1] == [(2, 'audit', 3, 'User:bob', '*', 3, 3)]
               and res[1][1] == [(3, 'grp', 4, 'User:bob', '*', 8, 2)], f'DeleteAcls: {res}')
        expect(list_offsets(bob2, 'audit') == TOPIC_AUTH, 'deleted ACL no longer applies')
        expect(describe_acls(admin, rtype=0)[0] == 42, 'DescribeAcls with an UNKNOWN filter: INVALID_REQUEST')

        # ---- kafkajs: createAcls / describeAcls / deleteAcls and a producer refused, then allowed ----
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..', 'tests', 'js', 'kafka',
                              'acls.mjs')
        r = subprocess.run(['node', script], capture_output=True, text=True, timeout=110,
                           env={**os.environ, 'FLOE_BROKER': sb})
        expect(r.returncode == 0, f'acls.mjs failed ({r.returncode}): {r.stdout[-1000:]} {r.stderr[-2000:]}')

        # ---- a client that keeps failing authentication is answered later and later ----
        def failed_login():
            t0 = time.time()
            with socket.create_connection(('127.0.0.1', port), timeout=10) as raw:
                def call(api, ver, body, flexible):
                    hdr = struct.pack('>hhih', api, ver, 1, 3) + b'bad' + (TAGS if flexible else b'')
                    raw.sendall(struct.pack('>i', len(hdr + body)) + hdr + body)
                    n = struct.unpack('>i', raw.recv(4))[0]
                    data = b''
                    while len(data) < n:
                        data += raw.recv(n - len(data))
                    return data
                call(17, 1, struct.pack('>h', 5) + b'PLAIN', False)
                data = call(36, 2, cstr(b'\x00alice\x00wrong') + TAGS, True)
                expect(struct.unpack('>h', data[5:7])[0] == 58, 'SASL_AUTHENTICATION_FAILED')
            return time.time() - t0
        delays = [failed_login() for _ in range(4)]
        expect(delays[0] < 0.6 and delays[3] >= 0.75 and delays[3] > delays[0] * 3, f'growing delays: {delays}')
        SaslConn(port, 'alice', 'alice-pw')  # a success starts the address over
        expect(failed_login() < 0.6, 'after a success the delay starts over')

        # ---- PLAINTEXT clients are User:ANONYMOUS ----
        r = kcat(b.bootstrap('PLAINTEXT'), {}, '-P', '-t', 'orders', input='a\n', check=False)
        expect(r.returncode != 0, 'ANONYMOUS may not write orders')
        acls('add', '--allow', 'User:ANONYMOUS', '--operation', 'WRITE', '--topic', 'orders')
        kcat(b.bootstrap('PLAINTEXT'), {}, '-P', '-t', 'orders', input='a\n')
        expect(b.proc.poll() is None, 'broker alive')
        log = b.log()
        expect('ACL added by User:admin' in log and 'ACL removed by User:admin' in log, 'ACL changes logged')
        expect('-pw' not in log, 'no password in the log')
    finally:
        b.stop()
    listed = acls('list', '--principal', 'User:bob').stdout
    expect('TOPIC:PREFIXED:bob-' in listed and 'audit' not in listed and 'alice' not in listed,
           f'acls list (server stopped again): {listed}')
    r = acls('remove', '--topic', 'nothing-here', check=False)
    expect(r.returncode == 3, f'removing nothing: {r.returncode}')
    r = run([binary, 'serve', '--set', 'floe.security.super-users=admin', '--set',
             f'floe.data-dir={os.path.join(work, "bad")}'], check=False, timeout=20)
    expect(r.returncode == 2 and 'floe.security.super-users' in r.stderr, f'bad super users: {r.stderr[-300:]}')
    # Secrets never reach `floe config` or the log: the PostgreSQL catalog URI's password.
    pg = ['--set', 'floe.storage.remote.catalog.type=sql', '--set',
          'floe.storage.remote.catalog.uri=postgresql://floe:hunter2-secret@127.0.0.1:1/cat',
          '--set', f'floe.data-dir={os.path.join(work, "pg")}', '--set', 'floe.http.listen=127.0.0.1:0',
          '--set', 'floe.kafka.listen=127.0.0.1:0']
    r = run([binary, 'config', *pg])
    expect('hunter2' not in r.stdout and 'postgresql://floe:****@127.0.0.1:1/cat' in r.stdout,
           f'floe config shows the catalog password: {r.stdout}')
    r = run([binary, 'serve', *pg], check=False, timeout=30)
    expect(r.returncode != 0 and 'hunter2' not in r.stderr + r.stdout and 'floe:****@' in r.stderr,
           f'serve with an unreachable catalog: {r.returncode} {r.stderr[-500:]}')
    http_and_tls(binary, os.path.join(work, 'tls'))
    print('acls: PASS')


def make_expired(c, d):
    """A client certificate from the trusted CA whose validity ended in 2020 (`openssl ca`
    takes explicit dates; `openssl x509 -req` of OpenSSL 3.0 does not)."""
    p = lambda n: os.path.join(d, n)  # noqa: E731
    os.makedirs(p('newcerts'), exist_ok=True)
    open(p('index.txt'), 'w').close()
    with open(p('serial'), 'w') as f:
        f.write('1000\n')
    with open(p('ca.cnf'), 'w') as f:
        f.write(f"""[ ca ]
default_ca = test_ca
[ test_ca ]
database = {p('index.txt')}
new_certs_dir = {p('newcerts')}
serial = {p('serial')}
default_md = sha256
policy = any
[ any ]
commonName = supplied
organizationName = optional
""")
    run(['openssl', 'req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=expired/O=floe-test', '-keyout',
         p('expired.key'), '-out', p('expired.csr')], timeout=60)
    run(['openssl', 'ca', '-batch', '-config', p('ca.cnf'), '-cert', c('ca.pem'), '-keyfile', c('ca.key'), '-in',
         p('expired.csr'), '-out', p('expired.pem'), '-startdate', '20200101000000Z', '-enddate',
         '20200102000000Z', '-notext'], timeout=60)
    return p('expired.pem'), p('expired.key')


def http_and_tls(binary, work):
    """The HTTP plane over TLS with bearer tokens and topic ACLs; an expired client certificate
    refused on the Kafka SSL listener; SIGHUP re-reads both servers' certificates while an open
    connection of each keeps working."""
    import hashlib
    import http.client
    import shutil
    import signal
    import ssl
    from it_security import make_certs
    os.makedirs(work, exist_ok=True)
    c = make_certs(os.path.join(work, 'certs'))
    exp_cert, exp_key = make_expired(c, os.path.join(work, 'certs'))
    # The files the broker serves, replaced later by a renewed certificate.
    served_cert, served_key = os.path.join(work, 'served.pem'), os.path.join(work, 'served.key')
    shutil.copy(c('server.pem'), served_cert)
    shutil.copy(c('server.key'), served_key)
    tokens = {'alice': 'tok-alice-0123456789', 'bob': 'tok-bob-0123456789'}
    tokens_file = os.path.join(work, 'tokens')
    with open(tokens_file, 'w') as f:
        f.write('# principal  sha256 of the token\n')
        for u, t in tokens.items():
            f.write(f'User:{u} sha256:{hashlib.sha256(t.encode()).hexdigest()}\n')
    b = SecBroker(binary, work, ['PLAINTEXT', 'SSL'],
                  ['floe.security.super-users=User:ANONYMOUS', f'floe.tls.cert-file={served_cert}',
                   f'floe.tls.key-file={served_key}', f'floe.tls.ca-file={c("ca.pem")}',
                   'floe.tls.client-auth=requested', 'floe.http.tls.enabled=true', f'floe.http.tokens-file={tokens_file}'])
    run([binary, 'acls', 'add', '--allow', 'User:alice', '--operation', 'READ', '--topic', 'web',
         '--set', f'floe.data-dir={b.data_dir}'])
    ctx = ssl.create_default_context(cafile=c('ca.pem'))
    try:
        b.start()
        import re
        hport = int(re.findall(r'http admin plane listening on [0-9.]+:(\d+)', b.log())[-1])
        kcat(b.bootstrap('PLAINTEXT'), {}, '-P', '-t', 'web', input='hello\n')
        kcat(b.bootstrap('PLAINTEXT'), {}, '-P', '-t', 'hidden', input='x\n')

        def get(path, token=None, conn=None):
            # A wrong token is answered late (http/auth.h) but never holds a valid one back: the
            # requests after the deliberate wrong-token one are answered at once, no 429.
            h = conn or http.client.HTTPSConnection('127.0.0.1', hport, context=ctx, timeout=10)
            h.request('GET', path, headers={'Authorization': f'Bearer {token}'} if token else {})
            r = h.getresponse()
            body = r.read().decode()
            return r.status, body, r.getheader('WWW-Authenticate')
        st, body, _ = get('/healthz')
        expect(st == 200, f'/healthz open without a token: {st} {body}')
        st, body, www = get('/v1/topics')
        expect(st == 401 and json.loads(body)['error']['status'] == 401 and www.startswith('Bearer'),
               f'/v1/topics without a token: {st} {body} {www}')
        st, body, _ = get('/v1/topics', 'wrong-token')
        expect(st == 401 and 'unknown bearer token' in body, f'wrong token: {st} {body}')
        st, body, _ = get('/v1/topics', tokens['alice'])
        names = [t['name'] for t in json.loads(body)['topics']]
        expect(st == 200 and names == ['web'], f'alice lists only web: {st} {names}')
        st, body, _ = get('/v1/topics/web/partitions/0/records?offset=0', tokens['alice'])
        expect(st == 200 and 'hello' in body, f'alice reads web: {st} {body[:200]}')
        st, body, _ = get('/v1/topics/web/partitions/0/records?offset=0', tokens['bob'])
        expect(st == 403 and json.loads(body)['error']['status'] == 403, f'bob refused web: {st} {body}')
        st, body, _ = get('/v1/topics/hidden/records?key=x', tokens['alice'])
        expect(st == 403, f'alice refused hidden: {st} {body}')
        log = b.log()
        expect('wrong-token' not in log and tokens['alice'] not in log, 'no token in the log')
        expect(tokens['alice'] not in open(tokens_file).read(), 'tokens file holds digests only')
        # Plain HTTP on the TLS port is refused; the server keeps serving.
        h = http.client.HTTPConnection('127.0.0.1', hport, timeout=5)
        try:
            h.request('GET', '/healthz')
            plain = h.getresponse().status
        except (ConnectionError, http.client.HTTPException, OSError):
            plain = None
        expect(plain is None, f'plain HTTP on the TLS port answered {plain}')
        # Kafka SSL: an expired client certificate is refused, a valid one works.
        ssl_props = {'security.protocol': 'SSL', 'ssl.ca.location': c('ca.pem'),
                     'ssl.certificate.location': c('client.pem'), 'ssl.key.location': c('client.key')}
        r = kcat(b.bootstrap('SSL'), {**ssl_props, 'ssl.certificate.location': exp_cert, 'ssl.key.location': exp_key,
                                      'socket.timeout.ms': '3000'}, '-L', '-m', '4', check=False)
        expect(r.returncode != 0, f'expired client certificate accepted: {r.stdout[:200]}')
        expect('client certificate: certificate has expired' in b.log(), 'the expiry is logged')
        kcat(b.bootstrap('SSL'), ssl_props, '-L', '-m', '8')

        # SIGHUP with a renewed server certificate: new connections get it, open ones go on.
        def peer_cert(port):
            with socket.create_connection(('127.0.0.1', port), timeout=5) as raw:
                with ctx.wrap_socket(raw, server_hostname='127.0.0.1') as s:
                    return s.getpeercert(binary_form=True)
        kport = b.ports['SSL']
        old_http, old_kafka = peer_cert(hport), peer_cert(kport)
        keep_http = http.client.HTTPSConnection('127.0.0.1', hport, context=ctx, timeout=10)
        expect(get('/healthz', conn=keep_http)[0] == 200, 'keep-alive connection before SIGHUP')
        keep_kafka = ctx.wrap_socket(socket.create_connection(('127.0.0.1', kport), timeout=5),
                                     server_hostname='127.0.0.1')

        def api_versions(s):
            frame = struct.pack('>hhih', 18, 0, 1, 1) + b'k'
            s.sendall(struct.pack('>i', len(frame)) + frame)
            n = struct.unpack('>i', s.recv(4))[0]
            data = b''
            while len(data) < n:
                data += s.recv(n - len(data))
            return struct.unpack('>h', data[4:6])[0]
        expect(api_versions(keep_kafka) == 0, 'Kafka TLS connection before SIGHUP')
        d = os.path.join(work, 'renew')
        os.makedirs(d, exist_ok=True)
        run(['openssl', 'req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=127.0.0.1/O=renewed', '-keyout',
             os.path.join(d, 'k'), '-out', os.path.join(d, 'csr')], timeout=60)
        run(['openssl', 'x509', '-req', '-in', os.path.join(d, 'csr'), '-CA', c('ca.pem'), '-CAkey', c('ca.key'),
             '-CAcreateserial', '-days', '2', '-out', os.path.join(d, 'pem'), '-extfile', c('server.ext')], timeout=60)
        shutil.copy(os.path.join(d, 'pem'), served_cert)
        shutil.copy(os.path.join(d, 'k'), served_key)
        b.proc.send_signal(signal.SIGHUP)
        deadline = time.time() + 10
        while 'SIGHUP: TLS certificates re-read' not in b.log() and time.time() < deadline:
            time.sleep(0.05)
        expect('SIGHUP: TLS certificates re-read' in b.log(), 'SIGHUP handled')
        new_http, new_kafka = peer_cert(hport), peer_cert(kport)
        renewed = open(os.path.join(d, 'pem')).read()
        expect(new_http != old_http and new_kafka != old_kafka, 'new connections see the renewed certificate')
        expect(ssl.DER_cert_to_PEM_cert(new_kafka).split('-----')[2].replace('\n', '')
               == renewed.split('-----')[2].replace('\n', ''), 'the renewed certificate is the one served')
        expect(get('/healthz', conn=keep_http)[0] == 200, 'the open HTTPS connection survives SIGHUP')
        expect(api_versions(keep_kafka) == 0, 'the open Kafka TLS connection survives SIGHUP')
        keep_kafka.close()
        kcat(b.bootstrap('SSL'), ssl_props, '-L', '-m', '8')
        expect(b.proc.poll() is None, 'broker alive')
    finally:
        b.stop()


if __name__ == '__main__':
    main(sys.argv[1], sys.argv[2])
