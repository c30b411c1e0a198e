#!/usr/bin/env python3
"""An HTTP proxy in front of an S3 server that fails a share of requests, then runs a command
with S3TEST_FAULTY_ENDPOINT set to it (and S3TEST_FAULTS_LOG to a file counting the faults):

    fault_proxy.py RATE -- command args...     (RATE: 0.15 fails 15% of requests)

Faults, chosen at random among failing requests: 500 InternalError and 503 SlowDown answered
without forwarding; the connection dropped before forwarding; the request forwarded and the
connection dropped before the answer (the outcome is unknown to the client: a create_new must
find its own object); for requests with a body, a reset mid-upload (half the body read, then
the socket reset). Signatures still hold: the Host header is forwarded unchanged.

    fault_proxy.py serve HOST PORT UPSTREAM CONTROL    (a standing proxy, for the chaos harness)

serves on HOST:PORT in front of UPSTREAM (http://host:port) until killed. CONTROL is a JSON file,
{"rate": 0.5, "delay_ms": 300}, read again whenever it changes: the share of requests failed as
above, and a delay before every request is handled (a slow object store). A missing file means no
faults. Each fault is appended to CONTROL + ".log" as it is injected."""
import http.client
import json
import os
import random
import socket
import struct
import subprocess
import sys
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlparse

upstream = urlparse(os.environ.get("S3TEST_ENDPOINT", "http://127.0.0.1:0"))
rate = 0.0
delay_ms = 0
faults = Counter()
lock = threading.Lock()
rng = random.Random(int(os.environ.get("FAULT_SEED", "15")))
control = None         # serve mode: the control file's path
control_mtime = None
fault_log = None


def count(kind):
    with lock:
        faults[kind] += 1
        if fault_log:
            fault_log.write(f"{time.time():.3f} {kind}\n")
            fault_log.flush()


def read_control():
    """Serve mode: takes rate and delay_ms from the control file when it changed."""
    global rate, delay_ms, control_mtime
    try:
        m = os.stat(control).st_mtime_ns
    except FileNotFoundError:
        rate, delay_ms, control_mtime = 0.0, 0, None
        return
    if m == control_mtime:
        return
    try:
        with open(control) as f:
            c = json.load(f)
    except (OSError, ValueError):
        return  # half-written: read again at the next request
    rate, delay_ms, control_mtime = float(c.get("rate", 0)), int(c.get("delay_ms", 0)), m


def reset(sock):
    # SO_LINGER 0: close sends RST, as a dropped connection does.
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()


class Proxy(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def handle_any(self):
        length = int(self.headers.get("Content-Length") or 0)
        with lock:
            if control:
                read_control()
            wait = delay_ms
        if wait:
            time.sleep(wait / 1000)
        with lock:
            fail = rng.random() < rate
            kind = rng.choice(["500", "503", "drop_before", "drop_after"] + (["reset_upload"] if length > 0 else []))
        if fail and kind == "reset_upload":
            self.rfile.read(length // 2)
            count(kind)
            self.close_connection = True
            return reset(self.connection)
        body = self.rfile.read(length) if length else b""
        if fail and kind in ("500", "503"):
            code, err = (500, "InternalError") if kind == "500" else (503, "SlowDown")
            data = f'<?xml version="1.0" encoding="UTF-8"?><Error><Code>{err}</Code><Message>injected</Message></Error>'.encode()
            count(kind)
            self.send_response(code)
            self.send_header("Content-Type", "application/xml")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        if fail and kind == "drop_before":
            count(kind)
            self.close_connection = True
            return reset(self.connection)
        conn = http.client.HTTPConnection(upstream.hostname, upstream.port, timeout=60)
        headers = {k: v for k, v in self.headers.items()}
        conn.request(self.command, self.path, body=body, headers=headers)
        resp = conn.getresponse()
        data = resp.read()
        conn.close()
        if fail and kind == "drop_after":
            count(kind)
            self.close_connection = True
            return reset(self.connection)
        self.send_response(resp.status)
        for k, v in resp.getheaders():
            if k.lower() not in ("content-length", "transfer-encoding", "connection", "server", "date"):
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = handle_any


def serve(host, port, up, control_path):
    global upstream, control, fault_log
    upstream, control = urlparse(up), control_path
    fault_log = open(control_path + ".log", "a")
    server = ThreadingHTTPServer((host, int(port)), Proxy)
    server.daemon_threads = True
    server.handle_error = lambda request, address: None
    server.serve_forever()


def main():
    global rate
    if sys.argv[1] == "serve":
        return serve(*sys.argv[2:6])
    sep = sys.argv.index("--")
    rate = float(sys.argv[1])
    cmd = sys.argv[sep + 1:]
    server = ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
    server.daemon_threads = True
    server.handle_error = lambda request, address: None  # clients resetting idle connections
    threading.Thread(target=server.serve_forever, daemon=True).start()
    env = dict(os.environ, S3TEST_FAULTY_ENDPOINT=f"http://127.0.0.1:{server.server_address[1]}")
    try:
        rc = subprocess.call(cmd, env=env)
    finally:
        server.shutdown()
    print("fault_proxy: injected " + ", ".join(f"{k} {v}" for k, v in sorted(faults.items())), file=sys.stderr)
    return rc


if __name__ == "__main__":
    sys.exit(main())
