#!/usr/bin/env bash
# Offload to s3:// through tests/s3/fault_proxy.py, which fails 15% of S3 requests (500, 503
# SlowDown, connections dropped before or after the server acted, resets mid-upload). Every
# acknowledged record ends up in the table exactly once (DuckDB on a boto3 download, manifests
# by Apache Avro); data files no snapshot references and multipart uploads left open are
# counted as orphans and printed. CATALOG=filesystem commits by conditional PUT of
# v<N>.metadata.json through the same faults (and is read back by version-hint.text).
#   usage: moto_env.py floe-faults -- fault_proxy.py 0.15 -- s3_faults_test.sh FLOE_BIN
FLOE_BIN="$(realpath "$1")"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/lib.sh"
js="$here/../js/e2e"
work="$(mktemp -d)"
trap 'stop_floe; rm -rf "$work"' EXIT
: "${S3TEST_FAULTY_ENDPOINT:?run through tests/s3/moto_env.py and tests/s3/fault_proxy.py}"
records=${RECORDS:-30000}
parts=2
topic="faults.topic"
bucket="$S3TEST_BUCKET"
catalog=${CATALOG:-sql}

start_floe "$work" --set "floe.storage.remote.path=s3://$bucket/wh" \
  --set "floe.storage.remote.s3.endpoint=$S3TEST_FAULTY_ENDPOINT" --set floe.storage.remote.s3.path-style-access=true \
  --set "floe.storage.remote.s3.region=$S3TEST_REGION" --set "floe.storage.remote.s3.access-key-id=$S3TEST_ACCESS_KEY_ID" \
  --set "floe.storage.remote.s3.secret-access-key=$S3TEST_SECRET_ACCESS_KEY" \
  --set floe.storage.remote.s3.max-attempts=6 --set floe.storage.remote.s3.request-timeout=10s \
  --set floe.storage.remote.s3.multipart-part-size=5MiB \
  --set floe.topic-defaults.remote.storage.enable=true \
  --set floe.topic-defaults.segment.ms=1000 --set floe.storage.worker.tick-interval=300ms \
  --set floe.topic-defaults.local.retention.ms=1000 \
  --set floe.default-partitions=$parts --set floe.storage.remote.catalog.type=$catalog || exit 1

# Ten rounds a little over a segment apart: many files and commits, so many requests fail.
rounds=10; per=$((records / rounds))
for r in $(seq 0 $((rounds - 1))); do
  check "kafkajs produced records $((r * per))..$(((r + 1) * per))" \
    node "$js/produce.mjs" 127.0.0.1:$KAFKA_PORT "$topic" $((r * per)) $(((r + 1) * per)) "$parts" >/dev/null
  sleep 1.2
done
offloaded() {
  curl -s "http://127.0.0.1:$HTTP_PORT/metrics" | grep -qF "floe_offload_records_total{topic=\"$topic\"} $records"
}
check "every record is offloaded despite the faults within 240 s" wait_for 240 offloaded
n=$(kcat -b 127.0.0.1:$KAFKA_PORT -C -t "$topic" -o beginning -e -q -f '%p %o\n' | sort -u | wc -l)
check "kcat reads all $records records from offset 0 through the faulty S3 (got $n)" test "$n" -eq "$records"
metrics=$(curl -s "http://127.0.0.1:$HTTP_PORT/metrics")
echo "S3 retries and errors seen by floe:"; grep -E '^floe_s3_(retries|errors)_total' <<<"$metrics"
stop_floe

n=$(python3 "$here/../s3/s3_download.py" "$bucket" wh "$work/mirror")
source_=$work/data/catalog.db; [ "$catalog" = filesystem ] && source_=path:$work/mirror
FLOE_S3_MIRROR="s3://$bucket/wh=$work/mirror" /usr/bin/python3 "$here/iceberg_files.py" "$source_" floe \
  faults_topic > "$work/files.json"
check "Apache Avro reads the manifests" test -s "$work/files.json"
check "every acknowledged record is in the table exactly once (DuckDB)" \
  node "$js/check_table.mjs" "$work/files.json" 0 "$records" "$parts" "$topic"
orphans=$(/usr/bin/python3 -c '
import json,os,sys
live={f["path"] for f in json.load(open(sys.argv[1]))["files"]}
data=[os.path.join(d,f) for d,_,fs in os.walk(sys.argv[2]) for f in fs if f.endswith(".parquet")]
print(len([p for p in data if p not in live]))' "$work/files.json" "$work/mirror")
uploads=$(python3 -c '
import boto3,os,sys
e=os.environ
s3=boto3.client("s3",endpoint_url=e["S3TEST_ENDPOINT"],region_name=e["S3TEST_REGION"],
  aws_access_key_id=e["S3TEST_ACCESS_KEY_ID"],aws_secret_access_key=e["S3TEST_SECRET_ACCESS_KEY"])
print(len(s3.list_multipart_uploads(Bucket=sys.argv[1]).get("Uploads",[])))' "$bucket")
echo "orphans: $orphans data file(s) no snapshot references, $uploads multipart upload(s) left open"
check "orphans are counted (files $orphans, uploads $uploads)" test -n "$orphans" -a -n "$uploads"
finish
