#!/usr/bin/env bash
# Kafka admin APIs through librdkafka's Admin API (src/kafka/tests/rdkafka_admin.c) against a
# tiered topic: configs (every Kafka topic config accepted, broker configs), CreatePartitions
# (the new partition's rows land in the same Iceberg table under stream key <topic>-<n>, read
# back by DuckDB; the count survives a restart), DeleteRecords below the local start (Fetch,
# ListOffsets and the HTTP lookups all start at the new log start; the table keeps its rows),
# OffsetDelete. Independent readers only: librdkafka, kcat, Python sqlite3 + Avro, DuckDB.
FLOE_BIN="$(realpath "$1")"
ADMIN="$(realpath "$2")"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/lib.sh"
js="$here/../js/e2e"
work="$(mktemp -d)"
trap 'stop_floe; rm -rf "$work"' EXIT
topic="adm.tiered"
table="adm_tiered"
tiered=(--set floe.topic-defaults.remote.storage.enable=true --set floe.topic-defaults.segment.ms=500
        --set floe.storage.worker.tick-interval=300ms --set floe.topic-defaults.local.retention.ms=500
        --set floe.topic-defaults.delete.retention.ms=4000)

# Every Kafka topic config is a floe.topic-defaults.<name> setting, checked by Kafka's rules.
out=$("$FLOE_BIN" serve --set floe.data-dir="$work/bad" --set floe.kafka.listen=127.0.0.1:0 \
  --set floe.http.listen=127.0.0.1:0 --set floe.topic-defaults.message.format.version=2.8 \
  --set floe.topic-defaults.min.cleanable.dirty.ratio=2 2>&1); rc=$?
check "a bad topic default stops start-up (rc=$rc)" test "$rc" -eq 2
matches() { # name, regex, actual
  check "$1 (got '$3')" grep -qE -- "$2" <<<"$3"
}
matches "naming the setting" "floe.topic-defaults.min.cleanable.dirty.ratio" "$out"

start_floe "$work" "${tiered[@]}" || exit 1
b() { echo "127.0.0.1:$KAFKA_PORT"; }
admin() { "$ADMIN" "$(b)" "$@" 2>>"$work/admin.err"; }
is() { # name, expected, actual
  check "$1 (got '$3')" test "$3" = "$2"
}

# ---- topic configs ----
is "create with delete.retention.ms and message.format.version" "ok $topic" \
  "$(admin create-topic "$topic" 2 delete.retention.ms=1000 message.format.version=2.8 min.insync.replicas=1)"
is "delete.retention.ms described as a topic config" "1000 source=DYNAMIC_TOPIC_CONFIG read_only=0 default=0" \
  "$(admin describe-config topic "$topic" delete.retention.ms)"
is "message.format.version described" "2.8 source=DYNAMIC_TOPIC_CONFIG read_only=0 default=0" \
  "$(admin describe-config topic "$topic" message.format.version)"
is "a floe.topic-defaults value is a static broker default" "4000 source=STATIC_BROKER_CONFIG read_only=0 default=0" \
  "$(admin describe-config broker 0 log.cleaner.delete.retention.ms)"
matches "unset config reported with Kafka's default" "^60000 source=DEFAULT_CONFIG read_only=0 default=1$" \
  "$(admin describe-config topic "$topic" file.delete.delay.ms)"
if [[ "${E2E_EXTRA_SETS:-}" == *floe.local.type=redis* ]]; then # no log cleaner on the Redis tier
  matches "a compacted topic is refused on the Redis tier, naming it" "^ERR INVALID_CONFIG .*floe.local.type=redis" \
    "$(admin create-topic compacted 1 cleanup.policy=compact)"
else
  is "a compacted topic is created" "ok compacted" \
    "$(admin create-topic compacted 1 cleanup.policy=compact)"
fi
matches "an unknown cleanup.policy is INVALID_CONFIG naming the key" "^ERR INVALID_CONFIG .*cleanup.policy" \
  "$(admin create-topic shredded 1 cleanup.policy=shred)"
matches "a mistyped value is INVALID_CONFIG" "^ERR INVALID_CONFIG .*delete.retention.ms" \
  "$(admin create-topic badtype 1 delete.retention.ms=soon)"
is "AlterConfigs with message.format.version" "ok" \
  "$(admin alter-config topic "$topic" message.format.version=3.0-IV1 delete.retention.ms=5000)"
is "altered value described" "3.0-IV1 source=DYNAMIC_TOPIC_CONFIG read_only=0 default=0" \
  "$(admin describe-config topic "$topic" message.format.version)"
matches "AlterConfigs on a missing topic" "^ERR UNKNOWN_TOPIC_OR_PART" \
  "$(admin alter-config topic missing retention.ms=1000)"
