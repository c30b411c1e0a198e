#!/usr/bin/env bash
# Ingest from Kafka (issue 17): a second `floe serve` is the "existing Kafka cluster" (a real
# Kafka-protocol server on its own ports and data dir). kcat produces to it (keys, headers,
# producer timestamps, compressed batches; one partition whose offsets start above 0 after DeleteRecords); the
# mirror floe's kafka source copies it. Judges: kcat reading the mirror (same records at the
# same offsets, also after kill -9 of the mirror mid-stream), and DuckDB reading the mirror's
# Iceberg table (every record once). Producing to the mirror is refused.
# usage: ingest_kafka_test.sh FLOE_BIN RDKAFKA_ADMIN_BIN
FLOE_BIN="$(realpath "$1")"
ADMIN="$(realpath "$2")"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/lib.sh"
js="$here/../js/e2e"
work="$(mktemp -d)"
mkdir -p "$work/src" "$work/mir"
SRC_PID=; MIR_PID=; A_PID=; B_PID=; BP_PID=
cleanup() {
  [ -n "$BP_PID" ] && kill -9 "$BP_PID" 2>/dev/null
  [ -n "$SRC_PID" ] && kill -9 "$SRC_PID" 2>/dev/null
  [ -n "$MIR_PID" ] && kill -9 "$MIR_PID" 2>/dev/null
  [ -n "$A_PID" ] && kill -9 "$A_PID" 2>/dev/null
  [ -n "$B_PID" ] && kill -9 "$B_PID" 2>/dev/null
  [ -n "${BG_PID:-}" ] && kill "$BG_PID" 2>/dev/null
  wait 2>/dev/null
  [ -n "${KEEP:-}" ] && echo "kept $work" || rm -rf "$work"
}
trap cleanup EXIT

# ---- the source cluster ----
start_floe "$work/src" --set floe.default-partitions=2 || exit 1
SRC_PID=$FLOE_PID; SRC=127.0.0.1:$KAFKA_PORT; FLOE_PID=
produce() { # topic from to partition [codec]
  seq "$2" "$3" | awk -v p="$1" '{printf "k%d:%s-value-%d\n", $1 % 7, p, $1}' \
    | kcat -P -b "$SRC" -t "$1" -p "$4" -z "${5:-none}" -K: -H trace=t1 -H "app=ingest test" 2>>"$work/kcat.err"
}
produce orders 1 200 0 zstd
produce orders 201 300 1 lz4
produce gap 1 20 0
check "DeleteRecords on the source moves partition gap-0 to 12" test "$("$ADMIN" "$SRC" delete-records gap 0 12 2>>"$work/admin.err")" = 12
produce gap 21 25 0
dump() { # broker topic -> every record as "p o key value ts headers", sorted
  kcat -C -b "$1" -t "$2" -o beginning -e -q -f '%p %o %k %s %T %h\n' 2>>"$work/kcat.err" | sort -k1,1n -k2,2n
}
dump "$SRC" orders > "$work/src_orders"
dump "$SRC" gap > "$work/src_gap"
check "source holds 300 orders records" test "$(wc -l <"$work/src_orders")" -eq 300
check "source gap-0 starts at offset 12" test "$(head -1 "$work/src_gap" | cut -d' ' -f2)" = 12

# ---- the mirror ----
mirror_args=(--set floe.ingest.sources.up.type=kafka --set floe.ingest.sources.up.bootstrap-servers="$SRC"
  --set 'floe.ingest.sources.up.topics=^(orders|gap)$' --set floe.ingest.sources.up.start=earliest
  --set floe.topic-defaults.remote.storage.enable=true --set floe.topic-defaults.segment.ms=1000
  --set floe.storage.worker.tick-interval=300ms --set floe.auto-create-topics=false)
