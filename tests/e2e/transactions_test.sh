#!/usr/bin/env bash
# Kafka transactions (KIP-98) end to end, on a tiered topic: kafkajs transactional producers
# (committed and aborted transactions interleaved on two partitions, an open transaction held
# back from read_committed, consume-transform-produce with sendOffsets, a zombie fenced), then
# kill -9 of floe in the middle of a transaction: after the restart it is aborted once its
# timeout passes and nothing of it is ever visible to read_committed nor becomes a row of the
# Iceberg table (read by DuckDB); then the same reads served from Iceberg after offload.
FLOE_BIN="$(realpath "$1")"
TXN_CLIENT="$(realpath "$2")" # kafka_txn_client (librdkafka)
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/lib.sh"
js="$here/../js/kafka"
work="$(mktemp -d)"
trap 'stop_floe; [ -n "${NODE_PID:-}" ] && kill -9 $NODE_PID 2>/dev/null; rm -rf "$work"' EXIT
state="$work/state.json"
settings=(--set floe.topic-defaults.remote.storage.enable=true --set floe.topic-defaults.segment.ms=1000
          --set floe.storage.worker.tick-interval=300ms --set floe.topic-defaults.local.retention.ms=600000
          --set floe.default-partitions=2)

start_floe "$work" "${settings[@]}" || exit 1
BROKER=127.0.0.1:$KAFKA_PORT
check "kafkajs: interleaved commit/abort, read_committed vs read_uncommitted, consume-transform-produce, zombie fenced" \
  env FLOE_BROKER="$BROKER" node "$js/transactions.mjs" main "$state"

check "DescribeTransactions and ListTransactions (raw socket)" /usr/bin/python3 "$here/txn_describe.py" "$KAFKA_PORT"

# librdkafka: 9 transactions over two partitions (every third aborted), both isolation levels,
# then a zombie fenced by a second producer of the same transactional id.
made=$("$TXN_CLIENT" produce "$BROKER" rk-txn rk-1 9 2>"$work/rk.err")
check "librdkafka: 9 transactions, 6 committed ($made $(cat "$work/rk.err"))" test "$made" = "committed 60"
"$TXN_CLIENT" consume "$BROKER" rk-txn read_committed > "$work/rk-rc.txt" 2>>"$work/rk.err"
"$TXN_CLIENT" consume "$BROKER" rk-txn read_uncommitted > "$work/rk-ru.txt" 2>>"$work/rk.err"
check "librdkafka read_committed: the 60 committed records, none aborted" \
  test "$(grep -c '^c-' "$work/rk-rc.txt")" = 60 -a "$(grep -vc '^c-' "$work/rk-rc.txt")" = 0
check "librdkafka read_uncommitted: all 90 records" test "$(wc -l < "$work/rk-ru.txt")" = 90
# The HTTP lookups show committed data only, as read_committed consumers and the table do.
http_values() {
  # limit <= 100 reads batch by batch through the lookup cache, larger limits stream chunks.
  { curl -s "http://127.0.0.1:$HTTP_PORT/v1/topics/rk-txn/partitions/0/records?offset=0&limit=100"
    curl -s "http://127.0.0.1:$HTTP_PORT/v1/topics/rk-txn/partitions/1/records?offset=0&limit=1000"; } | /usr/bin/python3 -c '
import json, sys
dec = json.JSONDecoder(); text = sys.stdin.read(); i = 0
while i < len(text):
    doc, i = dec.raw_decode(text, i)
    for r in doc["records"]: print(r["value"])
    while i < len(text) and text[i].isspace(): i += 1'
}
http_values > "$work/rk-http.txt"
check "HTTP lookups: the 60 committed records, none aborted (got $(grep -c '^c-' "$work/rk-http.txt") committed, $(grep -vc '^c-' "$work/rk-http.txt") other)" \
  test "$(grep -c '^c-' "$work/rk-http.txt")" = 60 -a "$(grep -vc '^c-' "$work/rk-http.txt")" = 0
