#!/usr/bin/python3
"""Integration tests of Floe's Kafka security with kcat (librdkafka) and the `openssl` CLI:
several listeners at once (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL), TLS with and without
client certificates, SASL PLAIN and SCRAM users made with `floe users`, and refusals (wrong
password, unknown user, untrusted certificate, plaintext client on a TLS port) that leave
other clients working.
Usage: it_security.py <test> <floe binary> <work dir>"""
import json
import os
import random
import re
import signal
import socket
import struct
import urllib.request
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import expect, extra_sets, fresh_dir, run  # noqa: E402

KCAT = 'kcat'


def openssl(*args):
    run(['openssl', *args], timeout=60)


def make_certs(d):
    """A CA, a server certificate for 127.0.0.1 (SAN IP), a client certificate from the CA and
    one from another CA the broker does not trust."""
    os.makedirs(d, exist_ok=True)
    p = lambda n: os.path.join(d, n)  # noqa: E731
    for ca in ['ca', 'rogue-ca']:
        openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', f'/CN=floe-test-{ca}',
                '-keyout', p(f'{ca}.key'), '-out', p(f'{ca}.pem'))
    with open(p('server.ext'), 'w') as f:
        f.write('subjectAltName=IP:127.0.0.1,DNS:localhost\n')
    for name, ca, subj, ext in [('server', 'ca', '/CN=127.0.0.1', ['-extfile', p('server.ext')]),
                                ('client', 'ca', '/CN=alice-cert/O=floe-test', []),
                                ('rogue', 'rogue-ca', '/CN=mallory', [])]:
        openssl('req', '-newkey', 'rsa:2048', '-nodes', '-subj', subj, '-keyout', p(f'{name}.key'),
                '-out', p(f'{name}.csr'))
        openssl('x509', '-req', '-in', p(f'{name}.csr'), '-CA', p(f'{ca}.pem'), '-CAkey', p(f'{ca}.key'),
                '-CAcreateserial', '-days', '2', '-out', p(f'{name}.pem'), *ext)
    return p


class SecBroker:
    """`floe serve` with several listeners on random loopback ports (retried on collisions)."""

    def __init__(self, binary, work, protocols, sets):
        self.binary, self.work, self.protocols, self.sets = binary, work, protocols, sets
        self.data_dir = os.path.join(work, 'data')
        self.log_path = os.path.join(work, 'broker.log')
        self.proc, self.ports = None, {}

    def settings(self):
        return ['--set', f'floe.data-dir={self.data_dir}', *sum((['--set', s] for s in self.sets), []),
                *extra_sets(self.data_dir)]

    def start(self):
        for _ in range(8):
            ports = {p: random.randint(20000, 60000) for p in self.protocols}
            listeners = ','.join(f'{p}://127.0.0.1:{port}' for p, port in ports.items())
            with open(self.log_path, 'a') as log:
                offset = log.tell()
                self.proc = subprocess.Popen(
                    [self.binary, 'serve', '--set', f'floe.kafka.listeners={listeners}',
                     '--set', 'floe.http.listen=127.0.0.1:0', '--set', 'floe.storage.worker.enabled=false',
                     *self.settings()], stdout=subprocess.DEVNULL, stderr=log)
            deadline = time.time() + 20
            while time.time() < deadline:
                with open(self.log_path) as f:
                    f.seek(offset)
                    if 'floe is up' in f.read():
                        self.ports = ports
                        return
                if self.proc.poll() is not None:
                    break
                time.sleep(0.05)
            else:
                raise RuntimeError('floe did not come up in 20 s')
            if 'Address already in use' not in open(self.log_path).read()[offset:]:
                raise RuntimeError(f'floe failed to start; see {self.log_path}')
        raise RuntimeError('could not bind ports after retries')

    def bootstrap(self, protocol):
        return f'127.0.0.1:{self.ports[protocol]}'

    def log(self):
        return open(self.log_path).read()

    def metrics(self):
        import re
        m = re.findall(r'http admin plane listening on [0-9.]+:(\d+)', self.log())
        return urllib.request.urlopen(f'http://127.0.0.1:{m[-1]}/metrics', timeout=10).read().decode()

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def kcat(bootstrap, props, *args, input=None, check=True, timeout=30):
    x = sum((['-X', f'{k}={v}'] for k, v in props.items()), [])
    return run([KCAT, '-b', bootstrap, *x, *args], input=input, check=check, timeout=timeout)


