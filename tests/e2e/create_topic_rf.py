"""CreateTopics with a replication factor through librdkafka's Admin API (python3-confluent-kafka),
and the replica lists Metadata then gives.

usage: create_topic_rf.py BOOTSTRAP TOPIC PARTITIONS RF   -> "ok" or "ERR <Kafka error name> <message>"
       create_topic_rf.py BOOTSTRAP TOPIC                 -> one line per partition: "<leader> <replicas> <isrs>"
                                                             (comma-separated broker ids)"""
import sys

from confluent_kafka.admin import AdminClient, NewTopic

admin = AdminClient({"bootstrap.servers": sys.argv[1]})
if len(sys.argv) == 5:
    topic, parts, rf = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    fut = admin.create_topics([NewTopic(topic, num_partitions=parts, replication_factor=rf)], request_timeout=15)[topic]
    try:
        fut.result(20)
        print("ok")
    except Exception as e:  # a KafkaException carrying the broker's error
        err = e.args[0] if e.args else e
        print(f"ERR {err.name() if hasattr(err, 'name') else type(e).__name__} {err.str() if hasattr(err, 'str') else e}")
else:
    md = admin.list_topics(sys.argv[2], timeout=15)
    t = md.topics[sys.argv[2]]
    for p in sorted(t.partitions.values(), key=lambda p: p.id):
        print(p.leader, ",".join(map(str, p.replicas)), ",".join(map(str, p.isrs)))
