#!/usr/bin/env bash
# What a newcomer meets first, with the real floe: start-up errors that name the setting to fix
# (one line each, non-zero exit), the command line (--set before the subcommand, a mistyped
# subcommand), and the /v1 API's edges: requests counted in /metrics by route pattern, time
# lookups across partitions and tiers in timestamp order with a cursor that pages through every
# record exactly once (records produced by kafkajs with explicit timestamps), and 400s naming the
# accepted values of enumerated parameters.
FLOE_BIN="$(realpath "$1")"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/lib.sh"
js="$here/../js/e2e"
work="$(mktemp -d)"
trap 'stop_floe; rm -rf "$work"' EXIT
cd "$work"

# run_fail NAME ARGS...: runs floe (bounded), expects a non-zero exit; leaves stderr in $err.
run_fail() {
  local name="$1"; shift
  timeout 30 "$FLOE_BIN" "$@" >"$work/out" 2>"$work/err"; local rc=$?
  err=$(cat "$work/err")
  check "$name exits non-zero and not by timeout (rc=$rc)" test "$rc" -ne 0 -a "$rc" -ne 124
}
error_lines() { grep -c ' error ' <<<"$1"; }
ports=(--set floe.kafka.listen=127.0.0.1:0 --set floe.http.listen=127.0.0.1:0)

# --- start-up errors ---------------------------------------------------------------------------
# A data dir below a regular file cannot be created, for root too (chmod would not stop root).
touch "$work/file"
run_fail "data dir below a file" serve --set floe.data-dir="$work/file/data" "${ports[@]}"
check "data dir: one line" test "$(wc -l <<<"$err")" -eq 1
check "data dir: names floe.data-dir" contains "$err" "floe.data-dir=$work/file/data"
check "data dir: says why" contains "$err" "Not a directory"
check "data dir: not blamed on the catalog" bash -c "! grep -qi catalog <<<'$err'"

run_fail "sqlite catalog below a file" serve --set floe.data-dir="$work/d1" "${ports[@]}" \
  --set floe.storage.remote.catalog.uri="sqlite://$work/file/catalog.db"
check "sqlite dir: one error line" test "$(error_lines "$err")" -eq 1
check "sqlite dir: names the setting" contains "$err" "floe.storage.remote.catalog.uri=sqlite://$work/file/catalog.db"

# PostgreSQL that is not there: libpq's multi-line message folded into the one error line.
pg_port=$(free_port)
run_fail "postgres catalog down" serve --set floe.data-dir="$work/d2" "${ports[@]}" \
  --set floe.storage.remote.catalog.uri="postgresql://floe@127.0.0.1:$pg_port/postgres"
check "postgres: one error line" test "$(error_lines "$err")" -eq 1
check "postgres: every line is a log line" bash -c "! grep -qv '^20[0-9][0-9]-' <<<'$err'"
check "postgres: refused, in the error line" contains "$(grep ' error ' <<<"$err")" "Connection refused"

# The filesystem catalog does not log the SQLite URI it does not use.
mkdir -p "$work/fs"
start_floe "$work/fs" --set floe.storage.remote.catalog.type=filesystem || exit 1
stop_floe
check "filesystem catalog logged" contains "$(cat "$work/fs/floe.log")" "catalog: filesystem"
check "no SQLite URI with the filesystem catalog" bash -c "! grep -qi sqlite '$work/fs/floe.log'"

# --- command line ------------------------------------------------------------------------------
run_fail "floe serv" serv
check "floe serv: exit 2" test "$(timeout 10 "$FLOE_BIN" serv 2>/dev/null; echo $?)" -eq 2
check "floe serv: suggests serve" contains "$err" "did you mean 'serve'?"
help=$("$FLOE_BIN" --help)
check "help shows --set" contains "$help" "--set KEY=VALUE"
check "help shows --config" contains "$help" "--config PATH"
check "help shows an example after the subcommand" contains "$help" "floe serve --set floe.kafka.listen="
out=$("$FLOE_BIN" --set floe.namespace=before config --set floe.default-partitions=2)
check "--set before config applies" contains "$(grep 'floe.namespace ' <<<"$out")" "before"
check "--set after config applies" contains "$(grep 'floe.default-partitions ' <<<"$out")" "2"

