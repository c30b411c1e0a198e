#!/usr/bin/env bash
# Ingest as the README shows it (issue 25, items 6 and 8).
# 1. `floe serve --config` with the README's own ingest YAML, taken from README.md at run time
#    (only the addresses are substituted), mirroring a real Kafka-protocol source (a second floe)
#    and a real nats-server JetStream stream in mode duplicate: the mirrors land in Iceberg by
#    default (DuckDB reads the tables), while the source that opts out (remote-storage: false)
#    keeps its mirror local, even with segments sealed every second.
# 2. A Kafka source whose broker is unreachable, with floe.log.format=json (--log-format json): every stderr line is a
#    JSON object, and librdkafka's own messages are among them (not raw "%3|...|FAIL|" lines).
# usage: ingest_readme_test.sh FLOE_BIN NATS_TOOL
FLOE_BIN="$(realpath "$1")"
NT="$(realpath "$2")"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/lib.sh"
js="$here/../js/e2e"
readme="$here/../../README.md"
work="$(mktemp -d)"
mkdir -p "$work/src" "$work/mir" "$work/nats" "$work/down"
SRC_PID=; MIR_PID=; NATS_PID=; DOWN_PID=
cleanup() {
  for p in "$SRC_PID" "$MIR_PID" "$NATS_PID" "$DOWN_PID"; do [ -n "$p" ] && kill -9 "$p" 2>/dev/null; done
  wait 2>/dev/null
  [ -n "${KEEP:-}" ] && echo "kept $work" || rm -rf "$work"
}
trap cleanup EXIT

# ---- the sources: a Kafka-protocol server and a JetStream stream ----
start_floe "$work/src" || exit 1
SRC_PID=$FLOE_PID; SRC=127.0.0.1:$KAFKA_PORT; FLOE_PID=
NATS_PORT=$(free_port); URL="nats://127.0.0.1:$NATS_PORT"
nats-server -js -sd "$work/nats" -a 127.0.0.1 -p "$NATS_PORT" >>"$work/nats.log" 2>&1 &
NATS_PID=$!
check "nats-server up" wait_for 10 bash -c "echo > /dev/tcp/127.0.0.1/$NATS_PORT" 2>/dev/null
check "stream EVENTS created" wait_for 10 "$NT" "$URL" create EVENTS "ev.>"
check "published 1..300 to EVENTS" "$NT" "$URL" publish ev.a 1 300
produce() { # topic from to
  seq "$2" "$3" | awk -v t="$1" '{printf "k%d:%s-value-%d\n", $1 % 5, t, $1}' \
    | kcat -P -b "$SRC" -t "$1" -K: -H "app=readme" 2>>"$work/kcat.err"
}
dump() { # broker topic -> every record as "p o key value ts headers", sorted
  kcat -C -b "$1" -t "$2" -o beginning -e -q -f '%p %o %k %s %T %h\n' 2>>"$work/kcat.err" | sort -k1,1n -k2,2n
}
produce orders.created 1 400
produce audit 1 50
dump "$SRC" orders.created > "$work/src_orders"
dump "$SRC" audit > "$work/src_audit"
check "source holds 400 orders.created and 50 audit records" \
  test "$(wc -l <"$work/src_orders")" -eq 400 -a "$(wc -l <"$work/src_audit")" -eq 50
"$NT" "$URL" dump EVENTS 1 300 2>>"$work/nt.err" \
  | awk '{printf "0 %d %s %s %s %s\n", $1 - 1, $2, $3, $4, $5}' > "$work/src_events"
check "EVENTS dump has 300 messages" test "$(wc -l <"$work/src_events")" -eq 300

# ---- the README's YAML, as it is, with the addresses of the sources above ----
/usr/bin/python3 - "$readme" > "$work/readme.yaml" <<'PY'
import sys
text = open(sys.argv[1]).read()
section = text[text.index("## Ingest:"):]
start = section.index("```yaml\n") + len("```yaml\n")
print(section[start:section.index("```\n", start)], end="")
PY
check "README's ingest section has a YAML block with the three sources" \
  bash -c "grep -q '^      orders:' '$work/readme.yaml' && grep -q '^      events:' '$work/readme.yaml' && grep -q 'remote-storage: false' '$work/readme.yaml'"
sed -e "s#kafka-1:9092#$SRC#g" -e "s#nats://127.0.0.1:4222#$URL#g" "$work/readme.yaml" > "$work/floe.yaml"
check "only the three address lines differ from the README's YAML" \
  test "$(diff "$work/readme.yaml" "$work/floe.yaml" | grep -c '^<')" -eq 3
# The opt-out source seals a segment every second, so its mirror would land if it were tiered.
start_floe "$work/mir" --config "$work/floe.yaml" --set floe.ingest.sources.audit.max-age=1s || exit 1
MIR_PID=$FLOE_PID; MIR=127.0.0.1:$KAFKA_PORT; MIR_HTTP=$HTTP_PORT; FLOE_PID=

