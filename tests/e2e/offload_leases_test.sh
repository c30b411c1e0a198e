#!/usr/bin/env bash
# Per-partition storage-worker leases in Redis, end to end: three `floe serve` on one
# redis-server (own data dirs and ports, one shared catalog and warehouse) offload one tiered
# topic of six partitions. The offload work spreads (each broker's log shows segments of some
# partitions offloaded by it); a broker killed with -9 while it holds leases and offloads loses
# them to the others within the lease duration (measured: the time until no lease names it any
# more, each with a higher epoch); the Iceberg table holds every produced record exactly once
# (DuckDB reads the data files listed by an independent Avro reader).
# With REDIS_CLUSTER=1 the same on a real three-master Redis Cluster created here.
FLOE_BIN="$(realpath "$1")"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/lib.sh"
js="$here/../js/e2e"
work="$(mktemp -d)"
REDIS_PIDS=()
declare -A PID KPORT HPORT
stop_all() {
  for b in 1 2 3; do [ -n "${PID[$b]:-}" ] && kill -9 "${PID[$b]}" 2>/dev/null; done
  for r in "${REDIS_PIDS[@]}"; do kill -9 "$r" 2>/dev/null; done
  wait 2>/dev/null
}
trap 'stop_all; rm -rf "$work"' EXIT
up_redis() { # port [extra args...]: run_redis, its pid kept for the cleanup
  local port="$1"; shift
  run_redis "$work/redis-$port" "$port" "$@"; local rc=$?; REDIS_PIDS+=($RUN_REDIS_PID); return $rc
}
if [ "${REDIS_CLUSTER:-0}" = 1 ]; then
  redis_cluster "$work" || exit 1
  ports=("${REDIS_CLUSTER_PORTS[@]}")
  REDIS_PORT=${ports[0]}
  REDIS_URI=$REDIS_CLUSTER_URIS
  echo "Redis Cluster of three masters on ports ${ports[*]}"
else
  REDIS_PORT=$(free_port)
  up_redis "$REDIS_PORT" || exit 1
  REDIS_URI=redis://127.0.0.1:$REDIS_PORT
fi
rcli() { redis-cli -c -p "$REDIS_PORT" "$@"; }

topic="leases.t"
table="leases_t"
parts=6
lease_ms=${LEASE_MS:-4000}
records=${RECORDS:-60000}
start_broker() { # id
  local b="$1"
  mkdir -p "$work/b$b"
  start_floe "$work/b$b" --set floe.broker.id=$b --set floe.local.type=redis \
    --set floe.local.redis.uri=$REDIS_URI \
    --set floe.storage.remote.path=file://$work/warehouse \
    --set floe.storage.remote.catalog.uri=sqlite://$work/catalog.db \
    --set floe.topic-defaults.remote.storage.enable=true --set floe.topic-defaults.segment.ms=1000 \
    --set floe.storage.worker.tick-interval=300ms --set floe.storage.worker.lease-duration=${lease_ms}ms \
    --set floe.cluster.session-timeout=$((lease_ms / 2))ms --set floe.default-partitions=$parts || return 1
  PID[$b]=$FLOE_PID; KPORT[$b]=$KAFKA_PORT; HPORT[$b]=$HTTP_PORT; FLOE_PID=
}
holder_of() { rcli HGET "{floe:$topic:$1}:lease" holder; }
epoch_of() { rcli HGET "{floe:$topic:$1}:lease" epoch; }

# Broker 1 creates the topic (the others load it from Redis at start), then 2 and 3 join.
start_broker 1 || exit 1
check "the log says the leases are per partition in Redis" grep -q "per-partition leases in Redis (broker 1" "$work/b1/floe.log"
check "kafkajs produced the first 6000 records" node "$js/produce.mjs" 127.0.0.1:${KPORT[1]} "$topic" 0 6000 $parts
start_broker 2 || exit 1
start_broker 3 || exit 1
# A second live broker with a taken id (on the cluster's lake) stops start-up naming the setting (exit 2).
mkdir -p "$work/dup"
"$FLOE_BIN" serve --set floe.data-dir="$work/dup/data" --set floe.broker.id=1 --set floe.local.type=redis \
  --set floe.local.redis.uri=$REDIS_URI --set floe.kafka.listen=127.0.0.1:$(free_port) \
  --set floe.storage.remote.path=file://$work/warehouse --set floe.storage.remote.catalog.uri=sqlite://$work/catalog.db \
  --set floe.http.listen=127.0.0.1:$(free_port) --set floe.storage.worker.lease-duration=${lease_ms}ms --set floe.cluster.session-timeout=$((lease_ms / 2))ms \
  >"$work/dup/out" 2>"$work/dup/log"
