"""librdkafka (python3-confluent-kafka) as a pre-0.11 client: api.version.request=false and
broker.version.fallback=0.9.0 make it send Produce v1 (message format v0/v1) and Fetch v1, which
Floe does not serve. Each must come back as a clear UNSUPPORTED_VERSION error, not a parse
failure ("Read underflow") nor a silent hang; a current client on the same broker then produces
and consumes as usual.

usage: old_clients.py BOOTSTRAP      prints one line per check; exit 0 when all hold"""
import sys
import time

from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition

bootstrap = sys.argv[1]
old = {"bootstrap.servers": bootstrap, "api.version.request": False, "broker.version.fallback": "0.9.0"}
failed = 0


def check(name, ok, detail=""):
    global failed
    print(("ok   " if ok else "FAIL ") + name + (f" ({detail})" if detail else ""))
    failed += 0 if ok else 1


def first_error(consumer, seconds):
    t0 = time.time()
    while time.time() - t0 < seconds:
        m = consumer.poll(0.5)
        if m is not None and m.error() and m.error().code() != KafkaError._PARTITION_EOF:
            return m.error()
    return None


errs = []
p = Producer(dict(old, **{"message.timeout.ms": 10000}))
for i in range(3):
    p.produce("old-clients", b"v%d" % i, partition=0, on_delivery=lambda e, m: errs.append(e))
left = p.flush(20)
check("an old producer's messages fail, each with UNSUPPORTED_VERSION",
      left == 0 and len(errs) == 3 and all(e is not None and e.code() == KafkaError.UNSUPPORTED_VERSION for e in errs),
      f"{left} left, errors {[str(e) for e in errs]}")

c = Consumer(dict(old, **{"group.id": "old-clients", "enable.auto.commit": False}))
c.assign([TopicPartition("old-clients", 0, 0)])
e = first_error(c, 10)
check("an old consumer's Fetch fails with UNSUPPORTED_VERSION", e is not None and e.code() == KafkaError.UNSUPPORTED_VERSION, str(e))
c.close()

new = {"bootstrap.servers": bootstrap}
errs = []
p = Producer(dict(new, **{"message.timeout.ms": 10000}))
for i in range(3):
    p.produce("old-clients", b"n%d" % i, partition=0, on_delivery=lambda e, m: errs.append(e))
left = p.flush(20)
check("a current producer on the same broker carries on", left == 0 and errs == [None] * 3, str(errs))
c = Consumer(dict(new, **{"group.id": "new-clients", "enable.auto.commit": False}))
c.assign([TopicPartition("old-clients", 0, 0)])
got, t0 = [], time.time()
while len(got) < 3 and time.time() - t0 < 15:
    m = c.poll(0.5)
    if m is not None and not m.error():
        got.append(m.value())
c.close()
check("... and a current consumer reads what it wrote", got == [b"n0", b"n1", b"n2"], str(got))
sys.exit(1 if failed else 0)
