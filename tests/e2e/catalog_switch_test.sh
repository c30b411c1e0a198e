#!/usr/bin/env bash
# Issue 12's first story: a warehouse written by the SQL catalog, then (README's line) by the
# filesystem catalog, then by the SQL catalog again. Each switch is refused for the table until
# `floe tables adopt` says otherwise; no v<N>.metadata.json is ever replaced; local retention
# deletes nothing the current catalog's table does not hold; kcat reads every offset from 0 at
# every stage but one (a stale catalog cannot serve what only the newer table holds, until the
# table is adopted back), and at the end DuckDB finds every record exactly once in the table.
FLOE_BIN="$(realpath "$1")"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/lib.sh"
js="$here/../js/e2e"
work="$(mktemp -d)"
trap 'stop_floe; [ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
topic="cs.events"
table=cs_events
meta="$work/data/warehouse/floe/$table/metadata"
tiered=(--set floe.topic-defaults.remote.storage.enable=true --set floe.topic-defaults.segment.ms=500
        --set floe.storage.worker.tick-interval=200ms --set floe.topic-defaults.local.retention.ms=500)
fs_catalog=(--set floe.storage.remote.catalog.type=filesystem)

positions() { # CATALOG_DB|path:WAREHOUSE -> the table's committed position of cs.events-0
  /usr/bin/python3 "$here/iceberg_files.py" "$1" floe "$table" 2>/dev/null |
    /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["positions"].get("cs.events-0", 0))'
}
covered() { [ "$(positions "$1")" -ge "$2" ]; }
local_start() {
  curl -s "http://127.0.0.1:$HTTP_PORT/v1/topics" |
    /usr/bin/python3 -c 'import json,sys; print([t for t in json.load(sys.stdin)["topics"] if t["name"]=="cs.events"][0]["partitions"][0]["local_start"])'
}
local_start_above() { local s; s=$(local_start 2>/dev/null) && [ -n "$s" ] && [ "$s" -gt "$1" ]; }
# Every v<N>.metadata.json with its checksum; later snapshots of this list must contain it unchanged.
snapshot_versions() { (cd "$meta" && sha256sum v*.metadata.json | sort -k2); }
kept_versions() { # FILE: every line of an earlier snapshot is still there
  local now; now=$(snapshot_versions)
  while read -r line; do grep -qxF "$line" <<<"$now" || { echo "changed or gone: $line"; return 1; }; done <"$1"
}
kcat_reads_all() { # N: offsets 0..N-1 once each, in order, from the beginning (both tiers)
  kcat -b 127.0.0.1:$KAFKA_PORT -C -t "$topic" -o beginning -e -q -f '%o\n' >"$work/offsets" 2>/dev/null
  /usr/bin/python3 -c '
import sys
got=[int(l) for l in open(sys.argv[1])]
n=int(sys.argv[2])
assert got==list(range(n)), f"read {len(got)} offsets; first difference at {next((i for i,(a,b) in enumerate(zip(got,range(n))) if a!=b), min(len(got),n))}"
' "$work/offsets" "$1"
}

# 1. The SQL catalog (the default) offloads 0..1000 and local retention trims the log.
start_floe "$work" "${tiered[@]}" || exit 1
check "produced 0..1000" node "$js/produce.mjs" 127.0.0.1:$KAFKA_PORT "$topic" 0 1000
check "sql catalog: table covers 1000" wait_for 30 covered "$work/data/catalog.db" 1000
check "sql catalog: local retention trims the log" wait_for 20 local_start_above 0
stop_floe
snapshot_versions >"$work/v.1"
check "sql catalog wrote v1.. (got $(wc -l <"$work/v.1"))" test "$(wc -l <"$work/v.1")" -ge 2

# 2. The filesystem catalog on the same warehouse (the README's line): the table is refused,
#    produce still works, and nothing is deleted locally that the lake does not hold.
start_floe "$work" "${tiered[@]}" "${fs_catalog[@]}" || exit 1
check "produced 1000..2000" node "$js/produce.mjs" 127.0.0.1:$KAFKA_PORT "$topic" 1000 2000
check "filesystem catalog refuses the sql table and says how to adopt it" \
  wait_for 20 grep -q "floe tables adopt floe.$table" "$work/floe.log"
ready=$(curl -s "http://127.0.0.1:$HTTP_PORT/readyz")
check "readyz shows the storage worker down" contains "$ready" '"storage-worker":{"status":"down"'
sleep 1.5
start2=$(local_start)
check "nothing beyond the table's 1000 deleted locally (local start $start2)" test "$start2" -le 1000
check "kcat reads 0..2000 from the beginning" kcat_reads_all 2000
check "no metadata file replaced" kept_versions "$work/v.1"
stop_floe

