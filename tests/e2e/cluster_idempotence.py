#!/usr/bin/python3
"""An idempotent producer that moves between brokers of a cluster keeps its sequence: producer id
from broker A, a batch through A, the same batch (a retry) through B is acknowledged with its
original offset and not appended again, the next sequence through C follows, a gap is refused
through B; every broker's Metadata and the log agree. Raw Kafka requests (the helpers of
src/kafka/tests/it_kcat.py), so nothing in a client library hides a duplicate.
Usage: cluster_idempotence.py <topic> <host:port> <host:port> <host:port>"""
import os
import socket
import struct
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'src', 'kafka', 'tests'))
from it_kcat import batch, produce_answer, produce_v3, recv_response, request  # noqa: E402


def connect(addr):
    host, port = addr.rsplit(':', 1)
    return socket.create_connection((host, int(port)), timeout=5)


def main():
    topic, addrs = sys.argv[1].encode(), sys.argv[2:5]
    subprocess.run(['kcat', '-b', addrs[0], '-L', '-t', sys.argv[1]], capture_output=True, timeout=20)  # auto-create
    socks = [connect(a) for a in addrs]
    socks[0].sendall(request(22, 0, 1, struct.pack('>hi', -1, 60000)))
    _, _, err, pid, epoch = struct.unpack('>iihqh', recv_response(socks[0])[:20])
    assert err == 0 and pid >= 0, f'InitProducerId through {addrs[0]}: error {err}'
    corr = [10]

    def send(i, values, seq):
        corr[0] += 1
        socks[i].sendall(request(0, 3, corr[0], produce_v3(topic, batch(values, pid, epoch, seq))))
        return produce_answer(recv_response(socks[i]))

    first = send(0, [b'a', b'b'], 0)
    assert first[0] == 0, f'first batch through {addrs[0]}: {first}'
    again = send(1, [b'a', b'b'], 0)
    assert again == first, f'the retry through {addrs[1]} answered {again}, the original {first}'
    nxt = send(2, [b'c'], 2)
    assert nxt == (0, first[1] + 2), f'next sequence through {addrs[2]}: {nxt}'
    gap = send(1, [b'd'], 9)
    assert gap[0] == 45, f'a sequence gap through {addrs[1]} answered {gap} (want OUT_OF_ORDER_SEQUENCE_NUMBER)'
    got = subprocess.run(['kcat', '-b', addrs[1], '-C', '-t', sys.argv[1], '-p', '0', '-e', '-q'],
                         capture_output=True, text=True, timeout=30).stdout.split()
    assert got == ['a', 'b', 'c'], f'the partition holds {got}'
    print(f'producer {pid}: batch at offset {first[1]}, its retry through another broker answered the same '
          f'offset, nothing appended twice')


if __name__ == '__main__':
    main()