def roundtrip(b, protocol, props, topic, n=50):
    """Produces n records and consumes them back over one listener; returns nothing, fails loudly."""
    lines = ''.join(f'k{i}:{topic}-{i}\n' for i in range(n))
    kcat(b.bootstrap(protocol), props, '-P', '-t', topic, '-K:', input=lines)
    r = kcat(b.bootstrap(protocol), props, '-C', '-t', topic, '-o', 'beginning', '-e', '-q', '-f', '%k:%s\n')
    got = [l for l in r.stdout.split('\n') if l]
    expect(got == [l for l in lines.split('\n') if l], f'{protocol} {props.get("sasl.mechanisms", "")}: '
           f'{len(got)} records back of {n}: {got[:3]}')


def refused(b, protocol, props, what):
    """A metadata request that must fail; returns kcat's stderr."""
    r = kcat(b.bootstrap(protocol), {**props, 'socket.timeout.ms': '3000', 'reconnect.backoff.max.ms': '200'},
             '-L', '-m', '4', check=False, timeout=30)
    expect(r.returncode != 0, f'{what}: expected a refusal, got {r.stdout[:300]}')
    return r.stderr


# ---------------------------------------------------------------- tls
def tls(binary, work):
    """PLAINTEXT and SSL side by side; client certificates required on SSL; the SSL listener
    advertised as localhost (floe.kafka.advertised-listeners), the PLAINTEXT one as bound."""
    c = make_certs(os.path.join(work, 'certs'))
    b = SecBroker(binary, work, ['PLAINTEXT', 'SSL'],
                  [f'floe.tls.cert-file={c("server.pem")}', f'floe.tls.key-file={c("server.key")}',
                   f'floe.tls.ca-file={c("ca.pem")}', 'floe.tls.client-auth=required',
                   'floe.kafka.advertised-listeners=SSL://localhost:0', 'floe.security.super-users=User:ANONYMOUS'])
    # The client certificate's subject, as Kafka formats it (RFC 2253, last RDN first), is the
    # principal its ACLs name: every topic, and CREATE on the cluster for auto-creation.
    for args in [['--operation', 'ALL', '--topic', '*'], ['--operation', 'CREATE', '--cluster']]:
        r = run([binary, 'acls', 'add', '--allow', 'User:O=floe-test,CN=alice-cert', *args,
                 '--set', f'floe.data-dir={b.data_dir}'], check=False)
        expect(r.returncode == 0, f'acls add: {r.stderr}')
    try:
        b.start()
        ssl = {'security.protocol': 'SSL', 'ssl.ca.location': c('ca.pem'),
               'ssl.certificate.location': c('client.pem'), 'ssl.key.location': c('client.key')}
        roundtrip(b, 'SSL', ssl, 'over-tls', n=2000)
        # Metadata over each listener names that listener.
        md = json.loads(kcat(b.bootstrap('SSL'), ssl, '-L', '-J').stdout)
        expect(md['brokers'][0]['name'] == f'localhost:{b.ports["SSL"]}', f'SSL metadata: {md["brokers"]}')
        md = json.loads(kcat(b.bootstrap('PLAINTEXT'), {}, '-L', '-J').stdout)
        expect(md['brokers'][0]['name'] == f'127.0.0.1:{b.ports["PLAINTEXT"]}', f'plain metadata: {md["brokers"]}')
        # Records written over TLS read back over PLAINTEXT and the other way round.
        r = kcat(b.bootstrap('PLAINTEXT'), {}, '-C', '-t', 'over-tls', '-o', 'beginning', '-e', '-q', '-f', '%s\n')
        expect(len([l for l in r.stdout.split('\n') if l]) == 2000, 'TLS records read over PLAINTEXT')
        roundtrip(b, 'PLAINTEXT', {}, 'over-plain')
        # Refusals: no client certificate, an untrusted one, a plaintext client, a client
        # that does not trust the server's CA.
        refused(b, 'SSL', {'security.protocol': 'SSL', 'ssl.ca.location': c('ca.pem')}, 'no client certificate')
        refused(b, 'SSL', {**ssl, 'ssl.certificate.location': c('rogue.pem'), 'ssl.key.location': c('rogue.key')},
                'untrusted client certificate')
        refused(b, 'SSL', {}, 'plaintext client on the TLS port')
        refused(b, 'SSL', {**ssl, 'ssl.ca.location': c('rogue-ca.pem')}, 'client not trusting the server')
        log = b.log()
        expect(log.count('TLS handshake with 127.0.0.1 failed') >= 3, 'failed handshakes are logged')
        # Other clients are unaffected.
        roundtrip(b, 'SSL', ssl, 'after-refusals')
        roundtrip(b, 'PLAINTEXT', {}, 'after-refusals-plain')
        expect(b.proc.poll() is None, 'broker alive')
    finally:
        b.stop()
    # Invalid TLS settings stop start-up naming the key.
    for sets, key in [([f'floe.tls.key-file={c("server.key")}'], 'floe.tls.cert-file'),
                      ([f'floe.tls.cert-file={c("server.pem")}', f'floe.tls.key-file={c("client.key")}'],
                       'floe.tls.key-file'),
                      ([f'floe.tls.cert-file={c("missing.pem")}', f'floe.tls.key-file={c("server.key")}'],
                       'floe.tls.cert-file')]:
        r = run([binary, 'serve', '--set', 'floe.kafka.listeners=SSL://127.0.0.1:0', '--set',
                 f'floe.data-dir={os.path.join(work, "bad")}', '--set', 'floe.http.listen=127.0.0.1:0',
                 *sum((['--set', s] for s in sets), [])], check=False, timeout=20)
        expect(r.returncode == 2 and key in r.stderr, f'{sets}: exit {r.returncode}, {r.stderr[-400:]}')
    for bad in ['FOO://127.0.0.1:1', 'PLAINTEXT://127.0.0.1:1,PLAINTEXT://127.0.0.1:2', '127.0.0.1:9092']:
        r = run([binary, 'serve', '--set', f'floe.kafka.listeners={bad}', '--set',
                 f'floe.data-dir={os.path.join(work, "bad")}'], check=False, timeout=20)
        expect(r.returncode == 2 and 'floe.kafka.listeners' in r.stderr, f'{bad}: {r.stderr[-300:]}')
    r = run([binary, 'serve', '--set', 'floe.kafka.listeners=PLAINTEXT://127.0.0.1:0', '--set',
             'floe.kafka.advertised-listeners=SASL_SSL://example.com:9093', '--set',
             f'floe.data-dir={os.path.join(work, "bad")}'], check=False, timeout=20)
    expect(r.returncode == 2 and 'floe.kafka.advertised-listeners' in r.stderr, f'advertised: {r.stderr[-300:]}')


