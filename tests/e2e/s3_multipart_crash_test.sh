#!/usr/bin/env bash
# SIGKILL during a multipart upload: RECORDS records (all acknowledged) go to one partition and
# roll as one segment (segment.ms 20 s; producing takes a few seconds) whose uncompressed Parquet
# file is ~19 MB, four 5 MiB parts. floe is killed with SIGKILL while that upload is open
# (CreateMultipartUpload counted in /metrics, not yet completed; the upload is then listed by
# ListMultipartUploads), and restarted. Every acknowledged record must be in the table exactly
# once (DuckDB on a boto3 download, manifests by Apache Avro). The upload the killed process left
# open stays listed after the restart (printed) until orphan cleanup (`floe maintain orphans`,
# or the scheduled run) aborts it once it is older than the margin. Orphan data files printed too.
#   usage: moto_env.py floe-mpcrash -- s3_multipart_crash_test.sh FLOE_BIN
FLOE_BIN="$(realpath "$1")"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/lib.sh"
js="$here/../js/e2e"
work="$(mktemp -d)"
trap 'stop_floe; rm -rf "$work"' EXIT
: "${S3TEST_ENDPOINT:?run through tests/s3/moto_env.py}"
records=${RECORDS:-200000}
topic="mpcrash"
bucket="$S3TEST_BUCKET"
settings=(--set "floe.storage.remote.path=s3://$bucket/wh" --set "floe.storage.remote.s3.endpoint=$S3TEST_ENDPOINT"
          --set floe.storage.remote.s3.path-style-access=true --set "floe.storage.remote.s3.region=$S3TEST_REGION"
          --set "floe.storage.remote.s3.access-key-id=$S3TEST_ACCESS_KEY_ID"
          --set "floe.storage.remote.s3.secret-access-key=$S3TEST_SECRET_ACCESS_KEY"
          --set floe.storage.remote.s3.multipart-part-size=5MiB
          --set floe.storage.remote.iceberg.compression=none --set floe.storage.remote.iceberg.row-group-rows=8192
          --set floe.topic-defaults.remote.storage.enable=true --set floe.topic-defaults.segment.bytes=$((64 << 20))
          --set floe.topic-defaults.segment.ms=${SEGMENT_MS:-20000} --set floe.storage.worker.tick-interval=100ms
          --set floe.topic-defaults.local.retention.ms=1000 --set floe.default-partitions=1)
open_uploads() {
  python3 -c '
import boto3,os,sys
e=os.environ
s3=boto3.client("s3",endpoint_url=e["S3TEST_ENDPOINT"],region_name=e["S3TEST_REGION"],
  aws_access_key_id=e["S3TEST_ACCESS_KEY_ID"],aws_secret_access_key=e["S3TEST_SECRET_ACCESS_KEY"])
print(len(s3.list_multipart_uploads(Bucket=sys.argv[1]).get("Uploads",[])))' "$bucket"
}
s3_count() {  # S3 requests of one API floe made, from /metrics (0 before the first)
  curl -s "http://127.0.0.1:$HTTP_PORT/metrics" |
    awk -v k="floe_s3_requests_total{operation=\"$1\"}" '$1 == k {print $2; f=1} END {if (!f) print 0}'
}

start_floe "$work" "${settings[@]}" || exit 1
t0=$SECONDS
check "kafkajs produced $records records (acks=all)" \
  node "$js/produce.mjs" 127.0.0.1:$KAFKA_PORT "$topic" 0 "$records" 1 >/dev/null
echo "produced in $((SECONDS - t0)) s"
# Kill as soon as a multipart upload is open: created, not yet completed or aborted.
killed=""
while [ $((SECONDS - t0)) -lt 120 ]; do
  created=$(s3_count CreateMultipartUpload); done_=$(s3_count CompleteMultipartUpload)
  if [ "$created" -gt "$done_" ]; then
    kill -9 "$FLOE_PID"; wait "$FLOE_PID" 2>/dev/null; FLOE_PID=; killed=1; break
  fi
  sleep 0.02
done
check "floe was killed with SIGKILL while a multipart upload was open" test -n "$killed"
open_before=$(open_uploads)
check "the abandoned upload is listed by ListMultipartUploads ($open_before open)" test "$open_before" -ge 1

start_floe "$work" "${settings[@]}" || exit 1
caught_up() { [ "$(python3 "$here/../s3/s3_positions.py" "$work/data/catalog.db" "$topic" "$topic-0")" -ge "$records" ]; }
check "after the restart the table reaches offset $records within 90 s" wait_for 90 caught_up
completed=$(s3_count CompleteMultipartUpload); aborted=$(s3_count AbortMultipartUpload)
stop_floe
open_after=$(open_uploads)

n=$(python3 "$here/../s3/s3_download.py" "$bucket" wh "$work/mirror")
FLOE_S3_MIRROR="s3://$bucket/wh=$work/mirror" /usr/bin/python3 "$here/iceberg_files.py" "$work/data/catalog.db" floe \
  "$topic" > "$work/files.json"
check "Apache Avro reads the manifests" test -s "$work/files.json"
check "every acknowledged record is in the table exactly once (DuckDB)" \
  node "$js/check_table.mjs" "$work/files.json" 0 "$records" 1 "$topic"
read -r orphans biggest < <(/usr/bin/python3 -c '
import json,os,sys
live={f["path"] for f in json.load(open(sys.argv[1]))["files"]}
data=[os.path.join(d,f) for d,_,fs in os.walk(sys.argv[2]) for f in fs if f.endswith(".parquet")]
print(len([p for p in data if p not in live]), max([os.path.getsize(p) for p in live] or [0]))' "$work/files.json" "$work/mirror")
check "the table's largest data file ($biggest bytes) needed a multipart upload" test "$biggest" -gt $((5 << 20))
check "the restarted floe completed a multipart upload ($completed)" test "$completed" -ge 1
echo "multipart crash: uploads open after the kill $open_before, after the restart and catch-up $open_after" \
     "(AbortMultipartUpload sent after the restart: $aborted); orphan data files: $orphans; largest data file $biggest bytes"
check "open uploads are counted after the restart ($open_after)" test -n "$open_after"
# Orphan cleanup aborts uploads older than its margin (here 1 s; floe is stopped).
sleep 1.5
out=$("$FLOE_BIN" maintain orphans --older-than 1s --set floe.data-dir="$work/data" "${settings[@]}" 2>&1)
left=$(open_uploads)
check "floe maintain orphans aborts the abandoned upload (open before $open_after, after $left): $(grep -o '[0-9]* abandoned multipart upload(s) aborted' <<<"$out")" test "$left" -eq 0
[ "$left" -eq 0 ] || echo "$out"
finish
