#!/usr/bin/env bash
# The schema registry of `floe serve` (embedded tier): real npm clients (Avro, JSON, Protobuf
# with message indexes; schema_registry_clients.mjs), every listed error code provoked over
# HTTP, bad input (malformed schemas, unresolvable and cyclic references, a 10 MB body, deep
# nesting) answered 4xx with nothing changed and the process up, `floe schemas`, /readyz and
# /metrics, bearer tokens on the registry listener, and kill -9 + restart keeping everything.
# usage: schema_registry_test.sh FLOE_BIN
set -uo pipefail
FLOE_BIN="$(realpath "$1")"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/lib.sh"
js="$here/../js/e2e"
work="$(mktemp -d)"
trap 'kill -9 ${FLOE_PID:-} 2>/dev/null; rm -rf "$work"' EXIT

SR_PORT=$(free_port)
SR="http://127.0.0.1:$SR_PORT"
CT='Content-Type: application/vnd.schemaregistry.v1+json'
start_floe "$work" --set floe.schema-registry.listen=127.0.0.1:$SR_PORT --set floe.storage.worker.enabled=false || exit 1

# req METHOD PATH [BODY]: prints "STATUS BODY".
req() {
  local out
  out=$(curl -s -o "$work/body" -w '%{http_code}' -X "$1" -H "$CT" ${3:+--data-binary "$3"} "$SR$2")
  echo "$out $(cat "$work/body")"
}
code_is() { # name expected_status expected_error_code METHOD PATH [BODY]
  local name="$1" st="$2" ec="$3"; shift 3
  local r; r=$(req "$@")
  if [[ "$r" == "$st "* ]] && contains "$r" "\"error_code\":$ec"; then e2e_passed=$((e2e_passed+1));
  else echo "FAIL: $name: expected $st/$ec, got: ${r:0:300}"; e2e_failed=$((e2e_failed+1)); fi
}

# 1. Real clients.
if timeout 90 node "$js/schema_registry_clients.mjs" "$SR" "127.0.0.1:$KAFKA_PORT" >"$work/clients.log" 2>&1; then
  e2e_passed=$((e2e_passed+1)); cat "$work/clients.log"
else
  echo "FAIL: npm registry clients"; cat "$work/clients.log"; e2e_failed=$((e2e_failed+1))
fi

# 2. Every listed error code over HTTP.
avro1='{"schema":"{\"type\":\"record\",\"name\":\"A\",\"fields\":[{\"name\":\"x\",\"type\":\"int\"}]}"}'
avro2='{"schema":"{\"type\":\"record\",\"name\":\"A\",\"fields\":[{\"name\":\"x\",\"type\":\"int\"},{\"name\":\"y\",\"type\":\"int\"}]}"}'
check "register a" contains "$(req POST /subjects/errs/versions "$avro1")" '200 {"id":'
code_is 40401 404 40401 GET /subjects/no-such-subject/versions
code_is 40402 404 40402 GET /subjects/errs/versions/42
code_is 40403 404 40403 GET /schemas/ids/999999
code_is 42202 422 42202 GET /subjects/errs/versions/not-a-version
code_is 42201 422 42201 POST /subjects/errs/versions '{"schema":"{\"type\":\"recrod\"}"}'
code_is 42203 422 42203 PUT /config/errs '{"compatibility":"SOMETIMES"}'
code_is 40408 404 40408 GET /config/errs
code_is 409 409 409 POST /subjects/errs/versions "$avro2"
code_is 40405 404 40405 DELETE "/subjects/errs?permanent=true"
code_is 40407 404 40407 DELETE "/subjects/errs/versions/1?permanent=true"
check "soft delete v1" contains "$(req DELETE /subjects/errs/versions/1)" "200 1"
code_is 40406 404 40406 DELETE /subjects/errs/versions/1
code_is 40404 404 40404 DELETE /subjects/errs
check "deleted=true lists it" contains "$(req GET '/subjects?deleted=true')" '"errs"'
check "permanent delete" contains "$(req DELETE '/subjects/errs?permanent=true')" "200 [1]"
code_is "42204 (mode)" 422 42204 PUT /mode '{"mode":"SIDEWAYS"}'
check "compat verbose" contains "$(req POST '/compatibility/subjects/orders-value/versions/latest?verbose=true' '{"schema":"\"string\""}')" '"is_compatible":false'
check "schema types" contains "$(req GET /schemas/types)" '["JSON","PROTOBUF","AVRO"]'
check "content type" bash -c "curl -sI '$SR/subjects' -X GET | grep -qi 'content-type: application/vnd.schemaregistry.v1+json'"

