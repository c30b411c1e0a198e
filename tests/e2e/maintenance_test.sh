#!/usr/bin/env bash
# Table maintenance end to end: floe offloads a topic with tiny segments into a table of many
# small files; `floe maintain` refuses to run beside the live server (it holds the storage
# lease), then, with the server stopped, compacts, expires snapshots and deletes orphans.
# Independent readers judge: DuckDB reads the same rows before and after, kcat consumers from
# offset 0 get identical records (local retention has dropped the offloaded segments, so they
# come from the table), and the files under the table's location are exactly those its
# retained metadata references (Python sqlite3 + json + Apache Avro, not Floe's code).
FLOE_BIN="$(realpath "$1")"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/lib.sh"
js="$here/../js/e2e"
work="$(mktemp -d)"
trap 'stop_floe; rm -rf "$work"' EXIT
records=${RECORDS:-60000}
parts=2
topic="orders.small-v1"
table=orders_small_v1
table_dir="$work/data/warehouse/floe/$table"
common=(--set floe.topic-defaults.remote.storage.enable=true --set floe.topic-defaults.segment.bytes=4096
        --set floe.topic-defaults.segment.ms=500 --set floe.storage.worker.tick-interval=200ms
        --set floe.topic-defaults.local.retention.ms=500 --set floe.default-partitions=$parts)

start_floe "$work" "${common[@]}" || exit 1
check "kafkajs produced $records records" node "$js/produce.mjs" 127.0.0.1:$KAFKA_PORT "$topic" 0 "$records" "$parts"

files_json() { /usr/bin/python3 "$here/iceberg_files.py" "$work/data/catalog.db" floe "$table" > "$1"; }
total=0
for _ in $(seq 1 240); do
  files_json "$work/files.json" 2>/dev/null || true
  total=$(/usr/bin/python3 -c 'import json,sys; print(sum(json.load(open(sys.argv[1]))["positions"].values()))' "$work/files.json" 2>/dev/null || echo 0)
  [ "$total" -ge "$records" ] && break
  sleep 0.5
done
check "offload covers $records records within 120 s (got $total)" test "$total" -ge "$records"
files_before=$(/usr/bin/python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["files"]))' "$work/files.json")
check "the table has many small files ($files_before >= 100)" test "$files_before" -ge 100
check "DuckDB reads every produced row before maintenance" node "$js/check_table.mjs" "$work/files.json" 0 "$records" "$parts" "$topic"

# Consumers from offset 0 read through the table once local retention dropped the segments.
for _ in $(seq 1 100); do
  starts=$(curl -s "http://127.0.0.1:$HTTP_PORT/v1/topics" | /usr/bin/python3 -c 'import json,sys; print(min(p["local_start"] for t in json.load(sys.stdin)["topics"] for p in t["partitions"]))' 2>/dev/null || echo 0)
  [ "$starts" -gt 0 ] && break; sleep 0.2
done
check "local tier dropped offloaded segments (lowest local start $starts)" test "$starts" -gt 0
# Whole records (key, value, headers, timestamps), partition by partition in offset order, raw
# bytes compared with cmp; the count comes from a one-line-per-record format (values may hold
# newlines).
consume() { # FILE: the first records/parts records of each partition
  for p in $(seq 0 $((parts - 1))); do
    kcat -b 127.0.0.1:$KAFKA_PORT -C -t "$topic" -p "$p" -o beginning -c $((records / parts)) -e -q \
      -f '%p %o %T %K %k %S %s %h|' || return 1
  done > "$1"
}
consume "$work/before.txt"
n=$(kcat -b 127.0.0.1:$KAFKA_PORT -C -t "$topic" -o beginning -e -q -f '%p %o\n' | sort -u | wc -l)
check "kcat reads all $records records from offset 0 before maintenance (got $n)" test "$n" -eq "$records"

