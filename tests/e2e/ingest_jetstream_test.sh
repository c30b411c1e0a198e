#!/usr/bin/env bash
# Ingest from NATS JetStream, mode duplicate (issue 17): nats-server -js with a file store, a
# stream created and filled by libnats (tests/nats_tool.c; one message deleted: a sequence gap),
# the mirror floe copies it into topic "events" at offset = sequence - 1 (key = subject, value =
# payload, headers, stored time). Judges: kcat reading the mirror against the stream's own
# messages (also after kill -9 of the mirror mid-stream and a nats-server restart), DuckDB reading the
# Iceberg table (every message once), and the stream still holding everything (duplicate).
# Then mode=offload on a second floe: each threshold (max-age, max-messages, max-bytes) lands
# data when it should and not before, a limits stream is purged and a work queue acked only
# below what the table committed, kill -9 of that floe and of nats-server mid-stream leave each
# message once in the tables, and an unwritable warehouse pauses a source (max-local-bytes)
# until it comes back. Tables are read by DuckDB over files listed by python3-avro.
# usage: ingest_jetstream_test.sh FLOE_BIN NATS_TOOL   (IDLE_SEAL=100ms: every source with that
#        idle-seal, the setting under which libnats 3.4.1's read-loop race once showed)
FLOE_BIN="$(realpath "$1")"
NT="$(realpath "$2")"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/lib.sh"
js="$here/../js/e2e"
work="$(mktemp -d)"
mkdir -p "$work/mir" "$work/nats"
NATS_PID=; MIR_PID=; OFF_PID=
cleanup() {
  [ -n "$NATS_PID" ] && kill -9 "$NATS_PID" 2>/dev/null
  [ -n "$MIR_PID" ] && kill -9 "$MIR_PID" 2>/dev/null
  [ -n "$OFF_PID" ] && kill -9 "$OFF_PID" 2>/dev/null
  [ -n "${BG_PID:-}" ] && kill "$BG_PID" 2>/dev/null
  wait 2>/dev/null
  [ -n "${KEEP:-}" ] && echo "kept $work" || rm -rf "$work"
}
trap cleanup EXIT
NATS_PORT=$(free_port); URL="nats://127.0.0.1:$NATS_PORT"
start_nats() {
  nats-server -js -sd "$work/nats" -a 127.0.0.1 -p "$NATS_PORT" >>"$work/nats.log" 2>&1 &
  NATS_PID=$!
  wait_for 10 bash -c "echo > /dev/tcp/127.0.0.1/$NATS_PORT" 2>/dev/null
}
start_nats
check "stream created" wait_for 10 "$NT" "$URL" create EVENTS "ev.>"
check "published 1..100" "$NT" "$URL" publish ev.a 1 100
check "deleted sequence 50 (a gap)" "$NT" "$URL" delete EVENTS 50
src_dump() { # the stream's messages as kcat would print the mirror: "p offset key value ts headers"
  "$NT" "$URL" dump EVENTS 1 "$1" 2>>"$work/nt.err" | awk '{printf "0 %d %s %s %s %s\n", $1 - 1, $2, $3, $4, $5}'
}
src_dump 100 > "$work/src"
check "source dump has 99 messages" test "$(wc -l <"$work/src")" -eq 99

mirror_args=(--set floe.ingest.sources.nats.type=jetstream --set floe.ingest.sources.nats.url="$URL"
  --set floe.ingest.sources.nats.stream=EVENTS --set floe.ingest.sources.nats.topic=events
  --set floe.ingest.sources.nats.mode=duplicate ${IDLE_SEAL:+--set floe.ingest.sources.nats.idle-seal=$IDLE_SEAL}
  --set floe.topic-defaults.remote.storage.enable=true --set floe.topic-defaults.segment.ms=1000
  --set floe.storage.worker.tick-interval=300ms --set floe.auto-create-topics=false)
