#!/usr/bin/env bash
# The cluster's cost per record (issue 35): the CPU seconds (user + system of every thread, from
# /proc/<pid>/stat before and after each phase) of each `floe serve` broker, each redis-server and
# the client, per million records
# - produced: one idempotent librdkafka producer (floe-bench-kafka --idempotent, acks=all,
#   linger 5 ms, 100-byte values, record i to partition i mod 12, unpaced), and
# - consumed: one librdkafka consumer assigned all 12 partitions from the beginning,
# in three set-ups, one after the other in the same run, each on fresh servers:
#   1   one broker on one redis-server
#   3   three brokers on one redis-server (partition leaders spread over them)
#   3c  three brokers on a Redis Cluster of three masters (partitions spread by hash slot)
# Also each process's CPU while idle (IDLE_SECONDS, brokers joined, nothing produced yet), Redis
# `INFO commandstats` per phase (calls per million records, µs per call), and the load average.
# Ends with the ratio of the servers' CPU per record (brokers + Redis), 3 brokers / 1 broker.
# Kafka requests per phase come from each broker's /metrics (floe_kafka_requests_total).
# RATE=R paces the producer at R records/s (batches of R x 5 ms / 12 records per partition in
# every set-up, so the same appends are split over more requests with more brokers); unpaced by
# default (the batches grow until the slowest process keeps up).
# usage: bench/cluster/cost.sh   (RECORDS=1000000 IDLE_SECONDS=10 SETUPS="1 3 3c" RATE=0 BUILD=build)
source "$(dirname "$0")/../lib.sh"
records=${RECORDS:-1000000}
idle_s=${IDLE_SECONDS:-10}
setups=${SETUPS:-1 3 3c}
rate=${RATE:-0}
client="$build/bench/floe-bench-kafka"
hz=$(getconf CLK_TCK)
parts=12

# cpu_ticks PID: utime + stime of the whole process (every thread), in clock ticks. The fields
# are counted after the command name's closing parenthesis (a name may hold spaces).
cpu_ticks() { sed 's/^.*) //' "/proc/$1/stat" | awk '{print $12 + $13}'; }
load1() { cut -d' ' -f1 /proc/loadavg; }

declare -A pid_of # process label -> pid, for the set-up being measured
labels=()
start_redis_node() { # label dir port [redis-server args...]
  local label="$1" dir="$2" p="$3"; shift 3
  mkdir -p "$dir"
  redis-server --port "$p" --bind 127.0.0.1 --dir "$dir" --save "" --appendonly no \
    --logfile "$dir/redis.log" "$@" >/dev/null 2>&1 &
  bench_pids+=($!); pid_of[$label]=$!; labels+=("$label")
  for _ in $(seq 1 100); do redis-cli -p "$p" ping 2>/dev/null | grep -q PONG && return 0; sleep 0.1; done
  echo "redis-server on $p did not start" >&2; return 1
}
declare -a kp hp
start_broker() { # setup id redis-uri
  local s="$1" id="$2" uri="$3" h; kp[$id]=$(port); h=$(port); hp[$id]=$h
  env -u FLOE_BIN "${FLOE_BIN:-$build/bin/floe}" serve --set floe.data-dir="$work/$s/b$id" \
    --set floe.kafka.listen=127.0.0.1:${kp[$id]} --set floe.http.listen=127.0.0.1:$h \
    --set floe.local.type=redis --set floe.local.redis.uri="$uri" \
    --set floe.broker.id=$id --set floe.storage.worker.enabled=false --set floe.default-partitions=$parts \
    --set floe.storage.remote.catalog.uri=sqlite://$work/$s/catalog.db --set floe.storage.remote.path=file://$work/$s/warehouse \
    >"$work/$s/b$id.log" 2>&1 &
  bench_pids+=($!); pid_of[broker$id]=$!; labels+=("broker$id")
  for _ in $(seq 1 200); do grep -qs "floe is up" "$work/$s/b$id.log" && return 0; sleep 0.1; done
  echo "broker $id did not come up" >&2; tail "$work/$s/b$id.log" >&2; return 1
}
brokers_in_metadata() { kcat -L -b "$1" -m 5 2>/dev/null | sed -n 's/^ \([0-9]*\) brokers:$/\1/p'; }

