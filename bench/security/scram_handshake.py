#!/usr/bin/python3
"""Times SASL authentications against a running floe: SCRAM (SaslHandshake + two
SaslAuthenticate round trips, client side computed with Python's hashlib/hmac) or PLAIN
(SaslHandshake + one SaslAuthenticate; the broker derives the SCRAM keys to compare), over TLS when
--ca is given (the TLS handshake timed separately).
Usage: scram_handshake.py HOST:PORT USER PASSWORD [--mechanism SCRAM-SHA-512|SCRAM-SHA-256|PLAIN] [--ca ca.pem] [-n 200]"""
import argparse
import base64
import hashlib
import hmac
import os
import socket
import ssl
import statistics
import struct
import time


def call(s, corr, api, ver, body):
    frame = struct.pack('>hhih', api, ver, corr, 5) + b'bench' + body
    s.sendall(struct.pack('>i', len(frame)) + frame)
    n = struct.unpack('>i', recv(s, 4))[0]
    data = recv(s, n)
    return data[4:]


def recv(s, n):
    out = b''
    while len(out) < n:
        chunk = s.recv(n - len(out))
        if not chunk:
            raise RuntimeError('connection closed')
        out += chunk
    return out


def authenticate_plain(s, user, password):
    r = call(s, 1, 17, 1, struct.pack('>h', 5) + b'PLAIN')
    assert struct.unpack('>h', r[:2])[0] == 0, 'handshake refused'
    token = b'\x00' + user.encode() + b'\x00' + password.encode()
    r = call(s, 2, 36, 1, struct.pack('>i', len(token)) + token)
    assert struct.unpack('>h', r[:2])[0] == 0, 'PLAIN refused'


def authenticate(s, mech, user, password):
    if mech == 'PLAIN':
        return authenticate_plain(s, user, password)
    h = hashlib.sha512 if mech == 'SCRAM-SHA-512' else hashlib.sha256
    m = mech.encode()
    r = call(s, 1, 17, 1, struct.pack('>h', len(m)) + m)
    assert struct.unpack('>h', r[:2])[0] == 0, 'handshake refused'
    cnonce = base64.b64encode(os.urandom(18)).decode().replace('=', '')
    bare = f'n={user},r={cnonce}'
    first = ('n,,' + bare).encode()
    r = call(s, 2, 36, 1, struct.pack('>i', len(first)) + first)
    err = struct.unpack('>h', r[:2])[0]
    assert err == 0, f'first refused {err}'
    ml = struct.unpack('>h', r[2:4])[0]
    off = 4 + max(ml, 0)
    n = struct.unpack('>i', r[off:off + 4])[0]
    server_first = r[off + 4:off + 4 + n].decode()
    attrs = dict(a.split('=', 1) for a in server_first.split(','))
    salted = hashlib.pbkdf2_hmac(h().name, password.encode(), base64.b64decode(attrs['s']), int(attrs['i']))
    client_key = hmac.new(salted, b'Client Key', h).digest()
    stored = h(client_key).digest()
    without = f'c=biws,r={attrs["r"]}'
    auth = f'{bare},{server_first},{without}'.encode()
    sig = hmac.new(stored, auth, h).digest()
    proof = bytes(a ^ b for a, b in zip(client_key, sig))
    final = f'{without},p={base64.b64encode(proof).decode()}'.encode()
    r = call(s, 3, 36, 1, struct.pack('>i', len(final)) + final)
    assert struct.unpack('>h', r[:2])[0] == 0, 'final refused'


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('addr')
    ap.add_argument('user')
    ap.add_argument('password')
    ap.add_argument('--mechanism', default='SCRAM-SHA-512')
    ap.add_argument('--ca')
    ap.add_argument('-n', type=int, default=200)
    a = ap.parse_args()
    host, port = a.addr.rsplit(':', 1)
    ctx = None
    if a.ca:
        ctx = ssl.create_default_context(cafile=a.ca)
    tls_ms, auth_ms = [], []
    for _ in range(a.n):
        raw = socket.create_connection((host, int(port)), timeout=10)
        raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        t0 = time.perf_counter()
        s = ctx.wrap_socket(raw, server_hostname=host) if ctx else raw
        t1 = time.perf_counter()
        authenticate(s, a.mechanism, a.user, a.password)
        t2 = time.perf_counter()
        s.close()
        tls_ms.append((t1 - t0) * 1000)
        auth_ms.append((t2 - t1) * 1000)
    q = lambda v, p: sorted(v)[min(len(v) - 1, int(p * len(v)))]  # noqa: E731
    print(f'{a.mechanism} x{a.n}: SASL exchange p50 {q(auth_ms, .5):.2f} ms p99 {q(auth_ms, .99):.2f} ms'
          + (f'; TLS handshake p50 {q(tls_ms, .5):.2f} ms p99 {q(tls_ms, .99):.2f} ms' if ctx else ''))


if __name__ == '__main__':
    main()
