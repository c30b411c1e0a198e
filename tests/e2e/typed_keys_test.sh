#!/usr/bin/env bash
# Typed keys (issue 29, floe.iceberg.key-mode): a topic created with floe.iceberg.key-mode and
# floe.iceberg.mode both schema-id takes Avro keys and values encoded by
# @kafkajs/confluent-schema-registry against Floe's registry (two key schema versions, records
# without key, keys that cannot be decoded). Independent readers judge: Python's sqlite3 + Apache
# Avro list the live files, DuckDB queries key_data and data together with exact sums and finds
# each bad key in the dead-letter table, kcat reads every offset back once.
# usage: typed_keys_test.sh FLOE_BIN
set -uo pipefail
FLOE_BIN="$(realpath "$1")"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/lib.sh"
js="$here/../js/e2e"
work="$(mktemp -d)"
trap 'kill -9 ${FLOE_PID:-} 2>/dev/null; [ -n "${KEEP_WORK:-}" ] || rm -rf "$work"' EXIT

topic=typed.sales
table=typed_sales
SR_PORT=$(free_port)
SR="http://127.0.0.1:$SR_PORT"
start_floe "$work" --set floe.schema-registry.listen=127.0.0.1:$SR_PORT \
  --set floe.topic-defaults.remote.storage.enable=true --set floe.topic-defaults.segment.ms=1000 \
  --set floe.topic-defaults.local.retention.ms=2000 --set floe.storage.worker.tick-interval=300ms || exit 1

position() {
  /usr/bin/python3 "$here/iceberg_files.py" "$work/data/catalog.db" floe "$1" 2>/dev/null |
    /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)['positions'].get('$topic-0', 0))" 2>/dev/null || echo 0
}
offloaded() { test "$(position $table)" -ge "$1"; }

: > "$work/sent.jsonl"
check "keys and values produced" timeout 120 node "$js/typed_keys.mjs" produce "$SR" "127.0.0.1:$KAFKA_PORT" "$topic" "$work/sent.jsonl"
end=$(wc -l < "$work/sent.jsonl")
check "everything offloaded ($end records)" wait_for 60 offloaded "$end"
/usr/bin/python3 "$here/iceberg_files.py" "$work/data/catalog.db" floe "$table" >"$work/main.json"
/usr/bin/python3 "$here/iceberg_files.py" "$work/data/catalog.db" floe "${table}_dlq" >"$work/dlq.json"
check "DuckDB: key_data beside data, exact sums, bad keys in the dead letters" \
  timeout 60 node "$js/typed_keys.mjs" check "$work/sent.jsonl" "$work/main.json" "$work/dlq.json"
check "the bad key is logged with the way out" grep -q "goes to ${table}_dlq (bad-magic-byte: key: " "$work/floe.log"
kcat -b 127.0.0.1:$KAFKA_PORT -C -t "$topic" -p 0 -o beginning -e -f '%o\n' >"$work/kcat.txt" 2>"$work/kcat.err"
check "kcat reads offsets 0..$((end - 1)) back, each once" \
  test "$(sort -n "$work/kcat.txt" | uniq | wc -l)" -eq "$end" -a "$(wc -l < "$work/kcat.txt")" -eq "$end"
finish