declare -A t0 t1 # label -> ticks at the start and end of a phase
snap() { # array-name
  local -n into="$1"; local l
  for l in "${labels[@]}"; do into[$l]=$(cpu_ticks "${pid_of[$l]}"); done
}
redis_ports=()
brokers=()
# kafka_requests API: floe_kafka_requests_total{api=API} summed over this set-up's brokers.
kafka_requests() {
  local id
  for id in "${brokers[@]}"; do curl -s "http://127.0.0.1:${hp[$id]}/metrics"; done |
    sed -n "s/^floe_kafka_requests_total{api=\"$1\"} \([0-9.e+]*\)\$/\1/p" | awk '{s += $1} END {printf "%d", s}'
}
reset_stats() { local p; for p in "${redis_ports[@]}"; do redis-cli -p "$p" config resetstat >/dev/null; done; }
# commandstats: calls and usec summed over the Redis nodes, per command, biggest first.
commandstats() { # phase records
  local p
  for p in "${redis_ports[@]}"; do redis-cli -p "$p" info commandstats; done | tr -d '\r' |
    sed -n 's/^cmdstat_\([^:]*\):calls=\([0-9]*\),usec=\([0-9]*\),.*/\1 \2 \3/p' |
    awk -v ph="$1" -v n="$2" '{c[$1]+=$2; u[$1]+=$3} END {for (k in c) printf "%s %s %d %d\n", ph, k, c[k], u[k]}' |
    sort -k4,4nr | head -6 |
    awk -v n="$2" '{printf "    redis %-8s %-16s %9d calls (%8.0f per M records) %7.1f us/call, %6.2f s per M records\n",
                    $1, $2, $3, $3 * 1e6 / n, $4 / ($3 ? $3 : 1), $4 / n}'
}

declare -A cost # "setup phase label" -> CPU s per million records (idle: CPU % over the idle window)
declare -A order # setup -> labels in print order
run_setup() { # 1 | 3 | 3c
  local s="$1" uri nb=1 l
  labels=(); pid_of=(); redis_ports=(); brokers=()
  mkdir -p "$work/$s"
  if [ "$s" = 3c ]; then
    local i p ports=()
    for i in 1 2 3; do
      while :; do # the cluster bus listens on port + 10000
        p=$(port)
        [ "$p" -lt 55000 ] && /usr/bin/python3 -c 'import socket,sys; s=socket.socket(); s.bind(("127.0.0.1",int(sys.argv[1]))); s.close()' \
          $((p + 10000)) 2>/dev/null && break
      done
      start_redis_node "redis$i" "$work/$s/rc$i" "$p" --cluster-enabled yes --cluster-config-file "$work/$s/rc$i/nodes.conf" \
        --cluster-node-timeout 15000
      ports+=("$p")
    done
    redis-cli --cluster create $(printf '127.0.0.1:%s ' "${ports[@]}") --cluster-replicas 0 --cluster-yes \
      >"$work/$s/cluster-create.log" 2>&1 || { echo "redis-cli --cluster create failed" >&2; cat "$work/$s/cluster-create.log" >&2; return 1; }
    local ok
    for _ in $(seq 1 200); do
      ok=0
      for p in "${ports[@]}"; do redis-cli -p "$p" cluster info 2>/dev/null | grep -q cluster_state:ok && ok=$((ok + 1)); done
      [ "$ok" -eq 3 ] && break
      sleep 0.1
    done
    [ "$ok" -eq 3 ] || { echo "the Redis Cluster did not reach cluster_state:ok" >&2; return 1; }
    redis_ports=("${ports[@]}")
    uri=$(printf 'redis://127.0.0.1:%s,' "${ports[@]}"); uri=${uri%,}
  else
    local p; p=$(port)
    start_redis_node redis "$work/$s/redis" "$p"
    redis_ports=("$p"); uri="redis://127.0.0.1:$p"
  fi
  [ "$s" = 1 ] || nb=3
  local id boot=""
  for id in $(seq 1 $nb); do start_broker "$s" "$id" "$uri"; boot+="127.0.0.1:${kp[$id]},"; brokers+=("$id"); done
  boot=${boot%,}
  # Each broker reads the live set every third of the session timeout (6 s): wait until every
  # broker names all of them, so the partitions are spread before anything is produced.
  for id in $(seq 1 $nb); do
    for _ in $(seq 1 150); do [ "$(brokers_in_metadata 127.0.0.1:${kp[$id]})" = "$nb" ] && break; sleep 0.1; done
  done
  order[$s]="${labels[*]}"

  snap t0; sleep "$idle_s"; snap t1
  for l in "${labels[@]}"; do cost[$s idle $l]=$(awk -v a="${t0[$l]}" -v b="${t1[$l]}" -v hz="$hz" -v w="$idle_s" 'BEGIN{printf "%.2f", (b-a)/hz/w*100}'); done

  local phase out r ccpu la api q0 q1 stats
  for phase in produce consume; do
    api=Produce; [ $phase = consume ] && api=Fetch
    # /metrics reads every partition's offsets from Redis: scraped outside the measured window.
    q0=$(kafka_requests $api); reset_stats; snap t0
    if [ $phase = produce ]; then
      out=$("$client" --brokers "$boot" --topic cost --records "$records" --value-size 100 --acks all \
        --partitions $parts --idempotent --rate "$rate" --no-consume)
    else
      out=$("$client" --brokers "$boot" --topic cost --records "$records" --partitions $parts --no-produce)
    fi
    snap t1; la=$(load1); stats=$(commandstats "$phase" "$records"); q1=$(kafka_requests $api)
    r=$(grep -oE '[0-9]+ records/s' <<<"$out" | head -1 | cut -d' ' -f1)
    ccpu=$(sed -n 's/.*client cpu \([0-9.]*\) s.*/\1/p' <<<"$out")
    echo "[$s] $out (load average $la)"
    for l in "${labels[@]}"; do
      cost[$s $phase $l]=$(awk -v a="${t0[$l]}" -v b="${t1[$l]}" -v hz="$hz" -v n="$records" 'BEGIN{printf "%.3f", (b-a)/hz*1e6/n}')
    done
    cost[$s $phase client]=$(awk -v c="$ccpu" -v n="$records" 'BEGIN{printf "%.3f", c*1e6/n}')
    cost[$s $phase rate]=$r; cost[$s $phase load]=$la
    awk -v q=$((q1 - q0)) -v n="$records" -v a=$api 'BEGIN{printf "    floe  %-8s %9d %s requests (%8.0f per M records), %.0f records per request\n", a == "Produce" ? "produce" : "consume", q, a, q * 1e6 / n, q ? n / q : 0}'
    echo "$stats"
  done
  if [ "$nb" = 3 ]; then
    echo "[$s] partition leaders (count broker): $(kcat -L -b 127.0.0.1:${kp[1]} -t cost | awk '/leader/{print $4}' | sort | uniq -c | tr -s ' \n' ' ')"
  fi
  if [ "$s" = 3c ]; then # each partition's keys share the slot of its hash tag {floe:cost:<partition>}
    local i n line=""
    for i in 0 1 2; do
      n=0
      for p in $(seq 0 $((parts - 1))); do
        redis-cli -p "${redis_ports[$i]}" cluster countkeysinslot "$(redis-cli -p "${redis_ports[$i]}" cluster keyslot "floe:cost:$p")" |
          grep -qv '^0$' && n=$((n + 1))
      done
      line+="redis$((i + 1)): $n, "
    done
    echo "[$s] partitions per master: ${line%, }"
  fi
  # This set-up's servers stop before the next one starts (each measured alone).
  for l in "${labels[@]}"; do kill "${pid_of[$l]}" 2>/dev/null || true; done
  for l in "${labels[@]}"; do
    for _ in $(seq 1 100); do kill -0 "${pid_of[$l]}" 2>/dev/null || break; sleep 0.1; done
  done
}

