#!/usr/bin/env bash
# Issue 26: brokers on one Redis join without hand-numbering. Real redis-server, real floe
# processes on loopback:
# - three brokers started together without floe.broker.id take three distinct ids (0, 1, 2);
# - a broker killed with -9 and restarted on its data directory takes its old id back at once;
# - an explicit id that a live broker has is refused within about a second, exit 2, the message
#   naming only the cause and the way out;
# - a copy of a live broker's data directory (same broker.token) is refused while the original
#   lives; an explicit free id still works.
FLOE_BIN="$(realpath "$1")"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/lib.sh"
work="$(mktemp -d)"
declare -A PID KPORT HPORT
REDIS_PID=
stop_all() {
  for n in "${!PID[@]}"; do kill -9 "${PID[$n]}" 2>/dev/null; done
  [ -n "$REDIS_PID" ] && kill -9 "$REDIS_PID" 2>/dev/null
  wait 2>/dev/null
}
trap 'stop_all; [ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
REDIS_PORT=$(free_port)
run_redis "$work/redis" "$REDIS_PORT" || exit 1
REDIS_PID=$RUN_REDIS_PID
ttl_ms=3000
# Every broker of the cluster on one lake (one SQLite file and one warehouse on this machine):
# a broker with a lake of its own would be refused before its id is considered.
mkdir -p "$work/lake"
common=(--set floe.local.type=redis --set floe.local.redis.uri=redis://127.0.0.1:$REDIS_PORT
        --set floe.cluster.session-timeout=${ttl_ms}ms --set floe.storage.worker.enabled=false
        --set floe.storage.remote.catalog.uri=sqlite://$work/lake/catalog.db
        --set floe.storage.remote.path=file://$work/lake/warehouse)

live_ids() { redis-cli -p "$REDIS_PORT" ZRANGE 'floe{floe.brokers}.expiry' 0 -1 | sort -n | tr '\n' ' '; }
# log_ms FILE FROM TO: milliseconds between the first log line matching FROM and the first
# after it matching TO (floe's own time, without process start on a loaded machine)
log_ms() {
  /usr/bin/python3 - "$@" <<'PY'
import re, sys
from datetime import datetime
path, a, b = sys.argv[1:4]
t0 = None
for line in open(path, errors='replace'):
    m = re.match(r'(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3})', line)
    if not m:
        continue
    t = datetime.strptime(m.group(1), '%Y-%m-%d %H:%M:%S.%f')
    if t0 is None and re.search(a, line):
        t0 = t
    elif t0 is not None and re.search(b, line):
        print(int((t - t0).total_seconds() * 1000))
        sys.exit(0)
print(999999)
PY
}
# run_refused NAME [--set ...]: runs floe to its exit; sets RC and ELAPSED_MS (wall clock,
# process start included) and OWN_MS (from floe's first log line to its error)
run_refused() {
  local n="$1"; shift
  mkdir -p "$work/$n"
  local t0; t0=$(date +%s%N)
  timeout 20 "$FLOE_BIN" serve --set floe.data-dir="$work/$n/data" --set floe.kafka.listen=127.0.0.1:0 \
    --set floe.http.listen=127.0.0.1:0 "${common[@]}" "$@" >"$work/$n/floe.out" 2>"$work/$n/floe.log"
  RC=$?
  ELAPSED_MS=$((($(date +%s%N) - t0) / 1000000))
  OWN_MS=$(log_ms "$work/$n/floe.log" 'floe .* starting' ' error ')
}

# 1. Three brokers started together, no ids.
launch a; launch b; launch c
check "three brokers without ids come up" wait_for 20 bash -c "grep -q 'floe is up' '$work/a/floe.log' && grep -q 'floe is up' '$work/b/floe.log' && grep -q 'floe is up' '$work/c/floe.log'"
ids="$(id_of a) $(id_of b) $(id_of c)"
check "three distinct ids, the lowest free ones (got $ids)" test "$(tr ' ' '\n' <<<"$ids" | sort -n | tr '\n' ' ')" = "0 1 2 "
check "the registry lists them live ($(live_ids))" test "$(live_ids)" = "0 1 2 "
check "each id is kept with its data directory's token" \
  test "$(redis-cli -p "$REDIS_PORT" HGET 'floe{floe.brokers}.bindings' "$(cat "$work/b/data/broker.token")")" = "$(id_of b)"
# A broker learns of the others from the registry's next refresh, not at their join: its
# Metadata lists all three within a refresh period (a Kafka client retries Metadata likewise).
metadata_lists_three() {
  test "$(kcat -b 127.0.0.1:${KPORT[a]} -L -m 5 2>&1 | grep -c 'broker [0-9]* at')" -eq 3
}
check "Metadata lists three brokers" wait_for 10 metadata_lists_three
# Replication factors (issue 33): the data is in Redis, which every broker serves; a factor up to
# the live brokers is accepted and Metadata names that many as replicas (all in sync); more is
# refused as Kafka refuses it.
rf() { timeout 60 /usr/bin/python3 "$here/create_topic_rf.py" 127.0.0.1:${KPORT[a]} "$@" 2>/dev/null; }
replicas_ok() { # TOPIC N: every partition lists N distinct replicas, its leader first, all in sync
  rf "$1" | awk -v n="$2" '{ k = split($2, r, ","); if (k != n || r[1] != $1 || $2 != $3) bad = 1
                             delete seen; for (i = 1; i <= k; i++) { if (r[i] in seen) bad = 1; seen[r[i]] = 1 }; c++ }
                           END { exit (bad || c == 0) }'
}
out=$(rf rf3 4 3)
check "CreateTopics with replication factor 3 on three brokers is accepted ($out)" test "$out" = ok
check "Metadata names 3 replicas for every partition, the leader first, all in sync ($(rf rf3 | tr '\n' ';'))" replicas_ok rf3 3
out=$(rf rf2 2 2)
check "replication factor 2 is accepted ($out)" test "$out" = ok
check "... with 2 replicas listed ($(rf rf2 | tr '\n' ';'))" replicas_ok rf2 2
out=$(rf rf4 1 4)
check "replication factor 4 on three brokers is refused ($out)" contains "$out" "ERR INVALID_REPLICATION_FACTOR"
curl -s "http://127.0.0.1:${HPORT[c]}/readyz" >"$work/ready.c"
check "readyz of c names its id: $(grep -o '"cluster":{[^}]*}' "$work/ready.c")" grep -q "\"cluster\":{\"status\":\"up\",\"message\":\"broker $(id_of c):" "$work/ready.c"

