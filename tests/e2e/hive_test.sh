#!/usr/bin/env bash
# Floe on the Hive catalog (floe.storage.remote.catalog.type=hive), against the metastore
# stand-in (tests/hive/metastore.py: Floe's own IDL subset compiled by Debian's thrift-compiler
# and served by python3-thrift, with the metastore's lock rules and a 5 s lock timeout), started
# by tests/hive/with_metastore.sh. No real Hive Metastore was run (none can run here).
#   1. Three kill -9 cycles while a producer streams acks=all records; after a restart the table
#      catches up, and holds every acknowledged record once (DuckDB on the data files that the
#      metastore's metadata_location leads to, read with the stand-in's Thrift client and Apache
#      Avro); the metastore table is Iceberg's (EXTERNAL_TABLE, table_type ICEBERG,
#      metadata_location the newest metadata file, previous_metadata_location an older one).
#   2. Another client holds the table's EXCLUSIVE lock for 8 s (longer than the lock timeout):
#      Floe's commit waits (the table does not move meanwhile), then proceeds.
#   3. A metastore that does not answer shows in /readyz with its address.
#   4. `floe tables adopt` to the SQLite catalog, which commits, and back to Hive, which commits
#      again; at the end every record is in the table once.
#   usage: with_metastore.sh --lock-timeout 5 -- hive_test.sh FLOE_BIN
FLOE_BIN="$(realpath "$1")"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/lib.sh"
js="$here/../js/e2e"
work="$(mktemp -d)"
holder=
trap 'stop_floe; [ -n "$holder" ] && kill "$holder" 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
: "${HIVE_METASTORE_URI:?run through tests/hive/with_metastore.sh}"
topic=hive.events
table=hive_events
ms=(/usr/bin/python3 "$here/../hive/metastore.py")

lake=(--set "floe.storage.remote.path=file://$work/wh")
hive=(--set floe.storage.remote.catalog.type=hive --set "floe.storage.remote.catalog.uri=$HIVE_METASTORE_URI"
      --set floe.storage.remote.catalog.hive.heartbeat-interval=1s --set floe.storage.remote.catalog.request-timeout=5s)
sql=(--set floe.storage.remote.catalog.type=sql)
tiered=(--set floe.topic-defaults.remote.storage.enable=true --set floe.topic-defaults.segment.ms=200
        --set floe.storage.worker.tick-interval=100ms)

offloaded() { # partition 0's offloaded_up_to
  curl -s "http://127.0.0.1:$HTTP_PORT/v1/topics" | /usr/bin/python3 -c '
import json,sys
t=[t for t in json.load(sys.stdin)["topics"] if t["name"]==sys.argv[1]]
print(t[0]["partitions"][0]["offloaded_up_to"] if t else 0)' "$topic"
}
log_end() { kcat -b 127.0.0.1:$KAFKA_PORT -Q -t "$topic:0:-1" 2>/dev/null | awk '{print $NF}'; }
caught_up() { local end; end=$(log_end); [ -n "$end" ] && [ "$(offloaded)" -ge "$end" ]; }
hive_table() { "${ms[@]}" table "$HIVE_METASTORE_PORT" floe "$table"; }
meta_of() { /usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["parameters"]["metadata_location"])' "$1"; }
table_files() { /usr/bin/python3 "$here/iceberg_files.py" "meta:$1" floe "$table"; }

# 1. Three kill -9 cycles while a producer streams acks=all records.
echo 0 > "$work/acked"
RANDOM=11
for cycle in 1 2 3; do
  start_floe "$work" "${lake[@]}" "${hive[@]}" "${tiered[@]}" || exit 1
  from=$(cat "$work/acked")
  node "$js/produce_stream.mjs" 127.0.0.1:$KAFKA_PORT "$topic" "$from" $((from + 100000)) "$work/acked" &
  producer=$!
  sleep "$((3 + RANDOM % 3)).$((RANDOM % 10))"
  kill -9 "$FLOE_PID"; wait "$FLOE_PID" 2>/dev/null; FLOE_PID=
  wait "$producer"
done
acked=$(cat "$work/acked")
check "records were acknowledged across 3 kill -9 ($acked)" test "$acked" -gt 0
start_floe "$work" "${lake[@]}" "${hive[@]}" "${tiered[@]}" || exit 1
check "after restart the metastore's table catches up with the log" wait_for 60 caught_up
ready=$(curl -s "http://127.0.0.1:$HTTP_PORT/readyz")
check "/readyz shows the hive catalog up ($ready)" contains "$ready" '"catalog":{"status":"up","message":"hive catalog: reachable"}'
stop_floe
hive_table > "$work/hive.json"
check "the metastore table is Iceberg's ($(cat "$work/hive.json"))" /usr/bin/python3 -c '
import json,os,re,sys
g=json.load(open(sys.argv[1])); wh=sys.argv[2]
p=g["parameters"]
assert g["tableType"]=="EXTERNAL_TABLE", g
assert p["table_type"]=="ICEBERG" and p["EXTERNAL"]=="TRUE", p
assert g["location"]=="file://"+wh+"/floe/hive_events", g
mdir=wh+"/floe/hive_events/metadata"
num=lambda n: int(re.match(r"(\d+)-.*\.metadata\.json$", n).group(1))
named=sorted(num(n) for n in os.listdir(mdir) if re.match(r"\d+-.*\.metadata\.json$", n))
cur=p["metadata_location"]; prev=p["previous_metadata_location"]
assert cur.startswith("file://"+mdir+"/") and os.path.exists(cur[7:]), cur
assert num(os.path.basename(cur))==named[-1], ("not the newest metadata file", cur, named[-3:])
assert os.path.exists(prev[7:]) and num(os.path.basename(prev))<num(os.path.basename(cur)), (prev, cur)' \
  "$work/hive.json" "$work/wh"