# ---- broker configs ----
is "broker log.retention.ms" "604800000 source=DEFAULT_CONFIG read_only=0 default=1" \
  "$(admin describe-config broker 0 log.retention.ms)"
matches "broker.id is read-only" "^0 source=STATIC_BROKER_CONFIG read_only=1" "$(admin describe-config broker 0 broker.id)"
# (AlterConfigs replaces the broker's whole dynamic set: Kafka's own dynamic broker configs that
# Floe does not use go in the same call, and are stored and described without effect.)
is "a dynamic broker config changes, with Kafka's dynamic broker configs beside it" "ok" \
  "$(admin alter-config broker 0 log.retention.ms=86400000 sasl.kerberos.min.time.before.relogin=120000 \
     num.io.threads=16 ssl.enabled.protocols=TLSv1.3)"
is "... and is described as dynamic" "86400000 source=DYNAMIC_BROKER_CONFIG read_only=0 default=0" \
  "$(admin describe-config broker 0 log.retention.ms)"
is "Kafka's sasl.kerberos.min.time.before.relogin is stored and described" \
  "120000 source=DYNAMIC_BROKER_CONFIG read_only=0 default=0" \
  "$(admin describe-config broker 0 sasl.kerberos.min.time.before.relogin)"
is "... num.io.threads too" "16 source=DYNAMIC_BROKER_CONFIG read_only=0 default=0" \
  "$(admin describe-config broker 0 num.io.threads)"
is "an unset one shows Kafka's default" "1 source=DEFAULT_CONFIG read_only=0 default=1" \
  "$(admin describe-config broker 0 log.cleaner.threads)"
matches "a value of the wrong type is refused" "^ERR INVALID_CONFIG .*num.io.threads.*not an integer" \
  "$(admin alter-config broker 0 num.io.threads=many)"
matches "an unknown broker config is refused" "^ERR INVALID_CONFIG .*unknown" \
  "$(admin alter-config broker 0 no.such.config=1)"
is "... and a refused call changed nothing" "16 source=DYNAMIC_BROKER_CONFIG read_only=0 default=0" \
  "$(admin describe-config broker 0 num.io.threads)"
is "... and topics without an override follow it" "86400000 source=DYNAMIC_DEFAULT_BROKER_CONFIG read_only=0 default=0" \
  "$(admin describe-config topic "$topic" retention.ms)"
matches "a static broker config is refused" "^ERR INVALID_CONFIG .*listeners" \
  "$(admin alter-config broker 0 listeners=PLAINTEXT://0.0.0.0:1)"

# ---- CreatePartitions on a tiered topic ----
for p in 0 1; do seq 1 10 | sed "s/^/k$p-/" | kcat -b "$(b)" -P -t "$topic" -p $p -K- 2>/dev/null; done
nparts() { kcat -b "$(b)" -L -t "$topic" 2>/dev/null | grep -c "partition [0-9]*, leader"; }
is "validate_only" "ok $topic" "$(admin create-partitions "$topic" 3 validate)"
is "validate_only adds nothing" 2 "$(nparts)"
is "CreatePartitions to 3" "ok $topic" "$(admin create-partitions "$topic" 3)"
is "metadata lists 3 partitions" 3 "$(nparts)"
matches "same count refused" "^ERR INVALID_PARTITIONS" "$(admin create-partitions "$topic" 3)"
matches "fewer refused" "^ERR INVALID_PARTITIONS" "$(admin create-partitions "$topic" 2)"
matches "unknown topic" "^ERR UNKNOWN_TOPIC_OR_PART" "$(admin create-partitions nope 4)"
for i in $(seq 0 9); do echo "k2-$i:v2-$i"; done | kcat -b "$(b)" -P -t "$topic" -p 2 -K: 2>/dev/null
positions() {
  /usr/bin/python3 "$here/iceberg_files.py" "$work/data/catalog.db" floe "$table" > "$work/files.json" 2>"$work/py.err" \
    && /usr/bin/python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["positions"]; print(p.get(sys.argv[2],0))' \
       "$work/files.json" "$1"
}
new_key_committed() { test "$(positions "$topic-2")" = 10; }   # asked again on every poll
wait_for 60 new_key_committed
is "committed position of the new stream key" 10 "$(positions "$topic-2")"
is "committed position of an old one" 10 "$(positions "$topic-0")"
is "DuckDB reads the new partition's rows under stream key $topic-2" "10 0 9 1 2" \
  "$(node "$js/stream_rows.mjs" "$work/files.json" "$topic-2")"
check "in the same table, under its own stream_key directory" \
  grep -q "/floe/$table/data/stream_key=$topic-2/segment-" "$work/files.json"

# ---- restart keeps the count ----
stop_floe
start_floe "$work" "${tiered[@]}" || exit 1
is "3 partitions after restart" 3 "$(nparts)"
is "dynamic broker config survives restart" "86400000 source=DYNAMIC_BROKER_CONFIG read_only=0 default=0" \
  "$(admin describe-config broker 0 log.retention.ms)"
