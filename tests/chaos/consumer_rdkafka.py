#!/usr/bin/python3
"""Chaos workload: a consumer group member on librdkafka (Debian's python3-confluent-kafka), the
same history as tests/js/chaos/consumer.mjs: join (a new generation of this member: its
assignment), poll (one partition's records of one consume() call, in order), commit
(acknowledged: the next offset to read) or commit_fail, crash. Every event carries the group and
the isolation level.

Why a second client: kafkajs 2.2.4 drops an aborted transaction's records by walking the Fetch
answer's aborted-transaction list one entry per record, so when a Fetch starts inside two aborted
transactions at once it skips the second and hands its first record to a read_committed reader
(tests/chaos/README.md, Findings). librdkafka does not, so read_committed histories are recorded
with it.

usage: consumer_rdkafka.py BROKERS TOPIC GROUP PROC HISTORY STOP_FILE [ISOLATION]"""
import json
import os
import sys
import time

from confluent_kafka import Consumer, KafkaException, TopicPartition


def main():
    brokers, topic, group, proc, hist_path, stop_file = sys.argv[1:7]
    iso = sys.argv[7] if len(sys.argv) > 7 else "read_committed"
    out = open(hist_path, "a", buffering=1)
    gen = 0

    def emit(**ev):
        out.write(json.dumps({"t": int(time.time() * 1000), "proc": proc, "group": group, "iso": iso, **ev}) + "\n")

    def on_assign(consumer, parts):
        nonlocal gen
        gen += 1
        emit(type="join", gen=gen, assignment=sorted(p.partition for p in parts))

    def on_revoke(consumer, parts):
        nonlocal gen
        gen += 1
        emit(type="stop", gen=gen)

    c = Consumer({
        "bootstrap.servers": brokers, "group.id": group, "client.id": proc,
        "isolation.level": iso, "enable.auto.commit": False, "auto.offset.reset": "earliest",
        "session.timeout.ms": 6000, "heartbeat.interval.ms": 1000, "max.poll.interval.ms": 20000,
        "socket.timeout.ms": 6000, "fetch.wait.max.ms": 300, "allow.auto.create.topics": False,
    })
    c.subscribe([topic], on_assign=on_assign, on_revoke=on_revoke)
    while True:
        if os.path.exists(stop_file):
            break
        try:
            msgs = c.consume(num_messages=500, timeout=0.3)
        except KafkaException as e:
            gen += 1
            emit(type="crash", gen=gen, error=str(e)[:200])
            time.sleep(0.5)
            continue
        by_part = {}
        for m in msgs:
            if m.error():
                continue  # partition EOF and transient errors: librdkafka retries by itself
            v = m.value()
            by_part.setdefault(m.partition(), []).append([m.offset(), None if v is None else v.decode(errors="replace")])
        for p, records in by_part.items():
            g = gen
            emit(type="poll", gen=g, partition=p, records=records)
            offset = records[-1][0] + 1
            try:
                c.commit(offsets=[TopicPartition(topic, p, offset)], asynchronous=False)
                emit(type="commit", gen=g, partition=p, offset=offset)
            except KafkaException as e:
                emit(type="commit_fail", gen=g, partition=p, offset=offset, error=str(e)[:200])
    try:
        c.close()
    except KafkaException:
        pass
    out.close()


if __name__ == "__main__":
    main()
