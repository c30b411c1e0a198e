#!/usr/bin/env bash
# Redis unavailable under floe.local.type=redis (issue 16): a tiered topic offloaded to Iceberg,
# then redis-server killed while an idempotent acks=all kafkajs producer runs:
#  (a) Produce answers a retriable Kafka error (raw request: KAFKA_STORAGE_ERROR), floe lives on;
#  (b) Kafka Fetch of offloaded offsets is served from Iceberg (kcat from an offset and from the
#      beginning); ListOffsets earliest answers the remote start, by time from Iceberg, latest a
#      retriable error (the log end is unknown without Redis); Metadata answers;
#  (c) HTTP lookups by offset and by key answer from Iceberg (by key says the local tier is
#      unavailable), an offset Iceberg does not hold answers 503;
#  (d) /readyz is 503 naming redis, /healthz (liveness) stays 200;
#  (e) Redis restarted (AOF on, same dir): produce resumes, every acknowledged record is in the
#      topic exactly once, and the latest offset answers again.
FLOE_BIN="$(realpath "$1")"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/lib.sh"
work="$(mktemp -d)"
REDIS_PID=; NODE_PID=
trap '[ -n "$NODE_PID" ] && kill -9 $NODE_PID 2>/dev/null; stop_floe; stop_redis; rm -rf "$work"' EXIT
REDIS_PORT=$(free_port)
start_redis || exit 1
start_floe "$work" --set floe.local.type=redis --set floe.local.redis.uri=redis://127.0.0.1:$REDIS_PORT \
  --set floe.local.redis.command-timeout=1s --set floe.local.redis.connect-timeout=1s \
  --set floe.topic-defaults.remote.storage.enable=true --set floe.topic-defaults.segment.ms=500 \
  --set floe.storage.worker.tick-interval=200ms --set floe.default-partitions=1 || exit 1
broker=127.0.0.1:$KAFKA_PORT
api="http://127.0.0.1:$HTTP_PORT/v1"
probe() { timeout 60 /usr/bin/python3 "$here/kafka_probe.py" "$@" 2>&1; }
jq_() { /usr/bin/python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
n=2000

# A tiered topic, every record offloaded (the records stay in Redis too: default local retention).
# Two rounds a moment apart, so that timestamps tell the halves apart (ListOffsets by time).
seq 0 $((n / 2 - 1)) | sed 's/.*/k&:v&/' | kcat -P -b $broker -t hot -K: -X acks=all
sleep 0.1
seq $((n / 2)) $((n - 1)) | sed 's/.*/k&:v&/' | kcat -P -b $broker -t hot -K: -X acks=all
for _ in $(seq 1 150); do
  off=$(curl -s "$api/topics" | jq_ "[p['offloaded_up_to'] for t in d['topics'] if t['name']=='hot' for p in t['partitions']][0]" 2>/dev/null)
  [ "${off:-0}" -ge $n ] && break; sleep 0.2
done
check "hot: all $n records offloaded to Iceberg (marker ${off:-none})" test "${off:-0}" -ge $n
kcat -C -b $broker -t hot -p 0 -o beginning -e -q -f '%o %T\n' > "$work/ts.txt"
check "hot: $n records read back with Redis up" test "$(wc -l < "$work/ts.txt")" -eq $n
ts_at=$(awk -v o=$((n / 2 + 10)) '$1==o {print $2}' "$work/ts.txt")
want_ts=$(awk -v t="$ts_at" '$2>=t {print $1; exit}' "$work/ts.txt")

# DeleteRecords below offset 5: the floor must keep hiding those records when Iceberg serves alone.
floor=5
got=$(probe delete-records $broker hot 0 $floor)
check "DeleteRecords below $floor (got '$got')" test "$got" = "0 $floor"
# An idempotent acks=all producer runs across the outage.
FLOE_BROKER=$broker FLOE_TOPIC=acked FLOE_ACKED="$work/acked.txt" FLOE_SECONDS=6 \
  node "$here/../js/kafka/crash_producer.mjs" > "$work/producer.out" 2>&1 &
NODE_PID=$!
sleep 3 # its first 100+ acknowledgements before the outage (1.5 s was too short once on a loaded machine)

stop_redis
# (a) Produce: a retriable error, and floe lives on.
got=$(probe produce $broker hot 0 late)
check "(a) produce with Redis down: KAFKA_STORAGE_ERROR (56), got '$got'" test "${got%% *}" = 56
check "(a) floe is still running" kill -0 "$FLOE_PID"
# (b) Fetch from Iceberg, ListOffsets, Metadata.
got=$(timeout 60 kcat -C -b $broker -t hot -p 0 -o 1000 -c 500 -q -f '%k:%s:%o\n' 2>"$work/kcat1.err")
want=$(seq 1000 1499 | sed 's/.*/k&:v&:&/')
check "(b) kcat -o 1000 reads offsets 1000-1499 from Iceberg ($(wc -l <<<"$got") lines)" test "$got" = "$want"
got=$(timeout 60 kcat -C -b $broker -t hot -p 0 -o beginning -c $((n - floor)) -q -f '%k:%s\n' 2>"$work/kcat2.err")
want=$(seq $floor $((n - 1)) | sed 's/.*/k&:v&/')
check "(b) kcat -o beginning (ListOffsets earliest, then Fetch) reads all $((n - floor)) above the DeleteRecords floor from Iceberg" \
  test "$got" = "$want"
got=$(probe list-offsets $broker hot 0 -2)
check "(b) ListOffsets earliest: the remote start, never below the DeleteRecords floor, got '$got'" test "$got" = "0 $floor"
got=$(probe list-offsets $broker hot 0 "$ts_at")
check "(b) ListOffsets by time from Iceberg: offset $want_ts (>= $((n / 2))), got '$got'" test "$got" = "0 $want_ts" -a "${want_ts:-0}" -ge $((n / 2))
got=$(probe list-offsets $broker hot 0 -1)
check "(b) ListOffsets latest: retriable KAFKA_STORAGE_ERROR (56), got '$got'" test "${got%% *}" = 56
md=$(timeout 30 kcat -L -b $broker -t hot 2>&1)
check "(b) Metadata lists the topic and its leader" contains "$md" "partition 0, leader"
# (c) HTTP lookups of offloaded records.
r=$(curl -s "$api/topics/hot/partitions/0/records?offset=100&limit=5")
check "(c) lookup by offset from Iceberg" test "$(jq_ "[(x['offset'], x['value'], x['tier']) for x in d['records']]" <<<"$r" 2>&1)" \
  = "[(100, 'v100', 'remote'), (101, 'v101', 'remote'), (102, 'v102', 'remote'), (103, 'v103', 'remote'), (104, 'v104', 'remote')]"
r=$(curl -s "$api/topics/hot/records?key=k77")
check "(c) lookup by key from Iceberg, saying the local tier is unavailable" \
  test "$(jq_ "([(x['offset'], x['value'], x['tier']) for x in d['records']], d.get('local_tier'))" <<<"$r" 2>&1)" \
  = "([(77, 'v77', 'remote')], 'unavailable')"
r=$(curl -s "$api/topics/hot/partitions/0/records?offset=0&limit=2")
check "(c) lookup by offset 0 starts at the DeleteRecords floor" \
  test "$(jq_ "[x['offset'] for x in d['records']]" <<<"$r" 2>&1)" = "[$floor, $((floor + 1))]"
code=$(curl -s -o /dev/null -w '%{http_code}' "$api/topics/hot/partitions/0/records?offset=$((n + 50))")
check "(c) lookup of an offset Iceberg does not hold: 503 (got $code)" test "$code" = 503
# (d) Health.
ready=$(curl -s -w ' %{http_code}' "http://127.0.0.1:$HTTP_PORT/readyz")
check "(d) /readyz is 503 and names redis as down" contains "$ready" '"redis":{"status":"down"'
check "(d) /readyz answers 503" test "${ready##* }" = 503
check "(d) /healthz (liveness) stays 200" test "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$HTTP_PORT/healthz")" = 200
check "(d) floe is still running" kill -0 "$FLOE_PID"