def floe_users(binary, data_dir, *args, password=None):
    return run([binary, 'users', *args, '--set', f'floe.data-dir={data_dir}'], input=password, check=False)


def raw_metadata_before_auth(bootstrap):
    """Sends Metadata v1 without authenticating; True when the broker closes the connection."""
    host, port = bootstrap.split(':')
    body = struct.pack('>i', -1)  # all topics
    client = b'raw'
    frame = struct.pack('>hhih', 3, 1, 7, len(client)) + client + body
    with socket.create_connection((host, int(port)), timeout=5) as s:
        s.sendall(struct.pack('>i', len(frame)) + frame)
        try:
            return s.recv(4) == b''
        except ConnectionResetError:
            return True


# ---------------------------------------------------------------- sasl
def sasl(binary, work):
    """SASL_SSL (SCRAM-SHA-512, SCRAM-SHA-256, PLAIN), SASL_PLAINTEXT and PLAINTEXT side by side;
    users made with `floe users` before and while the broker runs."""
    c = make_certs(os.path.join(work, 'certs'))
    b = SecBroker(binary, work, ['PLAINTEXT', 'SASL_SSL', 'SASL_PLAINTEXT'],
                  [f'floe.tls.cert-file={c("server.pem")}', f'floe.tls.key-file={c("server.key")}',
                   'floe.security.super-users=User:ANONYMOUS;User:alice;User:bob;User:carol'])
    r = floe_users(binary, b.data_dir, 'add', 'alice', password='alice-secret\n')
    expect(r.returncode == 0, f'users add alice: {r.stderr}')
    with open(os.path.join(work, 'bob.pw'), 'w') as f:
        f.write('bob-secret\n')
    r = floe_users(binary, b.data_dir, 'add', 'bob', '--mechanism', 'SCRAM-SHA-256', '--password-file',
                   os.path.join(work, 'bob.pw'))
    expect(r.returncode == 0, f'users add bob: {r.stderr}')
    r = floe_users(binary, b.data_dir, 'list')
    expect('alice\tSCRAM-SHA-256' in r.stdout and 'bob\tSCRAM-SHA-256 (iterations' in r.stdout
           and 'SCRAM-SHA-512' not in r.stdout.split('bob')[1], f'users list: {r.stdout}')
    expect('secret' not in r.stdout, 'no secret listed')
    stored = open(os.path.join(b.data_dir, 'security', 'users.json')).read()
    expect('alice-secret' not in stored and 'stored_key' in stored, 'only derived keys stored')
    expect(os.stat(os.path.join(b.data_dir, 'security', 'users.json')).st_mode & 0o077 == 0, 'users.json is 0600')

    def props(proto, mech, user, pw):
        p = {'security.protocol': proto, 'sasl.mechanisms': mech, 'sasl.username': user, 'sasl.password': pw}
        if proto == 'SASL_SSL':
            p['ssl.ca.location'] = c('ca.pem')
        return p
    try:
        b.start()
        for mech in ['SCRAM-SHA-512', 'SCRAM-SHA-256', 'PLAIN']:
            roundtrip(b, 'SASL_SSL', props('SASL_SSL', mech, 'alice', 'alice-secret'), f'ssl-{mech}')
        roundtrip(b, 'SASL_PLAINTEXT', props('SASL_PLAINTEXT', 'SCRAM-SHA-256', 'bob', 'bob-secret'), 'sasl-plain')
        roundtrip(b, 'SASL_PLAINTEXT', props('SASL_PLAINTEXT', 'PLAIN', 'bob', 'bob-secret'), 'sasl-plain-plain')
        roundtrip(b, 'PLAINTEXT', {}, 'plain-alongside')
        md = json.loads(kcat(b.bootstrap('SASL_SSL'), props('SASL_SSL', 'SCRAM-SHA-512', 'alice', 'alice-secret'),
                             '-L', '-J').stdout)
        expect(md['brokers'][0]['name'].endswith(f':{b.ports["SASL_SSL"]}'), f'SASL_SSL metadata: {md["brokers"]}')
        # Refusals: wrong password, unknown user, a mechanism the user has no credential for,
        # a plaintext client on the TLS port, a request before authentication.
        for proto, mech, user, pw, what in [
                ('SASL_SSL', 'SCRAM-SHA-512', 'alice', 'wrong', 'wrong password'),
                ('SASL_SSL', 'PLAIN', 'alice', 'wrong', 'wrong PLAIN password'),
                ('SASL_SSL', 'SCRAM-SHA-512', 'nobody', 'x', 'unknown user'),
                ('SASL_PLAINTEXT', 'SCRAM-SHA-512', 'bob', 'bob-secret', 'no SHA-512 credential')]:
            err = refused(b, proto, props(proto, mech, user, pw), what)
            expect('Authentication failed' in err or 'SASL authentication error' in err, f'{what}: {err[-500:]}')
        refused(b, 'SASL_SSL', {'security.protocol': 'SASL_PLAINTEXT', 'sasl.mechanisms': 'PLAIN',
                                'sasl.username': 'alice', 'sasl.password': 'alice-secret'}, 'plaintext on TLS')
        expect(raw_metadata_before_auth(b.bootstrap('SASL_PLAINTEXT')), 'Metadata before authentication closes')
        log = b.log()
        expect("authentication of user 'alice' from 127.0.0.1 failed" in log, 'failed authentication logged')
        expect("user 'nobody' from 127.0.0.1 failed" in log, 'unknown user logged')
        expect('alice-secret' not in log and 'bob-secret' not in log, 'no password in the log')
        # A user added while the broker runs can authenticate at once; a removed one cannot.
        r = floe_users(binary, b.data_dir, 'add', 'carol', password='carol-secret\n')
        expect(r.returncode == 0, f'users add carol: {r.stderr}')
        roundtrip(b, 'SASL_SSL', props('SASL_SSL', 'SCRAM-SHA-512', 'carol', 'carol-secret'), 'carol')
        r = floe_users(binary, b.data_dir, 'remove', 'carol')
        expect(r.returncode == 0, f'users remove carol: {r.stderr}')
        refused(b, 'SASL_SSL', props('SASL_SSL', 'SCRAM-SHA-512', 'carol', 'carol-secret'), 'removed user')
        r = floe_users(binary, b.data_dir, 'remove', 'carol')
        expect(r.returncode != 0 and 'carol' in r.stderr, f'removing a missing user: {r.returncode} {r.stderr}')
        # Others are unaffected.
        roundtrip(b, 'SASL_SSL', props('SASL_SSL', 'SCRAM-SHA-512', 'alice', 'alice-secret'), 'after-refusals')
        roundtrip(b, 'PLAINTEXT', {}, 'after-refusals-plain')
        metrics = b.metrics()
        expect('floe_kafka_sasl_authentication_failures_total{mechanism="SCRAM-SHA-512"}' in metrics,
               'failures counted')
        expect(b.proc.poll() is None, 'broker alive')
    finally:
        b.stop()
    # floe config never shows a secret; bad mechanisms stop start-up naming the key.
    r = run([binary, 'serve', '--set', 'floe.sasl.mechanisms=SCRAM-SHA-1', '--set',
             f'floe.data-dir={os.path.join(work, "bad")}'], check=False, timeout=20)
    expect(r.returncode == 2 and 'floe.sasl.mechanisms' in r.stderr, f'bad mechanism: {r.stderr[-300:]}')


