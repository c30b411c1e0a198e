#!/usr/bin/env bash
# Typed tables (issue 29), embedded tier: a topic created with floe.iceberg.mode=schema-id takes
# Avro values encoded by @kafkajs/confluent-schema-registry against Floe's registry through five
# schema versions (add, promote, remove, an incompatible change) mixed with undecodable records,
# produced while offload runs, with a kill -9 in the middle. Independent readers judge: Python's
# sqlite3 + Apache Avro list the live files of the table and of its dead-letter table, DuckDB
# reads them (typed queries with exact sums, union_by_name across versions), kcat reads every
# offset back from Kafka.
# usage: typed_tables_test.sh FLOE_BIN
set -uo pipefail
FLOE_BIN="$(realpath "$1")"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/lib.sh"
js="$here/../js/e2e"
work="$(mktemp -d)"
trap 'kill -9 ${FLOE_PID:-} 2>/dev/null; [ -n "${KEEP_WORK:-}" ] || rm -rf "$work"' EXIT

topic=typed.orders
table=typed_orders
SR_PORT=$(free_port)
SR="http://127.0.0.1:$SR_PORT"
sets=(--set floe.schema-registry.listen=127.0.0.1:$SR_PORT
      --set floe.topic-defaults.remote.storage.enable=true --set floe.topic-defaults.segment.ms=1000
      --set floe.topic-defaults.local.retention.ms=2000 --set floe.storage.worker.tick-interval=300ms)
start_floe "$work" "${sets[@]}" || exit 1

# position TABLE: the table's committed position of partition 0 (0 when none).
position() {
  /usr/bin/python3 "$here/iceberg_files.py" "$work/data/catalog.db" floe "$1" 2>/dev/null |
    /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)['positions'].get('$topic-0', 0))" 2>/dev/null || echo 0
}
# offloaded N: the main table's position reached N.
offloaded() { test "$(position $table)" -ge "$1"; }

: > "$work/sent.jsonl"
check "phase 1 produced (v1, v2, bad records)" timeout 120 node "$js/typed_produce.mjs" "$SR" "127.0.0.1:$KAFKA_PORT" "$topic" "$work/sent.jsonl" 1
n1=$(wc -l < "$work/sent.jsonl")
check "phase 1 offloaded ($n1 records)" wait_for 60 offloaded "$n1"
# data_fields: the names inside the current schema's `data` struct (metadata JSON read by Python).
data_fields() {
  /usr/bin/python3 "$here/iceberg_files.py" "$work/data/catalog.db" floe "$table" 2>/dev/null | /usr/bin/python3 -c '
import json, sys
m = json.load(open(json.load(sys.stdin)["metadata"].replace("file://", "")))
s = [x for x in m["schemas"] if x["schema-id"] == m["current-schema-id"]][0]
print(" ".join(f["name"] for f in [f for f in s["fields"] if f["name"] == "data"][0]["type"]["fields"]))'
}
check "v2's new field became a column of the table ($(data_fields))" contains " $(data_fields) " " channel "
metrics=$(curl -s "http://127.0.0.1:$HTTP_PORT/metrics")
check "dead letters counted in /metrics" contains "$metrics" 'floe_lake_dead_letter_records_total{topic="typed.orders",reason="bad-magic-byte"} 2'

# Phase 2 while offload runs, then a kill -9 of floe at once (segments of phase 2 are being
# sealed and offloaded; the producer is done, so every record it sent was acknowledged).
check "phase 2 produced (v3-v5, a tombstone)" timeout 120 node "$js/typed_produce.mjs" "$SR" "127.0.0.1:$KAFKA_PORT" "$topic" "$work/sent.jsonl" 2
sleep 1.2
kill -9 "$FLOE_PID"; wait "$FLOE_PID" 2>/dev/null
start_floe "$work" "${sets[@]}" || exit 1
end=$(($(kcat -b 127.0.0.1:$KAFKA_PORT -Q -t "$topic:0:-1" 2>/dev/null | awk '{print $NF}')))
check "everything offloaded (end offset $end)" wait_for 90 offloaded "$end"

