#!/usr/bin/env bash
# The offload test on s3://: floe serve with its warehouse in a bucket of a local S3 server
# (moto with signature checking, started by tests/s3/moto_env.py, which runs this script) and
# the SQL catalog. kafkajs produces; every record lands in the table exactly once, judged by
# readers Floe did not write: boto3 fetches the objects, Apache Avro reads the manifests,
# DuckDB the Parquet files. After local retention kcat reads every record from offset 0
# (tiered reads: ranged GETs from S3). A wrong secret shows in /readyz; produce keeps working.
#   usage: moto_env.py floe-e2e -- s3_offload_test.sh FLOE_BIN
FLOE_BIN="$(realpath "$1")"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/lib.sh"
js="$here/../js/e2e"
work="$(mktemp -d)"
trap 'stop_floe; rm -rf "$work"' EXIT
: "${S3TEST_ENDPOINT:?run through tests/s3/moto_env.py}"
records=${RECORDS:-40000}
parts=2
topic="orders.created-v1"
bucket="$S3TEST_BUCKET"
s3=(--set "floe.storage.remote.path=s3://$bucket/wh" --set "floe.storage.remote.s3.endpoint=$S3TEST_ENDPOINT"
    --set floe.storage.remote.s3.path-style-access=true --set "floe.storage.remote.s3.region=$S3TEST_REGION"
    --set "floe.storage.remote.s3.access-key-id=$S3TEST_ACCESS_KEY_ID")

start_floe "$work" "${s3[@]}" --set "floe.storage.remote.s3.secret-access-key=$S3TEST_SECRET_ACCESS_KEY" \
  --set floe.topic-defaults.remote.storage.enable=true \
  --set floe.topic-defaults.segment.ms=1000 --set floe.storage.worker.tick-interval=300ms \
  --set floe.topic-defaults.local.retention.ms=1000 \
  --set floe.default-partitions=$parts || exit 1
ready=$(curl -s "http://127.0.0.1:$HTTP_PORT/readyz")
check "storage is up in /readyz ($ready)" contains "$ready" "\"storage\":{\"status\":\"up\""

check "kafkajs produced $records records" node "$js/produce.mjs" 127.0.0.1:$KAFKA_PORT "$topic" 0 "$records" "$parts"

offloaded() { curl -s "http://127.0.0.1:$HTTP_PORT/metrics" | grep -qF "floe_offload_records_total{topic=\"$topic\"} $records"; }
check "the storage worker offloads all $records records within 90 s" wait_for 90 offloaded

# Independent readers on a download of the warehouse (keys as paths).
n=$(python3 "$here/../s3/s3_download.py" "$bucket" wh "$work/mirror")
check "boto3 downloaded the warehouse ($n objects)" test "${n:-0}" -gt 3
FLOE_S3_MIRROR="s3://$bucket/wh=$work/mirror" /usr/bin/python3 "$here/iceberg_files.py" "$work/data/catalog.db" floe \
  orders_created_v1 > "$work/files.json"