# Beside the live server: refused, nothing changed.
meta_before=$(ls "$table_dir/metadata" | wc -l)
"$FLOE_BIN" maintain --set floe.data-dir="$work/data" >"$work/refused.out" 2>&1; rc=$?
check "maintain beside a live floe serve is refused (rc=$rc)" test "$rc" -ne 0
check "the refusal names the lease" grep -q "maintenance lease" "$work/refused.out"
check "the refused run wrote nothing" test "$(ls "$table_dir/metadata" | wc -l)" -eq "$meta_before"
# A dry run only reads, so it may run beside the server.
"$FLOE_BIN" maintain --set floe.data-dir="$work/data" --set floe.storage.remote.iceberg.target-file-size=256KB \
  --dry-run compact >"$work/plan.out" 2>&1; rc=$?
check "a dry run prints a plan (rc=$rc)" grep -q "plan (dry run" "$work/plan.out"
check "the dry run changed nothing" test "$(ls "$table_dir/metadata" | wc -l)" -eq "$meta_before"

stop_floe; rc=$?
check "floe stops cleanly (rc=$rc)" test "$rc" -eq 0

# Stray files: an old one (an append that died days ago) and a fresh one (a write in progress).
mkdir -p "$table_dir/data/stream_key=$topic-0"
echo dead > "$table_dir/data/stream_key=$topic-0/segment-1-dead.parquet"
touch -d '5 days ago' "$table_dir/data/stream_key=$topic-0/segment-1-dead.parquet"
# kill -9 part-way through compaction: the table stays readable with every row once, and the
# next run finishes the job.
maintain_killed() { # DELAY ARGS...: runs floe maintain ARGS, kill -9 after DELAY seconds
  local delay="$1"; shift
  "$FLOE_BIN" maintain --set floe.data-dir="$work/data" "$@" >>"$work/killed.out" 2>&1 &
  local pid=$!
  sleep "$delay"; kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
  return 0
}
for delay in 0.15 0.3 0.45; do
  maintain_killed "$delay" --set floe.storage.remote.iceberg.target-file-size=256KB compact
  files_json "$work/killed.json"
  check "after kill -9 during compaction (at ${delay}s) DuckDB reads every row once" \
    node "$js/check_table.mjs" "$work/killed.json" 0 "$records" "$parts" "$topic"
done
start=$(date +%s.%N)
"$FLOE_BIN" maintain --set floe.data-dir="$work/data" --set floe.storage.remote.iceberg.target-file-size=256KB \
  compact >"$work/compact.out" 2>&1; rc=$?
end=$(date +%s.%N)
cat "$work/compact.out"
check "maintain compact succeeds (rc=$rc)" test "$rc" -eq 0
files_json "$work/after.json"
files_after=$(/usr/bin/python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["files"]))' "$work/after.json")
check "compaction leaves far fewer files ($files_before -> $files_after)" test "$files_after" -le $((files_before / 5))
check "DuckDB reads exactly the same rows after compaction" node "$js/check_table.mjs" "$work/after.json" 0 "$records" "$parts" "$topic"
check "positions carried forward unchanged" /usr/bin/python3 -c '
import json,sys
a=json.load(open(sys.argv[1]))["positions"]; b=json.load(open(sys.argv[2]))["positions"]
assert a==b and sum(a.values())==int(sys.argv[3]), (a,b)' "$work/files.json" "$work/after.json" "$records"
echo "compaction: $records rows in $(echo "$end - $start" | bc) s (wall, whole command)"

/usr/bin/python3 "$here/table_references.py" "$work/data/catalog.db" floe "$table" "$table_dir" > "$work/refs.json"
manifests_before=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["current_manifests"])' "$work/refs.json")
"$FLOE_BIN" maintain --set floe.data-dir="$work/data" manifests >"$work/manifests.out" 2>&1; rc=$?
cat "$work/manifests.out"
check "maintain manifests succeeds (rc=$rc)" test "$rc" -eq 0
/usr/bin/python3 "$here/table_references.py" "$work/data/catalog.db" floe "$table" "$table_dir" > "$work/refs.json"
manifests_after=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["current_manifests"])' "$work/refs.json")
check "manifest rewrite merges the small manifests ($manifests_before -> $manifests_after)" test "$manifests_after" -eq 1 -a "$manifests_before" -gt 1
files_json "$work/after.json"
check "DuckDB reads exactly the same rows after the manifest rewrite" node "$js/check_table.mjs" "$work/after.json" 0 "$records" "$parts" "$topic"