# floe --set ... serve: the settings before the subcommand are used.
mkdir -p "$work/a"
KAFKA_PORT=$(free_port); HTTP_PORT=$(free_port)
"$FLOE_BIN" --set floe.data-dir="$work/a/data" --set floe.kafka.listen=127.0.0.1:$KAFKA_PORT \
  --set floe.http.listen=127.0.0.1:$HTTP_PORT --set floe.topic-defaults.remote.storage.enable=true \
  --set floe.topic-defaults.segment.ms=300 --set floe.storage.worker.tick-interval=200ms \
  --set floe.topic-defaults.local.retention.ms=300 serve >"$work/a/floe.out" 2>"$work/a/floe.log" &
FLOE_PID=$!
if ! wait_for 20 grep -q "floe is up" "$work/a/floe.log"; then
  check "floe --set ... serve comes up" false
  cat "$work/a/floe.log"
  finish; exit
fi
check "floe --set ... serve starts with those settings" grep -q "kafka PLAINTEXT listener on 127.0.0.1:$KAFKA_PORT" "$work/a/floe.log"

# Port already in use: a second floe (own data dir) on the first one's ports.
run_fail "kafka port in use" serve --set floe.data-dir="$work/b1" --set floe.kafka.listen=127.0.0.1:$KAFKA_PORT \
  --set floe.http.listen=127.0.0.1:0
check "kafka port in use: one error line" test "$(error_lines "$err")" -eq 1
check "kafka port in use: names floe.kafka.listen" contains "$err" "floe.kafka.listen=127.0.0.1:$KAFKA_PORT: address already in use"
check "kafka port in use: another floe may run" contains "$err" "another floe"
run_fail "http port in use" serve --set floe.data-dir="$work/b2" --set floe.kafka.listen=127.0.0.1:0 \
  --set floe.http.listen=127.0.0.1:$HTTP_PORT
check "http port in use: one error line" test "$(error_lines "$err")" -eq 1
check "http port in use: names floe.http.listen" contains "$err" "floe.http.listen=127.0.0.1:$HTTP_PORT: address already in use"

# --- time lookups across partitions and tiers ----------------------------------------------------
api="http://127.0.0.1:$HTTP_PORT/v1"
py() { /usr/bin/python3 -c "$@"; }
# 3 partitions; timestamps out of order within a partition, ties across partitions. The first
# half goes to the remote tier (offloaded, local segments deleted), the second half stays local.
batch() { py "import json; print(json.dumps([[k % 3, 1700000000000 + ((k * 37) % 25) * 1000, 'k%d' % k, 'v%d' % k] for k in range($1, $2)]))"; }
check "kafkajs produced the first half" node "$js/produce_timed.mjs" 127.0.0.1:$KAFKA_PORT timed 3 "$(batch 0 45)"
all_offloaded() {
  curl -s "$api/topics" | py 'import json,sys
t=[t for t in json.load(sys.stdin)["topics"] if t["name"]=="timed"][0]
sys.exit(0 if all(p["local_start"]==15 for p in t["partitions"]) else 1)'
}
check "first half offloaded and deleted locally" wait_for 60 all_offloaded
# The second half must stay local while the pages are read: with 300 ms segments the storage
# worker would offload and delete it within a second, racing the reads on a loaded machine. The
# same floe again, without its storage worker (the remote tier is still read).
stop_floe
"$FLOE_BIN" --set floe.data-dir="$work/a/data" --set floe.kafka.listen=127.0.0.1:$KAFKA_PORT \
  --set floe.http.listen=127.0.0.1:$HTTP_PORT --set floe.topic-defaults.remote.storage.enable=true \
  --set floe.topic-defaults.segment.ms=300 --set floe.topic-defaults.local.retention.ms=300 \
  --set floe.storage.worker.enabled=false serve >>"$work/a/floe.out" 2>>"$work/a/floe.log" &
FLOE_PID=$!
check "floe up again without its storage worker" wait_for 20 bash -c "[ \$(grep -c 'floe is up' '$work/a/floe.log') -ge 2 ]"
check "the first half is still in the remote tier only" wait_for 10 all_offloaded
check "kafkajs produced the second half" node "$js/produce_timed.mjs" 127.0.0.1:$KAFKA_PORT timed 3 "$(batch 45 90)"