# ---------------------------------------------------------------- scram_api
def scram_api(binary, work):
    """AlterUserScramCredentials / DescribeUserScramCredentials v0 over a raw socket (librdkafka
    2.0 and kafkajs do not send them), salted passwords computed by Python's own PBKDF2; the
    users they make authenticate with kcat, and `floe users list` sees them."""
    import hashlib
    from it_flexible import Conn, TAGS, carr, cstr, uvarint

    def cbytes(b):
        return uvarint(len(b) + 1) + b
    b = SecBroker(binary, work, ['PLAINTEXT', 'SASL_PLAINTEXT'],
                  ['floe.security.super-users=User:ANONYMOUS;User:alice;User:dave'])
    r = floe_users(binary, b.data_dir, 'add', 'alice', password='alice-secret\n')
    expect(r.returncode == 0, f'users add alice: {r.stderr}')
    try:
        b.start()
        c = Conn(b.ports['PLAINTEXT'])

        def alter(deletions, upsertions):
            body = carr([cstr(n) + struct.pack('>b', m) + TAGS for n, m in deletions])
            ups = []
            for n, m, it, pw in upsertions:
                salt = os.urandom(24)
                salted = hashlib.pbkdf2_hmac('sha256' if m == 1 else 'sha512', pw.encode(), salt, it)
                ups.append(cstr(n) + struct.pack('>bi', m, it) + cbytes(salt) + cbytes(salted) + TAGS)
            r = c.call(51, 0, body + carr(ups) + TAGS)
            r.i32()
            res = r.arr(lambda: (r.cstr(), r.i16(), r.cstr(), r.tags())[:3])
            r.tags()
            r.done()
            return {u: (e, m) for u, e, m in res}

        def describe(users):
            r = c.call(50, 0, (b'\x00' if users is None else carr([cstr(u) + TAGS for u in users])) + TAGS)
            r.i32()
            top = r.i16(), r.cstr()
            res = r.arr(lambda: (r.cstr(), r.i16(), r.cstr(), r.arr(lambda: (r.i8(), r.i32(), r.tags())[:2]),
                                 r.tags())[:4])
            r.tags()
            r.done()
            expect(top == (0, None), f'describe error {top}')
            return {u: (e, sorted(cs)) for u, e, _, cs in res}

        got = alter([], [('dave', 1, 4096, 'dave-pw'), ('dave', 2, 8192, 'dave-pw')])
        expect(got == {'dave': (0, None)}, f'upsert dave: {got}')
        got = alter([('nobody', 1)], [('erin', 1, 100, 'x'), ('frank', 0, 4096, 'x'), ('gina', 2, 4096, 'a'),
                                      ('gina', 2, 4096, 'b'), ('', 1, 4096, 'x')])
        expect(got['nobody'][0] == 91 and got['erin'][0] == 93 and got['frank'][0] == 33 and got['gina'][0] == 92
               and got[''][0] == 93, f'refusals: {got}')
        d = describe(None)
        expect(d == {'alice': (0, [(1, 8192), (2, 8192)]), 'dave': (0, [(1, 4096), (2, 8192)])}, f'describe all: {d}')
        d = describe(['dave', 'nobody', 'alice', 'alice'])
        expect(d['dave'] == (0, [(1, 4096), (2, 8192)]) and d['nobody'][0] == 91 and d['alice'][0] == 92,
               f'describe named: {d}')
        r = floe_users(binary, b.data_dir, 'list')
        expect('dave\tSCRAM-SHA-256 (iterations 4096), SCRAM-SHA-512 (iterations 8192)' in r.stdout,
               f'users list: {r.stdout}')

        def props(mech, user, pw):
            return {'security.protocol': 'SASL_PLAINTEXT', 'sasl.mechanisms': mech, 'sasl.username': user,
                    'sasl.password': pw}
        for mech in ['SCRAM-SHA-256', 'SCRAM-SHA-512', 'PLAIN']:
            roundtrip(b, 'SASL_PLAINTEXT', props(mech, 'dave', 'dave-pw'), f'dave-{mech}')
        # Deleting one mechanism leaves the other.
        got = alter([('dave', 1)], [])
        expect(got == {'dave': (0, None)}, f'delete dave SHA-256: {got}')
        refused(b, 'SASL_PLAINTEXT', props('SCRAM-SHA-256', 'dave', 'dave-pw'), 'deleted SHA-256 credential')
        roundtrip(b, 'SASL_PLAINTEXT', props('SCRAM-SHA-512', 'dave', 'dave-pw'), 'dave-after-delete')
        expect(describe(['dave'])['dave'] == (0, [(2, 8192)]), 'describe after delete')
    finally:
        b.stop()