start_floe "$work/mir" "${mirror_args[@]}" || exit 1
MIR_PID=$FLOE_PID; MIR=127.0.0.1:$KAFKA_PORT; MIR_HTTP=$HTTP_PORT; FLOE_PID=
same() { dump "$MIR" "$1" > "$work/mir_$1"; cmp -s "$work/src_$1" "$work/mir_$1"; }
check "mirror of orders: identical records at identical offsets" wait_for 30 same orders
check "mirror of gap: starts at the source's offset 12, identical records" wait_for 30 same gap
earliest=$(kcat -b "$MIR" -Q -t "gap:0:-2" 2>/dev/null | awk '{print $NF}')
check "ListOffsets earliest of the mirror's gap-0 is 12 (got $earliest)" test "$earliest" = 12
parts=$(kcat -b "$MIR" -L -t orders 2>/dev/null | grep -c "partition [0-9]")
check "mirror topic has the source's 2 partitions (got $parts)" test "$parts" -eq 2
out=$(echo "x:y" | kcat -P -b "$MIR" -t orders -p 0 -K: 2>&1)
check "producing to the mirror is refused as not authorized ($out)" contains "$out" "uthoriz"
ready=$(curl -s "http://127.0.0.1:$MIR_HTTP/readyz")
check "readyz has the source up ($ready)" contains "$ready" '"ingest-up":{"status":"up"'

# ---- kill -9 of the mirror mid-stream, restart: nothing twice, nothing missing ----
( for i in $(seq 0 19); do produce orders $((1000 + i * 50)) $((1049 + i * 50)) $((i % 2)); sleep 0.1; done ) &
BG_PID=$!
sleep 0.7
kill -9 "$MIR_PID"; wait "$MIR_PID" 2>/dev/null; MIR_PID=
sleep 0.5
start_floe "$work/mir" "${mirror_args[@]}" || exit 1
MIR_PID=$FLOE_PID; MIR=127.0.0.1:$KAFKA_PORT; MIR_HTTP=$HTTP_PORT; FLOE_PID=
wait "$BG_PID"; BG_PID=
sleep 0.3
kill -9 "$MIR_PID"; wait "$MIR_PID" 2>/dev/null; MIR_PID=
produce orders 5000 5099 1 snappy
start_floe "$work/mir" "${mirror_args[@]}" || exit 1
MIR_PID=$FLOE_PID; MIR=127.0.0.1:$KAFKA_PORT; MIR_HTTP=$HTTP_PORT; FLOE_PID=
# kill -9 of the source while the mirror runs; it comes back on the same port with more data.
kill -9 "$SRC_PID"; wait "$SRC_PID" 2>/dev/null; SRC_PID=
sleep 1
"$FLOE_BIN" serve --set floe.data-dir="$work/src/data" --set floe.kafka.listen=$SRC \
  --set floe.http.listen=127.0.0.1:$(free_port) --set floe.default-partitions=2 ${E2E_EXTRA_SETS:-} $(redis_sets "$work/src") \
  >>"$work/src/floe.out" 2>>"$work/src/floe.log" &
SRC_PID=$!
check "source floe back after kill -9" wait_for 10 bash -c "kcat -b $SRC -L -t orders >/dev/null 2>&1"
produce orders 6000 6099 0
dump "$SRC" orders > "$work/src_orders"
check "source holds 1500 orders records" test "$(wc -l <"$work/src_orders")" -eq 1500
check "after two kill -9 of the mirror and one of the source: identical records at identical offsets" wait_for 30 same orders
check "mirror log is the same after restart (gap)" same gap
n_dup=$(cut -d' ' -f1,2 "$work/mir_orders" | uniq -d | wc -l)
check "no offset twice in the mirror" test "$n_dup" -eq 0

# ---- the Iceberg table of each mirror topic holds every record once ----
table_same() { # topic
  /usr/bin/python3 "$here/iceberg_files.py" "$work/mir/data/catalog.db" floe "$1" > "$work/files_$1.json" 2>"$work/py.err" || return 1
  node "$js/table_dump.mjs" "$work/files_$1.json" > "$work/tab_$1" 2>"$work/node.err" || { cat "$work/node.err"; return 1; }
  # kcat prints the timestamp as %T; the table keeps it as kafka_timestamp.
  cmp -s "$work/src_$1" "$work/tab_$1"
}
check "Iceberg table orders: every source record once, same offsets, keys, values, headers, timestamps" wait_for 60 table_same orders
check "Iceberg table gap: starts at 12, every record once" wait_for 30 table_same gap
if [ "$e2e_failed" -gt 0 ]; then
  diff "$work/src_orders" "$work/tab_orders" | head -5
  tail -20 "$work/mir/floe.log"
