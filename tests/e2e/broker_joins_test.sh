#!/usr/bin/env bash
# Issue 26: a new broker joins while leases move. Real redis-server, real floe processes on
# loopback, one shared lake (one SQLite catalog and one file:// warehouse on this machine):
# - brokers 1 and 2 offload a tiered topic of six partitions (short segments, local retention
#   and leases) while an idempotent kafkajs producer (acks=all) writes through broker 1;
# - a third broker starts without floe.broker.id, takes the lowest free id and joins; the
#   partitions it now owns (rendezvous hashing) are released by the others and leased by it;
# - broker 2 is killed with -9 as soon as the third has joined, while the leases move;
# - at the end every acknowledged record is read exactly once from offset 0 through Kafka (kcat,
#   through broker 1 and the new broker: the history comes back from the table), the Iceberg
#   table holds each record exactly once (DuckDB over the files an independent Avro reader
#   lists), and the new broker's log shows the leases it took and the segments it offloaded.
FLOE_BIN="$(realpath "$1")"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/lib.sh"
js="$here/../js/e2e"
work="$(mktemp -d)"
declare -A PID KPORT HPORT
REDIS_PID=
stop_all() {
  for n in "${!PID[@]}"; do [ -n "${PID[$n]}" ] && kill -9 "${PID[$n]}" 2>/dev/null; done
  [ -n "$REDIS_PID" ] && kill -9 "$REDIS_PID" 2>/dev/null
  wait 2>/dev/null
}
trap 'stop_all; [ -n "${KEEP:-}" ] && echo "kept $work" || rm -rf "$work"' EXIT
t_start=$(date +%s)
REDIS_PORT=$(free_port)
run_redis "$work/redis" "$REDIS_PORT" || exit 1
REDIS_PID=$RUN_REDIS_PID
rcli() { redis-cli -p "$REDIS_PORT" "$@"; }

topic="joins.t"
table="joins_t"
parts=6
lease_ms=3000
records=${RECORDS:-30000}
tail_records=600
common=(--set floe.local.type=redis --set floe.local.redis.uri=redis://127.0.0.1:$REDIS_PORT
        --set floe.storage.remote.path=file://$work/lake/warehouse
        --set floe.storage.remote.catalog.uri=sqlite://$work/lake/catalog.db
        --set floe.topic-defaults.remote.storage.enable=true --set floe.topic-defaults.segment.ms=1000
        --set floe.topic-defaults.local.retention.ms=1000
        --set floe.storage.worker.tick-interval=300ms --set floe.storage.worker.lease-duration=${lease_ms}ms
        --set floe.cluster.session-timeout=$((lease_ms / 2))ms --set floe.default-partitions=$parts)
mkdir -p "$work/lake"
holder_of() { rcli HGET "{floe:$topic:$1}:lease" holder; }
holders() { for p in $(seq 0 $((parts - 1))); do echo "$p:$(holder_of $p | cut -d@ -f1)"; done | tr '\n' ' '; }
offloaded_by() { grep -c "offloaded segment .* of $topic-" "$work/$1/floe.log"; }

# 1. Brokers 1 and 2 (explicit ids), the topic, and the producer through broker 1.
launch b1 --set floe.broker.id=1
check "broker 1 comes up" wait_for 20 is_up b1
launch b2 --set floe.broker.id=2
check "broker 2 comes up" wait_for 20 is_up b2
check "kafkajs created the topic with the first 600 records" \
  env PRODUCE_PER_PARTITION=1 node "$js/produce.mjs" 127.0.0.1:${KPORT[b1]} "$topic" 0 600 $parts
PRODUCE_BATCH=100 PRODUCE_PER_PARTITION=1 node "$js/produce.mjs" 127.0.0.1:${KPORT[b1]} "$topic" 600 "$records" $parts \
  >"$work/produce.out" 2>&1 &
producer=$!
both_offload() { [ "$(offloaded_by b1)" -gt 0 ] && [ "$(offloaded_by b2)" -gt 0 ]; }
check "brokers 1 and 2 both offload segments of the topic" wait_for 30 both_offload
before="$(holders)"
echo "before the join: leases $before"