check "Apache Avro reads the manifest list and manifests" test -s "$work/files.json"
check "table rows match what was produced (DuckDB)" node "$js/check_table.mjs" "$work/files.json" 0 "$records" "$parts" "$topic"
check "positions are exact" /usr/bin/python3 -c '
import json,sys
p=json.load(open(sys.argv[1]))["positions"]
exp={f"orders.created-v1-{i}": int(sys.argv[2])//2 for i in range(2)}
assert p==exp, (p, exp)' "$work/files.json" "$records"
meta=$(/usr/bin/python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("select metadata_location from iceberg_tables").fetchone()[0])' "$work/data/catalog.db")
check "the catalog points into the bucket ($meta)" contains "$meta" "s3://$bucket/wh/floe/orders_created_v1/metadata/"
check "data files are s3:// objects under stream_key partitions" grep -q "/floe/orders_created_v1/data/stream_key=orders.created-v1-0/segment-" "$work/files.json"

# Local retention removes offloaded segments; consumers from offset 0 read through S3.
for _ in $(seq 1 100); do
  starts=$(curl -s "http://127.0.0.1:$HTTP_PORT/v1/topics" | /usr/bin/python3 -c 'import json,sys; print(min(p["local_start"] for p in json.load(sys.stdin)["topics"][0]["partitions"]))')
  [ "$starts" -gt 0 ] && break; sleep 0.2
done
check "local tier dropped offloaded segments (lowest local start $starts)" test "$starts" -gt 0
n=$(kcat -b 127.0.0.1:$KAFKA_PORT -C -t "$topic" -o beginning -e -q -f '%p %o\n' | sort -u | wc -l)
check "kcat reads all $records records from the beginning (got $n)" test "$n" -eq "$records"
check "kafkajs reads every record from offset 0 across tiers" node "$js/consume_check.mjs" 127.0.0.1:$KAFKA_PORT "$topic" "$records" "$parts"
metrics=$(curl -s "http://127.0.0.1:$HTTP_PORT/metrics")
check "tiered reads are counted" contains "$metrics" 'floe_tiered_reads_total{kind="fetch"}'
check "S3 requests are counted by API" contains "$metrics" 'floe_s3_requests_total{operation="PutObject"}'
check "tiered reads are ranged GETs" contains "$metrics" 'floe_s3_requests_total{operation="GetObject"}'
lint=$(promtool check metrics <<<"$metrics" 2>&1); check "promtool accepts metrics ($lint)" test -z "$lint"
echo "S3 requests for $records records (offload, then reads from offset 0):"
grep '^floe_s3_requests_total' <<<"$metrics"
check "the secret is in no log" bash -c "! grep -rqF -- '$S3TEST_SECRET_ACCESS_KEY' '$work/floe.log' '$work/floe.out'"
stop_floe; rc=$?
check "floe stops cleanly (rc=$rc)" test "$rc" -eq 0

# The filesystem catalog on s3://: v<N>.metadata.json by conditional PUT, read by path.
wipe_data "$work"
fsrecords=10000
start_floe "$work" "${s3[@]}" --set "floe.storage.remote.s3.secret-access-key=$S3TEST_SECRET_ACCESS_KEY" \
  --set floe.storage.remote.path=s3://$bucket/fswh --set floe.storage.remote.catalog.type=filesystem \
  --set floe.topic-defaults.remote.storage.enable=true \
  --set floe.topic-defaults.segment.ms=1000 --set floe.storage.worker.tick-interval=300ms \
  --set floe.default-partitions=$parts || exit 1
check "kafkajs produced $fsrecords records (filesystem catalog)" node "$js/produce.mjs" 127.0.0.1:$KAFKA_PORT "$topic" 0 "$fsrecords" "$parts"
offloaded_fs() { curl -s "http://127.0.0.1:$HTTP_PORT/metrics" | grep -qF "floe_offload_records_total{topic=\"$topic\"} $fsrecords"; }
check "the filesystem catalog offloads all $fsrecords records within 60 s" wait_for 60 offloaded_fs
stop_floe
n=$(python3 "$here/../s3/s3_download.py" "$bucket" fswh "$work/fsmirror")
check "boto3 downloaded the filesystem-catalog warehouse ($n objects)" test "${n:-0}" -gt 3
FLOE_S3_MIRROR="s3://$bucket/fswh=$work/fsmirror" /usr/bin/python3 "$here/iceberg_files.py" "path:$work/fsmirror" floe \
  orders_created_v1 > "$work/fsfiles.json"
check "a path-based reader finds the table by version-hint.text" test -s "$work/fsfiles.json"
check "table rows match what was produced (DuckDB, filesystem catalog)" node "$js/check_table.mjs" "$work/fsfiles.json" 0 "$fsrecords" "$parts" "$topic"

# A wrong secret: floe starts, /readyz names the problem, produce keeps working. On the Redis
# tier Redis is emptied first: it recorded the filesystem catalog's lake above as the cluster's and
# would refuse this broker's. With no topic left there, the first S3 request is HEAD bucket, whose
# 403 has no body to name the cause: /readyz then says AccessDenied.
s3_denied="SignatureDoesNotMatch: check the secret access key"
if [ -n "${E2E_REDIS_PORT:-}" ]; then
  redis-cli -p "$E2E_REDIS_PORT" FLUSHALL >/dev/null
  s3_denied="403 AccessDenied: check the IAM policy"
fi
start_floe "$work" "${s3[@]}" --set floe.storage.remote.s3.secret-access-key=wrong-secret \
  --set floe.topic-defaults.remote.storage.enable=true --set floe.default-partitions=1 || exit 1
ready=$(curl -s "http://127.0.0.1:$HTTP_PORT/readyz")
check "/readyz shows storage down with the S3 error and hint ($ready)" contains "$ready" "$s3_denied"
check "the log names it too" grep -q "$s3_denied" "$work/floe.log"
check "produce keeps working with the warehouse unusable" bash -c "seq 1 100 | kcat -b 127.0.0.1:$KAFKA_PORT -P -t other-topic"
n=$(kcat -b 127.0.0.1:$KAFKA_PORT -C -t other-topic -o beginning -e -q | wc -l)
check "and the records are read back from the local tier (got $n)" test "$n" -eq 100
check "the wrong secret is in no log" bash -c "! grep -qF -- wrong-secret '$work/floe.log' '$work/floe.out'"
stop_floe

# Issue 25 item 7. No credentials anywhere (off EC2: instance metadata does not answer): /readyz
# says so once and names what to set.
nokeys=(--set "floe.storage.remote.path=s3://$bucket/wh" --set "floe.storage.remote.s3.endpoint=$S3TEST_ENDPOINT"
        --set floe.storage.remote.s3.path-style-access=true --set "floe.storage.remote.s3.region=$S3TEST_REGION")
mkdir -p "$work/home"
HOME="$work/home" AWS_EC2_METADATA_SERVICE_ENDPOINT=http://127.0.0.1:1 start_floe "$work" "${nokeys[@]}" || exit 1
ready=$(curl -s "http://127.0.0.1:$HTTP_PORT/readyz")
check "/readyz: no AWS credentials, and what to set ($ready)" contains "$ready" "no AWS credentials: "
check "/readyz names the static-key settings" contains "$ready" "set floe.storage.remote.s3.access-key-id and secret-access-key"
check "/readyz names AWS_PROFILE" contains "$ready" "AWS_PROFILE"
lacks() { ! grep -qF -- "$2" <<<"$1"; }
check "/readyz does not repeat the credential source" lacks "$ready" "credentials from EC2 instance metadata (IMDSv2): credentials from"
check "/readyz names instance metadata once" test "$(grep -o "EC2 instance metadata" <<<"$ready" | wc -l)" -eq 1
stop_floe
# An IP endpoint with virtual-hosted addressing: <bucket>.127.0.0.1 cannot resolve.
start_floe "$work" "${s3[@]}" --set "floe.storage.remote.s3.secret-access-key=$S3TEST_SECRET_ACCESS_KEY" \
  --set floe.storage.remote.s3.path-style-access=false || exit 1
ready=$(curl -s "http://127.0.0.1:$HTTP_PORT/readyz")
check "/readyz suggests path-style access for $bucket.127.0.0.1 ($ready)" contains "$ready" "floe.storage.remote.s3.path-style-access=true"
stop_floe
finish
