#!/usr/bin/env bash
# Three `floe serve` sharing one Redis as one Kafka cluster, first on one redis-server, then on a
# real three-master Redis Cluster created here (redis-server --cluster-enabled yes x3 +
# redis-cli --cluster create). In each:
# - Metadata from every broker lists the three, with the same partition leaders spread over them;
#   a topic auto-created through one broker is visible through the others;
# - a librdkafka idempotent producer (kafka_cluster_producer, every acknowledged record printed),
#   a kafkajs idempotent producer and kcat produce through different brokers while one broker is
#   killed with -9: every acknowledged record is in the topic exactly once (counted per value);
#   a raw idempotent Produce retried through another broker is acknowledged with its first
#   offset and not appended again (cluster_idempotence.py);
# - the dead broker is gone from Metadata within 4/3 of floe.cluster.session-timeout (its entry
#   expires, the others re-read every third of it); restarted on its
#   data directory it takes its id back at once;
# - consumer groups spread over the brokers: two librdkafka members (group_member, which commits
#   each record before reporting it), a kafkajs member and a kcat -G member; the broker that
#   coordinates the librdkafka group is killed with -9 mid-way: the members go on through the
#   others, every record is reported, none twice (beyond a commit whose answer was lost);
# - offsets committed through one broker are what another serves (OffsetFetch through a new
#   coordinator), and a restart of every broker loses none of them (kcat -G with
#   auto.offset.reset=earliest reads nothing: a lost offset would mean reading it all again).
# On one redis-server also: a second live broker with the same floe.broker.id stops start-up
# naming the setting; and redis-server killed and restarted on its AOF under three brokers and an
# idempotent producer: nothing acknowledged lost, nothing twice. Prints how long Metadata took
# to drop the killed brokers.
#
# usage: redis_cluster_test.sh <floe> <kafka_cluster_producer> <kafka_group_member>
FLOE_BIN="$(realpath "$1")"
PRODUCER="$(realpath "$2")"
MEMBER="$(realpath "$3")"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/lib.sh"
js="$here/../js/kafka/cluster_client.mjs"
work="$(mktemp -d)"
SESSION_MS=3000
PARTS=12
declare -A PID KPORT HPORT
REDIS_PIDS=()
BG=()

cleanup() {
  for p in "${BG[@]}"; do kill -9 "$p" 2>/dev/null; done
  for i in "${!PID[@]}"; do [ -n "${PID[$i]}" ] && kill -9 "${PID[$i]}" 2>/dev/null; done
  for p in "${REDIS_PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
  wait 2>/dev/null
  [ -n "${KEEP:-}" ] && echo "kept $work" || rm -rf "$work"
}
trap cleanup EXIT

up_redis() { # dir port [extra args]: run_redis, its pid kept for the cleanup
  run_redis "$@"; local rc=$?; REDIS_PIDS+=($RUN_REDIS_PID); return $rc
}

