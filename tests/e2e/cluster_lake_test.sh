#!/usr/bin/env bash
# One lake per cluster (issue 26, items 1 and 3), end to end on real redis-server, PostgreSQL,
# kcat and kafkajs.
# (a) The issue's reproduction: brokers 1 and 2 on one Redis as the README used to start them
#     (each with only its own data directory, so its own SQLite catalog and file:// warehouse).
#     Broker 2 is refused at once with exit 2, naming each differing setting with the cluster's
#     value and its own. `floe cluster lake show` prints the recorded lake; `floe cluster lake
#     set` is refused while a broker is live and moves the cluster to one shared SQLite path
#     once they are stopped; two brokers on that path (one given relative) then start; a new
#     catalog file at the same path (another catalog under the same URI) is refused by its id.
# (b) The README's cluster commands, run as printed (its variables and the host paths/ports
#     replaced, tiering settings appended): three brokers on one Redis, one PostgreSQL catalog
#     and one warehouse. 20,000 records produced through broker 1 are offloaded and trimmed from
#     Redis; broker 1 is killed with -9; its leases move; 100 more records go through broker 2
#     and are offloaded by the survivors into the same table; every partition read from offset 0
#     through brokers 2 and 3 with kcat, and through broker 2 with kafkajs, gives every record
#     exactly once.
# (c) A broker started while its Redis is down waits for it (up to 30 s, saying so) and comes up.
FLOE_BIN="$(realpath "$1")"
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
source "$here/lib.sh"
js="$here/../js/e2e"
work="$(mktemp -d)"
chmod 755 "$work"
REDIS_PIDS=()
declare -A PID
cleanup() {
  for i in "${!PID[@]}"; do [ -n "${PID[$i]}" ] && kill -9 "${PID[$i]}" 2>/dev/null; done
  for p in "${REDIS_PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
  stop_pg
  wait 2>/dev/null
  [ -n "${KEEP:-}" ] && echo "kept $work" || rm -rf "$work"
}
trap cleanup EXIT

# ======================= (a) another lake is refused =======================
RA=$(free_port)
run_redis "$work/redis-a" "$RA" || exit 1
REDIS_PIDS+=("$RUN_REDIS_PID")
# serve_a NAME DATA_DIR [--set ...]: a broker of cluster (a) in the background, logs in $work/NAME.log.
serve_a() {
  local name="$1" dir="$2"; shift 2
  "$FLOE_BIN" serve --set floe.local.type=redis --set floe.local.redis.uri=redis://127.0.0.1:$RA \
    --set floe.data-dir="$dir" --set floe.kafka.listen=127.0.0.1:0 --set floe.http.listen=127.0.0.1:0 \
    --set floe.cluster.session-timeout=2s "$@" >"$work/$name.out" 2>"$work/$name.log" &
  PID[$name]=$!
}
up() { grep -q "floe is up" "$work/$1.log"; }
exited() { ! kill -0 "${PID[$1]}" 2>/dev/null; }
stop() { # NAME: SIGTERM, bounded wait
  local p="${PID[$1]}"; kill -TERM "$p" 2>/dev/null
  for _ in $(seq 1 200); do kill -0 "$p" 2>/dev/null || break; sleep 0.05; done
  kill -9 "$p" 2>/dev/null; wait "$p" 2>/dev/null; PID[$1]=
}
# rc_of NAME: waits (bounded) for the process to exit and prints its exit code.
rc_of() { wait "${PID[$1]}"; local rc=$?; PID[$1]=; echo "$rc"; }

serve_a a1 "$work/a/b1" --set floe.broker.id=1
check "broker 1 with its own data directory starts" wait_for 20 up a1
check "broker 1 recorded the cluster's lake" grep -q "cluster lake: recorded this broker's lake" "$work/a1.log"
t0=$(date +%s%N)
serve_a a2 "$work/a/b2" --set floe.broker.id=2
check "broker 2 with another data directory (its own catalog and warehouse) stops" wait_for 20 exited a2
rc=$(rc_of a2); ms=$((($(date +%s%N) - t0) / 1000000))
check "... with exit code 2 (rc=$rc)" test "$rc" = 2
echo "broker 2 refused after ${ms} ms"
err=$(grep " error " "$work/a2.log")
echo "$err" | cut -c1-600
check "the message names the catalog URI with the cluster's and this broker's value" \
  contains "$err" "floe.storage.remote.catalog.uri: cluster 'sqlite://$work/a/b1/catalog.db', this broker 'sqlite://$work/a/b2/catalog.db'"