rc=$?
check "a second broker with floe.broker.id=1 exits 2 (rc=$rc)" test "$rc" -eq 2
check "... naming floe.broker.id" grep -q "floe.broker.id" "$work/dup/log"
# Ownership spreads once every broker has seen the others (registry ttl = lease/2, heartbeat a third).
sleep 1
for b in 1 2 3; do mark[$b]=$(wc -l < "$work/b$b/floe.log"); done

# More records through broker 1 while all three offload; broker 2 is killed mid-way.
PRODUCE_BATCH=100 PRODUCE_PER_PARTITION=1 node "$js/produce.mjs" 127.0.0.1:${KPORT[1]} "$topic" 6000 $((records - 6000)) $parts > "$work/produce.out" 2>&1 &
producer=$!
# Wait (bounded) until every broker has offloaded something since all three were up.
spread=""
for _ in $(seq 1 150); do
  n=0
  for b in 1 2 3; do tail -n +$((mark[$b] + 1)) "$work/b$b/floe.log" | grep -q "offloaded segment .* of $topic-" && n=$((n + 1)); done
  [ "$n" -eq 3 ] && { spread=1; break; }
  sleep 0.2
done
for b in 1 2 3; do
  ps=$(tail -n +$((mark[$b] + 1)) "$work/b$b/floe.log" | grep -o "offloaded segment [0-9]* of $topic-[0-9]*" | sed 's/.*-//' | sort -un | tr '\n' ' ')
  echo "broker $b offloaded partitions: ${ps:-none}"
  check "broker $b offloaded segments of some partitions (${ps:-none})" test -n "$ps"
done
check "offload work spread over the three brokers" test -n "$spread"
held2=()
for p in $(seq 0 $((parts - 1))); do
  h=$(holder_of $p)
  case "$h" in broker-2@*) held2+=("$p"); e2[$p]=$(epoch_of $p);; esac
done
echo "broker 2 holds the leases of partitions: ${held2[*]:-none}"
check "broker 2 holds leases before it is killed" test "${#held2[@]}" -gt 0
# /v1/cluster (the console's Cluster page) shows the same leases as Redis, the three live
# brokers, and a leader per partition among them (asked twice at most: a lease may move between
# the two reads).
for _ in 1 2 3; do
  want=$(for p in $(seq 0 $((parts - 1))); do printf '%s %s %s\n' "$p" "$(holder_of $p)" "$(epoch_of $p)"; done)
  got=$(curl -s "http://127.0.0.1:${HPORT[1]}/v1/cluster" | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["tier"] == "redis" and not d["single_broker"] and d["node_id"] == 1
assert sorted((b["node_id"], b["self"]) for b in d["registry"]) == [(1, True), (2, False), (3, False)], d["registry"]
for p in d["partitions"]:
    if p["topic"] != sys.argv[1]: continue
    assert p["leader"] in (1, 2, 3), p
    l = p["offload_lease"] or {"holder": "", "epoch": ""}
    print(p["partition"], l["holder"], l["epoch"])' "$topic")
  [ "$got" = "$want" ] && break
  sleep 0.3
done
check "/v1/cluster: the registry, leaders and each partition's lease as Redis holds it" test "$got" = "$want"

# kill -9 of broker 2 right after it offloaded a segment (its leases held, more work queued).
m=$(wc -l < "$work/b2/floe.log")
for _ in $(seq 1 50); do tail -n +$((m + 1)) "$work/b2/floe.log" | grep -q "offloaded segment" && break; sleep 0.1; done
kill -9 "${PID[2]}"; wait "${PID[2]}" 2>/dev/null; PID[2]=
t0=$(date +%s%N)
kill -0 "$producer" 2>/dev/null && echo "broker 2 killed while the producer was still running" \
  || echo "broker 2 killed after the producer finished (its partitions still had segments to offload)"
for b in 1 3; do mark[$b]=$(wc -l < "$work/b$b/floe.log"); done
# Takeover: every lease broker 2 held names another broker, with a higher epoch.
taken=""
gone_ms=""
for _ in $(seq 1 200); do
  [ -z "$gone_ms" ] && [ -z "$(rcli ZSCORE 'floe{floe.brokers}.expiry' 2)" ] \
    && gone_ms=$((($(date +%s%N) - t0) / 1000000))
  left=0
  for p in "${held2[@]}"; do case "$(holder_of $p)" in broker-2@*|"") left=$((left + 1));; esac; done
  [ "$left" -eq 0 ] && { taken=1; break; }
  sleep 0.05