# 3. `make run` again (SQL catalog): it still owns the table and offloads what it missed.
start_floe "$work" "${tiered[@]}" || exit 1
check "produced 2000..3000" node "$js/produce.mjs" 127.0.0.1:$KAFKA_PORT "$topic" 2000 3000
check "sql catalog: table covers 3000" wait_for 30 covered "$work/data/catalog.db" 3000
check "local retention goes on" wait_for 20 local_start_above 1000
check "kcat reads 0..3000 from the beginning across tiers" kcat_reads_all 3000
stop_floe
check "no metadata file replaced" kept_versions "$work/v.1"
snapshot_versions >"$work/v.2"

# 4. Moving the table to the filesystem catalog on purpose: `floe tables adopt`.
out=$("$FLOE_BIN" tables adopt "$topic" --set floe.data-dir="$work/data" "${fs_catalog[@]}" 2>&1)
check "floe tables adopt (filesystem): $out" contains "$out" "adopted by the filesystem catalog"
start_floe "$work" "${tiered[@]}" "${fs_catalog[@]}" || exit 1
check "produced 3000..4000" node "$js/produce.mjs" 127.0.0.1:$KAFKA_PORT "$topic" 3000 4000
check "filesystem catalog: table covers 4000 after adoption" wait_for 30 covered "path:$work/data/warehouse" 4000
check "filesystem catalog: local retention goes on" wait_for 20 local_start_above 3000
stop_floe
check "no metadata file replaced" kept_versions "$work/v.2"
snapshot_versions >"$work/v.3"

# 5. The SQL catalog again, which still points at its older version: a commit built on it would
#    replace v<N>; refused instead, local deletion stops, until the table is adopted back.
start_floe "$work" "${tiered[@]}" || exit 1
check "produced 4000..5000" node "$js/produce.mjs" 127.0.0.1:$KAFKA_PORT "$topic" 4000 5000
start5=$(local_start)
check "sql catalog refuses the table the filesystem catalog moved on" \
  wait_for 20 grep -q "but metadata/ holds v" "$work/floe.log"
sleep 1.5
check "local deletion stopped (local start $start5 -> $(local_start))" test "$(local_start)" -eq "$start5" -a "$start5" -le 4000
check "no metadata file replaced" kept_versions "$work/v.3"
check "the sql catalog did not move (still at 3000)" test "$(positions "$work/data/catalog.db")" -eq 3000
stop_floe
out=$("$FLOE_BIN" tables adopt "floe.$table" --set floe.data-dir="$work/data" 2>&1)
check "floe tables adopt (sql): $out" contains "$out" "adopted by the sql catalog"
out=$("$FLOE_BIN" tables adopt "floe.$table" --set floe.data-dir="$work/data" 2>&1)
check "adopting again changes nothing: $out" contains "$out" "already owned by the sql catalog"
start_floe "$work" "${tiered[@]}" || exit 1
check "sql catalog: table covers 5000 after adoption" wait_for 30 covered "$work/data/catalog.db" 5000
check "local retention goes on" wait_for 20 local_start_above 4000
check "kcat reads 0..5000 from the beginning across tiers" kcat_reads_all 5000
/usr/bin/python3 "$here/iceberg_files.py" "$work/data/catalog.db" floe "$table" >"$work/files.json"
check "DuckDB: every record 0..5000 once in the table" node "$js/check_table.mjs" "$work/files.json" 0 5000 1 "$topic"
check "no metadata file replaced" kept_versions "$work/v.3"
stop_floe

# 6. The catalog and the table are lost (restored from an empty backup; or a broker pointed at
#    another lake): the marker says 5000 was offloaded, the new table holds nothing, and the
#    history below the local start is in neither tier. Issue 26: never "nothing there" for it.
#    Fetch and ListOffsets below the local start answer the retriable KAFKA_STORAGE_ERROR (56),
#    the HTTP lookup 503, /readyz names the table; nothing is offloaded above the hole and
#    nothing deleted locally, until DeleteRecords gives the history up.
rm -rf "$work/data/catalog.db"* "$work/data/warehouse/floe/$table"
start_floe "$work" "${tiered[@]}" || exit 1
check "the lost offload is reported at error level, naming the table" \
  wait_for 20 grep -q "error.*table $table holds cs.events-0 only below offset 0 but the local marker says 5000 was offloaded.*are in neither tier" "$work/floe.log"
