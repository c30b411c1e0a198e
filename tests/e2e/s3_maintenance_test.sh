#!/usr/bin/env bash
# Table maintenance on s3://: floe offloads a topic with tiny segments into a bucket of a local
# S3 server (moto with signature checking, started by tests/s3/moto_env.py, which runs this
# script); with the server stopped, `floe maintain` compacts, merges manifests, expires every
# snapshot but the current one and deletes orphans (a stray object planted in the table's
# location among them). Then the objects in the bucket are exactly those the retained metadata
# references: boto3 walks the bucket (list_objects_v2, every object downloaded), Apache Avro
# reads the manifest lists and manifests, not Floe's code. DuckDB reads the same rows before
# and after; kcat consumers from offset 0 get identical records (tiered reads from S3).
#   usage: moto_env.py floe-maint -- s3_maintenance_test.sh FLOE_BIN
FLOE_BIN="$(realpath "$1")"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/lib.sh"
js="$here/../js/e2e"
work="$(mktemp -d)"
trap 'stop_floe; rm -rf "$work"' EXIT
: "${S3TEST_ENDPOINT:?run through tests/s3/moto_env.py}"
records=${RECORDS:-20000}
parts=2
topic="orders.small-v1"
table=orders_small_v1
bucket="$S3TEST_BUCKET"
s3=(--set "floe.storage.remote.path=s3://$bucket/wh" --set "floe.storage.remote.s3.endpoint=$S3TEST_ENDPOINT"
    --set floe.storage.remote.s3.path-style-access=true --set "floe.storage.remote.s3.region=$S3TEST_REGION"
    --set "floe.storage.remote.s3.access-key-id=$S3TEST_ACCESS_KEY_ID"
    --set "floe.storage.remote.s3.secret-access-key=$S3TEST_SECRET_ACCESS_KEY")
common=("${s3[@]}" --set floe.topic-defaults.remote.storage.enable=true --set floe.topic-defaults.segment.bytes=4096
        --set floe.topic-defaults.segment.ms=500 --set floe.storage.worker.tick-interval=200ms
        --set floe.topic-defaults.local.retention.ms=500 --set floe.default-partitions=$parts
        --set floe.maintenance.enabled=false)

mirror() { # DIR: boto3 downloads every object under s3://bucket/wh; prints the count
  rm -rf "$1"; python3 "$here/../s3/s3_download.py" "$bucket" wh "$1"
}
files_json() { # MIRROR OUT
  FLOE_S3_MIRROR="s3://$bucket/wh=$1" /usr/bin/python3 "$here/iceberg_files.py" "$work/data/catalog.db" floe "$table" > "$2"
}
consume() { # FILE: the first records/parts records of each partition
  for p in $(seq 0 $((parts - 1))); do
    kcat -b 127.0.0.1:$KAFKA_PORT -C -t "$topic" -p "$p" -o beginning -c $((records / parts)) -e -q \
      -f '%p %o %T %K %k %S %s %h|' || return 1
  done > "$1"
}

start_floe "$work" "${common[@]}" || exit 1
check "kafkajs produced $records records" node "$js/produce.mjs" 127.0.0.1:$KAFKA_PORT "$topic" 0 "$records" "$parts"
offloaded() { curl -s "http://127.0.0.1:$HTTP_PORT/metrics" | grep -qF "floe_offload_records_total{topic=\"$topic\"} $records"; }
check "the storage worker offloads all $records records within 90 s" wait_for 90 offloaded
for _ in $(seq 1 100); do
  starts=$(curl -s "http://127.0.0.1:$HTTP_PORT/v1/topics" | /usr/bin/python3 -c 'import json,sys; print(min(p["local_start"] for t in json.load(sys.stdin)["topics"] for p in t["partitions"]))' 2>/dev/null || echo 0)
  [ "$starts" -gt 0 ] && break; sleep 0.2
done
check "local tier dropped offloaded segments (lowest local start $starts)" test "$starts" -gt 0
consume "$work/before.txt"
n=$(kcat -b 127.0.0.1:$KAFKA_PORT -C -t "$topic" -o beginning -e -q -f '%p %o\n' | sort -u | wc -l)
check "kcat reads $records records from offset 0 through S3 before maintenance (got $n)" test "$n" -eq "$records"
stop_floe

n=$(mirror "$work/m0")
files_json "$work/m0" "$work/before.json"
files_before=$(/usr/bin/python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["files"]))' "$work/before.json")
check "the bucket holds many small data files ($files_before, $n objects)" test "$files_before" -ge 40
check "DuckDB reads every produced row before maintenance" node "$js/check_table.mjs" "$work/before.json" 0 "$records" "$parts" "$topic"

# A stray object under the table's location: an append that died (no metadata names it).
python3 - "$bucket" "wh/floe/$table/data/stream_key=$topic-0/segment-1-dead.parquet" <<'PY'
import os, sys, boto3
e = os.environ
s3 = boto3.client("s3", endpoint_url=e["S3TEST_ENDPOINT"], region_name=e["S3TEST_REGION"],
                  aws_access_key_id=e["S3TEST_ACCESS_KEY_ID"], aws_secret_access_key=e["S3TEST_SECRET_ACCESS_KEY"])
s3.put_object(Bucket=sys.argv[1], Key=sys.argv[2], Body=b"dead")
PY
check "a stray object was planted" test $? -eq 0

maintain() { "$FLOE_BIN" maintain --set floe.data-dir="$work/data" "${common[@]}" "$@"; }
maintain --set floe.storage.remote.iceberg.target-file-size=256KB compact manifests > "$work/compact.out" 2>&1; rc=$?
cat "$work/compact.out"
check "floe maintain compact manifests on s3:// succeeds (rc=$rc)" test "$rc" -eq 0
maintain --older-than 0s expire orphans > "$work/expire.out" 2>&1; rc=$?
cat "$work/expire.out"
check "floe maintain --older-than 0s expire orphans on s3:// succeeds (rc=$rc)" test "$rc" -eq 0

n=$(mirror "$work/m1")
FLOE_S3_MIRROR="s3://$bucket/wh=$work/m1" /usr/bin/python3 "$here/table_references.py" "$work/data/catalog.db" floe \
  "$table" "$work/m1/floe/$table" > "$work/refs.json"
check "the objects in the bucket are exactly those the retained metadata references ($n objects; $(head -c 400 "$work/refs.json"))" \
  /usr/bin/python3 -c '
import json,sys
r=json.load(open(sys.argv[1]))
assert r["snapshots"] == 1 and r["on_disk"] > 0 and not r["unreferenced"] and not r["missing"], r' "$work/refs.json"
check "the stray object is gone" test ! -e "$work/m1/floe/$table/data/stream_key=$topic-0/segment-1-dead.parquet"
files_json "$work/m1" "$work/after.json"
files_after=$(/usr/bin/python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["files"]))' "$work/after.json")
check "compaction left fewer data files ($files_before -> $files_after)" test "$files_after" -lt "$files_before"
check "DuckDB reads the same rows after maintenance" node "$js/check_table.mjs" "$work/after.json" 0 "$records" "$parts" "$topic"

start_floe "$work" "${common[@]}" || exit 1
consume "$work/after.txt"
check "kcat from offset 0 gets identical records after maintenance (S3)" cmp -s "$work/before.txt" "$work/after.txt"
stop_floe; rc=$?
check "floe stops cleanly (rc=$rc)" test "$rc" -eq 0
finish
