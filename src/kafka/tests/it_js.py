#!/usr/bin/python3
"""Runs one kafkajs test script (tests/js/kafka/*.mjs) against a fresh broker process.
Usage: it_js.py <script.mjs> <floe binary> <work dir>"""
import os
import signal
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Broker, fresh_dir  # noqa: E402

script, binary, work = sys.argv[1], sys.argv[2], sys.argv[3]
fresh_dir(work)
os.makedirs(work, exist_ok=True)
b = Broker(binary, os.path.join(work, 'data'))
try:
    b.start()
    r = subprocess.run(['node', script], env={**os.environ, 'FLOE_BROKER': b.bootstrap},
                       capture_output=True, text=True, timeout=110)
    sys.stdout.write(r.stdout)
    sys.stderr.write(r.stderr)
    if r.returncode != 0:
        sys.exit(f'{os.path.basename(script)} failed ({r.returncode})')
    if not b.alive():
        sys.exit('broker died during the test')
finally:
    b.stop(signal.SIGKILL)
