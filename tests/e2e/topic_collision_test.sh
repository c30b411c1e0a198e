#!/usr/bin/env bash
# One table per topic: names that differ only in '.', '-' or '_' map to one Iceberg table
# (nc.mixed-events -> nc_mixed_events), so once one exists the others are refused, through
# CreateTopics (INVALID_TOPIC_EXCEPTION, 17, as Kafka refuses '.'/'_' collisions) and through
# auto-create; DuckDB then finds only the first topic's stream keys in the table. And Kafka's
# longest topic name (249 characters) produces, consumes, offloads and survives a restart.
FLOE_BIN="$(realpath "$1")"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/lib.sh"
js="$here/../js/e2e"
work="$(mktemp -d)"
trap 'stop_floe; rm -rf "$work"' EXIT
topic=nc.mixed-events
long="long.$(printf 'x%.0s' $(seq 1 244))"   # 249 characters
long_table="long_$(printf 'x%.0s' $(seq 1 244))"

tiering=(--set floe.topic-defaults.remote.storage.enable=true --set floe.topic-defaults.segment.ms=1000
         --set floe.storage.worker.tick-interval=300ms --set floe.topic-defaults.local.retention.ms=1000)
start_floe "$work" "${tiering[@]}" || exit 1
broker=127.0.0.1:$KAFKA_PORT

seq 1 100 | sed 's/^/mixed-/' | kcat -P -b $broker -t "$topic" -X acks=all 2>"$work/kcat.err"
rc=$?
check "kcat auto-creates $topic and produces 100 records" test "$rc" -eq 0

# CreateTopics: the colliding names are refused with INVALID_TOPIC_EXCEPTION naming the topic.
node "$js/create_topics.mjs" $broker nc_mixed_events nc-mixed-events "$topic" other.topic >"$work/create.out" 2>&1
cat "$work/create.out"
code() { awk -v t="$1" '$1 == t {print $2}' "$work/create.out"; }
check "CreateTopics nc_mixed_events: INVALID_TOPIC_EXCEPTION (got $(code nc_mixed_events))" test "$(code nc_mixed_events)" = 17
check "CreateTopics nc-mixed-events: INVALID_TOPIC_EXCEPTION (got $(code nc-mixed-events))" test "$(code nc-mixed-events)" = 17
check "floe logged the refusal naming the existing topic" \
  grep -q "CreateTopics: refusing topic 'nc_mixed_events' collides with existing topic 'nc.mixed-events'" "$work/floe.log"
check "CreateTopics of the same name: TOPIC_ALREADY_EXISTS (got $(code $topic))" test "$(code $topic)" = 36
check "CreateTopics of an unrelated name works (got $(code other.topic))" test "$(code other.topic)" = 0

# Auto-create (Metadata with allow_auto_topic_creation, as kcat's producer sends it).
for name in nc_mixed_events nc-mixed-events; do
  echo "should-not-land" | timeout 30 kcat -P -b $broker -t "$name" -X acks=all -X message.timeout.ms=5000 \
    >"$work/auto.out" 2>&1
  rc=$?
  check "kcat produce to $name fails (rc=$rc: $(tr '\n' ' ' <"$work/auto.out" | head -c 200))" test "$rc" -ne 0
done
topics=$(curl -s "http://127.0.0.1:$HTTP_PORT/v1/topics")
check "no colliding topic was created" /usr/bin/python3 -c '
import json,sys
names=sorted(t["name"] for t in json.loads(sys.argv[1])["topics"])
assert names==["nc.mixed-events","other.topic"], names' "$topics"
check "floe logged the refused auto-create" grep -q "not auto-creating topic: topic 'nc_mixed_events' collides with existing topic 'nc.mixed-events'" "$work/floe.log"

# The longest topic name: produce and consume.
seq 1 300 | sed 's/^/long-/' >"$work/long.sent"
kcat -P -b $broker -t "$long" -X acks=all <"$work/long.sent" 2>"$work/long.err"
rc=$?
check "kcat produces 300 records to a 249-character topic (rc=$rc $(head -c 200 "$work/long.err"))" test "$rc" -eq 0
kcat -C -b $broker -t "$long" -o beginning -e -q -f '%s\n' >"$work/long.got" 2>/dev/null
check "kcat consumes them ($(wc -l <"$work/long.got") read)" cmp -s "$work/long.sent" "$work/long.got"

# Both tables offloaded: wait (bounded) until their committed positions cover every record.
offloaded() { # TABLE STREAM_KEY N
  /usr/bin/python3 "$here/iceberg_files.py" "$work/data/catalog.db" floe "$1" >"$work/$1.json" 2>"$work/py.err" || return 1
  /usr/bin/python3 -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))["positions"].get(sys.argv[2],0) >= int(sys.argv[3]) else 1)' \
    "$work/$1.json" "$2" "$3"
}
check "nc_mixed_events holds the 100 records within 60 s" wait_for 60 offloaded nc_mixed_events "$topic-0" 100
check "the 249-character topic's table holds its 300 records within 60 s" wait_for 60 offloaded "$long_table" "$long-0" 300
keys=$(node "$js/stream_keys.mjs" "$work/nc_mixed_events.json")
check "DuckDB: table nc_mixed_events holds only $topic rows ($keys)" test "$keys" = "{\"$topic-0\":100}"
keys=$(node "$js/stream_keys.mjs" "$work/$long_table.json")
check "DuckDB: the long topic's table holds its 300 rows (${keys:0:40}...${keys: -20})" test "$keys" = "{\"$long-0\":300}"
check "the long topic's data files are on disk" /usr/bin/python3 -c '
import json,os,sys
fs=json.load(open(sys.argv[1]))["files"]
assert fs and all(os.path.exists(f["path"]) and all(len(p) <= 255 for p in f["path"].split("/")) for f in fs), fs' "$work/$long_table.json"

# Local retention drops offloaded segments; then restart: the long topic is read through Iceberg.
for _ in $(seq 1 100); do
  start=$(curl -s "http://127.0.0.1:$HTTP_PORT/v1/topics" | /usr/bin/python3 -c '
import json,sys
print([t for t in json.load(sys.stdin)["topics"] if t["name"]==sys.argv[1]][0]["partitions"][0]["local_start"])' "$long")
  [ "$start" -gt 0 ] && break; sleep 0.2
done
check "the long topic's local segments were dropped after offload (local start $start)" test "$start" -gt 0
kill -9 "$FLOE_PID"; wait "$FLOE_PID" 2>/dev/null; FLOE_PID=
start_floe "$work" "${tiering[@]}" || exit 1
broker=127.0.0.1:$KAFKA_PORT
kcat -C -b $broker -t "$long" -o beginning -e -q -f '%s\n' >"$work/long.got2" 2>/dev/null
check "after kill -9 and restart kcat reads all 300 long-topic records ($(wc -l <"$work/long.got2") read)" cmp -s "$work/long.sent" "$work/long.got2"
seq 301 310 | sed 's/^/long-/' | kcat -P -b $broker -t "$long" -X acks=all 2>/dev/null
rc=$?
check "the long topic takes more records after the restart" test "$rc" -eq 0
n=$(kcat -C -b $broker -t "$topic" -o beginning -e -q -f '%s\n' 2>/dev/null | grep -c '^mixed-')
check "kcat reads the 100 $topic records after the restart (got $n)" test "$n" -eq 100
stop_floe; rc=$?
check "floe stops cleanly (rc=$rc)" test "$rc" -eq 0
finish