start_floe "$work/mir" "${mirror_args[@]}" || exit 1
MIR_PID=$FLOE_PID; MIR=127.0.0.1:$KAFKA_PORT; MIR_HTTP=$HTTP_PORT; FLOE_PID=
dump() { kcat -C -b "$MIR" -t events -o beginning -e -q -f '%p %o %k %s %T %h\n' 2>>"$work/kcat.err" | sort -k1,1n -k2,2n; }
same() { dump > "$work/mir_dump"; cmp -s "$work/src" "$work/mir_dump"; }
check "mirror holds every message at sequence - 1, the gap kept" wait_for 30 same
ready=$(curl -s "http://127.0.0.1:$MIR_HTTP/readyz")
check "readyz has the source up" contains "$ready" '"ingest-nats":{"status":"up"'

# kill -9 of the mirror mid-stream, then of nats-server, restarts: nothing twice, none missing.
( "$NT" "$URL" publish ev.b 101 1500 ) &
BG_PID=$!
sleep 0.5
kill -9 "$MIR_PID"; wait "$MIR_PID" 2>/dev/null; MIR_PID=
start_floe "$work/mir" "${mirror_args[@]}" || exit 1
MIR_PID=$FLOE_PID; MIR=127.0.0.1:$KAFKA_PORT; MIR_HTTP=$HTTP_PORT; FLOE_PID=
wait "$BG_PID"; BG_PID=
# nats-server is restarted with SIGTERM: its 2.9 file store buffers writes in the process, so a
# kill -9 may take back a delete or a publish it acknowledged, which no mirror can undo.
kill -TERM "$NATS_PID"; wait "$NATS_PID" 2>/dev/null; NATS_PID=
start_nats
check "published 1501..1600 after nats-server restart" "$NT" "$URL" publish ev.c 1501 1600
src_dump 1600 > "$work/src"
check "stream holds 1599 messages (duplicate mode keeps them)" test "$(wc -l <"$work/src")" -eq 1599
check "after kill -9 of the mirror and a nats-server restart: identical messages at identical offsets" wait_for 40 same

table_same() {
  /usr/bin/python3 "$here/iceberg_files.py" "$work/mir/data/catalog.db" floe events > "$work/files.json" 2>"$work/py.err" || return 1
  node "$js/table_dump.mjs" "$work/files.json" > "$work/tab" 2>"$work/node.err" || { cat "$work/node.err"; return 1; }
  cmp -s "$work/src" "$work/tab"
}
check "Iceberg table events: every message once (offset, subject, payload, header, stored time)" wait_for 60 table_same
v1=$(curl -s "http://127.0.0.1:$MIR_HTTP/v1/ingest")
check "/v1/ingest: local position 1600 ($v1)" contains "$v1" '"local_position":1600'
if [ "$e2e_failed" -gt 0 ]; then
  diff "$work/src" "$work/mir_dump" | head -5
  grep -i "ingest\|error" "$work/mir/floe.log" | tail -20
fi
kill -TERM "$MIR_PID"; wait "$MIR_PID"; rc=$?; MIR_PID=
check "mirror stops cleanly (rc $rc)" test "$rc" -eq 0

# --- mode=offload and the thresholds, on a second floe whose segments are sealed only by them
# (segment.ms 1 h and segment.bytes 1 GiB, whatever a floe.yaml says): ON (limits, max-messages=100), OB (limits,
# max-bytes=2KiB), WQ (work queue, max-age=3s), BP (limits, max-messages=50, max-local-bytes=3KiB:
# backpressure while the warehouse is unwritable).
mkdir -p "$work/off" "$work/wh"
check "streams ON, OB, BP (limits) and WQ (work queue) created" bash -c \
  "'$NT' '$URL' create ON 'on.>' && '$NT' '$URL' create OB 'ob.>' && '$NT' '$URL' create BP 'bp.>' && '$NT' '$URL' create WQ 'wq.>' workqueue"