echo fresh > "$table_dir/metadata/in-flight-m0.avro"
"$FLOE_BIN" maintain --set floe.data-dir="$work/data" --older-than 1h expire orphans >"$work/clean.out" 2>&1; rc=$?
cat "$work/clean.out"
check "maintain expire orphans succeeds (rc=$rc)" test "$rc" -eq 0
/usr/bin/python3 "$here/table_references.py" "$work/data/catalog.db" floe "$table" "$table_dir" > "$work/refs.json"
check "the old stray file is gone" test ! -e "$table_dir/data/stream_key=$topic-0/segment-1-dead.parquet"
check "the fresh stray file is kept (inside the margin)" test -e "$table_dir/metadata/in-flight-m0.avro"
rm -f "$table_dir/metadata/in-flight-m0.avro"
/usr/bin/python3 "$here/table_references.py" "$work/data/catalog.db" floe "$table" "$table_dir" > "$work/refs.json"
# Files the killed compactions wrote and never committed are unreferenced but younger than the
# margin: they stay until the run with margin 0 below. Nothing referenced is missing.
check "no referenced file is missing, unreferenced ones are only young leftovers ($(head -c 300 "$work/refs.json"))" /usr/bin/python3 -c '
import json,os,sys,time
r=json.load(open(sys.argv[1]))
assert not r["missing"], r
assert all(time.time() - os.stat(p).st_mtime < 3600 for p in r["unreferenced"]), r' "$work/refs.json"
check "expired to the young snapshots only" /usr/bin/python3 -c '
import json,sys
r=json.load(open(sys.argv[1])); assert r["snapshots"] >= 1, r' "$work/refs.json"
# Expire everything older than now: only the current snapshot (which carries the positions) stays;
# files a killed run left half-deleted are orphans now and go too (margin 0, no writer running).
# kill -9 during expiry's and orphan cleanup's deletions, then a full run.
for delay in 0.05 0.1 0.2; do
  maintain_killed "$delay" --older-than 0s expire orphans
  files_json "$work/killed.json"
  check "after kill -9 during expiry/orphans (at ${delay}s) DuckDB reads every row once" \
    node "$js/check_table.mjs" "$work/killed.json" 0 "$records" "$parts" "$topic"
done
"$FLOE_BIN" maintain --set floe.data-dir="$work/data" --older-than 0s expire orphans >"$work/expire0.out" 2>&1; rc=$?
cat "$work/expire0.out"
check "maintain --older-than 0s expire orphans succeeds (rc=$rc)" test "$rc" -eq 0
/usr/bin/python3 "$here/table_references.py" "$work/data/catalog.db" floe "$table" "$table_dir" > "$work/refs.json"
check "one snapshot left and files on disk still exactly the referenced ones" /usr/bin/python3 -c '
import json,sys
r=json.load(open(sys.argv[1]))
assert r["snapshots"]==1 and not r["unreferenced"] and not r["missing"], r' "$work/refs.json"
files_json "$work/final.json"
check "DuckDB reads the same rows after expiry and orphan cleanup" node "$js/check_table.mjs" "$work/final.json" 0 "$records" "$parts" "$topic"

# The server again, now maintaining the table by itself every second (compaction and expiry of
# every snapshot but the current one between offload commits): consumers from offset 0 get
# identical records; offload goes on; nothing is lost or doubled.
start_floe "$work" "${common[@]}" --set floe.maintenance.interval=1s --set floe.maintenance.snapshot-max-age=0s \
  --set floe.storage.remote.iceberg.target-file-size=256KB || exit 1
consume "$work/after.txt"
check "kcat from offset 0 gets identical records after maintenance" cmp -s "$work/before.txt" "$work/after.txt"
check "kafkajs produced 2000 more records" node "$js/produce.mjs" 127.0.0.1:$KAFKA_PORT "$topic" "$records" $((records + 2000)) "$parts"
more=$((records + 2000))
for _ in $(seq 1 120); do
  files_json "$work/more.json" 2>/dev/null || true
  total=$(/usr/bin/python3 -c 'import json,sys; print(sum(json.load(open(sys.argv[1]))["positions"].values()))' "$work/more.json" 2>/dev/null || echo 0)
  [ "$total" -ge "$more" ] && break
  sleep 0.5