echo "records=$records value=100B partitions=$parts, producer $([ "$rate" = 0 ] && echo unpaced || echo "paced at $rate records/s"), idle window ${idle_s}s, $(nproc) cores shared by every process," \
  "librdkafka $(pkg-config --modversion rdkafka 2>/dev/null || echo '?'), $(redis-server --version | cut -d' ' -f1-3)"
for s in $setups; do run_setup "$s"; done

name() { case "$1" in 1) echo "1 broker, 1 Redis";; 3) echo "3 brokers, 1 Redis";; 3c) echo "3 brokers, Redis Cluster x3";; esac; }
echo
echo "CPU seconds per million records (user + system; idle: % of one core)"
for s in $setups; do
  echo "$(name "$s"): produce ${cost[$s produce rate]} rec/s (load ${cost[$s produce load]}), consume ${cost[$s consume rate]} rec/s (load ${cost[$s consume load]})"
  printf "  %-10s %8s %9s %9s %9s\n" process idle% produce consume both
  declare -A sum=()
  for l in ${order[$s]} client; do
    p=${cost[$s produce $l]}; c=${cost[$s consume $l]}
    printf "  %-10s %8s %9s %9s %9s\n" "$l" "${cost[$s idle $l]:--}" "$p" "$c" "$(awk -v a="$p" -v b="$c" 'BEGIN{printf "%.3f", a+b}')"
    if [ "$l" != client ]; then
      for ph in idle produce consume; do sum[$ph]=$(awk -v a="${sum[$ph]:-0}" -v b="${cost[$s $ph $l]}" 'BEGIN{printf "%.3f", a+b}'); done
    fi
  done
  cost[$s total produce]=${sum[produce]}; cost[$s total consume]=${sum[consume]}
  printf "  %-10s %8s %9s %9s %9s\n" servers "${sum[idle]}" "${sum[produce]}" "${sum[consume]}" \
    "$(awk -v a="${sum[produce]}" -v b="${sum[consume]}" 'BEGIN{printf "%.3f", a+b}')"
  unset sum
done
for s in $setups; do
  [ "$s" = 1 ] && continue
  case " $setups " in *" 1 "*) ;; *) continue;; esac
  awk -v n="$(name "$s")" -v p3="${cost[$s total produce]}" -v c3="${cost[$s total consume]}" \
    -v p1="${cost[1 total produce]}" -v c1="${cost[1 total consume]}" \
    'BEGIN{printf "ratio %s / 1 broker, servers CPU per record: produce %.2fx, consume %.2fx, both %.2fx\n", n, p3/p1, c3/c1, (p3+c3)/(p1+c1)}'
done
