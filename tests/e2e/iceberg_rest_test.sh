#!/usr/bin/env bash
# Floe's Iceberg REST catalog at /iceberg, both ways.
# 1. Server: Floe B offloads a topic; iceberg-js lists, loads, creates and commits through B's
#    /iceberg (requirement failures answered 409, the floe.committed-positions guard answered
#    400), icebird reads the table through the metadata location B returns, and every response
#    is validated against the REST OpenAPI specification's schemas.
# 2. Client: Floe A with floe.storage.remote.catalog.type=rest pointing at B's /iceberg offloads
#    through B; both list the same tables; A is killed with -9 during commits and restarted, and
#    DuckDB (not Floe's reader) finds each produced row exactly once.
FLOE_BIN="$(realpath "$1")"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/lib.sh"
js="$here/../js/e2e"
spec="$here/../../../shared/fixtures/iceberg-rest/rest-catalog-open-api.yaml"
[ -f "$spec" ] || spec="/work/shared/fixtures/iceberg-rest/rest-catalog-open-api.yaml"
work="$(mktemp -d)"
A_PID=
cleanup() { [ -n "${KEEP:-}" ] && echo "kept $work" && work=/nonexistent; [ -n "$A_PID" ] && kill -9 "$A_PID" 2>/dev/null; [ -n "${STANDIN_PID:-}" ] && kill "$STANDIN_PID" 2>/dev/null; FLOE_PID=${B_PID:-$FLOE_PID}; stop_floe; rm -rf "$work"; }
trap cleanup EXIT
# The interpreter with openapi-schema-validator (the image's pyenv Python 3.11).
py=""
for p in python3 /root/.pyenv/shims/python3 /usr/bin/python3; do
  "$p" -c 'import openapi_schema_validator, yaml' 2>/dev/null && { py=$p; break; }
done
[ -n "$py" ] || { echo "no python3 with openapi-schema-validator and PyYAML"; exit 1; }

records=${RECORDS:-4000}
mkdir -p "$work/b"
start_floe "$work/b" --set floe.topic-defaults.remote.storage.enable=true \
  --set floe.topic-defaults.segment.ms=500 --set floe.storage.worker.tick-interval=200ms \
  --set floe.default-partitions=2 || exit 1
B_HTTP=$HTTP_PORT; B_KAFKA=$KAFKA_PORT; B_PID=$FLOE_PID
base="http://127.0.0.1:$B_HTTP/iceberg"