# One lake for every broker of the test (a cluster refuses a broker with another catalog or warehouse).
LAKE=(--set floe.storage.remote.catalog.uri=sqlite://$work/lake/catalog.db --set floe.storage.remote.path=file://$work/lake/warehouse)
# start_broker MODE ID [--set ...]: floe serve with broker id ID on its own data dir and ports
# (kept across restarts); waits until it is up.
start_broker() {
  local mode="$1" id="$2"; shift 2
  local dir="$work/$mode/b$id"
  mkdir -p "$dir"
  [ -n "${KPORT[$mode$id]:-}" ] || { KPORT[$mode$id]=$(free_port); HPORT[$mode$id]=$(free_port); }
  local seen; seen=$(cat "$dir/floe.log" 2>/dev/null | wc -l)
  "$FLOE_BIN" serve --set floe.data-dir="$dir/data" --set floe.kafka.listen=127.0.0.1:${KPORT[$mode$id]} \
    --set floe.http.listen=127.0.0.1:${HPORT[$mode$id]} --set floe.local.type=redis \
    --set floe.local.redis.uri="$URIS" --set floe.broker.id=$id \
    --set floe.cluster.session-timeout=${SESSION_MS}ms --set floe.storage.worker.enabled=false \
    --set floe.default-partitions=$PARTS "${LAKE[@]}" "$@" >>"$dir/floe.out" 2>>"$dir/floe.log" &
  PID[$mode$id]=$!
  for _ in $(seq 1 300); do
    tail -n +$((seen + 1)) "$dir/floe.log" 2>/dev/null | grep -q "floe is up" && return 0
    kill -0 "${PID[$mode$id]}" 2>/dev/null || { echo "broker $id exited during start:"; tail -20 "$dir/floe.log"; return 1; }
    sleep 0.05
  done
  echo "broker $id did not come up"; tail -20 "$dir/floe.log"; return 1
}
stop_broker() { # MODE ID: SIGTERM (clean leave), bounded wait
  local p="${PID[$1$2]}"
  kill -TERM "$p" 2>/dev/null
  for _ in $(seq 1 200); do kill -0 "$p" 2>/dev/null || break; sleep 0.05; done
  kill -9 "$p" 2>/dev/null; wait "$p" 2>/dev/null; PID[$1$2]=
}
stop_clients() { # PID...: SIGTERM, then SIGKILL whatever is still there after 10 s
  kill -TERM "$@" 2>/dev/null
  for _ in $(seq 1 100); do kill -0 "$@" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$@" 2>/dev/null; wait "$@" 2>/dev/null
}
kill_broker() { kill -9 "${PID[$1$2]}" 2>/dev/null; wait "${PID[$1$2]}" 2>/dev/null; PID[$1$2]=; }
addr() { echo "127.0.0.1:${KPORT[$1$2]}"; }

# Metadata of TOPIC through ADDR as "brokers: <ids>" and one "p <partition> <leader>" per line.
metadata() { # addr topic
  kcat -L -J -b "$1" -t "$2" -m 5 2>/dev/null | /usr/bin/python3 -c '
import json, sys
m = json.load(sys.stdin)
print("brokers:", " ".join(str(b["id"]) for b in sorted(m["brokers"], key=lambda b: b["id"])))
for t in m["topics"]:
    for p in t.get("partitions", []): print("p", p["partition"], p["leader"])'
}
broker_ids() { metadata "$1" "$2" | sed -n 's/^brokers: //p'; }
distinct_leaders() { metadata "$1" "$2" | awk '$1=="p"{print $3}' | sort -u | wc -l; }

# Every value of the topic, one a line (read through ADDR to the end).
topic_values() { kcat -C -b "$1" -t "$2" -e -q -f '%s\n' -X fetch.wait.max.ms=100 2>/dev/null; }
# Values of FILE (one a line) missing from the topic dump DUMP, and values there more than once.
missing() { sort -u "$1" | comm -23 - <(sort -u "$2") | wc -l; }
dups() { sort "$1" | uniq -d | wc -l; }
# The librdkafka group of run DIR: "reported R, unreported-with-commit-error U, missing M,
# twice T (allowed A)"; success when every acknowledged record is reported or accounted for
# by a commit error, and no record is reported twice beyond the commit errors.
group_progress() {
  /usr/bin/python3 - "$1" <<'PY'
import sys, collections
d = sys.argv[1]
acked = {}
for line in open(f"{d}/ev.out"):
    f = line.split()
    if f and f[0] == "ACK": acked[f[3]] = (f[1], f[2])
rec, errs = collections.Counter(), set()
for n in ("cg1.out", "cg2.out"):
    for line in open(f"{d}/{n}"):
        f = line.split()
        if len(f) >= 4 and f[0] == "REC": rec[f[3]] += 1
        elif len(f) >= 3 and f[0] == "COMMITERR": errs.add((f[1], f[2]))
unreported = [v for v in acked if v not in rec]
explained = [v for v in unreported if acked[v] in errs]
twice = sum(1 for c in rec.values() if c > 1)
missing = len(unreported) - len(explained)
print(f"reported {len(rec)} of {len(acked)}, unreported after a commit error {len(explained)}, "
      f"missing {missing}, twice {twice} (commit errors {len(errs)})")
sys.exit(0 if missing == 0 and twice <= len(errs) and len(acked) > 0 else 1)
PY
}
# The coordinator of GROUP as broker ADDR answers FindCoordinator v1 (its node id, -1 on error).
find_coordinator() { # addr group
  /usr/bin/python3 - "$1" "$2" <<'PY'
import socket, struct, sys
host, port = sys.argv[1].rsplit(":", 1)
g = sys.argv[2].encode()
body = struct.pack(">hhih", 10, 1, 7, 4) + b"test" + struct.pack(">h", len(g)) + g + b"\x00"
try:
    s = socket.create_connection((host, int(port)), timeout=2)
    s.sendall(struct.pack(">i", len(body)) + body)
    def read(n):
        b = b""
        while len(b) < n:
            c = s.recv(n - len(b))
            if not c: raise EOFError
            b += c
        return b
    r = read(struct.unpack(">i", read(4))[0])
    err = struct.unpack(">h", r[8:10])[0]
    ml = struct.unpack(">h", r[10:12])[0]
    at = 12 + max(ml, 0)
    print(struct.unpack(">i", r[at:at + 4])[0] if err == 0 else -1)
except Exception:
    print(-1)
PY
}
export -f metadata broker_ids distinct_leaders group_progress find_coordinator

run_suite() { # MODE: "single" or "cluster" (URIS set by the caller)
  local mode="$1" m="$work/$1"
  mkdir -p "$m"
  local topic="orders" gtopic="events"
  for i in 1 2 3; do start_broker "$mode" $i || return 1; done
  local all="$(addr $mode 1),$(addr $mode 2),$(addr $mode 3)"

  # --- Metadata: three brokers, leaders spread, the same answer everywhere -------------------
  # Each broker learns of the others at its next heartbeat (a third of the session timeout).
  for i in 1 2 3; do wait_for 5 bash -c "[ \"\$(broker_ids $(addr $mode $i) $topic)\" = '1 2 3' ]"; done
  metadata "$(addr $mode 1)" "$topic" >"$m/md1" # auto-creates the topic through broker 1
  wait_for 5 bash -c "[ \"\$(kcat -L -J -b $(addr $mode 3) -t $topic -m 5 2>/dev/null | grep -o '\"partition\"' | wc -l)\" = $PARTS ]"
  metadata "$(addr $mode 3)" "$topic" >"$m/md3"
  metadata "$(addr $mode 2)" "$topic" >"$m/md2"
  check "[$mode] Metadata through broker 1 lists brokers 1 2 3 ($(head -1 "$m/md1"))" grep -qx "brokers: 1 2 3" "$m/md1"
  check "[$mode] the topic auto-created through broker 1 has $PARTS partitions through broker 3" \
    test "$(grep -c '^p ' "$m/md3")" = $PARTS
  check "[$mode] brokers 2 and 3 answer the same brokers and leaders as broker 1" \
    bash -c "cmp -s '$m/md1' '$m/md2' && cmp -s '$m/md1' '$m/md3'"
  check "[$mode] partition leaders are spread over the 3 brokers" test "$(distinct_leaders "$(addr $mode 1)" "$topic")" = 3

  # --- An idempotent producer's retry through another broker is not appended twice ----------
  check "[$mode] idempotent sequence kept across brokers (raw Produce)" \
    /usr/bin/python3 "$here/cluster_idempotence.py" idem "$(addr $mode 1)" "$(addr $mode 2)" "$(addr $mode 3)"

  # --- Produce through every broker while one is killed --------------------------------------
  timeout 120 "$PRODUCER" "$all" "$topic" rd 6000 2000 >"$m/rd.out" 2>"$m/rd.err" & local rd=$!; BG+=($rd)
  timeout 120 node "$js" produce "$(addr $mode 3),$(addr $mode 1)" "$topic" js 3000 "$m/js.acked" $PARTS >"$m/js.out" 2>&1 & local jp=$!; BG+=($jp)
  seq 0 2999 | sed 's/^/kc-/' | timeout 120 kcat -P -b "$(addr $mode 1)" -t "$topic" -X enable.idempotence=true \
    -X acks=all -X linger.ms=20 -X queue.buffering.max.messages=200 2>"$m/kc.err" & local kc=$!; BG+=($kc)
  sleep 1.2
  local killed_at; killed_at=$(date +%s.%N)
  kill_broker "$mode" 2
  # The dead broker leaves Metadata within the session timeout.
  local gone=""
  for _ in $(seq 1 100); do
    if [ "$(broker_ids "$(addr $mode 1)" "$topic")" = "1 3" ]; then gone=$(date +%s.%N); break; fi
    sleep 0.1
  done
  local gone_s; gone_s=$(/usr/bin/python3 -c "print(f'{$gone - $killed_at:.2f}')" 2>/dev/null || echo never)
  echo "[$mode] killed broker 2 left Metadata after ${gone_s} s (session timeout ${SESSION_MS} ms)"
  # Its entry expires a session timeout after its last heartbeat; the others read the live set
  # every third of it: gone within 4/3 of the session timeout (+ 1 s for a loaded machine).
  check "[$mode] killed broker gone from Metadata within 4/3 session timeout + 1 s (${gone_s} s)" \
    /usr/bin/python3 -c "import sys; sys.exit(0 if '$gone' and $gone - $killed_at <= $SESSION_MS*4/3000 + 1 else 1)"
  check "[$mode] leaders moved to the live brokers" bash -c "! metadata $(addr $mode 1) $topic | awk '\$1==\"p\"{print \$3}' | grep -qx 2"
  wait $rd; wait $jp; wait $kc; local kc_rc=$?
  grep '^ACK ' "$m/rd.out" | awk '{print $4}' >"$m/rd.acked"
  echo "[$mode] librdkafka: $(tail -1 "$m/rd.out"); kafkajs: $(cat "$m/js.out"); kcat exit $kc_rc"
  check "[$mode] librdkafka producer got acknowledgements ($(wc -l <"$m/rd.acked"))" test "$(wc -l <"$m/rd.acked")" -ge 5000
  check "[$mode] kafkajs producer got every acknowledgement" test "$(grep -c . "$m/js.acked")" = 3000
  check "[$mode] kcat producer delivered everything (exit $kc_rc)" test "$kc_rc" = 0
  # Broker 2 back on its data directory: its token gets its id back at once.
  start_broker "$mode" 2 || return 1
  check "[$mode] restarted broker 2 is listed again" wait_for 5 bash -c "[ \"\$(broker_ids $(addr $mode 3) $topic)\" = '1 2 3' ]"
  topic_values "$(addr $mode 2)" "$topic" >"$m/topic"
  seq 0 2999 | sed 's/^/kc-/' >"$m/kc.sent"
  check "[$mode] every record acknowledged to librdkafka is in the topic ($(missing "$m/rd.acked" "$m/topic") missing)" \
    test "$(missing "$m/rd.acked" "$m/topic")" = 0
  check "[$mode] every record acknowledged to kafkajs is in the topic" test "$(missing "$m/js.acked" "$m/topic")" = 0
  check "[$mode] every record kcat sent is in the topic" test "$(missing "$m/kc.sent" "$m/topic")" = 0
  check "[$mode] no value twice in the topic ($(dups "$m/topic") duplicated of $(wc -l <"$m/topic"))" test "$(dups "$m/topic")" = 0

  # --- Consumer groups over the brokers; the coordinator of one is killed --------------------
  timeout 120 "$PRODUCER" "$all" "$gtopic" ev 4000 0 >"$m/ev.out" 2>&1
  grep '^ACK ' "$m/ev.out" | awk '{print $4}' >"$m/ev.acked"
  check "[$mode] 4000 records for the groups acknowledged" test "$(wc -l <"$m/ev.acked")" = 4000
  "$MEMBER" "$(addr $mode 1)" cg "$gtopic" range 6000 >"$m/cg1.out" 2>"$m/cg1.err" & local c1=$!; BG+=($c1)
  "$MEMBER" "$(addr $mode 3)" cg "$gtopic" range 6000 >"$m/cg2.out" 2>"$m/cg2.err" & local c2=$!; BG+=($c2)
  timeout 150 node "$js" consume "$all" "$gtopic" jg 4000 "$m/jg.values" 90 >"$m/jg.out" 2>&1 & local jg=$!; BG+=($jg)
  timeout 60 kcat -C -b "$(addr $mode 3)" -G kg "$gtopic" -e -q -f '%s\n' -X auto.offset.reset=earliest \
    -X enable.auto.commit=true -X auto.commit.interval.ms=100 >"$m/kg.values" 2>"$m/kg.err" & local kg=$!; BG+=($kg)
  wait_for 30 bash -c "[ \$(cat $m/cg1.out $m/cg2.out | grep -c '^REC ') -ge 300 ]"
  # The broker coordinating group cg logs its generations.
  local coord=""
  for i in 1 2 3; do grep -q "group cg: generation" "$m/b$i/floe.log" 2>/dev/null && coord=$i; done
  check "[$mode] group cg has a coordinator (broker ${coord:-none})" test -n "$coord"
  local other=1; [ "$coord" = 1 ] && other=3
  local before; before=$(cat "$m/cg1.out" "$m/cg2.out" | grep -c '^REC ')
  [ -n "$coord" ] && kill_broker "$mode" "$coord"
  local t0; t0=$(date +%s.%N)
  # FindCoordinator through a live broker names a live one once the dead one's entry expired.
  local named="" moved_s="" moved=""
  for _ in $(seq 1 100); do
    named=$(find_coordinator "$(addr $mode $other)" cg)
    if [ "$named" != "$coord" ] && [ "$named" != -1 ]; then
      moved_s=$(/usr/bin/python3 -c "print(f'{$(date +%s.%N) - $t0:.2f}')"); break
    fi
    sleep 0.1
  done
  echo "[$mode] group cg: coordinator $coord killed after $before records; FindCoordinator named broker $named after ${moved_s:-never} s"
  check "[$mode] FindCoordinator names a live broker within 4/3 session timeout + 1 s (${moved_s:-never} s)" \
    /usr/bin/python3 -c "import sys; sys.exit(0 if '$moved_s' and $moved_s <= $SESSION_MS*4/3000 + 1 else 1)"
  # The members rejoin there (group_member retries a failed commit for up to 10 s first).
  for _ in $(seq 1 300); do
    grep -q "group cg: generation" "$m/b$named/floe.log" 2>/dev/null && { moved=$named; break; }
    sleep 0.1
  done
  local rejoined_s; rejoined_s=$(/usr/bin/python3 -c "print(f'{$(date +%s.%N) - $t0:.2f}')")
  echo "[$mode] group cg: the members formed a generation on broker ${moved:-none} after ${rejoined_s} s"
  check "[$mode] group cg formed again on broker $named" test -n "$moved"
  # group_member commits each record before reporting it; a commit whose answer was lost with
  # the killed coordinator (COMMITERR, then given up after the rebalance) may have been stored:
  # that record is then neither reported nor read again. Anything else missing is a loss.
  check "[$mode] the librdkafka members account for every record after the kill" \
    wait_for 60 bash -c "group_progress $m >/dev/null"
  stop_clients $c1 $c2
  cat "$m/cg1.out" "$m/cg2.out" | awk '$1=="REC"{print $4}' >"$m/cg.values"
  local progress; progress=$(group_progress "$m")
  echo "[$mode] librdkafka group: $progress"
  check "[$mode] librdkafka group: nothing lost, nothing twice ($progress)" bash -c "group_progress $m >/dev/null"
  check "[$mode] both librdkafka members got partitions" \
    bash -c "grep -q '^REC ' $m/cg1.out && grep -q '^REC ' $m/cg2.out"
  wait $jg; local jg_rc=$?
  check "[$mode] kafkajs group member consumed every record (exit $jg_rc: $(cat "$m/jg.out"))" \
    test "$(missing "$m/ev.acked" "$m/jg.values")" = 0
  wait $kg
  check "[$mode] kcat -G consumed every record ($(missing "$m/ev.acked" "$m/kg.values") missing)" \
    test "$(missing "$m/ev.acked" "$m/kg.values")" = 0
  start_broker "$mode" "$coord" || return 1

  # --- Committed offsets: through another broker, and across a restart of every broker -------
  timeout 20 kcat -C -b "$(addr $mode $other)" -G cg "$gtopic" -e -q -f '%s\n' -X auto.offset.reset=earliest >"$m/cg.again" 2>"$m/cg.again.err"
  local again_rc=$?
  check "[$mode] a new cg member through broker $other reads nothing (offsets committed before the kill are served; exit $again_rc)" \
    test "$again_rc" = 0 -a "$(grep -c . "$m/cg.again")" = 0
  for i in 1 2 3; do stop_broker "$mode" $i; done
  check "[$mode] clean stops left the registry" \
    bash -c "grep -q 'left the broker registry' $m/b1/floe.log && grep -q 'left the broker registry' $m/b3/floe.log"
  for i in 1 2 3; do start_broker "$mode" $i || return 1; done
  timeout 20 kcat -C -b "$(addr $mode 2)" -G cg "$gtopic" -e -q -f '%s\n' -X auto.offset.reset=earliest >"$m/cg.restart" 2>/dev/null
  local cg_rc=$?
  timeout 20 kcat -C -b "$(addr $mode 1)" -G kg "$gtopic" -e -q -f '%s\n' -X auto.offset.reset=earliest >"$m/kg.restart" 2>/dev/null
  local kg_rc=$?
  check "[$mode] after restarting every broker, group cg reads nothing new (exit $cg_rc)" \
    test "$cg_rc" = 0 -a "$(grep -c . "$m/cg.restart")" = 0
  check "[$mode] after restarting every broker, group kg reads nothing new (exit $kg_rc)" \
    test "$kg_rc" = 0 -a "$(grep -c . "$m/kg.restart")" = 0
  topic_values "$(addr $mode 3)" "$topic" >"$m/topic.after"
  check "[$mode] the topic is the same after the restart" cmp -s <(sort "$m/topic") <(sort "$m/topic.after")
  for i in 1 2 3; do stop_broker "$mode" $i; done
  return 0
}

# ---------------- one redis-server ----------------
RP=$(free_port)
up_redis "$work/redis" "$RP" || exit 1
URIS="redis://127.0.0.1:$RP"
run_suite single || { echo "FAIL: single-redis suite stopped early"; e2e_failed=$((e2e_failed+1)); }
# A second live broker with a taken id stops start-up naming floe.broker.id.
start_broker dup 1 || exit 1
"$FLOE_BIN" serve --set floe.data-dir="$work/dup2" --set floe.kafka.listen=127.0.0.1:0 \
  --set floe.http.listen=127.0.0.1:0 --set floe.local.type=redis --set floe.local.redis.uri="$URIS" \
  --set floe.broker.id=1 --set floe.cluster.session-timeout=${SESSION_MS}ms \
  --set floe.storage.worker.enabled=false "${LAKE[@]}" >"$work/dup2.out" 2>"$work/dup2.log"
dup_rc=$?
check "a second broker with a live broker's id stops start-up (exit $dup_rc)" test "$dup_rc" -ne 0
check "its message names floe.broker.id" grep -q "floe.broker.id=1: broker 1 is live" "$work/dup2.log"
stop_broker dup 1

# ---------------- Redis restarted (AOF, appendfsync always) under three brokers ----------------
# The idempotent librdkafka producer goes on through all three brokers while redis-server is
# killed with -9 and restarted on its AOF: Produce gets retriable errors meanwhile, /readyz names
# redis, the brokers stay up, and every acknowledged record is in the topic exactly once.
AP=$(free_port)
up_redis "$work/aof" "$AP" --appendonly yes --appendfsync always || exit 1
URIS="redis://127.0.0.1:$AP"
for i in 1 2 3; do start_broker aof $i || exit 1; done
aof_all="$(addr aof 1),$(addr aof 2),$(addr aof 3)"
timeout 150 "$PRODUCER" "$aof_all" aof.t aof 6000 1500 >"$work/aof.out" 2>"$work/aof.err" & aof_prod=$!; BG+=($aof_prod)
wait_for 30 bash -c "[ \$(grep -c '^ACK ' $work/aof.out) -ge 1000 ]" >/dev/null
kill -9 "${REDIS_PIDS[-1]}"; wait "${REDIS_PIDS[-1]}" 2>/dev/null
acked_at_kill=$(grep -c '^ACK ' "$work/aof.out")
sleep 1
code=$(curl -s -o "$work/aof.readyz" -w '%{http_code}' "http://127.0.0.1:${HPORT[aof1]}/readyz")
check "/readyz is 503 naming redis while Redis is down (HTTP $code)" \
  bash -c "[ '$code' = 503 ] && grep -q redis '$work/aof.readyz'"
sleep 1
up_redis "$work/aof" "$AP" --appendonly yes --appendfsync always || exit 1
wait "$aof_prod"
aof_rc=$?
grep '^ACK ' "$work/aof.out" | awk '{print $4}' >"$work/aof.acked"
echo "Redis restart: $acked_at_kill acknowledged before the kill, $(wc -l <"$work/aof.acked") in all; $(grep -c '^NACK' "$work/aof.out") refused"
check "the producer finished with every record acknowledged across the restart (exit $aof_rc)" \
  bash -c "[ '$aof_rc' = 0 ] && [ \$(wc -l <'$work/aof.acked') = 6000 ]"
for i in 1 2 3; do check "broker $i stayed up through the Redis restart" kill -0 "${PID[aof$i]}"; done
check "/readyz is up again" wait_for 15 bash -c "curl -sf -o /dev/null http://127.0.0.1:${HPORT[aof2]}/readyz"
check "/readyz shows the cluster's three live brokers" wait_for 15 \
  bash -c "curl -s http://127.0.0.1:${HPORT[aof3]}/readyz | grep -q 'broker 3: live brokers \\[1, 2, 3\\]'"
topic_values "$(addr aof 2)" aof.t >"$work/aof.topic"
check "every acknowledged record is in the topic after the restart ($(missing "$work/aof.acked" "$work/aof.topic") missing)" \
  test "$(missing "$work/aof.acked" "$work/aof.topic")" = 0
check "no record twice ($(dups "$work/aof.topic") duplicated)" test "$(dups "$work/aof.topic")" = 0
for i in 1 2 3; do stop_broker aof $i; done

# ---------------- a three-master Redis Cluster ----------------
redis_cluster "$work" || exit 1
ports=("${REDIS_CLUSTER_PORTS[@]}")
URIS=$REDIS_CLUSTER_URIS
run_suite cluster || { echo "FAIL: Redis Cluster suite stopped early"; e2e_failed=$((e2e_failed+1)); }
check "group offsets are spread over the cluster's masters" bash -c "
  n=0; for p in ${ports[*]}; do [ \$(redis-cli -p \$p --scan --pattern 'floe:offsets:*' | wc -l) -gt 0 ] && n=\$((n+1)); done; [ \$n -ge 2 ]"

finish