# ---------------------------------------------------------------- kafkajs
def kafkajs(binary, work):
    """kafkajs over SASL_SSL with each mechanism and over SSL with a client certificate."""
    c = make_certs(os.path.join(work, 'certs'))
    b = SecBroker(binary, work, ['SASL_SSL', 'SSL'],
                  [f'floe.tls.cert-file={c("server.pem")}', f'floe.tls.key-file={c("server.key")}',
                   f'floe.tls.ca-file={c("ca.pem")}', 'floe.tls.client-auth=requested',
                   'floe.security.super-users=User:ANONYMOUS;User:alice;User:O=floe-test,CN=alice-cert'])
    r = floe_users(binary, b.data_dir, 'add', 'alice', password='alice-secret\n')
    expect(r.returncode == 0, f'users add alice: {r.stderr}')
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..', 'tests', 'js', 'kafka',
                          'sasl.mjs')
    try:
        b.start()
        r = subprocess.run(['node', script], capture_output=True, text=True, timeout=110,
                           env={**os.environ, 'FLOE_BROKER': b.bootstrap('SASL_SSL'),
                                'FLOE_SASL_SSL': b.bootstrap('SASL_SSL'), 'FLOE_SSL': b.bootstrap('SSL'),
                                'FLOE_CERTS': os.path.join(work, 'certs')})
        expect(r.returncode == 0, f'sasl.mjs failed ({r.returncode}): {r.stdout[-1000:]} {r.stderr[-2000:]}')
        expect(b.proc.poll() is None, 'broker alive')
    finally:
        b.stop()