from=1700000003000; to=1700000020000
# The order every engine would give: (timestamp, partition, offset), offsets per partition in
# production order.
expected=$(py "
import json
recs=json.loads('$(batch 0 45)')+json.loads('$(batch 45 90)')
seen={}; out=[]
for p,ts,k,v in recs:
    o=seen.get(p,0); seen[p]=o+1
    if $from<=ts<=$to: out.append((ts,p,o,k))
print(json.dumps(sorted(out)))")
pages=0; after=""; got="[]"; tiers=""
while [ $pages -lt 50 ]; do
  r=$(curl -s "$api/topics/timed/records?from-ts=$from&to-ts=$to&limit=7${after:+&after=$after}")
  pages=$((pages+1))
  got=$(py "import json,sys; a=json.loads(sys.argv[1]); r=json.loads(sys.argv[2]); assert len(r['records'])<=7
print(json.dumps(a+[(x['timestamp'],x['partition'],x['offset'],x['key']) for x in r['records']]))" "$got" "$r") || { echo "bad page: $r"; break; }
  tiers+=$(py "import json,sys; print(' '.join(x['tier'] for x in json.loads(sys.argv[1])['records']))" "$r")" "
  after=$(py "import json,sys; n=json.loads(sys.argv[1])['next']; print(n or '')" "$r")
  [ -z "$after" ] && break
done
n_expected=$(py "import json,sys; print(len(json.loads(sys.argv[1])))" "$expected")
check "time pages: every record once, in (timestamp, partition, offset) order ($pages pages)" \
  test "$(py "import json,sys; print(json.loads(sys.argv[1])==json.loads(sys.argv[2]))" "$got" "$expected")" = True
py "import json,sys; g=[tuple(x) for x in json.loads(sys.argv[1])]; e=[tuple(x) for x in json.loads(sys.argv[2])]
if g!=e: print('missing', sorted(set(e)-set(g)), 'extra', sorted(set(g)-set(e)), 'dups', len(g)-len(set(g)))" "$got" "$expected"
check "time pages: limit cut them ($n_expected records, $pages pages)" test "$pages" -ge 3
check "time pages: both tiers merged" bash -c "grep -q remote <<<'$tiers' && grep -q local <<<'$tiers'"
r=$(curl -s "$api/topics/timed/records?from-ts=$from&to-ts=$to&limit=1000")
check "time lookup without a cut: next is null" test "$(py "import json,sys; r=json.loads(sys.argv[1]); print(r['next'], len(r['records']))" "$r")" = "None $n_expected"

# --- enumerated parameters -----------------------------------------------------------------------
code() { curl -s -o "$work/body" -w '%{http_code}' "$1"; }
check "all=maybe is a 400" test "$(code "$api/topics/timed/records?key=k1&all=maybe")" = 400
check "all=maybe lists true, false" grep -q "must be one of true, false; got 'maybe'" "$work/body"
check "all=false still works" test "$(code "$api/topics/timed/records?key=k1&all=false")" = 200
check "encoding=rot13 is a 400 (key)" test "$(code "$api/topics/timed/records?key=k1&encoding=rot13")" = 400
check "encoding=rot13 lists auto, base64" grep -q "must be one of auto, base64; got 'rot13'" "$work/body"
check "encoding=rot13 is a 400 (offset)" test "$(code "$api/topics/timed/partitions/0/records?offset=0&encoding=rot13")" = 400
check "encoding=rot13 is a 400 (time)" test "$(code "$api/topics/timed/records?from-ts=0&encoding=rot13")" = 400
check "a bad cursor is a 400" test "$(code "$api/topics/timed/records?from-ts=0&after=yesterday")" = 400

# --- /v1 requests counted by route pattern -------------------------------------------------------
curl -s "$api/topics" >/dev/null
curl -s "$api/topics/timed/nothing-here" >/dev/null
metrics=$(curl -s "http://127.0.0.1:$HTTP_PORT/metrics")
count() { grep -F "floe_http_requests_total{endpoint=\"$1\"}" <<<"$metrics" | awk '{print $2}'; }
check "/v1/topics counted ($(count /v1/topics))" test "$(count /v1/topics)" -ge 2
# the pages, the uncut lookup, and the five 400/200 checks above
check "records lookups counted ($(count '/v1/topics/{topic}/records'))" test "$(count '/v1/topics/{topic}/records')" -eq $((pages + 6))
check "offset lookups counted" test "$(count '/v1/topics/{topic}/partitions/{partition}/records')" -ge 1
check "unknown /v1 paths counted under one label" test "$(count '/v1/topics/{unknown}')" -ge 1
# (the metrics go in on stdin: help texts hold apostrophes, which would end a quoted argument)
check "no topic name in request labels" bash -c '! grep "^floe_http_requests_total" | grep -q timed' <<<"$metrics"

stop_floe; rc=$?
check "floe stops cleanly (rc=$rc)" test "$rc" -eq 0
finish