fi

# ---- /v1/ingest and metrics, once the table caught up ----
ingest_ok() {
  curl -s "http://127.0.0.1:$MIR_HTTP/v1/ingest" > "$work/ingest.json"
  /usr/bin/python3 - "$work/ingest.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
[s] = j["sources"]
assert s["name"] == "up" and s["type"] == "kafka" and s["state"] == "running", s
parts = {(p["topic"], p["partition"]): p for p in s["partitions"]}
want = {("orders", 0): 800, ("orders", 1): 700, ("gap", 0): 25, ("gap", 1): 0}
for k, end in want.items():
    p = parts[k]
    assert p["local_position"] == end and p["source_position"] == end, (k, p)
    assert p["lag_records"] == 0 and p["lag_seconds"] == 0 and p["state"] == "caught_up", (k, p)
    assert p["committed_position"] == end, (k, p)  # the table holds it all
PY
}
check "/v1/ingest: every partition caught up, local = source = committed positions" wait_for 20 ingest_ok
metrics=$(curl -s "http://127.0.0.1:$MIR_HTTP/metrics")
check "metrics: source up" contains "$metrics" 'floe_ingest_source_up{source="up"} 1'
check "metrics: lag 0 for orders-1" contains "$metrics" 'floe_ingest_lag_records{source="up",topic="orders",partition="1"} 0'
check "metrics: local position of gap-0" contains "$metrics" 'floe_ingest_local_position{source="up",topic="gap",partition="0"} 25'
lint=$(promtool check metrics <<<"$metrics" 2>&1); check "promtool accepts metrics ($lint)" test -z "$lint"

# ---- two Floe instances in one consumer group, one catalog and warehouse (shared) ----
# The group splits topic shared's 4 partitions; A is killed -9 while records flow: B takes its
# partitions from what the table committed; A comes back (kill -9 of B's peer again later) and
# takes a share back from the table's position; the source is killed -9 meanwhile. The table
# holds every source record once.
check "source topic shared with 4 partitions" "$ADMIN" "$SRC" create-topic shared 4
for p in 0 1 2 3; do produce shared $((p * 10000 + 1)) $((p * 10000 + 200)) $p; done
mkdir -p "$work/a" "$work/b" "$work/lake"
pair_args=(--set floe.ingest.sources.up.type=kafka --set floe.ingest.sources.up.bootstrap-servers="$SRC"
  --set floe.ingest.sources.up.topics=shared --set floe.ingest.sources.up.group-id=pair
  --set floe.ingest.sources.up.librdkafka.session.timeout.ms=6000
  --set floe.ingest.sources.up.librdkafka.heartbeat.interval.ms=500
  --set floe.storage.remote.catalog.uri="sqlite://$work/lake/catalog.db" --set floe.storage.remote.path="file://$work/lake/wh"
  --set floe.topic-defaults.remote.storage.enable=true --set floe.topic-defaults.segment.ms=700
  --set floe.storage.worker.tick-interval=300ms --set floe.auto-create-topics=false)
