"""Shared helpers for the Kafka integration tests: start/stop the broker process on a random
loopback port (retrying on collisions), run clients with timeouts, fail loudly."""
import os
import random
import shutil
import signal
import subprocess
import sys
import time


class Broker:
    def __init__(self, binary, data_dir, extra=None):
        self.binary = binary
        self.data_dir = data_dir
        self.extra = extra or []
        self.proc = None
        self.port = None
        self.log = open(os.path.join(os.path.dirname(data_dir.rstrip('/')) or '.',
                                     os.path.basename(data_dir.rstrip('/')) + '.broker.log'), 'a')

    def start(self, port=None):
        for attempt in range(8):
            p = port or random.randint(20000, 60000)
            self.proc = subprocess.Popen(
                [self.binary, '--listen', f'127.0.0.1:{p}', '--data-dir', self.data_dir] + self.extra,
                stdout=subprocess.PIPE, stderr=self.log, text=True)
            line = self.proc.stdout.readline()
            if line.startswith('listening'):
                self.port = int(line.split()[1])
                return self.port
            rc = self.proc.wait(timeout=10)
            if port is not None and attempt < 7:
                time.sleep(0.5)  # same port after a restart: wait for it to free up
                continue
            if rc != 3:
                raise RuntimeError(f'broker failed to start (exit {rc})')
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