/usr/bin/python3 "$here/iceberg_files.py" "$work/data/catalog.db" floe "$table" >"$work/main.json"
/usr/bin/python3 "$here/iceberg_files.py" "$work/data/catalog.db" floe "${table}_dlq" >"$work/dlq.json"
check "DuckDB: every record in exactly one table, typed columns and dead letters right" \
  timeout 60 node "$js/typed_check.mjs" "$work/sent.jsonl" "$work/main.json" "$work/dlq.json"
nmain=$(/usr/bin/python3 -c "import json; print(sum(f['records'] for f in json.load(open('$work/main.json'))['files']))")
check "iceberg-js (through /iceberg) and icebird read the typed table" \
  timeout 60 node "$js/typed_iceberg_check.mjs" "http://127.0.0.1:$HTTP_PORT/iceberg" "$work/data/warehouse" floe "$table" "$nmain"

# Kafka reads of offloaded offsets (local retention 2 s: from the table) return every offset.
kcat -b 127.0.0.1:$KAFKA_PORT -C -t "$topic" -p 0 -o beginning -e -f '%o\n' >"$work/kcat.txt" 2>"$work/kcat.err"
check "kcat reads offsets 0..$((end - 1)) back, each once" \
  test "$(sort -n "$work/kcat.txt" | uniq | wc -l)" -eq "$end" -a "$(wc -l < "$work/kcat.txt")" -eq "$end"
check "the incompatible schema is logged once with the way out" grep -q "goes to ${table}_dlq (incompatible-schema" "$work/floe.log"
ndead=$(/usr/bin/python3 -c "import json; print(sum(f['records'] for f in json.load(open('$work/dlq.json'))['files']))")
topics=$(curl -s "http://127.0.0.1:$HTTP_PORT/v1/topics")
check "/v1/topics shows the mode and $ndead dead letters" contains "$topics" "\"iceberg_mode\":\"schema-id\",\"table\""
check "/v1/topics counts the dead letters" contains "$topics" "\"dead_letter\":{\"table\":\"${table}_dlq\",\"records\":$ndead}"
check "/readyz names them" contains "$(curl -s "http://127.0.0.1:$HTTP_PORT/readyz")" "$topic: $ndead record(s) in ${table}_dlq"

# floe dlq replay: the unknown id becomes known (IMPORT mode keeps another registry's ids), so
# that record decodes now and moves to the table; the incompatible ones stay.
id1=$(/usr/bin/python3 -c "import json; print([json.loads(l)['schema_id'] for l in open('$work/sent.jsonl') if 'schema_id' in l][0])")
v1=$(curl -s "$SR/schemas/ids/$id1" | /usr/bin/python3 -c 'import json,sys; print(json.dumps({"schema": json.load(sys.stdin)["schema"], "id": 987654, "version": 1}))')
CT='Content-Type: application/vnd.schemaregistry.v1+json'
curl -s -X PUT -H "$CT" --data '{"mode":"IMPORT"}' "$SR/mode/imported" >/dev/null
check "id 987654 imported" contains "$(curl -s -X POST -H "$CT" --data "$v1" "$SR/subjects/imported/versions")" '"id":987654'
unknown=$(/usr/bin/python3 -c "import json; print([json.loads(l)['offset'] for l in open('$work/sent.jsonl') if '\"unknown-schema-id\"' in l][0])")
"$FLOE_BIN" dlq replay --topic "$topic" --set floe.http.listen=127.0.0.1:$HTTP_PORT >"$work/replay.out" 2>&1
check "floe dlq replay moves 1, keeps $((ndead - 1)) ($(tr '\n' ' ' < "$work/replay.out"))" \
  contains "$(cat "$work/replay.out")" "$topic: 1 record(s) moved to the table, $((ndead - 1)) stay in ${table}_dlq"
