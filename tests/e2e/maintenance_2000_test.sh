#!/usr/bin/env bash
# A table of 2,000+ small files (short segments through floe: tiny segment.bytes, small produce
# batches, several partitions) compacted by floe's own scheduled maintenance while offload goes
# on. Independent readers judge before and after: DuckDB (read_parquet over the files the
# manifests list, read by Python's Apache Avro), icebird (metadata, manifests and Parquet in
# JavaScript) and hyparquet (the listed files alone) read every produced row exactly once; kcat
# consumers from offset 0 (through the table: local retention dropped the segments) get
# identical records; each partition ends with about its bytes / target-file-size files.
FLOE_BIN="$(realpath "$1")"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/lib.sh"
js="$here/../js/e2e"
work="$(mktemp -d)"
trap 'stop_floe; rm -rf "$work"' EXIT
records=${RECORDS:-34000}   # first batch: ~2,000 files (~12 records a 2 KiB segment)
more=${MORE:-8000}          # produced while maintenance runs
parts=4
topic="clicks.small-v1"
table=clicks_small_v1
target=$((64 * 1024))
common=(--set floe.topic-defaults.remote.storage.enable=true --set floe.topic-defaults.segment.bytes=2048
        --set floe.topic-defaults.segment.ms=200 --set floe.storage.worker.tick-interval=100ms
        --set floe.topic-defaults.local.retention.ms=500 --set floe.default-partitions=$parts
        --set floe.storage.remote.iceberg.target-file-size=$target)

files_json() { /usr/bin/python3 "$here/iceberg_files.py" "$work/data/catalog.db" floe "$table" > "$1"; }
topic_json() { curl -s "http://127.0.0.1:$HTTP_PORT/v1/topics" > "$work/topics.json"; }
offloaded() { # the sum of the partitions' offloaded_up_to (what the table's positions hold)
  /usr/bin/python3 -c 'import json,sys; print(sum(p["offloaded_up_to"] for t in json.load(open(sys.argv[1]))["topics"] for p in t["partitions"]))' "$work/topics.json" 2>/dev/null || echo 0
}
wait_offloaded() { # COUNT: bounded wait until offload has committed COUNT records
  local total=0
  for _ in $(seq 1 600); do
    topic_json; total=$(offloaded)
    [ "$total" -ge "$1" ] && break
    sleep 0.5
  done
  echo "$total"
}
consume() { # FILE COUNT: the first COUNT/parts records of each partition from offset 0
  for p in $(seq 0 $((parts - 1))); do
    kcat -b 127.0.0.1:$KAFKA_PORT -C -t "$topic" -p "$p" -o beginning -c $(($2 / parts)) -e -q \
      -f '%p %o %T %K %k %S %s %h|' || return 1
  done > "$1"
}
readers_agree() { # FILES_JSON COUNT: DuckDB, icebird and hyparquet each read the COUNT rows once
  node "$js/check_table.mjs" "$1" 0 "$2" "$parts" "$topic" \
    && node "$js/icebird_check.mjs" "$work/data/warehouse" floe "$table" "$2" "$parts" "$topic" \
    && node "$js/hyparquet_check.mjs" "$1" "$2" "$parts" "$topic"
}

# Maintenance off while the small files pile up.
start_floe "$work" "${common[@]}" --set floe.maintenance.enabled=false || exit 1
t0=$(date +%s)
PRODUCE_BATCH=24 node "$js/produce.mjs" 127.0.0.1:$KAFKA_PORT "$topic" 0 "$records" "$parts" >/dev/null
check "kafkajs produced $records records" test $? -eq 0
total=$(wait_offloaded "$records")
echo "offload of $records records: $(( $(date +%s) - t0 )) s"
check "offload covers $records records (got $total)" test "$total" -eq "$records"
files_json "$work/before.json"
files_before=$(/usr/bin/python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["files"]))' "$work/before.json")
echo "the table has $files_before data files"
check "the table has at least 2,000 small files ($files_before)" test "$files_before" -ge 2000
check "before: DuckDB, icebird and hyparquet read every row once" readers_agree "$work/before.json" "$records"
for _ in $(seq 1 100); do
  starts=$(curl -s "http://127.0.0.1:$HTTP_PORT/v1/topics" | /usr/bin/python3 -c 'import json,sys; print(min(p["local_start"] for t in json.load(sys.stdin)["topics"] for p in t["partitions"]))' 2>/dev/null || echo 0)
  [ "$starts" -gt 0 ] && break; sleep 0.2
