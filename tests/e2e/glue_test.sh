#!/usr/bin/env bash
# Floe on the AWS Glue catalog, against moto (Glue, STS and S3 with signature checking on,
# started by tests/s3/moto_env.py). Floe's keys belong to a user that may only assume a role,
# and the role may do everything: every S3 and Glue call has to be signed with the role's
# sessions (20 s long here, so they are renewed during the test). Five kill -9 cycles while
# producing, then the table holds every acknowledged record once (DuckDB on the files the Glue
# table's metadata_location leads to, read with boto3 and Apache Avro); the Glue table is
# Iceberg's (table_type ICEBERG, metadata_location the newest metadata file,
# previous_metadata_location the one before). A SQL catalog on the same warehouse refuses the
# table; `floe tables adopt` moves it to the SQL catalog, which commits, and back to Glue,
# which commits again; at the end every record is in the table once.
#   usage: moto_env.py floe-glue-e2e -- glue_test.sh FLOE_BIN
FLOE_BIN="$(realpath "$1")"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/lib.sh"
js="$here/../js/e2e"
work="$(mktemp -d)"
trap 'stop_floe; [ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
: "${S3TEST_ENDPOINT:?run through tests/s3/moto_env.py}"
topic=glue.events
table=glue_events
bucket="$S3TEST_BUCKET"
tool=(python3 "$here/../s3/glue_tool.py")
read -r key_id secret role_arn < <("${tool[@]}" setup-role)
check "the test user and role exist ($role_arn)" test -n "$role_arn"
check "the user's own keys are refused by S3 (only the role may)" "${tool[@]}" denied "$key_id" "$secret"

lake=(--set "floe.storage.remote.path=s3://$bucket/wh" --set "floe.storage.remote.s3.endpoint=$S3TEST_ENDPOINT"
      --set floe.storage.remote.s3.path-style-access=true --set "floe.storage.remote.s3.region=$S3TEST_REGION"
      --set "floe.storage.remote.s3.access-key-id=$key_id" --set "floe.storage.remote.s3.secret-access-key=$secret"
      --set "floe.aws.role-arn=$role_arn" --set floe.aws.external-id=floe-e2e --set floe.aws.role-duration=20s
      --set "floe.aws.sts-endpoint=$S3TEST_ENDPOINT")
glue=(--set floe.storage.remote.catalog.type=glue --set "floe.storage.remote.catalog.glue.endpoint=$S3TEST_ENDPOINT"
      --set "floe.storage.remote.catalog.glue.region=$S3TEST_REGION")
sql=(--set floe.storage.remote.catalog.type=sql)
tiered=(--set floe.topic-defaults.remote.storage.enable=true --set floe.topic-defaults.segment.ms=200
        --set floe.storage.worker.tick-interval=100ms)

offloaded() { # partition 0's offloaded_up_to
  curl -s "http://127.0.0.1:$HTTP_PORT/v1/topics" | /usr/bin/python3 -c '
import json,sys
t=[t for t in json.load(sys.stdin)["topics"] if t["name"]==sys.argv[1]]
print(t[0]["partitions"][0]["offloaded_up_to"] if t else 0)' "$topic"
}
caught_up() { local end; end=$(kcat -b 127.0.0.1:$KAFKA_PORT -Q -t "$topic:0:-1" 2>/dev/null | awk '{print $NF}')
  [ -n "$end" ] && [ "$(offloaded)" -ge "$end" ]; }
glue_table() { "${tool[@]}" table floe "$table" wh; }
table_files() { # the files of the table the Glue (or given) metadata points at
  local meta="$1"
  rm -rf "$work/mirror"
  python3 "$here/../s3/s3_download.py" "$bucket" wh "$work/mirror" >/dev/null || return 1
  FLOE_S3_MIRROR="s3://$bucket/wh=$work/mirror" /usr/bin/python3 "$here/iceberg_files.py" "meta:$meta" floe "$table"
}

# 1. Five kill -9 cycles while a producer streams acks=all records.
echo 0 > "$work/acked"
RANDOM=7
for cycle in 1 2 3 4 5; do
  start_floe "$work" "${lake[@]}" "${glue[@]}" "${tiered[@]}" || exit 1
  from=$(cat "$work/acked")
  node "$js/produce_stream.mjs" 127.0.0.1:$KAFKA_PORT "$topic" "$from" $((from + 100000)) "$work/acked" &
  producer=$!
  sleep "$((3 + RANDOM % 3)).$((RANDOM % 10))"
  kill -9 "$FLOE_PID"; wait "$FLOE_PID" 2>/dev/null; FLOE_PID=
  wait "$producer"