same() { dump "$MIR" "$1" > "$work/mir_$2"; cmp -s "$work/src_$2" "$work/mir_$2"; }
check "orders.created mirrored: identical records at identical offsets" wait_for 30 same orders.created orders
check "events mirrored (mode duplicate): every message at sequence - 1" wait_for 30 same events events
check "audit mirrored locally" wait_for 30 same audit audit

table_same() { # table name
  /usr/bin/python3 "$here/iceberg_files.py" "$work/mir/data/catalog.db" floe "$1" > "$work/files_$1.json" 2>"$work/py.err" || return 1
  node "$js/table_dump.mjs" "$work/files_$1.json" > "$work/tab_$1" 2>"$work/node.err" || { cat "$work/node.err"; return 1; }
  cmp -s "$work/src_$2" "$work/tab_$1"
}
# The storage worker ticks every 10 s by default; max-age seals every 5 s (orders) and 1 s (events).
check "Kafka mirror lands in Iceberg by default: table orders_created holds every record once (DuckDB)" \
  wait_for 90 table_same orders_created orders
check "JetStream duplicate mirror lands in Iceberg by default: table events holds every message once (DuckDB)" \
  wait_for 60 table_same events events
v1=$(curl -s "http://127.0.0.1:$MIR_HTTP/v1/ingest")
positions() { # source -> "local committed" of its first partition
  /usr/bin/python3 -c "import json,sys
s=[s for s in json.load(sys.stdin)['sources'] if s['name']=='$1'][0]['partitions'][0]
print(s['local_position'], s['committed_position'])" <<<"$v1"
}
check "/v1/ingest: events committed to Iceberg ($(positions events))" test "$(positions events)" = "300 300"
check "/v1/ingest: audit mirrored but nothing committed ($(positions audit))" test "$(positions audit)" = "50 0"
audit_files=$(/usr/bin/python3 "$here/iceberg_files.py" "$work/mir/data/catalog.db" floe audit 2>&1)
check "opt-out: no Iceberg table for audit in the catalog ($audit_files)" \
  contains "$audit_files" '"files": [], "positions": {}, "snapshots": 0'
check "opt-out: nothing of audit in the warehouse, while orders_created is there" \
  test ! -e "$work/mir/data/warehouse/floe/audit" -a -d "$work/mir/data/warehouse/floe/orders_created"
sealed=$(grep -c "of audit-0 sealed by max-age" "$work/mir/floe.log")
check "opt-out: audit's segments were sealed (would have landed if tiered: $sealed seals)" test "$sealed" -ge 1
if [ "$e2e_failed" -gt 0 ]; then
  echo "$v1"; grep -i "ingest\|error\|warn" "$work/mir/floe.log" | tail -30
fi
kill -TERM "$MIR_PID"; wait "$MIR_PID"; rc=$?; MIR_PID=
check "mirror stops cleanly (rc $rc)" test "$rc" -eq 0

# ---- item 8: librdkafka's logs through Floe's logger, --log-format json ----
DEAD=127.0.0.1:$(free_port) # nothing listens there
start_floe "$work/down" --set floe.log.format=json --set floe.ingest.sources.gone.type=kafka \
  --set floe.ingest.sources.gone.bootstrap-servers="$DEAD" --set floe.ingest.sources.gone.topics=orders || exit 1
DOWN_PID=$FLOE_PID; FLOE_PID=
check "librdkafka reports the unreachable broker" wait_for 20 grep -q "librdkafka" "$work/down/floe.log"
sleep 1
kill -TERM "$DOWN_PID"; wait "$DOWN_PID"; DOWN_PID=
json_lines() {
  /usr/bin/python3 - "$work/down/floe.log" <<'PY'
import json, sys
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
bad = []
rd = []
for l in lines:
    try:
        o = json.loads(l)
    except ValueError:
        bad.append(l)
        continue
    if not isinstance(o, dict) or not {"ts", "level", "msg"} <= o.keys():
        bad.append(l)
    elif "librdkafka" in o["msg"]:
        rd.append(o)
if bad:
    print("not JSON log lines:", *bad[:5], sep="\n  ")
    sys.exit(1)
if not rd:
    print("no librdkafka line among", len(lines))
    sys.exit(1)
# Tagged with the source, at a level mapped from librdkafka's syslog severity.
assert all(o["msg"].startswith("ingest gone: librdkafka ") for o in rd), rd[:3]
assert any(o["level"] in ("error", "warning") and "127.0.0.1" in o["msg"] for o in rd), rd[:3]
print(len(lines), "lines, all JSON;", len(rd), "from librdkafka, e.g.", rd[0]["msg"][:120])
PY
}
check "--log-format json: every stderr line is a JSON object, librdkafka's messages among them" json_lines
raw=$(grep -c '^%[0-9]|' "$work/down/floe.log")
check "no raw librdkafka line (%N|...) on stderr ($raw)" test "$raw" -eq 0
finish
