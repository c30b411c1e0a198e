#!/usr/bin/env bash
# Typed tables (issue 29) for Protobuf and JSON Schema values: two topics created with
# floe.iceberg.mode=schema-id; schemas registered with @kafkajs/confluent-schema-registry in
# Floe's registry; Protobuf values encoded by protobufjs and framed with their message-index path,
# JSON values encoded by the registry client; bad records mixed in; then a second version of each
# schema adds a field. Independent readers judge:
# Python's sqlite3 + Apache Avro list each table's live files, DuckDB checks every typed value,
# the types, exact sums, and each dead letter's reason.
# usage: typed_tables_protobuf_test.sh FLOE_BIN
set -uo pipefail
FLOE_BIN="$(realpath "$1")"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/lib.sh"
js="$here/../js/e2e"
work="$(mktemp -d)"
trap 'kill -9 ${FLOE_PID:-} 2>/dev/null; [ -n "${KEEP_WORK:-}" ] || rm -rf "$work"' EXIT

SR_PORT=$(free_port)
SR="http://127.0.0.1:$SR_PORT"
start_floe "$work" --set floe.schema-registry.listen=127.0.0.1:$SR_PORT \
  --set floe.topic-defaults.remote.storage.enable=true --set floe.topic-defaults.segment.ms=500 \
  --set floe.storage.worker.tick-interval=200ms || exit 1

position() { # TABLE TOPIC: the table's committed position of partition 0 (0 when none)
  /usr/bin/python3 "$here/iceberg_files.py" "$work/data/catalog.db" floe "$1" 2>/dev/null |
    /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)['positions'].get('$2-0', 0))" 2>/dev/null || echo 0
}
offloaded() { test "$(position "$1" "$2")" -ge "$3"; }

: > "$work/sent.jsonl"
check "produced Protobuf and JSON records (good and bad)" \
  timeout 90 node "$js/typed_formats_produce.mjs" "$SR" "127.0.0.1:$KAFKA_PORT" typed.proto typed.json "$work/sent.jsonl"
for t in typed.proto typed.json; do
  n=$(grep -c "\"topic\":\"$t\"" "$work/sent.jsonl")
  check "$t offloaded ($n records)" wait_for 60 offloaded "${t/./_}" "$t" "$n"
done
for t in typed_proto typed_json; do
  /usr/bin/python3 "$here/iceberg_files.py" "$work/data/catalog.db" floe "$t" >"$work/$t.json"
  /usr/bin/python3 "$here/iceberg_files.py" "$work/data/catalog.db" floe "${t}_dlq" >"$work/${t}_dlq.json"
done
check "DuckDB: every Protobuf and JSON value typed, dead letters with their reasons" \
  timeout 60 node "$js/typed_formats_check.mjs" "$work/sent.jsonl" \
    typed.proto "$work/typed_proto.json" "$work/typed_proto_dlq.json" \
    typed.json "$work/typed_json.json" "$work/typed_json_dlq.json"
check "no unsupported-schema-type dead letter was written" test "$(grep -c 'unsupported-schema-type' "$work/floe.log")" -eq 0
finish