start6=$(local_start)
check "history is below the local start ($start6)" test "$start6" -gt 0
probe() { local cmd=$1; shift; /usr/bin/python3 "$here/kafka_probe.py" "$cmd" 127.0.0.1:$KAFKA_PORT "$topic" 0 "$@" 2>&1; }
out=$(probe fetch 0)
check "Fetch at offset 0: KAFKA_STORAGE_ERROR (got '$out')" test "${out%% *}" = 56
out=$(probe fetch $((start6 - 1)))
check "Fetch just below the local start: KAFKA_STORAGE_ERROR (got '$out')" test "${out%% *}" = 56
out=$(probe list-offsets -2)
check "ListOffsets earliest: KAFKA_STORAGE_ERROR (got '$out')" test "${out%% *}" = 56
out=$(probe list-offsets 0)
check "ListOffsets by time from 0: KAFKA_STORAGE_ERROR (got '$out')" test "${out%% *}" = 56
out=$(probe list-offsets -1)
check "ListOffsets latest still answers (got '$out')" test "${out%% *}" = 0
# librdkafka (kcat) from offset 0: no record, no out-of-range reset, the storage error seen.
timeout 8 kcat -b 127.0.0.1:$KAFKA_PORT -C -t "$topic" -p 0 -o 0 -e -q -f '%o\n' -d fetch \
  >"$work/kcat6.out" 2>"$work/kcat6.err"
check "kcat from offset 0 gets no record ($(wc -l <"$work/kcat6.out") read)" test ! -s "$work/kcat6.out"
check "kcat sees the storage error" grep -qi "KAFKA_STORAGE_ERROR\|Disk error" "$work/kcat6.err"
check "kcat is never told out of range" bash -c "! grep -qi 'out of range\|OFFSET_OUT_OF_RANGE' '$work/kcat6.err'"
code=$(curl -s -o "$work/lookup6" -w '%{http_code}' "http://127.0.0.1:$HTTP_PORT/v1/topics/$topic/partitions/0/records?offset=0&limit=5")
check "HTTP lookup by offset 0: 503 (got $code: $(head -c 300 "$work/lookup6"))" test "$code" = 503
check "... naming the table" grep -q "floe.$table misses offsets 0\.\." "$work/lookup6"
code=$(curl -s -o "$work/lookup6k" -w '%{http_code}' "http://127.0.0.1:$HTTP_PORT/v1/topics/$topic/records?key=no-such-key")
check "HTTP lookup by key: 503 (got $code)" test "$code" = 503
code=$(curl -s -o "$work/ready6" -w '%{http_code}' "http://127.0.0.1:$HTTP_PORT/readyz")
check "readyz not ready (got $code)" test "$code" = 503
check "readyz names the table: $(head -c 600 "$work/ready6")" grep -q "$table misses offsets 0\.\." "$work/ready6"
check "produced 5000..5500" node "$js/produce.mjs" 127.0.0.1:$KAFKA_PORT "$topic" 5000 5500
# (before, the local start may be the end of the log: everything was offloaded and trimmed)
out=$(probe fetch "$start6")
check "Fetch at the local start still serves records (got '$out')" test "${out%% *}" = 0 -a "${out##* }" -gt 0
sleep 2
check "local deletion stays stopped (local start $start6 -> $(local_start))" test "$(local_start)" -eq "$start6"
p6=$(positions "$work/data/catalog.db")
check "nothing offloaded above the hole (position '${p6:-none}')" test "${p6:-0}" -le 0
# Giving the history up on purpose: DeleteRecords up to the local start.
out=$(probe delete-records "$start6")
check "DeleteRecords to the local start (got '$out')" test "$out" = "0 $start6"
check "new records are offloaded (table covers 5500)" wait_for 30 covered "$work/data/catalog.db" 5500
rows=$(/usr/bin/python3 "$here/iceberg_files.py" "$work/data/catalog.db" floe "$table" |
  /usr/bin/python3 -c 'import json,sys; print(sum(f["records"] for f in json.load(sys.stdin)["files"]))')
check "the new table holds offsets $start6..5500 ($rows rows)" test "$rows" -eq $((5500 - start6))
check "readyz ready again" wait_for 10 bash -c "[ \"\$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:$HTTP_PORT/readyz)\" = 200 ]"
stop_floe; rc=$?
check "floe stops cleanly (rc=$rc)" test "$rc" -eq 0
finish