check "every commit altered the table under the metastore lock ($(grep -c alter_table "$HIVE_EVENTS") alters)" /usr/bin/python3 -c '
import json,sys
alters=[e for e in map(json.loads, open(sys.argv[1])) if e["what"]=="alter_table"]
assert len(alters) > 10, len(alters)
bad=[e for e in alters if len(e["locks_held"]) != 1]
assert not bad, bad[:3]' "$HIVE_EVENTS"
table_files "$(meta_of "$work/hive.json")" > "$work/files.json"
check "every acknowledged record once, no gaps (DuckDB, after 3 kill -9)" node "$js/check_crash.mjs" "$work/files.json" "$acked"

# 2. Another client holds the table's lock: Floe waits, then proceeds.
start_floe "$work" "${lake[@]}" "${hive[@]}" "${tiered[@]}" || exit 1
check "caught up before the lock test" wait_for 30 caught_up
"${ms[@]}" hold-lock "$HIVE_METASTORE_PORT" floe "$table" 8 > "$work/hold.jsonl" 2>&1 &
holder=$!
check "another client got the table's lock" wait_for 20 grep -q '"granted"' "$work/hold.jsonl"
check "produced 100 while the lock is held" bash -c "seq 1 100 | sed 's/^/held-/' | kcat -b 127.0.0.1:$KAFKA_PORT -P -t $topic"
check "Floe waits for the metastore lock" wait_for 20 grep -q "waiting for the metastore lock on floe.$table" "$work/floe.log"
still_held_and_behind() { ! grep -q '"released"' "$work/hold.jsonl" && ! caught_up; }
check "nothing offloaded while the lock is held" still_held_and_behind
wait "$holder"; holder_rc=$?; holder=
check "the other client held the lock for 8 s and released it (rc $holder_rc)" test "$holder_rc" -eq 0
check "the table did not move while the other client held its lock ($(tr '\n' ' ' < "$work/hold.jsonl"))" /usr/bin/python3 -c '
import json,sys
ev={e["event"]: e for e in map(json.loads, open(sys.argv[1]))}
assert ev["granted"]["metadata_location"]==ev["released"]["metadata_location"], ev' "$work/hold.jsonl"
check "after the release Floe commits what waited" wait_for 30 caught_up
check "Floe logged getting the lock after the wait" grep -q "got the metastore lock on floe.$table after" "$work/floe.log"
# This process committed (the records produced while the lock was held), so its swaps were timed.
metrics=$(curl -s "http://127.0.0.1:$HTTP_PORT/metrics")
check "catalog commits are counted and timed" contains "$metrics" 'floe_catalog_request_duration_seconds_count{operation="swap"}'
stop_floe

# 3. A metastore that does not answer: /readyz names it.
dead=$(free_port)
mkdir -p "$work/dead"
start_floe "$work/dead" --set "floe.storage.remote.path=file://$work/wh-dead" --set floe.storage.remote.catalog.type=hive \
  --set "floe.storage.remote.catalog.uri=thrift://127.0.0.1:$dead" --set floe.storage.remote.catalog.request-timeout=2s || exit 1
ready=$(curl -s "http://127.0.0.1:$HTTP_PORT/readyz")
check "/readyz shows the unreachable metastore down, by address ($ready)" contains "$ready" "thrift://127.0.0.1:$dead"
stop_floe

# 4. Adopted by the SQL catalog, which commits; then adopted back by Hive, which commits.
check "floe tables adopt into the SQL catalog" "$FLOE_BIN" tables adopt "$topic" --set floe.data-dir="$work/data" "${lake[@]}" "${sql[@]}"
start_floe "$work" "${lake[@]}" "${sql[@]}" "${tiered[@]}" || exit 1
check "produced 100 more (SQL)" bash -c "seq 1 100 | sed 's/^/x-/' | kcat -b 127.0.0.1:$KAFKA_PORT -P -t $topic"
check "the SQL catalog commits after adopting" wait_for 30 caught_up
stop_floe
check "floe tables adopt back into Hive" "$FLOE_BIN" tables adopt "$topic" --set floe.data-dir="$work/data" "${lake[@]}" "${hive[@]}"
start_floe "$work" "${lake[@]}" "${hive[@]}" "${tiered[@]}" || exit 1
check "produced 100 more (Hive again)" bash -c "seq 1 100 | sed 's/^/y-/' | kcat -b 127.0.0.1:$KAFKA_PORT -P -t $topic"
check "Hive commits again after adopting back" wait_for 30 caught_up
end=$(log_end)
stop_floe
hive_table > "$work/hive.json"
table_files "$(meta_of "$work/hive.json")" > "$work/files.json"
check "the table holds offsets 0..$end once each, acknowledged records included (DuckDB)" node "$js/check_crash.mjs" "$work/files.json" "$acked"
rows=$(/usr/bin/python3 -c 'import json,sys; print(sum(f["records"] for f in json.load(open(sys.argv[1]))["files"]))' "$work/files.json")
check "row count is the log end ($rows = $end)" test "$rows" -eq "$end"
finish