start_floe "$work/a" "${pair_args[@]}" || exit 1
A_PID=$FLOE_PID; A_HTTP=$HTTP_PORT; FLOE_PID=
start_floe "$work/b" "${pair_args[@]}" || exit 1
B_PID=$FLOE_PID; B_HTTP=$HTTP_PORT; FLOE_PID=
owned() { # http port -> partitions of shared this instance owns, e.g. "0,1"
  curl -s "http://127.0.0.1:$1/v1/ingest" | /usr/bin/python3 -c "import json,sys
print(','.join(str(p['partition']) for p in sorted(json.load(sys.stdin)['sources'][0]['partitions'], key=lambda p: p['partition'])))" 2>/dev/null
}
split() { a=$(owned $A_HTTP); b=$(owned $B_HTTP); [ -n "$a" ] && [ -n "$b" ] && [ $(( $(tr ',' '\n' <<<"$a,$b" | sort -u | wc -l) )) -eq 4 ]; }
check "the group splits shared's partitions between A and B" wait_for 30 split
echo "A owns $(owned $A_HTTP), B owns $(owned $B_HTTP)"
flow() { # rounds from to: records to every partition of shared, 20 a round, every 0.2 s
  for i in $(seq "$1" "$2"); do for p in 0 1 2 3; do produce shared $((p * 10000 + 200 + i * 20 - 19)) $((p * 10000 + 200 + i * 20)) $p; done; sleep 0.2; done
}
flow 1 15 &
BG_PID=$!
sleep 2
kill -9 "$A_PID"; wait "$A_PID" 2>/dev/null; A_PID=
check "B takes A's partitions after A's kill -9" wait_for 30 bash -c "[ \"\$(curl -s http://127.0.0.1:$B_HTTP/v1/ingest | /usr/bin/python3 -c \"import json,sys; print(len(json.load(sys.stdin)['sources'][0]['partitions']))\")\" = 4 ]"
wait "$BG_PID"; BG_PID=
# kill -9 of the source while B catches up (no producer runs while it is down); back on its port.
kill -9 "$SRC_PID"; wait "$SRC_PID" 2>/dev/null; SRC_PID=
sleep 0.5
"$FLOE_BIN" serve --set floe.data-dir="$work/src/data" --set floe.kafka.listen=$SRC \
  --set floe.http.listen=127.0.0.1:$(free_port) --set floe.default-partitions=2 ${E2E_EXTRA_SETS:-} $(redis_sets "$work/src") \
  >>"$work/src/floe.out" 2>>"$work/src/floe.log" &
SRC_PID=$!
check "source floe back after kill -9 (pair)" wait_for 10 bash -c "kcat -b $SRC -L -t shared >/dev/null 2>&1"
flow 16 30 &
BG_PID=$!
start_floe "$work/a" "${pair_args[@]}" || exit 1
A_PID=$FLOE_PID; A_HTTP=$HTTP_PORT; FLOE_PID=
check "A, back, gets a share again" wait_for 30 split
wait "$BG_PID"; BG_PID=
dump "$SRC" shared > "$work/src_shared"
check "source holds 3200 shared records" test "$(wc -l <"$work/src_shared")" -eq 3200
pair_table_same() {
  /usr/bin/python3 "$here/iceberg_files.py" "$work/lake/catalog.db" floe shared > "$work/files_shared.json" 2>"$work/py.err" || return 1
  node "$js/table_dump.mjs" "$work/files_shared.json" > "$work/tab_shared" 2>"$work/node.err" || return 1
  cmp -s "$work/src_shared" "$work/tab_shared"
}
check "one table written by A and B: every source record once (DuckDB over the Avro-listed files)" wait_for 60 pair_table_same
if [ "$e2e_failed" -gt 0 ]; then
  diff "$work/src_shared" "$work/tab_shared" | head -5
  grep -h "owns\|no longer\|table holds\|ERROR\|error" "$work/a/floe.log" "$work/b/floe.log" | tail -20
fi
kill -TERM "$A_PID" "$B_PID"; wait "$A_PID" "$B_PID"; A_PID=; B_PID=

# ---- backpressure: a third mirror whose warehouse is unwritable (a file where its directory
# was) pauses orders above max-local-bytes=4KiB, consumes nothing more while paused, and
# resumes by itself once the warehouse is back ----
mkdir -p "$work/bp" "$work/bpwh"
start_floe "$work/bp" --set floe.ingest.sources.bp.type=kafka --set floe.ingest.sources.bp.bootstrap-servers="$SRC" \
  --set floe.ingest.sources.bp.topics=orders --set floe.ingest.sources.bp.topic-prefix=bp. \
  --set floe.ingest.sources.bp.max-local-bytes=4KiB --set floe.storage.remote.path="file://$work/bpwh/w" \
  --set floe.topic-defaults.remote.storage.enable=true --set floe.topic-defaults.segment.ms=500 \
  --set floe.storage.worker.tick-interval=200ms --set floe.auto-create-topics=false || exit 1
