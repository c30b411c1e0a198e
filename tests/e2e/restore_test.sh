#!/usr/bin/env bash
# floe restore, the backup half of issue 32, as the disaster drill runs it: a JetStream source
# lands stream ORDERS, KV bucket cfg and object store files in Iceberg; a second, empty nats-server
# (the first one's storage is lost) gets them back from the tables, and a Kafka topic on the same floe gets ORDERS.
# Judged by the official clients (npm nats, kafkajs) against a dump of the original streams:
# every message's subject/key, headers, payload and time, in order, each once. Each restore is
# killed with -9 mid-way and run again: nothing twice. A Kafka table of 3 partitions (null keys
# and values) goes to a 3-partition topic (kcat: same records at the same offsets); offset and
# time ranges; the drill on the server that lost its storage; errors and their exit codes.
# usage: restore_test.sh FLOE_BIN
FLOE_BIN="$(realpath "$1")"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/lib.sh"
tool="$here/../js/e2e/restore_nats.mjs"
work="$(mktemp -d)"
mkdir -p "$work/f" "$work/nats1" "$work/nats2"
N=3000; N_TEXT=3,000 # as the summary prints it
PIDS=()
cleanup() {
  for p in "${PIDS[@]}" ${FLOE_PID:-}; do kill -9 "$p" 2>/dev/null; done
  wait 2>/dev/null
  [ -n "${KEEP:-}" ] && echo "kept $work" || rm -rf "$work"
}
trap cleanup EXIT
start_nats "$work/nats1" "$work/nats1.log"; SRC="nats://127.0.0.1:$NATS_PORT"; PIDS+=("$NATS_PID")
start_nats "$work/nats2" "$work/nats2.log"; DST="nats://127.0.0.1:$NATS_PORT"; PIDS+=("$NATS_PID")

check "the original: ORDERS with $N messages, KV bucket cfg" timeout 30 node "$tool" fill "$SRC" "$N"
start_floe "$work/f" --set floe.ingest.sources.nats.type=jetstream --set floe.ingest.sources.nats.url="$SRC" \
  --set floe.ingest.sources.nats.streams=ORDERS,KV_cfg,OBJ_files --set floe.ingest.sources.nats.topic-prefix=nats. \
  --set floe.ingest.sources.nats.max-age=300ms --set floe.storage.worker.tick-interval=300ms \
  --set floe.auto-create-topics=false || exit 1
caught_up() {
  curl -s "http://127.0.0.1:$HTTP_PORT/v1/ingest" | /usr/bin/python3 -c "
import json, sys
ps = [p for s in json.load(sys.stdin)['sources'] for p in s['partitions']]
sys.exit(0 if len(ps) == 3 and all(p['source_position'] is not None and p['committed_position'] == p['source_position'] for p in ps) else 1)"
}
check "ORDERS, KV_cfg and OBJ_files are in Iceberg" wait_for 20 caught_up
check "then a KV purge (NATS drops c1, c2; the table has them)" timeout 20 node "$tool" purge "$SRC"
check "the purge is in Iceberg" wait_for 20 caught_up
kv_rows=$(/usr/bin/python3 "$here/iceberg_files.py" "$work/f/data/catalog.db" floe nats_KV_cfg | /usr/bin/python3 -c "import json,sys; print(sum(f['records'] for f in json.load(sys.stdin)['files']))" 2>/dev/null)
node "$tool" dump "$SRC" ORDERS "$work/orders.jsonl" && node "$tool" dump "$SRC" KV_cfg "$work/kv.jsonl" &&
  node "$tool" dump "$SRC" OBJ_files "$work/obj.jsonl"
check "the originals dumped" test -s "$work/orders.jsonl" -a -s "$work/kv.jsonl" -a -s "$work/obj.jsonl"

restore() { "$FLOE_BIN" restore --set floe.data-dir="$work/f/data" "$@"; }
check "the drill's empty server: stream ORDERS and bucket cfg created" timeout 20 node "$tool" prepare "$DST"

# JetStream: killed mid-way (--max-rate makes "mid-way" certain), then run again.
"$FLOE_BIN" restore --set floe.data-dir="$work/f/data" --table nats.ORDERS --to "$DST" --stream ORDERS \
  --max-rate 3000 >"$work/r1.out" 2>"$work/r1.err" &