done
check "local retention dropped offloaded segments (lowest local start $starts)" test "$starts" -gt 0
consume "$work/before.txt" "$records"
n=$(kcat -b 127.0.0.1:$KAFKA_PORT -C -t "$topic" -o beginning -e -q -f '%p %o\n' | sort -u | wc -l)
check "kcat reads $records records from offset 0 before compaction (got $n)" test "$n" -eq "$records"
stop_floe

# Scheduled maintenance every second (compaction, manifest rewrite, expiry of every snapshot
# but the newest, orphans) while more records are produced and offloaded between its passes.
start_floe "$work" "${common[@]}" --set floe.maintenance.interval=1s --set floe.maintenance.snapshot-max-age=0s || exit 1
PRODUCE_BATCH=24 node "$js/produce.mjs" 127.0.0.1:$KAFKA_PORT "$topic" "$records" $((records + more)) "$parts" >/dev/null
check "kafkajs produced $more more records during maintenance" test $? -eq 0
all=$((records + more))
total=$(wait_offloaded "$all")
check "offload during maintenance: the table holds $all records (got $total)" test "$total" -eq "$all"
# Until a pass has compacted what offload added last (the table's state in /v1/topics).
metric() { grep -E "^$1\{table=\"$table\"\}" "$work/metrics" | awk '{print $2}'; }
# A compacted file may stay under 3/4 of the target (a group's rows compress better together
# than in its small inputs), so the pass is judged by the number of files.
n_files=-1
for _ in $(seq 1 240); do
  topic_json
  n_files=$(/usr/bin/python3 -c 'import json,sys; print(next(t for t in json.load(open(sys.argv[1]))["topics"])["table"]["state"]["data_files"])' "$work/topics.json" 2>/dev/null || echo -1)
  [ "$n_files" -ge 1 ] && [ "$n_files" -le $((4 * parts)) ] && break
  sleep 0.5
done
check "compacted: at most 4 data files per partition left ($n_files)" test "$n_files" -ge 1 -a "$n_files" -le $((4 * parts))
curl -s "http://127.0.0.1:$HTTP_PORT/metrics" > "$work/metrics"
compacted=$(metric floe_maintenance_files_compacted_total); expired=$(metric floe_maintenance_snapshots_expired_total)
check "maintenance compacted files (${compacted:-0}) and expired snapshots (${expired:-0})" \
  test "${compacted:-0}" -ge 2000 -a "${expired:-0}" -ge 1
consume "$work/after.txt" "$records"
check "kcat from offset 0 gets identical records after compaction" cmp -s "$work/before.txt" "$work/after.txt"
n=$(kcat -b 127.0.0.1:$KAFKA_PORT -C -t "$topic" -o beginning -e -q -f '%p %o\n' | sort -u | wc -l)
check "kcat reads all $all records from offset 0 (got $n)" test "$n" -eq "$all"
stop_floe; rc=$?
check "floe stops cleanly (rc=$rc)" test "$rc" -eq 0

files_json "$work/after.json"
check "after: DuckDB, icebird and hyparquet read every row once (no lost commit, no duplicate)" \
  readers_agree "$work/after.json" "$all"
check "each partition has about its bytes / target-file-size files" /usr/bin/python3 -c '
import json, math, sys
files, parts, target = json.load(open(sys.argv[1]))["files"], int(sys.argv[2]), int(sys.argv[3])
for p in range(parts):
    mine = [f for f in files if f["stream_key"].endswith("-%d" % p)]
    size = sum(f["size"] for f in mine)
    want = math.ceil(size / target)
    print("partition %d: %d files, %d bytes, %d rows; bytes/target = %d" % (p, len(mine), size, sum(f["records"] for f in mine), want))
    assert want <= len(mine) <= want + 2, (p, len(mine), want)' "$work/after.json" "$parts" "$target"
finish
