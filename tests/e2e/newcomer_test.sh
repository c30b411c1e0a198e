#!/usr/bin/env bash
# What a new user hit (issue 25), with the real floe, its tokens file and `floe acls`:
# - every /iceberg route follows the topic ACLs (READ to load a topic's table, ALTER to commit,
#   DESCRIBE to see; cluster ACLs for namespaces and tables of no topic), as an authorized and an
#   unauthorized principal, with the spec's 403 model; bob's set-properties commit from the issue
#   is refused and writes no metadata; a topic name given for its table gets a 404 with a hint;
# - a wrong bearer token never locks a valid one out of the same address, while guesses are
#   answered later and later;
# - denials (Kafka and HTTP) are logged, rate-limited, and counted in /metrics;
# - `floe tables adopt` is refused under a live floe serve, naming it;
# - the README's DuckDB query (its new form, run as the README prints it) counts every record
#   once after `floe maintain compact`, where the old glob over data/ counts replaced files too.
FLOE_BIN="$(realpath "$1")"
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
source "$here/lib.sh"
js="$here/../js/e2e"
work="$(mktemp -d)"
trap 'stop_floe; rm -rf "$work"' EXIT
cd "$work"
topic=orders.created
table=orders_created
alice=tok-alice-5f0c2a9b7d1e4c3a
bob=tok-bob-8e2d4f6a1c3b5d7e
digest() { printf %s "$1" | sha256sum | cut -d' ' -f1; }
printf 'User:alice sha256:%s\nUser:bob sha256:%s\n' "$(digest $alice)" "$(digest $bob)" >"$work/tokens"
data="$work/data"
acls() { "$FLOE_BIN" acls "$@" --set floe.data-dir="$data" >/dev/null; }

start_floe "$work" --set floe.http.tokens-file="$work/tokens" \
  --set floe.topic-defaults.remote.storage.enable=true --set floe.topic-defaults.segment.ms=300 \
  --set floe.storage.worker.tick-interval=200ms || exit 1
# The producer (User:ANONYMOUS on the PLAINTEXT listener) may create and write the topic; alice
# may read and alter it and manage the cluster's namespaces; bob has no ACL on it. An ACL on
# `secret` makes that topic closed to everyone else.
acls add --allow User:ANONYMOUS --operation WRITE --operation CREATE --topic "$topic"
acls add --allow User:alice --operation READ --operation ALTER --topic "$topic"
acls add --allow User:alice --operation DESCRIBE --operation CREATE --operation ALTER --cluster
acls add --allow User:alice --operation READ --topic secret
sleep 0.3 # a running broker re-reads acls.json within 100 ms

# Three batches, each in its own segment (segment.ms=300), so the table gets several files.
produced=0 # (not `n`: wait_for has a local n, which bash's dynamic scoping would show to callees)
for b in 1 2 3; do
  seq $((produced + 1)) $((produced + 200)) | sed 's/.*/user-&:{"n":&}/' |
    kcat -P -b 127.0.0.1:$KAFKA_PORT -t $topic -K: 2>>"$work/kcat.err"
  produced=$((produced + 200)); sleep 0.6
done
n=$produced
api="http://127.0.0.1:$HTTP_PORT"
offloaded() {
  curl -s -H "Authorization: Bearer $alice" "$api/v1/topics" | /usr/bin/python3 -c 'import json,sys
t=[t for t in json.load(sys.stdin)["topics"] if t["name"]==sys.argv[1]]
sys.exit(0 if t and sum(p["offloaded_up_to"] for p in t[0]["partitions"])==int(sys.argv[2]) else 1)' $topic $produced
}
check "all $n records offloaded" wait_for 30 offloaded

# --- /iceberg and /v1 under the ACLs --------------------------------------------------------------
# call TOKEN METHOD PATH [JSON]: prints the status; the body is in $work/body.
call() {
  local tok="$1" m="$2" p="$3" body="${4:-}" args=()
  [ -n "$tok" ] && args+=(-H "Authorization: Bearer $tok")
  [ -n "$body" ] && args+=(-H 'Content-Type: application/json' --data "$body")
  if [ "$m" = HEAD ]; then args+=(-I); else args+=(-X "$m"); fi
  curl -s -o "$work/body" -w '%{http_code}' "${args[@]}" "$api$p"
}
ice="/iceberg/v1"
forbidden() { # the spec's ErrorModel for 403
  /usr/bin/python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))["error"]
