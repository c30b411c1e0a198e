#!/usr/bin/env bash
# Three brokers against one, on one redis-server (floe.local.type=redis), in the same run:
# - produce throughput of one idempotent librdkafka producer (acks=all, 100-byte values, 12
#   partitions), first with one broker, then with three (partition leaders spread over them);
# - how long a broker killed with -9 stays in Metadata (floe.cluster.session-timeout, default 6s),
#   i.e. until its partitions and groups are named on the others.
# Then bench/cluster/cost.sh: the CPU seconds of every process per million records (COST=0: not).
# usage: bench/cluster/run.sh   (RECORDS=300000 by default; BUILD=build)
source "$(dirname "$0")/../lib.sh"
records=${RECORDS:-300000}
producer="$build/src/kafka/kafka_cluster_producer"
rport=$(port)
start_redis "$rport"
declare -a kp pids
start_broker() { # id
  local id="$1" h; kp[$id]=$(port); h=$(port)
  env -u FLOE_BIN "${FLOE_BIN:-$build/bin/floe}" serve --set floe.data-dir="$work/b$id" \
    --set floe.kafka.listen=127.0.0.1:${kp[$id]} --set floe.http.listen=127.0.0.1:$h \
    --set floe.local.type=redis --set floe.local.redis.uri=redis://127.0.0.1:$rport \
    --set floe.broker.id=$id --set floe.storage.worker.enabled=false --set floe.default-partitions=12 \
    --set floe.storage.remote.catalog.uri=sqlite://$work/catalog.db --set floe.storage.remote.path=file://$work/warehouse \
    >"$work/b$id.log" 2>&1 &
  pids[$id]=$!; bench_pids+=($!)
  for _ in $(seq 1 200); do grep -q "floe is up" "$work/b$id.log" && return 0; sleep 0.1; done
  echo "broker $id did not come up" >&2; tail "$work/b$id.log" >&2; return 1
}
brokers_in_metadata() { kcat -L -b "$1" -m 5 2>/dev/null | sed -n 's/^ \([0-9]*\) brokers:$/\1/p'; }
produce() { # bootstrap topic: prints records/s
  "$producer" "$1" "$2" "$(head -c 90 /dev/zero | tr '\0' x)" "$records" 0 >"$work/p.out" 2>&1
  awk '$1=="DONE"{printf "%d acked, %d failed in %.2f s: %.0f records/s\n", $2, $3, $4, $2/$4}' "$work/p.out"
}
start_broker 1
kcat -L -b 127.0.0.1:${kp[1]} -t one -m 5 >/dev/null 2>&1
echo "1 broker:   $(produce 127.0.0.1:${kp[1]} one)"
start_broker 2; start_broker 3
sleep 3 # each broker reads the live set every third of the session timeout
kcat -L -b 127.0.0.1:${kp[1]} -t three -m 5 >/dev/null 2>&1
echo "3 brokers:  $(produce 127.0.0.1:${kp[1]},127.0.0.1:${kp[2]},127.0.0.1:${kp[3]} three)"
leaders=$(kcat -L -b 127.0.0.1:${kp[1]} -t three | awk '/leader/{print $4}' | sort | uniq -c | tr -s ' \n' ' ')
echo "            partition leaders (count broker,): $leaders"
t0=$(date +%s.%N)
kill -9 "${pids[3]}"
for _ in $(seq 1 300); do [ "$(brokers_in_metadata 127.0.0.1:${kp[1]})" = 2 ] && break; sleep 0.05; done
echo "killed broker 3 left Metadata after $(/usr/bin/python3 -c "print(f'{$(date +%s.%N) - $t0:.2f}')") s (session timeout 6 s)"
# The cost per record of each process (bench/cluster/cost.sh, issue 35), on fresh servers once
# these have stopped; COST=0 skips it.
if [ "${COST:-1}" != 0 ]; then
  for p in "${bench_pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  bash "$(dirname "$0")/cost.sh"
fi
