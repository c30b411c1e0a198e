#!/usr/bin/env bash
# The catalog (a real PostgreSQL) goes away under a running floe and comes back: /readyz turns
# 503 naming the catalog, catalog errors are counted, producers keep being acknowledged from
# the local tier, and once the catalog is back the storage worker offloads everything exactly
# once and consumers read every record from offset 0.
FLOE_BIN="$(realpath "$1")"
source "$(dirname "$0")/lib.sh"
work="$(mktemp -d)"
trap 'stop_floe; stop_pg; rm -rf "$work"' EXIT
topic=outage

start_pg "$work" || exit 1
start_floe "$work" --set floe.storage.remote.catalog.type=sql --set floe.storage.remote.catalog.uri="$PG_URI" \
  --set floe.topic-defaults.remote.storage.enable=true --set floe.topic-defaults.segment.ms=500 \
  --set floe.storage.worker.tick-interval=200ms --set floe.default-partitions=1 || exit 1
base="http://127.0.0.1:$HTTP_PORT"
offloaded() { # the partition's offloaded_up_to, from /v1/topics
  curl -s "$base/v1/topics" | /usr/bin/python3 -c '
import json,sys
t=[t for t in json.load(sys.stdin)["topics"] if t["name"]==sys.argv[1]]
print(t[0]["partitions"][0]["offloaded_up_to"] if t else -1)' "$topic"
}
offloaded_reaches() { [ "$(offloaded)" -ge "$1" ]; }
status_is() { [ "$(curl -s -o /dev/null -w '%{http_code}' "$base/readyz")" = "$1" ]; }

seq 1 1000 | kcat -P -b 127.0.0.1:$KAFKA_PORT -t $topic -X acks=all
check "ready with the catalog up" status_is 200
check "first 1000 records offloaded into the PostgreSQL catalog's table" wait_for 30 offloaded_reaches 1000

stop_pg
check "readyz turns 503 when the catalog is gone" wait_for 20 status_is 503
ready=$(curl -s "$base/readyz")
check "readyz names the catalog as down ($ready)" contains "$ready" '"catalog":{"status":"down"'
check "readyz keeps the local log up" contains "$ready" '"local-log":{"status":"up"'
seq 1001 2000 | kcat -P -b 127.0.0.1:$KAFKA_PORT -t $topic -X acks=all
rc=$?
check "producers are acknowledged while the catalog is down (kcat rc=$rc)" test "$rc" -eq 0
sleep 1.5 # segments roll and the worker tries (and fails) to offload them
metrics=$(curl -s "$base/metrics")
check "catalog errors are counted" grep -qE '^floe_catalog_errors_total\{operation="[a-z_]+"\} [1-9]' <<<"$metrics"
check "offload lag in seconds grows while the catalog is down" grep -qE '^floe_offload_lag_seconds\{topic="outage",partition="0"\} [1-9]' <<<"$metrics"
check "worker failures are counted" grep -qE '^floe_storage_worker_failures_total(\{[^}]*\})? [1-9]' <<<"$metrics"
lint=$(promtool check metrics <<<"$metrics" 2>&1); check "promtool accepts metrics ($lint)" test -z "$lint"

start_pg_again
check "ready again once the catalog is back" wait_for 30 status_is 200
check "all 2000 records offloaded after the outage" wait_for 60 offloaded_reaches 2000
n=$(kcat -b 127.0.0.1:$KAFKA_PORT -C -t $topic -o beginning -e -q -f '%o %s\n' | sort -u | wc -l)
check "kcat reads 2000 distinct records (got $n)" test "$n" -eq 2000
rows=$(psql "$PG_URI" -Atc "select count(*) from iceberg_tables where table_name='outage'" 2>&1)
check "one table row in the catalog ($rows)" test "$rows" = 1

stop_floe; rc=$?
check "floe stops cleanly (rc=$rc)" test "$rc" -eq 0
finish