check "the message names the warehouse with the cluster's and this broker's value" \
  contains "$err" "floe.storage.remote.path: cluster 'file://$work/a/b1/warehouse', this broker 'file://$work/a/b2/warehouse'"
check "the message says the paths under floe.data-dir are this broker's own" contains "$err" "under floe.data-dir ($work/a/b2)"
check "the message names no setting that agrees (namespace, catalog type)" \
  bash -c "! grep -qE 'floe.namespace:|catalog.type:' <<<\"\$1\"" _ "$err"
check "broker 2 never joined the cluster" bash -c "! grep -q 'joined the cluster' '$work/a2.log'"
check "broker 1 is still up" kill -0 "${PID[a1]}"

show=$("$FLOE_BIN" cluster lake show --set floe.local.type=redis --set floe.local.redis.uri=redis://127.0.0.1:$RA 2>&1)
echo "$show"
check "floe cluster lake show prints the cluster's warehouse" contains "$show" "file://$work/a/b1/warehouse"
check "... and its catalog id" grep -qE "floe.lake-id\)\s+[0-9a-f-]{36}" <<<"$show"

shared=(--set floe.storage.remote.catalog.uri=sqlite://$work/a/shared/catalog.db
        --set floe.storage.remote.path=file://$work/a/shared/warehouse)
"$FLOE_BIN" cluster lake set --set floe.local.type=redis --set floe.local.redis.uri=redis://127.0.0.1:$RA \
  "${shared[@]}" >"$work/set1.out" 2>"$work/set1.err"
rc=$?
check "floe cluster lake set is refused while broker 1 is live (rc=$rc)" test "$rc" = 2
check "... naming the live broker" grep -q "broker(s) 1 of namespace 'floe' are live" "$work/set1.err"
stop a1
"$FLOE_BIN" cluster lake set --set floe.local.type=redis --set floe.local.redis.uri=redis://127.0.0.1:$RA \
  "${shared[@]}" >"$work/set2.out" 2>"$work/set2.err"
rc=$?
check "floe cluster lake set records the shared lake once the brokers are stopped (rc=$rc)" test "$rc" = 0
check "... and prints the new warehouse" grep -q "file://$work/a/shared/warehouse" "$work/set2.out"
# Both on the one shared SQLite path of this machine: broker 2 names it relative to its cwd.
serve_a a1 "$work/a/b1" --set floe.broker.id=1 "${shared[@]}"
mkdir -p "$work/a/cwd2"
(cd "$work/a" && serve_a a2 "$work/a/b2" --set floe.broker.id=2 \
  --set floe.storage.remote.catalog.uri=sqlite://shared/catalog.db \
  --set floe.storage.remote.path=file://$work/a/shared/warehouse; echo "${PID[a2]}" >"$work/a2.pid")
PID[a2]=$(cat "$work/a2.pid")
check "broker 1 on the shared SQLite path starts" wait_for 20 up a1
check "broker 2 on the same path (the catalog relative to its cwd) starts" wait_for 20 up a2
check "broker 2 found its lake to be the cluster's" grep -q "this broker's lake is the cluster's" "$work/a2.log"
stop a1; stop a2
# A new catalog under the same URI (as a SQLite file at the same path on another machine would
# be): the catalog id differs.
mv "$work/a/shared/catalog.db" "$work/a/shared/old-catalog.db"
rm -f "$work/a/shared/catalog.db-wal" "$work/a/shared/catalog.db-shm"
serve_a a3 "$work/a/b1" --set floe.broker.id=1 "${shared[@]}"
check "a new catalog at the cluster's catalog URI is refused" wait_for 20 exited a3
rc=$(rc_of a3)
check "... with exit code 2 (rc=$rc)" test "$rc" = 2
check "... naming the catalog id" grep -q "catalog id (namespace property floe.lake-id" "$work/a3.log"

# ======================= (b) the README's cluster, one shared lake =======================
RB=$(free_port)
run_redis "$work/redis-b" "$RB" || exit 1
REDIS_PIDS+=("$RUN_REDIS_PID")
start_pg "$work" || exit 1
# free_base: a port base B with B+1..B+3 free on loopback.
free_base() {
  while :; do
    local b=$((20000 + RANDOM % 30000))
    /usr/bin/python3 -c '
import socket,sys
b=int(sys.argv[1])
for p in range(b+1,b+4):
    s=socket.socket(); s.bind(("127.0.0.1",p)); s.close()' "$b" 2>/dev/null && { echo "$b"; return; }
  done
}
KB=$(free_base); HB=$(free_base); SB=$(free_base)
parts=6
extra="--set floe.default-partitions=$parts --set floe.topic-defaults.remote.storage.enable=true \
--set floe.topic-defaults.segment.ms=1000 --set floe.topic-defaults.local.retention.ms=1000 \
--set floe.storage.worker.tick-interval=300ms --set floe.storage.worker.lease-duration=4s \
--set floe.cluster.session-timeout=2s"
# The README's block, as printed, with the host's values put in; every replacement must apply
# (a README that changes shape fails here rather than testing something else).
script=$(/usr/bin/python3 - "$repo/README.md" "$work" "$FLOE_BIN" "redis://127.0.0.1:$RB" "$PG_URI" \
  "file://$work/lake/warehouse" "$KB" "$HB" "$SB" "$extra" <<'EOF'
import re, sys
readme, work, floe, redis, catalog, warehouse, kb, hb, sb, extra = sys.argv[1:]
blocks = [b for b in re.findall(r"```sh\n(.*?)```", open(readme).read(), re.S) if "CATALOG=" in b and "floe.local.redis.uri=$R" in b]
if len(blocks) != 1: sys.exit(f"README: {len(blocks)} cluster blocks")
b = blocks[0]
def sub(pattern, repl, count=1):
    global b
    b2, n = re.subn(pattern, lambda m: repl, b)
    if n < count: sys.exit(f"README block: '{pattern}' not found")
    b = b2
sub(r"(?m)^R=\S+", f"R={redis}")
sub(r"(?m)^CATALOG=\S+", f"CATALOG={catalog}")
sub(r"(?m)^WAREHOUSE=\S+", f"WAREHOUSE={warehouse}")
sub(r"\./build/bin/floe serve", f"{floe} serve {extra}")
sub(r"/var/lib/floe", f"{work}/lake")
sub(r"\(9091 \+ id\)", f"({kb} + id)")
sub(r"\(8079 \+ id\)", f"({hb} + id)")
sub(r"\(8180 \+ id\)", f"({sb} + id)")
sub(r"(?m) &$", f' >>"{work}/b$id.log" 2>&1 & echo $! >"{work}/b$id.pid"')
sub(r"(?m)^kcat .*$", "")
print(b)
EOF
)
check "the README's cluster block was found and adapted" test -n "$script"
echo "$script" > "$work/readme_cluster.sh"
mkdir -p "$work/lake"
source "$work/readme_cluster.sh"
for id in 1 2 3; do PID[b$id]=$(cat "$work/b$id.pid"); done
for id in 1 2 3; do
  check "README broker $id is up" wait_for 30 grep -q "floe is up" "$work/b$id.log"
done
check "the three share one lake (broker 1 recorded it, 2 and 3 matched)" \
  bash -c "[ \$(grep -l \"cluster lake: recorded\" $work/b?.log | wc -l) = 1 ] && [ \$(grep -l \"lake is the cluster's\" $work/b?.log | wc -l) = 2 ]"
three_brokers() { kcat -b 127.0.0.1:$((KB + 1)) -L -m 5 2>/dev/null | grep -q " 3 brokers:"; }
check "kcat -L through broker 1 lists three brokers (the README's last line)" wait_for 10 three_brokers

topic=lake.events
check "kafkajs produced 20,000 records through broker 1" \
  node "$js/produce.mjs" 127.0.0.1:$((KB + 1)) "$topic" 0 20000 $parts
# partitions BROKER_HTTP_PORT: "local_start log_end offloaded_up_to" per partition.
partitions() {
  curl -s "http://127.0.0.1:$1/v1/topics" | /usr/bin/python3 -c '
import json,sys
for t in json.load(sys.stdin)["topics"]:
    if t["name"]==sys.argv[1]:
        for p in t["partitions"]: print(p["local_start"], p["log_end"], p["offloaded_up_to"])' "$topic"
}
all_offloaded() { # HTTP_PORT TOTAL: every partition offloaded to its end, the ends summing to TOTAL
  local n=0 sum=0 ok=1 ls le off
  while read -r ls le off; do n=$((n + 1)); sum=$((sum + le)); [ "$off" = "$le" ] || ok=0; done < <(partitions "$1")
  [ "$n" = "$parts" ] && [ "$sum" = "$2" ] && [ "$ok" = 1 ]
}
all_trimmed() { # HTTP_PORT: every partition's records gone from Redis (local start at the end)
  local n=0 ok=1 ls le off
  while read -r ls le off; do n=$((n + 1)); { [ "$ls" = "$le" ] && [ "$le" -gt 0 ]; } || ok=0; done < <(partitions "$1")
  [ "$n" = "$parts" ] && [ "$ok" = 1 ]
}
check "every partition offloaded (20,000 records)" wait_for 90 all_offloaded $((HB + 2)) 20000
check "... and trimmed from Redis: the history is in the lake only" wait_for 60 all_trimmed $((HB + 2))
partitions $((HB + 2)) | sed 's/^/  before the kill (local_start log_end offloaded): /'
for id in 1 2 3; do
  n=$(grep -c "offloaded segment .* of $topic-" "$work/b$id.log")
  echo "broker $id offloaded $n segment(s)"
done
held1=$(for p in $(seq 0 $((parts - 1))); do redis-cli -p "$RB" HGET "{floe:$topic:$p}:lease" holder; done | grep -c "^broker-1@")
echo "broker 1 holds $held1 lease(s) when killed"
kill -9 "${PID[b1]}"; wait "${PID[b1]}" 2>/dev/null; PID[b1]=
leases_moved() {
  for p in $(seq 0 $((parts - 1))); do
    redis-cli -p "$RB" HGET "{floe:$topic:$p}:lease" holder | grep -q "^broker-1@" && return 1
  done
  return 0
}
check "broker 1's leases moved to the survivors" wait_for 20 leases_moved
check "kafkajs produced 100 more records through broker 2" \
  env PRODUCE_PER_PARTITION=1 node "$js/produce.mjs" 127.0.0.1:$((KB + 2)) "$topic" 20000 20100 $parts
check "the survivors offloaded them into the same table (20,100 offloaded)" wait_for 60 all_offloaded $((HB + 2)) 20100
for id in 2 3; do
  timeout 120 kcat -C -b 127.0.0.1:$((KB + id)) -t "$topic" -o beginning -e -q -f '%p %o %S\n' \
    >"$work/read$id.txt" 2>"$work/kcat$id.err"
  n=$(wc -l <"$work/read$id.txt")
  u=$(cut -d' ' -f1,2 "$work/read$id.txt" | sort -u | wc -l)
  check "kcat through broker $id reads 20,100 records from offset 0 (got $n)" test "$n" = 20100
  check "... each (partition, offset) once ($u distinct)" test "$u" = 20100
  # Offsets 0..end-1 in every partition, no gap: the k-th record of partition p is record k*6+p.
  gaps=$(sort -k1,1n -k2,2n "$work/read$id.txt" | awk '{ if ($2 != next_[$1] + 0) bad++; next_[$1] = $2 + 1 } END { print bad + 0 }')
  check "... offsets without gaps in every partition" test "$gaps" = 0
done
check "kafkajs through broker 2 reads all 20,100 records from offset 0, each as produced" \
  node "$js/consume_check.mjs" 127.0.0.1:$((KB + 2)) "$topic" 20100 $parts
stop b2; stop b3

# ======================= (c) a broker started while Redis is down waits for it =======================
RC=$(free_port)
"$FLOE_BIN" serve --set floe.local.type=redis --set floe.local.redis.uri=redis://127.0.0.1:$RC \
  --set floe.data-dir="$work/c/b1" --set floe.kafka.listen=127.0.0.1:0 --set floe.http.listen=127.0.0.1:0 \
  >"$work/c1.out" 2>"$work/c1.log" &
PID[c1]=$!
sleep 2
check "a broker started before its Redis waits, saying so" grep -q "waiting for Redis to check the cluster's lake" "$work/c1.log"
check "... and is still running" kill -0 "${PID[c1]}"
run_redis "$work/redis-c" "$RC" || exit 1
REDIS_PIDS+=("$RUN_REDIS_PID")
check "... and comes up once Redis answers" wait_for 20 up c1
stop c1
finish