# 3. Bad input: clear 4xx, process up, nothing changed.
before=$(req GET '/subjects?deleted=true'); before_ids=$(req GET /schemas/ids/1)
records_before=$(curl -s "http://127.0.0.1:$HTTP_PORT/readyz" | grep -o '([0-9]* records)')
code_is "malformed avro" 422 42201 POST /subjects/bad/versions '{"schema":"{\"type\":\"record\",\"name\":\"B\",\"fields\":[{\"name\":\"x\"}]}"}'
code_is "malformed protobuf" 422 42201 POST /subjects/bad/versions '{"schemaType":"PROTOBUF","schema":"message {"}'
code_is "malformed json schema" 422 42201 POST /subjects/bad/versions '{"schemaType":"JSON","schema":"{\"type\":\"strnig\"}"}'
code_is "not JSON at all" 400 400 POST /subjects/bad/versions 'this is not json'
code_is "unresolvable reference" 422 42201 POST /subjects/bad/versions \
  '{"schema":"{\"type\":\"record\",\"name\":\"B\",\"fields\":[{\"name\":\"a\",\"type\":\"x.Addr\"}]}","references":[{"name":"x.Addr","subject":"nope","version":1}]}'
code_is "undefined name without reference" 422 42201 POST /subjects/bad/versions \
  '{"schema":"{\"type\":\"record\",\"name\":\"B\",\"fields\":[{\"name\":\"a\",\"type\":\"x.Addr\"}]}"}'
code_is "cyclic import (self)" 422 42201 POST /subjects/bad/versions \
  '{"schemaType":"PROTOBUF","schema":"syntax = \"proto3\"; import \"schema.proto\"; message M { int32 a = 1; }"}'
code_is "cyclic JSON \$ref to a missing reference" 422 42201 POST /subjects/bad/versions \
  '{"schemaType":"JSON","schema":"{\"$ref\":\"other.json\"}","references":[{"name":"other.json","subject":"bad","version":1}]}'
deep=$(python3 -c 'print("{\"schema\":\"" + "[" * 5000 + "\\\"int\\\"" + "]" * 5000 + "\"}")')
code_is "deep nesting" 422 42201 POST /subjects/bad/versions "$deep"
deepjson=$(python3 -c 'print("{\"schemaType\":\"JSON\",\"schema\":\"" + "{\\\"items\\\":" * 3000 + "{}" + "}" * 3000 + "\"}")')
code_is "deep JSON schema" 422 42201 POST /subjects/bad/versions "$deepjson"
head -c 10485760 /dev/zero | tr '\0' 'a' > "$work/big"
big_status=$(curl -s -o "$work/bigbody" -w '%{http_code}' -X POST -H "$CT" --data-binary @"$work/big" "$SR/subjects/bad/versions")
check "10 MB body is 413" test "$big_status" = 413
check "413 body is Confluent's form" grep -q '"error_code":413' "$work/bigbody"
check "process still up" kill -0 "$FLOE_PID"
check "subjects unchanged" test "$(req GET '/subjects?deleted=true')" = "$before"
check "schema 1 unchanged" test "$(req GET /schemas/ids/1)" = "$before_ids"
records_after=$(curl -s "http://127.0.0.1:$HTTP_PORT/readyz" | grep -o '([0-9]* records)')
check "no log record written by bad input ($records_before)" test "$records_before" = "$records_after"

