#!/usr/bin/env bash
# Produce with kafkajs to a tiered topic with short segments; the storage worker offloads every
# record into the Iceberg table exactly once. Independent readers judge the result: Python's
# sqlite3 + Apache Avro for catalog and manifests, DuckDB for the Parquet data files.
FLOE_BIN="$(realpath "$1")"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/lib.sh"
js="$here/../js/e2e"
work="$(mktemp -d)"
trap 'stop_floe; rm -rf "$work"' EXIT
records=${RECORDS:-200000}
parts=2
topic="orders.created-v1"

start_floe "$work" --set floe.topic-defaults.remote.storage.enable=true \
  --set floe.topic-defaults.segment.ms=1000 --set floe.storage.worker.tick-interval=300ms \
  --set floe.topic-defaults.local.retention.ms=1000 \
  --set floe.default-partitions=$parts || exit 1

check "kafkajs produced $records records" node "$js/produce.mjs" 127.0.0.1:$KAFKA_PORT "$topic" 0 "$records" "$parts"

# Wait (bounded) until the committed positions cover every record.
done_=""
for _ in $(seq 1 120); do
  /usr/bin/python3 "$here/iceberg_files.py" "$work/data/catalog.db" floe orders_created_v1 > "$work/files.json" 2>"$work/py.err" || { cat "$work/py.err"; break; }
  total=$(/usr/bin/python3 -c 'import json,sys; print(sum(json.load(open(sys.argv[1]))["positions"].values()))' "$work/files.json")
  if [ "$total" -ge "$records" ]; then done_=1; break; fi
  sleep 0.5
done
check "positions reach $records within 60 s (got ${total:-none})" test -n "$done_"
check "table rows match what was produced" node "$js/check_table.mjs" "$work/files.json" 0 "$records" "$parts" "$topic"
check "icebird reads the table (metadata, manifests, Parquet) and gets the same rows" \
  node "$js/icebird_check.mjs" "$work/data/warehouse" floe orders_created_v1 "$records" "$parts" "$topic"
check "positions are exact" /usr/bin/python3 -c '
import json,sys
p=json.load(open(sys.argv[1]))["positions"]
exp={f"orders.created-v1-{i}": int(sys.argv[2])//2 for i in range(2)}
assert p==exp, (p, exp)' "$work/files.json" "$records"
check "data files under stream_key partitions" grep -q "/floe/orders_created_v1/data/stream_key=orders.created-v1-0/segment-" "$work/files.json"
check "version-hint for path readers" test -f "$work/data/warehouse/floe/orders_created_v1/metadata/version-hint.text"

# Local retention removes offloaded segments; consumers from offset 0 read through Iceberg.
for _ in $(seq 1 100); do
  starts=$(curl -s "http://127.0.0.1:$HTTP_PORT/v1/topics" | /usr/bin/python3 -c 'import json,sys; print(min(p["local_start"] for p in json.load(sys.stdin)["topics"][0]["partitions"]))')
  [ "$starts" -gt 0 ] && break; sleep 0.2
done
check "local tier dropped offloaded segments (lowest local start $starts)" test "$starts" -gt 0
earliest=$(kcat -b 127.0.0.1:$KAFKA_PORT -Q -t "$topic:0:-2" 2>/dev/null | awk '{print $NF}')
check "ListOffsets earliest is the remote start 0 (got $earliest)" test "$earliest" = 0
check "kafkajs reads every record from offset 0 across tiers" node "$js/consume_check.mjs" 127.0.0.1:$KAFKA_PORT "$topic" "$records" "$parts"
n=$(kcat -b 127.0.0.1:$KAFKA_PORT -C -t "$topic" -o beginning -e -q -f '%p %o\n' | sort -u | wc -l)
check "kcat reads all $records records from the beginning (got $n)" test "$n" -eq "$records"
metrics=$(curl -s "http://127.0.0.1:$HTTP_PORT/metrics")
check "tiered reads are counted" contains "$metrics" 'floe_tiered_reads_total{kind="fetch"}'
check "offload metrics count the records" contains "$metrics" "floe_offload_records_total{topic=\"$topic\"} $records"
check "offload lag in seconds is 0 once all is offloaded" contains "$metrics" "floe_offload_lag_seconds{topic=\"$topic\",partition=\"0\"} 0"
lint=$(promtool check metrics <<<"$metrics" 2>&1); check "promtool accepts metrics ($lint)" test -z "$lint"
ready=$(curl -s "http://127.0.0.1:$HTTP_PORT/readyz")
check "storage worker ready" contains "$ready" '"storage-worker":{"status":"up"'

stop_floe; rc=$?
check "floe stops cleanly (rc=$rc)" test "$rc" -eq 0
finish