sys.exit(0 if e["type"]=="ForbiddenException" and e["code"]==403 and e["message"] else 1)' "$work/body"
}
# expect NAME TOKEN METHOD PATH STATUS [JSON]
expect() {
  local name="$1" tok="$2" m="$3" p="$4" want="$5" got
  got=$(call "$tok" "$m" "$p" "${6:-}")
  check "$name: $m $p -> $want (got $got: $(head -c 200 "$work/body"))" test "$got" = "$want"
  if [ "$want" = 403 ] && [ "$m" != HEAD ] && [[ "$p" == /iceberg/* ]]; then
    check "$name: 403 in the spec's error model" forbidden
  fi
}
metadata_files() { ls "$data/warehouse/floe/$table/metadata/" | grep -c 'metadata.json$'; }
listed() { grep -qF "\"$1\"" "$work/body"; }

expect "config (no token)" "" GET "$ice/config" 401
expect "config" "$alice" GET "$ice/config" 200
expect "config" "$bob" GET "$ice/config" 200
expect "create namespace (bob)" "$bob" POST "$ice/namespaces" 403 '{"namespace":["lab"]}'
expect "create namespace (alice)" "$alice" POST "$ice/namespaces" 200 '{"namespace":["lab"]}'
call "$alice" GET "$ice/namespaces" >/dev/null
check "alice lists both namespaces" bash -c "grep -q '\"floe\"' '$work/body' && grep -q '\"lab\"' '$work/body'"
call "$bob" GET "$ice/namespaces" >/dev/null
check "bob lists the topics' namespace only" bash -c "grep -q '\"floe\"' '$work/body' && ! grep -q '\"lab\"' '$work/body'"
expect "load namespace lab" "$alice" GET "$ice/namespaces/lab" 200
expect "load namespace lab" "$bob" GET "$ice/namespaces/lab" 403
expect "namespace lab exists" "$alice" HEAD "$ice/namespaces/lab" 204
expect "namespace lab exists" "$bob" HEAD "$ice/namespaces/lab" 403
expect "load namespace floe" "$bob" GET "$ice/namespaces/floe" 200
expect "list tables" "$alice" GET "$ice/namespaces/floe/tables" 200
check "alice lists $table" listed $table
expect "list tables" "$bob" GET "$ice/namespaces/floe/tables" 200
check "bob's list leaves $table out" bash -c "! grep -q $table '$work/body'"
expect "load $table" "$alice" GET "$ice/namespaces/floe/tables/$table" 200
check "alice gets its metadata" grep -q '"metadata-location"' "$work/body"
expect "load $table" "$bob" GET "$ice/namespaces/floe/tables/$table" 403
check "bob's 403 names him, READ and the topic" grep -q "User:bob may not READ TOPIC '$topic'" "$work/body"
expect "$table exists" "$alice" HEAD "$ice/namespaces/floe/tables/$table" 204
expect "$table exists" "$bob" HEAD "$ice/namespaces/floe/tables/$table" 403
expect "metrics report" "$alice" POST "$ice/namespaces/floe/tables/$table/metrics" 204 '{"report-type":"scan-report"}'
expect "metrics report" "$bob" POST "$ice/namespaces/floe/tables/$table/metrics" 403 '{"report-type":"scan-report"}'
# The issue's reproduction, verbatim: bob's set-properties commit.
before=$(metadata_files)
expect "bob's set-properties commit (the issue)" "$bob" POST "$ice/namespaces/floe/tables/$table" 403 \
  '{"requirements":[],"updates":[{"action":"set-properties","updates":{"bob":"was-here"}}]}'
check "bob's refused commit wrote no metadata ($before files before, $(metadata_files) after)" test "$(metadata_files)" = "$before"
expect "alice's set-properties commit" "$alice" POST "$ice/namespaces/floe/tables/$table" 200 \
  '{"requirements":[],"updates":[{"action":"set-properties","updates":{"alice":"was-here"}}]}'
check "alice's commit wrote new metadata ($(metadata_files) files)" test "$(metadata_files)" -gt "$before"
expect "drop $table (not served)" "$bob" DELETE "$ice/namespaces/floe/tables/$table" 405
# A table of no topic: the cluster's ACLs.
schema='{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"x","required":false,"type":"long"}]}'
expect "create table lab.extra" "$bob" POST "$ice/namespaces/lab/tables" 403 "{\"name\":\"extra\",\"schema\":$schema}"
expect "create table lab.extra" "$alice" POST "$ice/namespaces/lab/tables" 200 "{\"name\":\"extra\",\"schema\":$schema}"
expect "list lab's tables" "$alice" GET "$ice/namespaces/lab/tables" 200
check "alice lists extra" listed extra
expect "list lab's tables" "$bob" GET "$ice/namespaces/lab/tables" 403
expect "load lab.extra" "$alice" GET "$ice/namespaces/lab/tables/extra" 200
expect "load lab.extra" "$bob" GET "$ice/namespaces/lab/tables/extra" 403
expect "commit to lab.extra" "$alice" POST "$ice/namespaces/lab/tables/extra" 200 \
  '{"requirements":[],"updates":[{"action":"set-properties","updates":{"k":"v"}}]}'
expect "commit to lab.extra" "$bob" POST "$ice/namespaces/lab/tables/extra" 403 \
  '{"requirements":[],"updates":[{"action":"set-properties","updates":{"k":"v"}}]}'
create_txn="{\"requirements\":[{\"type\":\"assert-create\"}],\"updates\":[{\"action\":\"add-schema\",\"schema\":$schema},{\"action\":\"set-current-schema\",\"schema-id\":-1},{\"action\":\"add-spec\",\"spec\":{\"spec-id\":0,\"fields\":[]}},{\"action\":\"set-default-spec\",\"spec-id\":-1}]}"
expect "create transaction lab.made" "$bob" POST "$ice/namespaces/lab/tables/made" 403 "$create_txn"
expect "create transaction lab.made" "$alice" POST "$ice/namespaces/lab/tables/made" 200 "$create_txn"
# A topic's name for its table: 404 saying what the table is called (to alice), 403 to bob.
expect "load the topic's name" "$alice" GET "$ice/namespaces/floe/tables/$topic" 404
check "the 404 names the table $table" grep -q "the table of topic '$topic' is floe.$table" "$work/body"
expect "load the topic's name" "$bob" GET "$ice/namespaces/floe/tables/$topic" 403
# /v1 with the same ACLs: records and the table's files need READ.
expect "records" "$alice" GET "/v1/topics/$topic/partitions/0/records?offset=0&limit=1" 200
expect "records" "$bob" GET "/v1/topics/$topic/partitions/0/records?offset=0&limit=1" 403
expect "table files" "$alice" GET "/v1/topics/$topic/table/files" 200
files_total() { /usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["records"], sum(f["records"] for f in r["files"]), len(r["files"]))' "$work/body"; }
read -r total summed nfiles < <(files_total)
check "/v1 table files: $nfiles files holding $summed records ($n produced)" test "$total $summed" = "$n $n"
check "several data files to compact ($nfiles)" test "$nfiles" -ge 2
expect "table files" "$bob" GET "/v1/topics/$topic/table/files" 403

# --- denials: logged, rate-limited, counted ---------------------------------------------------------
log="$work/floe.log"
check "bob's commit denial logged (principal, operation, resource, address)" \
  grep -qF "authorization denied: User:bob from 127.0.0.1 may not ALTER TOPIC '$topic' (http: POST /iceberg/v1/namespaces/floe/tables/$table)" "$log"
sleep 1.1 # the HTTP denials above can fill this second's 10 log lines (CI lost the next line to the limit once)
timeout 30 kcat -P -b 127.0.0.1:$KAFKA_PORT -t secret -X message.timeout.ms=5000 <<<"x" 2>"$work/kcat-secret.err"
check "Kafka produce to secret refused" grep -qi "authoriz" "$work/kcat-secret.err"
check "Kafka denial logged" grep -qF "authorization denied: User:ANONYMOUS from 127.0.0.1 may not CREATE TOPIC 'secret' (kafka)" "$log"
metric() { curl -s "$api/metrics" | grep -F "floe_authorization_denied_total{source=\"$1\",resource_type=\"$2\",operation=\"$3\"}" | awk '{print $2}'; }
kc=$(metric kafka TOPIC CREATE)
check "Kafka denials counted ($kc)" test "${kc:-0}" -ge 1
reads_before=$(metric http TOPIC READ)
lines_before=$(grep -c "may not READ TOPIC '$topic'" "$log")
sleep 1.1 # a fresh one-second window of the log's rate limit (10 lines a second)
urls=(); for _ in $(seq 1 40); do urls+=("$api$ice/namespaces/floe/tables/$table"); done
curl -s -H "Authorization: Bearer $bob" "${urls[@]}" >/dev/null # 40 denials on one connection, at once
logged=$(( $(grep -c "may not READ TOPIC '$topic'" "$log") - lines_before ))
# At most 10 a second: 10, or up to 20 should the burst straddle two windows on a loaded machine.
check "a burst of 40 denials logs at most 10 lines a second ($logged lines)" test "$logged" -le 20 -a "$logged" -ge 1
check "every denial counted ($reads_before -> $(metric http TOPIC READ))" test "$(metric http TOPIC READ)" -ge $((reads_before + 40))
sleep 1.1
call "$bob" GET "$ice/namespaces/floe/tables/$table" >/dev/null
check "the next line says how many were left out" grep -q "more denials not logged before this one" "$log"

# --- bearer-token backoff: guesses slowed, a valid token never refused ---------------------------------
timed() { curl -s -o /dev/null -w '%{http_code} %{time_total}' -H "Authorization: Bearer $1" "$api/v1/topics"; }
at_least() { /usr/bin/python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) >= float(sys.argv[2]) else 1)' "$1" "$2"; }
read -r s1 t1 < <(timed wrong-token-1)
read -r s2 t2 < <(timed wrong-token-2)
read -r s3 t3 < <(timed "$alice")
check "wrong tokens: 401, answered later and later (${t1}s, ${t2}s)" bash -c "[ $s1 = 401 ] && [ $s2 = 401 ]"
check "the second guess waited at least 0.2 s (${t2}s)" at_least "$t2" 0.2
check "alice's valid token right after, from the same address: 200 (got $s3)" test "$s3" = 200
check "... and not delayed (${t3}s)" at_least 0.2 "$t3"
read -r s4 t4 < <(timed wrong-token-3)
check "a third guess waits longer still: ${t4}s >= 0.4 s" at_least "$t4" 0.4
check "valid again: 200" test "$(timed "$bob" | cut -d' ' -f1)" = 200

# --- floe tables adopt under the live floe serve ---------------------------------------------------------
before=$(metadata_files)
"$FLOE_BIN" tables adopt $topic --set floe.data-dir="$data" --set floe.storage.remote.catalog.type=filesystem \
  >"$work/adopt.out" 2>"$work/adopt.err"; rc=$?
msg=$(cat "$work/adopt.err")
check "adopt under a live serve exits 2 (got $rc: $msg)" test "$rc" = 2
check "its message names the holder's pid" contains "$msg" "pid=$FLOE_PID"
check "its message names the holder's listeners" contains "$msg" "kafka=127.0.0.1:$KAFKA_PORT http=127.0.0.1:$HTTP_PORT"
check "it wrote no metadata" test "$(metadata_files)" = "$before"
sleep 0.5
check "the server stays ready" test "$(curl -s -o /dev/null -w '%{http_code}' "$api/readyz")" = 200

stop_floe; rc=$?
check "floe stops cleanly (rc=$rc)" test "$rc" -eq 0

# --- the Quick tour's query after compaction -----------------------------------------------------------------
"$FLOE_BIN" maintain --table $topic compact --set floe.data-dir="$data" >"$work/maintain.out" 2>&1; rc=$?
check "floe maintain compact (rc=$rc: $(tail -2 "$work/maintain.out"))" test "$rc" = 0
duck() { node "$js/duckdb_sql.mjs" "$1"; }
glob="$data/warehouse/floe/$table/data/*/*.parquet"
old=$(duck "SELECT count(*) FROM read_parquet('$glob')")
check "the old glob over data/ miscounts after compaction ($old rows for $n records)" test "$old" -gt "$n"
# The README's command, run as printed: from a directory whose floe.yaml names this data dir,
# with ./build/bin/floe being this floe, and DuckDB's node API for the duckdb CLI.
mkdir -p "$work/tour/build/bin" && ln -s "$FLOE_BIN" "$work/tour/build/bin/floe"
printf 'floe:\n  data-dir: %s\n' "$data" >"$work/tour/floe.yaml"
line=$(grep -F 'duckdb -c "SELECT count(*) FROM $(./build/bin/floe tables files orders.created --sql)"' "$repo/README.md")
check "the README counts rows with floe tables files --sql" test -n "$line"
check "the README no longer globs data/*/*.parquet" bash -c "! grep -qF 'orders_created/data/*/*.parquet' '$repo/README.md'"
if [ -n "$line" ]; then
  template=${line#*duckdb -c \"}; template=${template%\"*}
  sql=$(cd "$work/tour" && eval "echo \"$template\"")
  got=$(duck "$sql")
  check "the README's query counts $n rows after compaction (got $got)" test "$got" = "$n"
  check "every offset once" test "$(duck "SELECT count(DISTINCT \"offset\") FROM ${sql#*FROM }")" = "$n"
fi
finish