check "kafkajs produced $records records to B" node "$js/produce.mjs" 127.0.0.1:$B_KAFKA rest.b "0" "$records" 2
positions() { # NS TABLE: the sum of committed positions the REST server reports
  curl -s "$base/v1/namespaces/$1/tables/$2" | /usr/bin/python3 -c '
import json,sys
m=json.load(sys.stdin)["metadata"]
s=[x for x in m.get("snapshots",[]) if x["snapshot-id"]==m.get("current-snapshot-id")]
print(sum(json.loads(s[0]["summary"].get("floe.committed-positions","{}")).values()) if s else 0)' 2>/dev/null || echo 0
}
wait_for 60 bash -c "[ \"\$(curl -s '$base/v1/namespaces/floe/tables/rest_b' | /usr/bin/python3 -c '
import json,sys
m=json.load(sys.stdin)[\"metadata\"]
s=[x for x in m.get(\"snapshots\",[]) if x[\"snapshot-id\"]==m.get(\"current-snapshot-id\")]
print(sum(json.loads(s[0][\"summary\"].get(\"floe.committed-positions\",\"{}\")).values()) if s else 0)' 2>/dev/null)\" = $records ]"
check "B offloaded all $records records (positions $(positions floe rest_b))" test "$(positions floe rest_b)" = "$records"

: >"$work/exchanges.jsonl"
check "iceberg-js through B's /iceberg (list, load, create, commit, guard) and icebird through the returned location" \
  node "$js/iceberg_rest_check.mjs" "$base" "$work/exchanges.jsonl" "$work/b/data/warehouse" floe rest_b "$records"
# Raw requests the client above does not make: config, HEADs, bad bodies, unknown routes.
raw() { # METHOD PATH [BODY]: records the exchange as the validator expects
  local out; out=$(curl -s -o "$work/raw.body" -w '%{http_code}' -X "$1" ${3:+-H 'Content-Type: application/json' --data "$3"} \
    $([ "$1" = HEAD ] && echo -I) "http://127.0.0.1:$B_HTTP$2")
  /usr/bin/python3 -c 'import json,sys; print(json.dumps({"method":sys.argv[1],"path":sys.argv[2],"status":int(sys.argv[3]),"body":open(sys.argv[4]).read() if sys.argv[1]!="HEAD" else ""}))' \
    "$1" "$2" "$out" "$work/raw.body" >>"$work/exchanges.jsonl"
  echo "$out"
}
check "GET config is 200" test "$(raw GET /iceberg/v1/config)" = 200
check "GET config with a warehouse is 200" test "$(raw GET '/iceberg/v1/config?warehouse=floe')" = 200
check "HEAD namespace is 204" test "$(raw HEAD /iceberg/v1/namespaces/floe)" = 204
check "HEAD missing table is 404" test "$(raw HEAD /iceberg/v1/namespaces/floe/tables/nope)" = 404
check "a prefix is accepted" test "$(raw GET /iceberg/v1/anyprefix/namespaces/floe/tables)" = 200
check "a commit body that is not JSON is a 400" test "$(raw POST /iceberg/v1/namespaces/floe/tables/rest_b '{not json')" = 400
check "an unknown update is refused (400)" test "$(raw POST /iceberg/v1/namespaces/floe/tables/rest_b \
  '{"requirements":[],"updates":[{"action":"add-encryption-key","encryption-key":{"key-id":"k","encrypted-key-metadata":"AA=="}}]}')" = 400
check "a commit to a missing table is a 404" test "$(raw POST /iceberg/v1/namespaces/floe/tables/nope '{"requirements":[],"updates":[]}')" = 404
check "a create transaction (assert-create) makes a table" test "$(raw POST /iceberg/v1/namespaces/ext/tables/tx \
  '{"requirements":[{"type":"assert-create"}],"updates":[{"action":"assign-uuid","uuid":"9c12d441-03fe-4693-9a96-a0705ddf69c1"},{"action":"upgrade-format-version","format-version":2},{"action":"add-schema","schema":{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"x","type":"long","required":false}]},"last-column-id":1},{"action":"set-current-schema","schema-id":-1},{"action":"add-spec","spec":{"spec-id":0,"fields":[]}},{"action":"set-default-spec","spec-id":-1},{"action":"add-sort-order","sort-order":{"order-id":0,"fields":[]}},{"action":"set-default-sort-order","sort-order-id":-1},{"action":"set-properties","updates":{"created-by":"tx"}}]}')" = 200
check "assert-create on an existing table is a 409" test "$(raw POST /iceberg/v1/namespaces/ext/tables/tx \
  '{"requirements":[{"type":"assert-create"}],"updates":[]}')" = 409
check "GET an unknown route under /iceberg is a 404" test "$(raw GET /iceberg/v1/namespaces/floe/views/x)" = 404
# The validator knows the spec's operations only: the unknown route is checked by status above.
grep -v '/views/' "$work/exchanges.jsonl" >"$work/exchanges.spec.jsonl"
check "every response conforms to the REST OpenAPI spec" $py "$here/iceberg_rest_validate.py" "$spec" "$work/exchanges.spec.jsonl"

# --- Floe A offloads through B's REST catalog (same warehouse; B writes the metadata) --------
mkdir -p "$work/a"
a_args=(--set floe.storage.remote.catalog.type=rest --set "floe.storage.remote.catalog.uri=$base"
  --set "floe.storage.remote.path=file://$work/b/data/warehouse"
  --set floe.storage.remote.catalog.header.X-Floe-Test=a
  --set floe.topic-defaults.remote.storage.enable=true --set floe.topic-defaults.segment.ms=300
  --set floe.storage.worker.tick-interval=100ms --set floe.default-partitions=2)
start_a() { start_floe "$work/a" "${a_args[@]}" && A_PID=$FLOE_PID && A_HTTP=$HTTP_PORT && A_KAFKA=$KAFKA_PORT; }
start_a || exit 1
check "A logs its REST catalog" grep -q "catalog: rest at $base" "$work/a/floe.log"
cycles=${CYCLES:-5}; chunk=${CHUNK:-3000}; total=0
for c in $(seq 1 "$cycles"); do
  node "$js/produce.mjs" 127.0.0.1:$A_KAFKA rest.a "$total" "$((total + chunk))" 2 >/dev/null || { echo "produce failed in cycle $c"; break; }
  total=$((total + chunk))
  # Let the storage worker commit through B for a moment, then kill A mid-offload.
  sleep "0.$((RANDOM % 9 + 1))"
  kill -9 "$A_PID"; wait "$A_PID" 2>/dev/null; FLOE_PID=; A_PID=
  start_a || exit 1
done
check "A produced $total records over $cycles kill -9 cycles" test "$total" -eq $((cycles * chunk))
wait_for 90 bash -c "/usr/bin/python3 '$here/iceberg_files.py' '$work/b/data/catalog.db' floe rest_a >'$work/a_files.json' 2>/dev/null &&
  [ \"\$(/usr/bin/python3 -c 'import json,sys; print(sum(json.load(open(sys.argv[1]))[\"positions\"].values()))' '$work/a_files.json')\" = $total ]"
got=$(/usr/bin/python3 -c 'import json,sys; print(sum(json.load(open(sys.argv[1]))["positions"].values()))' "$work/a_files.json" 2>/dev/null)
check "A's offload through B reached every record (positions $got of $total)" test "$got" = "$total"
check "DuckDB finds each of A's rows exactly once in the table B's catalog holds" \
  node "$js/check_table.mjs" "$work/a_files.json" 0 "$total" 2 rest.a
tables_b=$(curl -s "$base/v1/namespaces/floe/tables")
tables_a=$(curl -s "http://127.0.0.1:$A_HTTP/iceberg/v1/namespaces/floe/tables")
check "A and B list the same tables ($tables_b)" test "$tables_a" = "$tables_b"
contains "$tables_b" '"rest_a"' && contains "$tables_b" '"rest_b"'; check "both tables are listed" test $? = 0
check "A's metadata files are written by B (no v<N> copies from A, one writer)" \
  test "$(grep -c 'could not publish its path copy' "$work/a/floe.log" "$work/b/floe.log" | awk -F: '{s+=$2} END {print s}')" = 0
kill -9 "$A_PID" 2>/dev/null; wait "$A_PID" 2>/dev/null; A_PID=; FLOE_PID=$B_PID

# --- The server over the filesystem catalog (floe D) -----------------------------------------
mkdir -p "$work/d"
start_floe "$work/d" --set floe.storage.remote.catalog.type=filesystem --set floe.topic-defaults.remote.storage.enable=true \
  --set floe.topic-defaults.segment.ms=300 --set floe.storage.worker.tick-interval=100ms || exit 1
D_PID=$FLOE_PID
node "$js/produce.mjs" 127.0.0.1:$KAFKA_PORT rest.d 0 500 1 >/dev/null
dbase="http://127.0.0.1:$HTTP_PORT/iceberg"
dfirst=$(( $(wc -l <"$work/exchanges.jsonl") + 1 ))
draw() { B_HTTP=$HTTP_PORT raw "$@"; }
wait_for 30 bash -c "curl -s '$dbase/v1/namespaces/floe/tables/rest_d' | grep -q '\"floe.committed-positions\":\"{\\\\\"rest.d-0\\\\\":500}\"'"
check "D (filesystem catalog) serves its table" test "$(draw GET /iceberg/v1/namespaces/floe/tables/rest_d)" = 200
dloc=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["metadata-location"])' "$work/raw.body")
duuid=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["metadata"]["table-uuid"])' "$work/raw.body")
check "its metadata-location is a v<N>.metadata.json ($dloc)" grep -q '/metadata/v[0-9]*\.metadata\.json$' <<<"$dloc"
check "a set-properties commit on the filesystem catalog is 200" test "$(draw POST /iceberg/v1/namespaces/floe/tables/rest_d \
  "{\"requirements\":[{\"type\":\"assert-table-uuid\",\"uuid\":\"$duuid\"}],\"updates\":[{\"action\":\"set-properties\",\"updates\":{\"engine\":\"x\"}}]}")" = 200
dloc2=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["metadata-location"])' "$work/raw.body")
check "it made the next version ($dloc2)" test "$(basename "$dloc2")" != "$(basename "$dloc")"
check "a stale requirement on the filesystem catalog is 409" test "$(draw POST /iceberg/v1/namespaces/floe/tables/rest_d \
  '{"requirements":[{"type":"assert-table-uuid","uuid":"nope"}],"updates":[{"action":"set-properties","updates":{"a":"b"}}]}')" = 409
check "a new table on the filesystem catalog" test "$(draw POST /iceberg/v1/namespaces/other/tables \
  '{"name":"t","schema":{"type":"struct","fields":[{"id":1,"name":"x","type":"long","required":true}]}}')" = 200
check "the D exchanges conform to the spec" $py "$here/iceberg_rest_validate.py" "$spec" <(tail -n +"$dfirst" "$work/exchanges.jsonl")
stop_floe

# --- Floe C against a spec-faithful stand-in (python) that injects faults on commits --------
# Requirements failing after another engine's commit (409), 500/503 before applying, 500 after
# applying, an answer slower than C's request timeout after applying; OAuth2 tokens that expire
# after 3 s; a header C must send. Every path must end with each row exactly once.
mkdir -p "$work/c"
faults=ok,conflict,500-before,ok,500-after,503-before,timeout-after,ok
/usr/bin/python3 "$here/rest_standin.py" "$work/standin.port" --expires 3 --faults "$faults" \
  --header X-Floe-Test=standin --timeout-sleep 3.5 >"$work/standin.log" 2>&1 &
STANDIN_PID=$!
wait_for 10 test -s "$work/standin.port"
sp=$(cat "$work/standin.port")
c_args=(--set floe.storage.remote.catalog.type=rest --set "floe.storage.remote.catalog.uri=http://127.0.0.1:$sp"
  --set floe.storage.remote.catalog.credential=floe:s3cret --set floe.storage.remote.catalog.header.X-Floe-Test=standin
  --set floe.storage.remote.catalog.request-timeout=2500ms --set "floe.storage.remote.path=file://$work/c/wh"
  --set floe.topic-defaults.remote.storage.enable=true --set floe.topic-defaults.segment.ms=300
  --set floe.storage.worker.tick-interval=100ms --set floe.default-partitions=2)
start_floe "$work/c" "${c_args[@]}" || exit 1
check "C took the prefix from the stand-in's /v1/config" grep -q "path /v1/standin" "$work/c/floe.log"
ctotal=0
for i in $(seq 1 ${STANDIN_CHUNKS:-8}); do
  node "$js/produce.mjs" 127.0.0.1:$KAFKA_PORT rest.c "$ctotal" "$((ctotal + 1000))" 2 >/dev/null || break
  ctotal=$((ctotal + 1000)); sleep 0.8
done
cpos() { /usr/bin/python3 "$here/iceberg_files.py" "path:$work/c/wh" floe rest_c >"$work/c_files.json" 2>/dev/null &&
  /usr/bin/python3 -c 'import json,sys; print(sum(json.load(open(sys.argv[1]))["positions"].values()))' "$work/c_files.json"; }
for _ in $(seq 1 180); do got=$(cpos); [ "$got" = "$ctotal" ] && break; sleep 0.5; done
check "C's offload through the faulty stand-in reached every record (positions $got of $ctotal)" test "$got" = "$ctotal"
[ "$got" = "$ctotal" ] || { echo "C's log:"; tail -n 40 "$work/c/floe.log" | cut -c1-400; }
check "DuckDB finds each of C's rows exactly once" node "$js/check_table.mjs" "$work/c_files.json" 0 "$ctotal" 2 rest.c
st=$(curl -s "http://127.0.0.1:$sp/standin/state")
echo "stand-in: $st"
for f in ${faults//,/ }; do
  n=$(/usr/bin/python3 -c 'import json,sys; print(json.loads(sys.argv[1])["faults"].get(sys.argv[2],0))' "$st" "$f")
  check "fault $f was injected (${n}x)" test "$n" -ge 1
done
check "no file of C's table went missing (no 'No such file' in its log)" bash -c "! grep -q 'No such file' '$work/c/floe.log'"
stv() { /usr/bin/python3 -c 'import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$st" "$1"; }
check "OAuth2 tokens were refreshed ($(stv tokens_issued) issued)" test "$(stv tokens_issued)" -ge 2
check "no request carried an expired token ($(stv expired_refused) refused)" test "$(stv expired_refused)" = 0
check "every request carried the configured header ($(stv missing_header) without)" test "$(stv missing_header)" = 0
check "an applied commit answered 500 was found by reloading (error type and message logged)" \
  grep -q "answered 500 ServerErrorException: injected 500-after (the commit was applied) but landed" "$work/c/floe.log"
stop_floe
# Wrong client credentials stop start-up with the OAuth2 error named.
"$FLOE_BIN" serve --set floe.data-dir="$work/c2" --set floe.kafka.listen=127.0.0.1:0 --set floe.http.listen=127.0.0.1:0 \
  "${c_args[@]}" --set floe.storage.remote.catalog.credential=floe:wrong >"$work/c2.out" 2>&1
check "wrong OAuth2 credentials stop start-up naming the error" grep -q "invalid_client: bad client credentials" "$work/c2.out"
kill "$STANDIN_PID" 2>/dev/null; wait "$STANDIN_PID" 2>/dev/null
FLOE_PID=$B_PID

finish
