#!/usr/bin/python3
"""Large fetches with kcat (librdkafka): a consumer asking for 64 MiB per partition reads
every record, in order, none missing; and no Fetch answer carries as many records as
librdkafka's default queued.min.messages (100000). An answer that does makes librdkafka stop
fetching for a second after it (the pre-fetch queue is "full"), which is what made a 16 MiB
max.partition.fetch.bytes fifteen times slower than 4 MiB on 100-byte records. The check reads
the fetch offsets librdkafka logs (debug=fetch), so it does not depend on timing.
Usage: it_large_fetch.py large_fetch <floe binary> <work dir>"""
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import expect, main  # noqa: E402

KCAT = 'kcat'
FETCH = 64 << 20
# librdkafka's default queued.min.messages: a partition whose pre-fetch queue holds this many
# records is not fetched again for about a second.
CLIENT_QUEUE_MIN = 100000
FETCH_LINE = re.compile(r'Fetch topic (\S+) \[(\d+)\] at offset (\d+)')


def value(i):
    return f'{i:08d}'.ljust(100, 'x')


def produce(b, topic, counts):
    """counts[p] records into partition p; record i of every partition has value(i)."""
    for p, n in counts.items():
        k = subprocess.Popen([KCAT, '-b', b.bootstrap, '-P', '-t', topic, '-p', str(p), '-X', 'linger.ms=20',
                              '-X', 'batch.size=1000000', '-X', 'queue.buffering.max.messages=1000000'],
                             stdin=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for start in range(0, n, 10000):
            k.stdin.write(''.join(value(i) + '\n' for i in range(start, min(n, start + 10000))))
        k.stdin.close()
        err = k.stderr.read()
        expect(k.wait(timeout=120) == 0, f'kcat -P {topic}[{p}] exited {k.returncode}: {err[-2000:]}')


def consume(b, work, topic, expected_per_partition):
    """kcat -C at 64 MiB per partition, checking every record as it comes; returns the fetch
    offsets librdkafka logged, by partition."""
    err_path = os.path.join(work, f'{topic}.err')
    nxt = {}
    with open(err_path, 'w') as err:
        k = subprocess.Popen([KCAT, '-b', b.bootstrap, '-C', '-t', topic, '-o', 'beginning', '-e',
                              '-f', '%p %o %s\n',
                              '-X', f'max.partition.fetch.bytes={FETCH}', '-X', f'fetch.max.bytes={FETCH}',
                              '-X', f'receive.message.max.bytes={FETCH + (1 << 20)}', '-X', 'debug=fetch'],
                             stdout=subprocess.PIPE, stderr=err, text=True)
        try:
            for line in k.stdout:
                p, o, v = line.rstrip('\n').split(' ', 2)
                p, o = int(p), int(o)
                want = nxt.get(p, 0)
                expect(o == want, f'{topic}[{p}]: offset {o} where {want} was expected')
                expect(v == value(o), f'{topic}[{p}] offset {o}: value {v[:20]!r}...')
                nxt[p] = o + 1
            expect(k.wait(timeout=240) == 0, f'kcat -C exited {k.returncode}; see {err_path}')
        finally:
            if k.poll() is None:
                k.kill()
                k.wait()
    expect(nxt == expected_per_partition, f'{topic}: read up to {nxt}, expected {expected_per_partition}')
    fetched = {}
    with open(err_path) as f:
        for line in f:
            m = FETCH_LINE.search(line)
            if m and m.group(1) == topic:
                fetched.setdefault(int(m.group(2)), []).append(int(m.group(3)))
    return fetched


def check_answer_sizes(topic, fetched, ends):
    expect(fetched, f'{topic}: librdkafka logged no "Fetch topic ... at offset" lines (debug=fetch)')
    for p, offsets in fetched.items():
        # Consecutive fetch offsets of a partition differ by what one answer carried.
        steps = [b - a for a, b in zip(offsets, offsets[1:] + [ends[p]]) if b > a]
        expect(steps and max(steps) < CLIENT_QUEUE_MIN,
               f'{topic}[{p}]: a Fetch answer carried {max(steps)} records (>= {CLIENT_QUEUE_MIN}); '
               f'answers: {steps[:20]}')
        print(f'{topic}[{p}]: {len(steps)} answers, at most {max(steps)} records each')


def large_fetch(make, work):
    # Four partitions: one with 2M records, three with 200k, read by one consumer whose Fetch
    # requests name all four, so the answer's budget is shared between them.
    b = make(['--partitions', '4'])
    b.start()
    counts = {0: 2_000_000, 1: 200_000, 2: 200_000, 3: 200_000}
    produce(b, 'large', counts)
    fetched = consume(b, work, 'large', counts)
    check_answer_sizes('large', fetched, counts)
    b.stop()
    shutil.rmtree(b.data_dir, ignore_errors=True)  # 300 MB of log


if __name__ == '__main__':
    main({'large_fetch': large_fetch}, sys.argv)