is "Kafka's dynamic broker configs survive restart" "120000 source=DYNAMIC_BROKER_CONFIG read_only=0 default=0" \
  "$(admin describe-config broker 0 sasl.kerberos.min.time.before.relogin)"
is "topic config survives restart" "5000 source=DYNAMIC_TOPIC_CONFIG read_only=0 default=0" \
  "$(admin describe-config topic "$topic" delete.retention.ms)"

# ---- DeleteRecords below the local start of a tiered partition ----
local_start() {
  curl -s "http://127.0.0.1:$HTTP_PORT/v1/topics" | /usr/bin/python3 -c '
import json,sys
for t in json.load(sys.stdin)["topics"]:
  if t["name"]==sys.argv[1]:
    print([p for p in t["partitions"] if p["partition"]==2][0]["local_start"])' "$topic"
}
# A later segment rolls and local retention drops the offloaded one.
for i in $(seq 10 14); do echo "k2-$i:v2-$i"; done | kcat -b "$(b)" -P -t "$topic" -p 2 -K: 2>/dev/null
offloaded_segment_dropped() { test "$(local_start)" -gt 3; }
wait_for 60 offloaded_segment_dropped
ls_=$(local_start)
check "offsets 0..3 of partition 2 are only in the table (local start $ls_)" test "$ls_" -gt 3
earliest() { kcat -b "$(b)" -Q -t "$topic:2:-2" 2>/dev/null | awk '{print $NF}'; }
is "ListOffsets earliest before DeleteRecords is the remote start" 0 "$(earliest)"
is "DeleteRecords below offset 3 (low watermark)" 3 "$(admin delete-records "$topic" 2 3)"
is "ListOffsets earliest is the new log start" 3 "$(earliest)"
first=$(kcat -b "$(b)" -C -t "$topic" -p 2 -o beginning -e -q -f '%o\n' 2>/dev/null | head -1)
is "consuming from the beginning starts at the new log start" 3 "$first"
n=$(kcat -b "$(b)" -C -t "$topic" -p 2 -o beginning -e -q -f '%o\n' 2>/dev/null | wc -l)
is "and reads every record from there across both tiers" 12 "$n"
below=$(timeout 20 kcat -b "$(b)" -C -t "$topic" -p 2 -o 1 -e -f '%o\n' 2>&1 | head -3)
matches "fetching below it is OFFSET_OUT_OF_RANGE" "Offset out of range" "$below"
http_first=$(curl -s "http://127.0.0.1:$HTTP_PORT/v1/topics/$topic/partitions/2/records?offset=0&limit=1" \
  | /usr/bin/python3 -c 'import json,sys; r=json.load(sys.stdin)["records"]; print(r[0]["offset"] if r else "none")')
is "HTTP lookup by offset starts at the log start" 3 "$http_first"
by_key() {
  curl -s "http://127.0.0.1:$HTTP_PORT/v1/topics/$topic/records?key=$1" | /usr/bin/python3 -c '
import json,sys
d=json.load(sys.stdin)
print(",".join(str(r["offset"]) for r in d["records"]) if "records" in d else d["error"]["status"])'
}
is "HTTP lookup by key does not find a deleted record" 404 "$(by_key k2-1)"
is "HTTP lookup by key finds one above the log start in the table" 5 "$(by_key k2-5)"
matches "the table keeps its rows as history" "^1[05] 0 (9|14) 1 2$" "$(/usr/bin/python3 "$here/iceberg_files.py" "$work/data/catalog.db" floe "$table" > "$work/files.json"; node "$js/stream_rows.mjs" "$work/files.json" "$topic-2")"
matches "DeleteRecords past the high watermark" "^ERR OFFSET_OUT_OF_RANGE" "$(admin delete-records "$topic" 2 999)"
stop_floe
start_floe "$work" "${tiered[@]}" || exit 1
is "the log start survives a restart" 3 "$(earliest)"

# ---- OffsetDelete ----
kcat -b "$(b)" -G grp -o beginning -e -q "$topic" >/dev/null 2>&1 || true # commits on close
matches "the group committed partition 0" "^$topic-0 10$" "$(admin list-group-offsets grp "$topic" 0)"
is "OffsetDelete" "ok $topic-0" "$(admin delete-group-offsets grp "$topic" 0)"
is "its committed offset is gone" "$topic-0 -1001" "$(admin list-group-offsets grp "$topic" 0)"
matches "an unknown group" "^ERR GROUP_ID_NOT_FOUND" "$(admin delete-group-offsets nogroup "$topic" 0)"

stop_floe; rc=$?
check "floe stops cleanly (rc=$rc)" test "$rc" -eq 0
finish