RPID=$!
sleep 0.6
kill -9 "$RPID"; wait "$RPID" 2>/dev/null
part=$(node "$tool" count "$DST" ORDERS)
check "kill -9 mid-restore: $part of $N in the stream" test "$part" -gt 0 -a "$part" -lt "$N"
restore --table nats.ORDERS --to "$DST" --stream ORDERS >"$work/r2.out" 2>"$work/r2.err"; rc=$?
check "the rerun resumes and finishes (rc $rc)" test "$rc" -eq 0
sed 's/^/  /' "$work/r2.out"
check "the rerun says where it resumed" grep -q "resuming after it" "$work/r2.err"
check "the progress line shows the rate" grep -q "msg/s" "$work/r2.err"
node "$tool" dump "$DST" ORDERS "$work/orders_r.jsonl" >/dev/null
check "JetStream: every message once, in order, subject/headers/payload/time kept" \
  node "$tool" compare "$work/orders.jsonl" "$work/orders_r.jsonl"
restore --table nats.ORDERS --to "$DST" --stream ORDERS >"$work/r3.out" 2>"$work/r3.err"; rc=$?
check "a third run adds nothing (rc $rc): $(cat "$work/r3.out")" grep -q "^restored 0 message" "$work/r3.out"
check "... and the stream still holds $N" test "$(node "$tool" count "$DST" ORDERS)" -eq "$N"

# The KV bucket: history, deletes and the purge (a rollup) replayed; the bucket ends as the original.
restore --table nats.KV_cfg --to "$DST" --stream KV_cfg >"$work/kv.out" 2>"$work/kv.err"; rc=$?
check "KV restore (rc $rc): the table's $kv_rows rows replayed" grep -q "^restored $kv_rows message" "$work/kv.out"
node "$tool" dump "$DST" KV_cfg "$work/kv_r.jsonl" >/dev/null
check "KV: the bucket's stream is the original's (the purge rolled c's history up again)" \
  node "$tool" compare "$work/kv.jsonl" "$work/kv_r.jsonl"

# The object store: chunks and metadata back under their subjects; the client reads every object.
restore --table nats.OBJ_files --to "$DST" --stream OBJ_files >"$work/obj.out" 2>"$work/obj.err"; rc=$?
check "object store restore (rc $rc)" test "$rc" -eq 0
node "$tool" dump "$DST" OBJ_files "$work/obj_r.jsonl" >/dev/null
check "object store: the stream is the original's" node "$tool" compare "$work/obj.jsonl" "$work/obj_r.jsonl"
check "object store: every object read back byte-for-byte by the client" timeout 20 node "$tool" objects "$DST"

# Kafka (floe itself as the target): killed mid-way, run again, read back by kafkajs.
check "topic restored created" grep -q "^restored 0 " <(node "$here/../js/e2e/create_topics.mjs" "127.0.0.1:$KAFKA_PORT" restored)
KTO="kafka://127.0.0.1:$KAFKA_PORT"
"$FLOE_BIN" restore --set floe.data-dir="$work/f/data" --table nats.ORDERS --to "$KTO" --topic restored \
  --max-rate 3000 >"$work/k1.out" 2>"$work/k1.err" &
RPID=$!
sleep 0.8
kill -9 "$RPID"; wait "$RPID" 2>/dev/null
restore --table nats.ORDERS --to "$KTO" --topic restored >"$work/k2.out" 2>"$work/k2.err"; rc=$?
check "Kafka: the rerun finishes (rc $rc)" test "$rc" -eq 0
sed 's/^/  /' "$work/k2.out"
check "Kafka: the rerun resumed after what the killed run delivered" grep -q "resuming after it" "$work/k2.err"
check "Kafka: every record once, in order, key/headers/value/timestamp kept" \
  timeout 60 node "$tool" kafka "127.0.0.1:$KAFKA_PORT" restored "$work/orders.jsonl"

