"""Shared helpers for the Kafka integration tests: start/stop `floe serve` on a random
loopback port (retrying on collisions), run clients with timeouts, fail loudly."""
import os
import random
import shutil
import signal
import subprocess
import sys
import time

# The schema registry of every floe started by these tests listens on a free port (its default,
# 127.0.0.1:8081, would collide between tests running in parallel).
os.environ.setdefault("FLOE_SCHEMA_REGISTRY_LISTEN", "127.0.0.1:0")


def extra_sets(data_dir):
    """Extra settings for every broker of the run (tests/e2e/with_redis.sh: the Redis tier). On
    the Redis tier each data directory gets its own Redis database, as redis_sets in
    tests/e2e/lib.sh does: brokers of one test with separate data directories are separate
    clusters (a cluster has one lake, so a second directory's SQLite catalog would be refused)."""
    sets = os.environ.get('E2E_EXTRA_SETS', '').split()
    port, dbs = os.environ.get('E2E_REDIS_PORT'), os.environ.get('E2E_REDIS_DBS')
    if not port or not dbs:
        return sets
    d = os.path.realpath(data_dir)
    known = open(dbs).read().splitlines() if os.path.exists(dbs) else []
    if d not in known:
        with open(dbs, 'a') as f:
            f.write(d + '\n')
        known.append(d)
    uri = f'floe.local.redis.uri=redis://127.0.0.1:{port}/{known.index(d)}'
    return [uri if x.startswith('floe.local.redis.uri=') else x for x in sets]


class Broker:
    def __init__(self, binary, data_dir, extra=None):
        self.binary = binary
        self.data_dir = data_dir
        self.extra = extra or []
        self.proc = None
        self.port = None
        self.log = open(os.path.join(os.path.dirname(data_dir.rstrip('/')) or '.',
                                     os.path.basename(data_dir.rstrip('/')) + '.broker.log'), 'a')

    def floe_args(self, p):
        """`floe serve` with the test broker's flags mapped to Floe settings."""
        args = [self.binary, 'serve', '--set', f'floe.kafka.listen=127.0.0.1:{p}',
                '--set', f'floe.data-dir={self.data_dir}', '--set', 'floe.http.listen=127.0.0.1:0',
                '--set', 'floe.storage.worker.enabled=false']
        args += extra_sets(self.data_dir)
        flags = {'--partitions': 'floe.default-partitions', '--io-threads': 'floe.kafka.io-threads',
                 '--max-request-bytes': 'floe.kafka.socket-request-max-bytes',
                 '--log-level': 'floe.log.level'}
        i = 0
        while i < len(self.extra):
            a = self.extra[i]
            if a == '--no-auto-create':
                args += ['--set', 'floe.auto-create-topics=false']
            elif a == '--flush-interval-ms':
                i += 1
                args += ['--set', f'floe.log.flush-interval={self.extra[i]}ms']
            elif a == '--set':
                i += 1
                args += ['--set', f'floe.topic-defaults.{self.extra[i]}']
            elif a in flags:
                i += 1
                args += ['--set', f'{flags[a]}={self.extra[i]}']
            else:
                raise ValueError(f'no floe setting for test broker flag {a}')
            i += 1
        return args

    def start_floe(self, p):
        """Starts `floe serve`; returns its port once it logs that it is up, None if it exited."""
        log_path = self.log.name
        offset = os.path.getsize(log_path)
        self.proc = subprocess.Popen(self.floe_args(p), stdout=subprocess.DEVNULL, stderr=self.log)
        deadline = time.time() + 20
        while time.time() < deadline:
            with open(log_path) as f:
                f.seek(offset)
                if 'floe is up' in f.read():
                    return p
            if self.proc.poll() is not None:
                return None
            time.sleep(0.05)
        raise RuntimeError('floe did not come up in 20 s')

    def start(self, port=None):
        for attempt in range(8):
            p = port or random.randint(20000, 60000)
            got = self.start_floe(p)
            if got:
                self.port = got
                return got
            rc = self.proc.wait(timeout=10)
            if port is not None and attempt < 7:
                time.sleep(0.5)  # same port after a restart: wait for it to free up
                continue
            if 'Address already in use' not in open(self.log.name).read()[-2000:]:
                raise RuntimeError(f'floe failed to start (exit {rc}); see {self.log.name}')
        raise RuntimeError('could not bind a port after retries')

    @property
    def bootstrap(self):
        return f'127.0.0.1:{self.port}'

    def stop(self, sig=signal.SIGTERM):
        if not self.proc:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        rc = self.proc.returncode
        self.proc = None
        return rc

    def alive(self):
        return self.proc is not None and self.proc.poll() is None


def fresh_dir(path):
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(os.path.dirname(path.rstrip('/')) or '.', exist_ok=True)
    return path


def run(cmd, input=None, timeout=30, check=True):
    r = subprocess.run(cmd, input=input, capture_output=True, text=True, timeout=timeout)
    if check and r.returncode != 0:
        raise AssertionError(f'{cmd} exited {r.returncode}\nstdout: {r.stdout[-2000:]}\nstderr: {r.stderr[-2000:]}')
    return r


def expect(cond, msg):
    if not cond:
        raise AssertionError(msg)


def main(tests, argv):
    name, binary, work = argv[1], argv[2], argv[3]
    fresh_dir(work)
    os.makedirs(work, exist_ok=True)
    brokers = []

    def make(extra=None):
        b = Broker(binary, os.path.join(work, 'data'), extra)
        brokers.append(b)
        return b
    try:
        tests[name](make, work)
        print(f'{name}: PASS')
    finally:
        for b in brokers:
            b.stop(signal.SIGKILL)