"$FLOE_BIN" dlq replay --topic "$topic" --set floe.http.listen=127.0.0.1:$HTTP_PORT >"$work/replay2.out" 2>&1
check "a second replay moves nothing" contains "$(cat "$work/replay2.out")" "$topic: 0 record(s) moved to the table, $((ndead - 1)) stay"
/usr/bin/python3 "$here/iceberg_files.py" "$work/data/catalog.db" floe "$table" >"$work/main2.json"
/usr/bin/python3 "$here/iceberg_files.py" "$work/data/catalog.db" floe "${table}_dlq" >"$work/dlq2.json"
/usr/bin/python3 - "$work/sent.jsonl" "$unknown" <<'PY' > "$work/sent2.jsonl"
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["offset"] == int(sys.argv[2]):
        r.update({"table": "main", "id": 999, "country": "BR", "cents": 1000 + (999 * 37) % 5000, "items": 0,
                  "vip": False, "version": 1})
        r.pop("reason", None)
    print(json.dumps(r))
PY
check "after the replay: every record still in exactly one table, the replayed one typed" \
  timeout 60 node "$js/typed_check.mjs" "$work/sent2.jsonl" "$work/main2.json" "$work/dlq2.json"
"$FLOE_BIN" dlq replay --topic no.such --set floe.http.listen=127.0.0.1:$HTTP_PORT >/dev/null 2>&1
check "an unknown topic is refused with exit 3" test $? -eq 3

# Maintenance of a typed topic: `floe maintain --table <topic>` (floe stopped: it needs the
# storage worker's lease) compacts the typed files of every schema version into typed files of
# the current schema and maintains the dead-letter table with the main one (compaction, snapshot
# expiry, orphan cleanup). DuckDB then reads the same typed sums from fewer files, the orphan
# planted in the dead letters' location is gone, and kcat still reads every offset once.
count_files() { /usr/bin/python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['files']))" "$1"; }
count_snapshots() { /usr/bin/python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['snapshots'])" "$1"; }
stop_floe
/usr/bin/python3 "$here/iceberg_files.py" "$work/data/catalog.db" floe "$table" >"$work/main2.json"
/usr/bin/python3 "$here/iceberg_files.py" "$work/data/catalog.db" floe "${table}_dlq" >"$work/dlq2.json"
main_before=$(count_files "$work/main2.json"); dlq_snaps_before=$(count_snapshots "$work/dlq2.json")
orphan="$work/data/warehouse/floe/${table}_dlq/data/segment-0-orphan.parquet"
mkdir -p "$(dirname "$orphan")"; echo dead > "$orphan"
"$FLOE_BIN" maintain --set floe.data-dir="$work/data" --table "$topic" --older-than 0s >"$work/maintain.out" 2>&1; rc=$?
cat "$work/maintain.out"
check "floe maintain runs on the typed table and its dead letters (rc=$rc)" \
  test "$rc" -eq 0 -a "$(grep -c "floe.${table}_dlq " "$work/maintain.out")" -eq 4
/usr/bin/python3 "$here/iceberg_files.py" "$work/data/catalog.db" floe "$table" >"$work/main3.json"
/usr/bin/python3 "$here/iceberg_files.py" "$work/data/catalog.db" floe "${table}_dlq" >"$work/dlq3.json"
main_after=$(count_files "$work/main3.json")
check "compaction merged the typed files of every version ($main_before -> $main_after files)" \
  test "$main_after" -lt "$main_before"
check "DuckDB after compaction: the same typed sums and counts, every record in exactly one table" \
  timeout 60 node "$js/typed_check.mjs" "$work/sent2.jsonl" "$work/main3.json" "$work/dlq3.json"
check "the dead letters' snapshots expired ($dlq_snaps_before -> $(count_snapshots "$work/dlq3.json"))" \
  test "$(count_snapshots "$work/dlq3.json")" -eq 1 -a "$dlq_snaps_before" -gt 1
check "the orphan in the dead letters' location is gone" test ! -e "$orphan"
start_floe "$work" "${sets[@]}" || exit 1
kcat -b 127.0.0.1:$KAFKA_PORT -C -t "$topic" -p 0 -o beginning -e -f '%o\n' >"$work/kcat2.txt" 2>"$work/kcat2.err"
check "kcat after compaction reads offsets 0..$((end - 1)) back, each once" \
  test "$(sort -n "$work/kcat2.txt" | uniq | wc -l)" -eq "$end" -a "$(wc -l < "$work/kcat2.txt")" -eq "$end"
finish