done
t1=$(date +%s%N)
takeover_ms=$(((t1 - t0) / 1000000))
echo "lease takeover after kill -9: ${takeover_ms} ms (lease duration ${lease_ms} ms, tick 300 ms, ${#held2[@]} partition(s)); broker 2 gone from the registry after ${gone_ms:-?} ms (ttl $((lease_ms / 2)) ms)"
check "broker 2's leases were taken over (${takeover_ms} ms)" test -n "$taken"
# A lease runs out at most one duration after the kill (it was renewed at most one tick before);
# a survivor's next tick (300 ms) takes it.
check "within the lease duration plus one tick and slack (${takeover_ms} <= $((lease_ms + 1300)) ms)" \
  test "$takeover_ms" -le $((lease_ms + 1300))
for p in "${held2[@]}"; do
  check "partition $p: new holder $(holder_of $p) with a higher epoch ($(epoch_of $p) > ${e2[$p]})" \
    test "$(epoch_of $p)" -gt "${e2[$p]}"
done

wait "$producer"; prc=$?
check "kafkajs produced records 6000..$((records - 6000)) through broker 1 (rc=$prc)" test "$prc" -eq 0
# The last records after the takeover: the dead broker's partitions get new segments to offload.
check "kafkajs produced the last 6000 records" env PRODUCE_PER_PARTITION=1 node "$js/produce.mjs" 127.0.0.1:${KPORT[1]} "$topic" \
  $((records - 6000)) "$records" $parts
# Every record reaches the table through the survivors.
total=0
for _ in $(seq 1 240); do
  /usr/bin/python3 "$here/iceberg_files.py" "$work/catalog.db" floe "$table" > "$work/files.json" 2>"$work/py.err" || { sleep 0.5; continue; }
  total=$(/usr/bin/python3 -c 'import json,sys; print(sum(json.load(open(sys.argv[1]))["positions"].values()))' "$work/files.json")
  [ "$total" -ge "$records" ] && break
  sleep 0.5
done
check "committed positions reach $records (got $total)" test "$total" -ge "$records"
check "the table holds every produced record exactly once (DuckDB)" \
  node "$js/check_table.mjs" "$work/files.json" 0 "$records" $parts "$topic"
for p in "${held2[@]}"; do
  for b in 1 3; do tail -n +$((mark[$b] + 1)) "$work/b$b/floe.log" | grep -o "took the lease of $topic-$p (.*" | sed "s/^/broker $b: /"; done
  by=""
  for b in 1 3; do tail -n +$((mark[$b] + 1)) "$work/b$b/floe.log" | grep -q "offloaded segment .* of $topic-$p:" && by="$by $b"; done
  check "partition $p: offloaded after the kill by broker(s)${by:- none}" test -n "$by"
done
for b in 1 3; do
  took=$(curl -s "http://127.0.0.1:${HPORT[$b]}/metrics" | grep '^floe_storage_worker_lease_acquisitions_total' | awk '{s+=$2} END {print s+0}')
  echo "broker $b: $took lease acquisition(s)"
done
# Broker 2 restarted on its data dir; killed again and restarted at once, while its previous
# life's registry entry is still live: it takes its id back without waiting for that entry to
# expire (its registry token is kept in the data dir).
start_broker 2 || exit 1
kill -9 "${PID[2]}"; wait "${PID[2]}" 2>/dev/null; PID[2]=
check "broker 2's entry is still live after the second kill" test -n "$(rcli ZSCORE 'floe{floe.brokers}.expiry' 2)"
r0=$(date +%s%N)
start_broker 2 || exit 1
r_ms=$((($(date +%s%N) - r0) / 1000000))
check "broker 2 restarted at once after kill -9 is up in ${r_ms} ms (< registry ttl $((lease_ms / 2)) ms)" \
  test "$r_ms" -lt $((lease_ms / 2))
for b in 1 2 3; do
  FLOE_PID=${PID[$b]}; stop_floe; rc=$?; PID[$b]=
  check "broker $b stops cleanly (rc=$rc)" test "$rc" -eq 0
done
released=0
for p in $(seq 0 $((parts - 1))); do [ -z "$(holder_of $p)" ] && released=$((released + 1)); done
check "a clean stop releases the leases ($released of $parts free)" test "$released" -eq $parts
finish