BP_PID=$FLOE_PID; BP_HTTP=$HTTP_PORT; FLOE_PID=
bp_state() { # "paused pauses local-sum committed-sum state"
  curl -s "http://127.0.0.1:$BP_HTTP/v1/ingest" | /usr/bin/python3 -c "import json,sys
s=json.load(sys.stdin)['sources'][0]; ps=s['partitions']
print(s['paused'], s['pauses'], sum(p['local_position'] for p in ps), sum(p['committed_position'] for p in ps), s['state'])"; }
bp_at() { read -r a b c d e <<<"$(bp_state)"; [ "$a" = False ] && [ "$c" = "$1" ] && [ "$d" = "$1" ]; }
check "backpressure mirror: the 1500 orders records mirrored and committed" wait_for 30 bp_at 1500
mv "$work/bpwh" "$work/bpwh.away" && touch "$work/bpwh"
produce orders 7000 7199 0
check "backpressure: the Kafka source pauses with the lake down" wait_for 20 bash -c \
  "curl -s http://127.0.0.1:$BP_HTTP/metrics | grep -q '^floe_ingest_paused{source=\"bp\"} 1'"
before=$(bp_state)
produce orders 7200 7399 0
sleep 2
during=$(bp_state)
check "backpressure: paused, nothing more consumed ($before / $during)" bash -c \
  "read a b c d e <<<'$during'; read x y z w v <<<'$before'; [ \$a = True ] && [ \$e = paused ] && [ \$c = \$z ] && [ \$c -lt 1900 ]"
rm "$work/bpwh" && mv "$work/bpwh.away" "$work/bpwh"
check "backpressure: resumes by itself once the lake is back, all 1900 mirrored and committed ($(bp_state))" wait_for 60 bp_at 1900
kill -TERM "$BP_PID"; wait "$BP_PID"; BP_PID=

# ---- idle-seal: segments never reach segment.ms (7 days) nor max-age (1 h) here; the mirror
# seals once the source has nothing more (end of partition) and nothing came for 200 ms, so the
# backlog, then a later burst, land in Iceberg within seconds ----
mkdir -p "$work/idle"
start_floe "$work/idle" --set floe.ingest.sources.i.type=kafka --set floe.ingest.sources.i.bootstrap-servers="$SRC" \
  --set floe.ingest.sources.i.topics=orders --set floe.ingest.sources.i.topic-prefix=idle. \
  --set floe.ingest.sources.i.max-age=1h --set floe.ingest.sources.i.idle-seal=200ms \
  --set floe.topic-defaults.remote.storage.enable=true \
  --set floe.storage.worker.tick-interval=1h --set floe.auto-create-topics=false || exit 1
BP_PID=$FLOE_PID; BP_HTTP=$HTTP_PORT; FLOE_PID=
check "idle-seal: the 1900 orders records mirrored and committed without max-age or segment.ms ($(bp_state))" wait_for 30 bp_at 1900
check "idle-seal: the mirror says why it sealed" grep -q "sealed by idle-seal" "$work/idle/floe.log"
produce orders 7400 7599 1
check "idle-seal: a later burst lands too, 2100 committed ($(bp_state))" wait_for 30 bp_at 2100
kill -TERM "$BP_PID"; wait "$BP_PID"; BP_PID=

# ---- the source goes away: readyz names the problem, no crash ----
kill -9 "$SRC_PID"; wait "$SRC_PID" 2>/dev/null; SRC_PID=
down() { curl -s "http://127.0.0.1:$MIR_HTTP/readyz" > "$work/ready.json"; grep -q '"ingest-up":{"status":"down"' "$work/ready.json"; }
check "readyz reports the source down when it is unreachable" wait_for 30 down
check "the down message names the source's address ($(cat "$work/ready.json"))" grep -q "$SRC" "$work/ready.json"

kill -TERM "$MIR_PID"; wait "$MIR_PID"; rc=$?; MIR_PID=
check "mirror stops cleanly (rc $rc)" test "$rc" -eq 0
grep -q "stopping ingest" "$work/mir/floe.log"; check "ingest stopped on SIGTERM" test $? -eq 0
finish
