#!/usr/bin/python3
"""Raw Kafka requests for end-to-end tests that need the exact error code of an answer (kcat
and kafkajs retry retriable errors instead of showing them):
  kafka_probe.py produce HOST:PORT TOPIC PARTITION VALUE            -> "<error code> <base offset>"
  kafka_probe.py list-offsets HOST:PORT TOPIC PARTITION TIMESTAMP   -> "<error code> <offset>"
  kafka_probe.py delete-records HOST:PORT TOPIC PARTITION OFFSET    -> "<error code> <low watermark>"
  kafka_probe.py fetch HOST:PORT TOPIC PARTITION OFFSET             -> "<error code> <record bytes>"
(Produce v3 acks=1, ListOffsets v1, DeleteRecords v0, Fetch v4 read_uncommitted; TIMESTAMP -1 latest, -2 earliest, or
milliseconds.)"""
import os
import socket
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'src', 'kafka', 'tests'))
from it_kcat import batch, kstr, recv_response, request  # noqa: E402


def topic_partition_answer(r, topic, skip=0):
    """Skips the correlation id, `skip` bytes after it (a throttle time placed first), the topics
    array (one), the topic name and the partitions array (one) of a response; returns the bytes
    from the partition's index on."""
    at = 4 + skip + 4
    n = struct.unpack('>h', r[at:at + 2])[0]
    if r[at + 2:at + 2 + n] != topic:
        raise SystemExit(f'unexpected topic in the answer: {r[at + 2:at + 2 + n]!r}')
    return r[at + 2 + n + 4:]


def main():
    cmd, addr, topic, part = sys.argv[1], sys.argv[2], sys.argv[3].encode(), int(sys.argv[4])
    host, port = addr.rsplit(':', 1)
    s = socket.create_connection((host, int(port)), timeout=30)
    if cmd == 'produce':
        records = batch([sys.argv[5].encode()])
        body = (struct.pack('>h', -1) + struct.pack('>hi', 1, 10000) + struct.pack('>i', 1) + kstr(topic)
                + struct.pack('>ii', 1, part) + struct.pack('>i', len(records)) + records)
        s.sendall(request(0, 3, 7, body))
        r = recv_response(s, timeout=30)
        idx, code, base = struct.unpack('>ihq', topic_partition_answer(r, topic)[:14])
    elif cmd == 'list-offsets':
        body = (struct.pack('>i', -1) + struct.pack('>i', 1) + kstr(topic)
                + struct.pack('>iiq', 1, part, int(sys.argv[5])))
        s.sendall(request(2, 1, 7, body))
        r = recv_response(s, timeout=30)
        idx, code, _ts, base = struct.unpack('>ihqq', topic_partition_answer(r, topic)[:22])
    elif cmd == 'delete-records':
        body = (struct.pack('>i', 1) + kstr(topic) + struct.pack('>iiq', 1, part, int(sys.argv[5]))
                + struct.pack('>i', 10000))
        s.sendall(request(21, 0, 7, body))
        r = recv_response(s, timeout=30)
        idx, base, code = struct.unpack('>iqh', topic_partition_answer(r, topic, skip=4)[:14])
    elif cmd == 'fetch':
        body = (struct.pack('>iiiib', -1, 100, 1, 1 << 20, 0) + struct.pack('>i', 1) + kstr(topic)
                + struct.pack('>iiqi', 1, part, int(sys.argv[5]), 1 << 20))
        s.sendall(request(1, 4, 7, body))
        r = recv_response(s, timeout=30)
        rest = topic_partition_answer(r, topic, skip=4)
        idx, code, _hw, _lso, naborted = struct.unpack('>ihqqi', rest[:26])
        at = 26 + max(naborted, 0) * 16
        base = struct.unpack('>i', rest[at:at + 4])[0]  # bytes of record batches (-1: null)
    else:
        raise SystemExit(f'unknown command {cmd}')
    if idx != part:
        raise SystemExit(f'answer for partition {idx}, asked {part}')
    print(code, base)


if __name__ == '__main__':
    main()