src_args() { # name stream topic extra-key=value...
  local n=$1 st=$2 t=$3; shift 3
  echo "--set floe.ingest.sources.$n.type=jetstream --set floe.ingest.sources.$n.url=$URL"
  echo "--set floe.ingest.sources.$n.stream=$st --set floe.ingest.sources.$n.topic=$t --set floe.ingest.sources.$n.mode=offload"
  for kv in "$@"; do echo "--set floe.ingest.sources.$n.$kv"; done
  if [ -n "${IDLE_SEAL:-}" ]; then echo "--set floe.ingest.sources.$n.idle-seal=$IDLE_SEAL"; fi
}
off_args=($(src_args on ON on max-messages=100) $(src_args ob OB ob max-bytes=2KiB) $(src_args wq WQ wq max-age=3s)
  $(src_args bp BP bp max-messages=50 max-local-bytes=3KiB)
  --set floe.storage.remote.path="file://$work/wh/w" --set floe.storage.worker.tick-interval=300ms
  --set floe.topic-defaults.segment.ms=3600000 --set floe.topic-defaults.segment.bytes=1073741824
  --set floe.auto-create-topics=false)
start_floe "$work/off" "${off_args[@]}" || exit 1
OFF_PID=$FLOE_PID; OFF_HTTP=$HTTP_PORT; FLOE_PID=
rows() { # topic -> DuckDB's "<rows> <min offset> <max offset> <partitions> <partition>" of the table
  /usr/bin/python3 "$here/iceberg_files.py" "$work/off/data/catalog.db" floe "$1" > "$work/f_$1.json" 2>/dev/null \
    || { echo 0; return; }
  node "$js/stream_rows.mjs" "$work/f_$1.json" "$1-0" 2>>"$work/node.err"
}
info() { "$NT" "$URL" info "$1"; } # "first_seq last_seq messages"
ingest_json() { curl -s "http://127.0.0.1:$OFF_HTTP/v1/ingest"; }
committed() { ingest_json | /usr/bin/python3 -c "import json,sys; d=json.load(sys.stdin)
print([s for s in d['sources'] if s['name']=='$1'][0]['partitions'][0]['committed_position'])"; }
is_rows() { [ "$(rows "$1")" = "$2" ]; }
is_info() { [ "$(info "$1")" = "$2" ]; }
# What an offload stream of LAST messages with COMMITTED of them in the table must hold: what is
# not committed, and its last message even when committed (see src/ingest/README.md).
left() { local c=$2 n=$1; local f=$((c + 1)); [ "$f" -gt "$n" ] && f=$n; echo "$f $n $((n - f + 1))"; }

"$NT" "$URL" publish on.x 1 60 && "$NT" "$URL" publish ob.x 1 20
t0=$(date +%s%N)
"$NT" "$URL" publish wq.x 1 50
check "mirrors hold what was published" wait_for 15 bash -c \
  "curl -s http://127.0.0.1:$OFF_HTTP/v1/ingest | grep -q '\"local_position\":60' &&
   curl -s http://127.0.0.1:$OFF_HTTP/v1/ingest | grep -q '\"local_position\":50'"
check "max-age=3s: nothing of WQ committed yet ($(committed wq))" test "$(committed wq)" = 0
check "offload: WQ still holds all 50 unacked ($(info WQ))" is_info WQ "1 50 50"
check "max-age=3s: WQ committed in full" wait_for 10 bash -c "[ \"\$(curl -s http://127.0.0.1:$OFF_HTTP/v1/ingest | grep -o '\"committed_position\":50')\" ]"
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
check "max-age=3s: committed after 3 s, not before nor long after (${ms} ms)" test "$ms" -ge 2900 -a "$ms" -le 8000
check "max-age=3s: WQ's 50 messages in the table once" is_rows wq "50 0 49 1 0"
check "work queue: every message acked once committed but the last" wait_for 10 is_info WQ "50 50 1"
check "max-messages=100: 60 messages stay out of the table ($(committed on))" test "$(committed on)" = 0
check "max-bytes=2KiB: 20 small messages stay out of the table ($(committed ob))" test "$(committed ob)" = 0
check "offload: ON still holds all 60 ($(info ON))" is_info ON "1 60 60"
"$NT" "$URL" publish on.x 61 120 && "$NT" "$URL" publish ob.x 21 100
check "max-messages=100: a sealed prefix of >= 100 reaches the table" wait_for 10 bash -c \
  "c=\$(curl -s http://127.0.0.1:$OFF_HTTP/v1/ingest | /usr/bin/python3 -c \"import json,sys; print([s for s in json.load(sys.stdin)['sources'] if s['name']=='on'][0]['partitions'][0]['committed_position'])\"); [ \$c -ge 100 ]"
c_on=$(committed on)
check "ON: the table holds offsets 0..$((c_on - 1)) once ($(rows on))" is_rows on "$c_on 0 $((c_on - 1)) 1 0"
check "ON: the stream holds only what is not committed ($(info ON), committed $c_on)" wait_for 5 is_info ON "$(left 120 $c_on)"
check "max-bytes: a sealed prefix of OB reaches the table" wait_for 10 bash -c \
  "c=\$(curl -s http://127.0.0.1:$OFF_HTTP/v1/ingest | /usr/bin/python3 -c \"import json,sys; print([s for s in json.load(sys.stdin)['sources'] if s['name']=='ob'][0]['partitions'][0]['committed_position'])\"); [ \$c -gt 20 ]"
c_ob=$(committed ob)
check "OB: the table holds offsets 0..$((c_ob - 1)) once ($(rows ob))" is_rows ob "$c_ob 0 $((c_ob - 1)) 1 0"
check "OB: the stream holds only what is not committed ($(info OB), committed $c_ob)" wait_for 5 is_info OB "$(left 100 $c_ob)"
ob_left=$(ingest_json | /usr/bin/python3 -c "import json,sys; print([s for s in json.load(sys.stdin)['sources'] if s['name']=='ob'][0]['local_bytes'])")
check "OB: what stays local is below max-bytes ($ob_left bytes)" test "$ob_left" -lt 2048

# kill -9 of the offload floe (3 times) and of nats-server (twice, between publishes: its 2.9
# file store may take back writes it acknowledged just before a kill) while ON and WQ are
# mirrored and offloaded: the tables hold each message once, the streams only what is not
# committed.
on_n=120; wq_n=50
for round in 1 2 3 4 5 6; do
  ( "$NT" "$URL" publish on.x $((on_n + 1)) $((on_n + 150)) && "$NT" "$URL" publish wq.x $((wq_n + 1)) $((wq_n + 150)) ) \
    2>>"$work/nt.err" &
  BG_PID=$!
  if [ $((round % 2)) = 1 ]; then
    sleep 0.$((3 + round))
    kill -9 "$OFF_PID"; wait "$OFF_PID" 2>/dev/null; OFF_PID=
  fi
  wait "$BG_PID"; rc=$?; BG_PID=
  [ "$rc" = 0 ] || echo "publish round $round failed"
  on_n=$((on_n + 150)); wq_n=$((wq_n + 150))
  if [ -z "$OFF_PID" ]; then
    start_floe "$work/off" "${off_args[@]}" || exit 1
    OFF_PID=$FLOE_PID; OFF_HTTP=$HTTP_PORT; FLOE_PID=
  fi
  if [ "$round" = 2 ] || [ "$round" = 4 ]; then
    sleep 0.5
    kill -9 "$NATS_PID"; wait "$NATS_PID" 2>/dev/null; NATS_PID=
    start_nats
  fi
done
check "after the kills: ON and WQ hold what was published" bash -c "[ \"\$('$NT' '$URL' info ON | cut -d' ' -f2)\" = $on_n ] && [ \"\$('$NT' '$URL' info WQ | cut -d' ' -f2)\" = $wq_n ]"
expect() { seq 1 "$2" | awk -v s="$1" '{printf "0 %d %s value-%d h=%d\n", $1 - 1, s, $1, $1}'; }
tab() { # topic -> the table's rows as "p offset key value h=..." (DuckDB over the Avro-listed files)
  /usr/bin/python3 "$here/iceberg_files.py" "$work/off/data/catalog.db" floe "$1" > "$work/f_$1.json" 2>/dev/null || return 1
  node "$js/table_dump.mjs" "$work/f_$1.json" 2>>"$work/node.err" | cut -d' ' -f1-4,6
}
wq_all() { tab wq > "$work/tab_wq"; expect wq.x $wq_n > "$work/exp_wq"; cmp -s "$work/tab_wq" "$work/exp_wq"; }
check "WQ after kills: every message in the table once, in order, none missing" wait_for 30 wq_all
check "WQ after kills: every message acked once committed but the last" wait_for 10 is_info WQ "$wq_n $wq_n 1"
on_ok() {
  local c; c=$(committed on)
  tab on > "$work/tab_on"; expect on.x "$c" > "$work/exp_on"
  [ "$c" -ge $((on_n - 100)) ] && cmp -s "$work/tab_on" "$work/exp_on" && is_info ON "$(left $on_n $c)"
}
check "ON after kills: the table holds offsets 0..committed-1 once (all but < max-messages), the stream only the rest" wait_for 30 on_ok
[ "$e2e_failed" -gt 0 ] && { diff "$work/tab_wq" "$work/exp_wq" | head -5; diff "$work/tab_on" "$work/exp_on" | head -5; info ON; committed on; }

# Backpressure: the warehouse path made unwritable (a file where its directory was).
mv "$work/wh" "$work/wh.away" && touch "$work/wh"
"$NT" "$URL" publish bp.x 1 2000
paused() { ingest_json | /usr/bin/python3 -c "import json,sys; s=[s for s in json.load(sys.stdin)['sources'] if s['name']=='bp'][0]; print(s['paused'], s['pauses'], s['partitions'][0]['local_position'])"; }
check "backpressure: BP pauses with the lake down" wait_for 15 bash -c "curl -s http://127.0.0.1:$OFF_HTTP/v1/ingest | grep -q '\"name\":\"bp\"[^]]*' && [ \"\$(curl -s http://127.0.0.1:$OFF_HTTP/metrics | grep '^floe_ingest_paused{source=\"bp\"}')\" = 'floe_ingest_paused{source=\"bp\"} 1' ]"
sleep 1
p1=$(paused)
check "backpressure: paused in /v1/ingest, below what the stream holds ($p1)" bash -c "read a b c <<<'$p1'; [ \$a = True ] && [ \$b -ge 1 ] && [ \$c -lt 2000 ]"
check "backpressure: BP keeps everything while nothing is committed ($(info BP))" is_info BP "1 2000 2000"
rm "$work/wh" && mv "$work/wh.away" "$work/wh"
check "backpressure: resumes by itself once the lake is back, all 2000 in the table once" wait_for 60 is_rows bp "2000 0 1999 1 0"
p2=$(paused)
check "backpressure: no longer paused ($p2)" bash -c "read a b c <<<'$p2'; [ \$a = False ] && [ \$c = 2000 ]"
check "backpressure: BP emptied once committed (but its last message)" wait_for 5 is_info BP "2000 2000 1"
if [ "$e2e_failed" -gt 0 ]; then grep -i "ingest\|error\|warn" "$work/off/floe.log" | tail -30; fi
kill -TERM "$OFF_PID"; wait "$OFF_PID"; rc=$?; OFF_PID=
check "offload floe stops cleanly (rc $rc)" test "$rc" -eq 0
finish