done
acked=$(cat "$work/acked")
check "records were acknowledged across 5 kill -9 ($acked)" test "$acked" -gt 0
start_floe "$work" "${lake[@]}" "${glue[@]}" "${tiered[@]}" || exit 1
check "after restart the Glue table catches up with the log" wait_for 60 caught_up
ready=$(curl -s "http://127.0.0.1:$HTTP_PORT/readyz")
check "/readyz shows the glue catalog up ($ready)" contains "$ready" '"catalog":{"status":"up","message":"glue catalog: reachable"}'
check "a role session is renewed before it expires (20 s sessions)" wait_for 25 grep -q "assumed role $role_arn (session 2" "$work/floe.log"
n=$(grep -c "aws: assumed role" "$work/floe.log")
check "every start assumed the role ($n sessions over 6 starts)" test "$n" -ge 7
stop_floe
glue_table > "$work/glue.json"
check "boto3 reads the Glue table as Iceberg's ($(cat "$work/glue.json"))" /usr/bin/python3 -c '
import json,sys
g=json.load(open(sys.argv[1]))
p=g["parameters"]
assert g["table_type"]=="EXTERNAL_TABLE", g
assert p["table_type"]=="ICEBERG", p
assert p["metadata_location"]==g["newest"], (p["metadata_location"], g["newest"])
assert p["previous_metadata_location"]==g["second_newest"], (p, g)
assert g["location"].endswith("/wh/floe/glue_events"), g' "$work/glue.json"
meta=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["parameters"]["metadata_location"])' "$work/glue.json")
table_files "$meta" > "$work/files.json"
check "every acknowledged record once, no gaps (DuckDB, after 5 kill -9)" node "$js/check_crash.mjs" "$work/files.json" "$acked"

# 2. The SQL catalog on the same warehouse refuses the Glue table.
start_floe "$work" "${lake[@]}" "${sql[@]}" "${tiered[@]}" || exit 1
check "produced 100 more" bash -c "seq 1 100 | sed 's/^/x-/' | kcat -b 127.0.0.1:$KAFKA_PORT -P -t $topic"
check "the SQL catalog refuses the Glue table and says how to adopt it" \
  wait_for 20 grep -q "floe tables adopt floe.$table" "$work/floe.log"
stop_floe

# 3. Adopted by the SQL catalog, which commits; then adopted back by Glue, which commits.
check "floe tables adopt into the SQL catalog" "$FLOE_BIN" tables adopt "$topic" --set floe.data-dir="$work/data" "${lake[@]}" "${sql[@]}"
start_floe "$work" "${lake[@]}" "${sql[@]}" "${tiered[@]}" || exit 1
check "the SQL catalog offloads what Glue had not" wait_for 30 caught_up
stop_floe
check "floe tables adopt back into Glue" "$FLOE_BIN" tables adopt "$topic" --set floe.data-dir="$work/data" "${lake[@]}" "${glue[@]}"
start_floe "$work" "${lake[@]}" "${glue[@]}" "${tiered[@]}" || exit 1
check "produced 100 more (Glue again)" bash -c "seq 1 100 | sed 's/^/y-/' | kcat -b 127.0.0.1:$KAFKA_PORT -P -t $topic"
check "Glue commits again after adopting back" wait_for 30 caught_up
# This process committed (the 100 records above), so its swaps were timed.
metrics=$(curl -s "http://127.0.0.1:$HTTP_PORT/metrics")
check "catalog commits are counted and timed" contains "$metrics" 'floe_catalog_request_duration_seconds_count{operation="swap"}'
end=$(kcat -b 127.0.0.1:$KAFKA_PORT -Q -t "$topic:0:-1" 2>/dev/null | awk '{print $NF}')
stop_floe
glue_table > "$work/glue.json"
meta=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["parameters"]["metadata_location"])' "$work/glue.json")
table_files "$meta" > "$work/files.json"
check "the table holds offsets 0..$end once each, acknowledged records included (DuckDB)" node "$js/check_crash.mjs" "$work/files.json" "$acked"
rows=$(/usr/bin/python3 -c 'import json,sys; print(sum(f["records"] for f in json.load(open(sys.argv[1]))["files"]))' "$work/files.json")
check "row count is the log end ($rows = $end)" test "$rows" -eq "$end"
check "no secret in the log" bash -c "! grep -qF -- '$secret' '$work/floe.log'"
finish