# Part of the history: offsets, then times (epoch ms and ISO-8601), both ends inclusive; read by kcat.
check "topics part and window created" test "$(node "$here/../js/e2e/create_topics.mjs" "127.0.0.1:$KAFKA_PORT" part window | grep -c ' 0 created')" -eq 2
restore --table nats.ORDERS --to "$KTO" --topic part --from-offset 100 --to-offset 199 >"$work/p.out" 2>"$work/p.err"
offs=$(kcat -C -b "127.0.0.1:$KAFKA_PORT" -t part -e -q -f '%h\n' 2>/dev/null | sed -n 's/.*Floe-Restore-Id=floe:floe.nats_ORDERS:0:\([0-9]*\).*/\1/p' | tr '\n' ' ')
check "--from-offset 100 --to-offset 199: offsets 100..199 once each ($(wc -w <<<"$offs") records)" test "$offs" = "$(seq -s ' ' 100 199) "
read -r t_from t_to t_iso want <<<"$(/usr/bin/python3 -c "
import json, datetime
ts = [json.loads(l)['time'] for l in open('$work/orders.jsonl')]
a, b = ts[500], ts[999]
iso = datetime.datetime.fromtimestamp(b / 1000, datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%S.%f')[:-3] + 'Z'
print(a, b, iso, sum(1 for t in ts if a <= t <= b))")"
restore --table nats.ORDERS --to "$KTO" --topic window --from-ts "$t_from" --to-ts "$t_iso" >"$work/w.out" 2>"$work/w.err"
got=$(kcat -C -b "127.0.0.1:$KAFKA_PORT" -t window -e -q -f '%T\n' 2>/dev/null | awk -v a="$t_from" -v b="$t_to" '$1 >= a && $1 <= b { n++ } END { print n + 0 " " NR }')
check "--from-ts $t_from --to-ts $t_iso: the $want messages of that window, nothing else ($got)" test "$got" = "$want $want"

# A Kafka table of 3 partitions (null keys and values, repeated headers) into a 3-partition
# topic: each record to its partition; killed mid-way, resumed partition by partition.
check "topic src3: 3 partitions, 1,500 records" timeout 30 node "$tool" kafka-fill "127.0.0.1:$KAFKA_PORT" src3 3 1500
src3_rows() {
  /usr/bin/python3 "$here/iceberg_files.py" "$work/f/data/catalog.db" floe src3 2>/dev/null |
    /usr/bin/python3 -c "import json,sys; sys.exit(0 if sum(f['records'] for f in json.load(sys.stdin)['files']) == 1500 else 1)" 2>/dev/null
}
check "src3 in Iceberg" wait_for 20 src3_rows
check "topics copy1 (1 partition) and copy3 (3)" node "$tool" kafka-topic "127.0.0.1:$KAFKA_PORT" copy1 1
node "$tool" kafka-topic "127.0.0.1:$KAFKA_PORT" copy3 3
restore --table src3 --to "$KTO" --topic copy1 2>"$work/c0.err"; rc=$?
check "a topic with fewer partitions than the table: exit 2 ($rc), nothing sent" \
  test "$rc" -eq 2 -a -n "$(grep 'give the topic at least 3' "$work/c0.err")" -a \
  -z "$(kcat -C -b "127.0.0.1:$KAFKA_PORT" -t copy1 -e -q 2>/dev/null)"
"$FLOE_BIN" restore --set floe.data-dir="$work/f/data" --table src3 --to "$KTO" --topic copy3 --max-rate 1500 \
  >"$work/c1.out" 2>"$work/c1.err" &
RPID=$!
sleep 0.7
kill -9 "$RPID"; wait "$RPID" 2>/dev/null
restore --table src3 --to "$KTO" --topic copy3 >"$work/c2.out" 2>"$work/c2.err"; rc=$?
sed 's/^/  /' "$work/c2.out"
check "3 partitions: the rerun finishes (rc $rc) and resumes" grep -q "resuming after it" "$work/c2.err"
# kcat: partition, offset, timestamp, key and value with their lengths (-1: null), headers; by
# partition then offset. The copy's offsets are the original's (both topics start empty at 0).
kdump() {
  kcat -C -b "127.0.0.1:$KAFKA_PORT" -t "$1" -e -q -f '%p\t%o\t%T\t%K\t%k\t%S\t%s\t%h\n' 2>/dev/null |
    sort -t$'\t' -k1,1n -k2,2n
}
kdump src3 >"$work/src3.txt"; kdump copy3 >"$work/copy3.txt"
check "3 partitions: each copy record names its own partition and offset in Floe-Restore-Id" test "$(awk -F'\t' \
  '{ n = gsub("Floe-Restore-Id=floe:floe.src3:" $1 ":" $2 "(,|$)", "&", $8) } n == 1 { ok++ } END { print ok + 0 }' \
  "$work/copy3.txt")" -eq 1500
sed -E 's/,?Floe-Restore-Id=[^,]*$//' "$work/copy3.txt" >"$work/copy3_plain.txt"
check "3 partitions: every record once at its offset, key/value (nulls too)/headers/timestamp kept ($(wc -l <"$work/src3.txt") records)" \
  diff -q "$work/src3.txt" "$work/copy3_plain.txt"

# Errors: exit codes and messages.
restore --table nats.NOPE --to "$DST" --stream ORDERS 2>"$work/e1.err"; rc=$?
check "an unknown table: exit 3 ($rc), named" test "$rc" -eq 3 -a -n "$(grep 'no table floe.nats_NOPE' "$work/e1.err")"
restore --table nats.ORDERS --to "$DST" --stream NOPE 2>"$work/e2.err"; rc=$?
check "an unknown stream: exit 3 ($rc)" test "$rc" -eq 3 -a -n "$(grep 'no stream NOPE' "$work/e2.err")"
restore --table nats.ORDERS --to "nats://127.0.0.1:$(free_port)" --stream ORDERS 2>"$work/e3.err"; rc=$?
check "an unreachable NATS: exit 1 ($rc)" test "$rc" -eq 1 -a -n "$(grep 'cannot reach NATS' "$work/e3.err")"
restore --table nats.ORDERS --to "$KTO" --topic nope 2>"$work/e4.err"; rc=$?
check "an unknown Kafka topic: exit 3 ($rc)" test "$rc" -eq 3 -a -n "$(grep 'no topic nope' "$work/e4.err")"
restore --table nats.ORDERS --to "$DST" 2>"$work/e5.err"; rc=$?
check "nats:// without --stream: exit 2 ($rc)" test "$rc" -eq 2

# The drill itself on the source server: its storage lost, NATS back empty on the same port,
# streams created again and restored while floe still mirrors them; then producers carry on and
# floe's own mirror (a consumer of the stream) goes on at its end: each message in the table once.
SRC_PORT=${SRC##*:}
kill -9 "${PIDS[0]}"; wait "${PIDS[0]}" 2>/dev/null
rm -rf "$work/nats1"; mkdir -p "$work/nats1"
nats-server -js -sd "$work/nats1" -a 127.0.0.1 -p "$SRC_PORT" >>"$work/nats1.log" 2>&1 &
PIDS[0]=$!
wait_for 10 bash -c "echo > /dev/tcp/127.0.0.1/$SRC_PORT" 2>/dev/null
check "drill: the lost server's streams created again" timeout 20 node "$tool" prepare "$SRC"
restore --table nats.ORDERS --to "$SRC" --stream ORDERS >"$work/d.out" 2>"$work/d.err"; rc=$?
check "drill: ORDERS restored into the server that lost it (rc $rc)" grep -q "^restored $N_TEXT message" "$work/d.out"
check "drill: producers carry on" timeout 20 node "$tool" more "$SRC" "$N" $((N + 20))
orders_at() {
  curl -s "http://127.0.0.1:$HTTP_PORT/v1/ingest" | /usr/bin/python3 -c "
import json, sys
p = [p for s in json.load(sys.stdin)['sources'] for p in s['partitions'] if p['topic'] == 'nats.ORDERS'][0]
sys.exit(0 if p['source_position'] == $1 and p['committed_position'] == $1 else 1)"
}
check "drill: floe's mirror takes the new messages at their sequences, committed" wait_for 20 orders_at $((N + 20))
/usr/bin/python3 "$here/iceberg_files.py" "$work/f/data/catalog.db" floe nats_ORDERS >"$work/orders_files.json" 2>/dev/null
rows=$(/usr/bin/python3 -c "import json; print(sum(f['records'] for f in json.load(open('$work/orders_files.json'))['files']))")
check "drill: the table holds each message once ($rows rows)" test "$rows" -eq $((N + 20))

if [ "$e2e_failed" -gt 0 ]; then tail -n 5 "$work"/*.err; fi
stop_floe; rc=$?
check "floe stops cleanly (rc $rc)" test "$rc" -eq 0
finish