done
check "offload continues after maintenance (positions $total)" test "$total" -eq "$more"
# Maintenance runs every second now: a file list may name a file expiry deleted by the time
# DuckDB opens it. A reader holding an old list retries on fresh metadata, as this one does.
fresh_check() { # JSON: list, then read; up to 10 tries
  for _ in $(seq 1 10); do
    files_json "$1" && node "$js/check_table.mjs" "$1" 0 "$more" "$parts" "$topic" 2>"$work/check.err" && return 0
    sleep 0.3
  done
  cat "$work/check.err"; return 1
}
check "DuckDB: every row once after more offload" fresh_check "$work/more.json"
ran=0
for _ in $(seq 1 50); do
  metrics=$(curl -s "http://127.0.0.1:$HTTP_PORT/metrics")
  ran=$(grep -E "^floe_maintenance_runs_total\{table=\"$table\"\}" <<<"$metrics" | awk '{print $2}')
  [ "${ran:-0}" -ge 2 ] && break; sleep 0.2
done
check "the storage worker maintained the table on its schedule (runs: ${ran:-none})" test "${ran:-0}" -ge 2
check "/metrics shows the table's data files" grep -qE "^floe_table_data_files\{table=\"$table\"\} [0-9]+" <<<"$metrics"
check "/metrics shows the table's snapshots" grep -qE "^floe_table_snapshots\{table=\"$table\"\} [0-9]+" <<<"$metrics"
check "/metrics shows expired snapshots" grep -qE "^floe_maintenance_snapshots_expired_total\{table=\"$table\"\} [1-9]" <<<"$metrics"
lint=$(promtool check metrics <<<"$metrics" 2>&1); check "promtool accepts metrics ($lint)" test -z "$lint"
# /v1/topics shows the table's state with the gauges' numbers and each kind's last run. A pass
# runs every second, so the two answers are compared until one pair falls between two passes.
table_state_matches() {
  for _ in $(seq 1 20); do
    curl -s "http://127.0.0.1:$HTTP_PORT/metrics" > "$work/state.metrics"
    curl -s "http://127.0.0.1:$HTTP_PORT/v1/topics" > "$work/state.json"
    /usr/bin/python3 - "$work/state.metrics" "$work/state.json" "$topic" "$table" > "$work/state.out" 2>&1 <<'PY' && return 0
import json, re, sys
metrics, topics, topic, table = open(sys.argv[1]).read(), json.load(open(sys.argv[2])), sys.argv[3], sys.argv[4]
def gauge(name):
    m = re.search(r'^%s\{table="%s"\} (\S+)$' % (name, table), metrics, re.M)
    assert m, name
    return float(m.group(1))
st = next(t for t in topics["topics"] if t["name"] == topic)["table"]["state"]
assert st, "no table state"
for key, name in [("data_files", "floe_table_data_files"), ("small_data_files", "floe_table_small_data_files"),
                  ("avg_data_file_bytes", "floe_table_avg_data_file_bytes"), ("snapshots", "floe_table_snapshots"),
                  ("metadata_bytes", "floe_table_metadata_bytes")]:
    assert float(st[key]) == gauge(name), (key, st[key], gauge(name))
assert st["data_files"] > 0 and st["snapshots"] >= 1, st
runs = st["last_runs"]
assert set(runs) == {"compact", "manifests", "expire", "orphans"}, runs
assert all(r["ok"] and r["at_ms"] > 0 and r["detail"] for r in runs.values()), runs
print(json.dumps(st))
PY
    sleep 0.1
  done
  cat "$work/state.out"; return 1
}
check "/v1/topics shows the table's state, the same numbers as /metrics, and each kind's last run" table_state_matches
cat "$work/state.out"
check "DuckDB: every row once after scheduled maintenance" fresh_check "$work/sched.json"
consume "$work/sched.txt"
check "kcat from offset 0 still gets the records it got before maintenance" cmp -s "$work/before.txt" "$work/sched.txt"
stop_floe; rc=$?
check "floe stops cleanly (rc=$rc)" test "$rc" -eq 0
finish