# 2. A third broker without floe.broker.id joins while they offload; broker 2 is killed with -9
#    as soon as it has joined, while the partitions move to the newcomer.
t_join=$(date +%s%N)
launch b3
check "the new broker without an id comes up" wait_for 20 is_up b3
new_id=$(id_of b3)
check "... with the lowest free id, 0 (got ${new_id:-none})" test "$new_id" = 0
kill -9 "${PID[b2]}"; wait "${PID[b2]}" 2>/dev/null; PID[b2]=
kill -0 "$producer" 2>/dev/null && echo "broker 2 killed while the producer was still running" \
  || echo "broker 2 killed after the producer finished"
new_holds() { holders | grep -q ":broker-$new_id "; }
check "the new broker holds leases in Redis" wait_for 20 new_holds
took_ms=$((($(date +%s%N) - t_join) / 1000000))
echo "the new broker held its first lease ${took_ms} ms after it was started; leases $(holders)"
no_b2() { ! holders | grep -q ":broker-2 "; }
check "no lease names the killed broker 2 any more" wait_for 20 no_b2

wait "$producer"; prc=$?
check "kafkajs acknowledged records 600..$records through broker 1 (rc=$prc)" test "$prc" -eq 0
# The last records after the moves: every partition has a segment to offload under its new holder.
total=$((records + tail_records))
check "kafkajs acknowledged the last $tail_records records" env PRODUCE_PER_PARTITION=1 \
  node "$js/produce.mjs" 127.0.0.1:${KPORT[b3]} "$topic" "$records" "$total" $parts
after="$(holders)"
echo "after the moves: leases $after"
check "the new broker's log shows the leases it took" grep -q "took the lease of $topic-" "$work/b3/floe.log"
grep -o "took the lease of $topic-[0-9]* (epoch [0-9]*" "$work/b3/floe.log" | sed 's/^/  broker 0: /'
# Rebalanced, not only inherited from the dead broker: a partition broker 1 (alive throughout)
# held before the join is the new broker's now.
moved=""
for p in $(seq 0 $((parts - 1))); do
  grep -q " $p:broker-1 " <<<" $before" && grep -q " $p:broker-$new_id " <<<" $after" && moved="$moved $p"
done
echo "partitions moved from the live broker 1 to the new broker:${moved:- none}"
check "a partition moved from the live broker 1 to the new broker" test -n "$moved"

# 3. The table: every acknowledged record exactly once (DuckDB).
in_table=0
table_caught_up() {
  /usr/bin/python3 "$here/iceberg_files.py" "$work/lake/catalog.db" floe "$table" >"$work/files.json" 2>"$work/py.err" || return 1
  in_table=$(/usr/bin/python3 -c 'import json,sys; print(sum(json.load(open(sys.argv[1]))["positions"].values()))' "$work/files.json")
  [ "$in_table" -ge "$total" ]
}
check "the table's committed positions reach $total" wait_for 60 table_caught_up
echo "committed positions sum to $in_table"
check "the table holds every acknowledged record exactly once (DuckDB)" \
  node "$js/check_table.mjs" "$work/files.json" 0 "$total" $parts "$topic"
check "the new broker offloaded segments ($(offloaded_by b3))" test "$(offloaded_by b3)" -gt 0

# 4. Kafka: every record once from offset 0, through broker 1 and through the new broker.
for n in b1 b3; do
  timeout 120 kcat -C -b 127.0.0.1:${KPORT[$n]} -t "$topic" -o beginning -e -q -f '%p %o\n' \
    >"$work/read-$n.txt" 2>"$work/kcat-$n.err"
  got=$(wc -l <"$work/read-$n.txt")
  distinct=$(sort -u "$work/read-$n.txt" | wc -l)
  gaps=$(sort -k1,1n -k2,2n "$work/read-$n.txt" | awk '{ if ($2 != next_[$1] + 0) bad++; next_[$1] = $2 + 1 } END { print bad + 0 }')
  check "kcat through $n reads $total records from offset 0 (got $got)" test "$got" = "$total"
  check "... each (partition, offset) once ($distinct distinct)" test "$distinct" = "$total"
  check "... offsets without gaps in every partition" test "$gaps" = 0
done
for n in b1 b3; do
  FLOE_PID=${PID[$n]}; stop_floe; rc=$?; PID[$n]=
  check "$n stops cleanly (rc=$rc)" test "$rc" -eq 0
done
echo "broker_joins took $(($(date +%s) - t_start)) s"
finish