# 2. kill -9 of b, restarted on its data directory: its old id back.
old_b=$(id_of b)
kill -9 "${PID[b]}"; wait "${PID[b]}" 2>/dev/null
mv "$work/b/floe.log" "$work/b/floe.log.1"
t0=$(date +%s%N)
launch b
check "b restarts after kill -9" wait_for 20 is_up b
back_ms=$((($(date +%s%N) - t0) / 1000000))
join_ms=$(log_ms "$work/b/floe.log" 'floe .* starting' 'joined the cluster')
echo "b back after kill -9 in ${back_ms} ms, ${join_ms} ms from its start to joining (session timeout ${ttl_ms} ms)"
check "b takes its old id $old_b back (got $(id_of b))" test "$(id_of b)" = "$old_b"
# A copy elsewhere would be watched for half the session timeout; its own previous life is not.
check "... at once: its previous life's entry is not watched nor waited out (${join_ms} ms < $((ttl_ms / 2)) ms)" \
  test "$join_ms" -lt $((ttl_ms / 2))
check "still three live brokers ($(live_ids))" test "$(live_ids)" = "0 1 2 "
check "the replication factor survives b's restart ($(rf rf3 | tr '\n' ';'))" replicas_ok rf3 3

# 3. An explicit id a live broker has: refused within about a second, exit 2, cause and way out only.
taken=$(id_of a)
run_refused dup --set floe.broker.id=$taken
msg=$(grep -i "error" "$work/dup/floe.log" | tail -1)
echo "duplicate id refused in ${ELAPSED_MS} ms (${OWN_MS} ms after floe's first log line): $msg"
check "a duplicate explicit id exits 2 (rc=$RC)" test "$RC" -eq 2
check "... within a second of floe starting (${OWN_MS} ms)" test "$OWN_MS" -lt 1000
check "... within two seconds, process start on a loaded machine included (${ELAPSED_MS} ms)" test "$ELAPSED_MS" -lt 2000
check "... naming the id and the way out" contains "$msg" "floe.broker.id=$taken: broker $taken is live"
check "... leave floe.broker.id unset" contains "$msg" "leave floe.broker.id unset"
check "... and nothing unrelated" bash -c "! grep -q 'floe.kafka.listen\|floe.tls\|floe.data-dir' <<<'$msg'"

# 4. A copy of a's data directory (same broker.token) while a lives: refused.
mkdir -p "$work/copy"
cp -r "$work/a/data" "$work/copy/data"
rm -f "$work/copy/data/floe.lock"
run_refused copy
msg=$(grep -i "error" "$work/copy/floe.log" | tail -1)
echo "copied data dir refused in ${ELAPSED_MS} ms (${OWN_MS} ms after floe's first log line): $msg"
check "a copied data directory is refused while the original lives (rc=$RC)" test "$RC" -eq 2
check "... saying it is a copy and what to do" contains "$msg" "a copy of this data directory"
check "... naming broker.token" contains "$msg" "copy/data/broker.token"
run_refused copy2 --set floe.broker.id=9 --set floe.data-dir="$work/copy/data"
check "the copy is refused with an explicit id too (rc=$RC)" test "$RC" -eq 2
check "a is still live with its id ($(live_ids))" test "$(live_ids)" = "0 1 2 "

# 5. An explicit free id still works, and a new broker without id takes the next free one.
launch e --set floe.broker.id=7
check "an explicit id still works" wait_for 20 is_up e
check "... as broker 7 (got $(id_of e))" test "$(id_of e)" = 7
launch f
check "a fourth broker without id comes up" wait_for 20 is_up f
check "... with the lowest free id 3 (got $(id_of f))" test "$(id_of f)" = 3
check "the registry lists five live brokers ($(live_ids))" test "$(live_ids)" = "0 1 2 3 7 "
finish