# 4. `floe schemas` on the command line.
cat > "$work/v1.avsc" <<'EOF'
{"type":"record","name":"Cli","fields":[{"name":"a","type":"int"}]}
EOF
cat > "$work/v2.avsc" <<'EOF'
{"type":"record","name":"Cli","fields":[{"name":"a","type":"int"},{"name":"b","type":"string","default":""}]}
EOF
cat > "$work/bad.avsc" <<'EOF'
{"type":"record","name":"Cli","fields":[{"name":"a","type":"string"}]}
EOF
cli="$FLOE_BIN schemas"
check "cli register" contains "$($cli register cli-value --file "$work/v1.avsc" --url "$SR")" '{"id":'
check "cli check compatible" $cli check cli-value --file "$work/v2.avsc" --url "$SR"
out=$($cli check cli-value --file "$work/bad.avsc" --url "$SR"); rc=$?
check "cli check incompatible exits 3" test "$rc" = 3
check "cli check says why" contains "$out" "TYPE_MISMATCH"
check "cli list" contains "$($cli list --url "$SR")" "cli-value"
check "cli show" contains "$($cli show cli-value --url "$SR")" '"name":"Cli"'
$cli show nope --url "$SR" >/dev/null 2>&1; rc=$?
check "cli show unknown exits 3" test "$rc" = 3
$cli list --url "http://127.0.0.1:$(free_port)" >/dev/null 2>&1; rc=$?
check "cli unreachable exits 1" test "$rc" = 1

# 5. /readyz and /metrics.
ready=$(curl -s "http://127.0.0.1:$HTTP_PORT/readyz")
check "readyz has schema-registry" contains "$ready" '"schema-registry":{"status":"up"'
metrics=$(curl -s "http://127.0.0.1:$HTTP_PORT/metrics")
check "metrics count registrations" contains "$metrics" 'floe_schema_registry_requests_total{endpoint="POST /subjects/{subject}/versions",status="200"}'
check "metrics count lookups by id" contains "$metrics" 'endpoint="GET /schemas/ids/{id}",status="200"'
check "metrics count 40401s by pattern" contains "$metrics" 'endpoint="GET /subjects/{subject}/versions",status="404"'

# 6. kill -9 and restart: everything is still there.
snapshot() { for p in '/subjects?deleted=true' /subjects/orders-value/versions /subjects/orders-value/versions/latest \
  /schemas/ids/1 /schemas/ids/2 /schemas/ids/3 /subjects/cli-value/versions/1 /config /mode; do req GET "$p"; done; }
snap1=$(snapshot)
kill -9 "$FLOE_PID"; wait "$FLOE_PID" 2>/dev/null
start_floe "$work" --set floe.schema-registry.listen=127.0.0.1:$SR_PORT --set floe.storage.worker.enabled=false || exit 1
snap2=$(snapshot)
check "state survives kill -9" test "$snap1" = "$snap2"
check "a new schema gets a new id after restart" contains "$(req POST /subjects/after/versions '{"schema":"\"bytes\""}')" '200 {"id":'

# 7. Bearer tokens (floe.http.tokens-file) cover the registry listener too; errors in Confluent's form.
kill "$FLOE_PID"; wait "$FLOE_PID" 2>/dev/null
digest=$(printf '%s' 's3cret' | sha256sum | cut -d' ' -f1)
echo "User:alice sha256:$digest" > "$work/tokens"
start_floe "$work" --set floe.schema-registry.listen=127.0.0.1:$SR_PORT --set floe.storage.worker.enabled=false \
  --set floe.http.tokens-file="$work/tokens" || exit 1
st=$(curl -s -o "$work/body" -w '%{http_code}' "$SR/subjects")
check "no token: 401" test "$st" = 401
check "401 in Confluent's form" grep -q '"error_code":401' "$work/body"
check "token: 200" test "$(curl -s -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer s3cret' "$SR/subjects")" = 200
echo s3cret > "$work/token"
check "cli with --token-file" $cli list --url "$SR" --token-file "$work/token"
kill "$FLOE_PID"; wait "$FLOE_PID" 2>/dev/null

# 8. The registry can be turned off.
start_floe "$work" --set floe.schema-registry.enabled=false --set floe.storage.worker.enabled=false || exit 1
check "disabled: nothing listens" bash -c "! curl -s -o /dev/null '$SR/subjects'"
check "disabled: not in readyz" bash -c "! curl -s 'http://127.0.0.1:$HTTP_PORT/readyz' | grep -q schema-registry"
kill "$FLOE_PID"; wait "$FLOE_PID" 2>/dev/null

echo "$e2e_passed passed, $e2e_failed failed"
[ "$e2e_failed" -eq 0 ]