# ---------------------------------------------------------------- reauth
def reauth(binary, work):
    """KIP-368: sessions of floe.sasl.connections-max-reauth=3s. Three clients stream across
    several sessions: kafkajs (SCRAM-SHA-256) and librdkafka 2.15 (the KIP-848 test client,
    PLAIN) re-authenticate on their connections and see no error; librdkafka 2.0 (Debian's,
    SCRAM-SHA-512) cannot, so its connection is closed when its session ends and it reconnects,
    reading every record all the same. Then alice is deleted while her kafkajs producer runs: it loses
    access within one session."""
    b = SecBroker(binary, work, ['SASL_PLAINTEXT'],
                  ['floe.security.super-users=User:alice;User:bob;User:carol', 'floe.sasl.connections-max-reauth=3s'])
    for user in ['alice', 'bob', 'carol']:
        r = floe_users(binary, b.data_dir, 'add', user, password=f'{user}-secret\n')
        expect(r.returncode == 0, f'users add {user}: {r.stderr}')
    kip848 = os.environ.get('KIP848_CLIENT_PATH', '')
    expect(os.access(kip848, os.X_OK), f'the KIP-848 client (librdkafka 2.15) is not built: {kip848!r}')
    js = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..', 'tests', 'js', 'kafka', 'reauth.mjs')
    topic = 'reauth'
    procs = []
    try:
        b.start()
        boot = b.bootstrap('SASL_PLAINTEXT')
        sasl_props = lambda mech, user: {'security.protocol': 'SASL_PLAINTEXT', 'sasl.mechanisms': mech,  # noqa: E731
                                         'sasl.username': user, 'sasl.password': f'{user}-secret'}
        kcat(boot, sasl_props('PLAIN', 'bob'), '-P', '-t', topic, input='first\n')
        # librdkafka 2.0 (Debian's, through python3-confluent-kafka; kcat itself exits when its
        # only broker connection drops) reading the partition and printing each value.
        reader = ('import sys,time\nfrom confluent_kafka import Consumer, TopicPartition\n'
                  'c = Consumer({**dict(a.split("=", 1) for a in sys.argv[2:]), "group.id": "reauth-py", '
                  '"enable.auto.commit": False})\n'
                  'c.assign([TopicPartition(sys.argv[1], 0, 0)])\nend = time.time() + 80\n'
                  'while time.time() < end:\n'
                  '    m = c.poll(0.2)\n'
                  '    if m is not None and not m.error():\n'
                  '        print(m.value().decode(), flush=True)\n')
        rd20_out = open(os.path.join(work, 'rd20.out'), 'w')
        procs.append(subprocess.Popen(
            ['/usr/bin/python3', '-c', reader, topic,
             *[f'{k}={v}' for k, v in {**sasl_props('SCRAM-SHA-512', 'bob'), 'bootstrap.servers': boot}.items()]],
            stdout=rd20_out, stderr=subprocess.DEVNULL))
        rd_out = open(os.path.join(work, 'kip848.out'), 'w')
        procs.append(subprocess.Popen(
            [kip848, boot, 'reauth-group', topic, *[f'{k}={v}' for k, v in sasl_props('PLAIN', 'carol').items()],
             'auto.offset.reset=earliest'], stdout=rd_out, stderr=subprocess.STDOUT))
        node = subprocess.Popen(['node', js], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env={**os.environ, 'FLOE_BROKER': boot, 'FLOE_REAUTH_DIR': work,
                                     'FLOE_REAUTH_TOPIC': topic, 'FLOE_REAUTH_SECONDS': '8'})
        deadline = time.time() + 60
        while not os.path.exists(os.path.join(work, 'phase1-done')) and time.time() < deadline and node.poll() is None:
            time.sleep(0.1)
        sent = int(open(os.path.join(work, 'phase1-done')).read())
        expect(sent >= 40, f'kafkajs sent {sent} records in 8 s')
        # Every client read everything so far, over at least two session ends.
        want = ['first'] + [f'js-{i}' for i in range(sent)]

        def read_all(path):  # the 2.0 reader prints values; the KIP-848 client 'REC <ms> <topic> <p> <offset> <value>'
            lines = [l for l in open(path).read().split('\n') if l]
            if path.endswith('rd20.out'):
                return lines
            return [l.split(' ', 5)[5] for l in lines if l.startswith('REC ')]
        deadline = time.time() + 20
        while time.time() < deadline and not (read_all(os.path.join(work, 'rd20.out'))[:len(want)] == want
                                              and read_all(os.path.join(work, 'kip848.out'))[:len(want)] == want):
            time.sleep(0.2)
        got_rd20 = read_all(os.path.join(work, 'rd20.out'))
        got_rd = read_all(os.path.join(work, 'kip848.out'))
        expect(got_rd20[:len(want)] == want, f'librdkafka 2.0 (reconnecting) read {len(got_rd20)} of {len(want)}: {got_rd20[-3:]}')
        expect(got_rd[:len(want)] == want, f'librdkafka 2.15 read {len(got_rd)} of {len(want)}: {got_rd[-3:]}')
        m = b.metrics()

        def count(name, labels):
            x = re.search('^' + re.escape(name + labels) + r' (\S+)$', m, re.M)
            return float(x.group(1)) if x else 0.0
        js_reauths = count('floe_kafka_sasl_reauthentications_total', '{mechanism="SCRAM-SHA-256"}')
        rd_reauths = count('floe_kafka_sasl_reauthentications_total', '{mechanism="PLAIN"}')
        expect(js_reauths >= 2, f'kafkajs re-authenticated {js_reauths} times in 8 s of 3 s sessions')
        expect(rd_reauths >= 2, f'librdkafka 2.15 re-authenticated {rd_reauths} times')
        log = b.log()
        ended = lambda user: len(re.findall(rf'SASL session of User:{user} from \S+ ended after 3000 ms', log))  # noqa: E731
        expect(ended('alice') == 0 and ended('carol') == 0,
               f'a re-authenticating client had its session ended: alice {ended("alice")}, carol {ended("carol")}')
        expect(ended('bob') >= 1, 'librdkafka 2.0 cannot re-authenticate: its session must have been ended')
        expect(count('floe_kafka_sasl_sessions_expired_total', '') >= 1, 'expired sessions counted')
        # Deleting alice ends her access within one session (3 s) plus the client's next send.
        r = floe_users(binary, b.data_dir, 'remove', 'alice')
        expect(r.returncode == 0, f'users remove alice: {r.stderr}')
        open(os.path.join(work, 'deleted'), 'w').close()
        out, err = node.communicate(timeout=60)
        expect(node.returncode == 0, f'reauth.mjs failed ({node.returncode}): {out[-500:]} {err[-1500:]}')
        res = json.load(open(os.path.join(work, 'result.json')))
        expect(res['failed_before_delete'] == 0, f'kafkajs sends failed across re-authentications: {res} {err[-1500:]}')
        expect(0 <= res['refused_after_ms'] <= 6000, f'deleted alice kept access: {res} {err[-800:]}')
        expect(re.search(r"SASL SCRAM-SHA-256 authentication of user 'alice' from \S+ failed", b.log()),
               'the refused re-authentication is logged')
        expect(b.proc.poll() is None, 'broker alive')
        print(f'reauth: kafkajs {int(js_reauths)} and librdkafka 2.15 {int(rd_reauths)} re-authentications, '
              f'librdkafka 2.0 sessions ended {ended("bob")}, deleted user refused after {res["refused_after_ms"]} ms')
    finally:
        for p in procs:
            p.terminate()
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
        b.stop()


TESTS = {'tls': tls, 'sasl': sasl, 'scram_api': scram_api, 'kafkajs': kafkajs, 'reauth': reauth}

if __name__ == '__main__':
    name, binary, work = sys.argv[1], sys.argv[2], sys.argv[3]
    fresh_dir(work)
    os.makedirs(work, exist_ok=True)
    TESTS[name](binary, work)
    print(f'{name}: PASS')