# (e) Redis back (AOF, same directory): produce resumes, nothing acknowledged lost or doubled.
start_redis || exit 1
ok=""
for _ in $(seq 1 50); do
  got=$(probe produce $broker hot 0 back); [ "${got%% *}" = 0 ] && { ok=1; break; }; sleep 0.2
done
check "(e) produce resumes once Redis is back (last answer '$got')" test -n "$ok"
wait "$NODE_PID"; NODE_PID=
check "(e) the producer made progress across the outage: $(cat "$work/producer.out")" \
  test "$(grep -c . "$work/acked.txt" 2>/dev/null || echo 0)" -gt 100
kcat -C -b $broker -t acked -o beginning -e -q -f '%s\n' > "$work/stored.txt"
/usr/bin/python3 - "$work/acked.txt" "$work/stored.txt" > "$work/verdict.txt" <<'PY'
import collections, sys
acked = [l for l in open(sys.argv[1]).read().split('\n') if l]
stored = [l for l in open(sys.argv[2]).read().split('\n') if l]
count = collections.Counter(stored)
missing = [v for v in acked if count[v] == 0]
dups = [v for v, c in count.items() if c > 1]
print(f'{len(acked)} acked, {len(stored)} stored, {len(missing)} missing, {len(dups)} duplicated')
sys.exit(1 if missing or dups else 0)
PY
rc=$?
check "(e) every acknowledged record there exactly once: $(cat "$work/verdict.txt")" test "$rc" -eq 0
got=$(probe list-offsets $broker hot 0 -1)
check "(e) ListOffsets latest answers again ($n + 1 produced since: '$got')" test "$got" = "0 $((n + 1))"
check "(e) /readyz: redis up again" contains "$(curl -s "http://127.0.0.1:$HTTP_PORT/readyz")" '"redis":{"status":"up"'

stop_floe; rc=$?
check "floe stops cleanly (rc=$rc)" test "$rc" -eq 0
finish