zout=$("$TXN_CLIENT" zombie "$BROKER" rk-txn rk-z 2>&1)
check "librdkafka: the zombie producer is fenced ($zout)" contains "$zout" "fenced:"
"$TXN_CLIENT" consume "$BROKER" rk-txn read_committed > "$work/rk-rc2.txt" 2>>"$work/rk.err"
check "librdkafka read_committed: the new producer's record, nothing of the zombie" \
  test "$(grep -c '^fresh-rk-z$' "$work/rk-rc2.txt")" = 1 -a "$(grep -c '^zombie' "$work/rk-rc2.txt")" = 0

# A transaction left open by a crash.
env FLOE_BROKER="$BROKER" node "$js/transactions.mjs" open "$state" > "$work/open.out" 2>&1 &
NODE_PID=$!
wait_for 30 grep -q OPEN "$work/open.out"
check "a transaction is open when floe is killed" grep -q OPEN "$work/open.out"
kill -9 "$FLOE_PID"; wait "$FLOE_PID" 2>/dev/null; FLOE_PID=
kill -9 "$NODE_PID" 2>/dev/null; wait "$NODE_PID" 2>/dev/null; NODE_PID=
start_floe "$work" "${settings[@]}" || exit 1
BROKER=127.0.0.1:$KAFKA_PORT
wait_for 30 grep -q "aborting the transaction of producer" "$work/floe.log"
check "the open transaction is aborted after its timeout, after the restart" \
  grep -q "transactional id tx-crash: aborting the transaction" "$work/floe.log"
check "read_committed after the crash sees only committed data" env FLOE_BROKER="$BROKER" node "$js/transactions.mjs" after "$state" log

# Everything offloaded: wait (bounded) until the committed positions reach each log end.
table_files() { /usr/bin/python3 "$here/iceberg_files.py" "$work/data/catalog.db" floe txn_in > "$work/files.json" 2>/dev/null; }
ends() { kcat -b "$BROKER" -Q -t "txn-in:0:-1" -t "txn-in:1:-1" 2>/dev/null | awk '{s += $NF} END {print s + 0}'; }
offloaded() {
  table_files || return 1
  local pos; pos=$(/usr/bin/python3 -c 'import json,sys; print(sum(json.load(open(sys.argv[1]))["positions"].values()))' "$work/files.json")
  [ "$pos" -ge "$(ends)" ]
}
wait_for 60 offloaded
check "the storage worker offloaded up to the log end (last stable offset)" offloaded
check "DuckDB: the table holds every committed value once and no aborted or crashed record" \
  node "$here/../js/e2e/check_txn_table.mjs" "$work/files.json" "$state"
stop_floe
# Serve every offset below the log end from Iceberg: local retention drops offloaded segments.
start_floe "$work" "${settings[@]}" --set floe.topic-defaults.local.retention.ms=1 || exit 1
BROKER=127.0.0.1:$KAFKA_PORT
local_start() { curl -s "http://127.0.0.1:$HTTP_PORT/v1/topics" | /usr/bin/python3 -c '
import json,sys
t=[t for t in json.load(sys.stdin)["topics"] if t["name"]=="txn-in"][0]
print(min(p["local_start"] for p in t["partitions"]))'; }
dropped() { [ "$(local_start)" -gt 0 ] 2>/dev/null; }
wait_for 60 dropped
ls_=$(local_start)
check "local segments dropped once offloaded (lowest local start $ls_)" test "${ls_:-0}" -gt 0
check "read_committed and read_uncommitted from Iceberg see exactly the committed data" \
  env FLOE_BROKER="$BROKER" node "$js/transactions.mjs" after "$state" iceberg
stop_floe; rc=$?
check "floe stops cleanly (rc=$rc)" test "$rc" -eq 0
finish
