#!/usr/bin/python3
"""DescribeTransactions v0 and ListTransactions v0/v1 over a raw socket (no client library here
sends them), decoded by it_flexible.py's independent reader written from the Kafka message
definitions. Expects the transactional ids the transactions e2e left behind.
usage: txn_describe.py PORT"""
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../src/kafka/tests'))
from harness import expect  # noqa: E402
from it_flexible import Conn, TAGS, carr, cstr  # noqa: E402


def main(port):
    c = Conn(port)
    r = c.call(65, 0, carr([cstr('tx-main'), cstr('no-such-id')]) + TAGS)
    r.i32()

    def state():
        s = {'error': r.i16(), 'id': r.cstr(), 'state': r.cstr(), 'timeout': r.i32(), 'start': r.i64(),
             'pid': r.i64(), 'epoch': r.i32(),
             'topics': r.arr(lambda: (r.cstr(), r.arr(r.i32), r.tags())[:2])}
        r.tags()
        return s
    states = r.arr(state)
    r.tags()
    r.done()
    expect(len(states) == 2, f'two states, got {states}')
    main_, missing = states
    expect(main_['error'] == 0 and main_['id'] == 'tx-main', f'tx-main described: {main_}')
    expect(main_['state'] == 'CompleteCommit', f'tx-main ended committed: {main_}')
    expect(main_['timeout'] == 30000 and main_['pid'] >= 0 and main_['epoch'] >= 0, f'tx-main fields: {main_}')
    expect(missing['error'] == 105, f'unknown id answered TRANSACTIONAL_ID_NOT_FOUND: {missing}')

    def listed(ver, body):
        r = c.call(66, ver, body)
        r.i32()
        err = r.i16()
        unknown = r.arr(r.cstr)
        rows = r.arr(lambda: (r.cstr(), r.i64(), r.cstr(), r.tags())[:3])
        r.tags()
        r.done()
        return err, unknown or [], rows or []
    err, unknown, rows = listed(0, carr([]) + carr([]) + TAGS)
    ids = {row[0]: row for row in rows}
    expect(err == 0 and {'tx-main', 'tx-ctp', 'tx-zombie'} <= set(ids), f'ListTransactions v0: {rows}')
    err, unknown, rows = listed(0, carr([cstr('CompleteCommit'), cstr('Bogus')]) + carr([]) + TAGS)
    expect(unknown == ['Bogus'], f'unknown state filter reported: {unknown}')
    expect(rows and all(row[2] == 'CompleteCommit' for row in rows), f'state filter applied: {rows}')
    pid = ids['tx-main'][1]
    err, unknown, rows = listed(1, carr([]) + carr([struct.pack('>q', pid)]) + struct.pack('>q', -1) + TAGS)
    expect([row[0] for row in rows] == ['tx-main'], f'producer id filter: {rows}')
    print(f'txn_describe: {len(ids)} transactional ids listed, tx-main {main_["state"]}')


if __name__ == '__main__':
    main(int(sys.argv[1]))
